"""Joining and splitting: cat, stack, the *stack family, split, chunk, tensor_split, unbind."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._engine.primitives import Prim
from .._rules import joining as RJ
from .._rules.axes import wrap_dim
from .._rules.joining import dsplit_check
from .._tensor import Tensor
from ._common import as_node, cast, check, promoted
from ._registry import public
from .indexing import narrow, select


def _cat_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    axis, out, start = n.params["axis"], [], 0
    for t in n.inputs:
        size = t._data.shape[axis] if t._data.shape != (0,) or g._data.ndim == 1 else 0
        out.append(narrow(g, axis, start, size) if t._data.shape != (0,) or g._data.ndim == 1 else None)
        start += size
    return tuple(out)


_CAT = Prim("cat", lambda *arrays, axis: np.concatenate(arrays, axis=axis), _cat_vjp)


@public("joining", method=False, aliases=("concat", "concatenate"))
def cat(tensors: Sequence[Tensor], dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    """Join tensors along an existing dim; all other sizes must match."""
    tensors = list(tensors)
    shapes = [t._data.shape for t in tensors]
    new = check(RJ.cat_shape, shapes, dim, op="cat")
    d = wrap_dim(dim, len(new), "cat")
    common = promoted(*tensors) if tensors else "float32"
    live = [cast(t, common) for t in tensors if t._data.shape != (0,) or len(new) == 1]
    result = _CAT(*live, axis=d) if live else cast(tensors[0], common).clone()
    return result if out is None else out.copy_(result)


@public("joining", method=False)
def stack(tensors: Sequence[Tensor], dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    """Join tensors of one shape along a new dim."""
    tensors = list(tensors)
    new = check(RJ.stack_shape, [t._data.shape for t in tensors], dim, op="stack")
    d = wrap_dim(dim, len(new), "stack")
    return cat([t.unsqueeze(d) for t in tensors], d, out=out)


@public("joining", method=False)
def hstack(tensors: Sequence[Tensor]) -> Tensor:
    tensors = [t if t._data.ndim else t.reshape(1) for t in tensors]
    return cat(tensors, 0 if tensors and tensors[0]._data.ndim == 1 else 1)


@public("joining", method=False, aliases=("row_stack",))
def vstack(tensors: Sequence[Tensor]) -> Tensor:
    return cat([t.reshape(1, -1) if t._data.ndim < 2 else t for t in tensors], 0)


@public("joining", method=False)
def dstack(tensors: Sequence[Tensor]) -> Tensor:
    def at_least_3d(t: Tensor) -> Tensor:
        if t._data.ndim == 0:
            return t.reshape(1, 1, 1)
        if t._data.ndim == 1:
            return t.reshape(1, -1, 1)
        return t.unsqueeze(-1) if t._data.ndim == 2 else t

    return cat([at_least_3d(t) for t in tensors], 2)


@public("joining", method=False)
def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    return cat([t.reshape(-1, 1) if t._data.ndim < 2 else t for t in tensors], 1)


def _pieces(input: Tensor, d: int, sizes: Sequence[int]) -> tuple[Tensor, ...]:
    out, start = [], 0
    for s in sizes:
        out.append(narrow(input, d, start, s))
        start += s
    return tuple(out)


def _dim(input: Tensor, dim: int, op: str, code: str) -> int:
    return check(RJ.cut_dim, input._data.ndim, dim, op, code)


@public("joining")
def split(tensor: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """Pieces of ``split_size`` along ``dim`` (the last may be smaller), or of the listed sizes."""
    d = _dim(tensor, dim, "split", "split_error_dim_out_of_range")
    sizes = check(RJ.split_sizes, tensor._data.shape[d], split_size_or_sections, d, tensor._data.shape, op="split")
    return _labeled(_pieces(tensor, d, sizes), tensor,
                    "SplitBackward0" if isinstance(split_size_or_sections, int) else "SplitWithSizesBackward0")


def _labeled(pieces: tuple[Tensor, ...], input: Tensor, label: str) -> tuple[Tensor, ...]:
    """The pieces' nodes under torch's name for the op that cut them (each piece has its own node here)."""
    for p in pieces:
        if p._grad_fn is not None:
            as_node(p, label, input)
    return pieces


@public("joining")
def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """At most ``chunks`` pieces of equal size (the last may be smaller), as torch.chunk."""
    d = _dim(input, dim, "chunk", "chunk_error_dim_out_of_range")
    return _labeled(_pieces(input, d, check(RJ.chunk_sizes, input._data.shape[d], chunks, op="chunk")), input,
                    "SplitBackward0")


@public("joining")
def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    d = _dim(input, dim, "tensor_split", "split_error_dim_out_of_range")
    if isinstance(indices_or_sections, Tensor):
        indices_or_sections = indices_or_sections.tolist()
    bounds = check(RJ.tensor_split_bounds, input._data.shape[d], indices_or_sections, op="tensor_split")
    return tuple(narrow(input, d, a, b - a) for a, b in bounds)


@public("joining")
def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    count, _ = check(RJ.unbind_shapes, input._data.shape, dim, op="unbind")
    d = wrap_dim(dim, input._data.ndim, "unbind")
    return _labeled(tuple(select(input, d, i) for i in range(count)), input, "UnbindBackward0")


@public("joining")
def hsplit(input: Tensor, sections: int | Sequence[int]) -> tuple[Tensor, ...]:
    """Split along dim 1 (dim 0 of a 1-D tensor); an int must divide the size."""
    d = 1 if input._data.ndim > 1 else 0
    check(RJ.directional_split_check, input._data.shape, sections if isinstance(sections, int) else None, d, 1, op="hsplit")
    return tensor_split(input, sections, d)


@public("joining")
def vsplit(input: Tensor, sections: int | Sequence[int]) -> tuple[Tensor, ...]:
    """Split along dim 0 of a tensor of at least 2 dims; an int must divide the size."""
    check(RJ.directional_split_check, input._data.shape, sections if isinstance(sections, int) else None, 0, 2, op="vsplit")
    return tensor_split(input, sections, 0)


@public("shape")
def dsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """Split along dim 2 (depth); an int must divide the size."""
    sections = indices_or_sections if isinstance(indices_or_sections, int) else None
    check(dsplit_check, input._data.shape, sections, op="dsplit")
    return tensor_split(input, indices_or_sections, 2)


@public("shape", aliases=("unsafe_split_with_sizes",))
def split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """``split`` into pieces of the listed sizes, which must add up to the dim's size."""
    return split(input, list(split_sizes), dim)
