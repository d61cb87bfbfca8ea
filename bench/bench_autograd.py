"""Autograd overhead on tiny tensors: forward+backward of small graphs, against torch (CPU).

Run: ``python -m bench.bench_autograd [--quick]``. Each row prints the time per step in shapetorch and
in torch and their ratio (shapetorch / torch; below 1 is faster). Tests never assert these numbers.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import shapetorch as st

from ._timing import fmt_time, per_call

Case = tuple[str, Callable[[], Any], Callable[[], Any]]


def cases() -> list[Case]:
    rng = np.random.default_rng(0)
    data = {k: rng.standard_normal(s).astype(np.float32) for k, s in
            (("a", (4, 4)), ("b", (4, 4)), ("w1", (8, 16)), ("w2", (16, 1)), ("x", (4, 8)))}
    s = {k: st.tensor(v, requires_grad=k != "x") for k, v in data.items()}
    t = {k: torch.tensor(v, requires_grad=k != "x") for k, v in data.items()}

    def mul_sum(lib_t: dict[str, Any]) -> Callable[[], Any]:
        return lambda: (lib_t["a"] * lib_t["b"]).sum().backward()

    def chain(lib_t: dict[str, Any]) -> Callable[[], Any]:
        return lambda: (lib_t["a"].exp() * lib_t["b"]).tanh().sin().sum().backward()

    def mlp(lib_t: dict[str, Any]) -> Callable[[], Any]:
        return lambda: ((lib_t["x"] @ lib_t["w1"]).tanh() @ lib_t["w2"]).pow(2).mean().backward()

    def grad_only(lib: Any, lib_t: dict[str, Any]) -> Callable[[], Any]:
        return lambda: lib.autograd.grad((lib_t["a"] * lib_t["a"]).sum(), lib_t["a"])

    def double(lib: Any, lib_t: dict[str, Any]) -> Callable[[], Any]:
        def run() -> Any:
            (g,) = lib.autograd.grad((lib_t["a"] ** 3).sum(), lib_t["a"], create_graph=True)
            return lib.autograd.grad(g.sum(), lib_t["a"])
        return run

    def forward_only(lib: Any, lib_t: dict[str, Any]) -> Callable[[], Any]:
        return lambda: lib_t["a"] * lib_t["b"]

    return [
        ("record mul (forward only)", forward_only(st, s), forward_only(torch, t)),
        ("(a*b).sum().backward()", mul_sum(s), mul_sum(t)),
        ("4-op chain + backward", chain(s), chain(t)),
        ("2-layer MLP fwd+bwd", mlp(s), mlp(t)),
        ("autograd.grad", grad_only(st, s), grad_only(torch, t)),
        ("double backward", double(st, s), double(torch, t)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="shorter timing runs")
    parser.add_argument("--rounds", type=int, default=0,
                        help="time in this many interleaved rounds (one run of each library per round) and print "
                             "medians; the ratio is the median of the rounds' ratios (with BENCH_CLOCK=cpu on a "
                             "shared machine)")
    args = parser.parse_args()
    min_time, repeat = (0.05, 3) if args.quick else (0.2, 5)
    print(f"{'case':32} {'shapetorch':>12} {'torch':>12} {'ratio':>7}")
    if args.rounds:
        _rounds(args.rounds, min_time)
        return
    for name, s_fn, t_fn in cases():
        ts, tt = per_call(s_fn, min_time, repeat), per_call(t_fn, min_time, repeat)
        print(f"{name:32} {fmt_time(ts):>12} {fmt_time(tt):>12} {ts / tt:7.2f}")


def _rounds(rounds: int, min_time: float) -> None:
    """Each round times every case once in each library, so load from other processes hits both alike."""
    todo = cases()
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name, _, _ in todo}
    for _ in range(rounds):
        for name, s_fn, t_fn in todo:
            times[name][0].append(per_call(s_fn, min_time / 5, 1))
            times[name][1].append(per_call(t_fn, min_time / 5, 1))
    for name, (ours, theirs) in times.items():
        ratio = statistics.median(a / b for a, b in zip(ours, theirs))
        print(f"{name:32} {fmt_time(statistics.median(ours)):>12} {fmt_time(statistics.median(theirs)):>12} "
              f"{ratio:7.2f}")


if __name__ == "__main__":
    main()
