"""Sorts and order statistics: topk, kthvalue, the one-dim selections (median, mode along a dim),
searchsorted, bucketize, unique. Sizes that depend on the data (``unique``) are :data:`UNKNOWN`."""

from __future__ import annotations

from .axes import wrap_dim
from .dims import UNKNOWN, Shape, differ
from .errors import RuleError, invalid_argument
from .reduction import reduce_shape


def topk_shape(shape: Shape, k: int, dim: int = -1, op: str = "topk") -> Shape:
    """The size at ``dim`` becomes ``k``; ``0 <= k <= size`` (a 0-d tensor has size 1)."""
    d = wrap_dim(dim, len(shape), op)
    size = shape[d] if shape else 1
    if k < 0 or (isinstance(size, int) and k > size):
        raise invalid_argument(op, f"selected index k out of range (k={k}, size {size} at dimension {d})")
    return tuple(k if i == d else s for i, s in enumerate(shape))


def kthvalue_shape(shape: Shape, k: int, dim: int = -1, keepdim: bool = False, op: str = "kthvalue") -> Shape:
    """One dim reduced; ``1 <= k <= size``."""
    d = wrap_dim(dim, len(shape), op)
    size = shape[d] if shape else 1
    if size == 0:
        raise RuleError("reduction_error_empty_input", op=op, shape=shape)
    if k < 1 or (isinstance(size, int) and k > size):
        raise invalid_argument(op, f"selected number k out of range for dimension {d} (k={k}, size {size})")
    return reduce_shape(shape, d, keepdim, op) if shape else ()


def select_reduce_shape(shape: Shape, dim: int, keepdim: bool = False, op: str = "median") -> Shape:
    """median/mode/nanmedian with a dim: one dim reduced; the dim must not be empty."""
    d = wrap_dim(dim, len(shape), op)
    if shape and shape[d] == 0:
        raise RuleError("reduction_error_empty_input", op=op, shape=shape)
    return reduce_shape(shape, d, keepdim, op) if shape else ()


def searchsorted_shape(seq: Shape, values: Shape, op: str = "searchsorted") -> Shape:
    """``seq`` 1-D, or its leading dims equal to those of ``values``; the output has the shape of ``values``."""
    if len(seq) == 0:
        raise invalid_argument(op, "boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor "
                       "and input value tensor must match, but we got a 0-d boundaries tensor")
    if len(seq) > 1 and (len(seq) != len(values) or any(differ(a, b) for a, b in zip(seq[:-1], values[:-1]))):
        raise invalid_argument(op, "boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor and "
                       f"input value tensor must match, but we got boundaries tensor {tuple(seq)} and input value "
                       f"tensor {tuple(values)}")
    return values


def bucketize_shape(input: Shape, boundaries: Shape, op: str = "bucketize") -> Shape:
    if len(boundaries) != 1:
        raise invalid_argument(op, f"boundaries tensor must be 1 dimension, but got dim({len(boundaries)})")
    return input


def unique_shapes(shape: Shape, dim: int | None = None, op: str = "unique") -> tuple[Shape, Shape, Shape]:
    """(output, inverse, counts): the number of unique elements (or slices) is known only at run time."""
    if dim is None:
        return (UNKNOWN,), shape, (UNKNOWN,)
    d = wrap_dim(dim, len(shape), op)
    if not shape:
        return (UNKNOWN,), shape, (UNKNOWN,)
    return tuple(UNKNOWN if i == d else s for i, s in enumerate(shape)), (shape[d],), (UNKNOWN,)
