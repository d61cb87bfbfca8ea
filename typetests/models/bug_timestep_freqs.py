"""A sinusoidal timestep embedding whose frequency table spans the full width, so sin and cos together are twice it."""
from __future__ import annotations

import math
from typing import Final, Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, int64, nn

B = TypeVar("B")
DIM: Final = 32


class TimeEmbed(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(DIM, 4 * DIM)
        self.fc2 = nn.Linear(4 * DIM, 4 * DIM)

    def forward(self, t: Tensor[tuple[B], int64]) -> Tensor[tuple[B, L[128]], float32]:
        freqs = st.exp(-math.log(10000.0) * st.arange(0, DIM, dtype=st.float32) / DIM)
        args = t.float().unsqueeze(1) * freqs.unsqueeze(0)
        emb = st.cat([args.sin(), args.cos()], dim=1)
        return self.fc2(F.silu(self.fc1(emb)))  # BUG: emb has 2 * DIM features: the table needs DIM // 2 frequencies


def main() -> None:
    TimeEmbed()(st.tensor([1, 500, 999]))


if __name__ == "__main__":
    main()
