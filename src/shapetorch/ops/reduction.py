"""Reductions: sum, mean, prod, amax/amin, max/min (with indices), argmax/argmin, var/std, norm,
logsumexp, all/any. Shapes come from ``_rules.reduce``; composites are written in other ops."""

from __future__ import annotations

import builtins
import functools
import itertools
import math
from typing import Any

import numpy as np

from .._dtype import to_dtype
from .._engine.primitives import Prim, untracked_kernel, untracked_result
from .._errors import fail
from .._rules import dtypes as RD
from .._rules.axes import wrap_dim
from .._rules.reduction import check_nonempty, reduce_dims
from .._tensor import Tensor
from ..backends import thread_pool
from . import return_types as RT
from ._common import (
    as_node,
    as_operand,
    autocast_inputs,
    cast,
    check,
    default_float,
    dtype_name,
    int_list,
    need_floating,
    write_inplace,
)
from ._registry import CATEGORY, FUNCTIONS, method, public
from .return_types import VALUES_INDICES, MinMax, ValuesIndices
from .views import expand_known


def _dims(input: Tensor, dim: Any, op: str) -> tuple[int, ...]:
    if dim is None:
        return _ALL_DIMS[input._data.ndim] if input._data.ndim < 8 else tuple(range(input._data.ndim))
    # (an int or a sequence of ints, the common calls: the rule's verdict cached per rank, as the views' rules; a
    # bool is no int here, and would otherwise share 1's cache entry)
    if type(dim) is int:
        return _reduce_dims(input._data.ndim, dim, op)
    if type(dim) is tuple or type(dim) is list:
        for d in dim:  # (one type test each: int_list's)
            if type(d) is not int:
                break
        else:
            return _reduce_dims(input._data.ndim, tuple(dim), op)
    return check(reduce_dims, input._data.ndim, dim, op=op)


@functools.lru_cache(maxsize=4096)
def _reduce_dims(rank: int, dim: int | tuple[int, ...], op: str) -> tuple[int, ...]:
    return check(reduce_dims, rank, dim, op=op)


_ALL_DIMS = [tuple(range(n)) for n in range(8)]


def _grad_back(g: Tensor, n: Any) -> Tensor:
    """Broadcast a reduction's gradient back over the reduced dims."""
    shape, axis, keep = n.inputs[0]._data.shape, n.params["axis"], n.params["keepdims"]
    if not keep and len(axis) < len(shape):  # (a full reduction's 0-d gradient expands as it is)
        g = g.reshape(tuple(1 if i in axis else s for i, s in enumerate(shape)))
    return expand_known(g, shape)


def _extreme_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    """amax/amin: the gradient is shared evenly by the elements that reach the extreme."""
    x = n.inputs[0]
    out = n.out if n.params["keepdims"] else n.out.reshape(
        tuple(1 if i in n.params["axis"] else s for i, s in enumerate(x._data.shape)))
    mask = (x == out).to(g.dtype)
    count = mask.sum(dim=list(n.params["axis"]), keepdim=True)
    return (_grad_back(g, n) * mask / count,)


def _sum_kernel(a: Any, axis: tuple[int, ...], keepdims: bool) -> Any:
    if a.size >= thread_pool.DOT_MIN:  # large: row sums as dot products, over the intra-op threads
        return thread_pool.reduce(np.add, a, axis, keepdims)
    return np.add.reduce(a, axis, None, None, keepdims)  # type: ignore[call-overload]  # np.sum's wrapper costs more than the sum


def _extreme_kernel(f: np.ufunc) -> Any:
    """amax/amin: ``np.maximum.reduce`` (what ``np.amax`` calls), over the threads when the input is large."""
    return lambda a, axis, keepdims: thread_pool.reduce(f, a, axis, keepdims)


_SUM = Prim("sum", _sum_kernel, lambda g, n: (_grad_back(g, n),))


