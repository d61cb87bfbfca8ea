"""A Conformer conv module whose GLU halves the time axis instead of the doubled channels."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn

B = TypeVar("B")
D: Final = 16
K: Final = 7


class ConvModule(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.pw1 = nn.Conv1d(D, 2 * D, 1)
        self.dw = nn.Conv1d(D, D, K, padding=K // 2, groups=D)
        self.pw2 = nn.Conv1d(D, D, 1)

    def forward(self, x: Tensor[tuple[B, L[40], L[16]], float32]) -> Tensor[tuple[B, L[40], L[16]], float32]:
        h = F.glu(self.pw1(x.transpose(1, 2)), dim=-1)
        h = self.dw(h)  # BUG: the GLU split dim -1 (time), leaving 2 * D channels: split dim 1
        return x + self.pw2(F.silu(h)).transpose(1, 2)


def main() -> None:
    ConvModule()(st.randn(2, 40, 16))


if __name__ == "__main__":
    main()
