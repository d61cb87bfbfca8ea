"""Graph message passing over an edge list: index_select, index_add, a concatenated update."""
from __future__ import annotations

from typing import Literal as L

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, int64, nn

Nodes = L[12]
Edges = L[30]


class GraphLayer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.message = nn.Linear(16, 16)
        self.update = nn.Linear(2 * 16, 16)

    def forward(self, h: Tensor[tuple[Nodes, L[16]], float32], src: Tensor[tuple[Edges], int64],
                dst: Tensor[tuple[Edges], int64]) -> Tensor[tuple[Nodes, L[16]], float32]:
        msgs = self.message(h.index_select(0, src))
        agg = st.zeros_like(h).index_add(0, dst, msgs)
        return F.relu(self.update(st.cat([h, agg], dim=-1)))


def main() -> None:
    GraphLayer()(st.randn(12, 16), st.randint(0, 12, (30,)), st.randint(0, 12, (30,)))


if __name__ == "__main__":
    main()
