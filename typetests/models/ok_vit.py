"""ViT patch embedding: Final arithmetic for sizes, a class token, a position Parameter."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32, nn

B = TypeVar("B")
PATCH: Final = 4
N: Final = 64
D: Final = 32


class Embed(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(PATCH * PATCH * 3, D)
        self.cls = nn.Parameter(st.zeros(1, 1, D))
        self.pos = nn.Parameter(st.zeros(1, N + 1, D))
        self.norm = nn.LayerNorm(D)

    def forward(self, img: Tensor[tuple[B, L[3], L[32], L[32]], float32]) -> Tensor[tuple[B, L[65], L[32]], float32]:
        b = img.shape[0]
        patches = img.reshape(b, 3, 8, PATCH, 8, PATCH).permute(0, 2, 4, 1, 3, 5).reshape(b, N, -1)
        x = self.proj(patches)
        x = st.cat([self.cls.expand(b, -1, -1), x], dim=1)
        return self.norm(x + self.pos)


def main() -> None:
    Embed()(st.randn(2, 3, 32, 32))


if __name__ == "__main__":
    main()
