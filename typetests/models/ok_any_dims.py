"""Unknown sizes mixed with literals: a classifier for any batch and any sequence length."""
from __future__ import annotations

from typing import Any, Literal as L

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn


class Pooler(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(24, 24)
        self.head = nn.Linear(24, 3)

    def forward(self, x: Tensor[tuple[Any, Any, L[24]], float32]) -> Tensor[tuple[Any, L[3]], float32]:
        h = F.silu(self.proj(x))
        return self.head(h.mean(dim=1))


def classify(x: Tensor[tuple[Any, ...], float32], model: Pooler) -> Tensor[Any, Any]:
    return model(x.reshape(x.shape[0], -1, 24))


def main() -> None:
    classify(st.randn(4, 9, 24), Pooler())


if __name__ == "__main__":
    main()
