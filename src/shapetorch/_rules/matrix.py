"""Matrix functions: diagonals and triangles, trace, inverse, block_diag, cdist."""

from __future__ import annotations

from collections.abc import Sequence

from .axes import wrap_dim
from .broadcast import broadcast_pair
from .dims import UNKNOWN, Dim, Shape, differ, dim_add, prod
from .errors import RuleError, invalid_argument
from .views import diagonal_shape


def diag_embed_shape(shape: Shape, offset: int = 0, dim1: int = -2, dim2: int = -1, op: str = "diag_embed") -> Shape:
    """The last dim (n) becomes an (n+|offset|)-square plane at dims (dim1, dim2) of a rank+1 tensor."""
    rank = len(shape) + 1
    a, b = wrap_dim(dim1, rank, op), wrap_dim(dim2, rank, op)
    if a == b:
        raise invalid_argument(op, f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    side = dim_add(shape[-1], abs(offset)) if shape else 1 + abs(offset)
    rest = list(shape[:-1])
    out: list[Dim] = []
    for i in range(rank):
        out.append(side if i in (a, b) else rest.pop(0))
    return tuple(out)


def diag_shape(shape: Shape, diagonal: int = 0, op: str = "diag") -> Shape:
    """1-D (n) -> (n+|k|, n+|k|); 2-D -> the k-th diagonal's length."""
    if len(shape) == 1:
        side = dim_add(shape[0], abs(diagonal))
        return (side, side)
    if len(shape) == 2:
        return diagonal_shape(shape, diagonal, 0, 1, op)
    raise invalid_argument(op, f"supports 1-D or 2-D tensors, got {len(shape)}-D (shape {tuple(shape)})")


def diagflat_shape(shape: Shape, offset: int = 0, op: str = "diagflat") -> Shape:
    side = dim_add(prod(shape), abs(offset))
    return (side, side)


def triangular_shape(shape: Shape, op: str = "tril") -> Shape:
    if len(shape) < 2:
        raise RuleError("linalg_error_requires_at_least_2d", op=op, shape=shape)
    return shape


def inverse_shape(shape: Shape, op: str = "inverse") -> Shape:
    """(..., n, n) -> (..., n, n)."""
    if len(shape) < 2:
        raise RuleError("linalg_error_requires_at_least_2d", op=op, shape=shape)
    if differ(shape[-1], shape[-2]):
        raise RuleError("linalg_error_not_square_matrix", op=op, m=shape[-2], n=shape[-1], shape=shape)
    return shape


def trace_shape(shape: Shape, op: str = "trace") -> Shape:
    """(m, n) -> (); 2-D only."""
    if len(shape) != 2:
        raise RuleError("linalg_error_requires_2d", op=op, shape=shape)
    return ()


def block_diag_shape(shapes: Sequence[Shape], op: str = "block_diag") -> Shape:
    """Each input 0-d (1, 1), 1-d (1, n) or 2-d; the rows and the columns add up."""
    rows: Dim = 0
    cols: Dim = 0
    for i, s in enumerate(shapes):
        if len(s) > 2:
            raise invalid_argument(op, f"input tensors must have 2 or fewer dimensions. Input {i} has {len(s)} dimensions")
        r, c = (1, 1) if not s else (1, s[0]) if len(s) == 1 else (s[0], s[1])
        rows = rows + r if isinstance(rows, int) and isinstance(r, int) else UNKNOWN
        cols = cols + c if isinstance(cols, int) and isinstance(c, int) else UNKNOWN
    return (rows, cols) if shapes else (1, 0)


def cdist_shape(a: Shape, b: Shape, op: str = "cdist") -> Shape:
    """(B..., P, M), (B..., R, M) -> (broadcast B..., P, R)."""
    for s in (a, b):
        if len(s) < 2:
            raise RuleError("linalg_error_requires_at_least_2d", op=op, shape=s)
    if differ(a[-1], b[-1]):
        raise RuleError("matmul_error_inner_dimensions_do_not_match", op=op, a=a, b=b, ka=a[-1], kb=b[-1])
    return broadcast_pair(a[:-2], b[:-2], op) + (a[-2], b[-2])
