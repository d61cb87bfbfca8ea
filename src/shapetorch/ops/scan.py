"""Scans: cumsum, cumprod, cummax, cummin, logcumsumexp, and the composites diff, cumulative_trapezoid.

cumsum, cumprod and logcumsumexp are primitives with their own vjp and jvp; cummax/cummin compute
their indices with a non-differentiable primitive and gather the values, so the gradient flows to
the element each running extreme came from, as in torch. Shapes come from ``_rules.scan``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._dtype import get_default_dtype, to_dtype
from .._engine.primitives import Prim
from .._errors import fail
from .._rules import scan as RS
from .._rules.axes import wrap_dim
from .._rules.dtypes import is_integral
from .._rules.scan import cum_extreme_shape, cum_shape, diff_shape, trapezoid_shape
from .._tensor import Tensor
from ._common import as_node, check, dtype_name, make_inplace, new_tensor, promoted, refuse
from ._registry import method, public
from .return_types import VALUES_INDICES, ValuesIndices
from .sorting import write_out


def _wide(a: Any) -> Any:
    """16-bit floats accumulate in float32, as torch's CPU kernels do."""
    return a.astype(np.float32) if a.dtype.itemsize == 2 and (a.dtype.kind == "f" or a.dtype.name == "bfloat16") else a


def _cumsum_kernel(a: Any, axis: int) -> Any:
    return np.cumsum(_wide(a), axis=axis).astype(a.dtype, copy=False)


def _cumprod_kernel(a: Any, axis: int) -> Any:
    return np.cumprod(_wide(a), axis=axis).astype(a.dtype, copy=False)


def _logaddexp_complex(a: Any, b: Any) -> Any:
    """log(exp(a) + exp(b)) for complex values, scaled by the operand with the larger real part."""
    big = np.where(a.real >= b.real, a, b)
    small = np.where(a.real >= b.real, b, a)
    with np.errstate(all="ignore"):
        out = big + np.log1p(np.exp(small - big))
    return np.where(np.isneginf(big.real), small, out)


def _logcumsumexp_kernel(a: Any, axis: int) -> Any:
    w = _wide(a)
    if w.dtype.kind != "c":
        return np.logaddexp.accumulate(w, axis=axis).astype(a.dtype, copy=False)
    m = np.moveaxis(w.copy(), axis, -1)
    for i in range(1, m.shape[-1]):
        m[..., i] = _logaddexp_complex(m[..., i - 1], m[..., i])
    return np.moveaxis(m, -1, axis)


def _flip(t: Tensor, axis: int) -> Tensor:
    n = t._data.shape[axis]
    return t.index_select(axis, new_tensor(np.arange(n - 1, -1, -1, dtype=np.int64), t._device))


def _rev_cumsum(g: Tensor, axis: int) -> Tensor:
    return _flip(_CUMSUM(_flip(g, axis), axis=axis), axis)


def _cumprod_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    """torch's cumprod_backward: a division where the input has no zeros, else the exact O(n^2) form."""
    x, axis, out = n.inputs[0], n.params["axis"], n.out
    if x._data.size == 0:
        return (g,)
    if not bool((x == 0).any()):  # a read-back on a device: the branch depends on the values
        return (_rev_cumsum(g * out.conj(), axis) / x.conj(),)
    size = x._data.shape[axis]
    xm, gm = x.movedim(axis, -1), g.movedim(axis, -1)
    i = np.arange(size)
    after = new_tensor(i[None, :] > i[:, None], x._device)  # [j, i]: i > j
    upper = new_tensor((i[None, :] >= i[:, None]).astype(x._data.dtype), x._device)  # [j, k]: k >= j
    rows = xm.unsqueeze(-2).expand((*xm._data.shape[:-1], size, size))
    partial = _CUMPROD(rows.where(after, 1), axis=rows._data.ndim - 1)  # [j, k] = prod_{j < i <= k} x_i
    inner = (gm.unsqueeze(-2) * partial.conj() * upper).sum(-1)
    ones = xm.narrow(-1, 0, 1) * 0 + 1
    before = _CUMPROD(xm, axis=xm._data.ndim - 1).narrow(-1, 0, size - 1)  # prod_{i < j} x_i, shifted by one
    exclusive = _cat_last_all([ones, before])
    return ((exclusive.conj() * inner).movedim(-1, axis),)


