"""Graph message passing whose update layer ignores the concatenated messages."""
from __future__ import annotations

from typing import Literal as L

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn

Nodes = L[12]


class GraphLayer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.message = nn.Linear(16, 16)
        self.update = nn.Linear(16, 16)

    def forward(self, h: Tensor[tuple[Nodes, L[16]], float32],
                adj: Tensor[tuple[Nodes, Nodes], float32]) -> Tensor[tuple[Nodes, L[16]], float32]:
        m = adj @ self.message(h)
        both = st.cat([h, m], dim=-1)
        return F.relu(self.update(both))  # BUG: update sees 32 features, built for 16


def main() -> None:
    GraphLayer()(st.randn(12, 16), st.ones(12, 12))


if __name__ == "__main__":
    main()
