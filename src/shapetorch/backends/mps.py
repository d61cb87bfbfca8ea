"""``torch.backends.mps``: Apple's Metal backend is not built into shapetorch (WebGPU is its GPU backend)."""

from __future__ import annotations


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
