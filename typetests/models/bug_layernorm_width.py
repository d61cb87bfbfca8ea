"""A transformer feed-forward block normalised over the wrong width."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn

B = TypeVar("B")
D_MODEL: Final = 64


class FeedForward(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(2 * D_MODEL)
        self.up = nn.Linear(D_MODEL, 4 * D_MODEL)
        self.down = nn.Linear(4 * D_MODEL, D_MODEL)

    def forward(self, x: Tensor[tuple[B, L[10], L[64]], float32]) -> Tensor[tuple[B, L[10], L[64]], float32]:
        h = self.norm(x)  # BUG: LayerNorm over 128 features, x has 64
        return x + self.down(F.gelu(self.up(h)))


def main() -> None:
    FeedForward()(st.randn(2, 10, 64))


if __name__ == "__main__":
    main()
