"""The distributions: Normal, Uniform, Laplace, Exponential, Bernoulli, Categorical, MultivariateNormal.

Parameters broadcast to the batch shape; Python numbers become tensors of the default float dtype.
``rsample`` draws standard noise and transforms it, so gradients flow to the parameters.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from .._tensor import Size, Tensor
from ..ops import creation, random
from ..ops.linalg import linalg_cholesky, linalg_solve_triangular
from . import constraints as C
from .distribution import Distribution
from .exponential_family import ExponentialFamily


def _params(*values: Any) -> list[Tensor]:
    """Tensors broadcast to one shape (numbers in the dtype of the tensors, else the default float dtype)."""
    like = next((v for v in values if isinstance(v, Tensor)), None)
    ts = [v if isinstance(v, Tensor) else creation.tensor(float(v), dtype=like.dtype if like is not None else None)
          for v in values]
    shape = broadcast_shape(*(tuple(t.shape) for t in ts))
    return [t.expand(shape) for t in ts]


def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    from .._rules.broadcast import broadcast_shapes
    from ..ops._common import check

    return tuple(check(broadcast_shapes, *shapes, op="distributions"))


class _LocationScale(Distribution):
    """A family over the reals given by a location and a positive scale (Normal, Laplace, Cauchy, Gumbel)."""

    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"loc": C.real, "scale": C.positive}
    support = C.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = _params(loc, scale)
        super().__init__(self.loc.shape, (), validate_args)


class Normal(_LocationScale, ExponentialFamily):
    # the exponential-family form (torch's): theta = (mu / sigma^2, -1 / (2 sigma^2))
    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal()

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        x, y = natural_params
        return -0.25 * x.pow(2) / y + 0.5 * (-math.pi / y).log()

    @property
    def _mean_carrier_measure(self) -> Any:
        return 0

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self.scale ** 2

    @property
    def stddev(self) -> Tensor:
        return self.scale

    def sample(self, sample_shape: Any = ()) -> Tensor:
        # one draw of normal(loc, scale), as torch's Normal.sample (rsample is loc + eps * scale)
        from ..autograd import no_grad

        shape = self._extended_shape(sample_shape)
        with no_grad():
            return random.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        eps = random.randn(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -((value - self.loc) ** 2) / (2 * self.variance) - self.scale.log() - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value: Tensor) -> Tensor:
        from ..ops.special import erf

        return 0.5 * (1 + erf((value - self.loc) / (self.scale * math.sqrt(2))))

    def icdf(self, value: Tensor) -> Tensor:
        from ..ops.special import erfinv

        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()


class Uniform(Distribution):
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"low": C.real, "high": C.real}
    support = C.dependent
    has_rsample = True

    def __init__(self, low: Any, high: Any, validate_args: bool | None = None) -> None:
        self.low, self.high = _params(low, high)
        super().__init__(self.low.shape, (), validate_args)
        if self._validate_args and not bool((self.low < self.high).all()):
            raise ValueError(f"Expected parameter low of distribution {self!r} to be less than high, but found "
                             f"invalid values:\n{self.low}")

    @property
    def mode(self) -> Tensor:
        return self.high * float("nan")

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low) ** 2 / 12

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        u = random.rand(self._extended_shape(sample_shape), dtype=self.low.dtype)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args and not bool(((value >= self.low) & (value < self.high)).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support (half_open_interval) of the distribution {self!r}, but found "
                             f"invalid values:\n{value}")
        inside = ((value >= self.low) & (value < self.high)).to(self.low.dtype)
        return inside.log() - (self.high - self.low).log()

    def cdf(self, value: Tensor) -> Tensor:
        return ((value - self.low) / (self.high - self.low)).clamp(0, 1)

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()


class Laplace(_LocationScale):
    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale ** 2

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        eps = 1e-7 if self.loc.dtype.itemsize >= 4 else 1e-3  # keep u strictly inside (-1, 1): log1p(-|u|) finite
        u = random.rand(self._extended_shape(sample_shape), dtype=self.loc.dtype) * 2 - 1
        u = u.clamp(-1 + eps, 1 - eps)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        d = value - self.loc
        return 0.5 - 0.5 * d.sign() * (-d.abs() / self.scale).expm1()

    def icdf(self, value: Tensor) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()


class Exponential(ExponentialFamily):
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"rate": C.positive}
    support = C.positive
    has_rsample = True

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = _params(rate)
        super().__init__(self.rate.shape, (), validate_args)

    @property
    def mode(self) -> Tensor:
        return self.rate.new_zeros(tuple(self.rate.shape))

    @property
    def mean(self) -> Tensor:
        return 1 / self.rate

    @property
    def variance(self) -> Tensor:
        return self.rate ** -2

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        u = random.rand(self._extended_shape(sample_shape), dtype=self.rate.dtype)
        return -(-u).log1p() / self.rate

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def entropy(self) -> Tensor:
        return 1.0 - self.rate.log()

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return (-self.rate,)

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        return -(-natural_params[0]).log()

    @property
    def _mean_carrier_measure(self) -> Any:
        return 0


class _ProbsOrLogits(Distribution):
    """Parameterised by exactly one of ``probs`` and ``logits``; the other is derived on demand."""

    def _set(self, probs: Any, logits: Any, normalize: bool) -> Tensor:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = _params(probs)
            return self.probs
        (lg,) = _params(logits)
        self.logits = lg - lg.logsumexp(-1, keepdim=True) if normalize else lg
        return self.logits


class _Binary(_ProbsOrLogits):
    """One success probability per element, given as ``probs`` or as ``logits`` (its log-odds); the other is
    derived on demand (Bernoulli, Geometric, NegativeBinomial)."""

    def __getattr__(self, name: str) -> Any:
        from ..ops.special import logit

        if name == "probs" and "logits" in self.__dict__:
            return self.__dict__["logits"].sigmoid()
        if name == "logits" and "probs" in self.__dict__:
            eps = 1.1920928955078125e-07 if self.__dict__["probs"].dtype.itemsize <= 4 else 2.220446049250313e-16
            return logit(self.__dict__["probs"], eps)
        raise AttributeError(name)


class Bernoulli(_Binary, ExponentialFamily):
    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        from ..ops.special import logit

        return (logit(self.probs),)

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        return natural_params[0].exp().log1p()

    @property
    def _mean_carrier_measure(self) -> Any:
        return 0

    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"probs": C.unit_interval, "logits": C.real}
    support = C.boolean

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        p = self._set(probs, logits, normalize=False)
        super().__init__(p.shape, (), validate_args)

    @property
    def mode(self) -> Tensor:
        from ..ops.conversion import where

        p: Tensor = self.probs
        return where(p == 0.5, p.new_full((), float("nan")), (p >= 0.5).to(p.dtype))

    @property
    def mean(self) -> Tensor:
        out: Tensor = self.probs
        return out

    @property
    def variance(self) -> Tensor:
        out: Tensor = self.probs * (1 - self.probs)
        return out

    def sample(self, sample_shape: Any = ()) -> Tensor:
        p = self.probs.detach().expand(self._extended_shape(sample_shape))
        return random.bernoulli(p)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        from ..nn.functional import binary_cross_entropy_with_logits

        logits, value = _params(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        from ..nn.functional import binary_cross_entropy_with_logits

        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")


class Categorical(_ProbsOrLogits):
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"probs": C.simplex, "logits": C.real_vector}
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        if probs is not None and isinstance(probs, Tensor):
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            probs = probs / probs.sum(-1, keepdim=True)
        if logits is not None and isinstance(logits, Tensor) and logits.dim() < 1:
            raise ValueError("`logits` parameter must be at least one-dimensional.")
        p = self._set(probs, logits, normalize=True)
        self._num_events = p.shape[-1]
        super().__init__(p.shape[:-1], (), validate_args)

    def __getattr__(self, name: str) -> Any:
        if name == "probs" and "logits" in self.__dict__:
            return self.__dict__["logits"].softmax(-1)
        if name == "logits" and "probs" in self.__dict__:
            eps = 1.1920928955078125e-07 if self.__dict__["probs"].dtype.itemsize <= 4 else 2.220446049250313e-16
            return self.__dict__["probs"].clamp(eps, 1 - eps).log()
        raise AttributeError(name)

    @property
    def support(self) -> C.Constraint:
        return C.integer_interval(0, self._num_events - 1)

    @property
    def param_shape(self) -> Size:
        return Size((*self._batch_shape, self._num_events))

    @property
    def mode(self) -> Tensor:
        out: Tensor = self.probs.argmax(-1)
        return out

    @property
    def mean(self) -> Tensor:
        return creation.full(tuple(self._batch_shape), float("nan"), dtype=self.probs.dtype)

    @property
    def variance(self) -> Tensor:
        return creation.full(tuple(self._batch_shape), float("nan"), dtype=self.probs.dtype)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(sample_shape)
        n = math.prod(shape) if shape else 1
        probs_2d = self.probs.detach().reshape(-1, self._num_events)
        draws = random.multinomial(probs_2d, n, True).mT
        return draws.reshape(shape + tuple(self._batch_shape))  # (a tuple: reshape() of no dims is an error)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        log_pmf = self.logits
        shape = broadcast_shape(tuple(value.shape), tuple(log_pmf.shape[:-1]) + (1,))
        value = value.expand(shape)
        log_pmf = log_pmf.expand((*shape[:-1], self._num_events))
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self) -> Tensor:
        eps_min = -3.4028234663852886e38 if self.logits.dtype.itemsize <= 4 else -1.7976931348623157e308
        logits = self.logits.clamp(min=eps_min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = creation.arange(self._num_events).reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1, *self._batch_shape)) if expand else values


class MultivariateNormal(Distribution):
    """N(loc, Sigma) given by exactly one of ``covariance_matrix``, ``precision_matrix`` and ``scale_tril``."""

    arg_constraints: ClassVar[dict[str, C.Constraint]] = {
        "loc": C.real_vector, "covariance_matrix": C.positive_definite, "precision_matrix": C.positive_definite,
        "scale_tril": C.lower_cholesky}
    support = C.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, covariance_matrix: Tensor | None = None, precision_matrix: Tensor | None = None,
                 scale_tril: Tensor | None = None, validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        m = given[0]
        if m.dim() < 2:
            raise ValueError("scale_tril matrix must be at least two-dimensional, with optional leading batch "
                             "dimensions" if scale_tril is not None else "covariance_matrix or precision_matrix must "
                             "be at least two-dimensional, with optional leading batch dimensions")
        batch = broadcast_shape(tuple(m.shape[:-2]), tuple(loc.shape[:-1]))
        n = loc.shape[-1]
        self.loc = loc.expand((*batch, n))
        if scale_tril is not None:
            self.scale_tril = scale_tril.expand((*batch, n, n))
        elif covariance_matrix is not None:
            self.covariance_matrix = covariance_matrix.expand((*batch, n, n))
        else:
            assert precision_matrix is not None
            self.precision_matrix = precision_matrix.expand((*batch, n, n))
        # validated first, so a matrix that is not positive-definite is torch's ValueError, not the factorization's
        super().__init__(batch, (n,), validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = linalg_cholesky(covariance_matrix)
        else:
            from ..ops.linalg import linalg_inv

            self._unbroadcasted_scale_tril = linalg_cholesky(linalg_inv(precision_matrix))

    def __getattr__(self, name: str) -> Any:
        L = self.__dict__["_unbroadcasted_scale_tril"]
        shape = (*self._batch_shape, *self._event_shape, *self._event_shape)
        if name == "scale_tril":
            return L.expand(shape)
        if name == "covariance_matrix":
            return (L @ L.mT).expand(shape)
        if name == "precision_matrix":
            from ..ops.linalg import linalg_inv

            return linalg_inv(L @ L.mT).expand(shape)
        raise AttributeError(name)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        out: Tensor = (L ** 2).sum(-1).expand((*self._batch_shape, *self._event_shape))
        return out

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        eps = random.randn(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        out: Tensor = self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)
        return out

    def _half_log_det(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        out: Tensor = L.diagonal(0, -2, -1).log().sum(-1)
        return out

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        L = self._unbroadcasted_scale_tril
        batch = broadcast_shape(tuple(diff.shape[:-1]), tuple(L.shape[:-2]))
        n = self._event_shape[0]
        z = linalg_solve_triangular(L.expand((*batch, n, n)), diff.expand((*batch, n)).unsqueeze(-1),
                                    upper=False).squeeze(-1)
        m = (z ** 2).sum(-1)
        return -0.5 * (n * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self) -> Tensor:
        n = self._event_shape[0]
        h = 0.5 * n * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h.expand(tuple(self._batch_shape)) if len(self._batch_shape) else h
