"""Pooling (max, average, adaptive) and interpolation: composites over the convolution kernels and the core ops.
The shapes are checked by ``_rules.nn`` before any kernel runs."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from .._engine.primitives import PRIMS, Prim
from .._errors import fail
from .._grad_mode import no_grad as _no_grad
from .._rules import dtypes as RD
from .._rules import nn as RN
from .._tensor import Tensor
from ._common import autocast_inputs, check, device_table
from .conversion import where as _where
from .convolution import _PAD, Ints, _batched, ntuple
from .scatter import take_along

# -- pooling --------------------------------------------------------------------------------------------

def _check_ints(value: Any, name: str, op: str, none_ok: bool = False) -> None:
    """torch's ``int[n]`` parser: an int or a sequence of ints (a bool, float or NaN is a ``TypeError``, not 1)."""
    for v in value if isinstance(value, (tuple, list)) else (value,):
        if not (isinstance(v, (int, np.integer)) and not isinstance(v, bool)) and not (none_ok and v is None):
            fail("argument_error_refused", op=op, problem=f"argument '{name}' (position 2) must be tuple of ints, "
                                                          f"not {type(v).__name__}")


def _nonfinite(input: Tensor) -> bool:
    """Whether a host float input holds a NaN or an infinity (its sum is then not finite; a finite input whose sum
    overflows only takes the slower exact path). The matmul pools below would spread one by 0 * NaN into every
    window of its rows; the device keeps that limitation (docs/compatibility.md)."""
    a = input._data
    return isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.size > 0 and not np.isfinite(np.add.reduce(a, None))


def _nonfinite_pooled(pool: Any, input: Tensor) -> Tensor:
    """A linear pool (non-negative weights) of an input holding NaN or inf as torch's window loops give it: the
    finite values pooled, then NaN in each window that holds a NaN or both infinities, else the infinity it holds."""
    zero = input.new_zeros(())
    out: Tensor = pool(_where(input.isfinite(), input, zero))
    with _no_grad():
        def hit(mask: Tensor) -> Tensor:
            return pool(mask.to(input.dtype)) != 0

        nan, pos, neg = hit(input.isnan()), hit(input.isposinf()), hit(input.isneginf())
    out = _where(pos, zero + float("inf"), out)
    out = _where(neg, zero - float("inf"), out)
    return _where(nan.logical_or(pos.logical_and(neg)), zero + float("nan"), out)


# NOTE [non-finite pooling gradients]: the gradients of the average pools and of linear interpolation are the
# adjoint products (the band, bin or weight matrices transposed), which would spread an inf or NaN of the
# output's gradient through their zero weights to every input element of its rows. ``_GRAD_GUARD`` ends such an
# op on the host when its input requires grad: an identity on the values whose vjp hands the products only the
# finite part of the gradient (the rest set to 0) and gives the input, as a second gradient that the engine
# adds, inf, -inf or NaN at each element a window (or tap) of one reaches (0 elsewhere): torch's loops, which
# multiply interpolation's zero-weight taps too (NaN there). A finite gradient passes through unchanged, and the
# second is not made.

def _taps(w: tuple[Any, ...]) -> tuple[Any, Any]:
    """The (out, padded size) tap counts of one pooled dim, all taps and those of a nonzero weight: a box window
    (padded size, out, kernel, stride), an adaptive bin (size, out) or linear interpolation's two taps (size,
    out, align_corners, scale, dtype), whose zero weights torch multiplies too (``0 * inf`` is NaN there)."""
    if len(w) == 4:
        m = _box_matrix(w[0], w[1], w[2], w[3])
        return m, m
    if len(w) == 2:
        m = (_adaptive_matrix(w[0], w[1], np.float64) != 0).astype(np.float64)
        return m, m
    i0, i1, w0, w1 = _linear_taps(*w)
    rows = np.arange(w[1])
    every, nonzero = np.zeros((w[1], w[0])), np.zeros((w[1], w[0]))
    for idx, wt in ((i0, w0), (i1, w1)):
        np.add.at(every, (rows, idx), 1.0)
        np.add.at(nonzero, (rows, idx), (wt != 0).astype(np.float64))
    return every, nonzero


