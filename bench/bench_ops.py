"""Per-op overhead on tiny tensors and throughput on large ones, against torch (CPU) and NumPy in one run.

Run: ``python -m bench.bench_ops [--quick] [--only large] [--threads N] [--clock cpu|both] [--json PATH]``. Ratios are
shapetorch time / peer time (below 1 is faster than the peer). Tests never assert these numbers; this script reports
them. ``--clock both`` (for several threads on a shared machine) times many short interleaved rounds by the wall
clock and by CPU time at once and reports each clock's ratio round by round: its median and quartiles, with the
load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import shapetorch as st

from ._timing import compare, compare_rounds, fmt_time, quartiles, round_ratios

Case = tuple[str, Callable[[], Any], Callable[[], Any], Callable[[], Any] | None]


def tiny_cases() -> list[Case]:
    a, b = st.rand(4, 4), st.rand(4, 4)
    ta, tb = torch.from_numpy(a.numpy().copy()), torch.from_numpy(b.numpy().copy())
    na, nb = a.numpy(), b.numpy()
    return [
        ("add 4x4", lambda: a + b, lambda: ta + tb, lambda: na + nb),
        ("mul 4x4", lambda: a * b, lambda: ta * tb, lambda: na * nb),
        ("matmul 4x4", lambda: a @ b, lambda: ta @ tb, lambda: na @ nb),
        ("sum 4x4", lambda: a.sum(), lambda: ta.sum(), lambda: np.add.reduce(na, None)),
        ("exp 4x4", lambda: a.exp(), lambda: ta.exp(), lambda: np.exp(na)),
        ("reshape+transpose", lambda: a.reshape(2, 8).t(), lambda: ta.reshape(2, 8).t(), lambda: na.reshape(2, 8).T),
        ("index a[1:, 0]", lambda: a[1:, 0], lambda: ta[1:, 0], lambda: na[1:, 0]),
    ]


def tiny_backward_cases() -> list[Case]:
    a = st.rand(4, 4, requires_grad=True)
    b = st.rand(4, 4, requires_grad=True)
    ta = torch.rand(4, 4, requires_grad=True)
    tb = torch.rand(4, 4, requires_grad=True)

    def ours() -> None:
        ((a * b + a).exp() @ b).sum().backward()

    def theirs() -> None:
        ((ta * tb + ta).exp() @ tb).sum().backward()

    return [("fwd+bwd 5 ops 4x4", ours, theirs, None)]


def large_cases(quick: bool) -> list[Case]:
    """Large elementwise ops, reductions and the softmax family (issue 17's 1.2x-of-torch target): at 1e6 elements
    (where splitting over the threads pays least) and, in full runs, at 1e7; softmax over rows of 512 (quick) or
    1024 elements, forward and forward+backward."""
    n = 512 if quick else 1024
    sizes = (1_000_000,) if quick else (1_000_000, 10_000_000)
    s = st.rand(4 * n, n)
    g = st.rand(4 * n, n)
    ts, tg = torch.from_numpy(s.numpy().copy()), torch.from_numpy(g.numpy().copy())
    ns = s.numpy()
    a, b = st.rand(n, n), st.rand(n, n)
    ta, tb, na, nb = torch.from_numpy(a.numpy().copy()), torch.from_numpy(b.numpy().copy()), a.numpy(), b.numpy()
    cases: list[Case] = [(f"matmul {n}x{n}", lambda: a @ b, lambda: ta @ tb, lambda: na @ nb)]
    for m in sizes:
        x, y = st.rand(m), st.rand(m)
        tx, ty, nx, ny = torch.from_numpy(x.numpy().copy()), torch.from_numpy(y.numpy().copy()), x.numpy(), y.numpy()
        cases += [
            (f"add {m:.0e}", lambda x=x, y=y: x + y, lambda tx=tx, ty=ty: tx + ty, lambda nx=nx, ny=ny: nx + ny),
            (f"exp {m:.0e}", lambda x=x: x.exp(), lambda tx=tx: tx.exp(), lambda nx=nx: np.exp(nx)),
            (f"sum {m:.0e}", lambda x=x: x.sum(), lambda tx=tx: tx.sum(), lambda nx=nx: np.add.reduce(nx)),
            (f"amax {m:.0e}", lambda x=x: x.amax(), lambda tx=tx: tx.amax(), lambda nx=nx: np.maximum.reduce(nx)),
        ]
    cases += [
        (f"sum(-1) {4 * n}x{n}", lambda: s.sum(-1), lambda: ts.sum(-1), lambda: np.add.reduce(ns, -1)),
        (f"softmax {4 * n}x{n}", lambda: s.softmax(-1), lambda: ts.softmax(-1), lambda: _np_softmax(ns)),
        (f"log_softmax {4 * n}x{n}", lambda: s.log_softmax(-1), lambda: ts.log_softmax(-1), None),
        (f"softmax(0) {4 * n}x{n}", lambda: s.softmax(0), lambda: ts.softmax(0), None),
        (f"softmax fwd+bwd {4 * n}x{n}", _softmax_step(st, s, g), _softmax_step(torch, ts, tg), None),
    ]
    return cases


def _softmax_step(lib: Any, x: Any, g: Any) -> Callable[[], Any]:
    """Softmax over rows and its input gradient (``torch.autograd.grad``), in either library."""
    leaf = x.detach().clone().requires_grad_()

    def step() -> Any:
        return lib.autograd.grad(leaf.softmax(-1), leaf, g)

    return step


def _np_softmax(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def run(quick: bool = False, groups: tuple[str, ...] = ("tiny", "tiny+backward", "large"),
        clock: Callable[[], float] | None = None) -> list[dict[str, Any]]:
    """Each case timed against its peers in interleaved rounds (``_timing.compare``: each library's best round),
    so that load from other processes hits every library alike."""
    torch.set_grad_enabled(True)
    min_time = 0.05 if quick else 0.2
    makers = {"tiny": tiny_cases, "tiny+backward": tiny_backward_cases, "large": lambda: large_cases(quick)}
    rows = []
    for group in groups:
        for name, ours, theirs, numpy_fn in makers[group]():
            fns = {"shapetorch": ours, "torch": theirs, **({"numpy": numpy_fn} if numpy_fn else {})}
            got = compare(fns, min_time, repeat=5 if quick else 7, **({} if clock is None else {"clock": clock}))
            t_ours, t_torch, t_np = got["shapetorch"], got["torch"], got.get("numpy")
            rows.append({
                "group": group, "case": name, "shapetorch_s": t_ours, "torch_s": t_torch, "numpy_s": t_np,
                "vs_torch": t_ours / t_torch, "vs_numpy": (t_ours / t_np) if t_np else None,
            })
    return rows


def run_both(groups: tuple[str, ...], rounds: int, quick: bool = False) -> list[dict[str, Any]]:
    """Each case against torch in ``rounds`` interleaved rounds, by the wall clock and CPU time at once
    (``_timing.compare_rounds``); a row holds the medians and each clock's per-round ratios."""
    torch.set_grad_enabled(True)
    makers = {"tiny": tiny_cases, "tiny+backward": tiny_backward_cases, "large": lambda: large_cases(quick)}
    rows = []
    for group in groups:
        for name, ours, theirs, _ in makers[group]():
            got = compare_rounds({"shapetorch": ours, "torch": theirs}, 0.02 if quick else 0.05, rounds)
            s, t = got["shapetorch"], got["torch"]
            rows.append({
                "group": group, "case": name,
                "shapetorch_wall_s": statistics.median(s["wall"]), "torch_wall_s": statistics.median(t["wall"]),
                "shapetorch_cpu_s": statistics.median(s["cpu"]), "torch_cpu_s": statistics.median(t["cpu"]),
                "wall_ratios": round_ratios(s["wall"], t["wall"]), "cpu_ratios": round_ratios(s["cpu"], t["cpu"]),
            })
    return rows


def print_both(rows: list[dict[str, Any]]) -> None:
    print(f"{'case':<27}{'st wall':>12}{'torch wall':>12}{'wall ratio [q1-q3]':>22}{'st cpu':>12}{'torch cpu':>12}"
          f"{'cpu ratio [q1-q3]':>22}")
    for r in rows:
        cells = []
        for clock in ("wall", "cpu"):
            q1, med, q3 = quartiles(r[f"{clock}_ratios"])
            cells.append(f"{fmt_time(r[f'shapetorch_{clock}_s']):>12}{fmt_time(r[f'torch_{clock}_s']):>12}"
                         f"{f'{med:.2f} [{q1:.2f}-{q3:.2f}]':>22}")
        print(f"{r['case']:<27}{cells[0]}{cells[1]}")


def print_table(rows: list[dict[str, Any]]) -> None:
    print(f"{'case':<24}{'shapetorch':>12}{'torch':>12}{'numpy':>12}{'vs torch':>10}{'vs numpy':>10}")
    for r in rows:
        np_t = fmt_time(r["numpy_s"]) if r["numpy_s"] else "-"
        vs_np = f"{r['vs_numpy']:.2f}x" if r["vs_numpy"] else "-"
        print(f"{r['case']:<24}{fmt_time(r['shapetorch_s']):>12}{fmt_time(r['torch_s']):>12}{np_t:>12}"
              f"{r['vs_torch']:>9.2f}x{vs_np:>10}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", help="also write the rows as JSON here")
    parser.add_argument("--only", nargs="+", choices=("tiny", "tiny+backward", "large"),
                        default=["tiny", "tiny+backward", "large"], help="run only these groups")
    parser.add_argument("--threads", type=int, default=st.get_num_threads(),
                        help="torch's and shapetorch's intra-op threads (default: shapetorch's default, torch's "
                             "physical cores); give NumPy's BLAS the same with OPENBLAS_NUM_THREADS")
    parser.add_argument("--clock", choices=("wall", "cpu", "both"), default="wall",
                        help="cpu: the process's CPU time, all threads (on a shared machine, time spent "
                             "descheduled counts for nobody; torch's OpenMP threads spin while they wait, which "
                             "counts); both: wall and CPU time of many interleaved rounds, ratios round by round")
    parser.add_argument("--rounds", type=int, default=21, help="interleaved rounds of --clock both")
    args = parser.parse_args(argv)
    torch.set_num_threads(max(1, args.threads))
    st.set_num_threads(max(1, args.threads))
    if args.clock == "both":
        load = os.getloadavg()
        print(f"threads: shapetorch {st.get_num_threads()}, torch {torch.get_num_threads()}; wall and CPU time of "
              f"{args.rounds} interleaved rounds: medians, and the ratio round by round (median [quartiles]); "
              f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        rows = run_both(tuple(args.only), args.rounds, args.quick)
        print_both(rows)
        load = os.getloadavg()
        print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    else:
        print(f"threads: shapetorch {st.get_num_threads()}, torch {torch.get_num_threads()}; clock {args.clock}; "
              "best of interleaved rounds")
        rows = run(args.quick, tuple(args.only), time.process_time if args.clock == "cpu" else None)
        print_table(rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
