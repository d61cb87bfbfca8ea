"""In-place operators and methods: ``x += y``, ``x.add_(y)``, ...: the result must keep ``x``'s shape.

Rules: ``shapetorch._rules.inplace`` (and ``broadcast_shapes`` for the out-of-place result).
"""

from __future__ import annotations

from mypy.plugin import MethodContext
from mypy.types import Type

from shapetorch._rules.broadcast import broadcast_shapes
from shapetorch._rules.inplace import inplace_shape

from ._common import Handler, Op, Unknown


def inplace(binary_op: str) -> Handler:
    """``x += y`` / ``x.add_(y)``: the out-of-place result must keep ``x``'s shape; the result is x."""

    def h(op: Op) -> Type:
        assert isinstance(op.ctx, MethodContext)
        x = op.input()
        a = op.call.get("other") or (op.call.unnamed[0][0] if op.call.unnamed and op.call.unnamed[0] else None)
        if a is None:
            raise Unknown
        other = op.conv.tensor(a.typ)
        if other is None or not x.exact or not other.exact:
            return op.ctx.default_return_type
        out = broadcast_shapes(x.shape or (), other.shape or (), op=binary_op)
        inplace_shape(x.shape or (), out, op.name)
        return op.ctx.default_return_type

    return h
