"""The ``Distribution`` base: shapes, sampling by ``rsample``, validation of parameters and values."""

from __future__ import annotations

from typing import Any, ClassVar

from .._tensor import Size, Tensor
from . import constraints as C

_VALIDATE = [True]  # torch validates arguments by default (outside -O)


class Distribution:
    has_rsample = False
    has_enumerate_support = False
    arg_constraints: ClassVar[dict[str, C.Constraint]] = {}
    support: Any = None

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        _VALIDATE[0] = bool(value)

    def __init__(self, batch_shape: Any = (), event_shape: Any = (), validate_args: bool | None = None) -> None:
        self._batch_shape = Size(tuple(batch_shape))
        self._event_shape = Size(tuple(event_shape))
        self._validate_args = _VALIDATE[0] if validate_args is None else validate_args
        if self._validate_args:
            for name, constraint in self.arg_constraints.items():
                if name not in self.__dict__:
                    continue  # a parameter derived from the one given (probs from logits): checked through that one
                value = getattr(self, name)
                if not isinstance(value, Tensor):
                    continue
                if not bool(constraint.check(value).all()):
                    raise ValueError(f"Expected parameter {name} ({type(value).__name__} of shape "
                                     f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                                     f"{constraint!r}, but found invalid values:\n{value}")

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    def _extended_shape(self, sample_shape: Any = ()) -> tuple[int, ...]:
        return tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        from ..autograd import no_grad

        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no reparameterized sampler (has_rsample is False)")

    def sample_n(self, n: int) -> Tensor:
        return self.sample((n,))

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        """The same distribution over a larger batch: each parameter (a tensor attribute whose leading dims are the
        batch dims) expanded, not copied, as torch's ``expand``; derived state (``_``-prefixed) broadcasts as is."""
        batch = Size(tuple(batch_shape))
        new = _instance if _instance is not None else type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        old = len(self._batch_shape)
        for name, value in self.__dict__.items():
            if not name.startswith("_") and isinstance(value, Tensor):
                new.__dict__[name] = value.expand(*batch, *value.shape[old:])
        new._batch_shape = batch
        return new

    def perplexity(self) -> Tensor:
        out: Tensor = self.entropy().exp()
        return out

    def entropy(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy")

    @property
    def stddev(self) -> Tensor:
        out: Tensor = self.variance.sqrt()
        return out

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement mean")

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement variance")

    def _validate_sample(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        support = self.support
        if support is None or support is C.dependent:
            return
        if not bool(support.check(value).all()):
            raise ValueError("Expected value argument "
                             f"({type(value).__name__} of shape {tuple(value.shape)}) to be within the support "
                             f"({support!r}) of the distribution {self!r}, but found invalid values:\n{value}")

    def __repr__(self) -> str:
        # torch's: each parameter set on the instance, as its value when it has one element, else as its size
        shown = [(k, self.__dict__[k]) for k in self.arg_constraints if k in self.__dict__]
        params = ", ".join(f"{k}: {v if v.numel() == 1 else v.size()}" for k, v in shown)
        return f"{type(self).__name__}({params})"
