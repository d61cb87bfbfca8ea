"""Optimizer-step benchmark: one ``opt.step()`` alone, shapetorch vs torch (CPU), on the parameters of
``bench_training``'s nanoGPT (2 layers, d=128: 29 tensors, about 420k elements) with fixed gradients.

    OPENBLAS_NUM_THREADS=1 python bench/bench_optim.py [--rounds 21] [--baseline REV]

Both libraries run on one thread; the steps are timed in interleaved rounds by the process's CPU time, and the
table gives each one's median round, the median ratio and its quartiles. ``--baseline REV`` adds the NumPy
backend's ``fused_step`` of git revision ``REV``, swapped in for its rounds, to see a change's effect in the same
run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
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


def baseline_fused_step(rev: str) -> Callable[..., bool]:
    """The CPU ``fused_step`` as it was at git revision ``rev`` (its module's source, run on its own)."""
    path = "src/shapetorch/backends/numpy_backend.py"
    src = subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True, text=True, check=True).stdout
    ns: dict[str, Any] = {"__name__": "shapetorch.backends.numpy_backend", "__package__": "shapetorch.backends"}
    exec(compile(src, f"{rev}:{path}", "exec"), ns)
    return ns["fused_step"]  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--only", default="")
    ap.add_argument("--baseline", default="", help="a git revision whose CPU fused_step to time as well")
    args = ap.parse_args()
    torch.set_num_threads(1)
    st.set_num_threads(1)
    from shapetorch.backends import numpy_backend

    current = numpy_backend.fused_step
    old = baseline_fused_step(args.baseline) if args.baseline else None
    print(f"{'optimizer':20} {'shapetorch':>11} {'torch':>11}  ratio (quartiles)"
          + (f" {'baseline':>11}  this/baseline (quartiles)" if old else ""))
    for name, make in OPTIMIZERS.items():
        if args.only and args.only not in name:
            continue
        s, t = steppers(make)

        def run_with(fused: Callable[..., bool], step: Callable[[], Any] = s) -> Callable[[], Any]:
            def run() -> Any:
                numpy_backend.fused_step = fused
                return step()
            return run

        fns = {"s": run_with(current), "t": t, **({"b": run_with(old)} if old else {})}
        got = compare_rounds(fns, min_time=0.2, rounds=args.rounds)
        numpy_backend.fused_step = current
        lo, mid, hi = quartiles(round_ratios(got["s"]["cpu"], got["t"]["cpu"]))
        line = (f"{name:20} {fmt_time(statistics.median(got['s']['cpu'])):>11} "
                f"{fmt_time(statistics.median(got['t']['cpu'])):>11}  {mid:.2f}x ({lo:.2f}-{hi:.2f})")
        if old:
            blo, bmid, bhi = quartiles(round_ratios(got["s"]["cpu"], got["b"]["cpu"]))
            line += f" {fmt_time(statistics.median(got['b']['cpu'])):>11}  {bmid:.2f}x ({blo:.2f}-{bhi:.2f})"
        print(line)


if __name__ == "__main__":
    main()
