"""Tiling, rolling and flipping: ``repeat`` (the Tensor method), ``tile``, ``roll``, ``flip``.

Rules: ``shapetorch._rules.tiling``.
"""

from __future__ import annotations

from mypy.types import Type

from shapetorch._rules.tiling import flip_dims, repeat_shape, roll_dims, tile_shape

from ..args import int_or_ints, is_none
from ._common import Op, Unknown, exact


def repeat(op: Op) -> Type:
    x = exact(op)
    sizes = op.sizes("sizes", required="repeats")
    if not all(type(s) is int for s in sizes):
        raise Unknown
    return op.like(x, repeat_shape(x.shape or (), [s for s in sizes if isinstance(s, int)], op.name))


def tile(op: Op) -> Type:
    x = exact(op)
    dims = op.sizes("dims")
    if not all(type(s) is int for s in dims):
        raise Unknown
    return op.like(x, tile_shape(x.shape or (), [s for s in dims if isinstance(s, int)], op.name))


def roll(op: Op) -> Type:
    x = op.input()
    if x.exact:
        shifts = _int_or_list(op, "shifts")
        if shifts is None:
            raise Unknown
        dims = _int_or_list(op, "dims") or []
        roll_dims(x.shape or (), shifts, dims, op.name)
    return op.like(x, x.shape, x.variadic)


def flip(op: Op) -> Type:
    x = op.input()
    if x.exact:
        dims = _int_or_list(op, "dims")
        if dims is None and op.call.given("args"):
            dims = [d for d in op.sizes("args") if isinstance(d, int)]
        if dims is not None:
            flip_dims(x.shape or (), dims, op.name)
    return op.like(x, x.shape, x.variadic)


def _int_or_list(op: Op, name: str) -> list[int] | None:
    """An int or a literal sequence of ints (None when absent or None)."""
    a = op.call.get(name)
    if a is None or is_none(a.expr, a.typ):
        return None
    value = int_or_ints(a)
    if value is None:
        raise Unknown
    return [value] if isinstance(value, int) else value
