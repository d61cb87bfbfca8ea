"""Which hook evaluates which op. One table for Tensor methods, module functions and dunders."""

from __future__ import annotations

from collections.abc import Callable

from mypy.plugin import AttributeContext
from mypy.types import Type

from shapetorch._rules.matmul import bmm_shape, dot_shape, mm_shape, mv_shape, outer_shape

from .hooks import (
    broadcast,
    conversion,
    creation,
    einops,
    einsum,
    indexing,
    inplace,
    joining,
    linalg,
    matmul,
    reduction,
    reveal,
    scan,
    scatter,
    sorting,
    tiling,
    views,
)
from .hooks._common import Handler, vi

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
NONEMPTY_REDUCTIONS = {"amax", "amin", "argmax", "argmin"}  # no value over an empty slice
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

Entry = tuple[Handler, str]  # the handler and the op name its messages use

# Ops that are both `shapetorch.<name>` and `Tensor.<name>`.
COMMON: dict[str, Entry] = {}
for _n in UNARY_FLOAT:
    COMMON[_n] = (broadcast.unary("float"), _n)
for _n in UNARY_SAME:
    COMMON[_n] = (broadcast.unary("same"), _n)
for _n in UNARY_BOOL:
    COMMON[_n] = (broadcast.unary("bool"), _n)
for _n, _rule in BINARY.items():
    COMMON[_n] = (broadcast.binary(_rule), _n)
COMMON["pow"] = (broadcast.binary("promote", other="exponent"), "pow")
for _n, _rule in REDUCTIONS.items():
    COMMON[_n] = (reduction.reduction(_rule, nonempty=_n in NONEMPTY_REDUCTIONS), _n)
for _n, (_code, _rule) in ALONG_DIM.items():
    COMMON[_n] = (scan.along_dim(_code, _rule), _n)
COMMON.update({
    "matmul": (matmul.matmul(), "matmul"),
    "mm": (matmul.strict_matmul(mm_shape, "mat2"), "mm"),
    "bmm": (matmul.strict_matmul(bmm_shape, "mat2"), "bmm"),
    "mv": (matmul.strict_matmul(mv_shape, "vec"), "mv"),
    "dot": (matmul.strict_matmul(dot_shape, "other"), "dot"),
    "inner": (matmul.strict_matmul(dot_shape, "other"), "inner"),
    "outer": (matmul.strict_matmul(outer_shape, "vec2"), "outer"),
    "ger": (matmul.strict_matmul(outer_shape, "vec2"), "ger"),
    "reshape": (views.reshape, "reshape"),
    "flatten": (views.flatten, "flatten"),
    "unflatten": (views.unflatten, "unflatten"),
    "transpose": (views.transpose("dim0", "dim1"), "transpose"),
    "swapdims": (views.transpose("dim0", "dim1"), "swapdims"),
    "swapaxes": (views.transpose("axis0", "axis1"), "swapaxes"),
    "permute": (views.permute, "permute"),
    "movedim": (views.movedim("source", "destination"), "movedim"),
    "moveaxis": (views.movedim("source", "destination"), "moveaxis"),
    "t": (views.t, "t"),
    "squeeze": (views.squeeze, "squeeze"),
    "unsqueeze": (views.unsqueeze, "unsqueeze"),
    "broadcast_to": (broadcast.broadcast_to, "broadcast_to"),
    "select": (joining.select, "select"),
    "narrow": (joining.narrow, "narrow"),
    "split": (joining.split, "split"),
    "chunk": (joining.chunk, "chunk"),
    "unbind": (joining.unbind, "unbind"),
    "where": (broadcast.where, "where"),
    # max/min with a dim, sorts and selections: (values, indices)
    "max": (vi(sorting.minmax), "max"), "min": (vi(sorting.minmax), "min"),
    "sort": (vi(sorting.sort), "sort"), "argsort": (sorting.argsort, "argsort"),
    "topk": (vi(sorting.topk), "topk"), "kthvalue": (vi(sorting.kthvalue), "kthvalue"),
    "median": (vi(sorting.select_reduce), "median"), "nanmedian": (vi(sorting.select_reduce), "nanmedian"),
    "mode": (vi(sorting.select_reduce), "mode"),
    "cummax": (vi(scan.cum_values_indices), "cummax"), "cummin": (vi(scan.cum_values_indices), "cummin"),
    "gather": (scatter.gather, "gather"), "scatter": (scatter.scatter, "scatter"),
    "scatter_add": (scatter.scatter, "scatter_add"), "scatter_reduce": (scatter.scatter, "scatter_reduce"),
    "index_select": (scatter.index_select, "index_select"),
    "tile": (tiling.tile, "tile"), "roll": (tiling.roll, "roll"), "flip": (tiling.flip, "flip"),
    "tensor_split": (joining.tensor_split, "tensor_split"),
    "norm": (reduction.reduction("real"), "norm"),
    "triu": (linalg.triangular, "triu"), "tril": (linalg.triangular, "tril"),
})

INPLACE_DUNDERS = {"iadd": "add", "isub": "sub", "imul": "mul", "itruediv": "div", "ifloordiv": "floor_divide",
                   "imod": "remainder", "ipow": "pow", "iand": "bitwise_and", "ior": "bitwise_or",
                   "ixor": "bitwise_xor"}  # in-place dunder -> the binary op whose result must keep the shape
