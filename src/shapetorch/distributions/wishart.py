"""``Wishart``: the distribution of ``X^T X`` for ``df`` Gaussian rows of covariance ``Sigma``, over positive definite
matrices, given by ``covariance_matrix``, ``precision_matrix`` or ``scale_tril`` as torch's. ``rsample`` is
Bartlett's decomposition, ``L A A^T L^T`` with ``A`` lower triangular, chi (``df - i`` degrees) on the diagonal and
standard normals below it, so gradients reach ``df`` (through the chi-square draws) and the scale."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from .._dtype import finfo
from .._tensor import Size, Tensor
from ..ops import creation, random
from ..ops.special import digamma, lgamma
from . import constraints as C
from .exponential_family import ExponentialFamily
from .library import broadcast_shape
from .location_scale import Chi2


def _mvlgamma(x: Tensor, p: int) -> Tensor:
    """The multivariate log-gamma: p(p-1)/4 log(pi) + sum_j lgamma(x - j/2)."""
    out: Tensor = lgamma(x) + p * (p - 1) / 4 * math.log(math.pi)
    for j in range(1, p):
        out = out + lgamma(x - j / 2)
    return out


def _mvdigamma(x: Tensor, p: int) -> Tensor:
    out: Tensor = digamma(x)
    for j in range(1, p):
        out = out + digamma(x - j / 2)
    return out


class Wishart(ExponentialFamily):
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {
        "covariance_matrix": C.positive_definite, "precision_matrix": C.positive_definite,
        "scale_tril": C.lower_cholesky}
    support = C.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, df: Any, covariance_matrix: Tensor | None = None, precision_matrix: Tensor | None = None,
                 scale_tril: Tensor | None = None, validate_args: bool | None = None) -> None:
        from ..ops.linalg import linalg_cholesky, linalg_inv

        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                                 "specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, Tensor):
            batch = broadcast_shape(tuple(param.shape[:-2]), tuple(df.shape))
            self.df = df.expand(batch)
        else:
            batch = tuple(param.shape[:-2])
            self.df = creation.tensor(float(df), dtype=param.dtype)
        p = param.shape[-1]
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        if scale_tril is not None:
            self.scale_tril = scale_tril.expand((*batch, p, p))
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self.covariance_matrix = covariance_matrix.expand((*batch, p, p))
            self._unbroadcasted_scale_tril = linalg_cholesky(covariance_matrix)
        else:
            assert precision_matrix is not None
            self.precision_matrix = precision_matrix.expand((*batch, p, p))
            self._unbroadcasted_scale_tril = linalg_cholesky(linalg_inv(precision_matrix))
        if bool((self.df < p).any()):
            import warnings

            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df < "
                          "ndim.", stacklevel=2)
        super().__init__(batch, (p, p), validate_args)
        self._chi2 = self._diagonal_chi2(self.df, batch)

    def _diagonal_chi2(self, df: Tensor, batch: tuple[int, ...]) -> Chi2:
        p = self._event_shape[-1]
        steps = creation.arange(p, dtype=self._unbroadcasted_scale_tril.dtype)
        return Chi2(df.unsqueeze(-1) - steps.expand((*batch, p)), validate_args=False)

    def __getattr__(self, name: str) -> Any:
        low = self.__dict__["_unbroadcasted_scale_tril"]
        shape = (*self._batch_shape, *self._event_shape)
        if name == "scale_tril":
            return low.expand(shape)
        if name == "covariance_matrix":
            return (low @ low.mT).expand(shape)
        if name == "precision_matrix":
            from ..ops.linalg import cholesky_solve

            eye = creation.eye(self._event_shape[-1], dtype=low.dtype)
            return cholesky_solve(eye, low).expand(shape)
        raise AttributeError(name)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        new = super().expand(batch_shape, _instance)
        batch = tuple(Size(tuple(batch_shape)))
        new.__dict__["df"] = self.df.expand(batch)
        new._chi2 = new._diagonal_chi2(new.df, batch)
        return new

    def _df_view(self) -> Tensor:
        return self.df.reshape((*self._batch_shape, 1, 1))

    @property
    def mean(self) -> Tensor:
        out: Tensor = self._df_view() * self.covariance_matrix
        return out

    @property
    def mode(self) -> Tensor:
        from ..ops.conversion import where

        factor = self.df - self._event_shape[-1] - 1
        factor = where(factor <= 0, math.nan, factor)
        out: Tensor = factor.reshape((*self._batch_shape, 1, 1)) * self.covariance_matrix
        return out

    @property
    def variance(self) -> Tensor:
        cov = self.covariance_matrix
        diag = cov.diagonal(0, -2, -1)
        out: Tensor = self._df_view() * (cov ** 2 + diag.unsqueeze(-1) * diag.unsqueeze(-2))
        return out

    def _bartlett(self, sample_shape: tuple[int, ...]) -> Tensor:
        p = self._event_shape[-1]
        chi = self._chi2.rsample(sample_shape).sqrt().clamp(min=finfo(self.df.dtype).eps)
        below = random.randn((*sample_shape, *self._batch_shape, p, p), dtype=chi.dtype).tril(-1)
        factor = self._unbroadcasted_scale_tril @ (below + chi.diag_embed())
        out: Tensor = factor @ factor.mT
        return out

    def rsample(self, sample_shape: Any = (), max_try_correction: int | None = None) -> Tensor:
        """Bartlett draws; a draw that is not numerically positive definite is drawn again (up to
        ``max_try_correction`` times, 10 by default, as torch)."""
        from ..ops.conversion import where

        shape = tuple(sample_shape)
        sample = self._bartlett(shape)
        for _ in range(10 if max_try_correction is None else max_try_correction):
            bad = ~self.support.check(sample)
            if not bool(bad.any()):
                break
            sample = where(bad.unsqueeze(-1).unsqueeze(-1), self._bartlett(shape), sample)
        return sample

    def log_prob(self, value: Tensor) -> Tensor:
        from ..ops.linalg import cholesky_solve, slogdet

        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        log_det_scale = self._unbroadcasted_scale_tril.diagonal(0, -2, -1).log().sum(-1)
        trace = cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(0, -2, -1).sum(-1)
        out: Tensor = (-nu * (p * math.log(2) / 2 + log_det_scale) - _mvlgamma(nu / 2, p)
                       + (nu - p - 1) / 2 * slogdet(value).logabsdet - trace / 2)
        return out

    def entropy(self) -> Tensor:
        nu, p = self.df, self._event_shape[-1]
        log_det_scale = self._unbroadcasted_scale_tril.diagonal(0, -2, -1).log().sum(-1)
        out: Tensor = ((p + 1) * (p * math.log(2) / 2 + log_det_scale) + _mvlgamma(nu / 2, p)
                       - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)
        return out

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return -self.precision_matrix / 2, (self.df - self._event_shape[-1] - 1) / 2

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        from ..ops.linalg import slogdet

        x, y = natural_params
        p = self._event_shape[-1]
        out: Tensor = ((y + (p + 1) / 2) * (-slogdet(-2 * x).logabsdet + math.log(2) * p)
                       + _mvlgamma(y + (p + 1) / 2, p))
        return out
