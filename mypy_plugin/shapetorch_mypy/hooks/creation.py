"""Factories: ``zeros``, ``ones``, ``empty``, ``rand``, ``randn``, ``full``, the ``*_like`` ops, ``eye``,
``arange``, ``linspace``, ``logspace``.

Rules: ``shapetorch._rules.creation`` (no negative size; the length of ``arange``). The dtype is the
``dtype=`` class, else the stub's.
"""

from __future__ import annotations

from mypy.types import FunctionLike, Instance, LiteralType, Type, TypeType, get_proper_type

from shapetorch._rules import dtypes as DT
from shapetorch._rules.creation import arange_length, new_shape
from shapetorch._rules.dims import UNKNOWN, Dim, Shape, Sym

from ..args import int_value, is_none
from ..convert import dtype_name
from ._common import Op, Unknown


def dtype_class(t: Type) -> str | None:
    """The rule name of a dtype class used as a value (``dtype=float32``), or None."""
    p = get_proper_type(t)
    if isinstance(p, TypeType):
        return dtype_name(p.item)
    if isinstance(p, FunctionLike) and p.is_type_obj():
        return dtype_name(Instance(p.type_object(), []))
    return None


def _dtype_kw(op: Op) -> Type | None:
    a = op.call.get("dtype")
    if a is None or is_none(a.expr, a.typ):
        return None
    name = dtype_class(a.typ)
    return op.conv.dtype_type(name) if name else None


def _factory_result(op: Op, shape: Shape, default: str | None = None) -> Type:
    dt = _dtype_kw(op)
    if dt is None:
        dt = op.conv.dtype_type(default) if default else op.default_dtype()
    return op.result(shape, dt)


_SAMPLES: dict[str, object] = {"builtins.bool": False, "builtins.int": 0, "builtins.float": 0.0, "builtins.complex": 0j}


def scalar_dtype(t: Type | None) -> str | None:
    """The dtype torch gives a Python scalar of type ``t`` (``full(size, 1)`` is int64), or None if not a plain scalar."""
    p = get_proper_type(t) if t is not None else None
    if isinstance(p, LiteralType):
        p = p.fallback
    if isinstance(p, Instance) and p.type.fullname in _SAMPLES:
        return DT.scalar_dtype(_SAMPLES[p.type.fullname])
    return None


def factory(op: Op) -> Type:
    return _factory_result(op, new_shape(op.sizes("size", required="size"), op.name))


def full(op: Op) -> Type:
    a = op.call.get("fill_value")
    sizes = op.sizes("size")
    if any(isinstance(s, int) and s < 0 for s in sizes):
        raise Unknown
    return _factory_result(op, tuple(sizes), scalar_dtype(a.typ) if a is not None else None)


def like(op: Op) -> Type:
    x = op.input()
    dt = _dtype_kw(op) or x.dtype_type
    if op.name == "full_like" or not op.call.given("dtype"):
        dt = _dtype_kw(op) or (x.dtype_type if op.name != "randint_like" else op.default_dtype())
    return op.result(x.shape, dt, x.variadic)


def eye(op: Op) -> Type:
    n = op.size(op.call.get("n").expr, op.call.get("n").typ) if op.call.given("n") else UNKNOWN  # type: ignore[union-attr]
    m: Dim = n
    a = op.call.get("m")
    if a is not None and not is_none(a.expr, a.typ):
        m = op.size(a.expr, a.typ)
    return _factory_result(op, (n, m))


def _named_length(op: Op) -> Sym | None:
    """``arange(n)`` or ``arange(0, n)`` with ``n`` a named size (a TypeVar or a ``Dim`` read from ``.shape``):
    n elements, as the runtime gives for the int that n is there."""
    start, end, step = (op.call.get(name) for name in ("start", "end", "step"))
    if step is not None and int_value(step.expr, step.typ) != 1:
        return None
    if end is not None and not is_none(end.expr, end.typ):
        if start is None or int_value(start.expr, start.typ) != 0:
            return None
        start = end
    if start is None:
        return None
    n = op.conv.dim(start.typ)
    return n if isinstance(n, Sym) else None


def arange(op: Op) -> Type:
    """A literal range has its length; any other is 1-D of unknown size, int64 when every bound is an int."""
    named = _named_length(op)
    if named is not None:
        return _factory_result(op, (named,), "int64")
    vals: list[int | None] = []
    kinds: list[str | None] = []
    unknown = False
    for name in ("start", "end", "step"):
        a = op.call.get(name)
        if a is None:
            vals.append(None)
            continue
        kinds.append(scalar_dtype(a.typ))
        v = int_value(a.expr, a.typ)
        unknown = unknown or v is None
        vals.append(v)
    if any(k is None for k in kinds):
        raise Unknown  # a tensor or an unknown bound: the stub's result
    dtype = "int64" if all(k in ("int64", "bool") for k in kinds) else DT.scalar_dtype(0.0)
    if unknown:
        return _factory_result(op, (UNKNOWN,), dtype)
    start, end, step = vals
    if end is None:
        start, end = 0, start
    if end is None:
        raise Unknown
    n = arange_length(start or 0, end, step if step is not None else 1, op.name)
    return _factory_result(op, (n,), dtype)


def linspace(op: Op) -> Type:
    a = op.call.get("steps")
    if a is None:
        raise Unknown
    return _factory_result(op, (op.size(a.expr, a.typ),))
