"""Joining and splitting: cat, stack, split, chunk, tensor_split, narrow, select, unbind."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from .axes import wrap_dim
from .dims import Dim, Shape, differ, dim_add
from .errors import RuleError, invalid_argument


def cat_shape(shapes: Sequence[Shape], dim: int = 0, op: str = "cat") -> Shape:
    if not shapes:
        raise RuleError("cat_error_empty", op=op)
    # torch skips legacy 1-D empty tensors (shape (0,)) when the others have more dims.
    live = [(i, s) for i, s in enumerate(shapes) if s != (0,)] or [(0, shapes[0])]
    _, first = live[0]
    if not first:
        raise RuleError("dimension_error_zero_dim", op=op)
    d = wrap_dim(dim, len(first), op)
    total: Dim = 0
    for i, s in live:
        if len(s) != len(first):
            raise RuleError("cat_error_rank_mismatch", op=op, a=first, b=s, i=i)
        for at, (x, y) in enumerate(zip(first, s)):
            if at != d and differ(x, y):
                raise RuleError("cat_error_size_mismatch", op=op, dim=d, da=x, db=y, i=i, at=at, a=first, b=s)
        total = dim_add(total, s[d])
    return first[:d] + (total,) + first[d + 1 :]


def stack_shape(shapes: Sequence[Shape], dim: int = 0, op: str = "stack") -> Shape:
    if not shapes:
        raise RuleError("cat_error_empty", op=op)
    first = shapes[0]
    d = wrap_dim(dim, len(first) + 1, op)
    for i, s in enumerate(shapes[1:], 1):
        if len(s) != len(first) or any(differ(x, y) for x, y in zip(first, s)):
            raise RuleError("stack_error_shape_mismatch", op=op, a=first, b=s, i=i)
    return first[:d] + (len(shapes),) + first[d:]


def split_sizes(size: int, split_size_or_sections: int | Sequence[int], dim: int, shape: Shape, op: str = "split") -> list[int]:
    """The section sizes of ``split``: chunks of one size (the last may be smaller) or explicit sizes."""
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step < 0 or (step == 0 and size != 0):
            raise RuleError("split_error_invalid_chunks", op=op, arg="split_size", expected="positive", value=step)
        if size == 0:
            return [0]
        return [min(step, size - i) for i in range(0, size, step)]
    sizes = list(split_size_or_sections)
    if any(s < 0 for s in sizes) or sum(sizes) != size:
        raise RuleError("split_error_invalid_sizes", op=op, sizes=sizes, size=size, dim=dim, shape=shape)
    return sizes


def chunk_sizes(size: int, chunks: int, op: str = "chunk") -> list[int]:
    if chunks <= 0:
        raise RuleError("split_error_invalid_chunks", op=op, arg="chunks", expected="greater than 0", value=chunks)
    step = -(-size // chunks)
    if step == 0:  # an empty dim gives `chunks` empty pieces
        return [0] * chunks
    return [min(step, size - i) for i in range(0, size, step)]


def tensor_split_bounds(size: int, sections_or_indices: int | Sequence[int], op: str = "tensor_split") -> list[tuple[int, int]]:
    """(start, stop) of each piece; indices are clamped as slicing clamps them."""
    if isinstance(sections_or_indices, int):
        n = sections_or_indices
        if n <= 0:
            raise RuleError("split_error_invalid_chunks", op=op, arg="sections", expected="greater than 0", value=n)
        q, r = divmod(size, n)
        bounds, start = [], 0
        for i in range(n):
            stop = start + q + (1 if i < r else 0)
            bounds.append((start, stop))
            start = stop
        return bounds
    cuts = [0] + [_clamp(i, size) for i in sections_or_indices] + [size]
    return [(a, max(a, b)) for a, b in itertools.pairwise(cuts)]


def _clamp(i: int, size: int) -> int:
    if i < 0:
        i += size
    return min(max(i, 0), size)


def pieces_shape(shape: Shape, dim: int, sizes: Sequence[Dim]) -> list[Shape]:
    return [shape[:dim] + (s,) + shape[dim + 1 :] for s in sizes]


def narrow_bounds(shape: Shape, dim: int, start: int, length: int, op: str = "narrow") -> tuple[int, int, int]:
    """(dim, start, length) checked and wrapped. Sizes must be known: narrow is value-dependent."""
    if not shape:
        raise RuleError("dimension_error_zero_dim", op=op)
    d = wrap_dim(dim, len(shape), op)
    size = shape[d]
    if not isinstance(size, int):
        return d, start, length
    if not -size <= start <= size:
        raise RuleError("narrow_error_start_out_of_bounds", op=op, lo=-size, hi=size, start=start)
    if start < 0:
        start += size
    if length < 0 or start + length > size:
        raise RuleError("narrow_error_length_exceeds_bounds", op=op, start=start, length=length, size=size)
    return d, start, length


def narrow_shape(shape: Shape, dim: int, start: int, length: int, op: str = "narrow") -> Shape:
    d, _, length = narrow_bounds(shape, dim, start, length, op)
    return shape[:d] + (length,) + shape[d + 1 :]


def cut_dim(rank: int, dim: int, op: str, code: str) -> int:
    """The dim ``split``, ``chunk`` and ``tensor_split`` cut along, wrapped: a 0-d tensor has none to cut."""
    if rank == 0:
        raise RuleError("dimension_error_zero_dim", op=op)
    return wrap_dim(dim, rank, op, code)


def select_index(shape: Shape, dim: int, index: int, op: str = "select") -> tuple[int, int]:
    """(dim, index) wrapped; the index must lie in [-size, size)."""
    if not shape:
        raise RuleError("dimension_error_zero_dim", op=op)
    d = wrap_dim(dim, len(shape), op)
    size = shape[d]
    if isinstance(size, int):
        if not -size <= index < size:
            raise RuleError("select_error_index_out_of_bounds", op=op, index=index, shape=shape, dim=d)
        if index < 0:
            index += size
    return d, index


def select_shape(shape: Shape, dim: int, index: int, op: str = "select") -> Shape:
    d, _ = select_index(shape, dim, index, op)
    return shape[:d] + shape[d + 1 :]


def unbind_shapes(shape: Shape, dim: int = 0, op: str = "unbind") -> tuple[Dim, Shape]:
    """How many pieces, and the shape of each."""
    if not shape:
        raise RuleError("dimension_error_zero_dim", op=op)
    d = wrap_dim(dim, len(shape), op, "unbind_error_dim_out_of_range")
    return shape[d], shape[:d] + shape[d + 1 :]


def directional_split_check(shape: Shape, sections: int | None, dim: int, min_rank: int, op: str) -> Shape:
    """hsplit/vsplit/dsplit: the tensor needs ``min_rank`` dims, and a number of sections must divide the size of
    ``dim`` (tensor_split would make uneven pieces; these refuse)."""
    if len(shape) < min_rank:
        raise invalid_argument(op, f"requires a tensor with at least {min_rank} dimension{'s' if min_rank > 1 else ''}, "
                                   f"but got a tensor with {len(shape)} dimensions")
    size = shape[dim]
    if sections is not None and isinstance(size, int) and (sections == 0 or size % sections):
        raise invalid_argument(op, f"attempted to split along dimension {dim}, but the size of the dimension {size} "
                                   f"is not divisible by the split_size {sections}")
    return shape


def dsplit_check(shape: Shape, sections: int | None, op: str = "dsplit") -> Shape:
    return directional_split_check(shape, sections, 2, 3, op)
