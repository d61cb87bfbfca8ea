"""Normalisations written by hand: keepdim reductions and size-1 broadcasting."""
from __future__ import annotations

from typing import Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32, nn

B = TypeVar("B")


class Norms(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gain = nn.Parameter(st.ones(1, 8, 1, 1))

    def forward(self, x: Tensor[tuple[B, L[8], L[5], L[5]], float32]) -> Tensor[tuple[B, L[8], L[5], L[5]], float32]:
        mean = x.mean(dim=(2, 3), keepdim=True)
        var = x.var(dim=(-2, -1), keepdim=True)
        h = (x - mean) / (var + 1e-5).sqrt()
        rms = h.pow(2).mean(dim=1, keepdim=True).sqrt()
        return self.gain * h / rms


def main() -> None:
    Norms()(st.randn(3, 8, 5, 5))


if __name__ == "__main__":
    main()
