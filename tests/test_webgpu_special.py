"""The WebGPU kernels of the special functions and elementwise leftovers (``backends/webgpu/special_kernels``)
against torch on the CPU: values over each function's regions and edges, hypothesis over shapes and layouts,
gradients through the existing vjps, and the refusals (an int64 shift leaving int32, a degree past the loop bound).

The reference is torch's float64 result rounded to float32: the device computes in float32 with its own
algorithms, and torch's float32 kernels are themselves off by more than that in places (``polygamma(1, x)``
near a pole, the shifted Chebyshev polynomials near their ends), so the float32 truth is the fair target. The
tolerance is torch's float32 ``atol`` (1e-5) with ``rtol`` 1e-5 (not torch's 1.3e-6): lavapipe's ``exp``,
``log`` and ``pow`` are not correctly rounded, and results built on ``exp(x)`` for |x| near 40 carry that
(about 2.4e-6 measured). Skipped without a WebGPU adapter unless SHAPETORCH_REQUIRE_WEBGPU=1.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
from _oracle import fast, shapes
from test_webgpu import webgpu  # noqa: F401  (the module fixture: skip or fail without an adapter)

DEV = "webgpu"


def _values(seed: int = 0) -> np.ndarray:
    """Normal and wide uniform draws, the Hankel thresholds' neighbourhoods, and the IEEE edges."""
    rng = np.random.default_rng(seed)
    edges = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 1e-6, -1e-6, 1e-30, 29.9, 30.1, 24.9, 25.1, 1.9, 2.1,
             -3.5, 60.0, 100.0, -100.0, np.inf, -np.inf, np.nan]
    return np.concatenate([rng.normal(size=150) * 3, rng.uniform(-40, 40, 150), edges]).astype(np.float32)


