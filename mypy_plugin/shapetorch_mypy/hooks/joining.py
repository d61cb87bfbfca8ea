"""Joining and splitting: ``cat``, ``stack``, ``split``, ``chunk``, ``tensor_split``, ``unbind``, ``select``,
``narrow``.

Rules: ``shapetorch._rules.joining``.
"""

from __future__ import annotations

from collections.abc import Sequence

from mypy.nodes import ListExpr, TupleExpr
from mypy.types import TupleType, Type, get_proper_type

from shapetorch._rules.dims import UNKNOWN, Dim
from shapetorch._rules.joining import (
    cat_shape,
    chunk_sizes,
    cut_dim,
    narrow_shape,
    select_shape,
    split_sizes,
    stack_shape,
    tensor_split_bounds,
    unbind_shapes,
)

from ..args import int_or_ints
from ..convert import TensorInfo
from ._common import Op, Unknown, exact, join_dtype


def _tensor_list(op: Op, name: str) -> list[TensorInfo]:
    """A list or tuple of tensors of known shapes (cat, stack)."""
    a = op.call.get(name)
    if a is None:
        raise Unknown
    infos: list[TensorInfo | None]
    if isinstance(a.expr, (ListExpr, TupleExpr)):
        infos = [op.conv.tensor(op.ctx.api.get_expression_type(e)) for e in a.expr.items]
    else:
        p = get_proper_type(a.typ)
        if not isinstance(p, TupleType):
            raise Unknown
        infos = [op.conv.tensor(t) for t in p.items]
    if any(i is None or not i.exact for i in infos):
        raise Unknown
    return [i for i in infos if i is not None]


def cat(op: Op) -> Type:
    xs = _tensor_list(op, "tensors")
    return op.result(cat_shape([x.shape or () for x in xs], op.int_arg("dim", 0), op.name), join_dtype(op, xs))


def stack(op: Op) -> Type:
    xs = _tensor_list(op, "tensors")
    return op.result(stack_shape([x.shape or () for x in xs], op.int_arg("dim", 0), op.name), join_dtype(op, xs))


def _pieces(op: Op, x: TensorInfo, d: int, sizes: Sequence[Dim]) -> Type:
    shape = x.shape or ()
    items: list[Type] = [op.like(x, shape[:d] + (s,) + shape[d + 1 :]) for s in sizes]
    return TupleType(items, fallback=op.ctx.api.named_generic_type("builtins.tuple", [op.like(x, None)]))


def split(op: Op) -> Type:
    x = exact(op)
    shape = x.shape or ()
    d = cut_dim(len(shape), op.int_arg("dim", 0), op.name, "split_error_dim_out_of_range")
    size_ = shape[d]
    arg = int_or_ints(op.call.get("split_size_or_sections"))
    if arg is None:
        raise Unknown
    if not isinstance(size_, int):
        if isinstance(arg, list):
            return _pieces(op, x, d, arg)
        raise Unknown
    return _pieces(op, x, d, split_sizes(size_, arg, d, shape, op.name))


def _some_pieces(op: Op, x: TensorInfo, shape: Sequence[Dim]) -> Type:
    """As many pieces as the sizes decide, each of ``shape``: ``tuple[Tensor[shape, D], ...]``."""
    piece = op.like(x, tuple(shape))
    return op.ctx.api.named_generic_type("builtins.tuple", [piece])


def chunk(op: Op) -> Type:
    x = exact(op)
    shape = x.shape or ()
    n = op.int_arg("chunks")
    if n <= 0:
        chunk_sizes(0, n, op.name)  # the rule's check of `chunks` (it does not depend on the size)
    if op.call.given("dim") and op.call.int_arg("dim") is None:
        # A dim known only as an int: any dim may be the split one, so only the rank is kept.
        return _some_pieces(op, x, [UNKNOWN] * len(shape))
    d = cut_dim(len(shape), op.int_arg("dim", 0), op.name, "chunk_error_dim_out_of_range")
    size_ = shape[d]
    if not isinstance(size_, int):
        # A named or unknown size: the number of pieces and their size along d are not known; the other dims are.
        return _some_pieces(op, x, [*shape[:d], UNKNOWN, *shape[d + 1 :]])
    return _pieces(op, x, d, chunk_sizes(size_, n, op.name))


def unbind(op: Op) -> Type:
    x = exact(op)
    n, piece = unbind_shapes(x.shape or (), op.int_arg("dim", 0), op.name)
    if not isinstance(n, int):
        raise Unknown
    return TupleType([op.like(x, piece)] * n, fallback=op.ctx.api.named_generic_type("builtins.tuple", [op.like(x, piece)]))


def tensor_split(op: Op) -> Type:
    x = exact(op)
    shape = x.shape or ()
    d = cut_dim(len(shape), op.int_arg("dim", 0), op.name, "split_error_dim_out_of_range")
    size = shape[d]
    arg = int_or_ints(op.call.get("indices_or_sections"))
    if arg is None:
        raise Unknown
    if not isinstance(size, int):
        raise Unknown
    bounds = tensor_split_bounds(size, arg, op.name)
    pieces: list[Dim] = [b - a_ for a_, b in bounds]
    items_t: list[Type] = [op.like(x, shape[:d] + (p,) + shape[d + 1 :]) for p in pieces]
    return TupleType(items_t, fallback=op.ctx.api.named_generic_type("builtins.tuple", [op.like(x, None)]))


def select(op: Op) -> Type:
    x = exact(op)
    return op.like(x, select_shape(x.shape or (), op.int_arg("dim"), op.int_arg("index"), op.name))


def narrow(op: Op) -> Type:
    x = exact(op)
    return op.like(x, narrow_shape(x.shape or (), op.int_arg("dim"), op.int_arg("start"), op.int_arg("length"), op.name))
