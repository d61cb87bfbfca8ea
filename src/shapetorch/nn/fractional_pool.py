"""Fractional max pooling (``F.fractional_max_pool2d``/``3d`` and their ``_with_indices`` forms), as torch's.

Each output cell's window starts at a pseudo-random offset: per sample and channel a number ``u`` in [0, 1)
(``_random_samples``, drawn with ``rand`` when not given) gives the starts ``int((i + u) * alpha) - int(u *
alpha)`` with ``alpha = (in - k) / (out - 1)``, the last window ending at the input's end. The argmax of each
window is found on the host (the last NaN of a window that has one, else the first maximum, as torch's
kernel); the output is the input gathered at those indices, so its gradient flows back to them."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._errors import fail
from .._tensor import Tensor
from ..ops._common import tie_gradient
from ..ops.creation import tensor
from ..ops.random import rand

__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
           "fractional_max_pool3d_with_indices"]


def _tuple(v: Any, nd: int) -> tuple[Any, ...]:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * nd


def _starts(u: np.ndarray, size: int, out: int, k: int, dtype: Any) -> np.ndarray:
    """The window starts along one dim for each sample ``u`` (shape (N, C)): (N, C, out), computed in the
    input's floating dtype as torch's kernel does."""
    starts = np.empty((*u.shape, out), dtype=np.int64)
    if out > 1:
        alpha = np.asarray((size - k) / (out - 1), dtype=dtype)
        i = np.arange(out - 1, dtype=dtype)
        uu = u.astype(dtype)[..., None]
        starts[..., :-1] = ((i + uu) * alpha).astype(np.int64) - (uu * alpha).astype(np.int64)
    if out > 0:
        starts[..., -1] = size - k
    return starts


def _with_indices(input: Tensor, nd: int, kernel_size: Any, output_size: Any, output_ratio: Any,
                  random_samples: Tensor | None) -> tuple[Tensor, Tensor]:
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if random_samples is None:
        input.size(-nd - 1)  # the channel count the samples need: torch's IndexError for too few dims
    if input.dim() not in (nd + 1, nd + 2):
        where = name if nd == 2 else f"{name}_out"  # torch's 3-D kernel names itself so
        fail("argument_error_invalid", op=name,
             problem=f"{where}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}")
    spatial = tuple(input.shape)[-nd:]
    if output_size is None:
        ratio = _tuple(output_ratio, nd)
        if len(ratio) > nd:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of Ints.")
        output_size = [int(s * r) for s, r in zip(spatial, ratio)]
    kernel, outs = _tuple(kernel_size, nd), _tuple(output_size, nd)
    for arg, pos, sizes in (("kernel_size", 2, kernel), ("output_size", 3, outs)):
        for v in sizes:  # torch's parser takes ints only (a float, NaN or inf is a TypeError, True too)
            if isinstance(v, bool) or not isinstance(v, int):
                fail("argument_error_refused", op=name, problem=f"argument '{arg}' (position {pos}) must be tuple "
                                                                f"of ints, not {type(v).__name__}")
    unbatched = input.dim() == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    n, c = x.shape[0], x.shape[1]
    if random_samples is None:
        random_samples = rand(n, c, nd, dtype=input.dtype, device=input.device)
    words = ("time", "height", "width")[3 - nd:]
    for k, o, s, word in zip(kernel, outs, spatial, words):
        if o + k - 1 > s:
            fail("argument_error_invalid", op=name,
                 problem=f"{name}(): pool {word} {k} too large relative to input {word} {s}")
    if tuple(random_samples.shape)[:2] != (n, c) or random_samples.dim() != 3:
        what = "size(1) equals to input channel size" if random_samples.dim() == 3 else "to be a 3D tensor"
        fail("argument_error_invalid", op=name, problem=f"Expect _random_samples{'.' if '(' in what else ' '}"
             f"{what}.")
    a = x.detach().cpu().numpy()
    u = random_samples.detach().cpu().numpy()
    # which sample drives which dim is torch's kernels' choice: (width, height) in 2-D, (time, height, width) in 3-D
    order = (1, 0) if nd == 2 else (0, 1, 2)
    starts = [_starts(u[:, :, order[d]], spatial[d], outs[d], kernel[d], a.dtype) for d in range(nd)]
    # every window's element coordinates: (N, C, *out, *kernel) per dim
    coords = []
    for d in range(nd):
        shape = [n, c] + [1] * nd + [1] * nd
        shape[2 + d], shape[2 + nd + d] = outs[d], kernel[d]
        coord = starts[d][..., :, None] + np.arange(kernel[d])
        coords.append(coord.reshape(shape))
    flat = coords[0]
    for d in range(1, nd):
        flat = flat * spatial[d] + coords[d]
    full = (n, c, *outs, *kernel)
    # (the last dim's length written out: -1 is ambiguous when a batch of 0 leaves no elements)
    flat = np.broadcast_to(flat, full).reshape(n, c, *outs, math.prod(kernel))
    plane = a.reshape(n, c, *([1] * nd), math.prod(spatial))
    values = np.take_along_axis(plane, flat, axis=-1) if flat.size else np.empty(flat.shape, a.dtype)
    nan = np.isnan(values)
    last_nan = values.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1) if values.shape[-1] else 0
    first_max = np.argmax(np.where(nan, -np.inf, values), axis=-1) if values.shape[-1] else 0
    pick = np.where(nan.any(axis=-1), last_nan, first_max)
    idx = np.take_along_axis(flat, pick[..., None], axis=-1)[..., 0] if flat.size else np.zeros((n, c, *outs), np.int64)
    index = tensor(np.ascontiguousarray(idx), device=input.device)
    out = tie_gradient(x.flatten(2).gather(2, index.flatten(2)).reshape(n, c, *outs), x)
    if unbatched:
        return out.squeeze(0), index.squeeze(0)
    return out, index


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """2-D fractional max pooling; returns ``(output, indices)``, the indices flat within each plane."""
    return _with_indices(input, 2, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input: Tensor, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                          return_indices: bool = False, _random_samples: Tensor | None = None) -> Any:
    """2-D fractional max pooling over windows of ``kernel_size`` to ``output_size`` (or ``output_ratio`` of
    the input size); ``(output, indices)`` with ``return_indices``."""
    out = _with_indices(input, 2, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """3-D fractional max pooling; returns ``(output, indices)``, the indices flat within each volume."""
    return _with_indices(input, 3, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d(input: Tensor, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                          return_indices: bool = False, _random_samples: Tensor | None = None) -> Any:
    """3-D fractional max pooling (see ``fractional_max_pool2d``)."""
    out = _with_indices(input, 3, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]

