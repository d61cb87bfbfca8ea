"""A MobileNet block: depthwise-separable convs with stride 2 and a squeeze-and-excitation gate."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn

B = TypeVar("B", bound=int)
C_IN: Final = 16
C_OUT: Final = 32
SQUEEZE: Final = C_IN // 4


class MobileBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.depthwise = nn.Conv2d(C_IN, C_IN, 3, stride=2, padding=1, groups=C_IN, bias=False)
        self.bn1 = nn.BatchNorm2d(C_IN)
        self.se_reduce = nn.Linear(C_IN, SQUEEZE)
        self.se_expand = nn.Linear(SQUEEZE, C_IN)
        self.pointwise = nn.Conv2d(C_IN, C_OUT, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(C_OUT)

    def forward(self, x: Tensor[tuple[B, L[16], L[32], L[32]], float32]) -> Tensor[tuple[B, L[32], L[16], L[16]], float32]:
        b, c = x.shape[0], x.shape[1]
        h = F.relu6(self.bn1(self.depthwise(x)))
        s = F.adaptive_avg_pool2d(h, 1).flatten(1)
        gate = st.sigmoid(self.se_expand(F.relu(self.se_reduce(s)))).view(b, c, 1, 1)
        return self.bn2(self.pointwise(h * gate))


def main() -> None:
    MobileBlock()(st.randn(2, 16, 32, 32))


if __name__ == "__main__":
    main()
