"""Activation functions: relu and its relatives, gelu, softmax / log_softmax.

relu, softmax, log_softmax and the exact gelu are primitives (NumPy kernels, vjps in shapetorch ops);
the rest are composites of other ops. torch.relu / torch.softmax / ... and their Tensor methods are
registered; the nn-only activations (gelu, silu, ...) are exposed through ``shapetorch.nn.functional``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._dtype import to_dtype
from .._engine.primitives import Prim
from .._errors import fail
from .._grad_mode import STATE
from .._rules import dtypes as RD
from .._rules.axes import wrap_dim
from .._rules.nn import glu_shape
from .._tensor import Tensor
from ..backends import array_pool, thread_pool
from ._common import (
    as_node,
    autocast_inputs,
    check,
    check_fill_value,
    dtype_name,
    make_inplace,
    need_floating,
    snapshot_for_inplace,
    tie_gradient,
    write_inplace,
)
from ._jvp import via_vjp
from ._registry import method, public
from .conversion import _where_kernel
from .conversion import where as _where
from .random import Generator, dropout_mask, rand
from .special import erf, erf64

_SQRT_HALF = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _require(x: Tensor, op: str, integers: bool = False) -> None:
    """torch's activations take floating dtypes (relu also integers); bool and complex are refused."""
    d = x.dtype
    if not (d.is_floating_point or (integers and not d.is_complex and d.name != "bool")):
        fail("method_dtype_not_supported_error", op=op, dtype=x.dtype.name, hint="")


# -- relu -----------------------------------------------------------------------------------------------

def _relu_kernel(a: Any) -> Any:
    return np.maximum(a, a.dtype.type(0))


# the signed integer of each float's width, and the mask of its bits other than the sign
_BITS: dict[Any, tuple[Any, int, int]] = {np.dtype(np.float32): (np.int32, 0x7FFFFFFF, 31), np.dtype(np.float64): (np.int64, 0x7FFFFFFFFFFFFFFF, 63)}


# Blocks of the mask in NOTE [relu's gradient mask]: a bool block this size stays in the L1/L2 cache and is all the
# temporary memory the gradient takes.
_RELU_BLOCK = 1 << 16


def _relu_backward_kernel(g: Any, out: Any) -> Any:
    """``g`` where ``out > 0`` or NaN, else 0 (torch's threshold_backward: a select, so an inf or NaN gradient
    of a zeroed element is 0, not NaN). For float32/float64 the select is an AND of the gradient's bits with an
    all-ones or all-zeros mask: np.where over a mask that changes at random is branchy, 6.7 ms on the CNN's
    64x16x28x28 against 1.1 ms (one thread, CPU time).

    NOTE [relu's gradient mask]: ``out`` is relu's result: +-0, positive, or NaN (``np.maximum`` yields no negative
    number), so the kept elements are those where ``out != 0`` (a NaN compares unequal; -0 equal). Contiguous
    arrays take it in blocks of ``_RELU_BLOCK``: the comparison into a bool block, its bytes negated (1 -> -1, all
    ones), and the AND of the gradient's bits with the int8 block, which NumPy sign-extends to the float's width:
    three passes with no full-size temporary (the first relu's gradient is where a CNN step peaks). Measured against
    the four integer passes over the result's memory it replaced (v = bits & ~sign, -v, the arithmetic shift by
    w - 1, the AND; one thread, CPU time, medians of 5 rounds of 20 calls interleaved, load average 8): 0.91 -> 0.67
    ms on 64x16x28x28, equal on 32x16x16x16 (0.061 / 0.066 ms) and 64x6x28x28 (0.25); a whole-size bool mask is
    as fast (0.76) but a quarter of the array more memory. Strided arrays keep the four passes."""
    bits = _BITS.get(g.dtype)
    if bits is None or g.dtype != out.dtype or g.shape != out.shape:
        return np.where(out <= 0, g.dtype.type(0), g)  # a NaN output passes its gradient, as in torch
    itype, magnitude, shift = bits
    r = np.empty(g.shape, g.dtype)
    if g.flags.c_contiguous and out.flags.c_contiguous:
        kept, values, result = out.reshape(-1), g.reshape(-1).view(itype), r.reshape(-1).view(itype)
        n = result.size
        mask = np.empty(min(n, _RELU_BLOCK), np.bool_)
        ones = mask.view(np.int8)
        for lo in range(0, n, _RELU_BLOCK):
            hi = min(n, lo + _RELU_BLOCK)
            m, m8 = mask[:hi - lo], ones[:hi - lo]
            np.not_equal(kept[lo:hi], 0, out=m)
            np.negative(m8, out=m8)
            np.bitwise_and(values[lo:hi], m8, out=result[lo:hi])
        return r
    keep = r.view(itype)
    np.bitwise_and(out.view(itype), itype(magnitude), out=keep)
    np.negative(keep, out=keep)
    np.right_shift(keep, shift, out=keep)
    np.bitwise_and(g.view(itype), keep, out=keep)
    return r


def _relu_backward_vjp(gg: Tensor, n: Any) -> tuple[Any, ...]:
    # linear in the gradient; the mask is constant: zeros for the output, torch's ``zeros_like`` (not None)
    out = n.inputs[1]
    return _RELU_BACKWARD(gg, out), out.new_zeros(out._data.shape)


_RELU_BACKWARD = Prim("relu_backward", _relu_backward_kernel, _relu_backward_vjp)


def _relu_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    if g._device.type in _RELU_BACKWARD.kernels and g._data.dtype == n.out._data.dtype:
        return (_RELU_BACKWARD(g, n.out),)
    # devices without the kernel: masked where out <= 0, not kept where out > 0: a NaN passes its gradient
    return (g.masked_fill(n.out <= 0, 0),)


_RELU = Prim("relu", _relu_kernel, _relu_vjp, save_output=True)


@public("activation")
def relu(input: Tensor) -> Tensor:
    """``max(x, 0)``; the gradient at 0 is 0, as in torch."""
    _require(input, "relu", integers=True)
    out = _RELU(input)
    node = out._grad_fn
    if node is not None and input._device.type == "cpu" and len(node._inputs) == 1 and node._inputs[0] is input:
        # The gradient reads the result only (torch's ReluBackward0 saves nothing else), and the engine reads no
        # more of the input than its shape and dtype: a stand-in with those and no storage lets the input be freed
        # when nothing else holds it. A conv -> relu step otherwise kept both activations alive until the
        # backward reached relu: 3.1 MiB of the CNN step's peak (64x16x28x28).
        stub = Tensor._make(np.broadcast_to(np.zeros((), input._data.dtype), input._data.shape), input._device)
        node._inputs = (stub,)
    return out


method("relu_", make_inplace(relu, "relu_"))


# -- gelu (erf is in .special) ---------------------------------------------------------------------------------------

# float32 GELU uses Abramowitz and Stegun's erfc approximation 7.1.26 (absolute error below 1.5e-7 in erf, so
# below 7.5e-8 in Phi): erfc(z) = t * (a1 + a2 t + ... + a5 t^4) * exp(-z^2), t = 1 / (1 + p z), z = |x| / sqrt(2).
# With q = erfc(z) / 2 (the tail beyond |x|), Phi(x) = 0.5 + copysign(0.5 - q, x), and GELU itself is
# x * Phi(x) = 0.5 x + |x| (0.5 - q): no sign bits (two integer passes and a sum); it is inf at +inf
# (|x| * 0.5 + inf) and NaN at -inf (inf - inf, torch's value). The forward is 21 NumPy passes (the rational erf
# fit this replaced, a 6/5 rational in x^2, 5e-9 accurate, was 30): the exp and the reciprocal carry the tail, so
# the polynomial is short (a refit with one term fewer is 8e-7 off in Phi). Its error is that of torch's own
# float32 GELU (within about 1e-6 of the exact value, as the float32 rounding of x * Phi near |x| = 8 is). scipy's
# erf and ndtr evaluate each float32 element in float64 and were 4-5x slower than the whole of this (one thread,
# 8x64x512).
# t = 1 / (1 + p |x| / sqrt(2)) = c * u with u = 1 / (c + |x|), c = sqrt(2) / p: the factor c^k goes into the
# k-th coefficient (one pass fewer than scaling |x| by p); a1..a5 are halved too (the kernels need erfc / 2), and
# listed in Horner's order from the highest power
_AS_C = 1.0 / (0.3275911 * _SQRT_HALF)
_AS_A = tuple(np.float32(a * 0.5 * _AS_C ** k) for k, a in zip(range(5, 0, -1), (
    1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592), strict=True))
_F32_C = np.float32(_AS_C)
_F32_HALF, _F32_MINUS_HALF = np.float32(0.5), np.float32(-0.5)
_F32_INV_SQRT_2PI = np.float32(_INV_SQRT_2PI)
# exp(-x^2 / 2) = exp2(x^2 * -0.5 / ln 2): NumPy's float32 exp2 takes half the time of its exp and is within 1
# ulp (exp: 2.4); the product rounds x^2 * k to float32 once, a relative error of x^2 / 2 * 2^-24 in the result,
# as the rounding of x^2 itself already was (at most 1e-8 absolute in Phi)
_F32_EXP2_K = np.float32(-0.5 / math.log(2.0))
_SIGN_BIT = np.uint32(0x80000000)


