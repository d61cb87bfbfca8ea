"""Incremental decoding with a KV cache grown along the sequence axis."""
from __future__ import annotations

import math
from typing import Any, Literal as L

import shapetorch as st
from shapetorch import Tensor, float32


def attend(q: Tensor[tuple[L[1], L[4], L[1], L[16]], float32],
           keys: Tensor[tuple[L[1], L[4], Any, L[16]], float32],
           values: Tensor[tuple[L[1], L[4], Any, L[16]], float32]) -> Tensor[tuple[L[1], L[4], L[1], L[16]], float32]:
    w = (q @ keys.transpose(-2, -1) / math.sqrt(16)).softmax(dim=-1)
    return w @ values


def main() -> None:
    keys = st.zeros(1, 4, 0, 16)
    values = st.zeros(1, 4, 0, 16)
    for _ in range(5):
        k, v, q = st.randn(1, 4, 1, 16), st.randn(1, 4, 1, 16), st.randn(1, 4, 1, 16)
        keys = st.cat([keys, k], dim=2)
        values = st.cat([values, v], dim=-2)
        attend(q, keys, values)


if __name__ == "__main__":
    main()
