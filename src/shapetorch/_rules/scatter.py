"""The gather/scatter family and the index_* ops: gather, scatter(_add/_reduce), index_select,
index_add/copy/fill, the *_scatter ops and take_along_dim. The index must fit the input except along
``dim``; the result has the index's shape (gather) or the input's (scatter)."""

from __future__ import annotations

from .axes import wrap_dim
from .broadcast import broadcast_shapes
from .dims import Dim, Shape, differ, prod
from .errors import RuleError, invalid_argument


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
        if isinstance(n, int) and n != 1:
            raise invalid_argument(op, f"Index to scalar can have only 1 value, got {n} value(s)")
        return ()
    return shape[:d] + (n,) + shape[d + 1 :]


def src_matches(src: Shape, expected: Shape, op: str) -> Shape:
    """select/slice/diagonal_scatter: ``src`` must have exactly the shape of the slice it fills."""
    if len(src) != len(expected) or any(differ(x, y) for x, y in zip(src, expected)):
        raise RuleError("setitem_error_shape_mismatch", op=op, value=src, shape=expected)
    return expected


def index_add_check(shape: Shape, dim: int, index: Shape, source: Shape, op: str = "index_add") -> int:
    """index_add/index_copy/index_reduce: a 0-d or 1-d index; ``source`` is ``self`` with dim sized len(index).

    A 0-d self takes a 0-d source and one index (index_copy also a source of one entry per index)."""
    d = wrap_dim(dim, len(shape), op)
    if len(index) > 1:
        raise RuleError("index_error_rank_mismatch", op=op, index=index, expected="0 or 1", shape=shape)
    n: Dim = index[0] if index else 1
    if not shape:
        one_each = op == "index_copy" and len(source) == 1 and not differ(source[0], n)
        if not one_each and (source or differ(n, 1)):
            raise RuleError("setitem_error_shape_mismatch", op=op, value=source, shape=(n,) if source else ())
        return d
    expected = tuple(shape[:d]) + (n,) + tuple(shape[d + 1 :])
    if len(source) != len(expected) or any(differ(x, y) for x, y in zip(source, expected)):
        raise RuleError("setitem_error_shape_mismatch", op=op, value=source, shape=expected)
    return d


def take_along_dim_shape(shape: Shape, index: Shape, dim: int | None, op: str = "take_along_dim") -> Shape:
    """Without dim: the flattened index's length (into the flattened input). With dim: the ranks must be equal; the
    other dims broadcast and ``dim`` takes the index's size."""
    if dim is None:
        return (prod(index),)
    if not shape:
        raise RuleError("dimension_error_zero_dim", op=op)
    d = wrap_dim(dim, len(shape), op)
    if len(index) != len(shape):
        raise RuleError("index_error_rank_mismatch", op=op, index=index, expected=len(shape), shape=shape)
    if not shape:
        return ()
    rest = broadcast_shapes(tuple(shape[:d]) + (1,) + tuple(shape[d + 1 :]),
                            tuple(index[:d]) + (1,) + tuple(index[d + 1 :]), op=op)
    return tuple(rest[:d]) + (index[d],) + tuple(rest[d + 1 :])
