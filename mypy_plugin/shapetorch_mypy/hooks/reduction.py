"""Reductions: ``sum``, ``mean``, ``amax``, ``argmax``, ``all``, ``std``, ``logsumexp``, ...

Rules: ``shapetorch._rules.reduction``.
"""

from __future__ import annotations

from mypy.types import Type

from shapetorch._rules import dtypes as DT
from shapetorch._rules.reduction import nonempty_reduce_shape, reduce_shape

from ._common import Handler, Op, Unknown, dtype_of


def reduction(dtype: str, nonempty: bool = False) -> Handler:
    """``nonempty``: the reduction has no value over an empty slice (amax, argmax, ...)."""
    rule = nonempty_reduce_shape if nonempty else reduce_shape

    def h(op: Op) -> Type:
        x = op.input()
        dim = op.dims("dim")
        keep = op.bool_arg("keepdim")
        if x.dtype and not op.call.given("dtype"):  # mean(x, dtype=...) computes in that dtype
            DT.check_kind(op.name, x.dtype)
        dt = dtype_of(op, x, dtype)
        if x.shape is None:
            raise Unknown
        if x.variadic is not None:
            dl = [dim] if isinstance(dim, int) else dim
            if not dl or any(not -len(x.shape) <= d < 0 for d in dl):
                raise Unknown
            return op.result(rule(x.shape, dl, keep, op.name), dt, x.variadic)
        return op.result(rule(x.shape, dim, keep, op.name), dt)

    return h
