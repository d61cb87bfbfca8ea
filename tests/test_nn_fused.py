"""Fused NumPy kernels with hand-written gradients (issue 17): batch_norm in training, cross_entropy with class
targets, scaled_dot_product_attention, the gates of an LSTM or GRU step. Each is one primitive on the CPU; values, gradients, double backward
(create_graph takes the differentiable formula) and forward mode against torch, and a check that the fused
primitive is the one that ran (so that a test cannot pass on the composite by accident)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch.ops.pooling import max_pool


def data(*shape: int, seed: int = 0, dtype: str = "float64") -> np.ndarray:
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


def _tol(dtype: str) -> dict[str, float]:
    return {"rtol": 1e-4, "atol": 2e-5} if dtype == "float32" else {"rtol": 1e-9, "atol": 1e-10}


def _grad_fns(t: st.Tensor) -> set[str]:
    """The names of every node of ``t``'s graph."""
    seen, stack, names = set(), [t.grad_fn], set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        names.add(n.name())
        stack.extend(f for f, _ in n.next_functions)
    return names


def check_all(fn, arrays, grad, node, dtype="float64", second_order=True):
    """``fn(lib, *tensors)`` against torch: value, first-order gradients, the gradient of a weighted sum of the
    first-order gradients (double backward) and a jvp; ``node`` must be in the first-order graph."""
    tol = _tol(dtype)
    res = {}
    for lib in (st, torch):
        xs = [lib.tensor(a, requires_grad=i in grad) for i, a in enumerate(arrays)]
        y = fn(lib, *xs)
        cot = lib.tensor(data(*tuple(y.shape), seed=9, dtype=dtype))
        if lib is st:
            assert node in _grad_fns(y), _grad_fns(y)
        gs = lib.autograd.grad(y, [xs[i] for i in grad], cot, create_graph=second_order)
        out = {"value": y.detach().numpy(), "grads": [g.detach().numpy() for g in gs]}
        if second_order:
            ws = [lib.tensor(data(*tuple(g.shape), seed=20 + i, dtype=dtype)) for i, g in enumerate(gs)]
            total = sum((g * w).sum() for g, w in zip(gs, ws) if g.requires_grad)
            # (a gradient linear in the cotangent alone, as max pooling's, has no second order: total is 0)
            out["second"] = [] if isinstance(total, int) else [
                None if g is None else g.numpy() for g in lib.autograd.grad(total, [xs[i] for i in grad], allow_unused=True)]
        res[lib.__name__] = out
    s, t = res["shapetorch"], res["torch"]
    np.testing.assert_allclose(s["value"], t["value"], **tol, err_msg="value")
    for i, (a, b) in enumerate(zip(s["grads"], t["grads"])):
        np.testing.assert_allclose(a, b, **tol, err_msg=f"gradient {i}")
    for i, (a, b) in enumerate(zip(s.get("second", []), t.get("second", []))):
        assert (a is None) == (b is None) or np.allclose(a if a is not None else b, 0), f"second-order {i}"
        if a is not None and b is not None:
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7, err_msg=f"second-order gradient {i}")


def check_jvp(fn, arrays, dtype="float64"):
    tangents = [data(*a.shape, seed=30 + i, dtype=dtype) for i, a in enumerate(arrays)]
    _, jo = st.func.jvp(lambda *a: fn(st, *a), tuple(st.tensor(a) for a in arrays), tuple(st.tensor(t) for t in tangents))
    _, jt = torch.func.jvp(lambda *a: fn(torch, *a), tuple(torch.tensor(a) for a in arrays),
                           tuple(torch.tensor(t) for t in tangents))
    np.testing.assert_allclose(jo.numpy(), jt.numpy(), **_tol(dtype))


# -- batch_norm -----------------------------------------------------------------------------------------

BN_CASES = [((6, 4), True, True), ((3, 4, 5), True, False), ((4, 3, 5, 6), True, True), ((4, 3, 5, 6), False, False),
            ((2, 3, 2, 2, 3), True, True)]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape,has_w,has_b", BN_CASES)
def test_batch_norm_training(shape, has_w, has_b, dtype):
    c = shape[1]
    arrays = [data(*shape, dtype=dtype) * 3 + 1.5]
    if has_w:
        arrays.append(data(c, seed=1, dtype=dtype))
    if has_b:
        arrays.append(data(c, seed=2, dtype=dtype))
    stats: dict[str, list] = {}
    record = [True]

    def fn(lib, x, *wb):
        it = iter(wb)
        w = next(it) if has_w else None
        b = next(it) if has_b else None
        rm, rv = lib.tensor(data(c, seed=3, dtype=dtype)), lib.tensor(np.abs(data(c, seed=4, dtype=dtype)) + 0.5)
        y = (F if lib is st else TF).batch_norm(x, rm, rv, w, b, training=True, momentum=0.3, eps=1e-3)
        if record[0]:
            stats.setdefault(lib.__name__, []).append((rm.numpy().copy(), rv.numpy().copy()))
        return y

    check_all(fn, arrays, tuple(range(len(arrays))), "NativeBatchNormBackward0", dtype, second_order=dtype == "float64")
    for (a, b), (c_, d) in zip(stats["shapetorch"], stats["torch"]):  # the running statistics, updated in place
        np.testing.assert_allclose(a, c_, **_tol(dtype))
        np.testing.assert_allclose(b, d, **_tol(dtype))
    if dtype == "float64":
        record[0] = False  # (torch's jvp wraps the running statistics)
        check_jvp(fn, arrays)


