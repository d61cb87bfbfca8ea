"""More linear algebra: diag/diag_embed/diagflat, tril/triu, trace, inverse, kron, block_diag, cdist,
and the matmul family's addbmm, addr, chain_matmul and tensordot.

Composites where torch's op is a composition (kron, block_diag, tensordot, ...); primitives with
their own gradients where it is not (inverse, tril/triu, cdist).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._dispatch import Prim
from .._errors import fail
from .._rules.matmul import addbmm_shape, addr_shape, kron_shape, tensordot_dims
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
from ._common import check, dtype_name, make_inplace, promoted
from ._registry import method, public

Arr = Any


# -- diagonals ------------------------------------------------------------------------------------------


@public("linalg")
def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The last dim of ``input`` on the ``offset`` diagonal of new (dim1, dim2) planes, zeros elsewhere."""
    shape = check(diag_embed_shape, input._data.shape, offset, dim1, dim2, op="diag_embed")
    from .indexing_more import diagonal_scatter

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
    return _TRI(input, k=diagonal, upper=False)


@public("linalg")
def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle (on and above ``diagonal``) of the last two dims; the rest zeroed."""
    check(triangular_shape, input._data.shape, op="triu")
    return _TRI(input, k=diagonal, upper=True)


method("tril_", make_inplace(tril, "tril_"))
method("triu_", make_inplace(triu, "triu_"))


@public("linalg")
def trace(input: Tensor) -> Tensor:
    """The sum of a matrix's main diagonal (integers sum to int64)."""
    check(trace_shape, input._data.shape, op="trace")
    if dtype_name(input) == "bool":
        fail("method_dtype_not_supported_error", op="trace", dtype="bool", hint="")
    out: Tensor = input.diagonal().sum()
    return out


# -- inverse ---------------------------------------------------------------------------------------------------


def _inv_kernel(a: Arr) -> Arr:
    try:
        return np.linalg.inv(a).astype(a.dtype, copy=False)
    except np.linalg.LinAlgError:
        fail("argument_error_invalid", op="inverse",
             problem="the inversion could not be completed because the input matrix is singular")


def _inv_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    inv_h = n.out.mH
    return (-(inv_h @ g @ inv_h),)


_INVERSE = Prim("inverse", _inv_kernel, _inv_vjp, save_output=True)
_INVERSE.jvp = lambda ts, n: None if ts[0] is None else -(n.out @ ts[0] @ n.out)


@public("linalg")
def inverse(input: Tensor) -> Tensor:
    """The inverse of each square matrix in the last two dims (float or complex)."""
    check(inverse_shape, input._data.shape, op="inverse")
    name = dtype_name(input)
    if name not in ("float32", "float64", "complex64", "complex128"):
        fail("method_dtype_not_supported_error", op="inverse", dtype=name,
             hint=" (linalg.inv takes float32, float64, complex64 or complex128)")
    return _INVERSE(input)


# -- kron, block_diag -----------------------------------------------------------------------------------------------


@public("linalg")
def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: ranks padded to one, ``out[i*b + j] = a[i] * b[j]`` per dim."""
    shape = check(kron_shape, input._data.shape, other._data.shape, op="kron")
    n = len(shape)
    sa = (1,) * (n - input._data.ndim) + tuple(input._data.shape)
    sb = (1,) * (n - other._data.ndim) + tuple(other._data.shape)
    a = input.reshape(tuple(x for s in sa for x in (s, 1)))
    b = other.reshape(tuple(x for s in sb for x in (1, s)))
    out: Tensor = (a * b).reshape(shape)
    return out


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
    if p == 0:
        out = (diff != 0).sum(-1)
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


# -- the matmul family ------------------------------------------------------------------------------------------------


def _scaled_sum(op: str, input: Tensor, prod: Tensor, beta: Any, alpha: Any) -> Tensor:
    if dtype_name(input) != dtype_name(prod):
        fail("dtype_error_mismatch", op=op, what="input and the product", a=input.dtype.name, b=prod.dtype.name)
    if dtype_name(prod) == "bool":
        term = prod if alpha else prod.new_zeros(prod._data.shape)
        out: Tensor = term | input.expand(prod._data.shape) if beta else term
        return out
    if not prod.dtype.is_floating_point and not prod.is_complex() and (isinstance(alpha, float) or isinstance(beta, float)):
        if op == "addr":
            fail("argument_error_invalid", op=op, problem="for integral input tensors, alpha and beta must not be floats")
        alpha, beta = int(alpha), int(beta)  # addbmm truncates them to the integer type, as torch
    scaled = prod if alpha == 1 else prod * alpha
    if beta == 0:
        return scaled + input.new_zeros(()).expand(prod._data.shape)
    result: Tensor = (input if beta == 1 else input * beta) + scaled
    return result


@public("linalg")
def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]`` (input broadcasts to the (n, p) result)."""
    check(addbmm_shape, input._data.shape, batch1._data.shape, batch2._data.shape, op="addbmm")
    from .linalg import bmm

    prod: Tensor = bmm(batch1, batch2).sum(0)
    return _scaled_sum("addbmm", input, prod, beta, alpha)


