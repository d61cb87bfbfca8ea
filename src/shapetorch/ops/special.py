"""Special functions and the unary pointwise leftovers: erf, erfc, erfinv, lgamma, digamma, i0, sinc,
angle, conj_physical, deg2rad, rad2deg, frexp, nan_to_num, positive.

NumPy has no erf/lgamma/digamma/erfinv/i0, so the kernels below are vectorised float64 algorithms
built from series, continued fractions and asymptotic expansions whose coefficients are exact
rationals (Bernoulli numbers, factorials) or computed here (zeta values), then rounded to the
input's dtype. Half-precision inputs are computed in float64 and rounded once.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._engine.backward import Node
from .._engine.primitives import PRIMS, Prim
from .._errors import fail
from .._tensor import Tensor
from ._common import cast, default_float, make_inplace, write_inplace
from ._elementwise import _conj, _unary, _where
from ._jvp import unary, via_vjp
from ._registry import method, public
from .activation import _ERF

_SQRT_PI = math.sqrt(math.pi)
_2_SQRT_PI = 2.0 / _SQRT_PI
_EULER = 0.57721566490153286061


# -- float64 algorithms ---------------------------------------------------------------------------------

def _erf_series(x: Any) -> Any:
    """erf(x) = 2/sqrt(pi) exp(-x^2) sum_n 2^n x^(2n+1) / (2n+1)!!: every term positive, so no cancellation."""
    x2 = x * x
    term = x.copy()
    total = x.copy()
    # the terms fall below 1e-17 of the sum after about 2 x^2 + 30 of them
    steps = int(2 * float(x2.max()) + 32) if x.size else 0
    for n in range(1, min(steps, 90)):
        term = term * (2.0 * x2 / (2 * n + 1))
        total += term
    return _2_SQRT_PI * np.exp(-x2) * total


def _erfc_cf(x: Any) -> Any:
    """erfc(x), x >= 1.5, by Laplace's continued fraction exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + ...)))."""
    f = x.copy()
    lo = float(x.min()) if x.size else 30.0
    for k in range(120 if lo < 2 else 60 if lo < 3 else 30, 0, -1):
        f = x + (k / 2.0) / f
    return np.exp(-x * x) / (_SQRT_PI * f)


def erf64(x: Any) -> Any:
    out = np.array(x, dtype=np.float64)
    ax = np.abs(out)
    small = ax < 2.5
    out[small] = _erf_series(out[small])
    big = ax >= 2.5
    out[big] = np.sign(out[big]) * (1.0 - _erfc_cf(np.minimum(ax[big], 30.0)))
    return out


def erfc64(x: Any) -> Any:
    x = np.asarray(x, dtype=np.float64)
    out = x.copy()
    mid = np.abs(x) < 1.5
    out[mid] = 1.0 - _erf_series(x[mid])
    hi = x >= 1.5
    out[hi] = np.where(x[hi] < 30.0, _erfc_cf(np.minimum(x[hi], 30.0)), 0.0)
    lo = x <= -1.5
    out[lo] = 2.0 - _erfc_cf(np.minimum(-x[lo], 30.0))
    return out


def erfinv64(x: Any) -> Any:
    """Winitzki's closed-form guess, then three Halley steps on erf (|x| <= 0.5) or on erfc (exact 1 - |x|)."""
    x = np.asarray(x, dtype=np.float64)
    ax = np.abs(x)
    inside = ax < 1
    y = np.where(inside, ax, 0.0)
    a = 0.147
    ln = np.log1p(-y * y)
    t = 2.0 / (math.pi * a) + ln / 2
    y = np.sqrt(np.maximum(np.sqrt(t * t - ln / a) - t, 0.0))
    tail = inside & (ax > 0.5)
    c = 1.0 - ax  # exact for ax > 0.5
    target = np.where(inside, ax, 0.0)
    for _ in range(3):
        dens = _2_SQRT_PI * np.exp(-y * y)
        resid = np.zeros_like(y)
        resid[tail] = c[tail] - erfc64(y[tail])
        resid[~tail] = erf64(y[~tail]) - target[~tail]
        delta = np.where(dens > 0, resid / np.where(dens > 0, dens, 1.0), 0.0)
        y = y - delta / (1.0 + y * delta)
    y = np.where(inside, y, np.where(ax == 1, np.inf, np.nan))
    return np.copysign(y, x)


