"""Binary and ternary arithmetic: add, sub, mul, div, pow, remainder/fmod, atan2, maximum/minimum, the
bitwise ops and shifts, copysign, float_power, fmax/fmin, gcd/lcm, heaviside, hypot, ldexp, lerp,
logaddexp(2), nextafter, xlogy, addcmul/addcdiv, clamp.

The two-operand primitives go through ``_elementwise._binary`` (broadcast check, promotion, scalars, the
method and the in-place twin). The dtypes torch refuses are refused by a guard on the promoted operands,
before the kernel runs; ternary ops are composites of other ops, so they differentiate for free.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._dtype import to_dtype
from .._engine.backward import Node
from .._engine.primitives import PRIMS, Prim
from .._errors import fail
from .._rules import dtypes as RD
from .._tensor import Tensor
from ..backends.numpy_backend import DTYPE_OF
from ._common import (
    as_node,
    broadcast2,
    cast,
    check,
    default_float,
    dtype_name,
    make_inplace,
    promoted,
    write_inplace,
)
from ._elementwise import _binary, _conj, _quiet, _store, _where
from ._jvp import via_vjp
from ._registry import method, public
from .conversion import clone, where


def _pow_kernel(a: Any, b: Any) -> Any:
    """NumPy raises for integers to negative powers; torch gives 1 for base 1, +-1 for base -1, else 0."""
    if np.asarray(a).dtype.kind in "iu" and np.asarray(b).dtype.kind in "iu" and np.any(np.asarray(b) < 0):
        neg = np.asarray(b) < 0
        safe = np.power(a, np.where(neg, 0, b))
        small = np.where(a == 1, 1, np.where(a == -1, np.where(np.asarray(b) % 2 == 0, 1, -1), 0)).astype(safe.dtype)
        return np.where(neg, small, safe)
    return np.power(a, b)


def _one(n: Node, i: int) -> Any:
    return _conj(n.inputs[i])


_add = _binary("add", np.add, lambda g, n: (g, g), register=False, dunder="__add__", rdunder="__radd__")
# (``__rsub__`` is ``rsub``, below: torch names its node RsubBackward, not SubBackward)
_sub = _binary("sub", np.subtract, lambda g, n: (g, -g), kind="no_bool", register=False, dunder="__sub__")


def _mul_vjp(g: Tensor, n: Node) -> tuple[Any, ...]:
    a, b = n.inputs
    # a number operand (``x * 0.5``, ``2 * x``) has no gradient: none is computed for it
    return (g * _conj(b) if type(a) is Tensor or isinstance(a, Tensor) else None,
            g * _conj(a) if type(b) is Tensor or isinstance(b, Tensor) else None)


def _true_divide_vjp(g: Tensor, n: Node) -> tuple[Any, ...]:
    a, b = _one(n, 0), _one(n, 1)
    # a number divisor (every ``mean``'s ``sum / count``) has no gradient: its three ops are not run
    if not (type(b) is Tensor or isinstance(b, Tensor)):
        return (g / b, None)
    return (g / b if type(a) is Tensor or isinstance(a, Tensor) else None,
            -g * (a / b) / b)  # not a / b**2: b**2 overflows


mul = _binary("mul", np.multiply, _mul_vjp, dunder="__mul__", rdunder="__rmul__")
true_divide = _binary("true_divide", _quiet(np.true_divide), _true_divide_vjp, kind="float", dunder="__truediv__")
# ``2 / x`` is torch's ``x.reciprocal() * 2`` (Tensor.__rdiv__): the reciprocal rounds in x's dtype first, which a
# bfloat16 tensor divided into a complex number shows
method("__rtruediv__", lambda self, other: self.reciprocal() * other)
def _int_div(name: str, f: Callable[..., Any]) -> Callable[..., Any]:
    """Integer division by zero is an error in torch; NumPy would quietly give 0."""

    def kernel(a: Any, b: Any) -> Any:
        if getattr(a, "dtype", np.dtype(float)).kind in "iu" and not np.all(b):
            fail("div_error_integer_division_by_zero", op=name)
        return f(a, b)

    return kernel


floor_divide = _binary("floor_divide", _int_div("floor_divide", np.floor_divide), None, kind="no_bool",  # no derivative
                       dunder="__floordiv__", rdunder="__rfloordiv__")
# div(rounding_mode="floor") has a zero gradient in torch, while floor_divide has none at all.
_div_floor = _binary("div_floor", _int_div("div", np.floor_divide), lambda g, n: (g * 0, g * 0), kind="no_bool",
                     register=False)
remainder = _binary(
    "remainder", _int_div("remainder", np.remainder), lambda g, n: (g, -g * (n.inputs[0] / n.inputs[1]).floor()),
    kind="no_bool", dunder="__mod__", rdunder="__rmod__",
)
fmod = _binary("fmod", _int_div("fmod", np.fmod), lambda g, n: (g, -g * (n.inputs[0] / n.inputs[1]).trunc()), kind="no_bool")


def _pow_vjp(g: Tensor, n: Node) -> tuple[Any, ...]:
    """torch's masks: the base's gradient is 0 where the exponent is 0 (``0 * 0**-1`` would be nan), and
    the exponent's is 0 where the base is 0 and the exponent >= 0 (``0 * log(0)`` would be nan)."""
    a, b = n.inputs
    ga = None
    if isinstance(a, Tensor):
        if isinstance(b, Tensor):
            ga = (g * b * _one(n, 0) ** (b - 1)).masked_fill(b == 0, 0)
        else:
            ga = g * b * _one(n, 0) ** (b - 1) if b != 0 else g * 0
    if not isinstance(b, Tensor):
        return ga, None
    log_a = a.log() if isinstance(a, Tensor) else -math.inf if a == 0 else np.log(a)
    gb = g * _conj(n.out * log_a)  # the saved result, as torch's (a ** b)
    if isinstance(a, Tensor):
        gb = gb.masked_fill((a == 0).logical_and((b.real if b.is_complex() else b) >= 0), 0)
    elif a == 0:
        gb = gb.masked_fill((b.real if b.is_complex() else b) >= 0, 0)
    return ga, gb


