"""RNN/LSTM/GRU, their cells and ``nn.utils.rnn`` against torch with copied weights: outputs, final
states, gradients of every parameter and of the input, packed and padded, and state dicts both ways."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
from _oracle import fast


def _n(t: Any) -> np.ndarray:
    return t.detach().numpy()


def _copy(theirs: torch.nn.Module, ours: Any) -> None:
    ours.load_state_dict({k: st.tensor(_n(v)) for k, v in theirs.state_dict().items()})


def _close(a: Any, b: Any) -> None:
    np.testing.assert_allclose(_n(a), _n(b), rtol=1e-4, atol=1e-5)


def _flat(out: Any) -> list[Any]:
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out.data if hasattr(out, "batch_sizes") else out]


@fast(25)
@given(hs.sampled_from(["RNN", "LSTM", "GRU"]), hs.integers(1, 2), hs.booleans(), hs.booleans(), hs.booleans(),
       hs.integers(0, 2), hs.booleans(), hs.booleans(), hs.integers(0, 10_000))
def test_recurrent_layers_match_torch(kind: str, layers: int, bidirectional: bool, batch_first: bool, bias: bool,
                                      proj: int, with_state: bool, batched: bool, seed: int) -> None:
    kw: dict[str, Any] = {"num_layers": layers, "bidirectional": bidirectional, "batch_first": batch_first, "bias": bias}
    if kind == "LSTM" and proj:
        kw["proj_size"] = proj
    theirs = getattr(torch.nn, kind)(3, 4, **kw)
    ours = getattr(st.nn, kind)(3, 4, **kw)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [tuple(p.shape) for p in ours.parameters()] == [tuple(p.shape) for p in theirs.parameters()]
    _copy(theirs, ours)
    rng = np.random.default_rng(seed)
    shape = ((2, 5, 3) if batch_first else (5, 2, 3)) if batched else (5, 3)
    x = rng.normal(size=shape).astype(np.float32)
    xt, xs = torch.tensor(x, requires_grad=True), st.tensor(x, requires_grad=True)
    args_t: list[Any] = [xt]
    args_s: list[Any] = [xs]
    if with_state:
        d = (2 if bidirectional else 1) * layers
        hsize = kw.get("proj_size") or 4
        h = rng.normal(size=(d, 2, hsize) if batched else (d, hsize)).astype(np.float32)
        c = rng.normal(size=(d, 2, 4) if batched else (d, 4)).astype(np.float32)
        args_t.append((torch.tensor(h), torch.tensor(c)) if kind == "LSTM" else torch.tensor(h))
        args_s.append((st.tensor(h), st.tensor(c)) if kind == "LSTM" else st.tensor(h))
    out_t, out_s = _flat(theirs(*args_t)), _flat(ours(*args_s))
    for a, b in zip(out_s, out_t):
        assert tuple(a.shape) == tuple(b.shape)
        _close(a, b)
    sum(o.pow(2).sum() * (i + 1) for i, o in enumerate(out_t)).backward()
    sum(o.pow(2).sum() * (i + 1) for i, o in enumerate(out_s)).backward()
    _close(xs.grad, xt.grad)
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        assert p.grad is not None, name
        _close(p.grad, q.grad)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_sequences_through_the_layers(kind: str, enforce_sorted: bool) -> None:
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    theirs = getattr(torch.nn, kind)(3, 4, bidirectional=True, batch_first=True)
    ours = getattr(st.nn, kind)(3, 4, bidirectional=True, batch_first=True)
    _copy(theirs, ours)
    x = np.random.default_rng(0).normal(size=(4, 5, 3)).astype(np.float32)
    xt, xs = torch.tensor(x, requires_grad=True), st.tensor(x, requires_grad=True)
    pt = torch.nn.utils.rnn.pack_padded_sequence(xt, torch.tensor(lengths), batch_first=True, enforce_sorted=enforce_sorted)
    ps = st.nn.utils.rnn.pack_padded_sequence(xs, st.tensor(lengths), batch_first=True, enforce_sorted=enforce_sorted)
    assert ps.batch_sizes.tolist() == pt.batch_sizes.tolist()
    out_t, h_t = theirs(pt)
    out_s, h_s = ours(ps)
    assert isinstance(out_s, st.nn.utils.rnn.PackedSequence)
    pad_t, len_t = torch.nn.utils.rnn.pad_packed_sequence(out_t, batch_first=True, total_length=6)
    pad_s, len_s = st.nn.utils.rnn.pad_packed_sequence(out_s, batch_first=True, total_length=6)
    assert len_s.tolist() == len_t.tolist()
    _close(pad_s, pad_t)
    for a, b in zip(_flat(h_s), _flat(h_t)):
        _close(a, b)
    (pad_t.sum() + sum(o.sum() for o in _flat(h_t))).backward()
    (pad_s.sum() + sum(o.sum() for o in _flat(h_s))).backward()
    _close(xs.grad, xt.grad)


@pytest.mark.parametrize("kind", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("batched", [True, False])
def test_cells_match_torch(kind: str, batched: bool) -> None:
    theirs, ours = getattr(torch.nn, kind)(3, 4), getattr(st.nn, kind)(3, 4)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _copy(theirs, ours)
    x = np.random.default_rng(1).normal(size=(2, 3) if batched else (3,)).astype(np.float32)
    xt, xs = torch.tensor(x, requires_grad=True), st.tensor(x, requires_grad=True)
    state_t, state_s = None, None
    loss_t, loss_s = 0, 0
    for _ in range(3):
        state_t, state_s = theirs(xt, state_t), ours(xs, state_s)
        loss_t = loss_t + sum(o.sum() for o in _flat(state_t))
        loss_s = loss_s + sum(o.sum() for o in _flat(state_s))
    for a, b in zip(_flat(state_s), _flat(state_t)):
        _close(a, b)
    loss_t.backward()
    loss_s.backward()
    _close(xs.grad, xt.grad)
    _close(ours.weight_hh.grad, theirs.weight_hh.grad)


def test_padding_utilities_match_torch() -> None:
    seqs = [np.arange(n * 2, dtype=np.float32).reshape(n, 2) for n in (2, 4, 1)]
    for kw in ({}, {"batch_first": True, "padding_value": -1.0}, {"padding_side": "left"}):
        _close(st.nn.utils.rnn.pad_sequence([st.tensor(s) for s in seqs], **kw),
               torch.nn.utils.rnn.pad_sequence([torch.tensor(s) for s in seqs], **kw))
    pt = torch.nn.utils.rnn.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    ps = st.nn.utils.rnn.pack_sequence([st.tensor(s) for s in seqs], enforce_sorted=False)
    _close(ps.data, pt.data)
    assert ps.sorted_indices.tolist() == pt.sorted_indices.tolist()
    assert ps.unsorted_indices.tolist() == pt.unsorted_indices.tolist()
    data, batch_sizes, *_ = ps  # a named tuple, as torch's
    assert batch_sizes.tolist() == [3, 2, 1, 1]
    assert [s.tolist() for s in st.nn.utils.rnn.unpack_sequence(ps)] == [s.tolist() for s in seqs]


def test_bad_arguments_are_refused_as_torch() -> None:
    for make in (lambda L: L.nn.LSTM(3, 4, proj_size=4), lambda L: L.nn.GRU(3, 4, proj_size=2),
                 lambda L: L.nn.RNN(3, 4, nonlinearity="gelu"), lambda L: L.nn.LSTM(3, 4, dropout=1.5)):
        with pytest.raises(ValueError):
            make(torch)
        with pytest.raises(ValueError):
            make(st)
    with pytest.raises(RuntimeError):
        torch.nn.utils.rnn.pack_padded_sequence(torch.zeros(3, 2, 1), [1, 3])
    with pytest.raises(RuntimeError):
        st.nn.utils.rnn.pack_padded_sequence(st.zeros(3, 2, 1), [1, 3])
    with pytest.raises(RuntimeError):
        st.nn.LSTM(3, 4)(st.zeros(5, 2, 7))
    for kind in ("RNN", "LSTM", "GRU"):  # an input of another dtype than the weights': torch's ValueError, first
        for shape in ((5, 2, 3), (5, 2, 7)):
            with pytest.raises(ValueError, match="does not match weight dtype"):
                getattr(torch.nn, kind)(3, 4)(torch.zeros(*shape, dtype=torch.float64))
            with pytest.raises(ValueError, match="does not match weight dtype") as err:
                getattr(st.nn, kind)(3, 4)(st.zeros(*shape, dtype=st.float64))
            assert err.value.code == "rnn_error_input_dtype"


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("shape,batch_first", [((0, 3), False), ((0, 2, 3), False), ((2, 0, 3), True),
                                               ((0, 2, 3), True), ((3, 0, 3), False)])
def test_empty_sequences_and_batches_as_torch(kind: str, shape: tuple[int, ...], batch_first: bool) -> None:
    """No time steps is torch's RuntimeError (after the argument checks); an empty batch runs."""

    def run(lib: Any) -> Any:
        try:
            out, _ = getattr(lib.nn, kind)(3, 2, batch_first=batch_first)(lib.ones(*shape))
        except RuntimeError as e:
            return "RuntimeError", str(e).split(": ")[-1]
        return tuple(out.shape)

    assert run(st) == run(torch)
