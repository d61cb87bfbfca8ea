"""Gamma and the distributions drawn through it (Beta, Dirichlet), and the counts (Poisson, Binomial) and
OneHotCategorical. Samples come from the global generator (``manual_seed``).

``rsample`` of Gamma, Beta and Dirichlet is torch's implicit reparameterisation: a sample ``x`` of the standard
Gamma(a) moves with ``a`` as ``dx/da = -(dF(x; a)/da) / f(x; a)`` (F the CDF, f the density), Dirichlet's and
Beta's as torch's ``_dirichlet_grad`` (the Beta marginal's CDF derivative, scaled by ``1/(1-x)``). torch
approximates those derivatives by series and rational fits; here they are the exact derivatives of scipy's
regularized incomplete gamma and beta functions by a central difference in float64 (they agree with torch's to
about 1e-3 relative). The gradient is a constant of the sample, as in torch (no double backward through it)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from .._dtype import finfo
from .._tensor import Tensor
from ..ops import creation
from ..ops.special import digamma, lgamma
from . import constraints as C
from .distribution import Distribution
from .exponential_family import ExponentialFamily
from .library import Categorical, _params


def _draw(like: Tensor, data: Any) -> Tensor:
    return creation.tensor(np.asarray(data), dtype=like.dtype)


def _rng() -> Any:
    from ..ops.random import _rng as rng

    return rng(None)


def _numpy(t: Tensor) -> Any:
    return t.detach().cpu().numpy().astype(np.float64)


def _cdf_slope(cdf: Any, upper: Any, a: Any, *rest: Any) -> Any:
    """d cdf(a, *rest) / da by a central difference; where the CDF is past 1/2 its complement ``upper`` is
    differenced instead (its slope is the negative), so a value near 1 loses no digits."""
    h = np.maximum(a * 1e-5, 1e-12)
    low = cdf(a, *rest) <= 0.5
    lo_slope = (cdf(a + h, *rest) - cdf(a - h, *rest)) / (2 * h)
    hi_slope = -(upper(a + h, *rest) - upper(a - h, *rest)) / (2 * h)
    return np.where(low, lo_slope, hi_slope)


def standard_gamma_grad(alpha: Any, x: Any) -> Any:
    """``dx/dalpha`` of a standard Gamma(alpha) sample ``x`` (torch's ``_standard_gamma_grad``), float64."""
    from scipy import special, stats

    slope = _cdf_slope(special.gammainc, special.gammaincc, alpha, x)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.nan_to_num(-slope / stats.gamma.pdf(x, alpha), nan=0.0, posinf=0.0, neginf=0.0)


def dirichlet_grad(x: Any, alpha: Any, total: Any) -> Any:
    """torch's ``_dirichlet_grad``: ``-(dI_x(alpha, beta)/dalpha) / beta_pdf(x) / (1 - x)`` at ``beta = total -
    alpha`` held fixed, float64."""
    from scipy import special, stats

    beta = total - alpha

    def cdf(a: Any, xx: Any) -> Any:
        return special.betainc(a, beta, xx)

    def upper(a: Any, xx: Any) -> Any:
        return special.betainc(beta, a, 1 - xx)

    slope = _cdf_slope(cdf, upper, alpha, x)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.nan_to_num(-slope / stats.beta.pdf(x, alpha, beta) / (1 - x), nan=0.0, posinf=0.0, neginf=0.0)


def _standard_gamma_rsample(alpha: Tensor) -> Tensor:
    """Standard Gamma(alpha) draws of ``alpha``'s shape whose gradient to ``alpha`` is the implicit one: the value is
    the draw, and ``alpha - alpha.detach()`` (zero, but carrying alpha's gradient) scaled by ``dx/dalpha`` is added."""
    a = _numpy(alpha)
    tiny = finfo(alpha.dtype).tiny
    x = np.maximum(_rng().standard_gamma(a), tiny)
    drawn = _draw(alpha, x)
    if not alpha.requires_grad:
        return drawn
    slope = _draw(alpha, standard_gamma_grad(a, x))
    return drawn + (alpha - alpha.detach()) * slope


def _dirichlet_rsample(concentration: Tensor) -> Tensor:
    """Dirichlet draws of ``concentration``'s shape with torch's reparameterised gradient
    ``d_i * (g_i - sum_j x_j g_j)`` (``d = dirichlet_grad(x, alpha, total)``), attached as in
    :func:`_standard_gamma_rsample`: ``x + u - x * sum(u)`` with ``u = (alpha - alpha.detach()) * d``."""
    a = _numpy(concentration)
    g = _rng().standard_gamma(a)
    tiny = finfo(concentration.dtype).tiny
    x = np.clip(g / g.sum(-1, keepdims=True), tiny, 1.0)
    drawn = _draw(concentration, x)
    if not concentration.requires_grad:
        return drawn
    total = np.broadcast_to(a.sum(-1, keepdims=True), a.shape)
    d = _draw(concentration, dirichlet_grad(x.astype(np.float64), a, total))
    u = (concentration - concentration.detach()) * d
    return drawn + u - drawn * u.sum(-1, keepdim=True)


class Gamma(ExponentialFamily):
    # the exponential-family forms are torch's (a Beta, Dirichlet or Poisson has no mean carrier measure there,
    # so ExponentialFamily.entropy raises NotImplementedError for them, as torch's)
    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return self.concentration - 1, -self.rate

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        x, y = natural_params
        return lgamma(x + 1) + (x + 1) * (-y.reciprocal()).log()

    @property
    def _mean_carrier_measure(self) -> Any:
        return 0

    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"concentration": C.positive, "rate": C.positive}
    support = C.positive
    has_rsample = True

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = _params(concentration, rate)
        super().__init__(self.concentration.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate ** 2

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return _standard_gamma_rsample(self.concentration.expand(shape)) / self.rate.expand(shape)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration, self.rate
        return a.xlogy(b) + (a - 1).xlogy(value) - b * value - lgamma(a)

    def entropy(self) -> Tensor:
        a, b = self.concentration, self.rate
        return a - b.log() + lgamma(a) + (1.0 - a) * digamma(a)


class Beta(ExponentialFamily):
    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return self.concentration1, self.concentration0

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        x, y = natural_params
        return lgamma(x) + lgamma(y) - lgamma(x + y)

    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"concentration1": C.positive, "concentration0": C.positive}
    support = C.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Any, concentration0: Any, validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = _params(concentration1, concentration0)
        super().__init__(self.concentration1.shape, (), validate_args)

    @property
    def mode(self) -> Tensor:
        from ..ops.joining import stack

        pair = stack([self.concentration1, self.concentration0], -1)
        out: Tensor = Dirichlet(pair, validate_args=False).mode[..., 0]
        return out

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def variance(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        total = a + b
        return a * b / (total ** 2 * (total + 1))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """The first coordinate of a Dirichlet draw over ``(concentration1, concentration0)``, as torch."""
        from ..ops.joining import stack

        shape = self._extended_shape(sample_shape)
        pair = stack([self.concentration1.expand(shape), self.concentration0.expand(shape)], -1)
        return _dirichlet_rsample(pair).select(-1, 0)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration1, self.concentration0
        return (a - 1).xlogy(value) + (b - 1).xlogy(1 - value) - _lbeta(a, b)

    def entropy(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        total = a + b
        return _lbeta(a, b) - (a - 1) * digamma(a) - (b - 1) * digamma(b) + (total - 2) * digamma(total)


def _lbeta(a: Tensor, b: Tensor) -> Tensor:
    return lgamma(a) + lgamma(b) - lgamma(a + b)


class Dirichlet(ExponentialFamily):
    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return (self.concentration,)

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        x = natural_params[0]
        return lgamma(x).sum(-1) - lgamma(x.sum(-1))

    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"concentration": C.positive}
    support = C.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args)

    @property
    def mode(self) -> Tensor:
        # the interior maximum; a concentration below 1 in every coordinate puts it at a corner (torch's choice:
        # the largest coordinate's)
        from ..nn.functional import one_hot
        from ..ops.conversion import where

        conc = self.concentration
        m1 = (conc - 1).clamp(min=0)
        mode = m1 / m1.sum(-1, keepdim=True)
        corner = one_hot(mode.argmax(-1), conc.shape[-1]).to(mode.dtype)
        return where((conc < 1).all(-1, keepdim=True), corner, mode)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def variance(self) -> Tensor:
        a0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (a0 - self.concentration) / (a0 ** 2 * (a0 + 1))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return _dirichlet_rsample(self.concentration.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        return (a - 1).xlogy(value).sum(-1) + lgamma(a.sum(-1)) - lgamma(a).sum(-1)

    def entropy(self) -> Tensor:
        a = self.concentration
        k, a0 = a.shape[-1], a.sum(-1)
        return lgamma(a).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0) - ((a - 1.0) * digamma(a)).sum(-1)


