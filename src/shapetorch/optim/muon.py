"""``optim.Muon`` (torch 2.13): momentum whose update is orthogonalized by a Newton-Schulz iteration, for 2-D
parameters (the hidden layers' weight matrices; embeddings, biases and heads are left to another optimizer)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .._tensor import Tensor
from ..ops.creation import zeros_like
from ..ops.matmul import addmm
from .optimizer import Optimizer

__all__ = ["Muon"]

_NS_COEFFICIENTS = (3.4445, -4.775, 2.0315)  # torch's quintic: the slope at zero is as large as it stays stable


def orthogonalize(grad: Tensor, ns_coefficients: tuple[float, float, float], ns_steps: int, eps: float) -> Tensor:
    """An approximation of ``U V^T`` for ``grad = U S V^T``, by ``ns_steps`` quintic Newton-Schulz steps in bfloat16
    (as torch's, whose singular values come out between about 0.5 and 1.5): scaled by its Frobenius norm first so
    the spectral norm is at most 1, and run on the wide orientation so the Gram matrix is the smaller one."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.dim() != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = grad.shape[0] > grad.shape[1]
    x = grad.bfloat16()
    if tall:
        x = x.T
    x = x / x.norm().clamp(min=eps)
    # each product with its epilogue is computed in float32 and rounded to bfloat16 once, as torch's bfloat16
    # addmm does (rounding the product and then the sum twice drifts by several bfloat16 ulps in five steps)
    for _ in range(ns_steps):
        x32 = x.float()
        gram = (x32 @ x32.T).bfloat16().float()
        poly = addmm(gram, gram, gram, beta=b, alpha=c).bfloat16().float()  # b G + c G^2
        x = addmm(x32, poly, x32, beta=a).bfloat16()                       # a X + (b G + c G^2) X
    return x.T if tall else x


def _adjusted_lr(lr: float, adjust_lr_fn: str | None, shape: tuple[int, ...]) -> float:
    """The step size scaled so rectangular matrices get updates of one RMS: Keller Jordan's sqrt(max(1, A/B))
    (``"original"``, the default) or Moonshot's 0.2 sqrt(max(A, B)) (``"match_rms_adamw"``)."""
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, cols))
    return lr


class Muon(Optimizer):
    """torch's Muon: the momentum buffer is an exponential average of the gradients (``buf.lerp_(g, 1 - momentum)``),
    the update is ``g.lerp(buf, momentum)`` with Nesterov momentum (else the buffer), orthogonalized by
    ``orthogonalize``; the parameter decays by ``1 - lr * weight_decay`` and then moves by the adjusted lr."""

    def __init__(self, params: Iterable[Any], lr: float | Tensor = 1e-3, weight_decay: float = 0.1, momentum: float = 0.95,
                 nesterov: bool = True, ns_coefficients: tuple[float, float, float] = _NS_COEFFICIENTS,
                 eps: float = 1e-7, ns_steps: int = 5, adjust_lr_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, {"lr": lr, "weight_decay": weight_decay, "momentum": momentum, "nesterov": nesterov,
                                  "ns_coefficients": ns_coefficients, "eps": eps, "ns_steps": ns_steps,
                                  "adjust_lr_fn": adjust_lr_fn})
        for group in self.param_groups:
            for p in group["params"]:
                if p.dim() != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def _step_group(self, group: dict[str, Any]) -> None:
        lr = float(group["lr"].item() if isinstance(group["lr"], Tensor) else group["lr"])
        momentum = group["momentum"]
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            if p.is_complex():
                raise RuntimeError("Muon does not support complex parameters")
            if grad.dim() != 2:
                raise ValueError("Param gradient must be a 2D matrix")
            state = self.state.setdefault(p, {})
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = zeros_like(grad)
            buf = state["momentum_buffer"]
            buf.lerp_(grad, 1 - momentum)
            update = grad.lerp(buf, momentum) if group["nesterov"] else buf
            update = orthogonalize(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
            p.mul_(1 - lr * group["weight_decay"])
            p.add_(update, alpha=-_adjusted_lr(lr, group["adjust_lr_fn"], tuple(p.shape)))