def test_batch_norm_module_train_then_eval():
    """The module's running statistics after two training steps (the fused path) and its eval output."""
    x1, x2, x3 = data(8, 3, 4, 4, dtype="float32"), data(8, 3, 4, 4, seed=1, dtype="float32") * 2, data(2, 3, 4, 4, seed=2, dtype="float32")
    torch.manual_seed(0)
    tm = torch.nn.BatchNorm2d(3)
    sm = st.nn.BatchNorm2d(3)
    with torch.no_grad():
        tm.weight.uniform_()
        tm.bias.uniform_()
    sm.load_state_dict({k: st.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    for x in (x1, x2):
        tm(torch.tensor(x))
        sm(st.tensor(x))
    for k, v in tm.state_dict().items():
        np.testing.assert_allclose(sm.state_dict()[k].numpy(), v.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
    tm.eval()
    sm.eval()
    np.testing.assert_allclose(sm(st.tensor(x3)).detach().numpy(), tm(torch.tensor(x3)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)


def test_batch_norm_composite_where_not_fused():
    """float16 keeps the composite (and still matches torch)."""
    x, w = data(4, 3, 2, dtype="float16"), data(3, seed=1, dtype="float16")
    xs = st.tensor(x, requires_grad=True)
    y = F.batch_norm(xs, None, None, st.tensor(w), training=True)
    assert "NativeBatchNormBackward0" not in _grad_fns(y)
    xt = torch.tensor(x, requires_grad=True)
    ref = TF.batch_norm(xt, None, None, torch.tensor(w), training=True)
    assert y.dtype == st.float16 and ref.dtype == torch.float16
    np.testing.assert_allclose(y.detach().numpy().astype(np.float32), ref.detach().numpy().astype(np.float32),
                               rtol=1e-2, atol=1e-2)


# -- cross_entropy --------------------------------------------------------------------------------------

TARGET = np.array([0, 3, 1, -100, 2, 3, 4, 1])  # with ignore_index=3, the -100 becomes class 4
WEIGHT = np.abs(data(5, seed=3)) + 0.1


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("kw", [{}, {"weight": True}, {"label_smoothing": 0.2}, {"weight": True, "label_smoothing": 0.1},
                                {"ignore_index": 3}, {"ignore_index": 3, "weight": True, "label_smoothing": 0.3}])
def test_cross_entropy_class_targets(reduction, kw, dtype):
    target = TARGET if "ignore_index" not in kw else np.where(TARGET == -100, 4, TARGET)

    def fn(lib, x):
        extra = {k: v for k, v in kw.items() if k != "weight"}
        if kw.get("weight"):
            extra["weight"] = lib.tensor(WEIGHT.astype(dtype))
        return (F if lib is st else TF).cross_entropy(x, lib.tensor(target), reduction=reduction, **extra)

    arrays = [data(8, 5, dtype=dtype) * 2]
    # one fused node, named as torch's last: with label smoothing, the sum of the two terms (no LogSoftmaxBackward0)
    node = "AddBackward0" if kw.get("label_smoothing") else "NllLossBackward0"
    check_all(fn, arrays, (0,), node, dtype, second_order=dtype == "float64")
    if dtype == "float64":
        check_jvp(fn, arrays)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("kw", [{}, {"weight": True, "label_smoothing": 0.2, "ignore_index": 2}])
def test_cross_entropy_at_edge_logits(reduction, kw, dtype):
    """The fused loss and its gradient on logits torch handles specially: large magnitudes (1e4, where exp
    overflows unshifted), a -inf logit (its class gets probability 0), a row whose one finite logit is far below 0,
    a row with +inf and one with NaN (NaN loss and gradient there), and an ignored row; against torch, NaN where
    torch's is."""
    x = data(7, 5, seed=9) * 3
    x[0] *= 1e4
    x[1, 3] = -np.inf
    x[2] = -np.inf
    x[2, 1] = -500.0
    x[3, 0] = np.inf
    x[4, 2] = np.nan
    x = x.astype(dtype)
    t = np.array([1, 0, 1, 4, 2, 2, 3])
    got = []
    for lib, mod in ((st, F), (torch, TF)):
        extra = {k: v for k, v in kw.items() if k != "weight"}
        if kw.get("weight"):
            extra["weight"] = lib.tensor(WEIGHT.astype(dtype))
        xt = lib.tensor(x, requires_grad=True)
        y = mod.cross_entropy(xt, lib.tensor(t), reduction=reduction, **extra)
        cot = lib.tensor(data(*y.shape, seed=4, dtype=dtype))
        y.backward(cot)
        got.append((y.detach().numpy(), xt.grad.numpy()))
    for a, b in zip(*got):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(a, b, equal_nan=True, **_tol(dtype))


def test_cross_entropy_k_dims_and_fallbacks():
    """(N, C, d) logits take the fused primitive; probability targets and a weight that requires grad do not."""
    t = np.random.default_rng(1).integers(0, 3, (2, 4))
    check_all(lambda lib, a: (F if lib is st else TF).cross_entropy(a, lib.tensor(t), reduction="none"),
              [data(2, 3, 4)], (0,), "NllLossBackward0")
    p = np.random.default_rng(2).dirichlet(np.ones(5), 8)
    y = F.cross_entropy(st.tensor(data(8, 5), requires_grad=True), st.tensor(p))
    assert "LogSoftmaxBackward0" in _grad_fns(y)  # the composite (the fused primitive is one node)
    w = st.tensor(WEIGHT, requires_grad=True)
    y = F.cross_entropy(st.tensor(data(8, 5), requires_grad=True), st.tensor(np.abs(TARGET) % 5), weight=w)
    assert "LogSoftmaxBackward0" in _grad_fns(y)
    fused = F.cross_entropy(st.tensor(data(8, 5), requires_grad=True), st.tensor(np.abs(TARGET) % 5))
    assert "LogSoftmaxBackward0" not in _grad_fns(fused)


def codes(fn):
    with pytest.raises(st.ShapetorchError) as e:
        fn()
    return e.value.code


def test_cross_entropy_errors_unchanged():
    assert codes(lambda: F.cross_entropy(st.randn(4, 3), st.tensor([0, 1, 2, 3]))) == "at_error_index_out_of_bounds"
    assert codes(lambda: F.cross_entropy(st.randn(4, 3), st.tensor([0, 1]))) == "loss_error_target_shape_mismatch"
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.cross_entropy(st.randn(4, 3), st.tensor([0, 1, 2, 1]), reduction="avg")


# -- GELU's float32 kernels -----------------------------------------------------------------------------

def test_gelu_float32_rational_erf_accuracy():
    """float32 GELU (value and gradient) against the exact float64 formula and torch's float32 GELU, on a dense
    grid over the range where erf is not yet +-1 and beyond; the float64 path is exact to rounding."""
    from scipy.special import erf

    x = np.concatenate([np.linspace(-9, 9, 400_001), [0.0, -0.0, 1e-30, -1e-30, 1e-3, -1e-3]]).astype(np.float32)
    x64 = x.astype(np.float64)
    cdf = 0.5 * (1 + erf(x64 / np.sqrt(2)))
    exact, dexact = x64 * cdf, cdf + x64 * np.exp(-0.5 * x64 * x64) / np.sqrt(2 * np.pi)
    xs = st.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    ys, yt = F.gelu(xs), TF.gelu(xt)
    ys.sum().backward()
    yt.sum().backward()
    y, dy = ys.detach().numpy().astype(np.float64), xs.grad.numpy().astype(np.float64)
    scale = np.maximum(np.abs(exact), 1.0)
    assert np.max(np.abs(y - exact) / scale) < 1e-6
    assert np.max(np.abs(dy - dexact)) < 1e-6
    assert np.max(np.abs(y - yt.detach().numpy()) / scale) < 2e-6
    assert np.max(np.abs(dy - xt.grad.numpy())) < 2e-6
    near0 = np.abs(x64) < 1e-2  # relative accuracy where GELU is tiny: x / 2 + x^2 / sqrt(2 pi)
    np.testing.assert_allclose(y[near0], exact[near0], rtol=1e-6)
    x64s = data(50, seed=4) * 3
    np.testing.assert_allclose(F.gelu(st.tensor(x64s)).numpy(), TF.gelu(torch.tensor(x64s)).numpy(), rtol=1e-14, atol=0)


def test_gelu_float32_tails_as_torch():
    """Far out in the tails (beyond the rational erf's clip bound) float32 GELU is torch's: exactly 0 (not |x| times
    a rounding error) for large negative x, x itself for large positive x; the gradient within 1e-7 of torch's there
    (its x phi(x) tail, below float32's resolution of 1, is kept where torch's rounds to 0)."""
    x = np.array([-1e30, -1e4, -1000.0, -9.0, -6.0, -5.66, -5.6, 5.6, 5.66, 6.0, 9.0, 1000.0, 1e4, 1e30], np.float32)
    got = []
    for lib, mod in ((st, F), (torch, TF)):
        xt = lib.tensor(x, requires_grad=True)
        y = mod.gelu(xt)
        y.sum().backward()
        got.append((y.detach().numpy(), xt.grad.numpy()))
    (y, dy), (yt, dyt) = got
    far = np.abs(x) >= 6
    np.testing.assert_array_equal(y[far], yt[far])
    np.testing.assert_allclose(dy[far], dyt[far], rtol=0, atol=1e-7)
    np.testing.assert_allclose(y, yt, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(dy, dyt, rtol=0, atol=1e-6)
    for shape in ((0,), (0, 3), ()):  # empty and 0-d inputs take the float32 kernels too
        e = np.full(shape, 1.5, np.float32)
        es, et = st.tensor(e, requires_grad=True), torch.tensor(e, requires_grad=True)
        F.gelu(es).sum().backward()
        TF.gelu(et).sum().backward()
        assert F.gelu(es).shape == tuple(TF.gelu(et).shape) and es.grad.shape == tuple(et.grad.shape)
        np.testing.assert_allclose(F.gelu(es).detach().numpy(), TF.gelu(et).detach().numpy(), rtol=1e-6)
        np.testing.assert_allclose(es.grad.numpy(), et.grad.numpy(), rtol=1e-6)


def test_gelu_float32_non_finite():
    """NaN and -inf give NaN (value and gradient), as torch; +inf gives inf with the gradient NaN, as torch's float64
    kernel and its float32 kernel on one element (its vectorised float32 loop answers NaN: see compatibility.md)."""
    x = np.array([np.nan, -np.inf, np.inf, 1.0], np.float32)
    xs = st.tensor(x, requires_grad=True)
    y = F.gelu(xs)
    y.sum().backward()
    got, grad = y.detach().numpy(), xs.grad.numpy()
    np.testing.assert_array_equal(np.isnan(got), [True, True, False, False])
    assert got[2] == np.inf
    np.testing.assert_array_equal(np.isnan(grad), [True, True, True, False])
    t64 = torch.tensor(x.astype(np.float64), requires_grad=True)
    TF.gelu(t64).sum().backward()
    np.testing.assert_array_equal(np.isnan(grad), np.isnan(t64.grad.numpy()))


def test_gelu_float32_over_every_binade():
    """float32 GELU and its gradient over the whole float32 range: every 2^12-th bit pattern of each sign (every
    binade from the subnormals to 3.4e38, 2^20 values), against the exact formula in float64; within 1e-6 of it
    relative to max(|y|, 1) (the gradient absolute), and within float32 rounding of x / 2 where |x| < 2^-24
    (relative 1e-6 on the normal ones, absolute one subnormal step below). The infinities and NaN are
    test_gelu_float32_non_finite's."""
    from scipy.special import ndtr

    bits = np.arange(0, 0x7F800000, 1 << 12, dtype=np.uint32)
    x = np.concatenate([bits, bits | np.uint32(0x80000000)]).view(np.float32)
    x64 = x.astype(np.float64)
    cdf = ndtr(x64)
    exact, dexact = x64 * cdf, cdf + x64 * np.exp(-0.5 * x64 * x64) / np.sqrt(2 * np.pi)
    xs = st.tensor(x, requires_grad=True)
    ys = F.gelu(xs)
    ys.backward(st.ones_like(ys))
    y, dy = ys.detach().numpy().astype(np.float64), xs.grad.numpy().astype(np.float64)
    assert np.all(np.isfinite(y)) and np.all(np.isfinite(dy))
    scale = np.maximum(np.abs(exact), 1.0)
    assert np.max(np.abs(y - exact) / scale) < 1e-6
    assert np.max(np.abs(dy - dexact)) < 1e-6
    tiny = np.abs(x64) < 2.0 ** -24
    normal = tiny & (np.abs(x64) >= np.finfo(np.float32).tiny)
    np.testing.assert_allclose(y[normal], exact[normal], rtol=1e-6, atol=0)
    np.testing.assert_allclose(y[tiny], exact[tiny], rtol=1e-6, atol=2.0 ** -149)
    assert np.array_equal(np.signbit(y), np.signbit(x64)), "a zero result keeps x's sign, as torch's x * Phi(x)"


_TANH_EDGES = [np.inf, -np.inf, np.nan, -10.0, -14.0, 1e30, -1e30, 0.0, -0.0, -5.0, -4.0, 5.5, 1e13, -1e13, 0.3]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_gelu_tanh_fused_as_torch(dtype):
    """gelu(approximate='tanh'), one primitive with a fused gradient: torch's values and gradients for random
    inputs (a large one in cache-sized runs, a transposed view) and at the edges (inf, NaN, x^3 overflowing, where
    torch's gradient is NaN), with a random cotangent; half dtypes computed in float32 and rounded once."""
    rtol, atol = {"float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-10)}.get(dtype, (1e-2, 1e-3))  # torch's float32
    # tolerance: where 1 + tanh cancels (x < -3), both libraries keep only a few bits of the result
    rng = np.random.default_rng(0)
    for x, transposed in ((np.asarray(_TANH_EDGES), False), (rng.normal(size=(520, 300)) * 3, True),
                          (rng.normal(size=(7, 5)) * 3, False)):
        g = rng.normal(size=x.shape[::-1] if transposed else x.shape)
        got = []
        for lib, mod in ((st, F), (torch, TF)):
            xt = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
            y = mod.gelu(xt.t() if transposed else xt, approximate="tanh")
            y.backward(lib.tensor(g, dtype=getattr(lib, dtype)))
            assert y.dtype == getattr(lib, dtype)
            got.append((y.detach().float().numpy(), xt.grad.float().numpy()))
        for a, b in zip(*got):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


def test_gelu_tanh_double_backward_and_forward_mode():
    """The fused primitive's second derivative (through the composite derivative) and its jvp, as torch's."""
    x = data(4, 6) * 2
    res = []
    for lib, mod in ((st, F), (torch, TF)):
        xt = lib.tensor(x, requires_grad=True)
        (gx,) = lib.autograd.grad(mod.gelu(xt, approximate="tanh").sum(), xt, create_graph=True)
        (ggx,) = lib.autograd.grad((gx * gx).sum(), xt)
        _, jvp = lib.func.jvp(lambda t, m=mod: m.gelu(t, approximate="tanh"), (lib.tensor(x),),
                              (lib.tensor(data(4, 6, seed=1)),))
        res.append((gx.detach().numpy(), ggx.numpy(), jvp.detach().numpy()))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("transposed", [False, True])
def test_gelu_in_cache_runs_as_torch(dtype, transposed):
    """An input large enough to be evaluated in cache-sized runs (a partial last run; a transposed view, which is
    read in its own order) gives torch's values and gradients for a random cotangent."""
    x = data(520, 300, dtype=dtype) * 3
    g = data(300, 520, seed=1, dtype=dtype) if transposed else data(520, 300, seed=1, dtype=dtype)
    got = []
    for lib, mod in ((st, F), (torch, TF)):
        xt = lib.tensor(x, requires_grad=True)
        y = mod.gelu(xt.t() if transposed else xt)
        y.backward(lib.tensor(g))
        got.append((y.detach().numpy(), xt.grad.numpy()))
    for a, b in zip(*got):
        np.testing.assert_allclose(a, b, **_tol(dtype))


_GELU_EDGES = [np.inf, -np.inf, np.nan, 0.0, -0.0, 1e30, -1e30, 1e-30, -1e-30, 3e-39, -3e-39, 1e-45, -5.7, -6.0,
               -9.0, 9.0, -3.0, 3.0, 1e4, -1e4]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gelu_training_path_as_torch(dtype):
    """GELU in a training step writes its derivative in the forward and the backward multiplies by it: torch's
    values and gradients for random inputs (one large enough for cache-sized runs, a transposed view), the edges
    (infinities, NaN, huge, tiny, subnormal, signed zeros: the same NaNs and signs of zero), with a random cotangent;
    the value is that of the kernel without the derivative (``no_grad``)."""
    tol = {"rtol": 2e-6, "atol": 2e-6} if dtype == "float32" else {"rtol": 1e-12, "atol": 1e-14}
    rng = np.random.default_rng(5)
    for x, transposed in ((np.asarray(_GELU_EDGES), False), (rng.normal(size=(520, 300)) * 3, True),
                          (rng.normal(size=(3, 7)) * 4, False)):
        g = rng.normal(size=x.shape[::-1] if transposed else x.shape)
        got = []
        for lib, mod in ((st, F), (torch, TF)):
            xt = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
            y = mod.gelu(xt.t() if transposed else xt)
            y.backward(lib.tensor(g, dtype=getattr(lib, dtype)))
            got.append((y.detach().numpy(), xt.grad.numpy()))
        (y, dy), (yt, dyt) = got
        if not transposed and x.size == len(_GELU_EDGES) and dtype == "float32":
            # torch's vectorised float32 loop answers NaN at +inf where its float64 one gives inf (compatibility.md)
            assert y[0] == np.inf and np.isnan(yt[0])
            y, yt = y[1:], yt[1:]
        np.testing.assert_allclose(y, yt, equal_nan=True, **tol)
        zero = (y == 0) & (yt == 0)  # (one subnormal step apart at 1e-45: x * Phi rounds either way)
        np.testing.assert_array_equal(np.signbit(y[zero]), np.signbit(yt[zero]))
        np.testing.assert_allclose(dy, dyt, equal_nan=True, **tol)
        with st.no_grad():
            plain = F.gelu(st.tensor(x, dtype=getattr(st, dtype))).numpy()
        np.testing.assert_allclose(got[0][0], plain.T if transposed else plain, rtol=4e-7, atol=4e-7, equal_nan=True)


def test_gelu_training_path_double_backward_and_saved_buffer():
    """The derivative the forward wrote serves a first-order backward only: create_graph differentiates the formula
    (second derivative and forward mode as torch's); an in-place change of the result leaves the gradient right,
    one of the input fails the backward's version check as torch's; graphs alive at once each keep their own
    derivative buffer, and a freed graph's buffer is reused by the next forward with the right gradient."""
    x = data(4, 6) * 2
    res = []
    for lib, mod in ((st, F), (torch, TF)):
        xt = lib.tensor(x, requires_grad=True)
        (gx,) = lib.autograd.grad(mod.gelu(xt).sum(), xt, create_graph=True)
        (ggx,) = lib.autograd.grad((gx * gx).sum(), xt)
        _, jvp = lib.func.jvp(mod.gelu, (lib.tensor(x),), (lib.tensor(data(4, 6, seed=1)),))
        y = mod.gelu(xt)
        y.mul_(3.0)  # the result changed in place: torch's GeluBackward0 does not read it
        (g_after,) = lib.autograd.grad(y.sum(), xt)
        res.append((gx.detach().numpy(), ggx.numpy(), jvp.detach().numpy(), g_after.numpy()))
        xi = lib.tensor(x, requires_grad=True) * 1.0
        yi = mod.gelu(xi)
        xi.add_(1.0)
        with pytest.raises(RuntimeError):
            yi.sum().backward()
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    for dtype in ("float32", "float64"):
        xs = [data(16, 64, 32, seed=s, dtype=dtype) * 2 for s in range(6)]  # arrays the pool keeps
        expect = []
        for v in xs:
            vt = torch.tensor(v, requires_grad=True)
            TF.gelu(vt).backward(torch.tensor(v * 0.5 + 1))
            expect.append(vt.grad.numpy())
        leaves = [st.tensor(v, requires_grad=True) for v in xs]
        ys = [F.gelu(t) for t in leaves]  # six graphs alive at once: more than the buffers kept per shape
        for t, y, v, e in zip(leaves, ys, xs, expect, strict=True):
            y.backward(st.tensor(v * 0.5 + 1))
            np.testing.assert_allclose(t.grad.numpy(), e, **_tol(dtype))
        del ys, y
        for v, e in zip(xs, expect, strict=True):  # graphs freed one by one: their buffers taken again
            t = st.tensor(v, requires_grad=True)
            F.gelu(t).backward(st.tensor(v * 0.5 + 1))
            np.testing.assert_allclose(t.grad.numpy(), e, **_tol(dtype))
    from shapetorch.backends import array_pool

    # more than a thread's array pool keeps: a fresh derivative, the gradient still right
    big = st.tensor(data(3, array_pool.MAX_BYTES // 12 + 1, dtype="float32"), requires_grad=True)
    F.gelu(big).sum().backward()
    assert sum(b.nbytes for b in array_pool.kept()) <= array_pool.MAX_BYTES
    head = torch.tensor(big.detach().numpy()[:, :1000], requires_grad=True)
    TF.gelu(head).sum().backward()
    np.testing.assert_allclose(big.grad.numpy()[:, :1000], head.grad.numpy(), rtol=2e-6, atol=2e-6)


@given(hs.sampled_from(["float32", "float64"]), hs.data())
def test_gelu_training_path_property_as_torch(dtype, draw):
    """Any values, the non-finite ones included: GELU's value and its gradient from the derivative the forward
    wrote are torch's (same NaNs; +inf's value is torch's float64 one, see compatibility.md)."""
    width = 32 if dtype == "float32" else 64
    x = np.array(draw.draw(hs.lists(hs.floats(width=width), min_size=1, max_size=40)), dtype)
    g = np.array(draw.draw(hs.lists(hs.floats(-1e3, 1e3, width=width), min_size=x.size, max_size=x.size)), dtype)
    got = []
    for lib, mod in ((st, F), (torch, TF)):
        xt = lib.tensor(x, requires_grad=True)
        y = mod.gelu(xt)
        y.backward(lib.tensor(g))
        got.append((y.detach().numpy(), xt.grad.numpy()))
    (y, dy), (yt, dyt) = got
    pos_inf = x == np.inf
    assert np.all(y[pos_inf] == np.inf)
    if dtype == "float32" and x.size > 1:  # torch's vector loop overflows x * (1 + erf) there (compatibility.md)
        huge = x > np.finfo(np.float32).max / 2
        assert np.all(y[huge] == x[huge])
        pos_inf |= huge
    tol = {"rtol": 2e-6, "atol": 2e-6} if dtype == "float32" else {"rtol": 1e-12, "atol": 1e-300}
    np.testing.assert_allclose(y[~pos_inf], yt[~pos_inf], equal_nan=True, **tol)
    np.testing.assert_allclose(dy, dyt, equal_nan=True, **{**tol, "rtol": 1e-5 if dtype == "float32" else 1e-12})


@given(hs.integers(1, 6), hs.integers(1, 9), hs.floats(-1e3, 1e3), hs.floats(1e-3, 1e2), hs.integers(0, 10_000))
def test_layer_norm_saved_statistics_property_as_torch(rows, d, offset, spread, seed):
    """Any row count and width, rows centred anywhere within 1e3 with any spread: the values and the three gradients
    from the forward's statistics are torch's (float64, to its rounding)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, d)) * spread + offset
    w, b, g = rng.normal(size=d), rng.normal(size=d), rng.normal(size=(rows, d))
    got = []
    for lib, mod in ((st, F), (torch, TF)):
        ts = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = mod.layer_norm(ts[0], (d,), ts[1], ts[2])
        y.backward(lib.tensor(g))
        got.append([y.detach().numpy(), *(t.grad.numpy() for t in ts)])
    for a, c in zip(*got, strict=True):
        np.testing.assert_allclose(a, c, rtol=1e-7, atol=1e-7 * (1 + abs(offset) / spread))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("affine", ["both", "weight", "none"])
def test_layer_norm_gradient_from_saved_statistics_as_torch(dtype, affine):
    """A layer norm whose backward will run saves each row's mean and 1/std from its forward, and the backward is
    torch's native_layer_norm_backward formula on them: torch's gradients for every subset of inputs requiring grad,
    rows far from zero (the formula reads x uncentred: the same error as torch's), constant rows (variance 0), a
    normalized shape of two dims, a non-contiguous gradient, blocks of rows large enough to be cut; a second
    backward through a retained graph, and create_graph (the composite formula) as torch's."""
    rng = np.random.default_rng(3)
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-11}
    cases = [((6, 5, 16), 1, 0.0), ((4, 7, 12), 1, 100.0), ((3, 4, 6), 2, 0.0), ((2000, 96), 1, 1.0)]
    for shape, nd, offset in cases:
        x = rng.normal(size=shape) + offset
        x[0, ...] = 2.5  # a constant row (or block)
        ns = shape[-nd:]
        w, b = rng.normal(size=ns), rng.normal(size=ns)
        g = rng.normal(size=shape[::-1]).T  # a transposed (non-contiguous) cotangent
        for need in ((True, True, True), (True, False, False), (False, True, False), (False, False, True)):
            got = []
            for lib, mod in ((st, F), (torch, TF)):
                xt = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=need[0])
                wt = lib.tensor(w, dtype=getattr(lib, dtype), requires_grad=need[1]) if affine != "none" else None
                bt = lib.tensor(b, dtype=getattr(lib, dtype), requires_grad=need[2]) if affine == "both" else None
                y = mod.layer_norm(xt, ns, wt, bt)
                if not y.requires_grad:
                    continue
                gt = lib.tensor(np.ascontiguousarray(g), dtype=getattr(lib, dtype)).mT.contiguous().mT
                y.backward(gt, retain_graph=True)
                first = [t.grad.numpy().copy() for t in (xt, wt, bt) if t is not None and t.requires_grad]
                y.backward(gt)  # the retained graph: the same statistics again (the gradients doubled)
                second = [t.grad.numpy() for t in (xt, wt, bt) if t is not None and t.requires_grad]
                got.append((y.detach().numpy(), first, second))
            if not got:
                continue
            (ys, fs, ss), (yt, ft, sst) = got
            np.testing.assert_allclose(ys, yt, **tol)
            for a, c in zip(fs + ss, ft + sst, strict=True):
                np.testing.assert_allclose(a, c, **tol)
    x = rng.normal(size=(3, 8)) * 2
    res = []
    for lib, mod in ((st, F), (torch, TF)):
        xt = lib.tensor(x, requires_grad=True)
        wt = lib.tensor(rng.normal(size=8) if not res else res[0][-1], requires_grad=True)
        (gx,) = lib.autograd.grad((mod.layer_norm(xt, (8,), wt) ** 3).sum(), xt, create_graph=True)
        (ggx,) = lib.autograd.grad((gx * gx).sum(), xt)
        res.append((gx.detach().numpy(), ggx.numpy(), wt.detach().numpy()))
    for a, c in zip(res[0][:2], res[1][:2]):
        np.testing.assert_allclose(a, c, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_relu_gradient_selects_as_torch(dtype):
    """ReLU's first-order gradient (a bitwise select on the CPU): zeros (+0.0) where the output is <= 0 even for an
    infinite or NaN gradient, the gradient itself (a -0.0 kept) where it is > 0 or NaN; a broadcast gradient too;
    double backward through the composite."""
    x = np.concatenate([data(300, dtype=dtype), [0.0, -0.0, np.nan, 2.0, -1.0, 3.0]]).astype(dtype)
    g = np.concatenate([data(300, seed=1, dtype=dtype), [np.inf, np.nan, 5.0, -0.0, -np.inf, np.nan]]).astype(dtype)
    got = []
    for lib in (st, torch):
        xt = lib.tensor(x, requires_grad=True)
        xt.relu().backward(lib.tensor(g))
        a = lib.tensor(x, requires_grad=True)
        a.relu().sum().backward()  # the gradient of a sum: a broadcast array
        xx = lib.tensor(x[:300], requires_grad=True)
        (gx,) = lib.autograd.grad((xx.relu() ** 2).sum(), xx, create_graph=True)
        (gg,) = lib.autograd.grad(gx.sum(), xx)
        got.append([xt.grad.numpy(), a.grad.numpy(), gx.detach().numpy(), gg.numpy()])
    for a, b in zip(*got):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(np.signbit(a), np.signbit(b))


@pytest.mark.parametrize("inplace", [False, True])
def test_relu_node_does_not_keep_its_input(inplace):
    """relu's node holds a storage-free stand-in for its input (its gradient reads the result, as torch's
    ReluBackward0): a conv -> relu step frees the convolution's output before the backward; the gradient, an
    in-place relu and a second backward through it are still torch's."""
    import gc
    import weakref

    x, w = data(2, 3, 6, 6), data(4, 3, 3, 3, seed=1)
    got = []
    for lib in (st, torch):
        xs, ws = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        h = lib.nn.functional.conv2d(xs, ws, padding=1)
        if lib is st:
            ref = weakref.ref(h._data)
        y = lib.nn.functional.relu(h, inplace=inplace)
        if lib is st and not inplace:
            del h
            gc.collect()
            assert ref() is None
        (gx,) = lib.autograd.grad((y ** 2).sum(), xs, create_graph=True)
        (gw,) = lib.autograd.grad(gx.pow(2).sum(), ws)
        got.append((y.detach().numpy(), gx.detach().numpy(), gw.numpy()))
    for a, b in zip(*got):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


# -- layer norm's row kernels ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("affine", [(True, True), (True, False), (False, False)])
@pytest.mark.parametrize("shape,nd", [((4, 6, 32), 1), ((3, 5, 7), 2)])
def test_layer_norm_rows(shape, nd, affine, dtype):
    """The row kernels (sums as products with ones, sums of squares as row dot products) on rows far from 0 and of
    very different scales: output and the gradients of input, weight and bias against torch for a random
    cotangent."""
    x = (data(*shape) * np.logspace(0, 2, shape[0]).reshape(-1, 1, 1) + 10.0).astype(dtype)
    norm = shape[len(shape) - nd:]
    w, b = data(*norm, seed=1, dtype=dtype), data(*norm, seed=2, dtype=dtype)
    cot = data(*shape, seed=3, dtype=dtype)
    got = []
    for lib, mod in ((st, F), (torch, TF)):
        ts = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = mod.layer_norm(ts[0], norm, ts[1] if affine[0] else None, ts[2] if affine[1] else None)
        y.backward(lib.tensor(cot))
        got.append([y.detach().numpy()] + [t.grad.numpy() for t, on in zip(ts, (True, *affine)) if on])
    for a, b_ in zip(*got):
        np.testing.assert_allclose(a, b_, **_tol(dtype))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_layer_norm_rows_at_edge_values(dtype):
    """The row kernels on rows torch handles specially or that stress the formula: a constant row (variance 0, so
    rstd is 1/sqrt(eps)), rows far from 0 (1e3 + small), tiny and large scales, a row with inf, one with NaN;
    output and the three gradients against torch for a random cotangent, NaN where torch's is."""
    rng = np.random.default_rng(7)
    rows = rng.normal(size=(8, 16))
    rows[0] = 3.25
    rows[1] = 1e3 + rng.normal(size=16)
    rows[2] *= 1e-6
    rows[3] *= 1e4
    rows[4, 5] = np.inf
    rows[5, 2] = np.nan
    x = rows.astype(dtype)
    w, b, cot = data(16, seed=1, dtype=dtype), data(16, seed=2, dtype=dtype), data(8, 16, seed=3, dtype=dtype)
    got = []
    for lib, mod in ((st, F), (torch, TF)):
        ts = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = mod.layer_norm(ts[0], (16,), ts[1], ts[2])
        y.backward(lib.tensor(cot))
        got.append([y.detach().numpy()] + [t.grad.numpy() for t in ts])
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == "float32" else {"rtol": 1e-9, "atol": 1e-9}
    for a, b_ in zip(*got):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b_))
        np.testing.assert_allclose(a, b_, equal_nan=True, **tol)


# -- scaled_dot_product_attention -----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kw", [{}, {"is_causal": True}, {"mask": "bool"}, {"mask": "float"}, {"scale": 0.3},
                                {"is_causal": True, "shape": (3, 5, 8)}, {"mask": "bool", "shape": (2, 1, 4, 8)}])
def test_scaled_dot_product_attention(kw, dtype):
    kw = dict(kw)
    lead = kw.pop("shape", (2, 3, 4, 8))
    q = data(*lead, dtype=dtype)
    k = data(*lead[:-2], 6, lead[-1], seed=1, dtype=dtype)
    v = data(*lead[:-2], 6, 5, seed=2, dtype=dtype)
    mask = kw.pop("mask", None)
    m = None
    if mask == "bool":
        m = np.random.default_rng(5).random((lead[-2], 6)) > 0.3
        m[:, 0] = True
    elif mask == "float":
        m = data(lead[-2], 6, seed=6, dtype=dtype)

    def fn(lib, a, b, c):
        return (F if lib is st else TF).scaled_dot_product_attention(
            a, b, c, None if m is None else lib.tensor(m), **kw)

    check_all(fn, [q, k, v], (0, 1, 2), "ScaledDotProductAttentionBackward0", dtype, second_order=dtype == "float64")
    if dtype == "float64":
        check_jvp(fn, [q, k, v])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("mask", [None, "causal", "bool", "float"])
def test_attention_on_split_heads(mask, dtype):
    """q, k and v as a transformer makes them (one projection split, heads split off and transposed: strided views
    whose gradients are written in their layout), a causal mask or a mask with a fully masked row (weights 0, not
    NaN): output and the three gradients against torch for a random cotangent."""
    B, T, H, D = 2, 5, 3, 4
    x = data(B, T, 3 * H * D, dtype=dtype)
    m: Any = None
    if mask == "bool":
        m = np.random.default_rng(5).random((T, T)) > 0.4
        m[2] = False
    elif mask == "float":
        m = data(T, T, seed=6, dtype=dtype)
    cot = data(B, H, T, D, seed=7, dtype=dtype)
    got = []
    for lib, mod in ((st, F), (torch, TF)):
        xt = lib.tensor(x, requires_grad=True)
        q, k, v = (t.reshape(B, T, H, D).transpose(1, 2) for t in xt.split(H * D, dim=2))
        y = mod.scaled_dot_product_attention(q, k, v, None if m is None else lib.tensor(m),
                                             is_causal=mask == "causal")
        y.backward(lib.tensor(cot))
        got.append((y.detach().numpy(), xt.grad.numpy()))
        if lib is st:
            assert "ScaledDotProductAttentionBackward0" in _grad_fns(y)
    for a, b in zip(*got):
        assert not np.isnan(a).any()
        np.testing.assert_allclose(a, b, **_tol(dtype))


@pytest.mark.parametrize("keep", [True, False])
@pytest.mark.parametrize("mask", [None, "causal", "bool", "float"])
def test_attention_weights_kept_or_remade(keep, mask, monkeypatch):
    """The CPU forward keeps the attention weights for the gradient while they are small beside q, k and v, and the
    gradient remakes them otherwise: both give torch's values and first-order gradients (float32, the GPT's dtype;
    a fully masked row gets weights 0), and the weights were kept exactly when asked."""
    from shapetorch.ops import attention as att

    monkeypatch.setattr(att, "_KEEP_PROBS", 10 if keep else 0)
    made: list[bool] = []
    real = att._ATTENTION_PROBS.kernels["cpu"]
    monkeypatch.setitem(att._ATTENTION_PROBS.kernels, "cpu", lambda *a, **k: made.append(True) or real(*a, **k))
    B, H, L, S, E = 2, 3, 7, 9, 4
    q, k, v = data(B, H, L, E, dtype="float32"), data(B, H, S, E, seed=1, dtype="float32"), \
        data(B, H, S, 5, seed=2, dtype="float32")
    m: Any = None
    if mask == "bool":
        m = np.random.default_rng(5).random((L, S)) > 0.5
        m[3] = False
    elif mask == "float":
        m = data(H, L, S, seed=6, dtype="float32")
    cot = data(B, H, L, 5, seed=7, dtype="float32")
    got = []
    for lib, mod in ((st, F), (torch, TF)):
        ts = [lib.tensor(a, requires_grad=True) for a in (q, k, v)]
        y = mod.scaled_dot_product_attention(*ts, None if m is None else lib.tensor(m), is_causal=mask == "causal")
        y.backward(lib.tensor(cot))
        got.append([y.detach().numpy()] + [t.grad.numpy() for t in ts])
    assert made == ([True] if keep else [])
    for a, b in zip(*got):
        np.testing.assert_allclose(a, b, **_tol("float32"))


@pytest.mark.parametrize("shapes", [((3, 4, 8), (3, 6, 8), (2, 1, 4, 6)), ((3, 4, 8), (3, 6, 8), (1, 1, 4, 6)),
                                    ((1, 4, 8), (1, 6, 8), (3, 4, 6)), ((4, 8), (6, 8), (3, 4, 6))])
def test_attention_mask_may_not_widen_the_scores(shapes):
    """torch adds the mask into the scores (q k^T) in place, so a mask with more batch dims than they have is refused
    (RuntimeError), even of size 1 (shapetorch answered with a wider result, whose fused gradient then failed)."""
    from shapetorch._errors import ShapetorchError

    qs, ks, ms = shapes
    for lib in (st, torch):
        for mdt in ("bool", "float32"):
            m = lib.ones(ms, dtype=getattr(lib, mdt))
            with pytest.raises(RuntimeError, match="doesn't match the broadcast shape") as e:
                lib.nn.functional.scaled_dot_product_attention(lib.ones(qs), lib.ones(ks), lib.ones(*ks[:-1], 5), m)
            if lib is st:
                assert isinstance(e.value, ShapetorchError) and e.value.code == "inplace_error_shape_change"
    # the scores' batch may come from the key: a mask of that batch is taken
    q, k, v, m = data(1, 4, 8), data(3, 6, 8, seed=1), data(3, 6, 5, seed=2), np.random.default_rng(3).random((3, 4, 6)) > 0.3
    m[..., 0] = True
    got = []
    for lib, mod in ((st, F), (torch, TF)):
        ts = [lib.tensor(a, requires_grad=True) for a in (q, k, v)]
        y = mod.scaled_dot_product_attention(*ts, lib.tensor(m))
        y.backward(lib.tensor(data(3, 4, 5, seed=4)))
        got.append([y.detach().numpy()] + [t.grad.numpy() for t in ts])
    for a_, b_ in zip(*got):
        np.testing.assert_allclose(a_, b_, **_tol("float64"))


@pytest.mark.parametrize("lengths", [(0, 3), (3, 0), (0, 0)])
def test_attention_without_queries_or_keys(lengths):
    """No queries or no keys: torch's empty or zero output and gradients (no keys raised NumPy's error for a
    maximum over an empty axis)."""
    L, S = lengths
    got = []
    for lib, mod in ((st, F), (torch, TF)):
        ts = [lib.tensor(data(2, n, 4, seed=i), requires_grad=True) for i, n in enumerate((L, S))]
        v = lib.tensor(data(2, S, 5, seed=3), requires_grad=True)
        y = mod.scaled_dot_product_attention(ts[0], ts[1], v)
        y.sum().backward()
        got.append([y.detach().numpy()] + [t.grad.numpy() for t in (*ts, v)])
    for a_, b_ in zip(*got):
        assert a_.shape == b_.shape
        np.testing.assert_allclose(a_, b_)


def test_attention_composite_for_broadcast_batches_and_dropout():
    q, k, v = data(2, 3, 4, 8), data(1, 3, 6, 8, seed=1), data(2, 3, 6, 5, seed=2)
    y = F.scaled_dot_product_attention(st.tensor(q, requires_grad=True), st.tensor(k), st.tensor(v))
    assert "ScaledDotProductAttentionBackward0" not in _grad_fns(y)
    ref = TF.scaled_dot_product_attention(torch.tensor(q), torch.tensor(k), torch.tensor(v))
    np.testing.assert_allclose(y.detach().numpy(), ref.numpy(), rtol=1e-10)
    y = F.scaled_dot_product_attention(st.tensor(q, requires_grad=True), st.tensor(q), st.tensor(q), dropout_p=0.5)
    assert "ScaledDotProductAttentionBackward0" not in _grad_fns(y)


# -- gradients nobody asked for -------------------------------------------------------------------------

@pytest.mark.parametrize("bias", [False, True])
def test_backward_skips_products_for_inputs_without_grad(bias):
    """A linear layer on an input that does not require grad: backward makes the weight's (and bias's) gradient
    only, one product instead of two; with create_graph both are made (a later grad may need them)."""
    from shapetorch.autograd.profiler import profile

    x = st.tensor(data(5, 3))
    w = st.tensor(data(4, 3, seed=1), requires_grad=True)
    b = st.tensor(data(4, seed=2), requires_grad=True) if bias else None
    y = F.linear(x.reshape(1, 5, 3), w, b)
    with profile() as prof:
        y.sum().backward()
    products = [e.name for e in prof.events() if e.name == "aten::mm"]
    assert len(products) == 1, [e.name for e in prof.events()]
    xt, wt = torch.tensor(data(5, 3)), torch.tensor(data(4, 3, seed=1), requires_grad=True)
    TF.linear(xt.reshape(1, 5, 3), wt).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy(), rtol=1e-12)
    (gw,) = st.autograd.grad(F.linear(x, w).pow(2).sum(), [w], create_graph=True)
    assert gw.requires_grad


# -- the NumPy backend's fused optimizer step -----------------------------------------------------------

OPTIMIZERS = [("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01}),
              ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}), ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3}),
              ("Adam", {"lr": 0.01}), ("Adam", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}),
              ("AdamW", {"lr": 0.01, "weight_decay": 0.1}), ("Adam", {"lr": 0.01, "maximize": True})]


