"""Shape changes: reshape/view, permute and transposes, squeeze/unsqueeze, flatten, expand, diagonal.

On the NumPy backend these return NumPy views where torch returns views, so a write through a view
shows in its base, as in torch. Each output remembers its base (``_base``) for version counting.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._engine.intercept import INSTALLED as SLOW_PATH
from .._engine.primitives import Prim, untracked_kernel
from .._errors import fail
from .._grad_mode import STATE
from .._rules import views as RV
from .._rules.axes import wrap_dim
from .._rules.broadcast import expand_shape
from .._rules.views import as_strided_check
from .._tensor import Tensor, mark_view, refresh_view
from ._common import as_node, check, check_leaf_inplace, inherit_custom_view, int_list
from ._registry import _guarded, method, public

Arr = Any


def _view_of(out: Tensor, base: Tensor) -> Tensor:
    """Mark ``out`` as a view of ``base`` unless the kernel had to copy (a reshape of a transposed array).
    A copy never overlaps its source, so NumPy's cheap bounds test is exact here."""
    src = base._data
    if type(src) is not np.ndarray and isinstance(src, np.generic):  # a 0-d base held as a NumPy scalar: share
        one = src = base._shareable_data()                            # a 0-d array instead
        out._data = one.reshape(out._data.shape) if out._data.size == 1 else _expand_kernel(one, out._data.shape)
    data = out._data
    # (_shares's identity test inlined: every view op on a tiny tensor passes here)
    if type(data) is not np.ndarray or ((b := data.base) is not None and (b is src or b is getattr(src, "base", None))) \
            or _shares(data, src):
        mark_view(out, base)
        if base._created_in is not None:
            inherit_custom_view(out, base)
    return out


def _shares(out: np.ndarray[Any, Any], a: Any) -> bool:
    """Whether the kernel's ``out`` is a view of ``a``. NumPy gives a view the array that owns the memory (or
    ``a`` itself) as its ``base``, while a copy's base is its own new buffer: one identity test answers the
    common case, NumPy's memory-bounds test the rest (it costs a hundred times more)."""
    b = out.base
    return (b is not None and (b is a or b is getattr(a, "base", None))) or np.may_share_memory(out, a)


def _reshape_kernel(a: Any, shape: tuple[int, ...]) -> Any:
    return a.reshape(shape)


def _permute_kernel(a: Any, axes: tuple[int, ...]) -> Any:
    return a.transpose(axes)  # (the method: np.transpose's wrapper costs three times as much)


# NOTE [untracked view]: a view whose input records nothing takes the primitive call's shortcut (NOTE [untracked call]
# in the engine's primitives) on every device; ``_view_of`` then marks it a view as on the general path (every matmul's
# vjp transposes and every reduction's expands a gradient that records nothing, in a first-order backward).
def _untracked(input: Tensor, data: Any) -> Tensor:
    out = _new(Tensor)  # (untracked_result, inlined: every view of a first-order backward passes here)
    out._data, out._device, out._requires_grad = data, input._device, False
    # (_view_of's tests inlined: a NumPy view of a NumPy array, or a device array; a 0-d NumPy scalar base and a copy
    # are _view_of's)
    src = input._data
    if type(data) is _NDARRAY:
        if type(src) is not _NDARRAY or (b := data.base) is None or (b is not src and b is not src.base):
            return _view_of(out, input)
    elif isinstance(src, np.generic):
        return _view_of(out, input)
    mark_view(out, input)
    if input._created_in is not None:
        inherit_custom_view(out, input)
    return out


_NDARRAY = np.ndarray


_new = object.__new__


def _view_kernel(a: Any, shape: tuple[int, ...]) -> Any:
    return np.reshape(a, shape, copy=False)


@functools.lru_cache(maxsize=1024)
def _inverse(axes: tuple[int, ...]) -> tuple[int, ...]:
    """The order that undoes the permutation ``axes`` (``np.argsort`` of a tuple costs more than a tiny view)."""
    return tuple(sorted(range(len(axes)), key=axes.__getitem__))


