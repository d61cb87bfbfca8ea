"""Window functions: bartlett, blackman, hamming, hann, kaiser (``periodic`` drops the last point of an
``N + 1`` window). Computed in float64 and rounded to the requested floating dtype."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._dtype import get_default_dtype, to_dtype
from .._errors import fail
from .._tensor import Tensor
from ..backends.numpy_backend import NP_DTYPE
from ._registry import public
from .creation import _on
from .special import i0_64


def _window(name: str, window_length: int, periodic: bool, dtype: Any, device: Any, requires_grad: bool,
            shape: Callable[[Any, int], Any]) -> Tensor:
    d = to_dtype(dtype) if dtype is not None else get_default_dtype()
    if not d.is_floating_point:
        fail("method_dtype_not_supported_error", op=name, dtype=d.name, hint=" (window functions need a floating "
             "point dtype)")
    if not isinstance(window_length, (int, np.integer)) or isinstance(window_length, bool):
        raise TypeError(f"{name}(): argument 'window_length' must be int, not {type(window_length).__name__}")
    if window_length < 0:
        fail("argument_error_invalid", op=name, problem=f"requires non-negative window length, got "
             f"window_length={window_length}")
    n = int(window_length)
    if n <= 1:
        arr = np.ones(n, dtype=np.float64)
    else:
        m = n + 1 if periodic else n
        arr = np.asarray(shape(np.arange(m, dtype=np.float64), m), dtype=np.float64)[:n]
    return _on(arr.astype(NP_DTYPE[d]), device, requires_grad)


def _cosine_sum(*coeffs: float) -> Callable[[Any, int], Any]:
    def shape(k: Any, m: int) -> Any:
        return sum((-1) ** j * c * np.cos(2 * math.pi * j * k / (m - 1)) for j, c in enumerate(coeffs))

    return shape


@public("windows", method=False)
def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None, layout: Any = None,
                device: Any = None, requires_grad: bool = False) -> Tensor:
    """``0.5 - 0.5 cos(2 pi n / (N - 1))``."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad, _cosine_sum(0.5, 0.5))


@public("windows", method=False)
def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype: Any = None, layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """``alpha - beta cos(2 pi n / (N - 1))``."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad, _cosine_sum(alpha, beta))


@public("windows", method=False)
def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None, layout: Any = None,
                    device: Any = None, requires_grad: bool = False) -> Tensor:
    """``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(0.42, 0.5, 0.08))


@public("windows", method=False)
def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None, layout: Any = None,
                    device: Any = None, requires_grad: bool = False) -> Tensor:
    """The triangle ``1 - |2 n / (N - 1) - 1|``."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, m: 1 - np.abs(2 * k / (m - 1) - 1))


@public("windows", method=False)
def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype: Any = None,
                  layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """``I0(beta sqrt(1 - ((n - (N-1)/2) / ((N-1)/2))^2)) / I0(beta)``."""
    def shape(k: Any, m: int) -> Any:
        half = (m - 1) / 2
        r = np.clip(1 - ((k - half) / half) ** 2, 0.0, None)
        return i0_64(beta * np.sqrt(r)) / i0_64(np.float64(beta))

    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, shape)

