"""Mixture-of-experts gating whose router has one expert too many."""
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
        self.router = nn.Linear(D, EXPERTS + 1)
        self.experts = nn.Linear(D, EXPERTS * D)

    def forward(self, x: Tensor[tuple[B, L[16]], float32]) -> Tensor[tuple[B, L[16]], float32]:
        gates = self.router(x).softmax(dim=-1)
        outs = self.experts(x).reshape(-1, EXPERTS, D)
        return (gates.unsqueeze(-1) * outs).sum(dim=1)  # BUG: 5 gates against 4 experts


def main() -> None:
    MoE()(st.randn(8, 16))


if __name__ == "__main__":
    main()
