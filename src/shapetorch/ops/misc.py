"""Counting and combinatorics (bincount, histc, histogram, cartesian_prod, combinations), predicates
(is_complex, is_floating_point, is_nonzero), the SymInt helpers (sym_float, sym_int, sym_not) and
``vmap``.

``vmap`` is a loop: the function runs once per batch element, on that element's slices, and the
results are stacked. It composes with autograd because it is written in select and stack.
"""

from __future__ import annotations

import builtins
import itertools
import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from .._errors import fail
from .._rules.statistics import bincount_shape, histogram_shapes
from .._rules.tiling import cartesian_prod_shape, combinations_shape
from .._tensor import Tensor
from ._common import check, dtype_name, new_tensor
from ._registry import public
from .sorting import write_out


class HistogramResult(NamedTuple):
    """torch.return_types.histogram: ``hist`` and ``bin_edges``."""

    hist: Tensor
    bin_edges: Tensor


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


def _need_float(input: Tensor, op: str) -> None:
    if not input.is_floating_point():
        fail("method_dtype_not_supported_error", op=op, dtype=input.dtype.name, hint="")


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


def _linspace(lo: float, hi: float, steps: int, like: Tensor) -> Any:
    """Bin edges as torch's CPU linspace makes them, in the input dtype: the first half counted up from
    ``lo``, the second half down from ``hi`` (the edges decide which bin a boundary value lands in)."""
    dt = like._data.dtype
    start, end = dt.type(lo), dt.type(hi)
    step = (end - start) / dt.type(builtins.max(steps - 1, 1))
    idx = np.arange(steps)
    up = start + step * idx.astype(dt)
    down = end - step * (steps - idx - 1).astype(dt)
    return np.where(idx < steps // 2, up, down).astype(dt)


@public("misc")
def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0, *, out: Tensor | None = None) -> Tensor:
    """Histogram of ``input`` in ``bins`` equal bins over [min, max] (the data's range when both are 0)."""
    return write_out(_histc(input, bins, min, max), out, "histc")


def _histc(input: Tensor, bins: int, min: float, max: float) -> Tensor:
    _need_float(input, "histc")
    check(histogram_shapes, bins, op="histc")
    if min > max:
        fail("argument_error_invalid", op="histc", problem="torch.histc: max must be larger than min")
    x = input._data.reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        fail("argument_error_invalid", op="histc", problem=f"torch.histc: range of [{lo}, {hi}] is not finite")
    edges = _linspace(lo, hi, bins + 1, input)
    idx = _bin_index(x, edges, False)  # torch's histc interpolates without the local search histogram does
    counts = np.bincount(idx[idx >= 0], minlength=bins).astype(input._data.dtype)
    return new_tensor(counts, input._device)


@public("misc")
def histogram(input: Tensor, bins: Any, *, range: tuple[float, float] | None = None, weight: Tensor | None = None,
              density: bool = False, out: Any = None) -> HistogramResult:
    """(hist, bin_edges): ``bins`` equal bins over ``range`` (the data's range by default), or the given edges."""
    return write_out(_histogram(input, bins, range, weight, density), out, "histogram")


def _histogram(input: Tensor, bins: Any, range: tuple[float, float] | None, weight: Tensor | None,
               density: bool) -> HistogramResult:
    _need_float(input, "histogram")
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
        edges = _linspace(lo, hi, int(bins) + 1, input)
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
    return HistogramResult(new_tensor(hist, input._device), new_tensor(np.array(edges, copy=True), input._device))


# -- combinatorics ----------------------------------------------------------------------------------------

@public("misc", method=False)
def cartesian_prod(*tensors: Tensor) -> Tensor:
    """The Cartesian product of 1-D tensors: rows of all combinations (one tensor: itself)."""
    from .joining import stack

    check(cartesian_prod_shape, [tuple(t._data.shape) for t in tensors], op="cartesian_prod")
    for t in tensors[1:]:
        if dtype_name(t) != dtype_name(tensors[0]):
            fail("dtype_error_mismatch", op="cartesian_prod", what="all tensors (meshgrid)", a=tensors[0].dtype.name,
                 b=t.dtype.name)
    if len(tensors) == 1:
        return tensors[0].clone()
    sizes = tuple(t._data.shape[0] for t in tensors)
    cols = []
    for i, t in enumerate(tensors):
        view = tuple(-1 if j == i else 1 for j in builtins.range(len(tensors)))
        cols.append(t.reshape(view).expand(sizes).reshape(-1))
    return stack(cols, 1)


