"""Stateful training workflows against torch: checkpoint and resume mid-training (model, optimizer,
scheduler, RNG) equal to torch's uninterrupted run; clipping with every norm type; gradient accumulation."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch

import shapetorch as st

RNG = np.random.default_rng(13)
X = RNG.standard_normal((8, 4))
Y = RNG.standard_normal((8, 3))
W0 = RNG.standard_normal((3, 4)) * 0.5
B0 = RNG.standard_normal(3) * 0.1

OPTIMIZERS = {
    "SGD": ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    "Adam": ("Adam", {"lr": 0.05, "amsgrad": True}),
    "AdamW": ("AdamW", {"lr": 0.05, "weight_decay": 0.1}),
    "RMSprop": ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True}),
    "Adagrad": ("Adagrad", {"lr": 0.1, "lr_decay": 0.01}),
}


def setup(lib, opt):
    model = lib.nn.Linear(4, 3).double()
    with lib.no_grad():
        model.weight.copy_(lib.tensor(W0))
        model.bias.copy_(lib.tensor(B0))
    cls, kw = OPTIMIZERS[opt]
    optimizer = getattr(lib.optim, cls)(model.parameters(), **kw)
    scheduler = lib.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    return model, optimizer, scheduler


def train(lib, model, optimizer, scheduler, steps):
    x, y = lib.tensor(X), lib.tensor(Y)
    for _ in range(steps):
        optimizer.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        optimizer.step()
        scheduler.step()


@pytest.mark.parametrize("opt", sorted(OPTIMIZERS))
def test_resume_from_a_checkpoint_equals_the_uninterrupted_run(opt):
    """A step count lost on load (Adam's bias correction restarts) drifts away from torch's run."""
    ref = setup(torch, opt)
    train(torch, *ref, steps=6)

    first = setup(st, opt)
    train(st, *first, steps=3)
    buf = io.BytesIO()
    st.save({"model": first[0].state_dict(), "optim": first[1].state_dict(), "sched": first[2].state_dict()}, buf)
    buf.seek(0)
    ckpt = st.load(buf)
    model, optimizer, scheduler = setup(st, opt)
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optim"])
    scheduler.load_state_dict(ckpt["sched"])
    train(st, model, optimizer, scheduler, steps=3)

    np.testing.assert_allclose(model.weight.detach().numpy(), ref[0].weight.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(model.bias.detach().numpy(), ref[0].bias.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert optimizer.param_groups[0]["lr"] == pytest.approx(ref[1].param_groups[0]["lr"])


def test_rng_state_resumes_the_same_random_stream():
    """Dropout after a restored RNG state draws the masks the uninterrupted run drew."""
    st.manual_seed(0)
    x = st.ones(64, dtype=st.float64)
    drop = st.nn.Dropout(0.5)
    drop(x)
    state = st.get_rng_state()
    straight = [drop(x).tolist() for _ in range(3)]
    st.manual_seed(123)  # something else consumed the stream in between
    drop(x)
    st.set_rng_state(state)
    assert [drop(x).tolist() for _ in range(3)] == straight


@pytest.mark.parametrize("norm_type", [0.5, 1.0, 2.0, 3.0, float("inf"), -float("inf")])
@pytest.mark.parametrize("max_norm", [0.1, 1e6])
def test_clip_grad_norm_every_norm_type(norm_type, max_norm):
    grads = [RNG.standard_normal((3, 4)), RNG.standard_normal(5) * 10, np.array([0.0, -7.5])]
    got = {}
    for lib in (st, torch):
        ps = [lib.zeros(g.shape, dtype=lib.float64, requires_grad=True) for g in grads]
        for p, g in zip(ps, grads):
            p.grad = lib.tensor(g)
        total = lib.nn.utils.clip_grad_norm_(ps, max_norm, norm_type=norm_type)
        got[lib.__name__] = (float(total), [p.grad.numpy().copy() for p in ps])
    assert got["shapetorch"][0] == pytest.approx(got["torch"][0], rel=1e-12)
    for a, b in zip(got["shapetorch"][1], got["torch"][1]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_clip_grad_value():
    for lib in (st, torch):
        p = lib.zeros(4, dtype=lib.float64, requires_grad=True)
        p.grad = lib.tensor([-3.0, 0.5, 2.0, -0.25], dtype=lib.float64)
        lib.nn.utils.clip_grad_value_([p], 1.0)
        assert p.grad.tolist() == [-1.0, 0.5, 1.0, -0.25]


@pytest.mark.parametrize("micro", [1, 2, 4])
def test_gradient_accumulation_equals_the_full_batch(micro):
    """Summed micro-batch losses scaled by their share accumulate into the full batch's gradient."""
    results = {}
    for lib in (st, torch):
        model, optimizer, _ = setup(lib, "SGD")
        optimizer.zero_grad()
        x, y = lib.tensor(X), lib.tensor(Y)
        for xs, ys in zip(x.chunk(micro), y.chunk(micro)):
            (((model(xs) - ys) ** 2).mean() / micro).backward()
        results[lib.__name__] = [p.grad.numpy().copy() for p in model.parameters()]
        optimizer.step()
        results[lib.__name__ + "_after"] = [p.detach().numpy().copy() for p in model.parameters()]
    for a, b in zip(results["shapetorch"], results["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    for a, b in zip(results["shapetorch_after"], results["torch_after"]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
