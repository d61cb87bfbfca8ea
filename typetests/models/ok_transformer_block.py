"""A pre-norm transformer block with nested residual calls."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn

B = TypeVar("B")
D_MODEL: Final = 64


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(D_MODEL)
        self.norm2 = nn.LayerNorm(D_MODEL)
        self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL)
        self.out = nn.Linear(D_MODEL, D_MODEL)
        self.up = nn.Linear(D_MODEL, 4 * D_MODEL)
        self.down = nn.Linear(4 * D_MODEL, D_MODEL)

    def forward(self, x: Tensor[tuple[B, L[10], L[64]], float32]) -> Tensor[tuple[B, L[10], L[64]], float32]:
        q, k, v = self.qkv(self.norm1(x)).split(D_MODEL, dim=-1)
        x = x + self.out(F.scaled_dot_product_attention(q, k, v))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


def main() -> None:
    Block()(st.randn(2, 10, 64))


if __name__ == "__main__":
    main()