class Poisson(ExponentialFamily):
    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return (self.rate.log(),)

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        return natural_params[0].exp()

    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"rate": C.nonnegative}
    support = C.nonnegative_integer

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = _params(rate)
        super().__init__(self.rate.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return _draw(self.rate, _rng().poisson(np.broadcast_to(_numpy(self.rate), shape)))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return value.xlogy(self.rate) - self.rate - lgamma(value + 1)


class Binomial(Distribution):
    has_enumerate_support = True
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"total_count": C.nonnegative_integer,
                                                          "probs": C.unit_interval, "logits": C.real}
    support = C.dependent

    def __init__(self, total_count: Any = 1, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = _params(total_count, probs)
            param = self.probs
        else:
            self.total_count, self.logits = _params(total_count, logits)
            param = self.logits
        super().__init__(param.shape, (), validate_args)

    def _p(self) -> Tensor:
        return self.probs if "probs" in self.__dict__ else self.logits.sigmoid()

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self._p()).floor().clamp(max=self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self._p()

    @property
    def variance(self) -> Tensor:
        p = self._p()
        return self.total_count * p * (1 - p)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        n, p = (np.broadcast_to(_numpy(t), shape) for t in (self.total_count, self._p()))
        return _draw(self.total_count, _rng().binomial(n.astype(np.int64), p))

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """0, 1, ..., total_count along a new leading dim (one total_count for the whole batch, as torch)."""
        total = int(self.total_count.max())
        if int(self.total_count.min()) != total:
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = creation.arange(1 + total, dtype=self.total_count.dtype).reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1, *self._batch_shape)) if expand else values

    def entropy(self) -> Tensor:
        """By summing over the support, as torch (which needs one total_count for the batch too)."""
        total = int(self.total_count.max())
        if int(self.total_count.min()) != total:
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        lp = self.log_prob(self.enumerate_support(False))
        out: Tensor = -(lp.exp() * lp).sum(0)
        return out

    def log_prob(self, value: Tensor) -> Tensor:
        n = self.total_count
        comb = lgamma(n + 1) - lgamma(value + 1) - lgamma(n - value + 1)
        if "probs" in self.__dict__:
            return comb + value.xlogy(self.probs) + (n - value).xlogy(1 - self.probs)
        lg = self.logits
        # log p^k (1-p)^(n-k) written in logits, stable for large |logits| (as torch)
        norm = n * lg.clamp(min=0) + n * (-lg.abs()).exp().log1p() - value * lg
        return comb - norm


