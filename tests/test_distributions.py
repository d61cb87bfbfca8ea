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


_A = np.array([0.5, 2.0, 3.0], np.float32)
_B = np.array([1.5, 0.7, 2.0], np.float32)
_U = np.array([0.2, 0.5, 0.9], np.float32)
_C = np.array([[0.5, 2.0, 3.0], [1.0, 1.0, 1.0]], np.float32)
_SIMPLEX = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]], np.float32)
_COUNTS = np.array([0.0, 3.0, 10.0], np.float32)


def _pair(name: str, *args: object, **kwargs: object) -> tuple[object, object, list, list]:
    """The same distribution built in both libraries (numpy arrays become each library's leaf tensors)."""
    def build(lib: object, tensor: object, leaves: list) -> object:
        def conv(a: object) -> object:
            if isinstance(a, np.ndarray):
                leaves.append(tensor(a, requires_grad=True))  # type: ignore[operator]
                return leaves[-1]
            return a
        return getattr(lib.distributions, name)(*map(conv, args), **{k: conv(v) for k, v in kwargs.items()})  # type: ignore[attr-defined]
    ours_leaves: list = []
    theirs_leaves: list = []
    return build(st, st.tensor, ours_leaves), build(torch, torch.tensor, theirs_leaves), ours_leaves, theirs_leaves


NEW = [
    ("Gamma", (_A, _B), {}, np.array([0.3, 1.2, 4.0], np.float32), True),
    ("Beta", (_A, _B), {}, _U, True),
    ("LogNormal", (_A, _B), {}, np.array([0.3, 1.2, 4.0], np.float32), True),
    ("Poisson", (_A,), {}, _COUNTS, False),
    ("Binomial", (10,), {"probs": _U}, _COUNTS, True),
    ("Binomial", (10,), {"logits": _A}, _COUNTS, True),
    ("Dirichlet", (_C,), {}, _SIMPLEX, True),
    ("OneHotCategorical", (_SIMPLEX,), {}, np.eye(3, dtype=np.float32)[[0, 2]], True),
]


@pytest.mark.parametrize(("name", "args", "kwargs", "value", "entropy"), NEW)
def test_more_distributions_match_torch(name: str, args: tuple, kwargs: dict, value: np.ndarray, entropy: bool) -> None:
    ours, theirs, ours_leaves, theirs_leaves = _pair(name, *args, **kwargs)
    lo, lt = ours.log_prob(st.tensor(value)), theirs.log_prob(torch.tensor(value))  # type: ignore[attr-defined]
    np.testing.assert_allclose(lo.detach().numpy(), lt.detach().numpy(), rtol=1e-4, atol=1e-5)
    for attr in ("mean", "variance"):
        np.testing.assert_allclose(getattr(ours, attr).detach().numpy(), getattr(theirs, attr).detach().numpy(),
                                   rtol=1e-4, atol=1e-5)
    if entropy:
        np.testing.assert_allclose(ours.entropy().detach().numpy(), theirs.entropy().detach().numpy(),  # type: ignore[attr-defined]
                                   rtol=1e-4, atol=1e-5)
    assert (tuple(ours.batch_shape), tuple(ours.event_shape)) == (tuple(theirs.batch_shape), tuple(theirs.event_shape))  # type: ignore[attr-defined]
    assert tuple(ours.sample((4,)).shape) == tuple(theirs.sample((4,)).shape)  # type: ignore[attr-defined]
    # gradients of log_prob to the parameters
    lo.sum().backward()
    lt.sum().backward()
    for a, b in zip(ours_leaves, theirs_leaves, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_sample_statistics() -> None:
    st.manual_seed(0)
    g = st.distributions.Gamma(st.tensor(3.0), st.tensor(2.0)).sample((20000,))
    assert abs(float(g.mean()) - 1.5) < 0.05
    d = st.distributions.Dirichlet(st.tensor([1.0, 2.0, 3.0])).sample((5,))
    np.testing.assert_allclose(d.sum(-1).numpy(), 1.0, rtol=1e-5)


@pytest.mark.parametrize("transforms", ["sigmoid", "affine_exp", "tanh"])
def test_transformed_distribution_matches_torch(transforms: str) -> None:
    def parts(lib: object, tensor: object) -> list[object]:
        d = lib.distributions  # type: ignore[attr-defined]
        return {"sigmoid": lambda: [d.SigmoidTransform()],
                "affine_exp": lambda: [d.AffineTransform(tensor(_A), tensor(_B)), d.ExpTransform()],  # type: ignore[operator]
                "tanh": lambda: [d.TanhTransform()]}[transforms]()
    loc = st.tensor(_A, requires_grad=True)
    tloc = torch.tensor(_A, requires_grad=True)
    ours = st.distributions.TransformedDistribution(st.distributions.Normal(loc, st.tensor(_B)), parts(st, st.tensor))
    theirs = torch.distributions.TransformedDistribution(torch.distributions.Normal(tloc, torch.tensor(_B)),
                                                         parts(torch, torch.tensor))
    lo, lt = ours.log_prob(st.tensor(_U)), theirs.log_prob(torch.tensor(_U))
    np.testing.assert_allclose(lo.detach().numpy(), lt.detach().numpy(), rtol=1e-4, atol=1e-5)
    lo.sum().backward()
    lt.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), tloc.grad.numpy(), rtol=1e-4, atol=1e-5)
    sample = ours.rsample((3,))
    assert tuple(sample.shape) == (3, 3) and sample.requires_grad


