"""The distribution families beyond the common ones (Cauchy, HalfNormal, HalfCauchy, Gumbel, StudentT, Chi2,
Weibull, Pareto, Geometric, NegativeBinomial, Multinomial, RelaxedBernoulli, RelaxedOneHotCategorical,
MixtureSameFamily), the transforms Abs/Power/Softplus and every distribution's ``mode``, against
torch.distributions: moments, log_prob, entropy, gradients, shapes, samplers' statistics and validation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import shapetorch as st

_A = np.array([0.5, 2.0, 3.0], np.float32)
_B = np.array([1.5, 0.7, 2.0], np.float32)
_P = np.array([0.2, 0.5, 0.9], np.float32)
_X = np.array([0.1, -2.0, 5.0], np.float32)
_POS = np.array([0.1, 2.0, 5.0], np.float32)
_COUNTS = np.array([0.0, 2.0, 5.0], np.float32)
_T = np.array(0.7, np.float32)
_SPD = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]], np.float32)

# name, args, kwargs, a value in the support
FAMILIES: list[tuple[str, tuple[Any, ...], dict[str, Any], np.ndarray]] = [
    ("Cauchy", (_A, _B), {}, _X),
    ("HalfNormal", (_B,), {}, _POS),
    ("HalfCauchy", (_B,), {}, _POS),
    ("Gumbel", (_A, _B), {}, _X),
    ("StudentT", (np.array([0.8, 2.5, 5.0], np.float32), _A, _B), {}, _X),
    ("Chi2", (_B,), {}, _POS),
    ("Weibull", (_B, _A), {}, _POS),
    ("Pareto", (np.array([0.05, 0.5, 1.0], np.float32), _A), {}, _POS),
    ("Geometric", (_P,), {}, _COUNTS),
    ("Geometric", (), {"logits": _A}, _COUNTS),
    ("NegativeBinomial", (np.array([1.0, 3.0, 7.5], np.float32), _P), {}, _COUNTS),
    ("NegativeBinomial", (np.array([1.0, 3.0, 7.5], np.float32),), {"logits": _A - 1}, _COUNTS),
    ("Multinomial", (5, _P / _P.sum()), {}, np.array([1.0, 2.0, 2.0], np.float32)),
    ("Multinomial", (4,), {"logits": np.stack([_A, _B])}, np.array([[0.0, 1.0, 3.0], [4.0, 0.0, 0.0]], np.float32)),
    ("RelaxedBernoulli", (_T, _P), {}, np.array([0.1, 0.5, 0.99], np.float32)),
    ("RelaxedOneHotCategorical", (_T, _P / _P.sum()), {}, np.array([0.1, 0.3, 0.6], np.float32)),
    ("InverseGamma", (_A, _B), {}, _POS),
    ("InverseGamma", (_A * 2, _B), {}, _POS),  # (concentration above 1 and 2: finite mean and variance)
    ("Kumaraswamy", (_A, _B), {}, _P),
    ("Kumaraswamy", (_A + 1, _B + 1), {}, _P),  # (both above 1: a finite mode)
    ("FisherSnedecor", (_A, np.array([1.5, 3.0, 9.0], np.float32)), {}, _POS),
    ("FisherSnedecor", (_A * 2, np.array([5.0, 7.0, 9.0], np.float32)), {}, _POS),
    ("ContinuousBernoulli", (np.array([0.2, 0.4995, 0.9], np.float32),), {}, _P),
    ("ContinuousBernoulli", (), {"logits": _X}, _P),
    ("LogisticNormal", (_X, _B), {}, np.array([0.1, 0.2, 0.3, 0.4], np.float32)),
    ("OneHotCategoricalStraightThrough", (_P / _P.sum(),), {}, np.array([0.0, 1.0, 0.0], np.float32)),
    # (concentrations below 0, 0 itself, and between 1/2 and 1: a bounded support, the exponential, no variance)
    ("GeneralizedPareto", (_X, _B, np.array([-0.05, 0.0, 0.7], np.float32)), {}, _X + 0.5),
    ("GeneralizedPareto", (_X, _B, np.array([0.2, 1.5, 0.3], np.float32)), {}, _X + 0.5),
    ("VonMises", (_X, np.array([0.5, 4.0, 20.0], np.float32)), {}, np.array([0.3, -2.9, 3.1], np.float32)),
    ("Wishart", (np.array([3.5, 5.0], np.float32),), {"covariance_matrix": _SPD}, _SPD * 2),
    ("Wishart", (np.array([2.5, 6.0], np.float32),), {"precision_matrix": _SPD}, _SPD),  # (df < 3: no mode)
    ("LKJCholesky", (3, _A), {}, np.linalg.cholesky(np.array([[1.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 1.0]]))
     .astype(np.float32)),
]


def _pair(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any, list[Any], list[Any]]:
    """The same distribution in both libraries; numpy arrays become each library's leaves."""
    leaves: dict[str, list[Any]] = {"st": [], "torch": []}

    def build(lib: Any, key: str) -> Any:
        def conv(a: Any) -> Any:
            if isinstance(a, np.ndarray):
                leaves[key].append(lib.tensor(a, requires_grad=True))
                return leaves[key][-1]
            return a
        return getattr(lib.distributions, name)(*map(conv, args), **{k: conv(v) for k, v in kwargs.items()})

    return build(st, "st"), build(torch, "torch"), leaves["st"], leaves["torch"]


