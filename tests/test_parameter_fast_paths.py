"""``nn.Parameter`` and ``nn.Buffer`` on the engine's fast paths (NOTE [plain tensor types] in ``_tensor``), and one
device object per device (NOTE [one device object] in ``_device``).

A Parameter overrides nothing the engine reads, so its ops take the paths a plain tensor's take (``Prim.call1``/
``call2``/``call_number``, the one- and two-tensor forms of ``Prim.__call__``, the compiled record) and must give
what the general path gives: the same values, nodes, saved inputs and gradients, torch's. Any other subclass (a
user's, an uninitialized parameter) keeps the general path: ``Prim._unpack`` and the general ``record`` see each of
its calls. The Parameter's own behaviour (repr, copies, pickling, leaves, ``.data``, optimizers' in-place updates)
is checked against torch's."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import shapetorch as st
import shapetorch._engine.primitives as P
from shapetorch._device import register_device, to_device, unregister_device
from shapetorch._tensor import PLAIN_TYPES, plain_tensor_type
from shapetorch.backends import numpy_backend

W = np.array([[0.5, -1.5, 2.0], [0.25, 1.0, -0.75]], np.float32)
V = np.array([[1.5, 0.5, -1.0], [2.0, -0.5, 0.25]], np.float32)


@pytest.fixture
def general(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """The general path's calls while the test runs: (``"unpack"`` or ``"record"``, the primitive's name)."""
    calls: list[tuple[str, str]] = []
    unpack, record = P.Prim._unpack, P.record

    def logged_unpack(self: P.Prim, args: tuple[Any, ...]) -> Any:
        calls.append(("unpack", self.name))
        return unpack(self, args)

    def logged_record(prim: P.Prim, *args: Any) -> Any:
        calls.append(("record", prim.name))
        return record(prim, *args)

    monkeypatch.setattr(P.Prim, "_unpack", logged_unpack)
    monkeypatch.setattr(P, "record", logged_record)
    return calls


# ops of one or two tensors (and numbers, keyword params) that a model applies to its weights
CASES: dict[str, Callable[[Any, Any, Any], Any]] = {
    "mul": lambda lib, w, v: w * v,
    "add": lambda lib, w, v: v + w,
    "mul number": lambda lib, w, v: w * 0.5,
    "rmul number": lambda lib, w, v: 2.0 * w,
    "rsub number": lambda lib, w, v: 1.0 - w,
    "exp": lambda lib, w, v: w.exp(),
    "tanh": lambda lib, w, v: lib.tanh(w),
    "t": lambda lib, w, v: w.t(),
    "reshape": lambda lib, w, v: w.reshape(3, 2),
    "sum dim": lambda lib, w, v: w.sum(dim=1, keepdim=True),
    "matmul": lambda lib, w, v: w @ v.t(),
    "embedding": lambda lib, w, v: lib.nn.functional.embedding(lib.tensor([1, 0, 1]), w),
    "pow": lambda lib, w, v: w**2,
}


def _params(lib: Any, kind: str) -> tuple[Any, Any]:
    w, v = lib.tensor(W), lib.tensor(V)
    if kind == "parameter":
        return lib.nn.Parameter(w), lib.nn.Parameter(v)
    return w.requires_grad_(), v.requires_grad_()


def _run(lib: Any, case: str, kind: str) -> tuple[Any, Any, Any, Any]:
    w, v = _params(lib, kind)
    out = CASES[case](lib, w, v)
    weights = lib.tensor(np.linspace(-1.0, 2.0, out.numel(), dtype=np.float32).reshape(tuple(out.shape)))
    (out * weights).sum().backward()
    return out, out.grad_fn, w.grad, v.grad


def _names(fn: Any) -> list[str | None]:
    return [None if f is None else f.name() for f, _ in fn.next_functions]


# where shapetorch's graph differs from torch's for every tensor, a Parameter or not: embedding is a composite here
# (an index_select, then a view), one EmbeddingBackward0 node in torch
_TORCH_GRAPH_GAPS = {"embedding"}


@pytest.mark.parametrize("case", list(CASES))
def test_parameter_ops_take_the_fast_path(case: str, general: list[tuple[str, str]]) -> None:
    w, v = _params(st, "parameter")
    out = CASES[case](st, w, v)
    assert out.grad_fn is not None
    assert general == [], general  # neither _unpack nor the general record saw a call


@pytest.mark.parametrize("case", list(CASES))
def test_parameter_ops_give_the_plain_tensors_nodes_and_torchs_gradients(case: str) -> None:
    ours, plain, theirs = _run(st, case, "parameter"), _run(st, case, "tensor"), _run(torch, case, "parameter")
    (out, fn, gw, gv), (pout, pfn, pgw, pgv), (tout, tfn, tgw, tgv) = ours, plain, theirs
    assert type(out) is st.Tensor and type(tout) is torch.Tensor  # an op's result is a plain tensor, as torch's
    np.testing.assert_array_equal(out.detach().numpy(), pout.detach().numpy())
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-6)
    assert fn.name() == pfn.name()
    assert _names(fn) == _names(pfn)
    if case not in _TORCH_GRAPH_GAPS:
        assert fn.name() == tfn.name()
        # (torch's node of a tensor and a number lists None for the number; shapetorch's lists the tensors' edges)
        assert [n for n in _names(fn) if n] == [n for n in _names(tfn) if n]
    assert fn._plain == pfn._plain  # the inputs saved, under the same names and versions
    assert [s[:2] for s in fn._saved] == [s[:2] for s in pfn._saved]
    for g, pg, tg in ((gw, pgw, tgw), (gv, pgv, tgv)):
        assert (g is None) == (pg is None) == (tg is None)
        if g is not None:
            np.testing.assert_array_equal(g.numpy(), pg.numpy())
            np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-6)


def test_a_saved_parameter_modified_in_place_is_refused_as_torch() -> None:
    """The compiled record keeps a Parameter's version: an optimizer's in-place step between the forward and the
    backward makes the backward fail with torch's error."""
    for lib in (st, torch):
        w = lib.nn.Parameter(lib.tensor(W))
        y = (w * w).sum()
        with lib.no_grad():
            w.add_(1.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()


class Mine(st.Tensor):
    """A user's subclass: not registered, so the engine's general path sees each of its calls."""


@pytest.mark.parametrize("case", ["mul", "mul number", "rsub number", "exp", "t", "sum dim", "embedding"])
def test_user_subclasses_keep_the_general_path(case: str, general: list[tuple[str, str]]) -> None:
    w = st.tensor(W).as_subclass(Mine).requires_grad_()
    v = st.tensor(V).as_subclass(Mine).requires_grad_()
    assert type(w) is Mine and Mine not in PLAIN_TYPES
    out = CASES[case](st, w, v)
    assert general and all(kind == "unpack" for kind, _ in general[::2]), general
    assert ("record", general[0][1]) in general  # its node made by the general record
    np.testing.assert_allclose(out.detach().numpy(), CASES[case](torch, torch.tensor(W), torch.tensor(V)).numpy(),
                               rtol=1e-6)


def test_uninitialized_parameters_keep_the_general_path_until_materialized(general: list[tuple[str, str]]) -> None:
    p = st.nn.UninitializedParameter()
    assert type(p) not in PLAIN_TYPES
    p.materialize((2, 3))
    assert type(p) is st.nn.Parameter
    with st.no_grad():
        p.copy_(st.tensor(W))
    general.clear()
    y = p * p
    assert general == [] and y.grad_fn.name() == "MulBackward0"


def test_buffers_take_the_fast_path(general: list[tuple[str, str]]) -> None:
    b = st.nn.Buffer(st.tensor(W))
    assert type(b) in PLAIN_TYPES
    x = st.tensor(V, requires_grad=True)
    y = x * b
    assert general == []
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), W)


