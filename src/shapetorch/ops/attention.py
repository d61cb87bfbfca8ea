"""Attention primitive: ``scaled_dot_product_attention`` without dropout as one primitive with a fused gradient.

``nn.functional.scaled_dot_product_attention`` calls :func:`attention` where :func:`attention_fusable` holds (a
device with the kernel, float32/float64 query, key and value of one dtype and one batch shape, a mask that does
not require grad) and its composite otherwise (dropout, grouped-query attention, broadcast batch dims, other
dtypes and devices). On the CPU the attention weights ``P = softmax(q k^T * scale + mask)`` are made by a primitive
of their own and kept for the gradient while they are small beside q, k and v (``_KEEP_PROBS``); otherwise, and on
WebGPU, the gradient remakes them (one batched product and a softmax; torch's flash kernel does the same), so that
long sequences keep O(L) per layer until the backward.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from .._engine.primitives import Prim
from .._grad_mode import STATE
from .._tensor import Tensor
from .activation import softmax
from .creation import arange
from .views import permute_known, reshape_known


@functools.lru_cache(maxsize=16)
def _after_query(length: int, s: int) -> Any:
    """The (S, L) bool array ``j > i``: the keys a causal attention hides from each query (torch's ``ones(L,
    S).tril()`` negated), in the transposed layout of :func:`_probs_t`; made once per size, read-only."""
    out = np.arange(s)[:, None] > np.arange(length)[None, :]
    out.setflags(write=False)
    return out


def _probs_t(q: Any, k: Any, mask: Any | None, scale: float, causal: bool) -> Any:
    """The attention weights ``P = softmax(q k^T * scale + mask)``, made and returned transposed, (..., S, L),
    in the buffer of the scores: masked in place, then softmax's passes. In this layout each query's weights are a
    column, so the reductions over the keys (the maximum, the sum) run across whole rows of the buffer: NumPy's
    maximum along a short last axis costs 3x a pass over the block (0.28 against 0.08 ms on (8, 4, 64, 64)), and
    the column sums are one product with a vector of ones. A column whose scores are all -inf gets weights 0, as
    torch's safe softmax (not NaN), found from the column maxima rather than from a pass over the scores."""
    st = np.matmul(k, np.swapaxes(q, -1, -2))
    t = q.dtype.type
    st *= t(scale)
    if causal:
        np.copyto(st, t(-np.inf), where=_after_query(q.shape[-2], k.shape[-2]))
    elif mask is not None:
        mt = np.swapaxes(mask, -1, -2)  # (it broadcasts to the scores' shape: the shape rule)
        if mt.dtype == np.bool_:
            np.copyto(st, t(-np.inf), where=~mt)
        else:
            st += mt
    top = np.maximum.reduce(st, -2, keepdims=True)
    dead = np.isneginf(top)
    np.subtract(st, top, out=st)
    np.exp(st, out=st)
    total = np.matmul(np.ones(st.shape[-2], st.dtype), st)[..., None, :]
    st *= np.reciprocal(total, out=total)
    if dead.any():
        np.copyto(st, t(0), where=dead)
    return st


def _attention_kernel(q: Any, k: Any, v: Any, *rest: Any, scale: float, causal: bool, probs: bool = False) -> Any:
    """``P v``; with ``probs`` the weights are the last of ``rest`` (made by ``_ATTENTION_PROBS``, kept for the
    gradient), else they are made here."""
    if probs:
        return np.matmul(rest[-1], v).astype(q.dtype, copy=False)
    pt = _probs_t(q, k, rest[0] if rest else None, scale, causal)
    return np.matmul(np.swapaxes(pt, -1, -2), v).astype(q.dtype, copy=False)


def _probs_kernel(q: Any, k: Any, *mask: Any, scale: float, causal: bool) -> Any:
    """The weights as (..., L, S): a transposed view of :func:`_probs_t`'s buffer."""
    return np.swapaxes(_probs_t(q, k, mask[0] if mask else None, scale, causal), -1, -2)


