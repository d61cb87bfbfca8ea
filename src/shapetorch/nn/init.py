"""``nn.init``: in-place initialisers with torch's formulas (fan-in/fan-out, gains, kaiming, xavier, ...).

The streams come from shapetorch's generator, so the numbers differ from torch's for the same seed;
the distributions (bounds, standard deviations) are torch's.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from .._dtype import float64
from .._tensor import Tensor
from ..autograd import no_grad
from ..ops.conversion import where as _where
from ..ops.creation import empty, eye, from_numpy
from ..ops.random import randn, randperm


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
    if nonlinearity in linear or nonlinearity == "sigmoid":
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator: Any = None) -> Tensor:
    """Normal(mean, std) redrawn until inside [a, b]."""
    with no_grad():
        out = empty(tuple(tensor.shape), dtype=tensor.dtype).normal_(mean, std, generator=generator)
        for _ in range(100):
            bad = (out < a).logical_or(out > b)
            if not bool(bad.any()):
                break
            fresh = empty(tuple(tensor.shape), dtype=tensor.dtype).normal_(mean, std, generator=generator)
            out = _where(bad, fresh, out)
        return tensor.copy_(out.clamp(a, b))


def constant_(tensor: Tensor, val: float) -> Tensor:
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    with no_grad():
        return tensor.zero_()


def eye_(tensor: Tensor) -> Tensor:
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        return tensor.copy_(eye(*tensor.shape, dtype=tensor.dtype))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    d = tensor.dim()
    if d not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    import numpy as np

    arr = np.zeros(tuple(tensor.shape), dtype=tensor.detach().cpu().numpy().dtype)
    out_per = tensor.shape[0] // groups
    mn = min(out_per, tensor.shape[1])
    centre = tuple(s // 2 for s in tensor.shape[2:])
    for g in range(groups):
        for i in range(mn):
            arr[(g * out_per + i, i) + centre] = 1
    with no_grad():
        return tensor.copy_(from_numpy(arr))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator: Any = None) -> Tensor:
    if 0 in tuple(tensor.shape):
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator: Any = None) -> Tensor:
    if 0 in tuple(tensor.shape):
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    import numpy as np

    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    # drawn and factorised on the CPU in float64 (a WebGPU tensor has no float64), then copied into ``tensor``
    flat = randn(rows, cols, generator=generator, dtype=float64, device="cpu").numpy()
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with no_grad():
        return tensor.copy_(from_numpy(np.ascontiguousarray(q * gain)).to(tensor.dtype).reshape(tuple(tensor.shape)))


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: Any = None) -> Tensor:
    """A 2-D tensor drawn from N(0, std^2) with ``ceil(sparsity * rows)`` randomly chosen rows of each column
    set to zero."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            tensor[randperm(rows)[:num_zeros], col] = 0
    return tensor


def _deprecated(new: Any) -> Any:
    """torch's old spelling of ``new`` (without the trailing underscore): the same, with a FutureWarning."""
    old_name, new_name = new.__name__[:-1], new.__name__

    def deprecated_init(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.", FutureWarning,
                      stacklevel=2)
        return new(*args, **kwargs)

    deprecated_init.__name__ = old_name
    deprecated_init.__doc__ = f"Deprecated: use ``{new_name}``."
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
dirac = _deprecated(dirac_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