@public("linalg")
def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``."""
    check(addr_shape, input._data.shape, vec1._data.shape, vec2._data.shape, op="addr")
    if dtype_name(vec1) != dtype_name(vec2):
        fail("dtype_error_mismatch", op="addr", what="vec1 and vec2", a=vec1.dtype.name, b=vec2.dtype.name)
    prod = vec1.unsqueeze(-1) & vec2.unsqueeze(0) if dtype_name(vec1) == "bool" else vec1.unsqueeze(-1) * vec2.unsqueeze(0)
    return _scaled_sum("addr", input, prod, beta, alpha)


method("addbmm_", make_inplace(addbmm, "addbmm_"))
method("addr_", make_inplace(addr, "addr_"))


@public("linalg", method=False)
def chain_matmul(*matrices: Tensor) -> Tensor:
    """The product of 2-D matrices, left to right (deprecated in torch for ``linalg.multi_dot``)."""
    from .linalg import mm

    if not matrices:
        fail("argument_error_invalid", op="chain_matmul", problem="expected one or more matrices")
    if len(matrices) == 1:
        check(trace_shape, matrices[0]._data.shape, op="chain_matmul")
        out: Tensor = matrices[0].clone()
        return out
    out = matrices[0]
    for m in matrices[1:]:
        out = mm(out, m)
    return out


def _dims_arg(dims: Any) -> int | tuple[list[int], list[int]]:
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)):
        return int(dims)
    a, b = dims
    return ([int(a)] if isinstance(a, (int, np.integer)) else [int(v) for v in a],
            [int(b)] if isinstance(b, (int, np.integer)) else [int(v) for v in b])


@public("linalg", method=False)
def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Tensor | None = None) -> Tensor:
    """Contract ``dims`` (the last n of a with the first n of b, or two lists of dims); free dims of a then b."""
    from .linalg import mm

    if dtype_name(a) != dtype_name(b):
        fail("dtype_error_mismatch", op="tensordot", what="both inputs", a=a.dtype.name, b=b.dtype.name)
    da, db, shape = check(tensordot_dims, a._data.shape, b._data.shape, _dims_arg(dims), op="tensordot")
    for x, y in zip(da, db):  # a size-1 side is summed away first, as torch broadcasts it
        if a._data.shape[x] == 1 and b._data.shape[y] != 1:
            b = b.sum(y, keepdim=True)
        elif b._data.shape[y] == 1 and a._data.shape[x] != 1:
            a = a.sum(x, keepdim=True)
    free_a = [i for i in range(a._data.ndim) if i not in da]
    free_b = [i for i in range(b._data.ndim) if i not in db]
    k = math.prod(a._data.shape[i] for i in da)
    left = a.permute(free_a + list(da)).reshape(math.prod(a._data.shape[i] for i in free_a), k)
    right = b.permute(list(db) + free_b).reshape(k, math.prod(b._data.shape[i] for i in free_b))
    result: Tensor = mm(left, right).reshape(shape)
    return result if out is None else out.copy_(result)

