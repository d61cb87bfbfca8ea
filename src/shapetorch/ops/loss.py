"""Loss primitives: cross_entropy with class-index targets as one primitive (log_softmax and the weighted, smoothed
negative log-likelihood and its reduction in one kernel) with a fused gradient.

``nn.functional.cross_entropy`` calls :func:`cross_entropy_rows` where :func:`cross_entropy_fusable` holds and
its composite (log_softmax, then nll_loss) otherwise: probability targets, a weight that requires grad (torch
has no gradient for it), dtypes other than float32/float64, devices without the kernel.

With ``lp = log_softmax(x)``, ``e`` the smoothing, ``C`` classes and ``w`` the class weights (ones without):
``loss_i = valid_i * ((1 - e) * w[t_i] * -lp[i, t_i] + e / C * sum_c w[c] * -lp[i, c])``, summed, or divided by
``sum_i valid_i * w[t_i]`` for 'mean'. Its gradient in ``x`` is ``softmax(x)_i * s_i - k_i`` with the constants
``s_i = valid_i * ((1 - e) * w[t_i] + e / C * sum(w))`` and ``k_i = valid_i * ((1 - e) * w[t_i] * onehot(t_i) +
e / C * w)``, scaled by the output's gradient.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._engine.primitives import Prim
from .._grad_mode import STATE, no_grad
from .._tensor import Tensor
from .activation import _log_softmax_kernel, _softmax_kernel, softmax
from .conversion import where


def _terms(t: Any, w: Any | None, c: int, dtype: Any, ignore_index: int,
           smoothing: float) -> tuple[Any, Any, Any, Any]:
    """``valid`` (0/1), ``safe`` targets, the per-row target weights ``w[t_i] * valid_i`` and their sum."""
    valid = t != ignore_index
    safe = np.where(valid, t, 0)
    wt = w[safe] * valid if w is not None else valid.astype(dtype)
    return valid.astype(dtype), safe, wt, wt.sum(dtype=dtype)


def _cross_entropy_kernel(x: Any, t: Any, *w: Any, ignore_index: int, reduction: str, smoothing: float) -> Any:
    n, c = x.shape
    wv = w[0] if w else None
    valid, safe, wt, denom = _terms(t, wv, c, x.dtype, ignore_index, smoothing)
    # log_softmax's row kernel: exp, the row sums as one matrix-vector product and x - log(sum) when every row's sum
    # is in range (the row maximum only for rows that need it), over blocks of rows
    lp = _log_softmax_kernel(x, axis=-1)
    loss = lp[np.arange(n), safe] * (wt * x.dtype.type(smoothing - 1))
    if smoothing > 0:
        smooth = lp @ wv if wv is not None else lp.sum(axis=1)
        loss -= smooth * valid * x.dtype.type(smoothing / c)
    loss[valid == 0] = 0  # an ignored row's loss is 0 even where its logits are not finite (0 * NaN is NaN), as torch's
    if reduction == "none":
        return loss
    total = loss.sum(dtype=x.dtype)
    return np.asarray(total / denom if reduction == "mean" else total, dtype=x.dtype)


def _cross_entropy_backward_kernel(x: Any, t: Any, *rest: Any, ignore_index: int, reduction: str,
                                   smoothing: float) -> Any:
    """The gradient in ``x`` for the output gradient ``g`` (the last of ``rest``, after the weight):
    ``softmax(x) * (s * g') - k * g'``, ``g' = g / divisor``, with ``k``'s two parts applied where they lie (the
    target of each row, and the smoothing's outer product) rather than as a dense (N, C) array: softmax's row kernel
    and one scaling pass over the logits (the dense ``k`` and a second log_softmax took 11: 277 against 91 us for
    torch's on (512, 65) float32)."""
    *w, g = rest
    wv = w[0] if w else None
    n, c = x.shape
    e = smoothing
    dt = x.dtype.type
    valid, safe, wt, denom = _terms(t, wv, c, x.dtype, ignore_index, e)
    gd = (g if reduction == "none" else g / (denom if reduction == "mean" else dt(1))).astype(x.dtype, copy=False)
    s = wt * dt(1 - e)
    if e > 0:
        wsum = wv.sum(dtype=x.dtype) if wv is not None else dt(c)
        s = s + valid * (wsum * dt(e / c))
    gx = _softmax_kernel(x, axis=-1)
    gx *= (s * gd)[:, None]
    gx[np.arange(n), safe] -= wt * dt(1 - e) * gd
    if e > 0:
        gx -= np.multiply.outer(valid * dt(e / c) * gd, wv if wv is not None else np.ones(c, x.dtype))
    return gx.astype(x.dtype, copy=False)


def _grad_constants_ops(x: Tensor, t: Tensor, w: Tensor | None, p: dict[str, Any]) -> tuple[Tensor, Tensor, Any]:
    """``(s (N, 1), k (N, C), the reduction's divisor)`` in ops, constants on ``x``'s device, for the differentiable
    gradient ``(softmax(x) * s - k) * g / divisor`` (the terms of :func:`_cross_entropy_backward_kernel`)."""
    n, c = x._data.shape
    e = p["smoothing"]
    valid = (t != p["ignore_index"]).to(x.dtype)
    safe = where(t != p["ignore_index"], t, t.new_zeros(()))
    wt = (w.index_select(0, safe) if w is not None else x.new_ones(n)) * valid
    k = x.new_zeros(n, c).scatter(1, safe.unsqueeze(1), (wt * (1 - e)).unsqueeze(1))
    s = wt * (1 - e)
    if e > 0:
        wsum = w.sum() if w is not None else float(c)
        s = s + valid * (wsum * (e / c))
        k = k + valid.unsqueeze(1) * ((w if w is not None else x.new_ones(c)) * (e / c))
    return s.unsqueeze(1), k, wt.sum() if p["reduction"] == "mean" else 1.0


def _cross_entropy_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    x, t, *w = n.inputs
    p = n.params
    if not STATE.enabled:
        # first order: the fused gradient, on the device of the forward
        out = _CROSS_ENTROPY_BACKWARD(x, t, *w, g, **p)
    else:
        # create_graph (and forward mode, through the vjp): softmax(x) and g stay in the graph, s and k are constants
        with no_grad():
            s, k, div = _grad_constants_ops(x, t, w[0] if w else None, p)
        coef = softmax(x, 1) * s - k
        out = coef * (g.unsqueeze(1) if p["reduction"] == "none" else g / div)
    return (out, None, *(None for _ in w))


_CROSS_ENTROPY = Prim("cross_entropy_loss", _cross_entropy_kernel, _cross_entropy_vjp)
_CROSS_ENTROPY_BACKWARD = Prim("cross_entropy_backward", _cross_entropy_backward_kernel)


def cross_entropy_fusable(x: Tensor, target: Tensor, weight: Tensor | None) -> bool:
    """Whether :func:`cross_entropy_rows` serves: a kernel on ``x``'s device, float32/float64 logits with a class
    axis, integer targets, a weight (when given) of the logits' dtype that does not require grad."""
    dt = x._data.dtype
    if x._device.type not in _CROSS_ENTROPY.kernels or dt not in (np.float32, np.float64) or x._data.ndim < 2:
        return False
    if target._data.dtype.kind not in "iu" or target._device != x._device:
        return False
    return weight is None or (weight._data.dtype == dt and weight._data.shape == (x._data.shape[1],)
                              and weight._device == x._device and not weight.requires_grad)


def cross_entropy_rows(x: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int, reduction: str,
                       label_smoothing: float) -> Tensor:
    """The loss of (M, C) logits ``x`` and (M,) class targets (checked by the caller): a scalar, or (M,) for
    ``reduction='none'``."""
    wb = (weight,) if weight is not None else ()
    return _CROSS_ENTROPY(x, target, *wb, ignore_index=int(ignore_index), reduction=reduction,
                          smoothing=float(label_smoothing))
