"""Views: ``reshape``, ``view``, ``flatten``, ``unflatten``, ``transpose``, ``permute``, ``movedim``, ``t``,
``squeeze``, ``unsqueeze``, ``size(dim)``, and the ``mT`` / ``T`` attributes.

Rules: ``shapetorch._rules.views`` (``wrap_dim`` of ``shapetorch._rules.axes`` for ``size``).
"""

from __future__ import annotations

from collections.abc import Sequence

from mypy.plugin import AttributeContext
from mypy.types import AnyType, Instance, TupleType, Type, TypeType, TypeVarType, get_proper_type

from shapetorch._rules.axes import wrap_dim
from shapetorch._rules.dims import UNKNOWN, Dim, Shape
from shapetorch._rules.errors import RuleError
from shapetorch._rules.views import (
    flatten_shape,
    matrix_transpose_shape,
    movedim_shape,
    permute_shape,
    reshape_shape,
    squeeze_shape,
    t_shape,
    transpose_shape,
    unflatten_shape,
    unsqueeze_shape,
)

from ..codes import rule_code
from ..convert import DECLARED_TYPEVARS, Converter, TensorInfo
from ._common import Handler, Op, Unknown, exact


def _rank_only(op: Op, x: TensorInfo, sizes: Sequence[Dim]) -> Type:
    """reshape of a tensor whose shape is not fully known: the rank is known, known sizes kept."""
    dims: list[Dim] = [UNKNOWN if s == -1 else s for s in sizes]
    if any(isinstance(s, int) and s < -1 for s in sizes) or sum(1 for s in sizes if s == -1) > 1:
        return op.result(reshape_shape((UNKNOWN,), sizes, op.name), x.dtype_type)
    return op.like(x, tuple(dims))


def reshape(op: Op) -> Type:
    return _reshape(op, "shape", "shape")


def _reshape(op: Op, param: str, required: str | None) -> Type:
    x = op.input()
    sizes = op.sizes(param, required=required)
    if not x.exact:
        return _rank_only(op, x, sizes)
    # Products of named dims are compared as the rule does: only a proven mismatch is reported.
    return op.like(x, reshape_shape(x.shape or (), sizes, op.name))


def view(op: Op) -> Type:
    a = op.call.all("shape")
    if len(a) == 1:
        p = get_proper_type(a[0].typ)
        if isinstance(p, TypeType) or (isinstance(p, Instance) and p.type.fullname == "builtins.type"):
            raise Unknown  # view(dtype)
    return reshape(op)


def view_copy(op: Op) -> Type:
    """``view_copy(input, size)``: view's rule (the runtime's view_copy is the view, copied), its sizes named
    ``size``; a dtype is not followed, as in ``view``."""
    a = op.call.all("size")
    if len(a) == 1:
        p = get_proper_type(a[0].typ)
        if isinstance(p, TypeType) or (isinstance(p, Instance) and p.type.fullname == "builtins.type"):
            raise Unknown
    return _reshape(op, "size", None)


def flatten(op: Op) -> Type:
    x = exact(op)
    return op.like(x, flatten_shape(x.shape or (), op.int_arg("start_dim", 0), op.int_arg("end_dim", -1), op.name))


def unflatten(op: Op) -> Type:
    x = exact(op)
    sizes = op.sizes("sizes")
    return op.like(x, unflatten_shape(x.shape or (), op.int_arg("dim"), sizes, op.name))


def transpose(d0: str, d1: str) -> Handler:
    def h(op: Op) -> Type:
        x = op.input()
        a, b = op.int_arg(d0), op.int_arg(d1)
        if x.variadic is not None and x.shape is not None and -len(x.shape) <= min(a, b) and max(a, b) < 0:
            return op.like(x, transpose_shape(x.shape, a, b, op.name), x.variadic)
        if not x.exact:
            raise Unknown
        return op.like(x, transpose_shape(x.shape or (), a, b, op.name))

    return h


def permute(op: Op) -> Type:
    x = exact(op)
    dims = op.sizes("dims", required="dims")
    if not all(type(d) is int for d in dims):
        raise Unknown
    return op.like(x, permute_shape(x.shape or (), [d for d in dims if isinstance(d, int)], op.name))


