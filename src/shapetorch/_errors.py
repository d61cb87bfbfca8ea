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


class ShapeValueError(ShapeError, ValueError):
    """A shape torch's Python checks refuse with ``ValueError`` (a loss target of another size than its input:
    "Using a target size ... that is different to the input size"); a ``ShapeError`` (a ``RuntimeError``) as
    the other shape errors, so code written for either class catches it."""


class LinAlgError(ShapeError):
    """A matrix a factorization or solver cannot handle (singular, not positive-definite): torch's
    ``torch.linalg.LinAlgError``, a ``RuntimeError``; a ``ShapeError`` too, as these were before it existed."""


class DimensionError(ShapeError, IndexError):
    """A dim or an index out of range."""


class ShapeNotSupportedError(ShapeError, NotImplementedError):
    """A rank an op has no kernel for (``interpolate`` of a 2-D input, reflect padding of a 5-D one): torch's
    ``NotImplementedError`` (and so a ``RuntimeError``), a ``ShapeError`` as the other rank errors."""


class DTypeError(ShapetorchError, RuntimeError):
    """A promotion an in-place op cannot hold, operands of different dtypes where an op needs one. A
    ``RuntimeError``, as torch's "result type Float can't be cast to ..." and "expected scalar type ..."."""


class DTypeNotSupportedError(DTypeError, NotImplementedError):
    """An op with no kernel for a dtype: torch's ``"... not implemented for 'Bool'"``, a ``NotImplementedError``
    (and so a ``RuntimeError``)."""


class ArgumentValueError(ShapetorchError, ValueError):
    """A value torch rejects with ``ValueError`` (a many-element tensor given to ``float()``, ...)."""


class DeviceError(ShapetorchError, RuntimeError):
    """An unknown device, mixed devices, or a device that is not available."""


class AutogradError(ShapetorchError, RuntimeError):
    """Backward through something that cannot be differentiated, or a wrong custom gradient."""


class AutogradNotImplementedError(AutogradError, NotImplementedError):
    """Backward needs a derivative torch does not implement ("the derivative for 'igamma: input' is not
    implemented"): a ``NotImplementedError``, as torch's, and an ``AutogradError``."""


class RegistryError(ShapetorchError, RuntimeError):
    """The registration API: unknown or duplicate ops, kernels, dtypes and devices."""


class ArgumentError(ShapetorchError, TypeError):
    """A call torch's argument parser refuses: a wrong type (a str for a tensor, a float or bool for an int),
    an unknown keyword, too many or too few arguments. A ``TypeError``, as in torch."""


class AllocationError(ShapetorchError, RuntimeError, MemoryError):
    """A tensor the machine cannot hold: a ``RuntimeError``, as torch's allocator failure, and a ``MemoryError``."""


for _cls in (ShapetorchError, ShapeError, ShapeNotSupportedError, ShapeValueError, LinAlgError, DimensionError, DTypeError, DTypeNotSupportedError, DeviceError,
             AutogradError, AutogradNotImplementedError, RegistryError, ArgumentError, ArgumentValueError, AllocationError):
    _cls.__module__ = "shapetorch"

_BY_KIND: dict[str, type[ShapetorchError]] = {
    "shape": ShapeError,
    "shape_unsupported": ShapeNotSupportedError,
    "shape_value": ShapeValueError,
    "linalg": LinAlgError,
    "index": DimensionError,
    "dtype": DTypeError,
    "dtype_unsupported": DTypeNotSupportedError,
    "value": ArgumentValueError,
    "device": DeviceError,
    "autograd": AutogradError,
    "autograd_unsupported": AutogradNotImplementedError,
    "registry": RegistryError,
    "argument": ArgumentError,
    "memory": AllocationError,
}


def from_rule(err: RuleError, context: str = "") -> ShapetorchError:
    message = err.message + (f"\n{context}" if context else "")
    return _BY_KIND[err.kind](message, err.code)


def raise_from_rule(err: RuleError, context: str = "") -> NoReturn:
    raise from_rule(err, context) from None


def fail(code: str, **values: object) -> NoReturn:
    """Raise the user-facing error for a catalogue code (for checks that need values, not just shapes)."""
    raise_from_rule(RuleError(code, **values))
