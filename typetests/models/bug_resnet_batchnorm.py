"""A ResNet stage whose BatchNorm is sized for the block's input, not its output."""
from __future__ import annotations

from typing import Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn

B = TypeVar("B")


class Stage(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(32, 64, 3, stride=2, padding=1)
        self.bn = nn.BatchNorm2d(32)
        self.shortcut = nn.Conv2d(32, 64, 1, stride=2)

    def forward(self, x: Tensor[tuple[B, L[32], L[16], L[16]], float32]) -> Tensor[tuple[B, L[64], L[8], L[8]], float32]:
        h = self.conv(x)
        h = self.bn(h)  # BUG: BatchNorm2d(32) on 64 channels
        return F.relu(h + self.shortcut(x))


def main() -> None:
    Stage()(st.randn(2, 32, 16, 16))


if __name__ == "__main__":
    main()
