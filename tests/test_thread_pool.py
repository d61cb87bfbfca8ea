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
import threading
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
    assert thread_pool.parts(10 * BIG) == 10 * BIG // thread_pool.GRAIN  # outside a chunk: one per grain


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


# -- the fused softmax kernels, sums as dot products, and results that do not depend on the thread count ----------

def _softmax_cases() -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    cases = [rng.standard_normal((700, 400)) * 4, rng.standard_normal((7, 300)) * 4]  # above and below the split
    edge = rng.standard_normal((700, 400)) * 4
    edge[3] += 200.0  # exp overflows: the block is redone shifted by the row's max
    edge[11] -= 300.0  # every exp underflows
    edge[20, :390] = -np.inf  # a masked row, 10 entries left
    edge[21, 5] = np.nan
    edge[22, 7] = np.inf
    edge[30] = -3.0  # every row sum below 1: the shifted path
    cases.append(edge)
    # an overflowing and an underflowing row with no NaN in their block (a NaN sends a whole block to the shifted
    # path, which would hide a wrong test of the fast path's row sums)
    finite = rng.standard_normal((700, 400)) * 4
    finite[3] += 200.0
    finite[500] -= 300.0
    cases.append(finite)
    return cases


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", range(4))
def test_softmax_kernels_as_torch_on_edges_dims_and_layouts(threads: int, dtype: type, case: int) -> None:
    a = _softmax_cases()[case].astype(dtype)
    g = np.random.default_rng(6).standard_normal(a.shape).astype(dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    views = {"rows": (a, -1), "cols": (a, 0), "transposed": (a.T, -1), "3-d middle": (a.reshape(7, -1, a.shape[-1]), 1)}
    for name, (x, dim) in views.items():
        for ours_fn, torch_fn in ((st.softmax, torch.softmax), (st.log_softmax, torch.log_softmax)):
            xs, xt = st.tensor(x).requires_grad_(), torch.tensor(x).requires_grad_()
            ours, theirs = ours_fn(xs, dim), torch_fn(xt, dim)
            assert ours.dtype.name == str(theirs.dtype).split(".")[1], name
            np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol,
                                       err_msg=f"{ours_fn.__name__} {name}")
            gx = g.T if name == "transposed" else g.reshape(x.shape)
            ours.backward(st.tensor(gx))
            theirs.backward(torch.tensor(gx))
            np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=tol, atol=tol,
                                       err_msg=f"{ours_fn.__name__} backward {name}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_redoes_only_the_rows_out_of_range(threads: int, dtype: type) -> None:
    """Causal attention scores: the first queries see one or two keys, so their row sums fall below 1 (softmax) now
    and then; those rows alone are redone shifted by their maxima, beside a NaN row, an all-masked row, an
    overflowing and a very negative one, in a block of rows that are all in range. Values and gradients as torch's,
    and the rows in range computed without the shift (the same bits as the unshifted formula)."""
    rng = np.random.default_rng(11)
    a = (rng.standard_normal((8, 4, 64, 64)) * 2).astype(dtype)
    a[..., np.triu(np.ones((64, 64), bool), 1)] = -np.inf
    a[0, 0, 5] = np.nan
    a[1, 1, 9] = -np.inf
    a[2, 2, 11, :12] = 120.0
    a[3, 3, 40] -= 300.0
    g = rng.standard_normal(a.shape).astype(dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for ours_fn, torch_fn, plain in ((st.softmax, torch.softmax, lambda e: e / e.sum(-1, keepdims=True)),
                                     (st.log_softmax, torch.log_softmax, lambda e: a - np.log(e.sum(-1, keepdims=True)))):
        xs, xt = st.tensor(a).requires_grad_(), torch.tensor(a).requires_grad_()
        ours, theirs = ours_fn(xs, -1), torch_fn(xt, -1)
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol, equal_nan=True)
        ours.backward(st.tensor(g))
        theirs.backward(torch.tensor(g))
        np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=tol, atol=tol, equal_nan=True)
        with np.errstate(all="ignore"):
            e = np.exp(a)
            want = plain(e)
        total = e.sum(-1)
        fine = (total >= (1.0 if ours_fn is st.softmax else 2.0**-24)) & (total <= 2.0**24)
        assert fine.mean() > 0.9 and not fine.all()
        np.testing.assert_allclose(ours.detach().numpy()[fine], want[fine], rtol=tol, atol=tol)


