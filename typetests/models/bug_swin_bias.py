"""Swin window attention: windows cut with view/permute, a relative-position bias shaped per window side, not per token."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32, nn

B = TypeVar("B")
WS: Final = 4
HEADS: Final = 2
C: Final = 16


class WindowAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(C, 3 * C)
        self.proj = nn.Linear(C, C)
        self.bias = nn.Parameter(st.zeros(HEADS, WS, WS))

    def forward(self, x: Tensor[tuple[B, L[8], L[8], L[16]], float32]) -> Tensor[tuple[B, L[8], L[8], L[16]], float32]:
        b = x.shape[0]
        windows = x.view(b, 2, WS, 2, WS, C).permute(0, 1, 3, 2, 4, 5).reshape(-1, WS * WS, C)
        qkv = self.qkv(windows).reshape(-1, WS * WS, 3, HEADS, C // HEADS).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = q @ k.transpose(-2, -1) * (C // HEADS) ** -0.5
        attn = attn + self.bias  # BUG: the bias needs one entry per token pair: (HEADS, WS * WS, WS * WS)
        out = (attn.softmax(dim=-1) @ v).transpose(1, 2).reshape(-1, WS * WS, C)
        out = self.proj(out).view(b, 2, 2, WS, WS, C).permute(0, 1, 3, 2, 4, 5)
        return out.reshape(b, 8, 8, C)


def main() -> None:
    WindowAttention()(st.randn(2, 8, 8, 16))


if __name__ == "__main__":
    main()
