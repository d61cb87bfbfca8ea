"""Distributions of counts: ``Geometric`` (failures before the first success), ``NegativeBinomial`` (failures
before ``total_count`` successes) and ``Multinomial`` (``total_count`` categorical draws counted per category),
with torch's parameters, moments, ``log_prob``, ``entropy`` and samplers."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from .._dtype import finfo
from .._tensor import Tensor
from ..nn.functional import binary_cross_entropy_with_logits, logsigmoid
from ..ops import random
from ..ops.special import lgamma
from . import constraints as C
from .gamma_family import Binomial, Gamma, Poisson
from .library import Categorical, _Binary, _params


class Geometric(_Binary):
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"probs": C.interval(0.0, 1.0), "logits": C.real}
    support = C.nonnegative_integer

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        p = self._set(probs, logits, normalize=False)
        super().__init__(p.shape, (), validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all()):
            raise ValueError(f"Expected parameter probs ({type(self.probs).__name__} of shape {tuple(self.probs.shape)}) "
                             f"of distribution {self!r} to satisfy the constraint {C.positive!r}, but found invalid "
                             f"values:\n{self.probs}")

    @property
    def mean(self) -> Tensor:
        out: Tensor = 1.0 / self.probs - 1.0
        return out

    @property
    def mode(self) -> Tensor:
        out: Tensor = self.probs.new_zeros(tuple(self.batch_shape))
        return out

    @property
    def variance(self) -> Tensor:
        out: Tensor = (1.0 / self.probs - 1.0) / self.probs
        return out

    def sample(self, sample_shape: Any = ()) -> Tensor:
        from ..autograd import no_grad

        p: Tensor = self.probs.detach()
        with no_grad():
            u = random.rand(self._extended_shape(sample_shape), dtype=p.dtype, device=p.device)
            u = u.clamp(min=finfo(p.dtype).tiny)
            return (u.log() / (-p).log1p()).floor()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, p = _params(value, self.probs)
        # a certain success (p = 1) gives log 1 = 0 for the value 0, not 0 * -inf
        q = p.masked_fill((p == 1) & (value == 0), 0.0)
        out: Tensor = value * (-q).log1p() + self.probs.log()
        return out

    def entropy(self) -> Tensor:
        out: Tensor = binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs
        return out


class NegativeBinomial(_Binary):
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"total_count": C.nonnegative,
                                                          "probs": C.half_open_interval(0.0, 1.0), "logits": C.real}
    support = C.nonnegative_integer

    def __init__(self, total_count: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        p = self._set(probs, logits, normalize=False)
        self.total_count, p = _params(total_count, p)
        self.__dict__["probs" if probs is not None else "logits"] = p
        super().__init__(p.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        out: Tensor = self.total_count * self.logits.exp()
        return out

    @property
    def mode(self) -> Tensor:
        out: Tensor = ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)
        return out

    @property
    def variance(self) -> Tensor:
        out: Tensor = self.mean / (-self.logits).sigmoid()
        return out

    def sample(self, sample_shape: Any = ()) -> Tensor:
        # a Poisson draw of a Gamma-distributed rate (the gamma-Poisson mixture), as torch
        from ..autograd import no_grad

        with no_grad():
            rate = Gamma(self.total_count, (-self.logits).exp(), validate_args=False).sample(sample_shape)
            return Poisson(rate, validate_args=False).sample()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        unnormalized = n * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        normalization = -lgamma(n + value) + lgamma(1.0 + value) + lgamma(n)
        # no successes needed and none observed: probability 1 (lgamma(0) is inf)
        normalization = normalization.masked_fill(n + value == 0, 0.0)
        out: Tensor = unnormalized - normalization
        return out


class Multinomial(Categorical):
    """``total_count`` draws of a categorical, counted per category (event shape: the categories). log_prob
    takes any counts that sum to ``total_count``; sampling needs one ``total_count`` for the batch (an int)."""

    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"probs": C.simplex, "logits": C.real_vector}
    has_enumerate_support = False

    def __init__(self, total_count: int = 1, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        super().__init__(probs=probs, logits=logits, validate_args=validate_args)
        self._event_shape = type(self._event_shape)((self.probs.shape[-1],))

    @property
    def support(self) -> C.Constraint:
        return C.independent(C.integer_interval(0, self.total_count), 1)

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError("Multinomial does not implement mode")  # (as torch's: not the category's argmax)

    @property
    def mean(self) -> Tensor:
        out: Tensor = self.probs * self.total_count
        return out

    @property
    def variance(self) -> Tensor:
        out: Tensor = self.total_count * self.probs * (1 - self.probs)
        return out

    def sample(self, sample_shape: Any = ()) -> Tensor:
        draws = Categorical(probs=self.probs.detach(), validate_args=False).sample(
            (self.total_count, *tuple(sample_shape)))
        from ..nn.functional import one_hot

        k = self.probs.shape[-1]
        return one_hot(draws, k).sum(0).to(self.probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = _params(self.logits, value)
        # a count of 0 in a category of probability 0 contributes 0, not 0 * -inf
        logits = logits.masked_fill((value == 0) & (logits == -math.inf), 0.0)
        log_factorial_n = lgamma(value.sum(-1) + 1)
        log_factorial_xs = lgamma(value + 1).sum(-1)
        out: Tensor = log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
        return out

    def entropy(self) -> Tensor:
        n = float(self.total_count)
        term1 = n * Categorical(probs=self.probs, validate_args=False).entropy() - math.lgamma(n + 1)
        binomial = Binomial(self.total_count, probs=self.probs, validate_args=False)
        support = binomial.enumerate_support(expand=False)[1:]
        weights = lgamma(support + 1)
        term2: Tensor = (binomial.log_prob(support).exp() * weights).sum(0).sum(-1)
        out: Tensor = term1 + term2
        return out

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        new = super().expand(batch_shape, _instance)
        new._event_shape = self._event_shape
        return new
