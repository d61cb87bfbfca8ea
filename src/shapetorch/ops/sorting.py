"""Sorting and searching: sort, argsort, msort, topk, kthvalue, searchsorted, bucketize, unique,
unique_consecutive.

Orders come from one non-differentiable primitive (a stable argsort; NaN sorts as the largest
value, as in torch); values are gathered with those indices, so their gradient (and forward-mode
tangent) is gather's: it flows back to the element each value came from. Shapes come from
``_rules.sorting``.
"""

from __future__ import annotations

import builtins
from typing import Any, Literal

import numpy as np

from .._engine.primitives import Prim
from .._errors import fail
from .._rules.axes import wrap_dim
from .._rules.scan import cum_shape
from .._rules.sorting import bucketize_shape, kthvalue_shape, searchsorted_shape, topk_shape, unique_shapes
from .._tensor import Tensor
from ._common import as_node, be, can_cast, check, device_of, dtype_name, new_tensor, refuse
from ._registry import public
from .return_types import VALUES_INDICES, ValuesIndices


def _orderable(a: Any) -> Any:
    """bfloat16 (ml_dtypes) sorts through float32; the order is the same."""
    return a.astype(np.float32) if a.dtype.name == "bfloat16" else a


def _argsort_kernel(a: Any, axis: int, descending: bool) -> Any:
    a = _orderable(a)
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    # stable descending: sort the reversed array stably, reverse the order and map the indices back,
    # so equal values keep their original order and NaNs come first
    n = a.shape[axis]
    rev = np.flip(a, axis)
    idx = np.flip(np.argsort(rev, axis=axis, kind="stable"), axis)
    return (n - 1) - idx


_ARGSORT = Prim("argsort", _argsort_kernel)


def write_out(result: Any, out: Any, op: str, cast_ok: bool = False) -> Any:
    """torch's ``out=``: the result is written into the given tensor (or tuple of tensors), which is
    returned; an out tensor of another shape is resized, one of another dtype is an error (unless
    ``cast_ok`` and the result can be cast to it, as for torch's reductions)."""
    if out is None:
        return result
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"{op}(): argument 'out' must be a tuple of {len(result)} Tensors")
        for o, r in zip(out, result):
            _copy_out(o, r, op)
        return type(result)(*out)
    _copy_out(out, result, op, cast_ok)
    return out


def _copy_out(o: Any, r: Tensor, op: str, cast_ok: bool = False) -> None:
    from .._grad_mode import STATE

    if not isinstance(o, Tensor):
        raise TypeError(f"{op}(): argument 'out' must be Tensor, not {type(o).__name__}")
    if cast_ok and dtype_name(o) != dtype_name(r) and can_cast(dtype_name(r), dtype_name(o)):
        r = r.to(o.dtype)
    if dtype_name(o) != dtype_name(r):
        fail("dtype_error_mismatch", op=op, what="the out tensor and the result", a=o.dtype.name, b=r.dtype.name)
    if STATE.enabled and (r.requires_grad or o.requires_grad):
        raise RuntimeError(f"{op}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    if tuple(o._data.shape) != tuple(r._data.shape):
        o._data = r._data.copy()  # torch resizes the out tensor
        o._bump_version()
    else:
        o.copy_(r)


def _no_complex(input: Tensor, op: str) -> None:
    if input.is_complex():
        fail("method_dtype_not_supported_error", op=op, dtype=input.dtype.name, hint=" (sort does not support complex)")


def _order(input: Tensor, dim: int, descending: bool, op: str) -> tuple[Tensor, int]:
    """Indices that sort ``input`` along ``dim`` (a 0-d tensor is sorted as one element)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    check(cum_shape, tuple(input._data.shape), dim, op=op)
    _no_complex(input, op)
    if input._data.ndim == 0:
        return new_tensor(np.zeros((), np.int64), input._device), 0
    axis = wrap_dim(dim, input._data.ndim, op)
    return _ARGSORT(input.detach(), axis=axis, descending=bool(descending)), axis


def _take(input: Tensor, indices: Tensor, axis: int) -> Tensor:
    return input.clone() if input._data.ndim == 0 else input.gather(axis, indices)


@public("sorting")
def sort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool | None = False,
         out: Any = None) -> ValuesIndices:
    """(values, indices) sorted along ``dim``. The sort is always stable (ties keep their order)."""
    indices, axis = _order(input, dim, descending, "sort")
    values = as_node(_take(input, indices, axis), "SortBackward0", input)
    return write_out(VALUES_INDICES["sort"](values, indices), out, "sort")


@public("sorting")
def argsort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Tensor:
    """The indices that sort ``input`` along ``dim`` (stable)."""
    return _order(input, dim, descending, "argsort")[0]


@public("sorting")
def msort(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``sort(input, dim=0).values``."""
    return write_out(sort(input, 0).values, out, "msort")


@public("sorting")
def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True, *,
         out: Any = None) -> ValuesIndices:
    """The ``k`` largest (or smallest) elements along ``dim``, largest first (NaN counts as largest).

    Ties are resolved by position (the first occurrence first); torch leaves their order unspecified.
    ``sorted=False`` returns them sorted too, which torch allows.
    """
    check(topk_shape, tuple(input._data.shape), k, dim, op="topk")
    refuse(input, "topk", bool_=True)
    indices, axis = _order(input, dim, largest, "topk")
    if input._data.ndim:  # a 0-d input gives itself for k = 0 or 1, as in torch
        indices = indices.narrow(axis, 0, k)
    values = as_node(_take(input, indices, axis), "TopkBackward0", input)
    return write_out(VALUES_INDICES["topk"](values, indices), out, "topk")


