"""A ViT embedding whose position table forgets the class token."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32, nn

B = TypeVar("B")
PATCH: Final = 4
N_PATCHES: Final = 64
D: Final = 32


class Embed(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(PATCH * PATCH * 3, D)
        self.cls = nn.Parameter(st.zeros(1, 1, D))
        self.pos = nn.Parameter(st.zeros(1, N_PATCHES, D))

    def forward(self, patches: Tensor[tuple[B, L[64], L[48]], float32]) -> Tensor[tuple[B, L[65], L[32]], float32]:
        x = self.proj(patches)
        x = st.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1)
        return x + self.pos  # BUG: 65 tokens against 64 positions


def main() -> None:
    Embed()(st.randn(2, 64, 48))


if __name__ == "__main__":
    main()