def _train(lib, name, kw, dtype, fused_calls=None):
    rng = np.random.default_rng(0)
    # the third is large enough to be updated in cache-sized runs (the last one partial)
    ps = [lib.tensor(rng.normal(size=(5, 4)).astype(dtype), requires_grad=True),
          lib.tensor(rng.normal(size=(3,)).astype(dtype), requires_grad=True),
          lib.tensor(rng.normal(size=(257, 300)).astype(dtype), requires_grad=True)]
    opt = getattr(lib.optim, name)(ps, **kw)
    for i in range(4):
        opt.zero_grad()
        ((ps[0] ** 2).sum() * (i + 1) + (ps[1] * ps[1].sin()).sum() + (ps[2] * ps[2].cos()).sum()).backward()
        opt.step()
    return [p.detach().numpy() for p in ps]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kw", OPTIMIZERS)
def test_fused_optimizer_step_same_values_as_ops(name, kw, dtype, monkeypatch):
    """The CPU's one-pass update gives bit for bit what the optimizer's ops give, and torch's values."""
    from shapetorch.backends import numpy_backend

    calls = []
    real = numpy_backend.fused_step
    monkeypatch.setattr(numpy_backend, "fused_step", lambda *a: calls.append(a[0]) or real(*a))
    fused = _train(st, name, kw, dtype)
    assert calls, "the fused step did not run"
    monkeypatch.setattr(numpy_backend, "fused_step", lambda *a: False)
    ops = _train(st, name, kw, dtype)
    for a, b in zip(fused, ops):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(fused, _train(torch, name, kw, dtype)):
        np.testing.assert_allclose(a, b, **_tol(dtype))


