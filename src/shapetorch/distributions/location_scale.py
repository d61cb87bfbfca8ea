"""Continuous distributions beyond the common ones: ``Cauchy``, ``HalfCauchy``, ``HalfNormal``, ``Gumbel``,
``StudentT``, ``Weibull``, ``Pareto`` and ``Chi2``; each with torch's parameters, moments, ``log_prob``,
``entropy`` and a reparameterized ``rsample`` (a standard draw pushed through the distribution's quantile map, so
gradients reach the parameters)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from .._dtype import finfo
from .._tensor import Tensor
from ..ops import random
from ..ops.special import digamma, lgamma
from . import constraints as C
from .distribution import Distribution
from .gamma_family import Gamma
from .library import Normal, _LocationScale, _params

_EULER = 0.57721566490153286061


def _uniform(like: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Uniform draws in (tiny, 1 - eps): their logs and the logs of their complements are finite."""
    info = finfo(like.dtype)
    return random.rand(shape, dtype=like.dtype, device=like.device).clamp(info.tiny, 1 - info.eps)


def _full(like: Tensor, value: float) -> Tensor:
    return like.new_full(tuple(like.shape), value)


class Cauchy(_LocationScale):
    @property
    def mean(self) -> Tensor:
        return _full(self.loc, math.nan)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return _full(self.loc, math.inf)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        u = _uniform(self.loc, self._extended_shape(sample_shape))
        return self.loc + self.scale * (math.pi * (u - 0.5)).tan()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value: Tensor) -> Tensor:
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value: Tensor) -> Tensor:
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()


class _Folded(Distribution):
    """|X| of a distribution symmetric about 0 (HalfNormal, HalfCauchy): the base's density doubled on [0, inf)."""

    support = C.nonnegative
    has_rsample = True
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"scale": C.positive}
    base: Any

    def __init__(self, base: Distribution, validate_args: bool | None) -> None:
        self.base = base
        super().__init__(base.batch_shape, (), validate_args)

    @property
    def scale(self) -> Tensor:
        out: Tensor = self.base.scale
        return out

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        new = super().expand(batch_shape, _instance)
        new.base = self.base.expand(batch_shape)
        return new

    @property
    def mode(self) -> Tensor:
        return self.scale.new_zeros(tuple(self.batch_shape))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        out: Tensor = self.base.rsample(sample_shape).abs()
        return out

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        lp: Tensor = self.base.log_prob(value) + math.log(2)
        return lp.masked_fill(value < 0, -math.inf)

    def cdf(self, value: Tensor) -> Tensor:
        out: Tensor = 2 * self.base.cdf(value) - 1
        return out

    def icdf(self, prob: Tensor) -> Tensor:
        out: Tensor = self.base.icdf((prob + 1) / 2)
        return out

    def entropy(self) -> Tensor:
        out: Tensor = self.base.entropy() - math.log(2)
        return out


class HalfNormal(_Folded):
    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        (scale,) = _params(scale)
        super().__init__(Normal(scale.new_zeros(()).expand(scale.shape), scale, validate_args=validate_args),
                         validate_args)

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Tensor:
        return self.scale ** 2 * (1 - 2 / math.pi)


class HalfCauchy(_Folded):
    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        (scale,) = _params(scale)
        super().__init__(Cauchy(scale.new_zeros(()).expand(scale.shape), scale, validate_args=validate_args),
                         validate_args)

    @property
    def mean(self) -> Tensor:
        return _full(self.scale, math.inf)

    @property
    def variance(self) -> Tensor:
        return _full(self.scale, math.inf)


class Gumbel(_LocationScale):
    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * _EULER

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev ** 2

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        u = _uniform(self.loc, self._extended_shape(sample_shape))
        return self.loc - self.scale * (-u.log()).log()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -(z + (-z).exp()) - self.scale.log()

    def cdf(self, value: Tensor) -> Tensor:
        return (-(-(value - self.loc) / self.scale).exp()).exp()

    def entropy(self) -> Tensor:
        return self.scale.log() + (1 + _EULER)


class StudentT(Distribution):
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"df": C.positive, "loc": C.real, "scale": C.positive}
    support = C.real
    has_rsample = True

    def __init__(self, df: Any, loc: Any = 0.0, scale: Any = 1.0, validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = _params(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.shape, (), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        new = super().expand(batch_shape, _instance)
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self) -> Tensor:
        return self.loc.masked_fill(self.df <= 1, math.nan)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        m = self.scale ** 2 * self.df / (self.df - 2)
        m = m.masked_fill((self.df <= 2) & (self.df > 1), math.inf)
        return m.masked_fill(self.df <= 1, math.nan)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        # a normal over the root of a chi-squared divided by its degrees of freedom (torch's construction)
        shape = self._extended_shape(sample_shape)
        z = random.randn(shape, dtype=self.df.dtype, device=self.df.device)
        y = z * (self._chi2.rsample(sample_shape) / self.df).rsqrt()
        return self.loc + self.scale * y

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + lgamma(0.5 * self.df)
             - lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * (y ** 2 / self.df).log1p() - z

    def entropy(self) -> Tensor:
        half = 0.5 * (self.df + 1)
        lbeta = lgamma(0.5 * self.df) + math.lgamma(0.5) - lgamma(half)
        return (self.scale.log() + half * (digamma(half) - digamma(0.5 * self.df)) + 0.5 * self.df.log()
                + lbeta)


class Chi2(Gamma):
    """Gamma(df / 2, 1 / 2)."""

    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"df": C.positive}

    def __init__(self, df: Any, validate_args: bool | None = None) -> None:
        (df,) = _params(df)
        super().__init__(0.5 * df, df.new_full((), 0.5).expand(df.shape), validate_args=validate_args)

    @property
    def df(self) -> Tensor:
        return self.concentration * 2


