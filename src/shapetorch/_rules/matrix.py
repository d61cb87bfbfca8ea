"""Matrix functions: diagonals and triangles, trace, inverse, block_diag, cdist, and the shapes of torch.linalg's
solvers and factorizations (solve, svd, qr, eigh, lstsq, cross, multi_dot)."""

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
        raise RuleError("matmul_error_inner_dimensions_do_not_match", op=op, a=a, b=b, ka=a[-1], kb=b[-1], mats="")
    return broadcast_pair(a[:-2], b[:-2], op) + (a[-2], b[-2])


# -- torch.linalg -------------------------------------------------------------------------------------------------


def _min(a: Dim, b: Dim) -> Dim:
    return min(a, b) if isinstance(a, int) and isinstance(b, int) else a if a is b else UNKNOWN


def _fmt_matrix(shape: Shape) -> str:
    return "x".join(str(d) for d in shape[-2:]) if len(shape) >= 2 else str(shape[-1] if shape else "")


def solve_shape(a: Shape, b: Shape, left: bool = True, op: str = "linalg.solve") -> Shape:
    """A (..., n, n) and B (..., n, k), or B (..., n) a batch of vectors, as torch decides: B is a vector when it
    is 1-D or has A's shape without its last dim. The batch dims broadcast."""
    inverse_shape(a, op)
    vector = len(b) == 1 or (len(b) == len(a) - 1 and all(not differ(x, y) for x, y in zip(b, a[:-1])))
    n = a[-1]
    if vector:
        if not left:
            raise invalid_argument(op, "Vector broadcasting of the left hand side is not supported for left=False. "
                                       "In this case linalg.solve is equivalent to B / A.squeeze(-1)")
        if differ(b[-1], n):
            raise RuleError("linalg_error_solve_incompatible", op=op, equation="AX = B" if left else "XA = B",
                            a=_fmt_matrix(a), b=str(b[-1]))
        return broadcast_pair(a[:-2], b[:-1], op) + (n,)
    if len(b) < 2:
        raise RuleError("linalg_error_requires_at_least_2d", op=op, shape=b)
    if differ(b[-2] if left else b[-1], n):
        raise RuleError("linalg_error_solve_incompatible", op=op, equation="AX = B" if left else "XA = B",
                        a=_fmt_matrix(a), b=_fmt_matrix(b))
    return broadcast_pair(a[:-2], b[:-2], op) + tuple(b[-2:])


def svd_shapes(shape: Shape, full_matrices: bool = True, op: str = "linalg.svd") -> tuple[Shape, Shape, Shape]:
    """(..., m, n) -> U (..., m, m|k), S (..., k), Vh (..., n|k, n) with k = min(m, n)."""
    if len(shape) < 2:
        raise RuleError("linalg_error_requires_at_least_2d", op=op, shape=shape)
    *batch, m, n = shape
    k = _min(m, n)
    return (*batch, m, m if full_matrices else k), (*batch, k), (*batch, n if full_matrices else k, n)


def qr_shapes(shape: Shape, mode: str = "reduced", op: str = "linalg.qr") -> tuple[Shape, Shape]:
    """(..., m, n) -> Q, R for mode 'reduced' ((m, k), (k, n)), 'complete' ((m, m), (m, n)) or 'r' ((0,), (k, n))."""
    if mode not in ("reduced", "complete", "r"):
        raise invalid_argument(op, f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                                   "'r', or 'complete'")
    if len(shape) < 2:
        raise RuleError("linalg_error_requires_at_least_2d", op=op, shape=shape)
    *batch, m, n = shape
    k = _min(m, n)
    if mode == "complete":
        return (*batch, m, m), (*batch, m, n)
    if mode == "r":
        return (0,), (*batch, k, n)
    return (*batch, m, k), (*batch, k, n)


def eigh_shapes(shape: Shape, op: str = "linalg.eigh") -> tuple[Shape, Shape]:
    """(..., n, n) -> eigenvalues (..., n), eigenvectors (..., n, n)."""
    inverse_shape(shape, op)
    return shape[:-1], shape


def lstsq_shape(a: Shape, b: Shape, op: str = "linalg.lstsq") -> Shape:
    """A (..., m, n) and B (..., m, k) -> the solution (..., n, k); B of A's batch and rows (A.shape[:-1]) is
    a vector right-hand side -> (..., n).

    torch's rule, quirks included: B has A's rank or one fewer. With one fewer and not A.shape[:-1], B is a
    matrix whose batch broadcasts with A's as usual (the solution), and the result is that solution
    broadcast to the batch ``broadcast(A.shape[:-2], B.shape[:-1])`` (``lstsq_batch``): A (1, 3, 2) with B
    (3, 5) gives (3, 2, 5), three copies of the one solution."""
    if len(a) < 2:
        raise RuleError("linalg_error_requires_at_least_2d", op=op, shape=a)
    if len(b) < 1:
        raise RuleError("linalg_error_requires_at_least_2d", op=op, shape=b)
    if not 0 <= len(a) - len(b) <= 1:
        raise RuleError("linalg_error_solve_incompatible", op=op, equation="AX = B", a=_fmt_matrix(a),
                        b=f"{b}: B must have the rank of A or one fewer")
    vector = lstsq_vector(a, b)
    if differ(b[-1] if vector else b[-2], a[-2]):
        raise RuleError("linalg_error_solve_incompatible", op=op, equation="AX = B", a=_fmt_matrix(a),
                        b=str(b[-1]) if vector else _fmt_matrix(b))
    if vector:
        return broadcast_pair(a[:-2], b[:-1], op) + (a[-1],)
    return lstsq_batch(a, b, op) + (a[-1], b[-1])


