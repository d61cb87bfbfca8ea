"""A CLIP loss: projected, normalised image and text embeddings, a learned logit_scale Parameter, symmetric cross entropy."""
from __future__ import annotations

import math
from typing import Final, Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn

B = TypeVar("B")
IMG: Final = 96
TXT: Final = 48
EMBED: Final = 32


class CLIPHead(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.img_proj = nn.Linear(IMG, EMBED, bias=False)
        self.txt_proj = nn.Linear(TXT, EMBED, bias=False)
        self.logit_scale = nn.Parameter(st.ones([]) * math.log(1 / 0.07))

    def forward(self, img: Tensor[tuple[B, L[96]], float32], txt: Tensor[tuple[B, L[48]], float32]) -> Tensor[tuple[()], float32]:
        i = F.normalize(self.img_proj(img), dim=-1)
        t = F.normalize(self.txt_proj(txt), dim=-1)
        scale = self.logit_scale.exp().clamp(max=100)
        logits = scale * i @ t.t()
        labels = st.arange(img.shape[0])
        return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2


def main() -> None:
    CLIPHead()(st.randn(6, 96), st.randn(6, 48))


if __name__ == "__main__":
    main()
