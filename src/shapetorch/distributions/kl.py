"""``kl_divergence(p, q)`` and ``register_kl``: closed forms looked up by the pair of types (the most specific
registered pair of base classes wins, as torch's dispatch)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .._tensor import Tensor
from ..ops.special import digamma, lgamma
from .derived import Independent
from .distribution import Distribution
from .gamma_family import Beta, Gamma, Poisson
from .library import Bernoulli, Categorical, Exponential, Laplace, MultivariateNormal, Normal, Uniform, broadcast_shape

_KL: dict[tuple[type, type], Callable[[Any, Any], Tensor]] = {}


def register_kl(type_p: type, type_q: type) -> Callable[[Callable[[Any, Any], Tensor]], Callable[[Any, Any], Tensor]]:
    """Decorator: ``@register_kl(Normal, Normal) def kl(p, q): ...``."""
    if not (isinstance(type_p, type) and issubclass(type_p, Distribution)):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not (isinstance(type_q, type) and issubclass(type_q, Distribution)):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fn: Callable[[Any, Any], Tensor]) -> Callable[[Any, Any], Tensor]:
        _KL[type_p, type_q] = fn
        return fn

    return decorator


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q) by the registered closed form for the pair's types."""
    matches = [(tp, tq) for tp, tq in _KL if isinstance(p, tp) and isinstance(q, tq)]
    if not matches:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} and q type "
                                  f"{type(q).__name__}")
    best = min(matches, key=lambda m: (type(p).__mro__.index(m[0]), type(q).__mro__.index(m[1])))
    return _KL[best](p, q)


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    from ..nn.functional import softplus

    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    out: Tensor = t1 + t2
    return out


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    t = t.masked_fill(q.probs == 0, math.inf)
    t = t.masked_fill(p.probs == 0, 0.0)
    out: Tensor = t.sum(-1)
    return out


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return result.masked_fill((q.low > p.low) | (q.high < p.high), math.inf)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Exponential, q: Exponential) -> Tensor:
    ratio = q.rate / p.rate
    return ratio - 1 - ratio.log()


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Laplace, q: Laplace) -> Tensor:
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    return -scale_ratio.log() + loc_abs_diff / q.scale + scale_ratio * (-loc_abs_diff / p.scale).exp() - 1


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p: MultivariateNormal, q: MultivariateNormal) -> Tensor:
    from ..ops.linalg import linalg_solve_triangular

    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot be "
                         "computed")
    n = p.event_shape[0]
    Lq, Lp = q._unbroadcasted_scale_tril, p._unbroadcasted_scale_tril
    batch = broadcast_shape(tuple(Lq.shape[:-2]), tuple(Lp.shape[:-2]), tuple(p.loc.shape[:-1]),
                             tuple(q.loc.shape[:-1]))
    Lq_b = Lq.expand((*batch, n, n))
    term = linalg_solve_triangular(Lq_b, Lp.expand((*batch, n, n)), upper=False)
    trace = (term ** 2).sum((-2, -1))
    diff = (q.loc - p.loc).expand((*batch, n)).unsqueeze(-1)
    maha = (linalg_solve_triangular(Lq_b, diff, upper=False) ** 2).sum((-2, -1))
    out: Tensor = q._half_log_det() - p._half_log_det() + 0.5 * (trace + maha - n)
    return out


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Gamma, q: Gamma) -> Tensor:
    a, b, c, d = p.concentration, p.rate, q.concentration, q.rate
    return c * (b / d).log() + lgamma(c) - lgamma(a) + (a - c) * digamma(a) + (d - b) * a / b


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Beta, q: Beta) -> Tensor:
    a1, b1, a2, b2 = p.concentration1, p.concentration0, q.concentration1, q.concentration0
    s1 = a1 + b1
    lbeta = lgamma(a2) + lgamma(b2) - lgamma(a2 + b2) - (lgamma(a1) + lgamma(b1) - lgamma(s1))
    return lbeta + (a1 - a2) * digamma(a1) + (b1 - b2) * digamma(b1) + (a2 - a1 + b2 - b1) * digamma(s1)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p: Poisson, q: Poisson) -> Tensor:
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    out = kl_divergence(p.base_dist, q.base_dist)
    n = p.reinterpreted_batch_ndims
    return out.reshape(*out.shape[: out.dim() - n], -1).sum(-1) if n else out
