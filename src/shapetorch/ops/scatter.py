"""Gather and scatter along a dim: index_select, gather, scatter/scatter_add/scatter_reduce, index_add/copy/fill/reduce,
select/slice/diagonal_scatter, take_along_dim."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._dtype import bool_
from .._engine.primitives import PRIMS, Prim
from .._errors import fail
from .._rules import indexing as RI
from .._rules import joining as RJ
from .._rules import scatter as RS
from .._rules.axes import wrap_dim
from .._rules.scatter import index_add_check, src_matches, take_along_dim_shape
from .._rules.views import diagonal_shape
from .._tensor import Tensor
from ._common import as_node, be, cast, check, dtype_name, make_inplace, new_tensor, write_inplace
from ._registry import method, public
from .indexing import _GET, _INDEX_PUT, _same_dtype
from .views import _diag_view


@public("indexing")
def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    check(RS.index_select_shape, input._data.shape, dim, index._data.shape, op="index_select")
    if dtype_name(index) not in ("int32", "int64"):
        fail("index_error_invalid_index", op="index_select", index=f"an index of dtype {index.dtype}")
    if input._data.ndim == 0:
        if index._data.size:  # a 0-d input has one element: index 0 only
            be(index).check_range(index._data, 0, 1, "at_error_index_out_of_bounds", "index_select", index=None,
                                  dim=0, size=1)
        return input.reshape(()).clone() if index._data.size == 1 else input.reshape(-1)[index.reshape(-1)]
    d = wrap_dim(dim, input._data.ndim, "index_select")
    size = input._data.shape[d]
    be(index).check_range(index._data, 0, size, "at_error_index_out_of_bounds", "index_select", index=None, dim=d,
                          size=size)
    if input._device.type == "cpu":
        arr = np.asarray(index._data).reshape(-1).astype(np.intp)
        return _GET["index_select"](input, idx1=(Ellipsis,), idx2=(slice(None),) * d + (arr,))
    # a device reads the index in the kernel: a gather along d of the index broadcast over the other dims
    shape = list(input._data.shape)
    shape[d] = index._data.size
    idx = index.reshape([-1 if k == d else 1 for k in range(len(shape))]).expand(*shape)
    return _GATHER(input, idx, axis=d)


def _full_index(index: Any, axis: int) -> tuple[Any, ...]:
    grid = list(np.indices(index.shape, sparse=True))
    grid[axis] = index
    return tuple(grid)


def _gather(a: Any, index: Any, axis: int) -> Any:
    return a[_full_index(index, axis)] if a.ndim else a[()] * np.ones(index.shape, a.dtype)


def _scatter_add(a: Any, index: Any, src: Any, axis: int) -> Any:
    out = a.copy()
    if a.ndim == 0:
        return out + src.reshape(-1)[0] if index.size else out  # torch adds src's first element only
    np.add.at(out, _full_index(index, axis), src[tuple(slice(0, s) for s in index.shape)])
    return out


def _scatter(a: Any, index: Any, src: Any, axis: int) -> Any:
    out = a.copy()
    if a.ndim == 0:
        return np.array(np.asarray(src, dtype=a.dtype).reshape(-1)[0]) if index.size else out  # torch: src's first
    s = src[tuple(slice(0, s) for s in index.shape)] if np.ndim(src) else src
    out[_full_index(index, axis)] = s
    return out


_GATHER = Prim(
    "gather", _gather,
    lambda g, n: (g.new_zeros(n.inputs[0]._data.shape).scatter_add(n.params["axis"], n.inputs[1], g), None),
)
_SCATTER_ADD = Prim(
    "scatter_add", _scatter_add,
    lambda g, n: (g, None, _src_grad(g, n)),
)


def _src_grad(g: Tensor, n: Any) -> Any:
    """The gradient of a scatter's tensor ``src``: ``g`` gathered at ``index``, zero where ``src`` is not read."""
    index, src = n.inputs[1], n.inputs[2]
    if not isinstance(src, Tensor):
        return None
    got = _GATHER(g, index, axis=n.params["axis"])
    if src._data.shape == index._data.shape:
        return got
    out = g.new_zeros(src._data.shape)  # src is larger than index: only its leading block is read
    out[tuple(slice(0, s) for s in index._data.shape)] = got
    return out


def _scatter_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    # the input's gradient is g where nothing was written over it; src's is g where it was written
    return _SCATTER(g, n.inputs[1], 0.0, axis=n.params["axis"]), None, _src_grad(g, n)


