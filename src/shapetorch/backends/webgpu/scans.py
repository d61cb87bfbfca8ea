"""``cumsum``, ``cumprod`` and ``logcumsumexp`` on the device: a blocked scan whose shader loops stay short.

One thread per row would loop over the whole row (lavapipe miscomputes a loop past 65,535 iterations, and a long
row would run on one thread), so a row is cut into blocks of at most :data:`BLOCK` elements:

1. one thread per block scans it (the output, and the block's total into ``sums``, shape ``(rows, blocks)``);
2. ``sums`` is scanned the same way (recursively: a row of more than ``BLOCK`` blocks is blocked again);
3. one thread per element of every block but a row's first combines the scanned total of the blocks before it
   with its own value.

A row of at most ``BLOCK`` elements is one dispatch, as before. A float16 scan of several blocks keeps its partial
results in float32 and rounds once at the end (as the one-thread scan, which accumulates in float32).

Sizes past one binding (the adapter's max-storage-buffer-binding-size): the blocks are numbered in row-major order,
so a run of blocks is a contiguous run of the (contiguous) output; each dispatch takes as many blocks as its
windows of the input, output and ``sums`` can bind (a large input view that is not contiguous is copied first).
Even a single row larger than a binding is scanned this way.

The indices of ``cummax``/``cummin`` (:func:`extreme_index`) are the same blocked scan with a carry of (value,
index): ``take(v, best) = isnan(v) || (!isnan(best) && v >= best)`` (``<=`` for cummin: a later equal value takes
over; once a NaN is the best only a later NaN does), torch's rule, which folds blocks associatively. A block
writes each element's row-local index and its (value, index) total; the totals' own index scan (recursive) names,
for every block, the best block up to it; the totals of those are gathered; and an element of a later block keeps
its own index unless the carried value takes over from its own (its value is read back from the input at its
index, which lies in its own block).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from . import chunks
from . import codegen as G
from .runtime import RT, WG, WArray

BLOCK = 1024  # elements one thread scans (its loop's bound)
_F32 = np.dtype(np.float32)
_I64 = np.dtype(np.int64)  # an index: int32 on the device


def _ct(st: str) -> str:
    return "f32" if st in ("f16", "f32") else G.WGSL_CT[st[0]]


@functools.cache
def block_shader(op: str, ist: str, ost: str) -> str:
    """meta: [blocks, first block, L, B, blocks per row, out base, sums base, nd, shape[nd], off, strides[nd]] (the
    input's view, whose last dim is scanned); element e of the contiguous output is at ``out base + e``, block g's
    total at ``sums base + g`` (u32 arithmetic wrapping)."""
    ct = _ct(ist)
    return f"""{G._enable((ist, ost))}
@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<{ost}>;
@group(0) @binding(2) var<storage, read_write> sums: array<{ost}>;
@group(0) @binding(3) var<storage, read> inp: array<{ist}>;
{G.HELPERS}
{G._strided_off(7)}
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let t = gid.x + gid.y * nwg.x * {WG}u;
  if (t >= prm[0]) {{ return; }}
  let g = prm[1] + t;
  let L = prm[2];
  let nb = prm[4];
  let rs = (g / nb) * L;
  let j0 = (g % nb) * prm[3];
  let j1 = min(j0 + prm[3], L);
  var acc: {ct} = {G.load_expr(ist, "inp[off(rs + j0)]")};
  out[prm[5] + rs + j0] = {G.store_expr(ost, "acc")};
  for (var j = j0 + 1u; j < j1; j = j + 1u) {{
    let v: {ct} = {G.load_expr(ist, "inp[off(rs + j)]")};
    acc = {G.SCAN[op]};
    out[prm[5] + rs + j] = {G.store_expr(ost, "acc")};
  }}
  sums[prm[6] + g] = {G.store_expr(ost, "acc")};
}}"""


@functools.cache
def carry_shader(op: str, ost: str) -> str:
    """meta: [elements, first element, L, B, blocks per row, out base, prefix base]: element e of a block other
    than its row's first combines the scanned total of the blocks before it (``prefix``, inclusive) with its own."""
    ct = _ct(ost)
    return f"""{G._enable((ost,))}
@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<{ost}>;
@group(0) @binding(2) var<storage, read> pref: array<{ost}>;
{G.HELPERS}
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let t = gid.x + gid.y * nwg.x * {WG}u;
  if (t >= prm[0]) {{ return; }}
  let e = prm[1] + t;
  let L = prm[2];
  let b = (e % L) / prm[3];
  if (b == 0u) {{ return; }}
  let acc: {ct} = {G.load_expr(ost, "pref[prm[6] + (e / L) * prm[4] + b - 1u]")};
  let v: {ct} = {G.load_expr(ost, "out[prm[5] + e]")};
  out[prm[5] + e] = {G.store_expr(ost, G.SCAN[op])};
}}"""


