"""A seq2seq GRU with additive attention whose weights are unsqueezed on the wrong side before weighting the encoder outputs."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32, int64, nn

B = TypeVar("B")
VOCAB: Final = 40
EMB: Final = 12
HIDDEN: Final = 16
SRC: Final = 9
TGT: Final = 5


class AttnSeq2Seq(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMB)
        self.encoder = nn.GRU(EMB, HIDDEN, batch_first=True)
        self.cell = nn.GRUCell(EMB + HIDDEN, HIDDEN)
        self.w_enc = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.w_dec = nn.Linear(HIDDEN, HIDDEN)
        self.v = nn.Linear(HIDDEN, 1, bias=False)
        self.out = nn.Linear(2 * HIDDEN, VOCAB)

    def forward(self, src: Tensor[tuple[B, L[9]], int64], tgt: Tensor[tuple[B, L[5]], int64]) -> Tensor[tuple[B, L[5], L[40]], float32]:
        enc, h_n = self.encoder(self.embed(src))
        h = h_n[0]
        keys = self.w_enc(enc)
        emb = self.embed(tgt)
        steps = []
        for t in range(TGT):
            energy = self.v(st.tanh(keys + self.w_dec(h).unsqueeze(1))).squeeze(-1)
            weights = energy.softmax(dim=-1)
            context = (weights.unsqueeze(1) * enc).sum(dim=1)  # BUG: (B, 1, SRC) against (B, SRC, HIDDEN): unsqueeze(-1)
            h = self.cell(st.cat([emb[:, t], context], dim=-1), h)
            steps.append(self.out(st.cat([h, context], dim=-1)))
        return st.stack(steps, dim=1)


def main() -> None:
    AttnSeq2Seq()(st.randint(0, VOCAB, (3, SRC)), st.randint(0, VOCAB, (3, TGT)))


if __name__ == "__main__":
    main()
