"""``shapetorch.fft``: the discrete Fourier transforms, as ``torch.fft``.

``shapetorch.fft.fft(x, n=None, dim=-1, norm=None)`` and its inverse, and the real-signal pair
``rfft``/``irfft``; every one differentiates. The op table names them ``fft_fft``, ... (as ATen does).
"""

from __future__ import annotations

from .ops.fft import fft_fft as fft
from .ops.fft import fft_ifft as ifft
from .ops.fft import fft_irfft as irfft
from .ops.fft import fft_rfft as rfft

__all__ = ["fft", "ifft", "irfft", "rfft"]
