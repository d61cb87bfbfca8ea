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
from .activation import softmax
from .creation import arange


def _causal(length: int, s: int) -> Any:
    """The (L, S) bool mask ``j <= i`` (torch's ``ones(L, S).tril()``)."""
    return np.arange(length)[:, None] >= np.arange(s)[None, :]


def _probs(q: Any, k: Any, mask: Any | None, scale: float, causal: bool) -> Any:
    """The attention weights, computed in the buffer of the scores: masked in place, then softmax's passes (the row
    maximum, exp, one reciprocal of the row sum per row); a row whose scores are all -inf gets weights 0, as torch's
    safe softmax (not NaN), found from the row maxima rather than from a pass over the scores."""
    s = np.matmul(q, np.swapaxes(k, -1, -2))
    t = q.dtype.type
    s *= t(scale)
    if causal:
        mask = _causal(q.shape[-2], k.shape[-2])
    if mask is not None:
        if np.broadcast_shapes(mask.shape, s.shape) != s.shape:  # a mask with more batch dims widens the result
            s = np.where(mask, s, t(-np.inf)) if mask.dtype == np.bool_ else s + mask
        elif mask.dtype == np.bool_:
            np.copyto(s, t(-np.inf), where=~mask)
        else:
            s += mask
    top = np.maximum.reduce(s, -1, keepdims=True)
    dead = np.isneginf(top)
    np.subtract(s, top, out=s)
    np.exp(s, out=s)
    total = np.add.reduce(s, -1, keepdims=True)
    s *= np.reciprocal(total, out=total)
    if dead.any():
        np.copyto(s, t(0), where=dead)
    return s


def _attention_kernel(q: Any, k: Any, v: Any, *mask: Any, scale: float, causal: bool) -> Any:
    return np.matmul(_probs(q, k, mask[0] if mask else None, scale, causal), v).astype(q.dtype, copy=False)


def _attention_backward_kernel(q: Any, k: Any, v: Any, *rest: Any, scale: float, causal: bool,
                               orders: tuple[tuple[int, ...], ...]) -> Any:
    """The gradients of q, k and v for the output gradient ``g`` (the last of ``rest``, after the mask), packed
    into one flat array in that order, each with its dims in memory in the order of ``orders`` (its input's, see
    :func:`_memory_order`): a primitive has one result, and a device kernel writes all three (on WebGPU: a pass
    over the query rows, then one over the key rows)."""
    *mask, gd = rest
    packed = np.empty(q.size + k.size + v.size, q.dtype)
    dq, dk, dv = _packed_views(packed, (q, k, v), orders)
    p = _probs(q, k, mask[0] if mask else None, scale, causal)
    np.matmul(np.swapaxes(p, -1, -2), gd, out=dv)
    ds = np.matmul(gd, np.swapaxes(v, -1, -2))  # dP, then dS = P * (dP - rowsum(dP * P)) in place
    ds -= np.einsum("...ij,...ij->...i", ds, p)[..., None]
    ds *= p
    ds *= q.dtype.type(scale)
    np.matmul(ds, k, out=dq)
    np.matmul(np.swapaxes(ds, -1, -2), q, out=dk)
    return packed


def _packed_views(packed: Any, arrays: tuple[Any, ...], orders: tuple[tuple[int, ...], ...]) -> list[Any]:
    """Views of consecutive segments of ``packed``, one per array, of its shape with its dims laid out in memory
    in the order ``orders`` gives: each product writes its gradient there directly (no copy into the pack)."""
    views, at = [], 0
    for a, order in zip(arrays, orders):
        seg = packed[at:at + a.size].reshape(tuple(a.shape[d] for d in order))
        views.append(seg.transpose(tuple(order.index(d) for d in range(a.ndim))))
        at += a.size
    return views


def _memory_order(t: Tensor) -> tuple[int, ...]:
    """``t``'s dims from the outermost in memory to the innermost (ties and dims of size 1 keep their order): each
    gradient is made in its input's layout, so that the views the attention's inputs usually are (heads split off
    and transposed) give back their gradients without copies."""
    a = t._data
    return tuple(sorted(range(a.ndim), key=lambda d: -abs(a.strides[d]) if a.shape[d] != 1 else 0))


def _attention_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    q, k, v, *mask = n.inputs
    scale, causal = n.params["scale"], n.params["causal"]
    if not STATE.enabled:
        # first order: the fused gradient, on the device of the forward
        orders = tuple(_memory_order(t) for t in (q, k, v))
        packed = _ATTENTION_BACKWARD(q, k, v, *mask, g, scale=scale, causal=causal, orders=orders)
        gq, gk, gv, at = None, None, None, 0
        grads = []
        for t, order in zip((q, k, v), orders):
            shape, n = t._data.shape, t._data.size
            dense = packed[at:at + n].reshape(tuple(shape[d] for d in order))
            grads.append(dense.permute(tuple(order.index(d) for d in range(len(shape)))))
            at += n
        gq, gk, gv = grads
    else:
        # create_graph (and forward mode, through the vjp): the same gradient in differentiable ops
        scores = q.matmul(k.transpose(-2, -1)) * scale
        length, s = q._data.shape[-2], k._data.shape[-2]
        m = arange(length, device=q._device).unsqueeze(-1) >= arange(s, device=q._device).unsqueeze(0) if causal \
            else (mask[0] if mask else None)
        if m is not None:
            scores = scores.masked_fill(~m, float("-inf")) if m.dtype.name == "bool" else scores + m
        p = safe_softmax(scores)
        gv = p.transpose(-2, -1).matmul(g)
        dp = g.matmul(v.transpose(-2, -1))
        ds = p * (dp - (dp * p).sum(-1, keepdim=True)) * scale
        gq, gk = ds.matmul(k), ds.transpose(-2, -1).matmul(q)
    return (gq, gk, gv, *(None for _ in mask))


_ATTENTION = Prim("scaled_dot_product_attention", _attention_kernel, _attention_vjp)
_ATTENTION_BACKWARD = Prim("attention_backward", _attention_backward_kernel)


def safe_softmax(scores: Tensor) -> Tensor:
    """The attention weights ``softmax(scores, -1)``, 0 in a row whose scores are all -inf (every key masked), as
    torch's attention (a plain softmax gives NaN there)."""
    dead = (scores == float("-inf")).all(-1, keepdim=True)
    return softmax(scores, -1).masked_fill(dead, 0.0)


def attention_fusable(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None) -> bool:
    """Whether :func:`attention` serves (see the module's docstring)."""
    dt = q._data.dtype
    if q._device.type not in _ATTENTION.kernels or dt not in (np.float32, np.float64):
        return False
    if any(t._data.dtype != dt or t._device != q._device for t in (k, v)):
        return False
    if not q._data.shape[:-2] == k._data.shape[:-2] == v._data.shape[:-2]:
        return False
    return mask is None or (mask._device == q._device and not mask.requires_grad
                            and (mask._data.dtype == np.bool_ or mask._data.dtype == dt))


def attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, scale: float, causal: bool) -> Tensor:
    """``softmax(q k^T * scale + mask) v`` (shapes checked by the caller; ``causal`` with no mask)."""
    ms = (mask,) if mask is not None else ()
    return _ATTENTION(q, k, v, *ms, scale=float(scale), causal=bool(causal))