def test_plain_tensor_type_refuses_a_class_that_overrides_what_the_engine_reads() -> None:
    for name in ("_data", "requires_grad", "__getattribute__", "_grad_fn"):
        cls = type(f"Over{name}", (st.Tensor,), {name: property(lambda self: None)})
        with pytest.raises(TypeError, match=name):
            plain_tensor_type(cls)
        assert cls not in PLAIN_TYPES
    with pytest.raises(TypeError, match="not a direct subclass"):
        plain_tensor_type(type("SubParameter", (st.nn.Parameter,), {}))


# -- what a Parameter is, unchanged ------------------------------------------------------------------------------

def test_parameter_behaviour_matches_torch() -> None:
    for lib in (st, torch):
        p = lib.nn.Parameter(lib.tensor(W))
        assert p.is_leaf and p.requires_grad and p.grad_fn is None
        assert not lib.nn.Parameter(lib.tensor(W), requires_grad=False).requires_grad
        assert repr(p).startswith("Parameter containing:\ntensor([[ 0.5000, -1.5000,  2.0000],")
        for q in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
            assert type(q) is lib.nn.Parameter and q.requires_grad and q is not p
            np.testing.assert_array_equal(q.detach().numpy(), W)
        d = p.data
        assert type(d) is (st.Tensor if lib is st else torch.Tensor) and not d.requires_grad
        p.data = lib.tensor(V)  # replaces the values; the object stays the same leaf Parameter
        assert type(p) is lib.nn.Parameter and p.is_leaf and p.requires_grad
        np.testing.assert_array_equal(p.detach().numpy(), V)
        y = p * 2  # the new values on the fast path
        y.sum().backward()
        np.testing.assert_array_equal(p.grad.numpy(), np.full_like(V, 2.0))


