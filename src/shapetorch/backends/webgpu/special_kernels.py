"""WebGPU kernels of the special functions and the elementwise leftovers: logit, nan_to_num, nextafter, frexp,
the bitwise shifts, isin, isreal, lgamma, digamma, polygamma, erfinv, the Bessel functions, ndtri, log_ndtr,
erfcx, the Hurwitz zeta function, the incomplete gamma functions, airy_ai and the orthogonal polynomials.

The CPU kernels compute in float64 (scipy.special) and round once; WGSL has no f64, so these are float32
algorithms chosen to stay accurate in float32 without tables of fitted coefficients:

- gammainc/gammaincc: the series of P below x = a + 1, the continued fraction of Q above, times
  x^a e^-x / Gamma(a) (through lgamma below a = 10, Temme's form with Stirling's series above);
- lgamma, digamma, polygamma, zeta: shift the argument up with the recurrence, then the asymptotic (Stirling,
  Euler-Maclaurin) series with Bernoulli numbers; reflection for negative arguments;
- erfc (and so erfcx, log_ndtr, ndtri's and erfinv's refinement): below 1, the power series of erf whose terms
  are all positive (no cancellation); above, Laplace's continued fraction for ``exp(x^2) erfc(x)``, evaluated
  from its 60th term down;
- ndtri: a rational first guess (Acklam's published form) polished by Halley steps on that erfc; erfinv: the
  same guess, then Halley steps on erf (near 0) or erfc (near +-1) so that both ends stay relative;
- airy_ai: K_(1/3) above 0, Taylor steps of the differential equation from 0 down to -5, the asymptotic
  expansion below;
- Y0 and Y1: Neumann's series in the J_2k (and its derivative), all J_n from Miller's downward recurrence;
- the Bessel functions: I by its power series (positive terms) below 30; J by its power series below 2, then
  the trapezoid rule over a period of its integral representation (|x| + 24 points; it converges geometrically
  for such periodic analytic integrands); K by the trapezoid rule on its integral over [0, inf) (a step below
  1/sqrt(x)); Hankel's asymptotic expansions for large |x|;
- the orthogonal polynomials: their three-term recurrences, one step per degree (the degree is limited to
  65,535 on the device: a larger one is a ``device_error_limit`` at the next sync, as lavapipe bounds loops).

Each kernel takes the CPU kernel's arguments. The float32 results agree with torch's within float32 rounding of
the operations above (the tests state the tolerance per function); float16 is computed in f32 and rounded once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import codegen as G
from . import kernels as K
from .runtime import WArray

# -- WGSL ------------------------------------------------------------------------------------------------
SPECIAL = """
const PI_F: f32 = 3.141592653589793;
fn inf_s() -> f32 { return bitcast<f32>(0x7f800000u); }
fn nan_s() -> f32 { return bitcast<f32>(0x7fc00000u); }
// sin(pi x) and cot(pi x) with the argument reduced first (pi * x itself would lose the fraction of a large x)
fn sinpi_s(x: f32) -> f32 { return sin(PI_F * (x - 2.0 * round(0.5 * x))); }
fn cotpi_s(x: f32) -> f32 { let r = x - round(x); return cos(PI_F * r) / sin(PI_F * r); }

fn lgamma_s(x0: f32) -> f32 {
  if (nan_f(x0)) { return x0; }
  if (abs(x0) == inf_s()) { return inf_s(); }
  var x = x0;
  var refl = 0.0;
  if (x0 <= 0.0) {
    if (x0 == floor(x0)) { return inf_s(); }
    refl = log(PI_F / abs(sinpi_s(x0)));  // lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x)
    x = 1.0 - x0;
  }
  var prod = 1.0;
  loop { if (x >= 8.0) { break; } prod = prod * x; x = x + 1.0; }
  let z = 1.0 / x;
  let z2 = z * z;
  let s = (x - 0.5) * log(x) - x + 0.91893853320467274
    + z * (0.083333333333333333 - z2 * (0.0027777777777777778 - z2 * (0.00079365079365079365 - z2 * 0.00059523809523809524)));
  let r = s - log(prod);
  return select(r, refl - r, x0 <= 0.0);
}

fn digamma_s(x0: f32) -> f32 {
  if (nan_f(x0) || x0 == inf_s()) { return x0; }
  if (x0 == -inf_s()) { return nan_s(); }
  if (x0 == 0.0) { return select(-inf_s(), inf_s(), (bitcast<u32>(x0) >> 31u) == 1u); }
  if (x0 < 0.0 && x0 == floor(x0)) { return nan_s(); }
  var x = x0;
  var res = 0.0;
  if (x0 < 0.0) { res = -PI_F * cotpi_s(x0); x = 1.0 - x0; }  // psi(x) = psi(1 - x) - pi cot(pi x)
  loop { if (x >= 10.0) { break; } res = res - 1.0 / x; x = x + 1.0; }
  let z = 1.0 / (x * x);
  return res + log(x) - 0.5 / x
    - z * (0.083333333333333333 - z * (0.0083333333333333333 - z * (0.0039682539682539683 - z * (0.0041666666666666667 - z * 0.0075757575757575758))));
}

