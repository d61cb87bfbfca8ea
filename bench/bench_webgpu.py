"""The WebGPU backend against NumPy and torch (CPU): matmul, elementwise chains, reductions, an MLP
training step, and the per-dispatch overhead; each case also checks its result against NumPy.

Run: ``python -m bench.bench_webgpu [--quick] [--json PATH]``. ``--quick`` skips the 4096x4096 matmul
(on a software adapter such as lavapipe it takes minutes) and uses fewer repeats. WebGPU times include
waiting for the device (``shapetorch.synchronize()``). Tests never assert these numbers.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import shapetorch as st

from ._timing import fmt_time


def timed(fn: Callable[[], Any], repeat: int, sync: bool = False) -> float:
    """Median seconds of ``repeat`` calls after one warm-up call (which also compiles the pipelines)."""
    def once() -> float:
        t0 = time.perf_counter()
        fn()
        if sync:
            st.synchronize()
        return time.perf_counter() - t0

    once()
    return statistics.median(once() for _ in range(repeat))


def err(ours: Any, ref: np.ndarray) -> float:
    a = np.asarray(ours.detach().cpu().numpy(), dtype=np.float64)
    scale = max(1.0, float(np.abs(ref).max()))
    return float(np.abs(a - ref).max()) / scale


def cases(quick: bool) -> list[tuple[str, Callable[[], Any], Callable[[], Any], Callable[[], Any], Callable[[], float], int]]:
    """(name, webgpu fn, numpy fn, torch fn, relative error of the webgpu result, repeats)."""
    rng = np.random.default_rng(0)
    out = []
    for n in (1024,) if quick else (1024, 4096):
        a, b = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32)
        ga, gb = st.tensor(a, device="webgpu"), st.tensor(b, device="webgpu")
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        out.append((f"matmul {n}x{n}", lambda ga=ga, gb=gb: ga @ gb, lambda a=a, b=b: a @ b,
                    lambda ta=ta, tb=tb: ta @ tb, lambda ga=ga, gb=gb, ref=ref: err(ga @ gb, ref), 1 if n > 1024 else 2))
    m = 1_000_000
    x, y = rng.standard_normal(m, dtype=np.float32), rng.standard_normal(m, dtype=np.float32)
    gx, gy = st.tensor(x, device="webgpu"), st.tensor(y, device="webgpu")
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    chain_ref = np.tanh(np.exp(x.astype(np.float64) * 0.5 + 1) * y)

    def chain(lib_x: Any, lib_y: Any, lib: Any) -> Any:
        return lib.tanh(lib.exp(lib_x * 0.5 + 1) * lib_y)

    out.append(("elementwise chain 1e6 (5 ops)", lambda: chain(gx, gy, st), lambda: chain(x, y, np),
                lambda: chain(tx, ty, torch), lambda: err(chain(gx, gy, st), chain_ref), 5))
    sq = rng.standard_normal((1000, 1000), dtype=np.float32)
    gsq, tsq = st.tensor(sq, device="webgpu"), torch.from_numpy(sq)
    out.append(("sum 1e6 (all)", lambda: gx.sum(), lambda: x.sum(), lambda: tx.sum(),
                lambda: err(gx.sum(), np.array(x.astype(np.float64).sum())), 5))
    out.append(("sum 1000x1000 dim=0", lambda: gsq.sum(0), lambda: sq.sum(0), lambda: tsq.sum(0),
                lambda: err(gsq.sum(0), sq.astype(np.float64).sum(0)), 5))
    out.append(("amax 1000x1000 dim=1", lambda: gsq.amax(1), lambda: sq.max(1), lambda: tsq.amax(1),
                lambda: err(gsq.amax(1), sq.max(1).astype(np.float64)), 5))
    out.append(mlp_case(rng))
    return out


def mlp_case(rng: np.random.Generator) -> Any:
    """One SGD step of a 784-256-10 MLP on a batch of 128 (forward, cross-entropy, backward, update)."""
    xs = rng.standard_normal((128, 784), dtype=np.float32)
    ys = rng.integers(0, 10, 128)
    w1 = (rng.standard_normal((784, 256), dtype=np.float32) * 0.05)
    w2 = (rng.standard_normal((256, 10), dtype=np.float32) * 0.05)

    def make(lib: Any, dev: str) -> Callable[[], Any]:
        p = [lib.tensor(w, device=dev, requires_grad=True) for w in (w1, w2)]
        x, y = lib.tensor(xs, device=dev), lib.tensor(ys, device=dev)

        def step() -> Any:
            logits = (x @ p[0]).tanh() @ p[1]
            logp = logits - logits.logsumexp(1, keepdim=True)
            loss = -logp.gather(1, y.unsqueeze(1)).mean()
            loss.backward()
            with lib.no_grad():
                for q in p:
                    q -= 0.1 * q.grad
                    q.grad = None
            return loss

        return step

    def np_step() -> float:
        h = np.tanh(xs @ w1)
        logits = h @ w2
        z = logits - logits.max(1, keepdims=True)
        p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
        g = p
        g[np.arange(128), ys] -= 1
        g /= 128
        gw2 = h.T @ g
        gh = g @ w2.T * (1 - h * h)
        gw1 = xs.T @ gh
        return float(gw1.sum() + gw2.sum())

    ours_step, ref_step = make(st, "webgpu"), make(torch, "cpu")

    def check() -> float:
        a, b = make(st, "webgpu")(), make(torch, "cpu")()
        return abs(a.item() - b.item()) / max(1.0, abs(b.item()))

    return ("MLP step 784-256-10, batch 128", ours_step, np_step, ref_step, check, 3)


def overhead(repeat: int) -> dict[str, float]:
    """Per-op cost of a 4x4 add: recorded only (batched), and with a read-back after each op."""
    a, b = st.rand(4, 4, device="webgpu"), st.rand(4, 4, device="webgpu")
    n = 200
    t0 = time.perf_counter()
    for _ in range(n):
        a + b
    st.synchronize()
    batched = (time.perf_counter() - t0) / n
    t0 = time.perf_counter()
    for _ in range(max(20, repeat)):
        (a + b).numpy()
    synced = (time.perf_counter() - t0) / max(20, repeat)
    c, d = st.rand(4, 4), st.rand(4, 4)
    t0 = time.perf_counter()
    for _ in range(n):
        c + d
    cpu = (time.perf_counter() - t0) / n
    return {"add4x4.webgpu.batched": batched, "add4x4.webgpu.with_readback": synced, "add4x4.cpu": cpu}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args()
    if not st.is_webgpu_available():
        from shapetorch.backends.webgpu.api import unavailable_reason

        print(f"WebGPU is not available: {unavailable_reason()}")
        return 0
    from shapetorch.backends.webgpu.runtime import RT

    print(f"adapter: {RT.summary}  (adapter_type={RT.adapter.info.get('adapter_type')}, "
          f"backend={RT.adapter.info.get('backend_type')})")
    results: dict[str, Any] = {"adapter": RT.summary, "cases": {}}
    print(f"{'case':34s} {'webgpu':>12s} {'numpy':>12s} {'torch':>12s} {'wgpu/np':>9s} {'wgpu/torch':>10s} {'rel err':>9s}")
    for name, ours, np_fn, t_fn, check, repeat in cases(args.quick):
        tw = timed(ours, repeat, sync=True)
        tn = timed(np_fn, max(repeat, 5))
        tt = timed(t_fn, max(repeat, 5))
        e = check()
        results["cases"][name] = {"webgpu_s": tw, "numpy_s": tn, "torch_s": tt, "rel_err": e}
        print(f"{name:34s} {fmt_time(tw):>12s} {fmt_time(tn):>12s} {fmt_time(tt):>12s} {tw / tn:9.1f} {tw / tt:10.1f} "
              f"{e:9.2e}")
    if args.quick:
        print("matmul 4096x4096: skipped in --quick mode")
    oh = overhead(5)
    results["overhead"] = oh
    for k, v in oh.items():
        print(f"{k:34s} {fmt_time(v):>12s}")
    stats = st.memory_stats()
    results["memory_stats"] = stats
    print("memory_stats:", {k: stats[k] for k in ("num_dispatches", "num_submits", "num_buffers_created",
                                                  "num_buffer_reuses", "num_pipelines")})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
