"""WebGPU kernels of primitives built from the other kernels' dispatches and views: ``cross`` (three
elementwise dispatches, one per component), ``cdist`` (the pairwise differences broadcast, one reduction),
``diagonal_scatter`` (a copy, then an assignment through the diagonal view), the indices of
``cummax``/``cummin`` (the blocked scan of :mod:`.scans`), ``median_index`` (the stable
``argsort``, the NaN count, a gather), ``mode_index`` (tables of equalities, counted); ``poisson`` (the sampler of
:mod:`.poisson`); ``as_strided`` (a view over the root array's buffer); and, with a shader of its own,
``scatter_reduce`` (one thread per output element).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from . import chunks, poisson, scans
from . import codegen as G
from . import kernels as K
from .runtime import RT, WG, WArray, contiguous_strides, to_host

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


def _extreme_index(largest: bool) -> Callable[..., WArray]:
    def kernel(a: WArray, axis: int) -> WArray:
        return scans.extreme_index(a, axis, largest)

    return kernel


def as_strided_kernel(a: WArray, storage: WArray, size: tuple[int, ...], stride: tuple[int, ...], offset: int,
                      in_offset: int, in_stride: tuple[int, ...]) -> WArray:
    """A view: the given sizes and strides over the buffer of ``storage`` (the root array the op found), from
    ``offset`` elements into it; writes through it reach the input, as torch's."""
    return K._view(storage, size, stride, storage.offset + offset)


# -- scatter_reduce: one thread per output element reads the index along the dim ------------------------------
SCATTER_CHUNK = 16384  # index entries one thread reads per dispatch (lavapipe bounds a shader's loops)
_REDUCE_CODE = {"sum": 0, "prod": 1, "mean": 2, "amax": 3, "amin": 4}


@functools.cache
def _scatter_reduce_shader(st: str) -> str:
    """Output element ``o`` combines, in index order, every ``src[j]`` whose ``index[j]`` names it (j running
    along the dim at o's other coordinates): deterministic, and the same order as the CPU's ``ufunc.at``, with
    no float atomics (WGSL has none). ``cnt`` holds the number combined so far; the last pass turns a sum into a
    mean and puts the input back where nothing landed and the input was left out."""
    f = st == "f32"
    raw = {0: "0", 1: "1", 3: "-bitcast<f32>(0x7f800000u)" if f else "-2147483647 - 1",
           4: "bitcast<f32>(0x7f800000u)" if f else "2147483647"}
    ident = {r: f"{st}({v})" for r, v in raw.items()}
    nan = "(nan_f(x) || nan_f(y))" if f else "false"  # bitwise: a compiler may fold x != x
    mean = "acc / f32(c)" if f else "select(acc / c, acc / c - 1, (acc % c != 0) && ((acc < 0) != (c < 0)))"
    return f"""
@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<{st}>;
@group(0) @binding(2) var<storage, read_write> cnt: array<i32>;
@group(0) @binding(3) var<storage, read> a: array<{st}>;
@group(0) @binding(4) var<storage, read> idx: array<i32>;
@group(0) @binding(5) var<storage, read> src: array<{st}>;
{G.HELPERS}
fn combine(r: u32, x: {st}, y: {st}) -> {st} {{
  if (r == 0u || r == 2u) {{ return x + y; }}
  if (r == 1u) {{ return x * y; }}
  if ({nan}) {{ return x + y; }}
  if (r == 3u) {{ return max(x, y); }}
  return min(x, y);
}}

fn identity(r: u32) -> {st} {{
  switch r {{
    case 1u: {{ return {ident[1]}; }}
    case 3u: {{ return {ident[3]}; }}
    case 4u: {{ return {ident[4]}; }}
    default: {{ return {ident[0]}; }}
  }}
}}

// prm: [n_out, nd, axis, k0, k1, flags (1 first, 2 last, 4 include_self), reduce, a offset, idx offset,
//       src offset, out shape[nd], index shape[nd]]
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let o = gid.x + gid.y * nwg.x * {WG}u;
  if (o >= prm[0]) {{ return; }}
  let nd = prm[1];
  let axis = prm[2];
  let flags = prm[5];
  let r = prm[6];
  let inc = (flags & 4u) != 0u;
  var acc: {st};
  var c: i32;
  if ((flags & 1u) != 0u) {{
    if (inc) {{ acc = a[prm[7] + o]; c = 1; }} else {{ acc = identity(r); c = 0; }}
  }} else {{
    acc = out[o];
    c = cnt[o];
  }}
  // o's coordinates; the index's offset of the same coordinates with position 0 along the dim
  var rem = o;
  var base = 0u;
  var step = 1u;
  var istride = 1u;
  var inside = true;
  var p = 0;
  for (var d = i32(nd) - 1; d >= 0; d = d - 1) {{
    let n = prm[10u + u32(d)];
    let m = prm[10u + nd + u32(d)];
    let cd = rem % n;
    rem = rem / n;
    if (u32(d) == axis) {{ p = i32(cd); step = istride; }}
    else {{ if (cd >= m) {{ inside = false; }} base = base + cd * istride; }}
    istride = istride * m;
  }}
  if (inside) {{
    for (var k = prm[3]; k < prm[4]; k = k + 1u) {{
      let j = base + k * step;
      if (idx[prm[8] + j] == p) {{
        acc = combine(r, acc, src[prm[9] + j]);
        c = c + 1;
      }}
    }}
  }}
  if ((flags & 2u) != 0u) {{
    if (c == 0) {{ acc = a[prm[7] + o]; }}
    else if (r == 2u) {{ acc = {mean}; }}
  }}
  out[o] = acc;
  cnt[o] = c;
}}"""


