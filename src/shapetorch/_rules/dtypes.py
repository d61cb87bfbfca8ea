"""dtype promotion as a data table, identical to torch's (checked pair by pair against torch).

Dtypes are named by string here so the rules stay free of the runtime; the runtime's dtype
classes carry the same names. Operands of ``result_type`` come in three priorities, as in torch:
tensors with dims beat 0-d tensors, which beat Python scalars, unless a lower-priority operand
is of a higher category (bool < integer < floating < complex).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, NamedTuple

from .errors import RuleError, did_you_mean


class DTypeInfo(NamedTuple):
    name: str
    kind: str  # b(ool) u(nsigned) i(nt) f(loat) c(omplex)
    bits: int


DTYPES: Final[dict[str, DTypeInfo]] = {
    d.name: d
    for d in (
        DTypeInfo("bool", "b", 8),
        DTypeInfo("uint8", "u", 8),
        DTypeInfo("int8", "i", 8),
        DTypeInfo("int16", "i", 16),
        DTypeInfo("int32", "i", 32),
        DTypeInfo("int64", "i", 64),
        DTypeInfo("float16", "f", 16),
        DTypeInfo("bfloat16", "f", 16),
        DTypeInfo("float32", "f", 32),
        DTypeInfo("float64", "f", 64),
        DTypeInfo("complex64", "c", 64),
        DTypeInfo("complex128", "c", 128),
    )
}

_CATEGORY: Final = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
_COMPLEX_OF: Final = {"float16": "complex64", "bfloat16": "complex64", "float32": "complex64", "float64": "complex128"}
_REAL_OF: Final = {"complex64": "float32", "complex128": "float64"}


def category(name: str) -> int:
    return _CATEGORY[DTYPES[name].kind]


def is_floating(name: str) -> bool:
    return DTYPES[name].kind == "f"


def is_complex(name: str) -> bool:
    return DTYPES[name].kind == "c"


def is_integral(name: str, include_bool: bool = False) -> bool:
    kind = DTYPES[name].kind
    return kind in "ui" or (include_bool and kind == "b")


# torch's C++ names (ScalarType) of the integer and bool dtypes, as its messages print them ("... dtype: Long")
SCALAR_TYPE_NAMES: Final = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
                            "int64": "Long", "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64"}


def check_dtype(name: str, op: str = "dtype") -> str:
    if name not in DTYPES:
        raise RuleError("dtype_not_found_error", op=op, name=name, hint=did_you_mean(name, DTYPES))
    return name


def promote_types(a: str, b: str) -> str:
    """The smallest dtype both ``a`` and ``b`` convert to without losing category or range."""
    if a == b:
        return a
    da, db = DTYPES[a], DTYPES[b]
    if da.kind == "b":
        return b
    if db.kind == "b":
        return a
    if da.kind in "ui" and db.kind in "ui":
        if da.kind == db.kind:
            return a if da.bits >= db.bits else b
        unsigned, signed = (da, db) if da.kind == "u" else (db, da)
        return signed.name if signed.bits > unsigned.bits else f"int{min(unsigned.bits * 2, 64)}"
    if da.kind in "ui":
        return b
    if db.kind in "ui":
        return a
    if da.kind == "f" and db.kind == "f":
        if da.bits == db.bits:  # float16 with bfloat16: neither holds the other
            return "float32"
        return a if da.bits > db.bits else b
    if da.kind == "c" and db.kind == "c":
        return a if da.bits > db.bits else b
    cplx, real = (da, db) if da.kind == "c" else (db, da)
    return cplx.name if _REAL_OF[cplx.name] == promote_types(_REAL_OF[cplx.name], real.name) else "complex128"


TENSOR, ZERO_DIM, SCALAR = 0, 1, 2  # operand priorities for result_type


def scalar_dtype(value: object, default_float: str = "float32") -> str:
    """The dtype a Python scalar takes part in promotion with."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return default_float
    if isinstance(value, complex):
        return _COMPLEX_OF[default_float]
    raise TypeError(f"not a Python scalar: {value!r}")