@pytest.mark.parametrize("opt", ["sgd", "adamw"])
def test_optimizer_steps_update_parameters_in_place_as_torch(opt: str) -> None:
    def steps(lib: Any) -> tuple[list[np.ndarray], list[np.ndarray]]:
        lin = lib.nn.Linear(3, 2)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(W))
            lin.bias.copy_(lib.tensor([0.5, -0.25]))
        ids = [id(p) for p in lin.parameters()]
        o = (lib.optim.SGD(lin.parameters(), lr=0.1, momentum=0.9) if opt == "sgd"
             else lib.optim.AdamW(lin.parameters(), lr=0.01))
        x = lib.tensor(V)
        for _ in range(3):
            o.zero_grad()
            loss = ((lin(x) - 1.0) ** 2).mean()
            loss.backward()
            o.step()
        assert [id(p) for p in lin.parameters()] == ids  # updated in place
        assert all(type(p) is lib.nn.Parameter and p.is_leaf for p in lin.parameters())
        state = lin.state_dict()
        return [p.detach().numpy().copy() for p in lin.parameters()], [state[k].numpy() for k in ("weight", "bias")]

    (ours, our_state), (theirs, their_state) = steps(st), steps(torch)
    for a, b in zip(ours + our_state, theirs + their_state):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


# -- one device object -----------------------------------------------------------------------------------------

def test_one_device_object_per_device() -> None:
    cpu = st.zeros(2)._device
    assert st.zeros(2, device="cpu")._device is cpu
    assert st.zeros(2, device=st.device("cpu"))._device is cpu
    lin = st.nn.Linear(2, 2).to("cpu")
    assert lin.weight._device is cpu and lin.bias._device is cpu
    assert pickle.loads(pickle.dumps(st.zeros(2)))._device is cpu
    assert to_device("cpu") == st.device("cpu") and to_device("cpu") is not st.device("cpu")  # equal, not interned


def test_device_names_are_known_again_after_a_device_is_removed() -> None:
    register_device("fakedev", lambda: numpy_backend)
    try:
        d = to_device("fakedev")
        assert to_device("fakedev") is d and to_device(st.device("fakedev")) is d
        assert st.zeros(2, device="fakedev")._device is d
    finally:
        unregister_device("fakedev")
    with pytest.raises(RuntimeError, match="unknown device 'fakedev'"):
        to_device("fakedev")