def test_fused_optimizer_step_declines_shared_memory():
    from shapetorch.backends.numpy_backend import fused_step

    p = np.ones(4, np.float32)
    assert not fused_step("sgd", p, p, [], {"lr": 0.1, "weight_decay": 0.0, "momentum": 0.0, "dampening": 0.0,
                                            "nesterov": 0.0})
    assert (p == 1).all()
    assert not fused_step("sgd", p, np.ones(4, np.float64), [], {})


def test_fused_optimizer_step_declines_views_that_overlap():
    """Views skip the quick test (each owning its memory) and get the pairwise one: overlapping views are
    declined, views of disjoint parts of one array are taken."""
    from shapetorch.backends.numpy_backend import fused_step

    h = {"lr": 0.5, "weight_decay": 0.0, "momentum": 0.0, "dampening": 0.0, "nesterov": 0.0}
    base = np.ones(8, np.float32)
    assert not fused_step("sgd", base[0:4], base[2:6], [], h)
    p = np.ones(4, np.float32)
    assert not fused_step("sgd", p, p[::-1], [], h)
    assert (base == 1).all() and (p == 1).all()
    assert fused_step("sgd", base[0:4], base[4:8], [], h)
    np.testing.assert_array_equal(base, [0.5] * 4 + [1.0] * 4)
    # two arrays over one buffer that neither owns: distinct roots, the same memory
    buf = bytearray(np.ones(6, np.float32).tobytes())
    a, b = np.frombuffer(buf, np.float32)[0:4], np.frombuffer(buf, np.float32)[2:6]
    assert not fused_step("sgd", a, b, [], h)
    assert (np.frombuffer(buf, np.float32) == 1).all()


@pytest.mark.parametrize("kind,h,nstate", [
    ("adam", {"lr": 0.01, "weight_decay": 0.1, "decoupled": 0.0, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8,
              "step": 2.0}, 3),
    ("sgd", {"lr": 0.1, "weight_decay": 0.1, "momentum": 0.9, "dampening": 0.5, "nesterov": 1.0}, 1)])
@pytest.mark.parametrize("n", [5000, 70_000])
def test_fused_optimizer_step_allocates_nothing_once_warm(kind, h, nstate, n):
    """The temporaries go to work arrays kept from one step to the next: a later step allocates no array."""
    import tracemalloc

    from shapetorch.backends.numpy_backend import fused_step

    rng = np.random.default_rng(0)
    p, g = rng.normal(size=n).astype(np.float32), rng.normal(size=n).astype(np.float32)
    state = [np.abs(rng.normal(size=n)).astype(np.float32) for _ in range(nstate)]
    assert fused_step(kind, p, g, state, h)  # the first step makes the work arrays
    tracemalloc.start()
    try:
        assert fused_step(kind, p, g, state, h)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * n  # less than half of one temporary array (4 * n bytes)


