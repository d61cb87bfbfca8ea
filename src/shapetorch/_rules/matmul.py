"""The matmul family: torch.matmul's cases, and the strict mm / bmm / mv / dot / outer."""

from __future__ import annotations

from collections.abc import Sequence

from .axes import wrap_dims
from .broadcast import broadcast_pair, expand_shape
from .dims import Dim, Shape, differ, dim_mul
from .errors import RuleError, invalid_argument


def _inner(op: str, a: Shape, b: Shape, ka: Dim, kb: Dim) -> None:
    if differ(ka, kb):
        raise RuleError("matmul_error_inner_dimensions_do_not_match", op=op, a=a, b=b, ka=ka, kb=kb,
                        mats=torch_mats(a, b))


def torch_mats(a: Shape, b: Shape) -> str:
    """torch's own words for a product it runs as a 2-D one (mm, addmm, linear, matmul with a 2-D right operand:
    a left operand of more dims is folded to rows), appended to the message so both read alike; else nothing."""
    if len(b) != 2 or len(a) < 2:
        return ""
    rows: Dim = a[0]
    for d in a[1:-1]:
        rows = dim_mul(rows, d)
    return f"; mat1 and mat2 shapes cannot be multiplied ({rows!r}x{a[-1]!r} and {b[0]!r}x{b[1]!r})"


def matmul_shape(a: Shape, b: Shape, op: str = "matmul") -> Shape:
    """``a @ b``: 1-D.1-D -> (); 2-D.1-D -> (m,); 1-D.2-D -> (n,); N-D broadcasts batch dims."""
    if not a or not b:
        raise RuleError("matmul_error_requires_at_least_1d", op=op, a=a, b=b)
    if len(a) == 1 and len(b) == 1:
        _inner(op, a, b, a[0], b[0])
        return ()
    if len(b) == 1:
        _inner(op, a, b, a[-1], b[0])
        return a[:-1]
    if len(a) == 1:
        _inner(op, a, b, a[0], b[-2])
        return b[:-2] + b[-1:]
    _inner(op, a, b, a[-1], b[-2])
    batch = broadcast_pair(a[:-2], b[:-2], op)
    return batch + (a[-2], b[-1])


def _rank(op: str, arg: str, shape: Shape, rank: int) -> None:
    if len(shape) != rank:
        raise RuleError("matmul_error_rank_mismatch", op=op, arg=arg, expected=rank, shape=shape)


def mm_shape(a: Shape, b: Shape, op: str = "mm") -> Shape:
    _rank(op, "self", a, 2)
    _rank(op, "mat2", b, 2)
    _inner(op, a, b, a[1], b[0])
    return (a[0], b[1])


def bmm_shape(a: Shape, b: Shape, op: str = "bmm") -> Shape:
    _rank(op, "self", a, 3)
    _rank(op, "mat2", b, 3)
    if differ(a[0], b[0]):
        raise RuleError("batch_dimensions_do_not_match_error", op=op, a=a, b=b, ba=a[0], bb=b[0])
    _inner(op, a, b, a[2], b[1])
    return (a[0], a[1], b[2])


def mv_shape(a: Shape, v: Shape, op: str = "mv") -> Shape:
    _rank(op, "self", a, 2)
    _rank(op, "vec", v, 1)
    _inner(op, a, v, a[1], v[0])
    return (a[0],)


def dot_shape(a: Shape, b: Shape, op: str = "dot") -> Shape:
    _rank(op, "self", a, 1)
    _rank(op, "other", b, 1)
    _inner(op, a, b, a[0], b[0])
    return ()


def outer_shape(a: Shape, b: Shape, op: str = "outer") -> Shape:
    _rank(op, "self", a, 1)
    _rank(op, "vec2", b, 1)
    return (a[0], b[0])


def kron_shape(a: Shape, b: Shape, op: str = "kron") -> Shape:
    """Both shapes left-padded with 1s to one rank, then multiplied elementwise."""
    n = max(len(a), len(b))
    pa = (1,) * (n - len(a)) + tuple(a)
    pb = (1,) * (n - len(b)) + tuple(b)
    return tuple(dim_mul(x, y) for x, y in zip(pa, pb))


def tensordot_dims(a: Shape, b: Shape, dims: int | tuple[Sequence[int], Sequence[int]],
                   op: str = "tensordot") -> tuple[tuple[int, ...], tuple[int, ...], Shape]:
    """The contracted dims of each operand and the output shape (free dims of a, then of b).

    A contracted pair must have equal sizes, or one of them 1 (that side is summed first), as torch.
    """
    if isinstance(dims, int):
        if dims < 0:
            raise invalid_argument(op, f"expects dims >= 0, but got dims={dims}")
        if dims > len(a) or dims > len(b):
            raise invalid_argument(op, f"expects dims <= the rank of both operands, got dims={dims} for shapes {tuple(a)} "
                           f"and {tuple(b)}")
        da: tuple[int, ...] = tuple(range(len(a) - dims, len(a)))
        db: tuple[int, ...] = tuple(range(dims))
    else:
        la, lb = list(dims[0]), list(dims[1])
        if len(la) != len(lb):
            raise invalid_argument(op, f"both dimension lists should have same length, got {la} and {lb}")
        if (la and not a) or (lb and not b):
            raise RuleError("dimension_error_zero_dim", op=op)
        da = wrap_dims(la, len(a), op)
        db = wrap_dims(lb, len(b), op)
    for x, y in zip(da, db):
        if a[x] != 1 and b[y] != 1 and differ(a[x], b[y]):
            raise RuleError("matmul_error_inner_dimensions_do_not_match", op=op, a=a, b=b, ka=a[x], kb=b[y],
                            mats="")
    out = tuple(s for i, s in enumerate(a) if i not in da) + tuple(s for i, s in enumerate(b) if i not in db)
    return da, db, out


def addbmm_shape(input: Shape, b1: Shape, b2: Shape, op: str = "addbmm") -> Shape:
    """sum_b batch1[b] @ batch2[b] is (n, p); ``input`` broadcasts to it."""
    for arg, s in (("batch1", b1), ("batch2", b2)):
        if len(s) != 3:
            raise RuleError("matmul_error_rank_mismatch", op=op, arg=arg, expected=3, shape=s)
    if differ(b1[0], b2[0]):
        raise RuleError("batch_dimensions_do_not_match_error", op=op, a=b1, b=b2, ba=b1[0], bb=b2[0])
    if differ(b1[2], b2[1]):
        raise RuleError("matmul_error_inner_dimensions_do_not_match", op=op, a=b1, b=b2, ka=b1[2], kb=b2[1], mats="")
    out = (b1[1], b2[2])
    expand_shape(input, out, op)
    return out


def addr_shape(input: Shape, v1: Shape, v2: Shape, op: str = "addr") -> Shape:
    for arg, s in (("vec1", v1), ("vec2", v2)):
        if len(s) != 1:
            raise RuleError("matmul_error_rank_mismatch", op=op, arg=arg, expected=1, shape=s)
    out = (v1[0], v2[0])
    expand_shape(input, out, op)
    return out
