"""``biject_to(constraint)`` and ``transform_to(constraint)``: a transform from unconstrained reals onto the
constraint's set. ``biject_to``'s are bijections (for reparameterising a parameter, or a
:class:`TransformedDistribution`); ``transform_to``'s need only be onto (softmax for the simplex, ``L L^T`` for
positive definite matrices), as torch's registries. Both look the factory up by the constraint's type."""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

from . import constraints as C
from . import transforms as T

Factory = Callable[[Any], T.Transform]


class ConstraintRegistry:
    def __init__(self) -> None:
        self._registry: dict[type, Factory] = {}

    def register(self, constraint: Any, factory: Factory | None = None) -> Any:
        """Register ``factory`` for a constraint type (an instance stands for its type); without a factory, a
        decorator."""
        if factory is None:
            return lambda f: self.register(constraint, f)
        if isinstance(constraint, C.Constraint):
            constraint = type(constraint)
        if not (isinstance(constraint, type) and issubclass(constraint, C.Constraint)):
            raise TypeError(f"Expected constraint to be either a Constraint subclass or instance, but got "
                            f"{constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint: C.Constraint) -> T.Transform:
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _exp_shift(lower: Any) -> T.Transform:
    return T.ComposeTransform([T.ExpTransform(), T.AffineTransform(lower, 1)])


def _both(constraint: Any, factory: Factory) -> None:
    biject_to.register(constraint, factory)
    transform_to.register(constraint, factory)


_both(C.real, lambda c: T.identity_transform)
biject_to.register(C._IndependentConstraint,
                   lambda c: T.IndependentTransform(biject_to(c.base_constraint), c.reinterpreted_batch_ndims))
transform_to.register(C._IndependentConstraint,
                      lambda c: T.IndependentTransform(transform_to(c.base_constraint), c.reinterpreted_batch_ndims))
# (positive and nonnegative are greater_than(0.0) and greater_than_eq(0.0): they get this exp-then-shift, the
# shift by 0 included, as torch's, whose later registration of these classes replaces its ExpTransform entry)
_both(C._GreaterThan, lambda c: _exp_shift(c.lower_bound))
_both(C._GreaterThanEq, lambda c: _exp_shift(c.lower_bound))
_both(C._LessThan, lambda c: T.ComposeTransform([T.ExpTransform(), T.AffineTransform(c.upper_bound, -1)]))


def _to_interval(c: Any) -> T.Transform:
    lower, upper = c.lower_bound, c.upper_bound
    plain = isinstance(lower, numbers.Number) and isinstance(upper, numbers.Number)
    if plain and lower == 0 and upper == 1:  # the unit interval needs no affine step (as torch)
        return T.SigmoidTransform()
    return T.ComposeTransform([T.SigmoidTransform(), T.AffineTransform(lower, upper - lower)])


_both(C._Interval, _to_interval)
_both(C._HalfOpenInterval, _to_interval)
biject_to.register(C.simplex, lambda c: T.StickBreakingTransform())
transform_to.register(C.simplex, lambda c: T.SoftmaxTransform())
transform_to.register(C.lower_cholesky, lambda c: T.LowerCholeskyTransform())
transform_to.register(C.positive_definite, lambda c: T.PositiveDefiniteTransform())
transform_to.register(C.positive_semidefinite, lambda c: T.PositiveDefiniteTransform())
_both(C.corr_cholesky, lambda c: T.CorrCholeskyTransform())
biject_to.register(C._Cat, lambda c: T.CatTransform([biject_to(x) for x in c.cseq], c.dim, c.lengths))
transform_to.register(C._Cat, lambda c: T.CatTransform([transform_to(x) for x in c.cseq], c.dim, c.lengths))
biject_to.register(C._Stack, lambda c: T.StackTransform([biject_to(x) for x in c.cseq], c.dim))
transform_to.register(C._Stack, lambda c: T.StackTransform([transform_to(x) for x in c.cseq], c.dim))
