"""An MLP whose second layer expects the wrong hidden size."""
from __future__ import annotations

from typing import Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn

B = TypeVar("B")


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x: Tensor[tuple[B, L[784]], float32]) -> Tensor[tuple[B, L[10]], float32]:
        return self.fc2(F.relu(self.fc1(x)))  # BUG: fc2 takes 128 features, fc1 gives 256


def main() -> None:
    MLP()(st.randn(32, 784))


if __name__ == "__main__":
    main()
