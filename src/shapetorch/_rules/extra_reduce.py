"""Shapes of scans, sorts and selections, quantiles, diffs, histograms and unique-like ops.

Standard library only. Sizes that depend on the data (``unique``, ``bincount``) are :data:`UNKNOWN`.
Dims are validated with ``dimension_error_out_of_range``; an argument outside what torch accepts
(``k`` of topk, ``n`` of diff, ``q`` of quantile, ...) is ``argument_error_invalid``.
"""

from __future__ import annotations

from collections.abc import Sequence

from .axes import wrap_dim
from .dims import UNKNOWN, Dim, Shape, differ, dim_mul
from .errors import RuleError
from .reduce import reduce_shape


def _bad(op: str, problem: str) -> RuleError:
    return RuleError("argument_error_invalid", op=op, problem=problem)


def cum_shape(shape: Shape, dim: int, op: str = "cumsum") -> Shape:
    """CumShape (cumsum, cumprod, cummax, cummin, logcumsumexp) and sort/argsort: same shape, dim checked."""
    wrap_dim(dim, len(shape), op)
    return shape


def topk_shape(shape: Shape, k: int, dim: int = -1, op: str = "topk") -> Shape:
    """The size at ``dim`` becomes ``k``; ``0 <= k <= size`` (a 0-d tensor has size 1)."""
    d = wrap_dim(dim, len(shape), op)
    size = shape[d] if shape else 1
    if k < 0 or (isinstance(size, int) and k > size):
        raise _bad(op, f"selected index k out of range (k={k}, size {size} at dimension {d})")
    return tuple(k if i == d else s for i, s in enumerate(shape))


def kthvalue_shape(shape: Shape, k: int, dim: int = -1, keepdim: bool = False, op: str = "kthvalue") -> Shape:
    """One dim reduced; ``1 <= k <= size``."""
    d = wrap_dim(dim, len(shape), op)
    size = shape[d] if shape else 1
    if size == 0:
        raise RuleError("reduction_error_empty_input", op=op, shape=shape)
    if k < 1 or (isinstance(size, int) and k > size):
        raise _bad(op, f"selected number k out of range for dimension {d} (k={k}, size {size})")
    return reduce_shape(shape, d, keepdim, op) if shape else ()


def select_reduce_shape(shape: Shape, dim: int, keepdim: bool = False, op: str = "median") -> Shape:
    """median/mode/nanmedian with a dim: one dim reduced; the dim must not be empty."""
    d = wrap_dim(dim, len(shape), op)
    if shape and shape[d] == 0:
        raise RuleError("reduction_error_empty_input", op=op, shape=shape)
    return reduce_shape(shape, d, keepdim, op) if shape else ()


def quantile_shape(shape: Shape, q_shape: Shape, dim: int | None = None, keepdim: bool = False,
                   op: str = "quantile") -> Shape:
    """``q``'s dim (if 1-D) first, then the reduced input shape (all dims when ``dim`` is None)."""
    if len(q_shape) > 1:
        raise _bad(op, f"quantile() q must be a scalar or 1D tensor, got shape {tuple(q_shape)}")
    if dim is None:
        out: Shape = (1,) * len(shape) if keepdim else ()
    else:
        d = wrap_dim(dim, len(shape), op)
        out = reduce_shape(shape, d, keepdim, op) if shape else ()
    return tuple(q_shape) + out


def diff_shape(shape: Shape, n: int = 1, dim: int = -1, prepend: Shape | None = None, append: Shape | None = None,
               op: str = "diff") -> Shape:
    """Size at ``dim``: ``size + len(prepend) + len(append) - n`` (at least 0); the input must be at least 1-D."""
    if not shape:
        raise RuleError("dimension_error_zero_dim", op=op)
    if n < 0:
        raise _bad(op, f"order must be non-negative but got {n}")
    if n == 0 and prepend is None and append is None:  # torch returns the input before looking at dim
        return shape
    d = wrap_dim(dim, len(shape), op)
    size = shape[d]
    for extra in (prepend, append):
        if extra is None:
            continue
        if len(extra) != len(shape):
            raise _bad(op, "diff expects prepend or append to be the same dimension as input")
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
                raise _bad(op, f"there must be one `x` value for each sample point; got {x[0]} and {y[d]}")
        elif len(x) != len(y) and len(x) != 0:
            raise _bad(op, f"x of shape {tuple(x)} does not fit y of shape {tuple(y)}")
    if not cumulative:
        return tuple(s for i, s in enumerate(y) if i != d)
    size = y[d]
    return tuple((max(size - 1, 0) if isinstance(size, int) else UNKNOWN) if i == d else s for i, s in enumerate(y))