@public("misc", method=False)
def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """All length-``r`` combinations of the elements of a 1-D tensor, as rows (like itertools)."""
    shape = check(combinations_shape, tuple(input._data.shape), r, with_replacement, op="combinations")
    if r == 0:
        return input.narrow(0, 0, 0)
    n = input._data.shape[0]
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(gen(builtins.range(n), r)), dtype=np.int64).reshape(-1)
    return input.index_select(0, new_tensor(idx, input._device)).reshape(shape)


# -- predicates and SymInt helpers ----------------------------------------------------------------------

@public("misc", method=False)
def is_complex(input: Tensor) -> bool:
    """True for complex dtypes."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_complex(): argument 'input' must be Tensor, not {type(input).__name__}")
    return bool(input.dtype.is_complex)


@public("misc", method=False)
def is_floating_point(input: Tensor) -> bool:
    """True for floating-point dtypes (not complex)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_floating_point(): argument 'input' must be Tensor, not {type(input).__name__}")
    return bool(input.dtype.is_floating_point)


@public("misc")
def is_nonzero(input: Tensor) -> bool:
    """Whether a one-element tensor is non-zero; more or fewer elements are ambiguous (an error)."""
    if input._data.size != 1:
        fail("item_error_not_scalar", op="is_nonzero", numel=int(input._data.size), shape=tuple(input._data.shape))
    return bool(input._data.reshape(-1)[0] != 0)


@public("misc", method=False)
def sym_float(a: Any) -> float:
    """``float(a)``: symbolic sizes do not exist here, so this is the plain conversion torch falls back to."""
    if hasattr(a, "__sym_float__"):
        return builtins.float(a.__sym_float__())
    return builtins.float(a)


@public("misc", method=False)
def sym_int(a: Any) -> int:
    """``int(a)`` (truncating a float), as torch.sym_int does for plain values."""
    return builtins.int(a)


@public("misc", method=False)
def sym_not(a: Any) -> Any:
    """``not a`` (an object with ``__sym_not__`` negates itself)."""
    if hasattr(a, "__sym_not__"):
        return a.__sym_not__()
    return not a


# -- vmap ---------------------------------------------------------------------------------------------------

def _flatten(tree: Any) -> tuple[list[Any], Callable[[list[Any]], Any]]:
    """Leaves of nested tuples/lists/dicts, and a function that rebuilds the structure from new leaves."""
    if isinstance(tree, (tuple, list)):
        parts = [_flatten(t) for t in tree]
        leaves = [leaf for p in parts for leaf in p[0]]

        def build_seq(new: list[Any]) -> Any:
            out, i = [], 0
            for p_leaves, p_build in parts:
                out.append(p_build(new[i:i + len(p_leaves)]))
                i += len(p_leaves)
            if isinstance(tree, tuple):
                return type(tree)(*out) if hasattr(tree, "_fields") else tuple(out)
            return out

        return leaves, build_seq
    if isinstance(tree, dict):
        keys = list(tree)
        dparts = [_flatten(tree[k]) for k in keys]
        dleaves = [leaf for p in dparts for leaf in p[0]]

        def build_dict(new: list[Any]) -> Any:
            out, i = {}, 0
            for k, (p_leaves, p_build) in zip(keys, dparts):
                out[k] = p_build(new[i:i + len(p_leaves)])
                i += len(p_leaves)
            return out

        return dleaves, build_dict
    return [tree], lambda new: new[0]


def _dims_for(dims: Any, tree: Any, what: str) -> list[Any]:
    """One dim (or None) per leaf of ``tree``: an int/None applies to all leaves, a structure matches it."""
    if dims is None or isinstance(dims, int):
        return [dims] * len(_flatten(tree)[0])
    if isinstance(dims, (tuple, list)):
        if not isinstance(tree, (tuple, list)) or len(dims) != len(tree):
            raise ValueError(f"vmap: {what}={dims!r} is not compatible with the structure of the "
                             f"{'inputs' if what == 'in_dims' else 'outputs'} ({type(tree).__name__} of "
                             f"{len(tree) if isinstance(tree, (tuple, list)) else 1})")
        return [d for sub_d, sub_t in zip(dims, tree) for d in _dims_for(sub_d, sub_t, what)]
    if isinstance(dims, dict):
        if not isinstance(tree, dict) or set(dims) != set(tree):
            raise ValueError(f"vmap: {what}={dims!r} is not compatible with the structure of the inputs")
        return [d for k in tree for d in _dims_for(dims[k], tree[k], what)]
    raise ValueError(f"vmap: {what} must be an int, None or a (nested) tuple/list/dict of them, got {dims!r}")


