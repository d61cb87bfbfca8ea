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

from .._engine.backward import should_compute_output
from .._engine.primitives import Prim
from .._grad_mode import STATE, no_grad
from .._tensor import Tensor
from .activation import _log_sigmoid_kernel, _log_softmax_kernel, _softmax_kernel, softmax
from .conversion import _where_kernel, where
from .reduction import _sum_kernel


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


# -- mse_loss, smooth_l1_loss, huber_loss: one primitive each and torch's fused gradients --------------------------
# NOTE [fused pointwise losses]. The composites were a subtraction, a square (or an abs, a comparison, two
# branches and a where) and a mean: their backward ran the mean's expand and division, the square's two products
# and their sum, the subtraction's negation (smooth_l1/huber: where's two selects, abs's sign, ...). torch runs
# each as one forward op and one backward op (mse_loss_backward, smooth_l1_loss_backward, huber_loss_backward).
# Here: the elementwise loss of ``d = x - t`` and its reduction in one kernel; the gradient in ``x`` in one kernel of
# ``(g, x, t)`` with torch's operation order and its selects at the kinks (``norm`` is 1/numel for 'mean', else 1);
# the target's gradient is the same kernel of ``(g, t, x)``, as torch's. Each gradient
# primitive's own derivative (torch's *_double_backward formulas) serves double backward; float32/float64 only.

def _one_d(kernel: Any) -> Any:
    """``kernel`` of 0-d input and target as one element (NumPy's arithmetic on 0-d arrays gives scalars, which
    ``out=`` refuses), its result in their shape (or reduced: 0-d either way)."""
    def run(*arrays: Any, **params: Any) -> Any:
        x = arrays[-2]
        if x.ndim:
            return kernel(*arrays, **params)
        return np.asarray(kernel(*arrays[:-2], x.reshape(1), arrays[-1].reshape(1), **params)).reshape(())
    return run


def _loss_reduced(elem: Any, reduction: str) -> Any:
    if reduction == "none":
        return elem
    total = _sum_kernel(elem, tuple(range(elem.ndim)), False)
    return np.asarray(total / elem.dtype.type(elem.size) if reduction == "mean" else total, dtype=elem.dtype)


def _norm(x: Any, reduction: str, factor: float = 1.0) -> Any:
    """torch's ``norm`` as the dtype's number: ``factor / numel`` for 'mean' (computed in double), else factor."""
    if reduction != "mean":
        return x.dtype.type(factor)
    return x.dtype.type(factor / x.size) if x.size else x.dtype.type(np.nan)  # (an empty mean's gradient is empty)


@_one_d
def _mse_kernel(x: Any, t: Any, reduction: str) -> Any:
    d = x - t
    d *= d
    return _loss_reduced(d, reduction)


@_one_d
def _mse_backward_kernel(g: Any, x: Any, t: Any, reduction: str) -> Any:
    """``norm * (x - t) * g``, norm = 2 (/ numel for 'mean'), torch's order."""
    d = x - t
    d *= _norm(x, reduction, 2.0)
    d *= g
    return d


@_one_d
def _smooth_l1_kernel(x: Any, t: Any, reduction: str, beta: float) -> Any:
    """``z < beta ? 0.5 * z * z / beta : z - 0.5 * beta``, ``z = |x - t|`` (torch's)."""
    b = x.dtype.type(beta)
    z = np.abs(x - t)
    quad = z * x.dtype.type(0.5)
    quad *= z
    quad /= b
    return _loss_reduced(_where_kernel(z < b, quad, z - x.dtype.type(0.5) * b), reduction)


@_one_d
def _smooth_l1_backward_kernel(g: Any, x: Any, t: Any, reduction: str, beta: float) -> Any:
    """``d <= -beta ? -norm * g : d >= beta ? norm * g : norm * d * g / beta``, ``d = x - t`` (torch's), as the
    inner formula clipped to +-|norm * g|: the same values (the inner one passes the bound exactly where |d|
    passes beta, up to an ulp of rounding right at the kink), and a clip where two selects cost five times its
    time (their masks change at random)."""
    nm = _norm(x, reduction)
    r = x - t
    r *= nm
    r *= g
    r /= x.dtype.type(beta)
    bound = np.abs(nm * g)
    return np.clip(r, -bound, bound, out=r)


