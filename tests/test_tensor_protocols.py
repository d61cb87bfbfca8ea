# ruff: noqa: PLC3002  (each case is one expression run twice; the inner lambdas name a tensor inside it)
"""The Python protocols of a tensor as a program uses them: in-place arithmetic on 0-d tensors and on
every kind of view, formatting, ``in``, ``len``, iteration, conversions, hashing, copying and pickling.

Each case runs the same function on ``torch`` and on ``shapetorch`` and compares the outcome: the value
(its repr, with the library name normalized) or the exception class, which shapetorch's must subclass.
"""

from __future__ import annotations

import copy
import math
import operator
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
from _oracle import fast
from shapetorch import ShapetorchError


def _outcome(lib: Any, fn: Callable[[Any], Any]) -> tuple[str, Any]:
    try:
        return "ok", repr(fn(lib)).replace("shapetorch", "torch")
    except Exception as e:  # noqa: BLE001  (the class is the outcome)
        return "raise", e


def same_as_torch(fn: Callable[[Any], Any]) -> None:
    theirs, ours = _outcome(torch, fn), _outcome(st, fn)
    if theirs[0] == "raise":
        assert ours[0] == "raise", f"torch raised {theirs[1]!r}, shapetorch gave {ours[1]}"
        assert isinstance(ours[1], type(theirs[1])), f"{ours[1]!r} is not a {type(theirs[1]).__name__}"
        # a coded error, or Python's own where torch leaves it to Python too (int(nan), Python's operators)
        assert isinstance(ours[1], ShapetorchError) or type(ours[1]) is type(theirs[1]), repr(ours[1])
    else:
        assert ours == theirs


# -- in-place ops on 0-d tensors: the accumulation habits of training loops ---------------------------

INPLACE_0D: dict[str, Callable[[Any], Any]] = {
    "iadd": lambda L: (lambda s: (operator.iadd(s, 1), s)[1])(L.ones(3).sum()),
    "accumulate_correct": lambda L: (lambda t: [t := t + (L.tensor([1, 2]) == L.tensor([1, 3])).sum() for _ in range(3)][-1])(0),
    "iadd_bool_sum": lambda L: (lambda s: (operator.iadd(s, (L.tensor([1, 2]) == L.tensor([1, 2])).sum()), s)[1])(L.tensor(0)),
    "idiv_loss": lambda L: (lambda s: (operator.itruediv(s, 4), s)[1])(L.tensor(3.0)),
    "imul_pow": lambda L: (lambda s: (operator.imul(s, 3), operator.ipow(s, 2), s)[2])(L.tensor(2.0)),
    "add_": lambda L: L.tensor(2.0).add_(L.tensor(1.5)).mul_(2).clamp_(max=6.5),
    "zero_fill": lambda L: (L.tensor(2.0).zero_(), L.tensor(2.0).fill_(7)),
    "detach_shares": lambda L: (lambda s: (s.detach().add_(1), s)[1])(L.ones(2).sum()),
    "data_shares": lambda L: (lambda s: (s.data.mul_(3), s)[1])(L.ones(2).sum()),
    "view_shares": lambda L: (lambda s: (s.view(1).add_(1), s.reshape(1, 1).mul_(2), s.unsqueeze(0).sub_(1), s)[3])(
        L.ones(2).sum()),
    "index_shares": lambda L: (lambda s: (s[None].add_(1), s[...].mul_(2), s)[2])(L.ones(2).sum()),
    "setitem": lambda L: (lambda s: (s.__setitem__((), 5), s.__setitem__(..., s + 1), s)[2])(L.ones(2).sum()),
    "copy_": lambda L: (lambda s: (s.copy_(L.tensor(4)), s)[1])(L.ones(2).sum()),
    "expand_writes_overlap": lambda L: L.ones(2).sum().expand(3).add_(1),
    "int_into_float_ok": lambda L: (lambda s: (operator.iadd(s, 2), s)[1])(L.tensor(1.5)),
    "float_into_int_rejected": lambda L: operator.iadd(L.tensor(1), 0.5),
}


