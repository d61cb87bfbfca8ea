"""An LSTM language model with weight tying: the decoder shares the embedding table, F.linear projects."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, int64, nn

B = TypeVar("B")
VOCAB: Final = 60
DIM: Final = 24
LAYERS: Final = 2


class LSTMLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.lstm = nn.LSTM(DIM, DIM, num_layers=LAYERS, batch_first=True, dropout=0.1)
        self.drop = nn.Dropout(0.1)
        self.decoder = nn.Linear(DIM, VOCAB)
        self.decoder.weight = self.embed.weight

    def forward(self, tokens: Tensor[tuple[B, L[8]], int64]) -> Tensor[tuple[B, L[8], L[60]], float32]:
        b = tokens.shape[0]
        h0 = st.zeros(LAYERS, b, DIM)
        c0 = st.zeros(LAYERS, b, DIM)
        out, (h, c) = self.lstm(self.drop(self.embed(tokens)), (h0, c0))
        logits = F.linear(self.drop(out), self.embed.weight, self.decoder.bias)
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
        _ = loss + h.sum() + c.sum()
        return logits


def main() -> None:
    LSTMLM()(st.randint(0, VOCAB, (3, 8)))


if __name__ == "__main__":
    main()
