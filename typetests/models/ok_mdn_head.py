"""A mixture density network head: mixture weights, means and scales per component, the negative log-likelihood."""
from __future__ import annotations

import math
from typing import Final, Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn

B = TypeVar("B")
FEATURES: Final = 10
K: Final = 5
OUT: Final = 2


class MDN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(FEATURES, 32), nn.Tanh())
        self.pi = nn.Linear(32, K)
        self.mu = nn.Linear(32, K * OUT)
        self.sigma = nn.Linear(32, K * OUT)

    def forward(self, x: Tensor[tuple[B, L[10]], float32], y: Tensor[tuple[B, L[2]], float32]) -> Tensor[tuple[()], float32]:
        h = self.body(x)
        log_pi = F.log_softmax(self.pi(h), dim=-1)
        b = x.shape[0]
        mu = self.mu(h).view(b, K, OUT)
        sigma = F.softplus(self.sigma(h)).view(b, K, OUT) + 1e-3
        z = (y.unsqueeze(1) - mu) / sigma
        log_n = (-0.5 * z ** 2 - sigma.log() - 0.5 * math.log(2 * math.pi)).sum(dim=-1)
        return -st.logsumexp(log_pi + log_n, dim=-1).mean()


def main() -> None:
    MDN()(st.randn(6, FEATURES), st.randn(6, OUT))


if __name__ == "__main__":
    main()