def scatter_reduce_kernel(a: WArray, index: WArray, src: WArray, axis: int, reduce: str,
                          include_self: bool) -> WArray:
    st = K._st(a.dtype) if a.dtype != np.dtype(bool) else "u32"
    if st not in ("f32", "i32") or a.ndim == 0:  # float16 and bool: the CPU kernel on the host (rare)
        return K._host(K.PRIM_CPU["scatter_reduce"], a, index, src, axis=axis, reduce=reduce,
                       include_self=include_self)
    out = RT.empty(a.shape, a.dtype)
    if out.st is None:
        return out
    a, index, src = (x if x.contiguous else K.contiguous_copy(x) for x in (a, index, src))
    L = index.shape[axis] if index.ndim else 0
    if index.size == 0 or src.st is None or index.st is None:
        L = 0
    if L and any(chunks.large(x) for x in (a, out, index, src)):
        return _scatter_reduce_pieces(out, a, index, src, axis, reduce, include_self)
    # index entries in runs (lavapipe bounds a shader's loops), the running results carried in ``out`` and ``cnt``
    runs = [(index, src, k0, min(L, k0 + SCATTER_CHUNK)) for k0 in range(0, L, SCATTER_CHUNK)]
    _scatter_reduce_runs(st, out, a, runs, axis, reduce, include_self)
    return out


def _scatter_reduce_runs(st: str, out: WArray, a: WArray, runs: list[tuple[WArray, WArray, int, int]], axis: int,
                         reduce: str, include_self: bool) -> None:
    """One dispatch per run ``(index, src, k0, k1)``: the entries ``k0 <= k < k1`` along the dim of a contiguous
    ``index`` and ``src`` of one shape (no run: ``out`` is ``a``, whatever ``include_self``)."""
    cnt = RT.empty(a.shape, np.dtype(np.int32))
    assert a.st is not None and cnt.st is not None and out.st is not None
    shader = _scatter_reduce_shader(st)
    for i, (index, src, k0, k1) in enumerate(runs or [(a, a, 0, 0)]):
        flags = int(i == 0) | 2 * int(i == max(len(runs), 1) - 1) | 4 * int(include_self)
        meta = [a.size, a.ndim, axis, k0, k1, flags, _REDUCE_CODE[reduce], a.offset, index.offset, src.offset,
                *a.shape, *index.shape]
        bufs = [out.st.buf, cnt.st.buf, a.st.buf, (index.st or a.st).buf, (src.st or a.st).buf]
        RT.dispatch(shader, bufs, meta, K._grid(a.size))


def _scatter_reduce_index_runs(st: str, out: WArray, a: WArray, index: WArray, src: WArray, reduce: str,
                               include_self: bool) -> None:
    """scatter_reduce along dim 0 into ``out`` (bound whole, written from its start) from ``a`` (one binding's
    worth), the index and src in runs of rows bound as windows, the results carried from run to run."""
    step = min(chunks.rows(index, 0), chunks.rows(src, 0))
    runs = []
    for s in range(0, index.shape[0], step):
        e = min(s + step, index.shape[0])
        ip, sp = (chunks.windowed(chunks.narrow(x, 0, s, e)) for x in (index, src))
        runs += [(ip, sp, k0, min(e - s, k0 + SCATTER_CHUNK)) for k0 in range(0, e - s, SCATTER_CHUNK)]
    _scatter_reduce_runs(st, out, a, runs, 0, reduce, include_self)