def _logcumsumexp_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    """torch's stable form: positive and negative parts of the gradient through reversed logcumsumexps."""
    x, axis, out = n.inputs[0], n.params["axis"], n.out
    if x._data.size == 0:
        return (g,)

    def rev_lcse(t: Tensor) -> Tensor:
        return _flip(_LOGCUMSUMEXP(_flip(t, axis), axis=axis), axis)

    if x.is_complex():
        return (_rev_cumsum(g * (-out).exp().conj(), axis) * x.exp().conj(),)
    lowest = float(np.finfo(x._data.dtype).min) if x._data.dtype.kind == "f" else -1e300
    log_abs = g.abs().log()
    pos = log_abs.where(g > 0, lowest)
    neg = log_abs.where(g < 0, lowest)
    return ((rev_lcse(pos - out) + x).exp() - (rev_lcse(neg - out) + x).exp(),)


def _logcumsumexp_jvp(ts: tuple[Any, ...], n: Any) -> Any:
    if ts[0] is None:
        return None
    axis, x, out = n.params["axis"], n.inputs[0], n.out
    # d out_k = sum_{j <= k} exp(x_j - out_k) dx_j = exp(-out_k) * cumsum(exp(x) dx); shifted by the row max
    m = x.detach().amax(axis, keepdim=True) if x._data.shape[axis] else x.detach()
    return _CUMSUM(ts[0] * (x - m).exp(), axis=axis) * (m - out).exp()


def _cumprod_jvp(ts: tuple[Any, ...], n: Any) -> Any:
    if ts[0] is None:
        return None
    x, axis = n.inputs[0], n.params["axis"]
    if x._data.size and not (x._data == 0).any():
        return n.out * _CUMSUM(ts[0] / x, axis=axis)
    # exact where there are zeros: the vjp's adjoint, applied row by row through the cotangent basis
    size = x._data.shape[axis]
    eye = new_tensor(np.eye(size, dtype=x._data.dtype), x._device)
    xm, tm = x.movedim(axis, -1), ts[0].movedim(axis, -1)
    cols = []
    for k in range(size):
        g = eye[k].expand(xm._data.shape).movedim(-1, axis)
        (row,) = _cumprod_vjp(g, _Node((x,), {"axis": axis}, n.out))
        cols.append((row.conj().movedim(axis, -1) * tm).sum(-1, keepdim=True))
    return _cat_last_all(cols).movedim(-1, axis) if cols else ts[0]


def _cat_last_all(parts: list[Tensor]) -> Tensor:
    from .joining import cat

    return cat(parts, -1)


class _Node:
    """The view of a node a vjp reads (inputs, params, out), for reusing a vjp inside a jvp rule."""

    __slots__ = ("inputs", "out", "params")

    def __init__(self, inputs: tuple[Any, ...], params: dict[str, Any], out: Any) -> None:
        self.inputs, self.params, self.out = inputs, params, out


_CUMSUM = Prim("cumsum", _cumsum_kernel, lambda g, n: (_rev_cumsum(g, n.params["axis"]),))
_CUMPROD = Prim("cumprod", _cumprod_kernel, _cumprod_vjp, save_output=True)
_LOGCUMSUMEXP = Prim("logcumsumexp", _logcumsumexp_kernel, _logcumsumexp_vjp, save_output=True)
_CUMSUM.jvp = lambda ts, n: None if ts[0] is None else _CUMSUM(ts[0], axis=n.params["axis"])
_CUMPROD.jvp = _cumprod_jvp
_LOGCUMSUMEXP.jvp = _logcumsumexp_jvp


def _cum_extreme_index(a: Any, axis: int, largest: bool) -> Any:
    """Index of the running max (min) along ``axis``; a later equal value or a NaN takes over, as in torch."""
    m = np.moveaxis(a, axis, -1)
    idx = np.zeros(m.shape, np.int64)
    if m.shape[-1]:
        best, at = m[..., 0].copy(), np.zeros(m.shape[:-1], np.int64)
        for i in range(m.shape[-1]):
            v = m[..., i]
            take = (v >= best) if largest else (v <= best)
            if m.dtype.kind in "fc" or m.dtype.name == "bfloat16":
                take = take | np.isnan(v)
            best = np.where(take, v, best)
            at = np.where(take, i, at)
            idx[..., i] = at
    return np.moveaxis(idx, -1, axis)


_CUMMAX_INDEX = Prim("cummax_index", lambda a, axis: _cum_extreme_index(a, axis, True))
_CUMMIN_INDEX = Prim("cummin_index", lambda a, axis: _cum_extreme_index(a, axis, False))