_RESHAPE = Prim("reshape", _reshape_kernel, lambda g, n: (reshape_known(g, n.inputs[0]._data.shape),))
_VIEW = Prim("view", _view_kernel, lambda g, n: (reshape_known(g, n.inputs[0]._data.shape),))
_PERMUTE = Prim("permute", _permute_kernel, lambda g, n: (permute_known(g, _inverse(n.params["axes"])),))


# NOTE [known view]: ``reshape_known(t, shape)`` and ``permute_known(t, axes)`` are ``t.reshape(shape)`` and
# ``t.permute(axes)`` for a shape or an order known to hold (the public ops', after their argument guard and rule; a
# view's vjp, which reshapes or permutes the gradient back to its input's shape): the primitive straight away, by the
# untracked call's shortcut (NOTE [untracked view]) where the input records nothing, so the same view with the same
# node. Every view's backward passes here; the guard, the size parsing and the rule cost as much as the view itself.
# (The CPU kernels' one method call is made directly: a keyword call into the kernel costs as much as the method.)
def reshape_known(t: Tensor, shape: tuple[int, ...]) -> Tensor:
    if t._base is not None and t._view_cell[0] != t._view_version:  # (untracked_kernel, inlined: every view's vjp)
        refresh_view(t)
    if not ((t._requires_grad and STATE.enabled) or SLOW_PATH[0] or t._uninitialized) \
            and (k := _RESHAPE.kernels.get(t._device.type)) is not None:
        return _untracked(t, t._data.reshape(shape) if k is _reshape_kernel else k(t._data, shape=shape))
    return _view_of(_RESHAPE(t, shape=shape), t)


def permute_known(t: Tensor, axes: tuple[int, ...]) -> Tensor:
    if t._base is not None and t._view_cell[0] != t._view_version:  # (untracked_kernel, inlined, as above)
        refresh_view(t)
    if not ((t._requires_grad and STATE.enabled) or SLOW_PATH[0] or t._uninitialized) \
            and (k := _PERMUTE.kernels.get(t._device.type)) is not None:
        return _untracked(t, t._data.transpose(axes) if k is _permute_kernel else k(t._data, axes=axes))
    return _view_of(_PERMUTE(t, axes=axes), t)


def _expand_kernel(a: Any, shape: tuple[int, ...]) -> Any:
    """``np.broadcast_to(a, shape)`` (the rule has checked ``shape``). For a C-contiguous array the view is made
    directly, an ndarray over ``a``'s buffer with stride 0 along the new and the broadcast dims: broadcast_to's
    own checks cost ten times that, and every reduction's gradient expands."""
    if isinstance(a, np.generic):  # a 0-d result held as a NumPy scalar (a full reduction's gradient)
        a = np.array(a)
    if type(a) is not np.ndarray:
        return np.broadcast_to(a, shape)
    if not a.ndim:  # (every loss.backward() of a sum or mean: all strides 0, without the loop below)
        strides: tuple[int, ...] = (0,) * len(shape)
    elif not a.flags.c_contiguous or not a.size:
        return np.broadcast_to(a, shape)
    else:
        lead = len(shape) - a.ndim
        strides = (0,) * lead + tuple(0 if n != shape[lead + i] else st
                                      for i, (n, st) in enumerate(zip(a.shape, a.strides)))
    out = np.ndarray(shape, a.dtype, a, 0, strides)
    out.flags.writeable = False  # as broadcast_to's: several elements share one memory location
    return out


_EXPAND = Prim("expand", _expand_kernel, lambda g, n: (g,))  # the engine sums g back to the input shape
def _diag_view(a: Any, offset: int, axis1: int, axis2: int) -> Any:
    """A writeable strided view of a diagonal (NumPy's own ``diagonal`` is read-only; torch's is a view)."""
    v = np.moveaxis(a, (axis1, axis2), (-2, -1))
    n1, n2 = v.shape[-2:]
    length = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    start = v[..., max(-offset, 0) :, max(offset, 0) :] if length else v
    strides = v.strides[:-2] + (v.strides[-2] + v.strides[-1],)
    return np.lib.stride_tricks.as_strided(start, v.shape[:-2] + (length,), strides, writeable=a.flags.writeable)


