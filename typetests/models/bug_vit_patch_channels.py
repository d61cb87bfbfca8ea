"""A ViT whose patch embedding forgot the colour channels in its input width."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32, nn

B = TypeVar("B")
PATCH: Final = 4
DIM: Final = 32
HEADS: Final = 4
TOKENS: Final = (16 // PATCH) * (16 // PATCH)


class ViT(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Linear(PATCH * PATCH, DIM)
        self.cls = nn.Parameter(st.zeros(1, 1, DIM))
        self.pos = nn.Parameter(st.zeros(1, TOKENS + 1, DIM))
        self.norm = nn.LayerNorm(DIM)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.proj = nn.Linear(DIM, DIM)
        self.head = nn.Linear(DIM, 10)

    def forward(self, img: Tensor[tuple[B, L[3], L[16], L[16]], float32]) -> Tensor[tuple[B, L[10]], float32]:
        patches = st.rearrange(img, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=PATCH, p2=PATCH)
        x = self.embed(patches)  # BUG: a patch has PATCH * PATCH * 3 values, the embedding takes PATCH * PATCH
        b = x.shape[0]
        x = st.cat([self.cls.expand(b, -1, -1), x], dim=1) + self.pos
        q, k, v = st.rearrange(self.qkv(self.norm(x)), "b n (three h d) -> three b h n d", three=3, h=HEADS).unbind(0)
        scores = st.einsum("bhid,bhjd->bhij", q, k) * (DIM // HEADS) ** -0.5
        out = st.einsum("bhij,bhjd->bhid", scores.softmax(dim=-1), v)
        x = x + self.proj(st.rearrange(out, "b h n d -> b n (h d)"))
        return self.head(x[:, 0])


def main() -> None:
    ViT()(st.randn(2, 3, 16, 16))


if __name__ == "__main__":
    main()
