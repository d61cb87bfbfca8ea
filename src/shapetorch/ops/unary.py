"""Unary math: neg, exp/log, trig and hyperbolic functions, sqrt/rsqrt, sigmoid, abs/sgn/sign, rounding,
square, deg2rad/rad2deg, positive, frexp, nan_to_num, and the unary dunders (``-x``, ``+x``, ``abs(x)``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from .._engine.primitives import Prim
from .._errors import fail
from .._tensor import Tensor
from ..backends import thread_pool
from ..backends.thread_pool import _SPLIT
from . import return_types as RT
from ._common import as_node, cast, dtype_name, make_inplace, write_inplace
from ._elementwise import _conj, _quiet, _store, _unary
from ._jvp import via_vjp
from ._registry import method, public
from .arithmetic import mul
from .return_types import MantissaExponent

# -- tanh_backward, sigmoid_backward: NOTE [fused backward] for the gradients of tanh and sigmoid ---------------------
# Written as ops, ``g * (1 - y ** 2)`` was three primitives (three nodes' worth of dispatch, a Tensor and a buffer
# each) and ``g * (y * (1 - y))`` three; torch runs each as one backward op (tanh_backward, sigmoid_backward):
# - tanh: torch's CPU kernel rounds ``1 - y * y`` once (a fused multiply-add); ``(1 - y) * (1 + y)`` is within an
#   ulp of that (``1 - y`` is exact for |y| >= 1/2), where ``1 - y * y`` in two roundings loses up to half the
#   digits near |y| = 1. (Squaring float32 in float64 gives torch's bits exactly but cost 2.6x these four passes.)
#   float16 and bfloat16 are computed in float32 and rounded once, as torch.
# - sigmoid: ``g * (1 - y) * y``, torch's order and rounding (float16 too, step by step as torch; bfloat16 in
#   float32): torch's bits.
# Each has its own derivative (written with these same primitives), so a double backward records torch's nodes
# (TanhBackwardBackward0) and a create_graph backward is one node per gradient too. Complex tensors keep the
# composite (conjugated) form.

def _tanh_backward_one(g: Any, y: Any) -> Any:
    one = y.dtype.type(1)
    out = np.add(y, one)
    out *= np.subtract(one, y)
    out *= g
    return out


def _sigmoid_backward_one(g: Any, y: Any) -> Any:
    out = np.subtract(y.dtype.type(1), y)
    out *= g
    out *= y
    return out


def _fused_kernel(one: Callable[[Any, Any], Any], passes: int, float16: bool) -> Callable[[Any, Any], Any]:
    """The kernel ``one(g, y)`` for float32/float64 (bfloat16, and float16 where ``float16``, computed in float32
    and rounded once), split over the threads when large (``thread_pool.flat``)."""
    def kernel(g: Any, y: Any) -> Any:
        if y.dtype.itemsize == 2 and (float16 or y.dtype != np.float16):
            return kernel(g.astype(np.float32), y.astype(np.float32)).astype(y.dtype)
        if g.shape != y.shape:  # (a broadcast gradient: one call over the result's shape)
            g, y = np.broadcast_arrays(g, y)
        return one(g, y) if y.size < _SPLIT else thread_pool.flat(one, (g, y), passes)
    return kernel


def _tanh_backward_vjp(gg: Tensor, n: Any) -> tuple[Any, ...]:
    g, y = n.inputs
    # d/dg: the same map of gg; d/dy of g (1 - y^2): -2 y g gg
    return _TANH_BACKWARD(gg, y), gg * (y * -2 * g)  # torch's order


def _sigmoid_backward_vjp(gg: Tensor, n: Any) -> tuple[Any, ...]:
    g, y = n.inputs
    # d/dg: the same map of gg; d/dy of g (1 - y) y: g (1 - 2 y) gg
    return _SIGMOID_BACKWARD(gg, y), gg * g * (1 - 2 * y)  # torch's order


_TANH_BACKWARD = Prim("tanh_backward", _fused_kernel(_tanh_backward_one, 4, True), _tanh_backward_vjp)
_SIGMOID_BACKWARD = Prim("sigmoid_backward", _fused_kernel(_sigmoid_backward_one, 3, False),
                         _sigmoid_backward_vjp)


def _fused(prim: Prim, g: Tensor, y: Tensor) -> bool:
    """The fused primitive serves: a real floating gradient and output of one dtype, on a device with its kernel."""
    return (y._data.dtype.kind == "f" or y.dtype.is_floating_point) and g._data.dtype == y._data.dtype \
        and g._device.type in prim.kernels  # (bfloat16's NumPy kind is "V")


def _tanh_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    y = n.out
    if _fused(_TANH_BACKWARD, g, y):
        return (_TANH_BACKWARD(g, y),)
    return (g * (1 - _conj(y) ** 2),)


def _sigmoid_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    y = n.out
    if _fused(_SIGMOID_BACKWARD, g, y):
        return (_SIGMOID_BACKWARD(g, y),)
    return (g * _conj(y * (1 - y)),)


neg = _unary("neg", np.negative, lambda g, n: (-g,), kind="same")
exp = _unary("exp", _quiet(np.exp), lambda g, n: (g * _conj(n.out),), save_output=True)
exp2 = _unary("exp2", _quiet(np.exp2), lambda g, n: (g * _conj(n.out) * math.log(2.0),), save_output=True)
expm1 = _unary("expm1", _quiet(np.expm1), lambda g, n: (g * (_conj(n.out) + 1),), save_output=True)
log = _unary("log", _quiet(np.log), lambda g, n: (g / _conj(n.inputs[0]),))
log2 = _unary("log2", _quiet(np.log2), lambda g, n: (g / (_conj(n.inputs[0]) * math.log(2.0)),))
log10 = _unary("log10", _quiet(np.log10), lambda g, n: (g / (_conj(n.inputs[0]) * math.log(10.0)),))
log1p = _unary("log1p", _quiet(np.log1p), lambda g, n: (g / (_conj(n.inputs[0]) + 1),))
sqrt = _unary("sqrt", _quiet(np.sqrt), lambda g, n: (g / (2 * _conj(n.out)),), save_output=True)
rsqrt = _unary(
    "rsqrt", _quiet(lambda a: np.reciprocal(np.sqrt(a))), lambda g, n: (g * -0.5 * _conj(n.out) ** 3,), save_output=True
)
sin = _unary("sin", np.sin, lambda g, n: (g * _conj(n.inputs[0].cos()),))
cos = _unary("cos", np.cos, lambda g, n: (g * -_conj(n.inputs[0].sin()),))
tan = _unary("tan", _quiet(np.tan), lambda g, n: (g * (1 + _conj(n.out) ** 2),), save_output=True)
asin = _unary("asin", _quiet(np.arcsin), lambda g, n: (g * (1 - _conj(n.inputs[0]) ** 2).rsqrt(),))
acos = _unary("acos", _quiet(np.arccos), lambda g, n: (-g * (1 - _conj(n.inputs[0]) ** 2).rsqrt(),))
atan = _unary("atan", np.arctan, lambda g, n: (g / (1 + _conj(n.inputs[0]) ** 2),))
sinh = _unary("sinh", _quiet(np.sinh), lambda g, n: (g * _conj(n.inputs[0].cosh()),))
cosh = _unary("cosh", _quiet(np.cosh), lambda g, n: (g * _conj(n.inputs[0].sinh()),))
tanh = _unary("tanh", np.tanh, _tanh_vjp, save_output=True)
asinh = _unary("asinh", np.arcsinh, lambda g, n: (g * (_conj(n.inputs[0]) ** 2 + 1).rsqrt(),))
acosh = _unary("acosh", _quiet(np.arccosh), lambda g, n: (g * (_conj(n.inputs[0]) ** 2 - 1).rsqrt(),))
atanh = _unary("atanh", _quiet(np.arctanh), lambda g, n: (g / (1 - _conj(n.inputs[0]) ** 2),))
sigmoid = _unary(
    "sigmoid", _quiet(lambda a: np.reciprocal(1 + np.exp(-a))), _sigmoid_vjp, save_output=True,
)
reciprocal = _unary("reciprocal", _quiet(np.reciprocal), lambda g, n: (-g * _conj(n.out) ** 2,), save_output=True)
abs = _unary("abs", np.abs, lambda g, n: (g * n.inputs[0].sgn(),), kind="same")


def _sign(a: Any) -> Any:
    """torch's sign is ``(0 < a) - (a < 0)``: 0 at NaN, where NumPy's is NaN."""
    if a.dtype.kind == "b":
        return a.copy()
    out = np.sign(a)
    return np.where(np.isnan(a), 0, out).astype(a.dtype) if a.dtype.kind == "f" else out


sgn = _unary("sgn", lambda a: _sign(a) if a.dtype.kind != "c" else _csgn(a), lambda g, n: (g * 0,), kind="same")
sign = _unary("sign", _sign, lambda g, n: (g * 0,), kind="same")
floor = _unary("floor", lambda a: a.copy() if a.dtype.kind in "biu" else np.floor(a), lambda g, n: (g * 0,), kind="same")
ceil = _unary("ceil", lambda a: a.copy() if a.dtype.kind in "biu" else np.ceil(a), lambda g, n: (g * 0,), kind="same")
trunc = _unary("trunc", lambda a: a.copy() if a.dtype.kind in "biu" else np.trunc(a), lambda g, n: (g * 0,), kind="same")
frac = _unary("frac", lambda a: a - np.trunc(a), lambda g, n: (g,), kind="same")


def _csgn(a: Any) -> Any:
    mag = np.abs(a)
    with np.errstate(all="ignore"):
        return np.where(mag == 0, 0, a / np.where(mag == 0, 1, mag)).astype(a.dtype)


def _round_kernel(a: Any, decimals: int = 0) -> Any:
    if a.dtype.kind in "biu":
        return a.copy()
    return np.round(a, decimals)  # half to even, as torch


_ROUND = Prim("round", _round_kernel, lambda g, n: (g * 0,))


@public("pointwise")
def round(input: Tensor, *, decimals: int = 0, out: Tensor | None = None) -> Tensor:
    """Round to the nearest integer (half to even), or to ``decimals`` decimal places."""
    if dtype_name(input) == "bool" or input.is_complex():
        fail("method_dtype_not_supported_error", op="round", dtype=input.dtype.name, hint="")
    return _store(_ROUND(input, decimals=decimals), out, "round")


method("round_", make_inplace(round, "round_"))


def square(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``input * input``; bool squares to int64 as in torch."""
    if dtype_name(input) == "bool":
        input = cast(input, "int64")
    return _store(as_node(mul(input, input), "PowBackward0", input), out, "square")


