"""Optimizer-step benchmark: one ``opt.step()`` alone, shapetorch vs torch (CPU), on the parameters of
``bench_training``'s nanoGPT (2 layers, d=128: 29 tensors, about 420k elements) with fixed gradients.

    OPENBLAS_NUM_THREADS=1 python bench/bench_optim.py [--rounds 21]

Both libraries run on one thread; the two steps are timed in interleaved rounds by the process's CPU time, and
the table gives each one's median round, the median ratio and its quartiles.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import shapetorch as st
from bench._timing import compare_rounds, fmt_time, quartiles, round_ratios
from bench.bench_training import _models, gpt

OPTIMIZERS: dict[str, Callable[[Any, Any], Any]] = {
    "AdamW (wd 0.1)": lambda lib, p: lib.optim.AdamW(p, lr=1e-3, weight_decay=0.1),
    "Adam": lambda lib, p: lib.optim.Adam(p, lr=1e-3),
    "Adam amsgrad": lambda lib, p: lib.optim.Adam(p, lr=1e-3, amsgrad=True),
    "SGD momentum 0.9": lambda lib, p: lib.optim.SGD(p, lr=0.01, momentum=0.9),
}


def steppers(make_opt: Callable[[Any, Any], Any]) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """Both libraries' ``opt.step`` on identical nanoGPT parameters, with identical fixed gradients."""
    sm, tm = _models(lambda lib: gpt(lib, True))
    rng = np.random.default_rng(0)
    for ps, pt in zip(sm.parameters(), tm.parameters(), strict=True):
        g = (rng.standard_normal(tuple(pt.shape)) * 1e-2).astype(np.float32)
        ps.grad, pt.grad = st.tensor(g), torch.from_numpy(g.copy())
    so, to = make_opt(st, list(sm.parameters())), make_opt(torch, list(tm.parameters()))
    return so.step, to.step


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    torch.set_num_threads(1)
    st.set_num_threads(1)
    print(f"{'optimizer':20} {'shapetorch':>11} {'torch':>11}  ratio (quartiles)")
    for name, make in OPTIMIZERS.items():
        if args.only and args.only not in name:
            continue
        s, t = steppers(make)
        got = compare_rounds({"s": s, "t": t}, min_time=0.2, rounds=args.rounds)
        lo, mid, hi = quartiles(round_ratios(got["s"]["cpu"], got["t"]["cpu"]))
        print(f"{name:20} {fmt_time(statistics.median(got['s']['cpu'])):>11} "
              f"{fmt_time(statistics.median(got['t']['cpu'])):>11}  {mid:.2f}x ({lo:.2f}-{hi:.2f})")


if __name__ == "__main__":
    main()
