"""More reductions: aminmax, median/nanmedian, mode, quantile/nanquantile, nansum/nanmean, cov, corrcoef,
dist, and ``var_`` (the original library's name for ``var``).

All are composites: order statistics gather the values picked by a non-differentiable index
primitive (so the gradient reaches the element picked, as torch's), the rest are written in
sums, products and ``where``. ``trapezoid`` lives in ``ops.scan`` beside ``cumulative_trapezoid``.
"""

from __future__ import annotations

import builtins
from typing import Any, NamedTuple

import numpy as np

from .._dispatch import Prim
from .._dtype import to_dtype
from .._errors import fail
from .._rules.axes import wrap_dim
from .._rules.sorting import select_reduce_shape
from .._rules.statistics import cov_shape, quantile_shape
from .._tensor import Tensor
from ._common import as_operand, check, dtype_name, new_tensor, refuse
from ._registry import CATEGORY, FUNCTIONS, public
from .reduction import ValuesIndices, _dims, amax, amin, norm, sum, var
from .sorting import _orderable, write_out


class MinMax(NamedTuple):
    """torch.return_types.aminmax: ``min`` and ``max``."""

    min: Tensor
    max: Tensor


FUNCTIONS["var_"] = var  # `var` is a reserved word in the original (TypeScript) library
CATEGORY["var_"] = "reduction"


@public("reduction")
def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False, out: Any = None) -> MinMax:
    """(min, max) over all elements, or along one ``dim``."""
    return write_out(_aminmax(input, dim, keepdim), out, "aminmax")


def _aminmax(input: Tensor, dim: int | None, keepdim: bool) -> MinMax:
    """(min, max) over all elements, or along one ``dim``."""
    if dim is not None and not isinstance(dim, int):
        raise TypeError(f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}")
    if dim is None and input._data.size == 0:
        fail("reduction_error_empty_input", op="aminmax", shape=tuple(input._data.shape))
    d: Any = () if dim is None else dim
    if dim is None and keepdim:
        return MinMax(amin(input, d, True).reshape((1,) * input._data.ndim),
                      amax(input, d, True).reshape((1,) * input._data.ndim))
    return MinMax(amin(input, d, keepdim), amax(input, d, keepdim))


# -- order statistics --------------------------------------------------------------------------------------

