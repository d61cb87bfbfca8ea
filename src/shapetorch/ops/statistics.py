"""Statistics: median/nanmedian, mode, quantile/nanquantile, cov, corrcoef, and counting (bincount, histc,
histogram)."""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._engine.primitives import Prim
from .._errors import fail
from .._rules.axes import wrap_dim
from .._rules.sorting import select_reduce_shape
from .._rules.statistics import bincount_shape, cov_shape, histogram_shapes, quantile_shape
from .._tensor import Tensor
from . import return_types as RT
from ._common import autocast_inputs, check, dtype_name, need_floating, new_tensor, refuse
from ._registry import public
from .creation import linspace_values
from .return_types import VALUES_INDICES, HistogramResult, ValuesIndices
from .sorting import _orderable, host_only, write_out

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
        return VALUES_INDICES[op](input.clone(), new_tensor(np.zeros((), np.int64), input._device))
    axis = wrap_dim(dim, input._data.ndim, op)
    indices = index_prim(input.detach(), axis=axis, **params)
    values = input.gather(axis, indices)
    if not keepdim:
        values, indices = values.squeeze(axis), indices.squeeze(axis)
    return VALUES_INDICES[op](values, indices)


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
        qs = q.detach().cpu()._data  # read for the range check, as torch's check of a q tensor syncs
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
    # In tensor ops from here, so the ranks and the picks stay on the input's device; the ranks are computed in
    # the input dtype, as torch computes them.
    s = sort(x, -1).values  # NaNs last
    n = s._data.shape[-1]
    nans = s.isnan().sum(-1, keepdim=True)  # (..., 1)
    dt = s._data.dtype
    qv = new_tensor(qs.reshape((-1,) + (1,) * s._data.ndim).astype(dt), input._device)  # (Q, ..., 1)
    if ignore_nan:
        count = n - nans
        ranks = (qv * (count - 1).to(s.dtype)).where(count > 0, 0.0)
    else:
        ranks = (qv * float(n - 1)).where(nans == 0, float(n - 1))
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()  # half to even, as torch's round
    below = ranks.floor()
    above = ranks.ceil().clamp(max=n - 1)
    shape = (qv._data.shape[0], *s._data.shape[:-1], 1)
    sq = s.unsqueeze(0).expand((qv._data.shape[0], *s._data.shape))
    lo = sq.gather(-1, below.long().expand(shape))
    hi = sq.gather(-1, above.long().expand(shape))
    if interpolation == "midpoint":
        out = lo + (hi - lo) * (below != above).to(s.dtype).mul(0.5)
    elif interpolation == "linear":
        out = lo + (hi - lo) * (ranks - below)
    else:
        out = lo
    if ignore_nan:  # rows of NaNs only give NaN
        out = out.where(nans < n, float("nan"))
    return out.reshape(out_shape)


@public("reduction")
def quantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear", out: Tensor | None = None) -> Tensor:
    """The ``q``-th quantiles along ``dim`` (of all elements when None); ``q``'s dim comes first."""
    input = autocast_inputs("quantile", input)[0]
    return write_out(_quantile(input, q, dim, keepdim, interpolation, False, "quantile"), out,
                     "quantile")


@public("reduction")
def nanquantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear", out: Tensor | None = None) -> Tensor:
    """quantile that ignores NaNs (NaN only where every element is NaN)."""
    input = autocast_inputs("nanquantile", input)[0]
    return write_out(_quantile(input, q, dim, keepdim, interpolation, True, "nanquantile"), out,
                     "nanquantile")


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
        if not bool(w_sum != 0):  # (read back on a device, as torch's check is)
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
    if w._data.size and bool((w < 0).any()):  # (a device reads the verdict back, as torch's check syncs)
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


# -- counting ---------------------------------------------------------------------------------------------

@public("misc")
def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """Counts of each non-negative integer in the 1-D ``input`` (weighted sums with ``weights``).

    The result is int64, or float64 with weights (float32 for float32 weights), as in torch.
    """
    if input._data.dtype.kind not in "iu" or dtype_name(input) == "bool":
        fail("method_dtype_not_supported_error", op="bincount", dtype=input.dtype.name, hint="")
    check(bincount_shape, tuple(input._data.shape), None if weights is None else tuple(weights._data.shape),
          op="bincount")
    if minlength < 0:
        fail("argument_error_invalid", op="bincount", problem="minlength should be >= 0")
    a = input._data.astype(np.int64)
    if a.size and a.min() < 0:
        fail("argument_error_invalid", op="bincount", problem="bincount only supports 1-d non-negative integral inputs.")
    size = builtins.max(int(a.max()) + 1 if a.size else 0, minlength)
    if weights is None or a.size == 0:  # torch: an empty input gives int64 zeros, weights or not
        return new_tensor(np.bincount(a, minlength=size).astype(np.int64), input._device)
    out_dt = np.float32 if dtype_name(weights) == "float32" else np.float64
    w = np.asarray(weights._data, dtype=np.float64)
    return new_tensor(np.bincount(a, weights=w, minlength=size).astype(out_dt), input._device)