_SCATTER = Prim("scatter", _scatter, _scatter_vjp)


def _check_index_values(index: Tensor, size: int, dim: int, op: str) -> Any:
    if dtype_name(index) not in ("int32", "int64"):  # torch: "Expected dtype int32/int64 for index"
        fail("dtype_error_mismatch", op=op, what="index", a=index.dtype.name, b="int32 or int64")
    be(index).check_range(index._data, 0, size, "at_error_index_out_of_bounds", op, index=None, dim=dim,
                          size=size)


def _same_dtype_src(input: Tensor, src: Tensor) -> None:
    if input._data.dtype != src._data.dtype:  # torch: "scatter(): Expected self.dtype to be equal to src.dtype"
        fail("dtype_error_mismatch", op="scatter", what="self and src", a=input.dtype.name, b=src.dtype.name)


@public("indexing")
def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """``out[i][j] = input[i][index[i][j]]`` (for dim=1); ``out`` has the shape of ``index``."""
    check(RS.gather_shape, input._data.shape, dim, index._data.shape, op="gather")
    d = wrap_dim(dim, input._data.ndim, "gather")
    _check_index_values(index, input._data.shape[d] if input._data.ndim else 1, d, "gather")
    if index._data.ndim < input._data.ndim:  # a 0-d index (the rule allows no other): one element, a 0-d result
        return _GATHER(input, _lift(index, input), axis=d).reshape(())
    return _GATHER(input, index, axis=d)


def _lift(t: Any, like: Tensor) -> Any:
    """A 0-d index or src of scatter/gather seen as one element of ``like``'s rank (torch reads a 0-d index so)."""
    return t.reshape((1,) * like._data.ndim) if isinstance(t, Tensor) and t._data.ndim < like._data.ndim else t


@public("indexing")
def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    check(RS.scatter_check, input._data.shape, dim, index._data.shape, src._data.shape, op="scatter_add")
    d = wrap_dim(dim, input._data.ndim, "scatter_add")
    _check_index_values(index, input._data.shape[d] if input._data.ndim else 1, d, "scatter_add")
    _same_dtype_src(input, src)
    return _SCATTER_ADD(input, _lift(index, input), _lift(src, input), axis=d)


@public("indexing")
def scatter(input: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None) -> Tensor:
    if src is None:
        src = value
    s = src._data.shape if isinstance(src, Tensor) else None
    check(RS.scatter_check, input._data.shape, dim, index._data.shape, s, op="scatter")
    d = wrap_dim(dim, input._data.ndim, "scatter")
    _check_index_values(index, input._data.shape[d] if input._data.ndim else 1, d, "scatter")
    if isinstance(src, Tensor):
        _same_dtype_src(input, src)
    return _SCATTER(input, _lift(index, input), _lift(src, input), axis=d)


for _iname, _ifn in (("scatter_add_", scatter_add), ("scatter_", scatter)):
    method(_iname, lambda self, *a, _f=_ifn, _n=_iname, **k: write_inplace(self, _f(self, *a, **k), _n))

Arr = Any


def _tensor(a: Arr, like: Tensor) -> Tensor:
    return new_tensor(np.array(a, order="C"), like._device)


def _index_array(index: Tensor, op: str, dtypes: tuple[str, ...] = ("int64",)) -> Arr:
    if dtype_name(index) not in dtypes:
        fail("dtype_error_mismatch", op=op, what="index", a=index.dtype.name, b=" or ".join(dtypes))
    return np.asarray(index.detach().cpu().numpy()).reshape(-1).astype(np.intp)


def _in_bounds(arr: Arr, size: int, dim: int, op: str, negative: bool = False) -> Arr:
    lo = -size if negative else 0
    if arr.size and (arr.max() >= size or arr.min() < lo):
        bad = int(arr.max()) if arr.max() >= size else int(arr.min())
        fail("at_error_index_out_of_bounds", op=op, index=bad, dim=dim, size=size)
    return np.where(arr < 0, arr + size, arr) if negative else arr


# -- index_add / index_copy ---------------------------------------------------------------------------


def _along(index: Arr, axis: int) -> tuple[Any, ...]:
    return (slice(None),) * axis + (index,)


def _index_add_kernel(a: Arr, src: Arr, index: Arr, axis: int) -> Arr:
    out = a.copy()
    np.add.at(out, _along(index, axis), src)
    return out


