"""Indexing (``x[...]`` get and set), gather, index_select and scatter.

torch applies integer indices as ``select`` before it looks at tensor indices, unlike NumPy, which
treats ints next to arrays as advanced indices. So ``x[0, :, idx]`` on a (3, 4, 5) tensor is
(4, len(idx)) in torch and (len(idx), 4) in NumPy; these rules follow torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from .axes import wrap_dim
from .broadcast import broadcast_shapes, expand_shape
from .dims import UNKNOWN, Dim, Shape, differ
from .errors import RuleError


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


def _index_fits(shape: Shape, index: Shape, skip: int | None, arg: str, op: str) -> None:
    """gather/scatter: the index may not be larger than ``shape`` in any dim but ``skip``."""
    for at, (i, s) in enumerate(zip(index, shape)):
        if at != skip and isinstance(i, int) and isinstance(s, int) and i > s:
            raise RuleError("index_error_size_mismatch", op=op, ia=i, index=index, at=at, sa=s, arg=arg, shape=shape)


def _index_dim(shape: Shape, dim: int, index: Shape, op: str, code: str) -> int:
    d = wrap_dim(dim, len(shape), op, code)
    if len(index) != len(shape) and max(len(index), 1) != max(len(shape), 1):
        raise RuleError("index_error_rank_mismatch", op=op, index=index, expected=len(shape), shape=shape)
    return d


def gather_shape(shape: Shape, dim: int, index: Shape, op: str = "gather") -> Shape:
    """The result has the index's shape; the index must fit the input except along ``dim``."""
    d = _index_dim(shape, dim, index, op, "gather_error_dim_out_of_range")
    _index_fits(shape, index, d, "input", op)
    return index


def scatter_check(shape: Shape, dim: int, index: Shape, src: Shape | None, op: str = "scatter") -> Shape:
    """scatter/scatter_add/scatter_reduce: the result has the input's shape; index must fit both."""
    d = _index_dim(shape, dim, index, op, "scatter_error_dim_out_of_range")
    _index_fits(shape, index, d, "self", op)
    if src is not None:
        _index_fits(src, index, None, "src", op)
    return shape


def index_select_shape(shape: Shape, dim: int, index: Shape, op: str = "index_select") -> Shape:
    d = wrap_dim(dim, len(shape), op, "index_select_error_dim_out_of_range")
    if len(index) > 1:
        raise RuleError("index_error_rank_mismatch", op=op, index=index, expected="0 or 1", shape=shape)
    n: Dim = index[0] if index else 1
    if not shape:
        return ()
    return shape[:d] + (n,) + shape[d + 1 :]