def _spread(mask: Any, windows: tuple[tuple[Any, ...], ...], cut: tuple[tuple[int, int], ...]) -> tuple[Any, Any]:
    """For each input element, how many (output, tap) pairs of a marked output reach it (``mask`` through the
    transposed tap counts of the pooled trailing dims, ``_taps``), and how many of them with a nonzero weight in
    every dim; the padding (``cut``: start, size) cut."""
    nd = len(windows)
    every = nonzero = mask.astype(np.float64)
    for i, w in enumerate(windows):
        m, m_nz = _taps(w)
        dim = every.ndim - nd + i
        every = np.moveaxis(np.moveaxis(every, dim, -1) @ m, -1, dim)
        nonzero = np.moveaxis(np.moveaxis(nonzero, dim, -1) @ m_nz, -1, dim)
    sl = (Ellipsis,) + tuple(slice(lo, lo + n) for lo, n in cut)
    return every[sl], nonzero[sl]


def _grad_guard_kernel(pooled: Any, input: Any, windows: tuple[tuple[Any, ...], ...], cut: tuple[tuple[int, int], ...],
                       flip: bool) -> Any:
    return pooled


def _grad_guard_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    a = g._data
    if a.dtype.kind != "f" or np.isfinite(a).all():
        return g, None
    p = n.params
    (pos, pos_nz), (neg, neg_nz) = (_spread(np.isposinf(a), p["windows"], p["cut"]),
                                    _spread(np.isneginf(a), p["windows"], p["cut"]))
    if p["flip"]:  # a negative divisor_override turns +inf into -inf
        (pos, pos_nz), (neg, neg_nz) = (neg, neg_nz), (pos, pos_nz)
    extra = np.zeros(pos.shape, a.dtype)
    extra[pos != 0] = np.inf
    extra[neg != 0] = -np.inf
    # NaN: a NaN gradient, both infinities, or an infinity through a zero weight
    nan = (_spread(np.isnan(a), p["windows"], p["cut"])[0] != 0) | ((pos != 0) & (neg != 0))
    extra[nan | (pos != pos_nz) | (neg != neg_nz)] = np.nan
    from .creation import tensor

    return _where(g.isfinite(), g, g.new_zeros(())), tensor(extra, device=g.device)


_GRAD_GUARD = Prim("pool_grad_guard", _grad_guard_kernel, _grad_guard_vjp, lambda ts, n: ts[0])


def _guarded(pooled: Tensor, input: Tensor, windows: tuple[tuple[Any, ...], ...], cut: tuple[tuple[int, int], ...],
             label: str, flip: bool = False) -> Tensor:
    """``pooled`` behind ``_GRAD_GUARD`` where its gradient is computed on the host (NOTE [non-finite pooling
    gradients]), its node named as torch's (``label``); as it is elsewhere, where the limitation stays
    (docs/compatibility.md)."""
    if not pooled.requires_grad or input._device.type not in _GRAD_GUARD.kernels:
        return pooled
    out = _GRAD_GUARD(pooled, input, windows=windows, cut=cut, flip=flip)
    if out._grad_fn is not None:
        out._grad_fn.label = label
    return out


def _pool_args(input: Tensor, nd: int, kernel_size: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: bool,
               op: str) -> tuple[Ints, Ints, Ints, Ints, tuple[int, ...]]:
    _check_ints(kernel_size, "kernel_size", op)
    k = ntuple(kernel_size, nd, "kernel_size")
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) else ntuple(stride, nd, "stride")
    p, d = ntuple(padding, nd, "padding"), ntuple(dilation, nd, "dilation")
    shape = check(RN.pool_shape, tuple(input._data.shape), k, s, p, d, ceil_mode, op=op)
    return k, s, p, d, tuple(shape)


def _extra(size: int, out: int, k: int, s: int, p: int, d: int) -> int:
    """Right padding that ceil_mode needs beyond ``p`` so that the last window fits."""
    return max(0, (out - 1) * s + d * (k - 1) + 1 - (size + 2 * p))


def _window_index(psp: Ints, out: Ints, k: Ints, s: Ints, d: Ints) -> Any:
    """(prod(out), prod(k)) flat offsets into the padded spatial dims ``psp`` of every window's elements."""
    nd = len(k)
    og = np.meshgrid(*(np.arange(o) for o in out), indexing="ij")
    kg = np.meshgrid(*(np.arange(kk) for kk in k), indexing="ij")
    coords = [og[i].reshape(-1, 1) * s[i] + kg[i].reshape(1, -1) * d[i] for i in range(nd)]
    return np.ravel_multi_index(tuple(coords), psp).astype(np.int64)


