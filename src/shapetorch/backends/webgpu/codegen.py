"""WGSL generation. Elementwise ops come from one table (:data:`UNARY`, :data:`BINARY`): an op is a WGSL
expression per compute type over ``a`` (and ``b``); the generator wraps it in strided, broadcasting
loads and a store. Reductions, matmul and the index kernels are templates over the same types.

Compute types: ``f`` (f32; float16 storage is widened), ``i`` (i32; int32 and int64), ``u`` (u32 0/1; bool).
Every shader's binding 0 is ``meta``, a u32 parameter block: shapes, strides, offsets, scalars.
"""

from __future__ import annotations

import functools
import math

from .runtime import WG

# -- the op table --------------------------------------------------------------------------------------
# name -> {compute kind: expression}; unary ops see ``a``, binary ops ``a`` and ``b``.
UNARY: dict[str, dict[str, str]] = {
    "neg": {"f": "-a", "i": "-a"},
    "exp": {"f": "exp(a)"},
    "exp2": {"f": "exp2(a)"},
    "expm1": {"f": "expm1_f(a)"},
    "log": {"f": "log(a)"},
    "log2": {"f": "log2(a)"},
    "log10": {"f": "log(a) * 0.43429448190325176"},
    "log1p": {"f": "log1p_f(a)"},
    "sqrt": {"f": "sqrt(a)"},
    "rsqrt": {"f": "1.0 / sqrt(a)"},
    "sin": {"f": "sin(a)"},
    "cos": {"f": "cos(a)"},
    "tan": {"f": "tan(a)"},
    "asin": {"f": "atan2(a, sqrt((1.0 - a) * (1.0 + a)))"},
    "acos": {"f": "atan2(sqrt((1.0 - a) * (1.0 + a)), a)"},
    "atan": {"f": "atan(a)"},
    "sinh": {"f": "sinh(a)"},
    "cosh": {"f": "cosh(a)"},
    "tanh": {"f": "tanh(a)"},
    "asinh": {"f": "sign(a) * log(abs(a) + sqrt(a * a + 1.0))"},
    "acosh": {"f": "log(a + sqrt(a * a - 1.0))"},
    "atanh": {"f": "0.5 * log1p_f(2.0 * a / (1.0 - a))"},
    "sigmoid": {"f": "1.0 / (1.0 + exp(-a))"},
    "reciprocal": {"f": "1.0 / a"},
    "abs": {"f": "abs(a)", "i": "abs(a)"},
    "sgn": {"f": "sign_f(a)", "i": "sign(a)", "u": "a"},
    "sign": {"f": "sign_f(a)", "i": "sign(a)", "u": "a"},
    "floor": {"f": "floor(a)", "i": "a", "u": "a"},
    "ceil": {"f": "ceil(a)", "i": "a", "u": "a"},
    "trunc": {"f": "trunc(a)", "i": "a", "u": "a"},
    "frac": {"f": "a - trunc(a)"},
    "round": {"f": "round(a)", "i": "a", "u": "a"},  # WGSL rounds half to even, as torch
    "round_dec": {"f": "round(a * s0) / s0"},  # s0 = 10**decimals
    "bitwise_not": {"i": "~a", "u": "a ^ 1u"},
    "conj": {"f": "a", "i": "a", "u": "a"},
    "relu": {"f": "select(a, 0.0, a < 0.0)", "i": "max(a, 0)", "u": "a"},
    "erf": {"f": "erf_f(a)"},
    "gelu": {"f": "a * 0.5 * (1.0 + erf_f(a * 0.7071067811865476))"},
    "silu": {"f": "a / (1.0 + exp(-a))"},
    # torch's formulas (ops/activation.py): softplus is taken as x above 20, where tanh of it is 1 in f32 and exp
    # would overflow; a NaN stays NaN (WGSL's min and max of NaN are unspecified)
    "mish": {"f": "a * tanh(select(log1p_f(exp(a)), a, a > 20.0))"},
    "hardswish": {"f": "select(a * min(max(a + 3.0, 0.0), 6.0) / 6.0, a, nan_f(a))"},
    "hardsigmoid": {"f": "select(min(max(a + 3.0, 0.0), 6.0) / 6.0, a, nan_f(a))"},
    "log_sigmoid": {"f": "select(min(a, 0.0), a, nan_f(a)) - log1p_f(exp(-abs(a)))"},
    "copy": {"f": "a", "i": "a", "u": "a"},
    "deg2rad": {"f": "a * 0.017453292519943295"},
    "rad2deg": {"f": "a * 57.29577951308232"},
    "erfc": {"f": "erfc_f(a)"},
    "sinc": {"f": "select(sin(3.141592653589793 * a) / (3.141592653589793 * a), 1.0, a == 0.0)"},
}

# Predicates: a bool (u32 0/1) result of any input kind.
_INF = "bitcast<f32>(0x7f800000u)"
PREDICATE: dict[str, dict[str, str]] = {
    "isnan": {"f": "select(0u, 1u, nan_f(a))", "i": "0u", "u": "0u"},
    "isinf": {"f": f"select(0u, 1u, abs(a) == {_INF})", "i": "0u", "u": "0u"},
    "isposinf": {"f": f"select(0u, 1u, a == {_INF})", "i": "0u", "u": "0u"},
    "isneginf": {"f": f"select(0u, 1u, a == -{_INF})", "i": "0u", "u": "0u"},
    "isfinite": {"f": "select(0u, 1u, (bitcast<u32>(a) & 0x7fffffffu) < 0x7f800000u)", "i": "1u", "u": "1u"},
    "isfinite_mask": {"f": "select(0u, 1u, (bitcast<u32>(a) & 0x7fffffffu) < 0x7f800000u)", "i": "1u", "u": "1u"},
    "signbit": {"f": "bitcast<u32>(a) >> 31u", "i": "select(0u, 1u, a < 0)", "u": "0u"},
}

_CMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
BINARY: dict[str, dict[str, str]] = {
    "add": {"f": "a + b", "i": "a + b", "u": "select(0u, 1u, (a | b) != 0u)"},
    "sub": {"f": "a - b", "i": "a - b"},
    "mul": {"f": "a * b", "i": "a * b", "u": "a & b"},
    "true_divide": {"f": "a / b"},
    "floor_divide": {"f": "floor_div_f(a, b)", "i": "floor_div_i(a, b)"},
    "remainder": {"f": "rem_f(a, b)", "i": "rem_i(a, b)"},
    "fmod": {"f": "fmod_f(a, b)", "i": "fmod_i(a, b)"},
    "pow": {"f": "pow_f(a, b)", "i": "pow_i(a, b)"},
    "atan2": {"f": "atan2(a, b)"},
    "maximum": {"f": "select(max(a, b), a + b, nan_f(a) || nan_f(b))", "i": "max(a, b)", "u": "max(a, b)"},
    "minimum": {"f": "select(min(a, b), a + b, nan_f(a) || nan_f(b))", "i": "min(a, b)", "u": "min(a, b)"},
    "bitwise_and": {"i": "a & b", "u": "a & b"},
    "bitwise_or": {"i": "a | b", "u": "a | b"},
    "bitwise_xor": {"i": "a ^ b", "u": "a ^ b"},
    **{k: dict.fromkeys("fiu", f"select(0u, 1u, a {op} b)") for k, op in _CMP.items()},
    "div_floor": {"f": "floor_div_f(a, b)", "i": "floor_div_i(a, b)"},
    "copysign": {"f": "select(abs(a), -abs(a), (bitcast<u32>(b) >> 31u) == 1u)"},
    "fmax": {"f": "select(select(max(a, b), a, nan_f(b)), b, nan_f(a))", "i": "max(a, b)", "u": "max(a, b)"},
    "fmin": {"f": "select(select(min(a, b), a, nan_f(b)), b, nan_f(a))", "i": "min(a, b)", "u": "min(a, b)"},
    "hypot": {"f": "hypot_f(a, b)"},
    "logaddexp": {"f": "logaddexp_f(a, b)"},
    "logaddexp2": {"f": "logaddexp2_f(a, b)"},
    "xlogy": {"f": "select(a * log(b), 0.0, a == 0.0 && !nan_f(b))"},
    "heaviside": {"f": "select(select(0.0, 1.0, a > 0.0), b, a == 0.0)",
                  "i": "select(select(0, 1, a > 0), b, a == 0)", "u": "select(a, b, a == 0u)"},
    "gcd": {"i": "gcd_i(a, b)"},
    "lcm": {"i": "select(abs(a / gcd_i(a, b) * b), 0, a == 0 || b == 0)"},
    # d gelu(a) * b: the fused gradient of the exact gelu
    "gelu_backward": {"f": "b * (0.5 * (1.0 + erf_f(a * 0.7071067811865476)) + a * exp(-0.5 * a * a) * 0.3989422804014327)"},
    # the fused gradients of tanh and sigmoid from the output b, as torch's tanh_backward / sigmoid_backward (a = grad)
    "tanh_backward": {"f": "a * (1.0 - b * b)"},
    "sigmoid_backward": {"f": "a * (1.0 - b) * b"},
    # relu's gradient a where the output b > 0 or NaN (torch's threshold_backward: a select, so an inf or NaN
    # gradient of a zeroed element is 0); one kernel where masked_fill took a comparison and a select
    "relu_backward": {"f": "select(a, 0.0, b <= 0.0)"},
    # d silu(a) * b, sig = 1 / (1 + exp(-a)): b * sig * (1 + a * (1 - sig))
    "silu_backward": {"f": "b / (1.0 + exp(-a)) * (1.0 + a * (1.0 - 1.0 / (1.0 + exp(-a))))"},
    # the fused gradients (a = grad, b = input) of mish, hardswish, hardsigmoid and log_sigmoid, torch's selects:
    # hardswish's is 0 from -3 down, a from 3 up; hardsigmoid's a / 6 strictly inside (-3, 3)
    "mish_backward": {"f": "a * (tanh(select(log1p_f(exp(b)), b, b > 20.0)) + b / (1.0 + exp(-b)) * "
                           "(1.0 - tanh(select(log1p_f(exp(b)), b, b > 20.0)) * tanh(select(log1p_f(exp(b)), b, "
                           "b > 20.0))))"},
    "hardswish_backward": {"f": "select(select(a * (b / 3.0 + 0.5), a, b >= 3.0), 0.0, b <= -3.0)"},
    "hardsigmoid_backward": {"f": "select(0.0, a * 0.16666666666666666, b > -3.0 && b < 3.0)"},
    "log_sigmoid_backward": {"f": "a * select(exp(-abs(b)) / (1.0 + exp(-abs(b))), "
                                  "1.0 - exp(-abs(b)) / (1.0 + exp(-abs(b))), b < 0.0)"},
}
BOOL_RESULT = set(_CMP)
# Float elementwise primitives with number parameters (s0, s1, ... in the order given: the primitive's keyword
# params), over one input a or a gradient a and an input b: the activations that take a slope or bounds and their
# fused gradients (torch's leaky_relu_backward, hardtanh_backward). NaN takes no branch of a comparison, so it
# passes through the forward selects (torch's clamp keeps NaN).
PARAMETRIZED: dict[str, tuple[str, tuple[str, ...]]] = {
    "leaky_relu": ("select(a * s0, a, a > 0.0)", ("negative_slope",)),
    "leaky_relu_backward": ("select(a * s0, a, b > 0.0)", ("negative_slope",)),
    "hardtanh": ("select(select(a, s0, a < s0), s1, a > s1)", ("min_val", "max_val")),
    "hardtanh_backward": ("select(0.0, a, b > s0 && b < s1)", ("min_val", "max_val")),  # NaN: 0, as torch's vectors
    # elu (selu, celu: its parameters) and softplus, with their fused gradients (a = grad, b = input)
    "elu": ("select(a * s1, expm1_f(a * s2) * (s0 * s1), a <= 0.0)", ("alpha", "scale", "input_scale")),
    "celu": ("select(a * s1, expm1_f(a * s2) * (s0 * s1), a <= 0.0)", ("alpha", "scale", "input_scale")),
    "elu_backward": ("select(a * s2 * (s0 * s1) * exp(b * s2), a * s1, b > 0.0)", ("alpha", "scale", "input_scale")),
    "softplus": ("select(log1p_f(exp(a * s0)) / s0, a, a * s0 > s1)", ("beta", "threshold")),
    "softplus_backward": ("select(a * exp(b * s0) / (exp(b * s0) + 1.0), a, b * s0 > s1)", ("beta", "threshold")),
}
# The pointwise losses (ops/loss.py, NOTE [fused pointwise losses]): name -> (the elementwise loss of input a and
# target b with the params s0, s1, ...; its gradient in a of the output gradient a, input b and target c with s0 =
# the reduction's norm and the params from s1; the params' names). Reduced by the sum kernel; torch's selects.
LOSSES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "mse_loss": ("(a - b) * (a - b)", "s0 * (b - c) * a", ()),
    "smooth_l1_loss": ("select(abs(a - b) - 0.5 * s0, 0.5 * abs(a - b) * abs(a - b) / s0, abs(a - b) < s0)",
                       "select(select(s0 * (b - c) * a / s1, s0 * a, b - c >= s1), -(s0 * a), b - c <= -s1)",
                       ("beta",)),
    "huber_loss": ("select(s0 * (abs(a - b) - 0.5 * s0), 0.5 * abs(a - b) * abs(a - b), abs(a - b) < s0)",
                   "select(select(s0 * (b - c) * a, s0 * a * s1, b - c >= s1), -(s0 * a * s1), b - c <= -s1)",
                   ("delta",)),
    # (1 - t) x - log_sigmoid(x); its gradient (sigmoid(x) - t) g (torch's, without weight and pos_weight)
    "binary_cross_entropy_with_logits": ("(1.0 - b) * a - (select(min(a, 0.0), a, nan_f(a)) - log1p_f(exp(-abs(a))))",
                                         "(1.0 / (1.0 + exp(-b)) - c) * a * s0", ()),
    # probabilities: the logs clamped at -100; the gradient g (x - t) / max((1 - x) x, 1e-12) (torch's, no weight)
    "binary_cross_entropy": ("(b - 1.0) * max(log1p_f(-a), -100.0) - b * max(log(a), -100.0)",
                             "a * (b - c) / max((1.0 - b) * b, 1e-12) * s0", ()),
}
# complex64 (kind "v": vec2<f32>, x the real part, y the imaginary part): the ops typical complex code needs; every
# other op finds no "v" entry and is refused with a coded error naming it and the dtype
UNARY_COMPLEX = {"neg": "-a", "conj": "vec2<f32>(a.x, -a.y)", "copy": "a", "exp": "c_exp(a)", "log": "c_log(a)",
                 "reciprocal": "c_div(vec2<f32>(1.0, 0.0), a)", "sqrt": "c_sqrt(a)", "conj_physical": "vec2<f32>(a.x, -a.y)",
                 "sgn": "select(a / c_abs(a), vec2<f32>(0.0), all(a == vec2<f32>(0.0)))"}
