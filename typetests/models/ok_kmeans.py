"""k-means: k-means++ seeding by multinomial over squared distances, Lloyd steps with cdist/argmin/bincount/index_add."""
from __future__ import annotations

from typing import Literal as L

import shapetorch as st
from shapetorch import Tensor, float32, int64

N = L[200]
K = L[4]


def assign(x: Tensor[tuple[N, L[2]], float32], c: Tensor[tuple[K, L[2]], float32]) -> Tensor[tuple[N], int64]:
    return st.cdist(x, c).argmin(dim=1)


def update(x: Tensor[tuple[N, L[2]], float32], labels: Tensor[tuple[N], int64],
           c: Tensor[tuple[K, L[2]], float32]) -> Tensor[tuple[K, L[2]], float32]:
    counts = st.bincount(labels, minlength=4)
    sums = st.zeros_like(c).index_add_(0, labels, x)
    return st.where(counts.unsqueeze(1) > 0, sums / counts.clamp(min=1).unsqueeze(1).float(), c)


def seed(x: Tensor[tuple[N, L[2]], float32], k: int) -> Tensor[tuple[int, L[2]], float32]:
    c = x[st.randint(0, x.shape[0], (1,))]
    while c.shape[0] < k:
        d2 = st.cdist(x, c).min(dim=1).values ** 2
        c = st.cat([c, x[st.multinomial(d2 / d2.sum(), 1)]], dim=0)
    return c


def main() -> None:
    x: Tensor[tuple[N, L[2]], float32] = st.randn(200, 2)
    c: Tensor[tuple[K, L[2]], float32] = st.randn(4, 2)
    seed(x, 4)
    labels = assign(x, c)
    for _ in range(3):
        c = update(x, labels, c)
        labels = assign(x, c)
    inertia = (x - c[labels]).pow(2).sum().item()
    assert inertia >= 0.0


if __name__ == "__main__":
    main()
