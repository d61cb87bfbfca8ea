"""``argsort`` on the device: a stable merge sort of every row, in passes whose loops stay short.

A shader loop is bounded (lavapipe miscomputes a loop past 65,535 iterations), and one thread per row or a rank
count over a whole row is O(L) or O(L²) per row, so a long row is sorted in passes:

1. **Tiles**: the row is cut into tiles of :data:`TILE` elements; one thread per element counts the elements of
   its tile that come before it (its rank) and writes its key and position there. A row of at most ``TILE``
   elements is sorted by this one dispatch.
2. **Merges**: runs of width ``w`` (``TILE``, then doubling) are merged in pairs; one thread per element finds,
   by a binary search in the other run of its pair (at most 32 steps), how many of that run's elements come
   before it, which with its own position gives its place. ``ceil(log2(L / TILE))`` passes, ping-ponging
   between two pairs of buffers.

Order: NaN is the largest value (as torch); equal keys keep their positions' order (stable), in both directions.
Sizes past one binding (the adapter's max-storage-buffer-binding-size): the tile pass runs in chunks of whole
rows over windows of the strided input (:func:`.chunks.chunked`), the merges over windows of the contiguous keys
and positions by runs of whole rows; one row larger than a binding is a ``device_error_limit`` naming the op.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..._errors import fail
from . import chunks
from . import codegen as G
from .runtime import RT, WG, WArray, size_text

# Elements a tile thread counts over (its loop's bound; a row this long is one dispatch). Small: the rank count is
# O(TILE) per element and a merge pass O(log) per element, so on lavapipe a (512, 1000) argsort took 24 s with
# TILE = 1024 (one rank-count dispatch, the former kernel) and 0.9 s with 32 (a tile pass and 5 merges).
TILE = 32
_I32 = np.dtype(np.int32)
_I64 = np.dtype(np.int64)


def _order(st: str, descending: bool) -> str:
    """WGSL ``before(x, y)``: x comes strictly before y in the sort (NaN the largest)."""
    ct = "f32" if st in ("f16", "f32") else G.WGSL_CT[st[0]]
    lt = "(!nan_f(x) && nan_f(y)) || x < y" if ct == "f32" else "x < y"
    args = "y, x" if descending else "x, y"
    return f"""fn nan_f(a: f32) -> bool {{ return (bitcast<u32>(a) & 0x7fffffffu) > 0x7f800000u; }}
fn lt(x: {ct}, y: {ct}) -> bool {{ return {lt}; }}
fn before(x: {ct}, y: {ct}) -> bool {{ return lt({args}); }}"""


@functools.cache
def tile_shader(st: str, descending: bool) -> str:
    """meta: [n, L, T, keys base, positions base, nd, shape[nd], off, strides[nd]] (the input's view, whose last
    dim is sorted; the outputs are contiguous, element e at ``base + e``, u32 arithmetic wrapping)."""
    return f"""{G._enable((st,))}
@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> okey: array<{st}>;
@group(0) @binding(2) var<storage, read_write> opos: array<i32>;
@group(0) @binding(3) var<storage, read> inp: array<{st}>;
{_order(st, descending)}
{G._strided_off(5)}
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let e = gid.x + gid.y * nwg.x * {WG}u;
  if (e >= prm[0]) {{ return; }}
  let L = prm[1];
  let T = prm[2];
  let rs = (e / L) * L;
  let i = e % L;
  let t0 = (i / T) * T;
  let t1 = min(t0 + T, L);
  let raw = inp[off(e)];
  let vi = {G.load_expr(st, "raw")};
  var rank = 0u;
  for (var j = t0; j < t1; j = j + 1u) {{
    let vj = {G.load_expr(st, "inp[off(rs + j)]")};
    if (before(vj, vi) || (j < i && !before(vi, vj))) {{ rank = rank + 1u; }}
  }}
  okey[prm[3] + rs + t0 + rank] = raw;
  opos[prm[4] + rs + t0 + rank] = i32(i);
}}"""


@functools.cache
def merge_shader(st: str, descending: bool) -> str:
    """meta: [n, L, w, out keys base, out positions base, keys base, positions base]: element e of a chunk of
    whole rows is at ``base + e`` in each buffer (u32 arithmetic wrapping)."""
    load = G.load_expr(st, "ikey[kb + rs + m]")
    return f"""{G._enable((st,))}
