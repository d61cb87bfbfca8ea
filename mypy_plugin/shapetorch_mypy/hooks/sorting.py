"""Selections and sorts: ``max``/``min`` (with a dim: ``(values, indices)``), ``sort``, ``argsort``, ``topk``,
``kthvalue``, ``median``, ``nanmedian``, ``mode``.

Rules: ``shapetorch._rules.sorting`` (``nonempty_reduce_shape`` for ``max``/``min`` with a dim; ``cum_shape`` checks
the dim of ``sort``/``argsort``).
"""

from __future__ import annotations

from mypy.types import Type

from shapetorch._rules.reduction import nonempty_reduce_shape
from shapetorch._rules.scan import cum_shape
from shapetorch._rules.sorting import kthvalue_shape, select_reduce_shape, topk_shape

from ..args import is_none
from ._common import Op, Unknown, exact, values_indices
from .broadcast import broadcast_infos


def minmax(op: Op) -> Type:
    """``max()``, ``max(dim, keepdim)`` -> (values, indices), ``max(other)`` elementwise."""
    a = op.call.get("dim") or op.call.get("other")
    if a is not None and op.conv.tensor(a.typ) is not None:  # max(other): the elementwise maximum
        x = op.input()
        other = op.conv.tensor(a.typ)
        assert other is not None
        shape, variadic = broadcast_infos(Op("maximum", op.ctx, op.method), [x, other])
        return op.result(shape, x.dtype_type if x.dtype == other.dtype else None, variadic)
    if a is None or is_none(a.expr, a.typ):
        raise Unknown
    x = exact(op)
    out = nonempty_reduce_shape(x.shape or (), op.int_arg("dim"), op.bool_arg("keepdim"), op.name)
    return values_indices(op, x, out)


def sort(op: Op) -> Type:
    x = op.input()
    if x.exact:
        cum_shape(x.shape or (), op.int_arg("dim", -1), op.name)
    return values_indices(op, x, x.shape, x.variadic)


def argsort(op: Op) -> Type:
    x = op.input()
    if x.exact:
        cum_shape(x.shape or (), op.int_arg("dim", -1), op.name)
    return op.result(x.shape, "int64", x.variadic)


def topk(op: Op) -> Type:
    x = exact(op)
    return values_indices(op, x, topk_shape(x.shape or (), op.int_arg("k"), op.int_arg("dim", -1), op.name))


def kthvalue(op: Op) -> Type:
    x = exact(op)
    out = kthvalue_shape(x.shape or (), op.int_arg("k"), op.int_arg("dim", -1), op.bool_arg("keepdim"), op.name)
    return values_indices(op, x, out)


def select_reduce(op: Op) -> Type:
    """median / nanmedian / mode with a dim -> (values, indices); without one: the stub's scalar."""
    a = op.call.get("dim")
    if op.name != "mode" and (a is None or is_none(a.expr, a.typ)):
        raise Unknown
    x = exact(op)
    out = select_reduce_shape(x.shape or (), op.int_arg("dim", -1), op.bool_arg("keepdim"), op.name)
    return values_indices(op, x, out)
