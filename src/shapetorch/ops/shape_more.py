"""More shape ops: flip/roll/rot90, tile and Tensor.repeat, atleast_*, meshgrid, dsplit, narrow_copy,
repeat_interleave, as_strided, view_as_complex/view_as_real.

flip and roll copy (as in torch); as_strided and the complex views share storage with their input.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._dispatch import PRIMS, Prim
from .._errors import fail
from .._rules import joining as RJ
from .._rules.axes import wrap_dim
from .._rules.joining import dsplit_check
from .._rules.tiling import (
    atleast_shape,
    flip_dims,
    flip_lr_check,
    meshgrid_shape,
    repeat_interleave_shape,
    repeat_shape,
    roll_dims,
    rot90_dims,
    tile_shape,
)
from .._rules.views import as_strided_check, view_as_complex_shape
from .._tensor import Tensor
from ._common import check, dtype_name, int_list
from ._registry import method, public
from .views import _view_of

Arr = Any


def _linear_jvp(name: str) -> Any:
    return lambda ts, n: None if ts[0] is None else PRIMS[name](ts[0], **n.params)


def _ints(x: Any, op: str) -> tuple[int, ...]:
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return (int(x),)
    return int_list((x,), op)


# -- flip, roll, rot90 -----------------------------------------------------------------------------------

def _flip_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    return (_FLIP(g, axes=n.params["axes"]),)


_FLIP = Prim("flip", lambda a, axes: np.flip(a, axes).copy() if axes else a.copy(), _flip_vjp)
_FLIP.jvp = _linear_jvp("flip")


@public("shape")
def flip(input: Tensor, *args: Any, dims: Any = None) -> Tensor:
    """Reverse the order of elements along ``dims`` (a copy, as in torch)."""
    if dims is None and not args:
        raise TypeError("flip() missing 1 required positional argument: 'dims'")
    axes = check(flip_dims, input._data.shape, int_list(args if dims is None else (dims,), "flip"), op="flip")
    return _FLIP(input, axes=axes if input._data.ndim else ())


@public("shape")
def fliplr(input: Tensor) -> Tensor:
    check(flip_lr_check, input._data.shape, 2, op="fliplr")
    return flip(input, (1,))


@public("shape")
def flipud(input: Tensor) -> Tensor:
    check(flip_lr_check, input._data.shape, 1, op="flipud")
    return flip(input, (0,))


def _roll_kernel(a: Arr, shifts: tuple[int, ...], axes: tuple[int, ...] | None) -> Arr:
    return np.roll(a, shifts[0] if axes is None else shifts, axes)


def _roll_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    return (_ROLL(g, shifts=tuple(-s for s in n.params["shifts"]), axes=n.params["axes"]),)


_ROLL = Prim("roll", _roll_kernel, _roll_vjp)
_ROLL.jvp = _linear_jvp("roll")


@public("shape")
def roll(input: Tensor, shifts: int | Sequence[int], dims: int | Sequence[int] | None = None) -> Tensor:
    """Shift elements along ``dims`` cyclically; without dims, of the flattened tensor (shape kept)."""
    sh = _ints(shifts, "roll")
    ds = () if dims is None else _ints(dims, "roll")
    axes = check(roll_dims, input._data.shape, sh, ds, op="roll")
    if input._data.size == 0:
        out: Tensor = input.clone()
        return out
    return _ROLL(input, shifts=sh, axes=axes if ds else None)


@public("shape")
def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times in the plane of ``dims``, from the first dim towards the second."""
    a, b = check(rot90_dims, input._data.shape, list(dims), op="rot90")
    k %= 4
    if k == 1:
        return flip(input, (b,)).transpose(a, b)
    if k == 2:
        return flip(input, (a, b))
    if k == 3:
        return flip(input, (a,)).transpose(a, b)
    return input.clone()


# -- tile and Tensor.repeat -----------------------------------------------------------------------------


def _tiled(input: Tensor, reps: tuple[int, ...], shape: tuple[int, ...]) -> Tensor:
    """Copies of ``input`` along each dim: (1, s0, 1, s1, ...) expanded to (r0, s0, r1, s1, ...), merged."""
    n = len(shape)
    src = (1,) * (n - input._data.ndim) + tuple(input._data.shape)
    reps = (1,) * (n - len(reps)) + reps
    inter = tuple(x for s in src for x in (1, s))
    big = tuple(x for r, s in zip(reps, src) for x in (r, s))
    return input.reshape(inter).expand(big).reshape(shape)