class OneHotCategorical(Distribution):
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"probs": C.simplex, "logits": C.real_vector}
    support = C.one_hot

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs=probs, logits=logits, validate_args=validate_args)
        batch = self._categorical.batch_shape
        k = (self._categorical.probs if probs is not None else self._categorical.logits).shape[-1]
        super().__init__(batch, (k,), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        new = super().expand(batch_shape, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        return new

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def mode(self) -> Tensor:
        from ..nn.functional import one_hot

        probs: Tensor = self._categorical.probs
        return one_hot(probs.argmax(-1), probs.shape[-1]).to(probs.dtype)

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        from ..nn.functional import one_hot

        idx = self._categorical.sample(sample_shape)
        return one_hot(idx, self.event_shape[0]).to(self.probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self) -> Tensor:
        return self._categorical.entropy()


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """A OneHotCategorical whose ``rsample`` passes gradients straight through: the value is the one-hot draw,
    the gradient that of ``probs`` (Bengio et al., 2013)."""

    has_rsample = True

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        drawn = self.sample(sample_shape)
        probs = self.probs
        return drawn + (probs - probs.detach())


class FisherSnedecor(Distribution):
    """The ratio of two scaled chi-squares, drawn as ``Gamma(df1/2, df1) / Gamma(df2/2, df2)``."""

    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"df1": C.positive, "df2": C.positive}
    support = C.positive
    has_rsample = True

    def __init__(self, df1: Any, df2: Any, validate_args: bool | None = None) -> None:
        self.df1, self.df2 = _params(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1, validate_args=False)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2, validate_args=False)
        super().__init__(self.df1.shape, (), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        new = super().expand(batch_shape, _instance)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self) -> Tensor:
        from ..ops.conversion import where

        df2 = where(self.df2 <= 2, float("nan"), self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self) -> Tensor:
        from ..ops.conversion import where

        d1, d2 = self.df1, self.df2
        return where(d1 <= 2, float("nan"), (d1 - 2) / d1 * d2 / (d2 + 2))

    @property
    def variance(self) -> Tensor:
        from ..ops.conversion import where

        d1 = self.df1
        d2 = where(self.df2 <= 4, float("nan"), self.df2)
        return 2 * d2 ** 2 * (d1 + d2 - 2) / (d1 * (d2 - 2) ** 2 * (d2 - 4))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        tiny = finfo(self.df1.dtype).tiny
        x1 = self._gamma1.rsample(sample_shape)
        x2 = self._gamma2.rsample(sample_shape).clamp(min=tiny)
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        h1, h2 = self.df1 * 0.5, self.df2 * 0.5
        ratio = self.df1 / self.df2
        norm = lgamma(h1 + h2) - lgamma(h1) - lgamma(h2)
        return norm + h1 * ratio.log() + (h1 - 1) * value.log() - (h1 + h2) * (ratio * value).log1p()
