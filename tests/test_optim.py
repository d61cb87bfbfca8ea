"""Optimizers and lr schedulers against torch: the same parameters and gradients, step by step."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as hs

import shapetorch as st
from shapetorch import nn, optim


def run_both(name, kwargs, steps=6):
    rng = np.random.default_rng(0)
    a0, b0 = rng.normal(size=(3, 4)), rng.normal(size=(4,))
    ps = [nn.Parameter(st.tensor(a0)), nn.Parameter(st.tensor(b0))]
    pt = [torch.nn.Parameter(torch.tensor(a0)), torch.nn.Parameter(torch.tensor(b0))]
    os_ = getattr(optim, name)(ps, **kwargs)
    ot = getattr(torch.optim, name)(pt, **kwargs)
    x = rng.normal(size=(5, 3))
    for _ in range(steps):
        for o, p, lib in ((os_, ps, st), (ot, pt, torch)):
            o.zero_grad()
            y = (lib.tensor(x) @ p[0] + p[1]).tanh()
            (y * y).sum().backward()
            o.step()
    for p, q in zip(ps, pt):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-10, atol=1e-12)
    return os_, ot


CONFIGS = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.1, "momentum": 0.8, "nesterov": True, "maximize": True}),
    ("Adam", {"lr": 0.05}),
    ("Adam", {"lr": 0.05, "betas": (0.8, 0.9), "weight_decay": 0.1, "amsgrad": True}),
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.3, "amsgrad": True}),
    # torch's implementation flags (CPU accepts foreach and fused): the same trajectory
    ("Adam", {"lr": 0.05, "weight_decay": 0.1, "foreach": True}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.1, "fused": True, "maximize": True}),
    ("AdamW", {"lr": 0.05, "foreach": False, "amsgrad": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01, "foreach": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "fused": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1, "initial_accumulator_value": 0.5}),
    ("NAdam", {"lr": 0.05}),
    ("NAdam", {"lr": 0.05, "betas": (0.8, 0.9), "weight_decay": 0.1, "momentum_decay": 0.01, "maximize": True}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.05}),
    ("RAdam", {"lr": 0.05, "betas": (0.5, 0.6), "weight_decay": 0.1}),  # rho_t > 5 from step 4 on
    ("RAdam", {"lr": 0.05, "betas": (0.5, 0.6), "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("Adamax", {"lr": 0.05}),
    ("Adamax", {"lr": 0.05, "betas": (0.7, 0.9), "weight_decay": 0.1, "maximize": True}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-4, "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.05}),
    ("ASGD", {"lr": 0.05, "lambd": 0.1, "alpha": 0.5, "t0": 2, "weight_decay": 0.1}),
]


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CONFIGS)])
def test_optimizer_matches_torch(name, kwargs):
    run_both(name, kwargs)


def test_optimizer_state_dict_round_trip_and_resume():
    os_, ot = run_both("Adam", {"lr": 0.05}, steps=3)
    sd = os_.state_dict()
    assert list(sd["state"]) == list(ot.state_dict()["state"]) == [0, 1]
    assert set(sd["state"][0]) == set(ot.state_dict()["state"][0])
    assert sd["param_groups"][0]["params"] == [0, 1]
    p2 = [nn.Parameter(t.detach().clone()) for t in os_.param_groups[0]["params"]]
    o2 = optim.Adam(p2, lr=0.5)
    o2.load_state_dict(sd)
    assert o2.param_groups[0]["lr"] == 0.05
    np.testing.assert_array_equal(o2.state[p2[0]]["exp_avg"].numpy(), sd["state"][0]["exp_avg"].numpy())
    assert o2.state[p2[0]]["exp_avg"] is not sd["state"][0]["exp_avg"]


RESUMABLE = [("NAdam", {"lr": 0.05}), ("RAdam", {"lr": 0.05, "betas": (0.5, 0.6)}), ("Adamax", {"lr": 0.05}),
             ("Adadelta", {"lr": 0.5}), ("ASGD", {"lr": 0.05, "lambd": 0.1, "t0": 2})]


@pytest.mark.parametrize("name,kwargs", RESUMABLE, ids=[n for n, _ in RESUMABLE])
def test_new_optimizers_resume_from_state_dict_as_torch(name, kwargs):
    """Three steps, a state_dict saved and loaded into a fresh optimizer (of shapetorch and of torch, from
    the other library's state), three more steps: still torch's parameters."""
    os_, ot = run_both(name, kwargs, steps=3)
    assert {k: set(v) for k, v in os_.state_dict()["state"].items()} == \
        {k: set(v) for k, v in ot.state_dict()["state"].items()}
    ps = [nn.Parameter(p.detach().clone()) for p in os_.param_groups[0]["params"]]
    pt = [torch.nn.Parameter(p.detach().clone()) for p in ot.param_groups[0]["params"]]
    o2, t2 = getattr(optim, name)(ps, lr=1.0), getattr(torch.optim, name)(pt, lr=1.0)
    o2.load_state_dict({"state": {k: {n: st.tensor(v.numpy()) for n, v in s.items()}
                                  for k, s in ot.state_dict()["state"].items()},
                        "param_groups": ot.state_dict()["param_groups"]})
    t2.load_state_dict({"state": {k: {n: torch.tensor(v.numpy()) for n, v in s.items()}
                                  for k, s in os_.state_dict()["state"].items()},
                        "param_groups": os_.state_dict()["param_groups"]})
    x = np.random.default_rng(1).normal(size=(5, 3))
    for _ in range(3):
        for o, p, lib in ((o2, ps, st), (t2, pt, torch)):
            o.zero_grad()
            ((lib.tensor(x) @ p[0] + p[1]).tanh() ** 2).sum().backward()
            o.step()
    for p, q in zip(ps, pt):  # float64 rounding of the two libraries, six steps deep
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("kwargs", [{}, {"lr": 0.5, "max_iter": 4, "history_size": 2}, {"tolerance_grad": 1e-2}])
def test_lbfgs_matches_torch(kwargs):
    rng = np.random.default_rng(0)
    a0, b0, x = rng.normal(size=(3, 4)), rng.normal(size=(4,)), rng.normal(size=(6, 3))
    target = rng.normal(size=(6, 4))
    runs = []
    for lib, mod in ((st, optim), (torch, torch.optim)):
        p = [lib.nn.Parameter(lib.tensor(a0)), lib.nn.Parameter(lib.tensor(b0))]
        o = mod.LBFGS(p, **kwargs)

        def closure(lib=lib, p=p, o=o):
            o.zero_grad()
            loss = ((lib.tensor(x) @ p[0] + p[1]) - lib.tensor(target)).pow(2).mean() + 0.1 * p[0].pow(4).sum()
            loss.backward()
            return loss

        losses = [o.step(closure).item() for _ in range(3)]
        runs.append((p, losses, o.state[p[0]]))
    (ps, ls, ss), (pt, lt, stt) = runs
    np.testing.assert_allclose(ls, lt, rtol=1e-8)
    assert ls[-1] < ls[0]
    for a, b in zip(ps, pt):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-8, atol=1e-10)
    assert (ss["func_evals"], ss["n_iter"]) == (stt["func_evals"], stt["n_iter"])
    assert set(ss) == set(stt)


def _lbfgs_calls(lib, mod, problem, dtype, kwargs, steps=3):
    """Every closure call of a strong-Wolfe L-BFGS run: the point, the loss; then the state after each step."""
    x0 = np.array([-1.5, 2.0, 0.5, -0.7, 1.2])
    p = lib.nn.Parameter(lib.tensor(x0, dtype=getattr(lib, dtype)))
    o = mod.LBFGS([p], line_search_fn="strong_wolfe", **kwargs)
    calls, states = [], []

    def closure():
        o.zero_grad()
        if problem == "rosenbrock":
            loss = (100 * (p[1:] - p[:-1] ** 2) ** 2 + (1 - p[:-1]) ** 2).sum()
        else:
            loss = (p.sin() * p).sum() + 0.1 * (p ** 4).sum()
        loss.backward()
        calls.append((p.detach().numpy().copy(), loss.item()))
        return loss

    for _ in range(steps):
        o.step(closure)
        s = o.state[p]
        states.append((s["func_evals"], s["n_iter"], float(s["t"]), len(s["old_dirs"])))
    return calls, states


@pytest.mark.parametrize("problem", ["rosenbrock", "wavy"])
@pytest.mark.parametrize("kwargs", [{}, {"lr": 0.01}, {"lr": 20.0, "max_iter": 6}, {"max_iter": 5, "history_size": 2},
                                    {"tolerance_change": 1e-3}])
def test_lbfgs_strong_wolfe_matches_torch_step_by_step(problem, kwargs):
    """float64: the same points evaluated in the same order, the same counts, steps and history. Rosenbrock's
    valley magnifies a last-bit difference (torch's add_ with alpha is fused) over many iterations, so it runs one
    step (up to 20 iterations) there."""
    steps = 1 if problem == "rosenbrock" else 3
    (ours, our_states), (theirs, their_states) = (_lbfgs_calls(st, optim, problem, "float64", kwargs, steps),
                                                   _lbfgs_calls(torch, torch.optim, problem, "float64", kwargs, steps))
    rtol = 1e-6 if problem == "rosenbrock" else 1e-9
    assert len(ours) == len(theirs)
    for (x, f), (y, g) in zip(ours, theirs):
        np.testing.assert_allclose(x, y, rtol=rtol, atol=1e-12)
        np.testing.assert_allclose(f, g, rtol=rtol, atol=1e-12)
    assert [s[:2] + s[3:] for s in our_states] == [s[:2] + s[3:] for s in their_states]
    np.testing.assert_allclose([s[2] for s in our_states], [s[2] for s in their_states], rtol=rtol)


def test_lbfgs_strong_wolfe_cases_reach_the_search():
    """The cases above take more than one evaluation per iteration: the search extrapolates and zooms."""
    for kwargs in ({"lr": 0.01}, {"lr": 20.0, "max_iter": 6}):
        _, states = _lbfgs_calls(torch, torch.optim, "rosenbrock", "float64", kwargs, steps=1)
        assert states[0][0] > states[0][1] + 1


def test_lbfgs_strong_wolfe_float32_close_to_torch():
    """float32 on a well-conditioned problem: torch's add_ with alpha rounds once (fused), shapetorch's twice,
    so the points agree to float32 rounding rather than bit for bit (docs/compatibility.md)."""
    (ours, our_states), (theirs, their_states) = (_lbfgs_calls(st, optim, "wavy", "float32", {}),
                                                   _lbfgs_calls(torch, torch.optim, "wavy", "float32", {}))
    assert [s[:2] for s in our_states] == [s[:2] for s in their_states]
    np.testing.assert_allclose(ours[-1][0], theirs[-1][0], rtol=1e-5, atol=1e-6)


def test_lbfgs_unknown_line_search_is_refused_at_step():
    for lib, mod in ((st, optim), (torch, torch.optim)):
        p = lib.nn.Parameter(lib.ones(2))
        o = mod.LBFGS([p], line_search_fn="backtracking")  # accepted here, refused when a step would use it

        def closure(p=p, o=o):
            o.zero_grad()
            loss = (p ** 2).sum()
            loss.backward()
            return loss

        with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
            o.step(closure)


def test_lbfgs_refuses_what_it_does_not_do():
    p = nn.Parameter(st.ones(2))
    with pytest.raises(ValueError, match="per-parameter options"):
        optim.LBFGS([{"params": [p]}, {"params": [nn.Parameter(st.ones(1))]}])
    with pytest.raises(ValueError, match="Invalid rho value"):
        optim.Adadelta([p], rho=1.5)
    with pytest.raises(ValueError, match="Invalid momentum_decay value"):
        optim.NAdam([p], momentum_decay=-1.0)


def test_zero_grad_set_to_none_and_param_groups():
    a, b = nn.Parameter(st.ones(2)), nn.Parameter(st.ones(3))
    o = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in o.param_groups] == [0.1, 0.5]
    (a.sum() + b.sum()).backward()
    o.step()
    np.testing.assert_allclose(a.detach().numpy(), 0.9)
    np.testing.assert_allclose(b.detach().numpy(), 0.5)
    o.zero_grad(set_to_none=False)
    assert a.grad is not None and not a.grad.numpy().any()
    o.zero_grad()
    assert a.grad is None
    with pytest.raises(ValueError):
        optim.SGD([a], lr=0.1, nesterov=True)
    with pytest.raises(ValueError):
        optim.Adam([a], lr=-1.0)


SCHEDULERS = [
    ("StepLR", {"step_size": 3, "gamma": 0.5}),
    ("MultiStepLR", {"milestones": [2, 5, 5], "gamma": 0.3}),
    ("ExponentialLR", {"gamma": 0.9}),
    ("CosineAnnealingLR", {"T_max": 4, "eta_min": 0.01}),
    ("LinearLR", {"start_factor": 0.2, "total_iters": 4}),
    ("LambdaLR", {"lr_lambda": lambda e: 1 / (1 + e)}),
    ("OneCycleLR", {"max_lr": 1.0, "total_steps": 12}),
    ("OneCycleLR", {"max_lr": 1.0, "total_steps": 12, "anneal_strategy": "linear", "three_phase": True}),
]


@pytest.mark.parametrize("name,kwargs", SCHEDULERS, ids=[n + str(i) for i, (n, _) in enumerate(SCHEDULERS)])
@pytest.mark.parametrize("opt", ["SGD", "Adam"])
def test_scheduler_matches_torch(name, kwargs, opt):
    ps, pt = nn.Parameter(st.ones(1)), torch.nn.Parameter(torch.ones(1))
    extra = {"momentum": 0.9} if opt == "SGD" else {}
    os_ = getattr(optim, opt)([ps], lr=0.1, **extra)
    ot = getattr(torch.optim, opt)([pt], lr=0.1, **extra)
    ss = getattr(optim.lr_scheduler, name)(os_, **kwargs)
    stt = getattr(torch.optim.lr_scheduler, name)(ot, **kwargs)
    for _ in range(11):
        np.testing.assert_allclose(ss.get_last_lr(), stt.get_last_lr(), rtol=1e-12)
        for key in ("momentum", "betas"):
            if key in ot.param_groups[0]:
                np.testing.assert_allclose(os_.param_groups[0][key], ot.param_groups[0][key], rtol=1e-12)
        os_.step()
        ot.step()
        ss.step()
        stt.step()
    state = ss.state_dict()
    assert state["last_epoch"] == 11 and "optimizer" not in state


@settings(max_examples=60, deadline=None)
@given(hs.integers(0, 2**32 - 1), hs.sampled_from([1e-3, 0.1, 1.0, 10.0, 1e3]),
       hs.sampled_from(["float64", "float32"]))
def test_strong_wolfe_search_as_torchs(seed, t0, dtype):
    """The line search alone, on one objective whose values both libraries read from NumPy: the same steps tried
    in the same order (extrapolating, then zooming), the same step, loss and count returned."""
    from torch.optim.lbfgs import _strong_wolfe as torch_search

    from shapetorch.optim.lbfgs import _strong_wolfe as our_search

    rng = np.random.default_rng(seed)
    n = 4
    x0, a, b, k = rng.normal(size=n), rng.uniform(0.01, 1, n), rng.normal(size=n), rng.uniform(0.5, 4, n)

    def coarse(v):
        """v on a grid of 2**-10 of its largest entry, so each dot of two such vectors is exact in float32: the
        libraries' BLAS sum in different orders (MKL's sdot and OpenBLAS's round a 4-term dot differently in a
        third of draws), and the search's branches would otherwise turn on that last bit, not on its logic."""
        step = 2.0 ** (np.frexp(np.abs(v).max())[1] - 11)
        return np.round(v / step) * step

    def value(z):
        g = 4 * a * z ** 3 + 2 * b * z + k * np.cos(k * z)
        return float((a * z ** 4 + b * z ** 2 + np.sin(k * z)).sum()), coarse(g)

    f0, g0 = value(x0)
    d0 = coarse(-g0 * rng.uniform(0.2, 2))
    runs = []
    for lib, search in ((torch, torch_search), (st, our_search)):
        tried = []
        as_t = lambda v, lib=lib: lib.tensor(np.asarray(v, dtype=dtype))  # noqa: E731

        def obj(x, t, d, tried=tried, as_t=as_t):
            t_val = float(t)
            tried.append(t_val)
            f, g = value(x0 + t_val * d0)
            return f, as_t(g)

        g, d = as_t(g0), as_t(d0)
        f, g_new, t, evals = search(obj, None, t0, d, f0, g, g.dot(d))
        runs.append((tried, f, g_new.numpy(), float(t), evals))
    (tt, ft, gt, t_t, et), (ts, fs, gs, t_s, es) = runs
    assert et == es and len(tt) == len(ts)
    # float64: the same steps to rounding. float32: the steps are interpolated inside brackets whose ends start at
    # t0's scale, so their rounding is t0's, not the step's own (t0 = 1e3: steps of 0.3 agree to 4e-5); and a step
    # that differs by rounding can read a gradient one grid unit away (``coarse``), which the next interpolation
    # carries (a step of 5.24 moved 3e-3): the trials and the count stay the same, the values agree to 1e-3
    rtol = 1e-10 if dtype == "float64" else 1e-3
    atol = 8 * t0 * float(np.finfo(dtype).eps)
    np.testing.assert_allclose(ts, tt, rtol=rtol, atol=atol)
    np.testing.assert_allclose(t_s, t_t, rtol=rtol, atol=atol)
    # each loss and gradient is the objective's at the step returned; the two steps agree to float32's rounding,
    # which a steep objective (t0 = 1e3) magnifies in the losses and gradients, so those are compared through the steps
    for f, g, t in ((fs, gs, t_s), (ft, gt, t_t)):
        at = value(x0 + t * d0)
        assert f == at[0]
        np.testing.assert_array_equal(g, np.asarray(at[1], dtype=dtype))


def _momentum_optimizer(base):
    """A hand-written optimizer the way users write one: it reads ``self.state[p]`` and fills it when empty."""

    class Momentum(base):
        def __init__(self, params, lr):
            super().__init__(params, {"lr": lr})

        def step(self):
            for group in self.param_groups:
                for p in group["params"]:
                    state = self.state[p]
                    if len(state) == 0:
                        state["buf"] = p.grad.clone()
                    else:
                        state["buf"].mul_(0.9).add_(p.grad)
                    p.data.add_(state["buf"], alpha=-group["lr"])

    return Momentum


def test_hand_written_optimizer_reads_state_of_a_new_parameter() -> None:
    # torch's Optimizer.state is a defaultdict(dict), also after load_state_dict
    results = []
    for lib, mod in ((st, optim), (torch, torch.optim)):
        p = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
        o = _momentum_optimizer(mod.Optimizer)([p], lr=0.1)
        for _ in range(3):
            o.zero_grad()
            (p * p).sum().backward()
            o.step()
        o.load_state_dict(o.state_dict())
        assert o.state[lib.nn.Parameter(lib.zeros(1))] == {}
        results.append(p.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)


@pytest.mark.parametrize("name", ["Adam", "AdamW", "RMSprop", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop", "Adadelta"])
def test_capturable_step_on_cpu_is_refused_as_in_torch(name: str) -> None:
    # torch accepts the flag at construction and asserts at the step: no CPU step is capturable
    for lib in (st, torch):
        p = lib.nn.Parameter(lib.ones(2))
        o = getattr(lib.optim, name)([p], lr=0.1, capturable=True)
        p.sum().backward()
        with pytest.raises(AssertionError, match="If capturable=True, params"):
            o.step()


@pytest.mark.parametrize("name", ["Adam", "SGD", "RMSprop", "Adagrad"])
def test_differentiable_step_records_its_update_as_in_torch(name: str) -> None:
    # torch's differentiable step runs with grad enabled: a leaf parameter's in-place update is refused...
    for lib in (st, torch):
        p = lib.nn.Parameter(lib.ones(2))
        o = getattr(lib.optim, name)([p], lr=0.1, differentiable=True)
        p.sum().backward()
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
            o.step()


def test_differentiable_sgd_differentiates_through_its_steps() -> None:
    # ...and a non-leaf parameter (meta-learning) is accepted, its updates differentiable back to the leaf
    grads = []
    for lib in (st, torch):
        w = lib.tensor([1.0, -2.0], requires_grad=True)
        p = w * 1.0
        o = lib.optim.SGD([p], lr=0.1, momentum=0.9, differentiable=True)
        for _ in range(2):
            p.grad, = lib.autograd.grad((p * p).sum(), p, create_graph=True)
            o.step()
        p.sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)


@pytest.mark.parametrize("name, options", [
    ("Adam", {}), ("RMSprop", {}),
    ("RMSprop", {"momentum": 0.5}), ("Adagrad", {}), ("NAdam", {}),
])
def test_differentiable_adaptive_steps_with_weight_decay_differentiate_as_torch(name: str, options: dict) -> None:
    # weight decay makes the gradient depend on the non-leaf parameter, so the step's own ops are recorded: a
    # result saved for the backward (sqrt's output, a quotient's numerator) must not be updated in place afterwards
    # (torch adds eps out of place and clones exp_avg when differentiable); two steps, as the second one updates
    # what the first saved
    got = []
    for lib in (st, torch):
        w = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        p = w * 2
        o = getattr(lib.optim, name)([p], lr=0.1, weight_decay=0.1, differentiable=True, **options)
        for _ in range(2):
            p.grad, = lib.autograd.grad((p ** 3).sum(), p)
            o.step()
        (p ** 2).sum().backward()
        got.append((p.detach().numpy(), w.grad.numpy()))
    np.testing.assert_allclose(got[0][0], got[1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name, options", [("Adam", {"amsgrad": True}), ("RMSprop", {"centered": True})])
def test_differentiable_steps_torch_cannot_differentiate_twice_are_refused_alike(name: str, options: dict) -> None:
    # amsgrad's running maximum saves exp_avg_sq, centered RMSprop's grad_avg is saved and lerped in place: torch
    # 2.13 refuses the backward through two such steps, and so does shapetorch (a RuntimeError, same message)
    for lib in (st, torch):
        w = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        p = w * 2
        o = getattr(lib.optim, name)([p], lr=0.1, weight_decay=0.1, differentiable=True, **options)
        for _ in range(2):
            p.grad, = lib.autograd.grad((p ** 3).sum(), p)
            o.step()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            (p ** 2).sum().backward()


COMPLEX_CONFIGS = [c for i, c in enumerate(CONFIGS) if i in (1, 5, 7, 14, 16, 18, 21, 24, 26, 28)] + [
    ("Rprop", {"lr": 0.05})]


@pytest.mark.parametrize("name,kwargs", COMPLEX_CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(COMPLEX_CONFIGS)])
def test_optimizer_steps_complex_parameters_as_torch(name, kwargs):
    """torch steps a complex parameter as its view_as_real pairs (each part its own second moment); an update in
    complex arithmetic (grad * grad) moved the imaginary parts the wrong way. A spectral layer's weights."""
    rng = np.random.default_rng(1)
    w0 = rng.normal(size=(3, 4)) + 1j * rng.normal(size=(3, 4))
    x = rng.normal(size=(5, 3)) + 1j * rng.normal(size=(5, 3))
    ps, pt = nn.Parameter(st.tensor(w0)), torch.nn.Parameter(torch.tensor(w0))
    os_, ot = getattr(optim, name)([ps], **kwargs), getattr(torch.optim, name)([pt], **kwargs)
    for _ in range(5):
        for o, p, lib in ((os_, ps, st), (ot, pt, torch)):
            o.zero_grad()
            (lib.tensor(x) @ p).abs().pow(2).sum().backward()
            o.step()
    np.testing.assert_allclose(ps.detach().numpy(), pt.detach().numpy(), rtol=1e-10, atol=1e-12)
    for key, value in ot.state[pt].items():
        np.testing.assert_allclose(np.asarray(os_.state[ps][key].detach().numpy()), value.detach().numpy(),
                                   rtol=1e-10, atol=1e-12, err_msg=key)


def test_differentiable_step_of_a_complex_leaf_is_refused_as_in_torch():
    """differentiable=True keeps grad mode on, so the in-place update of the leaf's real view is refused (torch too)."""
    for lib in (torch, st):
        p = lib.nn.Parameter(lib.ones(3, dtype=lib.cdouble))
        opt = lib.optim.Adam([p], lr=0.1, differentiable=True)
        (p.abs() ** 2).sum().backward()
        with pytest.raises(RuntimeError, match="view of a leaf Variable"):
            opt.step()
