"""Matrix products: ``@``, ``matmul``, ``mm``, ``bmm``, ``mv``, ``dot``, ``inner``, ``outer``, ``ger``.

Rules: ``shapetorch._rules.matmul``.
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.types import Type

from shapetorch._rules.dims import Shape
from shapetorch._rules.errors import RuleError
from shapetorch._rules.matmul import matmul_shape

from ..convert import TensorInfo
from ._common import Handler, Op, anything_variadic


def _same_dtype(op: Op, a: TensorInfo, b: TensorInfo) -> Type:
    if a.dtype and b.dtype and a.dtype != b.dtype:
        raise RuleError("dtype_error_mismatch", op=op.name, what="both arguments", a=a.dtype, b=b.dtype)
    return a.dtype_type if a.dtype else (b.dtype_type if b.dtype else op.default_dtype())


def matmul(reverse: bool = False, other: str = "other") -> Handler:
    def h(op: Op) -> Type:
        a, b = op.input(), op.tensor_arg(other)
        if reverse:
            a, b = b, a
        dtype = _same_dtype(op, a, b)
        if a.exact and b.exact:
            return op.result(matmul_shape(a.shape or (), b.shape or (), op.name), dtype)
        if a.shape is None or b.shape is None:
            return op.result(None, dtype)
        if a.variadic is not None and len(a.shape) >= 2 and b.exact and len(b.shape) in (1, 2):
            return op.result(matmul_shape(a.shape, b.shape, op.name), dtype, a.variadic)
        if b.variadic is not None and len(b.shape) >= 2 and a.exact and len(a.shape) in (1, 2):
            return op.result(matmul_shape(a.shape, b.shape, op.name), dtype, b.variadic)
        if len(a.shape) >= 2 and len(b.shape) >= 2:  # batch dims unknown: still check the matrices
            out = matmul_shape(a.shape[-2:], b.shape[-2:], op.name)
            return op.result(out, dtype, anything_variadic(op))
        return op.result(None, dtype)

    return h


def strict_matmul(rule: Callable[[Shape, Shape, str], Shape], other: str) -> Handler:
    def h(op: Op) -> Type:
        a, b = op.input(), op.tensor_arg(other)
        dtype = _same_dtype(op, a, b)
        if not (a.exact and b.exact):
            return op.result(None, dtype)
        return op.result(rule(a.shape or (), b.shape or (), op.name), dtype)

    return h