def searchsorted_shape(seq: Shape, values: Shape, op: str = "searchsorted") -> Shape:
    """``seq`` 1-D, or its leading dims equal to those of ``values``; the output has the shape of ``values``."""
    if len(seq) == 0:
        raise _bad(op, "boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor "
                       "and input value tensor must match, but we got a 0-d boundaries tensor")
    if len(seq) > 1 and (len(seq) != len(values) or any(differ(a, b) for a, b in zip(seq[:-1], values[:-1]))):
        raise _bad(op, "boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor and "
                       f"input value tensor must match, but we got boundaries tensor {tuple(seq)} and input value "
                       f"tensor {tuple(values)}")
    return values


def bucketize_shape(input: Shape, boundaries: Shape, op: str = "bucketize") -> Shape:
    if len(boundaries) != 1:
        raise _bad(op, f"boundaries tensor must be 1 dimension, but got dim({len(boundaries)})")
    return input


def unique_shapes(shape: Shape, dim: int | None = None, op: str = "unique") -> tuple[Shape, Shape, Shape]:
    """(output, inverse, counts): the number of unique elements (or slices) is known only at run time."""
    if dim is None:
        return (UNKNOWN,), shape, (UNKNOWN,)
    d = wrap_dim(dim, len(shape), op)
    if not shape:
        return (UNKNOWN,), shape, (UNKNOWN,)
    return tuple(UNKNOWN if i == d else s for i, s in enumerate(shape)), (shape[d],), (UNKNOWN,)


def bincount_shape(shape: Shape, weights: Shape | None = None, op: str = "bincount") -> Shape:
    if len(shape) != 1:
        raise _bad(op, f"bincount only supports 1-d non-negative integral inputs, got shape {tuple(shape)}")
    if weights is not None and (len(weights) != 1 or differ(weights[0], shape[0])):
        raise _bad(op, f"weights should be 1-d and have the same length as input, got {tuple(weights)}")
    return (UNKNOWN,)


def histogram_shapes(bins: int, op: str = "histogram") -> tuple[Shape, Shape]:
    """(hist, bin_edges) for an integer number of bins."""
    if bins <= 0:
        raise _bad(op, f"bins must be > 0, but got {bins}")
    return (bins,), (bins + 1,)


def cartesian_prod_shape(shapes: Sequence[Shape], op: str = "cartesian_prod") -> Shape:
    if not shapes:
        raise _bad(op, "expects a non-empty TensorList")
    total: Dim = 1
    for s in shapes:
        if len(s) != 1:
            raise _bad(op, f"expect a 1D vector, but got shape {tuple(s)}")
        total = dim_mul(total, s[0])
    return (total,) if len(shapes) == 1 else (total, len(shapes))


def combinations_shape(shape: Shape, r: int = 2, with_replacement: bool = False, op: str = "combinations") -> Shape:
    if len(shape) != 1:
        raise _bad(op, f"Expect a 1D vector, but got shape {tuple(shape)}")
    if r < 0:
        raise _bad(op, f"Expect a non-negative number, but got {r}")
    if r == 0:
        return (0,)
    n = shape[0]
    if not isinstance(n, int):
        return (UNKNOWN, r)
    count = _comb(n + r - 1, r) if with_replacement else _comb(n, r)
    return (count, r)


def _comb(n: int, r: int) -> int:
    if r > n or n < 0:
        return 0
    out = 1
    for i in range(r):
        out = out * (n - i) // (i + 1)
    return out


def cov_shape(shape: Shape, op: str = "cov") -> Shape:
    """Variables are rows: (v, n) -> (v, v); a 1-D input is one variable -> ()."""
    if len(shape) > 2:
        raise _bad(op, f"expected input to have two or fewer dimensions but got an input with {len(shape)} dimensions")
    return (shape[0], shape[0]) if len(shape) == 2 else ()
