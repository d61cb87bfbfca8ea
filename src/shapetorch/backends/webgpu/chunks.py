"""Tensors larger than one binding: views split into chunks that each fit, bound as windows of the buffer.

A buffer may be as large as the adapter's ``max-buffer-size`` (2 GiB on lavapipe), but a kernel can bind at most
``max-storage-buffer-binding-size`` of it (128 MiB on lavapipe and WebGPU's default). A kernel that runs in
chunks splits its index space along the outermost dims (:func:`chunked`) until every view's *span* — the
storage elements between its lowest and highest offset — fits one binding, then binds each view's span only
(:func:`windowed`: a :class:`~.runtime.Window` at an offset aligned to ``min-storage-buffer-offset-alignment``,
the view's offset rebased into it). The kernel's own code is unchanged: it reads ``offset + index · stride`` as
before, within the window. A view broadcast along a dim (stride 0) spans no more for a longer chunk, so a small
operand broadcast against a large one is bound whole in every chunk.

Kernels that do not run in chunks still refuse a buffer over the binding limit (``RT.dispatch``), naming the op.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .runtime import RT, BufferRange, WArray, Window


def large(x: WArray) -> bool:
    """Whether ``x``'s buffer is over the binding limit (so a kernel must bind a window of it). ``nbytes`` is the
    buffer's size (the pooled size class; a window's own size), read without wgpu's ``size`` property: this runs
    for every operand of every kernel."""
    st = x.st
    return st is not None and st.nbytes > RT.max_binding


def item(x: WArray) -> int:
    return RT.check_dtype(x.dtype)[2].itemsize  # the stored element (int64 is stored as 4 bytes)


def span(x: WArray) -> tuple[int, int]:
    """The storage elements ``[lo, hi)`` a view reaches."""
    lo = hi = x.offset
    for n, s in zip(x.shape, x.stride):
        if n > 1:
            if s > 0:
                hi += (n - 1) * s
            else:
                lo += (n - 1) * s
    return lo, hi + 1


def _budget(x: WArray) -> int:
    """Storage elements a window may span: the binding limit less the alignment slack below the view's start."""
    return (RT.max_binding - RT.align) // item(x)


def fits(x: WArray) -> bool:
    if not large(x):
        return True
    lo, hi = span(x)
    return hi - lo <= _budget(x)


def windowed(x: WArray, always: bool = False) -> WArray:
    """``x`` over a window of its buffer that holds its span (``x`` itself when its buffer fits one binding,
    unless ``always``: for a kernel that writes from its binding's start)."""
    if (not large(x) and not always) or isinstance(x.st, Window):
        return x
    assert x.st is not None
    size = item(x)
    lo, hi = span(x)
    start = lo * size // RT.align * RT.align
    end = min(-(-hi * size // 4) * 4, x.st.buf.size)  # a binding's size is a multiple of 4 bytes
    if end - start > RT.max_binding:
        RT._too_large(end - start)
    return WArray(Window(x.st, start, end - start), x.shape, x.dtype, x.stride, x.offset - start // size)


def narrow(x: WArray, dim: int, start: int, stop: int) -> WArray:
    shape = list(x.shape)
    shape[dim] = stop - start
    return WArray(x.st, tuple(shape), x.dtype, x.stride, x.offset + start * x.stride[dim])


def rows(x: WArray, dim: int) -> int:
    """How many indices of ``dim`` one chunk of ``x`` may hold (at least 1: a single index too wide is split
    along the next dim)."""
    if not large(x):
        return x.shape[dim]
    step = abs(x.stride[dim])
    rest = WArray(x.st, tuple(1 if d == dim else n for d, n in enumerate(x.shape)), x.dtype, x.stride, x.offset)
    lo, hi = span(rest)
    room = _budget(x) - (hi - lo)
    if step == 0:
        return x.shape[dim]
    return max(1, 1 + room // step) if room >= 0 else 1


def chunked(shape: Sequence[int], views: Sequence[WArray], run: Callable[[tuple[int, ...], list[WArray]], Any],
            keep: Sequence[int | None] = (), most: int | None = None) -> None:
    """Call ``run(chunk_shape, windowed_views)`` over chunks of the index space ``shape`` (every view has that
    shape), splitting the outermost dims first, each chunk as large as every view's binding allows (and of at most
    ``most`` indices: a kernel of one thread an index whose grid would pass the adapter's limit).

    ``keep``: per view, a dim that is not split (or None). Such a view spans all of its own extent there in every
    chunk (the target of ``gather``/``scatter`` along their axis, reached at any index); its other dims follow
    the chunk, and it is passed unwindowed: ``run`` binds it over :func:`windows`."""
    shape = tuple(shape)
    keeps = list(keep) + [None] * (len(views) - len(keep))
    split = [v for v, k in zip(views, keeps) if k is None]
    if all(fits(v) for v in split) and (most is None or math.prod(shape) <= most):
        run(shape, [windowed(v) if k is None else v for v, k in zip(views, keeps)])
        return
    dim = next(d for d, n in enumerate(shape) if n > 1)  # a view of one element always fits
    step = min(rows(v, dim) for v in split)
    if most is not None:
        step = min(step, max(1, most // math.prod(shape[dim + 1:])))
    for start in range(0, shape[dim], step):
        stop = min(start + step, shape[dim])
        part = (*shape[:dim], stop - start, *shape[dim + 1:])
        chunked(part, [v if k == dim else narrow(v, dim, start, stop) for v, k in zip(views, keeps)], run, keeps,
                most)


def windows(x: WArray) -> list[tuple[WArray, int]]:
    """``x`` rebased onto each of the windows that together cover its span, with each window's length in elements
    (an element of ``x`` lies in exactly one): one, the whole buffer, when it fits a binding. A kernel reaching
    ``x`` at data-dependent places runs once per window and skips, in each, what lies outside it."""
    if not large(x) or x.st is None:
        return [(x, 2**32 - 1)]
    size = item(x)
    lo, hi = span(x)
    step = _budget(x) // (RT.align // size) * (RT.align // size)  # whole alignment units
    out = []
    for first in range(lo // (RT.align // size) * (RT.align // size), hi, step):
        end = min(first + step, hi)
        nbytes = min(-(-end * size // 4) * 4, x.st.buf.size) - first * size
        win = WArray(Window(x.st, first * size, nbytes), x.shape, x.dtype, x.stride, x.offset - first)
        out.append((win, end - first))
    return out


def flat_budget(itemsize: int) -> int:
    """Elements of ``itemsize`` bytes a window of a flat buffer may hold (the alignment slack below its start
    taken off)."""
    return (RT.max_binding - RT.align) // itemsize


def flat_window(st: Any, itemsize: int, lo: int, hi: int) -> tuple[Any, int]:
    """A binding that reaches elements ``[lo, hi)`` of a flat buffer of ``itemsize``-byte elements: the whole buffer
    when it fits one binding, else a window of it; and the element index the binding starts at (a kernel reads
    element ``e`` at ``e - start``). For kernels whose views are contiguous runs of rows or blocks."""
    if st.buf.size <= RT.max_binding:
        return st.buf, 0
    begin = lo * itemsize // RT.align * RT.align
    end = min(-(-hi * itemsize // 4) * 4, st.buf.size)
    if end - begin > RT.max_binding:
        RT._too_large(end - begin)
    return BufferRange(st.buf, begin, end - begin), begin // itemsize
