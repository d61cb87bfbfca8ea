"""``shapetorch.nn`` under the plugin: layers typed by their literal sizes, and the functional ops.

A constructor call with literal (or ``Final``) sizes gets those sizes as type arguments:
``nn.Linear(784, 256)`` is ``Linear[Literal[784], Literal[256]]``, ``nn.Conv2d(3, 16, 3, padding=1)``
is ``Conv2d[Literal[3], Literal[16], <geometry>]`` where the geometry is a tuple type of the kernel,
stride, padding, dilation and groups. Calling a layer evaluates the rule the runtime runs for it
(``matmul_shape`` for Linear, ``conv_shape`` for ConvNd, ``normalized_shape_check`` for LayerNorm,
...) on the input type. ``Sequential`` of such layers keeps the tuple of its layers' types and folds
its input through them. A non-literal size is ``Any``: the layer is then checked where it can be.
"""

from __future__ import annotations

from collections.abc import Sequence

from mypy.nodes import ARG_POS, TempNode, TypeInfo
from mypy.plugin import MethodContext
from mypy.typeops import bind_self
from mypy.types import (
    AnyType,
    CallableType,
    Instance,
    LiteralType,
    ProperType,
    TupleType,
    Type,
    TypeOfAny,
    get_proper_type,
)

from shapetorch import _rules as R
from shapetorch._rules import nn as RN
from shapetorch._rules.dims import UNKNOWN, Dim, Shape
from shapetorch._rules.errors import RuleError

from ..args import int_list, int_value, str_value
from ..convert import TensorInfo
from ._common import Handler, Op, Unknown
from .broadcast import broadcast_infos

NN = "shapetorch.nn"
MODULE_CLASS = f"{NN}.Module"

# Layers whose call keeps the input's shape and dtype (activations, dropout, identity, softmax, ...).
SHAPE_PRESERVING = frozenset(
    "Identity ReLU ReLU6 LeakyReLU PReLU ELU CELU SELU GELU SiLU Mish Sigmoid Tanh Softplus Softsign Softshrink "
    "Hardshrink Hardsigmoid Hardswish Hardtanh Tanhshrink LogSigmoid Threshold Dropout Dropout1d Dropout2d "
    "Softmax Softmin LogSoftmax".split()
)

# ------------------------------------------------------------------------------------------ type helpers
def _int_t(op: Op, v: int) -> Type:
    return op.conv.dim_type(v)


def _tuple_t(op: Op, items: Sequence[Type]) -> TupleType:
    return TupleType(list(items), fallback=op.conv.tuple_any())


def _str_t(op: Op, s: str) -> Type:
    return LiteralType(s, fallback=op.ctx.api.named_generic_type("builtins.str", []))


def _lit_int(t: Type) -> int | None:
    p = get_proper_type(t)
    if isinstance(p, LiteralType) and type(p.value) is int:
        return p.value
    return None


def _lit_ints(t: Type) -> tuple[int, ...] | None:
    p = get_proper_type(t)
    if not isinstance(p, TupleType):
        return None
    vals = [_lit_int(i) for i in p.items]
    if any(v is None for v in vals):
        return None
    return tuple(v for v in vals if v is not None)


def _dim_of(op: Op, t: Type) -> Dim:
    return op.conv.dim(t)


def _any() -> AnyType:
    return AnyType(TypeOfAny.special_form)


# ------------------------------------------------------------------------------------------ constructors
def _size_t(op: Op, name: str, default: int | None = None) -> Type:
    """The literal type of an int argument, or Any."""
    a = op.call.get(name)
    if a is None:
        return _int_t(op, default) if default is not None else _any()
    v = int_value(a.expr, a.typ)
    return _int_t(op, v) if v is not None else _any()


def _ntuple(op: Op, name: str, nd: int, default: int | None) -> tuple[int, ...] | None:
    a = op.call.get(name)
    if a is None:
        return (default,) * nd if default is not None else None
    v = int_value(a.expr, a.typ)
    if v is not None:
        return (v,) * nd
    items = int_list(a.expr, a.typ)
    if items is None or any(i is None for i in items) or len(items) != nd:
        return None
    return tuple(i for i in items if i is not None)