def _prod_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    """The product of the other elements: ``out / x`` where x != 0, and at a zero the product of the
    rest when it is the slice's only zero, else 0 (``out / x`` would give nan there; torch's is finite)."""
    x, axis = n.inputs[0], list(n.params["axis"])
    zero = x == 0
    safe = x.masked_fill(zero, 1)
    others = _keep(n.out, n) / safe
    if bool(zero.any()):
        lone = sum(zero.to(to_dtype("int64")), axis, keepdim=True) == 1
        rest = prod(safe, axis, keepdim=True).masked_fill(~lone, 0)
        others = rest.where(zero, others)
    return (_grad_back(g, n) * (others.conj() if x.is_complex() else others),)


_PROD = Prim("prod", lambda a, axis, keepdims: np.prod(a, axis=axis, keepdims=keepdims), _prod_vjp, save_output=True)
_AMAX = Prim("amax", _extreme_kernel(np.maximum), _extreme_vjp, save_output=True)
_AMIN = Prim("amin", _extreme_kernel(np.minimum), _extreme_vjp, save_output=True)
_ALL = Prim("all", lambda a, axis, keepdims: np.all(a, axis=axis, keepdims=keepdims))
_ANY = Prim("any", lambda a, axis, keepdims: np.any(a, axis=axis, keepdims=keepdims))
_ARGMAX = Prim("argmax", lambda a, axis, keepdims: np.argmax(a, axis=axis, keepdims=keepdims))
_ARGMIN = Prim("argmin", lambda a, axis, keepdims: np.argmin(a, axis=axis, keepdims=keepdims))


def _keep(t: Tensor, n: Any) -> Tensor:
    if n.params["keepdims"]:
        return t
    shape = n.inputs[0]._data.shape
    return t.reshape(tuple(1 if i in n.params["axis"] else s for i, s in enumerate(shape)))


def _int_to_long(input: Tensor, dtype: Any) -> Any:
    """sum/prod of bool and integers accumulate in int64, as torch."""
    if dtype is not None:
        return to_dtype(dtype)
    return to_dtype("int64") if input._data.dtype.kind in "biu" else None


@public("reduction")
def sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    if dim is None and dtype is None and input._data.dtype.kind in "fc" and input._data.ndim < 8:  # (tiny-op path)
        if (k := untracked_kernel(_SUM, input)) is not None:  # (NOTE [untracked call])
            return untracked_result(input, k(input._data, axis=_ALL_DIMS[input._data.ndim], keepdims=keepdim))
        return _SUM(input, axis=_ALL_DIMS[input._data.ndim], keepdims=keepdim)
    axis = _dims(input, dim, "sum")
    d = _int_to_long(input, dtype)
    if d is not None:
        input = input.to(d)
    if (k := untracked_kernel(_SUM, input)) is not None:  # (a gradient summed back to its input's shape in a backward)
        return untracked_result(input, k(input._data, axis=axis, keepdims=keepdim))
    out = _SUM(input, axis=axis, keepdims=keepdim)
    # torch's sum over given dims is its dim_IntList overload (SumBackward1), even when they are all the dims
    return out if dim is None else as_node(out, "SumBackward1", input)


