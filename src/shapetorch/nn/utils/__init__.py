"""``nn.utils``: gradient clipping and parameter/vector conversion."""

from __future__ import annotations

import types
import warnings
from collections.abc import Iterable
from typing import Any

from ..._errors import fail
from ..._tensor import Tensor
from ...autograd import no_grad
from ...ops.creation import tensor
from ...ops.joining import cat, stack
from ...ops.linalg import linalg_vector_norm as vector_norm


def _params(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def get_total_norm(tensors: Tensor | Iterable[Tensor], norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: Any = None) -> Tensor:
    """The ``norm_type`` norm of all ``tensors`` taken as one vector (the norm of their norms)."""
    ts = _params(tensors)
    norm_type = float(norm_type)
    if not ts:
        return tensor(0.0)
    with no_grad():
        norms = [vector_norm(t, norm_type) for t in ts]
        total = vector_norm(stack([n.to(ts[0].device) for n in norms]), norm_type)
    if error_if_nonfinite and bool(total.isnan() | total.isinf()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                           "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                           "norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float, total_norm: Tensor,
                          foreach: Any = None) -> None:
    """Scale the gradients in place by ``min(1, max_norm / (total_norm + 1e-6))``."""
    grads = [p.grad for p in _params(parameters) if p.grad is not None]
    if not grads:
        return
    with no_grad():
        # always multiplied (by 1 when within bounds), as torch: no data-dependent branch
        coef = ((total_norm + 1e-6).reciprocal() * max_norm).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device))


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: Any = None) -> Tensor:
    """Scale the gradients in place so that their joint norm is at most ``max_norm``; returns the norm
    (``get_total_norm`` then ``clip_grads_with_norm_``)."""
    if isinstance(parameters, types.GeneratorType):
        parameters = list(parameters)
        if not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2)
    params = _params(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters: Tensor | Iterable[Tensor], max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: Any = None) -> Tensor:
    """Deprecated alias of ``clip_grad_norm_`` (warns, as torch)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float, foreach: Any = None) -> None:
    with no_grad():
        for p in _params(parameters):
            if p.grad is not None:
                p.grad.clamp_(-clip_value, clip_value)


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Each parameter's ``.data`` becomes its slice of ``vec``, as in torch: a view, so the parameters share
    ``vec``'s memory afterwards (a later write to ``vec`` shows in them)."""
    if not isinstance(vec, Tensor):
        fail("argument_error_refused", op="vector_to_parameters",
             problem=f"expected torch.Tensor, but got: {type(vec).__name__}")
    i = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[i:i + n].view_as(p).data
        i += n

from . import parametrizations as parametrizations  # noqa: E402  (reachable as attributes, as torch's)
from . import parametrize as parametrize  # noqa: E402
from . import rnn as rnn  # noqa: E402  (torch.nn.utils.rnn is reachable as an attribute)
from .fusion import fuse_conv_bn_eval as fuse_conv_bn_eval  # noqa: E402
from .fusion import fuse_conv_bn_weights as fuse_conv_bn_weights  # noqa: E402
from .fusion import fuse_linear_bn_eval as fuse_linear_bn_eval  # noqa: E402
from .fusion import fuse_linear_bn_weights as fuse_linear_bn_weights  # noqa: E402
from .init import skip_init as skip_init  # noqa: E402
from .memory_format import convert_conv2d_weight_memory_format as convert_conv2d_weight_memory_format  # noqa: E402
from .memory_format import convert_conv3d_weight_memory_format as convert_conv3d_weight_memory_format  # noqa: E402
from .spectral_norm import remove_spectral_norm as remove_spectral_norm  # noqa: E402
from .spectral_norm import spectral_norm as spectral_norm  # noqa: E402
from .weight_norm import remove_weight_norm as remove_weight_norm  # noqa: E402
from .weight_norm import weight_norm as weight_norm  # noqa: E402