def _tail32_into(x: Any, a: Any, q: Any, e: Any) -> None:
    """``q = erfc(|x| / sqrt(2)) / 2`` for float32 ``x``, ``a = |x|``; ``e`` (scratch) is left holding
    ``exp(-x^2 / 2)`` (the gradient's pdf needs it). 0 at +-inf (u and e are), NaN for NaN."""
    np.abs(x, out=a)
    np.add(a, _F32_C, out=e)
    u = np.reciprocal(e, out=e)
    np.multiply(u, _AS_A[0], out=q)
    for c in _AS_A[1:]:
        q += c
        q *= u
    np.square(x, out=e)  # (twice as fast as np.multiply(x, x): one input stream)
    e *= _F32_EXP2_K
    np.exp2(e, out=e)
    q *= e


def _gelu32_into(x: Any, out: Any, s: tuple[Any, ...]) -> None:
    """``out = -(-0.5 x - |x| (0.5 - q))``, ``q`` the tail (``_tail32_into``): a sum of two equal magnitudes
    rounds to +0.0, so the sign goes on last, which makes a zero result -0.0 where x is negative (x = -0.0, or
    below about -5.7), torch's ``x * Phi(x)``, at the cost of one pass."""
    a, e = s[0], s[1]
    _tail32_into(x, a, out, e)
    np.subtract(_F32_HALF, out, out=out)  # >= 0 (or NaN)
    out *= a
    np.multiply(x, _F32_MINUS_HALF, out=e)
    np.subtract(e, out, out=out)
    np.negative(out, out=out)


def _gelu_backward32_into(x: Any, g: Any, out: Any, s: tuple[Any, ...]) -> None:
    """``out = g * (Phi(x) + x * phi(x))``, phi from the ``exp(-x^2 / 2)`` that the tail computed."""
    a, pdf = s[0], s[1]
    _tail32_into(x, a, out, pdf)
    np.subtract(_F32_HALF, out, out=out)  # >= 0 (or NaN): x's sign bit or-ed in is copysign(out, x)
    # (np.copysign is not vectorised: 7x the time of the two integer passes on a run in cache)
    sign = a.view(np.uint32)
    np.bitwise_and(x.view(np.uint32), _SIGN_BIT, out=sign)
    bits = out.view(np.uint32)
    np.bitwise_or(bits, sign, out=bits)
    out += _F32_HALF  # Phi(x)
    pdf *= _F32_INV_SQRT_2PI
    pdf *= x
    out += pdf
    out *= g


def _gelu_cdf(x: Any) -> Any:
    """``0.5 * (1 + erf(x / sqrt(2)))`` in ``x``'s dtype (not float32), in one buffer."""
    t = x.dtype.type
    cdf = np.asarray(erf64(x * t(_SQRT_HALF))).astype(x.dtype, copy=False)
    cdf += t(1)
    cdf *= t(0.5)
    return cdf


def _gelu_kernel(a: Any) -> Any:
    out = _gelu_cdf(a)
    out *= a
    return out.astype(a.dtype, copy=False)


def _gelu_backward_kernel(x: Any, g: Any) -> Any:
    t = x.dtype.type
    pdf = np.multiply(x, x)
    pdf *= t(-0.5)
    np.exp(pdf, out=pdf)
    pdf *= t(_INV_SQRT_2PI)
    pdf *= x
    pdf += _gelu_cdf(x)
    pdf *= g
    return pdf.astype(x.dtype, copy=False)


# The float32 kernels run over runs of this many elements (256 KiB of float32; the five arrays a run touches fit a
# 2 MiB L2), so that each pass after the first reads the cache rather than memory: GELU over (8, 64, 512) float32
# went from 4.3 to 1.9 ms with one thread (its gradient 5.8 to 2.7 ms; a loaded machine, whose other jobs share the
# memory bus), same values. 64K measured 5-8% faster than 32K and 128K (each run's 20-odd calls cost Python time too).
# Each run writes into the result directly and reuses two scratch buffers.
_CACHE_RUN = 1 << 16


def _float32_runs(into: Callable[..., None], generic: Callable[..., Any]) -> Callable[..., Any]:
    """The elementwise kernel ``into(*arrays, out, scratch)`` for float32 arrays of one shape, over cache-sized
    runs of the flattened arrays (each read in its own memory order); ``generic(*arrays)`` for other dtypes."""
    def run(*arrays: Any) -> Any:
        a0 = arrays[0]
        if any(type(a) is not np.ndarray or a.dtype != np.float32 or a.shape != a0.shape for a in arrays):
            return generic(*arrays)
        flat = [a.reshape(-1) for a in arrays]
        out = np.empty(a0.size, np.float32)
        n = max(1, min(a0.size, _CACHE_RUN))  # an empty input: no run
        scratch = tuple(np.empty(n, np.float32) for _ in range(2))
        for lo in range(0, a0.size, n):
            hi = min(lo + n, a0.size)
            into(*(f[lo:hi] for f in flat), out[lo:hi], tuple(b[:hi - lo] for b in scratch))
        return out.reshape(a0.shape)
    return run


# GELU's float32 kernels are 21 (gradient 25) NumPy passes over the input: large inputs split over the intra-op
# threads sooner than a one-pass ufunc does, and each thread's part runs in cache-sized runs
_GELU_PASSES = 22
_gelu_runs = _float32_runs(_gelu32_into, _gelu_kernel)
_gelu_backward_runs = _float32_runs(_gelu_backward32_into, _gelu_backward_kernel)
_GELU_BACKWARD = Prim("gelu_backward",  # NOTE [fused backward]
                      lambda x, g: thread_pool.flat(_gelu_backward_runs, (x, g), _GELU_PASSES))


# -- GELU in a training step: the derivative made with the value ---------------------------------------------------
# Where a gradient will be needed (grad mode on, an input that requires grad, a NumPy array on the CPU), the forward
# also writes the derivative Phi(x) + x phi(x), and the first-order backward is one product g * d: the pass over the
# tail (16 of the value's 21 passes, exp included) serves both, so a forward and backward are 25 passes where they
# were 21 + 24 (one thread, CPU time, (8, 64, 512) float32: 0.81 + 0.97 -> 1.03 + 0.17 ms; torch's gelu and
# gelu_backward 0.23 + 0.49). The derivative is a buffer of the input's shape that ``gelu`` makes and the kernel fills
# (an input of GELU's node after the input itself, as attention's kept weights are): saved-tensor hooks see it, an
# in-place change of the input still fails the backward's version check, and an in-place change of the result leaves
# it as it was. It holds one array of the input's size more than torch's node does until the backward; a backward
# that builds a graph (create_graph) differentiates the formula in x instead. (One (2, ...) array for the value and
# the derivative measured slower in the step than two: glibc maps the largest blocks afresh on each call, with their
# page faults.)
def _gelu_parts32_into(x: Any, y: Any, d: Any, s: tuple[Any, ...]) -> None:
    """``y = x Phi(x)`` and ``d = Phi(x) + x phi(x)`` for float32 ``x``; Phi from the tail ``q`` as ``0.5 +
    copysign(0.5 - q, x)`` (x's sign bit or-ed into ``0.5 - q >= 0``: np.copysign is not vectorised), so that ``x
    Phi`` is -0.0 where torch's is (x = -0.0, and below about -5.7 where Phi rounds to 0); NaN at -inf (-inf * 0), as
    torch; the derivative NaN at +-inf (inf * 0 in x phi), as torch's gelu_backward."""
    a, e = s
    _tail32_into(x, a, d, e)
    np.subtract(_F32_HALF, d, out=d)
    sign = a.view(np.uint32)
    np.bitwise_and(x.view(np.uint32), _SIGN_BIT, out=sign)
    bits = d.view(np.uint32)
    np.bitwise_or(bits, sign, out=bits)
    d += _F32_HALF  # Phi(x)
    np.multiply(x, d, out=y)
    e *= x
    e *= _F32_INV_SQRT_2PI
    d += e


def _gelu_and_derivative(x: Any, d: Any) -> Any:
    """GELU's value at ``x``, with its derivative written into ``d`` (a fresh C-contiguous array of x's shape and
    dtype); float32 in cache-sized runs (as ``_float32_runs``), over the intra-op threads when large; other dtypes
    (float64) by erf's float64 kernel and the formulas of ``_gelu_kernel`` and ``_gelu_backward_kernel``."""
    if type(x) is not np.ndarray or x.dtype != np.float32:
        t = x.dtype.type
        cdf = _gelu_cdf(x)
        pdf = np.multiply(x, x)
        pdf *= t(-0.5)
        np.exp(pdf, out=pdf)
        pdf *= t(_INV_SQRT_2PI)
        pdf *= x
        np.add(pdf, cdf, out=d)
        cdf *= x
        return cdf
    n = x.size
    y = np.empty(x.shape, np.float32)
    xf, yf, df = x.reshape(-1), y.reshape(-1), d.reshape(-1)  # (a copy of x where it is not contiguous)

    def chunk(lo: int, hi: int) -> None:
        m = max(1, min(hi - lo, _CACHE_RUN))
        scratch = (np.empty(m, np.float32), np.empty(m, np.float32))
        for at in range(lo, hi, m):
            end = min(at + m, hi)
            _gelu_parts32_into(xf[at:end], yf[at:end], df[at:end], (scratch[0][:end - at], scratch[1][:end - at]))

    thread_pool.flat_ranges(chunk, n, _GELU_PASSES + 3)
    return y


_PARTS_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _gelu_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    x = n.inputs[0]
    saved = len(n.inputs) > 1  # the derivative the forward wrote (no gradient of its own)
    if not STATE.enabled:
        if saved:
            return g * n.inputs[1], None
        return (_GELU_BACKWARD(x, g),)
    cdf = 0.5 * (1 + erf(x * _SQRT_HALF))
    pdf = (x * x * -0.5).exp() * _INV_SQRT_2PI
    return (g * (cdf + x * pdf), *((None,) if saved else ()))


