"""Distributions built from others: ``TransformedDistribution`` (a base pushed through transforms), ``LogNormal``
(a Normal through ``exp``), ``Independent`` (batch dims reinterpreted as event dims)."""

from __future__ import annotations

from typing import Any, ClassVar

from .._tensor import Size, Tensor
from . import constraints as C
from .distribution import Distribution
from .library import Normal
from .transforms import ComposeTransform, ExpTransform, Transform
from .transforms import sum_rightmost as _sum_rightmost


class TransformedDistribution(Distribution):
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {}

    def __init__(self, base_distribution: Distribution, transforms: Transform | list[Transform],
                 validate_args: bool | None = None) -> None:
        self.transforms = [transforms] if isinstance(transforms, Transform) else list(transforms)
        for t in self.transforms:
            if not isinstance(t, Transform):
                raise ValueError(f"transforms must be a Transform or a list of Transforms, but was {transforms}")
        # As torch: the base is expanded to the shape the transforms need, and batch dims that a transform reads
        # as one event become the base's event dims; the result's event dims are the larger of what the
        # transforms couple and what the base's events become.
        base_shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        base_event_dim = len(base_distribution.event_shape)
        whole = ComposeTransform(self.transforms)
        if len(base_shape) < whole.domain.event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least {whole.domain.event_dim}, "
                             f"but got {Size(base_shape)}.")
        forward_shape = whole.forward_shape(base_shape)
        expanded = whole.inverse_shape(forward_shape)
        if expanded != base_shape:
            base_distribution = base_distribution.expand(expanded[: len(expanded) - base_event_dim])
        if whole.domain.event_dim > base_event_dim:
            base_distribution = Independent(base_distribution, whole.domain.event_dim - base_event_dim)
        self.base_dist: Any = base_distribution
        self.has_rsample = base_distribution.has_rsample
        change = whole.codomain.event_dim - whole.domain.event_dim
        event_dim = max(whole.codomain.event_dim, base_event_dim + change)
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:], validate_args)

    @property
    def support(self) -> Any:
        """The last transform's codomain, read with the distribution's event dims (as torch's)."""
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        extra = len(self.event_shape) - support.event_dim
        return C.independent(support, extra) if extra > 0 else support

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        new = super().expand(batch_shape, _instance)
        shape = tuple(batch_shape) + tuple(self.event_shape)
        new.base_dist = self.base_dist.expand(shape[: len(shape) - len(self.base_dist.event_shape)])
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
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        lp: Any = 0.0
        y = value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            lp = lp - _sum_rightmost(t.log_abs_det_jacobian(x, y), event_dim - t.domain.event_dim)
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

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_dist}, {self.reinterpreted_batch_ndims})"

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
