"""A Mamba-style selective scan: softplus step sizes, a parallel scan by cumsum and einsum, and the loop form."""
from __future__ import annotations

import math
from typing import Final, Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn

B = TypeVar("B")
T = TypeVar("T", bound=int)
D: Final = 8
N: Final = 4


class SelectiveSSM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.in_proj = nn.Linear(D, 2 * D)
        self.dt_proj = nn.Linear(D, D)
        self.B_proj = nn.Linear(D, N, bias=False)
        self.C_proj = nn.Linear(D, N, bias=False)
        self.A_log = nn.Parameter(st.log(st.arange(1, N + 1, dtype=st.float32).repeat(D, 1)))
        self.D = nn.Parameter(st.ones(D))
        self.out_proj = nn.Linear(D, D)

    def scan(self, u: Tensor[tuple[B, T, L[8]], float32], delta: Tensor[tuple[B, T, L[8]], float32],
             A: Tensor[tuple[L[8], L[4]], float32], Bm: Tensor[tuple[B, T, L[4]], float32],
             C: Tensor[tuple[B, T, L[4]], float32]) -> Tensor[tuple[B, T, L[8]], float32]:
        cum = st.cumsum(st.einsum("bld,dn->bldn", delta, A), dim=1)
        dBu = st.einsum("bld,bln,bld->bldn", delta, Bm, u)
        steps = u.shape[1]
        diff = cum.unsqueeze(2) - cum.unsqueeze(1)
        mask = st.tril(st.ones(steps, steps, dtype=st.bool)).view(1, steps, steps, 1, 1)
        weights = st.where(mask, diff, st.full_like(diff, -math.inf)).exp()
        h = st.einsum("btsdn,bsdn->btdn", weights, dBu)
        return st.einsum("btdn,btn->btd", h, C)

    def scan_loop(self, u: Tensor[tuple[B, T, L[8]], float32], delta: Tensor[tuple[B, T, L[8]], float32],
                  A: Tensor[tuple[L[8], L[4]], float32], Bm: Tensor[tuple[B, T, L[4]], float32],
                  C: Tensor[tuple[B, T, L[4]], float32]) -> Tensor[tuple[B, T, L[8]], float32]:
        h = st.zeros(u.shape[0], D, N)
        ys = []
        for t in range(u.shape[1]):
            dA = st.exp(delta[:, t].unsqueeze(-1) * A)
            h = dA * h + delta[:, t].unsqueeze(-1) * Bm[:, t].unsqueeze(1) * u[:, t].unsqueeze(-1)
            ys.append((h @ C[:, t].unsqueeze(-1)).squeeze(-1))
        return st.stack(ys, dim=1)

    def forward(self, x: Tensor[tuple[B, T, L[8]], float32]) -> Tensor[tuple[B, T, L[8]], float32]:
        u, z = self.in_proj(x).chunk(2, dim=-1)
        u = F.silu(u)
        delta = F.softplus(self.dt_proj(u))
        A = -st.exp(self.A_log)
        y = self.scan(u, delta, A, self.B_proj(u), self.C_proj(u)) + u * self.D
        return self.out_proj(y * F.silu(z))


def main() -> None:
    model = SelectiveSSM()
    x = st.randn(2, 5, 8)
    model(x)
    u = st.randn(2, 5, 8)
    model.scan_loop(u, F.softplus(u), -st.exp(model.A_log), st.randn(2, 5, 4), st.randn(2, 5, 4))
    decays = st.sigmoid(st.randn(6))
    st.cumprod(decays, 0) - decays.log().cumsum(0).exp()


if __name__ == "__main__":
    main()