@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> okey: array<{st}>;
@group(0) @binding(2) var<storage, read_write> opos: array<i32>;
@group(0) @binding(3) var<storage, read> ikey: array<{st}>;
@group(0) @binding(4) var<storage, read> ipos: array<i32>;
{_order(st, descending)}
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let e = gid.x + gid.y * nwg.x * {WG}u;
  if (e >= prm[0]) {{ return; }}
  let L = prm[1];
  let w = prm[2];
  let kb = prm[5];
  let rs = (e / L) * L;
  let i = e % L;
  let base = (i / (2u * w)) * (2u * w);
  let raw = ikey[kb + rs + i];
  let key = {G.load_expr(st, "raw")};
  var pos = 0u;
  if (i < base + w) {{
    // left run: the right run's elements strictly before it go first
    let s = min(base + w, L);
    var lo = s;
    var hi = min(base + 2u * w, L);
    loop {{
      if (lo >= hi) {{ break; }}
      let m = (lo + hi) / 2u;
      if (before({load}, key)) {{ lo = m + 1u; }} else {{ hi = m; }}
    }}
    pos = i + (lo - s);
  }} else {{
    // right run: the left run's elements not after it go first (equal keys keep their order)
    var lo = base;
    var hi = base + w;
    loop {{
      if (lo >= hi) {{ break; }}
      let m = (lo + hi) / 2u;
      if (!before(key, {load})) {{ lo = m + 1u; }} else {{ hi = m; }}
    }}
    pos = i - w + (lo - base);
  }}
  okey[prm[3] + rs + pos] = raw;
  opos[prm[4] + rs + pos] = ipos[prm[6] + rs + i];
}}"""


def _row_too_long(L: int, itemsize: int) -> None:
    fail("device_error_limit", op=RT.op,
         problem=f"a sorted row of {L:,} elements ({size_text(L * itemsize)}) is more than this WebGPU adapter "
                 f"can bind to a kernel ({size_text(RT.max_binding)}, its max-storage-buffer-binding-size); "
                 "sort it on 'cpu'")


def argsort(a: WArray, axis: int, descending: bool) -> WArray:
    from . import kernels as K

    if a.ndim == 0:
        return K.full((), 0, _I64)
    axis %= a.ndim
    order = [d for d in range(a.ndim) if d != axis] + [axis]
    back = [order.index(d) for d in range(a.ndim)]
    v = K.permute_kernel(a, order)
    pos = RT.empty(v.shape, _I64)
    if pos.st is None or v.st is None:
        return K.permute_kernel(pos, back)
    if chunks.large(v) and v.stride[-1] != 1:  # a strided row may span more than a binding: sort a copy
        v = K.contiguous_copy(v)
    st = K._st(a.dtype)
    size = chunks.item(v)
    L = v.shape[-1]
    if L * max(size, 4) > RT.max_binding - RT.align:
        _row_too_long(L, max(size, 4))
    keys = RT.empty(v.shape, a.dtype)
    T = min(L, TILE)

    def tile(shape: tuple[int, ...], views: list[WArray]) -> None:
        src, k, p = views
        assert src.st is not None and k.st is not None and p.st is not None
        n = int(np.prod(shape))
        RT.dispatch(tile_shader(st, descending), [k.st.buf, p.st.buf, src.st.buf],
                    [n, L, T, k.offset, p.offset, src.ndim, *src.shape, src.offset, *src.stride], K._grid(n))

    chunks.chunked(v.shape, [v, keys, pos], tile)
    if T == L:
        return K.permute_kernel(pos, back)
    rows = v.size // L
    per = max(1, min(chunks.flat_budget(size), chunks.flat_budget(4)) // L)  # rows per chunk
    keys2, pos2 = RT.empty(v.shape, a.dtype), RT.empty(v.shape, _I64)
    w = T
    while w < L:
        for r0 in range(0, rows, per):
            r1 = min(rows, r0 + per)
            e0, e1 = r0 * L, r1 * L
            bufs: list[Any] = []
            meta = [e1 - e0, L, w]
            for arr, sz in ((keys2, size), (pos2, 4), (keys, size), (pos, 4)):
                buf, start = chunks.flat_window(arr.st, sz, e0, e1)
                bufs.append(buf)
                meta.append(e0 - start)
            RT.dispatch(merge_shader(st, descending), bufs, meta, K._grid(e1 - e0))
        keys, keys2, pos, pos2 = keys2, keys, pos2, pos
        w *= 2
    return K.permute_kernel(pos, back)
