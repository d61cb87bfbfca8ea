"""Dim arguments: wrapping negative dims and checking them, as every op taking ``dim`` does."""

from __future__ import annotations

from collections.abc import Sequence

from .errors import RuleError


def as_int(value: object, name: str, op: str) -> int:
    """An int argument as torch's parser takes it: an int or anything with ``__index__`` (a NumPy integer),
    but not a bool or a float."""
    index = getattr(type(value), "__index__", None)
    if isinstance(value, bool) or index is None:
        raise RuleError("argument_error_type", op=op, name=name, position="", expected="int",
                        got=type(value).__name__)
    return int(index(value))


def wrap_dim(dim: int, rank: int, op: str, code: str = "dimension_error_out_of_range") -> int:
    """``dim`` in ``[-rank, rank)`` made non-negative. A 0-D tensor accepts dims -1 and 0, as in torch."""
    if type(dim) is not int:
        dim = as_int(dim, "dim", op)
    n = max(rank, 1)
    if not -n <= dim < n:
        raise RuleError(code, op=op, lo=-n, hi=n - 1, dim=dim)
    return dim + n if dim < 0 else dim


def wrap_dims(
    dims: Sequence[int], rank: int, op: str, code: str = "dimension_error_out_of_range"
) -> tuple[int, ...]:
    """Several dims, each wrapped; a repeated dim is an error, as in torch. As torch's parser, a bool is taken as
    an int in a list of dims but not first (by its first element it tells a list from one dim)."""
    out = tuple(wrap_dim(int(d) if i and type(d) is bool else d, rank, op, code) for i, d in enumerate(dims))
    seen: set[int] = set()
    for d in out:
        if d in seen:
            raise RuleError("dim_error_repeated", op=op, dim=d, dims=list(dims))
        seen.add(d)
    return out
