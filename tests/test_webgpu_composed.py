"""The WebGPU kernels of ``backends/webgpu/composed_kernels`` against torch on the CPU: cross, cdist,
diagonal_scatter, the indices of median/nanmedian and of cummax/cummin, with hypothesis over shapes and
gradients through the existing vjps. Skipped without a WebGPU adapter unless SHAPETORCH_REQUIRE_WEBGPU=1.
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
TOL = 1e-5  # float32: sums of a few products


def _run(fn: Callable[..., Any], *arrays: np.ndarray, grad: bool = False, tol: float = TOL) -> None:
    """fn(lib, *tensors) on the device and on torch: values, dtypes (and the gradients with ``grad``)."""
    ours = [st.tensor(a, device=DEV, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
    theirs = [torch.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
    got, want = fn(st, *ours), fn(torch, *theirs)
    gs, ws = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    for g, w in zip(gs, ws):
        assert g.device == st.device(DEV)
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
        np.testing.assert_allclose(g.detach().cpu().numpy(), w.detach().numpy(), rtol=tol, atol=tol)
    if grad:
        rng = np.random.default_rng(5)
        wt = rng.normal(size=tuple(ws[0].shape)).astype(np.float32)
        (gs[0] * st.tensor(wt, device=DEV)).sum().backward()
        (ws[0] * torch.tensor(wt)).sum().backward()
        for o, t in zip(ours, theirs):
            if t.grad is not None:
                assert o.grad is not None and o.grad.device == st.device(DEV)
                np.testing.assert_allclose(o.grad.cpu().numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-4)


@given(batch=shapes(0, 2, 0, 3), dim=hs.integers(0, 2), bcast=hs.booleans(), seed=hs.integers(0, 2**16))
@fast(20)
def test_cross(batch, dim, bcast, seed):
    rng = np.random.default_rng(seed)
    shape = list(batch)
    dim = min(dim, len(shape))
    shape.insert(dim, 3)
    a = rng.normal(size=shape).astype(np.float32)
    b = rng.normal(size=shape).astype(np.float32)
    if bcast and a.ndim > 1:
        a = a[(slice(None),) * (dim) + (slice(None),)][:1] if dim != 0 else a[:, :1]
    _run(lambda lib, x, y: lib.cross(x, y, dim=dim - len(shape)), a, b, grad=True)


def test_cross_integers_exact_or_refused():
    a = np.array([[1, 2, 3], [4, 5, 6]], np.int64)
    b = np.array([[7, -8, 9], [0, 1, -1]], np.int64)
    _run(lambda lib, x, y: lib.cross(x, y, dim=1), a, b)
    big = st.tensor([[2**30, 2**30, 0]], device=DEV)
    r = st.cross(big, st.tensor([[0, 4, 4]], device=DEV), dim=1)
    with pytest.raises(st.DTypeError):
        r.cpu()


@given(p=hs.sampled_from([0.0, 1.0, 2.0, 0.5, 3.0, float("inf")]), P=hs.integers(0, 4), R=hs.integers(1, 4),
       M=hs.integers(0, 4), batch=shapes(0, 1, 1, 2), seed=hs.integers(0, 2**16))
@fast(25)
def test_cdist(p, P, R, M, batch, seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(*batch, P, M)).astype(np.float32)
    b = rng.normal(size=(*batch, R, M)).astype(np.float32)
    if M and P:
        b[..., 0, 0] = a[..., 0, 0]  # an equal coordinate (p = 0 counts differences)
    _run(lambda lib, x, y: lib.cdist(x, y, p=p), a, b, grad=p in (1.0, 2.0, 3.0) and M > 0, tol=1e-4)


def test_cdist_nan():
    a = np.array([[0.0, np.nan], [1.0, 2.0]], np.float32)
    b = np.array([[0.0, 1.0]], np.float32)
    for p in (0.0, 1.0, 2.0):
        _run(lambda lib, x, y: lib.cdist(x, y, p=p), a, b)


@given(shape=hs.sampled_from([(3, 4), (4, 3), (2, 3, 3), (3, 2, 4)]), offset=hs.integers(-2, 2),
       seed=hs.integers(0, 2**16))
@fast(20)
def test_diagonal_scatter(shape, offset, seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=shape).astype(np.float32)
    diag = torch.tensor(a).diagonal(offset, -2, -1)
    src = rng.normal(size=tuple(diag.shape)).astype(np.float32)
    _run(lambda lib, x, s: lib.diagonal_scatter(x, s, offset, -2, -1), a, src, grad=True)


@given(shape=shapes(1, 3, 1, 5), seed=hs.integers(0, 2**16), nan=hs.booleans(), dim=hs.integers(-3, 2))
@fast(30)
def test_median_and_cumulative_extremes(shape, seed, nan, dim):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, shape).astype(np.float32)  # ties on purpose: which index wins is torch's rule
    if nan and a.size > 1:
        a.reshape(-1)[rng.integers(0, a.size)] = np.nan
    dim = dim % len(shape)
    for op in ("median", "nanmedian", "cummax", "cummin"):
        _run(lambda lib, x: tuple(getattr(lib, op)(x, dim)), a)
    _run(lambda lib, x: lib.median(x), a)
    ints = np.nan_to_num(a).astype(np.int64)
    _run(lambda lib, x: tuple(lib.cummax(x, dim)), ints)
    _run(lambda lib, x: tuple(lib.median(x, dim)), ints)


def test_median_gradient_on_the_device():
    a = np.random.default_rng(1).normal(size=(3, 5)).astype(np.float32)
    _run(lambda lib, x: lib.median(x, 1)[0], a, grad=True)
    _run(lambda lib, x: lib.cummax(x, 1)[0], a, grad=True)


def test_cpu_fast_paths_run_as_composites_on_the_device():
    """The fused CPU primitives have no WebGPU kernel by design: their ops take the composite path there, with
    torch's values and gradients, and nothing raises."""
    import shapetorch.nn.functional as F
    from shapetorch._engine.primitives import PRIMS
    from shapetorch.backends.webgpu import backend

    assert set(backend.CPU_FAST_PATHS).isdisjoint(backend.MISSING)
    for name in backend.CPU_FAST_PATHS:
        assert "webgpu" not in PRIMS[name].kernels and "cpu" in PRIMS[name].kernels
    rng = np.random.default_rng(8)
    x = rng.normal(size=(4, 3, 5)).astype(np.float32)
    w = rng.uniform(0.5, 1.5, 3).astype(np.float32)
    _run(lambda lib, a, g: (lib.nn.functional if lib is torch else F).batch_norm(
        a, None, None, weight=g, training=True), x, w, grad=True, tol=1e-4)
    logits = rng.normal(size=(6, 4)).astype(np.float32)
    target = np.array([0, 3, 1, 1, 2, 0])
    _run(lambda lib, a, t: (lib.nn.functional if lib is torch else F).cross_entropy(a, t), logits, target, grad=True)
    q, k, v = (rng.normal(size=(2, 3, 5, 4)).astype(np.float32) for _ in range(3))
    _run(lambda lib, a, b, c: (lib.nn.functional if lib is torch else F).scaled_dot_product_attention(
        a, b, c, is_causal=True), q, k, v, grad=True, tol=1e-4)
    m1, m2 = rng.normal(size=(3, 4)).astype(np.float32), rng.normal(size=(4, 2)).astype(np.float32)
    _run(lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), m1, m2, tol=1e-4)  # no grad: the fast path's case


