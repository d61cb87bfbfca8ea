"""Fused pointwise gradients (performance.md, "A sixth round"): forward + backward of each activation and loss
with its fused primitives, against the composite it replaced (the same process: the primitive's CPU kernel
hidden, so the op takes its composite path, which is the code before) and against torch.

Run: ``python -m bench.bench_fused_grads [--rounds 9] [--only NAME]``. CPU time (``time.process_time``), one
thread for both libraries; each round times fused, composite and torch back to back, and the table shows the
medians of the rounds and the ratios. Tests never assert these numbers.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import torch.nn.functional as TF

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch._engine.primitives import PRIMS

SHAPES = ((4, 4), (64, 64), (256, 512))
# name -> (call with (module, x, t), the primitives whose CPU kernels make the fused path: hidden, the op and the
# composites it calls take their old paths)
CASES: dict[str, tuple[Callable[[Any, Any, Any], Any], tuple[str, ...]]] = {
    "elu": (lambda m, x, t: m.elu(x), ("elu",)),
    "selu": (lambda m, x, t: m.selu(x), ("elu",)),
    "celu": (lambda m, x, t: m.celu(x, 1.3), ("celu",)),
    "softplus": (lambda m, x, t: m.softplus(x), ("softplus",)),
    "mish": (lambda m, x, t: m.mish(x), ("mish", "softplus")),
    "hardswish": (lambda m, x, t: m.hardswish(x), ("hardswish", "hardsigmoid")),
    "hardsigmoid": (lambda m, x, t: m.hardsigmoid(x), ("hardsigmoid",)),
    "logsigmoid": (lambda m, x, t: m.logsigmoid(x), ("log_sigmoid", "softplus")),
    "mse_loss": (lambda m, x, t: m.mse_loss(x, t), ("mse_loss",)),
    "smooth_l1_loss": (lambda m, x, t: m.smooth_l1_loss(x, t), ("smooth_l1_loss",)),
    "huber_loss": (lambda m, x, t: m.huber_loss(x, t), ("huber_loss",)),
    "bce": (lambda m, x, t: m.binary_cross_entropy(x.sigmoid(), t.sigmoid().detach()), ("binary_cross_entropy",)),
    "bce_with_logits": (lambda m, x, t: m.binary_cross_entropy_with_logits(x, t),
                        ("binary_cross_entropy_with_logits", "softplus")),
}


def _per_call(fn: Callable[[], Any], budget: float) -> float:
    """CPU seconds per call, over as many calls as fit in ``budget`` seconds (at least 3)."""
    fn()
    n, start = 0, time.process_time()
    while True:
        fn()
        n += 1
        spent = time.process_time() - start
        if n >= 3 and spent >= budget:
            return spent / n


def _step(mod: Any, lib: Any, call: Callable[[Any, Any, Any], Any], x: Any, t: Any) -> Callable[[], Any]:
    def run() -> None:
        y = call(mod, x, t)
        y.backward(lib.ones_like(y))
        x.grad = None
    return run


def bench(name: str, shape: tuple[int, int], rounds: int, budget: float) -> tuple[float, float, float]:
    call, prims = CASES[name]
    rng = np.random.default_rng(0)
    xa, ta = (rng.standard_normal(shape).astype(np.float32) * 3 for _ in range(2))
    xs, ts = st.tensor(xa, requires_grad=True), st.tensor(ta)
    xt, tt = torch.tensor(xa, requires_grad=True), torch.tensor(ta)
    kernels = [PRIMS[p].kernels for p in prims]
    saved = [k["cpu"] for k in kernels]
    fused, composite, theirs = [], [], []
    for _ in range(rounds):
        fused.append(_per_call(_step(F, st, call, xs, ts), budget))
        for k in kernels:
            del k["cpu"]  # the composite: the op checks for the kernel and takes its old path
        try:
            composite.append(_per_call(_step(F, st, call, xs, ts), budget))
        finally:
            for k, cpu in zip(kernels, saved):
                k["cpu"] = cpu
        theirs.append(_per_call(_step(TF, torch, call, xt, tt), budget))
    return statistics.median(fused), statistics.median(composite), statistics.median(theirs)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--budget", type=float, default=0.05, help="CPU seconds per timing")
    ap.add_argument("--only", action="append", help="a case name (repeatable)")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    st.set_num_threads(1)
    print("| op | shape | fused | composite | torch | composite / fused | fused / torch |")
    print("|---|---|---|---|---|---|---|")
    for name in args.only or list(CASES):
        for shape in SHAPES:
            f, c, t = bench(name, shape, args.rounds, args.budget)
            print(f"| {name} | {shape[0]}x{shape[1]} | {f * 1e6:.1f} us | {c * 1e6:.1f} us | {t * 1e6:.1f} us | "
                  f"{c / f:.2f} | {f / t:.2f} |", flush=True)


if __name__ == "__main__":
    main()