public("pointwise")(square)
method("square_", make_inplace(square, "square_"))


def _neg_dunder(self: Tensor) -> Tensor:
    if self._data.dtype.kind == "b":  # (read off the array: ``-g`` is in vjps)
        fail("method_dtype_not_supported_error", op="neg", dtype="bool",
             hint=" (use ~ or logical_not() to invert a bool tensor)")
    return neg(self)


method("__neg__", _neg_dunder)
method("__pos__", lambda self: self)
method("__abs__", abs)


def _scale_kernel(name: str, factor: float) -> Callable[[Any], Any]:
    def kernel(a: Any) -> Any:
        if a.dtype.kind == "c":
            fail("method_dtype_not_supported_error", op=name, dtype=str(a.dtype), hint="")
        return (a * a.dtype.type(factor)).astype(a.dtype)

    return kernel


_D2R = math.pi / 180.0
deg2rad = _unary("deg2rad", _scale_kernel("deg2rad", _D2R), lambda g, n: (g * _D2R,))
rad2deg = _unary("rad2deg", _scale_kernel("rad2deg", 1 / _D2R), lambda g, n: (g * (1 / _D2R),))


@public("pointwise")
def positive(input: Tensor) -> Tensor:
    """``input`` itself (torch returns the same tensor); bool is refused as in torch."""
    if dtype_name(input) == "bool":
        fail("method_dtype_not_supported_error", op="positive", dtype="bool",
             hint=" (the positive operator does not support bool tensors)")
    return input