def _index_copy_kernel(a: Arr, src: Arr, index: Arr, axis: int) -> Arr:
    out = a.copy()
    out[_along(index, axis)] = src
    return out


def _index_param(index: Any, like: Tensor) -> Tensor:
    """The ``index`` param as an int64 tensor on ``like``'s device: a NumPy array, or a device index kept there."""
    if isinstance(index, np.ndarray):
        return _tensor(index.astype(np.int64), like)
    return Tensor._make(index, like._device)


def _index_add_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    ix = _index_param(n.params["index"], g)
    return g, g.index_select(n.params["axis"], ix)


def _index_copy_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    ix = _index_param(n.params["index"], g)
    picked = g.index_select(n.params["axis"], ix)
    return _INDEX_COPY(g, picked.new_zeros(picked._data.shape), **n.params), picked


def _bilinear_jvp(name: str) -> Any:
    def rule(ts: tuple[Any, ...], n: Any) -> Any:
        if ts[0] is None and ts[1] is None:
            return None
        a = ts[0] if ts[0] is not None else n.inputs[0].new_zeros(n.inputs[0]._data.shape)
        b = ts[1] if ts[1] is not None else n.inputs[1].new_zeros(n.inputs[1]._data.shape)
        return PRIMS[name](a, b, **n.params)

    return rule


_INDEX_ADD = Prim("index_add", _index_add_kernel, _index_add_vjp, _bilinear_jvp("index_add"))
_INDEX_COPY = Prim("index_copy", _index_copy_kernel, _index_copy_vjp, _bilinear_jvp("index_copy"))


def _index_args(input: Tensor, dim: int, index: Tensor, source: Tensor, op: str,
                dtypes: tuple[str, ...] = ("int64",), negative: bool = False) -> tuple[Tensor, Tensor, Arr, int, bool]:
    """(self, source, index, dim) with a 0-d self seen as 1-d, as torch does; the bool says to squeeze back."""
    d = check(index_add_check, input._data.shape, dim, index._data.shape, source._data.shape, op=op)
    if index._device.type != "cpu" and index._device == input._device and index._data.ndim == 1 \
            and dtype_name(index) in dtypes and input._data.ndim > 0:
        # a device index stays there: its kernels read it and its range is checked there, at the next sync
        size = input._data.shape[d]
        if source._data.size and index._data.size and not (op == "index_add" and input._data.size == 0
                                                            and input._data.ndim > 1):  # as the host path
            be(index).check_range(index._data, -size if negative else 0, size, "at_error_index_out_of_bounds", op,
                                  index=None, dim=d, size=size)
        return input, source, index._data, d, False
    arr = _index_array(index, op, dtypes)
    zero_d = input._data.ndim == 0
    x, s = (input.reshape(1), source.reshape(-1)) if zero_d else (input, source)
    if zero_d and s._data.shape[0] != arr.size:  # one 0-d source for one index
        s = s.expand(arr.size)
    # nothing moves: torch checks no index values (index_add: not on an empty self of 2+ dims either)
    if s._data.size == 0 or (x._data.size == 0 and x._data.ndim > 1 and op == "index_add"):
        return x, s, arr[:0], d, zero_d
    arr = _in_bounds(arr, x._data.shape[d], d, op, negative)
    return x, s, arr, d, zero_d


@public("indexing")
def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    """``out = input``; ``out[index[i]] += alpha * source[i]`` along ``dim`` (repeats accumulate)."""
    _same_dtype("index_add", input, source)
    x, s, arr, d, zero_d = _index_args(input, dim, index, source, "index_add", ("int32", "int64"))
    if alpha != 1:
        s = cast(s * alpha, dtype_name(input))
    if arr.size < s._data.shape[d]:
        return input.clone()
    out = _INDEX_ADD(x, s, index=arr, axis=d)
    return out.reshape(()) if zero_d else out


@public("indexing")
def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """``out[index[i]] = source[i]`` along ``dim``."""
    _same_dtype("index_copy", input, source)
    x, s, arr, d, zero_d = _index_args(input, dim, index, source, "index_copy")
    if arr.size < s._data.shape[d]:
        return input.clone()
    out = _INDEX_COPY(x, s, index=arr, axis=d)
    return out.reshape(()) if zero_d else out