def _scan_input(input: Tensor, dim: Any, op: str, dtype: Any) -> tuple[Tensor, int]:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    check(cum_shape, tuple(input._data.shape), dim, op=op)
    if dtype is not None:
        input = input.to(to_dtype(dtype))
    elif dtype_name(input) in ("bool", "uint8", "int8", "int16", "int32"):
        input = input.to(to_dtype("int64"))
    return input, wrap_dim(dim, input._data.ndim, op)


def _run_scan(prim: Prim, input: Tensor, axis: int) -> Tensor:
    if input._data.ndim == 0:
        return prim(input.reshape(1), axis=0).reshape(())
    return prim(input, axis=axis)


@public("scan")
def cumsum(input: Tensor, dim: int, *, dtype: Any = None, out: Tensor | None = None) -> Tensor:
    """Cumulative sum along ``dim``; bool and integer inputs accumulate in int64 unless ``dtype`` is given."""
    x, axis = _scan_input(input, dim, "cumsum", out.dtype if dtype is None and out is not None else dtype)
    return write_out(_run_scan(_CUMSUM, x, axis), out, "cumsum")


@public("scan")
def cumprod(input: Tensor, dim: int, *, dtype: Any = None, out: Tensor | None = None) -> Tensor:
    """Cumulative product along ``dim``; the gradient handles zeros in the input exactly, as torch."""
    x, axis = _scan_input(input, dim, "cumprod", out.dtype if dtype is None and out is not None else dtype)
    return write_out(_run_scan(_CUMPROD, x, axis), out, "cumprod")


@public("scan")
def logcumsumexp(input: Tensor, dim: int, *, out: Tensor | None = None) -> Tensor:
    """``log(cumsum(exp(x)))`` along ``dim``, computed stably; floating and complex inputs only."""
    check(cum_shape, tuple(input._data.shape), dim, op="logcumsumexp")
    if not (input.is_floating_point() or input.is_complex()):
        fail("method_dtype_not_supported_error", op="logcumsumexp", dtype=input.dtype.name, hint="")
    return write_out(_run_scan(_LOGCUMSUMEXP, input, wrap_dim(dim, input._data.ndim, "logcumsumexp")), out,
                     "logcumsumexp")


def _cum_extreme(input: Tensor, dim: int, index_prim: Prim, op: str) -> ValuesIndices:
    check(cum_extreme_shape, tuple(input._data.shape), dim, op=op)
    if input._data.size == 0:  # torch checks neither the dim (the rule above) nor the dtype of an empty input
        return VALUES_INDICES[op](input.clone(), new_tensor(np.zeros(input._data.shape, np.int64), input._device))
    if input._data.ndim == 0:  # nor the dtype of a 0-d one
        return VALUES_INDICES[op](input.clone(), new_tensor(np.zeros((), np.int64), input._device))
    if input.is_complex():
        fail("method_dtype_not_supported_error", op=op, dtype=input.dtype.name, hint="")
    axis = wrap_dim(dim, input._data.ndim, op)
    indices = index_prim(input.detach(), axis=axis)
    return VALUES_INDICES[op](as_node(input.gather(axis, indices), f"{op.capitalize()}Backward0", input), indices)


@public("scan")
def cummax(input: Tensor, dim: int, *, out: Any = None) -> ValuesIndices:
    """(values, indices) of the running maximum along ``dim``; a NaN propagates."""
    return write_out(_cum_extreme(input, dim, _CUMMAX_INDEX, "cummax"), out, "cummax")


@public("scan")
def cummin(input: Tensor, dim: int, *, out: Any = None) -> ValuesIndices:
    """(values, indices) of the running minimum along ``dim``; a NaN propagates."""
    return write_out(_cum_extreme(input, dim, _CUMMIN_INDEX, "cummin"), out, "cummin")