@public("sorting")
def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False, *, out: Any = None) -> ValuesIndices:
    """The ``k``-th smallest element along ``dim`` and its index (among equal values, the first by position)."""
    check(kthvalue_shape, tuple(input._data.shape), k, dim, keepdim, op="kthvalue")
    refuse(input, "kthvalue", bool_=True)
    indices, axis = _order(input, dim, False, "kthvalue")
    if input._data.ndim == 0:
        return write_out(VALUES_INDICES["kthvalue"](input.clone(), indices), out, "kthvalue")
    indices = indices.narrow(axis, k - 1, 1)
    values = input.gather(axis, indices)
    if not keepdim:
        values, indices = values.squeeze(axis), indices.squeeze(axis)
    return write_out(VALUES_INDICES["kthvalue"](as_node(values, "KthvalueBackward0", input), indices), out, "kthvalue")


def _searchsorted_kernel(seq: Any, values: Any, right: bool, sorter: Any) -> Any:
    side: Literal["left", "right"] = "right" if right else "left"
    seq, values = _orderable(seq), _orderable(values)
    if sorter is not None:
        seq = np.take_along_axis(seq, sorter, axis=-1)
    if seq.ndim == 1:
        return np.searchsorted(seq, values, side=side).astype(np.int64)
    if values.size == 0:
        return np.zeros(values.shape, np.int64)
    flat_s = seq.reshape(-1, seq.shape[-1])
    flat_v = values.reshape(flat_s.shape[0], -1)
    out = np.empty(flat_v.shape, np.int64)
    for i in range(flat_s.shape[0]):
        out[i] = np.searchsorted(flat_s[i], flat_v[i], side=side)
    return out.reshape(values.shape)


_SEARCHSORTED = Prim("searchsorted", _searchsorted_kernel)


def _as_values(values: Any, like: Tensor) -> Tensor:
    if isinstance(values, Tensor):
        return values
    if isinstance(values, (bool, int, float)):
        return new_tensor(np.asarray(values), like._device)
    raise TypeError(f"searchsorted(): argument 'input' must be Tensor or a number, not {type(values).__name__}")


def _search(seq: Tensor, values: Tensor, right: bool, out_int32: bool, sorter: Tensor | None, op: str) -> Tensor:
    from .._dtype import to_dtype
    from ._common import promoted

    common = promoted(seq, values)
    # torch's kernel is picked by the promoted dtype (a bool sequence searched for floats runs), and not at all for
    # an empty result
    if values._data.size and (common == "bool" or "complex" in common):
        fail("method_dtype_not_supported_error", op=op, dtype="bool" if common == "bool" else "complex", hint="")
    s, v = seq._data.astype(np.dtype(_np_name(common)), copy=False), values._data.astype(np.dtype(_np_name(common)),
                                                                                     copy=False)
    srt = None if sorter is None else sorter._data
    out = _SEARCHSORTED(new_tensor(s, seq._device), new_tensor(v, seq._device), right=right, sorter=srt)
    return out.to(to_dtype("int32")) if out_int32 else out


