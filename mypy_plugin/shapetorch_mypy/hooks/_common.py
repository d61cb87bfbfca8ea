"""What every op hook shares: reading the call, running the rule, building the result.

A hook is a :data:`Handler`: it takes an :class:`Op` (the call's arguments, a converter between mypy
types and rule shapes, helpers to build the result) and returns the result type. :func:`run` makes a
mypy hook of it. Every hook is gradual: when something it needs is not known statically (an unknown
rank, a non-literal dim, a non-Final size) it raises :class:`Unknown` and the stub's declared type is
used, with nothing reported. A ``RuleError`` becomes a mypy error with the catalogue code, and the
result is then a tensor of unknown shape so that one mistake is reported once.

Also here: the dtype rules of the result (``same``, ``float``, ``sum``, ...), the ``(values, indices)``
named tuple of the selections and ``cummax``/``cummin``, and readers of tensor lists and int-or-list
arguments used by several families.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mypy.expandtype import expand_type_by_instance
from mypy.nodes import Expression, ListExpr, TupleExpr, TypeInfo
from mypy.plugin import FunctionContext, MethodContext
from mypy.types import (
    AnyType,
    Instance,
    TupleType,
    Type,
    TypeOfAny,
    TypeVarType,
    UnpackType,
    get_proper_type,
)

from shapetorch._rules import dtypes as DT
from shapetorch._rules.dims import UNKNOWN, Dim, Shape
from shapetorch._rules.errors import RuleError

from ..args import Call, Ctx, int_list, int_value, is_none
from ..codes import rule_code
from ..convert import MODULE, TENSOR, Converter, TensorInfo

VALUES_INDICES = f"{MODULE}._ValuesIndices"


class Unknown(Exception):
    """Raised inside a hook when an argument is not known statically: use the stub's type."""