@_one_d
def _huber_kernel(x: Any, t: Any, reduction: str, delta: float) -> Any:
    """``z < delta ? 0.5 * z * z : delta * (z - 0.5 * delta)``, ``z = |x - t|`` (torch's)."""
    dl = x.dtype.type(delta)
    z = np.abs(x - t)
    quad = z * x.dtype.type(0.5)
    quad *= z
    lin = z - x.dtype.type(0.5) * dl
    lin *= dl
    return _loss_reduced(_where_kernel(z < dl, quad, lin), reduction)


@_one_d
def _huber_backward_kernel(g: Any, x: Any, t: Any, reduction: str, delta: float) -> Any:
    """``d <= -delta ? -norm * g * delta : d >= delta ? norm * g * delta : norm * d * g``, ``d = x - t`` (torch's),
    as the inner formula clipped to +-|norm * g * delta| (see smooth_l1's)."""
    nm = _norm(x, reduction)
    r = x - t
    r *= nm
    r *= g
    bound = np.abs(nm * g * x.dtype.type(delta))
    return np.clip(r, -bound, bound, out=r)


def _second(name: str, d: Tensor, p: dict[str, Any]) -> Tensor | float:
    """The loss's second derivative in ``x`` at ``d = x - t`` (before the reduction's norm)."""
    if name == "mse_loss":
        return 2.0
    if name == "smooth_l1_loss":
        return (d.abs() < p["beta"]).to(d.dtype) / p["beta"]
    return (d.abs() < p["delta"]).to(d.dtype)


def _loss_vjp(name: str) -> Any:
    def vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
        x, t = n.inputs
        b = _LOSS_BACKWARD[name]
        gx = b(g, x, t, **n.params) if should_compute_output(n, 0) else None
        # the target's: the same gradient with the roles swapped, as torch (its node is the gradient's too)
        return gx, (b(g, t, x, **n.params) if should_compute_output(n, 1) else None)
    return vjp


def _loss_backward_vjp(name: str) -> Any:
    def vjp(gg: Tensor, n: Any) -> tuple[Any, ...]:
        g, x, t = n.inputs
        p = n.params
        dg = None
        if should_compute_output(n, 0):  # linear in g: the same gradient of gg, summed to g's shape
            dg = _LOSS_BACKWARD[name](gg, x, t, **p)
            if g._data.ndim == 0:
                dg = dg.sum()
        dx = dt = None
        if should_compute_output(n, 1) or should_compute_output(n, 2):
            nm = 1.0 / max(x._data.size, 1) if p["reduction"] == "mean" else 1.0  # (empty: an empty gradient)
            dx = gg * g * _second(name, x - t, p) * nm
            dt = -dx if should_compute_output(n, 2) else None
        return dg, dx, dt
    return vjp


def _difference(ts: tuple[Any, ...]) -> Any:
    """The tangent of ``x - t`` from those of x and t (None where neither has one)."""
    tx, tt = ts
    return tx if tt is None else (-tt if tx is None else tx - tt)


def _loss_jvp(name: str) -> Any:
    def jvp(ts: tuple[Any, ...], n: Any) -> Any:
        tan = _difference(ts)
        if tan is None:
            return None
        out = _LOSS_BACKWARD[name](tan, *n.inputs, **n.params)  # the elementwise gradient times the tangent
        return out if n.params["reduction"] == "none" else out.sum()
    return jvp


def _loss_backward_jvp(name: str) -> Any:
    def jvp(ts: tuple[Any, ...], n: Any) -> Any:
        g, x, t = n.inputs
        p = n.params
        total = None if ts[0] is None else _LOSS_BACKWARD[name](ts[0], x, t, **p)  # (linear in g)
        tan = _difference(ts[1:])
        if tan is not None:
            nm = 1.0 / max(x._data.size, 1) if p["reduction"] == "mean" else 1.0
            part = tan * g * _second(name, x - t, p) * nm
            total = part if total is None else total + part
        return total
    return jvp


_LOSS_BACKWARD = {name: Prim(f"{name}_backward", kernel, _loss_backward_vjp(name), jvp=_loss_backward_jvp(name))
                  for name, kernel in (("mse_loss", _mse_backward_kernel),
                                       ("smooth_l1_loss", _smooth_l1_backward_kernel),
                                       ("huber_loss", _huber_backward_kernel))}
_LOSSES = {name: Prim(name, kernel, _loss_vjp(name), jvp=_loss_jvp(name))
           for name, kernel in (("mse_loss", _mse_kernel), ("smooth_l1_loss", _smooth_l1_kernel),
                                ("huber_loss", _huber_kernel))}


