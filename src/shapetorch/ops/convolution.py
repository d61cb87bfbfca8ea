"""Neural-network primitives: N-d convolution (and its two adjoints) and padding.

Convolution is three primitives that are each other's adjoints, so every vjp is written in them and
double backward works: ``conv(x, w)``, ``conv_input_grad(g, w)`` (= transposed convolution) and
``conv_weight_grad(x, g)``. Pooling (``ops.pooling``) is written over these and the core ops.
The shapes are checked by ``_rules.nn`` before any kernel runs.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .._engine.primitives import Prim
from .._errors import fail
from .._rules import nn as RN
from .._tensor import Tensor
from ._common import allocating, autocast_inputs, check, device_table, dtype_name, tie_gradient

Ints = tuple[int, ...]


def ntuple(v: Any, n: int, name: str = "argument") -> Ints:
    """``3`` -> ``(3, 3)``; a sequence of length n stays; torch's _pair/_triple."""
    if isinstance(v, (int, np.integer)):
        return (int(v),) * n
    t = tuple(int(x) for x in v)
    if len(t) == 1:
        return t * n
    if len(t) != n:
        raise ValueError(f"expected {name} to be a single int or a sequence of {n} ints, got {v!r}")
    return t


# -- kernels --------------------------------------------------------------------------------------------

