"""An MLP-Mixer block that mixes tokens without moving them to the last axis."""
from __future__ import annotations

from typing import Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn

B = TypeVar("B")


class MixerBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(32)
        self.tokens = nn.Linear(49, 49)
        self.channels = nn.Linear(32, 32)

    def forward(self, x: Tensor[tuple[B, L[49], L[32]], float32]) -> Tensor[tuple[B, L[49], L[32]], float32]:
        y = self.tokens(self.norm(x))  # BUG: token mixing needs x.transpose(1, 2)
        x = x + y
        return x + F.gelu(self.channels(self.norm(x)))


def main() -> None:
    MixerBlock()(st.randn(2, 49, 32))


if __name__ == "__main__":
    main()
