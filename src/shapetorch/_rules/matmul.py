"""The matmul family: torch.matmul's cases, and the strict mm / bmm / mv / dot / outer."""

from __future__ import annotations

from .broadcast import broadcast_pair
from .dims import Dim, Shape, differ
from .errors import RuleError


def _inner(op: str, a: Shape, b: Shape, ka: Dim, kb: Dim) -> None:
    if differ(ka, kb):
        raise RuleError("matmul_error_inner_dimensions_do_not_match", op=op, a=a, b=b, ka=ka, kb=kb)


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
