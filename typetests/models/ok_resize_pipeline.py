"""An image pipeline: resize by size and by scale with the interpolation modes, antialiased downscaling."""
from __future__ import annotations

from typing import Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn

B = TypeVar("B")


class Pipeline(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)

    def forward(self, img: Tensor[tuple[B, L[3], L[40], L[60]], float32]) -> Tensor[tuple[B, L[12], L[24], L[24]], float32]:
        small = F.interpolate(img, size=(24, 24), mode="bicubic", align_corners=False, antialias=True)
        half = F.interpolate(img, scale_factor=0.5, mode="area")
        half = F.interpolate(half, size=(24, 24), mode="bilinear", antialias=True)
        soft = F.interpolate(img, size=(24, 24), mode="lanczos", antialias=True)
        sharp = F.interpolate(img, size=(12, 12), mode="nearest-exact")
        sharp = self.up(sharp)
        feats = self.conv(small + half + soft + sharp)
        return st.cat([feats, small, half, F.relu(sharp)[:, :2]], dim=1)


def main() -> None:
    Pipeline()(st.rand(2, 3, 40, 60))


if __name__ == "__main__":
    main()
