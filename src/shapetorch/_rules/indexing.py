"""Indexing (``x[...]`` get and set), gather, index_select and scatter.

torch applies integer indices as ``select`` before it looks at tensor indices, unlike NumPy, which
treats ints next to arrays as advanced indices. So ``x[0, :, idx]`` on a (3, 4, 5) tensor is
(4, len(idx)) in torch and (len(idx), 4) in NumPy; these rules follow torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from .broadcast import broadcast_shapes, expand_shape
from .dims import UNKNOWN, Dim, Shape, differ
from .errors import RuleError, invalid_value


class TensorIndex(NamedTuple):
    """A tensor (or list) used as an index: its shape, whether it is a mask, and how many Trues."""

    dims: Shape
    boolean: bool = False
    trues: Dim = UNKNOWN


def _consumed(item: object) -> int:
    if isinstance(item, TensorIndex):
        return len(item.dims) if item.boolean else 1
    return 1 if isinstance(item, (int, slice)) else 0


def slice_length(size: Dim, s: slice, op: str = "index") -> Dim:
    step = 1 if s.step is None else s.step
    if step <= 0:
        raise RuleError("slice_error_out_of_bounds", op=op, step=step)
    if isinstance(size, int):
        return len(range(*s.indices(size)))
    return size if s.start in (None, 0) and s.stop is None and step == 1 else UNKNOWN


def index_shape(shape: Shape, index: Sequence[object], op: str = "index") -> Shape:
    """The shape of ``x[index]`` for a tuple of ints, slices, None, Ellipsis and TensorIndex."""
    items = list(index)
    if sum(1 for it in items if it is Ellipsis) > 1:
        raise RuleError("index_error_multiple_ellipsis", op=op, index=tuple(items))
    used = sum(_consumed(it) for it in items)
    if used > len(shape):
        raise RuleError("index_error_too_many_indices", op=op, rank=len(shape), shape=shape, index=tuple(items))
    if Ellipsis not in items:
        items.append(Ellipsis)
    pos, out = 0, list[Dim]()
    advanced: list[tuple[int, Shape]] = []  # (where in the output, the shape it contributes)
    for it in items:
        if it is None:
            out.append(1)
        elif it is Ellipsis:
            fill = len(shape) - used
            out.extend(shape[pos : pos + fill])
            pos += fill
        elif isinstance(it, TensorIndex):
            if it.boolean:
                k = len(it.dims)
                for j, (m, d) in enumerate(zip(it.dims, shape[pos : pos + k])):
                    if differ(m, d):
                        raise RuleError("index_error_mask_shape", op=op, mask=it.dims, i=j, shape=shape)
                advanced.append((len(out), (it.trues,)))
                pos += k
            else:
                advanced.append((len(out), it.dims))
                pos += 1
        elif isinstance(it, int):
            size = shape[pos]
            if isinstance(size, int) and not -size <= it < size:
                raise RuleError("at_error_index_out_of_bounds", op=op, index=it, dim=pos, size=size)
            pos += 1
        elif isinstance(it, slice):
            out.append(slice_length(shape[pos], it, op))
            pos += 1
        else:
            raise RuleError("index_error_invalid_index", op=op, index=repr(it))
    if not advanced:
        return tuple(out)
    try:
        joint = broadcast_shapes(*(s for _, s in advanced))
    except RuleError:
        raise RuleError("index_error_broadcast", op=op, shapes=", ".join(str(s) for _, s in advanced)) from None
    where = advanced[0][0] if len({w for w, _ in advanced}) == 1 else 0
    return tuple(out[:where]) + joint + tuple(out[where:])


def setitem_value_shape(value: Shape, target: Shape, op: str = "index_put") -> Shape:
    """The value of ``x[index] = value`` must broadcast to ``x[index]``; torch drops its leading 1s first."""
    while len(value) > len(target) and value[0] == 1:
        value = value[1:]
    try:
        return expand_shape(value, target, op)
    except RuleError:
        raise RuleError("setitem_error_shape_mismatch", op=op, value=value, shape=target) from None


def unravel_index_shape(index: Shape, shape: Sequence[int], op: str = "unravel_index") -> tuple[Shape, ...]:
    if any(s < 0 for s in shape):
        raise invalid_value(op, f"'shape' cannot have negative values, but got {tuple(shape)}")
    return tuple(tuple(index) for _ in shape)
