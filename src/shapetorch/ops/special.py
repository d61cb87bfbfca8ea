"""Special functions and the unary pointwise leftovers: erf, erfc, erfinv, lgamma, digamma, i0, sinc,
angle, conj_physical, deg2rad, rad2deg, frexp, nan_to_num, positive.

NumPy has no erf/lgamma/digamma/erfinv, so they come from ``scipy.special``'s ufuncs (ulp-accurate and
vectorised; imported on first use). The modified Bessel functions and polygamma are float64 algorithms
from series and asymptotic expansions with exact coefficients, matching torch's Cephes kernels at the
edges (nan at +-inf). Every kernel computes in float64 and rounds once to the input's dtype.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._engine.backward import Node, should_compute_output
from .._engine.primitives import PRIMS, Prim
from .._errors import fail
from .._tensor import Tensor
from ._common import cast, default_float, make_inplace, write_inplace
from ._elementwise import _conj, _unary, _where
from ._jvp import unary, via_vjp
from ._registry import method, public

_SQRT_PI = math.sqrt(math.pi)
_2_SQRT_PI = 2.0 / _SQRT_PI


# -- float64 algorithms ---------------------------------------------------------------------------------

def _scipy_special() -> Any:
    import scipy.special  # on the first call: ``import shapetorch`` does not load scipy

    return scipy.special


def erf64(x: Any) -> Any:
    return _scipy_special().erf(np.asarray(x, dtype=np.float64))


def erfc64(x: Any) -> Any:
    return _scipy_special().erfc(np.asarray(x, dtype=np.float64))


def erfinv64(x: Any) -> Any:
    return _scipy_special().erfinv(np.asarray(x, dtype=np.float64))


def lgamma64(x: Any) -> Any:
    x = np.asarray(x, dtype=np.float64)
    out = np.array(_scipy_special().gammaln(x), dtype=np.float64)  # (an array even for a 0-d input)
    out[x == -np.inf] = np.inf  # as torch
    # near 0, lgamma(x) = -log|x| - gamma x + ...; scipy overflows computing 1/x for subnormal x, torch does not
    tiny = (x != 0) & (np.abs(x) < 1e-100)
    out[tiny] = -np.log(np.abs(x[tiny]))
    return out


def digamma64(x: Any) -> Any:
    return _scipy_special().psi(np.asarray(x, dtype=np.float64))  # -inf at +0, +inf at -0, nan at poles: as torch


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


_ERF = Prim("erf", _real_kernel("erf", erf64),
            lambda g, n: (g * (-(n.inputs[0] * n.inputs[0])).exp() * (2.0 / math.sqrt(math.pi)),))


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


# -- torch.special's functions through scipy.special ----------------------------------------------------------------
#
# scipy.special's ufuncs (Cephes, Boost and AMOS underneath, as torch's own kernels) are imported on the first
# call, so ``import shapetorch`` does not load scipy. Each is computed in float64 and rounded to the input's dtype.

def _scipy(fn_name: str) -> Callable[..., Any]:
    def f64(*arrays: Any) -> Any:
        import scipy.special

        return getattr(scipy.special, fn_name)(*arrays)

    return f64


def _floating_operand(x: Any, op: str, device: Any = None) -> Tensor:
    """``x`` as a floating tensor; a Python number is made on ``device`` (the other operand's), as torch
    wraps a number into a scalar on the tensor's device."""
    from .creation import tensor

    t = x if isinstance(x, Tensor) else tensor(x, device=device)
    return _float_in(t, op)


def _special_unary(name: str, f64: Callable[[Any], Any], vjp: Any | None, *, save_output: bool = False,
                   doc: str = "") -> Callable[..., Tensor]:
    """``special_<name>`` (float in, float out; integers computed in the default float dtype). Without a
    ``vjp`` the result is not differentiable, as torch's is not: it never joins the graph."""
    prim = Prim(f"special_{name}", _real_kernel(name, f64), vjp, save_output=save_output)

    def fn(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        x = _floating_operand(input, name)
        r = prim(x if vjp is not None else x.detach())
        return r if out is None else write_inplace(out, r, name)

    fn.__name__ = fn.__qualname__ = f"special_{name}"
    fn.__doc__ = doc or f"``torch.special.{name}``, elementwise (scipy.special.{getattr(f64, '__name__', name)})."
    return public("pointwise", method=False)(fn)


def _erfcx_grad(g: Tensor, n: Node) -> tuple[Any, ...]:
    x = n.inputs[0]
    return (g * (2 * x * n.out - _2_SQRT_PI),)


def _i0e_grad(g: Tensor, n: Node) -> tuple[Any, ...]:
    x = n.inputs[0]
    return (g * (special_i1e(x) - x.sgn() * n.out),)


def _i1e_grad(g: Tensor, n: Node) -> tuple[Any, ...]:
    """d/dx i1e = i0e - i1e (sign(x) + 1/x), with the limit 1/2 at 0."""
    x = n.inputs[0]
    safe = _where(x == 0, x * 0 + 1, x)
    d = special_i0e(x) - n.out * (x.sgn() + 1 / safe)
    return (g * _where(x == 0, x * 0 + 0.5, d),)


def _ndtri_grad(g: Tensor, n: Node) -> tuple[Any, ...]:
    return (g * math.sqrt(2 * math.pi) * (n.out * n.out / 2).exp(),)


def _log_ndtr_grad(g: Tensor, n: Node) -> tuple[Any, ...]:
    x = n.inputs[0]
    return (g * (-(x * x) / 2 - n.out).exp() / math.sqrt(2 * math.pi),)


special_erfcx = _special_unary("erfcx", _scipy("erfcx"), _erfcx_grad, save_output=True,
                               doc="The scaled complementary error function ``exp(x^2) erfc(x)``.")
special_i0e = _special_unary("i0e", _scipy("i0e"), _i0e_grad, save_output=True,
                             doc="The exponentially scaled modified Bessel function ``exp(-|x|) I0(x)``.")
special_i1e = _special_unary("i1e", _scipy("i1e"), _i1e_grad, save_output=True,
                             doc="The exponentially scaled modified Bessel function ``exp(-|x|) I1(x)``.")
special_ndtri = _special_unary("ndtri", _scipy("ndtri"), _ndtri_grad, save_output=True,
                               doc="The inverse of the standard normal CDF.")
special_log_ndtr = _special_unary("log_ndtr", _scipy("log_ndtr"), _log_ndtr_grad, save_output=True,
                                  doc="log of the standard normal CDF, accurate far into the left tail.")
# torch gives these no derivative: their results are plain tensors
special_bessel_j0 = _special_unary("bessel_j0", _scipy("j0"), None)
special_bessel_j1 = _special_unary("bessel_j1", _scipy("j1"), None)
special_bessel_y0 = _special_unary("bessel_y0", _scipy("y0"), None)
special_bessel_y1 = _special_unary("bessel_y1", _scipy("y1"), None)
special_modified_bessel_i0 = _special_unary("modified_bessel_i0", _scipy("i0"), None)
special_modified_bessel_i1 = _special_unary("modified_bessel_i1", _scipy("i1"), None)
special_modified_bessel_k0 = _special_unary("modified_bessel_k0", _scipy("k0"), None)
special_modified_bessel_k1 = _special_unary("modified_bessel_k1", _scipy("k1"), None)
special_scaled_modified_bessel_k0 = _special_unary("scaled_modified_bessel_k0", _scipy("k0e"), None)
special_scaled_modified_bessel_k1 = _special_unary("scaled_modified_bessel_k1", _scipy("k1e"), None)
special_spherical_bessel_j0 = _special_unary("spherical_bessel_j0", lambda x: np.sinc(x / math.pi), None)


def _airy_ai(x: Any) -> Any:
    import scipy.special

    return scipy.special.airy(x)[0]


special_airy_ai = _special_unary("airy_ai", _airy_ai, None)


def _binary_operands(a: Any, b: Any, op: str) -> tuple[Tensor, Tensor]:
    from ._common import promoted

    common = promoted(a, b)
    if common in ("bool", "uint8", "int8", "int16", "int32", "int64"):
        common = default_float()
    device = a.device if isinstance(a, Tensor) else b.device if isinstance(b, Tensor) else None
    ta, tb = (_floating_operand(v, op, device) for v in (a, b))
    return cast(ta, common), cast(tb, common)


def _zeta_kernel(x: Any, q: Any) -> Any:
    import scipy.special

    return np.asarray(scipy.special.zeta(x.astype(np.float64), q.astype(np.float64))).astype(x.dtype)


_ZETA = Prim("special_zeta", _zeta_kernel, None)


@public("pointwise", method=False)
def special_zeta(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    """The Hurwitz zeta function ``sum_k (k + other)^-input``. As torch's, its result is in the graph but
    backward through it raises (no derivative is implemented)."""
    x, q = _binary_operands(input, other, "zeta")
    r = _ZETA(x, q)
    return r if out is None else write_inplace(out, r, "zeta")


# -- orthogonal polynomials: three-term recurrences in float64 (torch: integer degree n, zero for n < 0) -------------

def _recurrence(p0: Callable[[Any], Any], p1: Callable[[Any], Any],
                step: Callable[[Any, Any, Any, int], Any]) -> Callable[[Any, Any], Any]:
    def evaluate(x: Any, n: Any) -> Any:
        x, n = np.broadcast_arrays(x.astype(np.float64), np.trunc(n.astype(np.float64)))
        out = np.zeros(x.shape)
        top = int(n.max()) if n.size else 0
        prev, cur = p0(x), p1(x)
        out = np.where(n == 0, prev, out)
        out = np.where(n == 1, cur, out)
        for k in range(1, top):
            prev, cur = cur, step(x, cur, prev, k)
            out = np.where(n == k + 1, cur, out)
        return out

    return evaluate


_POLYNOMIALS: dict[str, Callable[[Any, Any], Any]] = {
    "chebyshev_polynomial_t": _recurrence(np.ones_like, lambda x: x, lambda x, c, p, k: 2 * x * c - p),
    "chebyshev_polynomial_u": _recurrence(np.ones_like, lambda x: 2 * x, lambda x, c, p, k: 2 * x * c - p),
    "chebyshev_polynomial_v": _recurrence(np.ones_like, lambda x: 2 * x - 1, lambda x, c, p, k: 2 * x * c - p),
    "chebyshev_polynomial_w": _recurrence(np.ones_like, lambda x: 2 * x + 1, lambda x, c, p, k: 2 * x * c - p),
    "hermite_polynomial_h": _recurrence(np.ones_like, lambda x: 2 * x, lambda x, c, p, k: 2 * x * c - 2 * k * p),
    "hermite_polynomial_he": _recurrence(np.ones_like, lambda x: x, lambda x, c, p, k: x * c - k * p),
    "laguerre_polynomial_l": _recurrence(np.ones_like, lambda x: 1 - x,
                                         lambda x, c, p, k: ((2 * k + 1 - x) * c - k * p) / (k + 1)),
    "legendre_polynomial_p": _recurrence(np.ones_like, lambda x: x,
                                         lambda x, c, p, k: ((2 * k + 1) * x * c - k * p) / (k + 1)),
}
def _shifted(plain: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """The shifted Chebyshev polynomials: the plain ones at 2x - 1."""
    return lambda x, n: plain(2 * x.astype(np.float64) - 1, n)


for _kind in "tuvw":
    _POLYNOMIALS[f"shifted_chebyshev_polynomial_{_kind}"] = _shifted(_POLYNOMIALS[f"chebyshev_polynomial_{_kind}"])


def _polynomial(name: str) -> Callable[..., Tensor]:
    evaluate = _POLYNOMIALS[name]
    prim = Prim(f"special_{name}", lambda x, n: evaluate(x, n).astype(x.dtype), None)

    def fn(input: Any, n: Any, *, out: Tensor | None = None) -> Tensor:
        x, k = _binary_operands(input, n, name)
        r = prim(x.detach(), k.detach())
        return r if out is None else write_inplace(out, r, name)

    fn.__name__ = fn.__qualname__ = f"special_{name}"
    fn.__doc__ = f"``torch.special.{name}(input, n)``: the polynomial of integer degree ``n`` at ``input``."
    return public("pointwise", method=False)(fn)


special_chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t")
special_chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u")
special_chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v")
special_chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w")
special_shifted_chebyshev_polynomial_t = _polynomial("shifted_chebyshev_polynomial_t")
special_shifted_chebyshev_polynomial_u = _polynomial("shifted_chebyshev_polynomial_u")
special_shifted_chebyshev_polynomial_v = _polynomial("shifted_chebyshev_polynomial_v")
special_shifted_chebyshev_polynomial_w = _polynomial("shifted_chebyshev_polynomial_w")
special_hermite_polynomial_h = _polynomial("hermite_polynomial_h")
special_hermite_polynomial_he = _polynomial("hermite_polynomial_he")
special_laguerre_polynomial_l = _polynomial("laguerre_polynomial_l")
special_legendre_polynomial_p = _polynomial("legendre_polynomial_p")


# -- composites ---------------------------------------------------------------------------------------------------

@public("pointwise", method=False)
def special_ndtr(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The standard normal CDF ``(1 + erf(x / sqrt 2)) / 2`` (as erfc, accurate in the left tail)."""
    r = erfc(-_floating_operand(input, "ndtr") * (1 / math.sqrt(2))) * 0.5
    return r if out is None else write_inplace(out, r, "ndtr")


def _logit_vjp(g: Tensor, n: Node) -> tuple[Any, ...]:
    """``g / (x (1 - x))``, and nan outside [0, 1] as torch's (where the log's argument is negative). The NaN is a
    constant, not ``x * nan``: its gradient would be NaN at every element of a double backward (where's unselected
    branch gets a zero cotangent, and 0 * NaN is NaN), so logit(x, eps)'s second derivative was NaN inside too."""
    x = n.inputs[0]
    outside = (x < 0) | (x > 1)
    return (_where(outside, math.nan, g / (x * (1 - x))),)


_LOGIT = Prim("logit", lambda a: np.log(a / (1 - a)).astype(a.dtype), _logit_vjp)


@public("pointwise")
def logit(input: Tensor, eps: float | None = None, *, out: Tensor | None = None) -> Tensor:
    """``log(p / (1 - p))``, with p clamped to [eps, 1 - eps] when eps is given."""
    x = _floating_operand(input, "logit")
    if eps is not None:
        x = x.clamp(eps, 1 - eps)
    r = _LOGIT(x)
    return r if out is None else write_inplace(out, r, "logit")


method("logit_", make_inplace(logit, "logit_"))


@public("pointwise", method=False)
def special_entr(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``-x log x`` (0 at 0, -inf below 0)."""
    x = _floating_operand(input, "entr")
    safe = _where(x > 0, x, x * 0 + 1)
    r = _where(x > 0, -x * safe.log(), _where(x == 0, x * 0, x * 0 - math.inf))
    r = _where(x.isnan(), x, r)
    return r if out is None else write_inplace(out, r, "entr")


@public("pointwise", method=False)
def special_xlog1py(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    """``input * log1p(other)``, 0 where input is 0 (unless other is nan)."""
    x, y = _binary_operands(input, other, "xlog1py")
    r = _where((x == 0) & ~y.isnan(), x * 0, x * y.log1p())
    return r if out is None else write_inplace(out, r, "xlog1py")


@public("pointwise")
def polygamma(n: int, input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The n-th derivative of digamma (n = 0 is digamma itself)."""
    if not isinstance(n, int) or n < 0:
        fail("argument_error_invalid", op="polygamma", problem=f"polygamma(n, x) does not support negative n (got {n})")
    x = _floating_operand(input, "polygamma")
    r = digamma(x) if n == 0 else _POLYGAMMA(x, n=n)
    return r if out is None else write_inplace(out, r, "polygamma")


@public("pointwise")
def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The log of the multivariate gamma function of dimension ``p``; every element must exceed (p - 1) / 2."""
    x = _floating_operand(input, "mvlgamma")
    if p < 1:
        fail("argument_error_invalid", op="mvlgamma", problem=f"p has to be greater than or equal to 1 (got {p})")
    if bool((x <= (p - 1) / 2).any()):
        fail("argument_error_invalid", op="mvlgamma",
             problem=f"All elements must be greater than (p-1)/2 (got p={p})")
    from .creation import arange

    shifts = arange(p, dtype=x.dtype) * -0.5
    r: Tensor = lgamma(x.unsqueeze(-1) + shifts).sum(-1) + p * (p - 1) / 4 * math.log(math.pi)
    return r


@public("pointwise", method=False)
def special_i1(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The modified Bessel function of the first kind of order 1."""
    r = _I1(_floating_operand(input, "i1"))
    return r if out is None else write_inplace(out, r, "i1")


def _gammainc_kernel(name: str) -> Callable[..., Any]:
    def kernel(a: Any, x: Any) -> Any:
        import scipy.special

        return np.asarray(getattr(scipy.special, name)(a.astype(np.float64), x.astype(np.float64))).astype(a.dtype)

    return kernel


def _gammainc_vjp(sign: float, op: str) -> Any:
    """Only ``other`` (x) has a derivative in torch: ``+-x^(a-1) e^-x / Gamma(a)``; ``input`` is refused at
    backward when this backward needs its gradient, as torch's not_implemented derivative (``autograd.grad``
    with respect to ``other`` alone computes it)."""

    def vjp(g: Tensor, n: Node) -> tuple[Any, ...]:
        a, x = n.inputs
        if should_compute_output(n, 0):
            fail("autograd_derivative_not_implemented", op=op, what=f"{op}: input")
        if not should_compute_output(n, 1):
            return None, None
        density = ((a - 1) * x.log() - x - lgamma(a)).exp()
        return None, g * density * sign

    return vjp


_GAMMAINC = Prim("special_gammainc", _gammainc_kernel("gammainc"), _gammainc_vjp(1.0, "igamma"))
_GAMMAINCC = Prim("special_gammaincc", _gammainc_kernel("gammaincc"), _gammainc_vjp(-1.0, "igammac"))


def _no_bool(a: Any, x: Any, op: str) -> None:
    """torch's igamma kernels are floating only: two integer or bool tensors are refused (torch does not promote
    them to float)."""
    if all(isinstance(t, Tensor) and not t.is_floating_point() for t in (a, x)):
        fail("method_dtype_not_supported_error", op=op, dtype=a.dtype.name, hint="")


@public("pointwise", method=False)
def special_gammainc(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    """The regularized lower incomplete gamma function P(input, other)."""
    _no_bool(input, other, "gammainc")
    a, x = _binary_operands(input, other, "gammainc")
    r = _GAMMAINC(a, x)
    return r if out is None else write_inplace(out, r, "gammainc")


@public("pointwise", method=False)
def special_gammaincc(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P(input, other)."""
    _no_bool(input, other, "gammaincc")
    a, x = _binary_operands(input, other, "gammaincc")
    r = _GAMMAINCC(a, x)
    return r if out is None else write_inplace(out, r, "gammaincc")


method("polygamma_", lambda self, n: write_inplace(self, polygamma(n, self), "polygamma_"))
method("mvlgamma_", lambda self, p: write_inplace(self, mvlgamma(self, p), "mvlgamma_"))
