"""Audio framing with a frame count that does not divide the waveform."""
from __future__ import annotations

from typing import Literal as L

import shapetorch as st
from shapetorch import Dim, Tensor, float32


class Batch(Dim): ...


def frames(wav: Tensor[tuple[Batch, L[16000]], float32]) -> Tensor[tuple[Batch, L[100], L[160]], float32]:
    b = wav.shape[0]
    return wav.reshape(b, 101, 160)  # BUG: 101 * 160 != 16000


def main() -> None:
    frames(st.randn(3, 16000))


if __name__ == "__main__":
    main()
