"""``nn.utils``: gradient clipping and parameter/vector conversion."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..._errors import fail
from ..._tensor import Tensor
from ...autograd import no_grad
from ...ops.creation import tensor
from ...ops.joining import cat, stack


def _params(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: Any = None) -> Tensor:
    """Scale the gradients in place so that their joint norm is at most ``max_norm``; returns the norm."""
    grads = [p.grad for p in _params(parameters) if p.grad is not None]
    if not grads:
        return tensor(0.0)
    with no_grad():
        norms = stack([g.norm(norm_type) for g in grads])
        total = norms.amax() if norm_type == float("inf") else norms.norm(norm_type)
        if error_if_nonfinite and not bool(total.isfinite()) if hasattr(total, "isfinite") else False:
            raise RuntimeError(f"The total norm of order {norm_type} for gradients is non-finite")
        coef = (total + 1e-6).reciprocal() * max_norm
        coef = coef.clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))
    return total


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