// B_2k / (2k)!, k = 1 .. 8: the Euler-Maclaurin series' coefficients
fn bern_s(k: i32) -> f32 {
  var b = array<f32, 8>(0.083333333333333333, -0.0013888888888888889, 3.3068783068783069e-05, -8.2671957671957672e-07,
                        2.0876756987868099e-08, -5.2841901386874932e-10, 1.3382536530684679e-11, -3.3896802963225829e-13);
  return b[k];
}

// (q + k)^-s for an integer s when q + k < 0
fn pow_neg_s(v: f32, s: f32) -> f32 { return pow(abs(v), -s) * select(1.0, -1.0, v < 0.0 && fract(0.5 * s) != 0.0); }

// the Hurwitz zeta function sum_k (q + k)^-s (torch's domain: nan below s = 1, inf at s = 1 and at poles q = 0,
// -1, ...; a negative q only for an integer s): the first terms summed until q + k >= max(9, s / 4), then
// Euler-Maclaurin's tail
fn zeta_s(s: f32, q0: f32) -> f32 {
  if (nan_f(s) || nan_f(q0)) { return nan_s(); }
  if (s == 1.0) { return inf_s(); }
  if (s < 1.0) { return nan_s(); }
  if (q0 <= 0.0) {
    if (q0 == floor(q0)) { return inf_s(); }
    if (s != floor(s)) { return nan_s(); }
  }
  if (q0 == inf_s()) { return nan_s(); }  // as torch
  var q = q0;
  var sum = 0.0;
  for (var k = 0; k < 4096; k = k + 1) {
    if (q >= 9.0 && q >= 0.25 * s) { break; }
    sum = sum + pow_neg_s(q, s);
    q = q + 1.0;
  }
  let w = pow(q, -s);
  sum = sum + q * w / (s - 1.0) + 0.5 * w;
  var fac = s;  // s (s+1) ... (s + 2j - 2)
  var qp = w / q;  // q^(-s - 2j + 1)
  for (var j = 0; j < 8; j = j + 1) {
    let t = bern_s(j) * fac * qp;
    sum = sum + t;
    if (abs(t) <= 1e-9 * abs(sum)) { break; }
    let a = s + f32(2 * j + 1);
    fac = fac * a * (a + 1.0);
    qp = qp / (q * q);
  }
  return sum;
}

fn polygamma_s(n: f32, x: f32) -> f32 {
  // psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x), n >= 1
  if (x == inf_s()) { return select(nan_s(), 0.0, n == 1.0); }  // torch's trigamma gives 0, its zeta nan
  if (x == -inf_s() && n == 1.0) { return nan_s(); }
  if (x <= 0.0 && x == floor(x)) { return select(-inf_s(), inf_s(), fract(0.5 * n) != 0.0); }
  var fact = 1.0;
  for (var k = 2.0; k <= n; k = k + 1.0) { fact = fact * k; }
  return select(-1.0, 1.0, fract(0.5 * n) != 0.0) * fact * zeta_s(n + 1.0, x);
}

// x^a e^-x / Gamma(a). For a >= 10 as Temme writes it, exp(-a eta) sqrt(a / 2 pi) / Gamma*(a) with
// eta = t - 1 - log t (t = x / a; by its series near t = 1) and Stirling's series for Gamma*(a) =
// Gamma(a) / (sqrt(2 pi / a) (a / e)^a): no large terms cancel, so the error does not grow with a
fn gamma_lead_s(a: f32, x: f32) -> f32 {
  if (a < 10.0) { return exp(a * log(x) - x - lgamma_s(a)); }
  let u = (x - a) / a;
  var eta: f32;
  if (abs(u) < 0.5) {
    var pw = u * u;
    eta = 0.0;
    for (var k = 2; k < 32; k = k + 1) { eta = eta + select(pw, -pw, k % 2 == 1) / f32(k); pw = pw * u; }
  } else {
    eta = u - log(1.0 + u);
  }
  let ia = 1.0 / a;
  let gstar = 1.0 + ia * (0.083333333333333333 + ia * (0.0034722222222222222 + ia * (-0.0026813271604938272
    + ia * -0.00022947209362139918)));
  return exp(-a * eta) * sqrt(a * 0.15915494309189534) / gstar;
}