@pytest.mark.parametrize("cache_size", [0, 1])
def test_transform_cache_size_as_torch(cache_size: int) -> None:
    """The SAC idiom ``TanhTransform(cache_size=1)``: with the cache, ``log_prob`` of the action just sampled
    inverts through the kept pre-tanh value (finite where the float32 tanh rounded to 1); without it atanh(1)
    is inf and the log-density -inf, in both libraries. A ComposeTransform caches its parts; sizes other than
    0 and 1 are torch's ValueError."""
    pre = np.array([[0.3, 20.0, -0.7]], dtype=np.float32)  # tanh(20) is 1.0 in float32

    def run(lib: object, tensor: object) -> tuple[np.ndarray, bool]:
        d = lib.distributions  # type: ignore[attr-defined]
        tanh = d.TanhTransform(cache_size=cache_size)
        dist = d.TransformedDistribution(d.Normal(tensor(np.zeros(3, np.float32)), tensor(np.ones(3, np.float32))),  # type: ignore[operator]
                                         [d.AffineTransform(0.0, 1.0, cache_size=cache_size), tanh])
        x = tensor(pre)  # type: ignore[operator]
        action = tanh(x)
        lp = dist.log_prob(action)
        return lp.detach().numpy(), tanh.inv(action) is x

    (ours, ours_same), (theirs, theirs_same) = run(st, st.tensor), run(torch, torch.tensor)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    assert ours_same == theirs_same == bool(cache_size)
    assert np.isfinite(ours).all() == bool(cache_size)
    assert y_is_cached_part(cache_size)
    with pytest.raises(ValueError, match="cache_size must be 0 or 1") as err:
        st.distributions.ExpTransform(cache_size=2)
    assert err.value.code == "argument_error_invalid_value"  # type: ignore[attr-defined]


def y_is_cached_part(cache_size: int) -> bool:
    """ComposeTransform(parts, cache_size=1) caches each part (a part's inv returns the kept input)."""
    d = st.distributions
    compose = d.ComposeTransform([d.ExpTransform(), d.AffineTransform(1.0, 2.0)], cache_size=cache_size)
    x = st.tensor([0.5, 1.0])
    y = compose(x)
    return (compose.inv(y) is x) == bool(cache_size) and (compose.parts[0].inv(compose.parts[0](x)) is x) == bool(cache_size)


def test_independent_and_kl_pairs_match_torch() -> None:
    D, T = st.distributions, torch.distributions
    o = D.Independent(D.Normal(st.tensor(_C), st.tensor(_SIMPLEX)), 1)
    t = T.Independent(T.Normal(torch.tensor(_C), torch.tensor(_SIMPLEX)), 1)
    assert (tuple(o.batch_shape), tuple(o.event_shape)) == ((2,), (3,))
    np.testing.assert_allclose(o.log_prob(st.tensor(_SIMPLEX)).numpy(), t.log_prob(torch.tensor(_SIMPLEX)).numpy(), rtol=1e-5)
    np.testing.assert_allclose(D.kl_divergence(o, o).numpy(), T.kl_divergence(t, t).numpy(), atol=1e-6)
    with pytest.raises(ValueError):
        D.Independent(D.Normal(st.zeros(2), st.ones(2)), 2)
    for name, p, q in [("Gamma", (_A, _B), (_B, _A)), ("Beta", (_A, _B), (_B, _A)), ("Poisson", (_A,), (_B,))]:
        ours = D.kl_divergence(getattr(D, name)(*map(st.tensor, p)), getattr(D, name)(*map(st.tensor, q)))
        theirs = T.kl_divergence(getattr(T, name)(*map(torch.tensor, p)), getattr(T, name)(*map(torch.tensor, q)))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-4, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("name", ["Gamma", "Beta", "Dirichlet", "LowRankMultivariateNormal"])
