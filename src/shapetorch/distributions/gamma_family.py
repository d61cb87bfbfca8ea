"""Gamma and the distributions drawn through it (Beta, Dirichlet), and the counts (Poisson, Binomial) and
OneHotCategorical. Samples come from the global generator (``manual_seed``); they carry no gradient: ``rsample``
of Gamma, Beta and Dirichlet (torch's implicit reparameterisation) is not built, so ``has_rsample`` is False."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from .._tensor import Tensor
from ..ops import creation
from ..ops.special import digamma, lgamma
from . import constraints as C
from .distribution import Distribution
from .library import Categorical, _params


def _draw(like: Tensor, data: Any) -> Tensor:
    return creation.tensor(np.asarray(data), dtype=like.dtype)


def _rng() -> Any:
    from ..ops.random import _rng as rng

    return rng(None)


def _numpy(t: Tensor) -> Any:
    return t.detach().cpu().numpy().astype(np.float64)


class Gamma(Distribution):
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"concentration": C.positive, "rate": C.positive}
    support = C.positive

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

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        x = _rng().standard_gamma(np.broadcast_to(_numpy(self.concentration), shape))
        return _draw(self.rate, x) / self.rate.detach()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration, self.rate
        return a.xlogy(b) + (a - 1).xlogy(value) - b * value - lgamma(a)

    def entropy(self) -> Tensor:
        a, b = self.concentration, self.rate
        return a - b.log() + lgamma(a) + (1.0 - a) * digamma(a)


class Beta(Distribution):
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"concentration1": C.positive, "concentration0": C.positive}
    support = C.unit_interval

    def __init__(self, concentration1: Any, concentration0: Any, validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = _params(concentration1, concentration0)
        super().__init__(self.concentration1.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def variance(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        total = a + b
        return a * b / (total ** 2 * (total + 1))

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        a, b = (np.broadcast_to(_numpy(t), shape) for t in (self.concentration1, self.concentration0))
        return _draw(self.concentration1, _rng().beta(a, b))

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


class Dirichlet(Distribution):
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"concentration": C.positive}
    support = C.simplex

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def variance(self) -> Tensor:
        a0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (a0 - self.concentration) / (a0 ** 2 * (a0 + 1))

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        g = _rng().standard_gamma(np.broadcast_to(_numpy(self.concentration), shape))
        return _draw(self.concentration, g / g.sum(-1, keepdims=True))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        return (a - 1).xlogy(value).sum(-1) + lgamma(a.sum(-1)) - lgamma(a).sum(-1)

    def entropy(self) -> Tensor:
        a = self.concentration
        k, a0 = a.shape[-1], a.sum(-1)
        return lgamma(a).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0) - ((a - 1.0) * digamma(a)).sum(-1)


class Poisson(Distribution):
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

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

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
