"""einsum speed: shapetorch against torch.einsum and numpy.einsum, as ratios (lower is better for shapetorch).

Run: python bench/bench_einsum.py
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


def main() -> None:
    rng = np.random.default_rng(0)
    print(f"{'case':22} {'shapetorch':>12} {'torch':>12} {'numpy':>12} {'st/torch':>9} {'st/numpy':>9}")
    for name, eq, shapes in CASES:
        arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        s_ops = [st.tensor(a) for a in arrays]
        t_ops = [torch.tensor(a) for a in arrays]
        n = 20
        ts = best(lambda: st.einsum(eq, *s_ops), n)
        tt = best(lambda: torch.einsum(eq, *t_ops), n)
        tn = best(lambda: np.einsum(eq, *arrays, optimize=True), n)
        print(f"{name:22} {ts * 1e6:10.1f}us {tt * 1e6:10.1f}us {tn * 1e6:10.1f}us {ts / tt:9.2f} {ts / tn:9.2f}")


if __name__ == "__main__":
    main()
