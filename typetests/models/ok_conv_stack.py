"""A CNN with Sequential stages, pooling layers and a head sized by Final arithmetic."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32, nn

B = TypeVar("B")
C: Final = 8
SIDE: Final = 32


class ConvNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, C, 3, padding=1), nn.BatchNorm2d(C), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(C, 2 * C, 3, padding=1), nn.ReLU(), nn.Flatten(),
        )
        self.head = nn.Linear(2 * C * (SIDE // 2) * (SIDE // 2), 10)

    def forward(self, x: Tensor[tuple[B, L[3], L[32], L[32]], float32]) -> Tensor[tuple[B, L[10]], float32]:
        return self.head(self.features(x))


def main() -> None:
    ConvNet()(st.randn(2, 3, 32, 32))


if __name__ == "__main__":
    main()
