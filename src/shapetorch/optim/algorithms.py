"""SGD, Adam, AdamW, RMSprop, Adagrad: torch's update rules (single-tensor form), written in shapetorch ops."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..ops.creation import full_like, tensor, zeros_like
from .optimizer import Optimizer, _scalar_step


class SGD(Optimizer):
    """Stochastic gradient descent with momentum, dampening, Nesterov momentum and weight decay."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: Any = None, differentiable: bool = False, fused: Any = None) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, {"lr": lr, "momentum": momentum, "dampening": dampening,
                                  "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                                  "foreach": foreach, "differentiable": differentiable, "fused": fused})

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        wd, nesterov = group["weight_decay"], group["nesterov"]
        for p in group["params"]:
            d_p = self._grad(p, group)
            if d_p is None:
                continue
            buf = self.state.get(p, {}).get("momentum_buffer") if momentum != 0 else None
            if (momentum == 0 or buf is not None) and self._fused(
                    "sgd", p, d_p, [buf] if buf is not None else [], lr=lr, momentum=momentum, dampening=dampening,
                    weight_decay=wd, nesterov=float(nesterov)):
                continue
            if wd != 0:
                d_p = d_p.add(p, alpha=wd)
            if momentum != 0:
                state = self.state.setdefault(p, {})
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = d_p.detach().clone()
                else:
                    buf.mul_(momentum).add_(d_p, alpha=1 - dampening)
                d_p = d_p.add(buf, alpha=momentum) if nesterov else buf
            p.add_(d_p, alpha=-lr)


class Adam(Optimizer):
    """Adam (and, with ``decoupled_weight_decay``, AdamW); optional amsgrad and maximize."""

    _decoupled = False

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False, *, foreach: Any = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False, fused: Any = None,
                 decoupled_weight_decay: bool = False) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                                  "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                                  "capturable": capturable, "differentiable": differentiable, "fused": fused,
                                  "decoupled_weight_decay": decoupled_weight_decay or self._decoupled})

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, (beta1, beta2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        for p in group["params"]:
            grad = self._grad(p, group)
            if grad is None:
                continue
            state = self.state.setdefault(p, {})
            if "exp_avg" not in state:
                state["step"] = tensor(0.0)
                state["exp_avg"] = zeros_like(p)
                state["exp_avg_sq"] = zeros_like(p)
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = zeros_like(p)
            step = _scalar_step(state)
            fused = [state["exp_avg"], state["exp_avg_sq"], *([state["max_exp_avg_sq"]] if group["amsgrad"] else [])]
            if self._fused("adam", p, grad, fused, lr=lr, beta1=beta1, beta2=beta2, eps=eps, weight_decay=wd,
                           decoupled=float(group["decoupled_weight_decay"]), step=step):
                continue
            if wd != 0:
                if group["decoupled_weight_decay"]:
                    p.mul_(1 - lr * wd)
                else:
                    grad = grad.add(p, alpha=wd)
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.add_(grad - exp_avg, alpha=1 - beta1)  # lerp
            exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)
            bc1 = 1 - beta1**step
            bc2_sqrt = math.sqrt(1 - beta2**step)
            if group["amsgrad"]:
                state["max_exp_avg_sq"].maximum_(exp_avg_sq)
                denom = (state["max_exp_avg_sq"].sqrt() / bc2_sqrt).add_(eps)
            else:
                denom = (exp_avg_sq.sqrt() / bc2_sqrt).add_(eps)
            p.add_(exp_avg / denom, alpha=-(lr / bc1))


class AdamW(Adam):
    """Adam with decoupled weight decay (default 1e-2)."""

    _decoupled = True

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: Any = None, capturable: bool = False, differentiable: bool = False, fused: Any = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused)


class RMSprop(Optimizer):
    def __init__(self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum: float = 0.0, centered: bool = False, capturable: bool = False,
                 foreach: Any = None, maximize: bool = False, differentiable: bool = False) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if alpha < 0.0:
            raise ValueError(f"Invalid alpha value: {alpha}")
        super().__init__(params, {"lr": lr, "alpha": alpha, "eps": eps, "weight_decay": weight_decay,
                                  "momentum": momentum, "centered": centered, "capturable": capturable,
                                  "foreach": foreach, "maximize": maximize, "differentiable": differentiable})

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, alpha, eps, wd, momentum = group["lr"], group["alpha"], group["eps"], group["weight_decay"], group["momentum"]
        for p in group["params"]:
            grad = self._grad(p, group)
            if grad is None:
                continue
            state = self.state.setdefault(p, {})
            if "square_avg" not in state:
                state["step"] = tensor(0.0)
                state["square_avg"] = zeros_like(p)
                if momentum > 0:
                    state["momentum_buffer"] = zeros_like(p)
                if group["centered"]:
                    state["grad_avg"] = zeros_like(p)
            _scalar_step(state)
            if wd != 0:
                grad = grad.add(p, alpha=wd)
            sq = state["square_avg"]
            sq.mul_(alpha).add_(grad * grad, alpha=1 - alpha)
            if group["centered"]:
                ga = state["grad_avg"]
                ga.add_(grad - ga, alpha=1 - alpha)
                avg = (sq - ga * ga).sqrt().add_(eps)
            else:
                avg = sq.sqrt().add_(eps)
            if momentum > 0:
                buf = state["momentum_buffer"]
                buf.mul_(momentum).add_(grad / avg)
                p.add_(buf, alpha=-lr)
            else:
                p.add_(grad / avg, alpha=-lr)


class Adagrad(Optimizer):
    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0.0, weight_decay: float = 0.0,
                 initial_accumulator_value: float = 0.0, eps: float = 1e-10, foreach: Any = None, *,
                 maximize: bool = False, differentiable: bool = False, fused: Any = None) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        super().__init__(params, {"lr": lr, "lr_decay": lr_decay, "weight_decay": weight_decay,
                                  "initial_accumulator_value": initial_accumulator_value, "eps": eps,
                                  "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                                  "fused": fused})
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p] = {"step": tensor(0.0),
                                 "sum": full_like(p, group["initial_accumulator_value"])}

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, lr_decay, wd, eps = group["lr"], group["lr_decay"], group["weight_decay"], group["eps"]
        for p in group["params"]:
            grad = self._grad(p, group)
            if grad is None:
                continue
            state = self.state[p]
            step = _scalar_step(state)
            if wd != 0:
                grad = grad.add(p, alpha=wd)
            clr = lr / (1 + (step - 1) * lr_decay)
            state["sum"].add_(grad * grad)
            std = state["sum"].sqrt().add_(eps)
            p.add_(grad / std, alpha=-clr)
