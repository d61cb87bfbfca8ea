"""The matmul family: matmul (``@``), mm, bmm, mv, dot, vdot, inner, outer, addmm, baddbmm."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .._autocast import AUTOCAST, autocast_dtype_for
from .._dispatch import Prim
from .._errors import fail
from .._rules import matmul as RM
from .._tensor import Tensor
from ._common import check
from ._registry import public


def _matmul_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    a, b = n.inputs
    if a._data.ndim == 1 and b._data.ndim == 1:
        return g * b.conj(), g * a.conj()
    if b._data.ndim == 1:
        return g.unsqueeze(-1) @ b.conj().unsqueeze(0), (a.conj().mT @ g.unsqueeze(-1)).squeeze(-1)
    if a._data.ndim == 1:
        return (g.unsqueeze(-2) @ b.conj().mT).squeeze(-2), a.conj().unsqueeze(-1) @ g.unsqueeze(-2)
    return g @ b.conj().mT, a.conj().mT @ g  # batch dims are summed back by the engine


def _matmul_kernel(a: Any, b: Any) -> Any:
    out = np.matmul(a, b)
    return out if out.dtype == a.dtype else out.astype(a.dtype)  # ml_dtypes' bfloat16 matmul gives float32


_MATMUL = Prim("matmul", _matmul_kernel, _matmul_vjp)


@functools.lru_cache(maxsize=4096)
def _matmul_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return check(RM.matmul_shape, a, b, op="matmul")


def _same_dtype(op: str, a: Tensor, b: Tensor) -> None:
    """torch's matmul family does not promote: both operands must have one dtype."""
    if a._data.dtype is not b._data.dtype and a._data.dtype != b._data.dtype:
        fail("dtype_error_mismatch", op=op, what="both arguments", a=a.dtype.name, b=b.dtype.name)
    if a._data.dtype.kind == "b":
        fail("method_dtype_not_supported_error", op=op, dtype="bool", hint="")


@public("linalg")
def matmul(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.matmul: vector/matrix products with broadcast batch dims."""
    _matmul_shape(input._data.shape, other._data.shape)
    if AUTOCAST.enabled:
        input, other = _autocast(input, other)
    _same_dtype("matmul", input, other)
    result = _MATMUL(input, other)
    return result if out is None else out.copy_(result)


def _autocast(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """Inside ``autocast``, matmul-family inputs of floating dtypes run in the autocast dtype."""
    dt = autocast_dtype_for(a._device.type)
    if dt is None or not (a.dtype.is_floating_point and b.dtype.is_floating_point):
        return a, b
    return a.to(dt), b.to(dt)


def _strict(rule: Any, name: str) -> Any:
    def fn(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
        check(rule, input._data.shape, other._data.shape, op=name)
        if AUTOCAST.enabled:
            input, other = _autocast(input, other)
        _same_dtype(name, input, other)
        result = _MATMUL(input, other)
        return result if out is None else out.copy_(result)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}``: the strict-rank matrix product (no broadcasting)."
    return public("linalg")(fn)


mm = _strict(RM.mm_shape, "mm")
bmm = _strict(RM.bmm_shape, "bmm")
mv = _strict(RM.mv_shape, "mv")
dot = _strict(RM.dot_shape, "dot")


@public("linalg")
def vdot(input: Tensor, other: Tensor) -> Tensor:
    return dot(input.conj(), other)


@public("linalg", aliases=("ger",))
def outer(input: Tensor, vec2: Tensor) -> Tensor:
    check(RM.outer_shape, input._data.shape, vec2._data.shape, op="outer")
    from ._common import promoted

    common = promoted(input, vec2)
    return input.to(common).unsqueeze(-1) * vec2.to(common).unsqueeze(0)


@public("linalg")
def inner(input: Tensor, other: Tensor) -> Tensor:
    if input._data.ndim == 0 or other._data.ndim == 0:
        return input * other
    return matmul(input, other.unsqueeze(-1) if other._data.ndim == 1 else other.mT).squeeze(-1) \
        if other._data.ndim == 1 else matmul(input, other.mT)


@public("linalg")
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    prod = mm(mat1, mat2)
    return (input if beta == 1 else input * beta) + (prod if alpha == 1 else prod * alpha)


@public("linalg")
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    prod = bmm(batch1, batch2)
    return (input if beta == 1 else input * beta) + (prod if alpha == 1 else prod * alpha)


@public("linalg")
def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    prod = mv(mat, vec)
    return (input if beta == 1 else input * beta) + (prod if alpha == 1 else prod * alpha)


_CONJ = Prim("conj", np.conj, lambda g, n: (g.conj(),))


@public("pointwise")
def conj(input: Tensor) -> Tensor:
    return _CONJ(input) if input.is_complex() else input


def _to_complex(g: Tensor, like: Tensor) -> Tensor:
    return g.to(like.dtype)


# Views of the real and imaginary parts (they share storage, as in torch) with gradients back to the
# complex input: d real = g + 0j, d imag = 0 + g j.
_REAL = Prim("real", lambda a: a.real, lambda g, n: (_to_complex(g, n.inputs[0]),))
_IMAG = Prim("imag", lambda a: a.imag, lambda g, n: (_to_complex(g, n.inputs[0]) * 1j,))


@public("pointwise", method=False)
def real(input: Tensor) -> Tensor:
    if not input.is_complex():
        return input
    out = _REAL(input)
    out._base = input._base if input._base is not None else input
    return out


@public("pointwise", method=False)
def imag(input: Tensor) -> Tensor:
    if not input.is_complex():
        fail("method_dtype_not_supported_error", op="imag", dtype=input.dtype.name,
             hint=" (imag is only defined for complex tensors)")
    out = _IMAG(input)
    out._base = input._base if input._base is not None else input
    return out


Tensor.real = property(real)  # type: ignore[attr-defined]
Tensor.imag = property(imag)  # type: ignore[attr-defined]

Tensor.__matmul__ = matmul  # type: ignore[method-assign]
