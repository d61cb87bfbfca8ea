"""A GRU seq2seq: the bidirectional encoder's final state handed to a one-direction decoder as it is."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32, int64, nn

B = TypeVar("B")
VOCAB: Final = 100
EMB: Final = 32
HIDDEN: Final = 64


class Seq2Seq(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMB)
        self.encoder = nn.GRU(EMB, HIDDEN, batch_first=True, bidirectional=True)
        self.decoder = nn.GRU(EMB, HIDDEN, batch_first=True)
        self.out = nn.Linear(HIDDEN, VOCAB)

    def forward(self, src: Tensor[tuple[B, L[12]], int64], tgt: Tensor[tuple[B, L[9]], int64]) -> Tensor[tuple[B, L[9], L[100]], float32]:
        _, h = self.encoder(self.embed(src))
        dec, _ = self.decoder(self.embed(tgt), h)  # BUG: h is (2, B, HIDDEN), one per direction; the decoder takes (1, B, HIDDEN)
        return self.out(dec)


def main() -> None:
    Seq2Seq()(st.randint(0, VOCAB, (4, 12)), st.randint(0, VOCAB, (4, 9)))


if __name__ == "__main__":
    main()