def _mapped_dim(dim: int, t: Tensor) -> int:
    n = t._data.ndim
    if not -n <= dim < n:
        raise ValueError(f"vmap: Tried to map over dim {dim} of a tensor with {n} dims (shape "
                         f"{tuple(t._data.shape)}); expected in_dim in [{-n}, {n})")
    return dim + n if dim < 0 else dim


@public("misc", method=False)
def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable[..., Any]:
    """torch.func.vmap by a loop: ``func`` runs once per batch element and the outputs are stacked.

    ``in_dims`` gives, per positional argument (or per leaf of nested tuples/lists/dicts), the dim
    to map over or None (not mapped); ``out_dims`` where the batch dim goes in each output. Keyword
    arguments are passed unmapped. Because it is a loop, it costs one call per batch element and
    any function of tensors works, random ops included (``randomness='same'`` replays the RNG state
    for each element; 'error' and 'different' both draw fresh numbers per element); ``chunk_size``
    is accepted and has no effect. Gradients flow through (it is written in select and stack).
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        from .joining import stack
        from .random import get_rng_state, set_rng_state

        if isinstance(in_dims, int) or in_dims is None:
            dims = _dims_for(in_dims, args, "in_dims")
        elif isinstance(in_dims, (tuple, list)):
            dims = _dims_for(tuple(in_dims), args, "in_dims")
        else:
            raise ValueError(f"vmap: expected in_dims to be an int or a tuple, got {type(in_dims).__name__}")
        leaves, build = _flatten(args)
        size: int | None = None
        mapped: list[Any] = []
        for leaf, d in zip(leaves, dims):
            if d is None:
                mapped.append(None)
                continue
            if not isinstance(leaf, Tensor):
                raise ValueError(f"vmap: Got in_dim={d} for an input but the input is of type {type(leaf).__name__}. "
                                 "We cannot vmap over non-Tensor arguments; use None as the in_dim for it.")
            ax = _mapped_dim(d, leaf)
            n = leaf._data.shape[ax]
            if size is not None and n != size:
                raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got "
                                 f"sizes {size} and {n} for the mapped dimension")
            size = n
            mapped.append(ax)
        if size is None:
            raise ValueError("vmap: at least one input must be mapped over (got in_dims that are all None, "
                             "or no tensor inputs)")
        if size == 0:
            raise ValueError("vmap: the mapped dimension has size 0; a loop cannot infer the output")
        state = get_rng_state() if randomness == "same" else None
        results = []
        for i in builtins.range(size):
            if state is not None:
                set_rng_state(state)
            new = [leaf if ax is None else leaf.select(ax, i) for leaf, ax in zip(leaves, mapped)]
            results.append(func(*build(new), **kwargs))
        out_leaves0, out_build = _flatten(results[0])
        odims = _dims_for(out_dims, results[0], "out_dims")
        per_leaf = [_flatten(r)[0] for r in results]
        stacked = []
        for j, (leaf0, od) in enumerate(zip(out_leaves0, odims)):
            if od is None:
                stacked.append(leaf0)
                continue
            if not isinstance(leaf0, Tensor):
                raise ValueError(f"vmap: `{getattr(func, '__name__', 'func')}` must only return Tensors, got type "
                                 f"{type(leaf0).__name__}")
            col = [p[j] for p in per_leaf]
            rank = leaf0._data.ndim + 1
            if not -rank <= od < rank:
                raise ValueError(f"vmap: out_dim {od} is out of range for an output of rank {rank - 1}")
            stacked.append(stack(col, od))
        return out_build(stacked)

    wrapped.__name__ = f"vmap({getattr(func, '__name__', 'func')})"
    wrapped.__doc__ = func.__doc__
    return wrapped