def _gelu_cpu(a: Any, *derivative: Any) -> Any:
    """GELU's value; with ``derivative`` (the buffer ``gelu`` passes in a training step) the derivative written
    there too."""
    if derivative:
        return _gelu_and_derivative(a, derivative[0])
    return thread_pool.flat(_gelu_runs, (a,), _GELU_PASSES)


_GELU = Prim("gelu", _gelu_cpu, _gelu_vjp)


# -- gelu(approximate='tanh'): 0.5 x (1 + tanh(beta (x + kappa x^3))), torch's formula, as one primitive -----------
# The composite was eight primitives (nodes, dispatch and a buffer each); the kernels are 8 passes forward and 15
# for the gradient, in place, over cache-sized runs for float32. float16 and bfloat16 are computed in float32 and
# rounded once, as torch's CPU kernel. The composite derivative below serves double backward and forward mode.
_BETA, _KAPPA = math.sqrt(2.0 / math.pi), 0.044715


def _gelu_tanh_into(x: Any, out: Any, s: tuple[Any, ...]) -> None:
    np.square(x, out=out)
    out *= _BETA * _KAPPA
    out += _BETA
    out *= x  # beta (x + kappa x^3): inf (tanh 1) or -inf (tanh -1) when x^2 overflows, as torch's x^3
    np.tanh(out, out=out)
    out += 1.0
    out *= x
    out *= 0.5


def _gelu_tanh_backward_into(x: Any, g: Any, out: Any, s: tuple[Any, ...]) -> None:
    """``out = g * (0.5 (1 + t) + 0.5 x (1 - t^2) beta (1 + 3 kappa x^2))``, ``t = tanh(beta (x + kappa x^3))``:
    torch's terms (NaN where x^2 overflows, as its)."""
    right, sq = s
    np.square(x, out=sq)
    np.multiply(sq, _BETA * _KAPPA, out=out)
    out += _BETA
    out *= x
    np.tanh(out, out=out)  # t
    sq *= 1.5 * _BETA * _KAPPA
    sq += 0.5 * _BETA
    sq *= x  # 0.5 x beta (1 + 3 kappa x^2)
    np.square(out, out=right)
    np.subtract(1.0, right, out=right)
    sq *= right
    out += 1.0
    out *= 0.5
    out += sq
    out *= g


def _in_opmath(into: Callable[..., None]) -> Callable[..., Any]:
    """``into`` over whole arrays of any floating dtype; float16 and bfloat16 computed in float32."""
    def run(*arrays: Any) -> Any:
        dt = arrays[0].dtype
        work = np.dtype(np.float32) if dt.itemsize < 4 else dt
        xs = [np.asarray(a, dtype=work) for a in arrays]
        out = np.empty(xs[0].shape, work)
        into(*xs, out, (np.empty_like(out), np.empty_like(out)))
        return out.astype(dt, copy=False)
    return run


def _gelu_tanh_derivative(x: Tensor) -> Tensor:
    t = ((x + x * x * x * _KAPPA) * _BETA).tanh()
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * (_BETA * (1 + 3 * _KAPPA * x * x))


def _gelu_tanh_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    x = n.inputs[0]
    if not STATE.enabled:
        return (_GELU_TANH_BACKWARD(x, g),)
    return (g * _gelu_tanh_derivative(x),)


_gelu_tanh_runs = _float32_runs(_gelu_tanh_into, _in_opmath(_gelu_tanh_into))
_gelu_tanh_backward_runs = _float32_runs(_gelu_tanh_backward_into, _in_opmath(_gelu_tanh_backward_into))
_GELU_TANH_BACKWARD = Prim("gelu_tanh_backward",  # NOTE [fused backward]
                           lambda x, g: thread_pool.flat(_gelu_tanh_backward_runs, (x, g), 15))
