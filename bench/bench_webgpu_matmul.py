"""GFLOP/s of the WebGPU matmul kernels, with torch (CPU) timed in the same run for scale: square products, the
``x @ W.T`` of a Linear (NT), its weight gradient ``g.T @ x`` (TN), a long-K product (split-K), float16, and a
convolution's input gradient. Each case checks its result against torch.

Run: ``python -m bench.bench_webgpu_matmul [--repeat N] [--json PATH]``. WebGPU times include waiting for the device
(``shapetorch.synchronize()``); each time is the median of ``repeat`` calls after a warm-up (which compiles the
pipelines), the two libraries interleaved call by call so that a busy machine skews both alike. Tests never assert
these numbers.
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
import shapetorch.nn.functional as F

Case = tuple[str, float, Callable[[], Any], Callable[[], Any], float]  # name, flops, ours, torch's, tolerance


def _pair(rng: np.random.Generator, *shapes: tuple[int, ...], dtype: Any = np.float32) -> list[tuple[Any, Any]]:
    out = []
    for s in shapes:
        a = rng.standard_normal(s, dtype=np.float32).astype(dtype)
        out.append((st.tensor(a, device="webgpu"), torch.from_numpy(a.astype(np.float32))))
    return out


def cases() -> list[Case]:
    rng = np.random.default_rng(0)
    out: list[Case] = []
    for n in (512, 1024):
        (a, ta), (b, tb) = _pair(rng, (n, n), (n, n))
        out.append((f"NN {n}x{n}x{n}", 2.0 * n**3, lambda a=a, b=b: a @ b, lambda ta=ta, tb=tb: ta @ tb, 1e-4))
    # the Linear layers of a 784-1024-1024-10 MLP at batch 256 (x @ W.T), and the first one's weight gradient
    for m, k, n in ((256, 784, 1024), (256, 1024, 1024)):
        (x, tx), (w, tw) = _pair(rng, (m, k), (n, k))
        out.append((f"NT x@W.T {m}x{k} @ ({n}x{k}).T", 2.0 * m * n * k, lambda x=x, w=w: x @ w.T,
                    lambda tx=tx, tw=tw: tx @ tw.T, 1e-4))
    (g, tg), (x, tx) = _pair(rng, (256, 1024), (256, 784))
    out.append(("TN g.T@x (1024x256).T @ 256x784", 2.0 * 1024 * 784 * 256, lambda g=g, x=x: g.T @ x,
                lambda tg=tg, tx=tx: tg.T @ tx, 1e-4))
    (a, ta), (b, tb) = _pair(rng, (64, 32768), (32768, 64))
    out.append(("long K 64x32768 @ 32768x64", 2.0 * 64 * 64 * 32768, lambda a=a, b=b: a @ b,
                lambda ta=ta, tb=tb: ta @ tb, 1e-3))
    (a, ta), (b, tb) = _pair(rng, (64, 256, 64), (64, 64, 256))
    out.append(("batched 64 x (256x64 @ 64x256)", 2.0 * 64 * 256 * 256 * 64, lambda a=a, b=b: a @ b,
                lambda ta=ta, tb=tb: ta @ tb, 1e-4))
    from shapetorch.backends.webgpu.runtime import RT

    if RT.has_f16:
        (a, ta), (b, tb) = _pair(rng, (1024, 1024), (1024, 1024), dtype=np.float16)
        out.append(("NN float16 1024^3", 2.0 * 1024**3, lambda a=a, b=b: a @ b, lambda ta=ta, tb=tb: ta @ tb, 3e-2))
    # a 3x3 convolution's input gradient (64 -> 64 channels, 32x32, batch 8): the transposed implicit GEMM
    (gy, tgy), (w, tw) = _pair(rng, (8, 64, 32, 32), (64, 64, 3, 3))
    out.append(("conv input grad 8x64x32x32, 3x3", 2.0 * 8 * 64 * 32 * 32 * 64 * 9,
                lambda gy=gy, w=w: F.conv_transpose2d(gy, w, padding=1),
                lambda tgy=tgy, tw=tw: torch.nn.functional.conv_transpose2d(tgy, tw, padding=1), 1e-3))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", default="", help="run the cases whose name contains this")
    ap.add_argument("--json")
    args = ap.parse_args()
    if not st.is_webgpu_available():
        from shapetorch.backends.webgpu.api import unavailable_reason

        print(f"WebGPU is not available: {unavailable_reason()}")
        return 0
    from shapetorch.backends.webgpu.runtime import RT

    print(f"adapter: {RT.summary}")
    print(f"{'case':40s} {'webgpu':>10s} {'GFLOP/s':>8s} {'torch':>10s} {'GFLOP/s':>8s} {'rel err':>9s}")
    results: dict[str, Any] = {"adapter": RT.summary, "cases": {}}
    for name, flops, ours, theirs, tol in cases():
        if args.only not in name:
            continue
        got, ref = ours(), theirs()  # also the warm-up
        err = float((got.float().cpu().numpy() - ref.numpy()).__abs__().max()) / max(1.0, float(ref.abs().max()))
        tw, tt = [], []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            ours()
            st.synchronize()
            tw.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            theirs()
            tt.append(time.perf_counter() - t0)
        mw, mt = statistics.median(tw), statistics.median(tt)
        results["cases"][name] = {"webgpu_s": mw, "torch_s": mt, "gflops": flops / mw / 1e9, "rel_err": err}
        flag = "" if err <= tol else "  WRONG"
        print(f"{name:40s} {mw * 1e3:8.1f}ms {flops / mw / 1e9:8.2f} {mt * 1e3:8.2f}ms {flops / mt / 1e9:8.1f} "
              f"{err:9.1e}{flag}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