@public("indexing")
def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """The entries ``index`` (negative ones wrap) along ``dim`` set to ``value`` (a number or a 0-d tensor)."""
    if isinstance(value, Tensor) and value._data.ndim:
        fail("argument_error_invalid", op="index_fill",
             problem=f"only supports a 0-dimensional value tensor, but got shape {tuple(value._data.shape)}")
    if index._data.ndim > 1:
        fail("index_error_rank_mismatch", op="index_fill", index=tuple(index._data.shape), expected="0 or 1",
             shape=tuple(input._data.shape))
    d = check(wrap_dim, dim, input._data.ndim, "index_fill")
    v = cast(value if isinstance(value, Tensor) else input.new_full((), value), dtype_name(input))
    x = input.reshape(1) if input._data.ndim == 0 else input
    if index._device.type != "cpu" and index._device == input._device:
        return _index_fill_on_device(input, x, d, index, v)
    arr = _index_array(index, "index_fill")
    arr = np.unique(_in_bounds(arr, x._data.shape[d], d, "index_fill", negative=True))  # each entry is set once
    if x._data.size == 0:  # (after the bounds: an index into a dim of size 0 is out of them)
        return input.clone()
    shape = list(x._data.shape)
    shape[d] = arr.size
    out = _INDEX_COPY(x, v.expand(tuple(shape)), index=arr, axis=d)
    return out.reshape(()) if input._data.ndim == 0 else out


def _index_fill_on_device(input: Tensor, x: Tensor, d: int, index: Tensor, v: Tensor) -> Tensor:
    """index_fill with the index left on its device: a mask along ``d`` marked at the index (repeats mark it once,
    so the value's gradient counts each filled entry once, as torch's), then ``where``; the range is checked on
    the device and raised at the next sync."""
    from .conversion import where  # (conversion builds on this module's neighbours; imported when used)

    if dtype_name(index) != "int64":
        fail("dtype_error_mismatch", op="index_fill", what="index", a=index.dtype.name, b="int64")
    size = x._data.shape[d]
    be(index).check_range(index._data, -size, size, "at_error_index_out_of_bounds", "index_fill", index=None, dim=d,
                          size=size)
    if x._data.size == 0:
        return input.clone()
    mask = x.new_zeros(size, dtype=bool_).index_put((index.reshape(-1),), x.new_ones((), dtype=bool_))
    out = where(mask.reshape(tuple(size if k == d else 1 for k in range(x._data.ndim))), v, x)
    return out.reshape(()) if input._data.ndim == 0 else out


# -- scatter_reduce / index_reduce ----------------------------------------------------------------------

_REDUCE = {"sum": np.add, "prod": np.multiply, "mean": np.add, "amax": np.maximum, "amin": np.minimum}


def _identity(dt: Any, reduce: str) -> Any:
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dt.kind == "f" or dt.kind == "c" or dt.name == "bfloat16":
        return -np.inf if reduce == "amax" else np.inf
    if dt.kind == "b":
        return reduce == "amin"
    info = np.iinfo(dt)
    return info.min if reduce == "amax" else info.max


def _scatter_reduce_kernel(a: Arr, index: Arr, src: Arr, axis: int, reduce: str, include_self: bool) -> Arr:
    full = _full_index(index.astype(np.intp, copy=False), axis)
    out = a.copy()
    if not include_self:
        out[full] = _identity(a.dtype, reduce)
    _REDUCE[reduce].at(out, full, src)
    if reduce == "mean":
        count = np.ones(a.shape, np.int64) if include_self else np.zeros(a.shape, np.int64)
        np.add.at(count, full, 1)
        safe = np.maximum(count, 1).astype(a.dtype)
        mean = out // safe if a.dtype.kind in "iub" else out / safe
        out = np.where(count > 0, mean, a).astype(a.dtype)
    return out