# NOTE [max pooling on the CPU]: three primitives over strided views of the (once) padded input, one slice per
# kernel offset (``xp[..., j*d : j*d + s*(out-1) + 1 : s]``, shaped like the output), so that no window is copied
# and no index table is made. The forward is prod(K) ``np.maximum`` passes over output-sized slices (NaN
# propagates, as torch's). Its gradient does not save an argmax: ``max_pool_backward`` recomputes which element
# each output took (torch's choice: the first maximum in window order, the last NaN of a NaN window, never a
# padded element) from the input, and writes the gradient through the same slices: plain
# stores where the windows do not overlap (kernel <= stride), adds where they do. ``max_pool_select`` reads a
# tensor at the same elements; the two are each other's adjoints, so double backward and forward mode are
# linear in the cotangent/tangent. Measured on the CNN's first pooling (64x16x28x28, k=2, one thread, median of
# interleaved rounds): forward 0.75 ms, backward 5.3 ms, against torch's 5.8 ms forward (it computes the indices
# there) and 7.5 ms both; the gather through a window-index table it replaces took 2.7x torch's time.

def _pool_geometry(sp: Ints, out: Ints, k: Ints, s: Ints, p: Ints, d: Ints) -> tuple[Ints, list[tuple[slice, ...]]]:
    """The padded spatial size (``p`` before, ``p`` plus ceil_mode's extra after) and one slice per kernel offset,
    in window order, each picking that offset's element of every window."""
    nd = len(k)
    psp = tuple(sp[i] + 2 * p[i] + _extra(sp[i], out[i], k[i], s[i], p[i], d[i]) for i in range(nd))
    slices = [(slice(None), slice(None)) + tuple(slice(j[i] * d[i], j[i] * d[i] + s[i] * (out[i] - 1) + 1, s[i])
                                                 for i in range(nd))
              for j in itertools.product(*(range(kk) for kk in k))]
    return psp, slices


def _padded(x: Any, psp: Ints, p: Ints, fill: Any) -> Any:
    """``x`` in a buffer of spatial size ``psp`` filled with ``fill`` (the input itself when nothing pads)."""
    if tuple(x.shape[2:]) == psp:
        return x
    xp = np.full(x.shape[:2] + psp, fill, dtype=x.dtype)
    xp[(slice(None), slice(None)) + tuple(slice(q, q + n) for q, n in zip(p, x.shape[2:]))] = x
    return xp


def _low(dtype: Any) -> Any:
    """The padding value that never wins a window: -inf, or the integer type's least value."""
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _max_pool_kernel(x: Any, kernel: Ints, stride: Ints, padding: Ints, dilation: Ints, out: Ints) -> Any:
    """The maximum over a window is taken one spatial dim at a time, outermost first: the first pass reads whole
    rows and halves (for k=2) what the next reads through its strided slices. Measured on the CNN's first pooling
    (64x16x28x28, k=2, one thread, CPU time, medians): 0.72 ms against 1.19 ms for one pass per kernel offset
    over output-sized strided slices; the 14x14 one 0.36 against 0.64 ms."""
    psp, _ = _pool_geometry(x.shape[2:], out, kernel, stride, padding, dilation)
    y = _padded(x, psp, padding, _low(x.dtype))
    fresh = y is not x
    for i, (k, s, d, o) in enumerate(zip(kernel, stride, dilation, out)):
        lead = (slice(None),) * (2 + i)
        sl = [lead + (slice(j * d, j * d + s * (o - 1) + 1, s),) for j in range(k)]
        if k == 1:
            y = y[sl[0]]
            continue
        t = np.maximum(y[sl[0]], y[sl[1]])
        for j in range(2, k):
            np.maximum(t, y[sl[j]], out=t)
        y, fresh = t, True
    return y if fresh else y.copy()


def _choices(x: Any, y: Any, kernel: Ints, stride: Ints, padding: Ints, dilation: Ints) -> list[Any]:
    """Per kernel offset, a bool mask (output-shaped) of the outputs that took their value from that offset:
    exactly one offset per output."""
    out = y.shape[2:]
    psp, slices = _pool_geometry(x.shape[2:], out, kernel, stride, padding, dilation)
    xp = _padded(x, psp, padding, _low(x.dtype))
    # a window whose real elements all equal the padding value must take the first real one, as torch's
    valid = None if xp is x or not (y == _low(x.dtype)).any() else _padded(np.ones(x.shape, bool), psp, padding, False)
    free = np.empty(y.shape, bool)  # the outputs whose element is not chosen yet
    masks = []
    last = len(slices) - 1
    for j, sl in enumerate(slices):
        m = np.equal(xp[sl], y)
        if valid is not None:
            m &= valid[sl]
        if j == 0:
            np.logical_not(m, out=free)
        else:
            m &= free
            if j < last:
                free ^= m
        masks.append(m)
    if y.dtype.kind == "f":
        nan = np.isnan(y)
        if nan.any():  # torch's loop keeps the last NaN of a window
            seen = np.zeros(y.shape, bool)
            for j in reversed(range(len(slices))):
                m = np.isnan(xp[slices[j]]) & nan & ~seen
                seen |= m
                masks[j] = np.where(nan, m, masks[j])
    return masks