def _inplace_scan(fn: Any, name: str) -> Any:
    def inplace(self: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
        if dtype is not None and to_dtype(dtype).name != dtype_name(self):
            fail("dtype_error_cannot_cast", op=name, result=to_dtype(dtype).name, out=dtype_name(self))
        return make_inplace(lambda s, d: fn(s, d, dtype=dtype_name(self)), name)(self, dim)

    inplace.__name__ = inplace.__qualname__ = name
    inplace.__doc__ = f"In-place version of :func:`{fn.__name__}`."
    return inplace


method("cumsum_", _inplace_scan(cumsum, "cumsum_"))
method("cumprod_", _inplace_scan(cumprod, "cumprod_"))


@public("scan")
def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None, append: Tensor | None = None) -> Tensor:
    """The ``n``-th forward difference along ``dim``, after concatenating ``prepend`` and ``append``."""
    check(diff_shape, tuple(input._data.shape), n, dim, None if prepend is None else tuple(prepend._data.shape),
          None if append is None else tuple(append._data.shape), op="diff")
    if n == 0:  # torch returns the input as it is, ignoring prepend and append
        return input
    axis = wrap_dim(dim, input._data.ndim, "diff")
    if prepend is not None or append is not None:
        from .joining import cat

        parts = [t for t in (prepend, input, append) if t is not None]
        input = cat(parts, axis)
    boolean = dtype_name(input) == "bool"
    for _ in range(n):
        size = input._data.shape[axis]
        if size == 0:
            break
        hi, lo = input.narrow(axis, 1, size - 1), input.narrow(axis, 0, size - 1)
        input = hi.logical_xor(lo) if boolean else hi - lo
    return input


def _dx_from_x(x: Tensor, y: Tensor, axis: int) -> Tensor:
    if x._data.ndim == 1:
        dx = diff(x)
        return dx.reshape(tuple(-1 if i == axis else 1 for i in range(y._data.ndim)))
    return diff(x, dim=axis - y._data.ndim)


def _trapezoid_args(y: Tensor, x: Any, dx: Any, dim: int, cumulative: bool, op: str) -> int:
    if isinstance(x, Tensor) and dx is not None:
        raise TypeError(f"{op}(): received both x and dx; pass one of them")
    check(trapezoid_shape, tuple(y._data.shape), tuple(x._data.shape) if isinstance(x, Tensor) else None, dim,
          cumulative, op=op)
    return wrap_dim(dim, y._data.ndim, op)


