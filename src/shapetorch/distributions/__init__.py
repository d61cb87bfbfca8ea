"""``shapetorch.distributions``: probability distributions with torch's interface (``sample``, differentiable
``rsample``, ``log_prob``, ``entropy``, ``mean``, ``variance``, ``batch_shape``/``event_shape``, argument
validation) and ``kl_divergence`` with its registry."""

from __future__ import annotations

from . import constraints
from .distribution import Distribution
from .kl import kl_divergence, register_kl
from .library import Bernoulli, Categorical, Exponential, Laplace, MultivariateNormal, Normal, Uniform

__all__ = ["Bernoulli", "Categorical", "Distribution", "Exponential", "Laplace", "MultivariateNormal", "Normal",
           "Uniform", "constraints", "kl_divergence", "register_kl"]
