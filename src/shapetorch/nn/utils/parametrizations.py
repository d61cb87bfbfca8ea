"""``nn.utils.parametrizations``: weight norm as a parametrization (``nn.utils.parametrize``), as torch's."""

from __future__ import annotations

from ..._tensor import Tensor
from ..modules.module import Module
from .parametrize import register_parametrization

__all__ = ["weight_norm"]


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