def pointwise_loss_fusable(x: Tensor, target: Tensor, name: str) -> bool:
    """Whether the fused ``name`` primitive serves: float32/float64 input and target of one dtype, shape and device,
    on a device with its kernel (else the caller's composite: broadcasting, other dtypes)."""
    dt = x._data.dtype
    return (dt in (np.float32, np.float64) and target._data.dtype == dt and x._data.shape == target._data.shape
            and x._device == target._device and x._device.type in _LOSSES[name].kernels)


def pointwise_loss(x: Tensor, target: Tensor, name: str, reduction: str, **params: float) -> Tensor:
    """``name`` of ``x`` and ``target`` (checked by the caller, :func:`pointwise_loss_fusable` true)."""
    return _LOSSES[name](x, target, reduction=reduction, **params)


# -- binary_cross_entropy_with_logits (no weight, no pos_weight): one primitive and a fused first-order gradient ------
# torch's forward is ``(1 - t) * x - log_sigmoid(x)``, reduced; its gradient (binary_cross_entropy_with_logits_backward,
# a composite in torch) ``(sigmoid(x) - t) * g``, divided by numel for 'mean'. The composite here was softplus(-x),
# a product, a sum and the reduction (seven primitives backward); now one each way without a graph, and torch's
# differentiable formula under create_graph (its nodes: the last is DivBackward1 for 'mean', as torch's).

@_one_d
def _bce_logits_kernel(x: Any, t: Any, reduction: str) -> Any:
    r = x.dtype.type(1) - t
    r *= x
    r -= _log_sigmoid_kernel(x)
    return _loss_reduced(r, reduction)


@_one_d
def _bce_logits_backward_kernel(g: Any, x: Any, t: Any, reduction: str) -> Any:
    r = np.negative(x)
    np.exp(r, out=r)
    r += x.dtype.type(1)
    np.reciprocal(r, out=r)  # torch's sigmoid: 1 / (1 + exp(-x))
    r -= t
    r *= g
    if reduction == "mean":
        r /= x.dtype.type(x.size)
    return r


def _bce_logits_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    x, t = n.inputs
    mean = n.params["reduction"] == "mean"
    gx = gt = None
    if should_compute_output(n, 0):
        if not STATE.enabled:
            gx = _BCE_LOGITS_BACKWARD(g, x, t, **n.params)
        else:  # create_graph: torch's formula in ops (its nodes, SigmoidBackward0 ... DivBackward1)
            gx = (x.sigmoid() - t) * g
            gx = gx / x._data.size if mean else gx
    if should_compute_output(n, 1):  # torch's binary_cross_entropy_with_logits_target_backward: -x * g
        gt = -x * g
        gt = gt / x._data.size if mean else gt
    return gx, gt


def _bce_logits_jvp(ts: tuple[Any, ...], n: Any) -> Any:
    x, t = n.inputs
    tx, tt = ts
    parts = []
    if tx is not None:
        parts.append((x.sigmoid() - t) * tx)
    if tt is not None:
        parts.append(-x * tt)
    if not parts:
        return None
    total = parts[0] if len(parts) == 1 else parts[0] + parts[1]
    red = n.params["reduction"]
    return total if red == "none" else (total.mean() if red == "mean" else total.sum())


_BCE_LOGITS_BACKWARD = Prim("binary_cross_entropy_with_logits_backward", _bce_logits_backward_kernel)
_LOSSES["binary_cross_entropy_with_logits"] = Prim("binary_cross_entropy_with_logits", _bce_logits_kernel,
                                                   _bce_logits_vjp, jvp=_bce_logits_jvp)


# -- binary_cross_entropy (no weight): one primitive and torch's fused gradient binary_cross_entropy_backward ----------
# torch's kernels: ``(t - 1) * max(log1p(-x), -100) - t * max(log(x), -100)``, reduced; the gradient
# ``g * (x - t) / max((1 - x) * x, 1e-12)``, / numel for 'mean'. The gradient's own derivative is torch's
# binary_cross_entropy_double_backward(_grad_output, _target) formulas (their eps 1e-12 inside the products, not a
# max), the target's gradient torch's ``-logit(x) * g``. The composite was two logs, two clamps, four products or
# sums and the reduction: eleven primitives backward.
_BCE_EPS = 1e-12


