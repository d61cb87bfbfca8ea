"""A WaveNet stack of dilated causal Conv1d layers; the last layer pads for dilation 2 but dilates by 4."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32, nn

B = TypeVar("B")
CH: Final = 16
K: Final = 2


class WaveNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(CH, 2 * CH, K, dilation=1, padding=(K - 1) * 1)
        self.conv2 = nn.Conv1d(CH, 2 * CH, K, dilation=2, padding=(K - 1) * 2)
        self.conv4 = nn.Conv1d(CH, 2 * CH, K, dilation=4, padding=(K - 1) * 2)

    def forward(self, x: Tensor[tuple[B, L[16], L[100]], float32]) -> Tensor[tuple[B, L[16], L[100]], float32]:
        h = self.conv1(x)[:, :, :-1]
        a, g = h.chunk(2, dim=1)
        x = x + st.tanh(a) * st.sigmoid(g)
        h = self.conv2(x)[:, :, :-2]
        a, g = h.chunk(2, dim=1)
        x = x + st.tanh(a) * st.sigmoid(g)
        h = self.conv4(x)[:, :, :-4]
        a, g = h.chunk(2, dim=1)
        return x + st.tanh(a) * st.sigmoid(g)  # BUG: conv4 pads 2 on each side, so cutting 4 leaves 98 steps


def main() -> None:
    WaveNet()(st.randn(2, 16, 100))


if __name__ == "__main__":
    main()