# complex -> float32
UNARY_COMPLEX_REAL = {"abs": "c_abs(a)", "angle": "atan2(a.y, a.x)"}
BINARY_COMPLEX = {"add": "a + b", "sub": "a - b", "mul": "c_mul(a, b)", "true_divide": "c_div(a, b)",
                  "eq": "select(0u, 1u, all(a == b))", "ne": "select(0u, 1u, any(a != b))"}
PREDICATE_COMPLEX = {"isnan": "select(0u, 1u, nan_f(a.x) || nan_f(a.y))",
                     "isinf": f"select(0u, 1u, abs(a.x) == {_INF} || abs(a.y) == {_INF})",
                     "isfinite": f"select(0u, 1u, !(nan_f(a.x) || nan_f(a.y) || abs(a.x) == {_INF} || abs(a.y) == {_INF}))"}
for _n, _e in UNARY_COMPLEX.items():
    if _n in UNARY:  # (conj_physical's real kernel is elsewhere: complex_kernels installs its complex one)
        UNARY[_n]["v"] = _e
for _n, _e in BINARY_COMPLEX.items():
    BINARY[_n]["v"] = _e
for _n, _e in PREDICATE_COMPLEX.items():
    if _n in PREDICATE:
        PREDICATE[_n]["v"] = _e
# int64 is stored as i32 (wrapping): where the i32 result of these is not the exact one
I32_OVERFLOW = {
    "add": "((a ^ r) & (b ^ r)) < 0",
    "sub": "((a ^ b) & (a ^ r)) < 0",
    "mul": "a != 0 && ((a == -1 && b == (-2147483647 - 1)) || r / a != b)",
    "neg": "a == (-2147483647 - 1)",
    "abs": "a == (-2147483647 - 1)",
    "floor_divide": "a == (-2147483647 - 1) && b == -1",
    "div_floor": "a == (-2147483647 - 1) && b == -1",
    # a float32 shadow of the exact value: a wrap moves r by a multiple of 2^32, the shadow's error is far below 2^31
    "pow": "abs(pow_f(f32(a), f32(b)) - f32(r)) >= 2147483648.0",
    "lcm": "abs(abs(f32(a / max(gcd_i(a, b), 1)) * f32(b)) - f32(r)) >= 2147483648.0",
}

# WGSL helpers shared by the elementwise shaders (unused ones cost nothing).
HELPERS = """
fn nan_f(a: f32) -> bool { return (bitcast<u32>(a) & 0x7fffffffu) > 0x7f800000u; }  // a != a may be folded
fn c_mul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> { return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
fn c_abs(a: vec2<f32>) -> f32 {
  // scaled, so that squares of large parts do not overflow (torch's abs is hypot)
  let m = max(abs(a.x), abs(a.y));
  if (m == 0.0 || m == bitcast<f32>(0x7f800000u) || m != m) { return select(m, a.x + a.y, nan_f(a.x) || nan_f(a.y)); }
  let s = a / m;
  return m * sqrt(dot(s, s));
}
fn c_div(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  // Smith's algorithm (as NumPy/torch): divide by the larger part of b first, no overflow of |b|^2
  if (abs(b.x) >= abs(b.y)) {
    if (b.x == 0.0 && b.y == 0.0) { return vec2<f32>(a.x / abs(b.x), a.y / abs(b.y)); }
    let r = b.y / b.x;
    let d = b.x + b.y * r;
    return vec2<f32>((a.x + a.y * r) / d, (a.y - a.x * r) / d);
  }
  let r = b.x / b.y;
  let d = b.x * r + b.y;
  return vec2<f32>((a.x * r + a.y) / d, (a.y * r - a.x) / d);
}
fn c_exp(a: vec2<f32>) -> vec2<f32> {
  if (a.y == 0.0) { return vec2<f32>(exp(a.x), a.y); }
  let e = exp(a.x);
  return vec2<f32>(e * cos(a.y), e * sin(a.y));
}
fn c_log(a: vec2<f32>) -> vec2<f32> { return vec2<f32>(log(c_abs(a)), atan2(a.y, a.x)); }
fn c_sqrt(a: vec2<f32>) -> vec2<f32> {
  // the principal root, as csqrt: t = sqrt((|a| + |x|) / 2), the other part y / (2t)
  if (a.x == 0.0 && a.y == 0.0) { return vec2<f32>(0.0, a.y); }
  let t = sqrt(0.5 * (c_abs(a) + abs(a.x)));
  if (a.x >= 0.0) { return vec2<f32>(t, a.y / (2.0 * t)); }
  return vec2<f32>(abs(a.y) / (2.0 * t), select(t, -t, a.y < 0.0 || (a.y == 0.0 && (bitcast<u32>(a.y) >> 31u) == 1u)));
}
fn sign_f(a: f32) -> f32 { return select(sign(a), a, a != a); }
fn expm1_f(a: f32) -> f32 {
  if (abs(a) < 1e-2) { return a * (1.0 + a * (0.5 + a * (0.16666667 + a * 0.041666668))); }
  return exp(a) - 1.0;
}
fn log1p_f(a: f32) -> f32 {
  // near 0: 2 atanh(s) = 2 (s + s^3/3 + ...) with s = a / (2 + a), terms of one sign; log(1 + a) there would
  // need a correctly rounded log near 1, which lavapipe's is not (log1p(1e-7) came out 19% high)
  if (abs(a) < 0.5) {
    let t = a / (2.0 + a);
    let t2 = t * t;
    return 2.0 * t * (1.0 + t2 * (0.33333333 + t2 * (0.2 + t2 * (0.14285714 + t2 * (0.11111111 + t2 * (0.09090909 + t2 * 0.07692308))))));
  }
  return log(1.0 + a);
}
fn erf_f(x: f32) -> f32 {
  // Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7)
  let z = abs(x);
  let t = 1.0 / (1.0 + 0.3275911 * z);
  let y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t
    * exp(-z * z);
  return select(y, -y, x < 0.0);
}
fn erfc_f(x: f32) -> f32 {
  // the same approximation as erf_f, kept as a product with exp(-x^2) so that it stays relative for large x
  let z = abs(x);
  let t = 1.0 / (1.0 + 0.3275911 * z);
  let y = (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t
    * exp(-z * z);
  return select(y, 2.0 - y, x < 0.0);
}
fn hypot_f(a: f32, b: f32) -> f32 {
  let m = max(abs(a), abs(b));
  if (abs(a) == bitcast<f32>(0x7f800000u) || abs(b) == bitcast<f32>(0x7f800000u)) { return bitcast<f32>(0x7f800000u); }
  if (nan_f(a) || nan_f(b)) { return a + b; }
  if (m == 0.0) { return m; }
  let x = a / m; let y = b / m;
  return m * sqrt(x * x + y * y);
}
fn logaddexp_f(a: f32, b: f32) -> f32 {
  if (a == b) { return a + 0.6931471805599453; }  // also both infinite
  let m = max(a, b);
  return m + log1p_f(exp(-abs(a - b)));
}
fn logaddexp2_f(a: f32, b: f32) -> f32 {
  if (a == b) { return a + 1.0; }
  let m = max(a, b);
  return m + log1p_f(exp2(-abs(a - b))) * 1.4426950408889634;
}
fn gcd_i(a0: i32, b0: i32) -> i32 {
  var a = abs(a0); var b = abs(b0);
  loop { if (b == 0) { break; } let t = a % b; a = b; b = t; }
  return a;
}
fn fmod_f(a: f32, b: f32) -> f32 { return a - b * trunc(a / b); }
fn rem_f(a: f32, b: f32) -> f32 {
  var m = fmod_f(a, b);
  if (m != 0.0 && ((b < 0.0) != (m < 0.0))) { m = m + b; }
  return m;
}
fn floor_div_f(a: f32, b: f32) -> f32 {
  if (b == 0.0) { return a / b; }
  let m = fmod_f(a, b);
  var d = (a - m) / b;
  if (m != 0.0 && ((b < 0.0) != (m < 0.0))) { d = d - 1.0; }
  var f = floor(d);
  if (d - f > 0.5) { f = f + 1.0; }
  return f;
}
fn fmod_i(a: i32, b: i32) -> i32 { if (b == 0) { return 0; } return a - b * (a / b); }
fn rem_i(a: i32, b: i32) -> i32 {
  var m = fmod_i(a, b);
  if (m != 0 && ((b < 0) != (m < 0))) { m = m + b; }
  return m;
}
fn floor_div_i(a: i32, b: i32) -> i32 {
  if (b == 0) { return 0; }
  var q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) { q = q - 1; }
  return q;
}
fn pow_f(a: f32, b: f32) -> f32 {
  if (b == 0.0) { return 1.0; }
  if (a < 0.0) {
    if (b != floor(b)) { return bitcast<f32>(0x7fc00000u); }
    let r = pow(-a, b);
    if (b * 0.5 != floor(b * 0.5)) { return -r; }
    return r;
  }
  if (a == 0.0) { return select(bitcast<f32>(0x7f800000u), 0.0, b > 0.0); }
  return pow(a, b);
}
fn pow_i(a: i32, b: i32) -> i32 {
  if (b < 0) {
    if (a == 1) { return 1; }
    if (a == -1) { return select(-1, 1, b % 2 == 0); }
    return 0;
  }
  var r = 1; var x = a; var e = b;
  loop { if (e == 0) { break; } if ((e & 1) == 1) { r = r * x; } x = x * x; e = e >> 1; }
  return r;
}
"""

