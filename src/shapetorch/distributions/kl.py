"""``kl_divergence(p, q)`` and ``register_kl``: closed forms looked up by the pair of types (the most specific
registered pair of base classes wins, as torch's dispatch)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .._tensor import Tensor
from ..ops.special import digamma, erf, lgamma
from .continuous_bernoulli import ContinuousBernoulli
from .counts import Geometric
from .derived import Independent, TransformedDistribution
from .distribution import Distribution
from .exponential_family import ExponentialFamily, bregman_kl
from .gamma_family import Beta, Binomial, Dirichlet, Gamma, OneHotCategorical, Poisson
from .library import Bernoulli, Categorical, Exponential, Laplace, MultivariateNormal, Normal, Uniform, broadcast_shape
from .location_scale import Cauchy, Gumbel, HalfNormal, Pareto
from .lowrank_normal import LowRankMultivariateNormal, lowrank_logdet, lowrank_mahalanobis, tril_mahalanobis

_EULER_GAMMA = 0.57721566490153286060

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


# -- pairs whose supports differ: p puts mass where q has none, so KL is infinite -----------------------------------


def _infinite_like(t: Tensor) -> Tensor:
    return t.new_full(tuple(t.shape), math.inf)


def _x_log_x(t: Tensor) -> Tensor:
    return t * t.log()


def _register_infinite(type_p: type, types_q: list[type], param: str) -> None:
    for type_q in types_q:
        register_kl(type_p, type_q)(lambda p, q: _infinite_like(getattr(p, param)))


_register_infinite(Exponential, [Beta, Pareto, Uniform], "rate")
_register_infinite(Gamma, [Beta, Pareto, Uniform], "concentration")
_register_infinite(Laplace, [Beta, Exponential, Gamma, Pareto, Uniform], "loc")
_register_infinite(Normal, [Beta, Exponential, Gamma, Pareto, Uniform], "loc")
_register_infinite(Poisson, [Bernoulli, Binomial], "rate")
_register_infinite(Beta, [Pareto], "concentration1")
_register_infinite(Gumbel, [Beta, Exponential, Gamma, Pareto, Uniform], "loc")
_register_infinite(Pareto, [Beta, Uniform], "scale")


def _infinite_where(result: Tensor, mask: Tensor) -> Tensor:
    return result.masked_fill(mask, math.inf)


# -- the same family --------------------------------------------------------------------------------------------------


def _binomial_probs_logits(d: Binomial) -> tuple[Tensor, Tensor]:
    from ..ops.special import logit

    if "logits" in d.__dict__:
        return d.logits.sigmoid(), d.logits
    eps = 1.1920928955078125e-07 if d.probs.dtype.itemsize <= 4 else 2.220446049250313e-16
    return d.probs, logit(d.probs, eps)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p: Binomial, q: Binomial) -> Tensor:
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    (pp, pl), (qp, ql) = _binomial_probs_logits(p), _binomial_probs_logits(q)
    kl = p.total_count * (pp * (pl - ql) + (-pp).log1p() - (-qp).log1p())
    return kl.masked_fill(p.total_count > q.total_count, math.inf)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> Tensor:
    sum_p, sum_q = p.concentration.sum(-1), q.concentration.sum(-1)
    t1 = lgamma(sum_p) - lgamma(sum_q)
    t2 = (lgamma(p.concentration) - lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = digamma(p.concentration) - digamma(sum_p).unsqueeze(-1)
    out: Tensor = t1 - t2 + (t3 * t4).sum(-1)
    return out


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot_onehot(p: OneHotCategorical, q: OneHotCategorical) -> Tensor:
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p: TransformedDistribution, q: TransformedDistribution) -> Tensor:
    """KL is invariant under a bijection applied to both: the bases' KL when the transforms are equal."""
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


# -- Gaussian covariances: dense and low-rank ----------------------------------------------------------------------


def _trace_xxt(x: Tensor) -> Tensor:
    out: Tensor = (x ** 2).sum((-2, -1))
    return out


def _lowrank_parts(d: LowRankMultivariateNormal) -> tuple[Tensor, Tensor, Tensor]:
    return d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag, d._capacitance_tril


