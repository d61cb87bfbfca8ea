"""Transformer-XL's relative shift: pad one zero column, reinterpret the buffer with view, drop the first row."""
from __future__ import annotations

from typing import Final, Literal as L, TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32

B = TypeVar("B", bound=int)
HEADS: Final = 4
Q: Final = 6
K: Final = 6


def rel_shift(x: Tensor[tuple[B, L[4], L[6], L[6]], float32]) -> Tensor[tuple[B, L[4], L[6], L[6]], float32]:
    b = x.shape[0]
    padded = F.pad(x, (1, 0))
    padded = padded.view(b, HEADS, K + 1, Q)
    return padded[:, :, 1:].view_as(x)


def scores(q: Tensor[tuple[B, L[4], L[6], L[8]], float32], k: Tensor[tuple[B, L[4], L[6], L[8]], float32],
           r: Tensor[tuple[L[4], L[6], L[8]], float32]) -> Tensor[tuple[B, L[4], L[6], L[6]], float32]:
    content = q @ k.transpose(-1, -2)
    position = rel_shift(st.einsum("bhqd,hkd->bhqk", q, r))
    return (content + position) / 8 ** 0.5


def main() -> None:
    scores(st.randn(2, 4, 6, 8), st.randn(2, 4, 6, 8), st.randn(4, 6, 8))


if __name__ == "__main__":
    main()