class Weibull(Distribution):
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"scale": C.positive, "concentration": C.positive}
    support = C.positive
    has_rsample = True

    def __init__(self, scale: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.scale, self.concentration = _params(scale, concentration)
        super().__init__(self.scale.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.scale * lgamma(1 + self.concentration.reciprocal()).exp()

    @property
    def mode(self) -> Tensor:
        k = self.concentration
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self) -> Tensor:
        k = self.concentration
        return self.scale ** 2 * (lgamma(1 + 2 / k).exp() - lgamma(1 + 1 / k).exp() ** 2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        # an Exponential(1) draw to the power 1 / k, scaled (torch's transforms)
        u = _uniform(self.scale, self._extended_shape(sample_shape))
        return self.scale * (-(-u).log1p()) ** self.concentration.reciprocal()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        k, lam = self.concentration, self.scale
        z = value / lam
        return (k / lam).log() + (k - 1) * z.log() - z ** k

    def cdf(self, value: Tensor) -> Tensor:
        return 1 - (-((value / self.scale) ** self.concentration)).exp()

    def entropy(self) -> Tensor:
        k = self.concentration
        return _EULER * (1 - k.reciprocal()) + (self.scale / k).log() + 1


class Pareto(Distribution):
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"scale": C.positive, "alpha": C.positive}
    has_rsample = True

    def __init__(self, scale: Any, alpha: Any, validate_args: bool | None = None) -> None:
        self.scale, self.alpha = _params(scale, alpha)
        super().__init__(self.scale.shape, (), validate_args)

    @property
    def support(self) -> C.Constraint:
        return C.greater_than_eq(self.scale)

    @property
    def mean(self) -> Tensor:
        a = self.alpha.clamp(min=1)
        return (a * self.scale / (a - 1)).masked_fill(self.alpha <= 1, math.inf)

    @property
    def mode(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        a = self.alpha.clamp(min=2)
        return (self.scale ** 2 * a / ((a - 1) ** 2 * (a - 2))).masked_fill(self.alpha <= 2, math.inf)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        # exp of an Exponential(alpha) draw, scaled (torch's transforms)
        u = _uniform(self.scale, self._extended_shape(sample_shape))
        return self.scale * (-(-u).log1p() / self.alpha).exp()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.alpha.log() + self.alpha * self.scale.log() - (self.alpha + 1) * value.log()

    def cdf(self, value: Tensor) -> Tensor:
        return 1 - (self.scale / value) ** self.alpha

    def entropy(self) -> Tensor:
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class GeneralizedPareto(Distribution):
    """The peaks-over-threshold law: ``loc + scale * ((1 - u)^(-concentration) - 1) / concentration`` for a uniform
    ``u`` (``loc - scale * log(1 - u)``, the exponential, at concentration 0). A negative concentration bounds the
    support above at ``loc - scale / concentration``."""

    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"loc": C.real, "scale": C.positive,
                                                          "concentration": C.real}
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = _params(loc, scale, concentration)
        super().__init__(self.loc.shape, (), validate_args)

    @property
    def support(self) -> Any:
        from ..ops.conversion import where

        upper = where(self.concentration < 0, self.loc - self.scale / self.concentration, math.inf)
        return C.interval(self.loc, upper)

    def _zero_and_safe(self) -> tuple[Tensor, Tensor]:
        """Where the concentration is (close to) 0, and the concentration with those entries replaced by 1 so
        the other branch's division stays finite (its gradient too)."""
        from ..ops.conversion import where

        zero = self.concentration.isclose(self.concentration.new_zeros(()))
        return zero, where(zero, 1.0, self.concentration)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        u = random.rand(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.icdf(u)

    def log_prob(self, value: Tensor) -> Tensor:
        from ..ops.conversion import where

        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, safe = self._zero_and_safe()
        y = 1 / safe + 1
        nonzero = where(y == 0, y, y * (safe * z).log1p())
        return -self.scale.log() - where(zero, z, nonzero)

    def log_survival_function(self, value: Tensor) -> Tensor:
        from ..ops.conversion import where

        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, safe = self._zero_and_safe()
        return where(zero, -z, -(safe * z).log1p() / safe)

    def log_cdf(self, value: Tensor) -> Tensor:
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value: Tensor) -> Tensor:
        return self.log_cdf(value).exp()

    def icdf(self, value: Tensor) -> Tensor:
        from ..ops.conversion import where

        zero, safe = self._zero_and_safe()
        log_tail = (-value).log1p()
        return where(zero, self.loc - self.scale * log_tail,
                     self.loc + self.scale / safe * (-safe * log_tail).expm1())

    @property
    def mean(self) -> Tensor:
        from ..ops.conversion import where

        finite = self.concentration < 1
        safe = where(finite, self.concentration, 0.5)
        return where(finite, self.loc + self.scale / (1 - safe), math.nan)

    @property
    def variance(self) -> Tensor:
        from ..ops.conversion import where

        finite = self.concentration < 0.5
        safe = where(finite, self.concentration, 0.25)
        return where(finite, self.scale ** 2 / ((1 - safe) ** 2 * (1 - 2 * safe)), math.nan)

    @property
    def mode(self) -> Tensor:
        return self.loc

    def entropy(self) -> Tensor:
        return (self.scale.log() + self.concentration + 1).expand(self._batch_shape)
