"""The Transformer family against torch with copied weights (dropout 0): outputs, the gradients of every
parameter and of the inputs, every mask kind, ``batch_first``, ``norm_first``, activations, unbatched
input, state dicts both ways, the causal-mask helper and torch's verdicts on bad arguments."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
from _oracle import fast

E, H, FF = 8, 2, 12


def _n(t: Any) -> np.ndarray:
    return t.detach().numpy()


def _copy(theirs: torch.nn.Module, ours: Any) -> None:
    ours.load_state_dict({k: st.tensor(_n(v)) for k, v in theirs.state_dict().items()})


def _build(lib: Any, kind: str, act: str, batch_first: bool, norm_first: bool, bias: bool) -> Any:
    nn = lib.nn
    activation: Any = {"relu": "relu", "gelu": "gelu", "silu": nn.functional.silu, "module": nn.Tanh()}[act]
    kw: dict[str, Any] = {"dim_feedforward": FF, "dropout": 0.0, "activation": activation,
                          "batch_first": batch_first, "norm_first": norm_first, "bias": bias}
    with warnings.catch_warnings():  # torch warns that it will not use nested tensors
        warnings.simplefilter("ignore")
        if kind == "encoder_layer":
            return nn.TransformerEncoderLayer(E, H, **kw)
        if kind == "decoder_layer":
            return nn.TransformerDecoderLayer(E, H, **kw)
        if kind == "encoder":
            return nn.TransformerEncoder(nn.TransformerEncoderLayer(E, H, **kw), 2, nn.LayerNorm(E))
        if kind == "decoder":
            return nn.TransformerDecoder(nn.TransformerDecoderLayer(E, H, **kw), 2)
        return nn.Transformer(E, H, 1, 2, **kw)


def _mask(rng: np.random.Generator, kind: str, rows: int, cols: int) -> np.ndarray | None:
    if kind == "none":
        return None
    if kind == "causal":
        return np.triu(np.full((rows, cols), -np.inf, dtype=np.float32), 1)
    if kind == "float":
        return rng.normal(size=(rows, cols)).astype(np.float32)
    m = rng.random((rows, cols)) < 0.3
    m[:, 0] = False  # every query keeps one key (an all-masked row is NaN in both)
    return m


def _kpm(rng: np.random.Generator, use: bool, batch: int | None, length: int) -> np.ndarray | None:
    if not use:
        return None
    m = rng.random((batch, length) if batch else (length,)) < 0.3
    m[..., 0] = False
    return m


@fast(12)
@given(hs.sampled_from(["encoder_layer", "decoder_layer", "encoder", "decoder", "transformer"]),
       hs.sampled_from(["relu", "gelu", "silu", "module"]), hs.booleans(), hs.booleans(), hs.booleans(),
       hs.booleans(), hs.sampled_from(["none", "causal", "float", "bool"]), hs.booleans(),
       hs.sampled_from([None, True, False]), hs.integers(0, 10_000))
def test_transformer_family_matches_torch(kind: str, act: str, batch_first: bool, norm_first: bool, bias: bool,
                                          batched: bool, mask_kind: str, padding: bool, hint: bool | None,
                                          seed: int) -> None:
    if act == "module" and kind in ("decoder", "transformer"):
        act = "silu"  # torch's decoder clones drop a module activation (test_decoder_clones_keep_a_module_activation)
    theirs = _build(torch, kind, act, batch_first, norm_first, bias)
    ours = _build(st, kind, act, batch_first, norm_first, bias)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _copy(theirs, ours)
    rng = np.random.default_rng(seed)
    n, s_len, t_len = 3, 5, 4
    decoder = kind != "encoder" and kind != "encoder_layer"
    length = t_len if decoder else s_len

    def seq(ln: int) -> np.ndarray:
        shape = ((n, ln, E) if batch_first else (ln, n, E)) if batched else (ln, E)
        return rng.normal(size=shape).astype(np.float32)

    x, mem = seq(length), seq(s_len)
    mask = _mask(rng, mask_kind, length, length)
    kpm = _kpm(rng, padding, n if batched else None, length)
    mkpm = _kpm(rng, padding, n if batched else None, s_len)
    causal = hint if mask_kind == "causal" else (False if hint else hint)  # a True hint only with its mask

    def run(lib: Any, mod: Any) -> tuple[Any, list[Any]]:
        t = lambda a: None if a is None else lib.tensor(a)  # noqa: E731
        xs, ms = lib.tensor(x, requires_grad=True), lib.tensor(mem, requires_grad=True)
        if kind == "encoder_layer":
            out = mod(xs, src_mask=t(mask), src_key_padding_mask=t(kpm), is_causal=bool(causal))
        elif kind == "encoder":
            out = mod(xs, mask=t(mask), src_key_padding_mask=t(kpm), is_causal=causal)
        elif kind == "decoder_layer":
            out = mod(xs, ms, tgt_mask=t(mask), tgt_key_padding_mask=t(kpm), memory_key_padding_mask=t(mkpm),
                      tgt_is_causal=bool(causal))
        elif kind == "decoder":
            out = mod(xs, ms, tgt_mask=t(mask), tgt_key_padding_mask=t(kpm), memory_key_padding_mask=t(mkpm),
                      tgt_is_causal=causal)
        else:
            out = mod(ms, xs, tgt_mask=t(mask), src_key_padding_mask=t(mkpm), tgt_key_padding_mask=t(kpm),
                      memory_key_padding_mask=t(mkpm), tgt_is_causal=causal)
        (out * lib.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(tuple(out.shape)))).sum().backward()
        return out, [xs.grad, ms.grad, *(p.grad for p in mod.parameters())]

    out_t, grads_t = run(torch, theirs)
    out_s, grads_s = run(st, ours)
    np.testing.assert_allclose(_n(out_s), _n(out_t), rtol=1e-4, atol=1e-5)
    for gs, gt in zip(grads_s, grads_t, strict=True):
        assert (gs is None) == (gt is None)
        if gt is not None:
            np.testing.assert_allclose(_n(gs), _n(gt), rtol=1e-3, atol=1e-5)


def test_state_dict_loads_into_torch_and_clones_start_equal() -> None:
    ours = st.nn.Transformer(E, H, 2, 2, FF, 0.0, batch_first=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.nn.Transformer(E, H, 2, 2, FF, 0.0, batch_first=True)
    theirs.load_state_dict({k: torch.tensor(_n(v)) for k, v in ours.state_dict().items()})
    x, y = np.ones((2, 3, E), np.float32), np.linspace(0, 1, 2 * 4 * E, dtype=np.float32).reshape(2, 4, E)
    np.testing.assert_allclose(_n(ours(st.tensor(x), st.tensor(y))), _n(theirs(torch.tensor(x), torch.tensor(y))),
                               rtol=1e-4, atol=1e-5)
    enc = st.nn.TransformerEncoder(st.nn.TransformerEncoderLayer(E, H, FF), 3)
    first = enc.layers[0].linear1.weight
    assert all(np.array_equal(_n(layer.linear1.weight), _n(first)) for layer in enc.layers)
    assert enc.layers[1].linear1.weight is not first
    # Transformer re-initialises every matrix with xavier_uniform: the encoder's layers no longer agree.
    assert not np.array_equal(_n(ours.encoder.layers[0].linear1.weight), _n(ours.encoder.layers[1].linear1.weight))


def test_generate_square_subsequent_mask_and_dropout_default() -> None:
    for sz in (1, 4):
        np.testing.assert_array_equal(_n(st.nn.Transformer.generate_square_subsequent_mask(sz)),
                                      _n(torch.nn.Transformer.generate_square_subsequent_mask(sz)))
    assert st.nn.Transformer.generate_square_subsequent_mask(3, dtype=st.float64).dtype == st.float64
    layer = st.nn.TransformerEncoderLayer(E, H)
    assert layer.dropout.p == 0.1 and layer.linear1.out_features == 2048 and layer.activation is st.nn.functional.relu


def test_bad_arguments_get_torchs_verdicts() -> None:
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        st.nn.TransformerEncoderLayer(E, H, activation="tanh")
    layer = st.nn.TransformerEncoderLayer(E, H, FF)
    with pytest.raises(AssertionError, match="only bool and floating types of src_mask are supported"):
        layer(st.ones(3, 2, E), src_mask=st.zeros(3, 3, dtype=st.int64))
    model = st.nn.Transformer(E, H, 1, 1, FF)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        model(st.ones(3, 2, E), st.ones(3, 4, E))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        model(st.ones(3, 2, E), st.ones(3, 2, E + 1))


def test_decoder_clones_keep_a_module_activation() -> None:
    """A deliberate difference: torch's TransformerDecoderLayer.__setstate__ looks for ``activation`` in
    the instance dict, so the deep copies TransformerDecoder makes of a layer built with a module
    activation (``nn.Tanh()``) silently apply relu. shapetorch's clones apply the module they were given."""
    dec = st.nn.TransformerDecoder(st.nn.TransformerDecoderLayer(E, H, FF, 0.0, activation=st.nn.Tanh()), 2)
    x, m = st.randn(4, 2, E), st.randn(5, 2, E)
    expected = dec.layers[1](dec.layers[0](x, m), m)
    assert all(isinstance(layer.activation, st.nn.Tanh) for layer in dec.layers)
    np.testing.assert_allclose(_n(dec(x, m)), _n(expected), rtol=1e-6)
    single = st.nn.TransformerDecoderLayer(E, H, FF, 0.0, activation=st.nn.Tanh())
    relu_twin = st.nn.TransformerDecoderLayer(E, H, FF, 0.0)
    relu_twin.load_state_dict(single.state_dict())
    assert not np.allclose(_n(single(x, m)), _n(relu_twin(x, m)))
