"""Broadcasting: the rule behind every elementwise op, ``broadcast_shapes`` and ``expand``."""

from __future__ import annotations

from collections.abc import Sequence

from .dims import UNKNOWN, Dim, Shape, Sym, differ
from .errors import RuleError


def broadcast_pair(a: Shape, b: Shape, op: str = "broadcast") -> Shape:
    """Right-align ``a`` and ``b``; each pair of sizes must be equal or contain a 1."""
    if a == b:
        return a
    n = max(len(a), len(b))
    pa = (1,) * (n - len(a)) + a
    pb = (1,) * (n - len(b)) + b
    out: list[Dim] = []
    for i, (x, y) in enumerate(zip(pa, pb)):
        out.append(_broadcast_dim(x, y, a, b, i - n, op))
    return tuple(out)


def _broadcast_dim(x: Dim, y: Dim, a: Shape, b: Shape, dim: int, op: str) -> Dim:
    if x == y or y == 1:
        return x
    if x == 1:
        return y
    if differ(x, y) and x != 0 and y != 0:
        raise RuleError("broadcast_error_incompatible_dimensions", op=op, a=a, b=b, da=x, db=y, dim=dim)
    if isinstance(x, int) and isinstance(y, int):  # one of them is 0 and the other is not 1
        raise RuleError("broadcast_error_incompatible_dimensions", op=op, a=a, b=b, da=x, db=y, dim=dim)
    # Undecidable (an unknown, or an int against a symbol): prefer the more informative size.
    if x is UNKNOWN:
        return y
    if isinstance(x, Sym) and isinstance(y, int):
        return y
    return x


def broadcast_shapes(*shapes: Shape, op: str = "broadcast_shapes") -> Shape:
    out: Shape = ()
    for s in shapes:
        out = broadcast_pair(out, s, op)
    return out


def expand_shape(shape: Shape, sizes: Sequence[Dim], op: str = "expand") -> Shape:
    """``x.expand(*sizes)``: new leading dims allowed, -1 keeps a size, only 1s stretch."""
    sizes = tuple(sizes)
    if len(sizes) < len(shape):
        raise RuleError(
            "expand_error_incompatible", op=op, shape=shape, sizes=sizes,
            problem=f"the number of sizes provided ({len(sizes)}) must be greater or equal to the "
            f"number of dimensions in the tensor ({len(shape)})",
        )
    lead = len(sizes) - len(shape)
    out: list[Dim] = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s == -1:
                raise RuleError(
                    "expand_error_incompatible", op=op, shape=shape, sizes=sizes,
                    problem=f"-1 is not allowed in a leading, non-existing dimension ({i})",
                )
            out.append(s)
            continue
        cur = shape[i - lead]
        if s == -1 or s == cur:
            out.append(cur)
        elif cur == 1:
            out.append(s)
        elif differ(cur, s) or (isinstance(s, int) and s < 0):
            raise RuleError(
                "expand_error_incompatible", op=op, shape=shape, sizes=sizes,
                problem=f"the expanded size ({s}) must match the existing size ({cur}) at non-singleton "
                f"dimension {i}",
            )
        else:
            out.append(s if s is not UNKNOWN else cur)
    for s in out:
        if isinstance(s, int) and s < 0:
            raise RuleError("expand_error_incompatible", op=op, shape=shape, sizes=sizes,
                            problem=f"invalid size {s}")
    return tuple(out)