def _unit(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    edges = [0.0, 1.0, 0.5, 1e-7, 1 - 1e-7, 0.02, 0.98, 1e-30, -0.1, 1.1, np.nan]
    return np.concatenate([rng.uniform(0, 1, 150), 10.0 ** rng.uniform(-30, -1, 50), edges]).astype(np.float32)


def _symmetric(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    edges = [0.0, -0.0, 1.0, -1.0, 0.9999, -0.99999, 1e-5, -1e-8, 0.5, -0.5, 0.999, 1.5, np.nan]
    return np.concatenate([rng.uniform(-1, 1, 150), 1 - 10.0 ** rng.uniform(-7, -1, 30), edges]).astype(np.float32)


def _device(x: np.ndarray) -> st.Tensor:
    return st.tensor(x, device=DEV)


def _assert_close(got: st.Tensor, want: torch.Tensor, rtol: float = 1e-5, atol: float = 1e-5,
                  what: str = "") -> None:
    """``got`` (on the device) against torch's float64 ``want``: the float32 truth within the tolerance;
    inf/nan where torch's is."""
    assert got.device == st.device(DEV)
    g = got.cpu().numpy().astype(np.float64)
    w = want.detach().to(torch.float32).to(torch.float64).numpy()
    assert g.shape == w.shape, what
    same = (g == w) | (np.isnan(g) & np.isnan(w))
    with np.errstate(invalid="ignore"):  # inf - inf where both are infinite (``same`` covers them)
        close = np.isfinite(w) & (np.abs(g - w) <= atol + rtol * np.abs(w))
    bad = ~(same | close)
    assert not bad.any(), f"{what}: {bad.sum()} of {bad.size} differ, e.g. (got, want) " \
        f"{list(zip(g[bad][:4], w[bad][:4]))}"


def _airy(seed: int = 0) -> np.ndarray:
    """Both sides of the branch points -5 and 0; down to -30 (below, the float32 phase (2/3) |x|^(3/2) of the
    oscillation carries more than float32's rounding)."""
    rng = np.random.default_rng(seed)
    edges = [0.0, -0.0, -5.0, -5.0001, -4.9999, 1e-6, -1e-6, -0.25, -0.75, 20.0, 110.0, np.inf, -np.inf, np.nan]
    return np.concatenate([rng.uniform(-30, 10, 300), edges]).astype(np.float32)


# name -> (shapetorch function, torch function, inputs, rtol)
UNARY: dict[str, tuple[Callable[..., Any], Callable[..., Any], Callable[[], np.ndarray], float]] = {
    "logit": (st.logit, torch.logit, _unit, 1e-5),
    "lgamma": (st.lgamma, torch.lgamma, _values, 1e-5),
    "digamma": (st.digamma, torch.digamma, _values, 1e-5),
    "erfinv": (st.erfinv, torch.erfinv, _symmetric, 1e-5),
    "i0": (st.i0, torch.i0, _values, 1e-5),
    **{name: (getattr(st.special, name), getattr(torch.special, name), _values, 1e-5)
       for name in ("i0e", "i1", "i1e", "log_ndtr", "erfcx", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
                    "modified_bessel_i0",
                    "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
                    "scaled_modified_bessel_k1", "spherical_bessel_j0")},
    "ndtri": (st.special.ndtri, torch.special.ndtri, _unit, 1e-5),
    "airy_ai": (st.special.airy_ai, torch.special.airy_ai, _airy, 1e-5),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_special_unary_values(name):
    ours, theirs, inputs, rtol = UNARY[name]
    x = inputs()
    if name.startswith("bessel_"):
        x = x[np.abs(x) != np.inf]  # torch's nan at +-inf is checked below
    if name.startswith("bessel_y"):  # Miller's recurrence's range, its small-x branch and Hankel's
        x = np.concatenate([x, 10.0 ** np.random.default_rng(9).uniform(-6, 1.4, 200)]).astype(np.float32)
    _assert_close(ours(_device(x)), theirs(torch.tensor(x, dtype=torch.float64)), rtol=rtol, what=name)


def test_bessel_at_infinity_is_nan_as_torch():
    x = np.array([np.inf, -np.inf], np.float32)
    for name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"):
        assert np.isnan(getattr(st.special, name)(_device(x)).cpu().numpy()).all()
        assert torch.isnan(getattr(torch.special, name)(torch.tensor(x))).all()


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_polygamma_values(n):
    x = _values()
    if n == 1:  # torch's float32 trigamma gives a huge finite value at a pole, its float64 one inf; we give inf
        x = x[~((x <= 0) & (x == np.floor(x)) & np.isfinite(x))]
    _assert_close(st.polygamma(n, _device(x)), torch.polygamma(n, torch.tensor(x, dtype=torch.float64)),
                  what=f"polygamma({n})")
    # the float32 reference itself where it is exact: +inf
    inf = np.array([np.inf], np.float32)
    np.testing.assert_array_equal(st.polygamma(n, _device(inf)).cpu().numpy(),
                                  torch.polygamma(n, torch.tensor(inf)).numpy())


def test_zeta_values():
    rng = np.random.default_rng(1)
    s = np.concatenate([np.abs(rng.normal(size=150)) * 5 + 1, [1.0, 0.5, 2.0, 3.0, 2.0, 4.0, 2.0, 3.0]])
    q = np.concatenate([np.abs(rng.normal(size=150)) * 10 + 0.1, [2.0, 2.0, 0.0, -1.0, -1.5, -2.5, np.inf, 1e4]])
    s, q = s.astype(np.float32), q.astype(np.float32)
    _assert_close(st.special.zeta(_device(s), _device(q)),
                  torch.special.zeta(torch.tensor(s, dtype=torch.float64), torch.tensor(q, dtype=torch.float64)),
                  what="zeta")


@pytest.mark.parametrize("hi", [1.0, 20.0, 1000.0])
def test_incomplete_gamma_values(hi):
    """P and Q over a in (0, hi], x in [0, 2 hi], and torch's edges (nan for a or x below 0, 0/0 and inf/inf)."""
    rng = np.random.default_rng(int(hi))
    inf, nan = np.inf, np.nan
    a = np.concatenate([rng.uniform(0.01, hi, 200), [0, 0, 1, 1, -1, 1, inf, inf, 2, 0.5, 1, nan, 1]])
    x = np.concatenate([rng.uniform(0, 2 * hi, 200), [0, 1, 0, inf, 1, -1, 1, inf, inf, nan, 1e-30, 1, 100]])
    a, x = a.astype(np.float32), x.astype(np.float32)
    for name in ("gammainc", "gammaincc"):
        got = getattr(st.special, name)(_device(a), _device(x))
        want = getattr(torch.special, name)(torch.tensor(a, dtype=torch.float64), torch.tensor(x, dtype=torch.float64))
        # a probability: torch's float32 atol; rtol 1e-4 for the smallest tails (a product of exp and a series)
        _assert_close(got, want, rtol=1e-4, atol=1e-5, what=name)


def test_incomplete_gamma_gradient_on_the_device():
    rng = np.random.default_rng(6)
    a = rng.uniform(0.5, 5, 8).astype(np.float32)
    x = rng.uniform(0.1, 6, 8).astype(np.float32)
    for name in ("gammainc", "gammaincc"):
        xs = st.tensor(x, device=DEV, requires_grad=True)
        xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        getattr(st.special, name)(_device(a), xs).sum().backward()
        getattr(torch.special, name)(torch.tensor(a, dtype=torch.float64), xt).sum().backward()
        assert xs.grad is not None and xs.grad.device == st.device(DEV)
        _assert_close(xs.grad, xt.grad, rtol=1e-4, atol=1e-5, what=f"grad {name}")


POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
               "legendre_polynomial_p", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
               "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w"]


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_orthogonal_polynomials(name):
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.uniform(-1.2, 1.2, 200), [0.0, 1.0, -1.0, 0.5]]).astype(np.float32)
    n = rng.integers(-2, 12, x.shape).astype(np.float32)
    got = getattr(st.special, name)(_device(x), _device(n))
    want = getattr(torch.special, name)(torch.tensor(x, dtype=torch.float64), torch.tensor(n, dtype=torch.float64))
    # a recurrence of up to 11 float32 steps: each rounds, and the values reach ~1e5 (Hermite)
    _assert_close(got, want, rtol=1e-4, atol=1e-4, what=name)
    # a Python number of degree, as torch allows
    _assert_close(getattr(st.special, name)(_device(x), 3),
                  getattr(torch.special, name)(torch.tensor(x, dtype=torch.float64), 3), rtol=1e-4, what=name)