def test_has_rsample_flags_match_torch(name: str) -> None:
    assert getattr(st.distributions, name).has_rsample is getattr(torch.distributions, name).has_rsample


@fast(15)
@given(hs.lists(hs.floats(0.05, 30.0), min_size=1, max_size=4), hs.floats(0.2, 5.0), hs.integers(0, 10_000))
def test_gamma_rsample_gradient_is_torchs_implicit_one(conc: list[float], rate: float, seed: int) -> None:
    """For the very sample drawn, d(sum(g * x))/d(concentration, rate) is torch's ``_standard_gamma_grad``
    (the parameters are batched, so each element's gradient is compared, with no sum to cancel errors)."""
    st.manual_seed(seed)
    conc6 = np.tile(np.asarray(conc), (6, 1))
    a = st.tensor(conc6, requires_grad=True)
    r = st.tensor(rate, dtype=st.float64, requires_grad=True)
    x = st.distributions.Gamma(a, r).rsample()
    assert tuple(x.shape) == conc6.shape
    weights = np.random.default_rng(seed).normal(size=tuple(x.shape))
    (x * st.tensor(weights)).sum().backward()
    xs = torch.tensor(x.detach().numpy())
    expected_a = torch.tensor(weights) * torch._standard_gamma_grad(torch.tensor(conc6), xs * rate) / rate
    np.testing.assert_allclose(a.grad.numpy(), expected_a.numpy(), rtol=2e-3, atol=1e-10)
    np.testing.assert_allclose(float(r.grad), float((torch.tensor(weights) * -xs / rate).sum()), rtol=1e-9)


@fast(15)
@given(hs.lists(hs.floats(0.05, 30.0), min_size=2, max_size=4), hs.integers(0, 10_000))
def test_dirichlet_rsample_gradient_is_torchs(conc: list[float], seed: int) -> None:
    from torch.distributions.dirichlet import _Dirichlet_backward

    st.manual_seed(seed)
    conc5 = np.tile(np.asarray(conc), (5, 1))
    c = st.tensor(conc5, requires_grad=True)
    x = st.distributions.Dirichlet(c).rsample()
    np.testing.assert_allclose(x.detach().sum(-1).numpy(), 1.0, rtol=1e-12)
    weights = np.random.default_rng(seed).normal(size=tuple(x.shape))
    (x * st.tensor(weights)).sum().backward()
    xs = torch.tensor(x.detach().numpy())
    expected = _Dirichlet_backward(xs, torch.tensor(conc5), torch.tensor(weights))
    np.testing.assert_allclose(c.grad.numpy(), expected.numpy(), rtol=2e-3, atol=1e-9)


def test_beta_rsample_gradient_is_torchs() -> None:
    from torch.distributions.dirichlet import _Dirichlet_backward

    st.manual_seed(3)
    a = st.tensor(_A.astype(np.float64), requires_grad=True)
    b = st.tensor(_B.astype(np.float64), requires_grad=True)
    x = st.distributions.Beta(a, b).rsample((7,))
    assert tuple(x.shape) == (7, 3) and bool(((x > 0) & (x < 1)).all())
    x.sum().backward()
    xs = torch.tensor(x.detach().numpy())
    pair = torch.stack([torch.tensor(_A, dtype=torch.float64), torch.tensor(_B, dtype=torch.float64)], -1)
    g = torch.stack([torch.ones_like(xs), torch.zeros_like(xs)], -1)
    expected = _Dirichlet_backward(torch.stack([xs, 1 - xs], -1), pair.expand(7, 3, 2), g).sum(0)
    np.testing.assert_allclose(a.grad.numpy(), expected[..., 0].numpy(), rtol=2e-3, atol=1e-7)
    np.testing.assert_allclose(b.grad.numpy(), expected[..., 1].numpy(), rtol=2e-3, atol=1e-7)


def test_gamma_family_rsample_statistics() -> None:
    st.manual_seed(1)
    g = st.distributions.Gamma(st.tensor([3.0]), st.tensor([2.0])).rsample((20000,))
    assert abs(float(g.mean()) - 1.5) < 0.05
    b = st.distributions.Beta(st.tensor(2.0), st.tensor(6.0)).rsample((20000,))
    assert abs(float(b.mean()) - 0.25) < 0.01


