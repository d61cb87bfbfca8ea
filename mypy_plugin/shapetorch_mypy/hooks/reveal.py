"""``reveal_shape(x)``: a note with the shape and dtype that mypy sees.
"""

from __future__ import annotations

from mypy.types import AnyType, Type, get_proper_type

from ..convert import fmt_dims
from ._common import Op


def reveal_shape(op: Op) -> Type:
    a = op.call.get("tensor")
    info = op.conv.tensor(a.typ) if a else None
    if info is not None:
        dtype = info.dtype or str(info.dtype_type)
        op.ctx.api.msg.note(f"Shape: {fmt_dims(info)}  dtype: {dtype}", op.ctx.context)
    elif a is not None and isinstance(get_proper_type(a.typ), AnyType):
        # Silence here would read as "the plugin is not running"; say where the shape was lost instead.
        op.ctx.api.msg.note("Shape: unknown (the argument is Any, not a typed Tensor)  dtype: unknown", op.ctx.context)
    return op.ctx.default_return_type