def test_polynomial_degree_past_the_loop_bound_is_refused():
    """One recurrence step per degree: a degree over 65,535 raises device_error_limit at the next sync, and the
    runtime goes on."""
    x = _device(np.array([0.5, 0.25], np.float32))
    r = st.special.legendre_polynomial_p(x, _device(np.array([3.0, 70000.0], np.float32)))
    with pytest.raises(st.DeviceError) as e:
        r.cpu()
    assert e.value.code == "device_error_limit" and "65,535" in str(e.value)
    ok = st.special.legendre_polynomial_p(x, 3).cpu().numpy()
    np.testing.assert_allclose(ok, torch.special.legendre_polynomial_p(torch.tensor([0.5, 0.25]), 3).numpy(),
                               rtol=1e-5)


@given(shape=shapes(0, 3, 0, 4), transpose=hs.booleans(), seed=hs.integers(0, 2**16))
@fast(20)
def test_special_unary_over_shapes_and_layouts(shape, transpose, seed):
    """Every shape (0-d and empty included), read contiguous or transposed in place."""
    rng = np.random.default_rng(seed)
    x = (rng.normal(size=shape) * 4).astype(np.float32)
    for name in ("lgamma", "digamma", "i0e", "erfcx", "bessel_j1"):
        ours, theirs, _, rtol = UNARY[name]
        a, t = _device(x), torch.tensor(x, dtype=torch.float64)
        if transpose and x.ndim >= 2:
            a, t = a.transpose(0, -1), t.transpose(0, -1)
        _assert_close(ours(a), theirs(t), rtol=rtol, what=f"{name} {shape}")


@given(seed=hs.integers(0, 2**16), pair=hs.sampled_from([((3, 1), (1, 4)), ((2, 3), (3,)), ((), (5,)),
                                                         ((4,), ()), ((0, 2), (1, 2))]))
@fast(15)
def test_binary_special_broadcasts(seed, pair):
    rng = np.random.default_rng(seed)
    s = (np.abs(rng.normal(size=pair[0])) * 4 + 1.1).astype(np.float32)
    q = (np.abs(rng.normal(size=pair[1])) * 4 + 0.2).astype(np.float32)
    _assert_close(st.special.zeta(_device(s), _device(q)),
                  torch.special.zeta(torch.tensor(s, dtype=torch.float64), torch.tensor(q, dtype=torch.float64)))
    _assert_close(st.nextafter(_device(s), _device(q)), torch.nextafter(torch.tensor(s), torch.tensor(q)),
                  rtol=0, atol=0)


