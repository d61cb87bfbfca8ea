"""dtype conversions: ``x.float()``, ``x.long()``, ... (``to(dtype)`` / ``type(dtype)``: the stub's type), and
``F.one_hot`` (class indices to an int64 one-hot encoding; rule: ``shapetorch._rules.nn.one_hot_shape``).
"""

from __future__ import annotations

from mypy.types import Type

from shapetorch._rules.dims import UNKNOWN
from shapetorch._rules.nn import one_hot_shape

from ._common import Handler, Op, Unknown


def to_dtype(fixed: str | None) -> Handler:
    def h(op: Op) -> Type:
        x = op.input()
        if fixed is not None:
            return op.result(x.shape, fixed, x.variadic)
        raise Unknown  # to(dtype) / type(dtype): the stub's Tensor[S, D2] is already exact

    return h


def one_hot(op: Op) -> Type:
    """int64, with a last dim of ``num_classes`` when it is a literal (else a last dim of unknown size)."""
    x = op.input("tensor")
    if x.shape is None:
        raise Unknown
    n = op.call.int_arg("num_classes") if op.call.given("num_classes") else -1
    return op.result(one_hot_shape(x.shape, UNKNOWN if n is None else n, op.name), "int64", x.variadic)


FUNCTIONAL: dict[str, Handler] = {"one_hot": one_hot}