def _q_lowrank_terms(p: Distribution, q: LowRankMultivariateNormal, what: str) -> tuple[Tensor, Tensor, Tensor]:
    """q's log det, its Mahalanobis term for ``q.loc - p.loc``, and ``A = cap^-1 W^T D^-1`` (Woodbury's factor)."""
    from ..ops.linalg import linalg_solve_triangular

    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two {what} with different event shapes cannot be computed")
    W, D, cap = _lowrank_parts(q)
    maha = lowrank_mahalanobis(W, D, q.loc - p.loc, cap)  # type: ignore[attr-defined]
    A = linalg_solve_triangular(cap, W.mT / D.unsqueeze(-2), upper=False)
    return lowrank_logdet(W, D, cap), maha, A


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p: LowRankMultivariateNormal, q: LowRankMultivariateNormal) -> Tensor:
    q_logdet, term3, A = _q_lowrank_terms(p, q, "Low Rank Multivariate Normals")
    pW, pD, pcap = _lowrank_parts(p)
    qD = q._unbroadcasted_cov_diag
    term1 = q_logdet - lowrank_logdet(pW, pD, pcap)
    # tr(q_cov^-1 p_cov) = tr((qD^-1 - A^T A)(pD + pW pW^T))
    term2 = ((pD / qD).sum(-1) + _trace_xxt(pW * qD.rsqrt().unsqueeze(-1)) - _trace_xxt(A * pD.sqrt().unsqueeze(-2))
             - _trace_xxt(A @ pW))
    out: Tensor = 0.5 * (term1 + term2 + term3 - p.event_shape[0])
    return out


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mvn_lowrank(p: MultivariateNormal, q: LowRankMultivariateNormal) -> Tensor:
    q_logdet, term3, A = _q_lowrank_terms(p, q, "(Low Rank) Multivariate Normals")
    L = p._unbroadcasted_scale_tril
    term1 = q_logdet - 2 * L.diagonal(0, -2, -1).log().sum(-1)
    term2 = _trace_xxt(L * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1)) - _trace_xxt(A @ L)
    out: Tensor = 0.5 * (term1 + term2 + term3 - p.event_shape[0])
    return out


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_mvn(p: LowRankMultivariateNormal, q: MultivariateNormal) -> Tensor:
    from ..ops.linalg import linalg_solve_triangular
    from ..ops.matrix import diag_embed

    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two (Low Rank) Multivariate Normals with different event shapes "
                         "cannot be computed")
    pW, pD, pcap = _lowrank_parts(p)
    Lq = q._unbroadcasted_scale_tril
    term1 = 2 * Lq.diagonal(0, -2, -1).log().sum(-1) - lowrank_logdet(pW, pD, pcap)
    term3 = tril_mahalanobis(Lq, q.loc - p.loc)
    batch = broadcast_shape(tuple(Lq.shape[:-2]), tuple(pW.shape[:-2]))
    n = p.event_shape[0]
    Lq_b = Lq.expand((*batch, n, n))
    term2 = (_trace_xxt(linalg_solve_triangular(Lq_b, pW.expand((*batch, n, pW.shape[-1])), upper=False))
             + _trace_xxt(linalg_solve_triangular(Lq_b, diag_embed(pD.sqrt()).expand((*batch, n, n)), upper=False)))
    out: Tensor = 0.5 * (term1 + term2 + term3 - n)
    return out


# -- across families: closed forms of E_p[log p - log q] ----------------------------------------------------------


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p: Bernoulli, q: Poisson) -> Tensor:
    out: Tensor = -p.entropy() - (p.probs * q.rate.log() - q.rate)
    return out


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p: Beta, q: Exponential) -> Tensor:
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p: Beta, q: Gamma) -> Tensor:
    a, b = p.concentration1, p.concentration0
    t2 = lgamma(q.concentration) - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * (digamma(a) - digamma(a + b))
    return -p.entropy() + t2 - t3 + q.rate * a / (a + b)


