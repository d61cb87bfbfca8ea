"""Capsules: squash, prediction vectors by a broadcast 5-d matmul, dynamic routing by softmax over logits."""
from __future__ import annotations

from typing import Any, Final, Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn

B = TypeVar("B", bound=int)
S = TypeVar("S", bound=tuple[Any, ...])
P: Final = 16
C: Final = 3


def squash(s: Tensor[S, float32], dim: int = -1) -> Tensor[S, float32]:
    sq = (s ** 2).sum(dim=dim, keepdim=True)
    return sq / (1 + sq) * s / st.sqrt(sq + 1e-8)


class Capsules(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 16, kernel_size=3)
        self.primary = nn.Conv2d(16, 32, kernel_size=3, stride=2)
        self.W = nn.Parameter(0.1 * st.randn(1, P, C, 12, 8))

    def forward(self, x: Tensor[tuple[B, L[1], L[8], L[8]], float32]) -> Tensor[tuple[B, L[3]], float32]:
        p = self.primary(F.relu(self.conv(x)))
        b = x.shape[0]
        u = squash(p.view(b, 4, 8, -1).permute(0, 1, 3, 2).reshape(b, P, 8))
        u_hat = (self.W @ u[:, :, None, :, None]).squeeze(-1)
        logits = st.zeros(b, P, C)
        v = squash((F.softmax(logits, dim=2).unsqueeze(-1) * u_hat).sum(dim=1))
        for _ in range(2):
            logits = logits + (u_hat.detach() * v.unsqueeze(1)).sum(-1)
            v = squash((F.softmax(logits, dim=2).unsqueeze(-1) * u_hat).sum(dim=1))
        return v.norm(dim=-1)


def margin_loss(lengths: Tensor[tuple[B, L[3]], float32], y: Tensor[tuple[B], st.int64]) -> Tensor[tuple[()], float32]:
    t = F.one_hot(y, C).float()
    loss = t * F.relu(0.9 - lengths) ** 2 + 0.5 * (1 - t) * F.relu(lengths - 0.1) ** 2
    return loss.sum(dim=1).mean()


def main() -> None:
    lengths = Capsules()(st.randn(6, 1, 8, 8))
    margin_loss(lengths, st.randint(0, C, (6,))).backward()


if __name__ == "__main__":
    main()
