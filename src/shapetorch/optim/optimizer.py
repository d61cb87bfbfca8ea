"""``optim.Optimizer``: parameter groups, per-parameter state, zero_grad, state_dict / load_state_dict.

Updates are written in shapetorch's in-place ops under ``no_grad``, so they run on any backend and bump
the parameters' version counters as torch's do.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from copy import deepcopy
from itertools import chain
from operator import attrgetter, is_
from typing import Any
from weakref import WeakKeyDictionary

import numpy as np

from .._device import backend
from .._errors import fail
from .._tensor import Tensor, bump_versions
from ..autograd import no_grad, set_grad_enabled
from ..backends.webgpu.api import capturing
from ..ops.complex import view_as_real
from ..ops.creation import tensor


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()


# capturable=True keeps the step on the device (no host sync), for CUDA graphs in torch; the CPU has no
# such thing, and torch refuses it there at the step. WebGPU steps stay on the device as they are.
_CAPTURABLE_DEVICES = ["webgpu"]


def _check_capturable(group: dict[str, Any]) -> None:
    for p in group["params"]:
        if p.grad is not None and p.device.type not in _CAPTURABLE_DEVICES:
            # torch's exception: an assert in its step (so an AssertionError, as the other asserts here)
            raise AssertionError("If capturable=True, params and state_steps must be on supported devices: "
                                 f"{_CAPTURABLE_DEVICES}.")


class Optimizer:
    """Base class: ``param_groups`` (dicts with 'params' and the hyper-parameters) and ``state`` per parameter."""

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        # a defaultdict, as torch's: hand-written optimizers read ``self.state[p]`` and fill it when empty
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        group = dict(param_group)
        params = group["params"]
        group["params"] = [params] if isinstance(params, Tensor) else list(params)
        for p in group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
            if not (p.is_leaf or p.retains_grad or self.defaults.get("differentiable")):
                raise ValueError("can't optimize a non-leaf Tensor")
        for k, v in self.defaults.items():
            if v is required and k not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {k}")
            group.setdefault(k, v)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        with no_grad():
                            p.grad = p.grad.detach().zero_()

    def _step_group(self, group: dict[str, Any]) -> None:
        raise NotImplementedError

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        from ..autograd import enable_grad

        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        # torch's: a differentiable step runs with grad enabled, recording its updates (so a leaf parameter's
        # in-place update is refused, as there); any other runs under no_grad
        with set_grad_enabled(bool(self.defaults.get("differentiable", False))):
            plans = _PLANS.get(self)
            for i, group in enumerate(self.param_groups):
                if group.get("capturable"):
                    _check_capturable(group)
                if "capturable" in group and capturing():
                    self._check_graph_capture(group)
                plan = plans.get(i) if plans is not None else None
                if plan is not None and plan.group is group and plan.replay(self):
                    continue
                self._step_planned(i, group)
        return loss

    # -- a parameter group's step as a plan ------------------------------------------------------------------
    # A group whose every parameter took its backend's fused update (``_fused``) in one step records that step as a
    # plan (the backend's ``step_plan``: WebGPU's launches); the next steps replay it after checking, in C-level
    # passes over the group, that nothing it binds changed (the state tensors themselves, and the backend's
    # ``step_signature`` of the parameters', gradients' and states' arrays: their buffers, offsets and layouts), with
    # the scalars of the step's hyperparameters (a scheduler's learning rate, the bias corrections of the step count).
    # Anything else takes the step's ops again, and makes a new plan where it can. It replaces a Python pass per
    # parameter (the state lookup, the count, the hyperparameters, the fused kernel's checks) with one per group.

    def _fused_hyper(self, group: dict[str, Any], step: float) -> dict[str, float] | None:
        """The hyperparameters the fused update of ``group`` takes at a step whose count (after it) is ``step``; None
        where this optimizer has no fused update (its steps make no plan)."""
        return None

    def _host_steps(self, group: dict[str, Any]) -> bool:
        """Whether each parameter's step count of ``group`` lives on the host (``_scalar_step``'s)."""
        return False

    def _step_planned(self, i: int, group: dict[str, Any]) -> None:
        """Step ``group`` (the ``i``-th) with its ops, and keep the plan of that step where one can be made (with the
        group's earlier plans while it holds the same parameters and state; a step that makes none leaves them)."""
        plans = _PLANS.get(self)
        old = plans.get(i) if plans is not None else None
        params = group["params"]
        make = None
        if (params and not group.get("maximize") and not group.get("differentiable") and not capturing()
                and self._fused_hyper(group, 0.0) is not None):
            make = getattr(backend(params[0]._device.type), "step_plan", None)
        if make is None:
            self._step_group(group)
            return
        # (the recording's count of the fused updates it holds: each parameter's, or the step is no plan)
        launches = make(lambda: self._step_group(group))
        if launches is not None and launches.count == len(params):
            if old is None or old.group is not group or not old.stands(self):
                old = _GroupPlan.make(self, group, backend(params[0]._device.type).step_signature)
            if old is not None and old.add(launches):
                _PLANS.setdefault(self, {})[i] = old
            elif plans is not None:
                plans.pop(i, None)

    # Whether ``capturable=True`` keeps this optimizer's step count on the device (a WebGPU graph may capture its
    # step). Those that keep it on the host would replay the count of the capture forever: refused under a capture.
    _device_step = False

    def _check_graph_capture(self, group: dict[str, Any]) -> None:
        """torch's check of a step under a CUDA graph capture (RuntimeError), for a WebGPU graph capture."""
        name = type(self).__name__
        if not group["capturable"]:
            fail("device_error_graph_capture", op=f"{name}.step",
                 problem=f"attempting graph capture of step() for an instance of {name} but param_groups' "
                         "capturable is False (its step count lives on the host); pass capturable=True")
        if not self._device_step:
            fail("device_error_graph_capture", op=f"{name}.step",
                 problem=f"{name} keeps its step count on the host even with capturable=True in shapetorch; "
                         "capture Adam, AdamW or SGD, or run this optimizer's step outside the graph")

    def state_dict(self) -> dict[str, Any]:
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}``, as torch."""
        index: dict[int, int] = {}
        groups = []
        start = 0
        for g in self.param_groups:
            ids = list(range(start, start + len(g["params"])))
            for p, i in zip(g["params"], ids):
                index[id(p)] = i
            start += len(ids)
            groups.append({**{k: v for k, v in g.items() if k != "params"}, "params": ids})
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for mine, theirs in zip(self.param_groups, groups):
            if len(mine["params"]) != len(theirs["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                                 "optimizer's group")
        by_index = {i: p for mine, theirs in zip(self.param_groups, groups) for p, i in zip(mine["params"], theirs["params"])}
        self.state = defaultdict(dict)
        for k, s in state_dict["state"].items():
            p = by_index[int(k)]
            self.state[p] = {n: (v.to(p.device).clone() if isinstance(v, Tensor) else deepcopy(v)) for n, v in s.items()}
        for mine, theirs in zip(self.param_groups, groups):
            for k, v in theirs.items():
                if k != "params":
                    mine[k] = tuple(v) if k == "betas" else v

    def __repr__(self) -> str:
        s = type(self).__name__ + " ("
        for i, g in enumerate(self.param_groups):
            s += f"\nParameter Group {i}"
            for k in sorted(g):
                if k != "params":
                    s += f"\n    {k}: {g[k]}"
        return s + "\n)"

    def _fused(self, kind: str, p: Tensor, grad: Tensor, state: list[Tensor], **hyper: float) -> bool:
        """Update ``p`` and ``state`` in place with one kernel where ``p``'s device has one (its backend's
        ``fused_step``); False, with nothing changed, where it does not (then the caller's ops run)."""
        device = p._device
        if (grad._device is not device and grad._device != device) or self.defaults.get("differentiable"):
            return False
        fused = getattr(backend(device.type), "fused_step", None)
        if fused is None:
            return False
        # (each ``_shareable_data()``, its call made only where ``_data`` is a NumPy scalar: never on WebGPU)
        buffers = [t._shareable_data() if isinstance(d := t._data, np.generic) else d for t in state]
        if not fused(kind, p._shareable_data() if isinstance(d := p._data, np.generic) else d, grad._data, buffers,
                     hyper):
            return False
        bump_versions((p, *state))
        return True

    def _grad(self, p: Tensor, group: dict[str, Any]) -> Tensor | None:
        g = p.grad
        if g is None:
            return None
        return -g if group.get("maximize") else g


_DATA = attrgetter("_data")
_GRAD_DATA = attrgetter("_grad._data")
_VERSION = attrgetter("_version")


class _GroupPlan:
    """The plans of one parameter group's step (see ``Optimizer._step_planned``): what they hold of the group, and
    its launches per signature of the buffers they bind (a few: the gradients of a loop whose ``zero_grad`` frees
    them take their buffers from the pool, in two alternating sets, say)."""

    VARIANTS = 4

    def __init__(self, group: dict[str, Any], params: tuple[Tensor, ...], states: list[dict[str, Any] | None],
                 host_steps: bool, signature: Callable[[list[Any]], Any]) -> None:
        self.group, self.params, self.states = group, params, states
        self.signature = signature  # the backend's key of what the launches bind (its ``step_signature``)
        self.dicts = [d for d in states if d is not None]  # (SGD without momentum keeps no state)
        self.held = [v for d in self.dicts for v in d.values()]  # the state's values, each checked by identity
        self.steps = [d["step"] for d in self.dicts] if host_steps else []
        counts = {id(t) for t in self.steps}  # (on the host, bumped by _scalar_step)
        # the state's tensors the launches bind (a capturable count among them), bumped as ``_fused`` bumps them
        self.tensors = [v for v in self.held if isinstance(v, Tensor) and id(v) not in counts]
        self.bumped = [*params, *self.tensors]
        self.variants: dict[Any, Any] = {}
        self.versions: tuple[int, ...] = ()
        self.counts: list[Any] | None = None  # the host counts' arrays, where each is a writable 0-d array

    @staticmethod
    def make(opt: Optimizer, group: dict[str, Any], signature: Callable[[list[Any]], Any]) -> _GroupPlan | None:
        params = tuple(group["params"])
        states = [opt.state.get(p) for p in params]
        host = opt._host_steps(group)
        if host and any(d is None or "step" not in d for d in states):
            return None
        return _GroupPlan(group, params, states, host, signature)

    def add(self, launches: Any) -> bool:
        """Keep ``launches``, just recorded, for the buffers the group binds now; False where they cannot stand
        for a later step (a buffer missing, or step counts that differ between parameters)."""
        sig = self._sig()
        if sig is None or (self.steps and len(set(map(_count, self.steps))) != 1):
            return False
        if len(self.variants) >= self.VARIANTS:
            self.variants.clear()
        self.variants[sig] = launches
        self.versions = tuple(map(_VERSION, self.steps))
        counts = list(map(_DATA, self.steps))
        self.counts = counts if all(type(c) is np.ndarray and not c.shape and c.flags.writeable
                                    for c in counts) else None
        return True

    def _sig(self) -> Any:
        """What the launches bind, as it is now (None where a gradient or a buffer is missing)."""
        try:
            grads = list(map(_GRAD_DATA, self.params))
        except AttributeError:  # (a parameter without a gradient)
            return None
        return self.signature([*map(_DATA, self.params), *grads, *map(_DATA, self.tensors)])

    def stands(self, opt: Optimizer) -> bool:
        """Whether the group still holds the parameters and the state (the very tensors) it was made with."""
        group, dicts = self.group, self.dicts
        return (len(group["params"]) == len(self.params) and all(map(is_, group["params"], self.params))
                and all(map(is_, map(opt.state.get, self.params), self.states))
                and len(self.held) == sum(map(len, dicts))
                and all(map(is_, chain.from_iterable(map(dict.values, dicts)), self.held)))

    def replay(self, opt: Optimizer) -> bool:
        """Step the group by its plan; False, with nothing done, where none stands for this step."""
        if not self.stands(opt) or (self.steps and tuple(map(_VERSION, self.steps)) != self.versions):
            return False
        launches = self.variants.get(self._sig())
        if launches is None:
            return False
        step = _count(self.steps[0]) + 1 if self.steps else 0.0
        hyper = opt._fused_hyper(self.group, step)
        words = launches.words(hyper) if hyper is not None else None
        if words is None:
            return False
        counts = self.counts
        if counts is not None and all(map(is_, map(_DATA, self.steps), counts)):
            for c in counts:  # (_scalar_step's in-place count, with one bump for the group's counters)
                c += 1
            bump_versions(self.steps)
        else:
            for d in self.dicts if self.steps else ():
                _scalar_step(d)
        self.versions = tuple(map(_VERSION, self.steps))
        launches.run(words)
        bump_versions(self.bumped)
        return True


def _count(step: Tensor) -> float:
    """A step count's value (a host count from its array, without ``item()``'s op)."""
    data = step._data
    return float(data) if isinstance(data, (np.ndarray, np.generic)) else float(step.item())


# each optimizer's plans, by the index of their group (weakly: an optimizer's copies and pickles carry none)
_PLANS: WeakKeyDictionary[Optimizer, dict[int, _GroupPlan]] = WeakKeyDictionary()


def _scalar_step(state: dict[str, Any]) -> float:
    """The step count, kept as a float32 0-d tensor as torch does; returns the new count."""
    if "step" not in state:
        state["step"] = tensor(0.0)
    step = state["step"]
    data = step._shareable_data()
    if type(data) is np.ndarray and data.shape == () and data.flags.writeable:
        data += 1  # a CPU count: in place on its array (an op and an item() per parameter per step otherwise)
        step._bump_version()
        return float(data)
    step.add_(1)
    return float(step.item())


class _RealState(MutableMapping[str, Any]):
    """A complex parameter's state as its update reads it: each complex buffer through ``view_as_real`` (a view,
    so the update's in-place ops land in the stored buffer); what the update assigns is stored as given."""

    def __init__(self, state: dict[str, Any]) -> None:
        self._state = state

    def __getitem__(self, key: str) -> Any:
        value = self._state[key]
        return view_as_real(value) if isinstance(value, Tensor) and value.is_complex() else value

    def __setitem__(self, key: str, value: Any) -> None:
        self._state[key] = value

    def __delitem__(self, key: str) -> None:
        del self._state[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._state)

    def __len__(self) -> int:
        return len(self._state)


def _as_real(p: Tensor, grad: Tensor, state: dict[str, Any]) -> tuple[Tensor, Tensor, Any]:
    """torch's adaptive optimizers update a complex parameter as the real pairs ``view_as_real`` shows (the second
    moments are per real and imaginary part, not ``grad * grad`` in complex arithmetic); real ones unchanged."""
    if p._data.dtype.kind != "c":  # (the dtype's kind, without is_complex's two calls: every parameter, every step)
        return p, grad, state
    return view_as_real(p), view_as_real(grad), _RealState(state)