def _instance(op: Op, args: Sequence[Type]) -> Type:
    p = get_proper_type(op.ctx.default_return_type)
    if not isinstance(p, Instance) or len(p.type.defn.type_vars) != len(args):
        return op.ctx.default_return_type
    return Instance(p.type, list(args))


def new_linear(op: Op) -> Type:
    return _instance(op, [_size_t(op, "in_features"), _size_t(op, "out_features")])


def new_embedding(op: Op) -> Type:
    return _instance(op, [_size_t(op, "num_embeddings"), _size_t(op, "embedding_dim")])


def new_flatten(op: Op) -> Type:
    return _instance(op, [_size_t(op, "start_dim", 1), _size_t(op, "end_dim", -1)])


def _geometry(op: Op, nd: int) -> Type:
    kernel = _ntuple(op, "kernel_size", nd, None)
    stride = _ntuple(op, "stride", nd, 1)
    dilation = _ntuple(op, "dilation", nd, 1)
    groups = op.call.int_arg("groups") if op.call.given("groups") else 1
    pad_arg = op.call.get("padding")
    padding: Type | None = None
    if pad_arg is not None:
        s = str_value(pad_arg.expr, pad_arg.typ)
        if s in ("same", "valid"):
            padding = _str_t(op, s)
    if padding is None:
        p = _ntuple(op, "padding", nd, 0)
        padding = _tuple_t(op, [_int_t(op, v) for v in p]) if p is not None else None
    if kernel is None or stride is None or dilation is None or groups is None or padding is None:
        return _any()
    return _tuple_t(op, [
        _tuple_t(op, [_int_t(op, v) for v in kernel]), _tuple_t(op, [_int_t(op, v) for v in stride]), padding,
        _tuple_t(op, [_int_t(op, v) for v in dilation]), _int_t(op, groups),
    ])


def new_conv(nd: int) -> Handler:
    def h(op: Op) -> Type:
        return _instance(op, [_size_t(op, "in_channels"), _size_t(op, "out_channels"), _geometry(op, nd)])

    return h


def new_layer_norm(op: Op) -> Type:
    a = op.call.get("normalized_shape")
    if a is None:
        return op.ctx.default_return_type
    v = int_value(a.expr, a.typ)
    if v is not None:
        return _instance(op, [_tuple_t(op, [_int_t(op, v)])])
    items = int_list(a.expr, a.typ)
    if items is None:
        return op.ctx.default_return_type
    return _instance(op, [_tuple_t(op, [_int_t(op, i) if i is not None else _any() for i in items])])


def new_batch_norm(op: Op) -> Type:
    return _instance(op, [_size_t(op, "num_features")])


def new_sequential(op: Op) -> Type:
    layers = op.call.all("args")
    if not layers or any(not isinstance(get_proper_type(a.typ), Instance) for a in layers):
        return op.ctx.default_return_type
    first = get_proper_type(layers[0].typ)
    if len(layers) == 1 and isinstance(first, Instance) and not first.type.has_base(MODULE_CLASS):
        return op.ctx.default_return_type  # Sequential(OrderedDict(...))
    return _instance(op, [_tuple_t(op, [a.typ for a in layers])])


def new_parameter(op: Op) -> Type:
    """``nn.Parameter(data)``: the data's shape and dtype, also inside another call (whose context would
    otherwise pin the generic constructor's shape to Any: ``x + nn.Parameter(st.zeros(1, 6, 16))``)."""
    x = op.input("data")
    return _instance(op, [op.conv.shape_type(x.shape, x.variadic), x.dtype_type])


CONSTRUCTORS: dict[str, Handler] = {
    "Parameter": new_parameter,
    "Buffer": new_parameter,
    "Linear": new_linear,
    "Embedding": new_embedding,
    "Flatten": new_flatten,
    "Conv1d": new_conv(1),
    "Conv2d": new_conv(2),
    "Conv3d": new_conv(3),
    "LayerNorm": new_layer_norm,
    "RMSNorm": new_layer_norm,
    "BatchNorm1d": new_batch_norm,
    "BatchNorm2d": new_batch_norm,
    "Sequential": new_sequential,
}


