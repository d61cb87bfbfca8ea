"""``nn.utils``: clip_grad_value_, parameters_to_vector and vector_to_parameters against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import shapetorch as st


def _params(lib, grads=True):
    rng = np.random.default_rng(0)
    ps = [lib.nn.Parameter(lib.tensor(rng.normal(size=s))) for s in ((2, 3), (4,), (1, 1))]
    if grads:
        for p, s in zip(ps[:2], (3.0, 0.2)):
            p.grad = lib.tensor(np.linspace(-4, 4, p.numel()).reshape(tuple(p.shape)) * s)  # both signs, past clip
    return ps  # the last parameter has no gradient


@pytest.mark.parametrize("clip", [0.5, 1, 10.0])
def test_clip_grad_value_as_torch(clip):
    ours, theirs = _params(st), _params(torch)
    assert st.nn.utils.clip_grad_value_(ours, clip) is None
    torch.nn.utils.clip_grad_value_(theirs, clip)
    for a, b in zip(ours, theirs):
        assert (a.grad is None) == (b.grad is None)
        if a.grad is not None:
            np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
    one, other = _params(st)[0], _params(torch)[0]  # a single tensor is taken too
    st.nn.utils.clip_grad_value_(one, clip)
    torch.nn.utils.clip_grad_value_(other, clip)
    np.testing.assert_array_equal(one.grad.numpy(), other.grad.numpy())


def test_parameters_to_vector_as_torch_with_gradient():
    ours, theirs = _params(st, grads=False), _params(torch, grads=False)
    vs, vt = st.nn.utils.parameters_to_vector(ours), torch.nn.utils.parameters_to_vector(theirs)
    np.testing.assert_array_equal(vs.detach().numpy(), vt.detach().numpy())
    w = np.arange(vt.numel(), dtype=np.float64)
    (vs * st.tensor(w)).sum().backward()
    (vt * torch.tensor(w)).sum().backward()
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


def test_vector_to_parameters_as_torch_views_of_the_vector():
    runs = []
    for lib in (st, torch):
        ps = _params(lib, grads=False)
        vec = lib.arange(12.0, dtype=lib.float64)  # longer than the 11 elements: the rest is unused, as in torch
        lib.nn.utils.vector_to_parameters(vec, ps)
        vec[0] = 100.0  # the parameters are views of vec
        runs.append([p.detach().numpy().copy() for p in ps] + [[p.requires_grad for p in ps]])
    for a, b in zip(*runs):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("vec", ["list", "short"])
def test_vector_to_parameters_refuses_as_torch(vec):
    outcomes = []
    for lib in (st, torch):
        v = [1.0] * 11 if vec == "list" else lib.arange(5.0, dtype=lib.float64)
        with pytest.raises(Exception) as info:
            lib.nn.utils.vector_to_parameters(v, _params(lib, grads=False))
        outcomes.append(info.value)
    ours, theirs = outcomes
    builtin = next(c for c in type(theirs).__mro__ if c.__module__ == "builtins")
    assert isinstance(ours, builtin) and ours.code
    if vec == "list":
        assert str(theirs) in str(ours)
