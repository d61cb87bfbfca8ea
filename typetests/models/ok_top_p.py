"""Nucleus (top-p) filtering: sort the logits, mask the tail past cumulative probability p, scatter the mask back."""
from __future__ import annotations

from typing import Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32, int64

B = TypeVar("B", bound=int)


def top_p_filter(logits: Tensor[tuple[B, L[100]], float32], p: float = 0.9) -> Tensor[tuple[B, L[100]], float32]:
    sorted_logits, sorted_idx = st.sort(logits, dim=-1, descending=True)
    cum = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    remove = cum > p
    remove[..., 1:] = remove[..., :-1].clone()
    remove[..., 0] = False
    mask = remove.scatter(1, sorted_idx, remove)
    return logits.masked_fill(mask, float("-inf"))


def sample(logits: Tensor[tuple[B, L[100]], float32]) -> Tensor[tuple[B, L[1]], int64]:
    probs = top_p_filter(logits).softmax(dim=-1)
    return st.multinomial(probs, 1)


def main() -> None:
    sample(st.randn(3, 100))


if __name__ == "__main__":
    main()