def _combine(higher: str | None, lower: str | None) -> str | None:
    """torch's combine_categories: a lower-priority operand only wins by being of a higher category."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    ch, cl = category(higher), category(lower)
    if ch == 3:
        return higher
    if cl == 3:
        return _COMPLEX_OF[higher] if ch == 2 else lower
    if ch == 2:
        return higher
    if ch == 0 or cl == 2:
        return promote_types(higher, lower)
    return higher


def result_type(operands: Iterable[tuple[str, int]]) -> str:
    """Promote ``(dtype, priority)`` pairs the way ``torch.result_type`` does."""
    state: list[str | None] = [None, None, None]
    for name, priority in operands:
        cur = state[priority]
        state[priority] = name if cur is None else promote_types(cur, name)
    out = _combine(state[TENSOR], _combine(state[ZERO_DIM], state[SCALAR]))
    assert out is not None, "result_type needs at least one operand"
    return out


def float_result(name: str, default_float: str = "float32") -> str:
    """Ops such as exp, sqrt and true division: integers and bool compute in the default float dtype."""
    return name if DTYPES[name].kind in "fc" else default_float


def to_real(name: str) -> str:
    """abs / real / imag of a complex dtype give its real counterpart."""
    return _REAL_OF.get(name, name)


def to_complex(name: str) -> str:
    return name if is_complex(name) else _COMPLEX_OF[name]


# Ops whose kernels exist for some dtypes only, by kind: ``integral`` (integers and bool: the bitwise ops),
# ``no_bool`` (anything but bool), ``floating`` (floating or complex: means, variances, softmax, ...),
# ``real`` (integers and floating), ``real_floating`` (floating only), ``real_floating_or_int64`` and
# ``real_floating_or_uint8`` (floating and that one integer dtype), ``promoted_real_floating`` (the promoted
# dtype of the first two tensor arguments floating). The
# runtime checks these before a kernel runs (``ops._elementwise``, ``ops.reduction``, ``ops.activation``);
# the plugin reports them in the editor (its elementwise, reduction and along-a-dim hooks).
DTYPE_KINDS: Final[dict[str, str]] = {
    **dict.fromkeys(("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "gcd",
                     "lcm"), "integral"),
    **dict.fromkeys(("sub", "floor_divide", "div_floor", "remainder", "fmod", "pow", "neg", "abs", "floor", "ceil",
                     "round", "trunc", "relu", "hardtanh"), "no_bool"),
    **dict.fromkeys(("mean", "nanmean", "std", "var", "softmax", "log_softmax", "softmin", "logcumsumexp",
                     "leaky_relu", "elu"), "floating"),
    "gelu": "real_floating",  # torch's GELU kernel: floating dtypes only, complex refused too
    # torch.nn.functional: the kernels of these exist for the dtypes of their kind only, checked on the input
    # (``nn.functional``'s argument guard at run time, the plugin's nn.functional hooks in the editor)
    "silu": "floating",
    "threshold": "real",
    "soft_margin_loss": "floating",
    **dict.fromkeys(("mish", "softplus", "softshrink", "hardshrink", "rrelu", "hardswish", "hardsigmoid", "celu",
                     "selu", "logsigmoid", "prelu", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
                     "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
                     "fractional_max_pool2d", "fractional_max_pool3d", "max_unpool1d", "max_unpool2d",
                     "max_unpool3d", "grid_sample", "batch_norm", "instance_norm", "layer_norm", "group_norm",
                     "pdist", "nll_loss", "multi_margin_loss", "multilabel_margin_loss", "ctc_loss",
                     "kl_div", "huber_loss", "binary_cross_entropy_with_logits"), "real_floating"),
    # avg_pool's kernels exist for int64 too (an integer mean, truncated toward zero), as local_response_norm's
    # (an avg_pool over the squares)
    **dict.fromkeys(("avg_pool1d", "avg_pool2d", "avg_pool3d", "local_response_norm"), "real_floating_or_int64"),
    # torch's transposed convolutions have floating and int64 kernels, conv3d's im2col all but bool: the input's
    # dtype is refused (NotImplementedError) before it is compared with the weight's
    **dict.fromkeys(("conv_transpose1d", "conv_transpose2d", "conv_transpose3d"), "real_floating_or_int64"),
    "conv3d": "no_bool",
    # the kernel runs on the promoted dtype of input and target (an integer input with a float target is fine)
    **dict.fromkeys(("mse_loss", "smooth_l1_loss", "cosine_similarity"), "promoted_real_floating"),
}

# ops whose torch kernel returns an empty input's empty result before it looks at the dtype
EMPTY_ANY_DTYPE: Final = frozenset({"adaptive_avg_pool1d", "adaptive_avg_pool2d"})

# F.interpolate's kernels by mode (and so upsample, upsample_nearest, upsample_bilinear, nn.Upsample): the
# nearest, bilinear and bicubic ones take uint8 too (images); the others, and area's adaptive_avg_pool, do not
INTERPOLATE_KINDS: Final[dict[str, str]] = {
    **dict.fromkeys(("nearest", "nearest-exact", "bilinear", "bicubic", "lanczos"), "real_floating_or_uint8"),
    **dict.fromkeys(("linear", "trilinear", "area"), "real_floating"),
}

# the kinds whose dtype is the promoted dtype of the first two tensor arguments, not the input's alone
PROMOTED_KINDS: Final = frozenset({"promoted_real_floating"})


# torch's schemas take a Tensor for both operands of these binary ops (a Python number there is a TypeError) ...
TENSOR_OPERANDS: Final = frozenset({"atan2", "fmax", "fmin", "gcd", "hypot", "lcm", "logaddexp", "logaddexp2",
                                    "maximum", "minimum", "nextafter"})
# ... and for the first operand of these (``torch.eq(2.0, x)``; ``x == 2.0`` and ``2.0 == x`` reach ``eq(x, 2.0)``)
TENSOR_FIRST: Final = frozenset({"copysign", "eq", "fmod", "ge", "gt", "le", "lt", "ne"})


def check_tensor_operands(op: str, input_number: str | None, other_number: str | None) -> None:
    """A binary op given a Python number (its type name; None for a tensor) where torch's schema wants a Tensor."""
    if op in TENSOR_FIRST and input_number is not None:
        bad = ("input", 1, input_number)
    elif op in TENSOR_OPERANDS and (input_number is not None or other_number is not None):
        bad = ("input", 1, input_number) if input_number is not None else ("other", 2, other_number or "")
    else:
        return
    raise RuleError("argument_error_type", op=op, name=bad[0], position=f" (position {bad[1]})", expected="Tensor",
                    got=bad[2])