def _diag_backward(g: Any, shape: tuple[int, ...], offset: int, axis1: int, axis2: int) -> Any:
    out = np.zeros(shape, dtype=g.dtype)
    _diag_view(out, offset, axis1, axis2)[...] = g
    return out


_DIAG_BACKWARD = Prim(
    "diagonal_backward", _diag_backward,
    lambda g, n: (g.diagonal(n.params["offset"], n.params["axis1"], n.params["axis2"]),),
)
_DIAGONAL = Prim(
    "diagonal", _diag_view, lambda g, n: (_DIAG_BACKWARD(g, shape=n.inputs[0]._data.shape, **n.params),)
)


# The rules are pure, so their verdicts on concrete shapes are cached: a tiny reshape or transpose
# then costs a dict lookup instead of a walk over the dims (errors are never cached: they raise).
@functools.lru_cache(maxsize=4096)
def _reshape_rule(shape: tuple[int, ...], sizes: tuple[int, ...], op: str) -> tuple[int, ...]:
    return check(RV.reshape_shape, shape, sizes, op=op)


@functools.lru_cache(maxsize=4096)
def _transpose_axes(shape: tuple[int, ...], dim0: int, dim1: int) -> tuple[int, ...]:
    check(RV.transpose_shape, shape, dim0, dim1, op="transpose")
    axes = list(range(len(shape)))
    if len(shape) >= 2:
        a, b = dim0 % len(shape), dim1 % len(shape)
        axes[a], axes[b] = axes[b], axes[a]
    return tuple(axes)


@public("shape")
def reshape(input: Tensor, *shape: Any) -> Tensor:
    """A tensor with the same elements in ``shape`` (one size may be -1); a view when possible."""
    return reshape_known(input, _reshape_rule(input._data.shape, int_list(shape, "reshape"), "reshape"))


def _view(self: Tensor, *shape: Any) -> Tensor:
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list, np.integer)):
        return self.to(shape[0])  # view(dtype) reinterpretation is not supported; torch's common use is a cast
    sizes = _reshape_rule(self._data.shape, int_list(shape, "view"), "view")
    try:
        out = _VIEW(self, shape=sizes)
    except ValueError:
        fail("view_error_incompatible_strides", op="view", sizes=sizes, shape=tuple(self._data.shape))
    return _view_of(out, self)


method("view", _guarded("view", _view))  # methods only, behind their argument guards
method("view_as", lambda self, other: _view(self, other._data.shape))
method("reshape_as", lambda self, other: reshape(self, other._data.shape))


@functools.lru_cache(maxsize=4096)
def _permute_axes(shape: tuple[int, ...], order: tuple[int, ...]) -> tuple[int, ...]:
    """The rule's verdict on ``permute(order)`` of ``shape``, the dims made non-negative (cached as
    ``_reshape_rule``: a transposed head split permutes on every attention's forward and backward)."""
    check(RV.permute_shape, shape, order, op="permute")
    return tuple(d % len(shape) for d in order) if shape else ()


@public("shape")
def permute(input: Tensor, *dims: Any) -> Tensor:
    return permute_known(input, _permute_axes(input._data.shape, int_list(dims, "permute")))


@public("shape", aliases=("swapaxes", "swapdims"))
def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    out = permute_known(input, _transpose_axes(input._data.shape, dim0, dim1))
    return out if out._grad_fn is None else as_node(out, "TransposeBackward0", input)


@functools.lru_cache(maxsize=1024)
def _t_axes(shape: tuple[int, ...]) -> tuple[int, ...]:
    check(RV.t_shape, shape, op="t")
    return _transpose_axes(shape, 0, 1) if len(shape) == 2 else _transpose_axes(shape, 0, 0)