def lstsq_vector(a: Shape, b: Shape) -> bool:
    """Whether ``linalg.lstsq`` takes B as a vector right-hand side: B is 1-D, or exactly A.shape[:-1]."""
    return len(b) == 1 or (len(b) == len(a) - 1 and not any(differ(x, y) for x, y in zip(b, a[:-1], strict=True)))


def lstsq_batch(a: Shape, b: Shape, op: str = "linalg.lstsq") -> Shape:
    """The batch of ``linalg.lstsq``'s matrix solution (see ``lstsq_shape``)."""
    solved = broadcast_pair(a[:-2], b[:-2], op)
    if len(b) == len(a):
        return solved
    out = broadcast_pair(a[:-2], b[:-1], op)
    broadcast_pair(solved, out, op)  # the solution must expand to it
    return out


def cross_shape(a: Shape, b: Shape, dim: int = -1, op: str = "linalg.cross") -> Shape:
    """Two shapes of one rank broadcast; both inputs must have size 3 at ``dim``."""
    if len(a) != len(b):
        raise invalid_argument(op, f"inputs must have the same number of dimensions (got {len(a)} and {len(b)})")
    out = broadcast_pair(a, b, op)
    d = wrap_dim(dim, len(out), op)
    sizes = [s[d - len(out) + len(s)] if d - len(out) + len(s) >= 0 else 1 for s in (a, b)]
    if any(isinstance(x, int) and x != 3 for x in sizes):
        raise invalid_argument(op, f"inputs dimension {dim} must have length 3. Got {sizes[0]} and {sizes[1]}")
    return out


def multi_dot_shape(shapes: Sequence[Shape], op: str = "linalg.multi_dot") -> Shape:
    """A chain of 2-D matrices; the first may be 1-D (a row vector) and the last 1-D (a column vector)."""
    if len(shapes) < 2:
        raise invalid_argument(op, f"expected at least 2 tensors but got {len(shapes)}")
    last = len(shapes) - 1
    for i, s in enumerate(shapes):
        ok = len(s) == 2 or (len(s) == 1 and i in (0, last))
        if not ok:
            want = "1D or 2D" if i in (0, last) else "2D"
            where = "the first" if i == 0 else "the last" if i == last else f"tensor {i}"
            raise invalid_argument(op, f"{where} tensor must be {want} but got {len(s)}D")
    rows = shapes[0][0] if len(shapes[0]) == 2 else None
    cols = shapes[-1][-1] if len(shapes[-1]) == 2 else None
    for i in range(last):
        x, y = shapes[i], shapes[i + 1]
        if differ(x[-1], y[0]):
            raise RuleError("matmul_error_inner_dimensions_do_not_match", op=op, a=x, b=y, ka=x[-1], kb=y[0],
                            mats="")
    return tuple(d for d in (rows, cols) if d is not None)


def lu_shapes(shape: Shape, op: str = "linalg.lu") -> tuple[Shape, Shape, Shape]:
    """(..., m, n) -> P (..., m, m), L (..., m, k), U (..., k, n) with k = min(m, n); lu_factor packs L and U into
    one (..., m, n) and gives k pivots."""
    if len(shape) < 2:
        raise RuleError("linalg_error_requires_at_least_2d", op=op, shape=shape)
    *batch, m, n = shape
    k = _min(m, n)
    return (*batch, m, m), (*batch, m, k), (*batch, k, n)


def lu_solve_shape(lu: Shape, b: Shape, left: bool = True, op: str = "linalg.lu_solve") -> Shape:
    """LU (..., n, n) (or LDL's LD) and B (..., n, k) (``left``) or (..., k, n): the batch dims broadcast."""
    inverse_shape(lu, op)
    if len(b) < 2:
        raise RuleError("linalg_error_requires_at_least_2d", op=op, shape=b)
    if differ(b[-2] if left else b[-1], lu[-1]):
        raise RuleError("linalg_error_solve_incompatible", op=op, equation="AX = B" if left else "XA = B",
                        a=_fmt_matrix(lu), b=_fmt_matrix(b))
    return broadcast_pair(lu[:-2], b[:-2], op) + tuple(b[-2:])


def _square_split(lead: Shape, rest: Shape, trailing: str, leading: str, op: str) -> None:
    """The leading and trailing dims must hold as many elements each: they are a square matrix's rows and columns."""
    a, b = prod(rest), prod(lead)
    if differ(a, b):
        raise RuleError("linalg_error_tensor_sizes", op=op, trailing=trailing, leading=leading, a=a, b=b)


def tensorinv_shape(shape: Shape, ind: int = 2, op: str = "linalg.tensorinv") -> Shape:
    """A read as a (prod(shape[:ind]), prod(shape[ind:])) square matrix; its inverse has shape[ind:] + shape[:ind]."""
    if ind <= 0:
        raise RuleError("linalg_error_tensorinv_ind", op=op, ind=ind)
    lead, rest = tuple(shape[:ind]), tuple(shape[ind:])
    _square_split(lead, rest, "ind:", ":ind", op)
    return rest + lead


def tensorsolve_shape(a: Shape, b: Shape, op: str = "linalg.tensorsolve") -> Shape:
    """A's leading b.ndim dims are rows (B's shape), the rest columns: the solution has A's trailing dims."""
    lead, rest = tuple(a[:len(b)]), tuple(a[len(b):])
    _square_split(lead, rest, "other.ndim:", ":other.ndim", op)
    return rest
