"""Tiling and rearranging copies: flip/fliplr/flipud, roll, rot90, tile and Tensor.repeat, repeat_interleave,
atleast_*, meshgrid, cartesian_prod, combinations."""

from __future__ import annotations

import builtins
import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._engine.primitives import PRIMS, Prim
from .._errors import fail
from .._rules.axes import wrap_dim
from .._rules.tiling import (
    atleast_shape,
    cartesian_prod_shape,
    combinations_shape,
    flip_dims,
    flip_lr_check,
    meshgrid_shape,
    repeat_interleave_shape,
    repeat_shape,
    roll_dims,
    rot90_dims,
    tile_shape,
)
from .._tensor import Tensor
from ._common import as_node, check, dtype_name, int_list, new_tensor
from ._registry import _guarded, method, public

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
    if dims is not None and args:  # flip(x, 0, dims=(1,)): dims given twice
        fail("argument_error_signature", op="flip", problem="got multiple values for argument 'dims'")
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


@public("shape", method=False)
def tile(input: Tensor, dims: Sequence[int]) -> Tensor:
    """Repeat the whole tensor ``dims`` times per dim; shorter ``dims`` are left-padded with 1s."""
    return _tile(input, dims)


def _tile(self: Tensor, *dims: Any) -> Tensor:
    """``Tensor.tile``: as torch, the method also takes the counts as varargs (``x.tile(2, 3)``), the function
    only one sequence (``torch.tile(x, 2, 3)`` is a TypeError)."""
    reps = int_list(dims, "tile")
    shape = check(tile_shape, self._data.shape, reps, op="tile")
    return as_node(_tiled(self, reps, shape), "RepeatBackward0", self)


method("tile", _guarded("tile", _tile))


def _repeat(self: Tensor, *repeats: Any) -> Tensor:
    """``Tensor.repeat``: tile with at least as many repeats as dims (einops' ``repeat`` is ``shapetorch.repeat``)."""
    reps = int_list(repeats, "repeat")
    shape = check(repeat_shape, self._data.shape, reps, op="repeat")
    return as_node(_tiled(self, reps, shape), "RepeatBackward0", self)


method("repeat", _guarded("repeat", _repeat))  # a method only, behind its argument guard


# -- atleast_*, meshgrid ------------------------------------------------------------------------------------


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
        if not isinstance(repeats, (int, np.integer)) or isinstance(repeats, bool):  # torch's parser: an int only
            fail("argument_error_type", op="repeat_interleave", name="repeats", position=" (position 2)",
                 expected="Tensor or int", got=type(repeats).__name__)
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