def _scatter_reduce_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    x, ix, src = n.inputs
    out = n.out
    p = n.params
    d, red, inc = p["axis"], p["reduce"], p["include_self"]
    if red == "sum":
        gx, gs = g, g.gather(d, ix)
    elif red == "mean":
        count = (g.new_ones(g._data.shape) if inc else g.new_zeros(g._data.shape)).scatter_add(
            d, ix, g.new_ones(src._data.shape))
        count = count.masked_fill(count == 0, 1)
        gx = g / count
        gs = gx.gather(d, ix)
    elif red in ("amax", "amin"):
        value = out.gather(d, ix)
        self_is = (x == out).to(g.dtype)
        src_is = (src == value).to(g.dtype)
        share = g / self_is.scatter_add(d, ix, src_is)
        gx = self_is * share
        gs = src_is * share.gather(d, ix)
    else:  # prod, with the exclusive products where inputs are 0
        masked_self = x.masked_fill(x == 0, 1)
        gx = g * _SCATTER_REDUCE(masked_self, ix, src, **p) / masked_self
        src_zero = src == 0
        zeros_in_group = x.new_zeros(x._data.shape).scatter_add(d, ix, src_zero.to(x.dtype)).gather(d, ix)
        single = src_zero & (zeros_in_group == 1)
        without = _SCATTER_REDUCE(x, ix, src.masked_fill(single, 1), **p)
        from .conversion import where

        gs = where(single, (g * without).gather(d, ix), (g * out).gather(d, ix) / src.masked_fill(src_zero, 1))
    if not inc:
        gx = gx.scatter(d, ix, 0)
    return gx, None, gs


_SCATTER_REDUCE = Prim("scatter_reduce", _scatter_reduce_kernel, _scatter_reduce_vjp, save_output=True)


@public("indexing")
def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """Reduce ``src`` into ``input`` at ``index`` along ``dim`` with sum, prod, mean, amax or amin."""
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # torch still takes the old names
    if reduce not in _REDUCE:
        fail("argument_error_invalid", op="scatter_reduce",
             problem=f"reduce argument must be one of sum, prod, mean, amax or amin, got {reduce!r}")
    check(RS.scatter_check, input._data.shape, dim, index._data.shape, src._data.shape, op="scatter_reduce")
    _same_dtype("scatter_reduce", input, src, "self and src")
    if dtype_name(index) != "int64":
        fail("dtype_error_mismatch", op="scatter_reduce", what="index", a=index.dtype.name, b="int64")
    zero_d = input._data.ndim == 0
    x = input.reshape(1) if zero_d else input
    ix = index.reshape(-1) if zero_d else index
    s = src.reshape(-1) if zero_d else src
    if zero_d and ix._data.size:
        ix, s = ix[:1], s[:1]
    elif zero_d:
        s = s[:0]
    d = wrap_dim(dim, x._data.ndim, "scatter_reduce")
    size = x._data.shape[d]
    # the index is read where it lives: a device checks its range there and raises at the next sync
    be(ix).check_range(ix._data, 0, size, "at_error_index_out_of_bounds", "scatter_reduce", index=None, dim=d,
                       size=size)
    ishape = ix._data.shape
    s = s[tuple(slice(0, k) for k in ishape)] if s._data.shape != ishape else s
    out = _SCATTER_REDUCE(x, ix, s, axis=d, reduce=reduce, include_self=include_self)
    return out.reshape(()) if zero_d else out


