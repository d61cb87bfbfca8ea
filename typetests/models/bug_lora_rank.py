"""A LoRA adapter on a frozen projection; the up-projection Parameter is stored transposed."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32, nn

B = TypeVar("B")
T = TypeVar("T")
D_IN: Final = 64
D_OUT: Final = 48
RANK: Final = 4
ALPHA: Final = 8


class LoRALinear(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.base = nn.Linear(D_IN, D_OUT)
        self.lora_a = nn.Parameter(st.randn(RANK, D_IN) * 0.01)
        self.lora_b = nn.Parameter(st.zeros(RANK, D_OUT))
        self.scale = ALPHA / RANK

    def forward(self, x: Tensor[tuple[B, T, L[64]], float32]) -> Tensor[tuple[B, T, L[48]], float32]:
        delta = (x @ self.lora_a.T) @ self.lora_b.T  # BUG: lora_b must be (D_OUT, RANK), as Linear weights are
        return self.base(x) + delta * self.scale


def main() -> None:
    LoRALinear()(st.randn(2, 5, 64))


if __name__ == "__main__":
    main()
