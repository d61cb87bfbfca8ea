"""``VonMises``: the circular normal, density ``exp(k cos(x - loc)) / (2 pi I0(k))`` on [-pi, pi).

``log I0`` comes from the exponentially scaled Bessel function (``log i0e(k) + k``, finite for any k, with its
gradient ``I1/I0``); torch evaluates Abramowitz and Stegun's polynomial fits (about 2e-7 relative), so the two agree
to float32's precision. Sampling is Best and Fisher's (1979) rejection sampler with a wrapped-Cauchy proposal,
as torch's, in float64 and then cast, with no reparameterised gradient (``has_rsample`` is False, as torch's)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from .._tensor import Tensor
from ..ops import creation
from . import constraints as C
from .distribution import Distribution
from .library import _params


def _log_i0(k: Tensor) -> Tensor:
    from ..ops.special import special_i0e

    return special_i0e(k).log() + k


def _log_i1(k: Tensor) -> Tensor:
    from ..ops.special import special_i1e

    return special_i1e(k).log() + k


def _rejection_sample(loc: Any, kappa: Any, shape: tuple[int, ...]) -> Any:
    """Best-Fisher: accept ``f = (1 + r z) / (r + z)`` (z the cosine of a uniform angle) with the test on
    ``c = kappa (r - f)``; float64 numpy arrays broadcast to ``shape``."""
    from ..ops.random import _rng

    rng = _rng(None)
    loc, kappa = np.broadcast_to(loc, shape), np.broadcast_to(kappa, shape)
    tau = 1 + np.sqrt(1 + 4 * kappa ** 2)
    rho = (tau - np.sqrt(2 * tau)) / (2 * kappa)
    r = np.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho ** 2) / (2 * rho))  # (the small-kappa limit)
    x = np.zeros(shape)
    done = np.zeros(shape, bool)
    while not done.all():
        u1, u2, u3 = rng.random((3, *shape))
        z = np.cos(math.pi * u1)
        f = (1 + r * z) / (r + z)
        c = kappa * (r - f)
        with np.errstate(divide="ignore", invalid="ignore"):
            accept = ~done & (((c * (2 - c) - u2) > 0) | (np.log(c / u2) + 1 - c >= 0))
        x = np.where(accept, np.sign(u3 - 0.5) * np.arccos(np.clip(f, -1, 1)), x)
        done |= accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {"loc": C.real, "concentration": C.positive}
    support = C.real
    has_rsample = False

    def __init__(self, loc: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = _params(loc, concentration)
        super().__init__(self.loc.shape, (), validate_args)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        k = self.concentration
        return k * (value - self.loc).cos() - math.log(2 * math.pi) - _log_i0(k)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        loc, kappa = (t.detach().cpu().numpy().astype(np.float64) for t in (self.loc, self.concentration))
        return creation.tensor(_rejection_sample(loc, kappa, shape), dtype=self.loc.dtype)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        """The circular variance ``1 - I1(k)/I0(k)``, as torch's."""
        k = self.concentration
        return 1 - (_log_i1(k) - _log_i0(k)).exp()