@given(shape=shapes(1, 3, 1, 6), seed=hs.integers(0, 2**16), dim=hs.integers(-3, 2), nan=hs.booleans())
@fast(25)
def test_mode(shape, seed, dim, nan):
    """Without NaN: torch's values and indices. With NaN the CPU's rule (NaNs count as one value, sorted last)
    is the reference: torch's CPU picks a NaN among equally frequent values, shapetorch's CPU kernel the smallest
    value (a difference of the CPU kernel, kept here as it is)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, shape).astype(np.float32)
    dim = dim % len(shape)
    if not nan:
        _run(lambda lib, x: tuple(lib.mode(x, dim)), a)
        _run(lambda lib, x: tuple(lib.mode(x, dim)), a.astype(np.int64))
        return
    a.reshape(-1)[rng.integers(0, a.size)] = np.nan
    got, cpu = st.mode(st.tensor(a, device=DEV), dim), st.mode(st.tensor(a), dim)
    np.testing.assert_array_equal(got.indices.cpu().numpy(), cpu.indices.numpy())
    np.testing.assert_array_equal(got.values.cpu().numpy(), cpu.values.numpy())


def test_poisson_and_real_helpers_on_the_device():
    """poisson reads the rates back and draws on the host (as multinomial); angle and conj_physical of real
    tensors are kernels."""
    st.manual_seed(3)
    r = st.poisson(st.tensor([0.0, 1.0, 50.0], device=DEV))
    assert r.device == st.device(DEV) and r.dtype == st.float32
    counts = r.cpu().numpy()
    assert counts[0] == 0 and (counts >= 0).all() and (counts == np.round(counts)).all()
    x = np.array([-2.0, 0.0, -0.0, 3.0, np.nan, -np.inf], np.float32)
    _run(lambda lib, t: lib.angle(t), x)
    _run(lambda lib, t: lib.conj_physical(t), x)
    _run(lambda lib, t: lib.angle(t), np.array([-3, 0, 2]))