# ------------------------------------------------------------------------------------------ layer calls
def _linear_shape(op: Op, x: TensorInfo, w_t: Shape) -> Type:
    """``x @ w_t`` where ``w_t`` is the (in, out) transposed weight, as the runtime's ``linear``."""
    if x.shape is None:
        return op.like(x, None)
    if x.variadic is None:
        return op.like(x, R.matmul_shape(x.shape, w_t, "matmul"))
    if len(x.shape) >= 2:
        return op.like(x, R.matmul_shape(x.shape, w_t, "matmul"), x.variadic)
    if len(x.shape) == 1:
        out = R.matmul_shape((UNKNOWN, *x.shape), w_t, "matmul")
        return op.like(x, out[1:], x.variadic)
    return op.like(x, None)


def _conv(op: Op, x: TensorInfo, weight: Shape, stride: tuple[int, ...] | None, padding: tuple[int, ...] | str | None,
          dilation: tuple[int, ...] | None, groups: int | None, name: str) -> Type:
    if not x.exact or groups is None:
        return op.like(x, None)
    shape = x.shape or ()
    nd = len(weight) - 2
    known = stride is not None and dilation is not None and padding is not None and all(
        isinstance(k, int) for k in weight[2:])
    if not known:  # the geometry is unknown: check the channels only (kernel 1), spatial sizes unknown
        out = RN.conv_shape(shape, tuple(weight[:2]) + (1,) * nd, (1,) * nd, (0,) * nd, (1,) * nd, groups, name)
        return op.like(x, out[: len(out) - nd] + (UNKNOWN,) * nd)
    assert stride is not None and dilation is not None and padding is not None
    if padding == "valid":
        padding = (0,) * nd
    if padding == "same":
        if any(s != 1 for s in stride):
            raise Unknown  # torch rejects it; not a shape rule
        if len(shape) in (nd + 1, nd + 2):
            lead = len(shape) - nd
            kernel = [k if isinstance(k, int) else 1 for k in weight[2:]]
            padded = tuple(
                d + dl * (k - 1) if isinstance(d, int) and i >= lead else d
                for i, (d, k, dl) in enumerate(zip(shape, [0] * lead + kernel, (1,) * lead + dilation)))
            shape = padded
        padding = (0,) * nd
    assert isinstance(padding, tuple)
    return op.like(x, RN.conv_shape(shape, weight, stride, padding, dilation, groups, name))


def _geometry_of(t: Type) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...] | str, tuple[int, ...], int] | None:
    p = get_proper_type(t)
    if not isinstance(p, TupleType) or len(p.items) != 5:
        return None
    kernel, stride, dilation = _lit_ints(p.items[0]), _lit_ints(p.items[1]), _lit_ints(p.items[3])
    groups = _lit_int(p.items[4])
    pad_p = get_proper_type(p.items[2])
    padding: tuple[int, ...] | str | None
    padding = pad_p.value if isinstance(pad_p, LiteralType) and isinstance(pad_p.value, str) else _lit_ints(pad_p)
    if kernel is None or stride is None or dilation is None or groups is None or padding is None:
        return None
    return kernel, stride, padding, dilation, groups


