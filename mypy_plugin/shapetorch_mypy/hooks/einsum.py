"""Einstein summation: ``einsum``.

Rules: ``shapetorch._rules.einsum``, imported on the first ``einsum`` call (it is not needed to start mypy).
"""

from __future__ import annotations

from mypy.nodes import ListExpr, TupleExpr
from mypy.types import Type

from ._common import Op, Unknown, join_dtype


def einsum(op: Op) -> Type:
    from shapetorch._rules.einsum import einsum_shape

    eq = op.call.str_arg("equation")
    if eq is None:
        raise Unknown
    operands = op.call.all("operands")
    if len(operands) == 1 and isinstance(operands[0].expr, (ListExpr, TupleExpr)):
        infos = [op.conv.tensor(op.ctx.api.get_expression_type(e)) for e in operands[0].expr.items]
    else:
        infos = [op.conv.tensor(a.typ) for a in operands]
    if not infos or any(i is None or not i.exact for i in infos):
        raise Unknown
    xs = [i for i in infos if i is not None]
    shape = einsum_shape(eq, *(x.shape or () for x in xs))
    return op.result(tuple(shape), join_dtype(op, xs))
