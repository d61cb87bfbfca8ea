"""Reverse-mode automatic differentiation (``shapetorch.autograd``)."""

from .engine import Node, backward, grad
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

__all__ = [
    "Node", "backward", "enable_grad", "grad", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled",
    "no_grad", "set_grad_enabled",
]
