"""The exceptions users see. Each carries a catalogue code (``err.code``).

Rules raise :class:`~shapetorch._rules.errors.RuleError`; the public function that called the rule
turns it into one of these (``raise_from_rule``), so a user never sees a NumPy traceback.
"""

from __future__ import annotations

from typing import NoReturn

from ._rules.errors import RuleError


class ShapetorchError(Exception):
    """Base of every shapetorch error; ``code`` is the catalogue code."""

    code: str

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


class ShapeError(ShapetorchError, RuntimeError):
    """Shapes, equations and patterns that do not fit."""


class DimensionError(ShapeError, IndexError):
    """A dim or an index out of range."""


class DTypeError(ShapetorchError, RuntimeError, TypeError):
    """A dtype an op does not support, or a promotion an in-place op cannot hold. torch raises a
    ``RuntimeError`` for most of these and a ``TypeError`` for some, so either ``except`` catches it."""


class ArgumentError(ShapetorchError, ValueError):
    """A value torch rejects with ``ValueError`` (a many-element tensor given to ``float()``, ...)."""


class DeviceError(ShapetorchError, RuntimeError):
    """An unknown device, mixed devices, or a device that is not available."""


class AutogradError(ShapetorchError, RuntimeError):
    """Backward through something that cannot be differentiated, or a wrong custom gradient."""


class RegistryError(ShapetorchError, RuntimeError):
    """The registration API: unknown or duplicate ops, kernels, dtypes and devices."""


for _cls in (ShapetorchError, ShapeError, DimensionError, DTypeError, ArgumentError, DeviceError, AutogradError, RegistryError):
    _cls.__module__ = "shapetorch"

_BY_KIND: dict[str, type[ShapetorchError]] = {
    "shape": ShapeError,
    "index": DimensionError,
    "dtype": DTypeError,
    "value": ArgumentError,
    "device": DeviceError,
    "autograd": AutogradError,
    "registry": RegistryError,
}


def from_rule(err: RuleError, context: str = "") -> ShapetorchError:
    message = err.message + (f"\n{context}" if context else "")
    return _BY_KIND[err.kind](message, err.code)


def raise_from_rule(err: RuleError, context: str = "") -> NoReturn:
    raise from_rule(err, context) from None


def fail(code: str, **values: object) -> NoReturn:
    """Raise the user-facing error for a catalogue code (for checks that need values, not just shapes)."""
    raise_from_rule(RuleError(code, **values))
