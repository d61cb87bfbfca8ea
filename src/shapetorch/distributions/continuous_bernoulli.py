"""``ContinuousBernoulli``: the density ``C(p) p^x (1-p)^(1-x)`` on [0, 1] (Loaiza-Ganem and Cunningham, 2019).
Its normaliser, mean and variance have a removable singularity at ``p = 1/2``; inside ``lims`` (torch's
(0.499, 0.501)) they are Taylor polynomials, outside the closed forms, as torch computes them."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from .._dtype import finfo
from .._tensor import Tensor
from ..ops import random
from ..ops.conversion import where
from . import constraints as C
from .exponential_family import ExponentialFamily
from .library import _params, broadcast_shape


def _clamp_probs(p: Tensor) -> Tensor:
    eps = finfo(p.dtype).eps
    return p.clamp(eps, 1 - eps)


class ContinuousBernoulli(ExponentialFamily):
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"probs": C.unit_interval, "logits": C.real}
    support = C.unit_interval
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, probs: Any = None, logits: Any = None, lims: tuple[float, float] = (0.499, 0.501),
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (p,) = _params(probs)
            # torch checks probs before clamping only when validate_args is given explicitly
            if validate_args is not None and not bool(C.unit_interval.check(p).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = _clamp_probs(p)
            param = self.probs
        else:
            (self.logits,) = _params(logits)
            param = self.logits
        self._lims = lims
        super().__init__(param.shape, (), validate_args)

    def __getattr__(self, name: str) -> Any:
        if name == "probs" and "logits" in self.__dict__:
            return _clamp_probs(self.__dict__["logits"].sigmoid())
        if name == "logits" and "probs" in self.__dict__:
            p = _clamp_probs(self.__dict__["probs"])
            return p.log() - (-p).log1p()
        raise AttributeError(name)

    def _stable(self) -> Tensor:
        """Where the closed forms are used: probs outside ``lims``."""
        p = self.probs
        return (p <= self._lims[0]) | (p > self._lims[1])

    def _cut_probs(self) -> Tensor:
        return where(self._stable(), self.probs, self.probs.new_full((), self._lims[0]))

    def _log_norm(self) -> Tensor:
        cut = self._cut_probs()
        below = where(cut <= 0.5, cut, 0.0)
        above = where(cut >= 0.5, cut, 1.0)
        closed = ((-cut).log1p() - cut.log()).abs().log() - where(cut <= 0.5, (-2.0 * below).log1p(),
                                                                    (2.0 * above - 1.0).log())
        x = (self.probs - 0.5) ** 2
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._stable(), closed, taylor)

    @property
    def mean(self) -> Tensor:
        cut = self._cut_probs()
        closed = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x ** 2) * x
        return where(self._stable(), closed, taylor)

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError("ContinuousBernoulli does not implement mode")

    @property
    def variance(self) -> Tensor:
        cut = self._cut_probs()
        closed = cut * (cut - 1.0) / (1.0 - 2.0 * cut) ** 2 + 1.0 / ((-cut).log1p() - cut.log()) ** 2
        x = (self.probs - 0.5) ** 2
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return where(self._stable(), closed, taylor)

    @property
    def param_shape(self) -> Any:
        return (self.probs if "probs" in self.__dict__ else self.logits).shape

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        u = random.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype)
        return self.icdf(u)

    def log_prob(self, value: Tensor) -> Tensor:
        from ..nn.functional import binary_cross_entropy_with_logits

        if self._validate_args:
            self._validate_sample(value)
        logits = self.logits
        shape = broadcast_shape(tuple(logits.shape), tuple(value.shape))
        nll = binary_cross_entropy_with_logits(logits.expand(shape), value.expand(shape).to(logits.dtype),
                                               reduction="none")
        return -nll + self._log_norm()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        closed = (cut ** value * (1.0 - cut) ** (1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        inside = where(self._stable(), closed, value)
        return where(value <= 0.0, 0.0, where(value >= 1.0, 1.0, inside))

    def icdf(self, value: Tensor) -> Tensor:
        cut = self._cut_probs()
        closed = (((-cut) + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p()) / (cut.log() - (-cut).log1p())
        return where(self._stable(), closed, value)

    def entropy(self) -> Tensor:
        log0, log1 = (-self.probs).log1p(), self.probs.log()
        return self.mean * (log0 - log1) - self._log_norm() - log0

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return (self.logits,)

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        """F(logits): log(expm1(x) / x), by its Taylor polynomial inside ``lims - 1/2``, as torch's."""
        (x,) = natural_params
        stable = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = where(stable, x, self._lims[0] - 0.5)
        closed = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x ** 2 / 24.0 - x ** 4 / 2880.0
        return where(stable, closed, taylor)