def _bin_index(x: Any, edges: Any, local_search: bool) -> Any:
    """The bin of each value for evenly spaced ``edges`` (computed in the input dtype, as torch); -1 outside."""
    bins = edges.size - 1
    lo, hi = edges[0], edges[-1]
    inside = (x >= lo) & (x <= hi)
    with np.errstate(all="ignore"):
        pos = np.floor((x - lo) * x.dtype.type(bins) / (hi - lo))
    pos = np.where(inside, pos, 0).astype(np.int64)
    pos = np.clip(pos, 0, bins - 1)
    if local_search:
        pos = np.where(x < edges[pos], pos - 1, pos)
        pos = np.where((pos + 1 < bins) & (x >= edges[np.minimum(pos + 1, bins)]), pos + 1, pos)
        pos = np.clip(pos, 0, bins - 1)
    return np.where(inside, pos, -1)


@public("misc", method=False)
def histogramdd(input: Tensor, bins: Any, *, range: Sequence[float] | None = None, weight: Tensor | None = None,
                density: bool = False) -> HistogramResult:
    """(hist, bin_edges) of the D-dimensional points in ``input``'s last dim: per dim, ``bins`` equal bins over
    ``range`` (pairs of floats, the data's range by default) or the given edges, each dim binned as ``histogram``
    bins; ``density`` divides by the total and each bin's volume."""
    op = "histogramdd"
    need_floating(input, op)
    host_only(input, op, "no histogram kernel yet")
    if input._data.ndim < 1:
        fail("argument_error_invalid", op=op, problem="torch.histogramdd(): input tensor should have at least 1 "
                                                      "dimension, but got 0")
    dims = input._data.shape[-1]
    points = input._data.reshape(-1, dims)
    per_dim = list(bins) if isinstance(bins, (list, tuple)) else [bins] * dims
    if len(per_dim) != dims:
        fail("argument_error_invalid", op=op, problem="The size of bins must be equal to the innermost dimension of "
                                                      "the input.")
    if range is not None and len(range) != 2 * dims:
        fail("argument_error_invalid", op=op, problem=f"torch.histogramdd: for a {dims}-dimensional histogram "
                                                      f"range should have {2 * dims} elements, but got {len(range)}")
    if weight is not None and tuple(weight._data.shape) != tuple(input._data.shape[:-1]):
        fail("argument_error_invalid", op=op, problem="torch.histogramdd: if weight tensor is provided it should "
             "have the same shape as the input tensor excluding its innermost dimension, but got input with shape "
             f"{tuple(input._data.shape)} and weight with shape {tuple(weight._data.shape)}")
    edges_all, index, sizes = [], np.zeros(points.shape[0], np.int64), []
    inside = np.ones(points.shape[0], bool)
    for d in builtins.range(dims):
        column = new_tensor(np.ascontiguousarray(points[:, d]), input._device)
        r = None if range is None else (float(range[2 * d]), float(range[2 * d + 1]))
        edges_t = _histogram(column, per_dim[d], r, None, False).bin_edges  # the edges histogram makes
        edges = edges_t._data
        nb = edges.size - 1
        x = points[:, d]
        if isinstance(per_dim[d], Tensor):
            idx = np.searchsorted(edges, x, side="right") - 1
            idx = np.where(x == edges[-1], nb - 1, idx)
            idx = np.where((x < edges[0]) | (x > edges[-1]), -1, idx)
        else:
            idx = _bin_index(x.astype(edges.dtype), edges, True)
        inside &= idx >= 0
        index = index * builtins.max(nb, 1) + np.maximum(idx, 0)
        sizes.append(builtins.max(nb, 0))
        edges_all.append(edges_t)
    w = None if weight is None else weight._data.reshape(-1).astype(np.float64)
    total = int(np.prod(sizes)) if sizes else 0
    hist = np.bincount(index[inside], weights=None if w is None else w[inside], minlength=total)[:total]
    hist = hist.reshape(sizes).astype(input._data.dtype)
    if density and total:
        volume = np.ones(sizes)
        for d, e in enumerate(edges_all):
            shape = [1] * dims
            shape[d] = -1
            volume = volume * np.diff(e._data.astype(np.float64)).reshape(shape)
        with np.errstate(all="ignore"):
            hist = (hist / (hist.sum() * volume)).astype(input._data.dtype)
    return RT.histogramdd(new_tensor(hist, input._device), tuple(edges_all))  # type: ignore[arg-type]


@public("misc")
def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0, *, out: Tensor | None = None) -> Tensor:
    """Histogram of ``input`` in ``bins`` equal bins over [min, max] (the data's range when both are 0)."""
    return write_out(_histc(input, bins, min, max), out, "histc")