// the regularized incomplete gamma functions P(a, x) (upper: Q = 1 - P): the series of P below x = a + 1, the
// continued fraction of Q (modified Lentz) above, each times x^a e^-x / Gamma(a); torch's edges
fn gammainc_s(a: f32, x: f32, upper: bool) -> f32 {
  if (nan_f(a) || nan_f(x) || a < 0.0 || x < 0.0) { return nan_s(); }
  if (a == 0.0) {
    if (x == 0.0) { return nan_s(); }
    return select(1.0, 0.0, upper);
  }
  if (x == 0.0) { return select(0.0, 1.0, upper); }
  if (a == inf_s()) {
    if (x == inf_s()) { return nan_s(); }
    return select(0.0, 1.0, upper);
  }
  if (x == inf_s()) { return select(1.0, 0.0, upper); }
  let lead = gamma_lead_s(a, x);
  if (x < a + 1.0) {
    var ap = a;
    var term = 1.0 / a;
    var sum = term;
    for (var k = 0; k < 4000; k = k + 1) {
      ap = ap + 1.0;
      term = term * x / ap;
      sum = sum + term;
      if (term < sum * 1e-8) { break; }
    }
    let p = sum * lead;
    return select(p, 1.0 - p, upper);
  }
  let tiny = 1e-30;
  var b = x + 1.0 - a;
  var c = 1.0 / tiny;
  var d = 1.0 / b;
  var h = d;
  for (var i = 1; i < 4000; i = i + 1) {
    let an = -f32(i) * (f32(i) - a);
    b = b + 2.0;
    d = an * d + b;
    if (abs(d) < tiny) { d = tiny; }
    c = b + an / c;
    if (abs(c) < tiny) { c = tiny; }
    d = 1.0 / d;
    let del = d * c;
    h = h * del;
    if (abs(del - 1.0) < 1e-7) { break; }
  }
  let q = h * lead;
  return select(1.0 - q, q, upper);
}

// erf by its series of positive terms (2/sqrt(pi)) e^-x^2 sum (2x^2)^n x / (1 3 ... (2n+1)), for |x| < 1
fn erf_series_s(x: f32) -> f32 {
  let x2 = x * x;
  var term = x;
  var sum = x;
  for (var n = 1; n < 24; n = n + 1) { term = term * 2.0 * x2 / f32(2 * n + 1); sum = sum + term; }
  return 1.1283791670955126 * exp(-x2) * sum;
}

// exp(x^2) erfc(x) for x >= 1: Laplace's continued fraction 1 / (sqrt(pi) (x + (1/2) / (x + 1 / (x + ...))))
fn erfcx_cf_s(x: f32) -> f32 {
  var t = 0.0;
  for (var j = 60; j >= 1; j = j - 1) { t = 0.5 * f32(j) / (x + t); }
  return 0.56418958354775629 / (x + t);
}

fn erfc_s(x: f32) -> f32 {
  if (nan_f(x)) { return x; }
  let z = abs(x);
  var r: f32;
  if (z < 1.0) { r = 1.0 - erf_series_s(z); } else if (z > 10.5) { r = 0.0; } else { r = exp(-z * z) * erfcx_cf_s(z); }
  return select(r, 2.0 - r, x < 0.0);
}

fn erfcx_s(x: f32) -> f32 {
  if (nan_f(x)) { return x; }
  if (x == inf_s()) { return 0.0; }
  let z = abs(x);
  var r: f32;
  if (z < 1.0) { r = exp(z * z) * (1.0 - erf_series_s(z)); } else { r = erfcx_cf_s(z); }
  if (x < 0.0) { return 2.0 * exp(z * z) - r; }
  return r;
}

fn log_ndtr_s(x: f32) -> f32 {
  if (nan_f(x)) { return x; }
  let t = -x * 0.70710678118654752;
  if (t > 1.0) { return -t * t + log(0.5 * erfcx_cf_s(t)); }
  if (x > 0.0) {
    let e = -0.5 * erfc_s(-t);
    // log1p(e): the series for a small e (log(1 + e) of a rounded 1 + e loses it)
    if (e > -1e-3) { return e * (1.0 - e * (0.5 - e * (0.33333333333333333 - e * 0.25))); }
    return log(1.0 + e);
  }
  return log(0.5 * erfc_s(t));
}

// ndtri(p) for 0 < p <= 0.5 (result <= 0): a rational first guess, then Halley steps on the lower tail
fn ndtri_low_s(p: f32) -> f32 {
  var x: f32;
  if (p < 0.02425) {
    let q = sqrt(-2.0 * log(p));
    x = (((((-7.784894002430293e-03 * q - 3.223964580411365e-01) * q - 2.400758277161838e+00) * q
         - 2.549732539343734e+00) * q + 4.374664141464968e+00) * q + 2.938163982698783e+00)
      / ((((7.784695709041462e-03 * q + 3.224671290700398e-01) * q + 2.445134137142996e+00) * q
         + 3.754408661907416e+00) * q + 1.0);
  } else {
    let q = p - 0.5;
    let r = q * q;
    x = (((((-3.969683028665376e+01 * r + 2.209460984245205e+02) * r - 2.759285104469687e+02) * r
         + 1.383577518672690e+02) * r - 3.066479806614716e+01) * r + 2.506628277459239e+00) * q
      / (((((-5.447609879822406e+01 * r + 1.615858368580409e+02) * r - 1.556989798598866e+02) * r
         + 6.680131188771972e+01) * r - 1.328068155288572e+01) * r + 1.0);
  }
  for (var k = 0; k < 2; k = k + 1) {
    // Phi(x) - p with Phi(x) = erfc(-x / sqrt 2) / 2 (x <= 0: erfc of a positive number, relative)
    let e = 0.5 * erfc_s(-x * 0.70710678118654752) - p;
    let u = e * 2.5066282746310002 * exp(0.5 * x * x);
    x = x - u / (1.0 + 0.5 * x * u);
  }
  return x;
}

