"""More op hooks: selections returning (values, indices), sorts and scans, gather/scatter, tiling,
rolling and flipping, tensor_split, ``x[i] = v`` and in-place operators.

Rules come from ``shapetorch._rules`` (``scan``, ``sorting``, ``scatter``, ``joining``, ``inplace``; the
tiling rules from ``tiling``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mypy.expandtype import expand_type_by_instance
from mypy.nodes import TypeInfo
from mypy.plugin import MethodContext
from mypy.types import TupleType, Type

from shapetorch import _rules as R
from shapetorch._rules.dims import Dim, Shape
from shapetorch._rules.errors import RuleError
from shapetorch._rules.inplace import inplace_shape
from shapetorch._rules.scan import cum_shape
from shapetorch._rules.sorting import kthvalue_shape, select_reduce_shape, topk_shape

from . import hooks as H
from .args import int_or_ints, is_none
from .convert import MODULE, TensorInfo

VALUES_INDICES = f"{MODULE}._ValuesIndices"


def _rule(module: str, name: str) -> Callable[..., Any]:
    fn = H._rule(module, [name])
    if fn is None:
        raise H.Unknown
    return fn


def values_indices(op: H.Op, x: TensorInfo, shape: Shape | None, variadic: Type | None = None) -> Type:
    """``_ValuesIndices[shape, dtype]`` as the named tuple mypy knows (values, indices)."""
    inst = op.ctx.api.named_generic_type(VALUES_INDICES, [op.conv.shape_type(shape, variadic), x.dtype_type])
    info: TypeInfo = inst.type
    if info.tuple_type is None:
        return inst
    items = expand_type_by_instance(info.tuple_type, inst)
    if not isinstance(items, TupleType):
        return inst
    return items.copy_modified(fallback=inst)


def vi(handler: H.Handler) -> H.Handler:
    """A (values, indices) op: after a reported error the result is still the named tuple, unknown shape."""

    def h(op: H.Op) -> Type:
        try:
            return handler(op)
        except RuleError as err:
            unknown = op.fail(err)
            a = op.call.get("dim") or op.call.get("other")
            if a is not None and op.conv.tensor(a.typ) is not None:
                return unknown  # max(other): elementwise, a tensor
            try:
                dtype = op.input().dtype_type
            except H.Unknown:
                dtype = op.conv.any()
            return values_indices(op, TensorInfo(None, None, dtype), None)

    return h


def _dim(op: H.Op, name: str = "dim", default: int | None = None) -> int:
    return op.int_arg(name, default)


def _int_or_list(op: H.Op, name: str) -> list[int] | None:
    """An int or a literal sequence of ints (None when absent or None)."""
    a = op.call.get(name)
    if a is None or is_none(a.expr, a.typ):
        return None
    value = int_or_ints(a)
    if value is None:
        raise H.Unknown
    return [value] if isinstance(value, int) else value


# ------------------------------------------------------------------------------------------ selections
def minmax(op: H.Op) -> Type:
    """``max()``, ``max(dim, keepdim)`` -> (values, indices), ``max(other)`` elementwise."""
    a = op.call.get("dim") or op.call.get("other")
    if a is not None and op.conv.tensor(a.typ) is not None:  # max(other): the elementwise maximum
        x = op.input()
        other = op.conv.tensor(a.typ)
        assert other is not None
        shape, variadic = H.broadcast_infos(H.Op("maximum", op.ctx, op.method), [x, other])
        return op.result(shape, x.dtype_type if x.dtype == other.dtype else None, variadic)
    if a is None or is_none(a.expr, a.typ):
        raise H.Unknown
    x = H.exact(op)
    out = R.reduce_shape(x.shape or (), _dim(op), op.bool_arg("keepdim"), op.name)
    return values_indices(op, x, out)


def sort(op: H.Op) -> Type:
    x = op.input()
    if x.exact:
        cum_shape(x.shape or (), _dim(op, default=-1), op.name)
    return values_indices(op, x, x.shape, x.variadic)


def argsort(op: H.Op) -> Type:
    x = op.input()
    if x.exact:
        cum_shape(x.shape or (), _dim(op, default=-1), op.name)
    return op.result(x.shape, "int64", x.variadic)


def topk(op: H.Op) -> Type:
    x = H.exact(op)
    return values_indices(op, x, topk_shape(x.shape or (), op.int_arg("k"), _dim(op, default=-1), op.name))


def kthvalue(op: H.Op) -> Type:
    x = H.exact(op)
    out = kthvalue_shape(x.shape or (), op.int_arg("k"), _dim(op, default=-1), op.bool_arg("keepdim"), op.name)
    return values_indices(op, x, out)


def select_reduce(op: H.Op) -> Type:
    """median / nanmedian / mode with a dim -> (values, indices); without one: the stub's scalar."""
    a = op.call.get("dim")
    if op.name != "mode" and (a is None or is_none(a.expr, a.typ)):
        raise H.Unknown
    x = H.exact(op)
    out = select_reduce_shape(x.shape or (), _dim(op, default=-1), op.bool_arg("keepdim"), op.name)
    return values_indices(op, x, out)


