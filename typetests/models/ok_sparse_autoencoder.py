"""A TopK sparse autoencoder: pre-encoder bias, topk then scatter into zeros, decoder rows kept at unit norm."""
from __future__ import annotations

from typing import Literal as L
from typing import TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn

B = TypeVar("B")
D = L[16]
Feat = L[64]


class SAE(nn.Module):
    def __init__(self, k: int) -> None:
        super().__init__()
        self.k = k
        self.W_enc = nn.Parameter(st.randn(16, 64) * 0.1)
        self.W_dec = nn.Parameter(F.normalize(st.randn(64, 16), dim=1))
        self.b_enc = nn.Parameter(st.zeros(64))
        self.b_dec = nn.Parameter(st.zeros(16))

    def encode(self, x: Tensor[tuple[B, D], float32]) -> Tensor[tuple[B, Feat], float32]:
        pre = (x - self.b_dec) @ self.W_enc + self.b_enc
        top = st.topk(pre, self.k, dim=-1)
        return st.zeros_like(pre).scatter(-1, top.indices, F.relu(top.values))

    def forward(self, x: Tensor[tuple[B, D], float32]) -> tuple[Tensor[tuple[B, D], float32], Tensor[tuple[B, Feat], float32]]:
        z = self.encode(x)
        return z @ self.W_dec + self.b_dec, z


def main() -> None:
    sae = SAE(k=4)
    x: Tensor[tuple[L[32], D], float32] = st.randn(32, 16)
    recon, z = sae(x)
    loss = (recon - x).pow(2).sum(-1).mean()
    loss.backward()
    with st.no_grad():
        sae.W_dec.data = F.normalize(sae.W_dec.data, dim=1)
    l0 = (z > 0).float().sum(-1).mean()
    assert l0.item() <= 4


if __name__ == "__main__":
    main()
