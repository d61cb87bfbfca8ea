"""The MLP of the docs: a result passed straight into the next layer."""
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
        self.fc2 = nn.Linear(256, 10)
        self.drop = nn.Dropout(0.1)

    def forward(self, x: Tensor[tuple[B, L[784]], float32]) -> Tensor[tuple[B, L[10]], float32]:
        return self.fc2(self.drop(F.relu(self.fc1(x))))


def main() -> None:
    model = MLP()
    logits = model(st.randn(32, 784))
    loss = F.cross_entropy(logits, st.randint(0, 10, (32,)))
    loss.backward()


if __name__ == "__main__":
    main()