def _median_index(a: Any, axis: int, ignore_nan: bool) -> Any:
    """Index of the lower median along ``axis``: the first NaN when there is one (median), or the lower
    median of the non-NaN values (nanmedian; index 0 when all are NaN)."""
    w = _orderable(a)
    order = np.argsort(w, axis=axis, kind="stable")
    n = w.shape[axis]
    nans = np.isnan(w).sum(axis=axis, keepdims=True) if w.dtype.kind in "fc" else np.zeros(
        tuple(1 if i == axis else s for i, s in enumerate(w.shape)), np.int64)
    if ignore_nan:
        valid = n - nans
        pos = np.where(valid > 0, (valid - 1) // 2, 0)
    else:
        pos = np.where(nans > 0, n - nans, (n - 1) // 2)
    return np.take_along_axis(order, pos.astype(np.int64), axis=axis)


def _mode_index(a: Any, axis: int) -> Any:
    """Index of the most frequent value (the smallest among equally frequent ones), at its last occurrence."""
    w = np.moveaxis(_orderable(a), axis, -1)
    rows = w.reshape(-1, w.shape[-1])
    out = np.zeros(rows.shape[0], np.int64)
    for r, row in enumerate(rows):
        _, inverse, counts = np.unique(row, return_inverse=True, return_counts=True)
        best = int(np.argmax(counts))  # the first of the largest counts: the smallest value
        out[r] = int(np.flatnonzero(inverse.reshape(-1) == best)[-1])
    return np.moveaxis(out.reshape((*w.shape[:-1], 1)), -1, axis)


_MEDIAN_INDEX = Prim("median_index", _median_index)
_MODE_INDEX = Prim("mode_index", _mode_index)


def _select(input: Tensor, dim: int, keepdim: bool, index_prim: Prim, op: str, **params: Any) -> ValuesIndices:
    check(select_reduce_shape, tuple(input._data.shape), dim, keepdim, op=op)
    if input.is_complex():
        fail("method_dtype_not_supported_error", op=op, dtype=input.dtype.name, hint="")
    if input._data.ndim == 0:
        return ValuesIndices(input.clone(), new_tensor(np.zeros((), np.int64), input._device))
    axis = wrap_dim(dim, input._data.ndim, op)
    indices = index_prim(input.detach(), axis=axis, **params)
    values = input.gather(axis, indices)
    if not keepdim:
        values, indices = values.squeeze(axis), indices.squeeze(axis)
    return ValuesIndices(values, indices)


def _median_all(input: Tensor, ignore_nan: bool, op: str) -> Tensor:
    """The median of all elements; its gradient is shared by the elements equal to it, as in torch."""
    if input.is_complex():
        fail("method_dtype_not_supported_error", op=op, dtype=input.dtype.name, hint="")
    flat = input.reshape(-1)
    if flat._data.size == 0:
        return flat.sum() * float("nan") if input.is_floating_point() else flat.sum().to(input.dtype)
    value = flat.gather(0, _MEDIAN_INDEX(flat.detach(), axis=0, ignore_nan=ignore_nan)).reshape(())
    if value._data != value._data:  # NaN: nothing equals it
        return value
    mask = flat == value.detach()
    return flat.where(mask, 0).sum() / mask.sum().to(input.dtype) if input.is_floating_point() else value


@public("reduction")
def median(input: Tensor, dim: int | None = None, keepdim: bool = False, *, out: Any = None) -> Any:
    """``median(x)``: the lower median of all elements (NaN if any is NaN); ``median(x, dim)``: (values, indices)."""
    refuse(input, "median", bool_=True)
    if dim is None:
        return write_out(_median_all(input, False, "median"), out, "median")
    return write_out(_select(input, dim, keepdim, _MEDIAN_INDEX, "median", ignore_nan=False), out, "median")


@public("reduction")
def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False, *, out: Any = None) -> Any:
    """median that ignores NaNs (NaN only where every element is NaN)."""
    refuse(input, "nanmedian", bool_=True)
    if dim is None:
        return write_out(_median_all(input, True, "nanmedian"), out, "nanmedian")
    return write_out(_select(input, dim, keepdim, _MEDIAN_INDEX, "nanmedian", ignore_nan=True), out, "nanmedian")


@public("reduction")
def mode(input: Tensor, dim: int = -1, keepdim: bool = False, *, out: Any = None) -> ValuesIndices:
    """The most frequent value along ``dim`` (the smallest on a tie) and the index of its last occurrence."""
    return write_out(_select(input, dim, keepdim, _MODE_INDEX, "mode"), out, "mode")


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input: Tensor, q: Any, dim: int | None, keepdim: bool, interpolation: str, ignore_nan: bool,
              op: str) -> Tensor:
    from .sorting import sort

    if dtype_name(input) not in ("float32", "float64"):
        fail("method_dtype_not_supported_error", op=op, dtype=input.dtype.name,
             hint=f" ({op}() input tensor must be either float or double dtype)")
    if isinstance(q, Tensor):
        if dtype_name(q) != dtype_name(input):
            fail("dtype_error_mismatch", op=op, what="the q tensor and the input", a=q.dtype.name, b=input.dtype.name)
        qs = q._data
    elif isinstance(q, (int, float)) and not isinstance(q, bool):
        qs = np.asarray(q, dtype=input._data.dtype)
    else:
        raise TypeError(f"{op}(): argument 'q' must be a float or a Tensor, not {type(q).__name__}")
    out_shape = check(quantile_shape, tuple(input._data.shape), tuple(qs.shape), dim, keepdim, op=op)
    if input._data.size == 0:
        fail("argument_error_invalid", op=op, problem=f"{op}() input tensor must be non-empty")
    if qs.size and (np.isnan(qs).any() or qs.min() < 0 or qs.max() > 1):
        fail("argument_error_invalid", op=op, problem=f"{op}() q values must be in the range [0, 1]")
    if interpolation not in _INTERPOLATIONS:
        fail("argument_error_invalid", op=op, problem=f"{op}() interpolation must be one of linear, lower, higher, "
                                                      f"midpoint or nearest, but got {interpolation}")
    x = input.reshape(-1) if dim is None else input.movedim(wrap_dim(dim, input._data.ndim, op), -1) \
        if input._data.ndim else input.reshape(1)
    s = sort(x, -1).values  # NaNs last
    n = s._data.shape[-1]
    nans = np.isnan(s._data).sum(axis=-1, keepdims=True)  # (..., 1)
    dt = s._data.dtype
    qv = qs.reshape(-1).astype(dt)  # (Q,)
    qv = qv.reshape((-1,) + (1,) * s._data.ndim)  # (Q, ..., 1)
    if ignore_nan:
        count = n - nans
        ranks = qv * (count - 1).astype(dt)
        ranks = np.where(count > 0, ranks, 0).astype(dt)
    else:
        ranks = np.where(nans > 0, np.asarray(n - 1, dt), qv * np.asarray(n - 1, dt)).astype(dt)
    if interpolation == "lower":
        ranks = np.floor(ranks)
    elif interpolation == "higher":
        ranks = np.ceil(ranks)
    elif interpolation == "nearest":
        ranks = np.round(ranks)  # half to even, as torch's round
    below = np.floor(ranks).astype(np.int64)
    above = np.minimum(np.ceil(ranks).astype(np.int64), n - 1)
    sq = s.unsqueeze(0).expand((qv.shape[0], *s._data.shape))
    shape = (qv.shape[0], *s._data.shape[:-1], 1)
    lo = sq.gather(-1, new_tensor(np.broadcast_to(below, shape).copy(), input._device))
    hi = sq.gather(-1, new_tensor(np.broadcast_to(above, shape).copy(), input._device))
    if interpolation == "midpoint":
        weight: Any = np.where(below == above, 0, 0.5).astype(dt)
    elif interpolation == "linear":
        weight = (ranks - below).astype(dt)
    else:
        weight = None
    out = lo if weight is None else lo + (hi - lo) * new_tensor(np.broadcast_to(weight, shape).copy(), input._device)
    if ignore_nan:  # rows of NaNs only give NaN
        out = out.where(new_tensor(np.broadcast_to(n - nans > 0, shape).copy(), input._device), float("nan"))
    return out.reshape(out_shape)