fn ndtri_s(p: f32) -> f32 {
  if (nan_f(p) || p < 0.0 || p > 1.0) { return nan_s(); }
  if (p == 0.0) { return -inf_s(); }
  if (p == 1.0) { return inf_s(); }
  if (p == 0.5) { return 0.0; }
  if (p > 0.5) { return -ndtri_low_s(1.0 - p); }  // 1 - p is exact for p in [0.5, 1]
  return ndtri_low_s(p);
}

fn erfinv_s(y: f32) -> f32 {
  let ay = abs(y);
  if (nan_f(y) || ay > 1.0) { return nan_s(); }
  if (ay == 1.0) { return select(inf_s(), -inf_s(), y < 0.0); }
  if (ay == 0.0) { return y; }
  var x: f32;
  if (ay < 1e-3) { x = 0.88622692545275801 * ay * (1.0 + 0.26179938779914941 * ay * ay); }
  else { x = -ndtri_low_s(0.5 * (1.0 - ay)) * 0.70710678118654752; }
  for (var k = 0; k < 2; k = k + 1) {
    var f: f32;
    if (ay <= 0.5) { f = erf_series_s(x) - ay; } else { f = (1.0 - ay) - erfc_s(x); }
    let d = f / (1.1283791670955126 * exp(-x * x));
    x = x - d / (1.0 + x * d);  // Halley: erf'' / erf' = -2x
  }
  return select(x, -x, y < 0.0);
}

// exp(-|x|) I_nu(|x|), nu = 0 or 1: the power series sum (x/2)^(2k+nu) / (k! (k+nu)!) (positive terms) below
// 30, Hankel's expansion above
fn bessel_ie_s(x: f32, nu: f32) -> f32 {
  let z = abs(x);
  if (z > 30.0) { return bessel_i_s(x, nu, true); }
  return bessel_i_s(x, nu, false) * exp(-z);
}
// I_nu(|x|) (scaled: times exp(-|x|))
fn bessel_i_s(x: f32, nu: f32, scaled: bool) -> f32 {
  let z = abs(x);
  if (nan_f(x)) { return x; }
  if (z > 30.0) {
    let mu = 4.0 * nu * nu;
    var term = 1.0;
    var sum = 1.0;
    for (var k = 1; k < 12; k = k + 1) {
      let o = f32(2 * k - 1);
      term = -term * (mu - o * o) / (f32(k) * 8.0 * z);
      sum = sum + term;
    }
    return sum / sqrt(2.0 * PI_F * z) * select(exp(z), 1.0, scaled);
  }
  let q = 0.25 * z * z;
  var term = select(1.0, 0.5 * z, nu == 1.0);
  var sum = term;
  for (var k = 1; k < 80; k = k + 1) {
    term = term * q / (f32(k) * (f32(k) + nu));
    sum = sum + term;
    if (term < 1e-9 * sum) { break; }
  }
  return sum;
}

// exp(x) K_nu(x), x > 0: the trapezoid rule on int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt
fn bessel_ke_s(x: f32, nu: f32) -> f32 {
  if (nan_f(x) || x < 0.0) { return nan_s(); }
  if (x == 0.0) { return inf_s(); }
  if (x == inf_s()) { return 0.0; }
  let h = min(0.5, 0.5 / sqrt(x));
  var sum = 0.5;
  for (var k = 1; k < 400; k = k + 1) {
    let t = f32(k) * h;
    let s = sinh(0.5 * t);
    if (t > 88.0) { break; }  // cosh(t) would overflow; the terms are long past negligible
    let v = exp(-2.0 * x * s * s) * cosh(nu * t);
    sum = sum + v;
    if (v < 1e-9 * sum) { break; }
  }
  return sum * h;
}

// J_nu(x), nu = 0 or 1: the power series below 2, the trapezoid rule over a period of cos(nu t - x sin t) up to
// 25, Hankel's expansion above
fn bessel_j_s(x0: f32, nu: f32) -> f32 {
  if (nan_f(x0)) { return x0; }
  let x = abs(x0);
  let odd = select(1.0, -1.0, nu == 1.0 && x0 < 0.0);
  if (x == inf_s()) { return nan_s(); }  // as torch (the limit is 0)
  if (x > 25.0) {
    let mu = 4.0 * nu * nu;
    var term = 1.0;
    var p = 1.0;
    var q = 0.0;
    for (var k = 1; k < 16; k = k + 1) {
      let o = f32(2 * k - 1);
      term = term * (mu - o * o) / (f32(k) * 8.0 * x);
      if (k % 4 == 1) { q = q + term; } else if (k % 4 == 2) { p = p - term; } else if (k % 4 == 3) { q = q - term; } else { p = p + term; }
    }
    let c = cos(x);
    let s = sin(x);
    // chi = x - (2 nu + 1) pi / 4: cos and sin of it from those of x (no rounding of x - chi)
    var cc = (c + s) * 0.70710678118654752;
    var sc = (s - c) * 0.70710678118654752;
    if (nu == 1.0) { cc = (s - c) * 0.70710678118654752; sc = -(s + c) * 0.70710678118654752; }
    return odd * sqrt(2.0 / (PI_F * x)) * (p * cc - q * sc);
  }
  if (x < 2.0) {  // the power series: the trapezoid sum of an O(1) integrand would lose a small J1 in rounding
    let q = -0.25 * x * x;
    var term = select(1.0, 0.5 * x, nu == 1.0);
    var sum = term;
    for (var k = 1; k < 20; k = k + 1) { term = term * q / (f32(k) * (f32(k) + nu)); sum = sum + term; }
    return odd * sum;
  }
  let n = i32(x) + 24;
  let h = PI_F / f32(n);
  var sum = 0.5 * (1.0 + cos(nu * PI_F));
  for (var k = 1; k < n; k = k + 1) {
    let t = f32(k) * h;
    sum = sum + cos(nu * t - x * sin(t));
  }
  return odd * sum / f32(n);
}

