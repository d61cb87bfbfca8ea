"""A ResNet stage: a strided bottleneck block whose shortcut is a 1x1 conv with BatchNorm, then a plain block."""
from __future__ import annotations

from typing import Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn

B = TypeVar("B")


class Stage(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(16, 32, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(32)
        self.conv2 = nn.Conv2d(32, 32, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(32)
        self.downsample = nn.Sequential(nn.Conv2d(16, 32, 1, stride=2, bias=False), nn.BatchNorm2d(32))
        self.conv3 = nn.Conv2d(32, 32, 3, padding=1, bias=False)
        self.bn3 = nn.BatchNorm2d(32)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(32, 10)

    def forward(self, x: Tensor[tuple[B, L[16], L[16], L[16]], float32]) -> Tensor[tuple[B, L[10]], float32]:
        h = F.relu(self.bn1(self.conv1(x)))
        h = F.relu(self.bn2(self.conv2(h)) + self.downsample(x))
        h = F.relu(h + self.bn3(self.conv3(h)))
        return self.fc(st.flatten(self.pool(h), 1))


def main() -> None:
    Stage()(st.randn(2, 16, 16, 16))


if __name__ == "__main__":
    main()
