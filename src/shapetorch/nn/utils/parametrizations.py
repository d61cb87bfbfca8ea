"""``nn.utils.parametrizations``: weight norm and spectral norm as parametrizations (``nn.utils.parametrize``),
as torch's. (``orthogonal`` is not provided yet.)"""

from __future__ import annotations

from ..._grad_mode import no_grad
from ..._tensor import Tensor
from ...ops.creation import empty
from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from .parametrize import register_parametrization

__all__ = ["spectral_norm", "weight_norm"]


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
