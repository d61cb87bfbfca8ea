"""Recurrent cell primitives: the gates of one LSTM or GRU step as one primitive with a fused gradient.

``nn.LSTM``/``nn.GRU`` (and their cells) compute the two matrix products of a step as ops and hand the gate
pre-activations to :func:`lstm_gates` / :func:`gru_gates` where :func:`cell_fusable` holds (a device with the
kernels, float32/float64 operands of one dtype); elsewhere they take the composite (sigmoid, tanh, products), which
runs on every backend. A step is then 3-6 graph nodes instead of 15-18: the loop over time is where a sequence
model's step spends its time, and each node costs the backward walk the same whatever its size.

The gate values are recomputed from the pre-activations by the gradient rather than saved. The formulas are
written once, for NumPy arrays and for tensors alike (``_Ops``): a first-order backward runs them on the arrays; a
backward that builds a graph (``create_graph``, and forward mode through the vjp) runs them in differentiable ops.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._engine.primitives import Prim
from .._grad_mode import STATE
from .._tensor import Tensor


class _Ops:
    """sigmoid, tanh and concatenation along the last axis, for arrays (``_NP``) or tensors (``_ST``)."""

    def __init__(self, sigmoid: Any, tanh: Any, cat: Any) -> None:
        self.sigmoid, self.tanh, self.cat = sigmoid, tanh, cat


def _np_sigmoid(a: Any) -> Any:
    out = np.negative(a)  # 1 / (1 + exp(-a)), in one buffer: the sigmoid op's kernel, pass for pass
    np.exp(out, out=out)
    out += 1
    return np.reciprocal(out, out=out)


_NP = _Ops(_np_sigmoid, np.tanh, lambda xs: np.concatenate(xs, axis=-1))


def _st_ops() -> _Ops:
    from .joining import cat
    from .unary import sigmoid, tanh

    return _Ops(sigmoid, tanh, lambda xs: cat(xs, -1))


def _lstm_forward(pre: Any, c: Any, ops: _Ops) -> tuple[Any, ...]:
    h = pre.shape[-1] // 4
    i, f = ops.sigmoid(pre[..., :h]), ops.sigmoid(pre[..., h:2 * h])
    g, o = ops.tanh(pre[..., 2 * h:3 * h]), ops.sigmoid(pre[..., 3 * h:])
    c_new = f * c + i * g
    tc = ops.tanh(c_new)
    return i, f, g, o, tc, o * tc, c_new


def _lstm_kernel(pre: Any, c: Any) -> Any:
    *_, h_new, c_new = _lstm_forward(pre, c, _NP)
    return np.concatenate((h_new, c_new), axis=-1)


def _lstm_grads(pre: Any, c: Any, gy: Any, ops: _Ops) -> tuple[Any, Any]:
    """(d pre, d c) from the gradient of ``[h_new, c_new]``."""
    i, f, g, o, tc, _, _ = _lstm_forward(pre, c, ops)
    h = c.shape[-1]
    dh, dc_new = gy[..., :h], gy[..., h:]
    dc = dc_new + dh * o * (1 - tc * tc)
    d_pre = ops.cat([dc * g * i * (1 - i), dc * c * f * (1 - f), dc * i * (1 - g * g), dh * tc * o * (1 - o)])
    return d_pre, dc * f


def _lstm_vjp(gy: Tensor, n: Any) -> tuple[Any, ...]:
    pre, c = n.inputs
    if not STATE.enabled:
        d_pre, dc = _lstm_grads(pre._data, c._data, gy._data, _NP)
        return Tensor._make(d_pre, pre._device), Tensor._make(dc, pre._device)
    return _lstm_grads(pre, c, gy, _st_ops())


def _gru_forward(gi: Any, gh: Any, h: Any, ops: _Ops) -> tuple[Any, ...]:
    k = h.shape[-1]
    r = ops.sigmoid(gi[..., :k] + gh[..., :k])
    z = ops.sigmoid(gi[..., k:2 * k] + gh[..., k:2 * k])
    hn = gh[..., 2 * k:]
    n = ops.tanh(gi[..., 2 * k:] + r * hn)
    return r, z, n, hn, (1 - z) * n + z * h


def _gru_kernel(gi: Any, gh: Any, h: Any) -> Any:
    return _gru_forward(gi, gh, h, _NP)[-1]


def _gru_grads(gi: Any, gh: Any, h: Any, gy: Any, ops: _Ops) -> tuple[Any, Any, Any]:
    """(d gi, d gh, d h) from the gradient of the new state."""
    r, z, n, hn, _ = _gru_forward(gi, gh, h, ops)
    dn = gy * (1 - z) * (1 - n * n)
    dr = dn * hn * r * (1 - r)
    dz = gy * (h - n) * z * (1 - z)
    return ops.cat([dr, dz, dn]), ops.cat([dr, dz, dn * r]), gy * z


def _gru_vjp(gy: Tensor, n: Any) -> tuple[Any, ...]:
    gi, gh, h = n.inputs
    if not STATE.enabled:
        return tuple(Tensor._make(a, gi._device) for a in _gru_grads(gi._data, gh._data, h._data, gy._data, _NP))
    return _gru_grads(gi, gh, h, gy, _st_ops())


_LSTM = Prim("lstm_cell_gates", _lstm_kernel, _lstm_vjp)
_GRU = Prim("gru_cell_gates", _gru_kernel, _gru_vjp)


def cell_fusable(*ts: Tensor) -> bool:
    """Whether the fused gates serve: a device with their kernels, float32/float64 operands of one dtype."""
    dt = ts[0]._data.dtype
    return ts[0]._device.type in _LSTM.kernels and dt in (np.float32, np.float64) \
        and all(t._data.dtype == dt and t._device is ts[0]._device and type(t._data) is np.ndarray for t in ts)


def lstm_gates(pre: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
    """One LSTM step from its gate pre-activations ``pre`` (..., 4H, torch's order i, f, g, o) and cell state ``c``:
    ``(h_new, c_new)``."""
    y = _LSTM(pre, c)
    h = c._data.shape[-1]
    return y.narrow(-1, 0, h), y.narrow(-1, h, h)


def gru_gates(gi: Tensor, gh: Tensor, h: Tensor) -> Tensor:
    """One GRU step from the input's and the state's projections (..., 3H, torch's order r, z, n) and the state."""
    return _GRU(gi, gh, h)
