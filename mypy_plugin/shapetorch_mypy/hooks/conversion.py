"""dtype conversions: ``x.float()``, ``x.long()``, ... (``to(dtype)`` / ``type(dtype)``: the stub's type).
"""

from __future__ import annotations

from mypy.types import Type

from ._common import Handler, Op, Unknown


def to_dtype(fixed: str | None) -> Handler:
    def h(op: Op) -> Type:
        x = op.input()
        if fixed is not None:
            return op.result(x.shape, fixed, x.variadic)
        raise Unknown  # to(dtype) / type(dtype): the stub's Tensor[S, D2] is already exact

    return h
