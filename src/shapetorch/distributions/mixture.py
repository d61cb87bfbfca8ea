"""``MixtureSameFamily``: a ``Categorical`` choice among a batch of components of one family, with torch's
moments (the law of total variance), ``cdf``, ``log_prob`` (a log-sum-exp over the components) and sampler."""

from __future__ import annotations

from typing import Any, ClassVar

from .._tensor import Size, Tensor
from . import constraints as C
from .distribution import Distribution
from .library import Categorical


class MixtureSameFamily(Distribution):
    """A ``Categorical`` over the rightmost batch dim of ``component_distribution`` chooses the component each
    draw comes from; log_prob is the log of the mixture's weighted density."""

    arg_constraints: ClassVar[dict[str, C.Constraint]] = {}
    has_rsample = False

    def __init__(self, mixture_distribution: Categorical, component_distribution: Distribution,
                 validate_args: bool | None = None) -> None:
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError("The Mixture distribution needs to be an instance of torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of torch.distributions.Distribution")
        self._mixture_distribution = mixture_distribution
        self._component_distribution: Any = component_distribution
        mdbs = tuple(mixture_distribution.batch_shape)
        cdbs = tuple(component_distribution.batch_shape)[:-1]
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({Size(mdbs)}) is not compatible with "
                                 f"`component_distribution.batch_shape`({Size(cdbs)})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(cdbs, component_distribution.event_shape, validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        batch = tuple(batch_shape)
        new = super().expand(batch_shape, _instance)
        new._component_distribution = self._component_distribution.expand(batch + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch)
        return new

    def __repr__(self) -> str:
        return f"MixtureSameFamily(\n  {self._mixture_distribution},\n  {self._component_distribution})"

    @property
    def mixture_distribution(self) -> Categorical:
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Any:
        return self._component_distribution

    @property
    def support(self) -> Any:
        return self._component_distribution.support

    def _pad(self, x: Tensor) -> Tensor:
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x: Tensor) -> Tensor:
        dist_batch_ndims = len(self.batch_shape)
        cat_batch_ndims = len(self.mixture_distribution.batch_shape)
        pad_ndims = 0 if cat_batch_ndims == 1 else dist_batch_ndims - cat_batch_ndims
        xs = tuple(x.shape)
        x = x.reshape(*xs[:-1], *([1] * pad_ndims), xs[-1], *([1] * self._event_ndims))
        return x

    @property
    def mean(self) -> Tensor:
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        out: Tensor = (probs * self.component_distribution.mean).sum(-1 - self._event_ndims)
        return out

    @property
    def variance(self) -> Tensor:
        # the law of total variance: the components' mean variance plus the variance of their means
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        d = -1 - self._event_ndims
        mean_cond_var = (probs * self.component_distribution.variance).sum(d)
        var_cond_mean = (probs * (self.component_distribution.mean - self._pad(self.mean)).pow(2.0)).sum(d)
        out: Tensor = mean_cond_var + var_cond_mean
        return out

    def cdf(self, x: Tensor) -> Tensor:
        x = self._pad(x)
        cdf_x = self.component_distribution.cdf(x)
        mix_prob = self.mixture_distribution.probs
        out: Tensor = (cdf_x * mix_prob).sum(-1)
        return out

    def log_prob(self, x: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(x)
        x = self._pad(x)
        log_prob_x = self.component_distribution.log_prob(x)
        log_mix_prob = self.mixture_distribution.logits.log_softmax(-1)
        out: Tensor = (log_prob_x + log_mix_prob).logsumexp(-1)
        return out

    def sample(self, sample_shape: Any = ()) -> Tensor:
        from ..autograd import no_grad

        with no_grad():
            sample_len = len(tuple(sample_shape))
            batch_len = len(self.batch_shape)
            gather_dim = sample_len + batch_len
            es = tuple(self.event_shape)
            mix_sample = self.mixture_distribution.sample(sample_shape)
            mix_shape = tuple(mix_sample.shape)
            comp_samples = self.component_distribution.sample(sample_shape)
            mix_sample_r = mix_sample.reshape(*mix_shape, *([1] * (len(es) + 1)))
            mix_sample_r = mix_sample_r.repeat(*([1] * len(mix_shape)), 1, *es)
            samples = comp_samples.gather(gather_dim, mix_sample_r)
            return samples.squeeze(gather_dim)