// Y_nu(x), nu = 0 or 1: near 0 the leading terms of the series; up to 25 Neumann's series
// Y0 = (2/pi) ((log(x/2) + gamma) J0 - 2 sum_k (-1)^k J_2k / k) and its derivative for Y1 = -Y0', with every J_n
// from Miller's downward recurrence (normalized by J0 + 2 sum J_2k = 1, rescaled on the way down so that
// nothing overflows); Hankel's expansion above
fn bessel_y_s(x: f32, nu: f32) -> f32 {
  if (nan_f(x) || x < 0.0 || x == inf_s()) { return nan_s(); }  // as torch (the limit at inf is 0)
  if (x == 0.0) { return -inf_s(); }
  let lg = log(0.5 * x) + 0.57721566490153286;
  if (x < 1e-3) {
    if (nu == 0.0) { return 0.63661977236758134 * (lg * (1.0 - 0.25 * x * x) + 0.25 * x * x); }
    return -0.63661977236758134 / x + 0.31830988618379067 * x * (lg - 0.5);
  }
  if (x > 25.0) {
    let mu = 4.0 * nu * nu;
    var term = 1.0;
    var p = 1.0;
    var q = 0.0;
    for (var k = 1; k < 16; k = k + 1) {
      let o = f32(2 * k - 1);
      term = term * (mu - o * o) / (f32(k) * 8.0 * x);
      if (k % 4 == 1) { q = q + term; } else if (k % 4 == 2) { p = p - term; } else if (k % 4 == 3) { q = q - term; } else { p = p + term; }
    }
    let c = cos(x);
    let s = sin(x);
    var cc = (c + s) * 0.70710678118654752;
    var sc = (s - c) * 0.70710678118654752;
    if (nu == 1.0) { cc = (s - c) * 0.70710678118654752; sc = -(s + c) * 0.70710678118654752; }
    return sqrt(2.0 / (PI_F * x)) * (p * sc + q * cc);
  }
  let top = 2 * ((i32(x) + 26) / 2);
  var jp = 0.0;     // J_(n+1)
  var jc = 1e-30;   // J_n
  var norm = 0.0;   // 2 sum J_2k
  var s0 = 0.0;     // sum (-1)^k J_2k / k
  var s1 = 0.0;     // sum (-1)^k (J_(2k-1) - J_(2k+1)) / k, gathered per odd n
  for (var n = top; n >= 1; n = n - 1) {
    if (n % 2 == 0) {
      let k = f32(n / 2);
      norm = norm + 2.0 * jc;
      s0 = s0 + select(1.0, -1.0, (n / 2) % 2 == 1) * jc / k;
    } else {
      let k1 = (n + 1) / 2;
      let k2 = (n - 1) / 2;
      var c = select(1.0, -1.0, k1 % 2 == 1) / f32(k1);
      if (k2 >= 1) { c = c - select(1.0, -1.0, k2 % 2 == 1) / f32(k2); }
      s1 = s1 + c * jc;
    }
    let jm = 2.0 * f32(n) / x * jc - jp;
    jp = jc;
    jc = jm;
    if (abs(jc) > 1e20) { jc = jc * 1e-20; jp = jp * 1e-20; norm = norm * 1e-20; s0 = s0 * 1e-20; s1 = s1 * 1e-20; }
  }
  norm = norm + jc;  // jc = J0, jp = J1 (unnormalized)
  let j0 = jc / norm;
  let j1 = jp / norm;
  if (nu == 0.0) { return 0.63661977236758134 * (lg * j0 - 2.0 * s0 / norm); }
  return 0.63661977236758134 * (lg * j1 - j0 / x + s1 / norm);
}

