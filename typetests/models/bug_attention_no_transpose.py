"""Scaled dot-product attention that forgets to transpose the keys."""
from __future__ import annotations

import math
from typing import Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32

B = TypeVar("B")
Heads = L[4]
SeqLen = L[10]
HeadDim = L[16]


def attention(q: Tensor[tuple[B, Heads, SeqLen, HeadDim], float32],
              k: Tensor[tuple[B, Heads, SeqLen, HeadDim], float32],
              v: Tensor[tuple[B, Heads, SeqLen, HeadDim], float32]) -> Tensor[tuple[B, Heads, SeqLen, HeadDim], float32]:
    scores = q @ k / math.sqrt(16)  # BUG: k must be transposed to (B, H, D, S)
    return scores.softmax(-1) @ v


def main() -> None:
    q = st.randn(2, 4, 10, 16)
    attention(q, q, q)


if __name__ == "__main__":
    main()
