"""A language model whose tied output projection uses the embedding table untransposed."""
from __future__ import annotations

from typing import Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32, int64, nn

B = TypeVar("B")


class TinyLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(100, 32)
        self.mix = nn.Linear(32, 32)

    def forward(self, tokens: Tensor[tuple[B, L[12]], int64]) -> Tensor[tuple[B, L[12], L[100]], float32]:
        h = self.mix(self.emb(tokens)).tanh()
        return h @ self.emb.weight  # BUG: the table is (100, 32): use self.emb.weight.T


def main() -> None:
    TinyLM()(st.randint(0, 100, (2, 12)))


if __name__ == "__main__":
    main()