# -- gradients that become .grad without a copy ---------------------------------------------------------

def test_cpu_gradient_stolen_only_when_unshared(monkeypatch):
    """A fresh NumPy gradient becomes ``.grad`` without a copy (the weight of ``x @ W.T`` too, made in W's layout);
    one that the user, a hook, a retained grad or a second leaf can reach is copied, so writing into ``.grad``
    never changes them (torch's AccumulateGrad)."""
    copies: list[tuple[int, ...]] = []
    real = np.copyto
    monkeypatch.setattr(np, "copyto", lambda dst, src, **kw: (copies.append(src.shape), real(dst, src, **kw))[1])

    lin = st.nn.Linear(5, 3)
    x = st.randn(2, 4, 5)
    copies.clear()  # (the layer's initialisation writes in place)
    lin(x).pow(2).sum().backward()
    assert copies == [] and lin.weight.grad.numpy().flags.c_contiguous
    lin(st.randn(2, 4, 5)).pow(2).sum().backward()  # a second backward accumulates in place
    lin2, x2 = st.nn.Linear(5, 3), st.randn(4, 5)
    copies.clear()
    lin2(x2).pow(2).sum().backward()  # a 2-d input: the weight's gradient is made in W's layout too
    assert copies == [] and lin2.weight.grad.numpy().flags.c_contiguous
    a = st.tensor(data(3, 4), requires_grad=True)
    b = st.tensor(data(3, 4, seed=1), requires_grad=True)
    (a.exp() * b).sum().backward()
    assert copies == []
    np.testing.assert_allclose(a.grad.numpy(), np.exp(data(3, 4)) * data(3, 4, seed=1))

    a.grad = b.grad = None
    (a + b).sum().backward()  # one gradient for both leaves
    a.grad.add_(1.0)
    np.testing.assert_array_equal(b.grad.numpy(), np.ones((3, 4)))

    a.grad = None
    user = st.ones(3, 4, dtype=st.float64)
    a.backward(user)
    a.grad.mul_(5.0)
    np.testing.assert_array_equal(user.numpy(), np.ones((3, 4)))

    a.grad = None
    seen = []
    h = a.register_hook(seen.append)
    (a * 2).sum().backward()
    h.remove()
    a.grad.zero_()
    np.testing.assert_array_equal(seen[0].numpy(), np.full((3, 4), 2.0))

    a.grad = None
    y = a * 3
    y.retain_grad()
    (y * 1).sum().backward()
    a.grad.zero_()
    np.testing.assert_array_equal(y.grad.numpy(), np.ones((3, 4)))

    a.grad = None
    x = st.tensor(data(12), requires_grad=True)
    g = st.tensor(data(3, 4, seed=2))
    x.reshape(3, 4).backward(g)  # the gradient is a view of the user's tensor
    x.grad.zero_()
    np.testing.assert_array_equal(g.numpy(), data(3, 4, seed=2))