def movedim(src: str, dst: str) -> Handler:
    def h(op: Op) -> Type:
        x = exact(op)
        s, d = op.dims(src), op.dims(dst)
        if s is None or d is None:
            raise Unknown
        sl = [s] if isinstance(s, int) else s
        dl = [d] if isinstance(d, int) else d
        return op.like(x, movedim_shape(x.shape or (), sl, dl, op.name))

    return h


def t(op: Op) -> Type:
    x = exact(op)
    return op.like(x, t_shape(x.shape or (), op.name))


def squeeze(op: Op) -> Type:
    x = exact(op)
    return op.like(x, squeeze_shape(x.shape or (), op.dims("dim"), op.name))


def unsqueeze(op: Op) -> Type:
    x = op.input()
    d = op.int_arg("dim")
    if x.variadic is not None and x.shape is not None and -len(x.shape) - 1 <= d < 0:
        return op.like(x, unsqueeze_shape(x.shape, d, op.name), x.variadic)
    if not x.exact:
        raise Unknown
    return op.like(x, unsqueeze_shape(x.shape or (), d, op.name))


def size(op: Op) -> Type:
    """``x.size(1)`` is the type of that dim (a literal, a named dim or a TypeVar)."""
    x = exact(op)
    if not op.call.given("dim"):
        raise Unknown
    d = wrap_dim(op.int_arg("dim"), len(x.shape or ()), op.name)
    t = op.conv.dim_type((x.shape or ())[d])
    return op.ctx.api.named_generic_type("builtins.int", []) if isinstance(get_proper_type(t), AnyType) else t


# ---------------------------------------------------------------------------------------- attributes
def matrix_t(ctx: AttributeContext) -> Type:
    op_ctx = ctx
    conv = Converter(op_ctx.api)
    x = conv.tensor(op_ctx.type)
    if x is None:
        return op_ctx.default_attr_type
    try:
        if x.shape is not None and x.variadic is not None and len(x.shape) >= 2:
            return conv.tensor_type(_mT(x.shape), x.dtype_type, x.variadic)
        if not x.exact:
            return op_ctx.default_attr_type
        return conv.tensor_type(_mT(x.shape or ()), x.dtype_type)
    except RuleError as err:
        op_ctx.api.fail(err.message, op_ctx.context, code=rule_code(err.code))
        return conv.unknown_tensor()


def _mT(shape: Shape) -> Shape:
    return matrix_transpose_shape(shape, "mT")


def reverse_t(ctx: AttributeContext) -> Type:
    conv = Converter(ctx.api)
    x = conv.tensor(ctx.type)
    if x is None or not x.exact:
        return ctx.default_attr_type
    return conv.tensor_type(tuple(reversed(x.shape or ())), x.dtype_type)


def shape_attr(ctx: AttributeContext) -> Type:
    """``x.shape``: the shape tuple, with each unbounded TypeVar bounded by ``int``. A size read from ``.shape``
    is an int at run time, so ``b * NW`` with ``b = x.shape[0]`` is arithmetic on an int; under its declared
    ``object`` bound mypy would report the product. The TypeVar keeps its identity, so ``reshape(b, ...)``
    and ``arange(b)`` still read it as the named size."""
    p = get_proper_type(ctx.default_attr_type)
    if not isinstance(p, TupleType):
        return ctx.default_attr_type
    int_type = ctx.api.named_generic_type("builtins.int", [])
    items: list[Type] = []
    for item in p.items:
        t = get_proper_type(item)
        if isinstance(t, TypeVarType) and _unbounded(t):
            DECLARED_TYPEVARS[(t.fullname, t.id)] = t
            items.append(t.copy_modified(upper_bound=int_type))
        else:
            items.append(item)
    return p.copy_modified(items=items)


def _unbounded(t: TypeVarType) -> bool:
    bound = get_proper_type(t.upper_bound)
    return not t.values and isinstance(bound, Instance) and bound.type.fullname == "builtins.object"
