"""Scans and differences: cumsum/cumprod/cummax/cummin/logcumsumexp, diff, trapezoid."""

from __future__ import annotations

from .axes import wrap_dim
from .dims import UNKNOWN, Dim, Shape, differ
from .errors import RuleError, invalid_argument


def cum_shape(shape: Shape, dim: int, op: str = "cumsum") -> Shape:
    """CumShape (cumsum, cumprod, cummax, cummin, logcumsumexp) and sort/argsort: same shape, dim checked."""
    wrap_dim(dim, len(shape), op)
    return shape


def cum_extreme_shape(shape: Shape, dim: int, op: str = "cummax") -> Shape:
    """cummax/cummin: as :func:`cum_shape`, except that torch checks no dim of an empty input."""
    if any(s == 0 for s in shape):
        return shape
    return cum_shape(shape, dim, op)


def diff_shape(shape: Shape, n: int = 1, dim: int = -1, prepend: Shape | None = None, append: Shape | None = None,
               op: str = "diff") -> Shape:
    """Size at ``dim``: ``size + len(prepend) + len(append) - n`` (at least 0); the input must be at least 1-D."""
    if not shape:
        raise RuleError("dimension_error_zero_dim", op=op)
    if n < 0:
        raise invalid_argument(op, f"order must be non-negative but got {n}")
    if n == 0 and prepend is None and append is None:  # torch returns the input before looking at dim
        return shape
    d = wrap_dim(dim, len(shape), op)
    size = shape[d]
    for extra in (prepend, append):
        if extra is None:
            continue
        if len(extra) != len(shape):
            raise invalid_argument(op, "diff expects prepend or append to be the same dimension as input")
        for i, (a, b) in enumerate(zip(shape, extra)):
            if i != d and differ(a, b):
                raise RuleError("cat_error_size_mismatch", op=op, dim=d, da=a, db=b, i=1, at=i, a=shape, b=extra)
        more = extra[d]
        size = size + more if isinstance(size, int) and isinstance(more, int) else UNKNOWN
    new: Dim = max(size - n, 0) if isinstance(size, int) else UNKNOWN
    return tuple(new if i == d else s for i, s in enumerate(shape))


def trapezoid_shape(y: Shape, x: Shape | None = None, dim: int = -1, cumulative: bool = False,
                    op: str = "trapezoid") -> Shape:
    """trapezoid reduces ``dim``; cumulative_trapezoid shortens it by one. A 1-D ``x`` must match ``dim``."""
    if not y:
        raise RuleError("dimension_error_zero_dim", op=op)
    d = wrap_dim(dim, len(y), op)
    if x is not None:
        if len(x) == 1:
            if differ(x[0], y[d]):
                raise invalid_argument(op, f"there must be one `x` value for each sample point; got {x[0]} and {y[d]}")
        elif len(x) != len(y) and len(x) != 0:
            raise invalid_argument(op, f"x of shape {tuple(x)} does not fit y of shape {tuple(y)}")
    if not cumulative:
        return tuple(s for i, s in enumerate(y) if i != d)
    size = y[d]
    return tuple((max(size - 1, 0) if isinstance(size, int) else UNKNOWN) if i == d else s for i, s in enumerate(y))
