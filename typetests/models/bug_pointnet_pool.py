"""PointNet pooling over the channel axis instead of the points."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn

B = TypeVar("B")
FEAT: Final = 128


class PointNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(3, 64, 1)
        self.conv2 = nn.Conv1d(64, FEAT, 1)
        self.bn = nn.BatchNorm1d(FEAT)
        self.fc = nn.Linear(FEAT, 40)

    def forward(self, pts: Tensor[tuple[B, L[3], L[1024]], float32]) -> Tensor[tuple[B, L[40]], float32]:
        h = F.relu(self.bn(self.conv2(F.relu(self.conv1(pts)))))
        g = h.max(dim=1).values
        return self.fc(g)  # BUG: g pooled the channels (dim 1), leaving (B, 1024): pool over the points, dim 2


def main() -> None:
    PointNet()(st.randn(2, 3, 1024))


if __name__ == "__main__":
    main()
