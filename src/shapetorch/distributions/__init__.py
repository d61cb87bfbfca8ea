"""``shapetorch.distributions``: probability distributions with torch's interface (``sample``, differentiable
``rsample``, ``log_prob``, ``entropy``, ``mean``, ``variance``, ``batch_shape``/``event_shape``, argument
validation) and ``kl_divergence`` with its registry."""

from __future__ import annotations

from . import constraints, transforms
from .derived import Independent, LogNormal, TransformedDistribution
from .distribution import Distribution
from .gamma_family import Beta, Binomial, Dirichlet, Gamma, OneHotCategorical, Poisson
from .kl import kl_divergence, register_kl
from .library import Bernoulli, Categorical, Exponential, Laplace, MultivariateNormal, Normal, Uniform
from .lowrank_normal import LowRankMultivariateNormal
from .transforms import AffineTransform, ComposeTransform, ExpTransform, SigmoidTransform, TanhTransform, Transform

__all__ = ["AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical", "ComposeTransform", "Dirichlet",
           "Distribution", "ExpTransform", "Exponential", "Gamma", "Independent", "Laplace", "LogNormal", "LowRankMultivariateNormal",
           "MultivariateNormal", "Normal", "OneHotCategorical", "Poisson", "SigmoidTransform", "TanhTransform",
           "Transform", "TransformedDistribution", "Uniform", "constraints", "kl_divergence", "register_kl",
           "transforms"]
