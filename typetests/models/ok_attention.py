"""Multi-head self-attention: reshape with -1, transposes with negative dims, a causal mask."""
from __future__ import annotations

import math
from typing import Final, Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32, nn

B = TypeVar("B")
HEADS: Final = 4
D_MODEL: Final = 32


class SelfAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL)
        self.out = nn.Linear(D_MODEL, D_MODEL)

    def forward(self, x: Tensor[tuple[B, L[10], L[32]], float32]) -> Tensor[tuple[B, L[10], L[32]], float32]:
        b = x.shape[0]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.reshape(b, -1, HEADS, D_MODEL // HEADS).transpose(1, 2)
        k = k.reshape(b, -1, HEADS, D_MODEL // HEADS).transpose(1, 2)
        v = v.reshape(b, -1, HEADS, D_MODEL // HEADS).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(D_MODEL // HEADS)
        mask = st.ones(10, 10, dtype=st.bool).triu(1)
        scores = scores.masked_fill(mask, float("-inf"))
        h = (scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(b, 10, D_MODEL)
        return self.out(h)


def main() -> None:
    SelfAttention()(st.randn(2, 10, 32))


if __name__ == "__main__":
    main()
