"""The gradient of a split (performance.md, "Split, chunk and unbind as one node"): the GPT's ``qkv.split(C, dim=2)``
alone, ``(8, 64, 3 * 128)`` cut into three pieces along the last dim, ``(u * v + w).sum().backward()``. The split
(one node whose backward is one ``cat``) against the code before it, which cut the pieces with ``narrow`` (a
``SliceBackward0`` per piece, each gradient scattered into a zero buffer or added into the walk's buffer) — the
same process, alternating — and against torch.

With ``--gpt``: the training step of ``bench_training``'s nanoGPT (hand attention), whose attention splits its
``qkv``, with the split and with the narrow cut in turn (the same model and process), and the time the backward
walk spends in the split's node(s) (``SplitBackward0``, or the pieces' ``SliceBackward0``: the model has no other
slice that needs a gradient).

Run: ``OPENBLAS_NUM_THREADS=1 python -m bench.bench_split_grad [--rounds 15] [--gpt]``. CPU time (``time.process_time``),
one thread for both libraries; each round times split, narrow and torch back to back (a loop of ``--loops``
calls each), the table shows the medians of the rounds. Tests never assert these numbers.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import shapetorch as st


def _step(lib: Any, x0: Any, cut: Callable[[Any], Any], backward_only: bool) -> Callable[[], float]:
    def run() -> float:
        x = x0.detach().requires_grad_(True)
        y = x * 1.0
        u, v, w = cut(y)
        loss = (u * v + w).sum()
        t = time.process_time()
        loss.backward()
        done = time.process_time()
        return done - t if backward_only else 0.0

    return run


def _time(fn: Callable[[], float], loops: int, backward_only: bool) -> float:
    t = time.process_time()
    inner = 0.0
    for _ in range(loops):
        inner += fn()
    total = time.process_time() - t
    return (inner if backward_only else total) / loops


def gpt_steps(rounds: int, loops: int) -> None:
    from shapetorch._engine import backward as engine

    from .bench_training import stepper, workloads

    name, make, x, y = next(w for w in workloads() if "hand attention" in w[0])
    model = make(st)
    step = stepper(st, make, x, y, model, name)
    split = st.Tensor.split
    in_node = [0.0]
    walk_step = engine._Walk.step

    def timed_step(self: Any, node: Any) -> None:
        if type(node).__name__ in ("SplitWithSizesBackward0", "SliceBackward0"):  # (the split primitive's class)
            t = time.process_time()
            walk_step(self, node)
            in_node[0] += time.process_time() - t
        else:
            walk_step(self, node)

    def narrow_cut(self: Any, size: int, dim: int = 0) -> Any:
        return tuple(self.narrow(dim, i, size) for i in range(0, self.shape[dim], size))

    engine._Walk.step = timed_step  # type: ignore[method-assign]
    times: dict[str, list[float]] = {"split (one node)": [], "narrow per piece (before)": []}
    nodes: dict[str, list[float]] = {k: [] for k in times}
    try:
        for r in range(rounds + 1):
            for k, ts in times.items():
                st.Tensor.split = split if k.startswith("split") else narrow_cut  # type: ignore[method-assign]
                in_node[0] = 0.0
                t = time.process_time()
                for _ in range(loops):
                    step()
                if r:  # (round 0 warms up)
                    ts.append((time.process_time() - t) / loops)
                    nodes[k].append(in_node[0] / loops)
    finally:
        st.Tensor.split = split  # type: ignore[method-assign]
        engine._Walk.step = walk_step  # type: ignore[method-assign]
    print(f"{name}: CPU time per training step and in the split's gradient nodes, median of {rounds} rounds "
          f"of {loops} steps (load {os.getloadavg()[0]:.1f}):")
    for k, ts in times.items():
        ns = nodes[k]
        print(f"  {k:28s} step {statistics.median(ts) * 1e3:7.2f} ms   split's gradient "
              f"{statistics.median(ns) * 1e3:6.3f} ms  (ranges {min(ts) * 1e3:.2f}-{max(ts) * 1e3:.2f}, "
              f"{min(ns) * 1e3:.3f}-{max(ns) * 1e3:.3f})")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--loops", type=int, default=20)
    p.add_argument("--shape", default="8,64,384")
    p.add_argument("--gpt", action="store_true", help="the nanoGPT training step instead (bench_training's)")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    st.set_num_threads(1)
    if args.gpt:
        gpt_steps(args.rounds, max(1, args.loops // 4))
        return
    shape = tuple(int(s) for s in args.shape.split(","))
    c = shape[-1] // 3
    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    xs, xt = st.tensor(data), torch.tensor(data)
    d = len(shape) - 1
    cases = {
        "split (one node)": (st, xs, lambda y: y.split(c, dim=d)),
        "narrow per piece (before)": (st, xs, lambda y: tuple(y.narrow(d, i * c, c) for i in range(3))),
        "torch split": (torch, xt, lambda y: y.split(c, dim=d)),
    }
    for backward_only in (True, False):
        times: dict[str, list[float]] = {k: [] for k in cases}
        for fn in cases.values():  # warm up
            _time(_step(*fn, backward_only), 3, backward_only)
        for _ in range(args.rounds):
            for k, (lib, x0, cut) in cases.items():
                times[k].append(_time(_step(lib, x0, cut, backward_only), args.loops, backward_only))
        what = "backward only" if backward_only else "forward + backward"
        print(f"{what}, {shape} split in 3 along dim {d}, CPU time per step, median of {args.rounds} rounds "
              f"(load {os.getloadavg()[0]:.1f}):")
        for k, ts in times.items():
            print(f"  {k:28s} {statistics.median(ts) * 1e6:9.1f} us   (range {min(ts) * 1e6:.1f}-{max(ts) * 1e6:.1f})")


if __name__ == "__main__":
    main()
