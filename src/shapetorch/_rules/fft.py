"""FFT shapes: the signal size along ``dim`` (``n``, one-sided halves), ``norm``, and stft's frames."""

from __future__ import annotations

from .axes import wrap_dim
from .dims import UNKNOWN, Dim, Shape, differ
from .errors import RuleError, invalid_argument

NORMS = (None, "backward", "forward", "ortho")


def fft_shape(shape: Shape, n: int | None, dim: int, kind: str = "c2c", op: str = "fft") -> tuple[int, Dim, Shape]:
    """(dim, signal length, output shape): c2c keeps n; r2c (rfft) gives n//2+1; c2r (irfft) gives
    n, by default 2*(size-1)."""
    if not shape:
        raise RuleError("dimension_error_zero_dim", op=op)
    d = wrap_dim(dim, len(shape), op)
    size = shape[d]
    length: Dim
    if n is not None:
        length = n
    elif kind == "c2r":
        length = 2 * (size - 1) if isinstance(size, int) else UNKNOWN
    else:
        length = size
    if isinstance(length, int) and length < 1:
        raise invalid_argument(op, f"invalid number of data points ({length}) specified")
    out: Dim = length
    if kind == "r2c":
        out = length // 2 + 1 if isinstance(length, int) else UNKNOWN
    return d, length, tuple(shape[:d]) + (out,) + tuple(shape[d + 1 :])


def check_norm(norm: str | None, op: str = "fft") -> str:
    if norm not in NORMS:
        raise invalid_argument(op, f'invalid normalization mode: "{norm}"')
    return norm or "backward"


def stft_shape(shape: Shape, n_fft: int, hop: int, win_length: int, window: Shape | None, center: bool,
               onesided: bool, op: str = "stft") -> Shape:
    """(B?, L) -> (B?, n_fft//2+1 (onesided) or n_fft, 1 + (L' - n_fft)//hop), L' = L + 2*(n_fft//2) if center."""
    if len(shape) not in (1, 2):
        raise invalid_argument(op, f"expected a 1D or 2D tensor, got shape {tuple(shape)}")
    length = shape[-1]
    if center and isinstance(length, int):
        length += 2 * (n_fft // 2)
    if n_fft <= 0 or (isinstance(length, int) and n_fft > length):
        raise invalid_argument(op, f"expected 0 < n_fft <= {length!r}, but got n_fft={n_fft}")
    if hop <= 0:
        raise invalid_argument(op, f"expected hop_length > 0, but got hop_length={hop}")
    if win_length <= 0 or win_length > n_fft:
        raise invalid_argument(op, f"expected 0 < win_length <= n_fft, but got win_length={win_length}")
    if window is not None and (len(window) != 1 or differ(window[0], win_length)):
        raise invalid_argument(op, f"expected a 1D window tensor of size equal to win_length={win_length}, but got window "
                       f"with size {tuple(window)}")
    frames: Dim = 1 + (length - n_fft) // hop if isinstance(length, int) else UNKNOWN
    freq = n_fft // 2 + 1 if onesided else n_fft
    return tuple(shape[:-1]) + (freq, frames)
