"""Named dims of a signature bound per call: a helper typed ``(q: Tensor[tuple[B, P, D], ...], k: Tensor[tuple[B, P, D],
...])`` takes, at each call, one size for ``B``, one for ``P``, one for ``D``. Static only (the runtime has no
signatures to bind), but a rule like the others: pure, gradual, and its verdict is a catalogue error.
"""

from __future__ import annotations

from collections.abc import Sequence

from .dims import UNKNOWN, Dim, Shape, differ, same
from .errors import RuleError


def bind_dims(params: Sequence[tuple[str, Sequence[str | None], Shape]], op: str = "call") -> tuple[dict[str, Dim], set[str]]:
    """(the size each dim name is bound to, the names bound to sizes that cannot be compared).

    ``params``: for each tensor parameter, its name, the dim name at each position (None where the signature
    writes a literal or ``Any``) and the argument's shape. Two literals that differ, or two different named
    dims, bound to one name are a proven conflict and raise ``call_error_dim_conflict``; a literal against a
    named dim is undecidable, so the name is returned among the undecided (the call is accepted there)."""
    bound: dict[str, tuple[Dim, str, Shape]] = {}
    undecided: set[str] = set()
    for param, names, shape in params:
        for name, d in zip(names, shape):
            if name is None or d is UNKNOWN:
                continue
            if name not in bound:
                bound[name] = (d, param, shape)
                continue
            first, first_param, first_shape = bound[name]
            if differ(first, d):
                raise RuleError("call_error_dim_conflict", op=op, name=name, a=first, param_a=first_param,
                                shape_a=first_shape, b=d, param_b=param, shape_b=shape)
            if same(first, d) is None:
                undecided.add(name)
    return {k: v[0] for k, v in bound.items()}, undecided
