"""An MLP-Mixer block: token mixing on the transposed sequence, channel mixing in place."""
from __future__ import annotations

from typing import Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn

B = TypeVar("B")


class MixerBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(32)
        self.norm2 = nn.LayerNorm(32)
        self.tokens = nn.Linear(49, 49)
        self.channels = nn.Linear(32, 32)

    def forward(self, x: Tensor[tuple[B, L[49], L[32]], float32]) -> Tensor[tuple[B, L[49], L[32]], float32]:
        x = x + self.tokens(self.norm1(x).transpose(1, 2)).transpose(1, 2)
        return x + F.gelu(self.channels(self.norm2(x)))


def main() -> None:
    MixerBlock()(st.randn(2, 49, 32))


if __name__ == "__main__":
    main()
