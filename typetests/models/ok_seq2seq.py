"""A GRU seq2seq: a 2-layer bidirectional encoder whose final states are merged per layer for the decoder, teacher forcing."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32, int64, nn

B = TypeVar("B")
VOCAB: Final = 50
EMB: Final = 16
HIDDEN: Final = 32
LAYERS: Final = 2


class Seq2Seq(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMB)
        self.encoder = nn.GRU(EMB, HIDDEN, num_layers=LAYERS, batch_first=True, bidirectional=True)
        self.bridge = nn.Linear(2 * HIDDEN, HIDDEN)
        self.decoder = nn.GRU(EMB, HIDDEN, num_layers=LAYERS, batch_first=True)
        self.out = nn.Linear(HIDDEN, VOCAB)

    def forward(self, src: Tensor[tuple[B, L[10]], int64], tgt: Tensor[tuple[B, L[7]], int64]) -> Tensor[tuple[B, L[7], L[50]], float32]:
        enc, h = self.encoder(self.embed(src))
        b = src.shape[0]
        h = h.view(LAYERS, 2, b, HIDDEN).permute(0, 2, 1, 3).reshape(LAYERS, b, 2 * HIDDEN)
        h0 = st.tanh(self.bridge(h)).contiguous()
        dec, _ = self.decoder(self.embed(tgt), h0)
        context = enc.mean(dim=1, keepdim=True)[..., :HIDDEN]
        return self.out(dec + context)


def main() -> None:
    Seq2Seq()(st.randint(0, VOCAB, (3, 10)), st.randint(0, VOCAB, (3, 7)))


if __name__ == "__main__":
    main()
