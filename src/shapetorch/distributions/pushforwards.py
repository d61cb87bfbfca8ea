"""Distributions defined as a simpler one pushed through transforms: ``InverseGamma`` (1 / Gamma), ``Kumaraswamy``
(a Uniform through powers), ``LogisticNormal`` (a Normal through stick-breaking onto the simplex). Their
log_prob, sampling and support come from :class:`TransformedDistribution`; the moments and entropy are the
closed forms torch gives."""

from __future__ import annotations

from typing import Any, ClassVar

from .._tensor import Tensor
from ..ops.conversion import where
from ..ops.special import digamma, lgamma
from . import constraints as C
from .derived import TransformedDistribution
from .gamma_family import Gamma
from .library import Normal, Uniform, _params
from .transforms import AffineTransform, PowerTransform, StickBreakingTransform

_EULER_GAMMA = 0.57721566490153286060


class InverseGamma(TransformedDistribution):
    """``1 / X`` for ``X ~ Gamma(concentration, rate)``: ``rate`` is the scale of the result."""

    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"concentration": C.positive, "rate": C.positive}
    support = C.positive
    has_rsample = True

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        base = Gamma(concentration, rate, validate_args=validate_args)
        super().__init__(base, PowerTransform(-base.rate.new_ones(())), validate_args=validate_args)

    @property
    def concentration(self) -> Tensor:
        out: Tensor = self.base_dist.concentration
        return out

    @property
    def rate(self) -> Tensor:
        out: Tensor = self.base_dist.rate
        return out

    @property
    def mean(self) -> Tensor:
        a, b = self.concentration, self.rate
        return where(a > 1, b / (a - 1), float("inf"))

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        a, b = self.concentration, self.rate
        return where(a > 2, b.square() / ((a - 1).square() * (a - 2)), float("inf"))

    def entropy(self) -> Tensor:
        a = self.concentration
        return a + self.rate.log() + lgamma(a) - (1 + a) * digamma(a)


def _kumaraswamy_moment(a: Tensor, b: Tensor, n: int) -> Tensor:
    """E[X^n] = b * B(1 + n/a, b)."""
    shifted = 1 + n / a
    return b * (lgamma(shifted) + lgamma(b) - lgamma(shifted + b)).exp()


class Kumaraswamy(TransformedDistribution):
    """The density ``a b x^(a-1) (1 - x^a)^(b-1)`` on [0, 1]: ``(1 - U^(1/b))^(1/a)`` for a uniform ``U``."""

    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"concentration1": C.positive, "concentration0": C.positive}
    support = C.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Any, concentration0: Any, validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = _params(concentration1, concentration0)
        zeros = self.concentration0.new_zeros(tuple(self.concentration0.shape))
        base = Uniform(zeros, zeros + 1, validate_args=validate_args)
        parts = [PowerTransform(self.concentration0.reciprocal()), AffineTransform(1.0, -1.0),
                 PowerTransform(self.concentration1.reciprocal())]
        super().__init__(base, parts, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return _kumaraswamy_moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        log_mode = b.reciprocal() * (-b).log1p() - (-b * a).log1p()
        # (no interior maximum when either concentration is below 1: NaN, as torch)
        return where((b < 1) | (a < 1), float("nan"), log_mode).exp()

    @property
    def variance(self) -> Tensor:
        return _kumaraswamy_moment(self.concentration1, self.concentration0, 2) - self.mean ** 2

    def entropy(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        t1, t0 = 1 - a.reciprocal(), 1 - b.reciprocal()
        harmonic = digamma(b + 1) + _EULER_GAMMA
        return t0 + t1 * harmonic - a.log() - b.log()


class LogisticNormal(TransformedDistribution):
    """A Normal over R^(K-1) mapped onto the K-simplex by :class:`StickBreakingTransform`."""

    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"loc": C.real, "scale": C.positive}
    support = C.simplex
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand((1,))
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    @property
    def loc(self) -> Tensor:
        out: Tensor = self.base_dist.base_dist.loc
        return out

    @property
    def scale(self) -> Tensor:
        out: Tensor = self.base_dist.base_dist.scale
        return out
