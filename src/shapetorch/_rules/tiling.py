"""Tiling, flipping, rolling, grids and combinations: tile/repeat, flip/roll/rot90, atleast_*,
repeat_interleave, meshgrid, cartesian_prod, combinations."""

from __future__ import annotations

from collections.abc import Sequence

from .axes import wrap_dim, wrap_dims
from .dims import UNKNOWN, Dim, Shape, differ, dim_mul, prod
from .errors import RuleError, invalid_argument


def tile_shape(shape: Shape, reps: Sequence[int], op: str = "tile") -> Shape:
    """``tile``: shape or reps left-padded with 1s, then multiplied elementwise."""
    n = max(len(shape), len(reps))
    s = (1,) * (n - len(shape)) + tuple(shape)
    r = (1,) * (n - len(reps)) + tuple(reps)
    out = tuple(dim_mul(a, b) for a, b in zip(s, r))
    for d in out:
        if isinstance(d, int) and d < 0:
            raise invalid_argument(op, f"trying to create a tensor with negative dimension {d}: {list(out)}")
    return out


def repeat_shape(shape: Shape, sizes: Sequence[int], op: str = "repeat") -> Shape:
    """``Tensor.repeat``: as :func:`tile` but ``sizes`` may not be shorter than the rank."""
    if len(sizes) < len(shape):
        raise invalid_argument(op, f"number of dimensions of repeat dims ({len(sizes)}) can not be smaller than the number "
                       f"of dimensions of the tensor ({len(shape)})")
    return tile_shape(shape, sizes, op)


def flip_dims(shape: Shape, dims: Sequence[int], op: str = "flip") -> tuple[int, ...]:
    """``flip``: each dim in range (a 0-d tensor takes 0 and -1), none repeated."""
    return wrap_dims(dims, len(shape), op, "flip_error_dim_out_of_range")


def roll_dims(shape: Shape, shifts: Sequence[int], dims: Sequence[int], op: str = "roll") -> tuple[int, ...]:
    """``roll``: one shift per dim (without dims: a single shift of the flattened tensor)."""
    if not shifts:
        raise invalid_argument(op, "`shifts` required")
    if len(shifts) != len(dims) and not (not dims and len(shifts) == 1):
        raise invalid_argument(op, f"shifts and dimensions must align. shifts: {len(shifts)}, dims: {len(dims)}")
    if any(s == 0 for s in shape):  # torch returns an empty tensor before it looks at dims
        return ()
    if dims and not shape:
        raise RuleError("dimension_error_zero_dim", op=op)
    return tuple(wrap_dim(d, len(shape), op) for d in dims)


def rot90_dims(shape: Shape, dims: Sequence[int], op: str = "rot90") -> tuple[int, int]:
    if len(dims) != 2:
        raise invalid_argument(op, f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if len(shape) < 2:
        raise invalid_argument(op, f"expected total dims >= 2, but got total dims = {len(shape)}")
    a, b = wrap_dim(dims[0], len(shape), op), wrap_dim(dims[1], len(shape), op)
    if a == b:
        raise invalid_argument(op, f"expected rotation dims to be different, but got dim0 = {a} and dim1 = {b}")
    return a, b


def flip_lr_check(shape: Shape, rank: int, op: str) -> Shape:
    """``fliplr`` needs 2 dims, ``flipud`` one."""
    if len(shape) < rank:
        raise invalid_argument(op, f"input must be >= {rank}-d, got shape {tuple(shape)}")
    return shape


def atleast_shape(shape: Shape, rank: int) -> Shape:
    """``atleast_1d/2d/3d``: 0-d -> (1,)*rank; 1-d (n) -> (1, n) / (1, n, 1); 2-d (m, n) -> (m, n, 1)."""
    if len(shape) >= rank:
        return shape
    if not shape:
        return (1,) * rank
    if rank == 2 or len(shape) == 2:
        return ((1,) + tuple(shape)) if len(shape) == 1 else tuple(shape) + (1,)
    return (1, shape[0], 1)


def repeat_interleave_shape(shape: Shape, repeats: int | Shape, dim: int | None, total: Dim = UNKNOWN,
                            op: str = "repeat_interleave") -> Shape:
    """Int ``repeats`` scale the dim; a tensor of repeats (0-d or one per element) gives ``total``."""
    if dim is not None and not shape:
        raise RuleError("dimension_error_zero_dim", op=op)
    if dim is None:
        size: Dim = prod(shape)
        out: Shape = (size,)
        d = 0
    else:
        d = wrap_dim(dim, len(shape), op)
        size = shape[d] if shape else 1
        out = tuple(shape) if shape else (1,)
    if isinstance(repeats, int):
        if repeats < 0:
            raise invalid_argument(op, "repeats must be non-negative")
        new: Dim = dim_mul(size, repeats)
    else:
        if len(repeats) > 1:
            raise invalid_argument(op, "repeats must be a 0-dim or 1-dim tensor")
        if repeats and repeats[0] != 1 and differ(repeats[0], size):
            raise invalid_argument(op, f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{repeats[0]!r} and input.size({d}) = {size!r}")
        new = total
    return out[:d] + (new,) + out[d + 1 :]


def meshgrid_shape(shapes: Sequence[Shape], indexing: str = "ij", op: str = "meshgrid") -> Shape:
    """Every input 0-d or 1-d; the output shape lists their sizes (first two swapped for 'xy')."""
    if not shapes:
        raise invalid_argument(op, "expects a non-empty list of tensors")
    if indexing not in ("ij", "xy"):
        raise invalid_argument(op, f'indexing must be one of "xy" or "ij", but received: {indexing}')
    sizes: list[Dim] = []
    for s in shapes:
        if len(s) > 1:
            raise invalid_argument(op, f"expected 0-d or 1-d tensors in the tensor list but got shape {tuple(s)}")
        sizes.append(s[0] if s else 1)
    if indexing == "xy" and len(sizes) >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    return tuple(sizes)


def cartesian_prod_shape(shapes: Sequence[Shape], op: str = "cartesian_prod") -> Shape:
    if not shapes:
        raise invalid_argument(op, "expects a non-empty TensorList")
    total: Dim = 1
    for s in shapes:
        if len(s) != 1:
            raise invalid_argument(op, f"expect a 1D vector, but got shape {tuple(s)}")
        total = dim_mul(total, s[0])
    return (total,) if len(shapes) == 1 else (total, len(shapes))


def combinations_shape(shape: Shape, r: int = 2, with_replacement: bool = False, op: str = "combinations") -> Shape:
    if len(shape) != 1:
        raise invalid_argument(op, f"Expect a 1D vector, but got shape {tuple(shape)}")
    if r < 0:
        raise invalid_argument(op, f"Expect a non-negative number, but got {r}")
    if r == 0:
        return (0,)
    n = shape[0]
    if not isinstance(n, int):
        return (UNKNOWN, r)
    count = _comb(n + r - 1, r) if with_replacement else _comb(n, r)
    return (count, r)


def _comb(n: int, r: int) -> int:
    if r > n or n < 0:
        return 0
    out = 1
    for i in range(r):
        out = out * (n - i) // (i + 1)
    return out
