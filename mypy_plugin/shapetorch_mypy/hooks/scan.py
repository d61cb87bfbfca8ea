"""Ops along one dim that keep the shape: ``cumsum``, ``cumprod``, ``logcumsumexp``, ``cummax``/``cummin``
(``(values, indices)``), and ``softmax``/``log_softmax``/``softmin``, which share the dim check.

Rules: ``shapetorch._rules.scan`` (``cum_shape``); ``wrap_dim`` of ``shapetorch._rules.axes``.
"""

from __future__ import annotations

from mypy.types import Type

from shapetorch._rules import dtypes as DT
from shapetorch._rules.axes import wrap_dim
from shapetorch._rules.scan import cum_extreme_shape

from ..args import is_none
from ._common import Handler, Op, dtype_of, values_indices


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