@public("reduction")
def quantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear", out: Tensor | None = None) -> Tensor:
    """The ``q``-th quantiles along ``dim`` (of all elements when None); ``q``'s dim comes first."""
    return write_out(_quantile(input, q, dim, keepdim, interpolation, False, "quantile"), out,
                     "quantile")


@public("reduction")
def nanquantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear", out: Tensor | None = None) -> Tensor:
    """quantile that ignores NaNs (NaN only where every element is NaN)."""
    return write_out(_quantile(input, q, dim, keepdim, interpolation, True, "nanquantile"), out,
                     "nanquantile")


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
    return sum(input, dim, keepdim, dtype=dtype)


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
    return write_out(nansum(input, dim, keepdim) / count, out, "nanmean", cast_ok=True)


# -- covariance, correlation, distance -------------------------------------------------------------------

@public("reduction")
def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None, aweights: Tensor | None = None) -> Tensor:
    """Covariance of the variables in the rows of ``input`` (observations in columns)."""
    refuse(input, "cov", bool_=True)
    check(cov_shape, tuple(input._data.shape), op="cov")
    x = input.reshape(1, -1) if input._data.ndim < 2 else input
    n_obs = x._data.shape[1]
    w: Tensor | None = None
    if fweights is not None:
        _check_weights(fweights, n_obs, "fweights", integral=True)
        w = fweights
    if aweights is not None:
        _check_weights(aweights, n_obs, "aweights", integral=False)
        w = aweights if w is None else w * aweights
    if input.is_floating_point() or input.is_complex():
        xf = x
    else:
        from .._dtype import get_default_dtype

        xf = x.to(get_default_dtype() if w is None or not w.is_floating_point() else w.dtype)
    if w is None:
        w_sum: Any = n_obs
        avg = xf.sum(1) / n_obs if n_obs else xf.sum(1) * float("nan")
    else:
        w_sum = w.sum()
        if not w_sum._data.any():
            fail("argument_error_invalid", op="cov", problem="cov(): weights sum to zero, can't be normalized")
        avg = (xf * w).sum(1) / w_sum
    if w is None:
        norm_factor: Any = n_obs - correction
    elif correction == 0:
        norm_factor = w_sum
    elif aweights is None:
        norm_factor = w_sum - correction
    else:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    if isinstance(norm_factor, Tensor):
        norm_factor = norm_factor.clamp(min=0) if not norm_factor.is_complex() else norm_factor
    else:
        norm_factor = builtins.max(norm_factor, 0)
    centered = xf - avg.unsqueeze(1)
    other = (centered if w is None else centered * w).t().conj()
    c = centered.matmul(other)
    out = c / norm_factor
    return out.squeeze()


