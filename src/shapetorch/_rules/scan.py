"""Scans and differences: cumsum/cumprod/cummax/cummin/logcumsumexp, diff, gradient, trapezoid."""

from __future__ import annotations

from collections.abc import Sequence

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


def gradient_dims(ndim: int, dim: int | Sequence[int] | None, edge_order: int = 1, op: str = "gradient") -> list[int]:
    """``torch.gradient``'s dims, wrapped: every dim when ``dim`` is None; ``edge_order`` 1 or 2, no dim twice."""
    if edge_order not in (1, 2):
        raise invalid_argument(op, "torch.gradient only supports edge_order=1 and edge_order=2.")
    if dim is not None and not ndim and (isinstance(dim, int) or len(dim)):
        raise RuleError("dimension_error_zero_dim", op=op)  # (torch's IndexError: no dim to name on a 0-d input)
    dims = list(range(ndim)) if dim is None else [wrap_dim(d, ndim, op) for d in ([dim] if isinstance(dim, int)
                                                                                   else dim)]
    if len(set(dims)) != len(dims):
        raise invalid_argument(op, f"dim {dims[0]} appears multiple times in the list of dims")
    return dims


def gradient_shapes(shape: Shape, dim: int | Sequence[int] | None, edge_order: int = 1,
                    op: str = "gradient") -> tuple[Shape, ...]:
    """``torch.gradient``: one input-shaped estimate per dim (:func:`gradient_dims`), each of which must hold at
    least ``edge_order + 1`` elements."""
    dims = gradient_dims(len(shape), dim, edge_order, op)
    for d in dims:
        size = shape[d]
        if type(size) is int and size < edge_order + 1:
            raise invalid_argument(op, "torch.gradient expected each dimension size to be at least edge_order+1")
    return tuple(shape for _ in dims)


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
