"""Distributions built from others: ``TransformedDistribution`` (a base pushed through transforms), ``LogNormal``
(a Normal through ``exp``), ``Independent`` (batch dims reinterpreted as event dims)."""

from __future__ import annotations

from typing import Any, ClassVar

from .._tensor import Tensor
from . import constraints as C
from .distribution import Distribution
from .library import Normal
from .transforms import ExpTransform, Transform


def _sum_rightmost(x: Tensor, n: int) -> Tensor:
    return x.reshape(*x.shape[: x.dim() - n], -1).sum(-1) if n > 0 else x


class TransformedDistribution(Distribution):
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {}

    def __init__(self, base_distribution: Distribution, transforms: Transform | list[Transform],
                 validate_args: bool | None = None) -> None:
        self.base_dist: Any = base_distribution
        self.transforms = [transforms] if isinstance(transforms, Transform) else list(transforms)
        for t in self.transforms:
            if not isinstance(t, Transform):
                raise ValueError(f"transforms must be a Transform or a list of Transforms, but was {transforms}")
        self.has_rsample = base_distribution.has_rsample
        super().__init__(base_distribution.batch_shape, base_distribution.event_shape, validate_args)

    @property
    def support(self) -> Any:
        return self.transforms[-1].codomain if self.transforms else self.base_dist.support

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        new = super().expand(batch_shape, _instance)
        new.base_dist = self.base_dist.expand(batch_shape)
        return new

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def sample(self, sample_shape: Any = ()) -> Tensor:
        from ..autograd import no_grad

        with no_grad():
            x = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                x = t(x)
            return x

    def log_prob(self, value: Tensor) -> Tensor:
        event_dim = len(self.event_shape)
        lp: Any = 0.0
        y = value
        for t in reversed(self.transforms):
            x = t.inv(y)
            lp = lp - _sum_rightmost(t.log_abs_det_jacobian(x, y), event_dim - t.event_dim)
            y = x
        base = _sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))
        return base + lp

    def cdf(self, value: Tensor) -> Tensor:
        for t in reversed(self.transforms):
            value = t.inv(value)
        return self.base_dist.cdf(value)


class LogNormal(TransformedDistribution):
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"loc": C.real, "scale": C.positive}
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        super().__init__(Normal(loc, scale, validate_args=validate_args), ExpTransform(), validate_args=validate_args)

    @property
    def support(self) -> Any:
        return C.positive

    @property
    def loc(self) -> Tensor:
        return self.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mean(self) -> Tensor:
        return (self.loc + self.scale ** 2 / 2).exp()

    @property
    def mode(self) -> Tensor:
        return (self.loc - self.scale ** 2).exp()

    @property
    def variance(self) -> Tensor:
        s2 = self.scale ** 2
        return s2.expm1() * (2 * self.loc + s2).exp()

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() + self.loc


class Independent(Distribution):
    """``base``'s rightmost ``reinterpreted_batch_ndims`` batch dims read as event dims: log_prob sums over them."""

    arg_constraints: ClassVar[dict[str, C.Constraint]] = {}

    def __init__(self, base_distribution: Distribution, reinterpreted_batch_ndims: int,
                 validate_args: bool | None = None) -> None:
        batch = tuple(base_distribution.batch_shape)
        n = reinterpreted_batch_ndims
        if n > len(batch):
            raise ValueError("Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), actual "
                             f"{n} vs {len(batch)}")
        self.base_dist: Any = base_distribution
        self.reinterpreted_batch_ndims = n
        self.has_rsample = base_distribution.has_rsample
        cut = len(batch) - n
        super().__init__(batch[:cut], batch[cut:] + tuple(base_distribution.event_shape), validate_args)

    @property
    def support(self) -> Any:
        return self.base_dist.support

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        """The base expanded over the new batch dims and the reinterpreted ones, as torch's."""
        new = super().expand(batch_shape, _instance)
        n = self.reinterpreted_batch_ndims
        new.base_dist = self.base_dist.expand(tuple(batch_shape) + tuple(self._event_shape[:n]))
        return new

    @property
    def mean(self) -> Tensor:
        return self.base_dist.mean

    @property
    def mode(self) -> Tensor:
        return self.base_dist.mode

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    def sample(self, sample_shape: Any = ()) -> Tensor:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value: Tensor) -> Tensor:
        return _sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self) -> Tensor:
        return _sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)
