"""The constraints that parameters and samples satisfy; ``check(value)`` gives a bool tensor.

The classes, their names and reprs are torch's: the parametrised constraints (``interval``, ``greater_than``,
``independent``, ...) are the classes themselves, so that ``biject_to.register(constraints.interval)`` registers
a factory for every interval, and the singletons are instances of them (``positive`` is ``greater_than(0.0)``,
``nonnegative_integer`` is ``IntegerGreaterThan(lower_bound=0)``), so that a factory registered for a class
serves its singletons too."""

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


class _Bounded(Constraint):
    """The constraints with bounds (``lower_bound``/``upper_bound``), each directly a ``Constraint`` as torch's
    (``nonnegative`` is not a ``_GreaterThan``); this base only stores and shows the bounds, in torch's repr."""

    _bounds: tuple[str, ...] = ()
    lower_bound: Any
    upper_bound: Any

    def __init__(self, *bounds: Any) -> None:
        for name, value in zip(self._bounds, bounds, strict=True):
            setattr(self, name, value)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)}" for name in self._bounds)
        return f"{type(self).__name__[1:]}({shown})"


class _GreaterThan(_Bounded):
    _bounds = ("lower_bound",)

    def check(self, value: Tensor) -> Tensor:
        return value > self.lower_bound


class _GreaterThanEq(_Bounded):
    _bounds = ("lower_bound",)

    def check(self, value: Tensor) -> Tensor:
        return value >= self.lower_bound


class _LessThan(_Bounded):
    _bounds = ("upper_bound",)

    def check(self, value: Tensor) -> Tensor:
        return value < self.upper_bound


class _Interval(_Bounded):
    _bounds = ("lower_bound", "upper_bound")

    def check(self, value: Tensor) -> Tensor:
        return (value >= self.lower_bound) & (value <= self.upper_bound)


class _HalfOpenInterval(_Bounded):
    _bounds = ("lower_bound", "upper_bound")

    def check(self, value: Tensor) -> Tensor:
        return (value >= self.lower_bound) & (value < self.upper_bound)


class _IntegerInterval(_Bounded):
    _bounds = ("lower_bound", "upper_bound")
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value >= self.lower_bound) & (value <= self.upper_bound)


class _IntegerGreaterThan(_Bounded):
    _bounds = ("lower_bound",)
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value >= self.lower_bound)


class _IntegerLessThan(_Bounded):
    _bounds = ("upper_bound",)
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value <= self.upper_bound)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        return ((value == 0) | (value == 1)).all(-1) & (value.sum(-1) == 1)


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value == 0) | (value == 1)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        lower = (value.tril() == value).all(-1).all(-1)
        return lower & (value.diagonal(0, -2, -1) > 0).all(-1)


# the factories (torch's names for its classes)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
interval = _Interval
half_open_interval = _HalfOpenInterval
integer_interval = _IntegerInterval

real = _Real()
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
one_hot = _OneHot()
boolean = _Boolean()
simplex = _Simplex()
lower_cholesky = _LowerCholesky()
unit_interval = _Interval(0.0, 1.0)


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
        return f"{type(self).__name__[1:]}({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


independent = _IndependentConstraint
real_vector = _IndependentConstraint(real, 1)


class _Dependent(Constraint):
    """The support of a distribution whose support depends on its parameters (Uniform's [low, high)). Its
    ``is_discrete`` and ``event_dim`` are unknown unless given (torch's NotImplementedError), and calling it makes
    one with them given."""

    def __init__(self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented) -> None:
        self._is_discrete, self._event_dim = is_discrete, event_dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return bool(self._is_discrete)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return int(self._event_dim)

    def __call__(self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented) -> _Dependent:
        return _Dependent(is_discrete=self._is_discrete if is_discrete is NotImplemented else is_discrete,
                          event_dim=self._event_dim if event_dim is NotImplemented else event_dim)

    def check(self, value: Tensor) -> Tensor:
        raise ValueError("Cannot determine validity of dependent constraint")


dependent = _Dependent()


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


class _PositiveDefinite(_Symmetric):
    def check(self, value: Tensor) -> Tensor:
        from ..ops.linalg import linalg_cholesky_ex

        symmetric = super().check(value)
        if not bool(symmetric.all()):
            return symmetric
        return linalg_cholesky_ex(value).info == 0


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


lower_triangular = _LowerTriangular()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
multinomial = _Multinomial
cat = _Cat
stack = _Stack