@pytest.mark.parametrize("case", INPLACE_0D)
def test_inplace_on_0d_tensors(case: str) -> None:
    same_as_torch(INPLACE_0D[case])


@pytest.mark.parametrize("opt", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_optimizer_steps_a_0d_parameter(opt: str) -> None:
    """A CLIP-style ``logit_scale``: a 0-d Parameter trained with momentum or Adam state."""

    def run(L: Any) -> list[float]:
        p = L.nn.Parameter(L.tensor(2.0))
        kw = {"momentum": 0.9} if opt == "SGD" else {}
        o = getattr(L.optim, opt)([p], lr=0.1, **kw)
        out = []
        for _ in range(3):
            o.zero_grad()
            (p * p * 0.5 + p.exp()).backward()
            o.step()
            out.append(p.item())
        return out

    np.testing.assert_allclose(run(st), run(torch), rtol=1e-5)


# -- in-place ops through every kind of view write into the base --------------------------------------

VIEWS: dict[str, Callable[[Any], Any]] = {
    "T": lambda b: b.T, "mT": lambda b: b.mT, "t": lambda b: b.t(), "permute": lambda b: b.permute(1, 0),
    "transpose": lambda b: b.transpose(0, 1), "swapaxes": lambda b: b.swapaxes(0, 1),
    "movedim": lambda b: b.movedim(0, 1), "view": lambda b: b.view(-1), "reshape": lambda b: b.reshape(3, 2),
    "flatten": lambda b: b.flatten(), "unsqueeze": lambda b: b.unsqueeze(0), "squeeze": lambda b: b[None].squeeze(0),
    "diagonal": lambda b: b.diagonal(), "diagonal_off": lambda b: b.diagonal(1), "narrow": lambda b: b.narrow(1, 1, 2),
    "select": lambda b: b.select(0, 1), "row": lambda b: b[0], "element": lambda b: b[1, 2],
    "slice_step": lambda b: b[:, ::2], "neg_index": lambda b: b[-1, -2:], "ellipsis": lambda b: b[..., 1],
    "unbind": lambda b: b.unbind(1)[1], "split": lambda b: b.split(1, 1)[1], "chunk": lambda b: b.chunk(2, 0)[1],
    "tensor_split": lambda b: b.tensor_split(3, dim=1)[2], "as_strided": lambda b: b.as_strided((2,), (1,), 1),
    "unfold": lambda b: b.unfold(1, 2, 1)[:, :1], "expand_one": lambda b: b[:1].expand(1, 3),
    "detach": lambda b: b.detach(), "data": lambda b: b.data, "view_of_view": lambda b: b.T[1:].view(-1),
    "expand_overlap": lambda b: b[:, :1].expand(2, 3),
}


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("op", ["add_", "iadd", "mul_", "clamp_", "fill_", "zero_", "copy_", "setitem"])
def test_inplace_through_a_view_writes_its_base(view: str, op: str) -> None:
    def run(L: Any) -> Any:
        base = L.arange(6.0).reshape(2, 3)
        v = VIEWS[view](base)
        if op == "add_":
            v.add_(1.5)
        elif op == "iadd":
            v += L.ones(v.shape)
        elif op == "mul_":
            v.mul_(-2)
        elif op == "clamp_":
            v.clamp_(min=2.0, max=4.0)
        elif op == "fill_":
            v.fill_(9)
        elif op == "zero_":
            v.zero_()
        elif op == "copy_":
            v.copy_(L.full(v.shape, 7.0))
        else:
            v[...] = -1
        return base

    same_as_torch(run)


@fast(30)
@given(hs.lists(hs.integers(1, 4), min_size=1, max_size=3), hs.sampled_from(["add_", "sub_", "mul_", "div_"]),
       hs.floats(-3, 3, allow_nan=False, width=32))
def test_inplace_on_reductions_and_their_views(shape: list[int], op: str, value: float) -> None:
    """A reduction to 0-d (a NumPy scalar inside) keeps in-place semantics, through views of it too."""

    def run(L: Any) -> Any:
        s = L.arange(float(np.prod(shape))).reshape(shape).sum()
        alias = s.view(1)
        getattr(alias, op)(value)
        getattr(s, op)(2.0)
        return s, alias

    theirs, ours = run(torch), run(st)
    np.testing.assert_allclose([x.item() for x in ours], [x.item() for x in theirs], rtol=1e-5)


# -- dunders ------------------------------------------------------------------------------------------

DUNDERS: dict[str, Callable[[Any], Any]] = {
    "format_0d": lambda L: f"{L.tensor(3.14159):.3f}|{L.tensor(7):5d}|{L.tensor(True)}|{L.tensor(2.5)}",
    "format_1_element": lambda L: f"{L.tensor([3.14159]):.2f}",
    "format_nd_plain": lambda L: f"{L.tensor([1.0, 2.0])}",
    "format_grad": lambda L: f"{L.tensor(2.0, requires_grad=True) * 2:.1f}",
    "contains": lambda L: (2 in L.tensor([1, 2, 3]), 5 in L.tensor([1, 2, 3]), L.tensor(2) in L.tensor([1, 2])),
    "contains_str": lambda L: "a" in L.tensor([1, 2]),
    "index": lambda L: ([0, 1, 2, 3][L.tensor(2)], list(range(L.tensor(3))), [0, 1][L.tensor([1])]),
    "index_float": lambda L: [0, 1, 2, 3][L.tensor(2.0)],
    "bool": lambda L: (bool(L.tensor(0.0)), bool(L.tensor([2])), bool(L.tensor(float("nan")))),
    "bool_many": lambda L: bool(L.tensor([1, 2])),
    "bool_empty": lambda L: bool(L.tensor([])),
    "len": lambda L: (len(L.zeros(3, 2)), len(L.zeros(2, 3).shape)),
    "len_0d": lambda L: len(L.tensor(1.0)),
    "iter": lambda L: [x.tolist() for x in L.tensor([[1, 2], [3, 4]])],
    "iter_0d": lambda L: list(L.tensor(1.0)),
    "unpack": lambda L: (lambda a, b: (a + b).tolist())(*L.tensor([[1, 2], [3, 4]])),
    "reversed": lambda L: [x.item() for x in reversed(L.tensor([1, 2, 3]))],
    "array": lambda L: (np.asarray(L.tensor([1.0, 2.0])).tolist(), np.asarray(L.tensor([1.5]), dtype=np.int32).dtype),
    "scalars": lambda L: (int(L.tensor(2.7)), float(L.tensor(2)), complex(L.tensor(1.0)), int(L.tensor([[3]]))),
    "int_many": lambda L: int(L.tensor([1, 2])),
    "float_many": lambda L: float(L.tensor([1.0, 2.0])),
    "item_many": lambda L: L.tensor([1.0, 2.0]).item(),
    "int_nan": lambda L: int(L.tensor(float("nan"))),
    "round_abs_pos": lambda L: (round(L.tensor(2.5)), round(L.tensor(2.567), 1), abs(L.tensor(-2.0)), +L.tensor(-2.0)),
    "floordiv_mod": lambda L: (L.tensor([7, -7]) // 2, 7 // L.tensor([2, -2]), L.tensor([7, -7]) % 3, 7 % L.tensor([3, -3])),
    "bitwise": lambda L: (L.tensor([6]) & 3, 3 & L.tensor([6]), L.tensor([6]) | 1, 1 | L.tensor([6]), L.tensor([6]) ^ 3),
    "shifts": lambda L: (L.tensor([6]) << 1, L.tensor([6]) >> 1, 1 << L.tensor([2]), 16 >> L.tensor([2])),
    "inplace_operators": lambda L: [f(L.tensor([6]), 2) for f in (
        operator.iadd, operator.isub, operator.imul, operator.ifloordiv, operator.imod, operator.ipow,
        operator.iand, operator.ior, operator.ixor, operator.ilshift, operator.irshift)],
    "itruediv_float": lambda L: operator.itruediv(L.tensor([6.0]), 4),
    "itruediv_int": lambda L: operator.itruediv(L.tensor([6]), 4),
    "imatmul": lambda L: operator.imatmul(L.ones(2, 2), L.ones(2, 2)),
    "divmod": lambda L: divmod(L.tensor([7]), 2),
    "rpow": lambda L: 2 ** L.tensor([3]),
    "eq_other_types": lambda L: (L.tensor([1]) == None, L.tensor([1]) != None, L.tensor([1]) == "a",  # noqa: E711
                                 L.tensor([1, 2]) == [1, 2]),
    "lt_none": lambda L: L.tensor([1]) < None,
    "chained_comparison": lambda L: 0 < L.tensor(1.0) < 2,
    "hash_identity": lambda L: (len({L.tensor(1.0), L.tensor(1.0)}), (lambda t: len(dict.fromkeys([t, t])))(L.tensor(1.0))),
    "builtins": lambda L: (sorted(L.tensor([3, 1, 2])), max(L.tensor([3, 1, 2])), sum(L.tensor([3, 1, 2])),
                           sum([L.tensor(1.0), L.tensor(2.0)]), min(L.tensor(3.0), L.tensor(1.0))),
    "math": lambda L: (math.sqrt(L.tensor(4.0)), math.isclose(L.tensor(4.0), 4.0), np.float64(L.tensor(4.0))),
    "numpy_scalar_left": lambda L: type(np.float32(1) + L.tensor(2.0)).__name__,
    "deepcopy": lambda L: (lambda t: (copy.deepcopy(t), copy.deepcopy(t).requires_grad))(L.tensor([1.0, 2.0], requires_grad=True)),
    "deepcopy_non_leaf": lambda L: copy.deepcopy(L.tensor([1.0], requires_grad=True) * 2),
    "deepcopy_keeps_grad": lambda L: (lambda t: (t.sum().backward(), copy.deepcopy(t).grad)[1])(L.tensor([1.0, 2.0], requires_grad=True)),
    "copy": lambda L: copy.copy(L.tensor([1.0, 2.0])),
    "pickle": lambda L: (pickle.loads(pickle.dumps(L.tensor([1.0, 2.0]))), pickle.loads(pickle.dumps(L.tensor(3)))),
    "pickle_requires_grad": lambda L: pickle.loads(pickle.dumps(L.tensor([1.0], requires_grad=True))).requires_grad,
    "pickle_parameter": lambda L: pickle.loads(pickle.dumps(L.nn.Parameter(L.tensor([1.0, 2.0])))),
    "pickle_module": lambda L: (lambda m: pickle.loads(pickle.dumps(m)).weight.shape)(L.nn.Linear(2, 3)),
    "deepcopy_module": lambda L: (lambda m: [p.shape for p in copy.deepcopy(m).parameters()])(L.nn.Linear(2, 3)),
    "size": lambda L: (L.zeros(2, 3).size(-1), L.zeros(2, 3).size()[1:], L.zeros(2, 3).shape + (4,),
                       L.zeros(2, 3).shape == (2, 3), L.zeros(2, 3).numel()),
}


@pytest.mark.parametrize("case", DUNDERS)
def test_dunders_as_torch(case: str) -> None:
    same_as_torch(DUNDERS[case])


def test_coded_errors_of_the_protocols() -> None:
    with pytest.raises(ValueError) as e:
        float(st.tensor([1.0, 2.0]))
    assert e.value.code == "scalar_error_not_one_element"  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError) as r:
        _ = "a" in st.tensor([1])
    assert r.value.code == "contains_error_unsupported_element"  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError) as o:
        st.zeros(1).expand(3).add_(1)
    assert o.value.code == "inplace_error_internal_overlap"  # type: ignore[attr-defined]


def test_version_counter_as_torch() -> None:
    """``_version`` (a property, as torch's): each in-place write counts once, and a view shares its base's counter."""
    seen = {}
    for lib in (st, torch):
        x = lib.ones(3)
        before = x._version
        x.add_(1)
        v = x[1:]
        v.mul_(2)
        seen[lib.__name__] = (before, x._version, v._version, lib.ones(2)._version)
    assert seen["shapetorch"] == seen["torch"] == (0, 2, 2, 0)
