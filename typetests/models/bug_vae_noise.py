"""A VAE whose reparameterization draws its noise shaped like the input instead of like the latent."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn

B = TypeVar("B")
D_IN: Final = 64
HIDDEN: Final = 32
LATENT: Final = 8


class VAE(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.enc = nn.Linear(D_IN, HIDDEN)
        self.stats = nn.Linear(HIDDEN, 2 * LATENT)
        self.dec1 = nn.Linear(LATENT, HIDDEN)
        self.dec2 = nn.Linear(HIDDEN, D_IN)

    def forward(self, x: Tensor[tuple[B, L[64]], float32]) -> Tensor[tuple[B, L[64]], float32]:
        mu, logvar = self.stats(F.relu(self.enc(x))).chunk(2, dim=-1)
        std = (0.5 * logvar).exp()
        eps = st.randn_like(x)
        z = mu + eps * std  # BUG: eps must be drawn like std (B, LATENT), not like x (B, D_IN)
        return st.sigmoid(self.dec2(F.relu(self.dec1(z))))


def main() -> None:
    VAE()(st.randn(4, 64))


if __name__ == "__main__":
    main()
