"""Multi-head attention written with einsum, whose key projection has the wrong head size."""
from __future__ import annotations

from typing import Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32

B = TypeVar("B")


def scores(q: Tensor[tuple[B, L[4], L[10], L[16]], float32],
           k: Tensor[tuple[B, L[4], L[10], L[8]], float32]) -> Tensor[tuple[B, L[4], L[10], L[10]], float32]:
    return st.einsum("bhqd,bhkd->bhqk", q, k)  # BUG: d is 16 in q and 8 in k


def main() -> None:
    scores(st.randn(2, 4, 10, 16), st.randn(2, 4, 10, 8))


if __name__ == "__main__":
    main()