# -- recurrent cells ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_recurrent_cell_gates(mode, dtype):
    """One step of an LSTMCell / GRUCell (torch's weights): the gates are one primitive; inputs and states' gradients,
    double backward and forward mode against torch."""
    torch.manual_seed(0)
    hidden = 5
    tcell = getattr(torch.nn, mode + "Cell")(4, hidden).to(getattr(torch, dtype))
    scell = getattr(st.nn, mode + "Cell")(4, hidden, dtype=getattr(st, dtype))
    scell.load_state_dict({k: st.tensor(v.detach().numpy().copy()) for k, v in tcell.state_dict().items()})
    x, h, c = data(3, 4, dtype=dtype), data(3, hidden, seed=1, dtype=dtype), data(3, hidden, seed=2, dtype=dtype)

    def fn(lib, *xs):
        cell = scell if lib is st else tcell
        if mode == "GRU":
            return cell(xs[0], xs[1])
        h1, c1 = cell(xs[0], (xs[1], xs[2]))
        return lib.cat([h1, c1], -1)

    arrays = [x, h, c] if mode == "LSTM" else [x, h]
    node = "LstmCellGatesBackward0" if mode == "LSTM" else "GruCellGatesBackward0"
    check_all(fn, arrays, tuple(range(len(arrays))), node, dtype, second_order=dtype == "float64")
    if dtype == "float64":
        for p in (*scell.parameters(), *tcell.parameters()):  # forward mode of the inputs only
            p.requires_grad_(False)
        check_jvp(fn, arrays)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_recurrent_layers_parameter_gradients(mode):
    """A 2-layer batch-first LSTM / GRU: output, final states and every parameter's gradient as torch's."""
    torch.manual_seed(0)
    tnet = getattr(torch.nn, mode)(6, 8, num_layers=2, batch_first=True)
    snet = getattr(st.nn, mode)(6, 8, num_layers=2, batch_first=True)
    snet.load_state_dict({k: st.tensor(v.detach().numpy().copy()) for k, v in tnet.state_dict().items()})
    x = data(4, 7, 6, dtype="float32")
    so, sh = snet(st.tensor(x))
    to, th = tnet(torch.tensor(x))
    assert "LstmLayerBackward0" in _grad_fns(so) or "GruLayerBackward0" in _grad_fns(so)
    sh, th = (sh[0], th[0]) if mode == "LSTM" else (sh, th)
    np.testing.assert_allclose(so.detach().numpy(), to.detach().numpy(), **_tol("float32"))
    np.testing.assert_allclose(sh.detach().numpy(), th.detach().numpy(), **_tol("float32"))
    (so.square().sum() + sh.sum()).backward()
    (to.square().sum() + th.sum()).backward()
    for (name, sp), (_, tp) in zip(snet.named_parameters(), tnet.named_parameters(), strict=True):
        np.testing.assert_allclose(sp.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_recurrent_layer_backward_on_arrays_float64(mode, bidirectional, bias):
    """The first-order backward through time on the arrays (in-place buffers, both directions, with and without
    biases): every parameter's gradient, the input's and the initial states' against torch in float64, for a loss
    that reads the outputs and the final states."""
    torch.manual_seed(1)
    kw = {"num_layers": 2, "bidirectional": bidirectional, "bias": bias}
    tnet = getattr(torch.nn, mode)(3, 5, **kw).double()
    snet = getattr(st.nn, mode)(3, 5, dtype=st.float64, **kw)
    snet.load_state_dict({k: st.tensor(v.detach().numpy().copy()) for k, v in tnet.state_dict().items()})
    d = 2 if bidirectional else 1
    arrays = [data(6, 3, 3), data(2 * d, 3, 5, seed=1)] + ([data(2 * d, 3, 5, seed=2)] if mode == "LSTM" else [])
    grads = []
    for lib, net in ((st, snet), (torch, tnet)):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        out, hn = net(ts[0], tuple(ts[1:]) if mode == "LSTM" else ts[1])
        finals = hn if mode == "LSTM" else (hn,)
        loss = (out * lib.tensor(data(*out.shape, seed=3))).sum() + sum((f * f).sum() for f in finals)
        loss.backward()
        grads.append([t.grad.numpy() for t in ts] + [p.grad.numpy() for p in net.parameters()])
    for a, b in zip(*grads, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


def test_lstm_layer_keeps_its_gates_for_the_gradient(monkeypatch):
    """An LSTM layer whose gradient will be needed keeps its gates from the forward (``lstm_layer_steps``), one
    without does not; the gradient only reads them, so a second backward through a retained graph gives the same
    gradients (torch's), twice accumulated."""
    from shapetorch.ops import recurrent

    calls: list[bool] = []
    real = recurrent._LSTM_STEPS.kernels["cpu"]
    monkeypatch.setitem(recurrent._LSTM_STEPS.kernels, "cpu", lambda *a, **k: calls.append(True) or real(*a, **k))
    torch.manual_seed(2)
    tnet = torch.nn.LSTM(3, 5, num_layers=2, bidirectional=True)
    snet = st.nn.LSTM(3, 5, num_layers=2, bidirectional=True)
    snet.load_state_dict({k: st.tensor(v.detach().numpy().copy()) for k, v in tnet.state_dict().items()})
    x = data(6, 2, 3, dtype="float32")
    with st.no_grad():
        out_ng, (h_ng, c_ng) = snet(st.tensor(x))
    assert calls == []
    with torch.no_grad():
        expected = tnet(torch.tensor(x))
    for a, b in zip((out_ng, h_ng, c_ng), (expected[0], *expected[1]), strict=True):  # the kernel without its gates
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    cot = data(6, 2, 10, seed=5, dtype="float32")
    grads = []
    for lib, net in ((st, snet), (torch, tnet)):
        xt = lib.tensor(x, requires_grad=True)
        out, _ = net(xt)
        out.backward(lib.tensor(cot), retain_graph=True)
        first = [xt.grad.numpy().copy()] + [p.grad.numpy().copy() for p in net.parameters()]
        out.backward(lib.tensor(cot))
        grads.append(first + [xt.grad.numpy()] + [p.grad.numpy() for p in net.parameters()])
    assert len(calls) == 4  # two layers, two directions
    n = len(grads[0]) // 2
    for a, b in zip(grads[0][:n], grads[0][n:]):
        np.testing.assert_allclose(2 * a, b, rtol=1e-6)
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("create_graph", [False, True])
def test_lstm_layer_sums_its_two_biases_once(create_graph):
    """The LSTM layer adds b_ih with b_hh (its input projection comes without a bias) and gives both the one sum of
    d pre as their gradient: torch's values, the projection a plain product (no bias of its own), and each bias a
    gradient buffer of its own, in a graph of the gradient too (where one tensor would be both ``.grad``)."""
    torch.manual_seed(3)
    tnet = torch.nn.LSTM(3, 5, num_layers=2)
    snet = st.nn.LSTM(3, 5, num_layers=2)
    snet.load_state_dict({k: st.tensor(v.detach().numpy().copy()) for k, v in tnet.state_dict().items()})
    x, cot = data(6, 2, 3, dtype="float32"), data(6, 2, 5, seed=4, dtype="float32")
    so, _ = snet(st.tensor(x))
    to, _ = tnet(torch.tensor(x))
    fns = _grad_fns(so)
    assert "LstmLayerBackward0" in fns and "MatmulBiasBackward0" not in fns
    so.backward(st.tensor(cot), create_graph=create_graph)
    to.backward(torch.tensor(cot))
    for layer in range(2):
        bi, bh = getattr(snet, f"bias_ih_l{layer}").grad, getattr(snet, f"bias_hh_l{layer}").grad
        expected = getattr(tnet, f"bias_ih_l{layer}").grad.numpy()
        np.testing.assert_allclose(bi.detach().numpy(), expected, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(bh.detach().numpy(), bi.detach().numpy())
        assert bi is not bh and not np.shares_memory(bi.detach().numpy(), bh.detach().numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_recurrent_graphs_alive_together_and_training_steps(mode, dtype):
    """Two forwards whose graphs are alive at once (each keeps its arrays, from the layers' pool), backward in the
    other order, then AdamW steps (every step reuses the pool's arrays): gradients and parameters as torch's, at sizes
    whose arrays the pool takes."""
    torch.manual_seed(4)
    kw = {"num_layers": 2, "bidirectional": True, "batch_first": True}
    tnet = getattr(torch.nn, mode)(8, 32, **kw).to(getattr(torch, dtype))
    snet = getattr(st.nn, mode)(8, 32, dtype=getattr(st, dtype), **kw)
    snet.load_state_dict({k: st.tensor(v.detach().numpy().copy()) for k, v in tnet.state_dict().items()})
    xs = [data(16, 20, 8, seed=s, dtype=dtype) for s in (1, 2)]  # (a GRU output of 80 KiB in float64: pooled)
    tol = _tol(dtype)

    def loss(out, state):
        hn, cn = state if mode == "LSTM" else (state, state)
        return out.square().mean() + hn.sum() + (cn * cn).sum()

    results = []
    for lib, net in ((st, snet), (torch, tnet)):
        ins = [lib.tensor(x, requires_grad=True) for x in xs]
        outs = [net(x) for x in ins]  # both graphs alive
        for (out, state), w in zip(reversed(outs), (1.0, -2.0)):
            (loss(out, state) * w).backward()
        got = [x.grad.numpy().copy() for x in ins] + [p.grad.numpy().copy() for p in net.parameters()]
        opt = lib.optim.AdamW(net.parameters(), lr=1e-2)
        for step in range(3):
            opt.zero_grad()
            loss(*net(lib.tensor(xs[step % 2]))).backward()
            opt.step()
        results.append(got + [p.detach().numpy().copy() for p in net.parameters()])
    for a, b in zip(*results, strict=True):
        np.testing.assert_allclose(a, b, **tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("steps,batch,hidden", [(1, 3, 4), (5, 1, 4), (5, 3, 1), (1, 1, 1), (4, 0, 3)])
@pytest.mark.parametrize("with_state", [False, True])
def test_lstm_layer_edge_sizes(steps, batch, hidden, with_state, dtype):
    """One step, a batch of one, one unit and an empty batch (torch runs it): outputs, final states and the gradients
    of the input, the initial states and every parameter as torch's, through the layer primitive."""
    torch.manual_seed(5)
    tnet = torch.nn.LSTM(2, hidden, num_layers=2).to(getattr(torch, dtype))
    snet = st.nn.LSTM(2, hidden, num_layers=2, dtype=getattr(st, dtype))
    snet.load_state_dict({k: st.tensor(v.detach().numpy().copy()) for k, v in tnet.state_dict().items()})
    arrays = [data(steps, batch, 2, dtype=dtype)]
    if with_state:
        arrays += [data(2, batch, hidden, seed=1, dtype=dtype), data(2, batch, hidden, seed=2, dtype=dtype)]
    res = []
    for lib, net in ((st, snet), (torch, tnet)):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        out, (hn, cn) = net(ts[0], tuple(ts[1:]) if with_state else None)
        if lib is st and batch:
            assert "LstmLayerBackward0" in _grad_fns(out)
        (out * lib.tensor(data(*out.shape, seed=3, dtype=dtype))).sum().backward(retain_graph=True)
        (hn.sum() + (cn * cn).sum()).backward()
        res.append([out.detach().numpy(), hn.detach().numpy(), cn.detach().numpy()]
                   + [t.grad.numpy() for t in ts] + [p.grad.numpy() for p in net.parameters()])
    for a, b in zip(*res, strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, **_tol(dtype))


@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_recurrent_layer_primitive(mode, bidirectional):
    """The whole loop over time as one primitive: output and final states against torch for the input and the initial
    states, their gradients, double backward and forward mode (float64)."""
    torch.manual_seed(0)
    kw = {"num_layers": 2, "bidirectional": bidirectional}
    tnet = getattr(torch.nn, mode)(3, 4, **kw).double()
    snet = getattr(st.nn, mode)(3, 4, dtype=st.float64, **kw)
    snet.load_state_dict({k: st.tensor(v.detach().numpy().copy()) for k, v in tnet.state_dict().items()})
    d = 2 if bidirectional else 1
    arrays = [data(5, 2, 3), data(2 * d, 2, 4, seed=1)] + ([data(2 * d, 2, 4, seed=2)] if mode == "LSTM" else [])

    def fn(lib, x, *state):
        net = snet if lib is st else tnet
        out, hn = net(x, tuple(state) if mode == "LSTM" else state[0])
        parts = [out.reshape(-1), *(t.reshape(-1) for t in (hn if mode == "LSTM" else (hn,)))]
        return lib.cat(parts)

    node = "LstmLayerBackward0" if mode == "LSTM" else "GruLayerBackward0"
    check_all(fn, arrays, tuple(range(len(arrays))), node)
    for p in (*snet.parameters(), *tnet.parameters()):  # forward mode of the inputs and states only
        p.requires_grad_(False)
    check_jvp(fn, arrays)


# -- max pooling ------------------------------------------------------------------------------------------

# (shape, kernel, stride, padding, dilation, ceil_mode): tiled windows (the bench models), gaps (stride > kernel),
# overlaps (stride < kernel: the gradient adds), padding with ceil_mode, dilation, 1-d and 3-d
# (shape, spatial dims, ...); the last case is unbatched
POOL_CASES = [((2, 3, 6, 6), 2, 2, None, 0, 1, False), ((2, 3, 9, 7), 2, 3, 2, 1, 1, True),
              ((1, 2, 7, 7), 2, 2, 3, 0, 1, False), ((2, 2, 8, 7), 2, 3, 1, 1, 1, False),
              ((2, 3, 7, 8), 2, (2, 3), (1, 2), (1, 0), (2, 1), True), ((2, 3, 9), 1, 3, 2, 1, 1, True),
              ((2, 2, 5, 6, 5), 3, 2, 2, 1, 1, True), ((3, 8, 8), 2, 2, None, 0, 1, False),
              # a window of one element along a dim (the maximum skips that dim), and along every dim (a copy)
              ((2, 3, 7, 8), 2, (1, 3), (1, 2), 0, 1, False), ((2, 3, 6, 6), 2, 1, 2, 0, 1, False)]


def _pool(lib, x, nd, k, s, p, d, c, **kw):
    if lib is st:
        return max_pool(x, nd, k, s, p, d, c, **kw)  # max_pool3d is not in shapetorch's F
    return getattr(TF, f"max_pool{nd}d")(x, k, s, p, d, ceil_mode=c, **kw)


def _ties(shape, dtype="float64"):
    """Data after a ReLU, with a NaN window: many windows hold equal maxima (torch picks the first)."""
    a = np.maximum(data(*shape, dtype=dtype), 0)
    a.reshape(-1)[[5, 7]] = np.nan
    return a


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape,nd,k,s,p,d,c", POOL_CASES)
def test_max_pool(shape, nd, k, s, p, d, c, dtype):
    fn = lambda lib, x: _pool(lib, x, nd, k, s, p, d, c)  # noqa: E731
    node = f"MaxPool{max(nd, 2)}DWithIndicesBackward0"  # torch's name (its 1-D pooling runs as 2-D)
    check_all(fn, [data(*shape, dtype=dtype)], (0,), node, dtype)
    check_all(fn, [np.maximum(data(*shape, dtype=dtype), 0)], (0,), node, dtype, second_order=False)
    check_jvp(fn, [data(*shape)])
    # the gradient of the input gradient in the cotangent (double backward): a read at the chosen elements
    for lib in (st, torch):
        x = lib.tensor(_ties(shape, dtype), requires_grad=True)
        y = fn(lib, x)
        cot = lib.tensor(data(*tuple(y.shape), seed=3, dtype=dtype), requires_grad=True)
        (gx,) = lib.autograd.grad(y, x, cot, create_graph=True)
        (gc,) = lib.autograd.grad((gx * lib.tensor(data(*shape, seed=4, dtype=dtype))).sum(), cot)
        if lib is st:
            got = (y.detach().numpy(), gx.detach().numpy(), gc.numpy())
    np.testing.assert_allclose(got[0], y.detach().numpy(), **_tol(dtype))
    np.testing.assert_allclose(got[1], gx.detach().numpy(), **_tol(dtype))
    np.testing.assert_allclose(got[2], gc.numpy(), **_tol(dtype))


@pytest.mark.parametrize("shape,nd,k,s,p,d,c", POOL_CASES)
def test_max_pool_indices_ties_nan_and_padding(shape, nd, k, s, p, d, c):
    """return_indices as torch's: the first maximum, the last NaN, never a padded element (all -inf windows)."""
    x = _ties(shape)
    x.reshape(-1)[:4] = -np.inf
    vs, ist = _pool(st, st.tensor(x), nd, k, s, p, d, c, return_indices=True)
    vt, itt = _pool(torch, torch.tensor(x), nd, k, s, p, d, c, return_indices=True)
    np.testing.assert_array_equal(vs.numpy(), vt.numpy())
    np.testing.assert_array_equal(ist.numpy(), itt.numpy())
    xs, xt = st.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    _pool(st, xs, nd, k, s, p, d, c).sum().backward()
    _pool(torch, xt, nd, k, s, p, d, c).sum().backward()
    np.testing.assert_array_equal(xs.grad.numpy(), xt.grad.numpy())


def test_max_pool_integers():
    xi = np.random.default_rng(1).integers(-5, 5, (2, 3, 6, 6))
    np.testing.assert_array_equal(F.max_pool2d(st.tensor(xi), 3, 2, 1).numpy(),
                                  TF.max_pool2d(torch.tensor(xi), 3, 2, 1).numpy())
    xu = xi.astype(np.uint8) % 3
    vs, is_ = F.max_pool2d(st.tensor(xu), 2, return_indices=True)
    vt, it = TF.max_pool2d(torch.tensor(xu), 2, return_indices=True)
    np.testing.assert_array_equal(vs.numpy(), vt.numpy())
    np.testing.assert_array_equal(is_.numpy(), it.numpy())


# -- convolution with its bias ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kw", [{"padding": 1}, {"stride": 2, "padding": 1}, {"groups": 2, "dilation": 2},
                                {"padding": "same"}])
def test_conv_bias(kw, dtype):
    """conv2d with a bias is one primitive on the CPU (the bias added as the output is written): values, the
    three gradients, double backward and forward mode against torch."""
    def fn(lib, x, w, b):
        return lib.nn.functional.conv2d(x, w, b, **kw)

    arrays = [data(3, 4, 7, 6, dtype=dtype), data(6, 4 // kw.get("groups", 1), 3, 3, seed=1, dtype=dtype),
              data(6, seed=2, dtype=dtype)]
    check_all(fn, arrays, (0, 1, 2), "ConvolutionBackward0", dtype, second_order=dtype == "float64")
    check_jvp(fn, [a.astype("float64") for a in arrays])


def test_conv1d_bias_unbatched():
    arrays = [data(4, 9), data(5, 4, 3, seed=1), data(5, seed=2)]
    check_all(lambda lib, x, w, b: lib.nn.functional.conv1d(x, w, b, padding=2), arrays, (0, 1, 2),
              "ConvolutionBackward0")


def test_max_pool_output_may_change_in_place():
    """torch saves the input and the indices, not the output: the output may be changed in place."""
    x = data(2, 3, 6, 6)
    grads = []
    for lib in (st, torch):
        xs = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.max_pool2d(xs, 2)
        y.mul_(2)
        y.sum().backward()
        grads.append(xs.grad.numpy())
    np.testing.assert_array_equal(*grads)


# -- tanh_backward, sigmoid_backward, silu_backward: one primitive per gradient, as torch's backward ops -----------

_POINTWISE = {"tanh": (torch.tanh, st.tanh), "sigmoid": (torch.sigmoid, st.sigmoid), "silu": (TF.silu, F.silu)}
_POINTWISE_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -1.2785, 1e-30, 3.0, 20.0, -20.0, 88.8, -88.8, 1e30, -1e30,
                    np.inf, -np.inf, np.nan]


def _pointwise_tol(name: str, dtype: str) -> dict[str, float]:
    """Exact where the kernels do torch's operations in torch's order and rounding (sigmoid); tanh takes
    ``(1 - y)(1 + y)`` for torch's multiply-add ``1 - y * y`` (two ulps at most, rounded away in half types); silu's
    exp is not torch's (a few ulps, and silu's gradient crosses 0 near x = -1.28, so an absolute floor)."""
    if dtype in ("float16", "bfloat16"):
        return {"rtol": 0.0, "atol": 0.0} if name != "silu" else {"rtol": 1e-2, "atol": 1e-3}
    if name == "silu":
        return {"rtol": 1e-6, "atol": 1e-7} if dtype == "float32" else {"rtol": 1e-14, "atol": 1e-14}
    return {"rtol": {"float32": 2.5e-7, "float64": 5e-16}[dtype] if name == "tanh" else 0.0, "atol": 0.0}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("name", ["tanh", "sigmoid", "silu"])
def test_pointwise_gradient_is_torchs_backward_op(name, dtype):
    """The gradient of tanh/sigmoid/silu against torch's backward op (tanh_backward and sigmoid_backward read the
    output: fed shapetorch's own, so that the forward's last bits do not count), at the edges (0, +-inf, NaN,
    overflow, |y| near 1) and for random values (a large array runs in cache-sized runs or over threads), with
    random cotangents (inf and NaN among them); the fused primitive is the one that ran: torch's node name under
    double backward."""
    rng = np.random.default_rng(3)
    edges = np.asarray(_POINTWISE_EDGES)
    tdt, sdt = getattr(torch, dtype), getattr(st, dtype)
    for x in (edges, rng.normal(size=(300, 700)) * 4, rng.normal(size=(5, 3))):
        g = rng.normal(size=x.shape)
        if x is edges:
            g[[1, 5]] = np.inf, np.nan
        xt, gt = torch.tensor(x).to(tdt).requires_grad_(), torch.tensor(g).to(tdt)
        xs, gs = st.tensor(xt.detach().double().numpy()).to(sdt).requires_grad_(), st.tensor(gt.double().numpy()).to(sdt)
        ys = _POINTWISE[name][1](xs)
        (gx,) = st.autograd.grad(ys, xs, gs, create_graph=True)
        (gx_torch,) = torch.autograd.grad(_POINTWISE[name][0](xt), xt, gt, create_graph=True)
        # torch's node names: TanhBackwardBackward0, SigmoidBackwardBackward0 (the fused primitives' own
        # derivatives), MulBackward0 (silu's create_graph form)
        assert gx.dtype == sdt and gx.grad_fn.name() == gx_torch.grad_fn.name()
        with st.no_grad():  # the first-order backward: the fused kernel
            (gx,) = st.autograd.grad(ys, xs, gs, retain_graph=True)
        saved = xt.detach() if name == "silu" else torch.tensor(ys.detach().double().numpy()).to(tdt)
        want = getattr(torch.ops.aten, name + "_backward")(gt, saved)
        tol = _pointwise_tol(name, dtype)
        np.testing.assert_allclose(gx.detach().double().numpy(), want.double().numpy(), equal_nan=True, **tol)
        if name == "silu":  # (tanh and sigmoid's forward are not this change's)
            np.testing.assert_allclose(ys.detach().double().numpy(), TF.silu(xt).detach().double().numpy(),
                                       equal_nan=True, **tol)


@pytest.mark.parametrize("name", ["tanh", "sigmoid", "silu"])
def test_pointwise_gradient_higher_orders_and_forward_mode(name):
    """Second and third derivatives through the fused primitives' own derivatives (silu's create_graph takes
    torch's differentiable form), forward mode of silu, and forward mode of each backward primitive itself (its
    jvp rule: torch's jvp of aten's X_backward), against torch in float64."""
    from shapetorch._engine.primitives import PRIMS

    x, t, u = data(4, 6) * 2, data(4, 6, seed=1), data(4, 6, seed=2)
    y = np.tanh(x) if name == "tanh" else 1 / (1 + np.exp(-x)) if name == "sigmoid" else x  # what the op saves
    res = []
    for lib, fn in ((torch, _POINTWISE[name][0]), (st, _POINTWISE[name][1])):
        xt = lib.tensor(x, requires_grad=True)
        (g1,) = lib.autograd.grad((fn(xt) * lib.tensor(t)).sum(), xt, create_graph=True)
        (g2,) = lib.autograd.grad((g1 * g1).sum(), xt, create_graph=True)
        (g3,) = lib.autograd.grad((g2 * xt).sum(), xt)
        _, fwd = lib.func.jvp(fn, (lib.tensor(x),), (lib.tensor(t),))
        if lib is torch:  # (torch has no forward AD for silu_backward: its formula, in torch ops)
            bwd = getattr(torch.ops.aten, name + "_backward") if name != "silu" else \
                lambda g, s: g * s.sigmoid() * (1 + s * (1 - s.sigmoid()))
        else:
            prim = PRIMS[name + "_backward"]
            bwd = (lambda g, s, p=prim: p(s, g)) if name == "silu" else prim  # silu_backward takes (x, g)
        _, fwd_bwd = lib.func.jvp(bwd, (lib.tensor(t), lib.tensor(y)), (lib.tensor(u), lib.tensor(x)))
        res.append([a.detach().numpy() for a in (g1, g2, g3, fwd, fwd_bwd)])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)


@pytest.fixture
def primitive_calls(monkeypatch: Any) -> Any:
    """The names of the primitives called during the test: ``Prim.__call__`` wrapped, and the engine told its slow
    path is installed, so the direct calls that skip ``__call__`` (``call1``/``call2``/``call_number``, the
    untracked views) take it too, as they do under the profiler."""
    from shapetorch._engine import intercept, primitives

    calls: list[str] = []
    call = primitives.Prim.__call__
    monkeypatch.setattr(primitives.Prim, "__call__", lambda self, *a, **k: calls.append(self.name) or call(self, *a, **k))
    was, intercept.INSTALLED[0] = intercept.INSTALLED[0], True
    yield calls
    intercept.INSTALLED[0] = was


def test_pointwise_backward_is_one_primitive(monkeypatch, primitive_calls):
    """An MLP's loss.backward() through tanh, sigmoid and silu: one primitive per activation gradient, and the
    mean's ``sum / n`` differentiated without the divisor's gradient (a number)."""

    calls = primitive_calls
    calls.clear()
    x = st.tensor(data(8, 5), requires_grad=True)
    loss = F.silu(st.sigmoid(st.tanh(x) * 2.0) / 3.0).mean()
    calls.clear()
    loss.backward()
    assert sorted(calls) == ["expand", "mul", "sigmoid_backward", "silu_backward", "tanh_backward", "true_divide",
                             "true_divide"], calls
    xt = torch.tensor(data(8, 5), requires_grad=True)
    TF.silu(torch.sigmoid(torch.tanh(xt) * 2.0) / 3.0).mean().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-14, atol=1e-16)


_KINKED = {"leaky_relu": {"negative_slope": 0.2}, "leaky_relu_default": {}, "hardtanh": {"min_val": -1.5, "max_val": 0.7},
           "relu6": {}}


def _kinked(lib: Any, name: str) -> Any:
    mod = TF if lib is torch else F
    return lambda t: getattr(mod, name.removesuffix("_default"))(t, **_KINKED[name])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("name", list(_KINKED))
def test_kinked_activations_as_torch(name, dtype):
    """leaky_relu and hardtanh (relu6): one primitive each with a fused gradient; torch's values and gradients,
    bit for bit, at the kinks (x exactly 0 and exactly at the bounds, as rounded to the dtype), inf and NaN (a NaN
    inside a long tensor, where torch's vectorised kernels run), and the nodes' names."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=600) * 3
    x[:9] = [0.0, -0.0, 0.7, -1.5, 6.0, 1.0, -1.0, np.inf, -np.inf]
    x[100] = np.nan
    g = rng.normal(size=x.shape)
    got = []
    for lib in (torch, st):
        xt = lib.tensor(torch.tensor(x).to(getattr(torch, dtype)).double().numpy()).to(getattr(lib, dtype))
        xt.requires_grad_()
        y = _kinked(lib, name)(xt)
        (gx,) = lib.autograd.grad(y, xt, lib.tensor(g).to(getattr(lib, dtype)), create_graph=True)
        got.append((y.detach().double().numpy(), gx.detach().double().numpy(), y.grad_fn.name(), gx.grad_fn.name()))
    (yt, gt, nt, ngt), (ys, gs, ns, ngs) = got
    assert (ns, ngs) == (nt, ngt)  # LeakyReluBackward0 / LeakyReluBackwardBackward0, HardtanhBackward0 / ...
    np.testing.assert_array_equal(ys, yt)
    np.testing.assert_array_equal(gs, gt)


@pytest.mark.parametrize("name", list(_KINKED))
def test_kinked_activations_higher_orders_and_forward_mode(name):
    """Double backward through the fused gradients' own derivatives (linear in the gradient) and forward mode of
    the activation, against torch in float64."""
    x, t = data(4, 6) * 3, data(4, 6, seed=1)
    res = []
    for lib in (torch, st):
        fn = _kinked(lib, name)
        xt = lib.tensor(x, requires_grad=True)
        w = lib.tensor(t, requires_grad=True)
        (g1,) = lib.autograd.grad((fn(xt) * w).sum(), xt, create_graph=True)
        (g2,) = lib.autograd.grad((g1 * g1).sum(), w)
        _, fwd = lib.func.jvp(fn, (lib.tensor(x),), (lib.tensor(t),))
        res.append([a.detach().numpy() for a in (g1, g2, fwd)])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=0)


_SMOOTH = {"elu": {"alpha": 0.7}, "elu_default": {}, "selu": {}, "celu": {"alpha": 1.3},
           "softplus": {"beta": 2.0, "threshold": 3.0}, "softplus_default": {}, "mish": {}, "hardswish": {},
           "hardsigmoid": {}, "logsigmoid": {}}
# (backward node, its own gradient's node) as torch 2.13 names them: celu's gradient is elu_backward's; mish's
# create_graph gradient is torch's differentiable formula (a product); hardsigmoid_backward has no derivative
_SMOOTH_NODES = {"elu": ("EluBackward0", "EluBackwardBackward0"), "selu": ("EluBackward0", "EluBackwardBackward0"),
                 "celu": ("CeluBackward0", "EluBackwardBackward0"),
                 "softplus": ("SoftplusBackward0", "SoftplusBackwardBackward0"), "mish": ("MishBackward0", "MulBackward0"),
                 "hardswish": ("HardswishBackward0", "HardswishBackwardBackward0"),
                 "hardsigmoid": ("HardsigmoidBackward0", None), "logsigmoid": ("LogSigmoidBackward0",
                                                                                "LogSigmoidBackwardBackward0")}


def _smooth(lib: Any, name: str) -> Any:
    mod = TF if lib is torch else F
    return lambda t: getattr(mod, name.removesuffix("_default"))(t, **_SMOOTH[name])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("name", list(_SMOOTH))
def test_fused_activation_gradients_as_torch(name, dtype):
    """elu (selu, celu), softplus, mish, hardswish, hardsigmoid, logsigmoid: one primitive each with a fused
    gradient, torch's values and gradients at the kinks (0, -3, 3, softplus's threshold), +-inf, large values and
    a NaN inside a long tensor (torch's vectorised loops), and torch's node names. Bit for bit where the kernel is
    torch's selects and arithmetic; within an ulp where it takes exp/log1p/tanh (torch has its own vectorised
    ones)."""
    rng = np.random.default_rng(6)
    x = rng.normal(size=600) * 4
    x[:12] = [0.0, -0.0, -3.0, 3.0, 1.5, 0.5, 25.0, -30.0, 100.0, -100.0, np.inf, -np.inf]
    x[100] = np.nan
    g = rng.normal(size=x.shape)
    got = []
    for lib in (torch, st):
        xt = lib.tensor(torch.tensor(x).to(getattr(torch, dtype)).double().numpy()).to(getattr(lib, dtype))
        xt.requires_grad_()
        y = _smooth(lib, name)(xt)
        (gx,) = lib.autograd.grad(y, xt, lib.tensor(g).to(getattr(lib, dtype)), create_graph=True)
        names = (y.grad_fn.name(), gx.grad_fn.name() if name.removesuffix("_default") != "hardsigmoid" else None)
        got.append((y.detach().double().numpy(), gx.detach().double().numpy(), names))
    (yt, gt, nt), (ys, gs, ns) = got
    assert ns == nt == _SMOOTH_NODES[name.removesuffix("_default")]
    eps = {"float64": 1e-14, "float32": 1e-6, "float16": 1e-3, "bfloat16": 8e-3}[dtype]
    if name.removesuffix("_default") in ("hardswish", "hardsigmoid"):
        eps = 0.0  # selects, products and quotients: torch's bits
    np.testing.assert_allclose(ys, yt, rtol=eps, atol=eps)
    np.testing.assert_allclose(gs, gt, rtol=eps, atol=eps)
    np.testing.assert_array_equal(np.isnan(gs), np.isnan(gt))


@pytest.mark.parametrize("name", [n for n in _SMOOTH if n != "hardsigmoid"])
def test_fused_activation_higher_orders_and_forward_mode(name):
    """Double backward through each fused gradient's own derivative (torch's *_double_backward formulas: the
    gradient's input and its output gradient both), and forward mode of the activation, against torch in float64;
    gradcheck and gradgradcheck of the fused gradients themselves."""
    x, t = data(4, 6) * 3, data(4, 6, seed=1)
    x[0, :4] = [0.0, -3.0, 3.0, 1.5]  # the kinks (softplus's threshold 3 at beta 2)
    res = []
    for lib in (torch, st):
        fn = _smooth(lib, name)
        xt = lib.tensor(x, requires_grad=True)
        w = lib.tensor(t, requires_grad=True)
        (g1,) = lib.autograd.grad((fn(xt) * w).sum(), xt, create_graph=True)
        g2x, g2w = lib.autograd.grad((g1 * g1 * w).sum(), (xt, w))
        _, fwd = lib.func.jvp(fn, (lib.tensor(x),), (lib.tensor(t),))
        res.append([a.detach().numpy() for a in (g1, g2x, g2w, fwd)])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    xs = st.tensor(data(3, 4, seed=2) * 2.5, requires_grad=True)
    assert st.autograd.gradcheck(_smooth(st, name), (xs,))
    assert st.autograd.gradgradcheck(_smooth(st, name), (xs,))


def test_hardsigmoid_double_backward_refused_as_torch():
    """torch has no derivative of hardsigmoid_backward: a double backward raises (a RuntimeError there; here
    also a NotImplementedError with the code), never a silent zero."""
    for lib in (torch, st):
        x = lib.tensor(data(5), requires_grad=True)
        (g,) = lib.autograd.grad(TF.hardsigmoid(x).sum() if lib is torch else F.hardsigmoid(x).sum(), x,
                                 create_graph=True)
        with pytest.raises(RuntimeError, match="hardsigmoid_backward"):
            lib.autograd.grad(g.sum(), x)


@pytest.mark.parametrize("name", ["elu", "selu", "celu", "softplus", "mish", "hardswish", "hardsigmoid", "logsigmoid"])
def test_fused_activation_backward_is_one_primitive(monkeypatch, name, primitive_calls):
    """loss.backward() through each activation runs one primitive for its gradient (torch's one backward op) where
    the composites ran three to ten."""

    calls = primitive_calls
    calls.clear()
    x = st.tensor(data(8, 5), requires_grad=True)
    y = getattr(F, name)(x)
    calls.clear()
    y.backward(st.ones_like(y))
    assert calls == [{"selu": "elu", "celu": "elu", "logsigmoid": "log_sigmoid"}.get(name, name) + "_backward"], calls


_LOSSES = [("mse_loss", {}), ("smooth_l1_loss", {"beta": 0.5}), ("smooth_l1_loss", {}), ("huber_loss", {"delta": 0.5}),
           ("huber_loss", {})]


def _loss_data(dtype: str = "float64") -> tuple[np.ndarray, np.ndarray]:
    x, t = data(6, 7, seed=3) * 2, data(6, 7, seed=4)
    x[0, :4] = t[0, :4] + np.array([1.0, -1.0, 0.5, -0.5])  # |x - t| at beta / delta exactly (the kinks)
    return x.astype(dtype), t.astype(dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name,kw", _LOSSES)
def test_pointwise_losses_as_torch(name, kw, reduction, dtype):
    """mse_loss, smooth_l1_loss, huber_loss: one primitive and one fused gradient each; torch's values, both
    gradients (input and target) at the kinks, the second derivatives of both through the gradients' own derivatives
    (float64), and torch's node names (MseLossBackward0, MseLossBackwardBackward0 for both gradients, ...)."""
    x, t = _loss_data(dtype)
    res = []
    for lib, mod in ((torch, TF), (st, F)):
        xt, tt = lib.tensor(x, requires_grad=True), lib.tensor(t, requires_grad=True)
        y = getattr(mod, name)(xt, tt, reduction=reduction, **kw)
        gx, gt = lib.autograd.grad(y, (xt, tt), lib.ones_like(y) * 0.7, create_graph=True)
        names = (y.grad_fn.name(), gx.grad_fn.name(), gt.grad_fn.name())
        hx, ht = lib.autograd.grad((gx * gx).sum() + (gt * xt).sum(), (xt, tt))
        res.append([a.detach().numpy() for a in (y, gx, gt, hx, ht)] + [names])
    *got, ns = res[1]
    *want, nt = res[0]
    assert ns == nt
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5 if dtype == "float32" else 1e-13, atol=1e-7 if dtype == "float32" else 1e-15)


