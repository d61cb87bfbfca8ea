"""An autoregressive WaveNet: embedded mu-law codes, dilated causal Conv1d by left F.pad, gated units, skips."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, int64, nn

B = TypeVar("B")
T = TypeVar("T")
Q: Final = 32
CH: Final = 16


class ResidualBlock(nn.Module):
    def __init__(self, dilation: int) -> None:
        super().__init__()
        self.left = dilation
        self.filter = nn.Conv1d(CH, CH, 2, dilation=dilation)
        self.gate = nn.Conv1d(CH, CH, 2, dilation=dilation)
        self.res = nn.Conv1d(CH, CH, 1)
        self.skip = nn.Conv1d(CH, CH, 1)

    def forward(self, x: Tensor[tuple[B, L[16], T], float32]) -> tuple[Tensor[tuple[B, L[16], T], float32],
                                                                      Tensor[tuple[B, L[16], T], float32]]:
        padded = F.pad(x, (self.left, 0))
        z = st.tanh(self.filter(padded)) * st.sigmoid(self.gate(padded))
        return x + self.res(z), self.skip(z)


class WaveNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(Q, CH)
        self.blocks = nn.ModuleList([ResidualBlock(d) for d in (1, 2, 4, 8)])
        self.out = nn.Sequential(nn.ReLU(), nn.Conv1d(CH, CH, 1), nn.ReLU(), nn.Conv1d(CH, Q, 1))

    def forward(self, idx: Tensor[tuple[B, T], int64]) -> Tensor[tuple[B, L[32], T], float32]:
        x = self.embed(idx).transpose(1, 2)
        skips = st.zeros_like(x)
        for block in self.blocks:
            x, s = block(x)
            skips = skips + s
        return self.out(skips)


def main() -> None:
    codes = st.randint(0, Q, (2, 40))
    logits = WaveNet()(codes[:, :-1])
    F.cross_entropy(logits, codes[:, 1:])


if __name__ == "__main__":
    main()
