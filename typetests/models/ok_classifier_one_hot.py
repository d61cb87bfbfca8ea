"""Label smoothing with one_hot, a softmax over classes, and a scalar loss."""
from __future__ import annotations

from typing import Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, int64

B = TypeVar("B")


def smoothed_loss(logits: Tensor[tuple[L[6], L[10]], float32], target: Tensor[tuple[L[6]], int64]) -> Tensor[tuple[()], float32]:
    soft = F.one_hot(target, 10).float() * 0.9 + 0.01
    logp = F.log_softmax(logits, dim=-1)
    return -(soft * logp).sum(dim=-1).mean()


def main() -> None:
    smoothed_loss(st.randn(6, 10), st.randint(0, 10, (6,)))


if __name__ == "__main__":
    main()