@register_kl(Beta, Normal)
def _kl_beta_normal(p: Beta, q: Normal) -> Tensor:
    a, b = p.concentration1, p.concentration0
    mean = a / (a + b)
    var_q = q.scale ** 2
    second_moment = 0.5 * (mean * (1 - mean) / (a + b + 1) + mean ** 2)
    return -p.entropy() + 0.5 * (var_q * 2 * math.pi).log() + (second_moment - q.loc * mean + 0.5 * q.loc ** 2) / var_q


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p: Beta, q: Uniform) -> Tensor:
    result = -p.entropy() + (q.high - q.low).log()
    return result.masked_fill((q.low > 0.0) | (q.high < 1.0), math.inf)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p: Exponential, q: Gamma) -> Tensor:
    ratio = q.rate / p.rate
    return (-q.concentration * ratio.log() + ratio + lgamma(q.concentration) + q.concentration * _EULER_GAMMA
            - (1 + _EULER_GAMMA))


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p: Exponential, q: Normal) -> Tensor:
    var_q, rate_sq = q.scale ** 2, p.rate ** 2
    return 0.5 * (rate_sq * var_q * 2 * math.pi).log() - 1 + (rate_sq.reciprocal() - q.loc / p.rate
                                                              + 0.5 * q.loc ** 2) / var_q


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p: Gamma, q: Exponential) -> Tensor:
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p: Gamma, q: Normal) -> Tensor:
    a, b = p.concentration, p.rate
    var_q, b_sq = q.scale ** 2, p.rate ** 2
    t1 = 0.5 * (b_sq * var_q * 2 * math.pi).log() - a - lgamma(a)
    moments = 0.5 * (a ** 2 + a) / b_sq - q.loc * a / b + 0.5 * q.loc ** 2
    return t1 + (a - 1) * digamma(a) + moments / var_q


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p: Laplace, q: Normal) -> Tensor:
    var_q = q.scale ** 2
    ratio = p.scale ** 2 / var_q
    t1 = 0.5 * (2 * ratio / math.pi).log()
    return -t1 + ratio + (0.5 * p.loc ** 2 - p.loc * q.loc + 0.5 * q.loc ** 2) / var_q - 1


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p: Normal, q: Laplace) -> Tensor:
    diff = p.loc - q.loc
    scaled = diff / p.scale
    t2 = math.sqrt(2 / math.pi) * p.scale * (-0.5 * scaled ** 2).exp()
    t3 = diff * erf(math.sqrt(0.5) * scaled)
    return -(p.scale / q.scale).log() + (t2 + t3) / q.scale - 0.5 * (1 + math.log(0.5 * math.pi))


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p: Uniform, q: Beta) -> Tensor:
    width = p.high - p.low
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t3 = (q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + width) / width
    t4 = lgamma(q.concentration1) + lgamma(q.concentration0) - lgamma(q.concentration1 + q.concentration0)
    result = t3 + t4 - width.log() - t2
    return result.masked_fill((p.high > 1.0) | (p.low < 0.0), math.inf)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p: Uniform, q: Exponential) -> Tensor:
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return result.masked_fill(p.low < 0.0, math.inf)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p: Uniform, q: Gamma) -> Tensor:
    width = p.high - p.low
    t2 = lgamma(q.concentration) - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    result = -width.log() + t2 + t3 + q.rate * (p.high + p.low) / 2
    return result.masked_fill(p.low < 0.0, math.inf)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p: Uniform, q: Normal) -> Tensor:
    width = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / width).log()
    return t1 + 0.5 * (width ** 2 / 12 + ((p.high + p.low - 2 * q.loc) / 2) ** 2) / q.scale ** 2


# -- the heavier-tailed and count families ------------------------------------------------------------------------


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p: Cauchy, q: Cauchy) -> Tensor:
    return ((p.scale + q.scale) ** 2 + (p.loc - q.loc) ** 2).log() - (4 * p.scale * q.scale).log()


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p: Gumbel, q: Gumbel) -> Tensor:
    ratio = p.scale / q.scale
    q_loc, p_loc = q.loc / q.scale, p.loc / q.scale
    return (-ratio.log() - q_loc + p_loc + ratio * _EULER_GAMMA + (q_loc + lgamma(1 + ratio) - p_loc).exp()
            - (1 + _EULER_GAMMA))


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p: Geometric, q: Geometric) -> Tensor:
    out: Tensor = -p.entropy() - (-q.probs).log1p() / p.probs - q.logits
    return out


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p: HalfNormal, q: HalfNormal) -> Tensor:
    return _kl_normal_normal(p.base, q.base)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p: Pareto, q: Pareto) -> Tensor:
    alpha_ratio = q.alpha / p.alpha
    out = q.alpha * (p.scale / q.scale).log() - alpha_ratio.log() + alpha_ratio - 1
    return _infinite_where(out, p.scale < q.scale)  # p's support starts below q's


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p: Exponential, q: Gumbel) -> Tensor:
    prod = p.rate * q.scale
    ratio = q.loc / q.scale
    return prod.log() - 1 - ratio + ratio.exp() * prod / (prod + 1) + prod.reciprocal()


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p: Gamma, q: Gumbel) -> Tensor:
    a = p.concentration
    prod = p.rate * q.scale
    ratio = q.loc / q.scale
    t1 = (a - 1) * digamma(a) - lgamma(a) - a
    t2 = prod.log() + a / prod
    t3 = ratio.exp() * (1 + prod.reciprocal()) ** (-a) - ratio
    return t1 + t2 + t3


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p: Gumbel, q: Normal) -> Tensor:
    ratio = p.scale / q.scale
    t1 = (ratio / math.sqrt(2 * math.pi)).log()
    t2 = (math.pi * ratio * 0.5) ** 2 / 3
    t3 = ((p.loc + p.scale * _EULER_GAMMA - q.loc) / q.scale) ** 2 * 0.5
    return -t1 + t2 + t3 - (_EULER_GAMMA + 1)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p: Normal, q: Gumbel) -> Tensor:
    mean_ratio = p.loc / q.scale
    var_ratio = (p.scale / q.scale) ** 2
    loc_ratio = q.loc / q.scale
    return (-0.5 * var_ratio.log() + mean_ratio - loc_ratio + (-mean_ratio + 0.5 * var_ratio + loc_ratio).exp()
            - 0.5 * (1 + math.log(2 * math.pi)))


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p: Uniform, q: Gumbel) -> Tensor:
    common = q.scale / (p.high - p.low)
    high, low = (p.high - q.loc) / q.scale, (p.low - q.loc) / q.scale
    return common.log() + 0.5 * (high + low) - common * ((-high).exp() - (-low).exp())


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p: Pareto, q: Exponential) -> Tensor:
    prod = p.scale * q.rate
    out = (p.alpha / prod).log() - p.alpha.reciprocal() + p.alpha * prod / (p.alpha - 1) - 1
    return _infinite_where(out, p.alpha <= 1)  # p has no mean


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p: Pareto, q: Gamma) -> Tensor:
    common = p.scale.log() + p.alpha.reciprocal()
    out = (p.alpha.log() - common + lgamma(q.concentration) - q.concentration * q.rate.log()
           + (1 - q.concentration) * common + q.rate * p.alpha * p.scale / (p.alpha - 1) - 1)
    return _infinite_where(out, p.alpha <= 1)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p: Pareto, q: Normal) -> Tensor:
    var_normal = 2 * q.scale ** 2
    common = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t3 = p.alpha * common ** 2 / (p.alpha - 2)
    t4 = (p.alpha * common - q.loc) ** 2
    out = t1 - p.alpha.reciprocal() + (t3 + t4) / var_normal - 1
    return _infinite_where(out, p.alpha <= 2)  # p has no variance


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p: Uniform, q: Pareto) -> Tensor:
    width = p.high - p.low
    t1 = (q.alpha * q.scale ** q.alpha * width).log()
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    return _infinite_where(t2 * (q.alpha + 1) - t1, p.low < q.scale)


