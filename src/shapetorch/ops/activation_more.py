"""The activations torch also has in its top namespace: dropout, rrelu (and rrelu_), threshold_, and the
in-place elu_ / hardtanh_ / leaky_relu_. Written over ``ops.activation`` and ``nn.functional``'s dropout."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._errors import fail
from .._tensor import Tensor
from ._common import make_inplace, snapshot_for_inplace, write_inplace
from ._registry import public
from .activation import elu, hardtanh, leaky_relu, threshold
from .conversion import where
from .random import Generator, rand


def _floating(x: Tensor, op: str) -> None:
    if not x.dtype.is_floating_point:
        fail("method_dtype_not_supported_error", op=op, dtype=x.dtype.name, hint=" (floating point only)")


@public("activation", method=False)
def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.dropout(input, p, train)``: zero with probability ``p``, scale the rest by ``1 / (1 - p)``."""
    from ..nn.functional import dropout as f_dropout

    _floating(input, "dropout")
    out: Tensor = f_dropout(input, p, train)
    return out


@public("activation", method=False)
def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          generator: Generator | None = None) -> Tensor:
    """Leaky relu with slope ``(lower + upper) / 2``; in training a slope drawn from U(lower, upper) per element."""
    _floating(input, "rrelu")
    if not training:
        return leaky_relu(input, (lower + upper) / 2)
    slope = rand(tuple(input._data.shape), generator=generator, dtype=input.dtype, device=input.device)
    slope = slope * (upper - lower) + lower
    out: Tensor = where(input <= 0, input * slope, input)
    return out


def _floating_only(fn: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    def checked(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        _floating(input, name)
        return fn(input, *args, **kwargs)

    return checked


def _hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In place; signed integer tensors are clamped to integer bounds (as torch), bool/uint8/complex refused."""
    if input.is_complex() or input.dtype.name == "bool":
        fail("method_dtype_not_supported_error", op="hardtanh_", dtype=input.dtype.name, hint="")
    if input.dtype.name == "uint8" and (int(min_val) < 0 or int(max_val) < 0):
        fail("argument_error_invalid", op="hardtanh_", problem="cannot do hardtanh on an unsigned type with negative "
             "limits")
    if not input.dtype.is_floating_point:
        return write_inplace(input, input.clamp(int(min_val), int(max_val)), "hardtanh_")
    return write_inplace(input, hardtanh(snapshot_for_inplace(input), min_val, max_val), "hardtanh_")


def _threshold_(input: Tensor, threshold_: float, value: float) -> Tensor:
    """In place; integer tensors keep their dtype (the value is cast), bool/complex refused."""
    if input.is_complex() or input.dtype.name == "bool":
        fail("method_dtype_not_supported_error", op="threshold_", dtype=input.dtype.name, hint="")
    if not input.dtype.is_floating_point:
        kept: Tensor = where(input > threshold_, input, input * 0 + int(value))
        return write_inplace(input, kept, "threshold_")
    return write_inplace(input, threshold(snapshot_for_inplace(input), threshold_, value), "threshold_")


_hardtanh_.__name__ = "hardtanh_"
_threshold_.__name__ = "threshold_"
_INPLACE: list[Callable[..., Tensor]] = [
    make_inplace(_floating_only(rrelu, "rrelu_"), "rrelu_"), make_inplace(_floating_only(elu, "elu_"), "elu_"),
    make_inplace(_floating_only(leaky_relu, "leaky_relu_"), "leaky_relu_"), _hardtanh_, _threshold_,
]
for _fn in _INPLACE:
    public("activation", method=False)(_fn)
