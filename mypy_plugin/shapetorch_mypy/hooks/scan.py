"""Ops along one dim that keep the shape: ``cumsum``, ``cumprod``, ``logcumsumexp``, ``cummax``/``cummin``
(``(values, indices)``), and ``softmax``/``log_softmax``/``softmin``, which share the dim check; and ``gradient``
(one input-shaped tensor per dim).

Rules: ``shapetorch._rules.scan`` (``cum_shape``, ``gradient_shapes``); ``wrap_dim`` of ``shapetorch._rules.axes``.
"""

from __future__ import annotations

from mypy.types import TupleType, Type

from shapetorch._rules import dtypes as DT
from shapetorch._rules.axes import wrap_dim
from shapetorch._rules.scan import cum_extreme_shape, gradient_shapes

from ..args import int_or_ints, is_none
from ._common import Handler, Op, Unknown, dtype_of, exact, values_indices


def along_dim(code: str, dtype: str = "same") -> Handler:
    """Shape-preserving ops along one dim (softmax, cumsum, ...): the dim must exist."""

    def h(op: Op) -> Type:
        x = op.input()
        a = op.call.get("dim")
        if a is not None and x.exact and not is_none(a.expr, a.typ):
            wrap_dim(op.int_arg("dim"), len(x.shape or ()), op.name, code)
        if x.dtype and not op.call.given("dtype"):  # softmax(x, dtype=...) computes in that dtype
            DT.check_kind(op.name, x.dtype)
        return op.result(x.shape, dtype_of(op, x, dtype), x.variadic)

    return h


def cum_values_indices(op: Op) -> Type:
    x = op.input()
    if x.exact:
        cum_extreme_shape(x.shape or (), op.int_arg("dim"), op.name)
    return values_indices(op, x, x.shape, x.variadic)


def gradient(op: Op) -> Type:
    """``gradient(input, *, spacing, dim, edge_order)``: a tuple of one input-shaped tensor per dim (every dim when
    ``dim`` is None), integers estimated in the default float dtype."""
    x = exact(op)
    a = op.call.get("dim")
    dim: int | list[int] | None = None
    if a is not None and not is_none(a.expr, a.typ):
        dim = int_or_ints(a)
        if dim is None:
            raise Unknown
    shapes = gradient_shapes(x.shape or (), dim, op.int_arg("edge_order", 1), op.name)
    integral = x.dtype is not None and DT.is_integral(x.dtype) and x.dtype != "bool"
    dt = dtype_of(op, x, "float") if integral else x.dtype_type  # (the default float dtype: float32)
    pieces = [op.result(s, dt) for s in shapes]
    return TupleType(pieces, fallback=op.ctx.api.named_generic_type("builtins.tuple", [op.result(x.shape, dt)]))