def _disjoint(kernel: Ints, stride: Ints, dilation: Ints) -> bool:
    """Whether no element belongs to two windows (then the gradient is stored, not added)."""
    return all(k == 1 or (d == 1 and k <= s) for k, s, d in zip(kernel, stride, dilation))


def _max_pool_backward_kernel(g: Any, x: Any, kernel: Ints, stride: Ints, padding: Ints, dilation: Ints,
                              out: Ints) -> Any:
    y = _max_pool_kernel(x, kernel, stride, padding, dilation, out)
    masks = _choices(x, y, kernel, stride, padding, dilation)
    psp, slices = _pool_geometry(x.shape[2:], out, kernel, stride, padding, dilation)
    g = g.astype(x.dtype, copy=False)
    disjoint = _disjoint(kernel, stride, dilation)
    # every element written exactly once: no zero fill needed
    tiled = disjoint and all(k == s and o * s == n for k, s, o, n in zip(kernel, stride, out, psp))
    dx = np.empty(x.shape[:2] + psp, dtype=x.dtype) if tiled else np.zeros(x.shape[:2] + psp, dtype=x.dtype)
    # inf * False is NaN: a gradient with an inf or NaN is selected, not multiplied (torch's scatter leaves every
    # element no window took at 0); one check over the output-sized gradient keeps the multiply for the rest
    finite = g.dtype.kind != "f" or bool(np.isfinite(g).all())
    for sl, m in zip(slices, masks):
        if disjoint:
            if finite:
                np.multiply(m, g, out=dx[sl])
            else:
                dx[sl] = np.where(m, g, 0)
        else:
            dx[sl] += m * g if finite else np.where(m, g, 0)
    if dx.shape[2:] == x.shape[2:]:
        return dx
    return dx[(slice(None), slice(None)) + tuple(slice(q, q + n) for q, n in zip(padding, x.shape[2:]))]


def _max_pool_select_kernel(a: Any, x: Any, kernel: Ints, stride: Ints, padding: Ints, dilation: Ints,
                            out: Ints) -> Any:
    """``a`` (input-shaped) read at the elements the pooling took: the adjoint of the backward."""
    y = _max_pool_kernel(x, kernel, stride, padding, dilation, out)
    masks = _choices(x, y, kernel, stride, padding, dilation)
    r = np.zeros(y.shape, dtype=a.dtype)
    psp, slices = _pool_geometry(x.shape[2:], out, kernel, stride, padding, dilation)
    ap = _padded(a, psp, padding, 0)
    for sl, m in zip(slices, masks):
        np.copyto(r, ap[sl], where=m)
    return r


def _max_pool_indices_kernel(x: Any, y: Any, kernel: Ints, stride: Ints, padding: Ints, dilation: Ints,
                             out: Ints) -> Any:
    """torch's ``return_indices``: the flat offset of the chosen element in the unpadded spatial dims."""
    masks = _choices(x, y, kernel, stride, padding, dilation)
    sp = x.shape[2:]
    nd = len(sp)
    idx = np.zeros(y.shape, dtype=np.int64)
    for j, m in zip(itertools.product(*(range(kk) for kk in kernel)), masks):
        pos = np.zeros((1, 1) + (1,) * nd, dtype=np.int64)
        for i in range(nd):
            along = np.arange(out[i]) * stride[i] + j[i] * dilation[i] - padding[i]
            pos = pos * sp[i] + along.reshape((1, 1) + tuple(-1 if q == i else 1 for q in range(nd)))
        np.copyto(idx, pos, where=m)
    return idx


def _geom(n: Any) -> dict[str, Any]:
    return {key: n.params[key] for key in ("kernel", "stride", "padding", "dilation", "out")}


# The gradient recomputes the output from the input (one np.maximum pass per offset, a fifth of the backward)
# rather than saving it: torch saves the input and the indices, so the output may be changed in place.

def _max_pool_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    return (_MAX_POOL_BACKWARD(g, n.inputs[0].detach(), **_geom(n)),)


def _max_pool_backward_vjp(gg: Tensor, n: Any) -> tuple[Any, ...]:
    return _MAX_POOL_SELECT(gg, n.inputs[1], **_geom(n)), None


def _max_pool_select_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    return _MAX_POOL_BACKWARD(g, n.inputs[1], **_geom(n)), None


