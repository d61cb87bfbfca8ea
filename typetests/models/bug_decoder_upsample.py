"""A decoder stage that upsamples by the wrong factor before joining the encoder's features."""
from __future__ import annotations

from typing import Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn

B = TypeVar("B")


class Up(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(32, 16, 3, padding=1)

    def forward(self, low: Tensor[tuple[B, L[16], L[8], L[8]], float32],
                skip: Tensor[tuple[B, L[16], L[32], L[32]], float32]) -> Tensor[tuple[B, L[16], L[32], L[32]], float32]:
        h = F.interpolate(low, scale_factor=2, mode="nearest")
        h = st.cat([h, skip], dim=1)  # BUG: 8x8 upsampled by 2 is 16x16, the skip is 32x32 (scale_factor=4)
        return F.relu(self.conv(h))


def main() -> None:
    Up()(st.randn(2, 16, 8, 8), st.randn(2, 16, 32, 32))


if __name__ == "__main__":
    main()