_GELU_TANH = Prim("gelu_tanh", lambda a: thread_pool.flat(_gelu_tanh_runs, (a,), 8), _gelu_tanh_vjp,
                  jvp=lambda ts, n: None if ts[0] is None else ts[0] * _gelu_tanh_derivative(n.inputs[0]))


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit: exact (``'none'``) or the ``'tanh'`` approximation."""
    need_floating(input, "GeluKernelImpl")  # torch has no integer, bool or complex kernel: never a silent cast
    if approximate == "tanh":
        if input._device.type in _GELU_TANH.kernels:
            return _GELU_TANH(input)
        inner = (input + input * input * input * _KAPPA) * _BETA  # devices without the fused kernel
        return input * 0.5 * (1 + inner.tanh())
    if approximate != "none":
        raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate!r}")
    x = input._data
    if input._requires_grad and STATE.enabled and input._device.type == "cpu" and type(x) is np.ndarray \
            and x.dtype in _PARTS_DTYPES and _GELU.kernels.get("cpu") is _gelu_cpu:  # ("GELU in a training step")
        # (the derivative's buffer from the thread's array pool: a fresh one faults its pages in on every step)
        return _GELU(input, Tensor._make(array_pool.empty(x.shape, x.dtype), input._device))
    return _GELU(input)


# -- softmax family -------------------------------------------------------------------------------------

# Each kernel writes into a buffer of the result's shape, one pass after another (out=), and works on each slice
# along ``axis`` alone, so a large input splits into blocks of rows (``thread_pool.rows``): over the intra-op
# threads, and small enough that a block's passes find it in the cache. Row sums along the last axis are dot
# products with ones (``thread_pool.sum_last``).
def _sum(a: Any, axis: int) -> Any:
    if axis in (-1, a.ndim - 1):
        return thread_pool.sum_last(a)[..., None]
    return np.add.reduce(a, axis, keepdims=True)


def _between(t: Any, lo: float, hi: float) -> bool:
    """Every element of ``t`` in ``[lo, hi]`` (False for a NaN: NumPy's min and max keep it)."""
    return bool(np.minimum.reduce(t, None) >= lo) and bool(np.maximum.reduce(t, None) <= hi)


def _shifted_exp(a: Any, axis: int, out: Any) -> None:
    np.subtract(a, np.maximum.reduce(a, axis, keepdims=True), out=out)
    np.exp(out, out=out)


def _unshifted_rows(a: Any, axis: int, out: Any, lo: float, hi: float, finish: Callable[[Any], None],
                    shifted: Callable[[Any, int, Any], None]) -> None:
    """exp(x) into ``out`` and its row sums; ``finish(total)`` completes the unshifted formula when every row's
    sum lies in ``[lo, hi]``. Otherwise (a large logit, a row of very negative ones, inf or NaN) the rows are
    redone by ``shifted`` (x - max first, as torch's kernels): only the rows outside the range when they are few
    and lie along the last axis (a causal mask leaves the first query one key, whose exp is below 1 half the
    time, and redid every block), else the whole block."""
    np.exp(a, out=out)
    total = _sum(out, axis)
    if _between(total, lo, hi):
        finish(total)
        return
    bad = _few_bad_rows(total, lo, hi, axis)
    if bad is None:
        shifted(a, axis, out)
        return
    total[bad] = 1
    finish(total)
    sub = a[bad]
    shifted(sub, -1, sub)
    out[bad] = sub


def _softmax_rows(a: Any, *, axis: int, out: Any) -> None:
    # exp(x) / sum(exp(x)) without subtracting the row's max first (two passes fewer) when every row's sum lies
    # in [1, 2^64]: then no exp overflowed, an exp that underflowed belongs to a result below float32's smallest
    # normal number, and the reciprocal is normal, so the values are torch's exp(x - max) / sum to a few ulp.
    def finish(total: Any) -> None:
        np.multiply(out, np.reciprocal(total, out=total), out=out)

    _unshifted_rows(a, axis, out, 1.0, 2.0**64, finish, _softmax_shifted)


def _softmax_shifted(a: Any, axis: int, out: Any) -> None:
    _shifted_exp(a, axis, out)
    total = _sum(out, axis)
    out *= np.reciprocal(total, out=total)  # as torch's CPU kernel: one division per row, a product per element


def _few_bad_rows(total: Any, lo: float, hi: float, axis: int) -> Any:
    """Where the row sums ``total`` (the rows along the last axis, ``(..., 1)``) leave ``[lo, hi]`` (NaN too): a
    boolean mask over the leading dims, or None when the rows are not along the last axis or a quarter or more
    are out (the whole block is then redone: indexing would cost more than it saves)."""
    if axis not in (-1, total.ndim - 1) or total.ndim < 2:
        return None
    bad = ~((total >= lo) & (total <= hi))[..., 0]
    return bad if 4 * int(np.count_nonzero(bad)) < bad.size else None


def _log_softmax_rows(a: Any, *, axis: int, out: Any) -> None:
    # x - log(sum(exp(x))) without the max's two passes when every row's log-sum lies in [-16.6, 16.6]: the
    # subtraction then loses no more than torch's (x - max) - log(sum(exp(x - max))) does.
    def finish(total: Any) -> None:
        np.subtract(a, np.log(total, out=total), out=out)

    _unshifted_rows(a, axis, out, 2.0**-24, 2.0**24, finish, _log_softmax_shifted)


def _log_softmax_shifted(a: Any, axis: int, out: Any) -> None:
    np.subtract(a, np.maximum.reduce(a, axis, keepdims=True), out=out)  # (x - max) - log(sum(exp(x - max)))
    out -= np.log(_sum(np.exp(out), axis))


def _softmax_backward_rows(y: Any, g: Any, *, axis: int, out: Any) -> None:
    # y * (g - sum(g * y)), the row sums as dot products (no product buffer) along the last axis
    if axis in (-1, y.ndim - 1) and y.dtype in _DOT_DTYPES and y.shape[-1] <= thread_pool.DOT_MAX:
        dot = np.vecdot(g, y)[..., None]
    else:
        dot = np.add.reduce(np.multiply(g, y, out=out), axis, keepdims=True)
    np.subtract(g, dot, out=out)
    out *= y


_DOT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _log_softmax_backward_rows(y: Any, g: Any, *, axis: int, out: Any) -> None:
    np.exp(y, out=out)  # g - exp(y) * sum(g)
    out *= _sum(g, axis)
    np.subtract(g, out, out=out)


def _by_rows(rows: Callable[..., None], passes: float) -> Callable[..., Any]:
    def kernel(*arrays: Any, axis: int) -> Any:
        a = arrays[0]
        if not a.size:
            return np.exp(a) if rows is _softmax_rows else a.copy()
        if a.dtype.itemsize < 4:  # float16/bfloat16 computed in float32 and rounded once, as torch's CPU kernels
            return kernel(*(x.astype(np.float32) for x in arrays), axis=axis).astype(a.dtype)
        out = np.empty_like(a)
        thread_pool.rows(functools.partial(rows, axis=axis), arrays, out, axis, passes)
        return out
    return kernel


_softmax_kernel = _by_rows(_softmax_rows, 4)
_log_softmax_kernel = _by_rows(_log_softmax_rows, 5)
_softmax_backward_kernel = _by_rows(_softmax_backward_rows, 4)
_log_softmax_backward_kernel = _by_rows(_log_softmax_backward_rows, 4)


# NOTE [fused backward]: a first-order backward (grad mode off while it runs) calls one primitive (one kernel
# on a GPU); a backward that builds a graph (create_graph) writes the same formula in differentiable ops.
_SOFTMAX_BACKWARD = Prim("softmax_backward", _softmax_backward_kernel)
_LOG_SOFTMAX_BACKWARD = Prim("log_softmax_backward", _log_softmax_backward_kernel)


def _softmax_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    y, axis = n.out, n.params["axis"]
    if not STATE.enabled:
        return (_SOFTMAX_BACKWARD(y, g, axis=axis),)
    return (y * (g - (g * y).sum(axis, keepdim=True)),)


def _log_softmax_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    y, axis = n.out, n.params["axis"]
    if not STATE.enabled:
        return (_LOG_SOFTMAX_BACKWARD(y, g, axis=axis),)
    return (g - y.exp() * g.sum(axis, keepdim=True),)


_SOFTMAX = Prim("softmax", _softmax_kernel, _softmax_vjp, save_output=True)
_LOG_SOFTMAX = Prim("log_softmax", _log_softmax_kernel, _log_softmax_vjp, save_output=True)


# -- layer_norm: one primitive (one kernel per row on a GPU) and its fused input gradient ----------------
def _ln_axes(a: Any, nd: int) -> tuple[int, ...]:
    return tuple(range(a.ndim - nd, a.ndim))


def _ln_hat(x: Any, nd: int, eps: float) -> tuple[Any, Any]:
    ax = _ln_axes(x, nd)
    mean = np.mean(x, axis=ax, keepdims=True)
    rstd = 1 / np.sqrt(np.mean(np.square(x - mean), axis=ax, keepdims=True) + eps)
    return (x - mean) * rstd, rstd


def _fusable_ln(x: Any, wb: tuple[Any, ...]) -> bool:
    """The row-wise kernels below take C-contiguous float32/float64 arrays with weight and bias of the input's dtype;
    anything else (a strided view, bfloat16, mixed dtypes) takes the general formula (``_ln_hat``)."""
    if not (type(x) is np.ndarray and x.dtype in _LN_DTYPES and x.flags.c_contiguous and x.size > 0):
        return False
    for t in wb:  # (a loop, not all() of a generator: every layer norm asks, forward and backward)
        if type(t) is not np.ndarray or t.dtype != x.dtype:
            return False
    return True


_LN_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _ln_rows_stats(x2: Any, eps: float, xc: Any) -> tuple[Any, Any]:
    """``xc = x - mean`` of (rows, D) into ``xc``; returns (mean, rstd), each (rows,). The row sums are products with
    a vector of ones and the sums of squares row dot products (BLAS and np.vecdot: 3-5x faster than NumPy's
    reductions along a short last axis, and no squared copy)."""
    d = x2.shape[-1]
    t = x2.dtype.type
    mean = x2 @ np.ones(d, x2.dtype)
    mean *= t(1 / d)
    np.subtract(x2, mean[:, None], out=xc)
    var = np.vecdot(xc, xc)
    var *= t(1 / d)
    var += t(eps)
    return mean, np.reciprocal(np.sqrt(var, out=var), out=var)


def _ln_rows_centered(x2: Any, eps: float, xc: Any) -> Any:
    """``xc = x - mean`` of (rows, D) into ``xc``; returns rstd, (rows,)."""
    return _ln_rows_stats(x2, eps, xc)[1]


def _layer_norm_rows(x2: Any, *, eps: float, w: Any, b: Any, out: Any) -> tuple[Any, Any]:
    """One block of rows into ``out``; returns the block's (mean, rstd)."""
    mean, rstd = _ln_rows_stats(x2, eps, out)
    out *= rstd[:, None]
    if w is not None:
        out *= w
    if b is not None:
        out += b
    return mean, rstd


def _layer_norm_kernel(x: Any, *wb: Any, nd: int, eps: float, has_w: bool, has_b: bool, stats: Any = None) -> Any:
    """The normalized ``x``; with ``stats`` (a (2, rows) array that ``layer_norm_prim`` passes where the backward
    will read it) each row's mean and 1/std written there too, as torch's native_layer_norm returns them."""
    if _fusable_ln(x, wb):
        # (rows, D) in one buffer, the rows over the intra-op threads when large
        d = math.prod(x.shape[x.ndim - nd:])
        x2 = x.reshape(-1, d)
        w = wb[0].reshape(d) if has_w else None
        b = wb[-1].reshape(d) if has_b else None
        out = np.empty_like(x2)
        parts = thread_pool.rows(functools.partial(_layer_norm_rows, eps=eps, w=w, b=b), (x2,), out, -1, _LN_PASSES)
        if stats is not None:
            at = 0
            for mean, rstd in parts:
                stats[0, at:at + mean.shape[0]] = mean
                stats[1, at:at + mean.shape[0]] = rstd
                at += mean.shape[0]
        return out.reshape(x.shape)
    out = _ln_hat(x, nd, eps)[0]
    if has_w:
        out = out * wb[0]
    if has_b:
        out = out + wb[-1]
    return out.astype(x.dtype, copy=False)


_LN_PASSES = 6


def _layer_norm_backward_kernel(x: Any, g: Any, *w: Any, nd: int, eps: float) -> Any:
    hat, rstd = _ln_hat(x, nd, eps)
    ax = _ln_axes(x, nd)
    gw = g * w[0] if w else g
    dx = rstd * (gw - np.mean(gw, axis=ax, keepdims=True) - hat * np.mean(gw * hat, axis=ax, keepdims=True))
    return dx.astype(x.dtype, copy=False)


def _layer_norm_backward_rows(x2: Any, g2: Any, *, eps: float, w: Any, need: tuple[bool, bool, bool],
                              out: Any) -> tuple[Any, Any]:
    """The gradients of one block of rows: dx into ``out`` (when asked for), and this block's share of the weight's
    and the bias's gradients (sums over its rows, as matrix-vector products).

    With ``xc = x - mean`` and ``hat = xc * rstd`` the input's gradient is ``rstd (gw - mean(gw)) - xc (rstd^3
    mean(gw xc))``, ``gw = g * w``, and the weight's ``rstd @ (g * xc)``: the rstd scalings go into per-row numbers
    and into the product's vector, so ``hat`` itself is never formed (one pass over the block fewer: 0.89x the
    time on (512, 128) float32, one thread, with the same error to torch's gradients)."""
    d = x2.shape[-1]
    t = x2.dtype.type
    xc = np.empty_like(x2)
    rstd = _ln_rows_centered(x2, eps, xc)
    gb_part = np.ones(x2.shape[0], x2.dtype) @ g2 if need[2] else None
    gw_part = None
    if need[1]:
        np.multiply(g2, xc, out=out)
        gw_part = rstd @ out
    if need[0]:
        gw = np.multiply(g2, w, out=out) if w is not None else g2
        k = np.vecdot(gw, xc)
        m_g = gw @ np.ones(d, x2.dtype)
        k *= t(1 / d)
        k *= rstd
        k *= rstd
        k *= rstd
        m_g *= t(1 / d)
        xc *= k[:, None]
        np.subtract(gw, m_g[:, None], out=out)
        out *= rstd[:, None]
        out -= xc
    return gw_part, gb_part


def _layer_norm_backward_saved_rows(x2: Any, g2: Any, mean: Any, rstd: Any, w: Any, need: tuple[bool, bool, bool],
                                    out: Any) -> tuple[Any, Any]:
    """The gradients of one block of rows from the forward's mean and 1/std (``_layer_norm_backward_rows`` remakes
    them): torch's native_layer_norm_backward formula, ``dx = rstd g w + b x + c`` with the per-row numbers ``b =
    (mean(g w) mean - mean(g w x)) rstd^3`` and ``c = -b mean - mean(g w) rstd``, so x is read as it is and never
    centred for the input's gradient (11 passes over the block where the other path takes 13 and the statistics'
    reductions: 0.75x its time on (512, 128) float32, one thread); the weight's gradient ``rstd @ (g * (x - mean))``
    centred, as torch's."""
    d = x2.shape[-1]
    t = x2.dtype.type
    tmp = np.empty_like(x2)
    gb_part = np.ones(x2.shape[0], x2.dtype) @ g2 if need[2] else None
    gw_part = None
    if need[1]:
        np.subtract(x2, mean[:, None], out=tmp)
        tmp *= g2
        gw_part = rstd @ tmp
    if need[0]:
        gw = np.multiply(g2, w, out=out) if w is not None else g2
        m_g = gw @ np.ones(d, x2.dtype)
        m_g *= t(1 / d)
        m_gx = np.vecdot(gw, x2)
        m_gx *= t(1 / d)
        b = m_g * mean
        b -= m_gx
        b *= rstd
        b *= rstd
        b *= rstd
        c = b * mean
        c += m_g * rstd
        np.multiply(x2, b[:, None], out=tmp)
        tmp -= c[:, None]
        np.multiply(gw, rstd[:, None], out=out)
        out += tmp
    return gw_part, gb_part


def _layer_norm_backward_arrays(x: Any, g: Any, w: Any, nd: int, eps: float, need: tuple[bool, bool, bool],
                                stats: Any = None) -> tuple[Any, Any, Any]:
    """(grad input, grad weight, grad bias) from one pass over the rows, each None where ``need`` says so; from the
    forward's mean and 1/std where ``stats`` has them."""
    d = math.prod(x.shape[x.ndim - nd:])
    x2, g2 = x.reshape(-1, d), np.ascontiguousarray(g).reshape(-1, d)
    out = np.empty_like(x2)
    wd = None if w is None else w.reshape(d)
    if stats is not None:
        # blocks of rows as ``thread_pool.rows`` cuts them, each with its rows' statistics
        size = int(out.size * _LN_PASSES * 2)
        k = min(thread_pool.parts(size), x2.shape[0], max(2, out.size // thread_pool.GRAIN)) \
            if size >= 2 * thread_pool.GRAIN else 1
        parts = thread_pool.map_ranges(lambda lo, hi: _layer_norm_backward_saved_rows(
            x2[lo:hi], g2[lo:hi], stats[0, lo:hi], stats[1, lo:hi], wd, need, out[lo:hi]), x2.shape[0], k)
    else:
        parts = thread_pool.rows(functools.partial(_layer_norm_backward_rows, eps=eps, need=need, w=wd),
                                 (x2, g2), out, -1, _LN_PASSES * 2)
    sums: list[Any] = [None, None]
    for i in (0, 1):
        if need[i + 1]:
            total = parts[0][i]
            for p in parts[1:]:
                total = total + p[i]
            sums[i] = total.reshape(x.shape[x.ndim - nd:])
    return (out.reshape(x.shape) if need[0] else None), sums[0], sums[1]


def _ln_hat_ops(x: Tensor, nd: int, eps: float) -> tuple[Tensor, Tensor]:
    ax = list(_ln_axes(x._data, nd))
    mean = x.mean(ax, keepdim=True)
    rstd = (x.var(ax, keepdim=True, correction=0) + eps).rsqrt()
    return (x - mean) * rstd, rstd


def _layer_norm_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    x, p = n.inputs[0], n.params
    nd, eps = p["nd"], p["eps"]
    w = n.inputs[1] if p["has_w"] else None
    b = n.inputs[-1] if p["has_b"] else None
    lead = list(range(x._data.ndim - nd))
    if not STATE.enabled and _fusable_ln(x._data, tuple([t._data for t in n.inputs[1:]])) \
            and type(g._data) is np.ndarray and g._data.dtype == x._data.dtype:
        # NumPy arrays: every gradient from one pass over the rows (the forward ran the same kernel)
        need = (x.requires_grad, w is not None and w.requires_grad, b is not None and b.requires_grad)
        arrays = _layer_norm_backward_arrays(x._data, g._data, None if w is None else w._data, nd, eps, need,
                                             p.get("stats"))
        gx, gw, gb = [None if a is None else Tensor._make(a, x._device) for a in arrays]
        return (gx, *((gw,) if w is not None else ()), *((gb,) if b is not None else ()))
    grads: list[Any] = []
    if not STATE.enabled:
        grads.append(_LAYER_NORM_BACKWARD(x, g, *((w,) if w is not None else ()), nd=nd, eps=eps))
        if w is not None:
            grads.append(_LAYER_NORM_WEIGHT_GRAD(x, g, nd=nd, eps=eps))
    else:
        hat, rstd = _ln_hat_ops(x, nd, eps)
        ax = list(_ln_axes(x._data, nd))
        gw = g * w if w is not None else g
        grads.append(rstd * (gw - gw.mean(ax, keepdim=True) - hat * (gw * hat).mean(ax, keepdim=True)))
        if w is not None:
            gh = g * hat
            grads.append(gh.sum(lead) if lead else gh)
    if p["has_b"]:
        grads.append(g.sum(lead) if lead else g)
    return tuple(grads)


_LAYER_NORM = Prim("layer_norm", _layer_norm_kernel, _layer_norm_vjp)
_LAYER_NORM_BACKWARD = Prim("layer_norm_backward", _layer_norm_backward_kernel)


def _layer_norm_weight_grad_kernel(x: Any, g: Any, nd: int, eps: float) -> Any:
    """``sum(g * xhat)`` over the leading dims: the weight's gradient (one primitive, so a device makes it without
    the normalized input and the product as tensors of their own)."""
    hat = _ln_hat(x, nd, eps)[0]
    return np.sum(g * hat, axis=tuple(range(x.ndim - nd))).astype(x.dtype, copy=False)


_LAYER_NORM_WEIGHT_GRAD = Prim("layer_norm_weight_grad", _layer_norm_weight_grad_kernel)


def layer_norm_prim(x: Tensor, nd: int, eps: float, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over the last ``nd`` dims (shapes checked by the caller)."""
    wb = tuple([t for t in (weight, bias) if t is not None])  # (lists, no generators: every layer norm passes)
    a = x._data
    if STATE.enabled and x._device.type == "cpu" and (x._requires_grad or (weight is not None and weight._requires_grad)
                                                      or (bias is not None and bias._requires_grad)) \
            and _LAYER_NORM.kernels.get("cpu") is _layer_norm_kernel and _fusable_ln(a, tuple([t._data for t in wb])):
        # the rows' mean and 1/std for the backward (torch's node saves them too): a (2, rows) array the kernel fills
        stats = np.empty((2, a.size // math.prod(a.shape[a.ndim - nd:])), a.dtype)
        return _LAYER_NORM(x, *wb, nd=nd, eps=float(eps), has_w=weight is not None, has_b=bias is not None,
                           stats=stats)
    return _LAYER_NORM(x, *wb, nd=nd, eps=float(eps), has_w=weight is not None, has_b=bias is not None)


def _prepare(input: Tensor, dim: int, dtype: Any, op: str) -> tuple[Tensor, int]:
    if dtype is not None:
        input = input.to(to_dtype(dtype))
    need_floating(input, op)
    axis = check(wrap_dim, dim, input._data.ndim, op, "softmax_error_dim_out_of_range")
    return input, axis


@public("activation")
def softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``exp(x) / sum(exp(x), dim)``, computed stably."""
    input, axis = _prepare(input, dim, dtype, "softmax")
    if input._data.ndim == 0:
        return _SOFTMAX(input.reshape(1), axis=0).reshape(())
    return _SOFTMAX(input, axis=axis)


@public("activation")
def log_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``x - logsumexp(x, dim)``, computed stably."""
    input, axis = _prepare(input, dim, dtype, "log_softmax")
    if input._data.ndim == 0:
        return _LOG_SOFTMAX(input.reshape(1), axis=0).reshape(())
    return _LOG_SOFTMAX(input, axis=axis)


def softmin(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    return softmax(-input, dim, dtype)


# -- composites -----------------------------------------------------------------------------------------

def _where_pos(x: Tensor, pos: Tensor, neg: Tensor) -> Tensor:
    return _where((x > 0), pos, neg)


# -- leaky_relu, hardtanh: one primitive each, and torch's fused gradients (leaky_relu_backward, hardtanh_backward)
# The composites were a comparison, a product and a where forward (leaky_relu) or two comparisons, an or, a clamp
# and a where (hardtanh), and backward where's two selects and their sum. The kernels are torch's selects, so the
# bits and the subgradient at the kink are torch's: leaky_relu's gradient at x = 0 is the slope's (a NaN's too),
# hardtanh's is 0 at and beyond the bounds (and at NaN: see its kernel). Their own derivatives: linear in the
# gradient (the mask is constant), as torch's.

def _scaled(a: Any, slope: float) -> Any:
    """``a * slope`` with the slope in ``a``'s dtype; float16 and bfloat16 multiplied in float32 and rounded once
    (torch's opmath: the slope is not rounded to the half type first)."""
    if a.dtype.itemsize == 2:
        return (a.astype(np.float32) * np.float32(slope)).astype(a.dtype)
    return a * a.dtype.type(slope)


# (the selects are conversion's ``_where_kernel``, bit operations: np.where branches on each element, and made
# these primitives twice as slow as the composite on a random (256, 512) mask)
def _leaky_relu_kernel(x: Any, negative_slope: float) -> Any:
    return _where_kernel(x > 0, x, _scaled(x, negative_slope))


def _leaky_relu_backward_kernel(g: Any, x: Any, negative_slope: float) -> Any:
    return _where_kernel(x > 0, g, _scaled(g, negative_slope))


def _hardtanh_kernel(x: Any, min_val: float, max_val: float) -> Any:
    t = x.dtype.type
    return np.clip(x, t(min_val), t(max_val))  # (NaN stays NaN, as torch's clamp)


def _hardtanh_backward_kernel(g: Any, x: Any, min_val: float, max_val: float) -> Any:
    """``g`` strictly inside the bounds, else 0: torch's vectorised kernel, which runs all but the last few elements
    of a tensor (for those and for tensors under 16 float32 elements its scalar loop passes a NaN's gradient, the
    vectorised one zeroes it; this takes the vectorised choice everywhere). float16 and bfloat16 are compared in
    float32, with the bounds not rounded to the half type, as torch."""
    xc = x.astype(np.float32) if x.dtype.itemsize == 2 else x
    t = xc.dtype.type
    inside = xc > t(min_val)
    inside &= xc < t(max_val)
    return _where_kernel(inside, g, np.zeros((), g.dtype))


def _mask_vjp(prim_name: str) -> Callable[[Tensor, Any], tuple[Any, ...]]:
    """The vjp of a gradient that is linear in ``g`` with a mask from ``x``: the same map of ``gg``; zeros for x
    (torch's ``zeros_like(self)``, so that ``autograd.grad`` gives x a zero tensor, not None)."""
    def vjp(gg: Tensor, n: Any) -> tuple[Any, ...]:
        x = n.inputs[1]
        return PRIMS_BY_NAME[prim_name](gg, x, **n.params), x.new_zeros(x._data.shape)
    return vjp


_LEAKY_RELU_BACKWARD = Prim("leaky_relu_backward", _leaky_relu_backward_kernel, _mask_vjp("leaky_relu_backward"))
_HARDTANH_BACKWARD = Prim("hardtanh_backward", _hardtanh_backward_kernel, _mask_vjp("hardtanh_backward"))
PRIMS_BY_NAME = {"leaky_relu_backward": _LEAKY_RELU_BACKWARD, "hardtanh_backward": _HARDTANH_BACKWARD}
_LEAKY_RELU = Prim("leaky_relu", _leaky_relu_kernel,
                   lambda g, n: (_LEAKY_RELU_BACKWARD(g, n.inputs[0], **n.params),),
                   jvp=lambda ts, n: None if ts[0] is None else _LEAKY_RELU_BACKWARD(ts[0], n.inputs[0], **n.params))
_HARDTANH = Prim("hardtanh", _hardtanh_kernel,
                 lambda g, n: (_HARDTANH_BACKWARD(g, n.inputs[0], **n.params),),
                 jvp=lambda ts, n: None if ts[0] is None else _HARDTANH_BACKWARD(ts[0], n.inputs[0], **n.params))
via_vjp("leaky_relu_backward", "hardtanh_backward")


def _floating(input: Tensor) -> bool:
    return input._data.dtype.kind == "f" or input.dtype.is_floating_point  # (bfloat16's NumPy kind is "V")


def leaky_relu(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    check(RD.check_kind, "leaky_relu", dtype_name(input))
    if _floating(input) and input._device.type in _LEAKY_RELU.kernels:
        return _LEAKY_RELU(input, negative_slope=float(negative_slope))
    return _where_pos(input, input, input * negative_slope)


# -- elu/selu/celu, softplus, hardswish, hardsigmoid, logsigmoid: one primitive each and torch's fused gradients --
# NOTE [fused pointwise gradients]. These were composites (a clamp, an expm1, a product and a where for elu; softplus
# six primitives, hardswish a product of hardsigmoid's four...), so each backward ran their vjps: where's two
# selects and their sum, a product's two products, a clamp's mask. torch runs each gradient as one op
# (elu_backward, softplus_backward, hardswish_backward, hardsigmoid_backward, log_sigmoid_backward). The kernels
# are torch's formulas in its operation order; float16 and bfloat16 computed in float32 and rounded once (its
# opmath). Each gradient primitive has its own derivative (in public ops, for a double backward: torch's
# ``*BackwardBackward0`` nodes) and the forward's jvp is the gradient primitive of the tangent.

def _opmath(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` of float32/float64 arrays as they are; float16 and bfloat16 computed in float32, rounded once. A 0-d
    input runs as one element (NumPy's arithmetic on 0-d arrays gives scalars, which ``out=`` refuses)."""
    def run(*arrays: Any, **params: Any) -> Any:
        if arrays[0].ndim == 0:
            return np.asarray(run(*(a.reshape(1) for a in arrays), **params)).reshape(())
        dt = arrays[0].dtype
        if dt.itemsize == 2:
            return fn(*(a.astype(np.float32) for a in arrays), **params).astype(dt)
        return fn(*arrays, **params)
    return run


@_opmath
def _elu_kernel(x: Any, alpha: float, scale: float, input_scale: float) -> Any:
    """``x <= 0 ? expm1(x * input_scale) * (alpha * scale) : x * scale`` (torch's elu; selu and celu are its
    parameters). The expm1 runs on ``min(x, 0)``: the positive side's overflow is never taken."""
    t = x.dtype.type
    neg = np.minimum(x, t(0))
    neg *= t(input_scale)
    np.expm1(neg, out=neg)
    neg *= t(alpha) * t(scale)
    return _where_kernel(x > 0, x * t(scale) if scale != 1.0 else x, neg)


@_opmath
def _elu_backward_kernel(g: Any, x: Any, alpha: float, scale: float, input_scale: float) -> Any:
    """``x > 0 ? g * scale : g * input_scale * (alpha * scale) * exp(x * input_scale)`` (torch's elu_backward of
    the input, not the result; a NaN input gives NaN, as its vectorised loop: its scalar loop for a tensor's last
    few elements passes ``g * scale``)."""
    t = x.dtype.type
    neg = np.minimum(x, t(0))
    neg *= t(input_scale)
    np.exp(neg, out=neg)
    neg *= (g * t(input_scale)) * (t(alpha) * t(scale))
    return _where_kernel(x > 0, g * t(scale) if scale != 1.0 else g, neg)


def _elu_backward_vjp(gg: Tensor, n: Any) -> tuple[Any, ...]:
    g, x = n.inputs
    p = n.params
    # torch's elu_double_backward: gg * g * input_scale^2 * alpha * scale * exp(x * input_scale) where x < 0
    # (0 at x = 0 and at NaN, as torch's)
    c = p["input_scale"] * p["input_scale"] * p["alpha"] * p["scale"]
    dx = _where(x < 0, (x * p["input_scale"]).exp() * (gg * g) * c, x.new_zeros(()))
    return _ELU_BACKWARD(gg, x, **p), dx


@_opmath
def _softplus_kernel(x: Any, beta: float, threshold: float) -> Any:
    """``x * beta > threshold ? x : log1p(exp(x * beta)) / beta`` (torch's); the exp of the linear side, which
    may overflow, is not taken."""
    t = x.dtype.type
    bx = x * t(beta)
    over = bx > t(threshold)
    np.minimum(bx, t(threshold), out=bx)
    np.exp(bx, out=bx)
    np.log1p(bx, out=bx)
    bx /= t(beta)
    return _where_kernel(over, x, bx)


@_opmath
def _softplus_backward_kernel(g: Any, x: Any, beta: float, threshold: float) -> Any:
    """``x * beta > threshold ? g : g * z / (z + 1)``, ``z = exp(x * beta)`` (torch's)."""
    t = x.dtype.type
    z = x * t(beta)
    over = z > t(threshold)
    np.minimum(z, t(threshold), out=z)
    np.exp(z, out=z)
    d = z + t(1)
    z *= g
    z /= d
    return _where_kernel(over, g, z)


def _softplus_backward_vjp(gg: Tensor, n: Any) -> tuple[Any, ...]:
    g, x = n.inputs
    p = n.params
    # torch's softplus_double_backward: gg * g * s * (1 - s) * (beta x < threshold) * beta, s = sigmoid(beta x)
    # (a product with the mask, so 0 from beta x = threshold on, and NaN stays NaN)
    bx = x * p["beta"]
    s = bx.sigmoid()
    dx = (gg * g) * s * (1 - s) * (bx < p["threshold"]).to(s.dtype) * p["beta"]
    return _SOFTPLUS_BACKWARD(gg, x, **p), dx


@_opmath
def _hardswish_kernel(x: Any) -> Any:
    """``x * min(max(x + 3, 0), 6) / 6`` (torch's)."""
    t = x.dtype.type
    r = x + t(3)
    np.clip(r, t(0), t(6), out=r)
    r *= x
    r /= t(6)
    return r


@_opmath
def _hardswish_backward_kernel(g: Any, x: Any) -> Any:
    """``x <= -3 ? 0 : x >= 3 ? g : g * (x / 3 + 0.5)`` (torch's vectorised selects: 0 at -3, ``g`` at 3, NaN
    at NaN)."""
    t = x.dtype.type
    r = x / t(3)
    r += t(0.5)
    # the slope, 1 from 3 up, times g; then 0 from -3 down (after the product: an inf gradient there gives 0, as
    # torch's select). Both selects of a number (the masked-fill form of _where_kernel, bit operations: np.where
    # and np.copyto(where=) branch on each element)
    one, zero = np.ones((), r.dtype), np.zeros((), r.dtype)
    r = _where_kernel(x >= t(3), one, r)
    r *= g
    return _where_kernel(x <= t(-3), zero, r)


def _hardswish_backward_vjp(gg: Tensor, n: Any) -> tuple[Any, ...]:
    g, x = n.inputs
    # torch's: gg * g / 3 strictly inside (-3, 3), else 0
    inside = (x > -3.0).logical_and(x < 3.0)
    return _HARDSWISH_BACKWARD(gg, x), _where(inside, (gg * g) / 3.0, x.new_zeros(()))


@_opmath
def _hardsigmoid_kernel(x: Any) -> Any:
    """``min(max(x + 3, 0), 6) / 6`` (torch's)."""
    t = x.dtype.type
    r = x + t(3)
    np.clip(r, t(0), t(6), out=r)
    r /= t(6)
    return r


@_opmath
def _hardsigmoid_backward_kernel(g: Any, x: Any) -> Any:
    """``-3 < x < 3 ? g * (1 / 6) : 0`` (torch's; its 1 / 6 is a float32 constant for every dtype, float64 too)."""
    t = x.dtype.type
    inside = x > t(-3)
    inside &= x < t(3)
    return _where_kernel(inside, g * t(np.float32(1.0) / np.float32(6.0)), np.zeros((), g.dtype))


def _hardsigmoid_backward_vjp(gg: Tensor, n: Any) -> tuple[Any, ...]:
    # torch has no derivative of hardsigmoid_backward (its double backward raises)
    fail("autograd_derivative_not_implemented", op="hardsigmoid_backward", what="hardsigmoid_backward")


@_opmath
def _log_sigmoid_kernel(x: Any) -> Any:
    """``min(x, 0) - log1p(exp(-|x|))`` (torch's)."""
    t = x.dtype.type
    z = np.abs(x)
    np.negative(z, out=z)
    np.exp(z, out=z)
    np.log1p(z, out=z)
    return np.subtract(np.minimum(x, t(0)), z, out=z)


@_opmath
def _log_sigmoid_backward_kernel(g: Any, x: Any) -> Any:
    """``g * (x < 0 ? 1 - z / (1 + z) : z / (1 + z))``, ``z = exp(-|x|)`` (torch's, its signs folded in)."""
    t = x.dtype.type
    z = np.abs(x)
    np.negative(z, out=z)
    np.exp(z, out=z)
    q = z + t(1)
    np.divide(z, q, out=z)
    neg = x < 0
    r = _where_kernel(neg, np.subtract(t(1), z, out=q), z)
    r *= g
    return r


def _log_sigmoid_backward_vjp(gg: Tensor, n: Any) -> tuple[Any, ...]:
    g, x = n.inputs
    s = x.sigmoid()  # torch's log_sigmoid_double_backward: gg * g * (s - 1) * s
    return _LOG_SIGMOID_BACKWARD(gg, x), (gg * g) * (s - 1) * s


def _gradient_of(backward: Prim) -> Callable[[Tensor, Any], tuple[Any, ...]]:
    """A forward primitive's vjp and jvp: its fused gradient primitive of ``g`` and the input."""
    return lambda g, n: (backward(g, n.inputs[0], **n.params),)


def _tangent_of(backward: Prim) -> Callable[[Any, Any], Any]:
    return lambda ts, n: None if ts[0] is None else backward(ts[0], n.inputs[0], **n.params)


_ELU_BACKWARD = Prim("elu_backward", _elu_backward_kernel, _elu_backward_vjp)
_SOFTPLUS_BACKWARD = Prim("softplus_backward", _softplus_backward_kernel, _softplus_backward_vjp)
_HARDSWISH_BACKWARD = Prim("hardswish_backward", _hardswish_backward_kernel, _hardswish_backward_vjp)
_HARDSIGMOID_BACKWARD = Prim("hardsigmoid_backward", _hardsigmoid_backward_kernel, _hardsigmoid_backward_vjp)
_LOG_SIGMOID_BACKWARD = Prim("log_sigmoid_backward", _log_sigmoid_backward_kernel, _log_sigmoid_backward_vjp)


def _celu_params(p: dict[str, Any]) -> dict[str, Any]:
    """celu's gradient takes ``1 / alpha`` of alpha rounded to float32 (torch's derivative formula: ``1.0 /
    alpha.toFloat()``), where its forward takes it in double."""
    return {**p, "input_scale": 1.0 / float(np.float32(p["alpha"]))}


# celu is its own node in torch (CeluBackward0) over elu's kernels; selu is elu's (EluBackward0)
_ELU = Prim("elu", _elu_kernel, _gradient_of(_ELU_BACKWARD), jvp=_tangent_of(_ELU_BACKWARD))
_CELU = Prim("celu", _elu_kernel, lambda g, n: (_ELU_BACKWARD(g, n.inputs[0], **_celu_params(n.params)),),
             jvp=lambda ts, n: None if ts[0] is None else _ELU_BACKWARD(ts[0], n.inputs[0], **_celu_params(n.params)))
_SOFTPLUS = Prim("softplus", _softplus_kernel, _gradient_of(_SOFTPLUS_BACKWARD), jvp=_tangent_of(_SOFTPLUS_BACKWARD))
_HARDSWISH = Prim("hardswish", _hardswish_kernel, _gradient_of(_HARDSWISH_BACKWARD),
                  jvp=_tangent_of(_HARDSWISH_BACKWARD))
_HARDSIGMOID = Prim("hardsigmoid", _hardsigmoid_kernel, _gradient_of(_HARDSIGMOID_BACKWARD),
                    jvp=_tangent_of(_HARDSIGMOID_BACKWARD))
_LOG_SIGMOID = Prim("log_sigmoid", _log_sigmoid_kernel, _gradient_of(_LOG_SIGMOID_BACKWARD),
                    jvp=_tangent_of(_LOG_SIGMOID_BACKWARD))
via_vjp("elu_backward", "softplus_backward", "hardswish_backward", "hardsigmoid_backward", "log_sigmoid_backward")


def _fused(input: Tensor, prim: Prim) -> bool:
    """Whether ``prim`` serves: a floating input on a device with its kernel (else the composite)."""
    return _floating(input) and input._device.type in prim.kernels


def elu(input: Tensor, alpha: float = 1.0) -> Tensor:
    check(RD.check_kind, "elu", dtype_name(input))
    if _fused(input, _ELU):
        return _ELU(input, alpha=float(alpha), scale=1.0, input_scale=1.0)
    return _where_pos(input, input, (input.clamp(max=0.0).expm1()) * alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@public("activation")
def selu(input: Tensor) -> Tensor:
    _require(input, "selu")
    if _fused(input, _ELU):
        return _ELU(input, alpha=_SELU_ALPHA, scale=_SELU_SCALE, input_scale=1.0)
    return elu(input, _SELU_ALPHA) * _SELU_SCALE


@public("activation")
def celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    _require(input, "celu")
    if alpha == 0:  # torch refuses it (its input_scale is 1 / alpha)
        fail("argument_error_invalid", op="celu", problem="ZeroDivisionError: alpha cannot be 0 for CELU")
    if _fused(input, _CELU):
        return _CELU(input, alpha=float(alpha), scale=1.0, input_scale=1.0 / float(alpha))
    return _where_pos(input, input, (input.clamp(max=0.0) / alpha).expm1() * alpha)


# -- silu: x / (1 + exp(-x)), torch's formula, as one primitive, and its fused gradient ----------------------------
# The composite ``x * sigmoid(x)`` was two primitives forward and four backward (two products, the sigmoid's
# gradient and their sum); torch runs silu and silu_backward as one op each. Kernels in torch's operation order,
# over cache-sized runs for float32, float16 and bfloat16 computed in float32 and rounded once (torch's exp is
# its own vectorised one, so the last bits can differ). Complex inputs keep the composite, as torch's formula.

def _silu_into(x: Any, out: Any, s: tuple[Any, ...]) -> None:
    np.negative(x, out=out)
    np.exp(out, out=out)
    out += out.dtype.type(1)
    np.divide(x, out, out=out)  # -inf / inf is NaN, as torch's silu(-inf)


def _silu_backward_into(x: Any, g: Any, out: Any, s: tuple[Any, ...]) -> None:
    """``g * sig * (1 + x * (1 - sig))``, ``sig = 1 / (1 + exp(-x))``."""
    one = out.dtype.type(1)
    sig = s[0]
    np.negative(x, out=sig)
    np.exp(sig, out=sig)
    sig += one
    np.reciprocal(sig, out=sig)
    np.subtract(one, sig, out=out)
    out *= x
    out += one  # (torch's kernel rounds this multiply-add once: rounding it twice here, as its exp's last bit,
    # is within a few ulps, and doing it in float64 cost two more passes for a few more equal bits)
    sig *= g
    out *= sig


def _silu_backward_vjp(gg: Tensor, n: Any) -> tuple[Any, ...]:
    x, g = n.inputs
    # d/dx of g sig (1 + x (1 - sig)) = g sig (1 - sig) (2 + x (1 - 2 sig)), torch's formula
    sig = x.sigmoid()
    return gg * g * sig * (1 - sig) * (2 + x * (1 - 2 * sig)), _SILU_BACKWARD(x, gg)


def _silu_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    x = n.inputs[0]
    if not STATE.enabled:
        return (_SILU_BACKWARD(x, g),)
    # create_graph: torch's infinitely differentiable form (its node is MulBackward0, not SiluBackwardBackward0)
    sig = x.sigmoid()
    return (g * sig * (1 + x * (1 - sig)),)


_silu_runs = _float32_runs(_silu_into, _in_opmath(_silu_into))
_silu_backward_runs = _float32_runs(_silu_backward_into, _in_opmath(_silu_backward_into))
_SILU_BACKWARD = Prim("silu_backward", lambda x, g: thread_pool.flat(_silu_backward_runs, (x, g), 10),
                      _silu_backward_vjp)
_SILU = Prim("silu", lambda a: thread_pool.flat(_silu_runs, (a,), 4), _silu_vjp,
             jvp=lambda ts, n: None if ts[0] is None else _SILU_BACKWARD(n.inputs[0], ts[0]))
via_vjp("silu_backward")


# -- mish: x * tanh(softplus(x)), torch's formula, as one primitive, and its fused gradient (as silu's) ---------------

@_opmath
def _mish_kernel(x: Any) -> Any:
    """``x * tanh(log1p(exp(x)))`` (torch's; exp's overflow gives tanh(inf) = 1, so x)."""
    r = np.exp(x)
    np.log1p(r, out=r)
    np.tanh(r, out=r)
    r *= x
    return r


@_opmath
def _mish_backward_kernel(g: Any, x: Any) -> Any:
    """``g * (t + x * s * (1 - t * t))``, ``s = sigmoid(x)``, ``t = tanh(softplus(x))`` (torch's)."""
    one = x.dtype.type(1)
    t = np.exp(x)
    np.log1p(t, out=t)
    np.tanh(t, out=t)
    s = np.negative(x)
    np.exp(s, out=s)
    s += one
    np.divide(x, s, out=s)  # x * sigmoid(x)
    q = np.multiply(t, t)
    np.subtract(one, q, out=q)
    s *= q
    s += t
    s *= g
    return s


def _mish_derivative(x: Tensor) -> Tensor:
    t = softplus(x).tanh()
    return t + x * x.sigmoid() * (1 - t * t)


def _mish_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    x = n.inputs[0]
    if not STATE.enabled:
        return (_MISH_BACKWARD(g, x),)
    # create_graph: torch's infinitely differentiable form (its nodes are public ops', not MishBackwardBackward0)
    return (g * _mish_derivative(x),)


def _mish_backward_vjp(gg: Tensor, n: Any) -> tuple[Any, ...]:
    g, x = n.inputs
    return _MISH_BACKWARD(gg, x), gg * g * _mish_second(x)


_MISH_BACKWARD = Prim("mish_backward", _mish_backward_kernel, _mish_backward_vjp)
via_vjp("mish_backward")
_MISH = Prim("mish", _mish_kernel, _mish_vjp,
             jvp=lambda ts, n: None if ts[0] is None else ts[0] * _mish_derivative(n.inputs[0]))


def _mish_second(x: Tensor) -> Tensor:
    """mish'' (for a gradient of ``mish_backward`` itself, which torch does not differentiate: forward mode over
    the fused gradient)."""
    s = x.sigmoid()
    t = softplus(x).tanh()
    dt = (1 - t * t) * s
    return dt * 2 - x * s * (2 * t * dt) + x * s * (1 - s) * (1 - t * t)


def silu(input: Tensor) -> Tensor:
    if (input._data.dtype.kind == "f" or input.dtype.is_floating_point) and input._device.type in _SILU.kernels:
        return _SILU(input)
    return input * input.sigmoid()  # complex, or a device without the kernels


def mish(input: Tensor) -> Tensor:
    if _fused(input, _MISH):
        return _MISH(input)
    return input * softplus(input).tanh()


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta x)) / beta``; linear above ``threshold`` as in torch."""
    if _fused(input, _SOFTPLUS):
        return _SOFTPLUS(input, beta=float(beta), threshold=float(threshold))
    bx = input * beta
    soft = (bx.clamp(max=threshold).exp()).log1p() / beta
    return _where((bx > threshold), input, soft)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """clamp, but with torch's zero gradient exactly at the bounds; an integer input stays integer, as torch."""
    check(RD.check_kind, "hardtanh", dtype_name(input))
    if not (input.is_floating_point() or input.is_complex()):
        min_val, max_val = int(min_val), int(max_val)
    if _floating(input) and input._device.type in _HARDTANH.kernels:
        return _HARDTANH(input, min_val=float(min_val), max_val=float(max_val))
    outside = (input <= min_val).logical_or(input >= max_val)
    return _where(outside, input.clamp(min_val, max_val).detach(), input)


def relu6(input: Tensor) -> Tensor:
    return hardtanh(input, 0.0, 6.0)


def hardsigmoid(input: Tensor) -> Tensor:
    need_floating(input, "hardsigmoid_cpu")  # torch's kernels are floating point only
    if _fused(input, _HARDSIGMOID):
        return _HARDSIGMOID(input)
    return (input / 6 + 0.5).clamp(0.0, 1.0)


def hardswish(input: Tensor) -> Tensor:
    need_floating(input, "hardswish_cpu")  # torch's kernels are floating point only
    if _fused(input, _HARDSWISH):
        return _HARDSWISH(input)
    return input * hardsigmoid(input)


def logsigmoid(input: Tensor) -> Tensor:
    need_floating(input, "log_sigmoid_cpu", complex_=True)  # torch's kernels: floating point and complex
    if _fused(input, _LOG_SIGMOID):
        return _LOG_SIGMOID(input)
    return -softplus(-input)


def softsign(input: Tensor) -> Tensor:
    return input / (1 + input.abs())


def tanhshrink(input: Tensor) -> Tensor:
    return input - input.tanh()


@public("activation")
def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    _require(input, "hardshrink")
    # (torch's gradients of the shrinks and threshold take the input: NOTE [formal input of a gradient])
    return tie_gradient(_where((input.abs() > lambd), input, input * 0), input)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    return tie_gradient(_where((input > lambd), input - lambd, _where((input < -lambd), input + lambd, input * 0)),
                        input)


@public("activation", method=False)
def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    check(RD.check_kind, "threshold", dtype_name(input))
    if input._data.dtype.kind in "iu":  # torch's kernel converts both numbers to the integer dtype first
        threshold, value = (int(check_fill_value(v, dtype_name(input), "threshold")) for v in (threshold, value))
    return as_node(tie_gradient(_where((input > threshold), input, input * 0 + value), input), "ThresholdBackward0", input)


@public("activation")
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    input, weight = autocast_inputs("prelu", input, weight)
    w = weight
    if weight._data.size > 1 and input._data.ndim >= 2:
        w = weight.reshape((-1,) + (1,) * (input._data.ndim - 2))
    out = tie_gradient(_where_pos(input, input, input * w), input)  # (NOTE [formal input of a gradient])
    return as_node(out, "PreluKernelBackward0", input, weight)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    # chunk(2) of an odd size would split it unevenly and broadcast a silent wrong answer: the rule refuses it
    check(glu_shape, tuple(input._data.shape), dim, "glu")
    need_floating(input, "glu_cpu")  # torch's kernels are floating point only
    a, b = input.chunk(2, dim)
    return as_node(a * b.sigmoid(), "GluBackward0", input)


@public("activation", method=False)
def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.dropout(input, p, train)``: zero with probability ``p``, scale the rest by ``1 / (1 - p)``."""
    need_floating(input, "dropout")
    return apply_dropout(input, p, train)


def check_dropout_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def apply_dropout(input: Tensor, p: float, training: bool) -> Tensor:
    """``torch.dropout`` and ``F.dropout``: zero with probability ``p``, scale the rest by ``1 / (1 - p)``."""
    check_dropout_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0
    return input * dropout_mask(tuple(input._data.shape), p, input.dtype, input.device)


@public("activation", method=False)
def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          generator: Generator | None = None) -> Tensor:
    """Leaky relu with slope ``(lower + upper) / 2``; in training a slope drawn from U(lower, upper) per element."""
    need_floating(input, "rrelu")
    if not training:
        return leaky_relu(input, (lower + upper) / 2)
    slope = rand(tuple(input._data.shape), generator=generator, dtype=input.dtype, device=input.device)
    slope = slope * (upper - lower) + lower
    out: Tensor = _where(input <= 0, input * slope, input)
    return out


def _floating_only(fn: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    def checked(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        need_floating(input, name)
        return fn(input, *args, **kwargs)

    return checked


def _hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In place; signed integer tensors are clamped to integer bounds (as torch), bool/uint8/complex refused."""
    if input.is_complex() or input.dtype.name == "bool":
        fail("method_dtype_not_supported_error", op="hardtanh_", dtype=input.dtype.name, hint="")
    if input.dtype.name == "uint8" and (int(min_val) < 0 or int(max_val) < 0):
        fail("argument_error_invalid", op="hardtanh_", problem="cannot do hardtanh on an unsigned type with negative "
             "limits")
    if not input.dtype.is_floating_point:
        return write_inplace(input, input.clamp(int(min_val), int(max_val)), "hardtanh_")
    return write_inplace(input, hardtanh(snapshot_for_inplace(input), min_val, max_val), "hardtanh_")


def _threshold_(input: Tensor, threshold_: float, value: float) -> Tensor:
    """In place; integer tensors keep their dtype (the value is cast), bool/complex refused."""
    if input.is_complex() or input.dtype.name == "bool":
        fail("method_dtype_not_supported_error", op="threshold_", dtype=input.dtype.name, hint="")
    if not input.dtype.is_floating_point:
        kept: Tensor = _where(input > threshold_, input, input * 0 + int(value))
        return write_inplace(input, kept, "threshold_")
    return write_inplace(input, threshold(snapshot_for_inplace(input), threshold_, value), "threshold_")


_hardtanh_.__name__ = "hardtanh_"
_threshold_.__name__ = "threshold_"
_INPLACE: list[Callable[..., Tensor]] = [
    make_inplace(_floating_only(rrelu, "rrelu_"), "rrelu_"), make_inplace(_floating_only(elu, "elu_"), "elu_"),
    make_inplace(_floating_only(leaky_relu, "leaky_relu_"), "leaky_relu_"), _hardtanh_, _threshold_,
]
for _fn in _INPLACE:
    public("activation", method=False)(_fn)