def _np_name(name: str) -> Any:
    from .._dtype import to_dtype
    from ._common import np_dtype

    return np_dtype(to_dtype(name))


@public("sorting", method=False)
def searchsorted(sorted_sequence: Tensor, values: Any, *, out_int32: bool = False, right: bool = False,
                 side: str | None = None, sorter: Tensor | None = None, out: Tensor | None = None) -> Tensor:
    """Where ``values`` would be inserted into the innermost dim of ``sorted_sequence`` to keep it sorted."""
    v = _as_values(values, sorted_sequence)
    check(searchsorted_shape, tuple(sorted_sequence._data.shape), tuple(v._data.shape), op="searchsorted")
    if side is not None:
        if side not in ("left", "right"):
            fail("argument_error_invalid", op="searchsorted", problem=f"side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            fail("argument_error_invalid", op="searchsorted",
                 problem=f"side and right can't be set to opposites, got side of {side} while right was {right}")
        right = side == "right"
    if sorter is not None:
        if tuple(sorter._data.shape) != tuple(sorted_sequence._data.shape):
            fail("argument_error_invalid", op="searchsorted",
                 problem="boundary and sorter must have the same size, but got boundary tensor "
                         f"{tuple(sorted_sequence._data.shape)} and got sorter tensor {tuple(sorter._data.shape)}")
        if dtype_name(sorter) != "int64":
            fail("argument_error_invalid", op="searchsorted", problem=f"sorter must be a tensor of long dtype, "
                                                                      f"but got {sorter.dtype.name}")
        n = sorted_sequence._data.shape[-1] if sorted_sequence._data.ndim else 0
        if sorter._data.size and (sorter._data.min() < 0 or sorter._data.max() >= n):
            fail("argument_error_invalid", op="searchsorted", problem="sorter index out of range")
    return write_out(_search(sorted_sequence, v, bool(right), out_int32, sorter, "searchsorted"), out,
                     "searchsorted")


@public("sorting", method=False)
def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False,
              out: Tensor | None = None) -> Tensor:
    """The bucket of each element: with ``right=False``, ``boundaries[i-1] < x <= boundaries[i]``."""
    v = _as_values(input, boundaries)
    check(bucketize_shape, tuple(v._data.shape), tuple(boundaries._data.shape), op="bucketize")
    return write_out(_search(boundaries, v, bool(right), out_int32, None, "bucketize"), out,
                     "bucketize")


def _unique_arrays(a: Any, dim: int | None) -> tuple[Any, Any, Any]:
    """(unique, inverse, counts) of the flattened data or of the slices along ``dim``, sorted."""
    w = _orderable(a)
    if dim is None:
        flat = w.reshape(-1)
        order = np.argsort(flat, kind="stable")
        s = flat[order]
        if s.size:
            new = np.empty(s.shape, bool)
            new[0] = True
            new[1:] = s[1:] != s[:-1]  # NaNs differ from each other, as in torch
        else:
            new = np.zeros(0, bool)
        group = np.cumsum(new) - 1
        inverse = np.empty(flat.shape, np.int64)
        inverse[order] = group
        starts = np.flatnonzero(new)
        counts = np.diff(np.append(starts, s.size)).astype(np.int64)
        return a.reshape(-1)[order][new], inverse.reshape(a.shape), counts
    moved = np.moveaxis(a, dim, 0)
    rows = np.moveaxis(w, dim, 0).reshape(moved.shape[0], int(np.prod(moved.shape[1:])))
    order = np.lexsort(rows.T[::-1]) if rows.shape[1] else np.arange(rows.shape[0])
    s = rows[order]
    new = np.ones(s.shape[0], bool)
    if s.shape[0]:
        new[1:] = (s[1:] != s[:-1]).any(axis=1)
    group = np.cumsum(new) - 1
    inverse = np.empty(rows.shape[0], np.int64)
    inverse[order] = group
    starts = np.flatnonzero(new)
    counts = np.diff(np.append(starts, s.shape[0])).astype(np.int64)
    return np.moveaxis(moved[order][new], 0, dim), inverse, counts


