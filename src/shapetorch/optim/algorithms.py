"""SGD, Adam, AdamW, NAdam, RAdam, Adamax, RMSprop, Adagrad, Adadelta, ASGD: torch's update rules (single-tensor
form), written in shapetorch ops."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import Any

from .._dtype import float32
from .._tensor import Tensor
from ..ops.creation import full_like, tensor, zeros, zeros_like
from .optimizer import Optimizer, _as_real, _scalar_step


def _updates(opt: Optimizer, group: dict[str, Any], buffers: tuple[str, ...], *, device_step: bool = False,
             **scalars: float) -> Iterator[tuple[Tensor, Tensor, dict[str, Any], float]]:
    """Each parameter of ``group`` that has a gradient, with its gradient, its state and the step count after
    this step (a complex parameter, its gradient and buffers seen as real pairs, as torch steps them). A
    parameter's first visit makes its state as torch orders it: ``step``, the 0-d ``scalars``, then a zero
    tensor like the parameter for each of ``buffers``. ``device_step`` (capturable): the step is a float32 0-d
    tensor on the parameter's device, which the caller increments there (the count yielded is 0)."""
    for p in group["params"]:
        grad = opt._grad(p, group)
        if grad is None:
            continue
        state = opt.state.setdefault(p, {})
        if "step" not in state:
            state["step"] = zeros((), dtype=float32, device=p.device) if device_step else tensor(0.0)
            for name, value in scalars.items():
                state[name] = tensor(value)
            for name in buffers:
                state[name] = zeros_like(p)
        if device_step:
            if state["step"].device != p.device:  # (a state loaded from a step kept on the host)
                state["step"] = state["step"].to(p.device, float32)
            yield (*_as_real(p, grad, state), 0.0)
        else:
            yield (*_as_real(p, grad, state), _scalar_step(state))


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

    @staticmethod
    def _fused_hyper(group: dict[str, Any], step: float) -> dict[str, float]:
        return {"lr": group["lr"], "momentum": group["momentum"], "dampening": group["dampening"],
                "weight_decay": group["weight_decay"], "nesterov": float(group["nesterov"])}

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        wd, nesterov = group["weight_decay"], group["nesterov"]
        hyper = self._fused_hyper(group, 0.0)
        for p in group["params"]:
            d_p = self._grad(p, group)
            if d_p is None:
                continue
            buf = self.state.get(p, {}).get("momentum_buffer") if momentum != 0 else None
            if (momentum == 0 or buf is not None) and self._fused("sgd", p, d_p, [buf] if buf is not None else [],
                                                                  **hyper):
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
        _check_adam_like(lr, eps, betas, weight_decay)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                                  "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                                  "capturable": capturable, "differentiable": differentiable, "fused": fused,
                                  "decoupled_weight_decay": decoupled_weight_decay or self._decoupled})

    _device_step = True

    @staticmethod
    def _fused_hyper(group: dict[str, Any], step: float) -> dict[str, float]:
        # capturable: the step count and the bias corrections on the device (torch's capturable Adam), the fused
        # kernel increments the count itself
        beta1, beta2 = group["betas"]
        hyper = {"lr": group["lr"], "beta1": beta1, "beta2": beta2, "eps": group["eps"],
                 "weight_decay": group["weight_decay"], "decoupled": float(group["decoupled_weight_decay"]),
                 "step": step}
        if group["capturable"]:
            hyper["step"], hyper["capturable"] = 0.0, 1.0
        return hyper

    @staticmethod
    def _host_steps(group: dict[str, Any]) -> bool:
        return not group["capturable"]

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, (beta1, beta2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        buffers = ("exp_avg", "exp_avg_sq", *(["max_exp_avg_sq"] if group["amsgrad"] else []))
        capturable = bool(group["capturable"])
        hyper = self._fused_hyper(group, 0.0)
        for p, grad, state, step in _updates(self, group, buffers, device_step=capturable):
            fused = [state[name] for name in buffers]
            if capturable:
                if self._fused("adam", p, grad, [*fused, state["step"]], **hyper):
                    continue
                self._capturable_update(p, grad, state, group)  # (the ops increment the count)
                continue
            hyper["step"] = step
            if self._fused("adam", p, grad, fused, **hyper):
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
            # differentiable: the quotient saves its numerator, which the next step updates in place (torch clones)
            p.add_((exp_avg.clone() if group["differentiable"] else exp_avg) / denom, alpha=-(lr / bc1))


    @staticmethod
    def _capturable_update(p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        """One parameter's update with the step count a device tensor: no value goes to the host."""
        lr, (beta1, beta2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        step_t = state["step"]
        step_t.add_(1)
        if wd != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * wd)
            else:
                grad = grad.add(p, alpha=wd)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.add_(grad - exp_avg, alpha=1 - beta1)
        exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)
        bc1 = 1 - beta1**step_t
        bc2_sqrt = (1 - beta2**step_t).sqrt()
        second = exp_avg_sq
        if group["amsgrad"]:
            state["max_exp_avg_sq"].maximum_(exp_avg_sq)
            second = state["max_exp_avg_sq"]
        denom = (second.sqrt() / bc2_sqrt).add_(eps)
        p.add_((exp_avg.clone() if group["differentiable"] else exp_avg) / denom * (-lr / bc1))


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
        for p, grad, state, _ in _updates(self, group, ("square_avg", *(["momentum_buffer"] if momentum > 0 else []),
                                                      *(["grad_avg"] if group["centered"] else []))):
            if wd != 0:
                grad = grad.add(p, alpha=wd)
            sq = state["square_avg"]
            sq.mul_(alpha).add_(grad * grad, alpha=1 - alpha)
            if group["centered"]:
                ga = state["grad_avg"]
                ga.add_(grad - ga, alpha=1 - alpha)
                avg = (sq - ga * ga).sqrt()
            else:
                avg = sq.sqrt()
            # differentiable: sqrt saves its result for the backward, so eps is added out of place (as torch)
            avg = avg.add(eps) if group["differentiable"] else avg.add_(eps)
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
                init = group["initial_accumulator_value"]  # both parts of a complex parameter's sum, as torch
                self.state[p] = {"step": tensor(0.0), "sum": full_like(p, complex(init, init) if p.is_complex() else init)}

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, lr_decay, wd, eps = group["lr"], group["lr_decay"], group["weight_decay"], group["eps"]
        for p in group["params"]:
            grad = self._grad(p, group)
            if grad is None:
                continue
            step = _scalar_step(self.state[p])
            p, grad, state = _as_real(p, grad, self.state[p])
            if wd != 0:
                grad = grad.add(p, alpha=wd)
            clr = lr / (1 + (step - 1) * lr_decay)
            state["sum"].add_(grad * grad)
            std = state["sum"].sqrt()
            std = std.add(eps) if group["differentiable"] else std.add_(eps)  # (RMSprop's reason)
            p.add_(grad / std, alpha=-clr)


def _check_adam_like(lr: float, eps: float, betas: tuple[float, float], weight_decay: float) -> None:
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


def _weight_decay(p: Any, grad: Any, lr: float, wd: float, decoupled: bool) -> Any:
    if wd != 0:
        if decoupled:
            p.mul_(1 - lr * wd)
        else:
            grad = grad.add(p, alpha=wd)
    return grad


class NAdam(Optimizer):
    """Adam with Nesterov momentum and torch's momentum-decay schedule; ``mu_product`` is kept as a float32
    0-d tensor, as torch keeps it, so its rounding (and so every step) is the same."""

    def __init__(self, params: Iterable[Any], lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: Any = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        _check_adam_like(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                                  "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
                                  "maximize": maximize, "foreach": foreach, "capturable": capturable,
                                  "differentiable": differentiable})

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, (beta1, beta2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        decay = group["momentum_decay"]
        for p, grad, state, step in _updates(self, group, ("exp_avg", "exp_avg_sq"), mu_product=1.0):
            grad = _weight_decay(p, grad, lr, wd, group["decoupled_weight_decay"])
            mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * decay))
            mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * decay))
            state["mu_product"].mul_(mu)
            mu_product = float(state["mu_product"].item())
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.add_(grad - exp_avg, alpha=1 - beta1)
            exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)
            denom = (exp_avg_sq / (1 - beta2**step)).sqrt()
            differentiable = group["differentiable"]  # (Adam's and RMSprop's reasons: nothing saved is updated in place)
            denom = denom.add(eps) if differentiable else denom.add_(eps)
            p.add_(grad / denom, alpha=-lr * (1.0 - mu) / (1.0 - mu_product))
            p.add_((exp_avg.clone() if differentiable else exp_avg) / denom,
                   alpha=-lr * mu_next / (1.0 - mu_product * mu_next))


