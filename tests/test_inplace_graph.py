"""In-place writes into non-leaf tensors and their views, against torch: the write enters the graph (a value
that does not depend on the old one cuts the old values' gradient; a write into a view rebuilds its base as
torch's CopySlices does). These went silently wrong before: ``b = x * 1; b[0].copy_(s)`` left ``s.grad`` None
and ``x.grad`` unmasked."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import shapetorch as st

W = [1.0, 2.0, 3.0]


def _fill_(lib: Any, x: Any, s: Any) -> Any:
    b = x * 1
    b.fill_(2.0)
    return (b * lib.tensor(W)).sum()


def _zero_(lib: Any, x: Any, s: Any) -> Any:
    b = x * 1
    b.zero_()
    return (b * lib.tensor(W)).sum()


def _copy_constant(lib: Any, x: Any, s: Any) -> Any:
    b = x * 1
    b.copy_(lib.tensor([7.0, 8.0, 9.0]))
    return (b * lib.tensor(W)).sum()


def _copy_into_element(lib: Any, x: Any, s: Any) -> Any:
    b = x * 1
    b[0].copy_(s[0])
    return (b * lib.tensor(W)).sum()


def _copy_into_slice(lib: Any, x: Any, s: Any) -> Any:
    b = x * 1
    b[:2].copy_(s[:2])
    return (b * lib.tensor(W)).sum()


def _fill_slice(lib: Any, x: Any, s: Any) -> Any:
    b = x * 1
    b[1:].fill_(2.0)
    return (b * lib.tensor(W)).sum()


def _mul_slice_read_base(lib: Any, x: Any, s: Any) -> Any:
    b = x * 1
    b[1:].mul_(2.0)
    return (b * lib.tensor(W)).sum()


def _mul_slice_read_view(lib: Any, x: Any, s: Any) -> Any:
    b = x * 1
    v = b[1:]
    v.mul_(2.0)
    return (v * 1).sum()


def _add_overlapping(lib: Any, x: Any, s: Any) -> Any:
    b = x * 1
    b[1:].add_(s[:2] * x[:2])
    return (b ** 2).sum()


def _transposed_view(lib: Any, x: Any, s: Any) -> Any:
    b = (x * 1).reshape(3, 1) * lib.tensor([[1.0, 2.0]])
    b.t()[0].mul_(5.0)
    return (b * b).sum()


def _column_copy(lib: Any, x: Any, s: Any) -> Any:
    b = (x * 2).reshape(3, 1).expand(3, 2).contiguous()
    b[:, 0].copy_(s)
    return (b * b).sum()


def _fill_tensor(lib: Any, x: Any, s: Any) -> Any:
    b = x * 1
    b.fill_(s[1] * 2)  # a 0-d value in the graph: its gradient is the sum of the result's
    return (b * lib.tensor(W)).sum()


def _fill_tensor_into_constant(lib: Any, x: Any, s: Any) -> Any:
    b = lib.zeros(3, dtype=lib.float64)
    b.fill_(s[0])
    return (b * x).sum()


def _fill_slice_tensor(lib: Any, x: Any, s: Any) -> Any:
    b = x * 1
    b[1:].fill_(s[2])
    return (b * lib.tensor(W)).sum()


def _fill_out_of_place_tensor(lib: Any, x: Any, s: Any) -> Any:
    return (lib.fill(x, s[0]) * lib.tensor(W)).sum() + (lib.fill(lib.ones(3), s[1]) * x).sum()


CASES = [_fill_, _zero_, _copy_constant, _copy_into_element, _copy_into_slice, _fill_slice, _mul_slice_read_base,
         _mul_slice_read_view, _add_overlapping, _transposed_view, _column_copy, _fill_tensor,
         _fill_tensor_into_constant, _fill_slice_tensor, _fill_out_of_place_tensor]


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_inplace_write_gradients_match_torch(case: Any) -> None:
    grads = []
    for lib in (torch, st):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        s = lib.tensor([5.0, 6.0, 7.0], requires_grad=True)
        case(lib, x, s).backward()
        grads.append([None if t.grad is None else np.asarray(t.grad.numpy()) for t in (x, s)])
    for want, got in zip(*grads):
        assert (want is None) == (got is None)
        if want is not None:
            np.testing.assert_allclose(got, want)


def _fill_nodes(lib: Any) -> list[str | None]:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    v = lib.tensor(3.0, requires_grad=True)
    names = []
    for target, args in ((x * 1, ()), (x * 1, (3.0,)), (x * 1, (lib.tensor(3.0),)), (x * 1, (v,)),
                         (lib.zeros(2), (v,)), (lib.zeros(2), (lib.tensor(3.0),))):
        getattr(target, "fill_" if args else "zero_")(*args)
        names.append(None if target.grad_fn is None else target.grad_fn.name())
    for value in (3.0, lib.tensor(3.0), v):
        names.append(lib.fill(x, value).grad_fn.name())
    return names


def test_overwrite_nodes_are_named_as_torch() -> None:
    assert _fill_nodes(st) == _fill_nodes(torch)


def test_fill_value_must_be_0_dim_as_torch() -> None:
    for lib in (torch, st):
        with pytest.raises(RuntimeError, match="only supports 0-dimension value tensor but got tensor with 1 dim"):
            lib.zeros(3).fill_(lib.tensor([2.0]))


def test_fill_of_an_integer_tensor_with_a_value_that_requires_grad() -> None:
    """torch.fill of an integer or bool tensor with a 0-d value that requires grad would put integers in the graph:
    torch refuses with a RuntimeError naming its dtype. In place, both write the value's number; torch also marks
    the integer tensor as requiring grad (a backward through it stops at an internal assert), shapetorch leaves it
    out of the graph (docs/compatibility.md)."""
    for dtype, name in (("int64", "Long"), ("int32", "Int"), ("bool", "Bool"), ("uint8", "Byte")):
        for lib in (torch, st):
            v = lib.tensor(1.5, requires_grad=True)
            with pytest.raises(RuntimeError, match=f"Autograd not support dtype: {name}$"):
                lib.fill(lib.zeros(3, dtype=getattr(lib, dtype)), v)
            with lib.no_grad():
                assert lib.fill(lib.zeros(3, dtype=getattr(lib, dtype)), v).tolist() == [True if dtype == "bool" else 1] * 3
        theirs = torch.zeros(3, dtype=getattr(torch, dtype)).fill_(torch.tensor(1.5, requires_grad=True))
        ours = st.zeros(3, dtype=getattr(st, dtype)).fill_(st.tensor(1.5, requires_grad=True))
        assert ours.tolist() == theirs.tolist() and ours.dtype.name == dtype and not ours.requires_grad
    v = st.tensor(1.5, requires_grad=True)
    st.zeros(3).fill_(v).sum().backward()
    assert v.grad.item() == 3.0  # a floating tensor's fill stays in the graph


def _fill_tangents(lib: Any) -> list[Any]:
    """Forward-mode AD through writes that do not read the old values: the tangent is zero (fill_, zero_, copy_
    of a constant, a sampler), or the 0-d value's own (fill_ of a dual tensor)."""
    fw = lib.autograd.forward_ad
    out = []
    writes = (lambda b: b.fill_(2.0), lambda b: b.zero_(), lambda b: b.fill_(lib.tensor(4.0)),
              lambda b: b.copy_(lib.ones(3)), lambda b: b.uniform_(),
              lambda b: b.fill_(fw.make_dual(lib.tensor(5.0), lib.tensor(7.0))))
    with fw.dual_level():
        for write in writes:
            b = fw.make_dual(lib.tensor(W), lib.tensor([1.0, 2.0, 3.0])) * 1
            write(b)
            out.append(fw.unpack_dual(b).tangent.numpy().tolist())
        b = lib.zeros(2)
        b.fill_(fw.make_dual(lib.tensor(5.0), lib.tensor(7.0)))
        out.append(fw.unpack_dual(b).tangent.numpy().tolist())
    return out


def test_forward_ad_through_fill_matches_torch() -> None:
    assert _fill_tangents(st) == _fill_tangents(torch)
