"""``LKJCholesky``: the LKJ distribution over correlation matrices, given as their lower Cholesky factors
(Lewandowski, Kurowicka and Joe, 2009). Sampled by the onion method, as torch's: row ``i`` is a point on the
unit ``i``-sphere scaled by the square root of a Beta draw, the diagonal completing each row to unit norm."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from .._tensor import Tensor
from ..ops import creation, random
from ..ops.special import lgamma
from . import constraints as C
from .distribution import Distribution
from .gamma_family import Beta
from .library import _params


class LKJCholesky(Distribution):
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"concentration": C.positive}
    support = C.corr_cholesky

    def __init__(self, dim: int, concentration: Any = 1.0, validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = _params(concentration)
        super().__init__(self.concentration.shape, (dim, dim), validate_args)
        self._beta = self._row_betas(self.concentration)

    def _row_betas(self, concentration: Tensor) -> Beta:
        """Row ``i``'s squared off-diagonal norm is Beta(i/2, eta + (d - 1 - i)/2) (row 0's is unused)."""
        from ..ops.joining import cat

        offset = creation.arange(self.dim - 1, dtype=concentration.dtype)
        offset = cat([offset.new_zeros((1,)), offset])
        marginal = concentration + 0.5 * (self.dim - 2)
        return Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset, validate_args=False)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        new = super().expand(batch_shape, _instance)
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        return new

    def sample(self, sample_shape: Any = ()) -> Tensor:
        from ..autograd import no_grad
        from ..ops.conversion import where

        with no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            gauss = random.randn(self._extended_shape(sample_shape), dtype=y.dtype).tril(-1)
            norm = (gauss ** 2).sum(-1, keepdim=True).sqrt()
            first_row = (creation.arange(self.dim) == 0).reshape(self.dim, 1)
            # row 0 has no entries below the diagonal: its direction is 0 (not 0/0)
            sphere = where(first_row, 0.0, gauss / where(first_row, 1.0, norm))
            w = y.sqrt() * sphere
            tiny = 1.1754943508222875e-38 if w.dtype.itemsize <= 4 else 2.2250738585072014e-308
            diag = (1 - (w ** 2).sum(-1)).clamp(min=tiny).sqrt()
            out: Tensor = w + diag.diag_embed()
            return out

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        d = self.dim
        diag = value.diagonal(0, -1, -2)[..., 1:]
        order = creation.arange(2, d + 1, dtype=self.concentration.dtype)
        power = 2 * (self.concentration - 1).unsqueeze(-1) + d - order
        unnormalised = (power * diag.log()).sum(-1)
        dm1 = d - 1
        alpha = self.concentration + 0.5 * dm1
        # the multivariate log-gamma of (alpha - 1/2) in dm1 dims, over lgamma(alpha)^dm1
        mvlgamma: Any = dm1 * (dm1 - 1) / 4 * math.log(math.pi)
        for j in range(dm1):
            mvlgamma = mvlgamma + lgamma(alpha - 0.5 - j / 2)
        normaliser = 0.5 * dm1 * math.log(math.pi) + mvlgamma - lgamma(alpha) * dm1
        out: Tensor = unnormalised - normaliser
        return out
