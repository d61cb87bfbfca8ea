"""The constraints that parameters and samples satisfy; ``check(value)`` gives a bool tensor."""

from __future__ import annotations

from typing import Any

from .._tensor import Tensor


class Constraint:
    is_discrete = False
    event_dim = 0

    def check(self, value: Tensor) -> Tensor:
        raise NotImplementedError  # every constraint below defines it; the base is abstract as torch's

    def __repr__(self) -> str:
        return type(self).__name__.lstrip("_") + "()"


class _Real(Constraint):
    def check(self, value: Tensor) -> Tensor:
        return ~value.isnan()


class _Positive(Constraint):
    def check(self, value: Tensor) -> Tensor:
        return value > 0


class _NonNegative(Constraint):
    def check(self, value: Tensor) -> Tensor:
        return value >= 0


class _NonNegativeInteger(Constraint):
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value >= 0)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        return ((value == 0) | (value == 1)).all(-1) & (value.sum(-1) == 1)


class _Interval(Constraint):
    def __init__(self, lower: Any, upper: Any, *, half_open: bool = False) -> None:
        self.lower_bound, self.upper_bound, self.half_open = lower, upper, half_open

    def check(self, value: Tensor) -> Tensor:
        upper = value < self.upper_bound if self.half_open else value <= self.upper_bound
        return (value >= self.lower_bound) & upper


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value == 0) | (value == 1)


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower: Any, upper: Any) -> None:
        self.lower_bound, self.upper_bound = lower, upper

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value >= self.lower_bound) & (value <= self.upper_bound)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _RealVector(Constraint):
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        return (~value.isnan()).all(-1)


