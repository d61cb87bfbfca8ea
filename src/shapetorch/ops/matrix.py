"""Matrix functions: diag/diag_embed/diagflat, tril/triu, trace, inverse, block_diag, cdist."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .._engine.primitives import Prim
from .._errors import fail
from .._rules.matrix import (
    block_diag_shape,
    cdist_shape,
    diag_embed_shape,
    diag_shape,
    diagflat_shape,
    inverse_shape,
    trace_shape,
    triangular_shape,
)
from .._tensor import Tensor
from ._common import as_node, autocast_inputs, check, dtype_name, make_inplace, promoted
from ._registry import method, public

Arr = Any


# -- diagonals ------------------------------------------------------------------------------------------


@public("linalg")
def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The last dim of ``input`` on the ``offset`` diagonal of new (dim1, dim2) planes, zeros elsewhere."""
    shape = check(diag_embed_shape, input._data.shape, offset, dim1, dim2, op="diag_embed")
    from .scatter import diagonal_scatter

    x = input.reshape(1) if input._data.ndim == 0 else input
    return diagonal_scatter(x.new_zeros(shape), x, offset, dim1, dim2)


@public("linalg")
def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """1-D: a matrix with ``input`` on its ``diagonal``; 2-D: that diagonal as a new 1-D tensor."""
    check(diag_shape, input._data.shape, diagonal, op="diag")
    if input._data.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    out: Tensor = input.diagonal(diagonal).clone()
    return out


@public("linalg")
def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """``input`` flattened onto the ``offset`` diagonal of a square matrix."""
    check(diagflat_shape, input._data.shape, offset, op="diagflat")
    return diag_embed(input.reshape(-1), offset, 0, 1)


def _tri_kernel(a: Arr, k: int, upper: bool) -> Arr:
    if a.size == 0:
        return a.copy()
    return np.triu(a, k) if upper else np.tril(a, k)


def _tri_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    return (_TRI(g, **n.params),)


_TRI = Prim("triangle", _tri_kernel, _tri_vjp)
_TRI.jvp = lambda ts, n: None if ts[0] is None else _TRI(ts[0], **n.params)


@public("linalg")
def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle (on and below ``diagonal``) of the last two dims; the rest zeroed."""
    check(triangular_shape, input._data.shape, op="tril")
    return as_node(_TRI(input, k=diagonal, upper=False), "TrilBackward0", input)


@public("linalg")
def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle (on and above ``diagonal``) of the last two dims; the rest zeroed."""
    check(triangular_shape, input._data.shape, op="triu")
    return as_node(_TRI(input, k=diagonal, upper=True), "TriuBackward0", input)


method("tril_", make_inplace(tril, "tril_"))
method("triu_", make_inplace(triu, "triu_"))


@public("linalg")
def trace(input: Tensor) -> Tensor:
    """The sum of a matrix's main diagonal (integers sum to int64)."""
    input = autocast_inputs("trace", input)[0]
    check(trace_shape, input._data.shape, op="trace")
    if dtype_name(input) == "bool":
        fail("method_dtype_not_supported_error", op="trace", dtype="bool", hint="")
    return as_node(input.diagonal().sum(), "TraceBackward0", input)


# -- inverse ---------------------------------------------------------------------------------------------------


def matrices(a: Arr) -> Arr:
    """The batch of matrices ``a`` as one (batch, m, n) array (empty batches included)."""
    return a.reshape(math.prod(a.shape[:-2]), *a.shape[-2:])


