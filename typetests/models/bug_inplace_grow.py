"""An accumulator that an in-place add would have to grow."""
from __future__ import annotations

from typing import Literal as L

import shapetorch as st
from shapetorch import Tensor, float32


def pool(h: Tensor[tuple[L[6], L[10], L[8]], float32]) -> Tensor[tuple[L[6], L[8]], float32]:
    total = st.zeros(6, 1)
    for i in range(h.shape[1]):
        total += h[:, i]  # BUG: total is (6, 1); it must start as zeros(6, 8)
    return total / h.shape[1]  # ALSO: the same bug, seen in the return type


def main() -> None:
    pool(st.randn(6, 10, 8))


if __name__ == "__main__":
    main()