def _max_pool_jvp(ts: tuple[Any, ...], n: Any) -> Any:
    return _MAX_POOL_SELECT(ts[0], n.inputs[0].detach(), **_geom(n))


def _linear_jvp(prim: str) -> Any:
    """The tangent of the backward and the select primitives, linear in their first input (the others constant)."""
    def rule(ts: tuple[Any, ...], n: Any) -> Any:
        return None if ts[0] is None else PRIMS[prim](ts[0], *n.inputs[1:], **_geom(n))

    return rule


_MAX_POOL = Prim("max_pool", _max_pool_kernel, _max_pool_vjp, _max_pool_jvp)
_MAX_POOL_BACKWARD = Prim("max_pool_backward", _max_pool_backward_kernel, _max_pool_backward_vjp,
                          _linear_jvp("max_pool_backward"))
_MAX_POOL_SELECT = Prim("max_pool_select", _max_pool_select_kernel, _max_pool_select_vjp,
                        _linear_jvp("max_pool_select"))
_MAX_POOL_INDICES = Prim("max_pool_indices", _max_pool_indices_kernel)  # integer output: no gradient


def max_pool(input: Tensor, nd: int, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
             ceil_mode: bool = False, return_indices: bool = False, *, op: str = "max_pool2d") -> Any:
    """On the CPU, the strided-view primitives of NOTE [max pooling on the CPU]. Elsewhere the windows are
    gathered (``take_along_dim``, offsets made on the host from the shapes alone, on the input's device), the
    first maximum of each picked by argmax; the gradient goes to that element only."""
    from .creation import tensor

    input = autocast_inputs(op, input)[0]  # the 3-D pool is on autocast's float32 list

    k, s, p, d, shape = _pool_args(input, nd, kernel_size, stride, padding, dilation, ceil_mode, op)
    x, unbatched = _batched(input, nd)
    n, c, sp = x._data.shape[0], x._data.shape[1], x._data.shape[2:]
    out = shape[-nd:]
    if x._device.type in _MAX_POOL.kernels and x._data.dtype.kind in "fiu" and x._data.size and math.prod(out):
        geom = {"kernel": k, "stride": s, "padding": p, "dilation": d, "out": tuple(out)}
        values = _MAX_POOL(x, **geom)
        if return_indices:
            idx = _MAX_POOL_INDICES(x.detach(), values.detach(), **geom)
            return (values.squeeze(0), idx.squeeze(0)) if unbatched else (values, idx)
        return values.squeeze(0) if unbatched else values
    extra = [_extra(sp[i], out[i], k[i], s[i], p[i], d[i]) for i in range(nd)]
    if x.is_floating_point():
        low: Any = -np.inf
    else:
        low = int(np.iinfo(x._data.dtype).min)
        if x.device.type != "cpu":
            low = max(low, -(2**31))  # integers are 32-bit on the device
    pairs = ((0, 0), (0, 0)) + tuple((p[i], p[i] + extra[i]) for i in range(nd))
    xp = _PAD(x, pads=pairs, value=low) if any(lo or hi for lo, hi in pairs) else x
    psp = tuple(xp._data.shape[2:])
    m, kk = math.prod(out), math.prod(k)
    flat_x = xp.reshape(n, c, math.prod(psp))  # the size given: -1 cannot be inferred when the batch is empty
    if m * kk == 0 or n * c == 0:
        values = flat_x.new_zeros((n, c) + tuple(out))
        flat = tensor(np.zeros((n, c, m), dtype=np.int64), device=x.device)
    else:
        win = device_table(_window_index, (psp, tuple(out), k, s, d), x.device).reshape(1, 1, m, kk).expand(n, c, m, kk)
        with _no_grad():
            arg = take_along(flat_x.detach(), win.reshape(n, c, m * kk), 2).reshape(n, c, m, kk).argmax(-1,
                                                                                                         keepdim=True)
        flat = take_along(win, arg, 3).reshape(n, c, m)
        values = take_along(flat_x, flat, 2).reshape((n, c) + tuple(out))
    if unbatched:
        values = values.squeeze(0)
    if not return_indices:
        return values
    idx = device_table(_unpadded_offsets, (psp, tuple(p), tuple(sp)), x.device).index_select(0, flat.reshape(-1))
    idx = idx.reshape((n, c) + tuple(out))
    return values, idx.squeeze(0) if unbatched else idx