@pytest.mark.parametrize("name,kw", _LOSSES)
def test_pointwise_losses_gradcheck_and_forward_mode(name, kw):
    """gradcheck/gradgradcheck of each loss in input and target (float64), and forward mode against torch."""
    x, t = _loss_data()
    for red in ("mean", "none"):
        fn = lambda a, b, red=red: getattr(F, name)(a, b, reduction=red, **kw)  # noqa: E731
        args = (st.tensor(x[1:], requires_grad=True), st.tensor(t[1:], requires_grad=True))  # (off the kinks)
        assert st.autograd.gradcheck(fn, args)
        assert st.autograd.gradgradcheck(fn, args)
        tx, tt = data(6, 7, seed=8), data(6, 7, seed=9)
        _, ours = st.func.jvp(fn, (st.tensor(x), st.tensor(t)), (st.tensor(tx), st.tensor(tt)))
        _, theirs = torch.func.jvp(lambda a, b, red=red: getattr(TF, name)(a, b, reduction=red, **kw),
                                   (torch.tensor(x), torch.tensor(t)), (torch.tensor(tx), torch.tensor(tt)))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name,kw", _LOSSES)
def test_pointwise_loss_backward_is_one_primitive(monkeypatch, name, kw, primitive_calls):
    """loss.backward() of each loss of a leaf and a constant target runs one primitive (the mean's expand, the
    square's products, where's selects and their sums are gone)."""

    calls = primitive_calls
    calls.clear()
    x, t = _loss_data("float32")
    loss = getattr(F, name)(st.tensor(x, requires_grad=True), st.tensor(t), **kw)
    calls.clear()
    loss.backward()
    assert calls == [f"{name}_backward"], calls


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_weight_as_torch(reduction):
    """mse_loss's ``weight`` (torch 2.13's Python formula: weighted squares, and for 'mean' over the weights' sum);
    it was ignored. A weight of another size than the input is torch's ValueError."""
    x, t = _loss_data()
    w = np.abs(data(6, 7, seed=5))
    res = []
    for lib, mod in ((torch, TF), (st, F)):
        xt = lib.tensor(x, requires_grad=True)
        y = mod.mse_loss(xt, lib.tensor(t), reduction=reduction, weight=lib.tensor(w))
        (g,) = lib.autograd.grad(y.sum(), xt)
        res.append((y.detach().numpy(), g.numpy()))
        with pytest.raises(ValueError):
            mod.mse_loss(xt, lib.tensor(t), weight=lib.tensor(w[0]))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-13)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_with_logits_fused_as_torch(reduction, dtype, monkeypatch, primitive_calls):
    """binary_cross_entropy_with_logits (no weight, no pos_weight): one primitive, one fused gradient without a
    graph (``(sigmoid(x) - t) * g``, / numel for 'mean'), torch's formula under create_graph; values, both
    gradients and the second derivatives against torch, including saturated logits (+-40)."""

    x, t = data(6, 7, seed=3) * 3, np.random.default_rng(4).random((6, 7))
    x[0, :3] = [40.0, -40.0, 0.0]
    x, t = x.astype(dtype), t.astype(dtype)
    res = []
    for lib, mod in ((torch, TF), (st, F)):
        xt, tt = lib.tensor(x, requires_grad=True), lib.tensor(t, requires_grad=True)
        y = mod.binary_cross_entropy_with_logits(xt, tt, reduction=reduction)
        g = lib.ones_like(y) * 0.7
        first = lib.autograd.grad(y, (xt, tt), g, retain_graph=True)
        gx, gt = lib.autograd.grad(y, (xt, tt), g, create_graph=True)
        hx, ht = lib.autograd.grad((gx * gx).sum() + (gt * xt).sum(), (xt, tt))
        res.append([a.detach().numpy() for a in (y, *first, gx, gt, hx, ht)] + [y.grad_fn.name()])
    *got, ns = res[1]
    *want, nt = res[0]
    assert ns == nt == "BinaryCrossEntropyWithLogitsBackward0"
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=2e-6 if dtype == "float32" else 1e-14, atol=1e-7 if dtype == "float32" else 1e-16)
    calls = primitive_calls
    calls.clear()
    loss = F.binary_cross_entropy_with_logits(st.tensor(x, requires_grad=True), st.tensor(t), reduction=reduction)
    calls.clear()
    loss.backward(st.ones_like(loss))
    assert calls == ["binary_cross_entropy_with_logits_backward"], calls


