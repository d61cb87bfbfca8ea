"""PointNet: a shared per-point MLP as 1x1 Conv1d, a max over the points, and a classifier."""
from __future__ import annotations

from typing import Any, Final, Literal as L

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Dim, Tensor, float32, nn


class Batch(Dim): ...
class Points(Dim): ...


CLASSES: Final = 10


class PointNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.mlp = nn.Sequential(nn.Conv1d(3, 64, 1), nn.BatchNorm1d(64), nn.ReLU(), nn.Conv1d(64, 256, 1))
        self.head = nn.Sequential(nn.Linear(256, 128), nn.ReLU(), nn.Dropout(0.3), nn.Linear(128, CLASSES))

    def forward(self, pts: Tensor[tuple[Batch, Points, L[3]], float32]) -> Tensor[tuple[Batch, L[10]], float32]:
        feats = self.mlp(pts.transpose(1, 2))
        pooled = st.max(feats, 2, keepdim=True)[0]
        return self.head(pooled.view(-1, 256))


def per_point_logits(pts: Tensor[tuple[Any, Any, L[3]], float32], net: PointNet) -> Tensor[tuple[Any, L[10]], float32]:
    glob = net.mlp(pts.transpose(1, 2)).amax(dim=-1)
    return F.log_softmax(net.head(glob), dim=1)


def main() -> None:
    net = PointNet()
    net(st.randn(4, 500, 3))
    per_point_logits(st.randn(4, 500, 3), net)


if __name__ == "__main__":
    main()
