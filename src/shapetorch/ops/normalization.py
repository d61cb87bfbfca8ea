"""Normalisation primitives: batch_norm with batch statistics (training) as one primitive and a fused gradient.

``nn.functional.batch_norm`` calls :func:`batch_norm_train` where :func:`batch_norm_fusable` holds (a device with
the kernel, float32/float64, weight and bias of the input's dtype) and its composite otherwise, so other devices
and dtypes keep the differentiable formula. The statistics are computed once, by the caller's kernel, and passed
in as inputs (torch's ``save_mean`` / ``save_invstd``): the running-statistics update and the gradient read them
instead of reducing the input again.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._engine.primitives import Prim
from .._grad_mode import STATE
from .._tensor import Tensor


def _rows(a: Any) -> Any:
    """(N, C, *S) as (N, C, prod(S)): the statistics are over axes 0 and 2 of this view."""
    return a.reshape(a.shape[0], a.shape[1], -1)


def _stats_kernel(x: Any, eps: float) -> Any:
    """Per-channel mean, biased variance and ``1 / sqrt(var + eps)``, stacked as (3, 1, C, 1)."""
    x3 = _rows(x)
    mean = x3.mean(axis=(0, 2), keepdims=True)
    d = x3 - mean
    var = np.einsum("nci,nci->c", d, d)[None, :, None] / max(x3.shape[0] * x3.shape[2], 1)
    return np.stack([mean, var, 1 / np.sqrt(var + eps)]).astype(x.dtype, copy=False)


def _batch_norm_kernel(x: Any, mean: Any, rstd: Any, *wb: Any, has_w: bool, has_b: bool, eps: float) -> Any:
    """``x * alpha + beta`` per channel, alpha = rstd * weight and beta = bias - mean * alpha: two passes over
    the input instead of three, and torch's own CPU arithmetic (its batch norm transforms the input this way)."""
    x3 = _rows(x)
    alpha = rstd * wb[0][None, :, None] if has_w else rstd
    beta = -mean * alpha
    if has_b:
        beta += wb[-1][None, :, None]
    out = np.multiply(x3, alpha)
    out += beta
    return out.reshape(x.shape)


def _batch_norm_backward(x: Any, mean: Any, rstd: Any, g: Any, w: Any | None,
                         need: tuple[bool, bool, bool]) -> tuple[Any, Any, Any]:
    """(grad input, grad weight, grad bias), each None where ``need`` says so."""
    x3, g3 = _rows(x), _rows(g)
    m = x3.shape[0] * x3.shape[2]
    d = np.subtract(x3, mean)
    sum_g = g3.sum(axis=(0, 2))
    sum_gd = np.einsum("nci,nci->c", g3, d)
    gw = (sum_gd * rstd.reshape(-1)).astype(x.dtype, copy=False) if need[1] else None
    gb = sum_g.astype(x.dtype, copy=False) if need[2] else None
    gx = None
    if need[0]:
        # dx = w * rstd * (g - mean(g) - xhat * mean(g * xhat)), with xhat = d * rstd
        k = rstd * w[None, :, None] if w is not None else rstd
        d *= -(rstd * rstd) * (sum_gd / m)[None, :, None]
        d += g3
        d -= (sum_g / m)[None, :, None]
        d *= k
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
