"""Shifted-window attention: roll the map, cut windows, attend with a per-token-pair bias and a window mask, roll back."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32, nn

B = TypeVar("B", bound=int)  # b = x.shape[0] is computed with (b * NW): a checker without the plugin needs the bound
WS: Final = 4
SHIFT: Final = WS // 2
HEADS: Final = 2
C: Final = 16
NW: Final = (8 // WS) * (8 // WS)


class ShiftedWindowAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(C, 3 * C)
        self.proj = nn.Linear(C, C)
        self.bias = nn.Parameter(st.zeros(HEADS, WS * WS, WS * WS))

    def forward(self, x: Tensor[tuple[B, L[8], L[8], L[16]], float32], mask: Tensor[tuple[L[4], L[16], L[16]], float32]) -> Tensor[tuple[B, L[8], L[8], L[16]], float32]:
        b = x.shape[0]
        shifted = st.roll(x, shifts=(-SHIFT, -SHIFT), dims=(1, 2))
        win = shifted.view(b, 8 // WS, WS, 8 // WS, WS, C).permute(0, 1, 3, 2, 4, 5).reshape(b * NW, WS * WS, C)
        q, k, v = self.qkv(win).chunk(3, dim=-1)
        q = q.view(-1, WS * WS, HEADS, C // HEADS).transpose(1, 2)
        k = k.view(-1, WS * WS, HEADS, C // HEADS).transpose(1, 2)
        v = v.view(-1, WS * WS, HEADS, C // HEADS).transpose(1, 2)
        attn = (q * (C // HEADS) ** -0.5) @ k.transpose(-2, -1) + self.bias
        attn = attn.view(b, NW, HEADS, WS * WS, WS * WS) + mask.unsqueeze(1).unsqueeze(0)
        out = attn.view(-1, HEADS, WS * WS, WS * WS).softmax(dim=-1) @ v
        out = self.proj(out.transpose(1, 2).reshape(b, 8 // WS, 8 // WS, WS, WS, C))
        out = out.permute(0, 1, 3, 2, 4, 5).reshape(b, 8, 8, C)
        return st.roll(out, shifts=(SHIFT, SHIFT), dims=(1, 2))


def main() -> None:
    ShiftedWindowAttention()(st.randn(2, 8, 8, 16), st.zeros(4, 16, 16))


if __name__ == "__main__":
    main()
