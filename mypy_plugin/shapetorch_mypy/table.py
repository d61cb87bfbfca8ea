"""Which hook evaluates which op. One table for Tensor methods, module functions and dunders."""

from __future__ import annotations

from collections.abc import Callable

from mypy.plugin import AttributeContext
from mypy.types import Type

from shapetorch._rules import errors as _errors
from shapetorch._rules import matmul as _mm
from shapetorch._rules import views as _views
from shapetorch._rules.dims import Shape

from . import hooks as H
from . import more as M
from .convert import Converter

UNARY_FLOAT = (
    "exp exp2 expm1 log log2 log10 log1p sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh "
    "sigmoid sqrt rsqrt reciprocal erf erfc erfinv lgamma digamma sinc deg2rad rad2deg i0 "
    "gelu silu mish logsigmoid elu selu celu softplus hardsigmoid hardswish softsign tanhshrink"
).split()
UNARY_SAME = (
    "abs neg negative positive sign floor ceil round trunc frac clamp clip relu relu6 leaky_relu hardtanh "
    "clone detach contiguous nan_to_num square"
).split()
UNARY_BOOL = "isnan isinf isfinite isposinf isneginf isreal signbit logical_not".split()

BINARY = {  # name -> dtype rule
    "add": "promote", "sub": "promote", "subtract": "promote", "mul": "promote", "multiply": "promote",
    "div": "float", "divide": "float", "true_divide": "float", "floor_divide": "promote",
    "remainder": "promote", "fmod": "promote", "maximum": "promote", "minimum": "promote",
    "fmax": "promote", "fmin": "promote", "atan2": "float", "hypot": "float", "logaddexp": "float",
    "copysign": "float", "xlogy": "float", "bitwise_and": "promote", "bitwise_or": "promote",
    "bitwise_xor": "promote", "logical_and": "bool", "logical_or": "bool", "logical_xor": "bool",
    "eq": "bool", "ne": "bool", "lt": "bool", "le": "bool", "gt": "bool", "ge": "bool",
    "greater": "bool", "less": "bool", "greater_equal": "bool", "less_equal": "bool", "not_equal": "bool",
    "isclose": "bool",
}
DUNDERS = {  # dunder -> (op name, dtype rule)
    "add": ("add", "promote"), "sub": ("sub", "promote"), "mul": ("mul", "promote"),
    "truediv": ("div", "float"), "floordiv": ("floor_divide", "promote"), "mod": ("remainder", "promote"),
    "pow": ("pow", "promote"), "and": ("bitwise_and", "promote"), "or": ("bitwise_or", "promote"),
    "xor": ("bitwise_xor", "promote"),
}
COMPARE = {"lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "eq": "eq", "ne": "ne"}
REDUCTIONS = {
    "sum": "sum", "nansum": "sum", "prod": "sum", "mean": "same", "nanmean": "same", "amax": "same",
    "amin": "same", "argmax": "int64", "argmin": "int64", "all": "bool", "any": "bool", "std": "float",
    "var": "float", "logsumexp": "float", "count_nonzero": "int64",
}
ALONG_DIM = {
    "softmax": ("softmax_error_dim_out_of_range", "float"),
    "log_softmax": ("softmax_error_dim_out_of_range", "float"),
    "softmin": ("softmax_error_dim_out_of_range", "float"),
    "cumsum": ("dimension_error_out_of_range", "sum"),
    "cumprod": ("dimension_error_out_of_range", "sum"),
    "logcumsumexp": ("dimension_error_out_of_range", "same"),
}
CASTS = {
    "float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16", "int": "int32",
    "long": "int64", "short": "int16", "bool": "bool", "byte": "uint8", "char": "int8",
}

Entry = tuple[H.Handler, str]  # the handler and the op name its messages use

# Ops that are both `shapetorch.<name>` and `Tensor.<name>`.
COMMON: dict[str, Entry] = {}
for _n in UNARY_FLOAT:
    COMMON[_n] = (H.unary("float"), _n)
for _n in UNARY_SAME:
    COMMON[_n] = (H.unary("same"), _n)
for _n in UNARY_BOOL:
    COMMON[_n] = (H.unary("bool"), _n)
for _n, _rule in BINARY.items():
    COMMON[_n] = (H.binary(_rule), _n)
COMMON["pow"] = (H.binary("promote", other="exponent"), "pow")
for _n, _rule in REDUCTIONS.items():
    COMMON[_n] = (H.reduction(_rule), _n)
for _n, (_code, _rule) in ALONG_DIM.items():
    COMMON[_n] = (H.along_dim(_code, _rule), _n)
COMMON.update({
    "matmul": (H.matmul(), "matmul"),
    "mm": (H.strict_matmul(_mm.mm_shape, "mat2"), "mm"),
    "bmm": (H.strict_matmul(_mm.bmm_shape, "mat2"), "bmm"),
    "mv": (H.strict_matmul(_mm.mv_shape, "vec"), "mv"),
    "dot": (H.strict_matmul(_mm.dot_shape, "other"), "dot"),
    "inner": (H.strict_matmul(_mm.dot_shape, "other"), "inner"),
    "outer": (H.strict_matmul(_mm.outer_shape, "vec2"), "outer"),
    "ger": (H.strict_matmul(_mm.outer_shape, "vec2"), "ger"),
    "reshape": (H.reshape, "reshape"),
    "flatten": (H.flatten, "flatten"),
    "unflatten": (H.unflatten, "unflatten"),
    "transpose": (H.transpose("dim0", "dim1"), "transpose"),
    "swapdims": (H.transpose("dim0", "dim1"), "swapdims"),
    "swapaxes": (H.transpose("axis0", "axis1"), "swapaxes"),
    "permute": (H.permute, "permute"),
    "movedim": (H.movedim("source", "destination"), "movedim"),
    "moveaxis": (H.movedim("source", "destination"), "moveaxis"),
    "t": (H.t, "t"),
    "squeeze": (H.squeeze, "squeeze"),
    "unsqueeze": (H.unsqueeze, "unsqueeze"),
    "broadcast_to": (H.broadcast_to, "broadcast_to"),
    "select": (H.select, "select"),
    "narrow": (H.narrow, "narrow"),
    "split": (H.split, "split"),
    "chunk": (H.chunk, "chunk"),
    "unbind": (H.unbind, "unbind"),
    "where": (H.where, "where"),
})

COMMON.update(M.COMMON)  # max/min with dim, sorts, gather/scatter, tile/roll/flip, tensor_split

METHOD_ONLY: dict[str, Entry] = {
    "view": (H.view, "view"),
    "expand": (H.expand, "expand"),
    "expand_as": (H.expand_as, "expand_as"),
    "size": (H.size, "size"),
    "__getitem__": (H.getitem, "index"),
    "__matmul__": (H.matmul(), "matmul"),
    "__rmatmul__": (H.matmul(reverse=True), "matmul"),
}
for _d, (_op, _rule) in DUNDERS.items():
    METHOD_ONLY[f"__{_d}__"] = (H.binary(_rule), _op)
    METHOD_ONLY[f"__r{_d}__"] = (H.binary(_rule, reverse=True), _op)
for _d, _op in COMPARE.items():
    METHOD_ONLY[f"__{_d}__"] = (H.binary("bool"), _op)
for _n, _dt in CASTS.items():
    METHOD_ONLY[_n] = (H.to_dtype(_dt), _n)
METHOD_ONLY.update(M.METHODS)  # x[i] = v, in-place operators, repeat

FUNCTION_ONLY: dict[str, Entry] = {
    "cat": (H.cat, "cat"), "concat": (H.cat, "concat"), "concatenate": (H.cat, "concatenate"),
    "stack": (H.stack, "stack"),
    "einsum": (H.einsum, "einsum"),
    "rearrange": (H.einops("rearrange"), "rearrange"),
    "reduce": (H.einops("reduce"), "reduce"),
    "repeat": (H.einops("repeat"), "repeat"),
    "zeros": (H.factory, "zeros"), "ones": (H.factory, "ones"), "empty": (H.factory, "empty"),
    "rand": (H.factory, "rand"), "randn": (H.factory, "randn"), "full": (H.full, "full"),
    "zeros_like": (H.like, "zeros_like"), "ones_like": (H.like, "ones_like"),
    "empty_like": (H.like, "empty_like"), "rand_like": (H.like, "rand_like"),
    "randn_like": (H.like, "randn_like"), "full_like": (H.like, "full_like"),
    "eye": (H.eye, "eye"), "arange": (H.arange, "arange"), "linspace": (H.linspace, "linspace"),
    "logspace": (H.linspace, "logspace"),
    "reveal_shape": (H.reveal_shape, "reveal_shape"),
}

METHODS: dict[str, Entry] = {**COMMON, **METHOD_ONLY}
FUNCTIONS: dict[str, Entry] = {**COMMON, **FUNCTION_ONLY}


def _matrix_t(ctx: AttributeContext) -> Type:
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
    except _errors.RuleError as err:
        from .codes import rule_code

        op_ctx.api.fail(err.message, op_ctx.context, code=rule_code(err.code))
        return conv.unknown_tensor()


def _mT(shape: Shape) -> Shape:
    return _views.matrix_transpose_shape(shape, "mT")


def _reverse_t(ctx: AttributeContext) -> Type:
    conv = Converter(ctx.api)
    x = conv.tensor(ctx.type)
    if x is None or not x.exact:
        return ctx.default_attr_type
    return conv.tensor_type(tuple(reversed(x.shape or ())), x.dtype_type)


ATTRIBUTES: dict[str, Callable[[AttributeContext], Type]] = {"mT": _matrix_t, "T": _reverse_t}