class Op:
    """One hooked call: its arguments, a converter, and helpers to build the result."""

    def __init__(self, name: str, ctx: Ctx, method: bool) -> None:
        self.name = name
        self.ctx = ctx
        self.method = method
        self.call = Call(ctx)
        self.conv = Converter(ctx.api)

    # -- inputs -------------------------------------------------------------------------------
    def input(self, name: str = "input") -> TensorInfo:
        """The tensor the op works on: ``self`` for a method, the formal ``name`` for a function."""
        if self.method and isinstance(self.ctx, MethodContext):
            info = self.conv.tensor(self.ctx.type)
        else:
            a = self.call.get(name)
            info = self.conv.tensor(a.typ) if a else None
        if info is None:
            raise Unknown
        return info

    def tensor_arg(self, name: str) -> TensorInfo:
        a = self.call.get(name)
        info = self.conv.tensor(a.typ) if a else None
        if info is None:
            raise Unknown
        return info

    def int_arg(self, name: str, default: int | None = None) -> int:
        if not self.call.given(name):
            if default is None:
                raise Unknown
            return default
        v = self.call.int_arg(name)
        if v is None:
            raise Unknown
        return v

    def bool_arg(self, name: str, default: bool = False) -> bool:
        v = self.call.bool_arg(name, default)
        if v is None:
            raise Unknown
        return v

    def dims(self, name: str) -> int | list[int] | None:
        """A ``dim`` argument: None (absent or None), an int, or a list of ints."""
        a = self.call.get(name)
        if a is None or is_none(a.expr, a.typ):
            return None
        v = int_value(a.expr, a.typ)
        if v is not None:
            return v
        items = int_list(a.expr, a.typ)
        if items is None or any(i is None for i in items):
            raise Unknown
        return [i for i in items if i is not None]

    def sizes(self, name: str, required: str | None = None) -> list[Dim]:
        """Sizes given as ``*sizes`` or as one tuple/list: literal ints, named dims, else UNKNOWN.

        ``required``: the runtime's name of a star parameter torch's parser needs a value for (``x.reshape()``
        is a TypeError there, not an empty shape); none given is then the runtime's signature error."""
        actual = self.call.all(name)
        if required is not None and not actual:
            raise RuleError("argument_error_signature", op=self.name,
                            problem=f'missing 1 required positional arguments: "{required}"')
        if len(actual) == 1 and isinstance(actual[0].expr, (TupleExpr, ListExpr)):
            items = actual[0].expr.items
            return [self.size(i, None) for i in items]
        if len(actual) == 1:
            p = get_proper_type(actual[0].typ)
            if isinstance(p, TupleType):
                return [self.size(None, t) for t in p.items]
            if isinstance(p, Instance) and p.type.fullname in ("builtins.tuple", "builtins.list"):
                raise Unknown  # a sequence of unknown length
            if isinstance(p, AnyType):
                raise Unknown
        return [self.size(a.expr, a.typ) for a in actual]

    def size(self, expr: Expression | None, typ: Type | None) -> Dim:
        v = int_value(expr, typ)
        if v is not None:
            return v
        if typ is None and expr is not None:
            typ = self.ctx.api.get_expression_type(expr)
        return self.conv.dim(typ) if typ is not None else UNKNOWN

    # -- outputs ------------------------------------------------------------------------------
    def default_dtype(self) -> Type:
        p = get_proper_type(self.ctx.default_return_type)
        if isinstance(p, Instance) and p.type.fullname == TENSOR and len(p.args) == 2:
            return p.args[1]
        return AnyType(TypeOfAny.special_form)

    def result(self, shape: Shape | None, dtype: str | Type | None = None, variadic: Type | None = None) -> Type:
        if isinstance(dtype, str):
            dt: Type = self.conv.dtype_type(dtype)
        elif dtype is None:
            dt = self.default_dtype()
        else:
            dt = dtype
        return self.conv.tensor_type(shape, dt, variadic)

    def like(self, x: TensorInfo, shape: Shape | None, variadic: Type | None = None) -> Type:
        """A result with ``x``'s dtype."""
        return self.result(shape, x.dtype_type, variadic)

    def fail(self, err: RuleError) -> Type:
        """Report the rule's error; the result is ``Any``, so the mistake is reported once. (A tensor of unknown
        shape would not do: assigned back to its name, ``x = x.view(...)``, mypy narrows the name to the union of
        the old and the new type, and every later op on it reported the old shape's error again.)"""
        self.ctx.api.fail(err.message, self.ctx.context, code=rule_code(err.code))
        return AnyType(TypeOfAny.from_error)


Handler = Callable[[Op], Type]


def run(handler: Handler, name: str, method: bool) -> Callable[[FunctionContext | MethodContext], Type]:
    def hook(ctx: FunctionContext | MethodContext) -> Type:
        op = Op(name, ctx, method)
        try:
            return _kept_generic(ctx, handler(op))
        except Unknown:
            return ctx.default_return_type
        except RuleError as err:
            return op.fail(err)

    return hook


def _kept_generic(ctx: FunctionContext | MethodContext, computed: Type) -> Type:
    """Where an input's shape is a TypeVar (``x: Tensor[S, float32]`` in a shape-generic helper), or every input's
    is ``Any`` (an intermediate of such a helper), the rules have no dims to compute with, and their unknown
    ``tuple[Any, ...]`` would not be the helper's ``S``: a false error on its return. The stub's own shape is kept
    then (``S`` where the stub carries it through, else ``Any``), with the dtype the rules computed where the
    stub's is ``Any``."""
    shapes = [get_proper_type(p.args[0]) for p in map(get_proper_type, _tensor_inputs(ctx))
              if isinstance(p, Instance) and p.type.fullname == TENSOR and len(p.args) == 2]
    if not shapes or not (any(isinstance(x, TypeVarType) for x in shapes)
                          or all(isinstance(x, AnyType) for x in shapes)):
        return computed
    d, c = get_proper_type(ctx.default_return_type), get_proper_type(computed)
    if not (isinstance(d, Instance) and d.type.fullname == TENSOR and len(d.args) == 2
            and isinstance(c, Instance) and c.type.fullname == TENSOR and len(c.args) == 2):
        return computed
    shape = get_proper_type(c.args[0])
    if isinstance(shape, TupleType) and not any(isinstance(i, UnpackType) for i in shape.items):
        return computed  # a shape the rules did compute (a reduction to a scalar, say)
    dtype = c.args[1] if isinstance(get_proper_type(d.args[1]), AnyType) else d.args[1]
    return d.copy_modified(args=[d.args[0], dtype])