def _outcome(fn: Any) -> Any:
    try:
        return fn()
    except (NotImplementedError, ValueError) as e:
        return type(e)


def _close(ours: Any, theirs: Any, tol: float = 1e-5) -> None:
    if isinstance(theirs, type):
        assert ours is theirs
        return
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize(("name", "args", "kwargs", "value"), FAMILIES, ids=[f[0] for f in FAMILIES])
def test_family_matches_torch(name: str, args: tuple[Any, ...], kwargs: dict[str, Any], value: np.ndarray) -> None:
    ours, theirs, ours_leaves, theirs_leaves = _pair(name, args, kwargs)
    assert (tuple(ours.batch_shape), tuple(ours.event_shape)) == (tuple(theirs.batch_shape),
                                                                 tuple(theirs.event_shape))
    assert ours.has_rsample == theirs.has_rsample
    for attr in ("mean", "variance", "mode", "stddev"):
        _close(_outcome(lambda: getattr(ours, attr)), _outcome(lambda: getattr(theirs, attr)))
    lo, lt = ours.log_prob(st.tensor(value)), theirs.log_prob(torch.tensor(value))
    _close(lo, lt)
    eo, et = _outcome(ours.entropy), _outcome(theirs.entropy)
    _close(eo, et)
    total_o = lo.sum() + (eo.sum() if not isinstance(eo, type) else 0)
    total_t = lt.sum() + (et.sum() if not isinstance(et, type) else 0)
    grads_o = st.autograd.grad(total_o, ours_leaves, allow_unused=True)
    grads_t = torch.autograd.grad(total_t, theirs_leaves, allow_unused=True)
    for go, gt in zip(grads_o, grads_t, strict=True):
        assert (go is None) == (gt is None)
        if go is not None:
            np.testing.assert_allclose(go.numpy(), gt.numpy(), rtol=1e-4, atol=1e-5)
    for shape in [(), (4,)]:
        so, sth = ours.sample(shape), theirs.sample(shape)
        assert tuple(so.shape) == tuple(sth.shape)
        assert str(so.dtype).split(".")[-1] == str(sth.dtype).split(".")[-1]
        assert not so.requires_grad
    if ours.has_rsample:  # (a fresh one: the graph of parameters derived at construction was freed above)
        fresh, _, fresh_leaves, _ = _pair(name, args, kwargs)
        drawn = fresh.rsample((2,))
        assert drawn.requires_grad
        drawn.sum().backward()
        assert all(leaf.grad is not None for leaf in fresh_leaves)
    expanded_o, expanded_t = ours.expand((2, *theirs.batch_shape)), theirs.expand((2, *theirs.batch_shape))
    assert tuple(expanded_o.sample((3,)).shape) == tuple(expanded_t.sample((3,)).shape)
    _close(expanded_o.log_prob(st.tensor(value)), expanded_t.log_prob(torch.tensor(value)))


# name, args, the sample's expected mean and variance, and cdf points (for a KS-style check against the cdf)
_SAMPLERS: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("Cauchy", (0.5, 2.0), {}), ("HalfNormal", (1.5,), {}), ("HalfCauchy", (0.7,), {}), ("Gumbel", (1.0, 2.0), {}),
    ("StudentT", (3.5, 1.0, 2.0), {}), ("Chi2", (3.0,), {}), ("Weibull", (1.5, 2.5), {}), ("Pareto", (0.5, 3.5), {}),
    ("Geometric", (), {"probs": 0.3}), ("NegativeBinomial", (4.0,), {"probs": 0.4}),
]


