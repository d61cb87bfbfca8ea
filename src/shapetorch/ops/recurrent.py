"""Recurrent cell primitives: the gates of one LSTM or GRU step as one primitive with a fused gradient.

``nn.LSTM``/``nn.GRU`` (and their cells) compute the two matrix products of a step as ops and hand the gate
pre-activations to :func:`lstm_gates` / :func:`gru_gates` where :func:`cell_fusable` holds (a device with the
kernels, float32/float64 operands of one dtype); elsewhere they take the composite (sigmoid, tanh, products), which
runs on every backend. A step is then 3-6 graph nodes instead of 15-18: the loop over time is where a sequence
model's step spends its time, and each node costs the backward walk the same whatever its size.

A cell's gate values are recomputed from the pre-activations by the gradient rather than saved. The formulas are
written once, for NumPy arrays and for tensors alike (``_Ops``): a first-order backward runs them on the arrays; a
backward that builds a graph (``create_graph``, and forward mode through the vjp) runs them in differentiable ops.
The whole-layer primitives' forward kernels and first-order backward (``_lstm_layer_backward``,
``_gru_layer_backward``) are the same formulas as in-place NumPy passes over a few preallocated buffers: there the
per-step call count and the whole-sequence temporaries decide a sequence model's time and peak memory; the LSTM's
run gate by gate (see ``_GATE_ORDER``), on contiguous blocks. An LSTM layer whose gradient will be needed keeps its
activated gates and tanh(c_t) from the forward (``_LSTM_STEPS``, an input of the layer's node), as torch's
workspace; the GRU's gradient remakes its gates (one GEMM over all steps).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._engine.primitives import Prim
from .._grad_mode import STATE
from .._tensor import Tensor
from ..backends import array_pool


class _Ops:
    """sigmoid, tanh, concatenation along the last axis, stacking along a new first one and concatenation along the
    first, for arrays (``_NP``) or tensors (``_st_ops()``)."""

    def __init__(self, sigmoid: Any, tanh: Any, cat: Any, stack: Any, cat0: Any) -> None:
        self.sigmoid, self.tanh, self.cat, self.stack, self.cat0 = sigmoid, tanh, cat, stack, cat0


def _np_sigmoid(a: Any) -> Any:
    out = np.negative(a)  # 1 / (1 + exp(-a)), in one buffer: the sigmoid op's kernel, pass for pass
    np.exp(out, out=out)
    out += 1
    return np.reciprocal(out, out=out)


_NP = _Ops(_np_sigmoid, np.tanh, lambda xs: np.concatenate(xs, axis=-1), np.stack, np.concatenate)


def _st_ops() -> _Ops:
    from .joining import cat, stack
    from .unary import sigmoid, tanh

    return _Ops(sigmoid, tanh, lambda xs: cat(xs, -1), stack, cat)


def _lstm_forward(pre: Any, c: Any, ops: _Ops) -> tuple[Any, ...]:
    h = pre.shape[-1] // 4
    s = ops.sigmoid(pre)  # all four blocks in one call (g's is unused): fewer, longer passes over small arrays
    i, f, o = s[..., :h], s[..., h:2 * h], s[..., 3 * h:]
    g = ops.tanh(pre[..., 2 * h:3 * h])
    c_new = f * c + i * g
    tc = ops.tanh(c_new)
    return i, f, g, o, tc, o * tc, c_new


def _lstm_kernel(pre: Any, c: Any) -> Any:
    *_, h_new, c_new = _lstm_forward(pre, c, _NP)
    return np.concatenate((h_new, c_new), axis=-1)


def _lstm_grads(pre: Any, c: Any, dh: Any, dc_new: Any, ops: _Ops) -> tuple[Any, Any]:
    """(d pre, d c) from the gradients of ``h_new`` and ``c_new``."""
    i, f, g, o, tc, _, _ = _lstm_forward(pre, c, ops)
    dc = dc_new + dh * o * (1 - tc * tc)
    d_pre = ops.cat([dc * g * i * (1 - i), dc * c * f * (1 - f), dc * i * (1 - g * g), dh * tc * o * (1 - o)])
    return d_pre, dc * f


def _lstm_vjp(gy: Tensor, n: Any) -> tuple[Any, ...]:
    pre, c = n.inputs
    h = c._data.shape[-1]
    if not STATE.enabled:
        g = gy._data
        d_pre, dc = _lstm_grads(pre._data, c._data, g[..., :h], g[..., h:], _NP)
        return Tensor._make(d_pre, pre._device), Tensor._make(dc, pre._device)
    return _lstm_grads(pre, c, gy[..., :h], gy[..., h:], _st_ops())


def _gru_forward(gi: Any, gh: Any, h: Any, ops: _Ops) -> tuple[Any, ...]:
    k = h.shape[-1]
    rz = ops.sigmoid(gi[..., :2 * k] + gh[..., :2 * k])  # r and z in one call
    r, z = rz[..., :k], rz[..., k:]
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


# -- whole layers: the loop over time inside one primitive ------------------------------------------------------

# A layer's large arrays (the states and gates the forward keeps for the gradient, its scratch, the gradient's buffers)
# come from the thread's array pool (``backends.array_pool``): a fresh array of a megabyte or two costs its page
# faults again on every call once glibc has handed the memory back (224 of them per layer call of the benchmark's
# LSTM, 5% of its forward and backward).
_buffer = array_pool.empty


def _order(steps: int, reverse: bool) -> range:
    return range(steps - 1, -1, -1) if reverse else range(steps)


def _state_product(h: Any, w_hh: Any, b_hh: Any) -> Any:
    gh = h @ w_hh.mT  # F.linear's order: the product, then the bias
    return gh if b_hh is None else gh + b_hh


def _sigmoid_(a: Any) -> Any:
    """``_np_sigmoid`` in place: the same passes, no new buffer (a step's gates)."""
    np.negative(a, out=a)
    np.exp(a, out=a)
    a += 1
    return np.reciprocal(a, out=a)


def _state_weight(w_hh: Any) -> Any:
    """``w_hh.T`` in rows: a (B, H) @ (H, kH) product per step against the transposed view is 2x slower (OpenBLAS,
    B = 16); the copy is made once per layer call."""
    return np.ascontiguousarray(w_hh.T)


# The LSTM layer's kernels lay a step's gates out gate by gate, (4, B, H), and its states as (2, T, B, H). In torch's
# (B, 4H) layout a gate is a (B, H) column block, B strided rows: NumPy sets up its general iterator for every call
# on such a view, 3-6x the cost of the same call on a contiguous block ((16, 128) float32, one thread), and a step
# makes about ten. Gate by gate every block is contiguous, and the state product is four (B, H) @ (H, H) GEMMs in
# one batched call, measured faster than the one (B, H) @ (H, 4H) (OpenBLAS, B = 16, H = 128). The input projection
# changes layout once per call, in block copies whose inner runs are whole rows. The blocks are in the order o, i,
# f, g (torch's: i, f, g, o) so that the sigmoid runs over the first three and d c scales the last three, each in
# one call.
_GATE_ORDER = (3, 0, 1, 2)  # torch's block of each of the kernels' blocks


def _torch_blocks(k: int) -> list[slice]:
    """Torch's slice of the gate axis for each block of the kernels' order."""
    return [slice(j * k, (j + 1) * k) for j in _GATE_ORDER]


def _step_weights(w_hh: Any) -> Any:
    """``w_hh`` (4H, H) as the four (H, H) blocks of the state product in the kernels' order, (4, H, H), each
    transposed, in rows (against a transposed view the batched product is 1.5-2x slower), the sigmoid blocks o, i, f
    negated: one pass per block, each a copy of torch's block that transposes and negates at once."""
    k = w_hh.shape[-1]
    blocks = w_hh.reshape(4, k, k)
    w = np.empty((4, k, k), w_hh.dtype)
    for j, src in enumerate(_GATE_ORDER):
        if j < 3:
            np.negative(blocks[src].T, out=w[j])
        else:
            np.copyto(w[j], blocks[src].T)
    return w


def _lstm_steps(gi: Any, h: Any, c: Any, w_hh: Any, b: tuple[Any, ...], reverse: bool, keep_gates: bool) -> Any:
    """[h_t, c_t] of every step, (2, T, B, H); with ``keep_gates``, one flat array of it followed by every step's
    activated gates, (T, 4, B, H) in the kernels' order o, i, f, g, and tanh(c_t), (T, B, H) (see ``_split_steps``).
    Each step is the state GEMM and in-place passes over contiguous blocks (``_lstm_forward``'s formulas), h_t and
    c_t written straight into the result."""
    steps, batch, g4 = gi.shape
    k = g4 // 4
    n = steps * batch * k
    flat = _buffer((7 * n if keep_gates else 2 * n,), gi.dtype)  # (the graph or the caller holds it: see _buffer)
    out = flat[:2 * n].reshape(2, steps, batch, k)
    if keep_gates:
        x, tcs = flat[2 * n:6 * n].reshape(steps, 4, batch, k), flat[6 * n:].reshape(steps, batch, k)
    else:
        x, tcs = _buffer((steps, 4, batch, k), gi.dtype), None
    # x = gi + (b_ih + b_hh) by gates, each step's gates start from it (the two biases are one sum: the input projection
    # comes without its bias, so that the gradient sums them once); the sigmoid blocks o, i, f negated, in x and in
    # the weights, so that they come out of the step's sum as -z, exactly (IEEE negation commutes with the sums and the
    # products), and the sigmoid 1 / (1 + exp(-z)) starts with the exp: a call a step fewer
    bias = (b[0] + b[1] if len(b) == 2 else b[0]) if b else None
    for j, s in enumerate(_torch_blocks(k)):
        dst, src = x[:, j], gi[..., s]
        if j < 3:
            if bias is not None:
                np.subtract(np.negative(bias[s]), src, out=dst)
            else:
                np.negative(src, out=dst)
        elif bias is not None:
            np.add(src, bias[s], out=dst)
        else:
            np.copyto(dst, src)
    w = _step_weights(w_hh)
    gh, tmp, one = np.empty((4, batch, k), gi.dtype), np.empty((batch, k), gi.dtype), np.ones((), gi.dtype)
    # the per-step views made up front by iterating in C, and every ufunc's output passed by position: a layer's
    # forward measured 4-10% shorter so at these sizes (B = 16, H = 128), where a step's calls are 1-3 us each
    hs, cs = list(out[0]), list(out[1])
    tcl = [tmp] * steps if tcs is None else list(tcs)
    exp, recip, tanh, mul, add, matmul = np.exp, np.reciprocal, np.tanh, np.multiply, np.add, np.matmul
    for t in _order(steps, reverse):
        pre = x[t]
        matmul(h, w, gh)
        add(pre, gh, pre)
        s3 = pre[:3]  # -z of o, i, f
        exp(s3, s3)
        add(s3, one, s3)  # (a 0-d array: a Python 1 is converted on every call)
        recip(s3, s3)
        o, i, f, g = pre
        tanh(g, g)
        h, c_new, tc = hs[t], cs[t], tcl[t]
        mul(f, c, c_new)
        mul(i, g, tmp)
        add(c_new, tmp, c_new)
        tanh(c_new, tc)
        mul(o, tc, h)
        c = c_new
    return flat if keep_gates else out


def _split_steps(flat: Any, gi_shape: tuple[int, ...]) -> tuple[Any, Any, Any]:
    """``_lstm_steps``' kept result as (states (2, T, B, H), gates (T, 4, B, H), tanh(c_t) (T, B, H)), all
    contiguous."""
    steps, batch, g4 = gi_shape
    k = g4 // 4
    n = steps * batch * k
    return (flat[:2 * n].reshape(2, steps, batch, k), flat[2 * n:6 * n].reshape(steps, 4, batch, k),
            flat[6 * n:].reshape(steps, batch, k))


def _lstm_layer_kernel(gi: Any, h: Any, c: Any, w_hh: Any, *rest: Any, reverse: bool, kept: bool = False) -> Any:
    """[h_t, c_t] of every step, (2, T, B, H): the states are the output the gradient reads back. With ``kept`` the
    last of ``rest`` is ``_lstm_steps``' result with the gates (``_LSTM_STEPS``), and the output is a view of it."""
    if kept:
        return _split_steps(rest[-1], gi.shape)[0]
    return _lstm_steps(gi, h, c, w_hh, rest, reverse, False)


def _before(seq: Any, first: Any, reverse: bool, ops: _Ops) -> Any:
    """The state before each step, in time order, from the states after them (``seq``, (T, B, H))."""
    return ops.cat0([seq[1:], first[None]]) if reverse else ops.cat0([first[None], seq[:-1]])


def _rows_product(x: Any, w_hh: Any, b_hh: Any) -> Any:
    """``_state_product`` of every step at once: one GEMM over the (T * B) rows."""
    steps, batch, k = x.shape
    return _state_product(x.reshape(steps * batch, k), w_hh, b_hh).reshape(steps, batch, -1)


def _lstm_layer_grads(gi: Any, h0: Any, c0: Any, w_hh: Any, bs: tuple[Any, ...], y: Any, gy: Any, reverse: bool,
                      ops: _Ops) -> tuple[Any, ...]:
    """Backpropagation through time: (d gi, d h0, d c0, d w_hh, d b_ih, d b_hh) from the gradient of every
    ``[h_t, c_t]`` (``bs``: the biases b_ih, b_hh, or none). The states before each step come from the saved output
    ``y``, so the gates of all steps are recomputed at once (one GEMM, whole-sequence elementwise passes); only the
    chain through the states goes step by step."""
    h_prev, c_prev = _before(y[0], h0, reverse, ops), _before(y[1], c0, reverse, ops)
    pre = gi + _rows_product(h_prev, w_hh, None)
    for b in bs:
        pre = pre + b
    i, f, g, o, tc, _, _ = _lstm_forward(pre, c_prev, ops)
    # d pre = [dc * g * i(1-i), dc * c * f(1-f), dc * i(1-g^2), dh * tc * o(1-o)], dc = dc_new + dh * o(1-tc^2)
    via_h = o * (1 - tc * tc)
    ci, cf, cg, co = g * i * (1 - i), c_prev * f * (1 - f), i * (1 - g * g), tc * o * (1 - o)
    steps = gi.shape[0]
    d_pre: list[Any] = [None] * steps
    dh: Any = None
    dc: Any = None
    for t in reversed(_order(steps, reverse)):
        dh_t = gy[0][t] if dh is None else gy[0][t] + dh
        dc_t = gy[1][t] + dh_t * via_h[t]
        if dc is not None:
            dc_t = dc_t + dc
        d_pre[t] = ops.cat([dc_t * ci[t], dc_t * cf[t], dc_t * cg[t], dh_t * co[t]])
        dc = dc_t * f[t]
        dh = d_pre[t] @ w_hh
    d_all = ops.stack(d_pre)
    return _layer_sums(d_all, d_all, h_prev, dh, dc, len(bs))


def _np_rows_product(x: Any, w_hh: Any, b_hh: Any) -> Any:
    """``_rows_product`` on arrays with the bias added in place (no second (T, B, kH) array), into a pooled array."""
    steps, batch, k = x.shape
    out = _buffer((steps, batch, w_hh.shape[0]), x.dtype)
    np.matmul(x.reshape(steps * batch, k), w_hh.T, out=out.reshape(steps * batch, -1))
    if b_hh is not None:
        out += b_hh
    return out


def _np_before(seq: Any, first: Any, reverse: bool) -> Any:
    """``_before`` on arrays, into a pooled array."""
    out = _buffer(seq.shape, seq.dtype)
    if reverse:
        out[:-1], out[-1] = seq[1:], first
    else:
        out[0], out[1:] = first, seq[:-1]
    return out


def _times_before(dst: Any, seq: Any, first: Any, reverse: bool) -> None:
    """``dst *= _before(seq, first)`` without making the shifted copy."""
    if reverse:
        dst[:-1] *= seq[1:]
        dst[-1] *= first
    else:
        dst[1:] *= seq[:-1]
        dst[0] *= first


def _lstm_layer_backward(gi: Any, h0: Any, c0: Any, w_hh: Any, bs: tuple[Any, ...], y: Any, gy: Any, reverse: bool,
                         steps_out: Any) -> tuple[Any, ...]:
    """``_lstm_layer_grads`` on NumPy arrays, from what the forward kept (``steps_out``, ``_lstm_steps``' result with
    the activated gates and tanh(c_t) after the states). Each step makes its d pre from the kept values in a few
    (B, H) buffers that stay in the cache (about twenty in-place passes and the state GEMMs) and writes it into
    torch's (T, B, 4H) layout and order: it is the gradient of the input projection, and of the state product alike.
    Whole-sequence arrays of the coefficients would cost the backward a (T, B, 4H) array more at its peak and passes
    over memory. The kept values are read, never written: a graph kept for another backward still has them."""
    steps, batch, g4 = gi.shape
    k = g4 // 4
    _, gates, tcs = _split_steps(steps_out, gi.shape)
    c_all = y[1]
    d_pre = _buffer(gi.shape, gi.dtype)  # (the gradient's consumers hold it: see _buffer)
    by_gate = d_pre.reshape(steps, batch, 4, k).transpose(0, 2, 1, 3)  # (T, 4, B, H) views, torch's order
    w = w_hh.reshape(4, k, k)  # d h = sum_j d pre_j @ w_j
    dh, dc = np.zeros_like(h0), np.zeros_like(c0)
    dh_t, dc_t, u = (np.empty_like(h0) for _ in range(3))
    der, d4, dh4 = np.empty((3, batch, k), gi.dtype), np.empty((4, batch, k), gi.dtype), np.empty((4, batch, k), gi.dtype)
    d_i, d_f, d_g, d_o = d4
    ifg = d4[:3]
    der_o, der_i, der_f = der
    # the state before each step (c0 before the first), the incoming gradients and the kept values as lists of views
    # made in C, and the ufuncs' outputs by position, as in the forward (here it measured within the noise: the
    # backward's time is its twenty calls a step themselves)
    c_seq = list(c_all)
    c_before = [c0, *c_seq[:-1]] if not reverse else [*c_seq[1:], c0]
    gy_h, gy_c, tcl, gl = list(gy[0]), list(gy[1]), list(tcs), list(gates)
    mul, add, sub, matmul = np.multiply, np.add, np.subtract, np.matmul
    one = np.ones((), gi.dtype)  # (a 0-d array: a Python 1 is converted on every call)
    # the cell states' gradient is zero but where c_n is used: one pass over it instead of T calls
    with_c = bool(gy[1].any())
    for t in reversed(_order(steps, reverse)):
        gt, tc = gl[t], tcl[t]
        o, i, f, g = gt
        g3 = gt[:3]
        sub(one, g3, der)  # o(1-o), i(1-i), f(1-f)
        mul(der, g3, der)
        add(gy_h[t], dh, dh_t)
        # dc = dc_new + dh * o(1-tc^2) + dc_next; d pre = [dc * g i(1-i), dc * c f(1-f), dc * i(1-g^2), dh * tc o(1-o)]
        mul(tc, tc, u)
        sub(one, u, u)
        mul(u, o, u)
        mul(u, dh_t, u)
        if with_c:
            add(u, gy_c[t], dc_t)
            add(dc_t, dc, dc_t)
        else:
            add(u, dc, dc_t)
        mul(der_i, g, d_i)
        mul(der_f, c_before[t], d_f)
        mul(g, g, d_g)
        sub(one, d_g, d_g)
        mul(d_g, i, d_g)
        mul(ifg, dc_t, ifg)
        mul(der_o, tc, d_o)
        mul(d_o, dh_t, d_o)
        mul(dc_t, f, dc)
        matmul(d4, w, dh4)
        add.reduce(dh4, axis=0, out=dh)
        np.copyto(by_gate[t], d4)
    h_prev = _np_before(y[0], h0, reverse)
    return _layer_sums(d_pre, d_pre, h_prev, dh, dc, len(bs))


def _layer_sums(d_gi: Any, d_gh: Any, h_prev: Any, dh0: Any, dc0: Any, biases: int) -> tuple[Any, ...]:
    """The weight's gradient as one product over all steps and rows, the biases' as one sum: ``biases`` of them
    (the LSTM's b_ih and b_hh have the same gradient, the sum over the rows of d pre: it is made once and copied, so
    that each input has a gradient of its own; in a graph of the gradient one tensor would otherwise become both
    parameters' ``.grad``)."""
    g = d_gh.shape[-1]
    rows = d_gh.reshape(-1, g)
    dw = rows.mT @ h_prev.reshape(-1, h_prev.shape[-1])
    grads = (d_gi, dh0, *(() if dc0 is None else (dc0,)), dw)
    if not biases:
        return grads
    db = rows.sum(0)
    return (*grads, *(db if j == biases - 1 else _copy(db) for j in range(biases)))


def _copy(a: Any) -> Any:
    """A gradient of a second input from the first's: an array copied, a tensor remade (``a * 1`` would be a node
    whose backward multiplies; the sum's own node is what a graph of the gradient needs, so it is taken again)."""
    return a.copy() if isinstance(a, np.ndarray) else a.clone()


def _layer_vjp(grads: Any, fused: Any, before_bias: int) -> Any:
    """A layer's vjp: ``fused`` on the arrays (first order) or ``grads`` on the tensors (a graph of the gradient);
    the primitive's inputs are ``before_bias`` tensors, then its biases (the GRU's state bias, the LSTM's b_ih and
    b_hh; none without), given to both as one tuple, then (``kept``) what the forward kept for the gradient, which
    ``fused`` takes last and which gets no gradient."""
    def vjp(gy: Tensor, n: Any) -> tuple[Any, ...]:
        xs = n.inputs
        kept: tuple[Any, ...] = ()
        if n.params.get("kept"):
            xs, kept = xs[:-1], (xs[-1],)
        args, bs = xs[:before_bias], xs[before_bias:]
        if not STATE.enabled:
            out = fused(*(t._data for t in args), tuple(t._data for t in bs), n.out._data, gy._data,
                        n.params["reverse"], *(t._data for t in kept))
            return (*(Tensor._make(a, xs[0]._device) for a in out), *(None for _ in kept))
        return (*grads(*args, bs, n.out, gy, n.params["reverse"], _st_ops()), *(None for _ in kept))
    return vjp


def _gru_layer_kernel(gi: Any, h: Any, w_hh: Any, *b: Any, reverse: bool) -> Any:
    """h_t of every step, (T, B, H): the state GEMM and in-place passes per step (``_gru_forward``'s formulas in its
    order of operations), each state written straight into the output."""
    k = h.shape[-1]
    out = _buffer((*gi.shape[:-1], k), gi.dtype)  # (the graph or the caller holds it: see _buffer)
    wt = _state_weight(w_hh)
    gh = np.empty((*h.shape[:-1], 3 * k), gi.dtype)
    rz = np.empty((*h.shape[:-1], 2 * k), gi.dtype)
    n, tmp = np.empty_like(h), np.empty_like(h)
    r, z = rz[..., :k], rz[..., k:]
    for t in _order(gi.shape[0], reverse):
        np.matmul(h, wt, out=gh)
        if b:
            gh += b[0]
        np.add(gi[t, ..., :2 * k], gh[..., :2 * k], out=rz)
        _sigmoid_(rz)
        np.multiply(r, gh[..., 2 * k:], out=n)
        np.add(gi[t, ..., 2 * k:], n, out=n)
        np.tanh(n, out=n)
        np.subtract(1, z, out=tmp)
        tmp *= n
        h_new = out[t]
        np.multiply(z, h, out=h_new)
        h_new += tmp
        h = h_new
    return out


def _gru_layer_grads(gi: Any, h0: Any, w_hh: Any, bs: tuple[Any, ...], y: Any, gy: Any, reverse: bool,
                     ops: _Ops) -> tuple[Any, ...]:
    """Backpropagation through time: (d gi, d h0, d w_hh, d b_hh) from the gradient of every ``h_t``, the gates of
    all steps recomputed at once from the saved states (as for the LSTM)."""
    h_prev = _before(y, h0, reverse, ops)
    r, z, n, hn, _ = _gru_forward(gi, _rows_product(h_prev, w_hh, bs[0] if bs else None), h_prev, ops)
    # d n_pre = dy (1-z)(1-n^2); d r_pre = d n_pre * hn * r(1-r); d z_pre = dy (h - n) z(1-z); d h (direct) = dy z
    via_n, via_r, via_z = (1 - z) * (1 - n * n), hn * r * (1 - r), (h_prev - n) * z * (1 - z)
    steps = gi.shape[0]
    d_gi: list[Any] = [None] * steps
    d_gh: list[Any] = [None] * steps
    dh: Any = None
    for t in reversed(_order(steps, reverse)):
        dy = gy[t] if dh is None else gy[t] + dh
        dn = dy * via_n[t]
        dr, dz = dn * via_r[t], dy * via_z[t]
        d_gi[t], d_gh[t] = ops.cat([dr, dz, dn]), ops.cat([dr, dz, dn * r[t]])
        dh = dy * z[t] + d_gh[t] @ w_hh
    return _layer_sums(ops.stack(d_gi), ops.stack(d_gh), h_prev, dh, None, len(bs))


def _gru_layer_backward(gi: Any, h0: Any, w_hh: Any, bs: tuple[Any, ...], y: Any, gy: Any,
                        reverse: bool) -> tuple[Any, ...]:
    """``_gru_layer_grads`` on NumPy arrays with few buffers: one (T, B, 3H) array of d gh filled step by step (the
    state GEMM and seven in-place passes over (B, H) rows), whose n block becomes d gi's after the weight's
    gradient is taken."""
    steps, k = gi.shape[0], h0.shape[-1]
    h_prev = _np_before(y, h0, reverse)
    gh = _np_rows_product(h_prev, w_hh, bs[0] if bs else None)
    shape = h_prev.shape
    rz = np.add(gi[..., :2 * k], gh[..., :2 * k], out=_buffer((*shape[:-1], 2 * k), gi.dtype))
    _sigmoid_(rz)
    r, z = rz[..., :k], rz[..., k:]
    hn = gh[..., 2 * k:]
    n = np.multiply(r, hn, out=_buffer(shape, gi.dtype))
    np.add(gi[..., 2 * k:], n, out=n)
    np.tanh(n, out=n)
    # via_n = (1-z)(1-n^2), via_r = hn r(1-r), via_z = (h - n) z(1-z), each in a buffer that is free
    via_z = np.subtract(h_prev, n, out=_buffer(shape, gi.dtype))
    via_z *= z
    tmp = np.subtract(1, z, out=_buffer(shape, gi.dtype))
    via_z *= tmp
    np.multiply(n, n, out=n)
    np.subtract(1, n, out=n)
    n *= tmp
    via_n = n
    np.subtract(1, r, out=tmp)
    tmp *= r
    hn *= tmp
    via_r = hn
    del tmp
    d_gh = _buffer(gh.shape, gh.dtype)  # (the gradient's consumers hold it: see _buffer)
    dh, dy, dh_w = (np.zeros_like(h0) for _ in range(3))
    for t in reversed(_order(steps, reverse)):
        np.add(gy[t], dh, out=dy)
        dn = via_n[t]
        dn *= dy  # d n_pre, kept in via_n's buffer for d gi
        np.multiply(dn, via_r[t], out=d_gh[t, ..., :k])
        np.multiply(dy, via_z[t], out=d_gh[t, ..., k:2 * k])
        np.multiply(dn, r[t], out=d_gh[t, ..., 2 * k:])
        np.matmul(d_gh[t], w_hh, out=dh_w)
        np.multiply(dy, z[t], out=dh)
        dh += dh_w
    grads = _layer_sums(d_gh, d_gh, h_prev, dh, None, len(bs))
    d_gh[..., 2 * k:] = via_n  # the rows of d gi: d gh's but for the n block (no r)
    return grads


_LSTM_LAYER = Prim("lstm_layer", _lstm_layer_kernel, _layer_vjp(_lstm_layer_grads, _lstm_layer_backward, 4), save_output=True)
# the forward of a layer whose gradient will be needed: the states and the gates, which the layer's node keeps
_LSTM_STEPS = Prim("lstm_layer_steps", lambda gi, h, c, w_hh, *b, reverse: _lstm_steps(gi, h, c, w_hh, b, reverse, True))
_GRU_LAYER = Prim("gru_layer", _gru_layer_kernel, _layer_vjp(_gru_layer_grads, _gru_layer_backward, 3), save_output=True)


def lstm_layer(gi: Tensor, h0: Tensor, c0: Tensor, w_hh: Tensor, b_ih: Tensor | None, b_hh: Tensor | None,
               reverse: bool) -> tuple[Tensor, Tensor, Tensor]:
    """One LSTM layer and direction over a (T, B, 4H) input projection without its bias (``b_ih``, added here with
    ``b_hh``: the two get one gradient, summed once): (the (T, B, H) outputs, h_T, c_T). The biases are both given
    or both None."""
    bs = () if b_ih is None or b_hh is None else (b_ih, b_hh)
    if STATE.enabled and any(t._requires_grad for t in (gi, h0, c0, w_hh, *bs)):
        steps = _LSTM_STEPS(gi.detach(), h0.detach(), c0.detach(), w_hh.detach(), *(t.detach() for t in bs),
                            reverse=reverse)
        y = _LSTM_LAYER(gi, h0, c0, w_hh, *bs, steps, reverse=reverse, kept=True)
    else:
        y = _LSTM_LAYER(gi, h0, c0, w_hh, *bs, reverse=reverse)
    last = 0 if reverse else gi._data.shape[0] - 1
    seq = y.select(0, 0)
    return seq, seq.select(0, last), y.select(0, 1).select(0, last)


def gru_layer(gi: Tensor, h0: Tensor, w_hh: Tensor, b_hh: Tensor | None, reverse: bool) -> tuple[Tensor, Tensor]:
    """One GRU layer and direction over a (T, B, 3H) input projection: (the (T, B, H) outputs, h_T)."""
    seq = _GRU_LAYER(gi, h0, w_hh, *(() if b_hh is None else (b_hh,)), reverse=reverse)
    return seq, seq.select(0, 0 if reverse else gi._data.shape[0] - 1)


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
