"""A YOLO-style detection head: per-anchor predictions split out of the channels, with one class too many."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32, nn

B = TypeVar("B", bound=int)
ANCHORS: Final = 3
CLASSES: Final = 20


class DetectHead(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.pred = nn.Conv2d(64, ANCHORS * (5 + CLASSES), 1)

    def forward(self, feats: Tensor[tuple[B, L[64], L[13], L[13]], float32]) -> Tensor[tuple[B, L[3], L[13], L[13], L[25]], float32]:
        b = feats.shape[0]
        p = self.pred(feats)
        p = p.view(b, ANCHORS, 5 + CLASSES + 1, 13, 13)  # BUG: 5 + CLASSES values per anchor (no background class)
        return p.permute(0, 1, 3, 4, 2).contiguous()


def main() -> None:
    DetectHead()(st.randn(2, 64, 13, 13))


if __name__ == "__main__":
    main()
