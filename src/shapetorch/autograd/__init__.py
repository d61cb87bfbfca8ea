"""Automatic differentiation (``shapetorch.autograd``), following torch.autograd 2.0.

Reverse mode (``backward``, ``grad``), the graph API (``graph``), custom ``Function``\\ s, forward
mode (``forward_ad``), the ``functional`` API, ``gradcheck``/``gradgradcheck``, anomaly detection and
the ``profiler``.
"""

from . import forward_ad, functional, graph, profiler
from .anomaly_mode import detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly
from .engine import Node, backward, grad
from .function import Function, FunctionCtx, InplaceFunction, NestedIOFunction, once_differentiable
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .variable import Variable

__all__ = [
    "Function", "FunctionCtx", "GradcheckError", "InplaceFunction", "NestedIOFunction", "Node", "Variable",
    "backward", "detect_anomaly", "enable_grad", "forward_ad", "functional", "grad", "gradcheck", "gradgradcheck",
    "graph", "inference_mode", "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_grad_enabled",
    "is_inference_mode_enabled", "no_grad", "once_differentiable", "profiler", "set_detect_anomaly",
    "set_grad_enabled",
]