class RAdam(Optimizer):
    """Rectified Adam: plain momentum SGD while the variance estimate is unreliable (rho_t <= 5)."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, decoupled_weight_decay: bool = False, *,
                 foreach: Any = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_adam_like(lr, eps, betas, weight_decay)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                                  "maximize": maximize, "foreach": foreach, "capturable": capturable,
                                  "decoupled_weight_decay": decoupled_weight_decay,
                                  "differentiable": differentiable})

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, (beta1, beta2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        for p, grad, state, step in _updates(self, group, ("exp_avg", "exp_avg_sq")):
            grad = _weight_decay(p, grad, lr, wd, group["decoupled_weight_decay"])
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.add_(grad - exp_avg, alpha=1 - beta1)
            exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)
            bc1, bc2 = 1 - beta1**step, 1 - beta2**step
            corrected = exp_avg / bc1
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * step * (beta2**step) / bc2
            if rho_t > 5.0:
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                adaptive = (bc2**0.5) / exp_avg_sq.sqrt().add_(eps)
                p.add_(corrected * lr * adaptive * rect, alpha=-1.0)
            else:
                p.add_(corrected * lr, alpha=-1.0)


class Adamax(Optimizer):
    """Adam with the infinity norm: ``exp_inf = max(beta2 * exp_inf, |grad| + eps)``."""

    def __init__(self, params: Iterable[Any], lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, foreach: Any = None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _check_adam_like(lr, eps, betas, weight_decay)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                                  "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                                  "capturable": capturable})

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, (beta1, beta2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        for p, grad, state, step in _updates(self, group, ("exp_avg", "exp_inf")):
            if wd != 0:
                grad = grad.add(p, alpha=wd)
            exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
            exp_avg.add_(grad - exp_avg, alpha=1 - beta1)
            exp_inf.mul_(beta2).maximum_(grad.abs().add_(eps))
            p.add_(exp_avg / exp_inf, alpha=-lr / (1 - beta1**step))


class Adadelta(Optimizer):
    """Adadelta: the step is ``sqrt(acc_delta + eps) / sqrt(square_avg + eps) * grad``, scaled by ``lr``."""

    def __init__(self, params: Iterable[Any], lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0.0, foreach: Any = None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                                  "maximize": maximize, "capturable": capturable, "foreach": foreach,
                                  "differentiable": differentiable})

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, rho, eps, wd = group["lr"], group["rho"], group["eps"], group["weight_decay"]
        for p, grad, state, _ in _updates(self, group, ("square_avg", "acc_delta")):
            if wd != 0:
                grad = grad.add(p, alpha=wd)
            square_avg, acc_delta = state["square_avg"], state["acc_delta"]
            square_avg.mul_(rho).add_(grad * grad, alpha=1 - rho)
            delta = (acc_delta + eps).sqrt() / (square_avg + eps).sqrt() * grad
            acc_delta.mul_(rho).add_(delta * delta, alpha=1 - rho)
            p.add_(delta, alpha=-lr)


class ASGD(Optimizer):
    """Averaged SGD; ``ax`` holds the running average of the iterates from step ``t0`` on. ``eta`` and ``mu``
    are float32 0-d tensors, as in torch, so their rounding is the same."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0.0, foreach: Any = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
                                  "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                                  "capturable": capturable})

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, lambd, alpha, t0, wd = group["lr"], group["lambd"], group["alpha"], group["t0"], group["weight_decay"]
        for p, grad, state, step in _updates(self, group, ("ax",), eta=float(lr), mu=1.0):
            if wd != 0:
                grad = grad.add(p, alpha=wd)
            eta = float(state["eta"].item())
            p.mul_(1 - lambd * eta)
            p.add_(grad, alpha=-eta)
            ax, mu = state["ax"], state["mu"]
            if float(mu.item()) != 1:
                ax.add_((p - ax).mul_(mu))
            else:
                ax.copy_(p)
            state["eta"] = tensor(lr / ((1 + lambd * lr * step) ** alpha))
            state["mu"] = tensor(1 / max(1, step - t0))
