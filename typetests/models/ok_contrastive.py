"""An InfoNCE loss: normalised embeddings, a similarity matrix, arange labels of a runtime size."""
from __future__ import annotations

from typing import Any, Literal as L

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32


def info_nce(z1: Tensor[tuple[Any, L[32]], float32], z2: Tensor[tuple[Any, L[32]], float32],
             temperature: float = 0.1) -> Tensor[tuple[()], float32]:
    z1 = F.normalize(z1, dim=-1)
    z2 = F.normalize(z2, dim=-1)
    logits = z1 @ z2.T / temperature
    labels = st.arange(z1.shape[0])
    return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2


def main() -> None:
    info_nce(st.randn(8, 32, requires_grad=True), st.randn(8, 32)).backward()


if __name__ == "__main__":
    main()