WGSL_CT = {"f": "f32", "i": "i32", "u": "u32", "v": "vec2<f32>"}


def kind_of(ct: str) -> str:
    return ct[0]


def load_expr(st: str, raw: str) -> str:
    """Storage value -> compute value."""
    return f"f32({raw})" if st == "f16" else raw


def store_expr(st: str, v: str) -> str:
    return f"f16({v})" if st == "f16" else v


def cast_expr(src: str, dst: str, v: str) -> str:
    """Compute kind ``src`` -> ``dst`` (torch's casts: float -> int truncates; nonzero -> True)."""
    if src == dst:
        return v
    if src == "v":  # complex -> real: the real part (torch warns that the imaginary part is discarded)
        return f"select(0u, 1u, any({v} != vec2<f32>(0.0)))" if dst == "u" else cast_expr("f", dst, f"{v}.x")
    if dst == "v":
        return f"vec2<f32>({cast_expr(src, 'f', v)}, 0.0)"
    if dst == "u":
        zero = {"f": "0.0", "i": "0"}[src]
        return f"select(0u, 1u, {v} != {zero})"
    return f"{WGSL_CT[dst]}({v})"


def scalar_expr(kind: str, word: str) -> str:
    return f"bitcast<{WGSL_CT[kind]}>({word})" if kind != "u" else word


def _enable(types: tuple[str, ...]) -> str:
    return "enable f16;\n" if "f16" in types else ""


# -- elementwise ---------------------------------------------------------------------------------------
def _strided_off(at: int) -> str:
    """WGSL ``off(j)``: the storage offset of element ``j`` (row-major) of a strided view described in the
    meta array from ``prm[at]`` on as ``[nd, shape[nd], offset, strides[nd]]``."""
    return f"""fn off(j: u32) -> u32 {{
  let nd = prm[{at}];
  var rem = j;
  var o = prm[{at + 1}u + nd];
  for (var d = i32(nd) - 1; d >= 0; d = d - 1) {{
    let s = prm[{at + 1}u + u32(d)];
    o = o + (rem % s) * prm[{at + 2}u + nd + u32(d)];
    rem = rem / s;
  }}
  return o;
}}"""


OFFSET_FN = """
fn off(i: u32, base: u32) -> u32 {
  let nd = prm[1];
  var rem = i;
  var o = prm[base];
  for (var d = i32(nd) - 1; d >= 0; d = d - 1) {
    let s = prm[2u + u32(d)];
    o = o + (rem % s) * prm[base + 1u + u32(d)];
    rem = rem / s;
  }
  return o;
}
"""


@functools.cache
def elementwise(expr: str, out_st: str, out_mode: str, operands: tuple[tuple[str, str, str], ...],
                nscalars: int = 0, check: str = "", helpers: str = "") -> str:
    """``out = expr(a, b, c)`` over a broadcast index space (``helpers``: WGSL functions the expression calls
    beyond :data:`HELPERS`, e.g. the special functions of :mod:`.special_kernels`).

    operands: per input (name, storage type, mode) with mode 'c' (contiguous: offset + i), 's'
    (strided: offset + sum(idx*stride)), 'k' (a scalar in meta) or 'o' (the output's own element, read before it
    is written: an in-place op's ``self``, which WebGPU cannot bind a second time for reading). out_mode 'c' or
    's'. An 'o' operand has no binding and no meta.
    meta: [n, nd, shape[nd], out: off, strides[nd], then per buffer operand: off, strides[nd],
    then the scalar operands' words, then ``nscalars`` extra f32 scalars s0, s1, ...]. With ``check`` (a
    WGSL condition on the operands and the result ``r``), an element where it holds records the check id (the
    last meta word) in the runtime's flag buffer (the binding after the operands), as ``range_check_kernel``.
    """
    types = (out_st, *(t for _, t, _ in operands))
    lines = [_enable(types), "@group(0) @binding(0) var<storage, read> prm: array<u32>;",
             f"@group(0) @binding(1) var<storage, read_write> out: array<{out_st}>;"]
    binding = 2
    for name, st, mode in operands:
        if mode not in "ko":
            lines.append(f"@group(0) @binding({binding}) var<storage, read> in_{name}: array<{st}>;")
            binding += 1
    if check:
        lines.append(f"@group(0) @binding({binding}) var<storage, read_write> flag: array<atomic<u32>, 4>;")
    lines += [HELPERS, helpers, OFFSET_FN]
    body = ["  let nd = prm[1];", "  let ob = 2u + nd;"]
    slot = 1
    nbuf = sum(1 for _, _, m in operands if m not in "ko")
    kidx = 0
    oidx = "prm[ob] + i" if out_mode == "c" else "off(i, ob)"
    if any(m == "o" for _, _, m in operands):
        body.append(f"  let oi = {oidx};")
        oidx = "oi"
    for name, st, mode in operands:
        ct = "f32" if st == "f16" else st
        if mode == "o":
            body.append(f"  let {name} = {load_expr(st, 'out[oi]')};")
            continue
        if mode == "k" and st == "vec2<f32>":  # a complex scalar: two words
            at = f"ob + {nbuf + 1}u * (nd + 1u) + {kidx}u"
            body.append(f"  let {name} = vec2<f32>(bitcast<f32>(prm[{at}]), bitcast<f32>(prm[{at} + 1u]));")
            kidx += 2
            continue
        if mode == "k":
            body.append(f"  let {name} = {scalar_expr(ct[0], f'prm[ob + {nbuf + 1}u * (nd + 1u) + {kidx}u]')};")
            kidx += 1
            continue
        base = f"ob + {slot}u * (nd + 1u)"
        idx = f"prm[{base}] + i" if mode == "c" else f"off(i, {base})"
        body.append(f"  let {name} = {load_expr(st, f'in_{name}[{idx}]')};")
        slot += 1
    for j in range(nscalars):
        body.append(f"  let s{j} = bitcast<f32>(prm[ob + {nbuf + 1}u * (nd + 1u) + {kidx + j}u]);")
    body.append(f"  let r = {expr};")
    body.append(f"  out[{oidx}] = {store_expr(out_st, 'r')};")
    if check:
        cid = f"prm[ob + {nbuf + 1}u * (nd + 1u) + {kidx + nscalars}u]"
        body.append(f"  if ({check}) {{ atomicCompareExchangeWeak(&flag[0], 0u, {cid}); }}")
    lines.append(f"""
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let i = gid.x + gid.y * nwg.x * {WG}u;
  if (i >= prm[0]) {{ return; }}
{chr(10).join(body)}
}}""")
    return "\n".join(lines)


# -- reductions ----------------------------------------------------------------------------------------
RWG = 64
# NaN tested by its bits: a compiler may fold ``x != x`` to false (lavapipe did: ``amax`` skipped NaNs)
_NAN_XY = "(bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u || (bitcast<u32>(y) & 0x7fffffffu) > 0x7f800000u"
# op -> (identity per kind, combine per kind)
REDUCE: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    "sum": ({"f": "0.0", "i": "0", "u": "0u", "v": "vec2<f32>(0.0)"},
            {"f": "x + y", "i": "x + y", "u": "x + y", "v": "x + y"}),
    "prod": ({"f": "1.0", "i": "1", "u": "1u", "v": "vec2<f32>(1.0, 0.0)"},
             {"f": "x * y", "i": "x * y", "u": "x * y", "v": "vec2<f32>(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x)"}),
    "amax": ({"f": "bitcast<f32>(0xff800000u)", "i": "-2147483647 - 1", "u": "0u"},
             {"f": f"select(max(x, y), x + y, {_NAN_XY})", "i": "max(x, y)", "u": "max(x, y)"}),
    "amin": ({"f": "bitcast<f32>(0x7f800000u)", "i": "2147483647", "u": "1u"},
             {"f": f"select(min(x, y), x + y, {_NAN_XY})", "i": "min(x, y)", "u": "min(x, y)"}),
    "all": ({"u": "1u"}, {"u": "x & y"}),
    "any": ({"u": "0u"}, {"u": "x | y"}),
}


def workgroup_reductions(size: int) -> str:
    """WGSL ``wsum`` and ``wmax``: a tree over the workgroup array ``red`` of ``size`` invocations (a power of
    two), the result read by every invocation. Every row kernel that reduces across its workgroup uses these."""
    return "\n".join(
        f"fn w{name}(v: f32, lid: u32) -> f32 {{\n  red[lid] = v;\n  workgroupBarrier();\n"
        f"  for (var s = {size // 2}u; s > 0u; s = s >> 1u) {{\n    if (lid < s) {{ red[lid] = {combine}; }}\n"
        f"    workgroupBarrier();\n  }}\n  let r = red[0];\n  workgroupBarrier();\n  return r;\n}}"
        for name, combine in (("sum", "red[lid] + red[lid + s]"), ("max", "max(red[lid], red[lid + s])")))


