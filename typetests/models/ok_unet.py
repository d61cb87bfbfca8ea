"""A U-Net level: pool down, convolve, upsample, join the skip connection."""
from __future__ import annotations

from typing import Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn

B = TypeVar("B")


class Level(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.down = nn.Conv2d(8, 16, 3, padding=1)
        self.up = nn.Conv2d(24, 8, 3, padding="same")

    def forward(self, x: Tensor[tuple[B, L[8], L[32], L[32]], float32]) -> Tensor[tuple[B, L[8], L[32], L[32]], float32]:
        h = F.relu(self.down(F.max_pool2d(x, 2)))
        h = F.interpolate(h, scale_factor=2, mode="nearest")
        return self.up(st.cat([h, x], dim=1))


def main() -> None:
    Level()(st.randn(2, 8, 32, 32))


if __name__ == "__main__":
    main()
