"""``nn.utils.parametrizations``: orthogonal, weight norm and spectral norm as parametrizations
(``nn.utils.parametrize``), as torch's."""

from __future__ import annotations

from ..._grad_mode import no_grad
from ..._tensor import Tensor
from ...ops.creation import empty
from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from .parametrize import register_parametrization

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]

_ORTHOGONAL_MAPS = ("matrix_exp", "cayley", "householder")


def _norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """The 2-norm of ``v`` over every dim but ``dim`` (all of them for ``dim=-1``), keeping them as size 1."""
    if dim == -1:
        return v.norm()
    dim = dim % v.dim()
    others = [d for d in range(v.dim()) if d != dim]
    return v.norm(2, others, keepdim=True) if others else v.abs()


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """``module.<name>`` as ``g * v / ||v||``: the magnitude ``g`` (``parametrizations.<name>.original0``) and the
    direction ``v`` (``original1``) are the parameters, the norm over every dim but ``dim``."""
    return register_parametrization(module, name, _WeightNorm(dim), unsafe=True)


class _SpectralNorm(Module):
    """``weight / sigma``, ``sigma = u . (W v)`` with the singular vectors ``_u``, ``_v`` (buffers) refined by
    power iteration at every training forward; a 1-D weight is normalised instead."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim % ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = self._matrix(weight)
            h, w = mat.shape
            self.register_buffer("_u", F.normalize(empty(h, dtype=weight.dtype, device=weight.device).normal_(0, 1),
                                                   dim=0, eps=eps))
            self.register_buffer("_v", F.normalize(empty(w, dtype=weight.dtype, device=weight.device).normal_(0, 1),
                                                   dim=0, eps=eps))
            self._power_method(mat, 15)  # a good estimate from the start, as torch's

    def _matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.dim()) if d != self.dim])
        return weight.flatten(1)

    def _power_method(self, mat: Tensor, n: int) -> None:
        with no_grad():  # in place: the buffers carry the estimate over to the next forward
            for _ in range(n):
                self._u.copy_(F.normalize(mat.mv(self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(mat.mH.mv(self._u), dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.dim() == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        mat = self._matrix(weight)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        # clones, so that the next forward's in-place update does not change what this backward reads
        u, v = self._u.clone(), self._v.clone()
        return weight / u.vdot(mat.mv(v))

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """``module.<name>`` divided by its largest singular value (estimated by power iteration); ``dim`` (1 for
    the transposed convolutions, else 0) is the output dim, the rows of the matrix it is flattened to."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


def _is_orthogonal(Q: Tensor) -> bool:
    from ..._dtype import finfo
    from ...ops.creation import eye

    n, k = Q.shape[-2], Q.shape[-1]
    eps = 10.0 * n * finfo(Q.dtype).eps
    return bool((Q.mH @ Q).allclose(eye(k, dtype=Q.dtype, device=Q.device), atol=eps))


def _make_orthogonal(A: Tensor) -> Tensor:
    """The Q of A's QR factorization with R's diagonal made positive (a unique orthogonal completion)."""
    from ...ops.linalg import geqrf, linalg_householder_product

    X, tau = geqrf(A)
    Q = linalg_householder_product(X, tau)
    return Q * X.diagonal(0, -2, -1).sgn().unsqueeze(-2)


class _Orthogonal(Module):
    """A matrix (or batch) with orthonormal columns (or rows, when wide) from an unconstrained one: the
    exponential or the Cayley map of a skew-symmetric matrix, or a product of Householder reflectors; with
    ``use_trivialization``, relative to a ``base`` (a buffer) that assigning a value sets."""

    def __init__(self, weight: Tensor, orthogonal_map: str, *, use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == "householder":
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        from ...ops.joining import cat
        from ...ops.linalg import linalg_householder_product, linalg_solve, matrix_exp

        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            X = X.tril()
            if n != k:
                X = cat([X, X.new_zeros((*X.shape[:-2], n, n - k))], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == "matrix_exp":
                Q = matrix_exp(A)
            else:
                from ...ops.creation import eye

                Id = eye(n, dtype=A.dtype, device=A.device)
                Q = linalg_solve(Id - 0.5 * A, Id + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = linalg_householder_product(A, tau)
            # the diagonal's signs flip the reflections, so that every orthogonal matrix is reached
            Q = Q * X.diagonal(0, -2, -1).int().unsqueeze(-2)
        if getattr(self, "base", None) is not None:
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        from ...ops.creation import zeros_like
        from ...ops.joining import cat
        from ...ops.linalg import geqrf
        from ...ops.random import randn

        if tuple(Q.shape) != tuple(self.shape):
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        with no_grad():
            if not hasattr(self, "base"):
                # without a base, only the Householder map can be inverted: its X is the compact QR of Q
                if self.orthogonal_map in ("matrix_exp", "cayley"):
                    raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                              "parametrizations when use_trivialization=False.")
                A, tau = geqrf(Q)
                # R's diagonal made +-1 (its sign), flipped where LAPACK used no reflection (tau exactly 0)
                diag = A.diagonal(0, -2, -1)
                signs = diag.sign()
                diag.copy_(signs.masked_fill(tau == 0.0, 0.0) - signs.masked_fill(tau != 0.0, 0.0))
                return A.mT if transpose else A
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
            else:  # completed to a square orthogonal matrix by random columns
                N = randn(*Q.shape[:-2], n, n - k, dtype=Q.dtype, device=Q.device)
                Q = _make_orthogonal(cat([Q, N], dim=-1))
            self.base = Q
            # -Id: the Householder map of zeros with a diagonal of -1 is the identity, so base alone is the value
            neg_id = zeros_like(Q_init)
            neg_id.diagonal(0, -2, -1).fill_(-1.0)
            return neg_id


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """``module.<name>`` constrained to orthonormal columns (rows, when wide) through ``orthogonal_map``:
    "matrix_exp" (the default for square or complex weights), "cayley" or "householder" (the default
    otherwise); the current weight is kept, made orthogonal."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.dim() < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.dim()} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] or weight.is_complex() else "householder"
    if orthogonal_map not in _ORTHOGONAL_MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    register_parametrization(module, name, orth, unsafe=True)
    return module