INPLACE_METHODS = {"add_": "add", "sub_": "sub", "mul_": "mul", "div_": "div"}

METHOD_ONLY: dict[str, Entry] = {
    "view": (views.view, "view"),
    "expand": (broadcast.expand, "expand"),
    "expand_as": (broadcast.expand_as, "expand_as"),
    "size": (views.size, "size"),
    "__getitem__": (indexing.getitem, "index"),
    "__matmul__": (matmul.matmul(), "matmul"),
    "__rmatmul__": (matmul.matmul(reverse=True), "matmul"),
}
for _d, (_op, _rule) in DUNDERS.items():
    METHOD_ONLY[f"__{_d}__"] = (broadcast.binary(_rule), _op)
    METHOD_ONLY[f"__r{_d}__"] = (broadcast.binary(_rule, reverse=True), _op)
for _d, _op in COMPARE.items():
    METHOD_ONLY[f"__{_d}__"] = (broadcast.binary("bool"), _op)
for _n, _dt in CASTS.items():
    METHOD_ONLY[_n] = (conversion.to_dtype(_dt), _n)
METHOD_ONLY["__setitem__"] = (indexing.setitem, "index_put")
for _d, _op in INPLACE_DUNDERS.items():
    METHOD_ONLY[f"__{_d}__"] = (inplace.inplace(_op), f"__{_d}__")
for _n, _op in INPLACE_METHODS.items():
    METHOD_ONLY[_n] = (inplace.inplace(_op), _n)
METHOD_ONLY["repeat"] = (tiling.repeat, "repeat")

FUNCTION_ONLY: dict[str, Entry] = {
    "cat": (joining.cat, "cat"), "concat": (joining.cat, "concat"), "concatenate": (joining.cat, "concatenate"),
    "stack": (joining.stack, "stack"),
    "einsum": (einsum.einsum, "einsum"),
    "rearrange": (einops.einops("rearrange"), "rearrange"),
    "reduce": (einops.einops("reduce"), "reduce"),
    "repeat": (einops.einops("repeat"), "repeat"),
    "zeros": (creation.factory, "zeros"), "ones": (creation.factory, "ones"), "empty": (creation.factory, "empty"),
    "rand": (creation.factory, "rand"), "randn": (creation.factory, "randn"), "full": (creation.full, "full"),
    "zeros_like": (creation.like, "zeros_like"), "ones_like": (creation.like, "ones_like"),
    "empty_like": (creation.like, "empty_like"), "rand_like": (creation.like, "rand_like"),
    "randn_like": (creation.like, "randn_like"), "full_like": (creation.like, "full_like"),
    "eye": (creation.eye, "eye"), "arange": (creation.arange, "arange"), "linspace": (creation.linspace, "linspace"),
    "logspace": (creation.linspace, "logspace"),
    "reveal_shape": (reveal.reveal_shape, "reveal_shape"),
    "gradient": (scan.gradient, "gradient"),
    # torch's *_copy functions: each is its view op, copied (ops/view_copies.py), so the view's rule and hook
    "view_copy": (views.view_copy, "view_copy"), "permute_copy": (views.permute, "permute_copy"),
    "transpose_copy": (views.transpose("dim0", "dim1"), "transpose_copy"), "t_copy": (views.t, "t_copy"),
    "squeeze_copy": (views.squeeze, "squeeze_copy"), "unsqueeze_copy": (views.unsqueeze, "unsqueeze_copy"),
    "expand_copy": (broadcast.expand, "expand_copy"), "select_copy": (joining.select, "select_copy"),
    "narrow_copy": (joining.narrow, "narrow_copy"), "unbind_copy": (joining.unbind, "unbind_copy"),
    "detach_copy": (broadcast.unary("same"), "detach_copy"), "alias_copy": (broadcast.unary("same"), "alias_copy"),
}

# `nn.functional` ops that are Tensor ops under the same name and parameters (relu, gelu, softmax, ...),
# and the dropouts and normalize, which keep their input's shape and dtype. Without a hook their result
# would come from the generic stub, whose shape a surrounding call's context pins to Any
# (`fc2(F.relu(fc1(x)))`).
FUNCTIONAL_COMMON: dict[str, Entry] = {
    _n: COMMON[_n] for _n in (*UNARY_FLOAT, *UNARY_SAME, "softmax", "log_softmax", "softmin")
}
for _n in "dropout dropout1d dropout2d dropout3d alpha_dropout feature_alpha_dropout threshold softshrink hardshrink".split():
    FUNCTIONAL_COMMON[_n] = (broadcast.unary("same"), _n)
FUNCTIONAL_COMMON["normalize"] = (broadcast.unary("float"), "normalize")

METHODS: dict[str, Entry] = {**COMMON, **METHOD_ONLY}
FUNCTIONS: dict[str, Entry] = {**COMMON, **FUNCTION_ONLY, **linalg.FUNCTIONS}  # linalg: "linalg.<name>"

ATTRIBUTES: dict[str, Callable[[AttributeContext], Type]] = {"mT": views.matrix_t, "T": views.reverse_t,
                                                           "shape": views.shape_attr}
