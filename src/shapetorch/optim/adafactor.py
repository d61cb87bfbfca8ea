"""``optim.Adafactor``: Adam-like steps whose second moment of a matrix is kept factored, as a row and a column
vector (torch's version of Shazeer & Stern's method: no first moment, relative step sizes, update clipping)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._dtype import finfo
from ..ops.creation import tensor, zeros, zeros_like
from .optimizer import Optimizer, _scalar_step

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """torch's Adafactor. At step t: ``beta2_t = 1 - t**beta2_decay``; the step is
    ``max(eps2, RMS(param)) * min(lr, 1/sqrt(t))``; for a tensor of 2 or more dims the running row and column
    means of ``grad**2`` estimate the variance (their outer product over the row mean), for a vector the running
    ``grad**2`` itself; the update ``grad / sqrt(variance)`` is scaled down so that its RMS is at most ``d``.
    ``weight_decay`` is decoupled (``param *= 1 - lr * weight_decay``)."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: Any = None, maximize: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                                  "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize})

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, beta2_decay, d, wd = float(group["lr"]), group["beta2_decay"], group["d"], group["weight_decay"]
        eps1, eps2 = group["eps"]
        for p in group["params"]:
            grad = self._grad(p, group)
            if grad is None:
                continue
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
            state = self.state.setdefault(p, {})
            if "step" not in state:
                state["step"] = tensor(0.0)
                if grad.dim() > 1:
                    shape = list(grad.shape)
                    state["row_var"] = zeros(shape[:-1] + [1], dtype=grad.dtype, device=grad.device)
                    state["col_var"] = zeros(shape[:-2] + [1, shape[-1]], dtype=grad.dtype, device=grad.device)
                else:
                    state["variance"] = zeros_like(grad)
            step = _scalar_step(state)
            e1 = finfo(p.dtype).eps if eps1 is None else eps1
            one_minus_beta2 = step**beta2_decay
            rho = min(lr, 1 / step**0.5)
            alpha = max(eps2, p.norm(2).item() / p.numel() ** 0.5) * rho
            if wd != 0:
                p.mul_(1 - lr * wd)
            if grad.dim() > 1:
                row_var, col_var = state["row_var"], state["col_var"]
                row_var.lerp_(grad.norm(dim=-1, keepdim=True).square_().div_(grad.size(-1)), one_minus_beta2)
                col_var.lerp_(grad.norm(dim=-2, keepdim=True).square_().div_(grad.size(-2)), one_minus_beta2)
                var_estimate = row_var @ col_var
                var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=e1))
            else:
                variance = state["variance"]
                variance.lerp_(grad * grad, one_minus_beta2)
                var_estimate = variance.clone()
            update = var_estimate.clamp_(min=e1 * e1).rsqrt_().mul_(grad)
            denom = max(1.0, update.norm(2).item() / (update.numel() ** 0.5 * d))
            p.add_(update, alpha=-alpha / denom)
