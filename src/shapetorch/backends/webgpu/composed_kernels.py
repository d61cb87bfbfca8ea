"""WebGPU kernels of primitives built from the other kernels' dispatches and views: ``cross`` (three
elementwise dispatches, one per component), ``cdist`` (the pairwise differences broadcast, one reduction),
``diagonal_scatter`` (a copy, then an assignment through the diagonal view), ``median_index`` (the stable
``argsort``, the NaN count, a gather), ``mode_index`` (tables of equalities, counted); ``poisson`` (the sampler of
:mod:`.poisson`); and the running-extreme index scan of ``cummax``/``cummin`` (its own
shader, one thread per row, as the other scans).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..._errors import fail
from . import codegen as G
from . import kernels as K
from . import poisson
from .runtime import RT, WG, WArray, contiguous_strides

MAX_SCAN = 65535  # the longest row one thread scans (lavapipe bounds a shader's loops)
_I64 = np.dtype(np.int64)


def _component(a: WArray, axis: int, k: int) -> WArray:
    """Component ``k`` along ``axis`` as a view that keeps the axis (size 1)."""
    shape = tuple(1 if d == axis else s for d, s in enumerate(a.shape))
    return K._view(a, shape, a.stride, a.offset + k * a.stride[axis])


def cross_kernel(a: WArray, b: WArray, axis: int) -> WArray:
    if b.dtype != a.dtype:
        b = K.cast(b, a.dtype)
    shape = K._broadcast(a.shape, b.shape)
    axis %= len(shape)
    a, b = K.expand_kernel(a, shape), K.expand_kernel(b, shape)
    out = RT.empty(shape, a.dtype)
    # an int64 component checks its exact value against a float32 shadow (see int64_checks)
    check = "abs(f32(a) * f32(b) - f32(c) * f32(d) - f32(r)) >= 2147483648.0" if a.dtype == _I64 else ""
    for k in range(3):
        i, j = (k + 1) % 3, (k + 2) % 3
        ops = [("a", _component(a, axis, i), a.dtype), ("b", _component(b, axis, j), a.dtype),
               ("c", _component(a, axis, j), a.dtype), ("d", _component(b, axis, i), a.dtype)]
        target = _component(out, axis, k)
        K.elementwise("a * b - c * d", a.dtype, ops, target.shape, out=target, check=check)
    return out


def cdist_kernel(a: WArray, b: WArray, p: float) -> WArray:
    """``|a_i - b_j|_p`` over the last dim: the (..., P, R, M) differences, then one reduction over M."""
    if K._kind(a.dtype) != "f":
        K._no_kernel("cdist", a.dtype)
    batch = K._broadcast(a.shape[:-2], b.shape[:-2])
    P, M, R = a.shape[-2], a.shape[-1], b.shape[-2]
    full = (*batch, P, R, M)
    av = K.expand_kernel(K._view(a, (*a.shape[:-1], 1, M), (*a.stride[:-1], 0, a.stride[-1])), full)
    bv = K.expand_kernel(K._view(b, (*b.shape[:-2], 1, R, M), (*b.stride[:-2], 0, *b.stride[-2:])), full)
    if M == 0 or math.prod(full) == 0:
        return K.full((*batch, P, R), 0, a.dtype)
    ops = [("a", av, a.dtype), ("b", bv, a.dtype)]
    dt = a.dtype
    last = len(full) - 1
    if p == 0:  # the count of differing coordinates, NaN if one is NaN
        d = K.elementwise("select(select(0.0, 1.0, a != b), a - b, nan_f(a - b))", dt, ops, full)
        return K.reduce("sum")(d, last)
    if math.isinf(p):
        return K.reduce("amax")(K.elementwise("abs(a - b)", dt, ops, full), last)
    if p == 1:
        return K.reduce("sum")(K.elementwise("abs(a - b)", dt, ops, full), last)
    if p == 2:
        s = K.reduce("sum")(K.elementwise("(a - b) * (a - b)", dt, ops, full), last)
        return K.elementwise("sqrt(a)", dt, [("a", s, dt)], s.shape)
    s = K.reduce("sum")(K.elementwise("pow_f(abs(a - b), s0)", dt, ops, full, extra=[p]), last)
    return K.elementwise("pow_f(a, s0)", dt, [("a", s, dt)], s.shape, extra=[1.0 / p])


def diagonal_scatter_kernel(a: WArray, src: WArray, offset: int, axis1: int, axis2: int) -> WArray:
    out = K.contiguous_copy(a)
    K.assign(K.diagonal_kernel(out, offset, axis1 % a.ndim, axis2 % a.ndim), src)
    return out


def median_index_kernel(a: WArray, axis: int, ignore_nan: bool) -> WArray:
    """The lower median's index: the first NaN when there is one (median), else position (n - 1) // 2 of the
    stable sort; nanmedian: the lower median of the non-NaN values (index 0 when all are NaN)."""
    if a.ndim == 0:
        return K.full((), 0, _I64)
    axis %= a.ndim
    n = a.shape[axis]
    order = K.argsort_kernel(a, axis, False)  # NaN last, as the CPU's sort
    keep = tuple(1 if d == axis else s for d, s in enumerate(a.shape))
    if K._kind(a.dtype) == "f":
        nan = K.cast(K.predicate("isnan")(a), _I64)
        nans = K.reduce("sum")(nan, axis, True)
    else:
        nans = K.full(keep, 0, _I64)
    if ignore_nan:
        expr = "select(0, (n - a - 1) / 2, n - a > 0)"
    else:
        expr = "select((n - 1) / 2, n - a, a > 0)"
    pos = K.elementwise(expr, _I64, [("a", nans, _I64), ("n", n, _I64)], keep)
    return K.take_along_kernel(order, pos, axis)


def mode_index_kernel(a: WArray, axis: int) -> WArray:
    """The index of the most frequent value along ``axis`` (the smallest among equally frequent ones; NaNs count
    as one value, the largest), at its last occurrence, as the CPU's: per row, an (L, L) table of equalities
    counted, the largest count, an (L, L) table of "a smaller candidate exists", and the last survivor. O(L^2)
    memory and work per row."""
    if a.ndim == 0:
        return K.full((), 0, _I64)
    axis %= a.ndim
    L = a.shape[axis]
    out_shape = tuple(1 if d == axis else s for d, s in enumerate(a.shape))
    if a.size == 0:
        return K.full(out_shape, 0, _I64)
    order = [d for d in range(a.ndim) if d != axis] + [axis]
    v = K.contiguous_copy(K.permute_kernel(a, order))
    R = v.size // L
    vi = K._view(v, (R, L, 1), (L, 1, 0))
    vj = K._view(v, (R, 1, L), (L, 0, 1))
    f = K._kind(a.dtype) == "f"
    eq = "a == b || (nan_f(a) && nan_f(b))" if f else "a == b"
    less = "(b < a) || (!nan_f(b) && nan_f(a))" if f else "b < a"  # NaN sorts last
    i32, flag = np.dtype(np.int32), np.dtype(bool)
    same = K.elementwise(f"select(0, 1, {eq})", i32, [("a", vi, a.dtype), ("b", vj, a.dtype)], (R, L, L))
    counts = K.reduce("sum")(same, 2)
    top = K.reduce("amax")(counts, 1, True)
    cand = K.elementwise("select(0u, 1u, a == b)", flag, [("a", counts, i32), ("b", top, i32)], (R, L))
    cj = K._view(cand, (R, 1, L), (L, 0, 1))
    beaten = K.reduce("any")(K.elementwise(f"select(0u, 1u, c != 0u && ({less}))", flag,
                                           [("a", vi, a.dtype), ("b", vj, a.dtype), ("c", cj, flag)], (R, L, L)), 2)
    pos = K.arange(0, 1, L, i32)
    score = K.elementwise("select(-1, p, c != 0u && n == 0u)", i32,
                          [("c", cand, flag), ("n", beaten, flag), ("p", pos, i32)], (R, L))
    best = K.cast(K.reduce("amax")(score, 1), _I64)
    kept = tuple(a.shape[d] for d in order[:-1]) + (1,)
    return K.permute_kernel(K._view(best, kept, contiguous_strides(kept), best.offset),
                            [order.index(d) for d in range(a.ndim)])


def poisson_kernel(a: WArray, generator: Any = None) -> WArray:
    """Drawn on the device (:mod:`.poisson`) from the generator's seed and next offset; the op passes the
    device's generator (without one, as from a caller that has none, the rates are read back and drawn on the
    host by NumPy's PCG64, as on the CPU)."""
    if generator is None:
        return K._host(K.PRIM_CPU["poisson"], a, generator=generator)
    return poisson.draw(a, generator._seed, generator._next_offset())