@functools.cache
def reduce_kernel(op: str, in_st: str, out_st: str, pairs: str = "") -> str:
    """One workgroup per (output, chunk): threads stride over the chunk, then a tree in shared memory.

    meta: [n_work, nchunks, inner, chunk_len, nd, shape[nd], off, strides[nd]]: the input is a strided
    view whose last dims are the reduced ones; output element w = o * nchunks + chunk.
    For all/any the input is mapped to bool first. argmax/argmin keep (value, index) pairs.

    ``pairs`` splits argmax/argmin over chunks of a long reduced dim (one workgroup's loop over a whole row of
    millions would pass lavapipe's loop bound, and leave the rest of a GPU idle): with ``"out"`` each chunk writes
    its best (value's bits, index + ``base``) as two i32 words (``base``, the word after the strides, numbers the
    chunk's elements in a larger row); with ``"in"`` the input is such pairs (its view steps over the value words,
    ``in_st`` still the values' type), the best chunk is picked (a tie to the earlier chunk, which holds the
    earlier index) and its index word written.
    """
    in_ct = "f" if in_st in ("f16", "f32") else in_st[0]
    arg = op in ("argmax", "argmin")
    k = "u" if op in ("all", "any") else in_ct
    ct = WGSL_CT[k]
    load = load_expr(in_st, "inp[off(o * inner + j)]")
    if pairs == "in":
        load = f"bitcast<{ct}>(inp[off(o * inner + j)])"
    if op in ("all", "any"):
        load = cast_expr(in_ct, "u", load)
    bound = "i32" if pairs == "in" else in_st
    head = f"""{_enable((in_st, out_st))}
@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<{out_st}>;
@group(0) @binding(2) var<storage, read> inp: array<{bound}>;
var<workgroup> sh: array<{ct}, {RWG}>;
var<workgroup> shi: array<u32, {RWG}>;
{_strided_off(4)}"""
    if arg:
        better = ">" if op == "argmax" else "<"
        # NaN by its bits (a compiler may fold ``v != v`` to false: lavapipe did, and argmax skipped NaNs)
        vn, wn = ("(bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u", "(bitcast<u32>(w) & 0x7fffffffu) > 0x7f800000u") \
            if k == "f" else ("false", "false")
        comb = f"""fn better(v: {ct}, i: u32, w: {ct}, k: u32) -> bool {{
  let vn = {vn}; let wn = {wn};
  if (vn || wn) {{ return (vn && !wn) || (vn && wn && i < k); }}
  return v {better} w || (v == w && i < k);
}}"""
        result = "out[w] = i32(shi[0]);"
        if pairs == "out":
            result = "out[2u * w] = bitcast<i32>(sh[0]); out[2u * w + 1u] = i32(shi[0] + prm[6u + 2u * prm[4]]);"
        elif pairs == "in":
            result = "out[w] = inp[off(o * inner + shi[0]) + 1u];"
        body = f"""
  let start = (w % nchunks) * chunk;
  let stop = min(inner, start + chunk);
  var best: {ct} = {REDUCE["sum"][0][k]};
  var bi: u32 = 0u;
  var has = false;
  for (var j = start + lid.x; j < stop; j = j + {RWG}u) {{
    let v = {load};
    if (!has || better(v, j, best, bi)) {{ best = v; bi = j; has = true; }}
  }}
  sh[lid.x] = best; shi[lid.x] = select(4294967295u, bi, has);
  workgroupBarrier();
  for (var s = {RWG // 2}u; s > 0u; s = s >> 1u) {{
    if (lid.x < s) {{
      let k2 = shi[lid.x + s];
      if (k2 != 4294967295u && (shi[lid.x] == 4294967295u || better(sh[lid.x + s], k2, sh[lid.x], shi[lid.x]))) {{
        sh[lid.x] = sh[lid.x + s]; shi[lid.x] = k2;
      }}
    }}
    workgroupBarrier();
  }}
  if (lid.x == 0u) {{ {result} }}"""
    else:
        ident, combine = REDUCE[op]
        comb = f"fn comb(x: {ct}, y: {ct}) -> {ct} {{ return {combine[k]}; }}"
        body = f"""
  let c = w % nchunks;
  let start = c * chunk;
  let stop = min(inner, start + chunk);
  var acc: {ct} = {ident[k]};
  for (var j = start + lid.x; j < stop; j = j + {RWG}u) {{
    acc = comb(acc, {load});
  }}
  sh[lid.x] = acc;
  workgroupBarrier();
  for (var s = {RWG // 2}u; s > 0u; s = s >> 1u) {{
    if (lid.x < s) {{ sh[lid.x] = comb(sh[lid.x], sh[lid.x + s]); }}
    workgroupBarrier();
  }}
  if (lid.x == 0u) {{ out[w] = {store_expr(out_st, "sh[0]")}; }}"""
    return f"""{head}
{comb}
@compute @workgroup_size({RWG})
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {{
  let w = wid.x + wid.y * nwg.x;
  if (w >= prm[0]) {{ return; }}
  let nchunks = prm[1];
  let inner = prm[2];
  let chunk = prm[3];
  let o = w / nchunks;
{body}
}}"""


# -- matmul --------------------------------------------------------------------------------------------
# One tiled GEMM template serves every product: matmul (batched, broadcast, strided views), the convolution
# (forward, weight gradient and input gradient as implicit GEMMs) and the split-K partial sums.
#
# A workgroup of (BN/TN) x (BM/TM) threads computes a BM x BN output tile; each thread TM x TN outputs, held as
# vec4 accumulators. The K dimension is walked in steps of BK through two workgroup tiles (double buffering:
# the next step's tile is loaded while the current one is multiplied, so one barrier per step). The tiles are
# stored k-major as vec4 rows padded by one vec4 (so the transposing stores of a k-contiguous operand do not
# all hit one bank). A thread's rows (columns) are the vec4 groups ty, ty + BM/TM, ... (tx, tx + BN/TN, ...):
# neighbouring threads read neighbouring vec4s of a tile row (no bank conflicts in the inner loop), and the
# inner product is unrolled in the generated text.
#
# How each operand is read from global memory is the load mode, chosen on the host from the view's strides:
#   A (M x K): 'vk' vec4 along k (row-major A: every Linear's x), 'vm' vec4 along m (a transposed A, g.T of a
#              weight gradient), 'sk' / 'sm' scalars with k / m running fastest across threads (odd strides or
#              sizes, gathers); B (K x N): 'vn' vec4 along n, 'vk' vec4 along k (W.T of a Linear), 'sn' / 'sk'.
# So x @ W.T and g.T @ x read contiguous memory with no transposed copy. Vector modes need the operand's
# offset, strides and the vectorised size to be multiples of 4 (then no vec4 straddles a row or the end).
#
# meta: [M, N, K, nbd, a_off, b_off, a_rs, a_cs, b_rs, b_cs, n_tiles_n, n_tiles_m, n_batch, n_split, k_slice,
#        n_workgroups, bshape[nbd], a_bstr[nbd], b_bstr[nbd], (bias_off, bias_stride), (conv geometry)].
# Workgroups are numbered linearly over (n tile, m tile, batch, K slice) and folded into the three grid
# dimensions on the host, so no count runs into the 65,535 limit of one dimension.
MM_HEAD = 16


# The operands of an implicit-GEMM convolution, gathered from the tensors themselves (the column matrix is never
# made). Geometry from ``cb``: [nd, KK, S[nd], K[nd], O[nd], stride[nd], pad[nd], dil[nd], x_stride_c,
# x_stride_spatial[nd], ...]; S the input's spatial sizes, O the output's, KK = prod(K).
# 'fwd': B (Cg KK, M) = cols of x; ``boff`` holds x's offset for the (sample, group).
# 'wgrad': the reduction index runs over (sample, output position), the columns over (input channel, kernel
#   position); A is the output gradient, contiguous, read as (Og, N M) per group; geometry goes on with
#   [M, g_stride_n, x_stride_n].
# 'igrad': dX_g (Cg, S) = W_g^T (Cg, Og KK) @ Gcols (Og KK, S): A gathers W (Og, Cg, KK) per group, B reads the
#   output gradient at the output position whose window covers input position s at kernel offset k (zero when
#   none: s + pad - k dil is not a multiple of the stride, or out of range); geometry goes on with
#   [g_stride_o, g_stride_spatial[nd], w_stride_o]; ``aoff`` is W's offset for the group, ``boff`` g's for the
#   (sample, group).
def _conv_fns(st: str, conv: str, ksize: tuple[int, ...], stride: tuple[int, ...]) -> str:
    """The gathers of an implicit-GEMM convolution (see the comment above). The kernel's sizes (and, for the input
    gradient, its strides) are constants of the generated shader, so splitting a kernel offset into its per-dim
    parts is a multiply and shift rather than a division (integer division is slow on GPUs, on lavapipe most of
    all); one pipeline per kernel size."""
    nd, kk = len(ksize), math.prod(ksize)
    geo = """
  let pS = cb + 2u; let pK = pS + nd; let pO = pK + nd; let pT = pO + nd; let pP = pT + nd; let pD = pP + nd;
  let pX = pD + nd;"""
    geo = f"\n  let nd = {nd}u;" + geo

    def kdec(src: str) -> str:  # kd0..kd{nd-1} of the kernel offset ``src`` (the last dim fastest)
        out = [f"  var kr = {src};"]
        for d in reversed(range(nd)):
            out.append(f"  let kd{d} = kr % {ksize[d]}u; kr = kr / {ksize[d]}u;")
        return "\n".join(out)

    if conv == "wgrad":
        dims = []
        for d in reversed(range(nd)):
            dims.append(f"""  {{ let od = m % prm[pO + {d}u]; m = m / prm[pO + {d}u];
    let pos = i32(od * prm[pT + {d}u] + kd{d} * prm[pD + {d}u]) - i32(prm[pP + {d}u]);
    if (pos < 0 || pos >= i32(prm[pS + {d}u])) {{ return {st}(0); }}
    o = o + u32(pos) * prm[pX + {1 + d}u]; }}""")
        return f"""
fn conv_a(aoff: u32, row: u32, k: u32, cb: u32) -> {st} {{
  let nd = {nd}u; let pX = cb + 2u + 6u * nd; let Mx = prm[pX + 1u + nd];
  return A[aoff + row * Mx + (k / Mx) * prm[pX + 2u + nd] + k % Mx];
}}
fn conv_b(boff: u32, k: u32, col: u32, cb: u32) -> {st} {{{geo}
  let Mx = prm[pX + 1u + nd];
  var m = k % Mx;
  var o = boff + (k / Mx) * prm[pX + 3u + nd] + (col / {kk}u) * prm[pX];
{kdec(f"col % {kk}u")}
{chr(10).join(dims)}
  return B[o];
}}"""
    # 'fwd' and 'igrad' load B with the column fastest across threads, so a thread loads one column (one output
    # or input position) throughout: its spatial coordinates are worked out once (conv_col) into cpos
    if conv == "fwd":
        col_fn = """
  for (var d = i32(nd) - 1; d >= 0; d = d - 1) {
    let du = u32(d);
    cpos[d] = i32((m % prm[pO + du]) * prm[pT + du]) - i32(prm[pP + du]); m = m / prm[pO + du];
  }"""
        dims = [f"""  {{ let pos = cpos[{d}] + i32(kd{d} * prm[pD + {d}u]);
    if (pos < 0 || pos >= i32(prm[pS + {d}u])) {{ return {st}(0); }}
    o = o + u32(pos) * prm[pX + {1 + d}u]; }}""" for d in range(nd)]
        b_body = f"""
  var o = boff + (k / {kk}u) * prm[pX];
{kdec(f"k % {kk}u")}
{chr(10).join(dims)}
  return B[o];"""
        a_fn = ""
    else:
        col_fn = """
  for (var d = i32(nd) - 1; d >= 0; d = d - 1) {
    let du = u32(d);
    cpos[d] = i32(m % prm[pS + du] + prm[pP + du]); m = m / prm[pS + du];
  }"""
        dims = []
        for d in range(nd):
            step = "" if stride[d] == 1 else f"""
    if (od % {stride[d]}u != 0u) {{ return {st}(0); }}
    od = od / {stride[d]}u;"""
            dims.append(f"""  {{ let t = cpos[{d}] - i32(kd{d} * prm[pD + {d}u]);
    if (t < 0) {{ return {st}(0); }}
    var od = u32(t);{step}
    if (od >= prm[pO + {d}u]) {{ return {st}(0); }}
    o = o + od * prm[pG + {1 + d}u]; }}""")
        b_body = f"""
  let pG = pX + 1u + nd;
  var o = boff + (k / {kk}u) * prm[pG];
{kdec(f"k % {kk}u")}
{chr(10).join(dims)}
  return B[o];"""
        a_fn = f"""
fn conv_a(aoff: u32, row: u32, k: u32, cb: u32) -> {st} {{
  let pW = cb + {4 + 8 * nd}u;  // w_stride_o, after g_stride_spatial
  return A[aoff + (k / {kk}u) * prm[pW] + row * {kk}u + k % {kk}u];
}}"""
    return a_fn + f"""
var<private> cpos: array<i32, 3>;
fn conv_col(col: u32, cb: u32) {{{geo}
  var m = col;{col_fn}
}}
fn conv_b(boff: u32, k: u32, col: u32, cb: u32) -> {st} {{{geo}{b_body}
}}"""