def _histc(input: Tensor, bins: int, min: float, max: float) -> Tensor:
    need_floating(input, "histc")
    check(histogram_shapes, bins, op="histc")
    if min > max:
        fail("argument_error_invalid", op="histc", problem="torch.histc: max must be larger than min")
    lo, hi = float(min), float(max)
    if lo == hi and input._data.size:  # the data's range (read back from a device, as torch's CUDA histc does)
        lo, hi = input.amin().item(), input.amax().item()
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        fail("argument_error_invalid", op="histc", problem=f"torch.histc: range of [{lo}, {hi}] is not finite")
    if input._device.type != "cpu":
        return _histc_on_device(input, bins, lo, hi)
    x = input._data.reshape(-1)
    edges = linspace_values(lo, hi, bins + 1, input._data.dtype)
    idx = _bin_index(x, edges, False)  # torch's histc interpolates without the local search histogram does
    counts = np.bincount(idx[idx >= 0], minlength=bins).astype(input._data.dtype)
    return new_tensor(counts, input._device)


def _histc_on_device(input: Tensor, bins: int, lo: float, hi: float) -> Tensor:
    """``histc`` over [lo, hi] in device ops, counted with ``index_add`` (the counts are whole numbers, so the order
    of the adds cannot change them); the bins as ``_bin_index`` computes them."""
    x = input.reshape(-1).detach()
    lo32, hi32 = (float(v) for v in np.array([lo, hi], dtype=input._data.dtype))  # the edges in the input dtype
    inside = (x >= lo32) & (x <= hi32)  # (False for NaN)
    pos = ((x - lo32) * float(bins) / (hi32 - lo32)).floor().nan_to_num(0.0).clamp(0, bins - 1).long()
    return x.new_zeros(bins).index_add(0, pos, inside.to(x.dtype))


@public("misc")
def histogram(input: Tensor, bins: Any, *, range: tuple[float, float] | None = None, weight: Tensor | None = None,
              density: bool = False, out: Any = None) -> HistogramResult:
    """(hist, bin_edges): ``bins`` equal bins over ``range`` (the data's range by default), or the given edges."""
    return write_out(_histogram(input, bins, range, weight, density), out, "histogram")


def _histogram(input: Tensor, bins: Any, range: tuple[float, float] | None, weight: Tensor | None,
               density: bool) -> HistogramResult:
    need_floating(input, "histogram")
    host_only(input, "histogram", "no histogram kernel yet")
    x = input._data.reshape(-1)
    if weight is not None and tuple(weight._data.shape) != tuple(input._data.shape):
        fail("argument_error_invalid", op="histogram",
             problem="torch.histogram(): if weight tensor is provided it should have the same shape as the input "
                     f"tensor excluding its innermost dimension, but got input with shape {tuple(input._data.shape)}"
                     f" and weight with shape {tuple(weight._data.shape)}")
    w = None if weight is None else weight._data.reshape(-1).astype(input._data.dtype)
    if isinstance(bins, Tensor):
        if bins._data.ndim != 1:
            fail("argument_error_invalid", op="histogram", problem="torch.histogram(): bins tensor should have one "
                                                                   f"dimension, but got {bins._data.ndim}")
        check(histogram_shapes, bins._data.size - 1, op="histogram")
        edges = bins._data.astype(input._data.dtype)
        nb = edges.size - 1
        idx = np.searchsorted(edges, x, side="right") - 1
        idx = np.where(x == edges[-1], nb - 1, idx)
        idx = np.where((x < edges[0]) | (x > edges[-1]) | (nb <= 0), -1, idx)
    else:
        if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)):
            raise TypeError(f"histogram(): argument 'bins' must be int or Tensor, not {type(bins).__name__}")
        check(histogram_shapes, int(bins), op="histogram")
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif x.size:
            lo, hi = float(x.min()), float(x.max())
        else:
            lo, hi = 0.0, 1.0
        if lo > hi:
            fail("argument_error_invalid", op="histogram", problem=f"torch.histogram(): min should not exceed max, "
                                                                   f"but got min {lo} max {hi}")
        if not (math.isfinite(lo) and math.isfinite(hi)):
            fail("argument_error_invalid", op="histogram", problem=f"torch.histogram(): range of [{lo}, {hi}] is not "
                                                                   "finite")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = linspace_values(lo, hi, int(bins) + 1, input._data.dtype)
        nb = int(bins)
        idx = _bin_index(x.astype(edges.dtype), edges, True)
    keep = idx >= 0
    hist = np.bincount(idx[keep], weights=None if w is None else w[keep].astype(np.float64),
                       minlength=builtins.max(nb, 0)).astype(input._data.dtype)
    if density:
        widths = np.diff(edges)
        total = hist.sum()
        with np.errstate(all="ignore"):
            hist = (hist / (total * widths)).astype(input._data.dtype)
    return RT.histogram(new_tensor(hist, input._device), new_tensor(np.array(edges, copy=True), input._device))