def cum_values_indices(op: H.Op) -> Type:
    x = op.input()
    if x.exact:
        cum_shape(x.shape or (), _dim(op), op.name)
    return values_indices(op, x, x.shape, x.variadic)


# ------------------------------------------------------------------------------------------ gather / scatter
def gather(op: H.Op) -> Type:
    x, index = H.exact(op), op.tensor_arg("index")
    if not index.exact:
        raise H.Unknown
    return op.like(x, R.gather_shape(x.shape or (), _dim(op), index.shape or (), op.name))


def scatter(op: H.Op) -> Type:
    x, index = H.exact(op), op.tensor_arg("index")
    if not index.exact:
        raise H.Unknown
    a = op.call.get("src")
    src = op.conv.tensor(a.typ) if a is not None else None
    if src is not None and not src.exact:
        raise H.Unknown
    return op.like(x, R.scatter_check(x.shape or (), _dim(op), index.shape or (), src.shape if src else None, op.name))


def index_select(op: H.Op) -> Type:
    x, index = H.exact(op), op.tensor_arg("index")
    if not index.exact:
        raise H.Unknown
    return op.like(x, R.index_select_shape(x.shape or (), _dim(op), index.shape or (), op.name))


# ------------------------------------------------------------------------------------------ tiling, flipping
def repeat(op: H.Op) -> Type:
    x = H.exact(op)
    sizes = op.sizes("sizes")
    if not all(type(s) is int for s in sizes):
        raise H.Unknown
    return op.like(x, _rule("tiling", "repeat_shape")(x.shape or (), sizes, op.name))


def tile(op: H.Op) -> Type:
    x = H.exact(op)
    dims = op.sizes("dims")
    if not all(type(s) is int for s in dims):
        raise H.Unknown
    return op.like(x, _rule("tiling", "tile_shape")(x.shape or (), dims, op.name))


def roll(op: H.Op) -> Type:
    x = op.input()
    if x.exact:
        shifts = _int_or_list(op, "shifts")
        if shifts is None:
            raise H.Unknown
        dims = _int_or_list(op, "dims") or []
        _rule("tiling", "roll_dims")(x.shape or (), shifts, dims, op.name)
    return op.like(x, x.shape, x.variadic)


def flip(op: H.Op) -> Type:
    x = op.input()
    if x.exact:
        dims = _int_or_list(op, "dims")
        if dims is None and op.call.given("args"):
            dims = [d for d in op.sizes("args") if isinstance(d, int)]
        if dims is not None:
            flip_dims = H._rule("tiling", ["flip_dims"])
            if flip_dims is not None:
                flip_dims(x.shape or (), dims, op.name)
            else:
                R.wrap_dims(dims, len(x.shape or ()), op.name, "flip_error_dim_out_of_range")
    return op.like(x, x.shape, x.variadic)


