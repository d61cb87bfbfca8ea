"""The recurrent, attention, Transformer, padding, pixel-shuffle, Upsample, distance, pooling and Unflatten layers.

Each constructor keeps its literal configuration as the layer's type arguments (the stub classes are
generic in them): ``nn.LSTM(10, 20, batch_first=True)`` is ``LSTM[Literal[10], Literal[20], tuple[<num_layers>,
<bidirectional>, <batch_first>, <proj_size>]]``, ``nn.ZeroPad2d(1)`` is ``ZeroPad2d[tuple[1, 1, 1, 1]]``. Calling
the layer runs the rule the runtime layer checks before it computes (``rnn_shape``, ``rnn_cell_shape``,
``pad_layer_shape``, ``pixel_shuffle_shape``, ``interpolate_shape``, ``distance_shape``, ``mha_shape``,
``transformer_layer_shape``, ``transformer_shape``, ``pool_shape``, ``adaptive_pool_shape``), so the verdict, the
code and the message are the runtime's. ``hooks/nn.py`` hands these layers' calls here (``CALLS``). A configuration that is not literal is ``Any``: the call then keeps the stub's type.
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.nodes import Expression, FloatExpr, IntExpr, ListExpr, TupleExpr, UnaryExpr
from mypy.types import Instance, LiteralType, NoneType, TupleType, Type, get_proper_type

from shapetorch._rules import dtypes as DT
from shapetorch._rules import nn as RN
from shapetorch._rules.dims import UNKNOWN, Shape
from shapetorch._rules.views import unflatten_shape

from ..args import int_list, int_value, is_none
from ..convert import TensorInfo
from ._common import Handler, Op, Unknown
from .nn import _any, _instance, _int_t, _lit_int, _lit_ints, _ntuple, _size_t, _str_t, _tuple_t

# A layer call: the layer's type arguments and the tensor it is called on (None when the call's first formal is
# not ``input``: the distance layers' ``x1``, read from the call itself).
LayerCall = Callable[[Op, list[Type], TensorInfo | None], Type]


def _bool_t(op: Op, v: bool) -> Type:
    return LiteralType(v, fallback=op.ctx.api.named_generic_type("builtins.bool", []))


def _lit_bool(t: Type) -> bool | None:
    p = get_proper_type(t)
    return p.value if isinstance(p, LiteralType) and isinstance(p.value, bool) else None


def _lit_str(t: Type) -> str | None:
    p = get_proper_type(t)
    return p.value if isinstance(p, LiteralType) and isinstance(p.value, str) else None


def _bool_arg_t(op: Op, name: str, default: bool) -> Type:
    v = op.call.bool_arg(name, default)
    return _bool_t(op, v) if v is not None else _any()


def _number(expr: Expression) -> float | None:
    """A literal int or float (``2``, ``1.5``, ``-0.5``) as a float."""
    if isinstance(expr, (IntExpr, FloatExpr)):
        return float(expr.value)
    if isinstance(expr, UnaryExpr) and expr.op == "-":
        v = _number(expr.expr)
        return -v if v is not None else None
    return None


def _x(op: Op, x: TensorInfo | None) -> TensorInfo:
    """The called-on tensor, when its shape is fully known."""
    if x is None:
        x = op.tensor_arg("input")
    if not x.exact:
        raise Unknown
    return x


def _shape(op: Op, t: Type | None) -> Shape | None:
    """The exact shape of an optional tensor argument (None when absent or not known)."""
    if t is None:
        return None
    info = op.conv.tensor(t)
    return info.shape if info is not None and info.exact else None


# ------------------------------------------------------------------------------------------ recurrent
def new_recurrent(op: Op) -> Type:
    num_layers = _size_t(op, "num_layers", 1)
    proj = _size_t(op, "proj_size", 0)
    config = _tuple_t(op, [num_layers, _bool_arg_t(op, "bidirectional", False), _bool_arg_t(op, "batch_first", False),
                           proj])
    return _instance(op, [_size_t(op, "input_size"), _size_t(op, "hidden_size"), config])


def _states(op: Op, lstm: bool) -> tuple[Shape | None, Shape | None]:
    """The shapes of the initial states passed as ``hx`` (an LSTM's ``(h_0, c_0)``), None where not known."""
    a = op.call.get("hx")
    if a is None:
        return None, None
    if not lstm:
        return _shape(op, a.typ), None
    p = get_proper_type(a.typ)
    if isinstance(p, TupleType) and len(p.items) == 2:
        return _shape(op, p.items[0]), _shape(op, p.items[1])
    return None, None


def call_recurrent(name: str) -> LayerCall:
    def h(op: Op, args: list[Type], x: TensorInfo | None) -> Type:
        x = _x(op, x)
        p = get_proper_type(args[2])
        if not isinstance(p, TupleType) or len(p.items) != 4:
            raise Unknown
        num_layers, proj = _lit_int(p.items[0]), _lit_int(p.items[3])
        bidirectional, batch_first = _lit_bool(p.items[1]), _lit_bool(p.items[2])
        if num_layers is None or proj is None or bidirectional is None or batch_first is None:
            raise Unknown
        lstm = name == "LSTM"
        hx, cx = _states(op, lstm)
        out, h_n, c_n = RN.rnn_shape(x.shape or (), op.conv.dim(args[0]), op.conv.dim(args[1]), num_layers,
                                     bidirectional, batch_first, proj, hx, cx, name)
        state = _tuple_t(op, [op.like(x, h_n), op.like(x, c_n)]) if lstm else op.like(x, h_n)
        return _tuple_t(op, [op.like(x, out), state])

    return h


def new_cell(op: Op) -> Type:
    return _instance(op, [_size_t(op, "input_size"), _size_t(op, "hidden_size")])


def call_cell(name: str) -> LayerCall:
    def h(op: Op, args: list[Type], x: TensorInfo | None) -> Type:
        x = _x(op, x)
        lstm = name == "LSTMCell"
        hx, cx = _states(op, lstm)
        out = RN.rnn_cell_shape(x.shape or (), op.conv.dim(args[0]), op.conv.dim(args[1]), hx, cx, name)
        return _tuple_t(op, [op.like(x, out), op.like(x, out)]) if lstm else op.like(x, out)

    return h


# ------------------------------------------------------------------------------------------ padding
PAD_MODES = {"Zero": "constant", "Constant": "constant", "Reflection": "reflect", "Replication": "replicate",
             "Circular": "circular"}


def new_pad(dims: int) -> Handler:
    """``padding`` as the runtime keeps it: an int is repeated for both sides of the last ``dims`` dims."""
    def h(op: Op) -> Type:
        a = op.call.get("padding")
        if a is None:
            raise Unknown
        v = int_value(a.expr, a.typ)
        items = [v] * (2 * dims) if v is not None else int_list(a.expr, a.typ)
        if items is None or any(i is None for i in items):
            return _instance(op, [_any()])
        return _instance(op, [_tuple_t(op, [_int_t(op, i) for i in items if i is not None])])

    return h


def call_pad(name: str) -> LayerCall:
    mode = PAD_MODES[name[: name.index("Pad")]]

    def h(op: Op, args: list[Type], x: TensorInfo | None) -> Type:
        x = _x(op, x)
        pad = _lit_ints(args[0])
        if pad is None:
            raise Unknown
        return op.like(x, RN.pad_layer_shape(x.shape or (), pad, mode, int(name[-2]), name))

    return h


# ------------------------------------------------------------------------------------------ pixel shuffle
def new_factor(arg: str) -> Handler:
    def h(op: Op) -> Type:
        return _instance(op, [_size_t(op, arg)])

    return h


def call_pixel(rule_op: str) -> LayerCall:
    def h(op: Op, args: list[Type], x: TensorInfo | None) -> Type:
        x = _x(op, x)
        factor = _lit_int(args[0])
        if factor is None:
            raise Unknown
        return op.like(x, RN.pixel_shuffle_shape(x.shape or (), factor, rule_op))

    return h


# ------------------------------------------------------------------------------------------ Upsample
def _scales(op: Op, name: str) -> Type | None:
    """A literal scale_factor (a number or a tuple of numbers) as string literals: ``tuple[L["1.5"]]`` (a float
    cannot be a Literal); an int or a tuple of ints for ``size``. None when absent, Any when not literal."""
    a = op.call.get(name)
    if a is None or is_none(a.expr, a.typ):
        return None
    if name == "size":
        v = int_value(a.expr, a.typ)
        if v is not None:
            return _int_t(op, v)
        items = int_list(a.expr, a.typ)
        if items is None or any(i is None for i in items):
            return _any()
        return _tuple_t(op, [_int_t(op, i) for i in items if i is not None])
    single = _number(a.expr)
    if single is not None:
        return _str_t(op, repr(single))
    if isinstance(a.expr, (TupleExpr, ListExpr)):
        nums = [_number(e) for e in a.expr.items]
        if all(n is not None for n in nums):
            return _tuple_t(op, [_str_t(op, repr(n)) for n in nums])
    return _any()


def new_upsample(op: Op) -> Type:
    size, scale = _scales(op, "size"), _scales(op, "scale_factor")
    mode = op.call.str_arg("mode") if op.call.given("mode") else "nearest"
    none = NoneType()
    return _instance(op, [_tuple_t(op, [size if size is not None else none, scale if scale is not None else none,
                                        _str_t(op, mode) if mode is not None else _any()])])


def call_upsample(op: Op, args: list[Type], x: TensorInfo | None) -> Type:
    x = _x(op, x)
    p = get_proper_type(args[0])
    if not isinstance(p, TupleType) or len(p.items) != 3:
        raise Unknown
    size_t, scale_t, mode = (get_proper_type(t) for t in p.items)
    mode_s = _lit_str(mode)
    size: int | tuple[int, ...] | None = None
    scale: float | tuple[float, ...] | None = None
    if not isinstance(size_t, NoneType):
        size = _lit_int(size_t)
        if size is None:
            size = _lit_ints(size_t)
        if size is None:
            raise Unknown
    if not isinstance(scale_t, NoneType):
        s = _lit_str(scale_t)
        if s is not None:
            scale = float(s)
        elif isinstance(scale_t, TupleType) and all(_lit_str(i) is not None for i in scale_t.items):
            scale = tuple(float(_lit_str(i) or 0) for i in scale_t.items)
        else:
            raise Unknown
    if mode_s is None:
        raise Unknown
    return op.like(x, RN.interpolate_shape(x.shape or (), size, scale, mode_s, "Upsample"))


# ------------------------------------------------------------------------------------------ distances
def new_cosine(op: Op) -> Type:
    return _instance(op, [_size_t(op, "dim", 1)])


def new_pairwise(op: Op) -> Type:
    return _instance(op, [_bool_arg_t(op, "keepdim", False)])


def call_distance(name: str) -> LayerCall:
    def h(op: Op, args: list[Type], x: TensorInfo | None) -> Type:
        a, b = op.tensor_arg("x1"), op.tensor_arg("x2")
        if not a.exact or not b.exact:
            raise Unknown
        dim: int | None = -1
        keepdim: bool | None = False
        if name == "CosineSimilarity":
            dim, rule_op = _lit_int(args[0]), "cosine_similarity"
        else:
            keepdim, rule_op = _lit_bool(args[0]), "pairwise_distance"
        if dim is None or keepdim is None:
            raise Unknown
        return op.like(a, RN.distance_shape(a.shape or (), b.shape or (), dim, keepdim, rule_op))

    return h


# ------------------------------------------------------------------------------------------ attention
def _size_or(op: Op, name: str, default: Type) -> Type:
    """An optional int argument's literal type; ``default`` when it is absent or None."""
    a = op.call.get(name)
    return default if a is None or is_none(a.expr, a.typ) else _size_t(op, name)


def new_mha(op: Op) -> Type:
    embed = _size_t(op, "embed_dim")
    kdim, vdim = _size_or(op, "kdim", embed), _size_or(op, "vdim", embed)
    config = _tuple_t(op, [kdim, vdim, _bool_arg_t(op, "batch_first", False), _size_t(op, "num_heads")])
    return _instance(op, [embed, config])


def new_transformer_layer(op: Op) -> Type:
    """TransformerEncoderLayer/DecoderLayer(d_model, ...) and Transformer(d_model=512, ...)."""
    return _instance(op, [_size_t(op, "d_model", 512 if op.name == "Transformer" else None),
                          _bool_arg_t(op, "batch_first", False)])


def new_transformer_stack(op: Op) -> Type:
    """TransformerEncoder/Decoder(layer, num_layers): the layer's d_model and batch_first."""
    a = op.call.get("encoder_layer" if op.name == "TransformerEncoder" else "decoder_layer")
    p = get_proper_type(a.typ) if a is not None else None
    if not isinstance(p, Instance) or len(p.args) != 2:
        return _instance(op, [_any(), _any()])
    return _instance(op, list(p.args))


def _tensor_named(op: Op, name: str, x: TensorInfo | None = None) -> TensorInfo:
    t = x if x is not None else op.tensor_arg(name)
    if not t.exact:
        raise Unknown
    return t


def call_mha(op: Op, args: list[Type], x: TensorInfo | None) -> Type:
    q, k, v = (_tensor_named(op, n) for n in ("query", "key", "value"))
    p = get_proper_type(args[1])
    if not isinstance(p, TupleType) or len(p.items) != 4:
        raise Unknown
    batch_first = _lit_bool(p.items[2])
    need, average = op.call.bool_arg("need_weights", True), op.call.bool_arg("average_attn_weights", True)
    if batch_first is None or need is None or average is None:
        raise Unknown
    out, weights = RN.mha_shape(q.shape or (), k.shape or (), v.shape or (), op.conv.dim(args[0]),
                                op.conv.dim(p.items[0]), op.conv.dim(p.items[1]), batch_first, need, average,
                                op.conv.dim(p.items[3]))
    return _tuple_t(op, [op.like(q, out), op.like(q, weights) if weights is not None else NoneType()])


def call_transformer(name: str) -> LayerCall:
    decoder = name in ("TransformerDecoderLayer", "TransformerDecoder")

    def h(op: Op, args: list[Type], x: TensorInfo | None) -> Type:
        d_model, batch_first = op.conv.dim(args[0]), _lit_bool(args[1])
        if batch_first is None:
            raise Unknown
        if name == "Transformer":
            src, tgt = _tensor_named(op, "src"), _tensor_named(op, "tgt")
            return op.like(tgt, RN.transformer_shape(src.shape or (), tgt.shape or (), d_model, batch_first))
        src = _tensor_named(op, "tgt" if decoder else "src", x)
        memory = _tensor_named(op, "memory").shape if decoder else None
        return op.like(src, RN.transformer_layer_shape(src.shape or (), d_model, batch_first, memory))

    return h


# ------------------------------------------------------------------------------------------ pooling layers
def _int_tuple_t(op: Op, values: tuple[int, ...] | None) -> Type:
    return _tuple_t(op, [_int_t(op, v) for v in values]) if values is not None else _any()


def new_pool(nd: int, dilated: bool) -> Handler:
    """MaxPoolNd/AvgPoolNd: tuple[kernel, stride, padding, dilation, ceil_mode, return_indices] (a stride left out
    is the kernel, as the runtime sets it)."""
    def h(op: Op) -> Type:
        kernel = _ntuple(op, "kernel_size", nd, None)
        a = op.call.get("stride")
        stride = kernel if a is None or is_none(a.expr, a.typ) else _ntuple(op, "stride", nd, None)
        dilation = _ntuple(op, "dilation", nd, 1) if dilated else (1,) * nd
        return _instance(op, [_tuple_t(op, [
            _int_tuple_t(op, kernel), _int_tuple_t(op, stride), _int_tuple_t(op, _ntuple(op, "padding", nd, 0)),
            _int_tuple_t(op, dilation), _bool_arg_t(op, "ceil_mode", False),
            _bool_arg_t(op, "return_indices", False)])])

    return h


def call_pool(name: str) -> LayerCall:
    rule_op = ("max_pool" if name.startswith("Max") else "avg_pool") + name[-2:]

    def h(op: Op, args: list[Type], x: TensorInfo | None) -> Type:
        x = _x(op, x)
        p = get_proper_type(args[0])
        if not isinstance(p, TupleType) or len(p.items) != 6:
            raise Unknown
        kernel, stride, padding, dilation = (_lit_ints(t) for t in p.items[:4])
        ceil_mode, indices = _lit_bool(p.items[4]), _lit_bool(p.items[5])
        if kernel is None or stride is None or padding is None or dilation is None or ceil_mode is None \
                or indices is not False:
            raise Unknown  # (values, indices) stays the stub's
        if x.dtype:
            DT.check_kind(rule_op, x.dtype)
        return op.like(x, RN.pool_shape(x.shape or (), kernel, stride, padding, dilation, ceil_mode, rule_op))

    return h


def new_adaptive(nd: int) -> Handler:
    def h(op: Op) -> Type:
        a = op.call.get("output_size")
        if a is None:
            raise Unknown
        v = int_value(a.expr, a.typ)
        if v is not None:
            return _instance(op, [_int_tuple_t(op, (v,) * nd)])
        items = int_list(a.expr, a.typ)  # None items (keep that dim) are not literal here: the call is unknown
        if items is None or len(items) != nd or any(i is None for i in items):
            return _instance(op, [_any()])
        return _instance(op, [_int_tuple_t(op, tuple(i for i in items if i is not None))])

    return h


def call_adaptive(name: str) -> LayerCall:
    rule_op = ("adaptive_max_pool" if "Max" in name else "adaptive_avg_pool") + name[-2:]

    def h(op: Op, args: list[Type], x: TensorInfo | None) -> Type:
        x = _x(op, x)
        if x.dtype:  # the layer runs nn.functional's op, and its dtype kind
            DT.check_kind(rule_op, x.dtype)
        size = _lit_ints(args[0])
        if size is None:
            raise Unknown
        return op.like(x, RN.adaptive_pool_shape(x.shape or (), size, rule_op, nonempty="Max" in name))

    return h


_POOLS = [f"{k}Pool{d}d" for k in ("Max", "Avg") for d in (1, 2)]
_ADAPTIVE = [f"Adaptive{k}Pool{d}d" for k in ("Max", "Avg") for d in (1, 2)]


# ------------------------------------------------------------------------------------------ Unflatten
def new_unflatten(op: Op) -> Type:
    a = op.call.get("unflattened_size")
    items = int_list(a.expr, a.typ) if a is not None else None
    sizes = _any() if items is None or any(i is None for i in items) else _tuple_t(
        op, [_int_t(op, i) for i in items if i is not None])
    return _instance(op, [_size_t(op, "dim"), sizes])


def call_unflatten(op: Op, args: list[Type], x: TensorInfo | None) -> Type:
    """``input.unflatten(dim, unflattened_size)``: the runtime layer's call, and so its rule."""
    x = _x(op, x)
    dim, sizes = _lit_int(args[0]), _lit_ints(args[1])
    if dim is None or sizes is None:
        raise Unknown
    return op.like(x, unflatten_shape(x.shape or (), dim, sizes, "unflatten"))


# ------------------------------------------------------------------------------------------ transposed convolution
def new_conv_transpose(nd: int) -> Handler:
    """ConvTransposeNd: tuple[in, out, kernel, stride, padding, output_padding, dilation, groups] (a string
    padding, which torch refuses for these layers, or a size that is not literal leaves its item Any)."""
    def h(op: Op) -> Type:
        return _instance(op, [_tuple_t(op, [
            _size_t(op, "in_channels"), _size_t(op, "out_channels"), _int_tuple_t(op, _ntuple(op, "kernel_size", nd, None)),
            _int_tuple_t(op, _ntuple(op, "stride", nd, 1)), _int_tuple_t(op, _ntuple(op, "padding", nd, 0)),
            _int_tuple_t(op, _ntuple(op, "output_padding", nd, 0)), _int_tuple_t(op, _ntuple(op, "dilation", nd, 1)),
            _size_t(op, "groups", 1)])])

    return h


def call_conv_transpose(name: str) -> LayerCall:
    """The layer's ``forward``: ``conv_transpose_shape`` on a weight (in, out / groups, *kernel). With
    ``output_size`` the runtime derives the output padding from the input: that call stays the stub's."""
    rule_op = "conv_transpose" + name[-2:]

    def h(op: Op, args: list[Type], x: TensorInfo | None) -> Type:
        if op.call.given("output_size"):
            raise Unknown
        x = _x(op, x)
        p = get_proper_type(args[0])
        if not isinstance(p, TupleType) or len(p.items) != 8:
            raise Unknown
        kernel, stride, padding, output_padding, dilation = (_lit_ints(t) for t in p.items[2:7])
        c_in, c_out, groups = _lit_int(p.items[0]), _lit_int(p.items[1]), _lit_int(p.items[7])
        if kernel is None or stride is None or padding is None or output_padding is None or dilation is None \
                or groups is None:
            raise Unknown
        weight: Shape = (c_in if c_in is not None else UNKNOWN,
                         c_out // groups if c_out is not None else UNKNOWN, *kernel)
        return op.like(x, RN.conv_transpose_shape(x.shape or (), weight, stride, padding, output_padding, dilation,
                                                  groups, rule_op))

    return h


# ------------------------------------------------------------------------------------------ tables
_PADS = [f"{k}Pad{d}d" for k in PAD_MODES for d in (1, 2, 3)]

CONSTRUCTORS: dict[str, Handler] = {
    **dict.fromkeys(("RNN", "LSTM", "GRU"), new_recurrent),
    **dict.fromkeys(("RNNCell", "LSTMCell", "GRUCell"), new_cell),
    **{n: new_pad(int(n[-2])) for n in _PADS},
    "PixelShuffle": new_factor("upscale_factor"),
    "PixelUnshuffle": new_factor("downscale_factor"),
    "Upsample": new_upsample,
    "CosineSimilarity": new_cosine,
    "PairwiseDistance": new_pairwise,
    "MultiheadAttention": new_mha,
    **dict.fromkeys(("TransformerEncoderLayer", "TransformerDecoderLayer", "Transformer"), new_transformer_layer),
    **dict.fromkeys(("TransformerEncoder", "TransformerDecoder"), new_transformer_stack),
    **{n: new_pool(int(n[-2]), n.startswith("Max")) for n in _POOLS},
    **{n: new_adaptive(int(n[-2])) for n in _ADAPTIVE},
    "Unflatten": new_unflatten,
    **{f"ConvTranspose{d}d": new_conv_transpose(d) for d in (1, 2, 3)},
}

CALLS: dict[str, LayerCall] = {
    **{n: call_recurrent(n) for n in ("RNN", "LSTM", "GRU")},
    **{n: call_cell(n) for n in ("RNNCell", "LSTMCell", "GRUCell")},
    **{n: call_pad(n) for n in _PADS},
    "PixelShuffle": call_pixel("pixel_shuffle"),
    "PixelUnshuffle": call_pixel("pixel_unshuffle"),
    "Upsample": call_upsample,
    "CosineSimilarity": call_distance("CosineSimilarity"),
    "PairwiseDistance": call_distance("PairwiseDistance"),
    "MultiheadAttention": call_mha,
    **{n: call_transformer(n) for n in ("TransformerEncoderLayer", "TransformerDecoderLayer", "TransformerEncoder",
                                        "TransformerDecoder", "Transformer")},
    **{n: call_pool(n) for n in _POOLS},
    **{n: call_adaptive(n) for n in _ADAPTIVE},
    "Unflatten": call_unflatten,
    **{f"ConvTranspose{d}d": call_conv_transpose(f"ConvTranspose{d}d") for d in (1, 2, 3)},
}

# Layers called with something other than one ``input`` tensor: read from the call itself.
OWN_ARGUMENTS = frozenset({"CosineSimilarity", "PairwiseDistance", "MultiheadAttention", "TransformerEncoderLayer",
                           "TransformerDecoderLayer", "TransformerEncoder", "TransformerDecoder", "Transformer",
                           "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"})

__all__ = ["CALLS", "CONSTRUCTORS", "OWN_ARGUMENTS"]
