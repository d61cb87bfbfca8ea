"""Statistics: quantile, histograms, bincount, cov. Sizes that depend on the data (``bincount``)
are :data:`UNKNOWN`."""

from __future__ import annotations

from .axes import wrap_dim
from .dims import UNKNOWN, Shape, differ
from .errors import invalid_argument
from .reduction import reduce_shape


def quantile_shape(shape: Shape, q_shape: Shape, dim: int | None = None, keepdim: bool = False,
                   op: str = "quantile") -> Shape:
    """``q``'s dim (if 1-D) first, then the reduced input shape (all dims when ``dim`` is None)."""
    if len(q_shape) > 1:
        raise invalid_argument(op, f"quantile() q must be a scalar or 1D tensor, got shape {tuple(q_shape)}")
    if dim is None:
        out: Shape = (1,) * len(shape) if keepdim else ()
    else:
        d = wrap_dim(dim, len(shape), op)
        out = reduce_shape(shape, d, keepdim, op) if shape else ()
    return tuple(q_shape) + out


def histogram_shapes(bins: int, op: str = "histogram") -> tuple[Shape, Shape]:
    """(hist, bin_edges) for an integer number of bins."""
    if bins <= 0:
        raise invalid_argument(op, f"bins must be > 0, but got {bins}")
    return (bins,), (bins + 1,)


def bincount_shape(shape: Shape, weights: Shape | None = None, op: str = "bincount") -> Shape:
    if len(shape) != 1:
        raise invalid_argument(op, f"bincount only supports 1-d non-negative integral inputs, got shape {tuple(shape)}")
    if weights is not None and (len(weights) != 1 or differ(weights[0], shape[0])):
        raise invalid_argument(op, f"weights should be 1-d and have the same length as input, got {tuple(weights)}")
    return (UNKNOWN,)


def cov_shape(shape: Shape, op: str = "cov") -> Shape:
    """Variables are rows: (v, n) -> (v, v); a 1-D input is one variable -> ()."""
    if len(shape) > 2:
        raise invalid_argument(op, f"expected input to have two or fewer dimensions but got an input with {len(shape)} dimensions")
    return (shape[0], shape[0]) if len(shape) == 2 else ()