def tensor_split(op: H.Op) -> Type:
    x = H.exact(op)
    shape = x.shape or ()
    d = R.wrap_dim(op.int_arg("dim", 0), len(shape), op.name, "split_error_dim_out_of_range")
    size = shape[d]
    arg = int_or_ints(op.call.get("indices_or_sections"))
    if arg is None:
        raise H.Unknown
    if not isinstance(size, int):
        raise H.Unknown
    bounds = R.tensor_split_bounds(size, arg, op.name)
    pieces: list[Dim] = [b - a_ for a_, b in bounds]
    items_t: list[Type] = [op.like(x, shape[:d] + (p,) + shape[d + 1 :]) for p in pieces]
    return TupleType(items_t, fallback=op.ctx.api.named_generic_type("builtins.tuple", [op.like(x, None)]))


# ------------------------------------------------------------------------------------------ writes
def setitem(op: H.Op) -> Type:
    """``x[index] = value``: the value must broadcast to ``x[index]`` (torch drops its leading 1s)."""
    x = H.exact(op)
    index, value = op.call.by_name.get("index"), op.call.by_name.get("value")
    if index is None or value is None:  # a dunder's formals are unnamed to mypy
        if len(op.call.unnamed) != 2:
            raise H.Unknown
        index, value = op.call.unnamed
    if not index or not value:
        raise H.Unknown
    index_a, value_a = index[0], value[0]
    v = op.conv.tensor(value_a.typ)
    if v is None or not v.exact:
        raise H.Unknown
    items = H._index_items(op, index_a.expr, index_a.typ)
    if any(isinstance(i, str) for i in items):
        raise H.Unknown
    target = R.index_shape(x.shape or (), items, "index")
    R.setitem_value_shape(v.shape or (), target, "index_put")
    return op.ctx.default_return_type


def inplace(binary_op: str) -> H.Handler:
    """``x += y`` / ``x.add_(y)``: the out-of-place result must keep ``x``'s shape; the result is x."""

    def h(op: H.Op) -> Type:
        assert isinstance(op.ctx, MethodContext)
        x = op.input()
        a = op.call.get("other") or (op.call.unnamed[0][0] if op.call.unnamed and op.call.unnamed[0] else None)
        if a is None:
            raise H.Unknown
        other = op.conv.tensor(a.typ)
        if other is None or not x.exact or not other.exact:
            return op.ctx.default_return_type
        out = R.broadcast_shapes(x.shape or (), other.shape or (), op=binary_op)
        inplace_shape(x.shape or (), out, op.name)
        return op.ctx.default_return_type

    return h


INPLACE_DUNDERS = {"iadd": "add", "isub": "sub", "imul": "mul", "itruediv": "div", "ifloordiv": "floor_divide",
                   "imod": "remainder", "ipow": "pow", "iand": "bitwise_and", "ior": "bitwise_or",
                   "ixor": "bitwise_xor"}
INPLACE_METHODS = {"add_": "add", "sub_": "sub", "mul_": "mul", "div_": "div"}

METHODS: dict[str, tuple[H.Handler, str]] = {
    "__setitem__": (setitem, "index_put"),
    **{f"__{d}__": (inplace(b), f"__{d}__") for d, b in INPLACE_DUNDERS.items()},
    **{m: (inplace(b), m) for m, b in INPLACE_METHODS.items()},
    "repeat": (repeat, "repeat"),
}
COMMON: dict[str, tuple[H.Handler, str]] = {
    "max": (vi(minmax), "max"), "min": (vi(minmax), "min"),
    "sort": (vi(sort), "sort"), "argsort": (argsort, "argsort"),
    "topk": (vi(topk), "topk"), "kthvalue": (vi(kthvalue), "kthvalue"),
    "median": (vi(select_reduce), "median"), "nanmedian": (vi(select_reduce), "nanmedian"), "mode": (vi(select_reduce), "mode"),
    "cummax": (vi(cum_values_indices), "cummax"), "cummin": (vi(cum_values_indices), "cummin"),
    "gather": (gather, "gather"), "scatter": (scatter, "scatter"), "scatter_add": (scatter, "scatter_add"),
    "scatter_reduce": (scatter, "scatter_reduce"), "index_select": (index_select, "index_select"),
    "tile": (tile, "tile"), "roll": (roll, "roll"), "flip": (flip, "flip"),
    "tensor_split": (tensor_split, "tensor_split"),
}