def _unpadded_offsets(psp: Ints, p: Ints, sp: Ints) -> Any:
    """Each padded flat offset's flat offset in the unpadded spatial dims (max_pool's return_indices)."""
    grids = np.meshgrid(*(np.arange(q) - p[i] for i, q in enumerate(psp)), indexing="ij")
    inside = np.ravel_multi_index(tuple(np.clip(g, 0, max(sp[i] - 1, 0)) for i, g in enumerate(grids)), sp,
                                  mode="clip").reshape(-1)
    return inside.astype(np.int64)


def _box_matrix(size: int, out: int, k: int, s: int) -> Any:
    """(out, size) 0/1 matrix whose row o marks the window [o s, o s + k) of a padded dim of ``size``."""
    m = np.zeros((out, size))
    for o in range(out):
        m[o, o * s: min(o * s + k, size)] = 1.0
    return m


def _band(size: int, out: int, k: int, s: int, dtype: Any) -> Any:
    """(size, out): the transposed box matrix, the right operand of a window sum."""
    return _box_matrix(size, out, k, s).T.astype(dtype)


def _window_counts(sp: Ints, p: Ints, extra: Ints, out: Ints, k: Ints, s: Ints, count_include_pad: bool,
                   dtype: Any) -> Any:
    """The number of elements each average-pooling window divides by (with or without the padding)."""
    counts = np.ones((), dtype=np.float64)
    for i in range(len(k)):
        ind = np.zeros(sp[i] + 2 * p[i] + extra[i])
        ind[0 if count_include_pad else p[i]: sp[i] + (2 if count_include_pad else 1) * p[i]] = 1
        c_i = _box_matrix(ind.shape[0], out[i], k[i], s[i]) @ ind
        counts = np.multiply.outer(counts, c_i)
    return counts.astype(dtype)


def avg_pool(input: Tensor, nd: int, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
             count_include_pad: bool = True, divisor_override: int | None = None, *, op: str = "avg_pool2d") -> Tensor:
    """Separable window sums (one matmul per pooled dim with a 0/1 band matrix made on the input's device),
    divided by the window sizes (counted on the host from the shapes alone)."""
    input = autocast_inputs(op, input)[0]
    k, s, p, _, shape = _pool_args(input, nd, kernel_size, stride, padding, 1, ceil_mode, op)
    check(RD.check_kind, op, input.dtype.name)  # floating point, and int64 (below)
    if not input.is_floating_point():
        # torch's int64 kernel divides the window's integer sum by the count in integers (toward zero): the
        # float64 mean truncates to the same integer while the sums stay below 2**53
        return avg_pool(input.double(), nd, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override, op=op).trunc().long()
    if _nonfinite(input):
        return _nonfinite_pooled(lambda t: avg_pool(t, nd, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                                    divisor_override, op=op), input)
    x, unbatched = _batched(input, nd)
    sp = x._data.shape[2:]
    out = shape[-nd:]
    extra = [_extra(sp[i], out[i], k[i], s[i], p[i], 1) for i in range(nd)]
    pairs = ((0, 0), (0, 0)) + tuple((p[i], p[i] + extra[i]) for i in range(nd))
    xp = _PAD(x, pads=pairs, value=0) if any(lo or hi for lo, hi in pairs) else x
    summed = xp
    for i in range(nd):
        dim = 2 + i
        band = device_table(_band, (xp._data.shape[dim], out[i], k[i], s[i], x._data.dtype), x.device)
        summed = summed.movedim(dim, -1).matmul(band).movedim(-1, dim)
    if divisor_override:
        result = summed / divisor_override
    else:
        geometry = (tuple(sp), tuple(p), tuple(extra), tuple(out), tuple(k), tuple(s), count_include_pad)
        result = summed / device_table(_window_counts, (*geometry, x._data.dtype), x.device)
    result = result.squeeze(0) if unbatched else result
    windows = tuple((xp._data.shape[2 + i], out[i], k[i], s[i]) for i in range(nd))
    label = f"AvgPool{nd}DBackward0" if nd > 1 else "SqueezeBackward1"  # (torch's 1-D pooling runs as 2-D)
    return _guarded(result, input, windows, tuple(zip(p, sp)), label, bool(divisor_override and divisor_override < 0))


def _adaptive_matrix(size: int, out: int, dtype: Any) -> Any:
    m = np.zeros((out, size), dtype=dtype)
    for i in range(out):
        lo, hi = (i * size) // out, -(-((i + 1) * size) // out)
        if hi > lo:
            m[i, lo:hi] = 1.0 / (hi - lo)
    return m


