"""Constraints and reprs of torch.distributions as torch's: the parametrised constraints are classes (so a factory
registered for ``constraints.interval`` serves every interval), the singletons are instances of them, the
reprs of constraints, distributions and transforms are torch's (the ``Size`` class path aside), and
``dependent``'s unknown attributes raise as torch's."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import shapetorch as st

_CONSTRAINTS = ["real", "positive", "nonnegative", "nonnegative_integer", "positive_integer", "boolean", "one_hot",
                "simplex", "real_vector", "positive_definite", "positive_semidefinite", "lower_cholesky",
                "lower_triangular", "corr_cholesky", "unit_interval", "square", "symmetric", "dependent"]
_FACTORIES = [("interval", (0.0, 2.0)), ("half_open_interval", (0.0, 1.5)), ("integer_interval", (0, 3)),
              ("greater_than", (2.0,)), ("greater_than_eq", (1.0,)), ("less_than", (-1.0,)), ("multinomial", (4,))]


@pytest.mark.parametrize("name", _CONSTRAINTS)
def test_singleton_constraints_as_torch(name: str) -> None:
    ours, theirs = getattr(st.distributions.constraints, name), getattr(torch.distributions.constraints, name)
    assert repr(ours) == repr(theirs)
    assert type(ours).__name__ == type(theirs).__name__
    for attr in ("is_discrete", "event_dim"):
        try:
            want = getattr(theirs, attr)
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                getattr(ours, attr)
            continue
        assert getattr(ours, attr) == want, attr


@pytest.mark.parametrize("name,args", _FACTORIES)
def test_constraint_factories_are_classes_as_torch(name: str, args: tuple[Any, ...]) -> None:
    C, TC = st.distributions.constraints, torch.distributions.constraints
    assert isinstance(getattr(C, name), type) == isinstance(getattr(TC, name), type)
    ours, theirs = getattr(C, name)(*args), getattr(TC, name)(*args)
    assert isinstance(ours, getattr(C, name))
    assert repr(ours) == repr(theirs)
    assert ours.is_discrete == theirs.is_discrete and ours.event_dim == theirs.event_dim
    # a value on each side of the bounds
    for v in (-1.5, -1.0, 0.0, 1.0, 1.5, 2.0, 3.0, 4.5):
        vt = torch.tensor([v, v]) if name == "multinomial" else torch.tensor(v)
        assert bool(ours.check(st.tensor(vt.numpy()))) == bool(theirs.check(vt)), v


def test_singletons_are_instances_of_the_factories_as_torch() -> None:
    C, TC = st.distributions.constraints, torch.distributions.constraints
    pairs = [("positive", "greater_than"), ("nonnegative", "greater_than_eq"), ("nonnegative", "greater_than"),
             ("unit_interval", "interval"), ("real_vector", "independent"), ("positive_integer", "greater_than")]
    for single, factory in pairs:
        assert isinstance(getattr(C, single), getattr(C, factory)) == isinstance(getattr(TC, single),
                                                                                 getattr(TC, factory)), single


@pytest.mark.parametrize("which", ["biject_to", "transform_to"])
def test_register_a_factory_class_as_torch(which: str) -> None:
    """``register(constraints.interval)`` (the class) replaces the entry of every interval; ``positive`` (an
    instance) stands for its class, greater_than."""
    def run(lib: Any) -> list[Any]:
        D = lib.distributions
        registry = getattr(D, which)
        saved = dict(registry._registry)
        try:
            @registry.register(D.constraints.interval)
            def _affine(c: Any) -> Any:
                return D.transforms.AffineTransform(c.lower_bound, c.upper_bound - c.lower_bound)

            registry.register(D.constraints.positive, lambda c: D.transforms.ExpTransform())
            t = registry(D.constraints.interval(0.0, 2.0))
            u = registry(D.constraints.unit_interval)
            g = registry(D.constraints.greater_than(3.0))
            with pytest.raises(TypeError):
                registry.register(lambda c: c, lambda c: c)
            return [type(t).__name__, float(t(lib.tensor(0.25))), type(u).__name__, type(g).__name__]
        finally:
            registry._registry.clear()
            registry._registry.update(saved)

    assert run(st) == run(torch)


def _dists(lib: Any) -> list[Any]:
    D = lib.distributions
    return [D.Normal(lib.tensor([0.5, 1.0]), lib.tensor([2.0, 1.0])), D.Normal(0.0, 1.0),
            D.Categorical(probs=lib.tensor([0.2, 0.8])), D.Bernoulli(logits=lib.tensor(0.3)),
            D.MultivariateNormal(lib.zeros(2), lib.eye(2)), D.Uniform(0.0, 1.0),
            D.Independent(D.Normal(lib.zeros(2), lib.ones(2)), 1),
            D.MixtureSameFamily(D.Categorical(logits=lib.zeros(2)), D.Normal(lib.zeros(2), lib.ones(2))),
            D.TransformedDistribution(D.Normal(0.0, 1.0), [D.transforms.ExpTransform()])]


def test_distribution_reprs_as_torch() -> None:
    for ours, theirs in zip(_dists(st), _dists(torch), strict=True):
        assert repr(ours).replace("shapetorch.Size", "torch.Size") == repr(theirs)


def test_transform_reprs_as_torch() -> None:
    def make(lib: Any) -> list[Any]:
        T, C = lib.distributions.transforms, lib.distributions.constraints
        return [T.ExpTransform(), T.AffineTransform(0.0, 1.0), T.ComposeTransform([T.ExpTransform(),
                T.SigmoidTransform()]), T.IndependentTransform(T.ExpTransform(), 1),
                lib.distributions.biject_to(C.simplex), lib.distributions.biject_to(C.interval(0.0, 2.0))]
    for ours, theirs in zip(make(st), make(torch), strict=True):
        assert repr(ours) == repr(theirs)
