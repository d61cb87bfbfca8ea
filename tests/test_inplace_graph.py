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


CASES = [_fill_, _zero_, _copy_constant, _copy_into_element, _copy_into_slice, _fill_slice, _mul_slice_read_base,
         _mul_slice_read_view, _add_overlapping, _transposed_view, _column_copy]


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


def test_overwrite_nodes_are_named_as_torch() -> None:
    for op, name in (("fill_", "Fill"), ("zero_", "Zero")):
        x = st.tensor([1.0, 2.0], requires_grad=True)
        b = x * 1
        getattr(b, op)(*(() if op == "zero_" else (3.0,)))
        assert b.grad_fn is not None and b.grad_fn.name().startswith(name)
