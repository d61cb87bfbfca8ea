"""More binary (and ternary) pointwise ops: shifts, copysign, float_power, fmax/fmin, gcd/lcm, heaviside,
hypot, ldexp, lerp, logaddexp(2), nextafter, complex/polar, xlogy, addcmul/addcdiv.

The two-operand primitives go through ``pointwise._binary`` (broadcast check, promotion, scalars, the
method and the in-place twin). The dtypes torch refuses are refused by a guard on the promoted operands,
before the kernel runs; ternary ops are composites of other ops, so they differentiate for free.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from .._dispatch import PRIMS, Prim
from .._errors import fail
from .._rules import dtypes as RD
from .._tensor import Tensor
from ..autograd.engine import Node
from ..backends.numpy_backend import DTYPE_OF
from ._common import broadcast2, cast, default_float, dtype_name, make_inplace, promoted, write_inplace
from ._jvp_more import unary, via_vjp
from ._registry import method, public
from .pointwise import _binary, mul, pow


def _name(a: Any) -> str:
    return DTYPE_OF[np.asarray(a).dtype].name


def _guard(name: str, kernel: Callable[..., Any], ok: Callable[[str], bool], hint: str = "") -> Callable[..., Any]:
    """The kernel, behind torch's dtype check on the promoted operands (a rejected dtype never runs)."""

    def guarded(a: Any, b: Any) -> Any:
        d = _name(a)
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


def _conj(t: Any) -> Any:
    return t.conj() if isinstance(t, Tensor) and t.is_complex() else t


def _where(c: Any, a: Any, b: Any) -> Tensor:
    from .conversion import where

    out: Tensor = where(c, a, b)
    return out


def _zeros_like(x: Any) -> Any:
    return x * 0 if isinstance(x, Tensor) else None


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
    flip = copysign(a.sign(), b) * a.sign() if isinstance(a, Tensor) else None
    return (None if flip is None else g * flip, _zeros_like(b) if isinstance(b, Tensor) else None)


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
    h = hypot(a, b)
    return (g * a / h, g * b / h)


hypot = _binary("hypot", _guard("hypot", np.hypot, _floating), _hypot_vjp)
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


# -- complex / polar ---------------------------------------------------------------------------------------

def _complex_kernel(re: Any, im: Any) -> Any:
    re, im = np.broadcast_arrays(re, im)
    out = np.empty(re.shape, np.complex128 if re.dtype == np.float64 else np.complex64)
    out.real, out.imag = re, im
    return out


_REAL: Prim
_IMAG: Prim
_COMPLEX: Prim
_REAL = Prim("real_part", lambda z: z.real.copy(), lambda g, n: (_COMPLEX(g, g * 0),))
_IMAG = Prim("imag_part", lambda z: z.imag.copy(), lambda g, n: (_COMPLEX(g * 0, g),))
_COMPLEX = Prim("complex", _complex_kernel, lambda g, n: (_REAL(g), _IMAG(g)))


def _complex_parts(op: str, a: Tensor, b: Tensor, names: tuple[str, str], allowed: tuple[str, ...]) -> None:
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError(f"{op}(): arguments '{names[0]}' and '{names[1]}' must be Tensors")
    da, db = dtype_name(a), dtype_name(b)
    if da != db:
        fail("dtype_error_mismatch", op=op, what=f"{names[0]} and {names[1]}", a=da, b=db)
    if da not in allowed:
        fail("method_dtype_not_supported_error", op=op, dtype=da,
             hint=f" (expected both inputs to be {' or '.join(allowed)})")
    if a._data.shape != b._data.shape:
        broadcast2(a._data.shape, b._data.shape, op)


@public("pointwise", method=False)
def complex(real: Tensor, imag: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``real + i * imag`` (float16 gives complex64 here: shapetorch has no complex32)."""
    _complex_parts("complex", real, imag, ("real", "imag"), ("float16", "float32", "float64"))
    if dtype_name(real) == "float16":
        real, imag = cast(real, "float32"), cast(imag, "float32")
    r = _COMPLEX(real, imag)
    return r if out is None else write_inplace(out, r, "complex")


@public("pointwise", method=False)
def polar(abs: Tensor, angle: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``abs * (cos(angle) + i sin(angle))``."""
    _complex_parts("polar", abs, angle, ("abs", "angle"), ("float32", "float64"))
    r = _COMPLEX(abs * angle.cos(), abs * angle.sin())
    return r if out is None else write_inplace(out, r, "polar")


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
    r = cast(input + (prod if value == 1 else prod * value), common)
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
    r = cast(input + (quot if value == 1 else quot * value), common)
    return r if out is None else write_inplace(out, r, "addcdiv")


method("lerp_", make_inplace(lerp, "lerp_"))
method("addcmul_", make_inplace(addcmul, "addcmul_"))
method("addcdiv_", make_inplace(addcdiv, "addcdiv_"))


# -- forward-mode rules ----------------------------------------------------------------------------------

def _logaddexp_jvp(ts: tuple[Any, ...], n: Any) -> Any:
    a, b = n.inputs
    parts = [t / (1 + (o - s).exp()) for t, s, o in ((ts[0], a, b), (ts[1], b, a)) if t is not None]
    return parts[0] if len(parts) == 1 else parts[0] + parts[1]


def _complex_jvp(ts: tuple[Any, ...], n: Any) -> Any:
    re, im = (t if t is not None else x * 0 for t, x in zip(ts, n.inputs))
    return _COMPLEX(re, im)


via_vjp("copysign", "fmax", "fmin", "hypot", "nextafter", "logaddexp2", "xlogy")
PRIMS["logaddexp"].jvp = _logaddexp_jvp
PRIMS["complex"].jvp = _complex_jvp
PRIMS["real_part"].jvp = unary(lambda t, n: _REAL(t))
PRIMS["imag_part"].jvp = unary(lambda t, n: _IMAG(t))
