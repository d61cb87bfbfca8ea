"""A cross-attention helper called with memory of the wrong width."""
from __future__ import annotations

from typing import Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32

B = TypeVar("B")
P = TypeVar("P")
Q = TypeVar("Q")
D = TypeVar("D")


def cross_scores(a: Tensor[tuple[B, P, D], float32], b: Tensor[tuple[B, Q, D], float32]) -> Tensor[tuple[B, P, Q], float32]:
    return a @ b.transpose(1, 2)


def main() -> None:
    queries = st.randn(2, 5, 16)
    memory = st.randn(2, 7, 32)
    cross_scores(queries, memory)  # BUG: the feature widths differ (16 and 32)


if __name__ == "__main__":
    main()
