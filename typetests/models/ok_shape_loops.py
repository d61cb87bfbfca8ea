"""Sizes read from .shape and loops over range(x.shape[0]) writing slices."""
from __future__ import annotations

from typing import Literal as L

import shapetorch as st
from shapetorch import Tensor, float32, nn


class Unrolled(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.cell = nn.Linear(8 + 16, 16)

    def forward(self, x: Tensor[tuple[L[4], L[5], L[8]], float32]) -> Tensor[tuple[L[4], L[5], L[16]], float32]:
        batch, steps, _ = x.shape
        out = st.zeros(batch, steps, 16)
        h = st.zeros(batch, 16)
        for t in range(x.shape[1]):
            h = self.cell(st.cat([x[:, t], h], dim=-1)).tanh()
            out[:, t] = h
        for i in range(x.shape[0]):
            out[i] = out[i] * 0.5
        return out


def main() -> None:
    Unrolled()(st.randn(4, 5, 8))


if __name__ == "__main__":
    main()
