"""``optim.SparseAdam``: Adam for sparse gradients only."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """torch's SparseAdam takes sparse gradients only (``nn.Embedding(sparse=True)``) and refuses dense ones.
    shapetorch's gradients are always dense, so a step on a parameter that has a gradient raises torch's
    RuntimeError; the constructor checks its arguments as torch's does."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})

    def _step_group(self, group: dict[str, Any]) -> None:
        for p in group["params"]:
            if p.grad is not None:
                raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