@public("reduction", method=False)
def trapezoid(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """Integral of ``y`` along ``dim`` by the trapezoidal rule, with sample points ``x`` or spacing ``dx``."""
    refuse(y, "trapezoid", bool_=True)
    axis = _trapezoid_args(y, x, dx, dim, False, "trapezoid")
    if not isinstance(x, Tensor) and x is not None:
        dx, x = x, None
    size = y._data.shape[axis]
    if size == 0:  # torch: zeros of y's dtype
        return y.new_zeros(tuple(s for i, s in enumerate(y._data.shape) if i != axis))
    if isinstance(x, Tensor):
        step = _dx_from_x(x, y, axis)
        return (step * (y.narrow(axis, 1, size - 1) + y.narrow(axis, 0, size - 1))).sum(axis) / 2
    spacing = 1 if dx is None else dx
    return (y.sum(axis) - (y.select(axis, 0) + y.select(axis, -1)) * 0.5) * spacing


@public("scan", method=False)
def cumulative_trapezoid(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """Running trapezoidal integral of ``y`` along ``dim``: one element fewer than ``y`` along ``dim``."""
    refuse(y, "cumulative_trapezoid", bool_=True)
    axis = _trapezoid_args(y, x, dx, dim, True, "cumulative_trapezoid")
    if not isinstance(x, Tensor) and x is not None:
        dx, x = x, None
    size = y._data.shape[axis]
    if size == 0:  # torch: an empty result, in the floating dtype the formula would give
        name = promoted(y, x if isinstance(x, Tensor) else 0.5)
        return y.new_zeros(y._data.shape, dtype=get_default_dtype() if is_integral(name, include_bool=True)
                           else to_dtype(name))
    left, right = y.narrow(axis, 0, size - 1), y.narrow(axis, 1, size - 1)
    if isinstance(x, Tensor):
        return (_dx_from_x(x, y, axis) * (left + right)).cumsum(axis) / 2
    spacing = 1 if dx is None else dx
    return ((left + right) * (spacing / 2.0)).cumsum(axis)


__all__ = ["cummax", "cummin", "cumprod", "cumsum", "cumulative_trapezoid", "diff", "logcumsumexp", "trapezoid"]


def _gradient_spacings(input: Tensor, spacing: Any, dims: list[int], dim_given: bool) -> list[Any]:
    """One spacing per dim of ``dims``: a number (uniform steps) or a 1-D tensor of coordinates."""
    if spacing is None:  # torch's default, spelled out
        spacing = 1
    if isinstance(spacing, Tensor) and spacing._data.ndim == 0:
        spacing = spacing.item()
    if not isinstance(spacing, (list, tuple)):
        return [spacing] * len(dims)
    if len(spacing) != len(dims):
        problem = (f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim arguments to "
                   f"have the same length, but got a spacing argument of length {len(spacing)} and a dim argument of "
                   f"length {len(dims)}." if dim_given else
                   f"torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal to "
                   f"'self.dim() = {input._data.ndim}', since dim argument was not given, but got a list of length "
                   f"{len(spacing)}")
        fail("argument_error_invalid", op="gradient", problem=problem)
    for s in spacing:
        if isinstance(s, Tensor) and s._data.ndim != 1:
            fail("argument_error_invalid", op="gradient", problem="torch.gradient expected each element of spacing to "
                 f"have one dimension, but got an element with {s._data.ndim} dimensions!")
    return list(spacing)


@public("scan", method=False)  # torch.Tensor has no gradient method
def gradient(input: Tensor, *, spacing: Any = 1, dim: int | list[int] | tuple[int, ...] | None = None,
             edge_order: int = 1) -> tuple[Tensor, ...]:
    """Estimates of the partial derivatives of ``input`` along each of ``dim`` by central differences inside and
    one-sided differences of ``edge_order`` at the ends, as ``torch.gradient`` (NumPy's ``gradient``). ``spacing``
    is a step for all dims, one step per dim, or one 1-D tensor of coordinates per dim. Integer inputs give the
    default float dtype. Written in differentiable ops, so it has a gradient itself."""
    # the shapes are the shared rule's (the plugin's too): the dims and edge_order first, the sizes after the
    # spacings (torch's order of errors)
    if edge_order not in (1, 2):
        check(RS.gradient_dims, input._data.ndim, dim, edge_order)
    if dtype_name(input) == "uint8":
        fail("argument_error_invalid", op="gradient", problem="torch.gradient does not support uint8 input.")
    dims = check(RS.gradient_dims, input._data.ndim, dim, edge_order)
    spacings = _gradient_spacings(input, spacing, dims, dim is not None)
    check(RS.gradient_shapes, tuple(input._data.shape), dim, edge_order)
    if is_integral(dtype_name(input)) and dtype_name(input) != "bool":
        input = input.to(get_default_dtype())
    return tuple(_gradient_along(input, d, h, edge_order) for d, h in zip(dims, spacings))


def _gradient_along(f: Tensor, d: int, h: Any, edge_order: int) -> Tensor:
    from .joining import cat

    n = f._data.shape[d]

    def part(start: int, length: int) -> Tensor:
        out: Tensor = f.narrow(d, start, length)
        return out

    if not isinstance(h, Tensor):  # uniform steps of h
        inner = (part(2, n - 2) - part(0, n - 2)) / (2 * h) if n > 2 else None
        if edge_order == 1:
            first, last = (part(1, 1) - part(0, 1)) / h, (part(n - 1, 1) - part(n - 2, 1)) / h
        else:
            first = (part(0, 1) * -1.5 + part(1, 1) * 2 - part(2, 1) * 0.5) / h
            last = (part(n - 3, 1) * 0.5 - part(n - 2, 1) * 2 + part(n - 1, 1) * 1.5) / h
    else:  # coordinates: NumPy's second-order differences for uneven steps
        shape = [1] * f._data.ndim
        shape[d] = -1
        x = h.to(f.dtype) if f.dtype.is_floating_point or f.is_complex() else h
        dx = diff(x).reshape(shape)
        hl, hr = dx.narrow(d, 0, n - 2), dx.narrow(d, 1, n - 2)
        inner = (part(0, n - 2) * (-hr / (hl * (hl + hr))) + part(1, n - 2) * ((hr - hl) / (hl * hr))
                 + part(2, n - 2) * (hl / (hr * (hl + hr)))) if n > 2 else None
        if edge_order == 1:
            first = (part(1, 1) - part(0, 1)) / dx.narrow(d, 0, 1)
            last = (part(n - 1, 1) - part(n - 2, 1)) / dx.narrow(d, n - 2, 1)
        else:
            a, b = dx.narrow(d, 0, 1), dx.narrow(d, 1, 1)
            first = (part(0, 1) * (-(2 * a + b) / (a * (a + b))) + part(1, 1) * ((a + b) / (a * b))
                     + part(2, 1) * (-a / (b * (a + b))))
            a, b = dx.narrow(d, n - 3, 1), dx.narrow(d, n - 2, 1)
            last = (part(n - 3, 1) * (b / (a * (a + b))) + part(n - 2, 1) * (-(a + b) / (a * b))
                    + part(n - 1, 1) * ((2 * b + a) / (b * (a + b))))
    pieces = [first] + ([inner] if inner is not None else []) + [last]
    out: Tensor = cat(pieces, d)
    return out