def scan_rows(op: str, v: WArray) -> WArray:
    """The inclusive scan ``op`` along the last dim of the view ``v`` (not empty), as a contiguous array."""
    from . import kernels as K

    L = v.shape[-1]
    n = v.size
    rows = n // L
    if chunks.large(v) and not v.contiguous:
        v = K.contiguous_copy(v)
    flat = chunks.large(v)  # bound by windows (then contiguous)
    ist = K._st(v.dtype)
    B = max(1, min(BLOCK, chunks.flat_budget(4) // 2))
    nb = -(-L // B)
    work = _F32 if nb > 1 and ist == "f16" else v.dtype
    ost = K._st(work)
    out, sums = RT.empty(v.shape, work), RT.empty((rows, nb), work)
    assert v.st is not None and out.st is not None and sums.st is not None
    isz, osz = chunks.item(v), chunks.item(out)

    def first(t: int) -> int:  # the first element of block t
        return (t // nb) * L + (t % nb) * B if t < rows * nb else n

    per = max(1, min(chunks.flat_budget(isz), chunks.flat_budget(osz)) // B)  # blocks per dispatch
    for t0 in range(0, rows * nb, per):
        t1 = min(rows * nb, t0 + per)
        e0, e1 = first(t0), first(t1)
        ob, o0 = chunks.flat_window(out.st, osz, e0, e1)
        sb, s0 = chunks.flat_window(sums.st, osz, t0, t1)
        if flat:
            ib, i0 = chunks.flat_window(v.st, isz, v.offset + e0, v.offset + e1)
            view = [1, n, v.offset - i0, 1]
        else:
            ib, view = v.st.buf, [v.ndim, *v.shape, v.offset, *v.stride]
        RT.dispatch(block_shader(op, ist, ost), [ob, sb, ib], [t1 - t0, t0, L, B, nb, -o0, -s0, *view],
                    K._grid(t1 - t0))
    if nb > 1:
        pref = scan_rows(op, sums)
        assert pref.st is not None
        step = chunks.flat_budget(osz) // 2
        for e0 in range(0, n, step):
            e1 = min(n, e0 + step)
            ob, o0 = chunks.flat_window(out.st, osz, e0, e1)
            lo = (e0 // L) * nb + (e0 % L) // B
            hi = ((e1 - 1) // L) * nb + ((e1 - 1) % L) // B + 1
            pb, p0 = chunks.flat_window(pref.st, osz, max(lo - 1, 0), hi)
            RT.dispatch(carry_shader(op, ost), [ob, pb], [e1 - e0, e0, L, B, nb, -o0, -p0], K._grid(e1 - e0))
    return out if work == v.dtype else K.cast(out, v.dtype)


def _take(ct: str, largest: bool) -> str:
    """WGSL: whether ``v`` (later) takes over from ``best`` (earlier), torch's rule."""
    cmp = ">=" if largest else "<="
    return f"nan_f(v) || (!nan_f(best) && v {cmp} best)" if ct == "f32" else f"v {cmp} best"


@functools.cache
def extreme_block_shader(st: str, largest: bool) -> str:
    """meta: [blocks, first block, L, B, blocks per row, out base, value base, index base, nd, shape[nd], off,
    strides[nd]]: each block's running-extreme indices (row-local) into ``out``, its (value, index) total into
    ``sval``/``sidx``."""
    ct = _ct(st)
    return f"""{G._enable((st,))}
@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<i32>;
@group(0) @binding(2) var<storage, read_write> sval: array<{st}>;
@group(0) @binding(3) var<storage, read_write> sidx: array<i32>;
@group(0) @binding(4) var<storage, read> inp: array<{st}>;
{G.HELPERS}
{G._strided_off(8)}
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let t = gid.x + gid.y * nwg.x * {WG}u;
  if (t >= prm[0]) {{ return; }}
  let g = prm[1] + t;
  let L = prm[2];
  let nb = prm[4];
  let rs = (g / nb) * L;
  let j0 = (g % nb) * prm[3];
  let j1 = min(j0 + prm[3], L);
  var best: {ct} = {G.load_expr(st, "inp[off(rs + j0)]")};
  var at = i32(j0);
  out[prm[5] + rs + j0] = at;
  for (var j = j0 + 1u; j < j1; j = j + 1u) {{
    let v: {ct} = {G.load_expr(st, "inp[off(rs + j)]")};
    if ({_take(ct, largest)}) {{ best = v; at = i32(j); }}
    out[prm[5] + rs + j] = at;
  }}
  sval[prm[6] + g] = {G.store_expr(st, "best")};
  sidx[prm[7] + g] = at;
}}"""


@functools.cache
def extreme_carry_shader(st: str, largest: bool) -> str:
    """meta: [elements, first element, L, B, blocks per row, out base, value base, index base, nd, shape[nd], off,
    strides[nd]]: element e of a block other than its row's first takes the carried index (the best of the blocks
    before it: ``pval``/``pidx``) unless its own running extreme (its index in ``out``, its value read back from
    the input) takes over from the carried value."""
    ct = _ct(st)
    return f"""{G._enable((st,))}
@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<i32>;
@group(0) @binding(2) var<storage, read> pval: array<{st}>;
@group(0) @binding(3) var<storage, read> pidx: array<i32>;
@group(0) @binding(4) var<storage, read> inp: array<{st}>;
{G.HELPERS}
{G._strided_off(8)}
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let t = gid.x + gid.y * nwg.x * {WG}u;
  if (t >= prm[0]) {{ return; }}
  let e = prm[1] + t;
  let L = prm[2];
  let b = (e % L) / prm[3];
  if (b == 0u) {{ return; }}
  let p = (e / L) * prm[4] + b - 1u;
  let best: {ct} = {G.load_expr(st, "pval[prm[6] + p]")};
  let own = out[prm[5] + e];
  let v: {ct} = {G.load_expr(st, "inp[off((e / L) * L + u32(own))]")};
  if (!({_take(ct, largest)})) {{ out[prm[5] + e] = pidx[prm[7] + p]; }}
}}"""


def extreme_index_rows(v: WArray, largest: bool) -> WArray:
    """The index (int64, row-local) of the running max (min) along the last dim of the view ``v`` (not empty), as
    a contiguous array."""
    from . import kernels as K

    L = v.shape[-1]
    n = v.size
    rows = n // L
    if chunks.large(v) and not v.contiguous:
        v = K.contiguous_copy(v)
    flat = chunks.large(v)
    st = K._st(v.dtype)
    B = max(1, min(BLOCK, chunks.flat_budget(4) // 2))
    nb = -(-L // B)
    out, sval, sidx = RT.empty(v.shape, _I64), RT.empty((rows, nb), v.dtype), RT.empty((rows, nb), _I64)
    assert v.st is not None and out.st is not None and sval.st is not None and sidx.st is not None
    isz = chunks.item(v)

    def first(t: int) -> int:  # the first element of block t
        return (t // nb) * L + (t % nb) * B if t < rows * nb else n

    def view(lo: int, hi: int) -> tuple[Any, list[int]]:  # the input's binding reaching elements [lo, hi)
        assert v.st is not None
        if flat:
            ib, i0 = chunks.flat_window(v.st, isz, v.offset + lo, v.offset + hi)
            return ib, [1, n, v.offset - i0, 1]
        return v.st.buf, [v.ndim, *v.shape, v.offset, *v.stride]

    per = max(1, min(chunks.flat_budget(isz), chunks.flat_budget(4)) // B)  # blocks per dispatch
    for t0 in range(0, rows * nb, per):
        t1 = min(rows * nb, t0 + per)
        e0, e1 = first(t0), first(t1)
        ob, o0 = chunks.flat_window(out.st, 4, e0, e1)
        vb, v0 = chunks.flat_window(sval.st, isz, t0, t1)
        xb, x0 = chunks.flat_window(sidx.st, 4, t0, t1)
        ib, iv = view(e0, e1)
        RT.dispatch(extreme_block_shader(st, largest), [ob, vb, xb, ib],
                    [t1 - t0, t0, L, B, nb, -o0, -v0, -x0, *iv], K._grid(t1 - t0))
    if nb == 1:
        return out
    best = extreme_index_rows(sval, largest)  # per block, the best block up to it
    pval, pidx = K.gather_kernel(sval, best, 1), K.gather_kernel(sidx, best, 1)
    assert pval.st is not None and pidx.st is not None
    step = max(1, min(chunks.flat_budget(isz), chunks.flat_budget(4)) // 2)
    for e0 in range(0, n, step):
        e1 = min(n, e0 + step)
        ob, o0 = chunks.flat_window(out.st, 4, e0, e1)
        lo = (e0 // L) * nb + (e0 % L) // B
        hi = ((e1 - 1) // L) * nb + ((e1 - 1) % L) // B + 1
        vb, v0 = chunks.flat_window(pval.st, isz, max(lo - 1, 0), hi)
        xb, x0 = chunks.flat_window(pidx.st, 4, max(lo - 1, 0), hi)
        ib, iv = view(first(lo), e1)  # an element's own index lies in its block, from the block's start
        RT.dispatch(extreme_carry_shader(st, largest), [ob, vb, xb, ib],
                    [e1 - e0, e0, L, B, nb, -o0, -v0, -x0, *iv], K._grid(e1 - e0))
    return out


def extreme_index(a: WArray, axis: int, largest: bool) -> WArray:
    """``cummax``/``cummin``'s indices along ``axis``."""
    from . import kernels as K

    if a.ndim == 0:
        return K.full((), 0, _I64)
    axis %= a.ndim
    order = [d for d in range(a.ndim) if d != axis] + [axis]
    v = K.permute_kernel(a, order)
    if v.st is None:
        return K.permute_kernel(RT.empty(v.shape, _I64), [order.index(d) for d in range(a.ndim)])
    return K.permute_kernel(extreme_index_rows(v, largest), [order.index(d) for d in range(a.ndim)])


def scan(op: str, a: WArray, axis: int) -> WArray:
    from . import kernels as K

    if a.ndim == 0:
        return K.contiguous_copy(a)
    axis %= a.ndim
    order = [d for d in range(a.ndim) if d != axis] + [axis]
    back = [order.index(d) for d in range(a.ndim)]
    v = K.permute_kernel(a, order)
    if v.st is None:
        return K.permute_kernel(RT.empty(v.shape, a.dtype), back)
    out: Any = scan_rows(op, v)
    return K.permute_kernel(out, back)