# -- frexp ------------------------------------------------------------------------------------------------

def _frexp_parts(a: Any) -> tuple[Any, Any]:
    wide = a.astype(np.float32) if a.dtype.itemsize == 2 and a.dtype != np.float16 else a
    m, e = np.frexp(wide)
    return m.astype(a.dtype), e.astype(np.int32)


_FREXP_EXP = Prim("frexp_exponent", lambda a: _frexp_parts(a)[1], None)
_FREXP_MANT = Prim("frexp", lambda a: _frexp_parts(a)[0],
                   lambda g, n: (g / _FREXP_EXP(n.inputs[0]).to(n.inputs[0].dtype).exp2(),))


@public("pointwise")
def frexp(input: Tensor, *, out: Any = None) -> MantissaExponent:
    """``(mantissa, exponent)`` with ``input = mantissa * 2 ** exponent``, mantissa in [0.5, 1)."""
    if not input.dtype.is_floating_point:
        fail("method_dtype_not_supported_error", op="frexp", dtype=input.dtype.name,
             hint=" (frexp only supports floating-point dtypes)")
    result = RT.frexp(_FREXP_MANT(input), _FREXP_EXP(input))
    if out is not None:
        write_inplace(out[0], result.mantissa, "frexp")
        write_inplace(out[1], result.exponent, "frexp")
        return RT.frexp(out[0], out[1])
    return result


