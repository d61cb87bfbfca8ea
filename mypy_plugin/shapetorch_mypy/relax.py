"""Gradual call sites: a literal size where a named dim is expected (and the reverse) is accepted.

``Batch`` against ``3`` cannot be decided statically (the rules call it undecidable), but mypy
compares the invariant shape parameter exactly and would reject the call. For every call whose
parameters are Tensor types, this signature hook replaces, position by position, a named dim of
the parameter by the argument's literal size (or a literal by the argument's named dim). A TypeVar
is left alone (it binds to whatever is passed), and two different named dims or two different
literals stay a mismatch, which mypy reports as usual.

A TypeVar dim (``B``, ``P`` in ``Tensor[tuple[B, P], ...]``) is bound per call by the rule
``shapetorch._rules.binding.bind_dims``: two arguments giving it different literals (or different named
dims) are reported with both shapes, instead of mypy's "Cannot infer value of type parameter"; a literal
against a named dim cannot be decided, so the call is accepted. Either way the TypeVar is then taken as
``Any`` for this call, so mypy adds no error of its own.
"""

from __future__ import annotations

from mypy.expandtype import expand_type
from mypy.nodes import ARG_OPT, ARG_POS, ArgKind
from mypy.plugin import FunctionSigContext, MethodSigContext
from mypy.types import (
    AnyType,
    CallableType,
    ErasedType,
    FunctionLike,
    Instance,
    LiteralType,
    TupleType,
    Type,
    TypeOfAny,
    TypeVarType,
    get_proper_type,
)

from shapetorch._rules.binding import bind_dims
from shapetorch._rules.errors import RuleError

from .codes import rule_code
from .convert import DIM_BASE, TENSOR, Converter

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


def _context(sig: CallableType, formal: Type) -> Type:
    """The type context an argument is evaluated in: ``formal`` with the callee's own TypeVars erased, as mypy
    erases them in its own check. Left in, a generic argument (``F.relu(u)`` passed for ``Tensor[tuple[B, 8]]``)
    would infer its TypeVar from the context as the foreign ``B`` and reject ``u`` (a false error)."""
    if not sig.variables:
        return formal
    return expand_type(formal, {v.id: ErasedType() for v in sig.variables})


def relax(ctx: FunctionSigContext | MethodSigContext) -> FunctionLike:
    sig = ctx.default_signature
    if not any(_mentions_dims(t) for t in sig.arg_types):
        return _bind(ctx, sig)
    new_types = list(sig.arg_types)
    changed = False
    for i, formal in enumerate(sig.arg_types):
        if i >= len(ctx.args) or len(ctx.args[i]) != 1 or not _mentions_dims(formal):
            continue
        if sig.arg_kinds[i] not in _POSITIONAL and not sig.arg_kinds[i].is_named():
            continue
        actual = ctx.api.get_expression_type(ctx.args[i][0], _context(sig, formal))
        new = _relaxed(formal, actual)
        if new is not None:
            new_types[i] = new
            changed = True
    if changed:
        sig = sig.copy_modified(arg_types=new_types)
    return _bind(ctx, sig)


def _bind(ctx: FunctionSigContext | MethodSigContext, sig: CallableType) -> CallableType:
    """Bind the TypeVar dims of ``sig`` to the arguments' sizes; report a proven conflict with shapes."""
    if not sig.variables:
        return sig
    conv: Converter | None = None
    params: list[tuple[str, list[str | None], tuple[object, ...]]] = []
    ids = {}
    for i, formal in enumerate(sig.arg_types):
        f = _shape_items(formal)
        if f is None or i >= len(ctx.args) or len(ctx.args[i]) != 1:
            continue
        names: list[str | None] = []
        for item in f[1]:
            p = get_proper_type(item)
            if isinstance(p, TypeVarType):
                names.append(p.name)
                ids[p.name] = p.id
            else:
                names.append(None)
        if not any(names):
            continue
        conv = conv or Converter(ctx.api)
        info = conv.tensor(ctx.api.get_expression_type(ctx.args[i][0], _context(sig, formal)))
        if info is None or not info.exact or len(info.shape or ()) != len(names):
            continue
        params.append((sig.arg_names[i] or f"argument {i + 1}", names, info.shape or ()))
    if len(params) < 2:
        return sig
    name = (sig.name or "call").split(" of ")[0]
    try:
        _, loose = bind_dims(params, name)  # type: ignore[arg-type]
    except RuleError as err:
        ctx.api.fail(err.message, ctx.context, code=rule_code(err.code))
        loose = set(ids)  # one error a call: every dim name of the call is then unknown
    if not loose:
        return sig
    anything = AnyType(TypeOfAny.special_form)
    env = {ids[n]: anything for n in loose}
    return sig.copy_modified(
        arg_types=[expand_type(t, env) for t in sig.arg_types],
        ret_type=expand_type(sig.ret_type, env),
        variables=[v for v in sig.variables if v.id not in env],
    )
