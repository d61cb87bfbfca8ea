"""Indexing: ``x[index]`` and ``x[index] = value``.

Rules: ``shapetorch._rules.indexing``.
"""

from __future__ import annotations

from mypy.nodes import Expression, SliceExpr, TupleExpr
from mypy.types import Instance, TupleType, Type, get_proper_type

from shapetorch._rules.dims import UNKNOWN
from shapetorch._rules.indexing import TensorIndex, index_shape, setitem_value_shape

from ..args import bool_value, int_value, is_ellipsis, is_none
from ._common import Op, Unknown, exact


def _index_items(op: Op, expr: Expression, typ: Type) -> list[object]:
    exprs: list[Expression | None]
    types: list[Type | None]
    if isinstance(expr, TupleExpr):
        exprs, types = list(expr.items), [None] * len(expr.items)
    else:
        p = get_proper_type(typ)
        if isinstance(p, TupleType) and not isinstance(expr, SliceExpr):
            exprs, types = [None] * len(p.items), list(p.items)
        else:
            exprs, types = [expr], [typ]
    items: list[object] = []
    for e, t in zip(exprs, types):
        items.append(_index_item(op, e, t))
    return items


def _index_item(op: Op, e: Expression | None, t: Type | None) -> object:
    if isinstance(e, SliceExpr):
        parts: list[int | None] = []
        for part in (e.begin_index, e.end_index, e.stride):
            if part is None:
                parts.append(None)
                continue
            v = int_value(part, None)
            if v is None:
                t_part = op.ctx.api.get_expression_type(part)
                v = int_value(None, t_part)
                if v is None and not is_none(part, t_part):
                    return "unknown-slice"
            parts.append(v)
        return slice(*parts)
    if is_ellipsis(e):
        return Ellipsis
    if t is None and e is not None:
        t = op.ctx.api.get_expression_type(e)
    if is_none(e, t):
        return None
    v = int_value(e, t)
    if v is not None:
        return v
    if t is None:
        raise Unknown
    p = get_proper_type(t)
    if isinstance(p, Instance) and p.type.fullname == "builtins.ellipsis":
        return Ellipsis
    if isinstance(p, Instance) and p.type.fullname == "builtins.slice":
        return "unknown-slice"
    if isinstance(p, Instance) and p.type.fullname == "builtins.int":
        return "unknown-int"
    if bool_value(e, t) is not None:
        raise Unknown
    info = op.conv.tensor(t)
    if info is not None and info.exact:
        return TensorIndex(info.shape or (), boolean=info.dtype == "bool")
    raise Unknown


def getitem(op: Op) -> Type:
    x = exact(op)
    a = op.call.get("index") or op.call.get("indices")
    if a is None:
        raise Unknown
    items = _index_items(op, a.expr, a.typ)
    if any(isinstance(i, TensorIndex) for i in items) and any(isinstance(i, str) for i in items):
        raise Unknown
    # A non-literal int or slice stands in as a tensor index of the same effect (no bounds known).
    sub = [
        TensorIndex(()) if i == "unknown-int" else TensorIndex((UNKNOWN,)) if i == "unknown-slice" else i
        for i in items
    ]
    return op.like(x, index_shape(x.shape or (), sub, "index"))


def setitem(op: Op) -> Type:
    """``x[index] = value``: the value must broadcast to ``x[index]`` (torch drops its leading 1s)."""
    x = exact(op)
    index, value = op.call.by_name.get("index"), op.call.by_name.get("value")
    if index is None or value is None:  # a dunder's formals are unnamed to mypy
        if len(op.call.unnamed) != 2:
            raise Unknown
        index, value = op.call.unnamed
    if not index or not value:
        raise Unknown
    index_a, value_a = index[0], value[0]
    v = op.conv.tensor(value_a.typ)
    if v is None or not v.exact:
        raise Unknown
    items = _index_items(op, index_a.expr, index_a.typ)
    if "unknown-slice" in items or ("unknown-int" in items and any(isinstance(i, TensorIndex) for i in items)):
        raise Unknown
    # A lone non-literal int (a loop variable: ``out[:, t] = h``) drops its dim as a literal one would;
    # a 0-d tensor index has that effect without a value, so no bound is claimed.
    items = [TensorIndex(()) if i == "unknown-int" else i for i in items]
    target = index_shape(x.shape or (), items, "index")
    setitem_value_shape(v.shape or (), target, "index_put")
    return op.ctx.default_return_type