@public("reduction")
def prod(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    if dtype is None:  # an explicit dtype is not autocast, as in torch
        input = autocast_inputs("prod", input)[0]
    axis = _dims(input, dim, "prod")
    d = _int_to_long(input, dtype)
    if d is not None:
        input = input.to(d)
    return _PROD(input, axis=axis, keepdims=keepdim)


def _need_float(input: Tensor, op: str, dtype: Any = None) -> Tensor:
    if dtype is not None:
        return input.to(to_dtype(dtype))
    need_floating(input, op, complex_=True, hint=" (input dtype must be either a floating point or complex dtype)")
    return input


def _count(input: Tensor, axis: tuple[int, ...]) -> int:
    return math.prod(input._data.shape[i] for i in axis)


@public("reduction")
def mean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    if dim is None and dtype is None and input._data.dtype.kind in "fc" and input._data.ndim < 8:  # (tiny-op path)
        axis, count = _ALL_DIMS[input._data.ndim], input._data.size  # (what the general path finds here)
    else:
        input = _need_float(input, "mean", dtype)
        axis = _dims(input, dim, "mean")
        count = _count(input, axis)
    out = _SUM(input, axis=axis, keepdims=keepdim) / count if count else \
        _SUM(input, axis=axis, keepdims=keepdim) * float("nan")
    return as_node(out, "MeanBackward0" if dim is None else "MeanBackward1", input)


def _nonempty(input: Tensor, axis: tuple[int, ...], op: str) -> None:
    check(check_nonempty, tuple(input._data.shape), axis, op)


@public("reduction")
def amax(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    _no_complex(input, "amax")
    axis = _dims(input, dim, "amax")
    _nonempty(input, axis, "amax")
    return _AMAX(input, axis=axis, keepdims=keepdim)


@public("reduction")
def amin(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    _no_complex(input, "amin")
    axis = _dims(input, dim, "amin")
    _nonempty(input, axis, "amin")
    return _AMIN(input, axis=axis, keepdims=keepdim)


def _no_complex(input: Tensor, op: str, bool_too: bool = False) -> None:
    """torch orders neither complex numbers (amax, max, argmax, ...) nor, for argmax/argmin, bools."""
    if input.is_complex() or (bool_too and dtype_name(input) == "bool"):
        fail("method_dtype_not_supported_error", op=op, dtype=input.dtype.name, hint="")


def _arg(prim: Prim, input: Tensor, dim: Any, keepdim: bool, op: str) -> Tensor:
    _no_complex(input, op, bool_too=op in ("argmax", "argmin"))
    if dim is None:
        _nonempty(input, tuple(range(input._data.ndim)), op)
        return prim(input.reshape(-1), axis=0, keepdims=False).reshape((1,) * input._data.ndim if keepdim else ())
    (axis,) = _dims(input, [dim], op) or (0,)
    _nonempty(input, (axis,) if input._data.ndim else (), op)
    out = prim(input.reshape(1) if input._data.ndim == 0 else input, axis=axis, keepdims=keepdim)
    return out.reshape(()) if input._data.ndim == 0 else out


@public("reduction")
def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return _arg(_ARGMAX, input, dim, keepdim, "argmax")


@public("reduction")
def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return _arg(_ARGMIN, input, dim, keepdim, "argmin")


def _with_indices(input: Tensor, dim: int, keepdim: bool, arg: Prim, op: str) -> ValuesIndices:
    indices = _arg(arg, input, dim, True, op)
    values = input.gather(dim, indices) if input._data.ndim else input.clone()
    if not keepdim and input._data.ndim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return VALUES_INDICES[op](as_node(values, f"{op.capitalize()}Backward0", input), indices)


@public("reduction")
def max(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """``max(x)``: the largest element; ``max(x, dim)``: (values, indices); ``max(x, other)``: maximum."""
    if isinstance(dim, Tensor):
        return input.maximum(dim)
    if dim is None:
        return as_node(amax(input), "MaxBackward1", input)
    return _with_indices(input, dim, keepdim, _ARGMAX, "max")


@public("reduction")
def min(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    if isinstance(dim, Tensor):
        return input.minimum(dim)
    if dim is None:
        return as_node(amin(input), "MinBackward1", input)
    return _with_indices(input, dim, keepdim, _ARGMIN, "min")


@public("reduction")
def var(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *, correction: Any = None) -> Tensor:
    """Variance with Bessel's ``correction`` (default 1); ``unbiased=False`` means correction 0."""
    if isinstance(unbiased, (int, list, tuple)) and not isinstance(unbiased, bool):
        dim, unbiased = unbiased, None  # var(x, dim) positional
    input = _need_float(input, "var")
    corr = correction if correction is not None else (0 if unbiased is False else 1)
    axis = _dims(input, dim, "var")
    centered = input - mean(input, list(axis), keepdim=True)
    sq = (centered * centered.conj()).real if input.is_complex() else centered * centered
    denom = _count(input, axis) - corr
    total = sum(sq, list(axis), keepdim=keepdim)
    return as_node(total / builtins.max(0, denom), "VarBackward0", input)  # n <= correction: inf or nan, as in torch


@public("reduction")
def std(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *, correction: Any = None) -> Tensor:
    v = var(input, dim, unbiased, keepdim, correction=correction)
    zero = v == 0  # sqrt's gradient at 0 is inf, and inf * 0 = nan; torch's std has gradient 0 there
    return as_node(v.masked_fill(zero, 1).sqrt().masked_fill(zero, 0), "StdBackward0", input)


@public("reduction")
def var_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
             correction: Any = None) -> tuple[Tensor, Tensor]:
    out = var(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)
    return as_node(out[0], "VarMeanBackward0", input), as_node(out[1], "VarMeanBackward0", input)


@public("reduction")
def std_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
             correction: Any = None) -> tuple[Tensor, Tensor]:
    out = std(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)
    return as_node(out[0], "StdMeanBackward0", input), as_node(out[1], "StdMeanBackward0", input)


@public("reduction")
def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(x)))`` computed stably (the max is subtracted first)."""
    if RD.is_integral(dtype_name(input), include_bool=True):
        input = cast(input, default_float())
    axis = list(_dims(input, dim, "logsumexp"))
    if input._data.size == 0:
        return as_node(sum(input.exp(), axis, keepdim).log(), "LogsumexpBackward0", input)
    m = amax(input.real if input.is_complex() else input, axis, keepdim=True).detach()  # real: keeps log's branch
    m = m.masked_fill(m.abs() == float("inf"), 0.0)
    out = sum((input - m).exp(), axis, keepdim=True).log() + m
    return as_node(out if keepdim else out.squeeze(axis) if axis else out, "LogsumexpBackward0", input)


@public("reduction")
def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    """Vector p-norm over ``dim`` (all elements by default); 'fro' is the 2-norm."""
    input = _need_float(input, "norm", dtype)
    return as_node(_norm(input, p, list(_dims(input, dim, "norm")), keepdim), "LinalgVectorNormBackward0", input)


def _norm(input: Tensor, p: Any, axis: list[int], keepdim: bool) -> Tensor:
    if p in ("fro", 2, 2.0):
        return _NORM2(input, axis=tuple(axis), keepdims=keepdim)
    a = input.abs()
    if p == float("inf"):
        return amax(a, axis, keepdim)
    if p == -float("inf"):
        return amin(a, axis, keepdim)
    if p == 0:
        return sum((a != 0).to(a.dtype), axis, keepdim)
    if p == 1:
        return sum(a, axis, keepdim)
    return sum(a**p, axis, keepdim) ** (1.0 / p)


def _norm2_kernel(a: Any, axis: tuple[int, ...], keepdims: bool) -> Any:
    sq = (a * np.conj(a)).real if a.dtype.kind == "c" else a * a
    return np.sqrt(np.add.reduce(sq, axis, keepdims=keepdims))  # type: ignore[call-overload]


def _norm2_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    """``x * g / |x|``, and 0 where the norm is 0 (torch's subgradient; sqrt's rule would give nan)."""
    out = _keep(n.out, n)
    ratio = (_grad_back(g, n) / out).masked_fill(out == 0, 0.0)
    return (n.inputs[0] * ratio,)


_NORM2 = Prim("norm", _norm2_kernel, _norm2_vjp, save_output=True)


def _bool_reduce(prim: Prim, input: Tensor, dim: Any, keepdim: bool, op: str) -> Tensor:
    axis = _dims(input, dim, op)
    if isinstance(dim, (list, tuple)) and not dim:  # torch: all/any over no dims reduce nothing
        axis = ()
    out = prim(input, axis=axis, keepdims=keepdim)
    return out.to(to_dtype("uint8")) if dtype_name(input) == "uint8" else out


@public("reduction")
def all(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    return _bool_reduce(_ALL, input, dim, keepdim, "all")


@public("reduction")
def any(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    return _bool_reduce(_ANY, input, dim, keepdim, "any")


@public("reduction")
def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    return sum(input != 0, dim)


FUNCTIONS["var_"] = var  # `var` is a reserved word in the original (TypeScript) library
CATEGORY["var_"] = "reduction"


@public("reduction")
def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False, out: Any = None) -> MinMax:
    """(min, max) over all elements, or along one ``dim``."""
    from .sorting import write_out  # sorting imports this module

    return write_out(_aminmax(input, dim, keepdim), out, "aminmax")


def _aminmax(input: Tensor, dim: int | None, keepdim: bool) -> MinMax:
    """(min, max) over all elements, or along one ``dim``."""
    if dim is not None and not isinstance(dim, int):
        raise TypeError(f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}")
    if dim is None and input._data.size == 0:
        fail("reduction_error_empty_input", op="aminmax", shape=tuple(input._data.shape))
    d: Any = () if dim is None else dim
    if dim is None and keepdim:
        return RT.aminmax(amin(input, d, True).reshape((1,) * input._data.ndim),
                      amax(input, d, True).reshape((1,) * input._data.ndim))
    return RT.aminmax(amin(input, d, keepdim), amax(input, d, keepdim))


# -- NaN-ignoring sums ------------------------------------------------------------------------------------

@public("reduction")
def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """sum with NaNs counted as zero (their gradient is zero)."""
    if input.is_complex():
        fail("method_dtype_not_supported_error", op="nansum", dtype=input.dtype.name,
             hint=" (nansum does not support complex inputs)")
    _dims(input, dim, "nansum")
    if input.is_floating_point():
        input = input.where(input == input, 0)  # noqa: PLR0124  (False at NaN)
    return as_node(sum(input, dim, keepdim, dtype=dtype), "NansumBackward0", input)


@public("reduction")
def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
            out: Tensor | None = None) -> Tensor:
    """mean over the non-NaN elements (NaN where there are none)."""
    if dtype is not None:
        input = input.to(to_dtype(dtype))
    if not (input.is_floating_point() or input.is_complex()):
        fail("method_dtype_not_supported_error", op="nanmean", dtype=input.dtype.name,
             hint=" (nanmean(): expected input to have floating point or complex dtype)")
    count = sum((input == input).to(input.dtype), dim, keepdim)  # noqa: PLR0124  (False at NaN)
    from .sorting import write_out  # sorting imports this module

    return write_out(nansum(input, dim, keepdim) / count, out, "nanmean", cast_ok=True)


@public("reduction")
def dist(input: Tensor, other: Any, p: Any = 2) -> Tensor:
    """The ``p``-norm of ``input - other`` (broadcast)."""
    other = as_operand(other, input, "dist")
    diff = input - other
    if not (diff.is_floating_point() or diff.is_complex()):
        fail("method_dtype_not_supported_error", op="dist", dtype=diff.dtype.name,
             hint=" (norm(): input dtype should be either floating point or complex)")
    return norm(diff, float(p) if not isinstance(p, str) else p)


@public("reduction")
def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """Each slice along ``dim`` whose p-norm exceeds ``maxnorm`` scaled down to norm ``maxnorm`` (torch's
    ``maxnorm / (norm + 1e-7)``)."""
    if input._data.ndim < 2:
        fail("argument_error_invalid", op="renorm",
             problem=f"renorm: input needs at least 2 dimensions, got {input._data.ndim} dimensions")
    if not p > 0:
        fail("argument_error_invalid", op="renorm", problem="renorm: non-positive-norm not supported")
    if maxnorm < 0:
        fail("argument_error_invalid", op="renorm", problem=f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = wrap_dim(dim, input._data.ndim, "renorm")
    others = tuple(i for i in range(input._data.ndim) if i != d)
    from .conversion import where

    norms = norm(input, p, others, keepdim=True)
    out: Tensor = input * where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)  # a NaN norm leaves its slice as is
    return out


def _renorm_(self: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    return write_inplace(self, renorm(self, p, dim, maxnorm), "renorm_")


method("renorm_", _renorm_)


def _sum_to_size(self: Tensor, *size: Any) -> Tensor:
    """Sum ``self`` down to ``size``, which it must be expandable from (``x.expand(size)``'s adjoint)."""
    shape = int_list(size, "sum_to_size")
    have = tuple(self._data.shape)
    lead = len(have) - len(shape)
    if lead < 0 or builtins.any(s != 1 and s != h for s, h in zip(shape, have[lead:])):
        fail("argument_error_invalid", op="sum_to_size", problem=f"size {list(shape)} is not expandable to size {list(have)}")
    keep = tuple(lead + i for i, (s, h) in enumerate(zip(shape, have[lead:])) if s == 1 and h != 1)
    out = sum(self, keep, keepdim=True) if keep else self
    return sum(out, tuple(range(lead))) if lead else out


method("sum_to_size", _sum_to_size)


_SEGMENT_REDUCTIONS = {"sum": "sum", "prod": "prod", "mean": "mean", "max": "max", "amax": "max", "min": "min",
                       "amin": "min"}


@public("reduction", method=False)
def segment_reduce(data: Tensor, reduce: str, *, lengths: Tensor | None = None, indices: Tensor | None = None,
                   offsets: Tensor | None = None, axis: int = 0, unsafe: bool = False, initial: Any = None) -> Tensor:
    """Reduce consecutive segments of ``data`` along ``axis`` (their ``lengths``, or ``offsets`` of their starts
    and the end), as torch's: one output row per segment. ``initial`` joins every segment's reduction (an empty
    segment is ``initial``, else 0 for sum, 1 for prod, NaN for mean, -inf for max and inf for min). 1-D lengths
    or offsets; composed of slices and reductions, so it differentiates as they do."""
    op = "segment_reduce"
    kind = _SEGMENT_REDUCTIONS.get(reduce)
    if kind is None:
        fail("argument_error_invalid", op=op, problem=f"reduce argument must be either sum, prod, mean, amax or amin, "
                                                      f"got {reduce}")
    if lengths is None and offsets is None:
        fail("argument_error_invalid", op=op, problem="segment_reduce(): Either lengths or offsets must be defined.")
    if not data.dtype.is_floating_point:
        fail("method_dtype_not_supported_error", op=op, dtype=data.dtype.name, hint=" (floating point data only)")
    given = lengths if lengths is not None else offsets
    assert given is not None
    if given.dtype.is_floating_point or given.is_complex() or given.dtype.name == "bool":
        fail("method_dtype_not_supported_error", op=op, dtype=given.dtype.name,
             hint=" (lengths and offsets are integers)")
    if given.dim() != 1:
        fail("argument_error_invalid", op=op, problem="only 1-D lengths and offsets are supported")
    ax = check(wrap_dim, axis, given.dim(), op)
    values = [int(v) for v in given.tolist()]
    if lengths is not None:
        if builtins.any(v < 0 for v in values):
            fail("argument_error_invalid", op=op, problem="lengths contains negative value!")
        starts = [builtins.sum(values[:i]) for i in range(len(values))]
        sizes = values
    else:
        starts, sizes = values[:-1], [b - a for a, b in itertools.pairwise(values)]
        if builtins.any(s < 0 for s in sizes):
            fail("argument_error_invalid", op=op, problem="offsets must be non-decreasing")
    total = data.shape[ax] if data.dim() else 0
    if not unsafe and (builtins.sum(sizes) != total or (starts and starts[0] != 0)):
        fail("argument_error_invalid", op=op, problem="segment_reduce(): Expected all rows of lengths along axis to "
                                                      "sum to data.size(lengths.dim()-1) when !unsafe.")
    empty = {"sum": 0.0, "prod": 1.0, "mean": math.nan, "max": -math.inf, "min": math.inf}[kind]
    rows = []
    for start, size in zip(starts, sizes):
        if size == 0:
            rows.append(data.new_full(tuple(data.shape[ax + 1:]), empty if initial is None else initial))
            continue
        piece = data.narrow(ax, start, size)
        if kind == "sum":
            row = piece.sum(ax) if initial is None else piece.sum(ax) + initial
        elif kind == "prod":
            row = piece.prod(ax) if initial is None else piece.prod(ax) * initial
        elif kind == "mean":
            row = piece.mean(ax) if initial is None else (piece.sum(ax) + initial) / size
        elif kind == "max":
            row = piece.amax(ax) if initial is None else piece.amax(ax).clamp(min=initial)
        else:
            row = piece.amin(ax) if initial is None else piece.amin(ax).clamp(max=initial)
        rows.append(row)
    from .joining import stack

    if not rows:
        return data.new_zeros((0, *data.shape[ax + 1:]))
    out: Tensor = stack(rows, ax)
    return out