def _check_weights(w: Tensor, n: int, name: str, integral: bool) -> None:
    if w._data.ndim > 1:
        fail("argument_error_invalid", op="cov", problem=f"cov(): expected {name} to have one or fewer dimensions "
                                                         f"but got {name} with {w._data.ndim} dimensions")
    if (w._data.ndim == 1 and w._data.shape[0] != n) or (w._data.ndim == 0 and n != 1):
        fail("argument_error_invalid", op="cov", problem=f"cov(): expected {name} to have the same numel as there "
                                                         f"are observations in the input but got {w._data.size} != {n}")
    if integral and w._data.dtype.kind not in "iu":
        fail("argument_error_invalid", op="cov", problem=f"cov(): expected fweights to have integral dtype but got "
                                                         f"fweights with {w.dtype.name} dtype")
    if not integral and not w.is_floating_point():
        fail("argument_error_invalid", op="cov", problem=f"cov(): expected aweights to have floating point dtype but "
                                                         f"got aweights with {w.dtype.name} dtype")
    if w._data.size and (w._data < 0).any():
        fail("argument_error_invalid", op="cov", problem=f"cov(): {name} cannot be negative")


@public("reduction")
def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the rows of ``input``, clipped to [-1, 1] (real inputs)."""
    refuse(input, "corrcoef", bool_=True)
    c = cov(input)
    if c._data.ndim == 0:
        return c / c
    d = c.diagonal()
    stddev = (d.real if d.is_complex() else d).sqrt()
    c = c / stddev.reshape(-1, 1)
    c = c / stddev.reshape(1, -1)
    return c if c.is_complex() else c.clip(-1, 1)


@public("reduction")
def dist(input: Tensor, other: Any, p: Any = 2) -> Tensor:
    """The ``p``-norm of ``input - other`` (broadcast)."""
    other = as_operand(other, input, "dist")
    diff = input - other
    if not (diff.is_floating_point() or diff.is_complex()):
        fail("method_dtype_not_supported_error", op="dist", dtype=diff.dtype.name,
             hint=" (norm(): input dtype should be either floating point or complex)")
    return norm(diff, float(p) if not isinstance(p, str) else p)


__all__ = ["MinMax", "aminmax", "corrcoef", "cov", "dist", "median", "mode", "nanmean", "nanmedian", "nanquantile",
           "nansum", "quantile"]
