"""A KV cache that appends new keys along the head axis instead of the sequence axis."""
from __future__ import annotations

from typing import Literal as L

import shapetorch as st
from shapetorch import Tensor, float32


def step(cache: Tensor[tuple[L[1], L[4], L[7], L[16]], float32],
         new: Tensor[tuple[L[1], L[4], L[1], L[16]], float32],
         q: Tensor[tuple[L[1], L[4], L[1], L[16]], float32]) -> Tensor[tuple[L[1], L[4], L[1], L[8]], float32]:
    keys = st.cat([cache, new], dim=1)  # BUG: the cache grows along dim 2 (sequence), not 1 (heads)
    return q @ keys.transpose(-2, -1)


def main() -> None:
    step(st.randn(1, 4, 7, 16), st.randn(1, 4, 1, 16), st.randn(1, 4, 1, 16))


if __name__ == "__main__":
    main()
