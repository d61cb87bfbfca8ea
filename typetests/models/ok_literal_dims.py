"""A convolutional GRU tagger written with literal dims throughout: transposes between channels first and last,
size-keeping convolutions, a GLU, a bidirectional GRU whose final states are folded, reductions and a max along a
dim, a gather of the best score, slices and squeezes."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, int64, nn

B = TypeVar("B")
VOCAB: Final = 50
EMB: Final = 16
HIDDEN: Final = 24
TAGS: Final = 5


class Tagger(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMB)
        self.conv = nn.Conv1d(EMB, EMB, 5, padding=2)
        self.mix = nn.Conv1d(EMB, 2 * EMB, 1)
        self.rnn = nn.GRU(EMB, HIDDEN, batch_first=True, bidirectional=True)
        self.keys = nn.Parameter(st.randn(3, HIDDEN))
        self.head = nn.Linear(HIDDEN, TAGS)

    def forward(self, tokens: Tensor[tuple[B, L[20]], int64]) -> Tensor[tuple[B, L[20], L[5]], float32]:
        x = self.embed(tokens).transpose(1, 2)  # channels first for the convolutions
        x = F.relu(self.conv(x)) + x
        x = F.glu(self.mix(x), dim=1).transpose(-1, -2)  # channels last again
        out, h = self.rnn(x)
        state = h.permute(1, 0, 2).sum(dim=1)  # both directions' final states
        scores = state @ self.keys.T
        best = scores.max(dim=-1, keepdim=True).indices
        picked = st.gather(scores, 1, best).squeeze(1)
        context = scores.softmax(dim=-1) @ self.keys
        fused = out[:, :, :HIDDEN] + out[:, :, HIDDEN:] + context.unsqueeze(1)
        tags = self.head(fused * st.sigmoid(state).unsqueeze(1))
        centered = tags - tags.mean(dim=1, keepdim=True)
        return centered + picked.unsqueeze(-1).unsqueeze(-1)


def main() -> None:
    Tagger()(st.randint(0, VOCAB, (3, 20)))


if __name__ == "__main__":
    main()
