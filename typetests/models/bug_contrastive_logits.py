"""A contrastive (InfoNCE) loss that multiplies the embeddings without transposing."""
from __future__ import annotations

from typing import Literal as L

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32


def info_nce(z1: Tensor[tuple[L[8], L[32]], float32], z2: Tensor[tuple[L[8], L[32]], float32]) -> Tensor[tuple[()], float32]:
    z1 = F.normalize(z1, dim=-1)
    z2 = F.normalize(z2, dim=-1)
    logits = z1 @ z2 / 0.1  # BUG: z2 must be transposed
    labels = st.arange(8)
    return F.cross_entropy(logits, labels)


def main() -> None:
    info_nce(st.randn(8, 32), st.randn(8, 32))


if __name__ == "__main__":
    main()