def _tile_load(op: str, mode: str, rows: int, bk: int, nt: int, pad_row: int, get: str) -> str:
    """WGSL that stages one (rows x bk) step of operand ``op`` ('A': rows are m; 'B': rows are n) into the
    workgroup tile ``{op}s`` at vec4 offset ``buf``, for the K step starting at ``kk``. ``get(r, k)`` is the
    scalar read of element (row r, k) for the scalar modes."""
    lim, base = ("M", "row0") if op == "A" else ("N", "col0")
    vec = mode[0] == "v"
    n = rows * bk // (4 if vec else 1)
    assert n % nt == 0, (rows, bk, nt)
    along_k = mode[1] == "k"
    out = []
    for li in range(n // nt):
        e = f"(tid + {li * nt}u)"
        if not vec:
            if along_k:
                idx = f"let k_ = {e} % {bk}u; let r_ = {e} / {bk}u;"
            else:
                idx = f"let r_ = {e} % {rows}u; let k_ = {e} / {rows}u;"
            out.append(f"""    {{ {idx}
      var v_ = {op}z;
      if ({base} + r_ < {lim} && kk + k_ < kend) {{ v_ = {get.format(r=f"{base} + r_", k="kk + k_")}; }}
      {op}s[buf + k_ * {pad_row}u + r_ / 4u][r_ % 4u] = v_; }}""")
        elif along_k:  # vec4 along k, spread over four tile rows
            rs = "a_rs" if op == "A" else "b_cs"
            out.append(f"""    {{ let k_ = ({e} % {bk // 4}u) * 4u; let r_ = {e} / {bk // 4}u;
      var v_ = vec4<{op}t>({op}z);
      if ({base} + r_ < {lim} && kk + k_ < kend) {{ v_ = {op}[({op.lower()}off + ({base} + r_) * {rs} + kk + k_) / 4u]; }}
      let c_ = buf + k_ * {pad_row}u + r_ / 4u; let j_ = r_ % 4u;
      {op}s[c_][j_] = v_.x; {op}s[c_ + {pad_row}u][j_] = v_.y; {op}s[c_ + {2 * pad_row}u][j_] = v_.z; {op}s[c_ + {3 * pad_row}u][j_] = v_.w; }}""")
        else:  # vec4 along the rows: one tile vec4
            ks = "a_cs" if op == "A" else "b_rs"
            out.append(f"""    {{ let r_ = ({e} % {rows // 4}u) * 4u; let k_ = {e} / {rows // 4}u;
      var v_ = vec4<{op}t>({op}z);
      if ({base} + r_ < {lim} && kk + k_ < kend) {{ v_ = {op}[({op.lower()}off + (kk + k_) * {ks} + {base} + r_) / 4u]; }}
      {op}s[buf + k_ * {pad_row}u + r_ / 4u] = v_; }}""")
    return "\n".join(out)


def _epilogue_fn(st: str, ct: str, bias: bool, act: str, bias_at: str) -> str:
    """fn epi(v, col): the bias of the column, in the compute type; with ``act`` (a unary kernel's name), fn
    act_fn(a): its expression (:data:`UNARY`), the same the activation's own kernel computes."""
    add = f"\n  x = x + {load_expr(st, f'Bias[prm[{bias_at}] + col * prm[{bias_at} + 1u]]')};" if bias else ""
    act_fn = f"""{HELPERS}
fn act_fn(a: {ct}) -> {ct} {{ return {UNARY[act][ct[0]]}; }}""" if act else ""
    return f"""{act_fn}
fn epi(v: {ct}, col: u32) -> {ct} {{
  var x = v;{add}
  return x;
}}"""


def _epilogue_store(st: str, act: str, dual: bool, at: str, v: str, col: str) -> str:
    """The statements storing the epilogue of ``v`` (column ``col``) at ``out[at]``: with ``act``, its activation
    of the stored value (float16 rounded first, as the activation's kernel reads the matmul's output) there, or,
    ``dual``, the value there and its activation at ``out2[at]`` (both outputs of an unfused pair in one pass)."""
    z = store_expr(st, f"epi({v}, {col})")
    if dual:
        y = store_expr(st, f"act_fn({load_expr(st, 'z_')})")
        return f"let z_ = {z}; out[{at}] = z_; out2[{at}] = {y};"
    return f"out[{at}] = {store_expr(st, f'act_fn({load_expr(st, z)})') if act else z};"


@functools.cache
def matmul_kernel(st: str, tiles: tuple[int, int, int, int, int], a_mode: str, b_mode: str, bias: bool = False,
                  act: str = "", conv: str = "", split: bool = False, ksize: tuple[int, ...] = (),
                  cstride: tuple[int, ...] = (), dual: bool = False) -> str:
    """The tiled GEMM (see the comment above). ``tiles``: (BM, BN, BK, TM, TN). With ``split``, each workgroup
    sums one K slice (the last coordinate of its number) into a partial-sum buffer of the compute type (``out``
    then has n_split * n_batch * M * N elements; :func:`matmul_split_reduce` adds them up and applies the epilogue);
    otherwise the epilogue (``bias``: a per-column vector at binding 4; ``act``: a unary kernel's name, see
    :func:`_epilogue_store`, with ``dual`` its result in ``out2``, the binding after the bias) is applied here.
    float16 stays float16 in global and workgroup memory (vec4<f16> loads, half the tile bytes) and is widened to
    f32 for the multiply-adds. ``ksize`` and ``cstride``: a convolution's kernel size and stride (constants of
    the shader, see :func:`_conv_fns`)."""
    bm, bn, bk, tm, tn = tiles
    wx, wy = bn // tn, bm // tm
    nt = wx * wy
    ct = "f32" if st in ("f16", "f32") else "i32"
    zero = "0.0" if ct == "f32" else "0"
    pa, pb = bm // 4 + 1, bn // 4 + 1  # padded tile rows, in vec4
    ta, tb = bk * pa, bk * pb  # one buffer of each tile, in vec4
    cb = f"{MM_HEAD}u + 3u * nbd{' + 2u' if bias else ''}"
    conv_fn = _conv_fns(st, conv, ksize, cstride) if conv else ""
    col_call = ""
    if conv in ("fwd", "igrad"):  # B's column is the same for all of a thread's loads (see _conv_fns)
        assert b_mode == "sn" and nt % bn == 0, (b_mode, nt, bn)
        col_call = f"\n  conv_col(col0 + tid % {bn}u, {cb});"
    aget = f"conv_a(aoff, {{r}}, {{k}}, {cb})" if conv in ("wgrad", "igrad") else "A[aoff + ({r}) * a_rs + ({k}) * a_cs]"
    bget = f"conv_b(boff, {{k}}, {{r}}, {cb})" if conv else "B[boff + ({k}) * b_rs + ({r}) * b_cs]"
    load = (_tile_load("A", a_mode, bm, bk, nt, pa, aget) + "\n" + _tile_load("B", b_mode, bn, bk, nt, pb, bget))
    # the unrolled inner product of one k: a thread's rows a{i}[r], its columns b{j}
    mi, nj = tm // 4, tn // 4
    fma = []
    for i in range(mi):
        fma.append(f"      let a{i} = vec4<{ct}>(As[ar + {i * wy}u + ty]);")
    for j in range(nj):
        fma.append(f"      let b{j} = vec4<{ct}>(Bs[br + {j * wx}u + tx]);")
    for i in range(mi):
        for r in range(4):
            for j in range(nj):
                c = (i * 4 + r) * nj + j
                fma.append(f"      acc[{c}] = acc[{c}] + a{i}.{'xyzw'[r]} * b{j};")
    inner = "\n".join(fma)
    store = []
    for i in range(mi):
        for r in range(4):
            for j in range(nj):
                c = (i * 4 + r) * nj + j
                row = f"row0 + {i * wy * 4 + r}u + ty * 4u"
                store.append(f"  {{ let row = {row}; let col = col0 + {j * wx * 4}u + tx * 4u;")
                store.append(f"    if (row < M) {{ let o = obase + row * N + col; let v = acc[{c}];")
                for q in range(4):
                    put = (f"out[o + {q}u] = v.{'xyzw'[q]};" if split else
                           _epilogue_store(st, act, dual, f"o + {q}u", f"v.{'xyzw'[q]}", f"col + {q}u"))
                    store.append(f"      if (col + {q}u < N) {{ {put} }}")
                store.append("  } }")
    binds = [f"@group(0) @binding(1) var<storage, read_write> out: array<{ct if split else st}>;"]
    for name, mode, b in (("A", a_mode, 2), ("B", b_mode, 3)):
        binds.append(f"@group(0) @binding({b}) var<storage, read> {name}: array<{f'vec4<{st}>' if mode[0] == 'v' else st}>;")
    if bias and not split:
        binds.append(f"@group(0) @binding(4) var<storage, read> Bias: array<{st}>;")
    if dual:
        binds.append(f"@group(0) @binding({5 if bias else 4}) var<storage, read_write> out2: array<{st}>;")
    epi = "" if split else _epilogue_fn(st, ct, bias, act, f"{MM_HEAD}u + 3u * prm[3]")
    return f"""{_enable((st,))}
@group(0) @binding(0) var<storage, read> prm: array<u32>;
{chr(10).join(binds)}
alias At = {st};
alias Bt = {st};
const Az = At(0);
const Bz = Bt(0);
var<workgroup> As: array<vec4<{st}>, {2 * ta}>;
var<workgroup> Bs: array<vec4<{st}>, {2 * tb}>;
{conv_fn}
{epi}
@compute @workgroup_size({wx}, {wy}, 1)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {{
  let M = prm[0]; let N = prm[1]; let K = prm[2]; let nbd = prm[3];
  var aoff = prm[4]; var boff = prm[5];
  let a_rs = prm[6]; let a_cs = prm[7]; let b_rs = prm[8]; let b_cs = prm[9];
  let w = wid.x + (wid.y + wid.z * nwg.y) * nwg.x;
  if (w >= prm[15]) {{ return; }}
  let tile_n = w % prm[10];
  var q = w / prm[10];
  let tile_m = q % prm[11];
  q = q / prm[11];
  let bi = q % prm[12];
  let slice = q / prm[12];
  var rem = bi;
  for (var d = i32(nbd) - 1; d >= 0; d = d - 1) {{
    let s = prm[{MM_HEAD}u + u32(d)];
    let c = rem % s;
    rem = rem / s;
    aoff = aoff + c * prm[{MM_HEAD}u + nbd + u32(d)];
    boff = boff + c * prm[{MM_HEAD}u + 2u * nbd + u32(d)];
  }}
  let row0 = tile_m * {bm}u; let col0 = tile_n * {bn}u;
  let tx = lid.x; let ty = lid.y;
  let tid = ty * {wx}u + tx;{col_call}
  let kbeg = slice * prm[14];
  let kend = min(K, kbeg + prm[14]);
  let nsteps = (kend - kbeg + {bk - 1}u) / {bk}u;
  var acc: array<vec4<{ct}>, {mi * 4 * nj}>;
  for (var t = 0u; t < {mi * 4 * nj}u; t = t + 1u) {{ acc[t] = vec4<{ct}>({zero}); }}
  {{ let buf = 0u; let kk = kbeg;
{load} }}
  workgroupBarrier();
  for (var step = 0u; step < nsteps; step = step + 1u) {{
    let cur = step & 1u;
    if (step + 1u < nsteps) {{
      let kk = kbeg + (step + 1u) * {bk}u;
      {{ let buf = (1u - cur) * {ta}u;
{_tile_load("A", a_mode, bm, bk, nt, pa, aget)} }}
      {{ let buf = (1u - cur) * {tb}u;
{_tile_load("B", b_mode, bn, bk, nt, pb, bget)} }}
    }}
    for (var k = 0u; k < {bk}u; k = k + 1u) {{
      let ar = cur * {ta}u + k * {pa}u; let br = cur * {tb}u + k * {pb}u;
{inner}
    }}
    workgroupBarrier();
  }}
  let obase = (slice * prm[12] + bi) * M * N;
{chr(10).join(store)}
}}"""


@functools.cache
def matmul_split_reduce(st: str, bias: bool, act: str) -> str:
    """The second pass of a split-K matmul: out[i] = epi(sum over the K slices of part[s * total + i]), summed in
    a fixed order (deterministic). meta: [total, n_split, N, (bias_off, bias_stride)]."""
    ct = "f32" if st in ("f16", "f32") else "i32"
    zero = "0.0" if ct == "f32" else "0"
    bind = f"@group(0) @binding(3) var<storage, read> Bias: array<{st}>;" if bias else ""
    return f"""{_enable((st,))}
@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<{st}>;
@group(0) @binding(2) var<storage, read> part: array<{ct}>;
{bind}
{_epilogue_fn(st, ct, bias, act, "3u")}
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let i = gid.x + gid.y * nwg.x * {WG}u;
  let total = prm[0];
  if (i >= total) {{ return; }}
  var v: {ct} = {zero};
  for (var s = 0u; s < prm[1]; s = s + 1u) {{ v = v + part[s * total + i]; }}
  {_epilogue_store(st, act, False, "i", "v", "i % prm[2]")}
}}"""


# -- indexing ------------------------------------------------------------------------------------------
@functools.cache
def take_kernel(st: str) -> str:
    """out[i] = src[offs[i]]: advanced indexing by element offsets. meta: [n, out start, offsets start, source
    window's first element, its length]: thread i reads ``offs[offsets start + i]``, writes ``out[out start + i]``
    when the offset lies in the bound window of the source (a large source takes one dispatch per window)."""
    return f"""{_enable((st,))}
@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<{st}>;
@group(0) @binding(2) var<storage, read> src: array<{st}>;
@group(0) @binding(3) var<storage, read> offs: array<u32>;
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let i = gid.x + gid.y * nwg.x * {WG}u;
  if (i >= prm[0]) {{ return; }}
  let o = offs[prm[2] + i] - prm[3];
  if (o >= prm[4]) {{ return; }}
  out[prm[1] + i] = src[o];
}}"""


def _atomic_add(st: str, target: str, v: str) -> str:
    """``target += v`` atomically (``target`` is ``array[index]``). WGSL has atomics of 32-bit integers only: a
    float32 element is swapped in by compare-exchange of its bits, and a float16 one by compare-exchange of the
    32-bit word holding it and its neighbour (the buffer bound as ``array<atomic<u32>>``): the pair unpacked, the
    half added to in float32 and rounded back (as torch's float16 ``+=``), the pair packed."""
    if st == "i32" or st == "u32":
        return f"atomicAdd(&{target}, {v});"
    if st == "f16":
        name, index = target[:target.index("[")], target[target.index("[") + 1:-1]
        return f"""let at = {index};
    loop {{
      let old = atomicLoad(&{name}[at >> 1u]);
      var pair = unpack2x16float(old);
      if ((at & 1u) == 1u) {{ pair.y = pair.y + {v}; }} else {{ pair.x = pair.x + {v}; }}
      let r = atomicCompareExchangeWeak(&{name}[at >> 1u], old, pack2x16float(pair));
      if (r.exchanged) {{ break; }}
    }}"""
    return f"""loop {{
      let old = atomicLoad(&{target});
      let r = atomicCompareExchangeWeak(&{target}, old, bitcast<u32>(bitcast<f32>(old) + {v}));
      if (r.exchanged) {{ break; }}
    }}"""


@functools.cache
def put_kernel(st: str, mode: str, accumulate: bool) -> str:
    """dst[offs[i]] = v[i] (or += with ``accumulate``, atomically); v strided ('s') or a scalar ('k').

    meta: [n, nd, shape[nd], v_off, v_strides[nd], scalar, first element, offsets start, dst window's first
    element, its length]: a dispatch writes elements ``first .. first + n`` (reading ``offs[offsets start + j]``),
    those whose offset lies in the bound window of dst (a large dst takes one dispatch per window)
    """
    ct = "f32" if st == "f16" else st
    atomic = accumulate
    dst_t = (f"atomic<{'u32' if st in ('f32', 'f16') else st}>") if atomic else st
    vbind = "" if mode == "k" else f"@group(0) @binding(3) var<storage, read> v: array<{st}>;"
    if mode == "k":
        val = scalar_expr(ct[0], "prm[2u + nd + 1u + nd]")
    else:
        val = load_expr(st, "v[off(i, 2u + nd)]")
    write = _atomic_add(st, "dst[o]", "val") if atomic else f"dst[o] = {store_expr(st, 'val')};"
    return f"""{_enable((st,))}
@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<{dst_t}>;
@group(0) @binding(2) var<storage, read> offs: array<u32>;
{vbind}
{OFFSET_FN}
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let j = gid.x + gid.y * nwg.x * {WG}u;
  if (j >= prm[0]) {{ return; }}
  let nd = prm[1];
  let K = 4u + 2u * nd;  // after the scalar
  let i = prm[K] + j;
  let o = offs[prm[K + 1u] + j] - prm[K + 2u];
  if (o >= prm[K + 3u]) {{ return; }}
  let val = {val};
  {write}
}}"""


@functools.cache
def gather_kernel(st: str, mode: str, op: str) -> str:
    """gather / scatter / scatter_add along ``axis`` with a device index tensor.

    Loops over the index's elements i (shape ishape): coordinates c; c[axis] is replaced by index[i].
    gather: out[i] = a[...]; scatter: dst[...] = src[i] (or a scalar); scatter_add: dst[...] += src[i].
    meta: [n, nd, ishape[nd], idx_off, idx_str[nd], t_off, t_str[nd], s_off, s_str[nd], axis, axis_size, scalar]
    (gather: the output's offset in place of the scalar; the output is contiguous from there), t's window length:
    a thread whose element of t lies outside the bound window skips it (``t_off`` is rebased to the window, so
    an element below it wraps past the length), and the op takes one dispatch per window of a large ``t``.
    """
    ct = "f32" if st == "f16" else st
    atomic = op == "scatter_add"
    dst_t = (f"atomic<{'u32' if st in ('f32', 'f16') else st}>") if atomic else st
    if op == "gather":
        binds = f"""@group(0) @binding(1) var<storage, read_write> out: array<{st}>;
@group(0) @binding(2) var<storage, read> idx: array<i32>;
@group(0) @binding(3) var<storage, read> t: array<{st}>;"""
    else:
        binds = f"""@group(0) @binding(1) var<storage, read_write> t: array<{dst_t}>;
@group(0) @binding(2) var<storage, read> idx: array<i32>;"""
        if mode != "k":
            binds += f"\n@group(0) @binding(3) var<storage, read> src: array<{st}>;"
    if op == "gather":
        act = "out[prm[ax + 2u] + i] = t[toff];"
    else:
        val = scalar_expr(ct[0], "prm[ax + 2u]") if mode == "k" else load_expr(st, "src[soff]")
        act = _atomic_add(st, "t[toff]", val) if atomic else f"t[toff] = {store_expr(st, val)};"
    return f"""{_enable((st,))}
@group(0) @binding(0) var<storage, read> prm: array<u32>;
{binds}
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let i = gid.x + gid.y * nwg.x * {WG}u;
  if (i >= prm[0]) {{ return; }}
  let nd = prm[1];
  let ib = 2u + nd; let tb = ib + 1u + nd; let sb = tb + 1u + nd; let ax = sb + 1u + nd;
  let axis = prm[ax];
  let size = i32(prm[ax + 1u]);
  var rem = i;
  var ioff = prm[ib]; var toff = prm[tb]; var soff = prm[sb];
  var coord_axis = 0u;
  for (var d = i32(nd) - 1; d >= 0; d = d - 1) {{
    let s = prm[2u + u32(d)];
    let c = rem % s;
    rem = rem / s;
    ioff = ioff + c * prm[ib + 1u + u32(d)];
    soff = soff + c * prm[sb + 1u + u32(d)];
    if (u32(d) != axis) {{ toff = toff + c * prm[tb + 1u + u32(d)]; }}
  }}
  var j = idx[ioff];
  if (j < 0) {{ j = j + size; }}
  toff = toff + u32(j) * prm[tb + 1u + axis];
  if (toff >= prm[ax + 3u]) {{ return; }}  // outside this dispatch's window of t (another dispatch's)
  {act}
}}"""


# -- scans ---------------------------------------------------------------------------------------------
SCAN = {"cumsum": "acc + v", "cumprod": "acc * v", "logcumsumexp": "logaddexp_f(acc, v)"}


# -- sorting -------------------------------------------------------------------------------------------
@functools.cache
def searchsorted_kernel(st: str, right: bool) -> str:
    """One thread per value: a binary search in its row of the contiguous sorted sequence, with torch's
    comparisons (left: go right unless ``s >= v``; right: unless ``s > v``; so a NaN sequence element counts as
    smaller, and a NaN value goes to the end). meta: [n values, L (row length), values per row (0: one row)]."""
    ct = "f32" if st in ("f16", "f32") else "i32"
    op = "<=" if right else "<"
    go_right = f"nan_f(s) || nan_f(v) || s {op} v" if ct == "f32" else f"s {op} v"
    return f"""{_enable((st,))}
@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<i32>;
@group(0) @binding(2) var<storage, read> seq: array<{st}>;
@group(0) @binding(3) var<storage, read> vals: array<{st}>;
{HELPERS}
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let i = gid.x + gid.y * nwg.x * {WG}u;
  if (i >= prm[0]) {{ return; }}
  let L = prm[1];
  var base = 0u;
  if (prm[2] != 0u) {{ base = (i / prm[2]) * L; }}
  let v: {ct} = {load_expr(st, "vals[i]")};
  var lo = 0u;
  var hi = L;
  loop {{
    if (lo >= hi) {{ break; }}
    let mid = (lo + hi) / 2u;
    let s: {ct} = {load_expr(st, "seq[base + mid]")};
    if ({go_right}) {{ lo = mid + 1u; }} else {{ hi = mid; }}
  }}
  out[i] = i32(lo);
}}"""


# -- device-side checks --------------------------------------------------------------------------------
@functools.cache
def range_check_kernel() -> str:
    """Records the first i32 element outside ``[lo, hi)`` (and not the skipped value, an ignore_index) of a strided
    view into the runtime's flag buffer: ``flag[0]`` = the check's id (the first check to fail keeps it),
    ``flag[1]`` = the value. meta: [n, nd, shape[nd], off, strides[nd], lo, hi, id, has skip, skip]."""
    return f"""@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> flag: array<atomic<u32>, 4>;
@group(0) @binding(2) var<storage, read> x: array<i32>;
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let i = gid.x + gid.y * nwg.x * {WG}u;
  if (i >= prm[0]) {{ return; }}
  let nd = prm[1];
  let ob = 2u + nd;
  var rem = i;
  var off = prm[ob];
  for (var d = i32(nd) - 1; d >= 0; d = d - 1) {{
    let s = prm[2u + u32(d)];
    off = off + (rem % s) * prm[ob + 1u + u32(d)];
    rem = rem / s;
  }}
  let v = x[off];
  let k = ob + 1u + nd;
  if (v >= bitcast<i32>(prm[k]) && v < bitcast<i32>(prm[k + 1u])) {{ return; }}
  if (prm[k + 3u] != 0u && v == bitcast<i32>(prm[k + 4u])) {{ return; }}
  if (atomicLoad(&flag[0]) != 0u) {{ return; }}
  loop {{
    let r = atomicCompareExchangeWeak(&flag[0], 0u, prm[k + 2u]);
    if (r.exchanged) {{ atomicStore(&flag[1], bitcast<u32>(v)); return; }}
    if (r.old_value != 0u) {{ return; }}
  }}
}}"""


# -- random numbers: Philox4x32-10, counter-based ----------------------------------------------------------
# Element i of a call draws the block Philox4x32-10(key = seed, counter = (i, 0, offset_lo, offset_hi)): a pure
# function of (seed, offset, i), so no state lives on the device, every thread works alone, and the host only
# advances ``offset`` per call (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011).
PHILOX = """
fn mulhi32(a: u32, b: u32) -> u32 {
  // the high word of the 64-bit product, from 16-bit halves (WGSL has no 64-bit integers); no partial sum
  // overflows: (lo*lo >> 16) + (hi*lo & 0xffff) + lo*hi <= 0xffffffff
  let al = a & 0xffffu; let ah = a >> 16u; let bl = b & 0xffffu; let bh = b >> 16u;
  let hl = ah * bl;
  let mid = ((al * bl) >> 16u) + (hl & 0xffffu) + al * bh;
  return ah * bh + (hl >> 16u) + (mid >> 16u);
}
fn philox(ctr: vec4<u32>, key: vec2<u32>) -> vec4<u32> {
  var c = ctr; var k = key;
  for (var r = 0u; r < 10u; r = r + 1u) {
    let lo0 = 0xD2511F53u * c.x; let hi0 = mulhi32(0xD2511F53u, c.x);
    let lo1 = 0xCD9E8D57u * c.z; let hi1 = mulhi32(0xCD9E8D57u, c.z);
    c = vec4<u32>(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    k = k + vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
  }
  return c;
}
"""

# dist -> the value r of one element from ``u`` (uniform [0, 1)), ``z`` (standard normal), ``a``, ``b`` (f32
# parameters) and ``p`` (a probability: the scalar ``a`` or the element of the probability tensor)
RANDOM = {
    "uniform": "a + (b - a) * u",
    "normal": "a + b * z",
    "bernoulli": "select(0.0, 1.0, u < p)",
    "dropout": "select(0.0, b, u >= a)",  # the scaled keep-mask: 1 / (1 - p) where kept (b), else 0
    "exponential": "-log(1.0 - u) / a",  # a = lambda; 1 - u is in (0, 1], so the log is finite
    # integers low + (a 32-bit word mod range), with ``a`` the low bound's bits and ``b`` the range (integer words):
    # computed in i32, not through f32 (exact for any int32 range; the modulo's bias is below range / 2^32)
    "randint": "bitcast<i32>(prm[5] + w.x % prm[6])",
}
INT_RANDOM = {"randint"}  # dists whose value is an i32 (the others are f32)


@functools.cache
def random_kernel(dist: str, st: str, p_st: str = "") -> str:
    """``out[i]`` (contiguous) drawn from :data:`RANDOM`. Uniforms keep the mantissa bits of the output type
    (24 for float32, 11 for float16, as torch) so that rounding never gives 1.0; the normal is Box-Muller on
    two words of the block. With ``p_st`` the probabilities are a strided float tensor of that storage type
(binding 2) and an element
    outside [0, 1] (or NaN) records the check id (the last meta word) in the flag buffer (binding 3).

    meta: [n, key_lo, key_hi, offset_lo, offset_hi, a, b (f32 bits), then with p_st: nd, shape[nd],
    p_off, p_strides[nd], check id]."""
    kind = st[0] if st != "f16" else "f"
    bits = 11 if st == "f16" else 24
    r = RANDOM[dist]
    store = store_expr(st, "r") if kind == "f" else f"{WGSL_CT[kind]}(r)"
    if dist in INT_RANDOM:
        store = store_expr(st, "f32(r)") if kind == "f" else "r"
    if kind == "u":
        store = "select(0u, 1u, r != 0.0)" if dist not in INT_RANDOM else "select(0u, 1u, r != 0)"
    binds = ""
    pval = "a"
    check = ""
    if p_st:
        binds = f"""@group(0) @binding(2) var<storage, read> P: array<{p_st}>;
@group(0) @binding(3) var<storage, read_write> flag: array<atomic<u32>, 4>;
{_strided_off(7)}"""
        pval = load_expr(p_st, "P[off(i)]")
        # NaN by its bits: a compiler may assume comparisons with NaN never happen
        check = """  if (p < 0.0 || p > 1.0 || (bitcast<u32>(p) & 0x7fffffffu) > 0x7f800000u) { atomicCompareExchangeWeak(&flag[0], 0u, prm[8u + 2u * prm[7] + 1u]); }
"""
    return f"""{_enable((st, p_st))}
@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<{st}>;
{binds}
{PHILOX}
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let i = gid.x + gid.y * nwg.x * {WG}u;
  if (i >= prm[0]) {{ return; }}
  let w = philox(vec4<u32>(i, 0u, prm[3], prm[4]), vec2<u32>(prm[1], prm[2]));
  let a = bitcast<f32>(prm[5]); let b = bitcast<f32>(prm[6]);
  let u = f32(w.x >> {32 - bits}u) * {1.0 / 2 ** bits!r};
  // Box-Muller: u1 in (0, 1] so that the log is finite
  let u1 = (f32(w.y >> 8u) + 1.0) * {1.0 / 2 ** 24!r};
  let z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * f32(w.z >> 8u) * {1.0 / 2 ** 24!r});
  let p = {pval};
{check}  let r = {r};
  out[i] = {store};
}}"""


# -- fused optimizer steps -----------------------------------------------------------------------------
@functools.cache
def optimizer_kernel(kind: str, flags: tuple[str, ...], count: int = 1) -> str:
    """One thread per element updates ``count`` float32 parameters and their state in place, in the order of
    operations of the unfused update (so results agree with it to rounding); the threads of parameter ``j``
    follow those of parameter ``j - 1``, so one dispatch serves a whole group of parameters. Bindings, per
    parameter: p, g, then the state buffers.
    kind 'adam': state m, v (and vmax with 'amsgrad'); flags 'decoupled', 'wd', 'amsgrad'.
    kind 'sgd': state buf with 'momentum'; flags 'wd', 'momentum', 'nesterov'.
    meta: [total elements, then per parameter: its end (the running total), the offsets of p, g and each state
    buffer, then 8 f32 scalars s0.. as listed in the body]."""
    nstate = {"adam": 3 if "amsgrad" in flags else 2, "sgd": 1 if "momentum" in flags else 0}[kind]
    names = ["p", "g", *("m", "v", "vmax")[:nstate]] if kind == "adam" else ["p", "g", *["buf"][:nstate]]
    if "capturable" in flags:  # the step count, a 0-d tensor already incremented (step_increment_kernel)
        names.append("step")
    nb = len(names)
    width = 1 + nb + 8  # meta words per parameter
    binds = []
    blocks = []
    for j in range(count):
        binds += [f"@group(0) @binding({1 + j * nb + k}) var<storage, {'read' if n in ('g', 'step') else 'read_write'}> "
                  f"{n}{j}: array<f32>;" for k, n in enumerate(names)]
        base = 1 + j * width
        s = [f"bitcast<f32>(prm[{base + 1 + nb + q}u])" for q in range(8)]
        start = "0u" if j == 0 else f"prm[{base - width}u]"
        idx = {n: f"prm[{base + 1 + k}u] + e" for k, n in enumerate(names)}
        ref = {n: f"{n}{j}[{idx[n]}]" for n in names}
        body = [f"    let e = i - {start};", f"    var pv = {ref['p']};", f"    var gv = {ref['g']};"]
        if kind == "adam":  # s: 1 - lr*wd, wd, 1 - beta1, beta2, 1 - beta2, sqrt(bias correction 2), eps, -lr/bc1
            if "decoupled" in flags:
                body.append(f"    pv = pv * {s[0]};")
            elif "wd" in flags:
                body.append(f"    gv = gv + pv * {s[1]};")
            body += [f"    let mn = {ref['m']} + (gv - {ref['m']}) * {s[2]};", f"    {ref['m']} = mn;",
                     f"    let vn = {ref['v']} * {s[3]} + (gv * gv) * {s[4]};", f"    {ref['v']} = vn;"]
            second = "vn"
            if "amsgrad" in flags:
                body += [f"    let vm = max({ref['vmax']}, vn);", f"    {ref['vmax']} = vm;"]
                second = "vm"
            if "capturable" in flags:  # s5, s7: beta1 and lr; the bias corrections from the count on the device
                body += [f"    let stp = step{j}[prm[{base + nb}u]];",
                         f"    let bc2s = sqrt(1.0 - pow({s[3]}, stp));",
                         f"    let ssn = -({s[7]} / (1.0 - pow({s[5]}, stp)));",
                         f"    pv = pv + (mn / (sqrt({second}) / bc2s + {s[6]})) * ssn;"]
            else:
                body.append(f"    pv = pv + (mn / (sqrt({second}) / {s[5]} + {s[6]})) * {s[7]};")
        else:  # s: wd, momentum, 1 - dampening, -lr
            if "wd" in flags:
                body.append(f"    gv = gv + pv * {s[0]};")
            if "momentum" in flags:
                body += [f"    let b = {ref['buf']} * {s[1]} + gv * {s[2]};", f"    {ref['buf']} = b;",
                         f"    gv = gv + b * {s[1]};" if "nesterov" in flags else "    gv = b;"]
            body.append(f"    pv = pv + gv * {s[3]};")
        body.append(f"    {ref['p']} = pv;")
        head = "if" if j == 0 else "} else if"
        blocks.append(f"  {head} (i < prm[{base}u]) {{\n" + "\n".join(body))
    nl = "\n"
    return f"""@group(0) @binding(0) var<storage, read> prm: array<u32>;
{nl.join(binds)}
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let i = gid.x + gid.y * nwg.x * {WG}u;
  if (i >= prm[0]) {{ return; }}
{nl.join(blocks)}
  }}
}}"""


def step_increment_kernel(count: int) -> str:
    """Add 1 to ``count`` float32 step counts (torch's ``state_steps += 1`` of a capturable step), before the update
    kernel reads them: one thread, as every thread of the update reads the count. meta: each count's offset."""
    binds = "\n".join(f"@group(0) @binding({1 + j}) var<storage, read_write> s{j}: array<f32>;" for j in range(count))
    adds = "\n".join(f"  s{j}[prm[{j}u]] = s{j}[prm[{j}u]] + 1.0;" for j in range(count))
    return f"""@group(0) @binding(0) var<storage, read> prm: array<u32>;
{binds}
@compute @workgroup_size(1)
fn main() {{
{adds}
}}"""


# -- row kernels: one workgroup per contiguous row (softmax family, layer_norm), reductions in workgroup memory
ROW_INPUTS = {"softmax": ("x",), "log_softmax": ("x",), "softmax_backward": ("y", "g"),
              "log_softmax_backward": ("y", "g"), "layer_norm": ("x", "w", "b"), "layer_norm_backward": ("x", "w", "g")}
_ROW_BODY = {
    "softmax": """
  var m = -{inf};
  for (var j = lid; j < L; j = j + {wg}u) {{ m = max(m, x(j)); }}
  m = wmax(m, lid);
  var s = 0.0;
  for (var j = lid; j < L; j = j + {wg}u) {{ s = s + exp(x(j) - m); }}
  s = wsum(s, lid);
  for (var j = lid; j < L; j = j + {wg}u) {{ put(j, exp(x(j) - m) / s); }}""",
    "log_softmax": """
  var m = -{inf};
  for (var j = lid; j < L; j = j + {wg}u) {{ m = max(m, x(j)); }}
  m = wmax(m, lid);
  var s = 0.0;
  for (var j = lid; j < L; j = j + {wg}u) {{ s = s + exp(x(j) - m); }}
  let ls = m + log(wsum(s, lid));
  for (var j = lid; j < L; j = j + {wg}u) {{ put(j, x(j) - ls); }}""",
    "softmax_backward": """
  var s = 0.0;
  for (var j = lid; j < L; j = j + {wg}u) {{ s = s + g(j) * y(j); }}
  s = wsum(s, lid);
  for (var j = lid; j < L; j = j + {wg}u) {{ put(j, y(j) * (g(j) - s)); }}""",
    "log_softmax_backward": """
  var s = 0.0;
  for (var j = lid; j < L; j = j + {wg}u) {{ s = s + g(j); }}
  s = wsum(s, lid);
  for (var j = lid; j < L; j = j + {wg}u) {{ put(j, g(j) - exp(y(j)) * s); }}""",
    "layer_norm": """
  var s = 0.0;
  for (var j = lid; j < L; j = j + {wg}u) {{ s = s + x(j); }}
  let mean = wsum(s, lid) / f32(L);
  var q = 0.0;
  for (var j = lid; j < L; j = j + {wg}u) {{ let d = x(j) - mean; q = q + d * d; }}
  let rstd = inverseSqrt(wsum(q, lid) / f32(L) + eps);
  for (var j = lid; j < L; j = j + {wg}u) {{ put(j, (x(j) - mean) * rstd * w(j) + b(j)); }}""",
    "layer_norm_backward": """
  var s = 0.0;
  for (var j = lid; j < L; j = j + {wg}u) {{ s = s + x(j); }}
  let mean = wsum(s, lid) / f32(L);
  var q = 0.0;
  for (var j = lid; j < L; j = j + {wg}u) {{ let d = x(j) - mean; q = q + d * d; }}
  let rstd = inverseSqrt(wsum(q, lid) / f32(L) + eps);
  var sa = 0.0;
  var sc = 0.0;
  for (var j = lid; j < L; j = j + {wg}u) {{ let gw = g(j) * w(j); sa = sa + gw; sc = sc + gw * (x(j) - mean) * rstd; }}
  let a = wsum(sa, lid) / f32(L);
  let c = wsum(sc, lid) / f32(L);
  for (var j = lid; j < L; j = j + {wg}u) {{ put(j, rstd * (g(j) * w(j) - a - (x(j) - mean) * rstd * c)); }}""",
}


@functools.cache
def row_kernel(op: str, st: str, present: tuple[bool, ...]) -> str:
    """``op`` over rows of length L, one workgroup of RWG threads per row (rows past the grid's x fold into y).
    Row inputs (x, y, g) are contiguous rows; w and b are per-column vectors (absent ones read 1 and 0).
    meta: [rows, L, eps (f32 bits), offset of each present input]."""
    names = ROW_INPUTS[op]
    decl, fns = [], []
    k = 0
    for name, here in zip(names, present):
        if not here:
            fns.append(f"fn {name}(j: u32) -> f32 {{ return {'0.0' if name == 'b' else '1.0'}; }}")
            continue
        decl.append(f"@group(0) @binding({k + 2}) var<storage, read> in{k}: array<{st}>;")
        idx = f"prm[{3 + k}] + j" if name in ("w", "b") else f"prm[{3 + k}] + row * prm[1] + j"
        fns.append(f"fn {name}(j: u32) -> f32 {{ return {load_expr(st, f'in{k}[{idx}]')}; }}")
        k += 1
    body = _ROW_BODY[op].format(inf=_INF, wg=RWG)
    return f"""{_enable((st,))}
@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<{st}>;
{chr(10).join(decl)}
var<workgroup> red: array<f32, {RWG}>;
var<private> row: u32;
{chr(10).join(fns)}
fn put(j: u32, v: f32) {{ out[row * prm[1] + j] = {store_expr(st, "v")}; }}
{workgroup_reductions(RWG)}
@compute @workgroup_size({RWG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lv: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {{
  row = wid.x + wid.y * nwg.x;
  if (row >= prm[0]) {{ return; }}
  let lid = lv.x;
  let L = prm[1];
  let eps = bitcast<f32>(prm[2]);{body}
}}"""


@functools.cache
def embed_kernel(st: str) -> str:
    """``out`` (contiguous) is ``fill`` except on a window of strided positions, which read ``src``: the gradient of
    a basic slice and ``pad``'s constant mode in one pass (not a fill and then a copy). Per output dim the window is
    ``start + k * step`` for ``k < count``, and ``src``'s stride along it (an int index is a window of one).
    meta: [n, nd, shape[nd], src offset, per dim (start, step, count, src stride), fill (compute-type bits), out
    offset] (the offsets within the bindings: a chunk of a larger output binds a window of it)."""
    kind = "f" if st in ("f32", "f16") else ("i" if st == "i32" else "u")
    ct = WGSL_CT[kind]
    fill = scalar_expr(kind, "prm[3u + nd + 4u * nd]")
    return f"""{_enable((st,))}@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<{st}>;
@group(0) @binding(2) var<storage, read> src: array<{st}>;
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let i = gid.x + gid.y * nwg.x * {WG}u;
  if (i >= prm[0]) {{ return; }}
  let nd = prm[1];
  var rem = i;
  var off = prm[2u + nd];
  var inside = true;
  for (var d = i32(nd) - 1; d >= 0; d = d - 1) {{
    let o = rem % prm[2u + u32(d)];
    rem = rem / prm[2u + u32(d)];
    let w = 3u + nd + 4u * u32(d);
    if (o < prm[w]) {{ inside = false; continue; }}
    let q = o - prm[w];
    let k = q / prm[w + 1u];
    if (q % prm[w + 1u] != 0u || k >= prm[w + 2u]) {{ inside = false; continue; }}
    off = off + k * prm[w + 3u];
  }}
  var v: {ct} = {fill};
  if (inside) {{ v = {load_expr(st, "src[off]")}; }}
  out[prm[4u + nd + 4u * nd] + i] = {store_expr(st, "v")};
}}"""


@functools.cache
def triangle_kernel(st: str) -> str:
    """tril/triu: ``out[i]`` (contiguous) is the strided input where column - row is <= k (tril) or >= k (triu),
    else 0; the mask comes from the index, nothing is uploaded. meta: [n, rows, cols, k (i32 bits), upper, then
    the input as ``[nd, shape[nd], offset, strides[nd]]``]."""
    kind = "f" if st in ("f32", "f16") else "i" if st == "i32" else "v" if st == "vec2<f32>" else "u"
    zero = {"f": "0.0", "i": "0", "u": "0u", "v": "0.0"}[kind]  # (complex64: one (re, im) pair an element)
    return f"""{_enable((st,))}@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<{st}>;
@group(0) @binding(2) var<storage, read> src: array<{st}>;
{_strided_off(5)}
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let i = gid.x + gid.y * nwg.x * {WG}u;
  if (i >= prm[0]) {{ return; }}
  let col = i32(i % prm[2]);
  let row = i32((i / prm[2]) % prm[1]);
  let k = bitcast<i32>(prm[3]);
  var keep = col - row <= k;
  if (prm[4] != 0u) {{ keep = col - row >= k; }}
  var v = {WGSL_CT[kind]}({zero});
  if (keep) {{ v = {load_expr(st, "src[off(i)]")}; }}
  out[i] = {store_expr(st, "v")};
}}"""


@functools.cache
def eye_kernel(st: str) -> str:
    """``out`` (rows, cols), contiguous: 1 where row == column, else 0. meta: [n, cols]."""
    kind = "f" if st in ("f32", "f16") else ("i" if st == "i32" else "v" if st == "vec2<f32>" else "u")
    one, zero = {"f": ("1.0", "0.0"), "i": ("1", "0"), "u": ("1u", "0u"),
                 "v": ("vec2<f32>(1.0, 0.0)", "vec2<f32>(0.0)")}[kind]
    return f"""{_enable((st,))}@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<{st}>;
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let i = gid.x + gid.y * nwg.x * {WG}u;
  if (i >= prm[0]) {{ return; }}
  out[i] = {store_expr(st, f"select({zero}, {one}, i % prm[1] == i / prm[1])")};
}}"""