@_one_d
def _bce_kernel(x: Any, t: Any, reduction: str) -> Any:
    dt = x.dtype.type
    with np.errstate(divide="ignore"):  # log(0) = -inf, clamped at -100 as torch's
        lo = np.log1p(-x)
        hi = np.log(x)
    np.maximum(lo, dt(-100), out=lo)
    np.maximum(hi, dt(-100), out=hi)
    lo *= t - dt(1)
    hi *= t
    lo -= hi
    return _loss_reduced(lo, reduction)


@_one_d
def _bce_backward_kernel(g: Any, x: Any, t: Any, reduction: str) -> Any:
    dt = x.dtype.type
    den = dt(1) - x
    den *= x
    np.maximum(den, dt(np.float32(_BCE_EPS)), out=den)  # (torch's EPSILON there is a float32 constant)
    r = x - t
    r = np.multiply(g, r, out=r if np.broadcast_shapes(g.shape, r.shape) == r.shape else None)
    r /= den
    if reduction == "mean":
        r /= dt(x.size) if x.size else dt(np.nan)
    return r


def _bce_mean(r: Tensor, reduction: str, n: int) -> Tensor:
    return r / n if reduction == "mean" and n else r


def _bce_second(x: Tensor, t: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """The coefficients of torch's double backward: for the output gradient ``(x - t) / ((1 - x + e)(x + e))``, for x
    ``(x^2 - 2 x t + t) / ((x + e)^2 (1 - x + e)^2)``, for t ``-1 / max((1 - x) x, e)`` (torch's three formulas
    place the 1e-12 differently; the tests hold each to torch's at 0, 1 and 1e-30)."""
    den = (1 - x + _BCE_EPS) * (x + _BCE_EPS)
    return (x - t) / den, (x * x - 2 * x * t + t) / (den * den), -1 / ((1 - x) * x).clamp(min=_BCE_EPS)


def _bce_target_grad(g: Tensor, x: Tensor, reduction: str) -> Tensor:
    return _bce_mean(-x.logit() * g, reduction, x._data.size)  # torch's binary_cross_entropy_target_backward


def _bce_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    x, t = n.inputs
    red = n.params["reduction"]
    gx = _BCE_BACKWARD(g, x, t, **n.params) if should_compute_output(n, 0) else None
    gt = _bce_target_grad(g, x, red) if should_compute_output(n, 1) else None
    return gx, gt


def _bce_backward_vjp(gg: Tensor, n: Any) -> tuple[Any, ...]:
    g, x, t = n.inputs
    red = n.params["reduction"]
    c_g, c_x, c_t = _bce_second(x, t)
    dg = None
    if should_compute_output(n, 0):
        dg = c_g * gg
        if red != "none":
            dg = dg.mean() if red == "mean" else dg.sum()
    dx = _bce_mean(c_x * (gg * g), red, x._data.size) if should_compute_output(n, 1) else None
    dt = _bce_mean(c_t * (gg * g), red, x._data.size) if should_compute_output(n, 2) else None
    return dg, dx, dt


def _bce_jvp(ts: tuple[Any, ...], n: Any) -> Any:
    x, t = n.inputs
    red = n.params["reduction"]
    parts = []
    if ts[0] is not None:
        parts.append(_BCE_BACKWARD(ts[0], x, t, reduction="none"))
    if ts[1] is not None:
        parts.append(-x.logit() * ts[1])
    if not parts:
        return None
    total = parts[0] if len(parts) == 1 else parts[0] + parts[1]
    return total if red == "none" else (total.mean() if red == "mean" else total.sum())


def _bce_backward_jvp(ts: tuple[Any, ...], n: Any) -> Any:
    g, x, t = n.inputs
    red = n.params["reduction"]
    _, c_x, c_t = _bce_second(x, t)
    parts = []
    if ts[0] is not None:
        parts.append(_BCE_BACKWARD(ts[0], x, t, **n.params))
    if ts[1] is not None:
        parts.append(_bce_mean(c_x * (ts[1] * g), red, x._data.size))
    if ts[2] is not None:
        parts.append(_bce_mean(c_t * (ts[2] * g), red, x._data.size))
    if not parts:
        return None
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return total


_BCE_BACKWARD = Prim("binary_cross_entropy_backward", _bce_backward_kernel, _bce_backward_vjp, jvp=_bce_backward_jvp)
_LOSSES["binary_cross_entropy"] = Prim("binary_cross_entropy", _bce_kernel, _bce_vjp, jvp=_bce_jvp)
