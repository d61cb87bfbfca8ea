"""Factories: the sizes of a new tensor and the length of ``arange``; the result shape is the arguments."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .dims import Dim, Shape
from .errors import RuleError, invalid_argument


def new_shape(sizes: Sequence[Dim], op: str = "zeros") -> Shape:
    """``zeros(2, 3)``, ``rand((2, 3))``, ``full(size, v)``: the sizes themselves, none negative."""
    for s in sizes:
        if isinstance(s, int) and s < 0:
            raise RuleError("reshape_error_invalid_size", op=op, size=s, sizes=list(sizes))
    return tuple(sizes)


def arange_length(start: float, end: float, step: float, op: str = "arange") -> int:
    """The number of elements of ``arange(start, end, step)``; the step must be non-zero and point from start to end."""
    if not all(math.isfinite(v) for v in (start, end, step)):
        raise invalid_argument(op, f"unsupported range: {start} -> {end} (step {step})")
    if step == 0:
        raise invalid_argument(op, "step must be nonzero")
    if (end - start) * step < 0:
        raise invalid_argument(op, f"upper bound and lower bound inconsistent with step sign (start {start}, end {end}, "
                                   f"step {step})")
    return math.ceil((end - start) / step)
