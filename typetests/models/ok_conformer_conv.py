"""A Conformer convolution module: channels moved first, pointwise conv and GLU, depthwise Conv1d, BatchNorm, back."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn

B = TypeVar("B")
T = TypeVar("T")
D: Final = 32
K: Final = 15


class ConvModule(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(D)
        self.pointwise1 = nn.Conv1d(D, 2 * D, 1)
        self.depthwise = nn.Conv1d(D, D, K, padding=(K - 1) // 2, groups=D)
        self.bn = nn.BatchNorm1d(D)
        self.pointwise2 = nn.Conv1d(D, D, kernel_size=1)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x: Tensor[tuple[B, T, L[32]], float32]) -> Tensor[tuple[B, T, L[32]], float32]:
        h = self.norm(x).transpose(1, 2)
        h = F.glu(self.pointwise1(h), dim=1)
        h = F.silu(self.bn(self.depthwise(h)))
        h = self.dropout(self.pointwise2(h))
        return x + h.transpose(1, 2)


def main() -> None:
    ConvModule()(st.randn(2, 50, 32))


if __name__ == "__main__":
    main()
