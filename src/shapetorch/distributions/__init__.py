"""``shapetorch.distributions``: probability distributions with torch's interface (``sample``, differentiable
``rsample``, ``log_prob``, ``entropy``, ``mean``, ``variance``, ``batch_shape``/``event_shape``, argument
validation) and ``kl_divergence`` with its registry."""

from __future__ import annotations

from . import constraints, transforms
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .counts import Geometric, Multinomial, NegativeBinomial
from .derived import Independent, LogNormal, TransformedDistribution
from .distribution import Distribution
from .exponential_family import ExponentialFamily
from .gamma_family import (
    Beta,
    Binomial,
    Dirichlet,
    FisherSnedecor,
    Gamma,
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
    Poisson,
)
from .kl import kl_divergence, register_kl
from .library import Bernoulli, Categorical, Exponential, Laplace, MultivariateNormal, Normal, Uniform
from .lkj import LKJCholesky
from .location_scale import (
    Cauchy,
    Chi2,
    GeneralizedPareto,
    Gumbel,
    HalfCauchy,
    HalfNormal,
    Pareto,
    StudentT,
    Weibull,
)
from .lowrank_normal import LowRankMultivariateNormal
from .mixture import MixtureSameFamily
from .pushforwards import InverseGamma, Kumaraswamy, LogisticNormal
from .relaxed import RelaxedBernoulli, RelaxedOneHotCategorical
from .transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from .von_mises import VonMises
from .wishart import Wishart

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "CatTransform", "Categorical",
           "Cauchy", "Chi2", "ComposeTransform", "ContinuousBernoulli", "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "Dirichlet", "Distribution", "ExpTransform", "Exponential", "ExponentialFamily",
           "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent",
           "IndependentTransform", "InverseGamma", "Kumaraswamy", "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal",
           "LowRankMultivariateNormal", "LowerCholeskyTransform", "MixtureSameFamily", "Multinomial",
           "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "PositiveDefiniteTransform", "PowerTransform",
           "RelaxedBernoulli", "RelaxedOneHotCategorical", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
           "SoftplusTransform", "StackTransform", "StickBreakingTransform", "StudentT", "TanhTransform", "Transform",
           "TransformedDistribution", "Uniform", "VonMises", "Weibull", "Wishart", "biject_to", "constraints", "identity_transform",
           "kl_divergence", "register_kl", "transform_to", "transforms"]
