"""A VAE whose standard Normal prior is built like the input instead of like the latent."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn
from shapetorch.distributions import Normal, kl_divergence

B = TypeVar("B")
D_IN: Final = 48
HIDDEN: Final = 32
LATENT: Final = 6


class VAE(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.enc = nn.Linear(D_IN, HIDDEN)
        self.mu = nn.Linear(HIDDEN, LATENT)
        self.logvar = nn.Linear(HIDDEN, LATENT)
        self.dec = nn.Sequential(nn.Linear(LATENT, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, D_IN))

    def forward(self, x: Tensor[tuple[B, L[48]], float32]) -> Tensor[tuple[B, L[48]], float32]:
        h = F.relu(self.enc(x))
        mu = self.mu(h)
        std = (0.5 * self.logvar(h)).exp()
        eps = st.randn_like(std)
        z = mu + eps * std
        posterior = Normal(mu, std)
        prior = Normal(st.zeros_like(x), st.ones_like(x))
        kl = kl_divergence(posterior, prior).sum(-1).mean()  # BUG: the prior is (B, D_IN), the posterior (B, LATENT)
        recon = self.dec(z)
        _ = F.mse_loss(recon, x) + kl
        return recon


def main() -> None:
    VAE()(st.randn(5, D_IN))


if __name__ == "__main__":
    main()
