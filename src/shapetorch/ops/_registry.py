"""The table of public ops. A function registered here is also the Tensor method of the same name.

``FUNCTIONS`` feeds ``list_ops``/``get_op_info`` and the exhaustiveness tests; the Tensor methods
and dunders are set from it, so no op is written twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from .._tensor import Tensor
from ._rule_results import ENABLED as CHECK_RULES
from ._rule_results import checked

F = TypeVar("F", bound=Callable[..., Any])

FUNCTIONS: dict[str, Callable[..., Any]] = {}
METHODS: dict[str, Callable[..., Any]] = {}
CATEGORY: dict[str, str] = {}


def public(category: str, *, method: bool | str = True, function: bool = True, aliases: tuple[str, ...] = ()) -> Callable[[F], F]:
    """Register ``fn`` as ``shapetorch.<name>`` (if ``function``) and ``Tensor.<name>`` (if ``method``)."""

    def register(fn: F) -> F:
        name = fn.__name__.rstrip("_") if fn.__name__.endswith("__") else fn.__name__
        if CHECK_RULES:
            fn = checked(name, fn)  # type: ignore[assignment]
        for n in (name, *aliases):
            CATEGORY[n] = category
            if function:
                FUNCTIONS[n] = fn
            if method:
                mname = method if isinstance(method, str) else n
                METHODS[mname] = fn
                setattr(Tensor, mname, fn)
        return fn

    return register


def method(name: str, fn: Callable[..., Any]) -> None:
    """A Tensor-only method or dunder (``__add__``, ``add_``, ``view``)."""
    METHODS[name] = fn
    setattr(Tensor, name, fn)