def apply_layer(op: Op, layer: Instance, x: TensorInfo) -> Type:
    """The type of ``layer(x)``; raises RuleError on a proven mismatch, Unknown when not known."""
    info = known_layer(layer.type)
    if info is None:
        return _user_layer(op, layer, x)
    name = info.name
    args = _layer_args(layer, info)
    if name in SHAPE_PRESERVING:
        return op.like(x, x.shape, x.variadic)
    if name == "Linear":
        i, o = (_dim_of(op, t) for t in args)
        return _linear_shape(op, x, (i, o))
    if name in ("Conv1d", "Conv2d", "Conv3d"):
        nd = int(name[4])
        c_in, c_out = _dim_of(op, args[0]), _dim_of(op, args[1])
        geo = _geometry_of(args[2])
        if geo is None:
            return _conv(op, x, (c_out, c_in, *([UNKNOWN] * nd)), None, None, None, 1, name.lower())
        kernel, stride, padding, dilation, groups = geo
        w_in = c_in // groups if isinstance(c_in, int) else UNKNOWN
        return _conv(op, x, (c_out, w_in, *kernel), stride, padding, dilation, groups, name.lower())
    if name == "Embedding":
        e = _dim_of(op, args[1])
        shape = None if x.shape is None else (*x.shape, e)
        return op.result(shape, "float32", x.variadic)
    if name in ("LayerNorm", "RMSNorm"):
        normalized = op.conv.shape(args[0])[0]
        if normalized is None or x.shape is None:
            return op.like(x, x.shape, x.variadic)
        if x.exact or len(x.shape) >= len(normalized):
            RN.normalized_shape_check(x.shape, normalized, "layer_norm" if name == "LayerNorm" else "rms_norm")
        return op.like(x, x.shape, x.variadic)
    if name in RN.NORM_LAYER_RANKS:
        if x.exact and x.shape is not None:
            RN.batch_norm_rank_check(x.shape, name)
            RN.channels_check(x.shape, _dim_of(op, args[0]), op=name)
        return op.like(x, x.shape, x.variadic)
    if name == "Flatten":
        start, end = _lit_int(args[0]), _lit_int(args[1])
        if start is None or end is None or not x.exact:
            return op.like(x, None)
        return op.like(x, R.flatten_shape(x.shape or (), start, end, "flatten"))
    if name == "Sequential":
        return _sequential(op, args[0], x)
    from .layers import CALLS  # the recurrent, padding, ... layers (their module imports this one's helpers)

    if name in CALLS:
        return CALLS[name](op, args, x)
    return op.like(x, None)


def known_layer(info: TypeInfo) -> TypeInfo | None:
    """The shapetorch.nn class in ``info``'s MRO that decides the call (None for a user forward)."""
    for base in info.mro:
        if base.fullname.startswith(NN + ".") and base.fullname.count(".") == 2:
            if base.fullname == MODULE_CLASS:
                return None
            return base
        if "forward" in base.names or "__call__" in base.names:
            return None  # a user class that defines its own forward
    return None


def forward_signature(t: Type) -> CallableType | None:
    """The bound ``forward`` of a user Module instance (None for shapetorch's layers or an untyped one)."""
    p = get_proper_type(t)
    if not isinstance(p, Instance) or not p.type.has_base(MODULE_CLASS) or known_layer(p.type) is not None:
        return None
    for base in p.type.mro:
        if base.fullname.startswith(NN + "."):
            return None
        node = base.names.get("forward")
        if node is None:
            continue
        ftype = get_proper_type(node.type) if node.type is not None else None
        if isinstance(ftype, CallableType) and not ftype.implicit:
            bound = bind_self(ftype, p)
            return bound if isinstance(bound, CallableType) else None
        return None
    return None


def _layer_args(layer: Instance, known: TypeInfo) -> list[Type]:
    from mypy.maptype import map_instance_to_supertype

    mapped = map_instance_to_supertype(layer, known)
    return list(mapped.args)


def _user_layer(op: Op, layer: Instance, x: TensorInfo) -> Type:
    """A user Module: its typed forward, called on ``x`` as mypy would."""
    node = layer.type.get("forward")
    if node is None or node.type is None:
        raise Unknown
    ftype = get_proper_type(node.type)
    if not isinstance(ftype, CallableType):
        raise Unknown
    bound = bind_self(ftype, layer)
    arg = TempNode(op.conv.tensor_type(x.shape, x.dtype_type, x.variadic), context=op.ctx.context)
    ret, _ = op.ctx.api.expr_checker.check_call(bound, [arg], [ARG_POS], op.ctx.context)  # type: ignore[attr-defined]
    result: Type = ret
    return result