# -- the continuous Bernoulli (on [0, 1]) against the families torch pairs it with -----------------------------------


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_cb_cb(p: ContinuousBernoulli, q: ContinuousBernoulli) -> Tensor:
    out: Tensor = (p.mean * (p.logits - q.logits) + p._log_norm() + (-p.probs).log1p()
                   - q._log_norm() - (-q.probs).log1p())
    return out


def _minus_cross_entropy_cb(p: Distribution, q: ContinuousBernoulli) -> Tensor:
    """-H(p) - E_p[log q] for a p on [0, 1]: E_p[log q] is linear in p's mean."""
    out: Tensor = -p.entropy() - p.mean * q.logits - (-q.probs).log1p() - q._log_norm()
    return out


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_cb(p: Beta, q: ContinuousBernoulli) -> Tensor:
    return _minus_cross_entropy_cb(p, q)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_cb(p: Uniform, q: ContinuousBernoulli) -> Tensor:
    # torch's condition, kept as it is: infinite unless p's interval lies strictly inside (0, 1)
    return _infinite_where(_minus_cross_entropy_cb(p, q), (p.high >= 1) | (p.low <= 0))


@register_kl(ContinuousBernoulli, Exponential)
def _kl_cb_exponential(p: ContinuousBernoulli, q: Exponential) -> Tensor:
    out: Tensor = -p.entropy() - q.rate.log() + q.rate * p.mean
    return out


@register_kl(ContinuousBernoulli, Normal)
def _kl_cb_normal(p: ContinuousBernoulli, q: Normal) -> Tensor:
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale) ** 2) + q.scale.log()
    t3 = (p.variance + p.mean ** 2 - 2.0 * q.loc * p.mean) / (2.0 * q.scale ** 2)
    out: Tensor = -p.entropy() + t2 + t3
    return out


@register_kl(ContinuousBernoulli, Uniform)
def _kl_cb_uniform(p: ContinuousBernoulli, q: Uniform) -> Tensor:
    # torch's condition, kept as it is: infinite when q.low >= 0 or q.high <= 1
    result = -p.entropy() + (q.high - q.low).log()
    return _infinite_where(result, (q.low >= 0) | (q.high <= 1))


_register_infinite(ContinuousBernoulli, [Pareto], "probs")
_register_infinite(Exponential, [ContinuousBernoulli], "rate")
_register_infinite(Gamma, [ContinuousBernoulli], "concentration")
_register_infinite(Gumbel, [ContinuousBernoulli], "loc")
_register_infinite(Laplace, [ContinuousBernoulli], "loc")
_register_infinite(Normal, [ContinuousBernoulli], "loc")
_register_infinite(Pareto, [ContinuousBernoulli], "scale")


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p: ExponentialFamily, q: ExponentialFamily) -> Tensor:
    return bregman_kl(p, q)
