"""A CNN classifier whose head forgets that the stride-2 convolution halves the image."""
from __future__ import annotations

from typing import Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32, nn

B = TypeVar("B")


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(), nn.Flatten())
        self.head = nn.Linear(8 * 32 * 32, 10)

    def forward(self, x: Tensor[tuple[B, L[3], L[32], L[32]], float32]) -> Tensor[tuple[B, L[10]], float32]:
        return self.head(self.features(x))  # BUG: the features are 8 * 16 * 16


def main() -> None:
    Classifier()(st.randn(4, 3, 32, 32))


if __name__ == "__main__":
    main()