def _sequential(op: Op, layers_t: Type, x: TensorInfo) -> Type:
    p = get_proper_type(layers_t)
    if not isinstance(p, TupleType):
        raise Unknown
    current = x
    result: Type = op.like(x, x.shape, x.variadic)
    for item in p.items:
        layer = get_proper_type(item)
        if not isinstance(layer, Instance):
            raise Unknown
        result = apply_layer(op, layer, current)
        nxt = op.conv.tensor(result)
        if nxt is None:
            return result
        current = nxt
    return result


def layer_call(op: Op) -> Type:
    assert isinstance(op.ctx, MethodContext)
    layer = get_proper_type(op.ctx.type)
    if not isinstance(layer, Instance):
        raise Unknown
    from .layers import CALLS, OWN_ARGUMENTS

    info = known_layer(layer.type)
    if info is not None and info.name in OWN_ARGUMENTS:
        return CALLS[info.name](op, _layer_args(layer, info), None)
    x = op.tensor_arg("input")
    return apply_layer(op, layer, x)


# ------------------------------------------------------------------------------------------ functional
def _tuple_arg(op: Op, name: str, nd: int, default: int) -> tuple[int, ...] | None:
    return _ntuple(op, name, nd, default)


def f_linear(op: Op) -> Type:
    x, w = op.input(), op.tensor_arg("weight")
    if not w.exact:
        raise Unknown
    ws = w.shape or ()
    w_t: Shape = (ws[1], ws[0]) if len(ws) == 2 else ws
    out = _linear_shape(op, x, w_t)
    b = op.call.get("bias")
    binfo = op.conv.tensor(b.typ) if b is not None else None
    res = op.conv.tensor(out)
    if binfo is not None and res is not None:
        shape, variadic = broadcast_infos(op_named(op, "add"), [res, binfo])
        return op.like(x, shape, variadic)
    return out


def op_named(op: Op, name: str) -> Op:
    other = Op(name, op.ctx, op.method)
    other.conv = op.conv
    return other


def f_conv(nd: int) -> Handler:
    def h(op: Op) -> Type:
        x, w = op.input(), op.tensor_arg("weight")
        if not w.exact or len(w.shape or ()) != nd + 2:
            raise Unknown
        stride = _tuple_arg(op, "stride", nd, 1)
        dilation = _tuple_arg(op, "dilation", nd, 1)
        groups = op.int_arg("groups", 1)
        padding: tuple[int, ...] | str | None
        pad = op.call.get("padding")
        s = str_value(pad.expr, pad.typ) if pad is not None else None
        padding = s if s in ("same", "valid") else _tuple_arg(op, "padding", nd, 0)
        return _conv(op, x, w.shape or (), stride, padding, dilation, groups, op.name)

    return h


def f_embedding(op: Op) -> Type:
    x, w = op.input(), op.tensor_arg("weight")
    if x.shape is None or not w.exact or len(w.shape or ()) != 2:
        raise Unknown
    return op.result((*x.shape, (w.shape or ())[1]), w.dtype_type, x.variadic)


def f_layer_norm(op: Op) -> Type:
    x = op.input()
    normalized = op.sizes("normalized_shape")
    if x.shape is not None and (x.exact or len(x.shape) >= len(normalized)):
        RN.normalized_shape_check(x.shape, tuple(normalized), op.name)
    return op.like(x, x.shape, x.variadic)


def f_glu(op: Op) -> Type:
    """The dim halved (of an exact shape only: a dim counted into unknown leading dims would be misnamed)."""
    x = op.input()
    if not x.exact:
        raise Unknown
    return op.like(x, RN.glu_shape(x.shape or (), op.int_arg("dim", -1), op.name))


FUNCTIONAL: dict[str, Handler] = {
    "glu": f_glu,
    "linear": f_linear,
    "conv1d": f_conv(1),
    "conv2d": f_conv(2),
    "conv3d": f_conv(3),
    "embedding": f_embedding,
    "layer_norm": f_layer_norm,
    "rms_norm": f_layer_norm,
}


def is_module(t: ProperType) -> bool:
    return isinstance(t, Instance) and t.type.has_base(MODULE_CLASS)


__all__ = ["CONSTRUCTORS", "FUNCTIONAL", "RuleError", "apply_layer", "layer_call"]