@public("shape")
def tile(input: Tensor, dims: Sequence[int]) -> Tensor:
    """Repeat the whole tensor ``dims`` times per dim; shorter ``dims`` are left-padded with 1s."""
    reps = int_list((dims,), "tile")
    shape = check(tile_shape, input._data.shape, reps, op="tile")
    return _tiled(input, reps, shape)


def _repeat(self: Tensor, *sizes: Any) -> Tensor:
    """``Tensor.repeat``: tile with at least as many repeats as dims (einops' ``repeat`` is ``shapetorch.repeat``)."""
    if not sizes:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    reps = int_list(sizes, "repeat")
    shape = check(repeat_shape, self._data.shape, reps, op="repeat")
    return _tiled(self, reps, shape)


method("repeat", _repeat)


# -- atleast_*, meshgrid, dsplit, narrow_copy ---------------------------------------------------------------


def _atleast(rank: int, tensors: tuple[Any, ...]) -> Any:
    single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    items = list(tensors[0]) if len(tensors) == 1 and not single else list(tensors)
    out = tuple(t.reshape(atleast_shape(t._data.shape, rank)) for t in items)
    return out[0] if single else out


@public("shape", method=False)
def atleast_1d(*tensors: Any) -> Any:
    """A view with at least 1 dim; several tensors (or one sequence) give a tuple."""
    return _atleast(1, tensors)


@public("shape", method=False)
def atleast_2d(*tensors: Any) -> Any:
    return _atleast(2, tensors)


@public("shape", method=False)
def atleast_3d(*tensors: Any) -> Any:
    return _atleast(3, tensors)


@public("shape", method=False)
def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids: output i varies along dim i ('ij', the default) or with the first two swapped ('xy')."""
    items: list[Tensor] = list(tensors[0]) if len(tensors) == 1 and not isinstance(tensors[0], Tensor) else list(tensors)
    mode = indexing or "ij"
    shape = check(meshgrid_shape, [t._data.shape for t in items], mode, op="meshgrid")
    for t in items[1:]:
        if dtype_name(t) != dtype_name(items[0]):
            fail("dtype_error_mismatch", op="meshgrid", what="all tensors", a=items[0].dtype.name, b=t.dtype.name)
    n = len(items)
    out = []
    for i, t in enumerate(items):
        pos = (1 - i if i < 2 else i) if mode == "xy" and n >= 2 else i
        view = [1] * n
        view[pos] = -1
        out.append(t.reshape(view).expand(shape))
    return tuple(out)


@public("shape")
def dsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """Split along dim 2 (depth); an int must divide the size."""
    sections = indices_or_sections if isinstance(indices_or_sections, int) else None
    check(dsplit_check, input._data.shape, sections, op="dsplit")
    from .joining import tensor_split

    return tensor_split(input, indices_or_sections, 2)


@public("shape")
def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``narrow`` as a new tensor rather than a view."""
    check(RJ.narrow_bounds, input._data.shape, dim, start, length, op="narrow_copy")
    out: Tensor = input.narrow(dim, start, length).clone()
    return out


# -- repeat_interleave ------------------------------------------------------------------------------------------


