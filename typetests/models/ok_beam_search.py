"""One beam-search step: scores broadcast over the vocabulary, top-k over flattened beams."""
from __future__ import annotations

from typing import Literal as L

import shapetorch as st
from shapetorch import Tensor, float32, int64

Batch = L[2]
Beams = L[3]
Vocab = L[50]


def step(scores: Tensor[tuple[Batch, Beams], float32],
         log_probs: Tensor[tuple[Batch, Beams, Vocab], float32]) -> tuple[Tensor[tuple[Batch, Beams], float32], Tensor[tuple[Batch, Beams], int64]]:
    total = scores.unsqueeze(-1) + log_probs
    best = total.flatten(1).topk(3, dim=-1)
    beam = best.indices // 50
    token = best.indices % 50
    return best.values, token + beam * 0


def main() -> None:
    step(st.zeros(2, 3), st.randn(2, 3, 50).log_softmax(-1))


if __name__ == "__main__":
    main()
