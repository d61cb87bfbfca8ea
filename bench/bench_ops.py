"""Per-op overhead on tiny tensors and throughput on large ones, against torch (CPU) and NumPy in one run.

Run: ``python -m bench.bench_ops [--quick] [--json PATH]``. Ratios are shapetorch time / peer time
(below 1 is faster than the peer). Tests never assert these numbers; this script reports them.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import shapetorch as st

from ._timing import fmt_time, per_call

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
    n = 512 if quick else 1024
    m = 1_000_000 if quick else 10_000_000
    a, b = st.rand(n, n), st.rand(n, n)
    x, y = st.rand(m), st.rand(m)
    s = st.rand(4 * n, n)
    ta, tb, tx, ty, ts = (torch.from_numpy(t.numpy().copy()) for t in (a, b, x, y, s))
    na, nb, nx, ny, ns = a.numpy(), b.numpy(), x.numpy(), y.numpy(), s.numpy()
    return [
        (f"matmul {n}x{n}", lambda: a @ b, lambda: ta @ tb, lambda: na @ nb),
        (f"add {m:.0e}", lambda: x + y, lambda: tx + ty, lambda: nx + ny),
        (f"exp {m:.0e}", lambda: x.exp(), lambda: tx.exp(), lambda: np.exp(nx)),
        (f"sum {m:.0e}", lambda: x.sum(), lambda: tx.sum(), lambda: np.add.reduce(nx)),
        (f"softmax {4 * n}x{n}", lambda: s.softmax(-1), lambda: ts.softmax(-1), lambda: _np_softmax(ns)),
    ]


def _np_softmax(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def run(quick: bool = False) -> list[dict[str, Any]]:
    torch.set_grad_enabled(True)
    min_time = 0.05 if quick else 0.2
    rows = []
    for group, cases in (("tiny", tiny_cases()), ("tiny+backward", tiny_backward_cases()), ("large", large_cases(quick))):
        for name, ours, theirs, numpy_fn in cases:
            t_ours = per_call(ours, min_time)
            t_torch = per_call(theirs, min_time)
            t_np = per_call(numpy_fn, min_time) if numpy_fn else None
            rows.append({
                "group": group, "case": name, "shapetorch_s": t_ours, "torch_s": t_torch, "numpy_s": t_np,
                "vs_torch": t_ours / t_torch, "vs_numpy": (t_ours / t_np) if t_np else None,
            })
    return rows


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
    args = parser.parse_args(argv)
    torch.set_num_threads(torch.get_num_threads())
    rows = run(args.quick)
    print_table(rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
