"""Beam search that adds the beam scores without a vocabulary axis."""
from __future__ import annotations

from typing import Literal as L

import shapetorch as st
from shapetorch import Tensor, float32

Batch = L[2]
Beams = L[3]
Vocab = L[50]


def expand(scores: Tensor[tuple[Batch, Beams], float32],
           log_probs: Tensor[tuple[Batch, Beams, Vocab], float32]) -> Tensor[tuple[Batch, Beams], float32]:
    total = log_probs + scores  # BUG: scores needs .unsqueeze(-1) to broadcast over the vocabulary
    best = total.reshape(2, -1).topk(3, dim=-1)
    return best.values


def main() -> None:
    expand(st.zeros(2, 3), st.randn(2, 3, 50).log_softmax(-1))


if __name__ == "__main__":
    main()