def _windows(xp: Any, kernel: Ints, stride: Ints, dilation: Ints, out: Ints | None = None) -> Any:
    """A strided view (N, C, *out, *kernel) of the padded input ``xp`` (N, C, *S)."""
    nd = len(kernel)
    sp = xp.shape[2:]
    if out is None:
        out = tuple((sp[i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1 for i in range(nd))
    st = xp.strides
    strides = st[:2] + tuple(st[2 + i] * stride[i] for i in range(nd)) + tuple(st[2 + i] * dilation[i] for i in range(nd))
    return as_strided(xp, xp.shape[:2] + tuple(out) + tuple(kernel), strides, writeable=False)


def _pad_zero(x: Any, padding: Ints) -> Any:
    if not any(padding):
        return x
    return np.pad(x, ((0, 0), (0, 0)) + tuple((p, p) for p in padding))


def _columns(x: Any, kernel: Ints, stride: Ints, padding: Ints, dilation: Ints, out: Ints | None = None) -> Any:
    """im2col: the windows of the padded ``x`` (N, C, *S) as one matrix (C * prod(K), N * prod(out)).

    The copy keeps the output's last axis innermost, where the windows of a row are contiguous in ``x``,
    which copies several times faster than the (N * P, C * K) layout.
    """
    nd = len(kernel)
    win = _windows(_pad_zero(x, padding), kernel, stride, dilation, out)  # (N, C, *out, *K)
    order = (1, *range(2 + nd, 2 + 2 * nd), 0, *range(2, 2 + nd))  # (C, *K, N, *out)
    cols = np.ascontiguousarray(win.transpose(order))
    # both sizes given: -1 cannot be inferred when the batch is empty
    return cols.reshape(math.prod(cols.shape[:1 + nd]), math.prod(win.shape[:1] + win.shape[2:2 + nd]))


def _groups(n: int, groups: int) -> list[slice]:
    step = n // groups
    return [slice(i * step, (i + 1) * step) for i in range(groups)]


# NOTE [convolution on the padded grid]: a stride-1, ungrouped convolution runs on a "flat padded grid": each
# sample's image padded once and flattened, so that moving the window by a kernel offset is moving by a fixed
# number of elements, and the columns of one kernel offset are a slice of the buffer (rows contiguous, no
# gather). The forward's grid is a row grid (issue 17's fourth round): the trailing kernel dim is folded into
# ``k_last`` shifted copies of the input, each already as wide as the output's rows, (N, k_last * C, P0 * Wout)
# for 2-d (the leading dims padded, the last one the output's width), so that each remaining kernel offset is a
# whole number of rows, one stacked product on a slice of it, accumulated; the product of 2-d (and 1-d) is
# already the output, (N, O, Hout * Wout), written straight into it: no crop copy, no padded buffer copied
# twice, and no products for the margins' positions (ResNet's 3x3 on 16x16 computed 324 positions per sample
# for 256). 3-d keeps a crop of its middle dim. Layers with few channels (C * k_last < 8, a first layer) take
# NOTE [per-sample columns] instead. Measured on the row grid against the flat padded grid it replaced (one
# thread, CPU time, medians of 30 calls alternating old and new in one process): ResNet's 16->16 3x3 on
# 32x16x16x16 1.20 -> 0.94 ms, the CNN's 16->32 2.9 -> 2.2 ms, LeNet's 6->16 5x5 1.3-1.6 -> 1.0-1.1 ms, and the
# input gradients that run through it (LeNet's 16->6 3.1-3.3 -> 2.2-2.4 ms, the CNN's 32->16 2.6 -> 2.2 ms).
# Of ResNet's 0.86 ms then: 0.45 ms of products, 0.21 ms of the three shifted copies, 0.08 ms of zeroing,
# 0.06 ms of accumulating, 0.07 ms of setting up.
# Before that (issue 17's second round) the forward was one flat padded grid per sample, (N, C, grid), each
# offset one stacked matmul whose result was (N, O, grid), and the crop a plain copy (ResNet's layer from
# 1.8-2.3 to 1.4-1.5 ms against a channels-first grid for the whole batch). The weight gradient keeps a flat
# channels-first grid of a chunk of the batch, (C, chunk * grid), with no folding (NOTE [weight gradient on the
# grid]; since issue 17's fifth round its samples share their padding); the row grid measured no better there (ResNet's 1.78 against 1.81 ms, the
# CNN's 4.5-4.8 against 4.7, LeNet's 1.8-2.1 against 2.1: three folded copies of the input for the one copy
# the flat grid takes, against 11% fewer columns).
# Measured before (one thread, CPU time, best of interleaved rounds), ResNet's layer: forward 1.57 ms and
# weight gradient 1.33 ms on the channels-first grid, against 2.42 and 1.87 ms for im2col (its strided window
# gather alone took 1.1 ms) and torch's 0.64 and 0.47 ms; one shifted GEMM per offset (no copy) measured 1.67 ms
# and 17.9 ms on the one-channel first layer. Strided and grouped convolutions keep im2col (strided
# few-channel layers take the per-sample columns).

def _few_channels(c: int, kernel: Ints) -> bool:
    """Layers whose folded grid columns would have under 8 rows (a first layer on an image): the grid's GEMMs
    then have an inner size of a few channels, and the per-sample columns (NOTE [per-sample columns]) win."""
    return c * kernel[-1] < 8


# Each batch is cut into chunks of samples whose columns and GEMM outputs stay under _CHUNK elements: a step's
# peak then grows by about one chunk rather than by the columns of the whole batch (the CNN's first layer made
# 8.6 MiB of temporaries for a 3.1 MiB output), and a chunk's columns stay in the cache for their GEMMs. The input
# gradient on the grid takes twice the budget: it makes one NumPy call per kernel tap and chunk (a few us each),
# and LeNet's 5x5 input gradient in chunks of 7 samples took 2.4 ms of adds against 0.75 ms in chunks of 14.
# (2^19 for every kernel raised ResNet's peak RSS growth from 1.03x torch's to 1.22x.)
_CHUNK = 1 << 18


def _chunks(n: int, per_sample: int, budget: int = 0) -> list[slice]:
    """The batch in chunks within the budget, as even as they can be: a short last chunk costs its products and
    copies at a poor rate (ResNet's weight gradient in chunks of 28 and 4 samples took 1.12 ms, in 16 and 16 0.88)."""
    step = max(1, min(n, (budget or _CHUNK) // max(per_sample, 1)))
    step = -(-n // -(-n // step)) if n else step  # as many chunks as before, of equal sizes
    return [slice(i, min(i + step, n)) for i in range(0, n, step)]


@functools.lru_cache(maxsize=1024)
def _row_geometry(sp: Ints, kernel: Ints, padding: Ints, dilation: Ints, out: Ints) -> tuple[Ints, int, int, Ints, int]:
    """``_row_grid``'s sizes for spatial sizes ``sp``: the grid's, its size, the tail, the unfolded kernel offsets'
    shifts and the outputs' span (cached: shapes and params alone decide them, and every convolution's forward and
    weight gradient asks)."""
    nd = len(kernel)
    gsp = tuple(sp[i] + 2 * padding[i] for i in range(nd - 1)) + (out[-1],)
    steps = tuple(math.prod(gsp[i + 1:]) for i in range(nd))
    tail = sum((kernel[i] - 1) * dilation[i] * steps[i] for i in range(1, nd - 1))
    offsets = tuple(sum(k[i] * dilation[i] * steps[i] for i in range(nd - 1))
                    for k in itertools.product(*(range(kernel[i]) for i in range(nd - 1))))
    return gsp, math.prod(gsp), tail, offsets, out[0] * steps[0]


def _row_grid(x: Any, kernel: Ints, padding: Ints, dilation: Ints, out: Ints) -> tuple[Any, Ints, Ints, int]:
    """The row grid of NOTE [convolution on the padded grid]: ``x`` (N, C, *S) as (N, k_last, C, size + tail), the
    trailing kernel taps folded into shifted copies as wide as the output's rows, zero where they read padding;
    with the grid's sizes, the remaining kernel offsets' shifts on it and the outputs' span (the first out[0] grid
    rows; a 3-d grid's middle dims reach past it by ``tail``)."""
    n, c = x.shape[:2]
    gsp, size, tail, offsets, span = _row_geometry(x.shape[2:], kernel, padding, dilation, out)
    fold = kernel[-1]
    cols = np.zeros((n, fold, c, size + tail), dtype=x.dtype)
    grid = cols[..., :size].reshape((n, fold, c) + gsp)
    last, pl, dl = x.shape[-1], padding[-1], dilation[-1]
    lead = tuple(slice(q, q + m) for q, m in zip(padding[:-1], x.shape[2:-1]))
    for f in range(fold):
        # where this tap's shifted copy lands in the last dim, and what it reads (nothing: all padding)
        lo, hi = max(0, pl - f * dl), min(out[-1], pl - f * dl + last)
        if lo < hi:
            grid[(slice(None), f, slice(None)) + lead + (slice(lo, hi),)] = x[..., lo + f * dl - pl:hi + f * dl - pl]
    return cols, gsp, offsets, span


def _grid_conv(x: Any, w: Any, padding: Ints, dilation: Ints, bias: Any = None) -> Any:
    """The forward on per-sample row grids (NOTE [convolution on the padded grid]), chunk by chunk, written
    straight into the output where it is compact (1-d and 2-d); ``bias`` (O,) is added to each chunk while it is
    in the cache."""
    nd = w.ndim - 2
    n, c = x.shape[:2]
    o, kernel = w.shape[0], w.shape[2:]
    out = _out_size(x.shape[2:], kernel, (1,) * nd, padding, dilation)
    dtype = np.result_type(x.dtype, w.dtype)
    result = np.empty((n, o) + out, dtype=dtype)
    fold = kernel[-1]
    # the weight as (unfolded offsets, O, folded offsets * C), matching the columns' rows
    wk = np.moveaxis(w, 1, -1).reshape(o, -1, fold * c).swapaxes(0, 1)
    gsp = tuple(x.shape[2 + i] + 2 * padding[i] for i in range(nd - 1)) + (out[-1],)
    crop = None
    if nd > 2 and any(out[i] != gsp[i] for i in range(1, nd - 1)):
        crop = (slice(None), slice(None), slice(None)) + tuple(slice(0, m) for m in out[1:])
    b = None if bias is None else bias.reshape(o, 1)
    per_sample = fold * c * math.prod(gsp) + 2 * o * out[0] * math.prod(gsp[1:])
    for part in _chunks(n, per_sample):
        m = part.stop - part.start
        cols, gsp, offsets, span = _row_grid(x[part], kernel, padding, dilation, out)
        cols = cols.reshape(m, fold * c, cols.shape[-1])
        if crop is None:
            y = result[part].reshape(m, o, span)
            np.matmul(wk[0], cols[:, :, offsets[0]:offsets[0] + span], out=y)
        else:
            y = np.matmul(wk[0], cols[:, :, offsets[0]:offsets[0] + span])
        if len(offsets) > 1:
            tmp = np.empty_like(y)
            for a in range(1, len(offsets)):
                np.matmul(wk[a], cols[:, :, offsets[a]:offsets[a] + span], out=tmp)
                y += tmp
        if b is not None:
            y += b
        if crop is not None:
            result[part] = y.reshape((m, o, out[0]) + gsp[1:])[crop]
    return result


# NOTE [weight gradient on the grid]: dW for each kernel offset is one product of the input laid on a flat grid,
# channels-first (C, L), shifted by the offset (a slice of the buffer, no copy), with the output gradient laid on the
# same grid channels-last, (L, O) contiguous, zero where no output is: prod(K) products accumulated over column
# chunks. Three things make it fast (issue 17's fifth round):
# - The grid shares its padding: each spatial dim i has a row of S_i = max(size_i + p_i, out_i) cells (the image
#   and then the zeros that serve as the right padding of one row and the left padding of the next), and samples
#   share their padding rows the same way, after ``lead`` zeros for the first sample's top padding. A read at
#   coordinate -p_i lands in the previous row's zeros. ResNet's 16x16 image with padding 1 takes 17x17 cells
#   instead of the 18x18 of a grid padded on both sides, 13% more products than the output's 256 positions
#   against 27%.
# - The products stay under OpenBLAS's small-matrix bound: for M * N * K <= 1e6 (its SkylakeX "small kernel" permit)
#   it runs (16, K) @ (K, 16) without packing the operands; past it, at 35-62 GFLOP/s whatever the layout (measured:
#   (16, 3800) @ (3800, 16) 66-94 GFLOP/s, (16, 4100) @ (4100, 16) 36-59). So the grids are made for chunks of the
#   batch (up to _CHUNK elements) and the products go in column chunks of 1e6 // (C * O) where that leaves at least
#   1024 of them (layers up to about 30x30 channels); wider layers' products are past the bound at any useful K
#   and take the chunk's columns whole.
# - With C >= 16 each product is written (O, C) = G^T (O, K) @ X^T (K, C), both operands transposed views, the
#   small kernels' fastest case there ((16, 2048) @ (2048, 16) at 96 GFLOP/s against 60 as (C, K) @ (K, O)); with
#   fewer channels (C, O) = X (C, K) @ G (K, O) (LeNet's 6->16: 0.83-1.01 ms against 1.25-1.42 the other way), and
#   so are the packed products of wider layers (a 64->64 3x3 on 32x64x16x16: 8.3 ms, 11.4 as (O, C), 9.5 before
#   this round; 128->128 on 16x128x8x8: 4.3 ms, 5.3 before).
# Measured (one thread, CPU time, medians of 7 rounds of 8 calls interleaved with the code before in one process,
# load average 5-10): ResNet's 16->16 3x3 (32x16x16x16) 1.03-1.05 -> 0.80-0.89 ms (torch 0.41-0.47 in the same
# runs), the CNN's 16->32 2.49-2.75 -> 1.80-2.10 ms (torch 1.1-1.3), LeNet's 6->16 5x5 1.11-1.34 -> 0.95-1.12 ms
# (torch 0.70-0.75).
# Measured and not taken: the gradient channels-first (no transposing copy of it, G (O, K) @ X^T or X @ G^T:
# OpenBLAS's small kernel is slower on those), the input channels-last (a transposing copy of the input; as fast for
# ResNet's layer, slower for the others), the whole batch's grid at once with column chunks of it (the long rows
# of a whole-batch buffer: 1.0-1.7 ms for ResNet's layer); before this round, folding the trailing kernel taps into
# (k * C, L) rows (one copy per tap; slower at every size measured, in the third round).

@functools.lru_cache(maxsize=1024)
def _shared_grid(sizes: Ints, out: Ints, kernel: Ints, padding: Ints, dilation: Ints) -> tuple[Ints, int, Ints, int]:
    """NOTE [weight gradient on the grid]'s grid: the cells per spatial dim, the zeros before the first sample, each
    kernel offset's shift and the zeros past the last sample that the largest shift reads (cached, as
    ``_row_geometry``)."""
    nd = len(kernel)
    cells = tuple(max(sizes[i] + padding[i], out[i]) for i in range(nd))
    steps = tuple(math.prod(cells[i + 1:]) for i in range(nd))
    lead = sum(padding[i] * steps[i] for i in range(nd))
    shifts = tuple(sum(k[i] * dilation[i] * steps[i] for i in range(nd))
                   for k in itertools.product(*(range(q) for q in kernel)))
    return cells, lead, shifts, max(shifts)


# OpenBLAS's bound on M * N * K for its unpacked small-matrix GEMM kernels, and the fewest columns worth a product of
# their own below it (see NOTE [weight gradient on the grid])
_SMALL_GEMM = 1_000_000
_SMALL_GEMM_COLUMNS = 1024


def _grid_weight_grad(x: Any, g: Any, weight_size: Ints, padding: Ints, dilation: Ints) -> Any:
    """NOTE [weight gradient on the grid]."""
    o, c, kernel = weight_size[0], weight_size[1], weight_size[2:]
    dtype = np.result_type(x.dtype, g.dtype)
    cells, lead, shifts, tail = _shared_grid(tuple(x.shape[2:]), tuple(g.shape[2:]), kernel, padding, dilation)
    block = math.prod(cells)
    inside = tuple(slice(0, m) for m in x.shape[2:])
    reached = tuple(slice(0, m) for m in g.shape[2:])
    cols = _SMALL_GEMM // (c * o)
    # the products' orientation: (O, C) with both operands transposed where the small kernels run them, or (C, O)
    oc = c >= 16 and cols >= _SMALL_GEMM_COLUMNS
    parts = []
    for part in _chunks(x.shape[0], block * (c + o)):
        m = part.stop - part.start
        length = m * block
        buf = np.zeros((c, lead + length + tail), dtype=x.dtype)
        buf[:, lead:lead + length].reshape((c, m) + cells)[(slice(None), slice(None)) + inside] = x[part].swapaxes(0, 1)
        gt = np.zeros((m,) + cells + (o,), dtype=g.dtype)
        gt[(slice(None),) + reached] = np.moveaxis(g[part], 1, -1)
        gt = gt.reshape(length, o)
        step = cols if cols >= _SMALL_GEMM_COLUMNS else length
        for lo in range(0, length, step):
            hi = min(length, lo + step)
            dw = np.empty((len(shifts),) + ((o, c) if oc else (c, o)), dtype=dtype)
            gk = gt[lo:hi]
            for a, off in enumerate(shifts):
                if oc:
                    np.matmul(gk.T, buf[:, off + lo:off + hi].T, out=dw[a])
                else:
                    np.matmul(buf[:, off + lo:off + hi], gk, out=dw[a])
            parts.append(dw)
    total = parts[0] if len(parts) == 1 else np.sum(parts, axis=0)
    # (*K, O, C) or (*K, C, O) -> (O, C, *K)
    total = total.reshape(tuple(kernel) + total.shape[1:])
    dw = np.moveaxis(total, (-2, -1) if oc else (-1, -2), (0, 1))
    return np.ascontiguousarray(dw).astype(x.dtype, copy=False)


# NOTE [per-sample columns]: a layer with few input channels (a first layer: C * trailing taps < 8) takes the
# columns per sample, (N, C * K, P), so that the forward is one stacked product W @ cols[n] whose result is
# already (N, O, P), the output's layout: no transposing copy of the output, and no GEMM with an inner size of
# a few channels. Its weight gradient is the stacked g[n] @ cols[n]^T summed over the batch. Measured (one
# thread, CPU time, medians of interleaved rounds) on the CNN's 1->16 3x3 layer at 64x28x28: forward 1.0 ms and
# weight gradient 0.6 ms against 2.3 and 2.5 ms on the grid and im2col; LeNet's 1->6 5x5: 0.9 and 1.0 ms
# against 1.9 and 1.9. With 16 channels its window gather costs more than the grid's row copies (1.7 ms of the
# CNN's 16->32 forward), so wider layers stay on the grid. With stride 1 (1-d and 2-d) the columns are copied
# from the row grid (issue 17's fourth round): k_last shifted copies of the input, then one copy per remaining
# kernel offset of whole output-wide rows, where the window gather copied one output row at a time and padded
# the input first with np.pad. LeNet's 1->6 5x5 (64x28x28, bias): forward 1.74 -> 1.13 ms, weight gradient 1.66
# -> 1.15 ms; the CNN's 1->16 3x3: 1.55 -> 1.05 and 1.07 -> 0.76 ms (one thread, CPU time, medians of 25 calls
# alternating old and new in one process, load average 8).

def _sample_columns(x: Any, kernel: Ints, stride: Ints, padding: Ints, dilation: Ints, out: Ints) -> Any:
    """The windows of the padded ``x`` (N, C, *S) as (N, C * prod(K), prod(out)); rows ordered (channel, *K)."""
    nd = len(kernel)
    if nd <= 2 and all(s == 1 for s in stride):
        # from the row grid: each remaining kernel offset's rows are one contiguous slice of it (rows of the
        # output's width), where the strided window gather copies runs of one output row
        grid, _, offsets, span = _row_grid(x, kernel, padding, dilation, out)  # (N, K_last, C, size)
        cols = np.empty((x.shape[0], x.shape[1], len(offsets), kernel[-1], span), dtype=x.dtype)
        for a, off in enumerate(offsets):
            cols[:, :, a] = grid[..., off:off + span].swapaxes(1, 2)
        return cols.reshape(x.shape[0], x.shape[1] * math.prod(kernel), span)
    win = _windows(_pad_zero(x, padding), kernel, stride, dilation, out)  # (N, C, *out, *K)
    order = (0, 1, *range(2 + nd, 2 + 2 * nd), *range(2, 2 + nd))  # (N, C, *K, *out)
    cols = np.ascontiguousarray(win.transpose(order))
    return cols.reshape(x.shape[0], x.shape[1] * math.prod(kernel), math.prod(out))


def _sample_conv(x: Any, w: Any, stride: Ints, padding: Ints, dilation: Ints, bias: Any = None) -> Any:
    """The forward of NOTE [per-sample columns], chunk by chunk, written into the output; one group."""
    n, o = x.shape[0], w.shape[0]
    out = _out_size(x.shape[2:], w.shape[2:], stride, padding, dilation)
    p = math.prod(out)
    w2 = w.reshape(o, -1)
    result = np.empty((n, o) + out, dtype=np.result_type(x.dtype, w.dtype))
    rows = result.reshape(n, o, p)
    b = None if bias is None else bias.reshape(o, 1)
    for part in _chunks(n, (w2.shape[1] + o) * p):  # (see _CHUNK)
        cols = _sample_columns(x[part], w.shape[2:], stride, padding, dilation, out)
        y = rows[part]
        np.matmul(w2, cols, out=y)
        if b is not None:  # while the chunk is in the cache
            y += b
    return result


def _sample_weight_grad(x: Any, g: Any, weight_size: Ints, stride: Ints, padding: Ints, dilation: Ints) -> Any:
    """The weight gradient of NOTE [per-sample columns]: sum over the samples of g[n] (O, P) @ cols[n]^T."""
    n, o = g.shape[:2]
    out = tuple(g.shape[2:])
    p = math.prod(out)
    g3 = g.reshape(n, o, p)
    total = np.zeros((o, math.prod(weight_size[1:])), dtype=np.result_type(x.dtype, g.dtype))
    for part in _chunks(n, (math.prod(weight_size[1:]) + o) * p):  # (see _CHUNK)
        cols = _sample_columns(x[part], weight_size[2:], stride, padding, dilation, out)
        total += np.matmul(g3[part], cols.swapaxes(1, 2)).sum(axis=0)
    return total.reshape(weight_size).astype(x.dtype, copy=False)


# NOTE [input gradient on the grid]: with stride 1 and one group the input's gradient is col2im on the flat
# padded grid of NOTE [convolution on the padded grid]: the output's gradient laid on the grid (zero in the
# margins), one GEMM W^T (C * K, O) @ g (O, L), and each kernel offset's rows added into the input's grid at
# its constant shift, a contiguous slice each, where the general col2im adds through strided 2-d views.
# Measured on the CNN's 16->32 3x3 layer (64x14x14): 3.3 ms against 4.6 ms for the strided col2im (torch 1.6
# ms); LeNet's 6->16 5x5: 2.0 ms against 3.0 ms. Since the forward moved to per-sample grids, the transposed
# convolution on them is faster still for every ungrouped layer (``_conv_input_grad_kernel``), so this serves
# only where that would need a negative padding (a padding larger than dilation * (K - 1)).

def _grid_input_grad(g: Any, w: Any, input_size: Ints, padding: Ints, dilation: Ints) -> Any:
    nd = w.ndim - 2
    n, o = g.shape[:2]
    c, kernel = w.shape[1], w.shape[2:]
    psp = tuple(input_size[i] + 2 * padding[i] for i in range(nd))
    steps = tuple(math.prod(psp[i + 1:]) for i in range(nd))
    offsets = [sum(k[i] * dilation[i] * steps[i] for i in range(nd))
               for k in itertools.product(*(range(kk) for kk in kernel))]
    tail = max(offsets)
    wt = w.reshape(o, -1).T  # (C * K, O), rows ordered (channel, *K)
    dtype = np.result_type(g.dtype, w.dtype)
    result = np.empty((n, c) + tuple(input_size), dtype=dtype)
    crop = (slice(None), slice(None)) + tuple(slice(q, q + m) for q, m in zip(padding, input_size))
    kk = len(offsets)
    for part in _chunks(n, math.prod(psp) * (o + c * kk + c), 2 * _CHUNK):  # (see _CHUNK)
        m = part.stop - part.start
        length = m * math.prod(psp)
        gg = np.zeros((o, m) + psp, dtype=g.dtype)
        gg[(slice(None), slice(None)) + tuple(slice(0, q) for q in g.shape[2:])] = g[part].swapaxes(0, 1)
        z = np.matmul(wt, gg.reshape(o, length)).reshape(c, kk, length)
        buf = np.zeros((c, length + tail), dtype=dtype)
        for a, off in enumerate(offsets):
            buf[:, off:off + length] += z[:, a]
        result[part] = buf[:, :length].reshape((c, m) + psp)[crop].swapaxes(0, 1)
    return result


def _on_grid(stride: Ints, groups: int) -> bool:
    return groups == 1 and all(s == 1 for s in stride)


def _conv_kernel(x: Any, w: Any, stride: Ints, padding: Ints, dilation: Ints, groups: int) -> Any:
    """On the padded grid where it applies (NOTE [convolution on the padded grid]); otherwise one GEMM per
    group: (O/g, C/g * K) @ (C/g * K, N * P), the columns made once."""
    if groups == 1 and x.size and w.size and _few_channels(x.shape[1], w.shape[2:]):
        return _sample_conv(x, w, stride, padding, dilation)
    if _on_grid(stride, groups) and x.size and w.size:
        return _grid_conv(x, w, padding, dilation)
    n, o = x.shape[0], w.shape[0]
    out = _out_size(x.shape[2:], w.shape[2:], stride, padding, dilation)
    w2 = w.reshape(o, -1)
    result = np.empty((n, o) + out, dtype=np.result_type(x.dtype, w.dtype))
    for part in _chunks(n, (w2.shape[1] * groups + o) * math.prod(out)):  # (see _CHUNK)
        cols = _columns(x[part], w.shape[2:], stride, padding, dilation)
        kk = cols.shape[0] // groups
        if groups == 1:
            y = w2 @ cols
        else:
            y = np.concatenate([w2[og] @ cols[i * kk:(i + 1) * kk] for i, og in enumerate(_groups(o, groups))])
        result[part] = y.reshape((o, part.stop - part.start) + out).swapaxes(0, 1)
    return result


def _out_size(size: Ints, kernel: Ints, stride: Ints, padding: Ints, dilation: Ints) -> Ints:
    return tuple((size[i] + 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1
                 for i in range(len(kernel)))


def _grad_rows(g: Any) -> Any:
    """(N, O, *out) as (O, N * P), the layout of the GEMMs' output."""
    return np.ascontiguousarray(g.swapaxes(0, 1)).reshape(g.shape[1], -1)


def _conv_input_grad_kernel(g: Any, w: Any, input_size: Ints, stride: Ints, padding: Ints, dilation: Ints,
                            groups: int) -> Any:
    """The adjoint of conv in its input: one GEMM per group to columns, then col2im (a scatter-add per offset).

    With stride 1 it is itself a convolution (of ``g`` padded by ``dilation * (K - 1) - padding`` with the
    flipped kernel, in and out channels swapped per group), which runs twice as fast as the scatter-add.
    Ungrouped, it runs on the per-sample grids of the forward (NOTE [convolution on the padded grid]), in
    chunks of the batch, so its larger columns (O * K rows per input position where the scatter-add's hold
    C * K per output position) cost no more memory than a chunk; there it is faster than the scatter-add on
    the grid for widening layers too (the CNN's 16->32 input gradient: 2.7-4.0 ms against 4.9-6.3 ms; LeNet's
    6->16 5x5: 3.4 against 5.1-5.4 ms). A grouped layer takes it where it does not widen (O <= C).
    """
    nd = w.ndim - 2
    pads = tuple(dilation[i] * (w.shape[2 + i] - 1) - padding[i] for i in range(nd))
    if all(s == 1 for s in stride) and all(q >= 0 for q in pads) and (groups == 1 or w.shape[0] <= w.shape[1] * groups):
        o, cg = w.shape[0], w.shape[1]
        wt = w.reshape((groups, o // groups, cg) + w.shape[2:]).swapaxes(1, 2).reshape((cg * groups, o // groups)
                                                                                         + w.shape[2:])
        flip = (slice(None), slice(None)) + (slice(None, None, -1),) * nd
        return _conv_kernel(g, wt[flip], stride, pads, dilation, groups)
    if _on_grid(stride, groups) and g.size and w.size:
        return _grid_input_grad(g, w, input_size, padding, dilation)
    n, o = g.shape[0], w.shape[0]
    out = g.shape[2:]
    w2 = w.reshape(o, -1)
    c = w.shape[1] * groups
    padded = tuple(s + 2 * p for s, p in zip(input_size, padding))
    dtype = np.result_type(g.dtype, w.dtype)
    result = np.empty((n, c) + tuple(input_size), dtype=dtype)
    crop = (slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in zip(padding, input_size))
    # chunks of the batch (see _CHUNK): the columns are K times the input gradient
    for part in _chunks(n, math.prod(w.shape[1:]) * groups * math.prod(out) + c * math.prod(padded)):
        m = part.stop - part.start
        g2 = _grad_rows(g[part])
        if groups == 1:
            cols = w2.T @ g2
        else:
            cols = np.concatenate([w2[og].T @ g2[og] for og in _groups(o, groups)])
        cols = cols.reshape((c, *w.shape[2:], m) + tuple(out))  # (C, *K, chunk, *out)
        xp = np.zeros((c, m) + padded, dtype=dtype)
        for kidx in itertools.product(*(range(k) for k in w.shape[2:])):
            sl = tuple(slice(kidx[i] * dilation[i], kidx[i] * dilation[i] + stride[i] * (out[i] - 1) + 1, stride[i])
                       for i in range(nd))
            xp[(slice(None), slice(None)) + sl] += cols[(slice(None),) + kidx]
        result[part] = xp[crop].swapaxes(0, 1)
    return result


def _conv_weight_grad_kernel(x: Any, g: Any, weight_size: Ints, stride: Ints, padding: Ints, dilation: Ints,
                             groups: int) -> Any:
    """(C/g * K, N * P) @ (N * P, O/g) per group, transposed. OpenBLAS is up to 100x slower on the same product
    written (O, N * P) @ (N * P, C * K) (small outer sizes, long inner one, the right operand transposed)."""
    if groups == 1 and x.size and g.size and _few_channels(weight_size[1], weight_size[2:]):
        return _sample_weight_grad(x, g, weight_size, stride, padding, dilation)
    if _on_grid(stride, groups) and x.size and g.size:
        return _grid_weight_grad(x, g, weight_size, padding, dilation)
    total = None
    for part in _chunks(x.shape[0], (math.prod(weight_size[1:]) * groups + g.shape[1]) * math.prod(g.shape[2:])):
        cols = _columns(x[part], weight_size[2:], stride, padding, dilation, g.shape[2:])
        g2 = _grad_rows(g[part])
        if groups == 1:
            dw = (cols @ g2.T).T
        else:
            kk = cols.shape[0] // groups
            dw = np.concatenate([(cols[i * kk:(i + 1) * kk] @ g2[og].T).T
                                 for i, og in enumerate(_groups(g.shape[1], groups))])
        total = dw if total is None else total + dw
    if total is None:  # an empty batch
        return np.zeros(weight_size, dtype=x.dtype)
    return total.reshape(weight_size).astype(x.dtype, copy=False)


def _params(n: Any) -> dict[str, Any]:
    p = n.params
    return {"stride": p["stride"], "padding": p["padding"], "dilation": p["dilation"], "groups": p["groups"]}


def _conv_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    x, w = n.inputs[:2]  # (and the bias of convolution_bias)
    p = _params(n)
    gx = _CONV_IN(g, w, input_size=tuple(x._data.shape[2:]), **p) if x.requires_grad else None
    gw = _CONV_W(x, g, weight_size=tuple(w._data.shape), **p) if w.requires_grad else None
    return gx, gw


def _conv_in_vjp(gy: Tensor, n: Any) -> tuple[Any, ...]:
    g, w = n.inputs
    p = _params(n)
    return _CONV(gy, w, **p), _CONV_W(gy, g, weight_size=tuple(w._data.shape), **p)


def _conv_w_vjp(gw: Tensor, n: Any) -> tuple[Any, ...]:
    x, g = n.inputs
    p = _params(n)
    return _CONV_IN(g, gw, input_size=tuple(x._data.shape[2:]), **p), _CONV(x, gw, **p)


def _conv_bias_kernel(x: Any, w: Any, b: Any, stride: Ints, padding: Ints, dilation: Ints, groups: int) -> Any:
    """conv + bias in one output: on the grid the bias is added as the output is cropped; elsewhere in place."""
    if groups == 1 and x.size and w.size and _few_channels(x.shape[1], w.shape[2:]):
        return _sample_conv(x, w, stride, padding, dilation, bias=b)
    if _on_grid(stride, groups) and x.size and w.size:
        return _grid_conv(x, w, padding, dilation, bias=b)
    y = _conv_kernel(x, w, stride, padding, dilation, groups)
    y += b.reshape((-1,) + (1,) * (y.ndim - 2))
    return y


def _conv_bias_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    b = n.inputs[2]
    gx, gw = _conv_vjp(g, n)
    gb = g.sum([0, *range(2, g._data.ndim)]) if b.requires_grad else None
    return gx, gw, gb


def _conv_bias_jvp(ts: tuple[Any, ...], n: Any) -> Any:
    x, w, _ = n.inputs
    p = _params(n)
    parts = [_CONV(ts[0], w, **p) if ts[0] is not None else None, _CONV(x, ts[1], **p) if ts[1] is not None else None,
             ts[2].reshape((-1,) + (1,) * (x._data.ndim - 2)) if ts[2] is not None else None]
    total = None
    for t in parts:
        if t is not None:
            total = t if total is None else total + t
    return total


_CONV = Prim("convolution", _conv_kernel, _conv_vjp)
# A fused primitive (as matmul_bias): the CPU adds the bias while it writes the output, so a step neither makes
# nor keeps the unbiased output (3.1 MiB for the CNN's first layer). Devices without its kernel add the bias.
_CONV_BIAS = Prim("convolution_bias", _conv_bias_kernel, _conv_bias_vjp, _conv_bias_jvp)
_CONV_IN = Prim("convolution_input_grad", _conv_input_grad_kernel, _conv_in_vjp)
_CONV_W = Prim("convolution_weight_grad", _conv_weight_grad_kernel, _conv_w_vjp)


def _same_dtype(op: str, *ts: Tensor | None) -> None:
    names = [dtype_name(t) for t in ts if t is not None]
    if len(set(names)) > 1:
        fail("dtype_error_mismatch", op=op, what="input, weight and bias", a=names[0], b=names[1])


def _batched(input: Tensor, nd: int) -> tuple[Tensor, bool]:
    if input._data.ndim == nd + 1:
        return input.unsqueeze(0), True
    return input, False


def _same_padding(input: Tensor, weight: Tensor, stride: Ints, dilation: Ints, op: str) -> tuple[Tensor, Ints]:
    """padding='same': torch pads (total // 2) before and the rest after (stride must be 1)."""
    if any(s != 1 for s in stride):
        fail("conv_error_invalid_argument", op=op, problem="padding='same' is not supported for strided convolutions")
    nd = weight._data.ndim - 2
    totals = [dilation[i] * (weight._data.shape[2 + i] - 1) for i in range(nd)]
    if all(t % 2 == 0 for t in totals):
        return input, tuple(t // 2 for t in totals)
    pads: list[int] = []
    for t in reversed(totals):
        pads += [t // 2, t - t // 2]
    return pad(input, pads), (0,) * nd


def conv(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
         dilation: Any = 1, groups: int = 1, *, op: str = "conv2d") -> Tensor:
    """``conv{1,2,3}d``: cross-correlation of (N, C_in, *S) (or unbatched (C_in, *S)) with (C_out, C_in/g, *K)."""
    input, weight, bias = autocast_inputs(op, input, weight, bias)
    nd = weight._data.ndim - 2
    s, d = ntuple(stride, nd, "stride"), ntuple(dilation, nd, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            p: Ints = (0,) * nd
        elif padding == "same":
            check(RN.conv_shape, input._data.shape, weight._data.shape, s, (0,) * nd, d, groups, op=op) \
                if input._data.ndim not in (nd + 1, nd + 2) else None
            input, p = _same_padding(input, weight, s, d, op)
        else:
            raise ValueError(f"Invalid padding string {padding!r}, should be one of 'valid', 'same'")
    else:
        p = ntuple(padding, nd, "padding")
    shape = check(RN.conv_shape, input._data.shape, weight._data.shape, s, p, d, groups, op=op)
    _same_dtype(op, input, weight, bias)
    if not input._data.size and input._data.shape[-nd - 1] == 0:
        # torch's empty backend: no input channels, no output channels (the rule's shape), the bias unused; zero
        # gradients for every operand (the kernels have nothing to reduce over)
        zero = sum(t.sum() for t in (input, weight, bias) if t is not None) * 0
        return input.new_zeros(shape) + zero
    x, unbatched = _batched(input, nd)
    with allocating(op):  # (a padding of 2**40 passes the rule and asks NumPy for an array it cannot index)
        if bias is not None and x._device.type in _CONV_BIAS.kernels and bias._device is x._device \
                and bias._data.shape == (weight._data.shape[0],):
            out = _CONV_BIAS(x, weight, bias, stride=s, padding=p, dilation=d, groups=groups)
        else:
            out = _CONV(x, weight, stride=s, padding=p, dilation=d, groups=groups)
            if bias is not None:
                out = out + bias.reshape((-1,) + (1,) * nd)
    return out.squeeze(0) if unbatched else out


def conv_transpose(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
                   output_padding: Any = 0, groups: int = 1, dilation: Any = 1, *, op: str = "conv_transpose2d") -> Tensor:
    """``conv_transpose{1,2,3}d``: the adjoint of conv; weight (C_in, C_out/g, *K)."""
    input, weight, bias = autocast_inputs(op, input, weight, bias)
    nd = weight._data.ndim - 2
    s, p, d = ntuple(stride, nd, "stride"), ntuple(padding, nd, "padding"), ntuple(dilation, nd, "dilation")
    op_ = ntuple(output_padding, nd, "output_padding")
    shape = check(RN.conv_transpose_shape, input._data.shape, weight._data.shape, s, p, op_, d, groups, op=op)
    _same_dtype(op, input, weight, bias)
    x, unbatched = _batched(input, nd)
    with allocating(op):
        out = _CONV_IN(x, weight, input_size=tuple(shape[-nd:]), stride=s, padding=p, dilation=d, groups=groups)
    if bias is not None:
        out = out + bias.reshape((-1,) + (1,) * nd)
    return out.squeeze(0) if unbatched else out


# -- padding --------------------------------------------------------------------------------------------

def _pad_kernel(a: Any, pads: tuple[tuple[int, int], ...], value: Any) -> Any:
    crop = tuple(slice(max(-lo, 0), a.shape[i] - max(-hi, 0)) for i, (lo, hi) in enumerate(pads))
    a = a[crop]
    pos = tuple((max(lo, 0), max(hi, 0)) for lo, hi in pads)
    if not any(lo or hi for lo, hi in pos):
        return a.copy()
    return np.pad(a, pos, constant_values=value)


def _pad_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    return (_PAD(g, pads=tuple((-lo, -hi) for lo, hi in n.params["pads"]), value=0),)


_PAD = Prim("constant_pad_nd", _pad_kernel, _pad_vjp)


def _pad_pairs(input: Tensor, pad: Sequence[int], op: str) -> tuple[tuple[int, int], ...]:
    pad = [int(v) for v in pad]
    nd = input._data.ndim
    if len(pad) % 2 or len(pad) // 2 > nd:
        fail("pad_error_invalid_padding", op=op, problem="padding length must be even and at most twice the rank",
             shape=tuple(input._data.shape), pad=tuple(pad))
    pairs = [(0, 0)] * nd
    for i in range(len(pad) // 2):
        pairs[nd - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    for (lo, hi), s in zip(pairs, input._data.shape):
        if s + lo + hi < 0:
            fail("pad_error_invalid_padding", op=op, problem="the padded size would be negative",
                 shape=tuple(input._data.shape), pad=tuple(pad))
    return tuple(pairs)


def _pad_index(size: int, lo: int, hi: int, mode: str) -> Any:
    """The source index of each position of a dim of ``size`` padded by (lo, hi) in ``mode``."""
    if mode == "circular":
        start, stop = max(-lo, 0), size - max(-hi, 0)
        n = max(stop - start, 0)
        idx = start + np.arange(-max(lo, 0), n + max(hi, 0)) % n if n else np.arange(0)
    else:
        idx = np.arange(-lo, size + hi)
        if mode == "reflect":
            period = 2 * (size - 1)
            idx = np.abs(idx) % period if period else idx * 0
            idx = np.where(idx >= size, period - idx, idx)
        else:
            idx = np.clip(idx, 0, size - 1)
    return idx.astype(np.int64)


def _index_pad(input: Tensor, pairs: tuple[tuple[int, int], ...], mode: str, op: str) -> Tensor:
    """reflect/replicate/circular padding as an index_select per dim (``pad_shape`` has checked the sizes), the
    indices kept per geometry and device. A negative pad crops, as torch: reflect and replicate index from the
    uncropped input, circular wraps the crop."""
    out = input
    for dim, (lo, hi) in enumerate(pairs):
        if not lo and not hi:
            continue
        size = input._data.shape[dim]
        out = out.index_select(dim, device_table(_pad_index, (size, lo, hi, mode), input.device))
    return out


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Tensor:
    """``F.pad``: pairs of (before, after) from the last dim backwards; constant, reflect, replicate, circular."""
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"pad: unknown padding mode {mode!r}")
    # The rule the mypy plugin runs on F.pad and the padding layers: lengths, the input's rank per mode, sizes.
    check(RN.pad_shape, tuple(input._data.shape), tuple(int(v) for v in pad), mode, op="pad")
    pairs = _pad_pairs(input, pad, "pad")
    if mode == "constant":
        v = 0 if value is None else value
        return _PAD(input, pads=pairs, value=v)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"pad: unknown padding mode {mode!r}")
    nd = sum(1 for lo, hi in pairs if lo or hi)
    if input._data.ndim < 2 or nd > input._data.ndim - 1:
        fail("pad_error_invalid_padding", op="pad", problem=f"{mode} padding only pads the dims after the channel dim",
             shape=tuple(input._data.shape), pad=tuple(pad))
    out = _index_pad(input, pairs, mode, "pad")
    # torch's reflect and replicate gradients take the input (NOTE [formal input of a gradient]); circular's is a
    # composite there too, and does not
    return tie_gradient(out, input) if mode != "circular" else out