def test_large_sum_is_as_accurate_as_a_pairwise_sum(threads: int) -> None:
    x = np.random.default_rng(7).random(1 << 22).astype(np.float32)
    exact = x.astype(np.float64).sum()
    ours = float(st.tensor(x).sum().item())
    assert abs(ours - exact) / exact < 2e-7  # a sum that adds the elements in order is off by about 1e-4 here
    rows = x.reshape(512, 8192)
    exact_rows = rows.astype(np.float64).sum(1)
    assert np.max(np.abs(st.tensor(rows).sum(1).numpy() - exact_rows) / exact_rows) < 2e-7
    for n in (8192, 8193, 300):  # rows at the dot products' limit, past it, and short
        part = x[: (x.size // n) * n].reshape(-1, n)
        exact = part.astype(np.float64).sum(1)
        assert np.max(np.abs(st.tensor(part).sum(-1).numpy() - exact) / exact) < 2e-7
        strided = st.tensor(part).t()  # not contiguous: NumPy's own reduction
        np.testing.assert_allclose(strided.sum(0).numpy(), exact, rtol=2e-7)
        np.testing.assert_allclose(strided.sum().item(), exact.sum(), rtol=2e-7)


def _results(a: np.ndarray) -> list[np.ndarray]:
    x = st.tensor(a)
    return [r.numpy() for r in (x.sum(), x.sum(0), x.sum(-1), x.sum((0, 2)), x.amax(1), x.mean(), x.softmax(-1),
                                x.log_softmax(1), x.softmax(0), x.exp(), x * 3.0)]


def test_one_thread_or_many_give_the_same_bits() -> None:
    a = np.random.default_rng(8).standard_normal((30, 200, 300)).astype(np.float32)
    st.set_num_threads(1)
    one = _results(a)
    for n in (2, 3):
        st.set_num_threads(n)
        for r1, rn in zip(one, _results(a), strict=True):
            assert r1.dtype == rn.dtype and r1.shape == rn.shape
            assert np.array_equal(r1, rn, equal_nan=True)


def test_the_caller_runs_every_chunk_when_no_worker_is_free() -> None:
    st.set_num_threads(3)
    thread_pool.map_ranges(lambda lo, hi: None, 2, 2)  # the workers exist
    release = threading.Event()
    blockers = [thread_pool._Job(lambda lo, hi: release.wait(60), [0, 1]) for _ in range(thread_pool._STATE.workers)]
    for job in blockers:
        thread_pool._STATE.queue.put(job)
    try:
        ran: list[str] = []
        out = thread_pool.map_ranges(lambda lo, hi: ran.append(threading.current_thread().name) or lo, 40, 8)
        assert out == [40 * i // 8 for i in range(8)]
        assert set(ran) == {threading.current_thread().name}
    finally:
        release.set()
    for job in blockers:
        assert job.done.acquire(timeout=60)


def test_callers_on_several_threads_share_the_pool() -> None:
    st.set_num_threads(2)
    x = np.random.default_rng(9).standard_normal((600, 500)).astype(np.float32)
    want = np.exp(x)
    got: list[bool] = []

    def run() -> None:
        got.extend(np.array_equal(st.tensor(x).exp().numpy(), want) for _ in range(20))

    callers = [threading.Thread(target=run) for _ in range(3)]
    for t in callers:
        t.start()
    for t in callers:
        t.join(120)
    assert got == [True] * 60


def test_every_chunk_runs_once_whoever_claims_it() -> None:
    st.set_num_threads(3)
    for _ in range(20):
        seen: list[int] = []
        out = thread_pool.map_ranges(lambda lo, hi: seen.append(lo) or (lo, hi), 1000, 64)
        assert out == [(1000 * i // 64, 1000 * (i + 1) // 64) for i in range(64)]
        assert sorted(seen) == [lo for lo, _ in out]


def _within_ulps(ours: np.ndarray, theirs: np.ndarray, eps: float, ulps: int) -> None:
    """Each element within ``ulps`` units in the last place of torch's (at the next power of two above it)."""
    scale = np.exp2(np.ceil(np.log2(np.maximum(np.abs(theirs), 2.0**-14))))
    bad = np.abs(ours - theirs) > ulps * eps * scale
    assert not bad.any(), f"{bad.sum()} elements off, e.g. {ours[bad][:3]} vs {theirs[bad][:3]}"


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_softmax_computes_in_float32_as_torch(dtype: str) -> None:
    a = np.random.default_rng(10).standard_normal((600, 500)).astype(np.float32) * 3
    g = np.random.default_rng(11).standard_normal((600, 500)).astype(np.float32)
    eps = 2.0**-10 if dtype == "float16" else 2.0**-7  # one ulp at 1.0
    for ours_fn, torch_fn in ((st.softmax, torch.softmax), (st.log_softmax, torch.log_softmax)):
        x = st.tensor(a).to(getattr(st, dtype)).requires_grad_()
        tx = torch.tensor(a).to(getattr(torch, dtype)).requires_grad_()
        ours, theirs = ours_fn(x, -1), torch_fn(tx, -1)
        assert ours.dtype.name == dtype
        # rounded once from float32 (rounding each pass in half precision was off by many ulp): softmax within
        # two ulp of torch's; log_softmax within one of the exact value (torch rounds its log-sum to the half
        # dtype first, which x - log-sum magnifies where they nearly cancel)
        got = ours.detach().float().numpy()
        if ours_fn is st.softmax:
            _within_ulps(got, theirs.detach().float().numpy(), eps, 2)
        else:
            exact = torch_fn(torch.tensor(x.detach().float().numpy(), dtype=torch.float64), -1).numpy()
            _within_ulps(got, exact, eps, 1)
        ours.backward(st.tensor(g).to(getattr(st, dtype)))
        theirs.backward(torch.tensor(g).to(getattr(torch, dtype)))
        assert x.grad.dtype.name == dtype
        # g - exp(y) * sum(g) cancels: its error is an ulp of the terms, not of the (smaller) result
        np.testing.assert_allclose(x.grad.float().numpy(), tx.grad.float().numpy(), rtol=4 * eps, atol=4 * eps)


def _large_kernels() -> list[tuple[str, object]]:
    """The large group of ``bench_ops`` (issue 17's every-core goal), forward and backward: each must cut its
    work into chunks that more than one thread can claim."""
    (x, _), (y, _) = _pair(1_000_000), _pair(1_000_000, seed=1)
    (s, _), (g, _) = _pair(512, 1024), _pair(512, 1024, seed=2)
    w, _ = _pair(64, 8192)
    leaf = s.detach().clone().requires_grad_()
    return [
        ("add", lambda: x + y), ("mul by a number", lambda: x * 2.0), ("exp", x.exp),
        ("sum", x.sum), ("amax", x.amax), ("sum(-1)", lambda: s.sum(-1)),
        ("sum(0)", lambda: s.sum(0)), ("amax(-1)", lambda: s.amax(-1)),
        ("softmax", lambda: s.softmax(-1)), ("log_softmax", lambda: s.log_softmax(-1)),
        ("softmax(0) over rows of 8192", lambda: w.softmax(0)),  # (narrower blocks of columns cost more than a thread gives)
        ("softmax backward", lambda: st.autograd.grad(leaf.softmax(-1), leaf, g)),
        ("log_softmax backward", lambda: st.autograd.grad(leaf.log_softmax(-1), leaf, g)),
    ]


def test_every_large_kernel_splits_over_two_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    st.set_num_threads(2)
    split: list[int] = []
    real = thread_pool.map_ranges

    def spy(fn: object, n: int, k: int) -> object:
        split.append(k)
        return real(fn, n, k)  # type: ignore[arg-type]

    monkeypatch.setattr(thread_pool, "map_ranges", spy)
    for name, run in _large_kernels():
        split.clear()
        run()  # type: ignore[operator]
        assert any(k >= 2 for k in split), f"{name} ran on one thread: chunks {split}"


@pytest.mark.parametrize("shape,dim", [((256, 512), 0), ((4096, 64), 0), ((8, 64, 512), (0, 1)), ((300, 2000), 0),
                                       ((2, 3, 40000), 0), ((9000, 8), 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_column_sums_as_torch(threads: int, shape: tuple[int, ...], dim: object, dtype: type) -> None:
    """Sums over the leading dims (a bias's gradient) are BLAS's products with ones: torch's values, keepdim too,
    and inf, NaN and -0.0 as torch sums them."""
    a = np.random.default_rng(3).standard_normal(shape).astype(dtype)
    a.reshape(-1)[:3] = (np.inf, np.nan, -0.0)
    a[(slice(None),) * (a.ndim - 1) + (-1,)] = -0.0  # a column of negative zeros sums to +0.0 in torch
    x, tx = st.tensor(a), torch.from_numpy(a.copy())
    for keep in (False, True):
        ours, theirs = x.sum(dim, keepdim=keep), tx.sum(dim, keepdim=keep)  # type: ignore[arg-type]
        assert ours.dtype.name == str(theirs.dtype).split(".")[1] and tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-4)
        real = ~np.isnan(theirs.numpy())  # (a NaN's sign is not compared)
        assert np.array_equal(np.signbit(ours.numpy())[real], np.signbit(theirs.numpy())[real])


def test_column_sums_give_the_same_bits_for_any_thread_count() -> None:
    a = np.random.default_rng(4).standard_normal((300, 2000)).astype(np.float32)
    st.set_num_threads(1)
    one = st.tensor(a).sum(0).numpy()
    for n in (2, 3):
        st.set_num_threads(n)
        assert np.array_equal(st.tensor(a).sum(0).numpy(), one)