@public("indexing")
def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """Reduce ``source[i]`` into ``input[index[i]]`` along ``dim`` with prod, mean, amax or amin."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        fail("argument_error_invalid", op="index_reduce",
             problem=f"reduce argument must be either prod, mean, amax or amin, got {reduce!r}")
    _same_dtype("index_reduce", input, source)
    x, s, arr, d, zero_d = _index_args(input, dim, index, source, "index_reduce", ("int32", "int64"))
    if not isinstance(arr, np.ndarray):  # a device index: scatter_reduce takes it as a tensor, read back once
        arr = index.detach().cpu().numpy()
    if arr.size < s._data.shape[d]:
        return input.clone()
    shape = [1] * s._data.ndim
    shape[d] = -1
    full = _tensor(arr.astype(np.int64).reshape(shape), x).expand(s._data.shape)
    out = _SCATTER_REDUCE(x, full, s, axis=d, reduce=reduce, include_self=include_self)
    return out.reshape(()) if zero_d else out


for _name, _fn in (("index_add_", index_add), ("index_copy_", index_copy), ("index_fill_", index_fill),
                   ("index_reduce_", index_reduce), ("scatter_reduce_", scatter_reduce)):
    method(_name, make_inplace(_fn, _name))


# -- the *_scatter ops: a copy of input with one slice replaced --------------------------------------


@public("indexing")
def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """``input`` with ``input.select(dim, index)`` replaced by ``src`` (of exactly that shape)."""
    d, i = check(RJ.select_index, input._data.shape, dim, index, op="select_scatter")
    shape = input._data.shape
    check(src_matches, src._data.shape, shape[:d] + shape[d + 1 :], op="select_scatter")
    return _INDEX_PUT(input, cast(src, dtype_name(input)), idx1=(slice(None),) * d + (i, Ellipsis), idx2=None)


@public("indexing")
def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None, end: int | None = None,
                  step: int = 1) -> Tensor:
    """``input`` with ``input[..., start:end:step, ...]`` (at ``dim``) replaced by ``src``."""
    shape = input._data.shape
    d = check(wrap_dim, dim, len(shape), "slice_scatter")
    sl = slice(start, end, step)
    if not shape:
        fail("dimension_error_zero_dim", op="slice_scatter")
    n = check(RI.slice_length, shape[d], sl, op="slice_scatter")
    check(src_matches, src._data.shape, shape[:d] + (n,) + shape[d + 1 :], op="slice_scatter")
    return _INDEX_PUT(input, cast(src, dtype_name(input)), idx1=(slice(None),) * d + (sl, Ellipsis), idx2=None)


def _diag_scatter_kernel(a: Arr, src: Arr, offset: int, axis1: int, axis2: int) -> Arr:
    out = a.copy()
    _diag_view(out, offset, axis1, axis2)[...] = src
    return out


def _diag_scatter_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    p = n.params
    picked = g.diagonal(p["offset"], p["axis1"], p["axis2"])
    return _DIAG_SCATTER(g, picked.new_zeros(picked._data.shape), **p), picked.clone()


_DIAG_SCATTER = Prim("diagonal_scatter", _diag_scatter_kernel, _diag_scatter_vjp, _bilinear_jvp("diagonal_scatter"))


@public("indexing")
def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """``input`` with its (offset, dim1, dim2) diagonal replaced by ``src``."""
    expected = check(diagonal_shape, input._data.shape, offset, dim1, dim2, op="diagonal_scatter")
    check(src_matches, src._data.shape, expected, op="diagonal_scatter")
    n = input._data.ndim
    a, b = wrap_dim(dim1, n, "diagonal_scatter"), wrap_dim(dim2, n, "diagonal_scatter")
    return _DIAG_SCATTER(input, cast(src, dtype_name(input)), offset=offset, axis1=a, axis2=b)


# -- take_along_dim -----------------------------------------------------------------


@public("indexing")
def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """Values of ``input`` at ``indices`` along ``dim`` (other dims broadcast); without dim, of the flattened input."""
    shape = check(take_along_dim_shape, input._data.shape, indices._data.shape, dim, op="take_along_dim")
    allowed = ("int64",) if dim is not None else ("int32", "int64")  # without dim it is a gather, which takes int32
    if dtype_name(indices) not in allowed:
        fail("dtype_error_mismatch", op="take_along_dim", what="indices", a=indices.dtype.name, b=" or ".join(allowed))
    if dim is None:
        x, ix, d = input.reshape(-1), indices.reshape(-1), 0
    else:
        d = wrap_dim(dim, input._data.ndim, "take_along_dim")
        x = input.expand(shape[:d] + (input._data.shape[d],) + shape[d + 1 :])
        ix = indices.expand(shape)
    size = x._data.shape[d]
    if ix._data.size:  # (on a device: checked there, raised at the next sync)
        be(ix).check_range(ix._data, -size if dim is not None else 0, size, "at_error_index_out_of_bounds",
                           "take_along_dim", index=None, dim=d, size=size)
    fixed = ix.long()
    if dim is not None:  # negative indices count from the end
        fixed = fixed.where(fixed >= 0, fixed + size)
    return as_node(take_along(x, fixed, d).reshape(shape), "GatherBackward0", input)  # torch's is a gather


def _put_add_kernel(g: Any, index: Any, shape: tuple[int, ...], axis: int) -> Any:
    out = np.zeros(shape, dtype=g.dtype)
    np.add.at(out, _full_index(index, axis), g)
    return out


def _take_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    return _PUT_ADD(g, n.inputs[1], shape=tuple(n.inputs[0]._data.shape), axis=n.params["axis"]), None


def _put_add_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    return _TAKE(g, n.inputs[1], axis=n.params["axis"]), None


_TAKE = Prim("take_along_dim", np.take_along_axis, _take_vjp)
_PUT_ADD = Prim("put_along_dim_add", _put_add_kernel, _put_add_vjp)


def take_along(input: Tensor, index: Tensor, axis: int) -> Tensor:
    """``input`` gathered along ``axis`` by an int64 ``index`` of the same rank (checked by the caller)."""
    return _TAKE(input, index, axis=axis)
