"""Rprop, Adafactor and SparseAdam against torch: trajectories over several steps from the same parameters,
the state torch keeps, and the arguments and gradients torch refuses."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import shapetorch as st


def _run(name, kwargs, steps=8, shapes=((3, 4), (4,), (2, 3, 2))):
    rng = np.random.default_rng(0)
    init = [rng.normal(size=s) for s in shapes]
    ps = [st.nn.Parameter(st.tensor(a)) for a in init]
    pt = [torch.nn.Parameter(torch.tensor(a)) for a in init]
    os_, ot = getattr(st.optim, name)(ps, **kwargs), getattr(torch.optim, name)(pt, **kwargs)
    x = rng.normal(size=(5, 3))
    for step in range(steps):
        for o, p, lib in ((os_, ps, st), (ot, pt, torch)):
            o.zero_grad()
            y = (lib.tensor(x) @ p[0] + p[1]).tanh()
            ((y * y).sum() + (p[2] ** 3).sum() * 0.1).backward()
            o.step()
        for i, (a, b) in enumerate(zip(ps, pt)):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12,
                                       err_msg=f"param {i} after step {step + 1}")
    return os_, ot


RPROP = [{}, {"lr": 0.05}, {"lr": 0.1, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2)},
         {"maximize": True, "foreach": False}, {"lr": 0.02, "capturable": False, "differentiable": False}]


@pytest.mark.parametrize("kwargs", RPROP)
def test_rprop_trajectory_as_torch(kwargs):
    os_, ot = _run("Rprop", kwargs)
    ss, ts = os_.state_dict(), ot.state_dict()
    assert ss["state"].keys() == ts["state"].keys()
    for i in ts["state"]:
        assert list(ss["state"][i]) == list(ts["state"][i]) == ["step", "prev", "step_size"]
        for k in ("prev", "step_size"):
            np.testing.assert_allclose(ss["state"][i][k].numpy(), ts["state"][i][k].numpy(), rtol=1e-10, atol=1e-14)
        assert float(ss["state"][i]["step"]) == float(ts["state"][i]["step"])
    assert ss["param_groups"][0].keys() == ts["param_groups"][0].keys()


ADAFACTOR = [{}, {"lr": 0.05}, {"lr": 0.5, "beta2_decay": -0.5, "eps": (1e-20, 1e-2), "d": 1.5},
             {"weight_decay": 0.1, "maximize": True}, {"lr": 0.2, "eps": (None, 0.5)}]


@pytest.mark.parametrize("kwargs", ADAFACTOR)
def test_adafactor_trajectory_as_torch(kwargs):
    os_, ot = _run("Adafactor", kwargs)
    ss, ts = os_.state_dict(), ot.state_dict()
    for i in ts["state"]:
        assert list(ss["state"][i]) == list(ts["state"][i])  # row_var/col_var for matrices, variance for vectors
        for k, v in ts["state"][i].items():
            np.testing.assert_allclose(np.asarray(ss["state"][i][k].numpy()), v.numpy(), rtol=1e-10, atol=1e-14)
    assert ss["param_groups"][0].keys() == ts["param_groups"][0].keys()


@pytest.mark.parametrize(("name", "kwargs", "match"), [
    ("Rprop", {"lr": -1.0}, "Invalid learning rate"),
    ("Rprop", {"etas": (1.1, 1.2)}, "Invalid eta values"),
    ("Adafactor", {"lr": -1.0}, "Learning rate should be >= 0"),
    ("Adafactor", {"beta2_decay": 0.5}, "beta2_decay should be <= 0"),
    ("Adafactor", {"eps": (-1.0, 1e-3)}, "epsilon1 should be >= 0"),
    ("Adafactor", {"eps": (None, -1.0)}, "epsilon2 should be >= 0"),
    ("Adafactor", {"d": 0.5}, "Clipping threshold d should be >= 1"),
    ("Adafactor", {"weight_decay": -0.1}, "weight_decay should be >= 0"),
    ("SparseAdam", {"lr": 0.0}, "Invalid learning rate"),
    ("SparseAdam", {"eps": 0.0}, "Invalid epsilon value"),
    ("SparseAdam", {"betas": (1.0, 0.9)}, "Invalid beta parameter at index 0"),
])
def test_bad_arguments_refused_as_torch(name, kwargs, match):
    for lib in (st, torch):
        with pytest.raises(ValueError, match=match):
            getattr(lib.optim, name)([lib.nn.Parameter(lib.zeros(2))], **kwargs)


def test_sparse_adam_refuses_dense_gradients_as_torch():
    for lib in (st, torch):
        p = lib.nn.Parameter(lib.zeros(3))
        opt = lib.optim.SparseAdam([p])
        opt.step()  # no gradient yet: nothing to do
        p.grad = lib.ones(3)
        with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
            opt.step()
