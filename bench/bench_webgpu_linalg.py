"""The WebGPU factorizations, scatter_reduce and unique against torch on the CPU: median wall and process
CPU time per call (WebGPU times include waiting for the device), interleaved with torch's, and each WebGPU
result's error against float64 (or its exact match).

Run: ``python -m bench.bench_webgpu_linalg [--quick]``. On a software adapter (lavapipe) the device's time is
CPU time too, so these numbers say little about a GPU; they show the cost of a matrix's size and batch, and
that results stay accurate. Tests never assert these numbers.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import shapetorch as st

DEV = "webgpu"


def _times(fn: Callable[[], Any], repeat: int, sync: bool) -> tuple[float, float]:
    """Median (wall, process CPU) seconds of ``repeat`` calls after a warm-up (which compiles the pipelines)."""
    def once() -> tuple[float, float]:
        w, c = time.perf_counter(), time.process_time()
        fn()
        if sync:
            st.synchronize()
        return time.perf_counter() - w, time.process_time() - c

    once()
    runs = [once() for _ in range(repeat)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def _host(t: Any) -> np.ndarray:
    return np.asarray(t.cpu().numpy(), dtype=np.float64)


def cases(quick: bool) -> list[tuple[str, Callable[[], Any], Callable[[], Any], Callable[[], float]]]:
    """(name, webgpu fn, torch fn, error of the webgpu result)."""
    rng = np.random.default_rng(0)
    out: list[tuple[str, Callable[[], Any], Callable[[], Any], Callable[[], float]]] = []
    for n, b in ((4, 256), (16, 64)) if quick else ((4, 256), (16, 64), (32, 8), (64, 2)):
        a = rng.normal(size=(b, n, n)).astype(np.float32)
        sym = (a + a.transpose(0, 2, 1)) / 2
        spd = a @ a.transpose(0, 2, 1) + n * np.eye(n, dtype=np.float32)
        g, gs, gp = (st.tensor(x, device=DEV) for x in (a, sym, spd))
        t, ts, tp = (torch.from_numpy(x) for x in (a, sym, spd))
        a64 = a.astype(np.float64)
        shape = f"{b}x{n}x{n}"
        out += [
            (f"cholesky {shape}", lambda gp=gp: st.linalg.cholesky(gp), lambda tp=tp: torch.linalg.cholesky(tp),
             lambda gp=gp, spd=spd: float(np.abs(_host(st.linalg.cholesky(gp))
                                                 - np.linalg.cholesky(spd.astype(np.float64))).max())),
            (f"lu {shape}", lambda g=g: st.linalg.lu(g), lambda t=t: torch.linalg.lu(t),
             lambda g=g, a64=a64: float(np.abs(np.matmul(*[_host(x) for x in st.linalg.lu(g)[:2]])
                                               @ _host(st.linalg.lu(g)[2]) - a64).max())),
            (f"qr {shape}", lambda g=g: st.linalg.qr(g), lambda t=t: torch.linalg.qr(t),
             lambda g=g, a64=a64: float(np.abs(np.matmul(*[_host(x) for x in st.linalg.qr(g)]) - a64).max())),
            (f"eigh {shape}", lambda gs=gs: st.linalg.eigh(gs), lambda ts=ts: torch.linalg.eigh(ts),
             lambda gs=gs, sym=sym: float(np.abs(_host(st.linalg.eigvalsh(gs))
                                                 - np.linalg.eigvalsh(sym.astype(np.float64))).max())),
            (f"svd {shape}", lambda g=g: st.linalg.svd(g), lambda t=t: torch.linalg.svd(t),
             lambda g=g, a64=a64: float(np.abs(_host(st.linalg.svdvals(g)) - np.linalg.svd(a64)[1]).max())),
            # eig's eigenvalues in any order: the error of the sorted ones
            (f"eig {shape}", lambda g=g: st.linalg.eig(g), lambda t=t: torch.linalg.eig(t),
             lambda g=g, a64=a64: float(np.abs(np.sort_complex(st.linalg.eigvals(g).cpu().numpy())
                                               - np.sort_complex(np.linalg.eigvals(a64))).max())),
        ]
    x = rng.normal(size=(1024 if quick else 4096, 64)).astype(np.float32)
    idx = rng.integers(0, 128, size=x.shape)
    gx, gi, tx, ti = st.tensor(x, device=DEV), st.tensor(idx, device=DEV), torch.from_numpy(x), torch.from_numpy(idx)
    out.append((f"scatter_reduce amax {x.shape[0]}x64 -> 128x64",
                lambda: st.zeros(128, 64, device=DEV).scatter_reduce(0, gi, gx, "amax", include_self=False),
                lambda: torch.zeros(128, 64).scatter_reduce(0, ti, tx, "amax", include_self=False),
                lambda: float(np.abs(_host(st.zeros(128, 64, device=DEV).scatter_reduce(0, gi, gx, "amax",
                                                                                      include_self=False))
                                     - torch.zeros(128, 64).scatter_reduce(0, ti, tx, "amax", include_self=False)
                                     .numpy()).max())))
    # complex64 and the FFTs: radix-2 Stockham passes (powers of two), the direct DFT (other lengths); complex eig
    # runs on the host
    for b, n in ((64, 1024), (64, 1000), (8, 4096)) if not quick else ((16, 1024), (16, 1000)):
        z = (rng.normal(size=(b, n)) + 1j * rng.normal(size=(b, n))).astype(np.complex64)
        gz, tz = st.tensor(z, device=DEV), torch.from_numpy(z)
        ref = np.fft.fft(z.astype(np.complex128))
        out.append((f"fft {b}x{n} complex64", lambda gz=gz: st.fft.fft(gz), lambda tz=tz: torch.fft.fft(tz),
                    lambda gz=gz, ref=ref: float(np.abs(st.fft.fft(gz).cpu().numpy() - ref).max()
                                                 / np.abs(ref).max())))
    r = rng.normal(size=(64, 4096)).astype(np.float32)
    gr, tr = st.tensor(r, device=DEV), torch.from_numpy(r)
    out.append(("rfft 64x4096", lambda: st.fft.rfft(gr), lambda: torch.fft.rfft(tr),
                lambda: float(np.abs(st.fft.rfft(gr).cpu().numpy() - np.fft.rfft(r.astype(np.float64))).max()
                              / np.abs(np.fft.rfft(r.astype(np.float64))).max())))
    c = (rng.normal(size=(256, 256)) + 1j * rng.normal(size=(256, 256))).astype(np.complex64)
    gc, tc = st.tensor(c, device=DEV), torch.from_numpy(c)
    out.append(("complex matmul 256x256", lambda: gc @ gc, lambda: tc @ tc,
                lambda: float(np.abs((gc @ gc).cpu().numpy() - c.astype(np.complex128) @ c).max())))
    e = (rng.normal(size=(8, 16, 16)) + 1j * rng.normal(size=(8, 16, 16))).astype(np.complex64)
    ge, te = st.tensor(e, device=DEV), torch.from_numpy(e)
    out.append(("eig 8x16x16 complex64 (host geev)", lambda: st.linalg.eig(ge), lambda: torch.linalg.eig(te),
                lambda: float(np.abs(np.sort_complex(st.linalg.eigvals(ge).cpu().numpy().ravel())
                                     - np.sort_complex(np.linalg.eigvals(e.astype(np.complex128)).ravel())).max())))
    v = rng.integers(0, 1000, size=2000 if quick else 20000)
    gv, tv = st.tensor(v, device=DEV), torch.from_numpy(v)
    out.append((f"unique (counts) of {v.size}", lambda: st.unique(gv, return_counts=True),
                lambda: torch.unique(tv, return_counts=True),
                lambda: float(not np.array_equal(st.unique(gv).cpu().numpy(), np.unique(v)))))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"{'case':42s} {'webgpu wall':>12s} {'webgpu cpu':>11s} {'torch wall':>11s} {'error':>9s}")
    for name, ours, theirs, check in cases(args.quick):
        wall, cpu = _times(ours, args.repeat, sync=True)
        twall, _ = _times(theirs, args.repeat, sync=False)
        print(f"{name:42s} {wall * 1e3:10.1f}ms {cpu * 1e3:9.1f}ms {twall * 1e3:9.2f}ms {check():9.1e}")


if __name__ == "__main__":
    main()
