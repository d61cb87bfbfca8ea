"""Automatic differentiation (``shapetorch.autograd``), following torch.autograd 2.0.

Reverse mode (``backward``, ``grad``), the graph API (``graph``), custom ``Function``\\ s, forward
mode (``forward_ad``), the ``functional`` API, ``gradcheck``/``gradgradcheck``, anomaly detection and
the ``profiler``.
"""

from .._engine.anomaly import detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly
from .._engine.backward import Node, backward, grad
from .._grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from . import anomaly_mode, forward_ad, functional, grad_mode, graph, profiler
from .function import Function, FunctionCtx, InplaceFunction, NestedIOFunction, once_differentiable
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .variable import Variable

__all__ = [
    "Function", "FunctionCtx", "GradcheckError", "InplaceFunction", "NestedIOFunction", "Node", "Variable", "anomaly_mode",
    "grad_mode",
    "backward", "detect_anomaly", "enable_grad", "forward_ad", "functional", "grad", "gradcheck", "gradgradcheck",
    "graph", "inference_mode", "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_grad_enabled",
    "is_inference_mode_enabled", "no_grad", "once_differentiable", "profiler", "set_detect_anomaly",
    "set_grad_enabled",
]
