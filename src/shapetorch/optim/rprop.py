"""``optim.Rprop``: resilient backpropagation, each element stepping by its own size, grown or shrunk by the
sign agreement of successive gradients."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..ops.creation import full_like, tensor, zeros_like
from .optimizer import Optimizer, _as_real, _scalar_step

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """torch's Rprop: where the gradient kept its sign the step size grows by ``etas[1]``, where it flipped it
    shrinks by ``etas[0]`` and that element does not move this step (its gradient is remembered as 0); sizes are
    clamped to ``step_sizes`` and each element moves by ``-sign(grad) * step_size``."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False, foreach: Any = None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                                  "maximize": maximize, "differentiable": differentiable, "capturable": capturable})

    def _step_group(self, group: dict[str, Any]) -> None:
        etaminus, etaplus = group["etas"]
        size_min, size_max = group["step_sizes"]
        for p in group["params"]:
            grad = self._grad(p, group)
            if grad is None:
                continue
            state = self.state.setdefault(p, {})
            if "step" not in state:  # torch's order: step, prev, step_size
                state["step"] = tensor(0.0)
                state["prev"] = zeros_like(p)
                lr = float(group["lr"])  # a complex parameter's imaginary parts step as its real ones (torch)
                state["step_size"] = full_like(grad, complex(lr, lr) if p.is_complex() else lr)
            _scalar_step(state)
            p, grad, state = _as_real(p, grad, state)
            prev, step_size = state["prev"], state["step_size"]
            agreement = (grad * prev).sign()
            # filled in the gradient's dtype, so that the factors are exact in float64 as torch's
            flipped = agreement < 0
            factor = agreement.masked_fill(agreement > 0, etaplus).masked_fill_(flipped, etaminus)
            factor.masked_fill_(agreement == 0, 1.0)
            step_size.mul_(factor).clamp_(size_min, size_max)
            grad = grad.masked_fill(flipped, 0.0)  # a flipped sign: no move, and the gradient is forgotten
            p.addcmul_(grad.sign(), step_size, value=-1)
            prev.copy_(grad)