def _zeta(k: int) -> float:
    """Riemann zeta(k), k >= 2: a partial sum with the Euler-Maclaurin tail."""
    n = 100
    s = math.fsum(m ** -float(k) for m in range(1, n))
    tail = n ** (1.0 - k) / (k - 1) + 0.5 * n ** -float(k) + k * n ** (-k - 1.0) / 12
    tail -= k * (k + 1) * (k + 2) * n ** (-k - 3.0) / 720
    return s + tail


_LGAMMA1 = [(-1) ** k * _zeta(k) / k for k in range(2, 40)]  # lgamma(1 + z) = -gamma z + sum c_k z^k
_STIRLING = [1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156, -3617 / 122400]
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _lgamma1p(z: Any) -> Any:
    """lgamma(1 + z) for |z| <= 0.25 by its Taylor series (relative accuracy at the root z = 0)."""
    acc = np.zeros_like(z)
    for c in reversed(_LGAMMA1):
        acc = (acc + c) * z
    return (acc - _EULER) * z


def _lgamma_pos(x: Any) -> Any:
    """lgamma for finite x > 0."""
    out = np.empty_like(x)
    near1 = np.abs(x - 1) <= 0.25
    near2 = np.abs(x - 2) <= 0.25
    out[near1] = _lgamma1p(x[near1] - 1)
    z = x[near2] - 2
    out[near2] = _lgamma1p(z) + np.log1p(z)
    rest = ~(near1 | near2)
    xr = x[rest]
    prod = np.ones_like(xr)
    shifted = xr.copy()
    for _ in range(10):
        low = shifted < 10
        prod = np.where(low, prod * shifted, prod)
        shifted = np.where(low, shifted + 1, shifted)
    inv = 1.0 / shifted
    inv2 = inv * inv
    series = np.zeros_like(shifted)
    for c in reversed(_STIRLING):
        series = series * inv2 + c
    stirling = (shifted - 0.5) * np.log(shifted) - shifted + _HALF_LOG_2PI + series * inv
    out[rest] = stirling - np.log(prod)
    return out


def lgamma64(x: Any) -> Any:
    x = np.asarray(x, dtype=np.float64)
    out = np.full_like(x, np.inf)
    out[np.isnan(x)] = np.nan
    pos = (x > 0) & np.isfinite(x)
    out[pos] = _lgamma_pos(x[pos])
    neg = (x < 0) & np.isfinite(x) & (x != np.floor(x))
    xn = x[neg]
    frac = xn - np.round(xn)  # in [-1/2, 1/2]: sin(pi frac) keeps its relative accuracy near the poles
    out[neg] = np.log(math.pi / np.abs(np.sin(math.pi * frac))) - _lgamma_pos(1.0 - xn)
    return out


def _digamma_pos(x: Any) -> Any:
    acc = np.zeros_like(x)
    shifted = x.copy()
    for _ in range(10):
        low = shifted < 10
        acc = np.where(low, acc - 1.0 / np.where(low, shifted, 1.0), acc)
        shifted = np.where(low, shifted + 1, shifted)
    inv2 = 1.0 / (shifted * shifted)
    series = np.zeros_like(shifted)
    for c in (-1 / 12, 691 / 32760, -1 / 132, 1 / 240, -1 / 252, 1 / 120, -1 / 12):
        series = series * inv2 + c
    return acc + np.log(shifted) - 0.5 / shifted + series * inv2


