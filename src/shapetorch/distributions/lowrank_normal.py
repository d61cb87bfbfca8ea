"""``LowRankMultivariateNormal``: N(loc, W W^T + diag(D)) for a ``cov_factor`` W of shape (n, r) and a positive
``cov_diag`` D. Everything goes through the r x r capacitance matrix ``I + W^T D^-1 W`` (its Cholesky factor), so
log_prob and entropy cost O(n r^2) rather than O(n^3), as in torch."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from .._errors import ShapeError
from .._tensor import Tensor
from ..ops import random
from ..ops.linalg import linalg_cholesky, linalg_solve_triangular
from ..ops.matrix import diag_embed
from . import constraints as C
from .distribution import Distribution
from .library import broadcast_shape


def capacitance_tril(W: Tensor, D: Tensor) -> Tensor:
    """The Cholesky factor of ``I + W^T D^-1 W``."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    K = Wt_Dinv @ W
    eye = diag_embed(K.new_ones(K.shape[-1]))
    return linalg_cholesky(K + eye)


def lowrank_logdet(W: Tensor, D: Tensor, cap_tril: Tensor) -> Tensor:
    """``log det(W W^T + D)`` by the matrix determinant lemma: ``log det(capacitance) + sum(log D)``."""
    out: Tensor = 2 * cap_tril.diagonal(0, -2, -1).log().sum(-1) + D.log().sum(-1)
    return out


def tril_mahalanobis(L: Tensor, x: Tensor) -> Tensor:
    """``x^T (L L^T)^-1 x`` over the batch dims of ``L`` and ``x`` broadcast together."""
    n = x.shape[-1]
    batch = broadcast_shape(tuple(L.shape[:-2]), tuple(x.shape[:-1]))
    z = linalg_solve_triangular(L.expand((*batch, n, n)), x.expand((*batch, n)).unsqueeze(-1), upper=False)
    out: Tensor = (z.squeeze(-1) ** 2).sum(-1)
    return out


def lowrank_mahalanobis(W: Tensor, D: Tensor, x: Tensor, cap_tril: Tensor) -> Tensor:
    """``x^T (W W^T + D)^-1 x`` by the Woodbury identity."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    Wt_Dinv_x = (Wt_Dinv @ x.unsqueeze(-1)).squeeze(-1)
    return (x ** 2 / D).sum(-1) - tril_mahalanobis(cap_tril, Wt_Dinv_x)


class LowRankMultivariateNormal(Distribution):
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {
        "loc": C.real_vector, "cov_factor": C.independent(C.real, 2), "cov_diag": C.independent(C.positive, 1)}
    support = C.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, cov_factor: Tensor, cov_diag: Tensor, validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        n = loc.shape[-1]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if cov_factor.shape[-2] != n:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {n} x m")
        if tuple(cov_diag.shape[-1:]) != (n,):
            raise ValueError(f"cov_diag must be a batch of vectors with shape {tuple(loc.shape[-1:])}")
        try:
            full = broadcast_shape(tuple(loc.shape) + (1,), tuple(cov_factor.shape), tuple(cov_diag.shape) + (1,))
        except ShapeError as e:  # torch turns its broadcasting error into a ValueError here
            raise ValueError(f"Incompatible batch shapes: loc {tuple(loc.shape)}, cov_factor "
                             f"{tuple(cov_factor.shape)}, cov_diag {tuple(cov_diag.shape)}") from e
        batch = full[:-2]
        self.loc = loc.expand((*batch, n))
        self.cov_factor = cov_factor.expand(full)
        self.cov_diag = cov_diag.expand((*batch, n))
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch, (n,), validate_args)

    def _matrix_shape(self) -> tuple[int, ...]:
        return (*self._batch_shape, *self._event_shape, *self._event_shape)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        out: Tensor = ((W ** 2).sum(-1) + D).expand((*self._batch_shape, *self._event_shape))
        return out

    @property
    def scale_tril(self) -> Tensor:
        """``sqrt(D) cholesky(I + D^-1/2 W W^T D^-1/2)``: the Cholesky factor of the covariance, as torch forms it."""
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        d_sqrt = D.sqrt().unsqueeze(-1)
        scaled = W / d_sqrt
        K = scaled @ scaled.mT
        K = K + diag_embed(K.new_ones(K.shape[-1]))
        return (d_sqrt * linalg_cholesky(K)).expand(self._matrix_shape())

    @property
    def covariance_matrix(self) -> Tensor:
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W @ W.mT + diag_embed(D)).expand(self._matrix_shape())

    @property
    def precision_matrix(self) -> Tensor:
        """``D^-1 - D^-1 W capacitance^-1 W^T D^-1`` (Woodbury)."""
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        Wt_Dinv = W.mT / D.unsqueeze(-2)
        A = linalg_solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        return (diag_embed(D.reciprocal()) - A.mT @ A).expand(self._matrix_shape())

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        eps_W = random.randn((*shape[:-1], W.shape[-1]), dtype=self.loc.dtype)
        eps_D = random.randn(shape, dtype=self.loc.dtype)
        out: Tensor = self.loc + (W @ eps_W.unsqueeze(-1)).squeeze(-1) + D.sqrt() * eps_D
        return out

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        diff = value - self.loc
        M = lowrank_mahalanobis(W, D, diff, self._capacitance_tril)
        log_det = lowrank_logdet(W, D, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + M)

    def entropy(self) -> Tensor:
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        log_det = lowrank_logdet(W, D, self._capacitance_tril)
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        return h.expand(tuple(self._batch_shape)) if len(self._batch_shape) else h