# torch saves the result of pow with a tensor exponent (its derivative is result * log(input)), not of
# tensor ** number: an in-place write to the result is refused at backward in the first case only
pow = _binary("pow", _quiet(_pow_kernel), _pow_vjp, dunder="__pow__", rdunder="__rpow__",
              save_output=lambda args: isinstance(args[1], Tensor))


def _atan2_vjp(g: Tensor, n: Node) -> tuple[Any, ...]:
    """``(b, -a) / (a^2 + b^2)``, and 0 at the origin as torch (the plain formula gives nan)."""
    a, b = n.inputs
    denom = a**2 + b**2
    origin = denom == 0
    recip = (1 / denom.masked_fill(origin, 1)).masked_fill(origin, 0)
    return g * b * recip, -g * a * recip


atan2 = _binary("atan2", np.arctan2, _atan2_vjp, kind="float")


def _share(n: Node, a_loses: Tensor, b_loses: Tensor) -> tuple[Tensor, ...]:
    """Gradient routing of maximum/minimum as torch: to the winner, split evenly on ties, and to both
    where a NaN makes neither lose (``a < b`` and ``a > b`` are both False there)."""
    a, b = n.inputs
    tie = (a == b).to(a.dtype) * 0.5
    return 1 - a_loses.to(a.dtype) - tie, 1 - b_loses.to(a.dtype) - tie


maximum = _binary("maximum", np.maximum, lambda g, n: tuple(
    g * w for w in _share(n, n.inputs[0] < n.inputs[1], n.inputs[0] > n.inputs[1])))
minimum = _binary("minimum", np.minimum, lambda g, n: tuple(
    g * w for w in _share(n, n.inputs[0] > n.inputs[1], n.inputs[0] < n.inputs[1])))
bitwise_and = _binary("bitwise_and", np.bitwise_and, None, kind="integral", dunder="__and__", rdunder="__rand__")
bitwise_or = _binary("bitwise_or", np.bitwise_or, None, kind="integral", dunder="__or__", rdunder="__ror__")
bitwise_xor = _binary("bitwise_xor", np.bitwise_xor, None, kind="integral", dunder="__xor__", rdunder="__rxor__")