def digamma64(x: Any) -> Any:
    x = np.asarray(x, dtype=np.float64)
    out = np.full_like(x, np.nan)
    out[x == np.inf] = np.inf
    zero = x == 0
    out[zero] = np.copysign(np.inf, -x[zero])  # as torch: -inf at +0, +inf at -0
    pos = (x > 0) & np.isfinite(x)
    out[pos] = _digamma_pos(x[pos])
    neg = (x < 0) & np.isfinite(x) & (x != np.floor(x))
    xn = x[neg]
    frac = xn - np.round(xn)  # tan has period pi; [-1/2, 1/2] keeps the accuracy near the poles
    out[neg] = _digamma_pos(1.0 - xn) - math.pi / np.tan(math.pi * frac)
    return out


def _bessel_i(x: Any, nu: int) -> Any:
    """I_nu(|x|), nu in {0, 1}: the power series below 30, Hankel's asymptotic expansion above."""
    ax = np.abs(np.asarray(x, dtype=np.float64))
    out = np.empty_like(ax)
    small = ax < 30
    xs = ax[small]
    q = xs * xs / 4
    term = np.ones_like(xs) if nu == 0 else xs / 2
    total = term.copy()
    for k in range(1, 90):
        term = term * q / (k * (k + nu))
        total += term
    out[small] = total
    xb = ax[~small]
    mu = 4.0 * nu * nu
    term = np.ones_like(xb)
    total = term.copy()
    for k in range(1, 30):
        term = term * -(mu - (2 * k - 1) ** 2) / (k * 8.0 * xb)
        total += term
    # e^x first, as torch's Cephes kernel: inf above ~709.78, and nan at +-inf (inf / inf)
    out[~small] = np.exp(xb) * total / np.sqrt(2 * math.pi * xb)
    return out


def i0_64(x: Any) -> Any:
    return _bessel_i(x, 0)


def i1_64(x: Any) -> Any:
    x = np.asarray(x, dtype=np.float64)
    return np.copysign(_bessel_i(x, 1), x)


# -- kernels: reject complex, compute in float64, round to the input dtype -------------------------------