@public("shape")
def repeat_interleave(input: Tensor, repeats: Any = None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """Repeat each element ``repeats`` times (an int, or one count per element along ``dim``);
    ``repeat_interleave(counts)`` alone repeats ``arange(len(counts))``."""
    from .creation import tensor

    if repeats is None:  # the one-argument overload: input holds the counts
        counts = input
        if counts._data.ndim > 1:
            fail("argument_error_invalid", op="repeat_interleave", problem="repeats must be a 0-dim or 1-dim tensor")
        _non_negative(_count_values(counts))
        arr = np.repeat(np.arange(counts._data.size), np.asarray(counts._data).reshape(-1).astype(np.int64))
        return tensor(arr.astype(np.int64), device=input.device)
    count = 0
    if isinstance(repeats, Tensor):
        counts_arr = _count_values(repeats).reshape(-1)
        rshape: int | tuple[int, ...] = tuple(repeats._data.shape)
        total: Any = None
    else:
        counts_arr = None
        rshape = count = int(repeats)
    check(repeat_interleave_shape, input._data.shape, rshape, dim, op="repeat_interleave")
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else check(wrap_dim, dim, x._data.ndim, "repeat_interleave")
    size = x._data.shape[d] if x._data.ndim else 1
    if counts_arr is not None:
        total = int(np.broadcast_to(counts_arr, (size,)).sum())
    shape = check(repeat_interleave_shape, input._data.shape, rshape, dim,
                  total if counts_arr is not None else 0, op="repeat_interleave")
    reps = _non_negative(np.broadcast_to(counts_arr if counts_arr is not None else np.int64(count), (size,)))
    index = np.repeat(np.arange(size), reps).astype(np.int64)
    if output_size is not None and output_size != index.size:
        fail("argument_error_invalid", op="repeat_interleave",
             problem=f"invalid output_size, expected {index.size} but got {output_size}")
    if x._data.ndim == 0:
        x = x.reshape(1)
    out: Tensor = x.index_select(d, tensor(index, device=input.device))
    return out.reshape(shape)


def _count_values(counts: Tensor) -> Arr:
    if counts.dtype.is_floating_point or counts.dtype.is_complex or dtype_name(counts) == "bool":
        fail("method_dtype_not_supported_error", op="repeat_interleave", dtype=counts.dtype.name, hint="")
    return np.asarray(counts._data)


def _non_negative(arr: Arr) -> Arr:
    if arr.size and arr.min() < 0:
        fail("argument_error_invalid", op="repeat_interleave", problem="repeats can not be negative")
    return arr


# -- as_strided ----------------------------------------------------------------------------------------------------


def _storage(t: Tensor) -> tuple[Arr, int, tuple[int, ...]]:
    """The flat storage a tensor views (its root NumPy buffer), its offset in it and its strides, in elements."""
    arr = t._data
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
    from .indexing_more import index_add

    p = n.params
    total = p["storage"].size
    out_pos = _positions(total, p["size"], p["stride"], p["offset"]).reshape(-1)
    in_pos = _positions(total, tuple(n.inputs[0]._data.shape), p["in_stride"], p["in_offset"])
    flat = index_add(g.new_zeros((total,)), 0, tensor(out_pos), g.reshape(-1))
    return (flat[tensor(in_pos)],)


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
    view = as_strided(self, size, stride, storage_offset)
    self._data = view._data
    self._bump_version()
    return self


method("as_strided_", _as_strided_)


# -- complex views ---------------------------------------------------------------------------------------------------

_COMPLEX_OF = {"float32": np.complex64, "float64": np.complex128}


def _vac_kernel(a: Arr) -> Arr:
    return a.view(_COMPLEX_OF[a.dtype.name])[..., 0]


def _var_kernel(a: Arr) -> Arr:
    return a[..., None].view(a.real.dtype)


def _vac_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    return (_VIEW_AS_REAL(g.contiguous()),)


def _var_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    return (_VIEW_AS_COMPLEX(g.contiguous()),)


_VIEW_AS_COMPLEX = Prim("view_as_complex", _vac_kernel, _vac_vjp)
_VIEW_AS_REAL = Prim("view_as_real", _var_kernel, _var_vjp)
_VIEW_AS_COMPLEX.jvp = lambda ts, n: None if ts[0] is None else _VIEW_AS_COMPLEX(ts[0].contiguous())
_VIEW_AS_REAL.jvp = lambda ts, n: None if ts[0] is None else _VIEW_AS_REAL(ts[0])


@public("shape", method=False)
def view_as_complex(input: Tensor) -> Tensor:
    """A complex view of a float tensor whose last dim (size 2, stride 1) holds real and imaginary parts."""
    name = dtype_name(input)
    if name not in _COMPLEX_OF:
        fail("method_dtype_not_supported_error", op="view_as_complex", dtype=name,
             hint=" (only float32 and float64 tensors; shapetorch has no complex32)")
    check(view_as_complex_shape, input._data.shape, op="view_as_complex")
    a = input._data
    item = a.dtype.itemsize
    if a.strides[-1] != item:
        fail("argument_error_invalid", op="view_as_complex", problem="tensor must have a last dimension with stride 1")
    off = a.__array_interface__["data"][0] - _storage(input)[0].__array_interface__["data"][0]
    if any(s % (2 * item) for s in a.strides[:-1]) or off % (2 * item):
        fail("argument_error_invalid", op="view_as_complex",
             problem="tensor must have a stride divisible by 2 for all but last dimension")
    return _view_of(_VIEW_AS_COMPLEX(input), input)


@public("shape", method=False)
def view_as_real(input: Tensor) -> Tensor:
    """A float view of a complex tensor with a new last dim of size 2 (real, imaginary)."""
    if not input.is_complex():
        fail("method_dtype_not_supported_error", op="view_as_real", dtype=dtype_name(input),
             hint=" (view_as_real is only supported for complex tensors)")
    return _view_of(_VIEW_AS_REAL(input), input)
