"""The op hooks: read the argument types, call the rule from ``shapetorch._rules``, build the result.

Every hook is gradual: when something it needs is not known statically (an unknown rank, a
non-literal dim, a non-Final size) it returns the stub's declared type and reports nothing.
A ``RuleError`` becomes a mypy error with the catalogue code, and the result is then a tensor
of unknown shape so that one mistake is reported once.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

from mypy.nodes import Expression, ListExpr, SliceExpr, TupleExpr
from mypy.plugin import FunctionContext, MethodContext
from mypy.types import (
    AnyType,
    FunctionLike,
    Instance,
    LiteralType,
    TupleType,
    Type,
    TypeOfAny,
    TypeType,
    get_proper_type,
)

from shapetorch import _rules as R
from shapetorch._rules import dtypes as DT
from shapetorch._rules.dims import UNKNOWN, Dim, Shape, Sym
from shapetorch._rules.errors import RuleError

from .args import Arg, Call, Ctx, bool_value, int_list, int_or_ints, int_value, is_ellipsis, is_none
from .codes import rule_code
from .convert import TENSOR, Converter, TensorInfo, dtype_name, fmt_dims


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

    def sizes(self, name: str) -> list[Dim]:
        """Sizes given as ``*sizes`` or as one tuple/list: literal ints, named dims, else UNKNOWN."""
        actual = self.call.all(name)
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
        self.ctx.api.fail(err.message, self.ctx.context, code=rule_code(err.code))
        return self.conv.unknown_tensor()


Handler = Callable[[Op], Type]


def run(handler: Handler, name: str, method: bool) -> Callable[[FunctionContext | MethodContext], Type]:
    def hook(ctx: FunctionContext | MethodContext) -> Type:
        op = Op(name, ctx, method)
        try:
            return handler(op)
        except Unknown:
            return ctx.default_return_type
        except RuleError as err:
            return op.fail(err)

    return hook


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


def _dtype_of(op: Op, x: TensorInfo, rule: str) -> Type:
    name = DTYPE_RULES[rule](x)
    if name is not None:
        return op.conv.dtype_type(name)
    if rule == "same":
        return x.dtype_type
    return op.default_dtype()


# ---------------------------------------------------------------------------------------- elementwise
def unary(dtype: str) -> Handler:
    def h(op: Op) -> Type:
        x = op.input()
        return op.result(x.shape, _dtype_of(op, x, dtype), x.variadic)

    return h


_SCALARS = {"builtins.bool": "bool", "builtins.int": "int64", "builtins.float": "float32", "builtins.complex": "complex64"}


def _operand(op: Op, a: Arg | None) -> tuple[TensorInfo, int]:
    """A tensor or Python scalar operand and its promotion priority."""
    if a is None:
        raise Unknown
    info = op.conv.tensor(a.typ)
    if info is not None:
        prio = DT.TENSOR if (info.variadic is None and info.shape) else DT.ZERO_DIM
        if info.shape is None or (info.variadic is not None and not info.shape):
            prio = -1  # rank unknown: the priority is unknown too
        return info, prio
    p = get_proper_type(a.typ)
    if isinstance(p, LiteralType):
        p = p.fallback
    if isinstance(p, Instance) and p.type.fullname in _SCALARS:
        return TensorInfo((), _SCALARS[p.type.fullname], p), DT.SCALAR
    raise Unknown


def _promote(op: Op, operands: Sequence[tuple[TensorInfo, int]]) -> str | None:
    if any(prio < 0 or info.dtype is None for info, prio in operands):
        return None
    return DT.result_type((info.dtype, prio) for info, prio in operands if info.dtype is not None)


def broadcast_infos(op: Op, infos: Sequence[TensorInfo]) -> tuple[Shape | None, Type | None]:
    """Broadcast several shapes; unknown leading dims are kept where the known suffix decides."""
    if any(i.shape is None for i in infos):
        return None, None
    exact = [i for i in infos if i.variadic is None]
    var = [i for i in infos if i.variadic is not None]
    if not var:
        return R.broadcast_shapes(*(i.shape for i in exact if i.shape is not None), op=op.name), None
    k = min(len(i.shape) for i in var if i.shape is not None)
    suffix_shapes = [i.shape[len(i.shape) - k :] for i in var if i.shape is not None]
    out = R.broadcast_shapes(*suffix_shapes, *(i.shape for i in exact if i.shape is not None), op=op.name)
    if len(var) == 1 and all(len(i.shape or ()) <= k for i in exact) and var[0].shape is not None:
        v = var[0].shape
        return v[: len(v) - k] + out, var[0].variadic
    if len(out) > k:
        return None, None
    return out, _anything_variadic(op)


def _anything_variadic(op: Op) -> Type:
    from mypy.types import UnpackType

    return UnpackType(op.conv.tuple_any())


def binary(dtype: str, reverse: bool = False, other: str = "other") -> Handler:
    def h(op: Op) -> Type:
        if op.method:
            assert isinstance(op.ctx, MethodContext)
            info = op.conv.tensor(op.ctx.type)
            if info is None:
                raise Unknown
            first: tuple[TensorInfo, int] = (info, DT.TENSOR if info.exact and info.shape else -1)
            if info.exact and not info.shape:
                first = (info, DT.ZERO_DIM)
        else:
            first = _operand(op, op.call.get("input"))
        second = _operand(op, op.call.get(other))
        pair = [second, first] if reverse else [first, second]
        shape, variadic = broadcast_infos(op, [p[0] for p in pair])
        return op.result(shape, _binary_dtype(op, dtype, pair), variadic)

    return h


def _binary_dtype(op: Op, rule: str, pair: Sequence[tuple[TensorInfo, int]]) -> Type:
    if rule == "bool":
        return op.conv.dtype_type("bool")
    name = _promote(op, pair)
    if name is None:
        types = {str(info.dtype_type) for info, prio in pair if prio != DT.SCALAR}
        if rule == "promote" and len(types) == 1 and all(p != DT.SCALAR for _, p in pair):
            return pair[0][0].dtype_type  # the same (generic) dtype on both sides
        return op.default_dtype()
    if rule == "float":
        name = DT.float_result(name)
    return op.conv.dtype_type(name)


def where(op: Op) -> Type:
    cond = op.tensor_arg("condition")
    if op.method:
        x: tuple[TensorInfo, int] = (op.input(), DT.TENSOR)
        y = _operand(op, op.call.get("other"))
    else:
        if not op.call.given("input"):
            raise Unknown
        x = _operand(op, op.call.get("input"))
        y = _operand(op, op.call.get("other"))
    if op.method and not (x[0].exact and x[0].shape):
        x = (x[0], -1)
    shape, variadic = broadcast_infos(op, [cond, x[0], y[0]])
    return op.result(shape, _binary_dtype(op, "promote", [x, y]), variadic)


# ---------------------------------------------------------------------------------------- matmul
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
            return op.result(R.matmul_shape(a.shape or (), b.shape or (), op.name), dtype)
        if a.shape is None or b.shape is None:
            return op.result(None, dtype)
        if a.variadic is not None and len(a.shape) >= 2 and b.exact and len(b.shape) in (1, 2):
            return op.result(R.matmul_shape(a.shape, b.shape, op.name), dtype, a.variadic)
        if b.variadic is not None and len(b.shape) >= 2 and a.exact and len(a.shape) in (1, 2):
            return op.result(R.matmul_shape(a.shape, b.shape, op.name), dtype, b.variadic)
        if len(a.shape) >= 2 and len(b.shape) >= 2:  # batch dims unknown: still check the matrices
            out = R.matmul_shape(a.shape[-2:], b.shape[-2:], op.name)
            return op.result(out, dtype, _anything_variadic(op))
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


# ---------------------------------------------------------------------------------------- views
def exact(op: Op, name: str = "input") -> TensorInfo:
    x = op.input(name)
    if not x.exact:
        raise Unknown
    return x


def _rank_only(op: Op, x: TensorInfo, sizes: Sequence[Dim]) -> Type:
    """reshape of a tensor whose shape is not fully known: the rank is known, known sizes kept."""
    dims: list[Dim] = [UNKNOWN if s == -1 else s for s in sizes]
    if any(isinstance(s, int) and s < -1 for s in sizes) or sum(1 for s in sizes if s == -1) > 1:
        return op.result(R.reshape_shape((UNKNOWN,), sizes, op.name), x.dtype_type)
    return op.like(x, tuple(dims))


_SIZE_CODES = ("reshape_error_size_mismatch", "unflatten_error_size_mismatch")


def _symbolic(*shapes: Sequence[Dim]) -> bool:
    return any(isinstance(d, Sym) for s in shapes for d in s)


def reshape(op: Op) -> Type:
    x = op.input()
    sizes = op.sizes("shape")
    if not x.exact:
        return _rank_only(op, x, sizes)
    try:
        return op.like(x, R.reshape_shape(x.shape or (), sizes, op.name))
    except RuleError as err:
        # Products of named dims are compared by name (B*S*8 vs B*S*2*4): not a proof of a mismatch.
        if err.code in _SIZE_CODES and _symbolic(x.shape or (), sizes):
            return _rank_only(op, x, sizes)
        raise


def view(op: Op) -> Type:
    a = op.call.all("shape")
    if len(a) == 1:
        p = get_proper_type(a[0].typ)
        if isinstance(p, TypeType) or (isinstance(p, Instance) and p.type.fullname == "builtins.type"):
            raise Unknown  # view(dtype)
    return reshape(op)


def flatten(op: Op) -> Type:
    x = exact(op)
    return op.like(x, R.flatten_shape(x.shape or (), op.int_arg("start_dim", 0), op.int_arg("end_dim", -1), op.name))


def unflatten(op: Op) -> Type:
    x = exact(op)
    sizes = op.sizes("sizes")
    try:
        return op.like(x, R.unflatten_shape(x.shape or (), op.int_arg("dim"), sizes, op.name))
    except RuleError as err:
        if err.code in _SIZE_CODES and _symbolic(x.shape or (), sizes):
            raise Unknown from None
        raise


def transpose(d0: str, d1: str) -> Handler:
    def h(op: Op) -> Type:
        x = op.input()
        a, b = op.int_arg(d0), op.int_arg(d1)
        if x.variadic is not None and x.shape is not None and -len(x.shape) <= min(a, b) and max(a, b) < 0:
            return op.like(x, R.transpose_shape(x.shape, a, b, op.name), x.variadic)
        if not x.exact:
            raise Unknown
        return op.like(x, R.transpose_shape(x.shape or (), a, b, op.name))

    return h


def permute(op: Op) -> Type:
    x = exact(op)
    dims = op.sizes("dims")
    if not all(type(d) is int for d in dims):
        raise Unknown
    return op.like(x, R.permute_shape(x.shape or (), [d for d in dims if isinstance(d, int)], op.name))


def movedim(src: str, dst: str) -> Handler:
    def h(op: Op) -> Type:
        x = exact(op)
        s, d = op.dims(src), op.dims(dst)
        if s is None or d is None:
            raise Unknown
        sl = [s] if isinstance(s, int) else s
        dl = [d] if isinstance(d, int) else d
        return op.like(x, R.movedim_shape(x.shape or (), sl, dl, op.name))

    return h


def t(op: Op) -> Type:
    x = exact(op)
    return op.like(x, R.t_shape(x.shape or (), op.name))


def mt_shape(op: Op, x: TensorInfo) -> Type:
    if x.shape is not None and x.variadic is not None and len(x.shape) >= 2:
        return op.like(x, R.matrix_transpose_shape(x.shape, op.name), x.variadic)
    if not x.exact:
        raise Unknown
    return op.like(x, R.matrix_transpose_shape(x.shape or (), op.name))


def squeeze(op: Op) -> Type:
    x = exact(op)
    return op.like(x, R.squeeze_shape(x.shape or (), op.dims("dim"), op.name))


def unsqueeze(op: Op) -> Type:
    x = op.input()
    d = op.int_arg("dim")
    if x.variadic is not None and x.shape is not None and -len(x.shape) - 1 <= d < 0:
        return op.like(x, R.unsqueeze_shape(x.shape, d, op.name), x.variadic)
    if not x.exact:
        raise Unknown
    return op.like(x, R.unsqueeze_shape(x.shape or (), d, op.name))


def expand(op: Op) -> Type:
    x = exact(op)
    return op.like(x, R.expand_shape(x.shape or (), op.sizes("size"), op.name))


def expand_as(op: Op) -> Type:
    x, other = exact(op), op.tensor_arg("other")
    if not other.exact:
        raise Unknown
    return op.like(x, R.expand_shape(x.shape or (), other.shape or (), op.name))


def broadcast_to(op: Op) -> Type:
    x = exact(op)
    return op.like(x, R.expand_shape(x.shape or (), op.sizes("size"), op.name))


def select(op: Op) -> Type:
    x = exact(op)
    return op.like(x, R.select_shape(x.shape or (), op.int_arg("dim"), op.int_arg("index"), op.name))


def narrow(op: Op) -> Type:
    x = exact(op)
    return op.like(x, R.narrow_shape(x.shape or (), op.int_arg("dim"), op.int_arg("start"), op.int_arg("length"), op.name))


def size(op: Op) -> Type:
    """``x.size(1)`` is the type of that dim (a literal, a named dim or a TypeVar)."""
    x = exact(op)
    if not op.call.given("dim"):
        raise Unknown
    d = R.wrap_dim(op.int_arg("dim"), len(x.shape or ()), op.name)
    t = op.conv.dim_type((x.shape or ())[d])
    return op.ctx.api.named_generic_type("builtins.int", []) if isinstance(get_proper_type(t), AnyType) else t


# ---------------------------------------------------------------------------------------- reductions
def reduction(dtype: str) -> Handler:
    def h(op: Op) -> Type:
        x = op.input()
        dim = op.dims("dim")
        keep = op.bool_arg("keepdim")
        dt = _dtype_of(op, x, dtype)
        if x.shape is None:
            raise Unknown
        if x.variadic is not None:
            dl = [dim] if isinstance(dim, int) else dim
            if not dl or any(not -len(x.shape) <= d < 0 for d in dl):
                raise Unknown
            return op.result(R.reduce_shape(x.shape, dl, keep, op.name), dt, x.variadic)
        return op.result(R.reduce_shape(x.shape, dim, keep, op.name), dt)

    return h


def along_dim(code: str, dtype: str = "same") -> Handler:
    """Shape-preserving ops along one dim (softmax, cumsum, ...): the dim must exist."""

    def h(op: Op) -> Type:
        x = op.input()
        a = op.call.get("dim")
        if a is not None and x.exact and not is_none(a.expr, a.typ):
            R.wrap_dim(op.int_arg("dim"), len(x.shape or ()), op.name, code)
        return op.result(x.shape, _dtype_of(op, x, dtype), x.variadic)

    return h


# ---------------------------------------------------------------------------------------- join / split
def _tensor_list(op: Op, name: str) -> list[TensorInfo]:
    a = op.call.get(name)
    if a is None:
        raise Unknown
    infos: list[TensorInfo | None]
    if isinstance(a.expr, (ListExpr, TupleExpr)):
        infos = [op.conv.tensor(op.ctx.api.get_expression_type(e)) for e in a.expr.items]
    else:
        p = get_proper_type(a.typ)
        if not isinstance(p, TupleType):
            raise Unknown
        infos = [op.conv.tensor(t) for t in p.items]
    if any(i is None or not i.exact for i in infos):
        raise Unknown
    return [i for i in infos if i is not None]


def _join_dtype(op: Op, infos: Sequence[TensorInfo]) -> Type:
    names = [i.dtype for i in infos]
    if infos and all(n is not None for n in names):
        return op.conv.dtype_type(DT.result_type((n, DT.TENSOR) for n in names if n is not None))
    return op.default_dtype()


def cat(op: Op) -> Type:
    xs = _tensor_list(op, "tensors")
    return op.result(R.cat_shape([x.shape or () for x in xs], op.int_arg("dim", 0), op.name), _join_dtype(op, xs))


def stack(op: Op) -> Type:
    xs = _tensor_list(op, "tensors")
    return op.result(R.stack_shape([x.shape or () for x in xs], op.int_arg("dim", 0), op.name), _join_dtype(op, xs))


def _pieces(op: Op, x: TensorInfo, d: int, sizes: Sequence[Dim]) -> Type:
    shape = x.shape or ()
    items: list[Type] = [op.like(x, shape[:d] + (s,) + shape[d + 1 :]) for s in sizes]
    return TupleType(items, fallback=op.ctx.api.named_generic_type("builtins.tuple", [op.like(x, None)]))


def split(op: Op) -> Type:
    x = exact(op)
    shape = x.shape or ()
    d = R.wrap_dim(op.int_arg("dim", 0), len(shape), op.name, "split_error_dim_out_of_range")
    size_ = shape[d]
    arg = int_or_ints(op.call.get("split_size_or_sections"))
    if arg is None:
        raise Unknown
    if not isinstance(size_, int):
        if isinstance(arg, list):
            return _pieces(op, x, d, arg)
        raise Unknown
    return _pieces(op, x, d, R.split_sizes(size_, arg, d, shape, op.name))


def chunk(op: Op) -> Type:
    x = exact(op)
    shape = x.shape or ()
    d = R.wrap_dim(op.int_arg("dim", 0), len(shape), op.name, "chunk_error_dim_out_of_range")
    n = op.int_arg("chunks")
    size_ = shape[d]
    if not isinstance(size_, int):
        raise Unknown
    return _pieces(op, x, d, R.chunk_sizes(size_, n, op.name))


def unbind(op: Op) -> Type:
    x = exact(op)
    n, piece = R.unbind_shapes(x.shape or (), op.int_arg("dim", 0), op.name)
    if not isinstance(n, int):
        raise Unknown
    return TupleType([op.like(x, piece)] * n, fallback=op.ctx.api.named_generic_type("builtins.tuple", [op.like(x, piece)]))


# ---------------------------------------------------------------------------------------- indexing
def _index_items(op: Op, expr: Expression, typ: Type) -> list[object]:
    exprs: list[Expression | None]
    types: list[Type | None]
    if isinstance(expr, TupleExpr):
        exprs, types = list(expr.items), [None] * len(expr.items)
    else:
        p = get_proper_type(typ)
        if isinstance(p, TupleType) and not isinstance(expr, SliceExpr):
            exprs, types = [None] * len(p.items), list(p.items)
        else:
            exprs, types = [expr], [typ]
    items: list[object] = []
    for e, t in zip(exprs, types):
        items.append(_index_item(op, e, t))
    return items


def _index_item(op: Op, e: Expression | None, t: Type | None) -> object:
    if isinstance(e, SliceExpr):
        parts: list[int | None] = []
        for part in (e.begin_index, e.end_index, e.stride):
            if part is None:
                parts.append(None)
                continue
            v = int_value(part, None)
            if v is None:
                t_part = op.ctx.api.get_expression_type(part)
                v = int_value(None, t_part)
                if v is None and not is_none(part, t_part):
                    return "unknown-slice"
            parts.append(v)
        return slice(*parts)
    if is_ellipsis(e):
        return Ellipsis
    if t is None and e is not None:
        t = op.ctx.api.get_expression_type(e)
    if is_none(e, t):
        return None
    v = int_value(e, t)
    if v is not None:
        return v
    if t is None:
        raise Unknown
    p = get_proper_type(t)
    if isinstance(p, Instance) and p.type.fullname == "builtins.ellipsis":
        return Ellipsis
    if isinstance(p, Instance) and p.type.fullname == "builtins.slice":
        return "unknown-slice"
    if isinstance(p, Instance) and p.type.fullname == "builtins.int":
        return "unknown-int"
    if bool_value(e, t) is not None:
        raise Unknown
    info = op.conv.tensor(t)
    if info is not None and info.exact:
        return R.TensorIndex(info.shape or (), boolean=info.dtype == "bool")
    raise Unknown


def getitem(op: Op) -> Type:
    x = exact(op)
    a = op.call.get("index") or op.call.get("indices")
    if a is None:
        raise Unknown
    items = _index_items(op, a.expr, a.typ)
    if any(isinstance(i, R.TensorIndex) for i in items) and any(isinstance(i, str) for i in items):
        raise Unknown
    # A non-literal int or slice stands in as a tensor index of the same effect (no bounds known).
    sub = [
        R.TensorIndex(()) if i == "unknown-int" else R.TensorIndex((UNKNOWN,)) if i == "unknown-slice" else i
        for i in items
    ]
    return op.like(x, R.index_shape(x.shape or (), sub, "index"))


# ---------------------------------------------------------------------------------------- einsum / einops
def _rule(module: str, names: Sequence[str]) -> Callable[..., Any] | None:
    """A rule function of a rules module that may not exist yet (einsum / einops are added later)."""
    try:
        mod = importlib.import_module(f"shapetorch._rules.{module}")
    except ImportError:
        return None
    for n in names:
        fn = getattr(mod, n, None)
        if callable(fn):
            return fn  # type: ignore[no-any-return]
    return None


def einsum(op: Op) -> Type:
    rule = _rule("einsum", ["einsum_shape"])
    eq = op.call.str_arg("equation")
    if rule is None or eq is None:
        raise Unknown
    operands = op.call.all("operands")
    if len(operands) == 1 and isinstance(operands[0].expr, (ListExpr, TupleExpr)):
        infos = [op.conv.tensor(op.ctx.api.get_expression_type(e)) for e in operands[0].expr.items]
    else:
        infos = [op.conv.tensor(a.typ) for a in operands]
    if not infos or any(i is None or not i.exact for i in infos):
        raise Unknown
    xs = [i for i in infos if i is not None]
    shape = rule(eq, *(x.shape for x in xs))
    return op.result(tuple(shape), _join_dtype(op, xs))


def _axes(op: Op) -> dict[str, Dim]:
    sizes: dict[str, Dim] = {}
    for name, args in op.call.by_name.items():
        if name != "axes_lengths":
            continue
        for a, kw in zip(args, _kw_names(op, name)):
            if kw is not None:
                sizes[kw] = op.size(a.expr, a.typ)
    return sizes


def _kw_names(op: Op, formal: str) -> list[str | None]:
    i = op.ctx.callee_arg_names.index(formal)
    return list(op.ctx.arg_names[i])


def einops(kind: str) -> Handler:
    def h(op: Op) -> Type:
        rule = _rule("einops", ["einops_shape"])
        pattern = op.call.str_arg("pattern")
        if rule is None or pattern is None:
            raise Unknown
        x = exact(op, "tensor")
        operation = kind
        if kind == "reduce":  # einops names the operation of reduce by its reduction
            operation = op.call.str_arg("reduction") or "sum"
        return op.like(x, tuple(rule(pattern, operation, x.shape, _axes(op))))

    return h


# ---------------------------------------------------------------------------------------- factories
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


def factory(op: Op) -> Type:
    sizes = op.sizes("size")
    if any(isinstance(s, int) and s < 0 for s in sizes):
        raise Unknown
    return _factory_result(op, tuple(sizes))


def full(op: Op) -> Type:
    return factory(op)


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


def arange(op: Op) -> Type:
    vals: list[int | None] = []
    for name in ("start", "end", "step"):
        a = op.call.get(name)
        if a is None:
            vals.append(None)
            continue
        v = int_value(a.expr, a.typ)
        if v is None:
            raise Unknown
        vals.append(v)
    start, end, step = vals
    if end is None:
        start, end = 0, start
    if end is None or step == 0:
        raise Unknown
    r = range(start or 0, end, step if step is not None else 1)
    return _factory_result(op, (len(r),), "int64")


def linspace(op: Op) -> Type:
    a = op.call.get("steps")
    if a is None:
        raise Unknown
    return _factory_result(op, (op.size(a.expr, a.typ),))


# ---------------------------------------------------------------------------------------- misc
def to_dtype(fixed: str | None) -> Handler:
    def h(op: Op) -> Type:
        x = op.input()
        if fixed is not None:
            return op.result(x.shape, fixed, x.variadic)
        raise Unknown  # to(dtype) / type(dtype): the stub's Tensor[S, D2] is already exact

    return h


def reveal_shape(op: Op) -> Type:
    a = op.call.get("tensor")
    info = op.conv.tensor(a.typ) if a else None
    if info is not None:
        dtype = info.dtype or str(info.dtype_type)
        op.ctx.api.msg.note(f"Shape: {fmt_dims(info)}  dtype: {dtype}", op.ctx.context)
    return op.ctx.default_return_type
