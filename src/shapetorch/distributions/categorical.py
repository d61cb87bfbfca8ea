"""``Categorical(probs=...)`` or ``Categorical(logits=...)`` over the last dim."""

from __future__ import annotations

from typing import Any

from .._rules.broadcast import broadcast_pair
from .._tensor import Tensor
from ..ops import random
from ..ops._common import check
from .distribution import Distribution


class Categorical(Distribution):
    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            self.logits = self.probs.clamp(min=_tiny(probs)).log()
        else:
            assert logits is not None
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
            self.probs = self.logits.softmax(-1)
        self._num_events = self.probs.shape[-1]
        super().__init__(self.probs.shape[:-1], (), validate_args)

    @property
    def param_shape(self) -> Any:
        return self.probs.shape

    def sample(self, sample_shape: Any = ()) -> Tensor:
        n = 1
        for s in sample_shape:
            n *= int(s)
        probs_2d = self.probs.detach().reshape(-1, self._num_events)
        # looked up at call time: torch's Categorical calls torch.multinomial the same way
        samples_2d = random.multinomial(probs_2d, n, True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value: Tensor) -> Tensor:
        batch = check(broadcast_pair, tuple(value.shape), tuple(self.logits.shape[:-1]), op="log_prob")
        index = value.long().broadcast_to(batch).unsqueeze(-1)
        return self.logits.broadcast_to((*batch, self._num_events)).gather(-1, index).squeeze(-1)

    def entropy(self) -> Tensor:
        lowest = -3.4028234663852886e38 if self.logits.dtype.itemsize == 4 else -1.7976931348623157e308
        return -(self.logits.clamp(min=lowest) * self.probs).sum(-1)  # -inf logits of zero probs count 0

    @property
    def mean(self) -> Tensor:
        return self.probs.new_full(tuple(self.batch_shape), float("nan"))

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)


def _tiny(t: Tensor) -> float:
    return 1.1754943508222875e-38 if t.dtype.itemsize == 4 else 2.2250738585072014e-308
