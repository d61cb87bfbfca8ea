"""Every scheduler of ``optim.lr_scheduler`` against torch's, step by step (lr and momentum), and a state_dict
saved midway and loaded into a fresh scheduler continues identically."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import shapetorch as st

SCHEDULERS: dict[str, Callable[[Any, Any], Any]] = {
    "LambdaLR": lambda L, o: L.optim.lr_scheduler.LambdaLR(o, lambda e: 0.9**e),
    "MultiplicativeLR": lambda L, o: L.optim.lr_scheduler.MultiplicativeLR(o, lambda e: 0.95),
    "StepLR": lambda L, o: L.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.5),
    "MultiStepLR": lambda L, o: L.optim.lr_scheduler.MultiStepLR(o, milestones=[2, 5, 6], gamma=0.3),
    "ConstantLR": lambda L, o: L.optim.lr_scheduler.ConstantLR(o, factor=0.25, total_iters=4),
    "LinearLR": lambda L, o: L.optim.lr_scheduler.LinearLR(o, start_factor=0.2, total_iters=5),
    "ExponentialLR": lambda L, o: L.optim.lr_scheduler.ExponentialLR(o, gamma=0.8),
    "PolynomialLR": lambda L, o: L.optim.lr_scheduler.PolynomialLR(o, total_iters=6, power=2.0),
    "CosineAnnealingLR": lambda L, o: L.optim.lr_scheduler.CosineAnnealingLR(o, T_max=5, eta_min=0.01),
    "CosineAnnealingWarmRestarts": lambda L, o: L.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2,
                                                                                                  eta_min=0.001),
    "CyclicLR": lambda L, o: L.optim.lr_scheduler.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3,
                                                           mode="triangular2"),
    "CyclicLR_exp": lambda L, o: L.optim.lr_scheduler.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2,
                                                               step_size_down=3, mode="exp_range", gamma=0.9),
    "OneCycleLR": lambda L, o: L.optim.lr_scheduler.OneCycleLR(o, max_lr=0.5, total_steps=20),
    "SequentialLR": lambda L, o: L.optim.lr_scheduler.SequentialLR(
        o, [L.optim.lr_scheduler.LinearLR(o, start_factor=0.1, total_iters=3),
            L.optim.lr_scheduler.ExponentialLR(o, gamma=0.7)], milestones=[3]),
    "ChainedScheduler": lambda L, o: L.optim.lr_scheduler.ChainedScheduler(
        [L.optim.lr_scheduler.ConstantLR(o, factor=0.5, total_iters=4),
         L.optim.lr_scheduler.ExponentialLR(o, gamma=0.9)]),
}


def _run(L: Any, name: str, steps: int = 12, resume_at: int | None = None) -> list[tuple[float, float]]:
    p = L.nn.Parameter(L.ones(2))
    opt = L.optim.SGD([p], lr=0.1, momentum=0.9)
    sched = SCHEDULERS[name](L, opt)
    out = []
    for i in range(steps):
        opt.step()
        sched.step()
        out.append((sched.get_last_lr()[0], opt.param_groups[0]["momentum"]))
        if resume_at == i:
            state, opt_state = sched.state_dict(), opt.state_dict()
            opt = L.optim.SGD([p], lr=0.1, momentum=0.9)
            fresh = SCHEDULERS[name](L, opt)
            opt.load_state_dict(opt_state)
            fresh.load_state_dict(state)
            sched = fresh
    return out


@pytest.mark.parametrize("name", SCHEDULERS)
def test_scheduler_matches_torch_step_by_step(name: str) -> None:
    np.testing.assert_allclose(_run(st, name), _run(torch, name), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["StepLR", "CosineAnnealingWarmRestarts", "CyclicLR", "OneCycleLR", "SequentialLR",
                                  "MultiplicativeLR", "PolynomialLR"])
def test_scheduler_state_dict_round_trip(name: str) -> None:
    np.testing.assert_allclose(_run(st, name, resume_at=4), _run(st, name), rtol=1e-12)


def test_reduce_lr_on_plateau_matches_torch() -> None:
    metrics = [1.0, 0.9, 0.95, 0.93, 0.92, 0.91, 0.97, 0.99, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6]

    def run(L: Any, mode: str, threshold_mode: str) -> list[float]:
        opt = L.optim.Adam([L.nn.Parameter(L.ones(1))], lr=1.0)
        sched = L.optim.lr_scheduler.ReduceLROnPlateau(opt, mode=mode, factor=0.5, patience=1, cooldown=1,
                                                       threshold=0.01, threshold_mode=threshold_mode, min_lr=0.05)
        lrs = []
        for m in metrics:
            sched.step(L.tensor(m) if mode == "min" else -m)
            lrs.append(opt.param_groups[0]["lr"])
        state = sched.state_dict()
        assert state["best"] == (min(metrics) if mode == "min" else -min(metrics))
        return [*lrs, sched.get_last_lr()[0], state["num_bad_epochs"], state["cooldown_counter"]]

    for mode in ("min", "max"):
        for threshold_mode in ("rel", "abs"):
            assert run(st, mode, threshold_mode) == run(torch, mode, threshold_mode)
    for bad in ({"factor": 1.5}, {"mode": "median"}):
        with pytest.raises(ValueError):
            torch.optim.lr_scheduler.ReduceLROnPlateau(torch.optim.SGD([torch.zeros(1, requires_grad=True)]), **bad)
        with pytest.raises(ValueError):
            st.optim.lr_scheduler.ReduceLROnPlateau(st.optim.SGD([st.zeros(1, requires_grad=True)]), **bad)


def _scheduler_warnings(lib: Any, order: str) -> list[str]:
    """The warnings a first epoch of ``order`` gives: "opt_first", "sched_first", "replaced" (the optimizer's
    step reassigned after the scheduler was made), "sequential" (a SequentialLR stepped first)."""
    p = lib.nn.Parameter(lib.ones(2))
    opt = lib.optim.SGD([p], lr=0.1)
    if order == "sequential":
        sched = lib.optim.lr_scheduler.SequentialLR(opt, [lib.optim.lr_scheduler.LinearLR(opt, total_iters=2),
                                                          lib.optim.lr_scheduler.ExponentialLR(opt, 0.9)], [2])
    else:
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=1)
    if order == "replaced":
        opt.step = type(opt).step.__get__(opt)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            (p * p).sum().backward()
            if order in ("opt_first", "replaced"):
                opt.step()
            sched.step()
            if order in ("sched_first", "sequential"):
                opt.step()
    return [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


@pytest.mark.parametrize("order", ["opt_first", "sched_first", "replaced", "sequential"])
def test_scheduler_stepped_before_its_optimizer_warns_as_torch(order: str) -> None:
    assert _scheduler_warnings(st, order) == _scheduler_warnings(torch, order)
