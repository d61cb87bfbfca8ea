"""Rotary embeddings with a cos/sin table built for the full head size instead of half of it."""
from __future__ import annotations

from typing import Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32

B = TypeVar("B")


def rotate(x: Tensor[tuple[B, L[10], L[32]], float32]) -> Tensor[tuple[B, L[10], L[32]], float32]:
    x1, x2 = x.chunk(2, dim=-1)
    pos = st.arange(10, dtype=float32).unsqueeze(-1)
    freqs = pos * st.ones(1, 32)
    cos, sin = freqs.cos(), freqs.sin()
    rotated = st.cat([-x2, x1], dim=-1)
    return x * cos + rotated * sin[:, :16]  # BUG: cos is (10, 32) but sin is cut to (10, 16)


def main() -> None:
    rotate(st.randn(2, 10, 32))


if __name__ == "__main__":
    main()
