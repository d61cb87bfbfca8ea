"""A classifier head trained with label smoothing, a causal mask, gradient-norm clipping by hand and a helper
whose signature names its dims."""
from __future__ import annotations

from typing import Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Dim, Tensor, float32, int64, nn

B = TypeVar("B")
T = TypeVar("T")
C = TypeVar("C")


class Batch(Dim): ...


CLASSES = 10


def smooth_targets(labels: Tensor[tuple[B], int64], eps: float) -> Tensor[tuple[B, L[10]], float32]:
    hot = F.one_hot(labels, CLASSES).float()
    return hot * (1 - eps) + eps / CLASSES


def scores(q: Tensor[tuple[B, T, C], float32], k: Tensor[tuple[B, T, C], float32]) -> Tensor[tuple[B, T, T], float32]:
    s = q @ k.transpose(1, 2)
    t = q.shape[1]
    causal = st.ones(t, t).triu(1).bool()
    return s.masked_fill(causal, float("-inf"))


class Head(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(32, 2 * 16)
        self.out = nn.Linear(16, CLASSES)

    def forward(self, x: Tensor[tuple[Batch, L[6], L[32]], float32]) -> Tensor[tuple[Batch, L[10]], float32]:
        q, k = self.proj(x).chunk(2, dim=-1)
        att = scores(q, k).softmax(-1)
        h = (att @ k).mean(1)
        h = h / h.norm(dim=-1, keepdim=True).clamp(min=1e-6)
        return self.out(h)


def main() -> None:
    head = Head()
    x = st.randn(4, 6, 32)
    labels = st.arange(x.shape[0]) % CLASSES
    logits = head(x)
    loss = -(smooth_targets(labels, 0.1) * logits.log_softmax(-1)).sum(-1).mean()
    loss.backward()
    grads = [p.grad.norm() for p in head.parameters() if p.grad is not None]
    total = st.stack(grads).norm()
    assert total.item() >= 0


if __name__ == "__main__":
    main()
