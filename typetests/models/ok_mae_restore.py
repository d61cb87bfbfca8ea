"""MAE: keep a random quarter of the patches, encode them, append mask tokens and unshuffle with the inverse permutation."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32, nn

B = TypeVar("B")
N: Final = 64
D: Final = 32
KEEP: Final = N // 4


class MaskedAutoencoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Linear(D, D)
        self.mask_token = nn.Parameter(st.zeros(1, 1, D))
        self.decoder = nn.Linear(D, D)

    def forward(self, x: Tensor[tuple[B, L[64], L[32]], float32]) -> tuple[Tensor[tuple[B, L[64], L[32]], float32], Tensor[tuple[B, L[64]], float32]]:
        b = x.shape[0]
        ids_shuffle = st.argsort(st.rand(b, N), dim=1)
        ids_restore = st.argsort(ids_shuffle, dim=1)
        ids_keep = ids_shuffle[:, :KEEP]
        kept = st.gather(x, 1, ids_keep.unsqueeze(-1).expand(-1, -1, D))
        latent = self.encoder(kept)
        tokens = st.cat([latent, self.mask_token.expand(b, N - KEEP, -1)], dim=1)
        tokens = st.gather(tokens, 1, ids_restore[..., None].repeat(1, 1, D))
        mask = st.ones(b, N)
        mask[:, :KEEP] = 0
        return self.decoder(tokens), st.gather(mask, 1, ids_restore)


def main() -> None:
    MaskedAutoencoder()(st.randn(2, 64, 32))


if __name__ == "__main__":
    main()
