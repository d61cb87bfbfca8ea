"""Training-step benchmark: shapetorch vs torch (CPU), as ratios (shapetorch time / torch time).

    python bench/bench_training.py      (``python -m bench`` calls ``run`` with the other benchmarks)

Two workloads: an MLP step (784-512-512-10, batch 256, SGD with momentum) and a small CNN step
(2 conv + pool + linear on 1x28x28, batch 64). A step is forward, cross-entropy, backward, optimizer
step. Peak memory is the tracemalloc peak of one step (Python and NumPy allocations; torch's own
allocator is invisible to tracemalloc, so its column is only indicative).
"""

from __future__ import annotations

import os
import sys
import tracemalloc
from typing import Any

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
import shapetorch as st
from _timing import fmt_time, per_call


def mlp(lib: Any) -> Any:
    return lib.nn.Sequential(lib.nn.Linear(784, 512), lib.nn.ReLU(), lib.nn.Linear(512, 512), lib.nn.ReLU(),
                             lib.nn.Linear(512, 10))


def cnn(lib: Any) -> Any:
    return lib.nn.Sequential(lib.nn.Conv2d(1, 16, 3, padding=1), lib.nn.ReLU(), lib.nn.MaxPool2d(2),
                             lib.nn.Conv2d(16, 32, 3, padding=1), lib.nn.ReLU(), lib.nn.MaxPool2d(2),
                             lib.nn.Flatten(), lib.nn.Linear(32 * 7 * 7, 10))


def stepper(lib: Any, make: Any, x: np.ndarray, y: np.ndarray) -> Any:
    model = make(lib)
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    xb, yb = lib.tensor(x), lib.tensor(y)
    ce = lib.nn.functional.cross_entropy

    def step() -> None:
        opt.zero_grad()
        ce(model(xb), yb).backward()
        opt.step()

    return step


def peak(step: Any) -> int:
    step()
    tracemalloc.start()
    step()
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return top


def workloads() -> list[tuple[str, Any, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(0)
    return [
        ("MLP 784-512-512-10, batch 256", mlp, rng.normal(size=(256, 784)).astype(np.float32),
         rng.integers(0, 10, 256)),
        ("CNN 1x28x28, batch 64", cnn, rng.normal(size=(64, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, 64)),
    ]


def run(repeat: int = 3) -> list[dict[str, Any]]:
    """One row per workload: seconds per step (shapetorch, torch) and the tracemalloc peak of one step."""
    rows = []
    for name, make, x, y in workloads():
        s, t = stepper(st, make, x, y), stepper(torch, make, x, y)
        ts, tt = per_call(s, repeat=repeat), per_call(t, repeat=repeat)
        rows.append({"case": name, "shapetorch_s": ts, "torch_s": tt, "shapetorch_peak_bytes": peak(s),
                     "torch_peak_bytes": peak(t)})
    return rows


def main() -> None:
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    print(f"{'workload':34} {'shapetorch':>12} {'torch':>12} {'ratio':>7} {'peak MiB st':>12} {'peak MiB torch':>15}")
    for r in run():
        ts, tt, ms, mt = r["shapetorch_s"], r["torch_s"], r["shapetorch_peak_bytes"], r["torch_peak_bytes"]
        print(f"{r['case']:34} {fmt_time(ts):>12} {fmt_time(tt):>12} {ts / tt:7.2f} {ms / 2**20:12.1f} "
              f"{mt / 2**20:15.2f}")


if __name__ == "__main__":
    main()
