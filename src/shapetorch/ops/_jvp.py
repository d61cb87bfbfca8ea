"""Forward-mode rule helpers for the elementwise primitives (unary, arithmetic, special, complex): the
jvp_rules pattern, kept beside the ops. A real elementwise primitive has a diagonal Jacobian, so its tangent
is its vjp applied to the input tangents; complex and linear primitives get rules of their own in their modules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._engine.primitives import PRIMS

Rule = Callable[[tuple[Any, ...], Any], Any]


def via_vjp(*names: str) -> None:
    """Give each named (real, elementwise) primitive the jvp ``sum_i vjp_i(tangent_i)``."""
    for name in names:
        vjp = PRIMS[name].vjp
        assert vjp is not None

        def rule(ts: tuple[Any, ...], n: Any, vjp: Any = vjp) -> Any:
            total = None
            for i, t in enumerate(ts):
                if t is not None:
                    part = vjp(t, n)[i]
                    total = part if total is None else total + part
            return total

        PRIMS[name].jvp = rule


def unary(fn: Callable[[Any, Any], Any]) -> Rule:
    return lambda ts, n: None if ts[0] is None else fn(ts[0], n)