def _attention_backward_kernel(q: Any, k: Any, v: Any, *rest: Any, scale: float, causal: bool,
                               orders: tuple[tuple[int, ...], ...], probs: bool = False) -> Any:
    """The gradients of q, k and v for the output gradient ``g`` (the last of ``rest``, after the mask and, with
    ``probs``, the kept weights), packed into one flat array in that order, each with its dims in memory in the
    order of ``orders`` (its input's, see :func:`_memory_order`): a primitive has one result, and a device kernel
    writes all three (on WebGPU: a pass over the query rows, then one over the key rows)."""
    *mask, gd = rest
    if probs:
        pt = np.swapaxes(mask.pop(), -1, -2)
    else:
        pt = _probs_t(q, k, mask[0] if mask else None, scale, causal)
    packed = np.empty(q.size + k.size + v.size, q.dtype)
    dq, dk, dv = _packed_views(packed, (q, k, v), orders)
    np.matmul(pt, gd, out=dv)
    # dS = P * (dP - rowsum(dP * P)), transposed as P is, in dP^T's buffer
    dst = np.matmul(v, np.swapaxes(gd, -1, -2))
    dst -= np.einsum("...ji,...ji->...i", dst, pt)[..., None, :]
    dst *= pt
    dst *= q.dtype.type(scale)
    np.matmul(np.swapaxes(dst, -1, -2), k, out=dq)
    np.matmul(dst, q, out=dk)
    return packed


def _packed_views(packed: Any, arrays: tuple[Any, ...], orders: tuple[tuple[int, ...], ...]) -> list[Any]:
    """Views of consecutive segments of ``packed``, one per array, of its shape with its dims laid out in memory
    in the order ``orders`` gives: each product writes its gradient there directly (no copy into the pack)."""
    views, at = [], 0
    for a, order in zip(arrays, orders):
        seg = packed[at:at + a.size].reshape(tuple([a.shape[d] for d in order]))  # (lists: no generator frames)
        views.append(seg.transpose(tuple([order.index(d) for d in range(a.ndim)])))
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
    kept = n.params.get("probs", False)
    probs = [mask.pop()] if kept else []  # the weights the forward kept (see ``attention``): an input, no gradient
    if not STATE.enabled:
        # first order: the fused gradient, on the device of the forward
        orders = (_memory_order(q), _memory_order(k), _memory_order(v))
        packed = _ATTENTION_BACKWARD(q, k, v, *mask, *probs, g, scale=scale, causal=causal, orders=orders,
                                     **({"probs": True} if kept else {}))
        gq, gk, gv, at = None, None, None, 0
        grads = []
        for t, order in zip((q, k, v), orders):
            shape, n = t._data.shape, t._data.size
            # (the views by their known shapes: NOTE [known view]; the slice is the op's, a view of the pack)
            dense = reshape_known(packed[at:at + n], tuple([shape[d] for d in order]))
            grads.append(permute_known(dense, tuple([order.index(d) for d in range(len(shape))])))
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
    return (gq, gk, gv, *(None for _ in mask), *(None for _ in probs))


_ATTENTION = Prim("scaled_dot_product_attention", _attention_kernel, _attention_vjp)
_ATTENTION_BACKWARD = Prim("attention_backward", _attention_backward_kernel)
# The weights alone, kept for the gradient where a device has this kernel (the CPU; WebGPU's gradient remakes them)
_ATTENTION_PROBS = Prim("attention_probs", _probs_kernel)


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
    if k._data.dtype != dt or v._data.dtype != dt or (k._device is not q._device and k._device != q._device) \
            or (v._device is not q._device and v._device != q._device):  # (no generator, no __eq__ for one device)
        return False
    if not q._data.shape[:-2] == k._data.shape[:-2] == v._data.shape[:-2]:
        return False
    if k._data.shape[-2] == 0:
        return False  # no keys: the composite's empty softmax (the kernels' maximum over no keys has no identity)
    return mask is None or (mask._device == q._device and not mask.requires_grad
                            and (mask._data.dtype == np.bool_ or mask._data.dtype == dt))

# The weights are kept from the forward for the gradient (which then skips a batched product and softmax's passes,
# a third of its time on a GPT's (8, 4, 64, 64) scores) while they are at most this many times the size of q, k and v
# together; longer sequences remake them, so that a layer keeps O(L) and not O(L S) until its backward.
_KEEP_PROBS = 2


def attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, scale: float, causal: bool) -> Tensor:
    """``softmax(q k^T * scale + mask) v`` (shapes checked by the caller; ``causal`` with no mask)."""
    ms = (mask,) if mask is not None else ()
    scale, causal = float(scale), bool(causal)
    if (STATE.enabled and (q._requires_grad or k._requires_grad or v._requires_grad)
            and q._device.type in _ATTENTION_PROBS.kernels and math.prod(q._data.shape[:-1]) * k._data.shape[-2] <= _KEEP_PROBS * (
                q._data.size + k._data.size + v._data.size)):
        p = _ATTENTION_PROBS(q.detach(), k.detach(), *ms, scale=scale, causal=causal)
        return _ATTENTION(q, k, v, *ms, p, scale=scale, causal=causal, probs=True)
    return _ATTENTION(q, k, v, *ms, scale=scale, causal=causal)