def _real_kernel(name: str, f64: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def kernel(a: Any) -> Any:
        if a.dtype.kind == "c":
            fail("method_dtype_not_supported_error", op=name, dtype=str(a.dtype), hint="")
        return np.asarray(f64(a.astype(np.float64)), dtype=np.float64).astype(a.dtype)

    kernel.__name__ = f"_{name}_kernel"
    return kernel


def _float_in(x: Tensor, op: str) -> Tensor:
    if x.is_complex():
        fail("method_dtype_not_supported_error", op=op, dtype=x.dtype.name, hint="")
    return cast(x, default_float()) if x._data.dtype.kind in "biu" else x


# erf is the primitive nn's gelu already uses; it gets the vectorised kernel here (same values as math.erf)
_ERF.kernels["cpu"] = _real_kernel("erf", erf64)


@public("pointwise")
def erf(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The error function, as ``torch.erf``."""
    r = _ERF(_float_in(input, "erf"))
    return r if out is None else write_inplace(out, r, "erf")


method("erf_", make_inplace(erf, "erf_"))


def _exp_neg_sq(x: Any) -> Any:
    return (-(x * x)).exp()


erfc = _unary("erfc", _real_kernel("erfc", erfc64), lambda g, n: (-g * _exp_neg_sq(n.inputs[0]) * _2_SQRT_PI,))
erfinv = _unary("erfinv", _real_kernel("erfinv", erfinv64),
                lambda g, n: (g * (n.out * n.out).exp() * (_SQRT_PI / 2),), save_output=True)
def _i1_grad(g: Tensor, n: Node) -> tuple[Any, ...]:
    """d/dx I1(x) = I0(x) - I1(x)/x, with the limit 1/2 at 0."""
    x = n.inputs[0]
    safe = _where(x == 0, x * 0 + 1, x)
    return (g * _where(x == 0, x * 0 + 0.5, i0(x) - _I1(x) / safe),)


_I1 = Prim("special_i1", _real_kernel("i1", i1_64), _i1_grad)
i0 = _unary("i0", _real_kernel("i0", i0_64), lambda g, n: (g * _I1(n.inputs[0]),))
_BERNOULLI = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798]  # B_2 .. B_18


def polygamma64(n: int, x: Any) -> Any:
    """psi^(n)(x), n >= 1: the shift sum (-1)^(n+1) n! sum 1/(x+k)^(n+1), then the asymptotic series with
    Bernoulli numbers; reflection through d^n/dx^n (pi cot(pi x)) is not needed for torch's n >= 1 at x > 0,
    and x <= 0 uses the shift sum alone over more terms."""
    x = np.asarray(x, dtype=np.float64)
    out = np.full_like(x, np.nan)
    sign = -1.0 if n % 2 == 0 else 1.0
    fact = math.factorial(n)
    ok = np.isfinite(x) & ~((x <= 0) & (x == np.floor(x)))
    xs = x[ok]
    acc = np.zeros_like(xs)
    for _ in range(20):
        low = xs < 20
        acc = np.where(low, acc + 1.0 / np.where(low, xs, 1.0) ** (n + 1), acc)
        xs = np.where(low, xs + 1, xs)
    neg = xs < 20  # x far below 0: keep shifting (rare)
    while neg.any():
        acc = np.where(neg, acc + 1.0 / np.where(neg, xs, 1.0) ** (n + 1), acc)
        xs = np.where(neg, xs + 1, xs)
        neg = xs < 20
    inv = 1.0 / xs
    series = math.factorial(n - 1) * inv ** n + fact * 0.5 * inv ** (n + 1)
    for k, b in enumerate(_BERNOULLI, start=1):
        series = series + b * math.factorial(2 * k + n - 1) / math.factorial(2 * k) * inv ** (2 * k + n)
    out[ok] = sign * (fact * acc + series)
    out[x == np.inf] = 0.0
    poles = (x <= 0) & (x == np.floor(x))
    out[poles] = np.inf if n % 2 else -np.inf
    return out


def _polygamma_kernel(a: Any, n: int) -> Any:
    return np.asarray(polygamma64(n, a.astype(np.float64))).astype(a.dtype)


_POLYGAMMA: Prim
_POLYGAMMA = Prim("polygamma", _polygamma_kernel,
                  lambda g, node: (g * _POLYGAMMA(node.inputs[0], n=node.params["n"] + 1),))
digamma = _unary("digamma", _real_kernel("digamma", digamma64), lambda g, n: (g * _POLYGAMMA(n.inputs[0], n=1),))
lgamma = _unary("lgamma", _real_kernel("lgamma", lgamma64), lambda g, n: (g * digamma(n.inputs[0]),))




def _sinc_vjp(g: Tensor, n: Node) -> tuple[Any, ...]:
    x = n.inputs[0]
    px = x * math.pi
    safe = _where(x == 0, x * 0 + 1, x)
    d = (px.cos() * math.pi - n.out * math.pi) / (safe * math.pi)
    return (g * _conj(_where(x == 0, x * 0, d)),)


def _sinc_kernel(a: Any) -> Any:
    return np.sinc(a).astype(a.dtype)


sinc = _unary("sinc", _sinc_kernel, _sinc_vjp, save_output=True)


# -- forward-mode rules ----------------------------------------------------------------------------------

def _sinc_jvp(t: Tensor, n: Any) -> Any:
    x = n.inputs[0]
    safe = _where(x == 0, x * 0 + 1, x)
    return t * _where(x == 0, x * 0, ((x * math.pi).cos() - n.out) / safe)


via_vjp("erfc", "erfinv", "lgamma", "digamma", "polygamma", "i0", "special_i1")
PRIMS["sinc"].jvp = unary(_sinc_jvp)
