"""Gather and scatter: ``gather``, ``scatter``, ``scatter_add``, ``scatter_reduce``, ``index_select``.

Rules: ``shapetorch._rules.scatter``.
"""

from __future__ import annotations

from mypy.types import Type

from shapetorch._rules.scatter import gather_shape, index_select_shape, scatter_check

from ._common import Op, Unknown, exact


def gather(op: Op) -> Type:
    x, index = exact(op), op.tensor_arg("index")
    if not index.exact:
        raise Unknown
    return op.like(x, gather_shape(x.shape or (), op.int_arg("dim"), index.shape or (), op.name))


def scatter(op: Op) -> Type:
    x, index = exact(op), op.tensor_arg("index")
    if not index.exact:
        raise Unknown
    a = op.call.get("src")
    src = op.conv.tensor(a.typ) if a is not None else None
    if src is not None and not src.exact:
        raise Unknown
    return op.like(x, scatter_check(x.shape or (), op.int_arg("dim"), index.shape or (), src.shape if src else None, op.name))


def index_select(op: Op) -> Type:
    x, index = exact(op), op.tensor_arg("index")
    if not index.exact:
        raise Unknown
    return op.like(x, index_select_shape(x.shape or (), op.int_arg("dim"), index.shape or (), op.name))
