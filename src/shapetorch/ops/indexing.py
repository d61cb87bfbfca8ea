"""Indexing with torch's semantics: ``x[...]`` get and set, select, narrow, index_select, gather, scatter.

An index is applied in two NumPy steps so that integer indices act as ``select`` (as in torch)
rather than as advanced indices (as in NumPy): step 1 applies ints, slices and None as a view;
step 2 applies the tensor indices, if any, to what is left.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._engine.primitives import Prim
from .._errors import fail
from .._grad_mode import STATE
from .._rules import indexing as RI
from .._rules import joining as RJ
from .._rules.indexing import unravel_index_shape
from .._tensor import Tensor, mark_view
from ._common import (
    be,
    cast,
    check,
    dtype_name,
    inherit_custom_view,
    make_inplace,
    snapshot_for_inplace,
    writable,
    write_inplace,
)
from ._registry import method, public

NpIndex = tuple[Any, ...]


def _get(a: Any, idx1: NpIndex, idx2: NpIndex | None) -> Any:
    out = a[idx1]
    return out if idx2 is None else out[idx2]


def _scatter_into(out: Any, idx1: NpIndex, idx2: NpIndex | None, g: Any) -> Any:
    target = out[idx1]
    if idx2 is None:
        target[...] += g
    elif len(idx2) == 1 and type(idx2[0]) is np.ndarray and idx2[0].ndim == 1 and idx2[0].dtype.kind in "iu" \
            and target.ndim >= 1 and g.shape[:1] == idx2[0].shape and g.ndim == target.ndim and idx2[0].size > 1 \
            and g.dtype == target.dtype and g.dtype.kind in "fc":  # (reduceat would widen bools and small ints)
        _add_rows(target, idx2[0], g)
    else:
        np.add.at(target, idx2, g)  # repeated indices accumulate, as torch's index backward does
    return out


def _add_rows(target: Any, rows: Any, g: Any) -> None:
    """``np.add.at(target, rows, g)`` for a vector of row numbers (an embedding's gradient): the rows of ``g`` sorted
    by destination and summed per destination in their original order (the sums ``add.at`` makes), then added at
    once; ``add.at`` goes element by element, 10x slower on (512, 128) rows."""
    n = target.shape[0]
    rows = np.where(rows < 0, rows + n, rows)
    order = np.argsort(rows, kind="stable")
    dest = rows[order]
    first = np.flatnonzero(np.concatenate(([True], dest[1:] != dest[:-1])))
    target[dest[first]] += np.add.reduceat(g[order], first, axis=0)


def _index_backward(g: Any, shape: tuple[int, ...], idx1: NpIndex, idx2: NpIndex | None) -> Any:
    return _scatter_into(np.zeros(shape, dtype=g.dtype), idx1, idx2, g)


def _getitem_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    return (_INDEX_BACKWARD(g, shape=n.inputs[0]._data.shape, idx1=n.params["idx1"], idx2=n.params["idx2"]),)


_GET: dict[str, Prim]
_INDEX_BACKWARD = Prim(
    "index_backward", _index_backward, lambda g, n: (_GET["index"](g, idx1=n.params["idx1"], idx2=n.params["idx2"]),)
)
_GET = {name: Prim(name, _get, _getitem_vjp) for name in ("index", "select", "slice", "index_select")}


def _add_view_grad(buf: Any, g: Any, params: dict[str, Any]) -> bool:
    """``_index_backward`` without its zero-filled buffer: ``g`` added where the view lies, into the gradient the
    engine holds for the input already (NOTE [accumulation buffer] in the engine: ``split``'s pieces). A basic
    index only: an advanced one's repeated rows (``np.add.at``) would add into the buffer in another order."""
    if params["idx2"] is not None or type(buf) is not np.ndarray or getattr(g, "dtype", None) != buf.dtype \
            or not buf.flags.writeable:
        return False
    _scatter_into(buf, params["idx1"], None, g)
    return True


for _p in _GET.values():
    _p.add_into = _add_view_grad


def _index_put(a: Any, v: Any, idx1: NpIndex, idx2: NpIndex | None) -> Any:
    out = a.copy()
    target = out[idx1]
    if idx2 is None:
        target[...] = v
    else:
        target[idx2] = v
    return out


def _index_put_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    idx1, idx2 = n.params["idx1"], n.params["idx2"]
    keep = _INDEX_PUT(g, g.new_zeros(()), idx1=idx1, idx2=idx2)
    return keep, _GET["index"](g, idx1=idx1, idx2=idx2)


_INDEX_PUT = Prim("index_put", _index_put, _index_put_vjp)


def _as_index_tensor(x: Any) -> np.ndarray[Any, Any]:
    arr = np.asarray(x)
    if arr.dtype.kind not in "biu":
        if arr.size == 0:
            return arr.astype(np.int64)
        fail("index_error_invalid_index", op="index", index=f"an index of dtype {arr.dtype}")
    return arr


def _sequence_as_tuple(index: Any) -> bool:
    """torch's (and old NumPy's) rule: a list of fewer than 32 items holding a sequence, a tensor, a slice, None
    or Ellipsis indexes as the tuple of its items (``x[[[0, 1], [1, 0]]]`` is ``x[[0, 1], [1, 0]]``)."""
    return isinstance(index, list) and len(index) < 32 and any(
        isinstance(e, list | tuple | Tensor | slice | np.ndarray) or e is None or e is Ellipsis for e in index)


class _DeviceMask:
    """A boolean mask index on a device: the coordinate columns of its True elements (device index arrays)."""

    __slots__ = ("cols",)

    def __init__(self, cols: list[Any]) -> None:
        self.cols = cols


def parse_index(self: Tensor, index: Any) -> tuple[NpIndex, NpIndex | None, tuple[int, ...]]:
    """torch index -> (NumPy step-1 index, step-2 index or None, result shape), checked by the rule."""
    items = index if isinstance(index, tuple) or _sequence_as_tuple(index) else (index,)
    rule_items: list[Any] = []
    arrays: list[Any] = []  # per item: None | np array (int or bool) for tensor-like indices
    for it in items:
        arr = None
        if it is None or it is Ellipsis or isinstance(it, slice):
            if isinstance(it, slice):
                it = slice(*(_int_or_none(v) for v in (it.start, it.stop, it.step)))
            rule_items.append(it)
        elif isinstance(it, bool | np.bool_):
            arr = np.asarray(bool(it))
        elif isinstance(it, int | np.integer):
            rule_items.append(int(it))
        elif isinstance(it, Tensor):
            if not it.dtype.is_floating_point and not it.dtype.is_complex and it._data.ndim == 0 \
                    and dtype_name(it) != "bool":
                rule_items.append(int(it.item()))  # a 0-d integer tensor indexes like an int
            else:
                if dtype_name(it) not in ("bool", "uint8", "int8", "int16", "int32", "int64"):
                    fail("index_error_invalid_index", op="index", index=f"a tensor of dtype {it.dtype}")
                if it._device.type != "cpu" and it._device == self._device and dtype_name(it) in ("int32", "int64"):
                    # stays on the device: its kernels read it, its range is checked there (below)
                    rule_items.append(RI.TensorIndex(tuple(it._data.shape), False, 0))
                    arrays.append(it._data)
                    continue
                if it._device.type != "cpu" and it._device == self._device and dtype_name(it) == "bool" \
                        and it._data.ndim and hasattr(be(it), "mask_columns"):
                    # a mask as the coordinates of its True elements, made on the device: the count is the one
                    # read back (the result's shape needs it, as torch's)
                    cols = be(it).mask_columns(it._data)
                    n = cols[0].shape[0]
                    rule_items.append(RI.TensorIndex(tuple(it._data.shape), True, n))
                    arrays.append(_DeviceMask(cols))
                    continue
                arr = np.asarray(it.detach().cpu().numpy())
                if arr.dtype == np.uint8:  # a uint8 tensor is a mask (deprecated in torch, still honoured)
                    arr = arr.astype(bool)
        elif isinstance(it, list | np.ndarray):
            arr = _as_index_tensor(it)
        else:
            fail("index_error_invalid_index", op="index", index=repr(it))
        if arr is not None:
            is_bool = arr.dtype.kind == "b"
            rule_items.append(RI.TensorIndex(arr.shape, is_bool, int(arr.sum()) if is_bool else 0))
        arrays.append(arr)
    shape = check(RI.index_shape, self._data.shape, rule_items, op="index")
    # Expand the Ellipsis so both steps see one item per consumed dim.
    used = sum(RI._consumed(r) for r in rule_items)
    idx1: list[Any] = []
    idx2: list[Any] = []
    pos = 0  # dim of self being indexed
    advanced = False
    for r, arr in zip(rule_items, arrays):
        if r is Ellipsis:
            fill = self._data.ndim - used
            idx1 += [slice(None)] * fill
            idx2 += [slice(None)] * fill
            pos += fill
        elif r is None:
            idx1.append(None)
            idx2.append(slice(None))
        elif isinstance(r, int):
            idx1.append(r)
            pos += 1
        elif isinstance(r, slice):
            idx1.append(r)
            idx2.append(slice(None))
            pos += 1
        else:
            advanced = True
            assert arr is not None
            if isinstance(arr, _DeviceMask):  # its columns index the dims it covers, as NumPy's nonzero()
                idx1 += [slice(None)] * len(arr.cols)
                idx2 += arr.cols
                pos += len(arr.cols)
            elif arr.ndim == 0 and arr.dtype.kind == "b":  # x[True] adds a dim of 1 (or 0 for False)
                idx1.append(None)
                idx2.append(np.zeros(int(arr), dtype=np.intp))
            elif arr.dtype.kind == "b":
                idx1 += [slice(None)] * arr.ndim
                idx2.append(arr)
                pos += arr.ndim
            elif not isinstance(arr, np.ndarray):  # a device index tensor: checked on the device, at the next sync
                size = self._data.shape[pos]
                be(self).check_range(arr, -size, size, "at_error_index_out_of_bounds", "index", index=None, dim=pos,
                                     size=size)
                idx1.append(slice(None))
                idx2.append(arr)
                pos += 1
            else:
                size = self._data.shape[pos]
                if arr.size and (arr.max() >= size or arr.min() < -size):
                    bad = int(arr.max()) if arr.max() >= size else int(arr.min())
                    fail("at_error_index_out_of_bounds", op="index", index=bad, dim=pos, size=size)
                idx1.append(slice(None))
                idx2.append(arr.astype(np.intp, copy=False))
                pos += 1
    idx1.append(Ellipsis)  # keeps a[idx1] a view even for 0-d results
    return tuple(idx1), (tuple(idx2) if advanced else None), shape


def _int_or_none(v: Any) -> int | None:
    if v is None:
        return None
    if isinstance(v, Tensor):
        return int(v.item())
    if isinstance(v, int | np.integer):
        return int(v)
    fail("index_error_invalid_index", op="index", index=f"a slice bound {v!r}")


_BASIC = (int, type(None), type(Ellipsis))
_SLICE_PARTS = {int, type(None)}  # (a set of the parts' types: no generator frame per slice)


def _basic_key(index: Any) -> tuple[Any, ...] | None:
    """A hashable form of an index made only of ints, slices of ints, None and Ellipsis; else None."""
    items = index if type(index) is tuple else (index,)
    key: list[Any] = []
    for it in items:
        if type(it) in _BASIC:
            key.append(it)
        elif type(it) is slice and {type(it.start), type(it.stop), type(it.step)} <= _SLICE_PARTS:
            key.append((it.start, it.stop, it.step))
        else:
            return None
    return tuple(key)


@functools.lru_cache(maxsize=4096)
def _basic_index(shape: tuple[int, ...], key: tuple[Any, ...]) -> NpIndex:
    """The checked NumPy index of a basic index on ``shape``: the tiny-op path of ``x[1:, 0]``."""
    items = tuple(slice(*it) if type(it) is tuple else it for it in key)
    check(RI.index_shape, shape, items, op="index")
    return items if Ellipsis in items else (*items, Ellipsis)  # a trailing ... keeps 0-d results views


@functools.lru_cache(maxsize=4096)
def _view_label(shape: tuple[int, ...], key: tuple[Any, ...], single: bool) -> str:
    """torch's name for the node of a basic index (``x[0]``, ``x[:, 1:]``, ``x[None]``): that of its last view
    op, ``SelectBackward0`` for an int, ``SliceBackward0`` for a slice, ``UnsqueezeBackward0`` for None. In a
    tuple, a slice spanning its whole dim is no op, and an index of no op at all is an ``AliasBackward0``; a lone
    slice is always sliced (torch's one-slice path). ``key``: ``_basic_key``'s form (a slice as a tuple)."""
    label, dim = "AliasBackward0", 0
    rest = len(shape) - sum(1 for it in key if it is not None and it is not Ellipsis)  # dims an Ellipsis spans
    for it in key:
        if it is Ellipsis:
            dim += rest
        elif it is None:
            label = "UnsqueezeBackward0"
        else:
            if type(it) is not tuple:
                label = "SelectBackward0"
            elif single or slice(*it).indices(shape[dim]) != (0, shape[dim], 1):
                label = "SliceBackward0"
            dim += 1
    return label


def _label_key(index: Any) -> tuple[Any, ...]:
    """``_basic_key``'s form of a view index that has other parts (a 0-d tensor or NumPy int for an int or a
    slice bound): each a Python int."""
    items = index if type(index) is tuple else (index,)
    return tuple(it if it is None or it is Ellipsis
                 else tuple(None if v is None else int(v) for v in (it.start, it.stop, it.step)) if type(it) is slice
                 else int(it) for it in items)


def _getitem(self: Tensor, index: Any) -> Tensor:
    if isinstance(self._data, np.generic):
        self._shareable_data()  # the result may be a view: it needs an array to share
    key = _basic_key(index)
    if key is not None:
        out = _GET["slice"](self, idx1=_basic_index(self._data.shape, key), idx2=None)
        mark_view(out, self)
        inherit_custom_view(out, self)
        if out._grad_fn is not None:
            out._grad_fn.label = _view_label(self._data.shape, key, type(index) is not tuple)
        return out
    idx1, idx2, _ = parse_index(self, index)
    out = _GET["index" if idx2 is not None else "slice"](self, idx1=idx1, idx2=idx2)
    if idx2 is None:
        mark_view(out, self)
        inherit_custom_view(out, self)
        if out._grad_fn is not None:
            out._grad_fn.label = _view_label(self._data.shape, _label_key(index), type(index) is not tuple)
    return out


def _setitem(self: Tensor, index: Any, value: Any) -> None:
    if isinstance(self._data, np.generic):
        self._shareable_data()  # a 0-d tensor written through an index needs storage to write into
    if value is None or isinstance(value, (str, bytes, dict, set)):
        fail("argument_error_type", op="__setitem__", name="value", position="", expected="a Tensor or a number",
             got=type(value).__name__)
    idx1, idx2, shape = parse_index(self, index)
    if isinstance(value, Tensor):
        check(RI.setitem_value_shape, value._data.shape, shape, op="index_put")
        value = cast(value, dtype_name(self))
    dual = self._fw_grads is not None or (isinstance(value, Tensor) and value._fw_grads is not None)
    if dual or (STATE.enabled and (self.requires_grad or (isinstance(value, Tensor) and value.requires_grad))):
        v = value if isinstance(value, Tensor) else self.new_full((), value)
        v = v.reshape(v._data.shape[max(0, v._data.ndim - len(shape)):] if v._data.ndim > len(shape) else v._data.shape)
        write_inplace(self, _INDEX_PUT(snapshot_for_inplace(self), v, idx1=idx1, idx2=idx2), "index_put_")
        return
    v = value._data if isinstance(value, Tensor) else value
    if isinstance(v, np.ndarray) and v.ndim > len(shape):
        v = v.reshape(v.shape[v.ndim - len(shape):])
    target = writable(self, "index_put_")[idx1]
    if idx2 is None:
        target[...] = v
    else:
        target[idx2] = v
    self._bump_version()


method("__getitem__", _getitem)
method("__setitem__", _setitem)


@public("indexing")
def select(input: Tensor, dim: int, index: int) -> Tensor:
    d, i = check(RJ.select_index, input._data.shape, dim, index, op="select")
    out = _GET["select"](input, idx1=(slice(None),) * d + (i, Ellipsis), idx2=None)
    mark_view(out, input)
    return out


@public("indexing")
def narrow(input: Tensor, dim: int, start: Any, length: int) -> Tensor:
    if isinstance(start, Tensor):
        start = int(start.item())
    d, s, n = check(RJ.narrow_bounds, input._data.shape, dim, start, length, op="narrow")
    out = _GET["slice"](input, idx1=(slice(None),) * d + (slice(s, s + n), Ellipsis), idx2=None)
    mark_view(out, input)
    return out


@public("indexing")
def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    from .conversion import where

    if dtype_name(mask) != "bool":
        fail("dtype_error_mismatch", op="masked_fill", what="mask", a=mask.dtype.name, b="bool")
    v = value if isinstance(value, Tensor) else input.new_full((), value)
    out = where(mask, v.to(input.dtype), input)  # out of place, input and mask broadcast (masked_fill_ cannot grow)
    if out._grad_fn is not None:  # torch's node names: a number's fill, a tensor's
        out._grad_fn.label = "MaskedFillBackward1" if isinstance(value, Tensor) else "MaskedFillBackward0"
    return out


method("masked_fill_", lambda self, mask, value: write_inplace(self, masked_fill(self, mask, value), "masked_fill_",
                                                              temporary=True))


@public("indexing")
def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:
    if input._data.ndim and hasattr(be(input), "nonzero"):  # made on the device; the count is read back
        out = Tensor._make(be(input).nonzero(input._data), input._device)
        return tuple(out[:, d].contiguous() for d in range(input._data.ndim)) if as_tuple else out
    idx = np.nonzero(input.detach().cpu().numpy()) if input._data.ndim else (np.zeros(int(bool(input.item())), np.int64),)
    from .creation import tensor

    if as_tuple:
        return tuple(tensor(i.astype(np.int64), device=input.device) for i in idx)
    return tensor(np.stack(idx, axis=-1).astype(np.int64).reshape(-1, max(input._data.ndim, 1)) if input._data.ndim
                  else np.zeros((int(bool(input.item())), 0), np.int64), device=input.device)


@public("indexing")
def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """``nonzero(input)`` cut or padded (with rows of ``fill_value``) to exactly ``size`` rows."""
    if size < 0:
        fail("argument_error_invalid", op="nonzero_static", problem="'size' must be an non-negative integer")
    idx: Tensor = nonzero(input)
    found = idx._data.shape[0]
    if found >= size:
        return idx[:size].contiguous()
    from .creation import full
    from .joining import cat

    pad = full((size - found, idx._data.shape[1]), fill_value, dtype="int64", device=input.device)
    out: Tensor = cat([idx, pad])
    return out


@public("indexing")
def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    from .._rules.broadcast import broadcast_shapes

    if dtype_name(mask) != "bool":  # indexing takes a uint8 mask, masked_select does not
        fail("dtype_error_mismatch", op="masked_select", what="mask", a=mask.dtype.name, b="bool")
    shape = check(broadcast_shapes, input._data.shape, mask._data.shape, op="masked_select")
    return input.expand(shape)[mask.expand(shape)]


@public("indexing")
def take(input: Tensor, index: Tensor) -> Tensor:
    """Elements of the flattened input at ``index`` (an int64 tensor), in the index's shape."""
    if dtype_name(index) != "int64":
        fail("dtype_error_mismatch", op="take", what="index", a=index.dtype.name, b="int64")
    return input.reshape(-1)[index]


async def masked_select_async(input: Tensor, mask: Tensor) -> Tensor:
    """``await masked_select_async(x, mask)``: :func:`masked_select` as an awaitable (its output length is data-dependent,
    the point where a device result is read back)."""
    return masked_select(input, mask)


public("indexing", method=False)(masked_select_async)


def _same_dtype(op: str, input: Tensor, other: Tensor, what: str = "self and source") -> None:
    if dtype_name(input) != dtype_name(other):
        fail("dtype_error_mismatch", op=op, what=what, a=input.dtype.name, b=other.dtype.name)


@public("indexing")
def index_put(input: Tensor, indices: Sequence[Tensor], values: Tensor, accumulate: bool = False) -> Tensor:
    """``out = input.clone(); out[indices] = values`` (or ``+=`` with ``accumulate``, repeats adding up)."""
    _same_dtype("index_put", input, values, "source and destination")
    if any(not isinstance(i, Tensor) for i in indices):
        fail("index_error_invalid_index", op="index_put", index="an index that is not a tensor (None included)")
    idx = tuple(indices)
    idx1, idx2, shape = parse_index(input, idx)
    check(RI.setitem_value_shape, values._data.shape, shape, op="index_put")
    v = values
    while v._data.ndim > len(shape) and v._data.shape[0] == 1:
        v = v.reshape(v._data.shape[1:])
    v = v.expand(shape)
    if accumulate:
        return input + _INDEX_BACKWARD(v, shape=tuple(input._data.shape), idx1=idx1, idx2=idx2)
    return _INDEX_PUT(input, v, idx1=idx1, idx2=idx2)


method("index_put_", make_inplace(index_put, "index_put_"))


@public("indexing")
def argwhere(input: Tensor) -> Tensor:
    """The indices of the nonzero elements, one row each: (count, rank)."""
    out: Tensor = nonzero(input)
    return out


@public("indexing", method=False)
def unravel_index(indices: Any, shape: int | Sequence[int]) -> tuple[Tensor, ...]:
    """Flat indices to coordinates in ``shape`` (negative indices wrap by floor division, as torch)."""
    dims = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    if not isinstance(indices, Tensor):
        from .creation import tensor

        indices = tensor(indices)
    if indices.dtype.is_floating_point or indices.dtype.is_complex or dtype_name(indices) == "bool":
        fail("argument_error_refused", op="unravel_index",  # (torch's TypeError)
             problem=f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    check(unravel_index_shape, indices._data.shape, dims, op="unravel_index")
    rest = np.asarray(indices._data).astype(np.int64)
    out = []
    for s in reversed(dims):
        out.append(rest % s if s else rest * 0)
        rest = rest // s if s else rest
    return tuple(Tensor._make(np.array(o, dtype=np.int64), indices._device) for o in reversed(out))


@public("shape")
def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``narrow`` as a new tensor rather than a view."""
    check(RJ.narrow_bounds, input._data.shape, dim, start, length, op="narrow_copy")
    out: Tensor = input.narrow(dim, start, length).clone()
    return out


@public("indexing")
def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``input`` with the positions where ``mask`` (broadcast to it) is True filled from ``source``'s elements in
    row-major order; differentiable in ``input`` and ``source``."""
    from .._rules.broadcast import broadcast_shapes

    if dtype_name(mask) != "bool":
        fail("dtype_error_mismatch", op="masked_scatter", what="mask", a=mask.dtype.name, b="bool")
    _same_dtype("masked_scatter", input, source, "self and source")
    shape = check(broadcast_shapes, input._data.shape, mask._data.shape, op="masked_scatter")
    input = input.expand(shape)
    positions = mask.expand(shape).reshape(-1).nonzero().squeeze(1)
    n = positions._data.shape[0]
    if n > source.numel():
        fail("argument_error_invalid", op="masked_scatter",
             problem="Number of elements of source < number of ones in mask")
    return index_put(input.reshape(-1), (positions,), source.reshape(-1)[:n]).reshape(shape)


method("masked_scatter_", make_inplace(masked_scatter, "masked_scatter_"))


@public("indexing")
def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """``input`` with ``source``'s elements written at the flat positions ``index`` (added with ``accumulate``)."""
    if dtype_name(index) != "int64":
        fail("dtype_error_mismatch", op="put", what="index", a=index.dtype.name, b="int64")
    if index.numel() != source.numel():
        fail("argument_error_invalid", op="put", problem=(
            f"Expected source and index to have the same number of elements, but got source.numel() = "
            f"{source.numel()}, index.numel() = {index.numel()}"))
    flat = index_put(input.reshape(-1), (index.reshape(-1),), source.reshape(-1), accumulate)
    return flat.reshape(input._data.shape)


method("put_", make_inplace(put, "put_"))


def _fill_diagonal_(self: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """Fill the main diagonal (of a matrix, or of a tensor whose dims are all equal) in place; ``wrap`` restarts
    it below a tall matrix's square part every ``width + 1`` rows, as torch's."""
    from .creation import arange
    from .scatter import index_fill

    shape = tuple(self._data.shape)
    if len(shape) < 2:
        fail("argument_error_invalid", op="fill_diagonal_", problem="dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        fail("argument_error_invalid", op="fill_diagonal_", problem="all dimensions of input must be of equal length")
    step = sum(int(np.prod(shape[i + 1:], dtype=np.int64)) for i in range(len(shape)))
    n = min(shape)
    if wrap and len(shape) == 2 and shape[0] > shape[1] + 1:
        n = (self.numel() + shape[1]) // step
    positions = arange(n, device=self.device) * step
    return write_inplace(self, index_fill(self.reshape(-1), 0, positions, fill_value).reshape(shape), "fill_diagonal_")


method("fill_diagonal_", _fill_diagonal_)