def adaptive_avg_pool(input: Tensor, nd: int, output_size: Any, *, op: str = "adaptive_avg_pool2d") -> Tensor:
    """Average over the bins [floor(i L / O), ceil((i+1) L / O)); separable, so one matmul per dim."""
    input = autocast_inputs(op, input)[0]
    # the layers come here without nn.functional's check
    check(RD.check_kind, op, input.dtype.name, empty=not input._data.size)
    _check_ints(output_size, "output_size", op, none_ok=True)
    sizes = (output_size,) * nd if isinstance(output_size, int) or output_size is None else tuple(output_size)
    shape = check(RN.adaptive_pool_shape, tuple(input._data.shape), sizes, op=op)
    if not input._data.size and not input.is_floating_point():  # (torch: any dtype when there is nothing to do)
        return input.reshape(shape)
    if _nonfinite(input):
        return _nonfinite_pooled(lambda t: adaptive_avg_pool(t, nd, output_size, op=op), input)
    out = input
    nd_in = input._data.ndim
    for i in range(nd):
        dim = nd_in - nd + i
        m = device_table(_adaptive_matrix, (input._data.shape[dim], shape[dim], input._data.dtype), input.device)
        out = out.movedim(dim, -1).matmul(m.t()).movedim(-1, dim)
    if any(s == 0 for s in input._data.shape[nd_in - nd:]):
        out = out * float("nan")  # torch: the mean of an empty bin is NaN
    sizes_in = input._data.shape[nd_in - nd:]
    windows = tuple((n, shape[nd_in - nd + i]) for i, n in enumerate(sizes_in))
    # torch's node names: a 1-D pool runs as 2-D, and an output of one element per map is a mean
    label = ("SqueezeBackward1" if nd == 1 else "MeanBackward1" if all(w[1] == 1 for w in windows)
             else f"AdaptiveAvgPool{nd}DBackward0")
    return _guarded(out, input, windows, tuple((0, n) for n in sizes_in), label)