def test_bce_with_logits_gradcheck_and_forward_mode():
    x, t = data(3, 4, seed=6), np.random.default_rng(7).random((3, 4))
    for red in ("mean", "none"):
        fn = lambda a, b, red=red: F.binary_cross_entropy_with_logits(a, b, reduction=red)  # noqa: E731
        args = (st.tensor(x, requires_grad=True), st.tensor(t, requires_grad=True))
        assert st.autograd.gradcheck(fn, args)
        assert st.autograd.gradgradcheck(fn, args)
        tx, tt = data(3, 4, seed=8), data(3, 4, seed=9)
        _, ours = st.func.jvp(fn, (st.tensor(x), st.tensor(t)), (st.tensor(tx), st.tensor(tt)))
        _, theirs = torch.func.jvp(lambda a, b, red=red: TF.binary_cross_entropy_with_logits(a, b, reduction=red),
                                   (torch.tensor(x), torch.tensor(t)), (torch.tensor(tx), torch.tensor(tt)))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("shape", [(), (0, 3)])
def test_fused_pointwise_zero_dim_and_empty(shape):
    """0-d and empty inputs through every fused activation and loss (NumPy's arithmetic on a 0-d array gives a
    scalar, which the kernels' ``out=`` refused; an empty 'mean' divided a Python number by 0): torch's values,
    gradients and shapes."""
    x0 = data(*shape, seed=2) if shape else np.array(-0.7)
    t0 = data(*shape, seed=3) if shape else np.array(0.4)
    calls = [(n, lambda m, x, t, n=n: getattr(m, n)(x)) for n in
             ("elu", "selu", "celu", "softplus", "mish", "hardswish", "hardsigmoid", "logsigmoid")]
    calls += [(f"{n}-{r}", lambda m, x, t, n=n, r=r: getattr(m, n)(x, t, reduction=r))
              for n in ("mse_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy_with_logits")
              for r in ("mean", "sum", "none")]
    for name, fn in calls:
        res = []
        for lib, mod in ((torch, TF), (st, F)):
            x = lib.tensor(x0, requires_grad=True)
            y = fn(mod, x, lib.tensor(t0))
            y.sum().backward()
            res.append((y.detach().numpy(), x.grad.numpy()))
        for a, b in zip(*res):
            assert a.shape == b.shape, name
            np.testing.assert_allclose(a, b, rtol=1e-14, err_msg=name)


def test_celu_alpha_zero_refused_as_torch():
    """celu's gradient scale is 1 / alpha: alpha = 0 is torch's RuntimeError (with a code here), not a Python
    ZeroDivisionError from the primitive's parameters."""
    for lib, mod in ((torch, TF), (st, F)):
        with pytest.raises(RuntimeError, match="alpha cannot be 0"):
            mod.celu(lib.tensor([-1.0, 0.0, 1.0]), 0.0)


@pytest.mark.parametrize("name,kw", [("huber_loss", {"delta": 0.0}), ("huber_loss", {"delta": -1.0}),
                                     ("smooth_l1_loss", {"beta": -1.0})])
def test_loss_parameter_refused_as_torch(name, kw):
    """A non-positive delta / negative beta is torch's RuntimeError (the composite had answered a wrong loss)."""
    for lib, mod in ((torch, TF), (st, F)):
        with pytest.raises(RuntimeError, match="does not support"):
            getattr(mod, name)(lib.tensor([1.0, 2.0]), lib.tensor([0.0, 0.0]), **kw)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_fused_as_torch(reduction, dtype, monkeypatch, primitive_calls):
    """binary_cross_entropy (no weight): one primitive with torch's fused gradient (binary_cross_entropy_backward,
    its 1e-12 floor a float32 constant as torch's), both gradients and the second derivatives through the gradient's
    own derivative (torch's double-backward formulas, eps inside the products) and the target's ``-logit(x) g``,
    at 0, 1 and tiny probabilities (the logs clamped at -100, inf target gradients), against torch."""

    rng = np.random.default_rng(0)
    x, t = rng.random((6, 7)), rng.random((6, 7))
    x[0, :4], t[0, :4] = [0.0, 1.0, 1e-30, 0.5], [0.0, 1.0, 1.0, 0.5]
    x, t = x.astype(dtype), t.astype(dtype)
    res = []
    for lib, mod in ((torch, TF), (st, F)):
        xt, tt = lib.tensor(x, requires_grad=True), lib.tensor(t, requires_grad=True)
        y = mod.binary_cross_entropy(xt, tt, reduction=reduction)
        gx, gt = lib.autograd.grad(y, (xt, tt), lib.ones_like(y) * 0.7, create_graph=True)
        hx, ht = lib.autograd.grad((gx * gx).sum() + (gx * tt).sum(), (xt, tt))
        (kx,) = lib.autograd.grad((gt[1:] * xt[1:]).sum(), (xt,))
        res.append([a.detach().numpy() for a in (y, gx, gt, hx, ht, kx)] + [(y.grad_fn.name(), gx.grad_fn.name())])
    *got, ns = res[1]
    *want, nt = res[0]
    assert ns == nt == ("BinaryCrossEntropyBackward0", "BinaryCrossEntropyBackwardBackward0")
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=2e-6 if dtype == "float32" else 1e-13, atol=0)
    calls = primitive_calls
    calls.clear()
    loss = F.binary_cross_entropy(st.tensor(x, requires_grad=True), st.tensor(t), reduction=reduction)
    calls.clear()
    loss.backward(st.ones_like(loss))
    assert calls == ["binary_cross_entropy_backward"], calls


def test_bce_gradcheck_and_forward_mode():
    x, t = np.random.default_rng(1).uniform(0.1, 0.9, (3, 4)), np.random.default_rng(2).random((3, 4))
    for red in ("mean", "none"):
        fn = lambda a, b, red=red: F.binary_cross_entropy(a, b, reduction=red)  # noqa: E731
        args = (st.tensor(x, requires_grad=True), st.tensor(t, requires_grad=True))
        assert st.autograd.gradcheck(fn, args)
        assert st.autograd.gradgradcheck(fn, args)
        tx, tt = data(3, 4, seed=8) * 0.01, data(3, 4, seed=9)
        _, ours = st.func.jvp(fn, (st.tensor(x), st.tensor(t)), (st.tensor(tx), st.tensor(tt)))
        _, theirs = torch.func.jvp(lambda a, b, red=red: TF.binary_cross_entropy(a, b, reduction=red),
                                   (torch.tensor(x), torch.tensor(t)), (torch.tensor(tx), torch.tensor(tt)))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-13, atol=1e-15)
