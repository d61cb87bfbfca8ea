"""``optim.swa_utils``: weight averaging (SWA and EMA) and the schedule that goes with it, as torch's.

``AveragedModel(model)`` keeps a copy of ``model`` whose parameters (and buffers with ``use_buffers``)
are a running average of the model's, updated by ``update_parameters``; ``SWALR`` anneals each group's
learning rate to its ``swa_lr``; ``update_bn`` recomputes BatchNorm statistics for the averaged weights.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .._grad_mode import no_grad
from .._tensor import Tensor
from ..nn.modules.module import Module
from ..nn.modules.normalization import _BatchNorm
from ..ops.creation import tensor
from .lr_scheduler import LRScheduler
from .optimizer import Optimizer

__all__ = ["SWALR", "AveragedModel", "get_ema_avg_fn", "get_ema_multi_avg_fn", "get_swa_avg_fn",
           "get_swa_multi_avg_fn", "update_bn"]

AvgFn = Callable[[Tensor, Tensor, Tensor | int], Tensor]
MultiAvgFn = Callable[[Sequence[Tensor], Sequence[Tensor], Tensor | int], None]


def get_ema_avg_fn(decay: float = 0.999) -> AvgFn:
    """``decay * averaged + (1 - decay) * current``."""

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Tensor | int) -> Tensor:
        out: Tensor = decay * ema_param + (1 - decay) * current_param
        return out

    return ema_update


def get_swa_avg_fn() -> AvgFn:
    """The running mean: ``averaged + (current - averaged) / (n + 1)``."""

    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Tensor | int) -> Tensor:
        out: Tensor = averaged_param + (current_param - averaged_param) / (num_averaged + 1)
        return out

    return swa_update


def get_ema_multi_avg_fn(decay: float = 0.999) -> MultiAvgFn:
    def ema_update(ema_params: Sequence[Tensor], current_params: Sequence[Tensor], num_averaged: Tensor | int) -> None:
        for e, c in zip(ema_params, current_params):
            e.lerp_(c, 1 - decay)

    return ema_update


def get_swa_multi_avg_fn() -> MultiAvgFn:
    def swa_update(averaged_params: Sequence[Tensor], current_params: Sequence[Tensor],
                   num_averaged: Tensor | int) -> None:
        for a, c in zip(averaged_params, current_params):
            a.add_((c - a) / (num_averaged + 1))

    return swa_update


class AveragedModel(Module):
    """A deep copy of ``model`` whose weights are averaged by :meth:`update_parameters` (SWA by default,
    or ``avg_fn``/``multi_avg_fn``, e.g. :func:`get_ema_multi_avg_fn`)."""

    def __init__(self, model: Module, device: Any = None, avg_fn: AvgFn | None = None,
                 multi_avg_fn: MultiAvgFn | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype="int64", device=device))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def _averaged(self, model: Module) -> tuple[list[Tensor], list[Tensor]]:
        if self.use_buffers:
            return (list(itertools.chain(self.module.parameters(), self.module.buffers())),
                    list(itertools.chain(model.parameters(), model.buffers())))
        return list(self.module.parameters()), list(model.parameters())

    def update_parameters(self, model: Module) -> None:
        mine, theirs = self._averaged(model)
        n = int(self.n_averaged.item())
        pairs = [(p, q.detach().to(p.device)) for p, q in zip(mine, theirs)]
        with no_grad():
            if n == 0:
                for p, q in pairs:
                    p.copy_(q)
            elif self.multi_avg_fn is not None:
                self.multi_avg_fn([p for p, _ in pairs], [q for _, q in pairs], self.n_averaged)
            else:
                fn = self.avg_fn or get_swa_avg_fn()
                for p, q in pairs:
                    p.copy_(fn(p.detach(), q, self.n_averaged.to(p.device)))
        if not self.use_buffers:  # buffers follow the model (BatchNorm statistics come from update_bn)
            with no_grad():
                for b, c in zip(self.module.buffers(), model.buffers()):
                    b.copy_(c.detach().to(b.device))
        self.n_averaged.add_(1)


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """One pass over ``loader`` in training mode to recompute every BatchNorm's running statistics as a plain
    average (momentum None), then the layers' momenta and the model's mode are restored."""
    momenta: dict[Module, Any] = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for batch in loader:
            x = batch[0] if isinstance(batch, (list, tuple)) else batch
            if device is not None:
                x = x.to(device)
            model(x)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate from its value to ``swa_lr`` over ``anneal_epochs`` steps (cosine or
    linear), then hold it there."""

    def __init__(self, optimizer: Optimizer, swa_lr: float | Sequence[float], anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        lrs = list(swa_lr) if isinstance(swa_lr, (list, tuple)) else [swa_lr] * len(optimizer.param_groups)
        if len(lrs) != len(optimizer.param_groups):
            raise ValueError(f"swa_lr must have the same length as optimizer.param_groups: swa_lr has {len(lrs)}, "
                             f"optimizer.param_groups has {len(optimizer.param_groups)}")
        for lr, group in zip(lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}")
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[float]:
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0.0, min(1.0, (step - 1) / max(1, self.anneal_epochs))))
        prev = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0.0, min(1.0, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(self.optimizer.param_groups, prev)]

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in super().state_dict().items() if k != "anneal_func"}
