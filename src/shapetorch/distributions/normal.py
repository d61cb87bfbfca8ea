"""``Normal(loc, scale)`` with the reparameterized sampler VAEs and Gaussian policies use."""

from __future__ import annotations

import math
from typing import Any

from .._tensor import Tensor
from ..ops import random
from ..ops.creation import tensor
from .distribution import Distribution


class Normal(Distribution):
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        loc = loc if isinstance(loc, Tensor) else tensor(float(loc))
        scale = scale if isinstance(scale, Tensor) else tensor(float(scale))
        shape = tuple((loc + scale).shape)
        self.loc, self.scale = loc.expand(shape), scale.expand(shape)
        super().__init__(shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = random.normal(0.0, 1.0, size=tuple(shape), dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        var = self.scale ** 2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - math.log(math.sqrt(2 * math.pi))

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()
