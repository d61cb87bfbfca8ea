"""``shapetorch.distributions``: probability distributions with torch's interface (``sample``, differentiable
``rsample``, ``log_prob``, ``entropy``, ``mean``, ``variance``, ``batch_shape``/``event_shape``, argument
validation) and ``kl_divergence`` with its registry."""

from __future__ import annotations

from . import constraints, transforms
from .counts import Geometric, Multinomial, NegativeBinomial
from .derived import Independent, LogNormal, TransformedDistribution
from .distribution import Distribution
from .gamma_family import Beta, Binomial, Dirichlet, Gamma, OneHotCategorical, Poisson
from .kl import kl_divergence, register_kl
from .library import Bernoulli, Categorical, Exponential, Laplace, MultivariateNormal, Normal, Uniform
from .location_scale import Cauchy, Chi2, Gumbel, HalfCauchy, HalfNormal, Pareto, StudentT, Weibull
from .lowrank_normal import LowRankMultivariateNormal
from .mixture import MixtureSameFamily
from .relaxed import RelaxedBernoulli, RelaxedOneHotCategorical
from .transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    PowerTransform,
    SigmoidTransform,
    SoftplusTransform,
    TanhTransform,
    Transform,
    identity_transform,
)

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2",
           "ComposeTransform", "Dirichlet", "Distribution", "ExpTransform", "Exponential", "Gamma", "Geometric",
           "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "Laplace", "LogNormal", "LowRankMultivariateNormal",
           "MixtureSameFamily", "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical",
           "Pareto", "Poisson", "PowerTransform", "RelaxedBernoulli", "RelaxedOneHotCategorical", "SigmoidTransform",
           "SoftplusTransform", "StudentT", "TanhTransform", "Transform", "TransformedDistribution", "Uniform",
           "Weibull", "constraints", "identity_transform", "kl_divergence", "register_kl", "transforms"]
