"""A CTC head on conv features that forgets to move channels last before the classifier."""
from __future__ import annotations

from typing import Final, Literal as L

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Dim, Tensor, float32, nn


class Batch(Dim): ...


FEATS: Final = 40
HIDDEN: Final = 64
VOCAB: Final = 29


class CTCHead(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv1d(FEATS, HIDDEN, 3, stride=2, padding=1)
        self.classifier = nn.Linear(HIDDEN, VOCAB + 1)

    def forward(self, mel: Tensor[tuple[Batch, L[40], L[200]], float32]) -> Tensor[tuple[L[100], Batch, L[30]], float32]:
        feats = F.gelu(self.conv(mel))
        logits = self.classifier(feats)  # BUG: feats is (Batch, HIDDEN, T): transpose(1, 2) first
        return F.log_softmax(logits, dim=-1).transpose(0, 1)


def main() -> None:
    CTCHead()(st.randn(3, 40, 200))


if __name__ == "__main__":
    main()
