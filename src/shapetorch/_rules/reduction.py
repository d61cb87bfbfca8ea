"""Reductions over one dim, several dims, or all of them, with keepdim."""

from __future__ import annotations

from collections.abc import Sequence

from .axes import wrap_dims
from .dims import Shape
from .errors import RuleError


def reduce_dims(rank: int, dim: int | Sequence[int] | None, op: str = "sum") -> tuple[int, ...]:
    """The non-negative dims a reduction runs over; ``None`` and ``()`` mean all of them."""
    if dim is None:
        return tuple(range(rank))
    dims = wrap_dims([dim] if isinstance(dim, int) else dim, rank, op)
    if rank == 0:  # a 0-d tensor accepts dim 0 and -1 (checked above) and has nothing to reduce over
        return ()
    return dims if dims else tuple(range(rank))


def reduce_shape(shape: Shape, dim: int | Sequence[int] | None = None, keepdim: bool = False, op: str = "sum") -> Shape:
    dims = reduce_dims(len(shape), dim, op)
    if keepdim:
        return tuple(1 if i in dims else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in dims)


def check_nonempty(shape: Shape, dims: Sequence[int], op: str = "amax") -> None:
    """The reductions that have no value over nothing (amax, argmax, max along a dim): no reduced dim may be
    empty, and with no dims to reduce over (a full reduction of a 0-d tensor) the input may not be empty."""
    if any(shape[i] == 0 for i in dims) or (not dims and any(s == 0 for s in shape)):
        raise RuleError("reduction_error_empty_input", op=op, shape=shape)


def nonempty_reduce_shape(shape: Shape, dim: int | Sequence[int] | None = None, keepdim: bool = False,
                          op: str = "amax") -> Shape:
    """:func:`reduce_shape` for the reductions that need at least one element in each reduced slice."""
    check_nonempty(shape, reduce_dims(len(shape), dim, op), op)
    return reduce_shape(shape, dim, keepdim, op)
