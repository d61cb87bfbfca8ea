"""A ResNet basic block: BatchNorm, a residual add of a nested call."""
from __future__ import annotations

from typing import Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn

B = TypeVar("B")


class BasicBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x: Tensor[tuple[B, L[16], L[8], L[8]], float32]) -> Tensor[tuple[B, L[10]], float32]:
        h = F.relu(self.bn1(self.conv1(x)))
        h = x + self.bn2(self.conv2(h))
        h = h + F.relu(self.conv2(h))
        return self.fc(self.pool(F.relu(h)).flatten(1))


def main() -> None:
    BasicBlock()(st.randn(4, 16, 8, 8))


if __name__ == "__main__":
    main()