def _scaled(other: Any, alpha: Any) -> Any:
    return mul(other, alpha) if isinstance(other, Tensor) else other * alpha


def _alpha(op: str, input: Any, other: Any, alpha: Any) -> Any:
    """``alpha`` checked against the operands' result dtype as torch (``alpha=True`` on floats, a float alpha
    on integers are refused: the scaling would otherwise promote or truncate silently), and as a bool for a
    bool result (``b1 + 2 * b2`` stays bool in torch; the product with the int would promote)."""
    if type(alpha) is int and alpha == 1:
        return alpha
    kind = "bool" if isinstance(alpha, (bool, np.bool_)) else "complex" if isinstance(alpha, complex) \
        else "float" if isinstance(alpha, (float, np.floating)) else "int"
    common = promoted(input, other)
    check(RD.check_alpha, op, common, kind)
    return bool(alpha) if common == "bool" else alpha


@public("pointwise")
def add(input: Any, other: Any, *, alpha: Any = 1, out: Tensor | None = None) -> Tensor:
    """``input + alpha * other``, with broadcasting and type promotion."""
    alpha = _alpha("add", input, other, alpha)
    return _add(input, other if alpha == 1 else _scaled(other, alpha), out=out)


@public("pointwise", aliases=("subtract",))
def sub(input: Any, other: Any, *, alpha: Any = 1, out: Tensor | None = None) -> Tensor:
    """``input - alpha * other``."""
    alpha = _alpha("sub", input, other, alpha)
    return _sub(input, other if alpha == 1 else _scaled(other, alpha), out=out)


