"""Pooling (max, average, adaptive) and interpolation: composites over the convolution kernels and the core ops.
The shapes are checked by ``_rules.nn`` before any kernel runs."""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any

import numpy as np

from .._engine.primitives import PRIMS, Prim
from .._errors import fail
from .._grad_mode import STATE
from .._grad_mode import no_grad as _no_grad
from .._rules import dtypes as RD
from .._rules import nn as RN
from .._tensor import Tensor
from ._common import allocating, autocast_inputs, check, device_table, formal_input, tie_gradient
from .conversion import where as _where
from .convolution import _PAD, Ints, _batched, ntuple
from .creation import arange
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
    (padded size, out, kernel, stride), an adaptive bin (size, out) or interpolation's taps (size, out,
    align_corners, scale, dtype, kind: ``_interp_taps``), whose zero weights torch multiplies too (``0 * inf`` is
    NaN there)."""
    if len(w) == 4:
        m = _box_matrix(w[0], w[1], w[2], w[3])
        return m, m
    if len(w) == 2:
        m = (_adaptive_matrix(w[0], w[1], np.float64) != 0).astype(np.float64)
        return m, m
    idx, wt, valid = _interp_taps(*w)
    rows = np.broadcast_to(np.arange(w[1])[:, None], idx.shape)
    every, nonzero = np.zeros((w[1], w[0])), np.zeros((w[1], w[0]))
    np.add.at(every, (rows[valid], idx[valid]), 1.0)
    np.add.at(nonzero, (rows[valid], idx[valid]), (wt[valid] != 0).astype(np.float64))
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
                       flip: bool, formal: bool) -> Any:
    return pooled


def _grad_guard_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    a, p = g._data, n.params
    if a.dtype.kind != "f" or np.isfinite(a).all():
        return (formal_input(g, n.inputs[1]) if p["formal"] else g), None
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

    finite = _where(g.isfinite(), g, g.new_zeros(()))
    return formal_input(finite, n.inputs[1]) if p["formal"] else finite, tensor(extra, device=g.device)


_GRAD_GUARD = Prim("pool_grad_guard", _grad_guard_kernel, _grad_guard_vjp, lambda ts, n: ts[0])


def _guarded(pooled: Tensor, input: Tensor, windows: tuple[tuple[Any, ...], ...], cut: tuple[tuple[int, int], ...],
             label: str, flip: bool = False, formal: bool = True) -> Tensor:
    """``pooled`` behind ``_GRAD_GUARD`` where its gradient is computed on the host (NOTE [non-finite pooling
    gradients]), its node named as torch's (``label``); as it is elsewhere, where the limitation stays
    (docs/compatibility.md)."""
    if not pooled.requires_grad or input._device.type not in _GRAD_GUARD.kernels:
        return pooled
    out = _GRAD_GUARD(pooled, input, windows=windows, cut=cut, flip=flip, formal=formal)
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

@functools.lru_cache(maxsize=1024)
def _pool_geometry(sp: Ints, out: Ints, k: Ints, s: Ints, p: Ints, d: Ints,
                   ) -> tuple[Ints, tuple[tuple[slice, ...], ...]]:
    """The padded spatial size (``p`` before, ``p`` plus ceil_mode's extra after) and one slice per kernel offset,
    in window order, each picking that offset's element of every window (cached: shapes and params alone decide
    them, and every pooling's forward and backward asks)."""
    nd = len(k)
    psp = tuple(sp[i] + 2 * p[i] + _extra(sp[i], out[i], k[i], s[i], p[i], d[i]) for i in range(nd))
    slices = tuple((slice(None), slice(None)) + tuple(slice(j[i] * d[i], j[i] * d[i] + s[i] * (out[i] - 1) + 1, s[i])
                                                      for i in range(nd))
                   for j in itertools.product(*(range(kk) for kk in k)))
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
    # the input is the backward's formal input under create_graph, as torch's (NOTE [formal input of a gradient])
    return (_MAX_POOL_BACKWARD(g, n.inputs[0] if STATE.enabled else n.inputs[0].detach(), **_geom(n)),)


def _max_pool_backward_vjp(gg: Tensor, n: Any) -> tuple[Any, ...]:
    x = n.inputs[1]  # which element each window took is constant: the input's gradient is zero
    return _MAX_POOL_SELECT(gg, x.detach(), **_geom(n)), x.new_zeros(x._data.shape)


def _max_pool_select_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    x = n.inputs[1]
    return _MAX_POOL_BACKWARD(g, x.detach(), **_geom(n)), x.new_zeros(x._data.shape)


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
        values = tie_gradient(take_along(flat_x, flat, 2).reshape((n, c) + tuple(out)), x)
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
    # torch's gradient of a pool to one element per map is a mean's, which does not take the input
    return _guarded(out, input, windows, tuple((0, n) for n in sizes_in), label, formal=label != "MeanBackward1")


def _adaptive_rows(size: int, out: int) -> Any:
    """The bins of an adaptive pool, [floor(i L / O), ceil((i+1) L / O)), as rows of source indices padded to the
    widest bin by repeating each bin's last index (which leaves its maximum and that maximum's first index as they
    are), flattened."""
    lo = np.arange(out, dtype=np.int64) * size // out
    hi = -(-(np.arange(1, out + 1, dtype=np.int64) * size) // out)
    idx = lo[:, None] + np.arange(int((hi - lo).max()), dtype=np.int64)
    return np.minimum(idx, hi[:, None] - 1).reshape(-1)


def adaptive_max_pool(input: Tensor, nd: int, output_size: Any, *, op: str = "adaptive_max_pool2d") -> Tensor:
    """Each pooled dim in turn, the last first: the bins gathered as (out, widest) windows and each window's first
    maximum taken, or its last NaN if it holds one. In that order the element chosen is a bin's first maximum in
    row-major order, or its last NaN (the last row with one, its last one there), torch's, which gets the whole
    gradient. The index table is made under ``allocating``: an output size no machine holds is a coded error at
    once, not a loop over its bins."""
    input = autocast_inputs(op, input)[0]
    check(RD.check_kind, op, input.dtype.name)
    _check_ints(output_size, "output_size", op, none_ok=True)
    sizes = (output_size,) * nd if isinstance(output_size, int) or output_size is None else tuple(output_size)
    shape = check(RN.adaptive_pool_shape, tuple(input._data.shape), sizes, op=op, nonempty=True)
    nd_in = input._data.ndim
    # (on the host NaN is looked for once; on a device the NaN choice is computed always, rather than read back)
    nan_possible = input.is_floating_point() and (input._device.type != "cpu" or bool(np.isnan(input._data).any()))
    out = input
    for dim in range(nd_in - 1, nd_in - nd - 1, -1):
        o = shape[dim]
        with allocating(op):
            rows = device_table(_adaptive_rows, (input._data.shape[dim], o), input.device)
        windows = out.index_select(dim, rows).unflatten(dim, (o, rows.shape[0] // o))
        pick = windows.argmax(dim + 1, keepdim=True)  # NumPy's argmax: the first NaN of a window holding one
        if nan_possible:  # the last NaN: the NaN position's index weighs each, argmax takes the greatest
            nan = windows.detach().isnan()
            w = windows._data.shape[dim + 1]
            place = arange(w, device=input.device).reshape((w,) + (1,) * (nd_in - dim - 1))
            pick = _where(nan.any(dim + 1, keepdim=True), (nan * place).argmax(dim + 1, keepdim=True), pick)
        out = windows.take_along_dim(pick, dim + 1).squeeze(dim + 1)
    out = tie_gradient(out, input)
    if out._grad_fn is not None:  # torch's node names (a 1-D pool runs as 2-D)
        out._grad_fn.label = "SqueezeBackward1" if nd == 1 else f"AdaptiveMaxPool{nd}DBackward0"
    return out


# -- interpolation --------------------------------------------------------------------------------------
#
# Every mode but 'nearest' is separable: one (out, size) matrix per resized dim, made from per-output taps (source
# indices and their weights) by ``_interp_taps``. A ``kind`` names the taps: "linear" and "cubic" are torch's
# two- and four-tap loops (cubic's indices clamped at the borders), "aa-linear", "aa-cubic" and "aa-lanczos" the
# filter weights of its antialiased kernels (PIL's: the support widens with the downscale and the weights are
# renormalized, so the border taps are dropped rather than clamped).

_FILTER_TAPS = {"linear": 2, "cubic": 4, "lanczos": 6}


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
        src = _half_pixel_source(size, out, scale, op)
        src = np.maximum(src, op(0))
    i0 = np.minimum(np.floor(src).astype(np.int64), size - 1)
    lam = np.clip(src - i0.astype(op), op(0), op(1)).astype(op)
    i1 = i0 + (i0 < size - 1)
    return i0, i1, (op(1) - lam).astype(dtype), lam.astype(dtype)


def _half_pixel_source(size: int, out: int, scale: float | None, op: Any) -> Any:
    """``ratio * (i + 0.5) - 0.5``, each output's source coordinate without corner alignment. float32: rounded
    once, as torch 2.13's float32 weights come out (a fused multiply-add: rounding the product first turns
    1/3 * 1.5 - 0.5 into 0 where torch's weight is 3e-8); its float64 coordinates round the product first."""
    ratio = op(scale) if scale is not None and scale > 0 else op(size) / op(out)
    i: Any = np.arange(out).astype(op) + op(0.5)
    return (np.float64(ratio) * i.astype(np.float64) - 0.5).astype(op) if op is np.float32 else ratio * i - op(0.5)


def _cubic_taps(size: int, out: int, align_corners: bool, scale: float | None, dtype: Any) -> tuple[Any, Any]:
    """torch's bicubic loop (Keys' kernel with a = -0.75, the indices clamped at the borders): (out, 4) source
    indices and weights."""
    op: Any = np.float64 if np.dtype(dtype) == np.float64 else np.float32
    if align_corners:
        ratio: Any = op(size - 1) / op(out - 1) if out > 1 else op(0)
        src = ratio * np.arange(out).astype(op)
    else:
        src = _half_pixel_source(size, out, scale, op)  # (not clamped at 0: the cubic taps reach past the border)
    x0 = np.floor(src)
    t = (src - x0).astype(op)[:, None]
    d = np.abs(t - np.arange(-1, 3, dtype=op))  # distance of each tap from the source
    a = op(-0.75)
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    w = np.where(d <= 1, near, far)
    idx = np.clip(x0.astype(np.int64)[:, None] + np.arange(-1, 3), 0, size - 1)
    return idx, w.astype(dtype)


def _fma64(p: Any, q: Any, r: Any) -> Any:
    """float64 p * q + r with the product's rounding error kept (Dekker's split), so a sum that cancels the
    rounded product leaves its error, as a fused multiply-add does."""
    def split(v: Any) -> tuple[Any, Any]:
        c = 134217729.0 * v  # 2**27 + 1
        hi = c - (c - v)
        return hi, v - hi

    prod = p * q
    (ph, pl), (qh, ql) = split(p), split(q)
    err = ((ph * qh - prod) + ph * ql + pl * qh) + pl * ql
    total = prod + r
    lost = (prod - (total - (total - prod))) + (r - (total - prod))  # what prod + r rounded away
    return total + (lost + err)


def _filter(kind: str, x: Any, antialias: bool) -> Any:
    """The filters of torch's antialiased kernels, in ``x``'s float type."""
    f = x.dtype.type
    x = np.abs(x)
    if kind == "linear":
        return np.maximum(f(1) - x, f(0))
    if kind == "cubic":  # Keys' a: -0.5 as PIL when antialiased, -0.75 as OpenCV otherwise (torch's choice)
        a = f(-0.5 if antialias else -0.75)

        def fma(p: Any, q: Any, r: Any) -> Any:
            """p * q + r rounded once, as torch's compiled kernels contract them: a weight that rounding each
            step puts at 0 comes out 3e-14 there (and decides whether an inf beside it gives inf or NaN)."""
            if f is np.float32:  # a float64 holds the product of two float32 exactly
                return (np.float64(p) * np.asarray(q, np.float64) + np.float64(r)).astype(f)
            return _fma64(np.asarray(p, np.float64), np.asarray(q, np.float64), np.float64(r))

        near = fma(fma(a + 2, x, -(a + 3)) * x, x, f(1))
        far = fma(fma(fma(np.full_like(x, a), x, -5 * a), x, 8 * a), x, -4 * a)
        return np.where(x < 1, near, np.where(x < 2, far, f(0))).astype(f)
    def sinc(v: Any) -> Any:
        v = v * f(np.pi)
        return np.where(v == 0, f(1), np.sin(v) / np.where(v == 0, f(1), v))
    return np.where(x < 3, sinc(x) * sinc(x / f(3)), f(0)).astype(f)  # Lanczos-3


def _filter_weights(size: int, out: int, align_corners: bool, scale: float | None, kind: str,
                    dtype: Any) -> tuple[Any, Any, Any]:
    """torch's antialiased (PIL-style) weights in its arithmetic, float32 below float64 (the C++ promotions kept:
    a product with ``i + 0.5`` is a float64 rounded back, so a weight that exact arithmetic puts at 0 can come out
    tiny, and then an inf beside it gives inf, not NaN): each output's first source index, (out, K) weights (0
    past the taps it has) and the count of taps it has."""
    f: Any = np.float64 if np.dtype(dtype) == np.float64 else np.float32
    if align_corners:
        ratio = f(size - 1) / f(out - 1) if out > 1 else f(0)
    else:
        ratio = f(scale) if scale is not None and scale > 0 else f(size) / f(out)
    half = _FILTER_TAPS[kind] * 0.5
    wide = ratio >= 1.0
    support = f(half * np.float64(ratio)) if wide else f(half)
    inv = f(1.0 / np.float64(ratio)) if wide else f(1)
    taps = math.ceil(support) * 2 + 1
    center = (np.float64(ratio) * (np.arange(out) + 0.5)).astype(f)
    # (C++ converts to int64 by truncation; the max with 0 makes it floor's)
    xmin = np.maximum(np.floor((center - support).astype(np.float64) + 0.5), 0).astype(np.int64)
    count = np.minimum(np.floor((center + support).astype(np.float64) + 0.5).astype(np.int64), size) - xmin
    j = np.arange(taps)
    at = ((j + xmin[:, None]).astype(f) - center[:, None]).astype(np.float64) + 0.5
    w = _filter(kind, (at * np.float64(inv)).astype(f), True)
    w = np.where(j < count[:, None], w, f(0))
    total = np.zeros(out, f)
    for k in range(taps):  # summed in order, as torch's loop
        total = (total + w[:, k]).astype(f)
    w = np.divide(w, total[:, None], out=w, where=total[:, None] != 0)
    return xmin, w, count


def _interp_taps(size: int, out: int, align_corners: bool, scale: float | None, dtype: Any,
                 kind: str) -> tuple[Any, Any, Any]:
    """(out, K) source indices, weights and which taps torch's loop reads, for a ``kind`` of taps (above)."""
    if kind == "linear":
        i0, i1, w0, w1 = _linear_taps(size, out, align_corners, scale, dtype)
        idx, w = np.stack([i0, i1], 1), np.stack([w0, w1], 1)
        return idx, w, np.ones(idx.shape, bool)
    if kind == "cubic":
        idx, w = _cubic_taps(size, out, align_corners, scale, dtype)
        return idx, w, np.ones(idx.shape, bool)
    xmin, w, count = _filter_weights(size, out, align_corners, scale, kind.removeprefix("aa-"), dtype)
    j = np.arange(w.shape[1])
    return np.minimum(xmin[:, None] + j, size - 1), w.astype(dtype), j < count[:, None]


def _interp_matrix(size: int, out: int, align_corners: bool, scale: float | None, dtype: Any, kind: str) -> Any:
    idx, w, valid = _interp_taps(size, out, align_corners, scale, dtype, kind)
    m = np.zeros((out, size), dtype=dtype)
    rows = np.broadcast_to(np.arange(out)[:, None], idx.shape)
    np.add.at(m, (rows[valid], idx[valid]), w[valid])
    return m


def _interp_tap_table(size: int, out: int, align_corners: bool, scale: float | None, dtype: Any, kind: str,
                      which: int) -> Any:
    """One of ``_interp_taps``' tables alone, for ``device_table``: 0 the indices, 1 the weights (0 where
    torch's loop reads nothing), 2 which taps it reads."""
    idx, w, valid = _interp_taps(size, out, align_corners, scale, dtype, kind)
    return idx if which == 0 else np.where(valid, w, 0).astype(dtype) if which == 1 else valid


def _interp_resize(x: Tensor, dim: int, window: tuple[Any, ...]) -> Tensor:
    """The resize of one dim as torch's loop reads it (one read and one weight per tap), for an input holding NaN
    or inf: the matrix product would multiply them by the zero weights of every other output of the row. A tap
    past an output's last one (the antialiased filters') is not read."""
    def table(which: int) -> Tensor:
        return device_table(_interp_tap_table, (*window, which), x.device)

    idx, w = table(0), table(1)
    valid = _interp_taps(*window)[2]
    shape = [1] * x._data.ndim
    shape[dim] = window[1]
    out: Tensor | None = None
    for k in range(idx._data.shape[1]):
        term = x.index_select(dim, idx[:, k]) * w[:, k].reshape(shape)
        if not valid[:, k].all():
            term = _where(table(2)[:, k].reshape(shape), term, term.new_zeros(()))
        out = term if out is None else out + term
    assert out is not None
    return out


def _folded_weights(size: int, out: int, align_corners: bool, scale: float | None, kind: str) -> tuple[Any, Any, float]:
    """torch's uint8 weights without antialias (float64): the float loop's source index and fraction, its taps
    past a border added onto the edge element's weight, as the float loop's clamped indices read it twice; the
    first index, (out, taps) weights, and the largest weight any running sum reached (torch sizes its fixed
    point by that)."""
    taps = _FILTER_TAPS[kind]
    if align_corners:
        src = ((size - 1) / (out - 1) if out > 1 else 0.0) * np.arange(out)
    else:
        ratio = scale if scale is not None and scale > 0 else size / out
        src = ratio * (np.arange(out) + 0.5) - 0.5
        if kind == "linear":
            src = np.maximum(src, 0.0)
    index = np.minimum(np.floor(src.astype(np.float32)).astype(np.int64), size - 1)
    lam = np.clip(src - index, 0.0, 1.0)
    half = taps // 2
    lo = index - half + 1
    xmin = np.maximum(lo, 0)
    count = np.clip(np.minimum(index + half + 1, size) - xmin, 0, taps)
    w = np.zeros((out, taps))
    peak = 0.0
    at = np.zeros(out, np.int64)
    rows = np.arange(out)
    for j in range(taps):
        f = _filter(kind, (j + 1 - half) - lam, False)
        at = np.where(lo + j <= 0, 0, np.where(lo + j >= size - 1, count - 1, at))
        np.add.at(w, (rows, at), f)
        peak = max(peak, float(w[rows, at].max()))
        at = at + 1
    return xmin, w, peak


def _fixed_point_weights(size: int, out: int, align_corners: bool, scale: float | None, kind: str,
                         antialias: bool) -> tuple[Any, Any, int]:
    """torch's uint8 kernels' taps: the weights scaled to int16 with as many fraction bits as the largest weight
    leaves room for (at most 22), rounded half away from zero; (out, K) indices and weights, and the bits."""
    if antialias:
        xmin, w, _ = _filter_weights(size, out, align_corners, scale, kind, np.float64)
        peak = float(w.max())
    else:
        xmin, w, peak = _folded_weights(size, out, align_corners, scale, kind)
    bits = 0
    while bits < 22 and int(0.5 + peak * (1 << (bits + 1))) < 1 << 15:
        bits += 1
    scaled = w * (1 << bits)
    wi = np.where(scaled < 0, np.ceil(scaled - 0.5), np.floor(scaled + 0.5)).astype(np.int32)
    return np.minimum(xmin[:, None] + np.arange(w.shape[1]), size - 1), wi, bits


def _fixed_point_table(size: int, out: int, align_corners: bool, scale: float | None, kind: str, antialias: bool,
                       which: int) -> Any:
    return _fixed_point_weights(size, out, align_corners, scale, kind, antialias)[which]


def _uint8_resize(input: Tensor, out: tuple[int, ...], align_corners: bool, scales: list[float | None], kind: str,
                  antialias: bool) -> Tensor:
    """torch's uint8 bilinear/bicubic/lanczos: integer taps with fixed-point weights, rounded and saturated to
    uint8 after each dim, the last dim first; a dim whose size does not change is not resized."""
    from .._dtype import int32

    result = input
    for dim in reversed(range(2, input._data.ndim)):
        size, n = input._data.shape[dim], out[dim - 2]
        if size == n:
            continue
        args = (size, n, align_corners, scales[dim - 2], kind, antialias)
        idx, w = (device_table(_fixed_point_table, (*args, which), input.device) for which in (0, 1))
        bits = _fixed_point_weights(*args)[2]
        shape = [1] * input._data.ndim
        shape[dim] = n
        acc = result.new_full((), 1 << (bits - 1) if bits else 0, dtype=int32)
        for k in range(idx._data.shape[1]):
            acc = acc + result.index_select(dim, idx[:, k]).to(int32) * w[:, k].reshape(shape)
        result = (acc >> bits).clamp(0, 255).to(input.dtype)
    return result


def _nearest_index(size: int, out: int, scale: float | None, exact: bool, plane: bool) -> Any:
    """The source of each output position of 'nearest' (floor(i r)) or 'nearest-exact' (floor((i + 0.5) r)), in
    torch's arithmetic: r is a float32 (1 / scale_factor, or size / out), the product a float32 for 'nearest' and a
    float64 rounded to float32 for 'nearest-exact'. ``plane``: 'nearest' of a 4-D input, whose torch kernel keeps
    an older rule, whatever the scale: a dim whose size does not change is copied, one that doubles reads i // 2
    (its 3-D and 5-D kernels do not)."""
    if plane and out in (size, 2 * size):
        return np.arange(out, dtype=np.int64) // (out // size)
    r = np.float32(scale) if scale is not None and scale > 0 else np.float32(size) / np.float32(out)
    if exact:
        pos = ((np.arange(out) + 0.5) * np.float64(r)).astype(np.float32)
    else:
        pos = np.arange(out).astype(np.float32) * r
    return np.minimum(np.floor(pos).astype(np.int64), size - 1)


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """``F.interpolate``: 'nearest' and 'nearest-exact' gather, 'area' is the adaptive average pool, and
    'linear', 'bilinear', 'bicubic', 'trilinear' and 'lanczos' (antialiased only) are separable resizes."""

    def as_tuple(v: Any) -> Any:
        return tuple(v) if isinstance(v, list) else v

    # the one rule of F.interpolate and nn.Upsample: the options, size or scale_factor, their spatial counts, the
    # mode's ranks
    out = check(RN.interpolate_shape, tuple(input._data.shape), as_tuple(size), as_tuple(scale_factor), mode,
                align_corners=align_corners, antialias=antialias, op="interpolate")[2:]
    if recompute_scale_factor and size is not None:
        fail("upsample_error_size", op="interpolate",
             problem="recompute_scale_factor is not meaningful with an explicit size.")
    check(RD.check_kind, "interpolate", input.dtype.name, kind=RD.INTERPOLATE_KINDS.get(mode))
    if antialias and input.dtype.name == "bfloat16":  # (torch has no bfloat16 filter weights)
        fail("method_dtype_not_supported_error", op="interpolate", dtype="bfloat16", hint="")
    nd = input._data.ndim - 2
    if mode == "area":
        return adaptive_avg_pool(input, nd, out, op="interpolate")
    sp = input._data.shape[2:]
    scales: list[float | None] = [None] * nd
    if size is None:
        sf = (float(scale_factor),) * nd if isinstance(scale_factor, (int, float)) else tuple(map(float, scale_factor))
        scales = [None if recompute_scale_factor else 1.0 / sf[i] for i in range(nd)]
    result = input
    if mode in ("nearest", "nearest-exact"):
        for i in range(nd):
            src = device_table(_nearest_index, (sp[i], out[i], scales[i], mode == "nearest-exact",
                                                mode == "nearest" and nd == 2), input.device)
            result = result.index_select(2 + i, src)
        if result._grad_fn is not None:  # the gathers' last node, named as torch's one
            result._grad_fn.label = f"UpsampleNearest{'Exact' if mode == 'nearest-exact' else ''}{nd}DBackward0"
        return result
    taps = {"bicubic": "cubic", "lanczos": "lanczos"}.get(mode, "linear")
    if input._data.dtype.kind == "u":
        return _uint8_resize(input, out, bool(align_corners), scales, taps, antialias)
    kind = f"aa-{taps}" if antialias else taps
    nonfinite = _nonfinite(input)
    # torch's antialiased kernels skip a dim whose size does not change (the identity's taps stand for it)
    skip = [antialias and sp[i] == out[i] for i in range(nd)]
    windows = [(sp[i], out[i], False, None, input._data.dtype, "linear") if skip[i] else
               (sp[i], out[i], bool(align_corners), None if align_corners else scales[i], input._data.dtype, kind)
               for i in range(nd)]
    for i in reversed(range(nd)):  # the last dim first, as torch's loops nest (it decides where inf meets NaN)
        if skip[i]:
            continue
        if nonfinite:
            result = _interp_resize(result, 2 + i, windows[i])
            continue
        m = device_table(_interp_matrix, windows[i], input.device)
        result = result.movedim(2 + i, -1).matmul(m.t()).movedim(-1, 2 + i)
    label = _UPSAMPLE_NODES[mode].replace("DBackward0", "DAaBackward0" if antialias else "DBackward0")
    return _guarded(result, input, tuple(windows), tuple((0, n) for n in sp), label, formal=False)


_UPSAMPLE_NODES = {"linear": "UpsampleLinear1DBackward0", "bilinear": "UpsampleBilinear2DBackward0",
                   "bicubic": "UpsampleBicubic2DBackward0", "trilinear": "UpsampleTrilinear3DBackward0",
                   "lanczos": "UpsampleLanczos2DBackward0"}