_LOW, _HIGH = np.array([0.1, 0.2, -0.1], np.float32), np.array([0.5, 0.9, 0.4], np.float32)
_TRIL = np.array([[[1.0, 0.0, 0.0], [0.5, 1.2, 0.0], [-0.3, 0.2, 0.8]],
                  [[0.7, 0.0, 0.0], [0.1, 0.9, 0.0], [0.4, -0.6, 1.5]]], np.float32)
_LOC2 = np.array([[0.3, -0.2, 1.0], [0.0, 0.5, -1.0]], np.float32)
_W = np.array([[0.5, -1.0], [0.3, 0.2], [1.1, 0.4]], np.float32)


def _builders(shift: float) -> dict[str, tuple[tuple, dict]]:
    """Arguments of one instance per distribution (``shift`` moves the parameters, for a second instance)."""
    s = np.float32(shift)
    return {
        "Normal": ((_A - 1 + s, _B + s), {}), "Laplace": ((_A - 1 - s, _B + s), {}), "Exponential": ((_B + s,), {}),
        "Uniform": ((_LOW - s, _HIGH + s), {}), "Gamma": ((_A + s, _B), {}), "Beta": ((_A, _B + s), {}),
        "Bernoulli": ((_U * (1 - s),), {}), "Poisson": ((_A + s,), {}), "Binomial": ((10,), {"probs": _U * (1 - s)}),
        "Categorical": ((_SIMPLEX[:, ::-1].copy() if s else _SIMPLEX,), {}), "Dirichlet": ((_C + s,), {}),
        "OneHotCategorical": ((_SIMPLEX[:, ::-1].copy() if s else _SIMPLEX,), {}),
        "MultivariateNormal": ((_LOC2 + s,), {"scale_tril": _TRIL + s * np.eye(3, dtype=np.float32)}),
        "LowRankMultivariateNormal": ((_LOC2 - s, _W * (1 + s), _B + s), {}),
        "Cauchy": ((_A - 1 + s, _B + s), {}), "Gumbel": ((_A - 1 - s, _B + s), {}),
        "Geometric": ((_U * (1 - s),), {}), "HalfNormal": ((_B + s,), {}),
        "Pareto": ((_B * 0.5 + s, _A + s), {}),  # (alpha 0.5 and 2: no mean, no variance: infinite KLs)
        # (probs on both sides of 1/2 and one inside torch's Taylor band around it)
        "ContinuousBernoulli": ((np.array([0.2, 0.4995, 0.9], np.float32) * (1 - s) + s / 2,), {}),
    }


def _build(name: str, shift: float) -> tuple[object, object, list, list]:
    if name == "ExponentialFamily":  # (torch's generic Bregman KL: Wishart has no pair of its own)
        spd = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]], np.float32)
        return _pair("Wishart", np.array([3.5, 5.0], np.float32) + shift,
                     covariance_matrix=spd + shift * np.eye(3, dtype=np.float32))
    if name in ("Independent", "TransformedDistribution"):
        o_base, t_base, ol, tl = _pair("Normal", _C + shift, _SIMPLEX + 0.1)
        D, T = st.distributions, torch.distributions
        if name == "Independent":
            return D.Independent(o_base, 1), T.Independent(t_base, 1), ol, tl  # type: ignore[arg-type]
        return (D.TransformedDistribution(o_base, [D.ExpTransform()]),  # type: ignore[arg-type]
                T.TransformedDistribution(t_base, [T.ExpTransform()]), ol, tl)  # type: ignore[arg-type]
    args, kwargs = _builders(shift)[name]
    return _pair(name, *args, **kwargs)


def _ours_and_torchs_pairs() -> list[tuple[str, str]]:
    from torch.distributions.kl import _KL_REGISTRY

    have = set(st.distributions.__all__)
    return sorted((p.__name__, q.__name__) for p, q in _KL_REGISTRY if p.__name__ in have and q.__name__ in have)


def test_kl_registry_has_every_pair_of_torchs_among_our_distributions() -> None:
    from shapetorch.distributions.kl import _KL

    ours = {(p.__name__, q.__name__) for p, q in _KL}
    missing = [pair for pair in _ours_and_torchs_pairs() if pair not in ours]
    assert not missing, missing


