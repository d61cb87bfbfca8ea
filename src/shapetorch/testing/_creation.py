"""``testing.make_tensor``: a random tensor of a shape, dtype and device with values in ``[low, high)``."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

from .._dtype import bool_, finfo, iinfo, int64, to_dtype
from .._tensor import Tensor
from ..ops.creation import empty
from ..ops.random import randint

__all__ = ["make_tensor"]


def _low_high(low: float | None, high: float | None, dtype: Any, lowest: float, highest: float,
              default_low: float, default_high: float, exact: bool) -> tuple[float, float]:
    """``low``/``high`` (defaults when None) checked and clamped into ``[lowest, highest)`` as torch does; rounded
    up to integers for bool and integer dtypes."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and not exact:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types is "
                      "deprecated since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.",
                      FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), but {dtype} only "
                         f"supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    return (math.ceil(low), math.ceil(high)) if exact else (low, high)


def _uniform(shape: tuple[int, ...], dtype: Any, device: Any, low: float, high: float) -> Tensor:
    t = empty(shape, dtype=dtype, device=device)
    if high - low >= finfo(dtype).max:  # uniform_ needs high - low to be finite: draw half the range, double it
        return t.uniform_(low / 2, high / 2).mul_(2)  # type: ignore[no-any-return]
    return t.uniform_(low, high)  # type: ignore[no-any-return]


def make_tensor(*shape: Any, dtype: Any, device: Any, low: float | None = None, high: float | None = None,
                requires_grad: bool = False, noncontiguous: bool = False, exclude_zero: bool = False,
                memory_format: Any = None) -> Tensor:
    """A tensor of ``shape`` with values drawn uniformly from ``[low, high)``, torch's defaults by dtype
    (bool [0, 2), unsigned [0, 10), signed integers [-9, 10), floating and complex [-9, 9)). ``noncontiguous``
    gives every other element of a twice-as-wide tensor; ``exclude_zero`` replaces zeros by 1 (bool, integers)
    or the dtype's ``tiny``. The values come from shapetorch's random stream, not torch's."""
    dtype = to_dtype(dtype)
    if len(shape) == 1 and isinstance(shape[0], Sequence):
        shape = tuple(shape[0])
    dims = tuple(int(s) for s in shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
                         f"noncontiguous={noncontiguous} and memory_format={memory_format}")
    exact = dtype is bool_ or not (dtype.is_floating_point or dtype.is_complex)
    if requires_grad and exact:
        raise ValueError("`requires_grad=True` is not supported for boolean and integral dtypes, but got "
                         f"dtype={dtype}")
    noncontiguous = noncontiguous and math.prod(dims) > 1
    if noncontiguous:
        dims = (*dims[:-1], 2 * dims[-1])
    if dtype is bool_:
        lo, hi = _low_high(low, high, dtype, 0, 2, 0, 2, True)
        result = randint(int(lo), int(hi), dims, device=device, dtype=dtype)
    elif exact:
        info = iinfo(dtype)
        # int64's top value is excluded: randint's bound must itself be an int64
        highest = info.max + (1 if dtype is not int64 else 0)
        default_low = 0 if info.min == 0 else -9
        lo, hi = _low_high(low, high, dtype, info.min, highest, default_low, 10, True)
        result = randint(int(lo), int(hi), dims, device=device, dtype=dtype)
    else:
        fi = finfo(dtype)
        lo, hi = _low_high(low, high, dtype, fi.min, fi.max, -9, 9, False)
        if dtype.is_complex:
            real = to_dtype(str(fi.dtype))  # real and imaginary parts each drawn from [low, high)
            parts = [_uniform(dims, real, device, lo, hi) for _ in range(2)]
            result = (parts[0] + parts[1] * 1j).to(dtype)
        else:
            result = _uniform(dims, dtype, device, lo, hi)
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.contiguous(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if exact else finfo(dtype).tiny
    if not exact:
        result.requires_grad = requires_grad
    return result