// Ai(x). Above 0: sqrt(x / 3) / pi K_(1/3)(zeta) with zeta = (2/3) x^(3/2) (the K integral above, which takes
// any order). From -5 to 0: Ai'' = x Ai integrated from Ai(0), Ai'(0) by Taylor steps of 0.5 (the series of
// the solution at each step's start, 24 terms: no large terms cancel, unlike the Maclaurin series at -5).
// Below -5: the asymptotic expansion with u_k = Gamma(3k + 1/2) / (54^k k! Gamma(k + 1/2)).
fn airy_ai_s(x: f32) -> f32 {
  if (nan_f(x) || abs(x) == inf_s()) { return nan_s(); }  // as torch
  if (x > 0.0) {
    let zeta = 0.66666666666666667 * x * sqrt(x);
    return sqrt(x / 3.0) / PI_F * bessel_ke_s(zeta, 0.33333333333333333) * exp(-zeta);
  }
  if (x >= -5.0) {
    var y = 0.35502805388781724;
    var dy = -0.25881940379280680;
    var x0 = 0.0;
    for (var s = 0; s < 10; s = s + 1) {
      if (x0 <= x) { break; }
      let h = max(-0.5, x - x0);
      // y(x0 + t) = sum c_n t^n with c_(n+2) (n+2)(n+1) = x0 c_n + c_(n-1)
      var cm1 = 0.0;
      var c0 = y;
      var c1 = dy;
      var val = c0 + c1 * h;
      var der = c1;
      var hp = h;  // h^(n+1) for the value's next term, h^n for the derivative's
      for (var n = 0; n < 24; n = n + 1) {
        let c2 = (x0 * c0 + cm1) / (f32(n + 2) * f32(n + 1));
        der = der + f32(n + 2) * c2 * hp;
        hp = hp * h;
        val = val + c2 * hp;
        cm1 = c0; c0 = c1; c1 = c2;
      }
      y = val;
      dy = der;
      x0 = x0 + h;
    }
    return y;
  }
  let z = -x;
  let zeta = 0.66666666666666667 * z * sqrt(z);
  var u = 1.0;
  var p = 1.0;
  var q = 0.0;
  var zp = 1.0;
  for (var k = 1; k < 12; k = k + 1) {
    let fk = f32(k);
    u = u * (3.0 * fk - 0.5) * (3.0 * fk - 1.5) * (3.0 * fk - 2.5) / (54.0 * fk * (fk - 0.5));
    zp = zp / zeta;
    if (k % 4 == 1) { q = q + u * zp; } else if (k % 4 == 2) { p = p - u * zp; } else if (k % 4 == 3) { q = q - u * zp; } else { p = p + u * zp; }
  }
  let c = cos(zeta);
  let s = sin(zeta);
  // sin(zeta + pi/4) and cos(zeta + pi/4) from those of zeta
  let sp = (s + c) * 0.70710678118654752;
  let cp = (c - s) * 0.70710678118654752;
  return (sp * p - cp * q) / (sqrt(PI_F) * sqrt(sqrt(z)));
}

// The orthogonal polynomials of degree n (a float holding an integer; zero below 0) by their recurrences.
// kind: 0 T, 1 U, 2 V, 3 W (Chebyshev), 4 H, 5 He (Hermite), 6 L (Laguerre), 7 P (Legendre)
fn orthopoly_s(x: f32, nf: f32, kind: i32) -> f32 {
  let n = i32(trunc(nf));
  if (nf < 0.0 || nan_f(nf)) { return 0.0; }
  var p0 = 1.0;
  var p1: f32;
  switch kind {
    case 0, 5, 7: { p1 = x; }
    case 1, 4: { p1 = 2.0 * x; }
    case 2: { p1 = 2.0 * x - 1.0; }
    case 3: { p1 = 2.0 * x + 1.0; }
    default: { p1 = 1.0 - x; }
  }
  if (n == 0) { return p0; }
  for (var k = 1; k < min(n, 65536); k = k + 1) {
    let fk = f32(k);
    var p2: f32;
    switch kind {
      case 4: { p2 = 2.0 * x * p1 - 2.0 * fk * p0; }
      case 5: { p2 = x * p1 - fk * p0; }
      case 6: { p2 = ((2.0 * fk + 1.0 - x) * p1 - fk * p0) / (fk + 1.0); }
      case 7: { p2 = ((2.0 * fk + 1.0) * x * p1 - fk * p0) / (fk + 1.0); }
      default: { p2 = 2.0 * x * p1 - p0; }
    }
    p0 = p1;
    p1 = p2;
  }
  return p1;
}

fn nextafter_s(a: f32, b: f32, half: bool) -> f32 {
  if (nan_f(a) || nan_f(b)) { return a + b; }
  if (a == b) { return b; }
  if (half) {  // step the float16 bits
    var u = pack2x16float(vec2<f32>(a, 0.0)) & 0xffffu;
    if (a == 0.0) { u = select(0x8001u, 1u, b > 0.0); }
    else if ((a < b) == (a > 0.0)) { u = u + 1u; } else { u = u - 1u; }
    return unpack2x16float(u).x;
  }
  var u = bitcast<u32>(a);
  if (a == 0.0) { u = select(0x80000001u, 1u, b > 0.0); }
  else if ((a < b) == (a > 0.0)) { u = u + 1u; } else { u = u - 1u; }
  return bitcast<f32>(u);
}

