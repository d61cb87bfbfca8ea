"""In-place results: ``x += y``, ``x.add_(y)`` must keep ``x``'s shape (a broadcast may not grow it).

Standard library only. The runtime's ``write_inplace`` and the mypy plugin both call this rule.
"""

from __future__ import annotations

from .dims import Shape, differ
from .errors import RuleError


def inplace_shape(self_shape: Shape, result_shape: Shape, op: str = "add_") -> Shape:
    """``self_shape`` when the out-of-place result fits it; a proven change of shape is an error."""
    if len(self_shape) != len(result_shape) or any(differ(a, b) for a, b in zip(self_shape, result_shape)):
        raise RuleError("inplace_error_shape_change", op=op, shape=tuple(self_shape), result=tuple(result_shape))
    return self_shape
