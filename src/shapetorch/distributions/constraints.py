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