def _consecutive_arrays(a: Any, dim: int | None) -> tuple[Any, Any, Any]:
    if dim is None:
        flat = a.reshape(-1)
        new = np.ones(flat.shape, bool)
        new[1:] = flat[1:] != flat[:-1]
        starts = np.flatnonzero(new)
        counts = np.diff(np.append(starts, flat.size)).astype(np.int64)
        return flat[new], (np.cumsum(new) - 1).reshape(a.shape).astype(np.int64), counts
    moved = np.moveaxis(a, dim, 0)
    rows = moved.reshape(moved.shape[0], int(np.prod(moved.shape[1:])))
    new = np.ones(rows.shape[0], bool)
    if rows.shape[0]:
        new[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    starts = np.flatnonzero(new)
    counts = np.diff(np.append(starts, rows.shape[0])).astype(np.int64)
    return np.moveaxis(moved[new], 0, dim), (np.cumsum(new) - 1).astype(np.int64), counts


# The values of unique are recorded in the graph, but (as in torch) cannot be differentiated. They are computed
# with the inverse and the counts before the primitive runs (its kernel hands them back), on the host or by the
# device's ``unique``.
_UNIQUE = Prim("unique", lambda a, value, dim, consecutive: value)


def host_only(input: Tensor, op: str, why: str = "its result's size depends on the values") -> None:
    """Ops computed on the host (NumPy) only: on another device they are refused with a coded error (move the
    tensor to the CPU) rather than read back silently."""
    if input._device.type != "cpu":
        fail("kernel_not_registered_error", op=op, device=input._device, dtype=input._data.dtype.name,
             hint=f" ({why}; move the tensor to the CPU)")


def _unique(input: Tensor, return_inverse: bool, return_counts: bool, dim: int | None, consecutive: bool,
            op: str) -> Any:
    if dim is not None or input.is_complex():  # a device sorts the flattened values only
        host_only(input, op)
    if dim is not None:
        if input._data.ndim == 0:
            fail("dimension_error_out_of_range", op=op, lo=0, hi=-1, dim=dim)
        check(unique_shapes, tuple(input._data.shape), dim, op=op)
        dim = wrap_dim(dim, input._data.ndim, op)
        shape = input._data.shape
        if builtins.sum(s == 0 for s in shape) > 1:
            fail("argument_error_invalid", op=op, problem="Number of zero sized dimensions is more than one, so "
                                                           "unique cannot be applied")
        if input._data.size == 0 and shape[dim] != 0:
            fail("argument_error_invalid", op=op, problem="There are 0 sized dimensions, and they aren't selected, "
                                                           "so unique cannot be applied")
    if input.is_complex() and not consecutive:
        fail("method_dtype_not_supported_error", op=op, dtype=input.dtype.name, hint="")
    dev = device_of(input)
    if input._device.type == "cpu":
        fn = _consecutive_arrays if consecutive else _unique_arrays
        found, inverse, counts = fn(input._data, dim)
        wrap: Any = new_tensor
    else:  # sorted and counted on the device; the number of unique values is read back (torch syncs there too)
        found, inverse, counts = be(input).unique(input._data, consecutive)
        wrap = Tensor._make
    values = _UNIQUE(input, value=found, dim=dim, consecutive=consecutive)
    if dim is None and input._data.ndim == 0 and input._device.type == "cpu":  # a device's has a's shape
        inverse = inverse.reshape(())
    extra = [wrap(inverse, dev)] if return_inverse else []
    if return_counts:
        extra.append(wrap(counts, dev))
    return (values, *extra) if extra else values


@public("sorting")
def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
           dim: int | None = None) -> Any:
    """The unique elements (or slices along ``dim``), always sorted; with the inverse indices and counts.

    NaNs are all distinct, as in torch. The values cannot be differentiated (torch: not implemented).
    """
    return _unique(input, return_inverse, return_counts, dim, False, "unique")


@public("sorting")
def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> Any:
    """Collapse each run of equal consecutive elements (or slices along ``dim``) into one."""
    refuse(input, "unique_consecutive", complex_=True)
    return _unique(input, return_inverse, return_counts, dim, True, "unique_consecutive")
