"""Deep Sets over flat point sets: per-set sum with index_add_, counts with scatter_add_, max with scatter_reduce."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32, int64, nn

N = TypeVar("N")
H: Final = 32


class DeepSet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.phi = nn.Sequential(nn.Linear(2, H), nn.ReLU(), nn.Linear(H, H))
        self.rho = nn.Sequential(nn.Linear(3 * H, H), nn.ReLU(), nn.Linear(H, 2))

    def forward(self, x: Tensor[tuple[N, L[2]], float32], set_idx: Tensor[tuple[N], int64],
                n_sets: int) -> Tensor[tuple[int, L[2]], float32]:
        h = self.phi(x)
        summed = st.zeros(n_sets, H).index_add_(0, set_idx, h)
        counts = st.zeros(n_sets).scatter_add_(0, set_idx, st.ones_like(set_idx, dtype=st.float32))
        mean = summed / counts.unsqueeze(1)
        index = set_idx.unsqueeze(1).expand_as(h)
        maxed = st.full((n_sets, H), float("-inf")).scatter_reduce(0, index, h, reduce="amax")
        return self.rho(st.cat([summed, mean, maxed], dim=1))


def main() -> None:
    sizes = st.tensor([3, 2, 4])
    set_idx = st.repeat_interleave(st.arange(3), sizes)
    DeepSet()(st.randn(9, 2), set_idx, 3)


if __name__ == "__main__":
    main()
