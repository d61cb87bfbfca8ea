"""Normalisation primitives: batch_norm with batch statistics (training) as one primitive and a fused gradient.

``nn.functional.batch_norm`` calls :func:`batch_norm_train` where :func:`batch_norm_fusable` holds (a device with
the kernel, float32/float64, weight and bias of the input's dtype) and its composite otherwise, so other devices
and dtypes keep the differentiable formula. The statistics are computed once, by the caller's kernel, and passed
in as inputs (torch's ``save_mean`` / ``save_invstd``): the running-statistics update and the gradient read them
instead of reducing the input again.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._engine.intercept import INSTALLED as SLOW_PATH
from .._engine.primitives import Prim
from .._grad_mode import STATE
from .._tensor import Tensor


def _rows(a: Any) -> Any:
    """(N, C, *S) as (N, C, prod(S)): the statistics are over axes 0 and 2 of this view."""
    return a.reshape(a.shape[0], a.shape[1], math.prod(a.shape[2:]))  # (sizes given: an empty batch has no -1)


# NOTE [per-channel rows]: the elementwise passes of batch norm take their per-channel operands as one row of
# C * S values, broadcast over the batch ((N, C * S) against (1, C * S)), not as (1, C, 1) broadcast over the
# samples and the positions: NumPy then runs one inner loop per sample instead of one per (sample, channel), which
# on ResNet's 32x16x16x16 (one thread, CPU time, median of 300 interleaved passes) took 0.041 ms a subtraction
# against 0.056 (and 0.019 for one with no broadcast at all).

def _row(v: Any, s: int) -> Any:
    """A per-channel vector (C,) as the row (1, C * S) of NOTE [per-channel rows]."""
    return np.repeat(v.reshape(-1), s)[None, :]


def _flat(a: Any) -> Any:
    """(N, C, *S) as (N, C * S)."""
    return a.reshape(a.shape[0], math.prod(a.shape[1:]))


def _stats_kernel(x: Any, eps: float) -> Any:
    """Per-channel mean, biased variance and ``1 / sqrt(var + eps)``, stacked as (3, 1, C, 1); two passes (the
    variance from the deviations, as torch, not from the mean of squares)."""
    x3 = _rows(x)
    n, c, s = x3.shape
    m = max(n * s, 1)
    mean = np.add.reduce(x3, axis=2).sum(axis=0) / m  # pairwise sums along each contiguous row
    d = np.subtract(_flat(x3), _row(mean, s)).reshape(x3.shape)
    var = np.einsum("nci,nci->c", d, d) / m
    return np.stack([mean, var, 1 / np.sqrt(var + eps)]).reshape(3, 1, c, 1).astype(x.dtype, copy=False)


def _batch_norm_kernel(x: Any, mean: Any, rstd: Any, *wb: Any, has_w: bool, has_b: bool, eps: float) -> Any:
    """``x * alpha + beta`` per channel, alpha = rstd * weight and beta = bias - mean * alpha: two passes over
    the input instead of three, and torch's own CPU arithmetic (its batch norm transforms the input this way)."""
    x3 = _rows(x)
    alpha = rstd.reshape(-1) * wb[0] if has_w else rstd.reshape(-1)
    beta = -mean.reshape(-1) * alpha
    if has_b:
        beta += wb[-1]
    out = np.multiply(_flat(x3), _row(alpha, x3.shape[2]))
    out += _row(beta, x3.shape[2])
    return out.reshape(x.shape)


def _batch_norm_backward(x: Any, mean: Any, rstd: Any, g: Any, w: Any | None,
                         need: tuple[bool, bool, bool]) -> tuple[Any, Any, Any]:
    """(grad input, grad weight, grad bias), each None where ``need`` says so."""
    x3, g3 = _rows(x), _rows(g)
    n, _, s = x3.shape
    m = n * s
    r = rstd.reshape(-1)
    d = np.subtract(_flat(x3), _row(mean, s))
    sum_g = np.add.reduce(g3, axis=2).sum(axis=0)
    sum_gd = np.einsum("nci,nci->c", g3, d.reshape(x3.shape))
    gw = (sum_gd * r).astype(x.dtype, copy=False) if need[1] else None
    gb = sum_g.astype(x.dtype, copy=False) if need[2] else None
    gx = None
    if need[0]:
        # dx = w * rstd * (g - mean(g) - xhat * mean(g * xhat)), with xhat = d * rstd
        k = r * w if w is not None else r
        d *= _row(-(r * r) * (sum_gd / m), s)
        d += _flat(g3)
        d -= _row(sum_g / m, s)
        d *= _row(k, s)
        gx = d.reshape(x.shape).astype(x.dtype, copy=False)
    return gx, gw, gb


