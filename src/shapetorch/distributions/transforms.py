"""Bijective transforms for :class:`TransformedDistribution`; each maps ``x -> y``, inverts, and gives
``log |det dy/dx|``. The elementwise ones (``ExpTransform``, ``AffineTransform``, ``SigmoidTransform``,
``TanhTransform``, ``PowerTransform``, ``SoftplusTransform``; ``AbsTransform``, which is not injective) give it per
element; the ones over whole events (``SoftmaxTransform``, ``StickBreakingTransform``, ``ReshapeTransform``,
``LowerCholeskyTransform``, ``CorrCholeskyTransform``, ``PositiveDefiniteTransform``) and the combinators
(``ComposeTransform``, ``IndependentTransform``, ``CatTransform``, ``StackTransform``) carry their event dims in
``domain``/``codomain`` and their shape change in ``forward_shape``/``inverse_shape``, as torch's."""

from __future__ import annotations

import math
from typing import Any

from .._dtype import finfo
from .._errors import fail
from .._tensor import Tensor
from ..nn.functional import softplus
from . import constraints as C

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
           "SoftplusTransform", "StackTransform", "StickBreakingTransform", "TanhTransform", "Transform",
           "identity_transform"]


class Transform:
    """``t(x)`` and ``t.inv(y)`` go through ``_call`` / ``_inverse``; with ``cache_size=1`` the last pair is kept, so
    ``t.inv(t(x))`` is ``x`` itself (the value before a TanhTransform, where atanh of a rounded +-1 would be inf),
    as torch's."""

    domain: C.Constraint = C.real
    codomain: C.Constraint = C.real
    bijective = True
    _cache_size = 0
    _cached_x_y: tuple[Any, Any] = (None, None)

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            fail("argument_error_invalid_value", op=type(self).__name__, problem="cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y = (None, None)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __call__(self, x: Tensor) -> Tensor:
        if not self._cache_size:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = (x, y)
        return y

    def inv(self, y: Tensor) -> Tensor:
        if not self._cache_size:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = (x, y)
        return x

    @property
    def event_dim(self) -> int:
        """How many rightmost dims make one input or output event (the larger of the two, as torch's)."""
        return max(self.domain.event_dim, self.codomain.event_dim)

    def forward_shape(self, shape: Any) -> tuple[int, ...]:
        """The shape of ``self(x)`` for an ``x`` of ``shape`` (the same, for the elementwise maps)."""
        return tuple(shape)

    def inverse_shape(self, shape: Any) -> tuple[int, ...]:
        return tuple(shape)

    def _call(self, x: Tensor) -> Tensor:
        raise NotImplementedError

    def _inverse(self, y: Tensor) -> Tensor:
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

    def _call(self, x: Tensor) -> Tensor:
        return x.exp()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return x


class AffineTransform(Transform):
    """``y = loc + scale * x``."""

    def __init__(self, loc: Any, scale: Any, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim
        self.domain = self.codomain = C.independent(C.real, event_dim) if event_dim else C.real

    def _parameters(self) -> tuple[Any, ...]:
        return self.loc, self.scale, self._event_dim

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def forward_shape(self, shape: Any) -> tuple[int, ...]:
        from .library import broadcast_shape

        extra = [tuple(getattr(p, "shape", ())) for p in (self.loc, self.scale)]
        return broadcast_shape(tuple(shape), *extra)

    inverse_shape = forward_shape

    def _call(self, x: Tensor) -> Tensor:
        return self.loc + self.scale * x

    def _inverse(self, y: Tensor) -> Tensor:
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        scale = self.scale
        out = scale.abs().log() if isinstance(scale, Tensor) else x.new_full((), math.log(abs(scale)))
        out = out.expand(x.shape)
        if self._event_dim:
            out = out.flatten(-self._event_dim).sum(-1) if x.dim() else out
        return out


class SigmoidTransform(Transform):
    codomain = C.unit_interval

    def _call(self, x: Tensor) -> Tensor:
        return x.sigmoid()

    def _inverse(self, y: Tensor) -> Tensor:
        info = finfo(y.dtype)
        y = y.clamp(info.tiny, 1 - info.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -softplus(-x) - softplus(x)


class TanhTransform(Transform):
    codomain = C.interval(-1.0, 1.0)

    def _call(self, x: Tensor) -> Tensor:
        return x.tanh()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.atanh()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class AbsTransform(Transform):
    """``y = |x|``: not injective, so its ``inv`` picks the nonnegative preimage (as torch's)."""

    codomain = C.nonnegative
    bijective = False

    def _call(self, x: Tensor) -> Tensor:
        return x.abs()

    def _inverse(self, y: Tensor) -> Tensor:
        return y


class PowerTransform(Transform):
    """``y = x ** exponent`` on the positive reals."""

    domain = C.positive
    codomain = C.positive

    def __init__(self, exponent: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.exponent = exponent

    def _parameters(self) -> tuple[Any, ...]:
        return (self.exponent,)

    def _call(self, x: Tensor) -> Tensor:
        return x.pow(self.exponent)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        e = self.exponent
        return (e * y / x).abs().log() if isinstance(e, Tensor) else (abs(e) * y / x).abs().log()


class SoftplusTransform(Transform):
    """``y = log(1 + exp(x))``."""

    codomain = C.positive

    def _call(self, x: Tensor) -> Tensor:
        return softplus(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return y + (-(-y).expm1()).log()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -softplus(-x)


def sum_rightmost(x: Tensor, n: int) -> Tensor:
    """``x`` summed over its ``n`` rightmost dims (none for ``n <= 0``)."""
    return x.reshape(*x.shape[: x.dim() - n], -1).sum(-1) if n > 0 else x


class ComposeTransform(Transform):
    """The parts applied in order. Its domain and codomain carry the largest event dim any part needs (a part
    that couples a vector makes the whole map couple it), as torch's."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(\n    " + ",\n    ".join(repr(p) for p in self.parts) + "\n)"

    def __init__(self, parts: list[Transform], cache_size: int = 0) -> None:
        super().__init__(cache_size)
        # torch caches each part too
        self.parts = [p.with_cache(cache_size) for p in parts] if cache_size else list(parts)
        if not self.parts:
            return
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim = max(event_dim + part.domain.event_dim - part.codomain.event_dim, part.domain.event_dim)
        self.domain = _widen(self.parts[0].domain, event_dim)
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim = max(event_dim + part.codomain.event_dim - part.domain.event_dim, part.codomain.event_dim)
        self.codomain = _widen(self.parts[-1].codomain, event_dim)
        self.bijective = all(p.bijective for p in self.parts)

    def _parameters(self) -> tuple[Any, ...]:
        return (self.parts,)

    def forward_shape(self, shape: Any) -> tuple[int, ...]:
        for t in self.parts:
            shape = t.forward_shape(shape)
        return tuple(shape)

    def inverse_shape(self, shape: Any) -> tuple[int, ...]:
        for t in reversed(self.parts):
            shape = t.inverse_shape(shape)
        return tuple(shape)

    def _call(self, x: Tensor) -> Tensor:
        for t in self.parts:
            x = t(x)
        return x

    def _inverse(self, y: Tensor) -> Tensor:
        for t in reversed(self.parts):
            y = t.inv(y)
        return y

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        if not self.parts:  # the identity
            return x.new_zeros(tuple(x.shape))
        total: Any = 0
        event_dim = self.domain.event_dim
        for t in self.parts:
            nxt = t(x)
            total = total + sum_rightmost(t.log_abs_det_jacobian(x, nxt), event_dim - t.domain.event_dim)
            event_dim += t.codomain.event_dim - t.domain.event_dim
            x = nxt
        return total


def _widen(constraint: C.Constraint, event_dim: int) -> C.Constraint:
    extra = event_dim - constraint.event_dim
    return C.independent(constraint, extra) if extra > 0 else constraint


identity_transform = ComposeTransform([])


def _at_least(shape: Any, n: int) -> tuple[int, ...]:
    if len(shape) < n:
        raise ValueError("Too few dimensions on input")
    return tuple(shape)


class SoftmaxTransform(Transform):
    """``x -> softmax(x)`` over the last dim: not injective (adding a constant changes nothing), so ``inv`` is
    the log, one preimage, and there is no Jacobian (as torch's)."""

    domain = C.real_vector
    codomain = C.simplex

    def _call(self, x: Tensor) -> Tensor:
        out: Tensor = x.softmax(-1)
        return out

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()

    def forward_shape(self, shape: Any) -> tuple[int, ...]:
        return _at_least(shape, 1)

    inverse_shape = forward_shape


def _stick_offset(k: int, like: Tensor) -> Tensor:
    """log(k, k-1, ..., 1): the shift that makes x = 0 break the stick into equal pieces."""
    from ..ops import creation

    return creation.arange(k, 0, -1, dtype=like.dtype).log()


class StickBreakingTransform(Transform):
    """R^(K-1) -> the K-simplex: coordinate i takes the fraction ``sigmoid(x_i - log(K - 1 - i))`` of what is left
    of the stick (a bijection, unlike softmax)."""

    domain = C.real_vector
    codomain = C.simplex

    def _call(self, x: Tensor) -> Tensor:
        from ..nn.functional import pad

        info = finfo(x.dtype)
        z = (x - _stick_offset(x.shape[-1], x)).sigmoid().clamp(info.tiny, 1 - info.eps)
        left = (1 - z).cumprod(-1)
        out: Tensor = pad(z, (0, 1), value=1.0) * pad(left, (1, 0), value=1.0)
        return out

    def _inverse(self, y: Tensor) -> Tensor:
        head = y[..., :-1]
        left = (1 - head.cumsum(-1)).clamp(min=finfo(y.dtype).tiny)
        return head.log() - left.log() + _stick_offset(head.shape[-1], y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        from ..nn.functional import logsigmoid

        shifted = x - _stick_offset(x.shape[-1], x)
        out: Tensor = (-shifted + logsigmoid(shifted) + y[..., :-1].log()).sum(-1)
        return out

    def forward_shape(self, shape: Any) -> tuple[int, ...]:
        shape = _at_least(shape, 1)
        return shape[:-1] + (shape[-1] + 1,)

    def inverse_shape(self, shape: Any) -> tuple[int, ...]:
        shape = _at_least(shape, 1)
        return shape[:-1] + (shape[-1] - 1,)


class ReshapeTransform(Transform):
    """Each event of ``in_shape`` reshaped to ``out_shape`` (volume-preserving: the Jacobian term is 0)."""

    def __init__(self, in_shape: Any, out_shape: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.in_shape, self.out_shape = tuple(in_shape), tuple(out_shape)
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ValueError("in_shape, out_shape have different numbers of elements")
        self.domain = C.independent(C.real, len(self.in_shape))
        self.codomain = C.independent(C.real, len(self.out_shape))

    def _parameters(self) -> tuple[Any, ...]:
        return self.in_shape, self.out_shape

    def _call(self, x: Tensor) -> Tensor:
        return x.reshape(*x.shape[: x.dim() - len(self.in_shape)], *self.out_shape)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.reshape(*y.shape[: y.dim() - len(self.out_shape)], *self.in_shape)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return x.new_zeros(tuple(x.shape[: x.dim() - len(self.in_shape)]))

    def forward_shape(self, shape: Any) -> tuple[int, ...]:
        return self._swap(tuple(shape), self.in_shape, self.out_shape)

    def inverse_shape(self, shape: Any) -> tuple[int, ...]:
        return self._swap(tuple(shape), self.out_shape, self.in_shape)

    @staticmethod
    def _swap(shape: tuple[int, ...], old: tuple[int, ...], new: tuple[int, ...]) -> tuple[int, ...]:
        if len(shape) < len(old):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(old)
        if shape[cut:] != old:
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {old}")
        return shape[:cut] + new


class IndependentTransform(Transform):
    """``base_transform`` with its ``reinterpreted_batch_ndims`` rightmost batch dims read as event dims: the same
    map, its Jacobian term summed over them."""

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int, cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.base_transform, self.reinterpreted_batch_ndims = base_transform, reinterpreted_batch_ndims
        self.domain = C.independent(base_transform.domain, reinterpreted_batch_ndims)
        self.codomain = C.independent(base_transform.codomain, reinterpreted_batch_ndims)
        self.bijective = base_transform.bijective

    def _parameters(self) -> tuple[Any, ...]:
        return self.base_transform, self.reinterpreted_batch_ndims

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"

    def _call(self, x: Tensor) -> Tensor:
        return self.base_transform(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def forward_shape(self, shape: Any) -> tuple[int, ...]:
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape: Any) -> tuple[int, ...]:
        return self.base_transform.inverse_shape(shape)


class CatTransform(Transform):
    """Transform ``i`` applied to the ``i``-th block (``lengths[i]`` long, default 1) along ``dim``, the blocks
    joined again, as ``torch.cat`` joins them."""

    def __init__(self, tseq: list[Transform], dim: int = 0, lengths: list[int] | None = None,
                 cache_size: int = 0) -> None:
        super().__init__(cache_size)
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms ({len(self.transforms)})")
        self.dim = dim
        self.domain = C.cat([t.domain for t in self.transforms], dim, self.lengths)
        self.codomain = C.cat([t.codomain for t in self.transforms], dim, self.lengths)
        self.bijective = all(t.bijective for t in self.transforms)

    def _parameters(self) -> tuple[Any, ...]:
        return self.transforms, self.dim, self.lengths

    @property
    def length(self) -> int:
        return sum(self.lengths)

    def _blocks(self, x: Tensor) -> list[Tensor]:
        starts = [sum(self.lengths[:i]) for i in range(len(self.lengths))]
        return [x.narrow(self.dim, s, n) for s, n in zip(starts, self.lengths, strict=True)]

    def _call(self, x: Tensor) -> Tensor:
        from ..ops.joining import cat

        return cat([t(b) for t, b in zip(self.transforms, self._blocks(x), strict=True)], self.dim)

    def _inverse(self, y: Tensor) -> Tensor:
        from ..ops.joining import cat

        return cat([t.inv(b) for t, b in zip(self.transforms, self._blocks(y), strict=True)], self.dim)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        from ..ops.joining import cat

        event_dim = self.event_dim
        terms = [sum_rightmost(t.log_abs_det_jacobian(a, b), event_dim - t.event_dim)
                 for t, a, b in zip(self.transforms, self._blocks(x), self._blocks(y), strict=True)]
        # a dim left of the event dims keeps the blocks apart; one inside an event is summed over
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + event_dim
        if dim < 0:
            return cat(terms, dim)
        total: Tensor = terms[0]
        for term in terms[1:]:
            total = total + term
        return total


class StackTransform(Transform):
    """Transform ``i`` applied to slice ``i`` along ``dim``, the slices stacked again, as ``torch.stack``."""

    def __init__(self, tseq: list[Transform], dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size)
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        self.transforms, self.dim = list(tseq), dim
        self.domain = C.stack([t.domain for t in self.transforms], dim)
        self.codomain = C.stack([t.codomain for t in self.transforms], dim)
        self.bijective = all(t.bijective for t in self.transforms)

    def _parameters(self) -> tuple[Any, ...]:
        return self.transforms, self.dim

    def _map(self, x: Tensor, fn: Any) -> Tensor:
        from ..ops.joining import stack

        return stack([fn(t, x.select(self.dim, i)) for i, t in enumerate(self.transforms)], self.dim)

    def _call(self, x: Tensor) -> Tensor:
        return self._map(x, lambda t, v: t(v))

    def _inverse(self, y: Tensor) -> Tensor:
        return self._map(y, lambda t, v: t.inv(v))

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        from ..ops.joining import stack

        terms = [t.log_abs_det_jacobian(x.select(self.dim, i), y.select(self.dim, i))
                 for i, t in enumerate(self.transforms)]
        return stack(terms, self.dim)


class LowerCholeskyTransform(Transform):
    """Any square matrix -> a lower-triangular one with a positive diagonal: the strict lower part kept, the
    diagonal exponentiated (no Jacobian, as torch's)."""

    domain = C.independent(C.real, 2)
    codomain = C.lower_cholesky

    def _call(self, x: Tensor) -> Tensor:
        out: Tensor = x.tril(-1) + x.diagonal(0, -2, -1).exp().diag_embed()
        return out

    def _inverse(self, y: Tensor) -> Tensor:
        out: Tensor = y.tril(-1) + y.diagonal(0, -2, -1).log().diag_embed()
        return out


class PositiveDefiniteTransform(Transform):
    """Any square matrix -> ``L L^T`` with ``L`` its :class:`LowerCholeskyTransform` (no Jacobian, as torch's)."""

    domain = C.independent(C.real, 2)
    codomain = C.positive_definite

    def _call(self, x: Tensor) -> Tensor:
        low = LowerCholeskyTransform()(x)
        return low @ low.mT

    def _inverse(self, y: Tensor) -> Tensor:
        from ..ops.linalg import linalg_cholesky

        return LowerCholeskyTransform().inv(linalg_cholesky(y))


def _strict_lower_positions(n: int, offset: int) -> list[int]:
    """Flat positions of the entries below diagonal ``offset`` of an ``n x n`` matrix, row by row."""
    return [i * n + j for i in range(n) for j in range(n) if j <= i + offset]


def _vec_to_strict_lower(vec: Tensor, n: int) -> Tensor:
    """The vector's entries placed below the diagonal row by row, zeros elsewhere (differentiable: a gather
    from the vector with a zero put in front)."""
    from ..nn.functional import pad
    from ..ops import creation

    slot = [0] * (n * n)
    for k, pos in enumerate(_strict_lower_positions(n, -1)):
        slot[pos] = k + 1
    padded = pad(vec, (1, 0), value=0.0)
    return padded.index_select(-1, creation.tensor(slot)).reshape(*vec.shape[:-1], n, n)


def _strict_lower_to_vec(mat: Tensor, offset: int) -> Tensor:
    from ..ops import creation

    n = mat.shape[-1]
    return mat.flatten(-2).index_select(-1, creation.tensor(_strict_lower_positions(n, offset)))


class CorrCholeskyTransform(Transform):
    """R^(D(D-1)/2) -> Cholesky factors of D x D correlation matrices: tanh maps each entry into (-1, 1), and
    each row is filled by stick-breaking so it has unit norm (the LKJ construction, as torch's)."""

    domain = C.real_vector
    codomain = C.corr_cholesky

    def _call(self, x: Tensor) -> Tensor:
        from ..nn.functional import pad
        from ..ops import creation

        eps = finfo(x.dtype).eps
        t = x.tanh().clamp(-1 + eps, 1 - eps)
        n = self.forward_shape(tuple(x.shape))[-1]
        r = _vec_to_strict_lower(t, n)
        left = (1 - r ** 2).sqrt().cumprod(-1)
        r = r + creation.eye(n, dtype=r.dtype)
        out: Tensor = r * pad(left[..., :-1], (1, 0), value=1.0)
        return out

    def _inverse(self, y: Tensor) -> Tensor:
        from ..nn.functional import pad

        left = 1 - (y * y).cumsum(-1)
        shifted = pad(left[..., :-1], (1, 0), value=1.0)
        t = _strict_lower_to_vec(y, -1) / _strict_lower_to_vec(shifted, -1).sqrt()
        out: Tensor = (t.log1p() - (-t).log1p()) / 2
        return out

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        left = 1 - (y * y).cumsum(-1)
        stick = 0.5 * _strict_lower_to_vec(left, -2).log().sum(-1)
        tanh = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(-1)
        out: Tensor = stick + tanh
        return out

    def forward_shape(self, shape: Any) -> tuple[int, ...]:
        shape = _at_least(shape, 1)
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return shape[:-1] + (d, d)

    def inverse_shape(self, shape: Any) -> tuple[int, ...]:
        shape = _at_least(shape, 2)
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return shape[:-2] + (d * (d - 1) // 2,)


class CumulativeDistributionTransform(Transform):
    """``x -> distribution.cdf(x)``, onto the unit interval; its inverse is ``icdf`` and its Jacobian term the
    density, ``log_prob(x)``."""

    codomain = C.unit_interval

    def __init__(self, distribution: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.distribution = distribution
        self.domain = distribution.support

    def _parameters(self) -> tuple[Any, ...]:
        return (id(self.distribution),)

    def _call(self, x: Tensor) -> Tensor:
        out: Tensor = self.distribution.cdf(x)
        return out

    def _inverse(self, y: Tensor) -> Tensor:
        out: Tensor = self.distribution.icdf(y)
        return out

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        out: Tensor = self.distribution.log_prob(x)
        return out