@public("shape")
def t(input: Tensor) -> Tensor:
    """Transpose a matrix; 0-D and 1-D tensors are returned as they are."""
    out = permute_known(input, _t_axes(input._data.shape))
    return out if out._grad_fn is None else as_node(out, "TBackward0", input)


@public("shape", aliases=("moveaxis",))
def movedim(input: Tensor, source: int | tuple[int, ...] | list[int], destination: int | tuple[int, ...] | list[int]) -> Tensor:
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    order = check(RV.movedim_order, input._data.ndim, src, dst, op="movedim")
    return _view_of(_PERMUTE(input, axes=order), input)


@functools.lru_cache(maxsize=1024)
def _mT_axes(shape: tuple[int, ...]) -> tuple[int, ...]:
    check(RV.matrix_transpose_shape, shape, op="mT")
    return _transpose_axes(shape, -2, -1) if shape else _transpose_axes(shape, 0, 0)


def _mT(self: Tensor) -> Tensor:
    # (every matmul's vjp transposes: the rule's verdict is cached and the guard of ``transpose`` skipped)
    out = permute_known(self, _mT_axes(self._data.shape))
    return out if out._grad_fn is None else as_node(out, "TransposeBackward0", self)


def _T(self: Tensor) -> Tensor:
    return permute(self, tuple(range(self._data.ndim - 1, -1, -1)))


Tensor.mT = property(_mT)  # type: ignore[attr-defined]
Tensor.T = property(_T)  # type: ignore[attr-defined]
Tensor.H = property(lambda self: _T(self).conj())  # type: ignore[attr-defined]
Tensor.mH = property(lambda self: _mT(self).conj())  # type: ignore[attr-defined]


@public("shape")
def adjoint(input: Tensor) -> Tensor:
    return _mT(input).conj()


@public("shape")
def squeeze(input: Tensor, dim: int | tuple[int, ...] | list[int] | None = None) -> Tensor:
    """Remove size-1 dims: all of them, or those of ``dim`` that have size 1."""
    out = reshape_known(input, check(RV.squeeze_shape, input._data.shape, dim, op="squeeze"))
    # torch's node: SqueezeBackward0 for all dims, 1 for one dim, 2 for a list of them
    return out if out._grad_fn is None else as_node(
        out, f"SqueezeBackward{0 if dim is None else 1 if isinstance(dim, int) else 2}", input)


@public("shape")
def unsqueeze(input: Tensor, dim: int) -> Tensor:
    out = reshape_known(input, check(RV.unsqueeze_shape, input._data.shape, dim, op="unsqueeze"))
    return out if out._grad_fn is None else as_node(out, "UnsqueezeBackward0", input)


@public("shape")
def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    new = check(RV.flatten_shape, input._data.shape, start_dim, end_dim, op="flatten")
    return reshape(input, new)


@public("shape")
def ravel(input: Tensor) -> Tensor:
    return reshape(input, -1)


@public("shape")
def unflatten(input: Tensor, dim: int, sizes: Any) -> Tensor:
    new = check(RV.unflatten_shape, input._data.shape, dim, int_list((sizes,), "unflatten"), op="unflatten")
    return _view_of(_RESHAPE(input, shape=new), input)


@functools.lru_cache(maxsize=4096)
def _expand_rule(shape: tuple[int, ...], sizes: tuple[int, ...], op: str) -> tuple[int, ...]:
    return check(expand_shape, shape, sizes, op=op)  # (cached as _reshape_rule: every reduction's vjp expands)


def _expand(self: Tensor, *sizes: Any) -> Tensor:
    return expand_known(self, _expand_rule(self._data.shape, int_list(sizes, "expand"), "expand"))