@pytest.mark.parametrize(("name", "args", "kwargs"), _SAMPLERS, ids=[s[0] for s in _SAMPLERS])
def test_sampler_draws_the_distribution(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """20,000 draws: their empirical distribution function is within 0.02 of torch's cdf (or, for the counts,
    of torch's summed pmf), which a wrong scale, location or tail would leave by far more."""
    st.manual_seed(0)
    ours = getattr(st.distributions, name)(*args, **kwargs)
    theirs = getattr(torch.distributions, name)(*args, **kwargs)
    draws = np.sort(ours.sample((20000,)).numpy())
    if name in ("Geometric", "NegativeBinomial"):
        ks = np.arange(0, 30)
        cdf = np.cumsum(theirs.log_prob(torch.tensor(ks, dtype=torch.float32)).exp().numpy())
        empirical = np.searchsorted(draws, ks, side="right") / draws.size
        assert np.abs(empirical - cdf).max() < 0.02
        return
    points = np.quantile(draws, np.linspace(0.02, 0.98, 25))
    want = _cdf(theirs, name, points)
    empirical = np.searchsorted(draws, points, side="right") / draws.size
    assert np.abs(empirical - want).max() < 0.02


def _cdf(theirs: Any, name: str, points: np.ndarray) -> np.ndarray:
    x = torch.tensor(points, dtype=torch.float32)
    if name in ("StudentT", "Chi2"):  # (torch has no cdf for these: integrate the density on a fine grid)
        grid = torch.linspace(float(x.min()) - 50 if name == "StudentT" else 1e-6, float(x.max()), 200001)
        dens = theirs.log_prob(grid).exp().double().numpy()
        area = np.concatenate([[0.0], np.cumsum((dens[1:] + dens[:-1]) / 2 * np.diff(grid.double().numpy()))])
        return np.interp(points, grid.numpy(), area)
    return theirs.cdf(x).numpy()


def test_mixture_same_family_matches_torch() -> None:
    """A batch of Gaussian mixtures (scalar events) and a mixture of diagonal Gaussians (vector events)."""
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((2, 3)).astype(np.float32)
    loc, scale = rng.standard_normal((2, 3)).astype(np.float32), rng.uniform(0.5, 2, (2, 3)).astype(np.float32)
    x = rng.standard_normal((4, 2)).astype(np.float32)
    for lib_pair in [(st, st.tensor), (torch, torch.tensor)]:
        lib, tensor = lib_pair
        D = lib.distributions
        leaves = [tensor(a, requires_grad=True) for a in (logits, loc, scale)]
        mix = D.MixtureSameFamily(D.Categorical(logits=leaves[0]), D.Normal(leaves[1], leaves[2]))
        lp = mix.log_prob(tensor(x))
        lp.sum().backward()
        result = [lp, mix.mean, mix.variance, mix.cdf(tensor(x)), *[leaf.grad for leaf in leaves]]
        if lib is st:
            ours = result
            assert tuple(mix.sample((5,)).shape) == (5, 2)
            assert tuple(mix.expand((4, 2)).sample((5,)).shape) == (5, 4, 2)
        else:
            theirs = result
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-4, atol=1e-5)
    vec = rng.standard_normal((5, 3, 2)).astype(np.float32)
    for lib, tensor in [(st, st.tensor), (torch, torch.tensor)]:
        D = lib.distributions
        comp = D.Independent(D.Normal(tensor(vec), tensor(np.ones_like(vec))), 1)
        mix = D.MixtureSameFamily(D.Categorical(logits=tensor(np.zeros((5, 3), np.float32))), comp)
        value = tensor(vec[:, 0])
        out = (mix.log_prob(value), mix.mean, mix.variance, tuple(mix.sample((7,)).shape), tuple(mix.event_shape))
        if lib is st:
            ours_vec = out
        else:
            theirs_vec = out
    for a, b in zip(ours_vec[:3], theirs_vec[:3], strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    assert ours_vec[3:] == tuple(tuple(v) for v in theirs_vec[3:])


@pytest.mark.parametrize("name", ["AbsTransform", "PowerTransform", "SoftplusTransform", "identity_transform"])
def test_transforms_match_torch(name: str) -> None:
    x = np.array([0.3, 1.7, 4.0], np.float32)

    def make(lib: Any) -> Any:
        T = lib.distributions
        return {"AbsTransform": T.AbsTransform, "PowerTransform": lambda: T.PowerTransform(2.5),
                "SoftplusTransform": T.SoftplusTransform,
                "identity_transform": lambda: T.transforms.identity_transform}[name]()

    ours, theirs = make(st), make(torch)
    yo, yt = ours(st.tensor(x)), theirs(torch.tensor(x))
    np.testing.assert_allclose(yo.numpy(), yt.numpy(), rtol=1e-6)
    np.testing.assert_allclose(ours.inv(yo).numpy(), theirs.inv(yt).numpy(), rtol=1e-5)
    if name != "AbsTransform":  # (torch's AbsTransform has no Jacobian: it is not injective)
        np.testing.assert_allclose(ours.log_abs_det_jacobian(st.tensor(x), yo).numpy(),
                                   theirs.log_abs_det_jacobian(torch.tensor(x), yt).numpy(), rtol=1e-5, atol=1e-6)
    base_o = st.distributions.Exponential(st.tensor(_B))
    base_t = torch.distributions.Exponential(torch.tensor(_B))
    if name in ("PowerTransform", "SoftplusTransform"):
        lo = st.distributions.TransformedDistribution(base_o, [ours]).log_prob(st.tensor(x + 0.5))
        lt = torch.distributions.TransformedDistribution(base_t, [theirs]).log_prob(torch.tensor(x + 0.5))
        np.testing.assert_allclose(lo.numpy(), lt.numpy(), rtol=1e-5, atol=1e-6)


_MODES: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "Bernoulli": ((np.array([0.2, 0.5, 0.7], np.float32),), {}),
    "Categorical": ((np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]], np.float32),), {}),
    "Uniform": ((np.zeros(2, np.float32), np.ones(2, np.float32)), {}),
    "Laplace": ((_A, _B), {}), "Exponential": ((_B,), {}), "Gamma": ((_A, _B), {}),
    "Beta": ((np.array([0.5, 2, 0.3, 3], np.float32), np.array([1.0, 2, 0.5, 0.2], np.float32)), {}),
    "Poisson": ((_A,), {}), "Binomial": ((5,), {"probs": _P}),
    "Dirichlet": ((np.array([[0.5, 2, 3], [0.5, 0.2, 0.9]], np.float32),), {}),
    "LogNormal": ((_A, _B), {}), "OneHotCategorical": ((_P / _P.sum(),), {}),
    "MultivariateNormal": ((np.zeros(2, np.float32), np.array([[1.0, 0.2], [0.2, 1.0]], np.float32)), {}),
    "Normal": ((_A, _B), {}),
}


