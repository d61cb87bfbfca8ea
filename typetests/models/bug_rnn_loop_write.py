"""An unrolled recurrent loop that writes the hidden state into a column of the wrong width."""
from __future__ import annotations

from typing import Literal as L

import shapetorch as st
from shapetorch import Tensor, float32, nn


class Unrolled(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.cell = nn.Linear(8 + 16, 16)

    def forward(self, x: Tensor[tuple[L[4], L[5], L[8]], float32]) -> Tensor[tuple[L[4], L[5], L[8]], float32]:
        out = st.zeros(4, 5, 8)
        h = st.zeros(4, 16)
        for t in range(x.shape[1]):
            h = self.cell(st.cat([x[:, t], h], dim=-1)).tanh()
            out[:, t] = h  # BUG: h has 16 features, the output slots 8
        return out


def main() -> None:
    Unrolled()(st.randn(4, 5, 8))


if __name__ == "__main__":
    main()
