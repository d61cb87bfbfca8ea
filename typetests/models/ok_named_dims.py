"""Named dims in signatures, called with literal sizes."""
from __future__ import annotations

from typing import Literal as L

import shapetorch as st
from shapetorch import Dim, Tensor, float32, nn


class Batch(Dim): ...
class Seq(Dim): ...


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(16, 32)

    def forward(self, x: Tensor[tuple[Batch, Seq, L[16]], float32]) -> Tensor[tuple[Batch, Seq, L[32]], float32]:
        return self.proj(x)


def pool(h: Tensor[tuple[Batch, Seq, L[32]], float32]) -> Tensor[tuple[Batch, L[32]], float32]:
    return h.amax(dim=1)


def main() -> None:
    pool(Encoder()(st.randn(8, 20, 16)))


if __name__ == "__main__":
    main()
