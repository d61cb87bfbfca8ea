"""``reveal_shape(x)``: a note with the shape and dtype that mypy sees.
"""

from __future__ import annotations

from mypy.types import Type

from ..convert import fmt_dims
from ._common import Op


def reveal_shape(op: Op) -> Type:
    a = op.call.get("tensor")
    info = op.conv.tensor(a.typ) if a else None
    if info is not None:
        dtype = info.dtype or str(info.dtype_type)
        op.ctx.api.msg.note(f"Shape: {fmt_dims(info)}  dtype: {dtype}", op.ctx.context)
    return op.ctx.default_return_type