def singular_error(op: str, a: Arr, what: str = "inversion") -> None:
    """Raise torch's error for the first singular matrix of the batch ``a`` (the pivot from scipy's LU)."""
    import scipy.linalg

    for b, m in enumerate(matrices(a)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lu, _ = scipy.linalg.lu_factor(m, check_finite=False)
        zero = np.flatnonzero(np.diagonal(lu) == 0)
        if zero.size:
            where = f"{op}: (Batch element {b})" if a.ndim > 2 else op
            cause = "The solver failed" if what == "solve" else \
                f"The diagonal element {int(zero[0]) + 1} is zero, the {what} could not be completed"
            fail("linalg_error_singular", op=where, cause=cause)



def _inv_kernel(a: Arr) -> Arr:
    try:
        return np.linalg.inv(a).astype(a.dtype, copy=False)
    except np.linalg.LinAlgError:
        singular_error("linalg.inv", a)
        raise


def _inv_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    inv_h = n.out.mH
    return (-(inv_h @ g @ inv_h),)


_INVERSE = Prim("inverse", _inv_kernel, _inv_vjp, save_output=True)
_INVERSE.jvp = lambda ts, n: None if ts[0] is None else -(n.out @ ts[0] @ n.out)


@public("linalg")
def inverse(input: Tensor) -> Tensor:
    """The inverse of each square matrix in the last two dims (float or complex)."""
    input = autocast_inputs("inverse", input)[0]
    check(inverse_shape, input._data.shape, op="inverse")
    name = dtype_name(input)
    if name not in ("float32", "float64", "complex64", "complex128"):
        fail("method_dtype_not_supported_error", op="inverse", dtype=name,
             hint=" (linalg.inv takes float32, float64, complex64 or complex128)")
    return _INVERSE(input)


@public("linalg", method=False)
def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors (0-d as (1, 1), 1-d as one row) on the diagonal of one matrix, zeros elsewhere."""
    from .creation import zeros
    from .joining import cat

    rows_, cols = check(block_diag_shape, [t._data.shape for t in tensors], op="block_diag")
    if not tensors:
        return zeros(rows_, cols)
    common = promoted(*tensors)
    mats = [t.to(common).reshape(1, 1) if t._data.ndim == 0 else t.to(common).reshape(1, -1) if t._data.ndim == 1
            else t.to(common) for t in tensors]
    rows, left = [], 0
    for m in mats:
        r, c = m._data.shape
        parts = [m.new_zeros((r, left)), m, m.new_zeros((r, cols - left - c))]
        rows.append(cat(parts, 1))
        left += c
    return cat(rows, 0)


# -- cdist --------------------------------------------------------------------------------------------------------------


def _cdist_kernel(a: Arr, b: Arr, p: float) -> Arr:
    diff = np.abs(a[..., :, None, :] - b[..., None, :, :])
    if p == 0:  # the count of differing coordinates; a NaN coordinate makes the distance NaN, as in torch
        out = np.where(np.isnan(diff).any(-1), np.nan, (diff != 0).sum(-1))
    elif math.isinf(p):
        out = diff.max(-1, initial=0)
    elif p == 1:
        out = diff.sum(-1)
    elif p == 2:
        out = np.sqrt((diff * diff).sum(-1))
    else:
        out = (diff ** p).sum(-1) ** (1.0 / p)
    return np.asarray(out, dtype=a.dtype)


def _cdist_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    from .conversion import where

    x1, x2 = n.inputs
    dist, p = n.out, n.params["p"]
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    if p == 0:
        return x1.new_zeros(x1._data.shape), x2.new_zeros(x2._data.shape)
    gu = g.unsqueeze(-1)
    if p == 1:
        w = diff.sgn() * gu
    elif math.isinf(p):
        w = diff.sgn() * (diff.abs() == dist.unsqueeze(-1)).to(g.dtype) * gu
    elif p == 2:
        w = diff * where(dist == 0, 0.0, g / dist).unsqueeze(-1)
    else:
        scale = where(dist == 0, 0.0, g / dist ** (p - 1)).unsqueeze(-1)
        w = where(diff == 0, 0.0, diff.sgn() * diff.abs() ** (p - 1) * scale)
    return w.sum(-2), -w.sum(-3)


_CDIST = Prim("cdist", _cdist_kernel, _cdist_vjp, save_output=True)


@public("linalg", method=False)
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """p-norm distances between the rows of ``x1`` (..., P, M) and of ``x2`` (..., R, M): (..., P, R)."""
    x1, x2 = autocast_inputs("cdist", x1, x2)
    check(cdist_shape, x1._data.shape, x2._data.shape, op="cdist")
    for t in (x1, x2):
        if not t.dtype.is_floating_point or dtype_name(t) in ("float16", "bfloat16"):
            fail("method_dtype_not_supported_error", op="cdist", dtype=dtype_name(t),
                 hint=" (cdist only supports float32 and float64)")
    if dtype_name(x1) != dtype_name(x2):
        fail("dtype_error_mismatch", op="cdist", what="X1 and X2", a=x1.dtype.name, b=x2.dtype.name)
    if p < 0:
        fail("argument_error_invalid", op="cdist", problem=f"only supports non-negative p values, got {p}")
    return _CDIST(x1, x2, p=float(p))