@pytest.mark.parametrize(("p_name", "q_name"), _ours_and_torchs_pairs())
def test_kl_pair_matches_torch(p_name: str, q_name: str) -> None:
    """Values (infinite where torch's are) and gradients to p's and q's parameters."""
    po, pt, pol, ptl = _build(p_name, 0.0)
    qo, qt, qol, qtl = _build(q_name, 0.25)
    ko = st.distributions.kl_divergence(po, qo)  # type: ignore[arg-type]
    kt = torch.distributions.kl_divergence(pt, qt)  # type: ignore[arg-type]
    np.testing.assert_allclose(ko.detach().numpy(), kt.detach().numpy(), rtol=1e-4, atol=1e-5)
    finite_o, finite_t = ko.isfinite(), kt.isfinite()
    if ko.requires_grad or kt.requires_grad:
        if ko.requires_grad:
            ko.masked_fill(~finite_o, 0.0).sum().backward()
        if kt.requires_grad:
            kt.masked_fill(~finite_t, 0.0).sum().backward()
        for a, b in zip(pol + qol, ptl + qtl, strict=True):
            ga = np.zeros(a.shape) if a.grad is None else a.grad.numpy()
            gb = np.zeros(tuple(b.shape)) if b.grad is None else b.grad.numpy()
            np.testing.assert_allclose(ga, gb, rtol=1e-3, atol=1e-4)


def test_lognormal_kl_goes_through_transformed_pair() -> None:
    D, T = st.distributions, torch.distributions
    ours = D.kl_divergence(D.LogNormal(st.tensor(_A), st.tensor(_B)), D.LogNormal(st.tensor(_B), st.tensor(_A)))
    theirs = T.kl_divergence(T.LogNormal(torch.tensor(_A), torch.tensor(_B)), T.LogNormal(torch.tensor(_B), torch.tensor(_A)))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5)
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.TransformedDistribution(D.Normal(0.0, 1.0), [D.ExpTransform()]),
                        D.TransformedDistribution(D.Normal(0.0, 1.0), [D.SigmoidTransform()]))


def test_binomial_kl_refuses_a_larger_q_total_count_and_is_infinite_for_a_smaller() -> None:
    D, T = st.distributions, torch.distributions
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Binomial(5, st.tensor(_U)), D.Binomial(10, st.tensor(_U)))
    p_count = np.array([10.0, 12.0, 10.0], np.float32)
    ours = D.kl_divergence(D.Binomial(st.tensor(p_count), st.tensor(_U)), D.Binomial(10, st.tensor(_B / 3)))
    theirs = T.kl_divergence(T.Binomial(torch.tensor(p_count), torch.tensor(_U)), T.Binomial(10, torch.tensor(_B / 3)))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5)


@pytest.mark.parametrize("batch", [(), (2,)])
def test_lowrank_mvn_matches_torch(batch: tuple[int, ...]) -> None:
    rng = np.random.default_rng(len(batch))
    loc, W = rng.normal(size=(*batch, 4)), rng.normal(size=(4, 2))
    D = rng.uniform(0.5, 2.0, size=4)
    value = rng.normal(size=(3, *batch, 4))
    ours, theirs, ol, tl = _pair("LowRankMultivariateNormal", loc, W, D)
    for attr in ("mean", "mode", "variance", "stddev", "scale_tril", "covariance_matrix", "precision_matrix"):
        np.testing.assert_allclose(getattr(ours, attr).detach().numpy(), getattr(theirs, attr).detach().numpy(),
                                   rtol=1e-7, atol=1e-10, err_msg=attr)
    lo, lt = ours.log_prob(st.tensor(value)), theirs.log_prob(torch.tensor(value))  # type: ignore[attr-defined]
    np.testing.assert_allclose(lo.detach().numpy(), lt.detach().numpy(), rtol=1e-7)
    eo, et = ours.entropy(), theirs.entropy()  # type: ignore[attr-defined]
    np.testing.assert_allclose(eo.detach().numpy(), et.detach().numpy(), rtol=1e-7)
    assert (tuple(ours.batch_shape), tuple(ours.event_shape)) == (tuple(theirs.batch_shape), tuple(theirs.event_shape))  # type: ignore[attr-defined]
    (lo.sum() + eo.sum()).backward()
    (lt.sum() + et.sum()).backward()
    for a, b in zip(ol, tl, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-6, atol=1e-9)
    sample = ours.rsample((5,))  # type: ignore[attr-defined]
    assert tuple(sample.shape) == tuple(theirs.rsample((5,)).shape) and sample.requires_grad  # type: ignore[attr-defined]
    sample.sum().backward()
    assert ol[1].grad is not None


