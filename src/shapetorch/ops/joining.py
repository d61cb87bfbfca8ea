"""Joining and splitting: cat, stack, the *stack family, split, chunk, tensor_split, unbind."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._engine.backward import multi_output
from .._engine.primitives import Prim, call_outputs
from .._grad_mode import STATE
from .._rules import joining as RJ
from .._rules.axes import wrap_dim
from .._rules.joining import dsplit_check
from .._tensor import Tensor, mark_view
from ._common import as_node, cast, check, formal_input, inherit_custom_view, promoted
from ._registry import public
from .indexing import _GET, narrow


def _cat_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    axis, out, start = n.params["axis"], [], 0
    for t in n.inputs:  # (a legacy empty (0,) input beside tensors of more dims never reaches the primitive: ``cat``)
        size = t._data.shape[axis]
        out.append(narrow(g, axis, start, size))
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
    if len(live) < len(tensors) and STATE.enabled:
        # a legacy empty (0,) input contributes nothing, but is in torch's graph: its gradient is an empty tensor
        for t in tensors:
            if t._data.shape == (0,):
                result = as_node(formal_input(result, t), "CatBackward0", *tensors)
    return result if out is None else out.copy_(result)


@public("joining", method=False)
def stack(tensors: Sequence[Tensor], dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    """Join tensors of one shape along a new dim."""
    tensors = list(tensors)
    new = check(RJ.stack_shape, [t._data.shape for t in tensors], dim, op="stack")
    d = wrap_dim(dim, len(new), "stack")
    if out is not None:
        return cat([t.unsqueeze(d) for t in tensors], d, out=out)
    return as_node(cat([t.unsqueeze(d) for t in tensors], d), "StackBackward0", *tensors)


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


# NOTE [split node]: split, split_with_sizes, chunk and unbind are one primitive call each, with one node for all
# their pieces (torch's ``SplitBackward0``, ``SplitWithSizesBackward0``, ``UnbindBackward0``): the backward is one
# ``cat`` (``stack`` for unbind) of the pieces' gradients, zeros made only for the pieces no gradient reached. With a
# node per piece, each piece's gradient was scattered into a zero buffer of the whole input's size and the buffers
# summed (the GPT's ``qkv.split``: three full-size buffers per block and step). The pieces are views of the input, as
# torch's, and as torch refuses an in-place write into the output of a function that returns several views (its
# gradient would have to flow through the other pieces' node), they carry ``_created_in``: a write into one, or
# into a view of one, under grad mode is an ``AutogradError`` (``autograd_error_custom_view_inplace``).
# tensor_split and hsplit/vsplit/dsplit are torch's slices (a ``SliceBackward0`` per piece), and stay so here.
def _views_kernel(a: Any, axis: int, index: tuple[tuple[Any, ...], ...]) -> tuple[Any, ...]:
    return tuple(a[i] for i in index)


def _piece_shape(shape: tuple[int, ...], index: tuple[Any, ...]) -> tuple[int, ...]:
    """The shape of ``a[index]`` for an index of whole dims, then one slice or int (and the Ellipsis)."""
    d = len(index) - 2
    cut = index[d]
    if isinstance(cut, slice):
        return shape[:d] + (cut.stop - cut.start,) + shape[d + 1:]
    return shape[:d] + shape[d + 1:]


def _pieces_grads(grads: list[Any], n: Any) -> list[Any] | None:
    """The pieces' gradients with zeros for those no gradient reached (None when none did)."""
    some = next((g for g in grads if g is not None), None)
    if some is None:
        return None
    shape = n.inputs[0]._data.shape
    return [g if g is not None else some.new_zeros(_piece_shape(shape, i)) for g, i in zip(grads, n.params["index"])]


def _split_vjp(grads: Any, n: Any) -> tuple[Any, ...]:
    gs = _pieces_grads(grads, n)
    return (None if gs is None else cat(gs, n.params["axis"]),)


def _unbind_vjp(grads: Any, n: Any) -> tuple[Any, ...]:
    gs = _pieces_grads(grads, n)
    return (None if gs is None else stack(gs, n.params["axis"]),)


def _pieces_jvp(ts: tuple[Any, ...], n: Any) -> Any:
    t = ts[0]
    return None if t is None else _GET["index"](t, idx1=n.params["index"][n.params["output_nr"]], idx2=None)


_SPLIT = Prim("split_with_sizes", _views_kernel, _split_vjp, _pieces_jvp)
_UNBIND = Prim("unbind", _views_kernel, _unbind_vjp, _pieces_jvp)
multi_output(_SPLIT)
multi_output(_UNBIND)
_VIEW_OPS = {"SplitBackward0": "Split", "SplitWithSizesBackward0": "SplitWithSizes", "UnbindBackward0": "Unbind"}


def _views(prim: Prim, input: Tensor, d: int, index: tuple[tuple[Any, ...], ...], label: str) -> tuple[Tensor, ...]:
    """The pieces ``input[i]`` for each ``i`` of ``index`` (NOTE [split node])."""
    pieces = call_outputs(prim, input, axis=d, index=index)
    node = pieces[0]._grad_fn if pieces else None
    if node is not None:
        node.label = label
    name = _VIEW_OPS[label]
    for i, p in enumerate(pieces):
        mark_view(p, input)
        if p._view_meta is None and STATE.enabled:  # (torch's CreationMeta::MULTIPLE_OUTPUTS)
            p._view_meta = ("multi", name, i)
        if node is not None:
            p._created_in = (name, i, True)
        elif input._created_in is not None:
            inherit_custom_view(p, input)
    return pieces


def _split_pieces(input: Tensor, d: int, sizes: Sequence[int], label: str) -> tuple[Tensor, ...]:
    pre: tuple[Any, ...] = (slice(None),) * d
    index, start = [], 0
    for s in sizes:
        index.append((*pre, slice(start, start + s), Ellipsis))
        start += s
    return _views(_SPLIT, input, d, tuple(index), label)


def _dim(input: Tensor, dim: int, op: str, code: str) -> int:
    return check(RJ.cut_dim, input._data.ndim, dim, op, code)


@public("joining")
def split(tensor: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """Pieces of ``split_size`` along ``dim`` (the last may be smaller), or of the listed sizes."""
    d = _dim(tensor, dim, "split", "split_error_dim_out_of_range")
    sizes = check(RJ.split_sizes, tensor._data.shape[d], split_size_or_sections, d, tensor._data.shape, op="split")
    return _split_pieces(tensor, d, sizes,
                         "SplitBackward0" if isinstance(split_size_or_sections, int) else "SplitWithSizesBackward0")


@public("joining")
def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """At most ``chunks`` pieces of equal size (the last may be smaller), as torch.chunk."""
    d = _dim(input, dim, "chunk", "chunk_error_dim_out_of_range")
    return _split_pieces(input, d, check(RJ.chunk_sizes, input._data.shape[d], chunks, op="chunk"), "SplitBackward0")


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
    pre: tuple[Any, ...] = (slice(None),) * d
    return _views(_UNBIND, input, d, tuple((*pre, i, Ellipsis) for i in range(count)), "UnbindBackward0")


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