@pytest.mark.parametrize("name", sorted(_MODES))
def test_mode_matches_torch(name: str) -> None:
    """Including the corner cases torch picks: NaN for a Bernoulli at 1/2 and for a Uniform, a Dirichlet's
    corner when every concentration is below 1."""
    args, kwargs = _MODES[name]
    ours = getattr(st.distributions, name)(*[st.tensor(a) if isinstance(a, np.ndarray) else a for a in args],
                                           **{k: st.tensor(v) for k, v in kwargs.items()})
    theirs = getattr(torch.distributions, name)(*[torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args],
                                                **{k: torch.tensor(v) for k, v in kwargs.items()})
    np.testing.assert_allclose(ours.mode.numpy(), theirs.mode.numpy(), rtol=1e-6)
    assert str(ours.mode.dtype).split(".")[-1] == str(theirs.mode.dtype).split(".")[-1]


@pytest.mark.parametrize(("build", "error"), [
    (lambda D, t: D.HalfNormal(t([-1.0])), ValueError),
    (lambda D, t: D.Geometric(t([0.0])), ValueError),
    (lambda D, t: D.StudentT(t([0.0])), ValueError),
    (lambda D, t: D.Pareto(t([1.0]), t([-1.0])), ValueError),
    (lambda D, t: D.Multinomial(t(3.0), t([0.5, 0.5])), NotImplementedError),
    (lambda D, t: D.MultivariateNormal(t([0.0, 0.0]), t([[1.0, 2.0], [2.0, 1.0]])), ValueError),
    (lambda D, t: D.MixtureSameFamily(D.Categorical(t([0.5, 0.5])), D.Normal(t([0.0, 1.0, 2.0]), t([1.0] * 3))),
     ValueError),
])
def test_bad_parameters_are_refused_as_torch(build: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        build(torch.distributions, torch.tensor)
    with pytest.raises(error):
        build(st.distributions, st.tensor)


def test_log_prob_outside_the_support_is_refused_or_minus_inf() -> None:
    for lib in (st, torch):
        D = lib.distributions
        with pytest.raises(ValueError):
            D.HalfNormal(lib.tensor(1.0)).log_prob(lib.tensor(-1.0))
        lp = D.HalfNormal(lib.tensor(1.0), validate_args=False).log_prob(lib.tensor(-1.0))
        assert float(lp) == -np.inf


# the later families' samplers against exact cdfs (scipy's, or the closed form)
def _later_cdfs() -> dict[str, tuple[tuple[Any, ...], Any]]:
    from scipy import stats

    cb = torch.distributions.ContinuousBernoulli(torch.tensor(0.8, dtype=torch.float64))
    return {
        "InverseGamma": ((3.0, 2.0), stats.invgamma(3.0, scale=2.0).cdf),
        "Kumaraswamy": ((2.0, 5.0), lambda x: 1 - (1 - x ** 2.0) ** 5.0),
        "FisherSnedecor": ((4.0, 7.0), stats.f(4.0, 7.0).cdf),
        "ContinuousBernoulli": ((0.8,), lambda x: cb.cdf(torch.tensor(x)).numpy()),
        "GeneralizedPareto": ((0.5, 2.0, 0.3), stats.genpareto(0.3, loc=0.5, scale=2.0).cdf),
        "VonMises": ((2.5, 1.5), stats.vonmises(1.5, loc=2.5).cdf),  # (wrapped into [-pi, pi) below)
    }


@pytest.mark.parametrize("name", ["InverseGamma", "Kumaraswamy", "FisherSnedecor", "ContinuousBernoulli",
                                  "GeneralizedPareto", "VonMises"])
def test_later_samplers_draw_the_distribution(name: str) -> None:
    """20,000 draws (by ``rsample`` where there is one): the empirical cdf is within 0.02 of the exact one."""
    args, cdf = _later_cdfs()[name]
    st.manual_seed(1)
    d = getattr(st.distributions, name)(*args)
    draws = (d.rsample if d.has_rsample else d.sample)((20000,)).detach().numpy().astype(np.float64)
    if name == "VonMises":  # scipy's cdf is of the angle around loc: unwrap the draws to (loc - pi, loc + pi]
        assert draws.min() >= -np.pi and draws.max() < np.pi
        draws = np.where(draws <= args[0] - np.pi, draws + 2 * np.pi, draws)
    draws = np.sort(draws)
    points = np.quantile(draws, np.linspace(0.02, 0.98, 25))
    empirical = np.searchsorted(draws, points, side="right") / draws.size
    assert np.abs(empirical - cdf(points)).max() < 0.02


def test_logistic_normal_draws_are_the_stick_broken_normal() -> None:
    st.manual_seed(2)
    loc, scale = np.array([0.5, -1.0], np.float32), np.array([0.3, 2.0], np.float32)
    draws = st.distributions.LogisticNormal(st.tensor(loc), st.tensor(scale)).sample((20000,)).numpy()
    np.testing.assert_allclose(draws.sum(-1), 1.0, rtol=1e-5)
    back = torch.distributions.StickBreakingTransform().inv(torch.tensor(draws)).numpy()
    np.testing.assert_allclose(back.mean(0), loc, atol=0.05)
    np.testing.assert_allclose(back.std(0), scale, rtol=0.03)


def test_straight_through_passes_the_gradient_to_probs() -> None:
    """The value is a one-hot draw; the gradient is that of the (normalised) probs whatever was drawn, so it
    equals torch's for the same weights."""
    weights = np.arange(18, dtype=np.float32).reshape(6, 3)
    grads = []
    for lib in (st, torch):
        probs = lib.tensor([0.2, 0.3, 0.6], requires_grad=True)
        drawn = lib.distributions.OneHotCategoricalStraightThrough(probs).rsample((6,))
        assert bool(((drawn == 0) | (drawn == 1)).all()) and bool((drawn.sum(-1) == 1).all())
        (drawn * lib.tensor(weights)).sum().backward()
        grads.append(probs.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-6)
    assert np.abs(grads[0]).max() > 1  # (not a vanishing gradient)


def test_continuous_bernoulli_cdf_icdf_match_torch() -> None:
    p = np.array([0.1, 0.4999, 0.5005, 0.95], np.float32)
    x = np.array([0.3, 0.5, 0.01, 0.99], np.float32)
    ours = st.distributions.ContinuousBernoulli(st.tensor(p))
    theirs = torch.distributions.ContinuousBernoulli(torch.tensor(p))
    np.testing.assert_allclose(ours.cdf(st.tensor(x)).numpy(), theirs.cdf(torch.tensor(x)).numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(ours.icdf(st.tensor(x)).numpy(), theirs.icdf(torch.tensor(x)).numpy(), rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize(("build", "error"), [
    (lambda D, t: D.InverseGamma(t([-1.0]), t([1.0])), ValueError),
    (lambda D, t: D.Kumaraswamy(t([1.0]), t([0.0])), ValueError),
    (lambda D, t: D.FisherSnedecor(t([1.0]), t([-2.0])), ValueError),
    (lambda D, t: D.ContinuousBernoulli(t([1.5]), validate_args=True), ValueError),
    (lambda D, t: D.ContinuousBernoulli(), ValueError),
    (lambda D, t: D.LogisticNormal(t([0.0]), t([0.0])), ValueError),
    (lambda D, t: D.Kumaraswamy(t([1.0]), t([1.0])).log_prob(t([1.5])), ValueError),
    (lambda D, t: D.LogisticNormal(t([0.0]), t([1.0])).log_prob(t([0.7, 0.7])), ValueError),
    (lambda D, t: D.LKJCholesky(1, t(1.0)), ValueError),
    (lambda D, t: D.LKJCholesky(2, t(-1.0)), ValueError),
    (lambda D, t: D.LKJCholesky(2, t(1.0)).log_prob(t([[1.0, 0.0], [0.5, 0.5]])), ValueError),
    (lambda D, t: D.GeneralizedPareto(t(0.0), t(1.0), t(-0.5)).log_prob(t(2.5)), ValueError),
    (lambda D, t: D.VonMises(t(0.0), t(0.0)), ValueError),
])
def test_later_families_refuse_bad_input_as_torch(build: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        build(torch.distributions, torch.tensor)
    with pytest.raises(error):
        build(st.distributions, st.tensor)


def test_continuous_bernoulli_clamps_out_of_range_probs_without_explicit_validation_as_torch() -> None:
    ours = st.distributions.ContinuousBernoulli(st.tensor([1.5]))
    theirs = torch.distributions.ContinuousBernoulli(torch.tensor([1.5]))
    np.testing.assert_allclose(ours.probs.numpy(), theirs.probs.numpy())


_VEC = np.array([[0.3, -1.2, 2.0], [0.0, 0.5, -0.7]], np.float32)


def _transform_cases(lib: Any) -> dict[str, tuple[Any, np.ndarray]]:
    T = lib.distributions.transforms
    return {
        "softmax": (T.SoftmaxTransform(), _VEC),
        "stick_breaking": (T.StickBreakingTransform(), _VEC),
        "reshape": (T.ReshapeTransform((3,), (3, 1)), _VEC),
        "independent": (T.IndependentTransform(T.ExpTransform(), 1), _VEC),
        "cat": (T.CatTransform([T.ExpTransform(), T.identity_transform, T.SigmoidTransform()], dim=-1,
                               lengths=[1, 1, 1]), _VEC),
        "cat_vector": (T.CatTransform([T.IndependentTransform(T.ExpTransform(), 1),
                                       T.IndependentTransform(T.TanhTransform(), 1)], dim=-1, lengths=[2, 1]), _VEC),
        "stack": (T.StackTransform([T.ExpTransform(), T.TanhTransform()], dim=0), _VEC),
        "lower_cholesky": (T.LowerCholeskyTransform(), np.stack([_VEC[:, :2], _VEC[:, 1:]])),
        "positive_definite": (T.PositiveDefiniteTransform(), np.stack([_VEC[:, :2], _VEC[:, 1:]])),
        "corr_cholesky": (T.CorrCholeskyTransform(), _VEC),
        "compose_event": (T.ComposeTransform([T.AffineTransform(0.5, 2.0), T.StickBreakingTransform()]), _VEC),
        "cdf": (T.CumulativeDistributionTransform(lib.distributions.Normal(lib.tensor(0.5), lib.tensor(2.0))),
                _VEC),
    }


@pytest.mark.parametrize("case", sorted(_transform_cases(torch)))
def test_event_transforms_match_torch(case: str) -> None:
    """Forward, inverse, log|det J| (where torch defines it), event dims and the shape maps."""
    ours, x = _transform_cases(st)[case]
    theirs, _ = _transform_cases(torch)[case]
    xo, xt = st.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yo, yt = ours(xo), theirs(xt)
    np.testing.assert_allclose(yo.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours.inv(yo).detach().numpy(), theirs.inv(yt).detach().numpy(), rtol=1e-4, atol=1e-5)
    assert (ours.domain.event_dim, ours.codomain.event_dim) == (theirs.domain.event_dim, theirs.codomain.event_dim)
    assert ours.forward_shape(x.shape) == tuple(theirs.forward_shape(x.shape))
    assert ours.inverse_shape(tuple(yt.shape)) == tuple(theirs.inverse_shape(yt.shape))
    assert bool(ours.codomain.check(yo).all()) and bool(theirs.codomain.check(yt).all())
    try:
        want = theirs.log_abs_det_jacobian(xt, yt)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            ours.log_abs_det_jacobian(xo, yo)
        return
    got = ours.log_abs_det_jacobian(xo, yo)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-5)
    assert got.requires_grad == want.requires_grad  # (a constant term, as reshape's, carries no graph)
    if want.requires_grad:
        got.sum().backward()
        want.sum().backward()
        np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)


def _constraint_cases(lib: Any) -> list[tuple[str, Any, tuple[int, ...]]]:
    C = lib.distributions.constraints
    return [("real", C.real, (3,)), ("positive", C.positive, (3,)), ("nonnegative", C.nonnegative, (3,)),
            ("greater_than", C.greater_than(1.5), (3,)), ("greater_than_eq", C.greater_than_eq(-2.0), (3,)),
            ("less_than", C.less_than(0.5), (3,)), ("unit_interval", C.unit_interval, (3,)),
            ("interval", C.interval(-1.0, 3.0), (3,)), ("half_open_interval", C.half_open_interval(0.0, 2.0), (3,)),
            ("simplex", C.simplex, (2, 3)), ("lower_cholesky", C.lower_cholesky, (2, 3, 3)),
            ("positive_definite", C.positive_definite, (2, 3, 3)),
            ("positive_semidefinite", C.positive_semidefinite, (3, 3)), ("corr_cholesky", C.corr_cholesky, (2, 6)),
            ("independent", C.independent(C.positive, 1), (2, 3)),
            ("cat", C.cat([C.positive, C.real, C.unit_interval], -1, [1, 1, 1]), (2, 3)),
            ("stack", C.stack([C.positive, C.interval(0.0, 2.0)], 0), (2, 3))]


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("index", range(len(_constraint_cases(torch))))
def test_biject_to_and_transform_to_match_torch(registry: str, index: int) -> None:
    """The same transform (by its kind and by its values on unconstrained input) and its output satisfies the
    constraint; a constraint torch has no entry for raises NotImplementedError in both."""
    name, theirs_c, shape = _constraint_cases(torch)[index]
    ours_c = _constraint_cases(st)[index][1]
    x = np.random.default_rng(index).normal(size=shape).astype(np.float32)
    try:
        theirs = getattr(torch.distributions, registry)(theirs_c)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            getattr(st.distributions, registry)(ours_c)
        return
    ours = getattr(st.distributions, registry)(ours_c)
    assert type(ours).__name__ == type(theirs).__name__, name
    yo, yt = ours(st.tensor(x)), theirs(torch.tensor(x))
    np.testing.assert_allclose(yo.numpy(), yt.numpy(), rtol=1e-5, atol=1e-6)
    assert bool(ours_c.check(yo).all())


def test_transformed_distribution_through_an_event_transform_matches_torch() -> None:
    """A batch of Normals pushed through a reshape: the batch dim becomes an event dim, as in torch."""
    loc, scale = np.array([0.5, -1.0, 0.2, 0.0], np.float32), np.array([1.0, 2.0, 0.5, 1.5], np.float32)
    value = np.array([[0.1, 0.2], [0.3, -0.4]], np.float32)
    out = []
    for lib in (st, torch):
        D = lib.distributions
        d = D.TransformedDistribution(D.Normal(lib.tensor(loc), lib.tensor(scale)),
                                      [D.ReshapeTransform((4,), (2, 2)), D.ExpTransform()])
        out.append((tuple(d.batch_shape), tuple(d.event_shape), d.log_prob(lib.tensor(np.exp(value))).numpy(),
                    tuple(d.sample((3,)).shape)))
    assert out[0][:2] == out[1][:2] and out[0][3] == out[1][3]
    np.testing.assert_allclose(out[0][2], out[1][2], rtol=1e-5)


@pytest.mark.parametrize(("dim", "eta"), [(2, 0.7), (4, 2.5)])
def test_lkj_cholesky_draws_match_torchs_sampler(dim: int, eta: float) -> None:
    """Draws are Cholesky factors of correlation matrices. The first correlation, mapped to (0, 1), is LKJ's
    Beta(b, b) marginal (b = eta - 1 + dim/2); every correlation's distribution is that of torch's onion sampler
    (whose last row's correlations do not follow that marginal for dim > 2: torch's choice, kept)."""
    from scipy import stats

    st.manual_seed(4)
    torch.manual_seed(4)
    low = st.distributions.LKJCholesky(dim, eta).sample((20000,))
    assert bool(st.distributions.constraints.corr_cholesky.check(low).all())
    corr = (low @ low.mT).numpy().astype(np.float64)
    theirs_low = torch.distributions.LKJCholesky(dim, eta).sample((20000,)).double()
    theirs = (theirs_low @ theirs_low.mT).numpy()
    b = eta - 1 + dim / 2
    for i, j in [(1, 0), (dim - 1, dim - 2)]:
        draws = np.sort((corr[:, i, j] + 1) / 2)
        points = np.quantile(draws, np.linspace(0.02, 0.98, 25))
        empirical = np.searchsorted(draws, points, side="right") / draws.size
        torchs = np.searchsorted(np.sort((theirs[:, i, j] + 1) / 2), points, side="right") / draws.size
        assert np.abs(empirical - torchs).max() < 0.025
        if (i, j) == (1, 0):
            assert np.abs(empirical - stats.beta(b, b).cdf(points)).max() < 0.02


def test_wishart_draws_have_its_mean_and_variance() -> None:
    """20,000 Bartlett draws: their mean is df * Sigma and their elementwise variance torch's formula, to 3%."""
    st.manual_seed(5)
    cov = st.tensor(_SPD)
    d = st.distributions.Wishart(st.tensor(4.5), covariance_matrix=cov)
    draws = d.rsample((20000,)).numpy().astype(np.float64)
    theirs = torch.distributions.Wishart(torch.tensor(4.5), covariance_matrix=torch.tensor(_SPD))
    np.testing.assert_allclose(draws.mean(0), theirs.mean.numpy(), rtol=0.03, atol=0.03)
    np.testing.assert_allclose(draws.var(0), theirs.variance.numpy(), rtol=0.06, atol=0.03)


_EXPFAMILY = {
    "ContinuousBernoulli": lambda lib: lib.distributions.ContinuousBernoulli(lib.tensor([0.2, 0.4995, 0.7])),
    "Wishart": lambda lib: lib.distributions.Wishart(lib.tensor([3.5, 6.0]), covariance_matrix=lib.tensor(_SPD)),
    "Normal": lambda lib: lib.distributions.Normal(lib.tensor([0.5, -1.0]), lib.tensor([2.0, 0.3])),
    "Bernoulli": lambda lib: lib.distributions.Bernoulli(lib.tensor([0.3, 0.9])),
    "Bernoulli-logits": lambda lib: lib.distributions.Bernoulli(logits=lib.tensor([-0.3, 2.0])),
    "Gamma": lambda lib: lib.distributions.Gamma(lib.tensor([2.0, 0.7]), lib.tensor([3.0, 1.5])),
    "Chi2": lambda lib: lib.distributions.Chi2(lib.tensor([2.0, 5.0])),
    "Exponential": lambda lib: lib.distributions.Exponential(lib.tensor([2.0, 0.25])),
    # no mean carrier measure in torch: its generic entropy raises NotImplementedError
    "Beta": lambda lib: lib.distributions.Beta(lib.tensor([2.0]), lib.tensor([3.0])),
    "Dirichlet": lambda lib: lib.distributions.Dirichlet(lib.tensor([2.0, 3.0, 0.5])),
    "Poisson": lambda lib: lib.distributions.Poisson(lib.tensor([2.0, 0.5])),
}


@pytest.mark.parametrize("name", sorted(_EXPFAMILY))
def test_exponential_family_generic_entropy_matches_torch(name: str) -> None:
    """The Bregman entropy from the log normaliser alone (torch's ExponentialFamily.entropy), which also checks
    each family's natural parameters and log normaliser against torch's; the class hierarchy is torch's (every
    family here an ExponentialFamily), and a family without a mean carrier measure raises as torch's."""
    ours, theirs = _EXPFAMILY[name](st), _EXPFAMILY[name](torch)
    assert isinstance(theirs, torch.distributions.ExponentialFamily)
    assert isinstance(ours, st.distributions.ExponentialFamily)
    for a, b in zip(ours._natural_params, theirs._natural_params, strict=True):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    try:
        want = torch.distributions.ExponentialFamily.entropy(theirs)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            st.distributions.ExponentialFamily.entropy(ours)
        return
    got = st.distributions.ExponentialFamily.entropy(ours)
    assert got.requires_grad == want.requires_grad
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got.detach().numpy(), ours.entropy().detach().numpy(), rtol=1e-4, atol=1e-5)


def test_laplace_cdf_and_icdf_match_torch() -> None:
    value, probs = np.array([-1.0, 0.3, 2.5], np.float32), np.array([0.1, 0.5, 0.9], np.float32)
    ours = st.distributions.Laplace(st.tensor(0.5), st.tensor(1.5))
    theirs = torch.distributions.Laplace(torch.tensor(0.5), torch.tensor(1.5))
    np.testing.assert_allclose(ours.cdf(st.tensor(value)).numpy(), theirs.cdf(torch.tensor(value)).numpy(), rtol=1e-6)
    np.testing.assert_allclose(ours.icdf(st.tensor(probs)).numpy(), theirs.icdf(torch.tensor(probs)).numpy(),
                               rtol=1e-6)
