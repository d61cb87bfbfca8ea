"""A U-Net whose second ConvTranspose2d (kernel 3) grows 16 to 31, one short of the 32 of its skip."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn

B = TypeVar("B")
C: Final = 8


class UNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, C, 3, padding=1)
        self.down1 = nn.Conv2d(C, 2 * C, 3, stride=2, padding=1)
        self.down2 = nn.Conv2d(2 * C, 4 * C, 3, stride=2, padding=1)
        self.up2 = nn.ConvTranspose2d(4 * C, 2 * C, 2, stride=2)
        self.fuse2 = nn.Conv2d(4 * C, 2 * C, 3, padding=1)
        self.up1 = nn.ConvTranspose2d(2 * C, C, 3, stride=2, padding=1)
        self.fuse1 = nn.Conv2d(2 * C, C, 3, padding=1)
        self.head = nn.Conv2d(C, 1, 1)

    def forward(self, x: Tensor[tuple[B, L[3], L[32], L[32]], float32]) -> Tensor[tuple[B, L[1], L[32], L[32]], float32]:
        s0 = F.relu(self.stem(x))
        s1 = F.relu(self.down1(s0))
        bottom = F.relu(self.down2(s1))
        h = self.up2(bottom)
        h = F.relu(self.fuse2(st.cat([h, s1], dim=1)))
        h = self.up1(h)
        h = F.relu(self.fuse1(st.cat([h, s0], dim=1)))  # BUG: up1 gives 31x31 (kernel 3 needs output_padding=1), s0 is 32x32
        return self.head(h)


def main() -> None:
    UNet()(st.randn(2, 3, 32, 32))


if __name__ == "__main__":
    main()
