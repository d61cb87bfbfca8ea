"""The intra-op thread pool (``backends.thread_pool``): large kernels split over the threads give torch's values
and gradients, the thread count behaves as torch's, and the pool survives errors, nesting and fork.

The inputs are above the pool's size threshold (``2 * GRAIN`` elements), so these tests run the split kernels;
three threads make chunk boundaries fall in the middle of rows and runs.
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from collections.abc import Iterator

import numpy as np
import pytest
import torch

import shapetorch as st
from shapetorch.backends import thread_pool

BIG = 2 * thread_pool.GRAIN + 1234  # not a multiple of the thread count


@pytest.fixture(autouse=True)
def _restore_threads() -> Iterator[None]:
    before = st.get_num_threads()
    yield
    st.set_num_threads(before)


@pytest.fixture(params=[1, 3])
def threads(request: pytest.FixtureRequest) -> int:
    st.set_num_threads(request.param)
    return int(request.param)


def _pair(*shape: int, seed: int = 0) -> tuple[st.Tensor, torch.Tensor]:
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return st.tensor(a), torch.from_numpy(a.copy())


def _close(ours: st.Tensor, theirs: torch.Tensor, tol: float = 1e-6) -> None:
    assert ours.dtype.name == str(theirs.dtype).split(".")[1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)


def test_elementwise_is_numpys_exactly(threads: int) -> None:
    (x, tx), (y, ty) = _pair(BIG), _pair(BIG, seed=1)
    nx, ny = x.numpy(), y.numpy()
    for ours, ref in ((x + y, nx + ny), (x * y, nx * ny), (x.exp(), np.exp(nx)), (x.tanh(), np.tanh(nx)),
                      (x * 2.5, nx * np.float32(2.5)), (x > y, nx > ny)):
        assert ours.numpy().dtype == ref.dtype
        assert np.array_equal(ours.numpy(), ref)
        assert ours.numpy().flags.c_contiguous
    _close(x.exp(), tx.exp())
    _close(x - y, tx - ty)


def test_broadcast_elementwise(threads: int) -> None:
    (m, tm), (v, tv) = _pair(700, 400), _pair(400, seed=1)
    _close(m + v, tm + tv)
    _close(v * m, tv * tm)
    (c, tc) = _pair(700, 1, seed=2)
    _close(m / c, tm / tc)
    (i, ti) = _pair(3, 700, 400, seed=3)
    ours, theirs = i.to(st.int32) + m.to(st.int64), ti.to(torch.int32) + tm.to(torch.int64)
    assert ours.dtype == st.int64 and torch.equal(torch.from_numpy(ours.numpy()), theirs)


@pytest.mark.parametrize("dim", [None, 0, 1, -1, (0, 2), (1, 2)])
def test_reductions(threads: int, dim: object) -> None:
    x, tx = _pair(60, 70, 80)
    for keep in (False, True):
        if dim is None:
            _close(x.sum(), tx.sum(), 1e-4)
            _close(x.amax(), tx.amax())
            _close(x.mean(), tx.mean(), 1e-5)
            continue
        _close(x.sum(dim, keepdim=keep), tx.sum(dim, keepdim=keep), 1e-4)
        _close(x.amax(dim, keepdim=keep), tx.amax(dim, keepdim=keep))
        _close(x.amin(dim, keepdim=keep), tx.amin(dim, keepdim=keep))
        _close(x.mean(dim, keepdim=keep), tx.mean(dim, keepdim=keep), 1e-5)


def test_integer_sum_and_nan_max(threads: int) -> None:
    a = np.random.default_rng(0).integers(-1000, 1000, BIG).astype(np.int32)
    assert st.tensor(a).sum().item() == torch.from_numpy(a).sum().item()
    f = np.random.default_rng(1).standard_normal(BIG).astype(np.float32)
    f[BIG - 5] = np.nan  # in the last chunk
    assert np.isnan(st.tensor(f).amax().item()) and np.isnan(torch.from_numpy(f).amax().item())


@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_softmax_family_values_and_gradients(threads: int, dim: int) -> None:
    x, tx = _pair(3, 300, 400)
    g, tg = _pair(3, 300, 400, seed=1)
    for ours_fn, torch_fn in ((st.softmax, torch.softmax), (st.log_softmax, torch.log_softmax)):
        xs, xt = x.clone().requires_grad_(), tx.clone().requires_grad_()
        ours, theirs = ours_fn(xs, dim), torch_fn(xt, dim)
        _close(ours, theirs, 2e-6)
        ours.backward(g)
        theirs.backward(tg)
        _close(xs.grad, xt.grad, 5e-6)


def test_layer_norm_and_gelu_values_and_gradients(threads: int) -> None:
    x, tx = _pair(4, 200, 384)
    g, tg = _pair(4, 200, 384, seed=1)
    w, tw = _pair(384, seed=2)
    b, tb = _pair(384, seed=3)
    params = [t.requires_grad_() for t in (x, w, b)]
    tparams = [t.requires_grad_() for t in (tx, tw, tb)]
    out = st.nn.functional.layer_norm(x, (384,), w, b)
    tout = torch.nn.functional.layer_norm(tx, (384,), tw, tb)
    _close(out, tout, 1e-5)
    out.backward(g)
    tout.backward(tg)
    for p, tp in zip(params, tparams, strict=True):
        _close(p.grad, tp.grad, 2e-4)
    y, ty = x.detach().requires_grad_(), tx.detach().requires_grad_()
    out, tout = st.nn.functional.gelu(y), torch.nn.functional.gelu(ty)
    _close(out, tout, 2e-6)
    out.backward(g)
    tout.backward(tg)
    _close(y.grad, ty.grad, 2e-6)


def test_layer_norm_over_two_dims_and_without_affine(threads: int) -> None:
    x, tx = _pair(50, 80, 90)
    _close(st.nn.functional.layer_norm(x, (80, 90)), torch.nn.functional.layer_norm(tx, (80, 90)), 1e-5)
    xs, xt = x.requires_grad_(), tx.requires_grad_()
    st.nn.functional.layer_norm(xs, (90,)).sum().backward()
    torch.nn.functional.layer_norm(xt, (90,)).sum().backward()
    _close(xs.grad, xt.grad, 1e-4)


def test_batched_matmul(threads: int) -> None:
    q, tq = _pair(8, 64, 8, 64)
    k, tk = _pair(8, 64, 8, 64, seed=1)
    q, k, tq, tk = q.transpose(1, 2), k.transpose(1, 2), tq.transpose(1, 2), tk.transpose(1, 2)
    _close(q @ k.transpose(-2, -1), tq @ tk.transpose(-2, -1), 1e-4)


def test_embedding_gradient_accumulates_repeated_rows() -> None:
    idx = np.random.default_rng(0).integers(0, 7, (16, 32))
    w = np.random.default_rng(1).standard_normal((7, 5)).astype(np.float32)
    ws, wt = st.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    g = np.random.default_rng(2).standard_normal((16, 32, 5)).astype(np.float32)
    st.nn.functional.embedding(st.tensor(idx), ws).backward(st.tensor(g))
    torch.nn.functional.embedding(torch.tensor(idx), wt).backward(torch.tensor(g))
    _close(ws.grad, wt.grad, 1e-5)
    xs, xt = st.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    rows = [3, -1, 3, 0, -7]  # negative rows name the same rows as their positive twins
    xs[rows].backward(st.ones(5, 5))
    xt[rows].backward(torch.ones(5, 5))
    _close(xs.grad, xt.grad)


def test_thread_count_as_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert thread_pool.default_num_threads() == 3
    monkeypatch.delenv("OMP_NUM_THREADS")
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", "import torch; print(torch.get_num_threads())"], env=env,
                         capture_output=True, text=True, check=True)
    assert thread_pool.default_num_threads() == int(out.stdout)
    with pytest.raises(st.ShapetorchError) as e:
        st.set_num_threads(-2)
    assert e.value.code == "argument_error_invalid"


def test_errors_wait_for_every_chunk_and_propagate() -> None:
    st.set_num_threads(3)
    done = []

    def chunk(lo: int, hi: int) -> int:
        if lo > 0:
            raise ValueError("chunk failed")
        done.append(lo)
        return lo

    with pytest.raises(ValueError, match="chunk failed"):
        thread_pool.map_ranges(chunk, 30, 3)
    assert done == [0]
    assert thread_pool.map_ranges(lambda lo, hi: (lo, hi), 10, 3) == [(0, 3), (3, 6), (6, 10)]


def test_a_chunk_does_not_split_again() -> None:
    st.set_num_threads(2)
    inner = thread_pool.map_ranges(lambda lo, hi: thread_pool.parts(10 * BIG), 2, 2)
    assert inner == [1, 1]
    assert thread_pool.parts(10 * BIG) == 2


def _child_sum(q: multiprocessing.Queue[float]) -> None:
    q.put(float(st.ones(BIG).sum().item()))


@pytest.mark.skipif(sys.platform == "win32", reason="fork is POSIX")
def test_a_forked_child_gets_its_own_pool() -> None:
    st.set_num_threads(2)
    assert st.ones(BIG).sum().item() == BIG  # the parent's pool exists
    ctx = multiprocessing.get_context("fork")
    q: multiprocessing.Queue[float] = ctx.Queue()
    p = ctx.Process(target=_child_sum, args=(q,))
    p.start()
    p.join(60)
    assert p.exitcode == 0, "the child hung or failed on a split kernel"
    assert q.get(timeout=5) == BIG
