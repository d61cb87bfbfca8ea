"""A diffusion UNet's sinusoidal timestep embedding, projected and added to a feature map."""
from __future__ import annotations

import math
from typing import Final, Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, int64, nn

B = TypeVar("B")
DIM: Final = 32
CH: Final = 64


def timestep_embedding(t: Tensor[tuple[B], int64], dim: int = DIM) -> Tensor[tuple[B, L[32]], float32]:
    half = DIM // 2
    freqs = st.exp(-math.log(10000.0) * st.arange(half, dtype=st.float32) / half)
    args = t[:, None].float() * freqs[None]
    return st.cat([st.cos(args), st.sin(args)], dim=-1)


class ResBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.time_mlp = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.SiLU(), nn.Linear(4 * DIM, CH))
        self.conv = nn.Conv2d(CH, CH, 3, padding=1)
        self.norm = nn.GroupNorm(8, CH)

    def forward(self, h: Tensor[tuple[B, L[64], L[16], L[16]], float32], t: Tensor[tuple[B], int64]) -> Tensor[tuple[B, L[64], L[16], L[16]], float32]:
        emb = self.time_mlp(timestep_embedding(t))
        out = self.conv(F.silu(self.norm(h))) + emb[:, :, None, None]
        return h + out


def main() -> None:
    ResBlock()(st.randn(2, 64, 16, 16), st.randint(0, 1000, (2,)))


if __name__ == "__main__":
    main()
