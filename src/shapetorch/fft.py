"""``shapetorch.fft``: the discrete Fourier transforms, as ``torch.fft``.

``shapetorch.fft.fft(x, n=None, dim=-1, norm=None)`` and its inverse, the real-signal pair ``rfft``/``irfft``, the
Hermitian pair ``hfft``/``ihfft``, their 2-D and N-D forms, and ``fftfreq``/``fftshift``; every transform
differentiates. The op table names them ``fft_fft``, ... (as ATen does).
"""

from __future__ import annotations

from .ops.fft import fft_fft as fft
from .ops.fft import fft_fft2 as fft2
from .ops.fft import fft_fftfreq as fftfreq
from .ops.fft import fft_fftn as fftn
from .ops.fft import fft_fftshift as fftshift
from .ops.fft import fft_hfft as hfft
from .ops.fft import fft_hfft2 as hfft2
from .ops.fft import fft_hfftn as hfftn
from .ops.fft import fft_ifft as ifft
from .ops.fft import fft_ifft2 as ifft2
from .ops.fft import fft_ifftn as ifftn
from .ops.fft import fft_ifftshift as ifftshift
from .ops.fft import fft_ihfft as ihfft
from .ops.fft import fft_ihfft2 as ihfft2
from .ops.fft import fft_ihfftn as ihfftn
from .ops.fft import fft_irfft as irfft
from .ops.fft import fft_irfft2 as irfft2
from .ops.fft import fft_irfftn as irfftn
from .ops.fft import fft_rfft as rfft
from .ops.fft import fft_rfft2 as rfft2
from .ops.fft import fft_rfftfreq as rfftfreq
from .ops.fft import fft_rfftn as rfftn

__all__ = [
    "fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn", "ifft", "ifft2", "ifftn", "ifftshift", "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn",
]
