"""torch's ``*_copy`` functions: each view op followed by a copy, and ``as_strided_scatter``.

``torch.transpose_copy(x, 0, 1)`` is ``x.transpose(0, 1)`` with fresh, contiguous storage: the rules,
errors and gradients are the view op's, so each function here calls its view op and hands the result to
``_fresh``, the one place that copies (and honours ``out=``). Imported last by ``ops``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._errors import fail
from .._tensor import Tensor
from ._registry import public
from .sorting import write_out


def _fresh(view: Tensor, out: Tensor | None, op: str) -> Tensor:
    """``view`` copied into storage of its own (contiguous, as torch's copies are), or into ``out``."""
    copy = view.clone()
    if not copy.is_contiguous():
        copy = copy.contiguous()
    result: Tensor = write_out(copy, out, op)
    return result


def _fresh_all(views: Sequence[Tensor], out: Any, op: str) -> Any:
    """The copies of a split's pieces: a tuple, or written into the list ``out`` (torch returns None then)."""
    copies = tuple(_fresh(v, None, op) for v in views)
    if out is None:
        return copies
    if not isinstance(out, (list, tuple)) or len(out) != len(copies):
        fail("argument_error_invalid", op=op, problem=f"expected out to be a list of {len(copies)} tensors")
    for o, c in zip(out, copies):
        write_out(c, o, op)
    return None


@public("shape", method=False)
def view_copy(input: Tensor, size: Any, *, out: Tensor | None = None) -> Tensor:
    """``input.view(size)`` (or ``input.view(dtype)``), copied. The copy needs no view of the input's strides, so
    a non-contiguous input is reshaped (as torch's functional view_copy accepts it)."""
    from .._dtype import DType

    if isinstance(size, Tensor):  # torch's parser takes a list of ints or a dtype here
        fail("argument_error_type", op="view_copy", name="size", position=" (position 2)",
             expected="tuple of ints", got="Tensor")
    if (isinstance(size, type) and issubclass(size, DType)) or isinstance(size, str):
        return _fresh(input.view(size), out, "view_copy")
    return _fresh(input.reshape(size), out, "view_copy")


@public("shape", method=False)
def permute_copy(input: Tensor, dims: Sequence[int], *, out: Tensor | None = None) -> Tensor:
    return _fresh(input.permute(dims), out, "permute_copy")


@public("shape", method=False)
def transpose_copy(input: Tensor, dim0: int, dim1: int, *, out: Tensor | None = None) -> Tensor:
    return _fresh(input.transpose(dim0, dim1), out, "transpose_copy")


@public("shape", method=False)
def t_copy(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _fresh(input.t(), out, "t_copy")


@public("shape", method=False)
def squeeze_copy(input: Tensor, dim: int | Sequence[int] | None = None, *, out: Tensor | None = None) -> Tensor:
    return _fresh(input.squeeze() if dim is None else input.squeeze(dim), out, "squeeze_copy")


@public("shape", method=False)
def unsqueeze_copy(input: Tensor, dim: int, *, out: Tensor | None = None) -> Tensor:
    return _fresh(input.unsqueeze(dim), out, "unsqueeze_copy")


@public("shape", method=False)
def expand_copy(input: Tensor, size: Sequence[int], *, implicit: bool = False, out: Tensor | None = None) -> Tensor:
    return _fresh(input.expand(size), out, "expand_copy")


@public("shape", method=False)
def select_copy(input: Tensor, dim: int, index: int, *, out: Tensor | None = None) -> Tensor:
    return _fresh(input.select(dim, index), out, "select_copy")


@public("shape", method=False)
def slice_copy(input: Tensor, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1, *,
               out: Tensor | None = None) -> Tensor:
    """``input[..., start:end:step, ...]`` along ``dim``, copied; torch refuses a step below 1."""
    from .._rules.axes import wrap_dim

    d = wrap_dim(dim, input.dim(), "slice_copy")
    if step < 1:
        fail("argument_error_invalid", op="slice_copy", problem="slice step must be positive")
    index = (slice(None),) * d + (slice(start, end, step),)
    return _fresh(input[index], out, "slice_copy")


@public("shape", method=False)
def split_copy(input: Tensor, split_size: int, dim: int = 0, *, out: Any = None) -> Any:
    return _fresh_all(input.split(split_size, dim), out, "split_copy")


@public("shape", method=False)
def split_with_sizes_copy(input: Tensor, split_sizes: Sequence[int], dim: int = 0, *, out: Any = None) -> Any:
    return _fresh_all(input.split_with_sizes(split_sizes, dim), out, "split_with_sizes_copy")


@public("shape", method=False)
def unbind_copy(input: Tensor, dim: int = 0, *, out: Any = None) -> Any:
    return _fresh_all(input.unbind(dim), out, "unbind_copy")


@public("shape", method=False)
def diagonal_copy(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1, *, out: Tensor | None = None) -> Tensor:
    return _fresh(input.diagonal(offset, dim1, dim2), out, "diagonal_copy")


@public("shape", method=False)
def detach_copy(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """A copy of ``input`` outside the graph. torch's result claims ``requires_grad`` but its backward raises
    ("derivative for aten::detach_copy is not implemented"); a detached copy is what the name promises."""
    return _fresh(input.detach(), out, "detach_copy")


@public("shape", method=False)
def alias_copy(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _fresh(input, out, "alias_copy")


@public("shape", method=False)
def unfold_copy(input: Tensor, dimension: int, size: int, step: int, *, out: Tensor | None = None) -> Tensor:
    return _fresh(input.unfold(dimension, size, step), out, "unfold_copy")


@public("shape", method=False)
def view_as_real_copy(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    from .complex import view_as_real

    return _fresh(view_as_real(input), out, "view_as_real_copy")


@public("shape", method=False)
def view_as_complex_copy(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    from .complex import view_as_complex

    return _fresh(view_as_complex(input), out, "view_as_complex_copy")


@public("shape", method=False)
def as_strided_copy(input: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None, *,
                    out: Tensor | None = None) -> Tensor:
    return _fresh(input.as_strided(size, stride, storage_offset), out, "as_strided_copy")


@public("shape")
def as_strided_scatter(input: Tensor, src: Tensor, size: Sequence[int], stride: Sequence[int],
                       storage_offset: int | None = None) -> Tensor:
    """A contiguous copy of ``input`` whose ``as_strided(size, stride, storage_offset)`` elements are ``src``'s.
    Written out of place (the strided view's element positions, then ``index_put``), so both inputs get their
    gradients: ``src`` its slice of the gradient, ``input`` the rest."""
    from .creation import arange

    positions = arange(input.numel(), device=input.device).as_strided(size, stride, storage_offset)
    if tuple(positions.shape) != tuple(src.shape):
        fail("argument_error_invalid", op="as_strided_scatter", problem="expected src to have a size equal to the "
             f"slice of self. src size = {list(src.shape)}, slice size = {list(positions.shape)}")
    flat = input.reshape(-1).index_put((positions.reshape(-1),), src.reshape(-1).to(input.dtype))
    out: Tensor = flat.reshape(input.shape)
    return out
