"""MoE top-k routing: the top-k gates scattered into a dense (tokens, experts) matrix, expert loads counted with scatter_add."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32, nn

N = TypeVar("N")
EXPERTS: Final = 8
TOP: Final = 2
D: Final = 32


class Router(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gate = nn.Linear(D, EXPERTS, bias=False)
        self.experts = nn.ModuleList([nn.Linear(D, D) for _ in range(EXPERTS)])

    def forward(self, x: Tensor[tuple[N, L[32]], float32]) -> tuple[Tensor[tuple[N, L[32]], float32], Tensor[tuple[L[8]], float32]]:
        logits = self.gate(x)
        vals, idx = st.topk(logits, TOP, dim=-1)
        gates = st.zeros_like(logits).scatter(1, idx, vals.softmax(dim=-1))
        load = st.zeros(EXPERTS).scatter_add(0, idx.flatten(), st.ones(idx.numel()))
        expert_out = st.stack([e(x) for e in self.experts], dim=1)
        mixed = st.einsum("ne,ned->nd", gates, expert_out)
        return mixed, load / load.sum()


def main() -> None:
    Router()(st.randn(10, 32))


if __name__ == "__main__":
    main()