def expand_known(self: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``self.expand(shape)`` where ``shape`` is known to hold (a reduction's gradient expanded back to its input's
    shape, on every backward of a sum or mean): the primitive straight away, without the argument guard and the
    rule's check (their answers here are known), as the same view with the same node."""
    if shape == self._data.shape:
        return reshape_known(self, shape)
    if (k := untracked_kernel(_EXPAND, self)) is not None:
        return _untracked(self, k(self._data, shape=shape))
    return _view_of(_EXPAND(self, shape=shape), self)


method("expand", _guarded("expand", _expand))
method("expand_as", lambda self, other: _expand(self, other._data.shape))


@public("shape")
def broadcast_to(input: Tensor, size: Any) -> Tensor:
    new = check(expand_shape, input._data.shape, int_list((size,), "broadcast_to"), op="broadcast_to")
    return _view_of(_EXPAND(input, shape=new), input)


@public("shape")
def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal of the (dim1, dim2) planes, moved to the last dim (a view)."""
    n = input._data.ndim
    a, b = check(wrap_dim, dim1, n, "diagonal"), check(wrap_dim, dim2, n, "diagonal")
    if a == b:
        fail("dim_error_repeated", op="diagonal", dim=dim1, dims=[dim1, dim2])
    return _view_of(_DIAGONAL(input, offset=offset, axis1=a, axis2=b), input)


# -- unfold (sliding windows) ----------------------------------------------------------------------------------------


def _unfold_kernel(a: Arr, axis: int, size: int, step: int, shape: tuple[int, ...]) -> Arr:
    if a.ndim == 0:
        return a.reshape(shape)
    strides = (*a.strides[:axis], a.strides[axis] * step, *a.strides[axis + 1 :], a.strides[axis])
    return np.lib.stride_tricks.as_strided(a, shape, strides, writeable=a.flags.writeable)


def _unfold_backward_kernel(g: Arr, in_shape: tuple[int, ...], axis: int, size: int, step: int) -> Arr:
    out = np.zeros(in_shape, dtype=g.dtype)
    if not in_shape:
        return g.reshape(())
    windows = g.shape[axis]
    dst = np.moveaxis(out, axis, 0)
    for k in range(size):  # for one offset k the windows touch distinct elements, so += is exact
        dst[k : k + step * (windows - 1) + 1 : step] += np.moveaxis(g[..., k], axis, 0)
    return out


def _unfold_backward_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    return (_UNFOLD(g, axis=n.params["axis"], size=n.params["size"], step=n.params["step"],
                    shape=n.inputs[0]._data.shape),)


_UNFOLD_BACKWARD = Prim("unfold_backward", _unfold_backward_kernel, _unfold_backward_vjp)
_UNFOLD = Prim(
    "unfold", _unfold_kernel,
    lambda g, n: (_UNFOLD_BACKWARD(g, in_shape=n.inputs[0]._data.shape, axis=n.params["axis"],
                                   size=n.params["size"], step=n.params["step"]),),
)


def _unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """``Tensor.unfold``: a view of the windows of ``size`` elements every ``step`` along ``dimension``."""
    shape = check(RV.unfold_shape, tuple(self._data.shape), dimension, size, step, op="unfold")
    axis = dimension % max(self._data.ndim, 1)
    if isinstance(self._data, np.generic):
        self._shareable_data()
    return _view_of(_UNFOLD(self, axis=axis, size=size, step=step, shape=shape), self)


method("unfold", _unfold)


# -- as_strided ----------------------------------------------------------------------------------------------------


def _storage(t: Tensor) -> tuple[Arr, int, tuple[int, ...]]:
    """The flat storage a tensor views (its root NumPy buffer), its offset in it and its strides, in elements.
    On a device, the storage is the root tensor's array (an offset and strides into the buffer views share)."""
    arr = t._data
    if not isinstance(arr, (np.ndarray, np.generic)):
        root = t._base._data if t._base is not None else arr
        if root.flags.c_contiguous and getattr(root, "st", None) is getattr(arr, "st", None):
            return root, arr.offset - root.offset, tuple(arr.stride)
        flat = arr.copy()  # not inside a contiguous root: a storage of the tensor's elements in order
        return flat, 0, tuple(flat.stride)
    root = arr
    while isinstance(root.base, np.ndarray) and root.base.dtype == arr.dtype:
        root = root.base
    size = arr.dtype.itemsize
    if root is not arr and root.flags.c_contiguous:
        offset = (arr.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // size
        return root.reshape(-1), offset, tuple(s // size for s in arr.strides)
    if not arr.flags.c_contiguous:  # no flat buffer to share: a storage of the tensor's elements in order
        arr = np.ascontiguousarray(arr)
    return arr.reshape(-1), 0, tuple(s // size for s in arr.strides)


def _as_strided_kernel(a: Arr, storage: Arr, size: tuple[int, ...], stride: tuple[int, ...], offset: int,
                       in_offset: int, in_stride: tuple[int, ...]) -> Arr:
    item = storage.dtype.itemsize
    return np.lib.stride_tricks.as_strided(storage[offset:], size, tuple(s * item for s in stride))


def _positions(n: int, shape: tuple[int, ...], stride: tuple[int, ...], offset: int) -> Arr:
    base = np.arange(n, dtype=np.int64)
    return np.lib.stride_tricks.as_strided(base[offset:], shape, tuple(s * 8 for s in stride)).copy()


def _as_strided_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    from .creation import tensor

    # the positions in the storage depend on the shapes alone: made on the host, used on g's device
    p = n.params
    total = p["storage"].size
    out_pos = tensor(_positions(total, p["size"], p["stride"], p["offset"]).reshape(-1), device=g.device)
    in_pos = _positions(total, tuple(n.inputs[0]._data.shape), p["in_stride"], p["in_offset"])
    flat = g.new_zeros((total,)).scatter_add(0, out_pos, g.reshape(-1))
    return (flat.index_select(0, tensor(in_pos.reshape(-1), device=g.device)).reshape(in_pos.shape),)


_AS_STRIDED = Prim("as_strided", _as_strided_kernel, _as_strided_vjp)


@public("shape")
def as_strided(input: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None) -> Tensor:
    """A view of ``input``'s storage with the given sizes and strides (in elements), as torch's."""
    storage, in_offset, in_stride = _storage(input)
    offset = in_offset if storage_offset is None else int(storage_offset)
    sz, st_ = int_list((size,), "as_strided"), int_list((stride,), "as_strided")
    check(as_strided_check, sz, st_, offset, storage.size, op="as_strided")
    out = _AS_STRIDED(input, storage=storage, size=sz, stride=st_, offset=offset, in_offset=in_offset,
                      in_stride=in_stride)
    return _view_of(out, input)


def _as_strided_(self: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None) -> Tensor:
    check_leaf_inplace(self, "as_strided_")
    view = as_strided(self, size, stride, storage_offset)
    self._data = view._data
    self._bump_version()
    return self


method("as_strided_", _as_strided_)


def _metadata_inplace(name: str, view_op: Any) -> Any:
    """``x.t_()``, ``x.unsqueeze_(0)``, ...: ``x`` itself takes the view's shape and strides (and, in a graph, the
    view's node, made from a stand-in for ``x``'s old self so the node does not point back at ``x``)."""

    def inplace(self: Tensor, *args: Any) -> Tensor:
        check_leaf_inplace(self, name)  # (which refreshes a view's grad_fn first)
        old = Tensor._make(self._data, self._device)
        old._grad_fn, old._output_nr, old.requires_grad = self._grad_fn, self._output_nr, self.requires_grad
        old._accumulator, old._base = self._accumulator, self._base
        view = view_op(old, *args)
        self._data = view._data
        if view.requires_grad:
            self._grad_fn, self._output_nr = view._grad_fn, view._output_nr
        self._bump_version()
        return self

    inplace.__name__ = inplace.__qualname__ = name
    return inplace


for _name, _view_op in (("transpose_", transpose), ("swapaxes_", transpose), ("swapdims_", transpose), ("t_", t),
                        ("squeeze_", squeeze), ("unsqueeze_", unsqueeze)):
    method(_name, _metadata_inplace(_name, _view_op))