# -- nan_to_num -------------------------------------------------------------------------------------------

def _nan_to_num_kernel(a: Any, nan: float, posinf: float | None, neginf: float | None) -> Any:
    if a.dtype.kind in "biu":
        return a.copy()
    if a.dtype.kind == "c":
        part = a.real.dtype
        re = _nan_to_num_kernel(a.real.copy(), nan, posinf, neginf)
        im = _nan_to_num_kernel(a.imag.copy(), nan, posinf, neginf)
        return (re + 1j * im.astype(part)).astype(a.dtype)
    info = ml_dtypes.finfo(a.dtype)  # type: ignore[no-untyped-call]  # np.finfo has no bfloat16
    with np.errstate(over="ignore"):
        hi = a.dtype.type(info.max if posinf is None else posinf)
        lo = a.dtype.type(info.min if neginf is None else neginf)
        nv = a.dtype.type(nan)
    out = np.where(np.isnan(a), nv, a)
    out = np.where(np.isposinf(a), hi, out)
    return np.where(np.isneginf(a), lo, out).astype(a.dtype)


_FINITE = Prim("isfinite_mask", lambda a: np.isfinite(a) if a.dtype.kind in "fc" else np.ones(a.shape, bool), None)
_NAN_TO_NUM = Prim("nan_to_num", _nan_to_num_kernel, lambda g, n: (g * _FINITE(n.inputs[0]).to(g.dtype),))


@public("pointwise")
def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None, *,
               out: Tensor | None = None) -> Tensor:
    """NaN to ``nan``, +inf/-inf to ``posinf``/``neginf`` (the dtype's largest/lowest finite value by default)."""
    r = _NAN_TO_NUM(input, nan=nan, posinf=posinf, neginf=neginf)
    return r if out is None else write_inplace(out, r, "nan_to_num")


method("nan_to_num_", make_inplace(nan_to_num, "nan_to_num_"))


via_vjp("deg2rad", "rad2deg", "frexp", "nan_to_num", "tanh_backward", "sigmoid_backward")
