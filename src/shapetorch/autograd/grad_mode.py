"""``shapetorch.autograd.grad_mode``: no_grad, enable_grad, set_grad_enabled, inference_mode.

The state lives below the tensor (``shapetorch._grad_mode``), which reads it; this is its public
module, as ``torch.autograd.grad_mode``.
"""

from .._grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

__all__ = [
    "enable_grad", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled", "no_grad", "set_grad_enabled",
]