@functools.cache
def _extreme_index_shader(st: str, largest: bool) -> str:
    ct = "f32" if st in ("f16", "f32") else st
    load = G.load_expr(st, "src[off(base + i)]")
    cmp = ">=" if largest else "<="
    nan = " || nan_f(v)" if ct == "f32" else ""
    return f"""{G._enable((st,))}
@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<i32>;
@group(0) @binding(2) var<storage, read> src: array<{st}>;
{G.HELPERS}
{G._strided_off(2)}
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let row = gid.x + gid.y * nwg.x * {WG}u;
  if (row >= prm[0]) {{ return; }}
  let L = prm[1];
  let base = row * L;
  var i = 0u;
  var best = {load};
  var at = 0;
  loop {{
    if (i >= L) {{ break; }}
    let v = {load};
    // a later equal value, or a NaN, takes over (torch's rule)
    if (v {cmp} best{nan}) {{ best = v; at = i32(i); }}
    out[base + i] = at;
    i = i + 1u;
  }}
}}"""


def _extreme_index(largest: bool) -> Callable[..., WArray]:
    name = "cummax_index" if largest else "cummin_index"

    def kernel(a: WArray, axis: int) -> WArray:
        if a.ndim == 0:
            return K.full((), 0, _I64)
        axis %= a.ndim
        L = a.shape[axis]
        if L > MAX_SCAN:
            fail("device_error_limit", op=name,
                 problem=f"a scanned dim of {L:,} elements (one thread scans a row: at most {MAX_SCAN:,} on "
                         "WebGPU); move the tensor to the CPU")
        order = [d for d in range(a.ndim) if d != axis] + [axis]
        v = K.permute_kernel(a, order)
        out = RT.empty(v.shape, _I64)
        if out.st is not None and v.st is not None:
            rows = a.size // L
            RT.dispatch(_extreme_index_shader(K._st(a.dtype), largest), [out.st.buf, v.st.buf],
                        [rows, L, v.ndim, *v.shape, v.offset, *v.stride], K._grid(rows))
        return K.permute_kernel(out, [order.index(d) for d in range(a.ndim)])

    return kernel


def table() -> dict[str, Callable[..., Any]]:
    """The kernels of this module by primitive name, for :func:`.kernels.register`."""
    return {
        "cross": cross_kernel,
        "cdist": cdist_kernel,
        "diagonal_scatter": diagonal_scatter_kernel,
        "median_index": median_index_kernel,
        "mode_index": mode_index_kernel,
        "poisson": poisson_kernel,
        "cummax_index": _extreme_index(True),
        "cummin_index": _extreme_index(False),
    }
