"""Top-k mixture-of-experts routing with gather and keepdim normalisation."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32, nn

B = TypeVar("B")
EXPERTS: Final = 4
D: Final = 16


class MoE(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.router = nn.Linear(D, EXPERTS)
        self.experts = nn.Linear(D, EXPERTS * D)

    def forward(self, x: Tensor[tuple[B, L[16]], float32]) -> Tensor[tuple[B, L[16]], float32]:
        logits = self.router(x)
        top = logits.topk(2, dim=-1)
        weights = top.values.softmax(dim=-1)
        outs = self.experts(x).reshape(-1, EXPERTS, D)
        idx = top.indices.unsqueeze(-1).expand(-1, -1, D)
        chosen = outs.gather(1, idx)
        mixed = (weights.unsqueeze(-1) * chosen).sum(dim=1)
        return mixed / mixed.norm(dim=-1, keepdim=True)


def main() -> None:
    MoE()(st.randn(8, 16))


if __name__ == "__main__":
    main()