def test_lowrank_mvn_sample_covariance() -> None:
    st.manual_seed(0)
    W, D = st.tensor([[1.0], [0.5]]), st.tensor([0.5, 0.2])
    x = st.distributions.LowRankMultivariateNormal(st.zeros(2), W, D).sample((40000,))
    cov = (x.mT @ x / x.shape[0]).numpy()
    np.testing.assert_allclose(cov, (W @ W.mT).numpy() + np.diag(D.numpy()), atol=0.03)


@pytest.mark.parametrize("args", [
    ((), (3, 1), (3,)),  # loc 0-dim
    ((3,), (3,), (3,)),  # cov_factor 1-dim
    ((3,), (2, 1), (3,)),  # cov_factor rows != n
    ((3,), (3, 1), (2,)),  # cov_diag size != n
    ((2, 3), (4, 3, 1), (3,)),  # batch shapes do not broadcast
])
def test_lowrank_mvn_rejects_as_torch(args: tuple) -> None:
    def verdict(lib: object, tensor: object) -> str:
        try:
            lib.distributions.LowRankMultivariateNormal(*(tensor(np.ones(s) if s else 1.0) for s in args))  # type: ignore[attr-defined,operator]
        except ValueError as e:
            return str(e).split(":")[0].split(" (")[0][:30]
        return "accepted"
    assert verdict(st, st.tensor) == verdict(torch, torch.tensor)


def test_lowrank_mvn_validates_cov_diag_as_torch() -> None:
    with pytest.raises(ValueError, match="cov_diag"):
        st.distributions.LowRankMultivariateNormal(st.zeros(2), st.ones(2, 1), st.tensor([1.0, -1.0]))
    with pytest.raises(ValueError, match="cov_diag"):
        torch.distributions.LowRankMultivariateNormal(torch.zeros(2), torch.ones(2, 1), torch.tensor([1.0, -1.0]))


@pytest.mark.parametrize("name", [*sorted(_builders(0.0)), "Independent", "TransformedDistribution", "LogNormal"])
def test_expand_matches_torch(name: str) -> None:
    """``expand`` to a larger batch: shapes, log_prob, entropy where torch has it, and sample shapes."""
    if name == "LogNormal":
        ours, theirs, _, _ = _pair("LogNormal", _A, _B)
    else:
        ours, theirs, _, _ = _build(name, 0.0)
    new_batch = (4, *theirs.batch_shape)  # type: ignore[attr-defined]
    eo, et = ours.expand(new_batch), theirs.expand(new_batch)  # type: ignore[attr-defined]
    assert (tuple(eo.batch_shape), tuple(eo.event_shape)) == (tuple(et.batch_shape), tuple(et.event_shape))
    value = et.sample((2,))
    np.testing.assert_allclose(eo.log_prob(st.tensor(value.numpy())).detach().numpy(), et.log_prob(value).detach().numpy(),
                               rtol=1e-4, atol=1e-5)
    try:
        expected = et.entropy()
    except NotImplementedError:
        expected = None
    if expected is not None:
        np.testing.assert_allclose(eo.entropy().detach().numpy(), expected.detach().numpy(), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(eo.perplexity().detach().numpy(), et.perplexity().detach().numpy(), rtol=1e-4)
    assert tuple(eo.sample((3,)).shape) == tuple(et.sample((3,)).shape)


def test_normal_sample_is_one_normal_draw_without_grad(monkeypatch: pytest.MonkeyPatch) -> None:
    # torch's Normal.sample is torch.normal(loc.expand(shape), scale.expand(shape)) under no_grad: one call of
    # normal, which is what a program replaying torch's draws intercepts (loc + scale * randn gives the same
    # numbers here, so the call itself is what is checked)
    from shapetorch.ops import random

    calls = []
    real_normal = random.normal
    monkeypatch.setattr(random, "normal", lambda *a, **k: calls.append([tuple(t.shape) for t in a]) or real_normal(*a, **k))
    loc = st.tensor([0.0, 10.0], requires_grad=True)
    scale = st.tensor([1.0, 0.001])
    st.manual_seed(3)
    drawn = st.distributions.Normal(loc, scale).sample((4,))
    assert calls == [[(4, 2), (4, 2)]]
    monkeypatch.undo()
    st.manual_seed(3)
    direct = st.normal(loc.detach().expand(4, 2), scale.expand(4, 2))
    assert tuple(drawn.shape) == (4, 2) and not drawn.requires_grad
    np.testing.assert_array_equal(drawn.numpy(), direct.numpy())