def check_alpha(op: str, dtype: str, alpha: str) -> None:
    """torch's checks of add/sub's ``alpha`` (its Python type's name: bool, float, complex) against the result
    dtype of the operands, alpha left out: it must not hold more than that dtype can."""
    if alpha == "bool" and dtype != "bool":
        raise RuleError("alpha_error_type", op=op, problem="Boolean alpha only supported for Boolean results.")
    if alpha == "float" and is_integral(dtype, include_bool=True):
        raise RuleError("alpha_error_type", op=op,
                        problem="For integral input tensors, argument alpha must not be a floating point number.")
    if alpha == "complex" and not is_complex(dtype):
        raise RuleError("alpha_error_type", op=op,
                        problem="For non-complex input tensors, argument alpha must not be a complex number.")


_SUB_BOOL_ONE = ("a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` "
                 "operator instead.")
_SUB_BOOL_TWO = "two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead."


def check_kind(op: str, dtype: str, bool_operand: bool = False, scalar_exponent: bool = False,
               kind: str | None = None, empty: bool = False) -> None:
    """Refuse ``dtype`` (the promoted dtype of the operands, or the input's) where ``op``'s kind has no kernel.

    ``bool_operand``: an operand is a bool (tensor or Python bool); torch's ``sub`` refuses one whatever the
    promoted dtype. ``scalar_exponent``: ``pow``'s exponent is a Python number; torch's Scalar overload
    takes a bool one on a bool tensor (``x ** True`` is ``x``) where a bool tensor exponent is refused.
    ``kind``: the kind, where it depends on an argument (``INTERPOLATE_KINDS``) rather than on ``op``.
    ``empty``: the input has no elements (``EMPTY_ANY_DTYPE``)."""
    kind = kind or DTYPE_KINDS.get(op)
    if empty and op in EMPTY_ANY_DTYPE:
        return
    if op == "pow" and scalar_exponent:
        return
    if kind == "integral" and not is_integral(dtype, include_bool=True):
        raise RuleError("method_dtype_not_supported_error", op=op, dtype=dtype, hint=" (integral and bool only)")
    if op == "sub" and bool_operand:  # torch's own message, which points to the operator meant (bool - bool is xor)
        raise RuleError("sub_error_bool", op=op, operands=_SUB_BOOL_TWO if dtype == "bool" else _SUB_BOOL_ONE)
    if kind == "no_bool" and dtype == "bool":
        raise RuleError("method_dtype_not_supported_error", op=op, dtype="bool", hint="")
    if kind == "real" and dtype in ("bool", "complex64", "complex128"):
        raise RuleError("method_dtype_not_supported_error", op=op, dtype=dtype, hint=" (real numbers only)")
    if kind in ("real_floating", "promoted_real_floating") and not is_floating(dtype):
        raise RuleError("method_dtype_not_supported_error", op=op, dtype=dtype, hint=" (floating point dtypes only)")
    if kind == "real_floating_or_int64" and not (is_floating(dtype) or dtype == "int64"):
        raise RuleError("method_dtype_not_supported_error", op=op, dtype=dtype, hint=" (floating point and int64 only)")
    if kind == "real_floating_or_uint8" and not (is_floating(dtype) or dtype == "uint8"):
        raise RuleError("method_dtype_not_supported_error", op=op, dtype=dtype, hint=" (floating point and uint8 only)")
    if kind == "floating" and not (is_floating(dtype) or is_complex(dtype)):
        raise RuleError("method_dtype_not_supported_error", op=op, dtype=dtype,
                        hint=" (input dtype must be either a floating point or complex dtype)")
