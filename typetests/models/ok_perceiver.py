"""Perceiver cross-attention: a learned latent array (a Parameter) attends to a long input, split into heads."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32, nn

B = TypeVar("B")
M = TypeVar("M")
LATENTS: Final = 16
D: Final = 64
D_IN: Final = 24
HEADS: Final = 4
HD: Final = D // HEADS


class CrossAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.latents = nn.Parameter(st.randn(LATENTS, D) * 0.02)
        self.q = nn.Linear(D, D, bias=False)
        self.kv = nn.Linear(D_IN, 2 * D, bias=False)
        self.out = nn.Linear(D, D)
        self.norm = nn.LayerNorm(D)

    def forward(self, x: Tensor[tuple[B, M, L[24]], float32]) -> Tensor[tuple[B, L[16], L[64]], float32]:
        b, m = x.shape[0], x.shape[1]
        lat = self.latents.unsqueeze(0).expand(b, -1, -1)
        q = self.q(self.norm(lat)).view(b, LATENTS, HEADS, HD).transpose(1, 2)
        k, v = self.kv(x).view(b, m, 2, HEADS, HD).permute(2, 0, 3, 1, 4).unbind(0)
        attn = (q @ k.transpose(-2, -1) / HD ** 0.5).softmax(dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(b, LATENTS, D)
        return lat + self.out(out)


def main() -> None:
    CrossAttention()(st.randn(2, 300, 24))


if __name__ == "__main__":
    main()
