"""``shapetorch.distributions`` against ``torch.distributions``: log_prob, entropy, shapes and gradients."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
from _oracle import fast


@fast(25)
@given(hs.integers(1, 3), hs.integers(2, 5), hs.booleans(), hs.integers(0, 10_000))
def test_categorical_matches_torch(batch: int, k: int, use_logits: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    raw = rng.normal(size=(batch, k)).astype(np.float32)
    param = raw if use_logits else np.exp(raw)
    value = rng.integers(0, k, size=(4, batch))
    ours_p = st.tensor(param, requires_grad=True)
    theirs_p = torch.tensor(param, requires_grad=True)
    kw = "logits" if use_logits else "probs"
    ours, theirs = st.distributions.Categorical(**{kw: ours_p}), torch.distributions.Categorical(**{kw: theirs_p})
    lo, lt = ours.log_prob(st.tensor(value)), theirs.log_prob(torch.tensor(value))
    np.testing.assert_allclose(lo.detach().numpy(), lt.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours.entropy().detach().numpy(), theirs.entropy().detach().numpy(), rtol=1e-5, atol=1e-6)
    (lo.sum() + ours.entropy().sum()).backward()
    (lt.sum() + theirs.entropy().sum()).backward()
    np.testing.assert_allclose(ours_p.grad.numpy(), theirs_p.grad.numpy(), rtol=1e-4, atol=1e-5)
    assert tuple(ours.sample((3,)).shape) == tuple(theirs.sample((3,)).shape)
    assert ours.batch_shape == tuple(theirs.batch_shape)


def test_normal_matches_torch() -> None:
    loc, scale, x = np.array([0.5, -1.0], np.float32), np.array([1.5, 0.3], np.float32), np.array([0.1, 2.0], np.float32)
    ours = st.distributions.Normal(st.tensor(loc, requires_grad=True), st.tensor(scale))
    theirs = torch.distributions.Normal(torch.tensor(loc, requires_grad=True), torch.tensor(scale))
    np.testing.assert_allclose(ours.log_prob(st.tensor(x)).detach().numpy(), theirs.log_prob(torch.tensor(x)).detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(ours.entropy().numpy(), theirs.entropy().numpy(), rtol=1e-5)
    sample = ours.rsample((5,))
    assert tuple(sample.shape) == (5, 2) and sample.requires_grad


def test_categorical_refuses_both_or_neither() -> None:
    for kwargs in ({}, {"probs": st.ones(2), "logits": st.ones(2)}):
        with pytest.raises(ValueError):
            st.distributions.Categorical(**kwargs)
