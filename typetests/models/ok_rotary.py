"""Rotary position embeddings: halves, a broadcast table with size-1 dims, concatenation."""
from __future__ import annotations

from typing import Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32

B = TypeVar("B")


def rotate(x: Tensor[tuple[B, L[4], L[10], L[32]], float32]) -> Tensor[tuple[B, L[4], L[10], L[32]], float32]:
    x1, x2 = x.chunk(2, dim=-1)
    inv = 1.0 / (10000 ** (st.arange(0, 16, dtype=float32) / 16))
    freqs = st.arange(10, dtype=float32).unsqueeze(-1) * inv.unsqueeze(0)
    cos = freqs.cos()[None, None]
    sin = freqs.sin()[None, None]
    return st.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


def main() -> None:
    rotate(st.randn(2, 4, 10, 32))


if __name__ == "__main__":
    main()
