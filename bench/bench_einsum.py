"""einsum speed: shapetorch against torch.einsum and numpy.einsum, as ratios (lower is better for shapetorch).

Run: python bench/bench_einsum.py (or ``python -m bench``, which calls ``run`` with the other benchmarks)
"""

from __future__ import annotations

import timeit

import numpy as np
import torch

import shapetorch as st

CASES = [
    ("batched matmul", "bij,bjk->bik", [(32, 64, 64), (32, 64, 64)]),
    ("three-operand chain", "ij,jk,kl->il", [(128, 256), (256, 16), (16, 256)]),
    ("attention", "bhqd,bhkd->bhqk", [(8, 8, 64, 32), (8, 8, 64, 32)]),
    ("trace", "ii->", [(512, 512)]),
    ("diagonal", "ii->i", [(512, 512)]),
    ("outer", "i,j->ij", [(512,), (512,)]),
]


def best(fn: object, number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number  # type: ignore[arg-type]


def run(number: int = 20) -> list[dict[str, float | str]]:
    """One row per case: seconds per call for shapetorch, torch and numpy (best of 5 runs of ``number`` calls)."""
    rng = np.random.default_rng(0)
    rows: list[dict[str, float | str]] = []
    for name, eq, shapes in CASES:
        arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        s_ops = [st.tensor(a) for a in arrays]
        t_ops = [torch.tensor(a) for a in arrays]
        ts = best(lambda: st.einsum(eq, *s_ops), number)
        tt = best(lambda: torch.einsum(eq, *t_ops), number)
        tn = best(lambda: np.einsum(eq, *arrays, optimize=True), number)
        rows.append({"case": f"{name} {eq}", "shapetorch_s": ts, "torch_s": tt, "numpy_s": tn})
    return rows


def main() -> None:
    print(f"{'case':22} {'shapetorch':>12} {'torch':>12} {'numpy':>12} {'st/torch':>9} {'st/numpy':>9}")
    for r in run():
        ts, tt, tn = float(r["shapetorch_s"]), float(r["torch_s"]), float(r["numpy_s"])
        name = str(r["case"]).rsplit(" ", 1)[0]
        print(f"{name:22} {ts * 1e6:10.1f}us {tt * 1e6:10.1f}us {tn * 1e6:10.1f}us {ts / tt:9.2f} {ts / tn:9.2f}")


if __name__ == "__main__":
    main()