GRADIENTS: dict[str, tuple[str, Callable[[Any, Any], Any]]] = {
    "logit": ("unit", lambda lib, x: lib.logit(x)),
    "lgamma": ("pos", lambda lib, x: lib.lgamma(x)),
    "digamma": ("pos", lambda lib, x: lib.digamma(x)),
    "polygamma": ("pos", lambda lib, x: lib.polygamma(2, x)),
    "erfinv": ("sym", lambda lib, x: lib.erfinv(x)),
    "i0": ("any", lambda lib, x: lib.i0(x)),
    "i1": ("any", lambda lib, x: lib.special.i1(x)),
    "i0e": ("any", lambda lib, x: lib.special.i0e(x)),
    "i1e": ("any", lambda lib, x: lib.special.i1e(x)),
    "ndtri": ("unit", lambda lib, x: lib.special.ndtri(x)),
    "log_ndtr": ("any", lambda lib, x: lib.special.log_ndtr(x)),
    "erfcx": ("any", lambda lib, x: lib.special.erfcx(x)),
    "nan_to_num": ("any", lambda lib, x: lib.nan_to_num(x / (x - x.round()).abs().clamp(max=0.0))),
    "frexp": ("any", lambda lib, x: lib.frexp(x)[0]),
}


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradients_run_on_the_device(name):
    """The existing vjps, composed of primitives that now have kernels, run on the device and match torch."""
    kind, fn = GRADIENTS[name]
    rng = np.random.default_rng(3)
    raw = {"unit": rng.uniform(0.05, 0.95, (3, 4)), "pos": rng.uniform(0.3, 5, (3, 4)),
           "sym": rng.uniform(-0.9, 0.9, (3, 4)), "any": rng.normal(size=(3, 4)) * 2}[kind].astype(np.float32)
    w = rng.normal(size=(3, 4)).astype(np.float32)
    x = st.tensor(raw, device=DEV, requires_grad=True)
    t = torch.tensor(raw, dtype=torch.float64, requires_grad=True)
    (fn(st, x) * _device(w)).sum().backward()
    (fn(torch, t) * torch.tensor(w, dtype=torch.float64)).sum().backward()
    assert x.grad is not None and x.grad.device == st.device(DEV)
    _assert_close(x.grad, t.grad, rtol=1e-4, atol=1e-4, what=f"grad {name}")


def test_nan_to_num_arguments_and_dtypes():
    x = np.array([np.nan, np.inf, -np.inf, 1.5, -0.0], np.float32)
    for args in ({}, {"nan": 2.0}, {"posinf": 7.0, "neginf": -3.0}, {"nan": -1.0, "posinf": 1e30}):
        np.testing.assert_array_equal(st.nan_to_num(_device(x), **args).cpu().numpy(),
                                      torch.nan_to_num(torch.tensor(x), **args).numpy())
        h = x.astype(np.float16)
        np.testing.assert_array_equal(st.nan_to_num(st.tensor(h, device=DEV), **args).cpu().numpy(),
                                      torch.nan_to_num(torch.tensor(h), **args).numpy())
    i = np.array([1, -2, 3])
    r = st.nan_to_num(_device(i))
    assert r.dtype == st.int64 and r.tolist() == [1, -2, 3]


def test_nextafter_and_frexp_bits():
    """Exact: nextafter steps one ulp (float16 in float16's ulps, zero to the smallest subnormal), frexp splits
    the bits (subnormals included)."""
    a = np.array([1.0, 1.0, 0.0, 0.0, -2.5, 3.0, np.inf, 65504.0, np.nan], np.float32)
    b = np.array([2.0, 0.0, 1.0, -1.0, 0.0, 3.0, 0.0, np.inf, 1.0], np.float32)
    for dt in (np.float32, np.float16):
        got = st.nextafter(st.tensor(a.astype(dt), device=DEV), st.tensor(b.astype(dt), device=DEV)).cpu().numpy()
        want = torch.nextafter(torch.tensor(a.astype(dt)), torch.tensor(b.astype(dt))).numpy()
        np.testing.assert_array_equal(got.view(np.uint32 if dt == np.float32 else np.uint16),
                                      want.view(np.uint32 if dt == np.float32 else np.uint16))
    x = np.array([0.0, -0.0, 1.0, 0.75, -3.0, 1e-40, -5e-45, 3e38, np.inf, -np.inf, np.nan, 1024.0], np.float32)
    for dt in (np.float32, np.float16):
        m, e = st.frexp(st.tensor(x.astype(dt), device=DEV))
        tm, te = torch.frexp(torch.tensor(x.astype(dt)))
        np.testing.assert_array_equal(m.cpu().numpy(), tm.numpy())
        np.testing.assert_array_equal(e.cpu().numpy(), te.numpy())
        assert e.dtype == st.int32


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_shifts_match_torch(dtype):
    rng = np.random.default_rng(4)
    a = rng.integers(-1000, 1000, 60)
    s = rng.integers(-3, 40 if dtype == "int32" else 20, 60)
    if dtype == "int64":
        a = a[:40] // 2**8  # small enough that a left shift by < 20 stays in int32
        s = s[:40]
    a, s = a.astype(dtype), s.astype(dtype)
    for op in ("bitwise_left_shift", "bitwise_right_shift"):
        got = getattr(st, op)(_device(a), _device(s))
        want = getattr(torch, op)(torch.tensor(a), torch.tensor(s))
        assert got.dtype == getattr(st, dtype)
        np.testing.assert_array_equal(got.cpu().numpy(), want.numpy(), err_msg=op)
    np.testing.assert_array_equal((_device(a) >> 2).cpu().numpy(), (torch.tensor(a) >> 2).numpy())
    np.testing.assert_array_equal((_device(a) << 3).cpu().numpy(), (torch.tensor(a) << 3).numpy())
    # a right shift by 32..63 of an int64 is the sign fill, as on the CPU
    big = np.array([-5, 5], np.int64)
    np.testing.assert_array_equal(st.bitwise_right_shift(_device(big), 40).cpu().numpy(),
                                  torch.bitwise_right_shift(torch.tensor(big), 40).numpy())


