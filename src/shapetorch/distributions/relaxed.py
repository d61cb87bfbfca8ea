"""Continuous relaxations of discrete draws, reparameterizable so gradients reach the probabilities:
``RelaxedBernoulli`` (the binary Concrete distribution: a sigmoid of ``LogitRelaxedBernoulli``) and
``RelaxedOneHotCategorical`` (Gumbel-softmax: an exp of ``ExpRelaxedCategorical``), with torch's parameters."""

from __future__ import annotations

from typing import Any, ClassVar

from .._dtype import finfo
from .._tensor import Tensor
from ..nn.functional import softplus
from ..ops import random
from . import constraints as C
from .derived import TransformedDistribution
from .distribution import Distribution
from .library import Categorical, _Binary
from .transforms import ExpTransform, SigmoidTransform


def _clamped_uniform(like: Tensor, shape: tuple[int, ...]) -> Tensor:
    info = finfo(like.dtype)
    return random.rand(shape, dtype=like.dtype, device=like.device).clamp(info.eps, 1 - info.eps)


class LogitRelaxedBernoulli(_Binary):
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"probs": C.unit_interval, "logits": C.real}
    support = C.real
    has_rsample = True

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        p = self._set(probs, logits, normalize=False)
        self.temperature = temperature
        super().__init__(p.shape, (), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        new = super().expand(batch_shape, _instance)
        new.temperature = self.temperature  # (one temperature for the batch, not a batch parameter)
        return new

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        probs: Tensor = self.probs
        p = probs.expand(self._extended_shape(sample_shape))
        u = _clamped_uniform(p, tuple(p.shape))
        return (u.log() - (-u).log1p() + p.log() - (-p).log1p()) / self.temperature

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits: Tensor = self.logits
        diff = logits - value * self.temperature
        t = self.temperature
        log_t = t.log() if isinstance(t, Tensor) else value.new_full((), float(t)).log()
        return log_t + diff - 2 * softplus(diff)


class _Relaxed(TransformedDistribution):
    """A relaxed distribution: its base (over logits) pushed through its transform, with the base's temperature,
    probs and logits."""

    has_rsample = True
    _base: Any
    _transform: Any

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        base = self._base(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, self._transform(), validate_args=validate_args)

    @property
    def temperature(self) -> Any:
        return self.base_dist.temperature

    @property
    def probs(self) -> Tensor:
        out: Tensor = self.base_dist.probs
        return out

    @property
    def logits(self) -> Tensor:
        out: Tensor = self.base_dist.logits
        return out


class RelaxedBernoulli(_Relaxed):
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"probs": C.unit_interval, "logits": C.real}
    support = C.unit_interval
    _base = LogitRelaxedBernoulli
    _transform = SigmoidTransform


class ExpRelaxedCategorical(Distribution):
    """The log of a Gumbel-softmax draw (a point in log-simplex space)."""

    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"probs": C.simplex, "logits": C.real_vector}
    support = C.real_vector
    has_rsample = True

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        self.temperature = temperature
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:], validate_args)

    @property
    def probs(self) -> Tensor:
        out: Tensor = self._categorical.probs
        return out

    @property
    def logits(self) -> Tensor:
        out: Tensor = self._categorical.logits
        return out

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        new = super().expand(batch_shape, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        new.temperature = self.temperature  # (one temperature for the batch, not a batch parameter)
        return new

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = _clamped_uniform(self.logits, shape)
        gumbels = -((-(u.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(-1, keepdim=True)

    def log_prob(self, value: Tensor) -> Tensor:
        k = self._categorical.param_shape[-1]
        if self._validate_args:
            self._validate_sample(value)
        t = self.temperature if isinstance(self.temperature, Tensor) else value.new_full((), float(self.temperature))
        log_scale = t.new_full(tuple(t.shape), float(k)).lgamma() - t.log().mul(-(k - 1))
        score = self.logits - value.mul(t)
        score = (score - score.logsumexp(-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(_Relaxed):
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"probs": C.simplex, "logits": C.real_vector}
    support = C.simplex
    _base = ExpRelaxedCategorical
    _transform = ExpTransform