def _tensor_inputs(ctx: FunctionContext | MethodContext) -> list[Type]:
    inputs = [t for group in ctx.arg_types for t in group]
    return [ctx.type, *inputs] if isinstance(ctx, MethodContext) else inputs



def kind_checked(handler: Handler) -> Handler:
    """``handler`` after the op's dtype kind (``DT.DTYPE_KINDS``, the table the runtime checks too): an input
    of a dtype torch has no kernel for is the runtime's error whatever its shape."""
    def h(op: Op) -> Type:
        a = op.call.get("input")
        info = op.conv.tensor(a.typ) if a else None
        if info is not None and info.dtype and DT.DTYPE_KINDS.get(op.name) not in DT.PROMOTED_KINDS:
            DT.check_kind(op.name, info.dtype)
        return handler(op)

    return h


def exact(op: Op, name: str = "input") -> TensorInfo:
    """The input tensor when its shape is fully known (no unknown rank, no unknown leading dims)."""
    x = op.input(name)
    if not x.exact:
        raise Unknown
    return x


def anything_variadic(op: Op) -> Type:
    """Unknown leading dims: ``*tuple[Any, ...]``."""
    return UnpackType(op.conv.tuple_any())


def join_dtype(op: Op, infos: Sequence[TensorInfo]) -> Type:
    """The promoted dtype of several tensors (cat, stack, einsum)."""
    names = [i.dtype for i in infos]
    if infos and all(n is not None for n in names):
        return op.conv.dtype_type(DT.result_type((n, DT.TENSOR) for n in names if n is not None))
    return op.default_dtype()


# ---------------------------------------------------------------------------------------- dtypes
def _float_of(x: TensorInfo) -> str | None:
    return DT.float_result(x.dtype) if x.dtype else None


DTYPE_RULES: dict[str, Callable[[TensorInfo], str | None]] = {
    "same": lambda x: x.dtype,
    "float": _float_of,
    "bool": lambda x: "bool",
    "int64": lambda x: "int64",
    "sum": lambda x: ("int64" if x.dtype and DT.is_integral(x.dtype, include_bool=True) else x.dtype),
    "real": lambda x: DT.to_real(x.dtype) if x.dtype else None,
}


def dtype_of(op: Op, x: TensorInfo, rule: str) -> Type:
    name = DTYPE_RULES[rule](x)
    if name is not None:
        return op.conv.dtype_type(name)
    if rule == "same":
        return x.dtype_type
    return op.default_dtype()




# ---------------------------------------------------------------------------------------- (values, indices)
def values_indices(op: Op, x: TensorInfo, shape: Shape | None, variadic: Type | None = None) -> Type:
    """``_ValuesIndices[shape, dtype]`` as the named tuple mypy knows (values, indices)."""
    inst = op.ctx.api.named_generic_type(VALUES_INDICES, [op.conv.shape_type(shape, variadic), x.dtype_type])
    info: TypeInfo = inst.type
    if info.tuple_type is None:
        return inst
    items = expand_type_by_instance(info.tuple_type, inst)
    if not isinstance(items, TupleType):
        return inst
    return items.copy_modified(fallback=inst)


def vi(handler: Handler) -> Handler:
    """A (values, indices) op: after a reported error the result is still the named tuple, unknown shape."""

    def h(op: Op) -> Type:
        try:
            return handler(op)
        except RuleError as err:
            unknown = op.fail(err)
            a = op.call.get("dim") or op.call.get("other")
            if a is not None and op.conv.tensor(a.typ) is not None:
                return unknown  # max(other): elementwise, a tensor
            try:
                dtype = op.input().dtype_type
            except Unknown:
                dtype = op.conv.any()
            return values_indices(op, TensorInfo(None, None, dtype), None)

    return h