// frexp of the f32 bits: exponent e and mantissa m in [0.5, 1) with a = m 2^e (0, inf and nan: e = 0, m = a)
fn frexp_e_s(a: f32) -> i32 {
  let u = bitcast<u32>(a) & 0x7fffffffu;
  if (u == 0u || u >= 0x7f800000u) { return 0; }
  let ex = i32(u >> 23u);
  if (ex == 0) { return i32(firstLeadingBit(u)) - 148; }  // subnormal: the top set bit gives the exponent
  return ex - 126;
}
fn frexp_m_s(a: f32) -> f32 {
  let u = bitcast<u32>(a);
  let mag = u & 0x7fffffffu;
  if (mag == 0u || mag >= 0x7f800000u) { return a; }
  var frac = mag & 0x007fffffu;
  if ((mag >> 23u) == 0u) { frac = (frac << (23u - firstLeadingBit(frac))) & 0x007fffffu; }
  return bitcast<f32>((u & 0x80000000u) | 0x3f000000u | frac);
}
"""

UNARY: dict[str, str] = {
    "logit": "log(a / (1.0 - a))",
    "lgamma": "lgamma_s(a)",
    "digamma": "digamma_s(a)",
    "erfinv": "erfinv_s(a)",
    "i0": "bessel_i_s(a, 0.0, false)",
    "special_i1": "sign(a) * bessel_i_s(a, 1.0, false)",
    "special_i0e": "bessel_ie_s(a, 0.0)",
    "special_i1e": "sign(a) * bessel_ie_s(a, 1.0)",
    "special_modified_bessel_i0": "bessel_i_s(a, 0.0, false)",
    "special_modified_bessel_i1": "sign(a) * bessel_i_s(a, 1.0, false)",
    "special_modified_bessel_k0": "bessel_ke_s(a, 0.0) * exp(-a)",
    "special_modified_bessel_k1": "bessel_ke_s(a, 1.0) * exp(-a)",
    "special_scaled_modified_bessel_k0": "bessel_ke_s(a, 0.0)",
    "special_scaled_modified_bessel_k1": "bessel_ke_s(a, 1.0)",
    "special_bessel_j0": "bessel_j_s(a, 0.0)",
    "special_bessel_j1": "bessel_j_s(a, 1.0)",
    "special_bessel_y0": "bessel_y_s(a, 0.0)",
    "special_bessel_y1": "bessel_y_s(a, 1.0)",
    "special_airy_ai": "airy_ai_s(a)",
    "special_spherical_bessel_j0": f"select(select(sin(a) / a, 1.0 - a * a / 6.0, abs(a) < 1e-3), 0.0, abs(a) == {G._INF})",
    "special_ndtri": "ndtri_s(a)",
    "special_log_ndtr": "log_ndtr_s(a)",
    "special_erfcx": "erfcx_s(a)",
    "frexp": "frexp_m_s(a)",
    "angle": "select(select(0.0, PI_F, a < 0.0), a, nan_f(a))",  # of a real number: 0 or pi, NaN kept
}

_POLY_KIND = {"chebyshev_polynomial_t": 0, "chebyshev_polynomial_u": 1, "chebyshev_polynomial_v": 2,
              "chebyshev_polynomial_w": 3, "hermite_polynomial_h": 4, "hermite_polynomial_he": 5,
              "laguerre_polynomial_l": 6, "legendre_polynomial_p": 7}
_SHIFTED = {f"shifted_chebyshev_polynomial_{k}": i for i, k in enumerate("tuvw")}
BINARY: dict[str, str] = {
    # the degree is an integer, as torch casts it (toward zero: a degree of -0.5 is 0, whose polynomial is 1)
    **{f"special_{name}": f"orthopoly_s(a, trunc(b), {kind})" for name, kind in _POLY_KIND.items()},
    **{f"special_{name}": f"orthopoly_s(2.0 * a - 1.0, trunc(b), {kind})" for name, kind in _SHIFTED.items()},
    "special_zeta": "zeta_s(a, b)",
    "special_gammainc": "gammainc_s(a, b, false)",
    "special_gammaincc": "gammainc_s(a, b, true)",
}
MAX_DEGREE = 65535  # the most recurrence steps one thread takes (lavapipe bounds a shader's loops)


def _float_unary(name: str, expr: str) -> Callable[..., WArray]:
    def kernel(a: WArray) -> WArray:
        if K._kind(a.dtype) != "f":
            K._no_kernel(name, a.dtype)
        return K.elementwise(expr, a.dtype, [("a", a, a.dtype)], a.shape, helpers=SPECIAL)

    return kernel


def _float_binary(name: str, expr: str) -> Callable[..., WArray]:
    def kernel(a: WArray, b: WArray) -> WArray:
        if K._kind(a.dtype) != "f":
            K._no_kernel(name, a.dtype)
        if b.dtype != a.dtype:
            b = K.cast(b, a.dtype)
        if "orthopoly" in expr and b.size:
            # one recurrence step per degree: a degree past the loop bound is refused, never truncated
            K.check_range(K.cast(b, np.dtype(np.int32)), -(2**31), MAX_DEGREE + 1, "device_error_limit", name,
                          problem=f"a degree above {MAX_DEGREE:,} (one recurrence step per degree; move the "
                                  "tensors to the CPU)")
        shape = K._broadcast(a.shape, b.shape)
        return K.elementwise(expr, a.dtype, [("a", a, a.dtype), ("b", b, a.dtype)], shape, helpers=SPECIAL)

    return kernel


def polygamma_kernel(a: WArray, n: int) -> WArray:
    if K._kind(a.dtype) != "f":
        K._no_kernel("polygamma", a.dtype)
    return K.elementwise("polygamma_s(s0, a)", a.dtype, [("a", a, a.dtype)], a.shape, extra=[float(n)],
                         helpers=SPECIAL)


def nan_to_num_kernel(a: WArray, nan: float, posinf: float | None, neginf: float | None) -> WArray:
    if K._kind(a.dtype) != "f":
        return K.contiguous_copy(a)
    big = float(np.finfo(a.dtype).max)
    hi = big if posinf is None else posinf
    lo = -big if neginf is None else neginf
    expr = f"select(select(select(a, s2, a == -{G._INF}), s1, a == {G._INF}), s0, nan_f(a))"
    return K.elementwise(expr, a.dtype, [("a", a, a.dtype)], a.shape, extra=[nan, hi, lo])


def nextafter_kernel(a: K.Operand, b: K.Operand) -> WArray:
    arrays = [x for x in (a, b) if isinstance(x, WArray)]
    dt = arrays[0].dtype
    if K._kind(dt) != "f":
        K._no_kernel("nextafter", dt)
    if isinstance(a, WArray) and isinstance(b, WArray) and a.dtype != b.dtype:
        b = K.cast(b, a.dtype)
    expr = f"nextafter_s(a, b, {'true' if dt == np.float16 else 'false'})"
    shape = K._broadcast(*(x.shape for x in arrays))
    return K.elementwise(expr, dt, [("a", a, dt), ("b", b, dt)], shape, helpers=SPECIAL)


def frexp_exponent_kernel(a: WArray) -> WArray:
    if K._kind(a.dtype) != "f":
        K._no_kernel("frexp", a.dtype)
    return K.elementwise("frexp_e_s(a)", np.dtype(np.int32), [("a", a, a.dtype)], a.shape, helpers=SPECIAL)


def _shift(left: bool) -> Callable[..., WArray]:
    name = "bitwise_left_shift" if left else "bitwise_right_shift"

    def kernel(a: K.Operand, b: K.Operand) -> WArray:
        arrays = [x for x in (a, b) if isinstance(x, WArray)]
        dt = arrays[0].dtype
        if K._kind(dt) != "i":
            K._no_kernel(name, dt)
        if isinstance(a, WArray) and isinstance(b, WArray) and a.dtype != b.dtype:
            b = K.cast(b, a.dtype)
        bits = 64 if dt == np.int64 else 32
        ok = f"b >= 0 && b < {bits}"
        if left:
            expr = f"select(0, a << u32(min(b, 31)), {ok} && b < 32)"
            # int64 is stored as i32: a left shift whose 64-bit result leaves int32 is refused (at the next sync)
            check = "a != 0 && b >= 0 && b < 64 && (b >= 32 || (r >> u32(b)) != a)" if bits == 64 else ""
        else:
            expr = f"select(a >> 31u, a >> u32(clamp(b, 0, 31)), {ok} && b < 32)"
            check = ""
        shape = K._broadcast(*(x.shape for x in arrays))
        return K.elementwise(expr, dt, [("a", a, dt), ("b", b, dt)], shape, check=check)

    return kernel


def isin_kernel(a: WArray, b: WArray, invert: bool) -> WArray:
    """Each element against every test element: one comparison per pair, reduced by ``any`` (n * m booleans)."""
    if b.size == 0 or a.size == 0:
        return K.full(a.shape, invert, np.dtype(bool))
    av = K._view(a, (*a.shape, 1), (*a.stride, 0), a.offset)
    eq = K.binary("eq")(av, b)
    hit = K.reduce("any")(eq, a.ndim)
    return K.elementwise("a ^ 1u", np.dtype(bool), [("a", hit, hit.dtype)], hit.shape) if invert else hit


def isreal_kernel(a: WArray) -> WArray:
    """Every real element is real (complex tensors do not reach the device)."""
    return K.full(a.shape, True, np.dtype(bool))


def table() -> dict[str, Callable[..., Any]]:
    """The kernels of this module by primitive name, for :func:`.kernels.register`."""
    return {
        **{name: _float_unary(name, expr) for name, expr in UNARY.items()},
        **{name: _float_binary(name, expr) for name, expr in BINARY.items()},
        "polygamma": polygamma_kernel,
        "nan_to_num": nan_to_num_kernel,
        "nextafter": nextafter_kernel,
        "frexp_exponent": frexp_exponent_kernel,
        "bitwise_left_shift": _shift(True),
        "bitwise_right_shift": _shift(False),
        "isin": isin_kernel,
        "isreal": isreal_kernel,
        "conj_physical": K.contiguous_copy,  # complex tensors do not reach the device: a real one's copy
    }