@public("pointwise", method=False)
def rsub(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """``other - alpha * input``: ``sub`` with its operands swapped (so its rules, dtypes and errors)."""
    if not isinstance(input, Tensor):
        fail("argument_error_type", op="rsub", name="input", position=" (position 1)", expected="Tensor",
             got=type(input).__name__)
    return _rsub(input, other, alpha)


def _rsub(input: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    alpha = _alpha("rsub", input, other, alpha)
    out = _sub(other, input if alpha == 1 else _scaled(input, alpha))
    node = out._grad_fn  # (sub's own, new node) torch's: RsubBackward0 for a tensor ``other``, 1 for a number
    if node is not None:
        node.label = "RsubBackward0" if isinstance(other, Tensor) else "RsubBackward1"
    return out


method("__rsub__", _rsub)


@public("pointwise", aliases=("divide",))
def div(input: Any, other: Any, *, rounding_mode: str | None = None, out: Tensor | None = None) -> Tensor:
    """True division (``rounding_mode=None``), or rounded toward zero (``'trunc'``) or down (``'floor'``)."""
    if rounding_mode is None:
        return true_divide(input, other, out=out)
    if rounding_mode == "floor":
        r = _div_floor(input, other)
    elif rounding_mode == "trunc":
        q = true_divide(input, other)
        common = promoted(input, other)
        r = q.trunc().to(q.dtype if RD.DTYPES[common].kind in "fc" else common)
    else:
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found {rounding_mode!r}")
    if r._grad_fn is not None:  # (the rounded quotient's own new node) torch's is div.Tensor_mode's
        r._grad_fn.label = "DivBackward2"
    return _store(r, out, "div")


public("pointwise", aliases=("multiply",))(mul)
for _name, _fn in (("add_", add), ("sub_", sub), ("div_", div), ("subtract_", sub), ("multiply_", mul)):
    method(_name, make_inplace(_fn, _name))


_INVERT = Prim("bitwise_not", lambda a: np.logical_not(a) if a.dtype.kind == "b" else np.invert(a))


@public("logical")
def bitwise_not(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    if not RD.is_integral(dtype_name(input), include_bool=True):
        fail("method_dtype_not_supported_error", op="bitwise_not", dtype=input.dtype.name, hint=" (integral and bool only)")
    return _store(_INVERT(input), out, "bitwise_not")
method("bitwise_not_", make_inplace(bitwise_not, "bitwise_not_"))
method("__invert__", bitwise_not)
method("__matmul__", lambda self, other: self.matmul(other))  # replaced by linalg.matmul itself
method("__rmatmul__", lambda self, other: other.matmul(self))


def _dtype_of(a: Any) -> str:
    return DTYPE_OF[np.asarray(a).dtype].name


def _guard(name: str, kernel: Callable[..., Any], ok: Callable[[str], bool], hint: str = "") -> Callable[..., Any]:
    """The kernel, behind torch's dtype check on the promoted operands (a rejected dtype never runs)."""

    def guarded(a: Any, b: Any) -> Any:
        d = _dtype_of(a)
        if not ok(d):
            fail("method_dtype_not_supported_error", op=name, dtype=d, hint=hint)
        return kernel(a, b)

    return guarded


def _floating(d: str) -> bool:
    return RD.DTYPES[d].kind == "f"


def _real(d: str) -> bool:
    return RD.DTYPES[d].kind != "c"


def _integer(d: str) -> bool:
    return RD.is_integral(d)


def _isnan(x: Any) -> Any:
    return x.isnan() if isinstance(x, Tensor) else bool(np.isnan(x))


def _zeros_like(x: Any) -> Any:
    return x.new_zeros(x._data.shape) if isinstance(x, Tensor) else None  # not x * 0: inf * 0 is nan


# -- shifts ------------------------------------------------------------------------------------------------

def _shift(left: bool) -> Callable[..., Any]:
    def kernel(a: Any, b: Any) -> Any:
        a, b = np.asarray(a), np.asarray(b)
        bits = a.dtype.itemsize * 8
        wide = b.astype(np.int64)
        ok = (wide >= 0) & (wide < bits)
        s = np.where(ok, wide, 0).astype(a.dtype)
        if left:
            return np.where(ok, np.left_shift(a, s), 0).astype(a.dtype)
        if a.dtype.kind == "u":
            return np.where(ok, np.right_shift(a, s), 0).astype(a.dtype)
        return np.where(ok, np.right_shift(a, s), np.right_shift(a, a.dtype.type(bits - 1))).astype(a.dtype)

    return kernel


bitwise_left_shift = _binary("bitwise_left_shift", _guard("bitwise_left_shift", _shift(True), _integer), None,
                             kind="integral", dunder="__lshift__", rdunder="__rlshift__")
bitwise_right_shift = _binary("bitwise_right_shift", _guard("bitwise_right_shift", _shift(False), _integer), None,
                              kind="integral", dunder="__rshift__", rdunder="__rrshift__")


# -- copysign, fmax / fmin, gcd / lcm, hypot, nextafter, logaddexp(2), xlogy -------------------------------

def _copysign_vjp(g: Tensor, n: Node) -> tuple[Any, ...]:
    a, b = n.inputs
    # torch's: result / a, and 0 where a == 0 (so inf / inf gives nan at an infinite a, as there)
    ratio = (copysign(a, b) / a).masked_fill(a == 0, 0) if isinstance(a, Tensor) else None
    return (None if ratio is None else g * ratio, _zeros_like(b) if isinstance(b, Tensor) else None)


copysign = _binary("copysign", _guard("copysign", np.copysign, _real), _copysign_vjp, kind="float")


def _fm_vjp(first: Callable[[Any, Any], Any]) -> Callable[[Tensor, Node], tuple[Any, ...]]:
    """fmax/fmin: the whole gradient to ``input`` where it is chosen (ties and a NaN ``other`` included)."""

    def vjp(g: Tensor, n: Node) -> tuple[Any, ...]:
        a, b = n.inputs
        take = first(a, b)
        take = take | _isnan(b) if isinstance(take, Tensor) else take
        return (_where(take, g, g * 0), _where(take, g * 0, g))

    return vjp


fmax = _binary("fmax", _guard("fmax", np.fmax, _real), _fm_vjp(lambda a, b: a >= b))
fmin = _binary("fmin", _guard("fmin", np.fmin, _real), _fm_vjp(lambda a, b: a <= b))
gcd = _binary("gcd", _guard("gcd", np.gcd, _integer), None, kind="integral")
lcm = _binary("lcm", _guard("lcm", np.lcm, _integer), None, kind="integral")


def _hypot_vjp(g: Tensor, n: Node) -> tuple[Any, ...]:
    a, b = n.inputs
    h = n.out  # the saved result, as torch's: a later in-place write to it (hypot_ again) is refused at backward
    return (g * a / h, g * b / h)


hypot = _binary("hypot", _guard("hypot", np.hypot, _floating), _hypot_vjp, save_output=True)
nextafter = _binary("nextafter", _guard("nextafter", np.nextafter, _floating),
                    # as torch: the gradient passes to input where it moves (input != other), never to other
                    lambda g, n: (_where(n.inputs[0] == n.inputs[1], g * 0, g), _zeros_like(n.inputs[1])))


def _logaddexp_kernel(a: Any, b: Any) -> Any:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind != "c":
        return np.logaddexp(a, b)
    hi = np.where(a.real >= b.real, a, b)
    lo = a + b - hi
    return (hi + np.log1p(np.exp(lo - hi))).astype(a.dtype)


logaddexp = _binary("logaddexp", _guard("logaddexp", _logaddexp_kernel, lambda d: RD.DTYPES[d].kind in "fc"),
                    lambda g, n: (g / _conj(1 + (n.inputs[1] - n.inputs[0]).exp()),
                                  g / _conj(1 + (n.inputs[0] - n.inputs[1]).exp())))
logaddexp2 = _binary("logaddexp2", _guard("logaddexp2", np.logaddexp2, _floating),
                     lambda g, n: (g / (1 + (n.inputs[1] - n.inputs[0]).exp2()),
                                   g / (1 + (n.inputs[0] - n.inputs[1]).exp2())))


def _xlogy_kernel(x: Any, y: Any) -> Any:
    x, y = np.asarray(x), np.asarray(y)
    return np.where((x == 0) & ~np.isnan(y), x.dtype.type(0), x * np.log(y)).astype(np.result_type(x, y))


def _xlogy_vjp(g: Tensor, n: Node) -> tuple[Any, ...]:
    x, y = n.inputs
    gx = _where((x == 0) & (y <= 0), g * 0, xlogy(g, y)) if isinstance(x, Tensor) else None
    gy = g * x / y if isinstance(y, Tensor) else None
    return (gx, gy)


xlogy = _binary("xlogy", _guard("xlogy", _xlogy_kernel, _real), _xlogy_vjp, kind="float")


# -- heaviside: no promotion, no derivative (as torch) ---------------------------------------------------

def _heaviside_kernel(x: Any, v: Any) -> Any:
    x = np.asarray(x)
    return np.where(x == 0, v, x > 0).astype(x.dtype)  # as torch: a NaN input gives (nan > 0) = 0


_heaviside = _binary("heaviside", _guard("heaviside", _heaviside_kernel, _real), None, register=False)


@public("pointwise")
def heaviside(input: Tensor, values: Tensor, *, out: Tensor | None = None) -> Tensor:
    """0 below zero, 1 above, ``values`` at zero; ``input`` and ``values`` must share a dtype."""
    if not isinstance(values, Tensor):
        raise TypeError(f"heaviside(): argument 'values' must be Tensor, not {type(values).__name__}")
    if dtype_name(input) != dtype_name(values):
        fail("dtype_error_mismatch", op="heaviside", what="input and values", a=input.dtype.name, b=values.dtype.name)
    return _heaviside(input, values, out=out)


method("heaviside_", make_inplace(heaviside, "heaviside_"))


# -- float_power, ldexp ------------------------------------------------------------------------------------

def _is_complex_operand(x: Any) -> bool:
    return x.is_complex() if isinstance(x, Tensor) else isinstance(x, builtins.complex)  # (complex is the op here)


@public("pointwise")
def float_power(input: Any, exponent: Any, *, out: Tensor | None = None) -> Tensor:
    """``input ** exponent`` computed in double precision (float64, or complex128 if either is complex)."""
    for what, a in (("input", input), ("exponent", exponent)):  # cast() would turn None into NaN, "a" into a ValueError
        if not isinstance(a, (Tensor, bool, int, float, complex, np.number)):
            fail("argument_error_type", op="float_power", name=what, position="", expected="Tensor or Number",
                 got=type(a).__name__)
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        fail("argument_error_signature", op="float_power", problem="needs a Tensor input or exponent")
    d = "complex128" if _is_complex_operand(input) or _is_complex_operand(exponent) else "float64"
    r = pow(cast(input, d), cast(exponent, d))
    return r if out is None else write_inplace(out, r, "float_power")


def _float_power_(self: Tensor, exponent: Any) -> Tensor:
    d = "complex128" if self.is_complex() or _is_complex_operand(exponent) else "float64"
    if dtype_name(self) != d:
        fail("dtype_error_mismatch", op="float_power_", what="the base and the result (float_power_ computes in "
             "double precision)", a=self.dtype.name, b=d)
    return make_inplace(float_power, "float_power_")(self, exponent)


method("float_power_", _float_power_)


@public("pointwise")
def ldexp(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``input * 2 ** other`` (as torch computes it, so with its dtypes)."""
    # torch's kernel for a real floating input and an integral exponent has no bool exponent
    if isinstance(other, Tensor) and dtype_name(other) == "bool" and input.is_floating_point():
        fail("method_dtype_not_supported_error", op="ldexp", dtype="bool", hint=" (for the exponent)")
    common = RD.float_result(promoted(input, other), default_float())
    int_exp = isinstance(other, Tensor) and RD.is_integral(dtype_name(other), include_bool=True)
    if int_exp and input.is_floating_point():  # torch's exact kernel: x * 2**k rounded once
        r = mul(cast(input, "float64"), pow(2.0, cast(other, "float64")))
    else:  # mul(input, pow(2, other)), each in its own promoted dtype
        r = mul(input, pow(2.0, other))
    r = cast(r, common)
    return r if out is None else write_inplace(out, r, "ldexp")


method("ldexp_", make_inplace(ldexp, "ldexp_"))


# -- lerp, addcmul, addcdiv: composites ------------------------------------------------------------------

@public("pointwise")
def lerp(input: Tensor, end: Tensor, weight: Any, *, out: Tensor | None = None) -> Tensor:
    """``input + weight * (end - input)``, evaluated from the nearer end as torch does."""
    d = dtype_name(input)
    for what, x in (("end", end), ("weight", weight)):
        if isinstance(x, Tensor) and dtype_name(x) != d:
            fail("dtype_error_mismatch", op="lerp", what=f"input and {what}", a=d, b=x.dtype.name)
    if not isinstance(end, Tensor):
        raise TypeError(f"lerp(): argument 'end' must be Tensor, not {type(end).__name__}")
    if RD.DTYPES[d].kind not in "fc":
        fail("method_dtype_not_supported_error", op="lerp", dtype=d, hint="")
    for x in (end, weight):
        if isinstance(x, Tensor) and x._data.shape != input._data.shape:
            broadcast2(input._data.shape, x._data.shape, "lerp")
    diff = end - input
    if isinstance(weight, Tensor):
        near = (weight.abs() if weight.is_complex() else weight) < 0.5
        r = _where(near, input + weight * diff, end - diff * (1 - weight))
    else:
        r = input + weight * diff if abs(weight) < 0.5 else end - diff * (1 - weight)
        if r.dtype is not input.dtype:  # a Python complex weight must not promote a real input
            r = cast(r, d)
    r = as_node(r, "LerpBackward1" if isinstance(weight, Tensor) else "LerpBackward0", input, end, weight)
    return r if out is None else write_inplace(out, r, "lerp")


def _opmath(common: str, *xs: Tensor) -> tuple[Any, ...]:
    """Half-precision operands are computed in float32 and rounded once (torch's opmath type)."""
    if common in ("float16", "bfloat16"):
        return tuple(cast(x, "float32") for x in xs)
    return xs


def _value_check(op: str, common: str, value: Any) -> Any:
    """The ``value`` as torch uses it: truncated to an integer for integral operands."""
    if RD.is_integral(common) and isinstance(value, (float, np.floating)):
        return int(value)
    return value


@public("pointwise")
def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1, out: Tensor | None = None) -> Tensor:
    """``input + value * tensor1 * tensor2``."""
    common = promoted(input, tensor1, tensor2)
    if common == "bool":
        fail("method_dtype_not_supported_error", op="addcmul", dtype="bool", hint="")
    value = _value_check("addcmul", common, value)
    input, tensor1, tensor2 = _opmath(common, input, tensor1, tensor2)
    prod = tensor1 * tensor2
    r = as_node(cast(input + (prod if value == 1 else prod * value), common), "AddcmulBackward0", input, tensor1, tensor2)
    return r if out is None else write_inplace(out, r, "addcmul")


@public("pointwise")
def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1, out: Tensor | None = None) -> Tensor:
    """``input + value * tensor1 / tensor2`` (integer tensor1 and tensor2 are refused, as in torch)."""
    if RD.is_integral(dtype_name(tensor1), include_bool=True) and RD.is_integral(dtype_name(tensor2), include_bool=True):
        fail("method_dtype_not_supported_error", op="addcdiv", dtype=f"{tensor1.dtype.name}/{tensor2.dtype.name}",
             hint=" (integer division with addcdiv is not supported: use true division of tensor1 and tensor2)")
    common = promoted(input, tensor1, tensor2)
    value = _value_check("addcdiv", common, value)
    input, tensor1, tensor2 = _opmath(common, input, tensor1, tensor2)
    quot = tensor1 / tensor2
    r = as_node(cast(input + (quot if value == 1 else quot * value), common), "AddcdivBackward0", input, tensor1, tensor2)
    return r if out is None else write_inplace(out, r, "addcdiv")


method("lerp_", make_inplace(lerp, "lerp_"))
method("addcmul_", make_inplace(addcmul, "addcmul_"))
method("addcdiv_", make_inplace(addcdiv, "addcdiv_"))


# -- forward-mode rules ----------------------------------------------------------------------------------

def _logaddexp_jvp(ts: tuple[Any, ...], n: Any) -> Any:
    a, b = n.inputs
    parts = [t / (1 + (o - s).exp()) for t, s, o in ((ts[0], a, b), (ts[1], b, a)) if t is not None]
    return parts[0] if len(parts) == 1 else parts[0] + parts[1]


via_vjp("copysign", "fmax", "fmin", "hypot", "nextafter", "logaddexp2", "xlogy")
PRIMS["logaddexp"].jvp = _logaddexp_jvp


@public("pointwise", aliases=("clip",))
def clamp(input: Tensor, min: Any = None, max: Any = None, *, out: Tensor | None = None) -> Tensor:
    """Limit to ``[min, max]``; either may be a number or a tensor (broadcast), or None."""
    if min is None and max is None:
        fail("argument_error_invalid", op="clamp", problem="at least one of 'min' or 'max' must not be None")
    # where(), not maximum()/minimum(): at a bound the gradient goes to the input, as in torch
    result = input
    if min is not None:
        lo = _bound(min, result)
        result = where(result < lo, lo, result)
    if max is not None:
        hi = _bound(max, result)
        result = where(result > hi, hi, result)
    if result is input:
        result = clone(input)
    # torch's nodes: ClampBackward1 with number bounds, ClampBackward0 with a tensor one
    tensor_bound = isinstance(min, Tensor) or isinstance(max, Tensor)
    result = as_node(result, "ClampBackward0" if tensor_bound else "ClampBackward1", input, min, max)
    return result if out is None else out.copy_(result)


def _bound(b: Any, like: Tensor) -> Any:
    if isinstance(b, Tensor):
        return b
    from .creation import full

    return full((), b, dtype=to_dtype(promoted(like, b)), device=like.device)


method("clamp_", make_inplace(clamp, "clamp_"))
method("clip_", make_inplace(clamp, "clip_"))