def test_int64_left_shift_leaving_int32_is_refused_not_wrapped():
    """int64 is stored as int32 on the device: a shift whose exact result needs more bits raises the int64
    DTypeError at the next sync (torch's value would be exact); int32 wraps as torch's int32 does."""
    x = _device(np.array([1, 3], np.int64))
    r = st.bitwise_left_shift(x, 31)
    with pytest.raises(st.DTypeError) as e:
        r.cpu()
    assert e.value.code == "method_dtype_not_supported_error" and "outside int32" in str(e.value)
    r = st.bitwise_left_shift(x, _device(np.array([2, 40], np.int64)))
    with pytest.raises(st.DTypeError):
        r.cpu()
    ok = _device(np.array([1, -1, 0], np.int64))
    assert st.bitwise_left_shift(ok, 30).tolist() == [2**30, -(2**30), 0]
    i32 = np.array([3, -7], np.int32)
    np.testing.assert_array_equal(st.bitwise_left_shift(_device(i32), 30).cpu().numpy(),
                                  torch.bitwise_left_shift(torch.tensor(i32), 30).numpy())


@given(shape=shapes(0, 3, 0, 4), m=hs.integers(0, 6), invert=hs.booleans(), seed=hs.integers(0, 2**16))
@fast(20)
def test_isin(shape, m, invert, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-5, 6, shape).astype(np.int64)
    b = rng.integers(-5, 6, (m,)).astype(np.int64)
    got = st.isin(_device(a), _device(b), invert=invert)
    assert got.device == st.device(DEV) and got.dtype == st.bool_
    np.testing.assert_array_equal(got.cpu().numpy(), torch.isin(torch.tensor(a), torch.tensor(b), invert=invert).numpy())
    f = a.astype(np.float32) / 2
    np.testing.assert_array_equal(st.isin(_device(f), 1.5).cpu().numpy(), torch.isin(torch.tensor(f), 1.5).numpy())


def test_isreal_on_the_device():
    x = np.array([[1.0, np.nan], [np.inf, 0.0]], np.float32)
    got = st.isreal(_device(x))
    assert got.device == st.device(DEV) and got.dtype == st.bool_
    np.testing.assert_array_equal(got.cpu().numpy(), torch.isreal(torch.tensor(x)).numpy())


@pytest.mark.parametrize("name", ["lgamma", "erfinv", "i0e", "log_ndtr"])
def test_float16_computes_in_float32_and_rounds_once(name):
    ours, theirs, inputs, _ = UNARY[name]
    x = inputs()[:100].astype(np.float16)
    got = ours(st.tensor(x, device=DEV))
    assert got.dtype == st.float16
    want = theirs(torch.tensor(x, dtype=torch.float64)).to(torch.float16)
    g, w = got.cpu().numpy().astype(np.float64), want.numpy().astype(np.float64)
    ok = (g == w) | (np.isnan(g) & np.isnan(w)) | (np.abs(g - w) <= 1e-3 + 1e-3 * np.abs(w))
    assert ok.all(), list(zip(x[~ok][:4], g[~ok][:4], w[~ok][:4]))


def test_log1p_near_zero_is_relative():
    """log1p (and what is built on it: atanh, logaddexp, log_ndtr's right tail) keeps its relative accuracy for
    tiny arguments on the device, where log(1 + a) loses it."""
    x = np.concatenate([10.0 ** np.arange(-30, 0, dtype=np.float64), -(10.0 ** np.arange(-30, 0, dtype=np.float64)),
                        np.linspace(-0.6, 0.6, 25), [0.0, -0.0, 3.0, 1e5]]).astype(np.float32)
    _assert_close(st.log1p(_device(x)), torch.log1p(torch.tensor(x, dtype=torch.float64)), rtol=2e-6, atol=0,
                  what="log1p")
