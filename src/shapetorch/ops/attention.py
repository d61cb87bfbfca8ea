"""Attention primitive: ``scaled_dot_product_attention`` without dropout as one primitive with a fused gradient.

``nn.functional.scaled_dot_product_attention`` calls :func:`attention` where :func:`attention_fusable` holds (a
device with the kernel, float32/float64 query, key and value of one dtype and one batch shape, a mask that does
not require grad) and its composite otherwise (dropout, grouped-query attention, broadcast batch dims, other
dtypes and devices). The attention weights ``P = softmax(q k^T * scale + mask)`` are recomputed by the gradient
rather than saved (one batched product and a softmax; torch's flash kernel does the same).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._engine.primitives import Prim
from .._grad_mode import STATE
from .._tensor import Tensor
from .activation import _softmax_kernel, softmax


def _causal(length: int, s: int) -> Any:
    """The (L, S) bool mask ``j <= i`` (torch's ``ones(L, S).tril()``)."""
    return np.arange(length)[:, None] >= np.arange(s)[None, :]


def _probs(q: Any, k: Any, mask: Any | None, scale: float, causal: bool) -> Any:
    s = np.matmul(q, np.swapaxes(k, -1, -2))
    s *= q.dtype.type(scale)
    if causal:
        mask = _causal(q.shape[-2], k.shape[-2])
    if mask is not None:
        if mask.dtype == np.bool_:
            s = np.where(mask, s, q.dtype.type(-np.inf))
        else:
            s += mask
    return _softmax_kernel(s, axis=-1)


def _attention_kernel(q: Any, k: Any, v: Any, *mask: Any, scale: float, causal: bool) -> Any:
    return np.matmul(_probs(q, k, mask[0] if mask else None, scale, causal), v).astype(q.dtype, copy=False)


def _attention_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    q, k, v, *mask = n.inputs
    scale, causal = n.params["scale"], n.params["causal"]
    if not STATE.enabled:
        # the fused forward runs only where its kernel does (the CPU), so its gradient is NumPy's too
        p = _probs(q._data, k._data, mask[0]._data if mask else None, scale, causal)
        gd = g._data
        dv = np.matmul(np.swapaxes(p, -1, -2), gd)
        ds = np.matmul(gd, np.swapaxes(v._data, -1, -2))  # dP, then dS = P * (dP - rowsum(dP * P)) in place
        ds -= np.einsum("...ij,...ij->...i", ds, p)[..., None]
        ds *= p
        ds *= q._data.dtype.type(scale)
        dq = np.matmul(ds, k._data)
        dk = np.matmul(np.swapaxes(ds, -1, -2), q._data)
        dt = q._data.dtype
        gq, gk, gv = (Tensor._make(a.astype(dt, copy=False), q._device) for a in (dq, dk, dv))
    else:
        # create_graph (and forward mode, through the vjp): the same gradient in differentiable ops
        scores = q.matmul(k.transpose(-2, -1)) * scale
        m = Tensor._make(_causal(q._data.shape[-2], k._data.shape[-2]), q._device) if causal else \
            (mask[0] if mask else None)
        if m is not None:
            scores = scores.masked_fill(~m, float("-inf")) if m.dtype.name == "bool" else scores + m
        p = softmax(scores, -1)
        gv = p.transpose(-2, -1).matmul(g)
        dp = g.matmul(v.transpose(-2, -1))
        ds = p * (dp - (dp * p).sum(-1, keepdim=True)) * scale
        gq, gk = ds.matmul(k), ds.transpose(-2, -1).matmul(q)
    return (gq, gk, gv, *(None for _ in mask))


_ATTENTION = Prim("scaled_dot_product_attention", _attention_kernel, _attention_vjp)


def attention_fusable(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None) -> bool:
    """Whether :func:`attention` serves (see the module's docstring)."""
    dt = q._data.dtype
    if q._device.type not in _ATTENTION.kernels or dt not in (np.float32, np.float64):
        return False
    if any(t._data.dtype != dt or t._device is not q._device for t in (k, v)):
        return False
    if not q._data.shape[:-2] == k._data.shape[:-2] == v._data.shape[:-2]:
        return False
    return mask is None or (mask._device is q._device and not mask.requires_grad
                            and (mask._data.dtype == np.bool_ or mask._data.dtype == dt))


def attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, scale: float, causal: bool) -> Tensor:
    """``softmax(q k^T * scale + mask) v`` (shapes checked by the caller; ``causal`` with no mask)."""
    ms = (mask,) if mask is not None else ()
    return _ATTENTION(q, k, v, *ms, scale=float(scale), causal=bool(causal))
