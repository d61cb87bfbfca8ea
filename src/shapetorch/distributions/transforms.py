"""Bijective transforms for :class:`TransformedDistribution`: ``ExpTransform``, ``AffineTransform``,
``SigmoidTransform``, ``TanhTransform``, ``PowerTransform``, ``SoftplusTransform``, ``ComposeTransform`` (and
``AbsTransform``, which is not injective); each maps ``x -> y``, inverts, and gives
``log |dy/dx|`` elementwise (``event_dim`` 0, as torch's)."""

from __future__ import annotations

import math
from typing import Any

from .._dtype import finfo
from .._tensor import Tensor
from ..nn.functional import softplus
from . import constraints as C

__all__ = ["AbsTransform", "AffineTransform", "ComposeTransform", "ExpTransform", "PowerTransform", "SigmoidTransform",
           "SoftplusTransform", "TanhTransform", "Transform", "identity_transform"]


class Transform:
    domain: C.Constraint = C.real
    codomain: C.Constraint = C.real
    bijective = True
    event_dim = 0

    def __call__(self, x: Tensor) -> Tensor:
        raise NotImplementedError

    def inv(self, y: Tensor) -> Tensor:
        raise NotImplementedError

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def _parameters(self) -> tuple[Any, ...]:
        """What tells two transforms of one type apart (none for the fixed maps exp, sigmoid, tanh)."""
        return ()

    def __eq__(self, other: object) -> bool:
        # equal transforms make equal pushforwards: TransformedDistribution's KL reduces to its bases' (as torch)
        if type(other) is not type(self):
            return False
        assert isinstance(other, Transform)
        return all(_same(a, b) for a, b in zip(self._parameters(), other._parameters(), strict=True))

    __hash__ = object.__hash__


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return bool((a == b).all())
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(x == y for x, y in zip(a, b, strict=True))
    return bool(a == b)


class ExpTransform(Transform):
    codomain = C.positive

    def __call__(self, x: Tensor) -> Tensor:
        return x.exp()

    def inv(self, y: Tensor) -> Tensor:
        return y.log()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return x


class AffineTransform(Transform):
    """``y = loc + scale * x``."""

    def __init__(self, loc: Any, scale: Any, event_dim: int = 0) -> None:
        self.loc, self.scale, self.event_dim = loc, scale, event_dim

    def _parameters(self) -> tuple[Any, ...]:
        return self.loc, self.scale, self.event_dim

    def __call__(self, x: Tensor) -> Tensor:
        return self.loc + self.scale * x

    def inv(self, y: Tensor) -> Tensor:
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        scale = self.scale
        out = scale.abs().log() if isinstance(scale, Tensor) else x.new_full((), math.log(abs(scale)))
        out = out.expand(x.shape)
        if self.event_dim:
            out = out.flatten(-self.event_dim).sum(-1) if x.dim() else out
        return out


class SigmoidTransform(Transform):
    codomain = C.unit_interval

    def __call__(self, x: Tensor) -> Tensor:
        return x.sigmoid()

    def inv(self, y: Tensor) -> Tensor:
        info = finfo(y.dtype)
        y = y.clamp(info.tiny, 1 - info.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -softplus(-x) - softplus(x)


class TanhTransform(Transform):
    codomain = C.interval(-1.0, 1.0)

    def __call__(self, x: Tensor) -> Tensor:
        return x.tanh()

    def inv(self, y: Tensor) -> Tensor:
        return y.atanh()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class AbsTransform(Transform):
    """``y = |x|``: not injective, so its ``inv`` picks the nonnegative preimage (as torch's)."""

    codomain = C.nonnegative
    bijective = False

    def __call__(self, x: Tensor) -> Tensor:
        return x.abs()

    def inv(self, y: Tensor) -> Tensor:
        return y


class PowerTransform(Transform):
    """``y = x ** exponent`` on the positive reals."""

    domain = C.positive
    codomain = C.positive

    def __init__(self, exponent: Any) -> None:
        self.exponent = exponent

    def _parameters(self) -> tuple[Any, ...]:
        return (self.exponent,)

    def __call__(self, x: Tensor) -> Tensor:
        return x.pow(self.exponent)

    def inv(self, y: Tensor) -> Tensor:
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        e = self.exponent
        return (e * y / x).abs().log() if isinstance(e, Tensor) else (abs(e) * y / x).abs().log()


class SoftplusTransform(Transform):
    """``y = log(1 + exp(x))``."""

    codomain = C.positive

    def __call__(self, x: Tensor) -> Tensor:
        return softplus(x)

    def inv(self, y: Tensor) -> Tensor:
        return y + (-(-y).expm1()).log()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -softplus(-x)


class ComposeTransform(Transform):
    def __init__(self, parts: list[Transform]) -> None:
        self.parts = list(parts)

    def _parameters(self) -> tuple[Any, ...]:
        return (self.parts,)

    def __call__(self, x: Tensor) -> Tensor:
        for t in self.parts:
            x = t(x)
        return x

    def inv(self, y: Tensor) -> Tensor:
        for t in reversed(self.parts):
            y = t.inv(y)
        return y

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        if not self.parts:  # the identity
            return x.new_zeros(tuple(x.shape))
        total: Any = 0
        for t in self.parts:
            nxt = t(x)
            total = total + t.log_abs_det_jacobian(x, nxt)
            x = nxt
        return total


identity_transform = ComposeTransform([])
