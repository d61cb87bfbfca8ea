"""Gradual call sites: a literal size where a named dim is expected (and the reverse) is accepted.

``Batch`` against ``3`` cannot be decided statically (the rules call it undecidable), but mypy
compares the invariant shape parameter exactly and would reject the call. For every call whose
parameters are Tensor types, this signature hook replaces, position by position, a named dim of
the parameter by the argument's literal size (or a literal by the argument's named dim). A TypeVar
is left alone (it binds to whatever is passed), and two different named dims or two different
literals stay a mismatch, which mypy reports as usual.
"""

from __future__ import annotations

from mypy.nodes import ARG_OPT, ARG_POS, ArgKind
from mypy.plugin import FunctionSigContext, MethodSigContext
from mypy.types import CallableType, FunctionLike, Instance, LiteralType, TupleType, Type, get_proper_type

from .convert import DIM_BASE, TENSOR

_POSITIONAL: tuple[ArgKind, ...] = (ARG_POS, ARG_OPT)


def _shape_items(t: Type) -> tuple[Instance, list[Type]] | None:
    p = get_proper_type(t)
    if isinstance(p, Instance) and p.type.fullname == TENSOR and len(p.args) == 2:
        s = get_proper_type(p.args[0])
        if isinstance(s, TupleType):
            return p, list(s.items)
    return None


def _kind(t: Type) -> str:
    p = get_proper_type(t)
    if isinstance(p, LiteralType) and type(p.value) is int:
        return "int"
    if isinstance(p, Instance):
        if p.last_known_value is not None and type(p.last_known_value.value) is int:
            return "int"
        if p.type.has_base(DIM_BASE) and p.type.fullname != DIM_BASE:
            return "named"
    return "other"


def _relaxed(formal: Type, actual: Type) -> Type | None:
    f = _shape_items(formal)
    a = _shape_items(actual)
    if f is None or a is None or len(f[1]) != len(a[1]):
        return None
    changed = False
    items = list(f[1])
    for i, (fi, ai) in enumerate(zip(f[1], a[1])):
        if {_kind(fi), _kind(ai)} == {"int", "named"}:
            items[i] = ai
            changed = True
    if not changed:
        return None
    shape = get_proper_type(f[0].args[0])
    assert isinstance(shape, TupleType)
    return f[0].copy_modified(args=[shape.copy_modified(items=items), f[0].args[1]])


def _mentions_dims(t: Type) -> bool:
    f = _shape_items(t)
    return f is not None and any(_kind(i) != "other" for i in f[1])


def relax(ctx: FunctionSigContext | MethodSigContext) -> FunctionLike:
    sig = ctx.default_signature
    if not any(_mentions_dims(t) for t in sig.arg_types):
        return sig
    new_types = list(sig.arg_types)
    changed = False
    for i, formal in enumerate(sig.arg_types):
        if i >= len(ctx.args) or len(ctx.args[i]) != 1 or not _mentions_dims(formal):
            continue
        if sig.arg_kinds[i] not in _POSITIONAL and not sig.arg_kinds[i].is_named():
            continue
        actual = ctx.api.get_expression_type(ctx.args[i][0], formal)
        new = _relaxed(formal, actual)
        if new is not None:
            new_types[i] = new
            changed = True
    if not changed:
        return sig
    result: CallableType = sig.copy_modified(arg_types=new_types)
    return result