class _PositiveDefinite(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        from ..ops.linalg import linalg_cholesky_ex

        sym = ((value - value.mT).abs() < 1e-6).all(-1).all(-1)
        return sym & (linalg_cholesky_ex(value).info == 0)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        lower = (value.tril() == value).all(-1).all(-1)
        return lower & (value.diagonal(0, -2, -1) > 0).all(-1)


real = _Real()
positive = _Positive()
nonnegative = _NonNegative()
nonnegative_integer = _NonNegativeInteger()
one_hot = _OneHot()
boolean = _Boolean()
simplex = _Simplex()
real_vector = _RealVector()
positive_definite = _PositiveDefinite()
lower_cholesky = _LowerCholesky()
unit_interval = _Interval(0.0, 1.0)


class _GreaterThan(Constraint):
    def __init__(self, lower: Any, *, eq: bool = False) -> None:
        self.lower_bound, self.eq = lower, eq

    def check(self, value: Tensor) -> Tensor:
        return value >= self.lower_bound if self.eq else value > self.lower_bound


class _LessThan(Constraint):
    def __init__(self, upper: Any) -> None:
        self.upper_bound = upper

    def check(self, value: Tensor) -> Tensor:
        return value < self.upper_bound


def greater_than(lower: Any) -> Constraint:
    return _GreaterThan(lower)


def greater_than_eq(lower: Any) -> Constraint:
    return _GreaterThan(lower, eq=True)


def less_than(upper: Any) -> Constraint:
    return _LessThan(upper)


def interval(lower: Any, upper: Any) -> Constraint:
    return _Interval(lower, upper)


def half_open_interval(lower: Any, upper: Any) -> Constraint:
    return _Interval(lower, upper, half_open=True)


def integer_interval(lower: Any, upper: Any) -> Constraint:
    return _IntegerInterval(lower, upper)


class _IndependentConstraint(Constraint):
    """``base`` checked elementwise, with its rightmost ``reinterpreted_batch_ndims`` dims read as one event."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        self.base_constraint, self.reinterpreted_batch_ndims = base_constraint, reinterpreted_batch_ndims
        self.is_discrete = base_constraint.is_discrete
        self.event_dim = base_constraint.event_dim + reinterpreted_batch_ndims

    def check(self, value: Tensor) -> Tensor:
        ok = self.base_constraint.check(value)
        for _ in range(self.reinterpreted_batch_ndims):
            ok = ok.all(-1)
        return ok

    def __repr__(self) -> str:
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


def independent(base_constraint: Constraint, reinterpreted_batch_ndims: int) -> Constraint:
    return _IndependentConstraint(base_constraint, reinterpreted_batch_ndims)


class _Dependent(Constraint):
    """The support of a distribution whose support depends on its parameters (Uniform's [low, high))."""

    def check(self, value: Tensor) -> Tensor:
        raise ValueError("Cannot determine validity of dependent constraint")


dependent = _Dependent()


class _PositiveInteger(Constraint):
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value >= 1)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        return (value.tril() == value).all(-1).all(-1)


class _CorrCholesky(Constraint):
    """Lower Cholesky factors whose rows have unit norm (Cholesky factors of correlation matrices); the norm is
    checked to torch's tolerance, ten ulps per column."""

    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        from .._dtype import finfo

        tol = finfo(value.dtype).eps * value.shape[-1] * 10
        norm = (value.detach() ** 2).sum(-1).sqrt()
        return lower_cholesky.check(value) & ((norm - 1.0).abs() <= tol).all(-1)


class _Square(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        zeros = value.new_zeros(tuple(value.shape[:-2]))
        return zeros == 0 if value.shape[-2] == value.shape[-1] else zeros != 0


class _Symmetric(_Square):
    def check(self, value: Tensor) -> Tensor:
        square = super().check(value)
        if not bool(square.all()):
            return square
        return value.isclose(value.mT, atol=1e-6).all(-2).all(-1)


class _PositiveSemidefinite(_Symmetric):
    def check(self, value: Tensor) -> Tensor:
        from ..ops.linalg import linalg_eigvalsh

        symmetric = super().check(value)
        if not bool(symmetric.all()):
            return symmetric
        return (linalg_eigvalsh(value) >= 0).all(-1)


class _Multinomial(Constraint):
    """Nonnegative counts summing to at most ``upper_bound`` (torch's weaker check: at most, not exactly)."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def check(self, value: Tensor) -> Tensor:
        return (value >= 0).all(-1) & (value.sum(-1) <= self.upper_bound)


class _Cat(Constraint):
    """Constraint ``i`` on the ``i``-th block (``lengths[i]`` long) along ``dim``, as ``torch.cat`` joins them."""

    def __init__(self, cseq: list[Constraint], dim: int = 0, lengths: list[int] | None = None) -> None:
        self.cseq = list(cseq)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match cseq ({len(self.cseq)})")
        self.dim = dim
        self.is_discrete = any(c.is_discrete for c in self.cseq)
        self.event_dim = max(c.event_dim for c in self.cseq)

    def check(self, value: Tensor) -> Tensor:
        from ..ops.joining import cat

        parts, start = [], 0
        for constraint, length in zip(self.cseq, self.lengths, strict=True):
            parts.append(constraint.check(value.narrow(self.dim, start, length)))
            start += length
        return cat(parts, self.dim)


class _Stack(Constraint):
    """Constraint ``i`` on slice ``i`` along ``dim``, as ``torch.stack`` joins them."""

    def __init__(self, cseq: list[Constraint], dim: int = 0) -> None:
        self.cseq, self.dim = list(cseq), dim
        self.is_discrete = any(c.is_discrete for c in self.cseq)
        inner = max(c.event_dim for c in self.cseq)
        self.event_dim = inner + 1 if dim + inner < 0 else inner  # a dim inside the event adds one to it

    def check(self, value: Tensor) -> Tensor:
        from ..ops.joining import stack

        return stack([c.check(value.select(self.dim, i)) for i, c in enumerate(self.cseq)], self.dim)


positive_integer = _PositiveInteger()
lower_triangular = _LowerTriangular()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()


def multinomial(upper_bound: Any) -> Constraint:
    return _Multinomial(upper_bound)


def cat(cseq: list[Constraint], dim: int = 0, lengths: list[int] | None = None) -> Constraint:
    return _Cat(cseq, dim, lengths)


def stack(cseq: list[Constraint], dim: int = 0) -> Constraint:
    return _Stack(cseq, dim)
