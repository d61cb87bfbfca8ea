"""A 1-D Fourier layer: rfft, complex weights on the lowest modes by einsum, irfft back to the grid, a 1x1 conv path."""
from __future__ import annotations

from typing import Literal as L
from typing import TypeVar

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Tensor, float32, nn

B = TypeVar("B")
Width = L[16]
Grid = L[64]


class SpectralConv1d(nn.Module):
    def __init__(self, width: int, modes: int) -> None:
        super().__init__()
        self.modes = modes
        self.weight = nn.Parameter(st.randn(width, width, modes, dtype=st.cfloat) / (width * width))

    def forward(self, x: Tensor[tuple[B, Width, Grid], float32]) -> Tensor[tuple[B, Width, Grid], float32]:
        n = x.shape[-1]
        xf = st.fft.rfft(x)
        out = st.zeros(x.shape[0], 16, n // 2 + 1, dtype=st.cfloat)
        out[:, :, : self.modes] = st.einsum("bim,iom->bom", xf[:, :, : self.modes], self.weight)
        return st.fft.irfft(out, n=n)


class FourierBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.spectral = SpectralConv1d(16, 8)
        self.pointwise = nn.Conv1d(16, 16, 1)

    def forward(self, h: Tensor[tuple[B, Width, Grid], float32]) -> Tensor[tuple[B, Width, Grid], float32]:
        return F.gelu(self.spectral(h) + self.pointwise(h))


def main() -> None:
    block = FourierBlock()
    u: Tensor[tuple[L[4], Width, Grid], float32] = st.randn(4, 16, 64)
    y = block(u)
    rel = (st.linalg.vector_norm(y - u, dim=-1) / st.linalg.vector_norm(u, dim=-1)).mean()
    rel.backward()


if __name__ == "__main__":
    main()