def _batch_norm_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    x, mean, rstd, *wb = n.inputs
    p = n.params
    w = wb[0] if p["has_w"] else None
    b = wb[-1] if p["has_b"] else None
    if not STATE.enabled:
        need = (x.requires_grad, w is not None and w.requires_grad, b is not None and b.requires_grad)
        # the fused forward runs only where its kernel does (the CPU), so its gradient is NumPy's too
        arrays = _batch_norm_backward(x._data, mean._data, rstd._data, g._data,
                                      None if w is None else w._data, need)
        gx, gw, gb = (None if a is None else Tensor._make(a, x._device) for a in arrays)
    else:
        # create_graph (and forward mode, through the vjp): the same formula in differentiable ops, the
        # statistics recomputed from x so that their dependence on x is part of the graph; every gradient, as
        # forward mode asks for tangents of inputs that do not require grad
        need = (True, True, True)
        axes = [0, *range(2, x._data.ndim)]
        cview = (1, -1) + (1,) * (x._data.ndim - 2)
        mu = x.mean(axes, keepdim=True)
        r = (x.var(axes, keepdim=True, correction=0) + p["eps"]).rsqrt()
        hat = (x - mu) * r
        gw_in = g * w.reshape(cview) if w is not None else g
        gx = r * (gw_in - gw_in.mean(axes, keepdim=True) - hat * (gw_in * hat).mean(axes, keepdim=True)) \
            if need[0] else None
        gw = (g * hat).sum(axes) if need[1] else None
        gb = g.sum(axes) if need[2] else None
    grads: list[Any] = [gx, None, None]
    if w is not None:
        grads.append(gw)
    if b is not None:
        grads.append(gb)
    return tuple(grads)


_BATCH_NORM = Prim("batch_norm", _batch_norm_kernel, _batch_norm_vjp)
_BATCH_NORM_STATS = Prim("batch_norm_stats", _stats_kernel)  # no vjp: its outputs enter _BATCH_NORM as constants


def batch_norm_fusable(x: Tensor, weight: Tensor | None, bias: Tensor | None) -> bool:
    """Whether :func:`batch_norm_train` serves: a kernel on ``x``'s device, a float32/float64 input with at least
    a channel axis, weight and bias (when given) of its dtype and of shape (C,)."""
    dt = x._data.dtype
    kernels = x._device.type in _BATCH_NORM.kernels and x._device.type in _BATCH_NORM_STATS.kernels
    if not kernels or x._data.ndim < 2 or dt not in (np.float32, np.float64):
        return False
    c = x._data.shape[1]
    return all(t is None or (t._data.dtype == dt and t._data.shape == (c,) and t._device is x._device)
               for t in (weight, bias))


def batch_norm_train(x: Tensor, weight: Tensor | None, bias: Tensor | None,
                     eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """Batch statistics: the normalised output, and the batch's per-channel mean and biased variance, (C,) each
    and outside the graph (for the running statistics)."""
    stats = _BATCH_NORM_STATS(x.detach(), eps=float(eps))
    mean, var, rstd = stats[0], stats[1], stats[2]
    wb = tuple(t for t in (weight, bias) if t is not None)
    out = _BATCH_NORM(x, mean, rstd, *wb, has_w=weight is not None, has_b=bias is not None, eps=float(eps))
    return out, mean.reshape(-1), var.reshape(-1)


# NOTE [running statistics]: a training batch norm updates its running mean and variance, and its module the batch
# count, in place: five in-place ops a call (``mul_``, ``add_`` twice, the count's ``add_``), each through the
# in-place machinery (overlap, leaf, view and dtype checks, a snapshot, a version bump), about 75 us of the 200 us a
# BatchNorm2d call took on a tiny input, against torch's whole call of 33 us. Buffers that record nothing (not
# requiring grad, not views, no forward-mode tangent, NumPy arrays, no profiler, forward-mode AD or inference mode
# watching: the engine's slow path not installed) are updated with the same NumPy arithmetic on their arrays (the
# same bits); anything else takes the ops. The running statistics' versions stay as they were and the count's goes
# up by one, as torch's (its kernel writes the statistics without a version bump).

def _direct(t: Tensor) -> Any:
    """``t``'s NumPy array where NOTE [running statistics] lets an update write it directly, else None."""
    a = t._data
    if type(a) is not np.ndarray or t._requires_grad or t._base is not None or t._fw_grads is not None \
            or t._created_in is not None or SLOW_PATH[0] or not a.flags.writeable:
        return None
    return a


def update_running_stats(running_mean: Tensor, running_var: Tensor, mean: Tensor, var: Tensor, momentum: float,
                         count: int) -> bool:
    """``running = running * (1 - momentum) + batch * momentum`` (the variance unbiased) on the arrays, as NOTE
    [running statistics]; False (nothing written) where the ops must do it."""
    rm, rv = _direct(running_mean), _direct(running_var)
    bm, bv = mean._data, var._data
    if rm is None or rv is None or type(bm) is not np.ndarray or type(bv) is not np.ndarray \
            or rm.dtype != bm.dtype or rv.dtype != bv.dtype or rm.shape != bm.shape or rv.shape != bv.shape:
        return False
    np.multiply(rm, 1 - momentum, out=rm)
    rm += bm * momentum
    np.multiply(rv, 1 - momentum, out=rv)
    rv += bv * (momentum * count / (count - 1))
    return True


def count_batch(num_batches_tracked: Tensor) -> None:
    """``num_batches_tracked.add_(1)``, on the array where NOTE [running statistics] allows."""
    a = _direct(num_batches_tracked)
    if a is None or a.dtype.kind != "i":
        num_batches_tracked.add_(1)
        return
    a += 1
    num_batches_tracked._bump_version()