def _scatter_reduce_pieces(out: WArray, a: WArray, index: WArray, src: WArray, axis: int, reduce: str,
                           include_self: bool) -> WArray:
    """scatter_reduce with a tensor larger than one binding (every operand contiguous; ``src`` of the index's
    shape). Along the dim, any input element may land in any output element: with ``axis`` 0 the index and src go
    in runs of rows bound as windows (contiguous pieces), their results carried from run to run, into the whole
    output, or, when the input is larger than a binding, into each piece of the output's rows in turn; otherwise
    the tensors go in pieces of dim 0, each reduced on its own (the index and src clipped to their own extent)
    into a temporary and copied into place."""
    st = K._st(a.dtype)
    if axis == 0:
        if chunks.fits(a):
            _scatter_reduce_index_runs(st, out, chunks.windowed(a), index, src, reduce, include_self)
            return out
        # the output in pieces of rows [s, e), each a temporary reduced from every run of the index shifted by -s
        # (the kernel matches an index entry to its output row's position in the piece; an entry of another piece
        # matches no row of this one), then copied into place
        step = max(1, min(chunks.rows(a, 0), chunks.rows(out, 0)))
        for s in range(0, a.shape[0], step):
            e = min(s + step, a.shape[0])
            piece = RT.empty((e - s, *a.shape[1:]), a.dtype)
            shifted = K.elementwise("a - b", index.dtype, [("a", index, index.dtype), ("b", s, index.dtype)],
                                    index.shape) if s else index
            _scatter_reduce_index_runs(st, piece, chunks.windowed(chunks.narrow(a, 0, s, e)), shifted, src, reduce,
                                       include_self)
            K.assign(chunks.narrow(out, 0, s, e), piece)
        return out
    step = min(chunks.rows(x, 0) for x in (a, out, index, src))
    for s in range(0, a.shape[0], step):
        e = min(s + step, a.shape[0])
        ap = chunks.windowed(chunks.narrow(a, 0, s, e))
        ie = min(e, index.shape[0])
        if ie > s:
            ip, sp = (chunks.windowed(chunks.narrow(x, 0, s, ie)) for x in (index, src))
            part = scatter_reduce_kernel(ap, ip, sp, axis, reduce, include_self)
        else:  # no index reaches these rows: the input
            part = ap
        K.assign(chunks.narrow(out, 0, s, e), part)
    return out


# -- unique: sorted, marked, counted on the device ----------------------------------------------------------
def unique(a: WArray, consecutive: bool) -> tuple[WArray, WArray, WArray]:
    """(values, inverse, counts) of the flattened ``a``: the stable ``argsort`` (NaN last; skipped for
    ``unique_consecutive``), a mark where a value differs from the one before it (NaNs all differ, as torch's),
    the marks' running sum as each element's group, then a scatter of the values, the groups and ones. The
    number of groups sizes the results: it is read back, the one sync (torch's unique syncs there too)."""
    n = a.size  # any length: the merge sort and the blocked scan keep their shader loops short
    flat = K.reshape_kernel(a if a.contiguous else K.contiguous_copy(a), (n,))
    if n == 0:
        return RT.empty((0,), a.dtype), RT.empty(a.shape, _I64), RT.empty((0,), _I64)
    order = None if consecutive else K.argsort_kernel(flat, 0, False)
    s = flat if order is None else K.gather_kernel(flat, order, 0)
    new = K.full((n,), 1, _I64)
    if n > 1:
        ops = [("a", K._view(s, (n - 1,), (1,), s.offset + 1), a.dtype), ("b", K._view(s, (n - 1,), (1,), s.offset),
                                                                          a.dtype)]
        # NaN by its bits (a compiler may fold a comparison with NaN)
        differ = "a != b || nan_f(a) || nan_f(b)" if K._kind(a.dtype) == "f" else "a != b"
        K.elementwise(f"select(0, 1, {differ})", _I64, ops, (n - 1,), out=K._view(new, (n - 1,), (1,), new.offset + 1))
    group = K.elementwise("a - 1", _I64, [("a", K.scan("cumsum")(new, 0), _I64)], (n,))
    count = int(np.asarray(to_host(K._view(group, (1,), (1,), group.offset + n - 1)))[0]) + 1
    values = K.scatter_kernel(RT.empty((count,), a.dtype), group, s, 0)
    inverse = group if order is None else K.scatter_kernel(K.full((n,), 0, _I64), order, group, 0)
    counts = K.scatter_add_kernel(K.full((count,), 0, _I64), group, K.full((n,), 1, _I64), 0)
    return values, K.reshape_kernel(inverse, a.shape), counts


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
        "scatter_reduce": scatter_reduce_kernel,
        "as_strided": as_strided_kernel,
        "unique": lambda a, value, dim, consecutive: value,  # computed by unique() before the primitive runs
    }