def adaptive_max_pool(input: Tensor, nd: int, output_size: Any, *, op: str = "adaptive_max_pool2d") -> Tensor:
    from .joining import stack

    input = autocast_inputs(op, input)[0]
    check(RD.check_kind, op, input.dtype.name)
    _check_ints(output_size, "output_size", op, none_ok=True)
    sizes = (output_size,) * nd if isinstance(output_size, int) or output_size is None else tuple(output_size)
    shape = check(RN.adaptive_pool_shape, tuple(input._data.shape), sizes, op=op, nonempty=True)
    nd_in = input._data.ndim
    out = input
    for i in range(nd):
        dim = nd_in - nd + i
        size, o = input._data.shape[dim], shape[dim]
        parts = [out.narrow(dim, (j * size) // o, -(-((j + 1) * size) // o) - (j * size) // o).amax(dim) for j in range(o)]
        out = stack(parts, dim)
    return out


# -- interpolation --------------------------------------------------------------------------------------

def _linear_taps(size: int, out: int, align_corners: bool, scale: float | None, dtype: Any) -> tuple[Any, Any, Any, Any]:
    """Each output position's two source indices (the second clamped to the last) and their weights, computed as
    torch's ``compute_source_index_and_lambda`` does, in its arithmetic type (float32 below float64): a weight that
    rounds to a tiny nonzero there instead of to 0 decides whether an inf beside it gives inf or NaN."""
    if size == out:  # torch copies: each output reads its own element only
        idx = np.arange(out, dtype=np.int64)
        return idx, idx, np.ones(out, dtype), np.zeros(out, dtype)
    op: Any = np.float64 if np.dtype(dtype) == np.float64 else np.float32
    if align_corners:
        ratio: Any = op(size - 1) / op(out - 1) if out > 1 else op(0)
        src = ratio * np.arange(out).astype(op)
    else:
        ratio = op(scale) if scale is not None and scale > 0 else op(size) / op(out)
        i: Any = np.arange(out).astype(op) + op(0.5)
        # float32: ratio * (i + 0.5) - 0.5 rounded once, as torch 2.13's float32 weights come out (a fused
        # multiply-add: rounding the product first turns 1/3 * 1.5 - 0.5 into 0 where torch's weight is 3e-8);
        # its float64 weights round the product first
        src = (np.float64(ratio) * i.astype(np.float64) - 0.5).astype(op) if op is np.float32 else ratio * i - op(0.5)
        src = np.maximum(src, op(0))
    i0 = np.minimum(np.floor(src).astype(np.int64), size - 1)
    lam = np.clip(src - i0.astype(op), op(0), op(1)).astype(op)
    i1 = i0 + (i0 < size - 1)
    return i0, i1, (op(1) - lam).astype(dtype), lam.astype(dtype)


def _linear_matrix(size: int, out: int, align_corners: bool, scale: float | None, dtype: Any) -> Any:
    i0, i1, w0, w1 = _linear_taps(size, out, align_corners, scale, dtype)
    m = np.zeros((out, size), dtype=dtype)
    np.add.at(m, (np.arange(out), i0), w0)
    np.add.at(m, (np.arange(out), i1), w1)
    return m


def _linear_tap_table(size: int, out: int, align_corners: bool, scale: float | None, which: int, dtype: Any) -> Any:
    """One of ``_linear_taps``' tables alone (``which``: 0 and 1 the indices, 2 and 3 their weights), for
    ``device_table``."""
    return _linear_taps(size, out, align_corners, scale, dtype)[which]


def _linear_resize(x: Tensor, dim: int, size: int, out: int, align_corners: bool, scale: float | None) -> Tensor:
    """The resize of one dim as two reads and two weights per output (torch's loop), for an input holding NaN or
    inf: the matrix product would multiply them by the zero weights of every other output of the row."""
    def table(which: int) -> Tensor:
        return device_table(_linear_tap_table, (size, out, align_corners, scale, which, x._data.dtype), x.device)

    shape = [1] * x._data.ndim
    shape[dim] = out
    w0, w1 = table(2).reshape(shape), table(3).reshape(shape)
    return x.index_select(dim, table(0)) * w0 + x.index_select(dim, table(1)) * w1


def _nearest_index(size: int, out: int, r: float, exact: bool) -> Any:
    """The source of each output position of 'nearest' (floor(i r)) or 'nearest-exact' (floor((i + 0.5) r))."""
    pos = (np.arange(out) + 0.5) if exact else np.arange(out)
    return np.minimum(np.floor(pos * r).astype(np.int64), size - 1)


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None) -> Tensor:
    """``F.interpolate`` for 'nearest', 'nearest-exact', 'linear', 'bilinear', 'trilinear' (separable)."""

    def as_tuple(v: Any) -> Any:
        return tuple(v) if isinstance(v, list) else v

    # the one rule of F.interpolate and nn.Upsample: size or scale_factor, their spatial counts, the mode's ranks
    out = check(RN.interpolate_shape, tuple(input._data.shape), as_tuple(size), as_tuple(scale_factor), mode,
                op="interpolate")[2:]
    check(RD.check_kind, "interpolate", input.dtype.name, kind=RD.INTERPOLATE_KINDS.get(mode))
    if input._data.dtype.kind == "u" and mode in ("bilinear", "bicubic"):
        # torch's uint8 kernels weigh in fixed point and round; the float32 result rounded comes within 1
        return interpolate(input.float(), size, scale_factor, mode, align_corners, recompute_scale_factor
                           ).round().clamp(0, 255).to(input.dtype)
    nd = input._data.ndim - 2
    sp = input._data.shape[2:]
    scales: list[float | None] = [None] * nd
    if size is None:
        sf = (float(scale_factor),) * nd if isinstance(scale_factor, (int, float)) else tuple(map(float, scale_factor))
        scales = [None if recompute_scale_factor else 1.0 / sf[i] for i in range(nd)]
    result = input
    nonfinite = _nonfinite(input)
    for i in range(nd):
        dim = 2 + i
        sc = scales[i]
        r = sc if sc is not None else sp[i] / out[i]
        if mode in ("nearest", "nearest-exact"):
            src = device_table(_nearest_index, (sp[i], out[i], r, mode == "nearest-exact"), input.device)
            result = result.index_select(dim, src)
        elif mode in ("linear", "bilinear", "trilinear"):
            sc = None if align_corners else scales[i]
            if nonfinite:
                result = _linear_resize(result, dim, sp[i], out[i], bool(align_corners), sc)
                continue
            m = device_table(_linear_matrix, (sp[i], out[i], bool(align_corners), sc, input._data.dtype), input.device)
            result = result.movedim(dim, -1).matmul(m.t()).movedim(-1, dim)
        else:
            raise NotImplementedError(f"interpolate: mode {mode!r} is not supported")
    if mode in _UPSAMPLE_NODES:
        windows = tuple((sp[i], out[i], bool(align_corners), None if align_corners else scales[i], input._data.dtype)
                        for i in range(nd))
        result = _guarded(result, input, windows, tuple((0, n) for n in sp), _UPSAMPLE_NODES[mode])
    return result


_UPSAMPLE_NODES = {"linear": "UpsampleLinear1DBackward0", "bilinear": "UpsampleBilinear2DBackward0",
                   "trilinear": "UpsampleTrilinear3DBackward0"}
