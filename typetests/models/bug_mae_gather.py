"""MAE random masking: shuffle patches by argsort of noise, keep the first quarter; the gather index is not expanded."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32

B = TypeVar("B")
N: Final = 64
D: Final = 32
KEEP: Final = N // 4


def random_masking(x: Tensor[tuple[B, L[64], L[32]], float32]) -> Tensor[tuple[B, L[16], L[32]], float32]:
    b = x.shape[0]
    noise = st.rand(b, N)
    ids_shuffle = st.argsort(noise, dim=1)
    ids_restore = st.argsort(ids_shuffle, dim=1)
    ids_keep = ids_shuffle[:, :KEEP]
    kept = st.gather(x, 1, ids_keep)  # BUG: the index needs the feature dim: ids_keep.unsqueeze(-1).expand(-1, -1, D)
    mask = st.ones(b, N)
    mask[:, :KEEP] = 0
    mask = st.gather(mask, 1, ids_restore)
    return kept * (1 - mask[:, :KEEP, None])


def main() -> None:
    random_masking(st.randn(2, 64, 32))


if __name__ == "__main__":
    main()
