"""WebGPU kernels of the fused attention primitives (``scaled_dot_product_attention`` and its gradient,
``attention_backward``): one dispatch for the forward, two for the gradient (when every key fits one block, below),
instead of the composite's batched products, scale, causal mask, softmax and their gradients.

Every kernel gives one workgroup of :data:`AWG` threads to one row (a query row for the forward and for the
query gradient, a key row for the key and value gradients). The threads take the other side's rows in chunks of
``AWG``: each computes one score (a dot product read straight from the strided q/k/v views: the attention's
``transpose``/``split`` views are not copied), the chunk's weights go through workgroup memory, and each thread
then accumulates its own output columns (``ACC`` of them per pass; wider rows take several passes). Within a block
of the other side's rows, the softmax's maximum and sum are found before the weighted sum; a long key sequence is
taken in several blocks, one dispatch each (lavapipe miscomputes an invocation's loops past 65,535 iterations in
all: :func:`block`), each row's running maximum and sum carried between them and its partial result rescaled.
A row whose scores are all masked has weights 0 (so its output is 0), as torch's attention gives.

Meta (u32 words): ``[B, L, S, D, Dv, scale (f32 bits), flags, nbd, lo, hi, i0, j0, batch shape (nbd)]`` then, per
strided operand (q, k, v, mask, g, then the results: out, or dq, dk, dv), ``[offset, batch strides (nbd), row
stride, column stride]``. Flags: 1 causal (``j <= i0 + i``), 2 a bool mask, 4 a float mask (added to the scores),
8 the first block, 16 the last; ``[lo, hi)`` is the block of the other side's rows; ``i0`` the first query row of
a piece of the query rows, ``j0`` the first key of a block of keys bound as a window (the forward's keys and values
larger than a binding).

Results take the memory order of their operand (the output q's, each gradient its input's), as torch's fused
attention does: the usual ``q.transpose(1, 2)`` of a (batch, length, heads, dim) projection gives an output whose
``transpose(1, 2).reshape(batch, length, heads * dim)`` is a view, not a copy, and gradients that need no copy on
their way back through those views.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..._errors import fail
from . import chunks
from .codegen import _INF, workgroup_reductions
from .runtime import RT, WArray, f32_bits

AWG = 64  # threads per row
ACC = 4  # output columns per thread per pass

_COMMON = """@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<storage, read> qb: array<f32>;
@group(0) @binding(3) var<storage, read> kb: array<f32>;
@group(0) @binding(4) var<storage, read> vb: array<f32>;
{extra}
var<workgroup> red: array<f32, {wg}>;
var<workgroup> sp: array<f32, {wg}>;
var<workgroup> sd: array<f32, {wg}>;
var<private> bq: u32;
var<private> bk: u32;
var<private> bv: u32;
var<private> bm: u32;
var<private> bg: u32;
fn meta_at(t: u32) -> u32 {{ return {hdr}u + prm[7] + t * (prm[7] + 3u); }}
fn base(t: u32, b: u32) -> u32 {{
  let nbd = prm[7];
  let m = meta_at(t);
  var off = prm[m];
  var r = b;
  for (var d = nbd; d > 0u; d = d - 1u) {{
    let n = prm[{hdr1}u + d];
    off = off + (r % n) * prm[m + d];
    r = r / n;
  }}
  return off;
}}
fn rs(t: u32) -> u32 {{ return prm[meta_at(t) + prm[7] + 1u]; }}
fn cs(t: u32) -> u32 {{ return prm[meta_at(t) + prm[7] + 2u]; }}
fn qv(i: u32, d: u32) -> f32 {{ return qb[bq + i * rs(0u) + d * cs(0u)]; }}
fn kv(j: u32, d: u32) -> f32 {{ return kb[bk + j * rs(1u) + d * cs(1u)]; }}
fn vv(j: u32, d: u32) -> f32 {{ return vb[bv + j * rs(2u) + d * cs(2u)]; }}
{reductions}
// the scaled, masked score of query row i (of this piece; prm[10] is the piece's first row, for the causal
// test) and key row j (of this block of keys bound as a window; prm[11] is the block's first key) (-inf where
// masked)
fn score(i: u32, j: u32) -> f32 {{
  let flags = prm[6];
  if ((flags & 1u) != 0u && j + prm[11] > i + prm[10]) {{ return -{inf}; }}
  var s = 0.0;
  for (var d = 0u; d < prm[3]; d = d + 1u) {{ s = s + qv(i, d) * kv(j, d); }}
  s = s * bitcast<f32>(prm[5]);{mask}
  return s;
}}
"""
HEADER = 12  # meta words before the batch shape: B, L, S, D, Dv, scale, flags, nbd, lo, hi, i0, j0

_MASK = {
    "": "",
    "bool": f"""
  if (mb[bm + i * rs(3u) + j * cs(3u)] == 0u) {{ return -{_INF}; }}""",
    "float": """
  s = s + mb[bm + i * rs(3u) + j * cs(3u)];""",
}


def _head(mask: str, extra: list[str]) -> str:
    decl = list(extra)
    if mask:
        decl.append(f"@group(0) @binding({5 + len(extra)}) var<storage, read> mb: array<{'u32' if mask == 'bool' else 'f32'}>;")
    return _COMMON.format(extra="\n".join(decl), wg=AWG, reductions=workgroup_reductions(AWG), inf=_INF,
                          mask=_MASK[mask], hdr=HEADER, hdr1=HEADER - 1)


_ROW = f"""@compute @workgroup_size({AWG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lv: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {{
  let r = wid.x + wid.y * nwg.x;
  let rows = prm[0] * ROWS;
  if (r >= rows) {{ return; }}
  let lid = lv.x;
  let L = prm[1];
  let S = prm[2];
  let D = prm[3];
  let Dv = prm[4];
  let lo = prm[8];
  let hi = prm[9];
  let first = (prm[6] & 8u) != 0u;
  let last = (prm[6] & 16u) != 0u;
  let b = r / ROWS;
  let row = r % ROWS;
  bq = base(0u, b);
  bk = base(1u, b);
  bv = base(2u, b);
  bm = base(3u, b);
  bg = base(4u, b);
BODY
}}"""


def _main(rows: str, body: str) -> str:
    """The entry point over the rows (``rows``: prm[1] for the query rows, prm[2] for the key rows) running ``body``."""
    return _ROW.replace("ROWS", rows).replace("BODY", body)


# The other side's rows a dispatch takes are the block [lo, hi) (all of them unless a row's loops would pass
# lavapipe's loop bound: see :func:`block`). Flags 8 (the first block) and 16 (the last) say whether a row starts
# from nothing and whether it finishes; between blocks each row keeps its running state in ``stat`` (the softmax's
# running maximum, raw, and the sum of exp(score - maximum)) and its partial sums in its output, rescaled to the
# new maximum by the next block, as flash attention does. With one block (first and last) the kernels are the
# one-pass kernels they were: the state is neither read nor written.

# the running maximum m (finite: 0 while every score so far is masked, so exp(score - m) is 0 and never NaN),
# the rescale ``a`` of the rows' earlier blocks and the new block's sum of exp(score - m), added into ``l``
_RUNNING = f"""
  var mr = mp;
  for (var j = lo + lid; j < hi; j = j + {AWG}u) {{ mr = max(mr, score(i, j)); }}
  mr = wmax(mr, lid);
  var m = mr;
  if (mr == -{_INF}) {{ m = 0.0; }}
  let a = exp(mp - m);"""


@functools.cache
def forward_kernel(mask: str) -> str:
    """``out[b, i] = softmax_j(score(i, j)) @ v[b]``, one workgroup per query row, over the key block
    ``[lo, hi)``; ``stat`` holds (running maximum, running sum) per row between blocks."""
    body = f"""  let i = row;
  var mp = -{_INF};
  var lp = 0.0;
  if (!first) {{ mp = stat[r * 2u]; lp = stat[r * 2u + 1u]; }}{_RUNNING}
  var l = 0.0;
  for (var j = lo + lid; j < hi; j = j + {AWG}u) {{ l = l + exp(score(i, j) - m); }}
  l = wsum(l, lid) + lp * a;
  var inv = 1.0;
  if (last) {{ inv = select(0.0, 1.0 / l, l > 0.0); }}  // every score masked: weights 0, as torch's safe softmax
  else if (lid == 0u) {{ stat[r * 2u] = mr; stat[r * 2u + 1u] = l; }}
  for (var d0 = 0u; d0 < Dv; d0 = d0 + {AWG * ACC}u) {{
    var acc = array<f32, {ACC}>();
    for (var j0 = lo; j0 < hi; j0 = j0 + {AWG}u) {{
      let j = j0 + lid;
      var p = 0.0;
      if (j < hi) {{ p = exp(score(i, j) - m); }}
      sp[lid] = p;
      workgroupBarrier();
      let n = min({AWG}u, hi - j0);
      for (var t = 0u; t < {ACC}u; t = t + 1u) {{
        let d = d0 + lid + t * {AWG}u;
        if (d < Dv) {{
          var s = acc[t];
          for (var jj = 0u; jj < n; jj = jj + 1u) {{ s = s + sp[jj] * vv(j0 + jj, d); }}
          acc[t] = s;
        }}
      }}
      workgroupBarrier();
    }}
    for (var t = 0u; t < {ACC}u; t = t + 1u) {{
      let d = d0 + lid + t * {AWG}u;
      if (d < Dv) {{
        let o = base(5u, b) + i * rs(5u) + d * cs(5u);
        var s = acc[t];
        if (!first) {{ s = s + out[o] * a; }}
        out[o] = s * inv;
      }}
    }}
  }}"""
    return _head(mask, ["@group(0) @binding(5) var<storage, read_write> stat: array<f32>;"]) + _main("prm[1]", body)


_GRAD_BINDINGS = ["@group(0) @binding(5) var<storage, read> gb: array<f32>;",
                  "@group(0) @binding(6) var<storage, read_write> stat: array<f32>;"]
_GRAD_FNS = """
fn gv(i: u32, d: u32) -> f32 { return gb[bg + i * rs(4u) + d * cs(4u)]; }
fn dpv(i: u32, j: u32) -> f32 {
  var s = 0.0;
  for (var d = 0u; d < prm[4]; d = d + 1u) { s = s + gv(i, d) * vv(j, d); }
  return s;
}
"""

# the softmax statistics of query row i over the key block, with the running (maximum, sum, sum of p * dp) of the
# earlier blocks in stat (three words a row); the last block leaves the log-sum-exp and ``Di = sum_j p dp``
_GRAD_STATS = f"""
  var mp = -{_INF};
  var lp = 0.0;
  var tp = 0.0;
  if (!first) {{ mp = stat[r * 3u]; lp = stat[r * 3u + 1u]; tp = stat[r * 3u + 2u]; }}{_RUNNING}
  var l = 0.0;
  var tt = 0.0;
  for (var j = lo + lid; j < hi; j = j + {AWG}u) {{
    let p = exp(score(i, j) - m);
    l = l + p;
    tt = tt + p * dpv(i, j);
  }}
  l = wsum(l, lid) + lp * a;
  tt = wsum(tt, lid) + tp * a;
  var lse = 0.0;  // every score masked: p = exp(-inf - 0) = 0 for every key
  var di = 0.0;
  if (l > 0.0) {{ lse = m + log(l); di = tt / l; }}
  if (lid == 0u) {{
    if (last) {{ stat[r * 3u] = lse; stat[r * 3u + 1u] = di; }}
    else {{ stat[r * 3u] = mr; stat[r * 3u + 1u] = l; stat[r * 3u + 2u] = tt; }}
  }}"""

# dq_i (over the key block, added to the earlier blocks' unless first) = scale * sum_j p_ij (dp_ij - Di) k_j
_GRAD_Q = f"""
  let scale = bitcast<f32>(prm[5]);
  for (var d0 = 0u; d0 < D; d0 = d0 + {AWG * ACC}u) {{
    var acc = array<f32, {ACC}>();
    for (var j0 = lo; j0 < hi; j0 = j0 + {AWG}u) {{
      let j = j0 + lid;
      var ds = 0.0;
      if (j < hi) {{ ds = exp(score(i, j) - lse) * (dpv(i, j) - di) * scale; }}
      sd[lid] = ds;
      workgroupBarrier();
      let n = min({AWG}u, hi - j0);
      for (var t = 0u; t < {ACC}u; t = t + 1u) {{
        let d = d0 + lid + t * {AWG}u;
        if (d < D) {{
          var s = acc[t];
          for (var jj = 0u; jj < n; jj = jj + 1u) {{ s = s + sd[jj] * kv(j0 + jj, d); }}
          acc[t] = s;
        }}
      }}
      workgroupBarrier();
    }}
    for (var t = 0u; t < {ACC}u; t = t + 1u) {{
      let d = d0 + lid + t * {AWG}u;
      if (d < D) {{
        let o = base(5u, b) + i * rs(5u) + d * cs(5u);
        var s = acc[t];
        if (!first) {{ s = s + out[o]; }}
        out[o] = s;
      }}
    }}
  }}"""


@functools.cache
def query_grad_kernel(mask: str, part: str = "all") -> str:
    """Per query row i over the key block: ``"stats"``, the softmax statistics (kept in ``stat`` as the
    log-sum-exp and ``Di = sum_j p dp``, for the dq pass and :func:`key_value_grad_kernel`); ``"dq"``, with those
    statistics, ``dq_i = scale * sum_j p_ij (dp_ij - Di) k_j`` with ``dp_ij = g_i . v_j``; ``"all"``, both in one
    pass (one block: every key). dq fills the first ``B * L * D`` elements of ``out``."""
    if part == "dq":
        body = "  let i = row;\n  let lse = stat[r * 3u];\n  let di = stat[r * 3u + 1u];" + _GRAD_Q
    else:
        body = "  let i = row;" + _GRAD_STATS + (_GRAD_Q if part == "all" else "")
    return _head(mask, _GRAD_BINDINGS) + _GRAD_FNS + _main("prm[1]", body)


@functools.cache
def key_value_grad_kernel(mask: str) -> str:
    """Per key row j over the query block ``[lo, hi)``, with the statistics of :func:`query_grad_kernel`:
    ``dv_j = sum_i p_ij g_i`` and ``dk_j = scale * sum_i p_ij (dp_ij - Di) q_i`` (added to the earlier blocks'
    unless first); dk and dv follow dq in ``out``."""
    body = f"""  let j = row;
  let scale = bitcast<f32>(prm[5]);
  let W = max(D, Dv);
  for (var d0 = 0u; d0 < W; d0 = d0 + {AWG * ACC}u) {{
    var ak = array<f32, {ACC}>();
    var av = array<f32, {ACC}>();
    for (var i0 = lo; i0 < hi; i0 = i0 + {AWG}u) {{
      let i = i0 + lid;
      var p = 0.0;
      var ds = 0.0;
      if (i < hi) {{
        p = exp(score(i, j) - stat[(b * L + i) * 3u]);
        ds = p * (dpv(i, j) - stat[(b * L + i) * 3u + 1u]) * scale;
      }}
      sp[lid] = p;
      sd[lid] = ds;
      workgroupBarrier();
      let n = min({AWG}u, hi - i0);
      for (var t = 0u; t < {ACC}u; t = t + 1u) {{
        let d = d0 + lid + t * {AWG}u;
        if (d < D) {{
          var s = ak[t];
          for (var ii = 0u; ii < n; ii = ii + 1u) {{ s = s + sd[ii] * qv(i0 + ii, d); }}
          ak[t] = s;
        }}
        if (d < Dv) {{
          var s = av[t];
          for (var ii = 0u; ii < n; ii = ii + 1u) {{ s = s + sp[ii] * gv(i0 + ii, d); }}
          av[t] = s;
        }}
      }}
      workgroupBarrier();
    }}
    for (var t = 0u; t < {ACC}u; t = t + 1u) {{
      let d = d0 + lid + t * {AWG}u;
      if (d < D) {{
        let o = base(6u, b) + j * rs(6u) + d * cs(6u);
        var s = ak[t];
        if (!first) {{ s = s + out[o]; }}
        out[o] = s;
      }}
      if (d < Dv) {{
        let o = base(7u, b) + j * rs(7u) + d * cs(7u);
        var s = av[t];
        if (!first) {{ s = s + out[o]; }}
        out[o] = s;
      }}
    }}
  }}"""
    return _head(mask, _GRAD_BINDINGS) + _GRAD_FNS + _main("prm[2]", body)


# lavapipe counts every loop iteration of an invocation against one bound of 65,535 and miscomputes past it (one
# query row against 16,384 keys of 64 dims was off by 1e-2): a dispatch takes the other side's rows in blocks whose
# counted iterations stay under this budget (a quarter of the bound left for what the estimate leaves out)
LOOP_BUDGET = 49152


def block(kind: str, D: int, Dv: int, nbd: int) -> int:
    """The most rows of the other side (keys, or query rows for ``"kv"``) one dispatch of ``kind`` (``"forward"``,
    ``"stats"``, ``"dq"``, ``"all"``, ``"kv"``) may take: a multiple of :data:`AWG`, from an estimate of the loop
    iterations of one invocation per :data:`AWG` rows of the other side; 0 when even :data:`AWG` rows pass the
    budget (heads too wide)."""
    inner = ACC * (AWG + 1)  # a pass's accumulation over one chunk of AWG rows
    width = AWG * ACC
    passes = {"forward": -(-Dv // width), "stats": 0, "dq": -(-D // width), "all": -(-D // width),
              "kv": -(-max(D, Dv) // width)}[kind]
    per = {"forward": 2 * (D + 1) + passes * (D + 2 + inner),
           "stats": 2 * D + Dv + 2,
           "dq": passes * (D + Dv + 2 + inner),
           "all": 2 * D + Dv + 2 + passes * (D + Dv + 2 + inner),
           "kv": passes * (D + Dv + 2 + 2 * inner)}[kind]
    fixed = 64 + 16 * (nbd + 1) + passes * ACC * 2 * (nbd + 3)
    return max(0, (LOOP_BUDGET - fixed) // per) * AWG


# -- kernels ----------------------------------------------------------------------------------------------
def _operand(a: WArray | None, batch: tuple[int, ...], rows: int, cols: int) -> list[int]:
    """``[offset, batch strides, row stride, column stride]`` of ``a`` broadcast to ``(*batch, rows, cols)``."""
    if a is None:
        return [0] * (len(batch) + 3)
    shape = (*batch, rows, cols)
    lead = len(shape) - a.ndim
    st = [0] * lead + [0 if s == 1 and n != 1 else t for s, t, n in zip(a.shape, a.stride, shape[lead:])]
    return [a.offset, *st]


@functools.lru_cache(maxsize=1024)  # (a step attends over the same layouts every step)
def memory_order(shape: tuple[int, ...], stride: tuple[int, ...]) -> tuple[int, ...]:
    """The dims of a strided array from the outermost in memory to the innermost (ties, and dims of size 1, keep
    their order)."""
    return tuple(sorted(range(len(shape)), key=lambda d: -abs(stride[d]) if shape[d] != 1 else 0))


def laid_out(st: Any, shape: tuple[int, ...], order: tuple[int, ...], offset: int = 0) -> WArray:
    """A dense array of ``shape`` in storage ``st`` whose dims lie in memory in ``order`` (outermost first)."""
    stride = [0] * len(shape)
    run = 1
    for d in reversed(order):
        stride[d] = run
        run *= max(shape[d], 1)
    return WArray(st, shape, np.dtype(np.float32), tuple(stride), offset)


def _dispatch(wgsl: str, dims: tuple[tuple[int, ...], int, int, int, int], outs: tuple[WArray, ...], q: WArray,
              k: WArray, v: WArray, mask: WArray | None, g: WArray | None, stat: WArray | None, scale: float,
              causal: bool, rows: int, span: tuple[int, int], first: bool = True, last: bool = True,
              i0: int = 0, j0: int = 0) -> None:
    """One dispatch over ``rows`` rows taking the other side's rows ``span`` (``[lo, hi)``); ``i0`` is the first
    query row of a piece of the query rows, ``j0`` the first key of a block of keys bound as a window (the causal
    test counts from the whole attention's first query row and key)."""
    from .kernels import _grid

    batch, L, S, D, Dv = dims
    kind = "" if mask is None else "bool" if mask.dtype == np.bool_ else "float"
    flags = int(causal) | (2 if kind == "bool" else 4 if kind == "float" else 0) | (8 if first else 0)
    flags |= 16 if last else 0
    meta = [math.prod(batch), L, S, D, Dv, f32_bits(scale), flags,
            len(batch), *span, i0, j0, *batch]
    meta += _operand(q, batch, L, D) + _operand(k, batch, S, D) + _operand(v, batch, S, Dv)
    meta += _operand(mask, batch, L, S) + _operand(g, batch, L, Dv)
    for o in outs:
        meta += _operand(o, batch, o.shape[-2], o.shape[-1])
    bufs = [a.st.buf for a in (outs[0], q, k, v, g, stat) if a is not None and a.st is not None]
    if mask is not None and mask.st is not None:
        bufs.append(mask.st.buf)
    RT.dispatch(wgsl, bufs, meta, _grid(rows, 1))


def _blocks(kind: str, op: str, n: int, D: int, Dv: int, nbd: int) -> list[tuple[int, int]]:
    """``[0, n)`` in the blocks of :func:`block` (one block when it fits); heads too wide for one block of
    :data:`AWG` rows under the loop bound are refused, naming ``op``."""
    step = block(kind, D, Dv, nbd)
    if step == 0:
        fail("device_error_limit", op=op,
             problem=f"a head of {D} query/key and {Dv} value dims passes the loop bound of one WebGPU invocation "
                     "(lavapipe's 65,535 iterations); move the tensors to the CPU")
    return [(s, min(s + step, n)) for s in range(0, n, step)] or [(0, 0)]


def _forward(wgsl: str, dims: tuple[tuple[int, ...], int, int, int, int], out: WArray, q: WArray, k: WArray,
             v: WArray, m: WArray | None, scale: float, causal: bool, i0: int = 0) -> None:
    """The forward over the key blocks (a causal piece's keys past its last row are all masked: not visited),
    each row's running maximum and sum kept between blocks in a temporary."""
    batch, L, S, D, Dv = dims
    rows = math.prod(batch) * L
    nbd = len(batch)
    keys = min(S, i0 + L) if causal else S
    if chunks.fits(k) and chunks.fits(v) and (m is None or chunks.fits(m)):
        spans = _blocks("forward", "scaled_dot_product_attention", keys, D, Dv, nbd)
        stat = RT.empty((1 if len(spans) == 1 else rows * 2,), q.dtype)  # one block: not read
        for n, span in enumerate(spans):
            _dispatch(wgsl, dims, (out,), q, k, v, m, None, stat, scale, causal, rows, span, n == 0,
                      n == len(spans) - 1, i0)
        return
    # one (batch, head) whose keys or values are larger than a binding (``_in_chunks`` passes them unwindowed):
    # blocks of keys that also fit a binding, each block's keys, values and mask columns bound as windows and read
    # from their first (j0 tells the causal test where the block starts), the running statistics carried as above
    step = min(block("forward", D, Dv, nbd), chunks.rows(k, nbd), chunks.rows(v, nbd),
               S if m is None else chunks.rows(m, nbd + 1))
    if step == 0:
        _blocks("forward", "scaled_dot_product_attention", keys, D, Dv, nbd)  # refuses heads too wide
    spans = [(s, min(s + step, keys)) for s in range(0, keys, step)]
    stat = RT.empty((rows * 2,), q.dtype)
    for n, (lo, hi) in enumerate(spans):
        kp, vp = (chunks.windowed(chunks.narrow(x, nbd, lo, hi)) for x in (k, v))
        mp = None if m is None else chunks.windowed(chunks.narrow(m, nbd + 1, lo, hi))
        _dispatch(wgsl, (batch, L, hi - lo, D, Dv), (out,), q, kp, vp, mp, None, stat, scale, causal, rows,
                  (0, hi - lo), n == 0, n == len(spans) - 1, i0, lo)


def _backward(kind: str, dims: tuple[tuple[int, ...], int, int, int, int], grads: tuple[WArray, ...], q: WArray,
              k: WArray, v: WArray, m: WArray | None, g: WArray, scale: float, causal: bool, i0: int = 0,
              accumulate: bool = False) -> None:
    """The query rows' statistics and dq (one pass when every key fits one block; else the statistics over the
    key blocks, then dq over them), then dk and dv over blocks of the query rows (added to what ``grads`` holds
    when ``accumulate``: a later piece of the query rows, whose first is row ``i0``)."""
    batch, L, S, D, Dv = dims
    nb, nbd, op = math.prod(batch), len(batch), "attention_backward"
    stat = RT.empty((nb * L * 3,), q.dtype)
    one = block("all", D, Dv, nbd)
    if S <= one:
        _dispatch(query_grad_kernel(kind), dims, grads, q, k, v, m, g, stat, scale, causal, nb * L, (0, S), i0=i0)
    else:
        for part in ("stats", "dq"):
            spans = _blocks(part, op, S, D, Dv, nbd)
            for n, span in enumerate(spans):
                _dispatch(query_grad_kernel(kind, part), dims, grads, q, k, v, m, g, stat, scale, causal, nb * L,
                          span, n == 0, n == len(spans) - 1, i0)
    spans = _blocks("kv", op, L, D, Dv, nbd)
    for n, span in enumerate(spans):
        _dispatch(key_value_grad_kernel(kind), dims, grads, q, k, v, m, g, stat, scale, causal, nb * S, span,
                  n == 0 and not accumulate, n == len(spans) - 1, i0)


def _backward_by_keys(kind: str, dims: tuple[tuple[int, ...], int, int, int, int], grads: tuple[WArray, ...],
                      q: WArray, k: WArray, v: WArray, m: WArray | None, g: WArray, scale: float, causal: bool,
                      i0: int) -> None:
    """The gradient of a piece of query rows (first row ``i0``) against keys and values larger than a binding,
    over blocks of keys that fit one (as the forward's): the rows' statistics carried across the blocks, then dq
    added up block by block in place, then per block dk and dv into a packed temporary (the key-side kernel binds
    one buffer for both), copied into the block's rows of dk and dv (added to them for a later piece of rows)."""
    from .kernels import assign, elementwise

    batch, L, S, D, Dv = dims
    dq, dk, dv = grads
    nb, nbd, op = math.prod(batch), len(batch), "attention_backward"
    f32 = np.dtype(np.float32)
    step = min(block("stats", D, Dv, nbd), block("dq", D, Dv, nbd), chunks.rows(k, nbd), chunks.rows(v, nbd),
               chunks.rows(dk, nbd), chunks.rows(dv, nbd), chunks.flat_budget(4) // (nb * (D + Dv)),
               S if m is None else chunks.rows(m, nbd + 1))
    if step == 0:
        _blocks("dq", op, S, D, Dv, nbd)  # refuses heads too wide
        RT._too_large(nb * (D + Dv) * 4)  # one key's dk and dv over a binding
    spans = [(s, min(s + step, S)) for s in range(0, S, step)]

    def parts(lo: int, hi: int) -> tuple[WArray, WArray, WArray | None]:
        kp, vp = (chunks.windowed(chunks.narrow(x, nbd, lo, hi)) for x in (k, v))
        return kp, vp, None if m is None else chunks.windowed(chunks.narrow(m, nbd + 1, lo, hi))

    stat = RT.empty((nb * L * 3,), q.dtype)
    for part in ("stats", "dq"):
        for n, (lo, hi) in enumerate(spans):
            kp, vp, mp = parts(lo, hi)
            _dispatch(query_grad_kernel(kind, part), (batch, L, hi - lo, D, Dv), (dq, dq, dq), q, kp, vp, mp, g,
                      stat, scale, causal, nb * L, (0, hi - lo), n == 0, n == len(spans) - 1, i0, lo)
    qspans = _blocks("kv", op, L, D, Dv, nbd)
    for lo, hi in spans:
        kp, vp, mp = parts(lo, hi)
        tmp = RT.empty((nb * (hi - lo) * (D + Dv),), q.dtype)
        tk, tv = _packed(tmp, (kp, vp), (tuple(range(nbd + 2)),) * 2)
        for n, span in enumerate(qspans):
            _dispatch(key_value_grad_kernel(kind), (batch, L, hi - lo, D, Dv), (tk, tk, tv), q, kp, vp, mp, g,
                      stat, scale, causal, nb * (hi - lo), span, n == 0, n == len(qspans) - 1, i0, lo)
        for d, t in ((dk, tk), (dv, tv)):
            block_of = chunks.narrow(d, nbd, lo, hi)
            if i0 == 0:
                assign(block_of, t)
            else:
                elementwise("a + b", f32, [("a", block_of, f32), ("b", t, f32)], block_of.shape, out=block_of)


def _mask_kind(mask: tuple[WArray, ...]) -> str:
    return "" if not mask else "bool" if mask[0].dtype == np.bool_ else "float"


def _bindable(a: WArray) -> WArray:
    """``a``, or a 1-element stand-in when it has no buffer (a head size of 0: nothing of it is read)."""
    from .kernels import full

    return a if a.st is not None else full((1,), 0.0, a.dtype)


def _full_rank(a: WArray, batch: tuple[int, ...], rows: int, cols: int) -> WArray:
    """``a`` as a view of shape ``(*batch, rows, cols)`` (stride 0 along the dims it is broadcast over)."""
    meta = _operand(a, batch, rows, cols)
    return WArray(a.st, (*batch, rows, cols), a.dtype, tuple(meta[1:]), meta[0])


def _in_chunks(views: list[WArray | None], on_rows: list[bool], nsplit: int,
               run: Callable[[list[WArray | None], int], None], i0: int = 0, keys: tuple[int, ...] = ()) -> None:
    """``run(views)`` with every view bound whole, or, when one is larger than a binding, over pieces of the batch
    dims (outermost first; every view is full rank, ``(*batch, rows, cols)``) and, when ``nsplit`` is one more than
    the batch dims, of the query rows (followed by the views marked in ``on_rows``), each piece's views bound as
    windows of their buffers (the kernels read every operand through the offsets and strides of the parameter
    block, so a window needs only its offset rebased). A piece that cannot be split further and still does not fit
    is refused (``device_error_limit`` naming the primitive). ``run`` is also given the piece's first query row
    (``i0``: the causal test counts the rows of the whole attention). ``keys``: the positions of views (the keys
    and values, and the mask and key gradients) that, once the batch is down to one entry, are passed as they are
    when larger than a binding (``run`` takes them in blocks of key rows, the mask in blocks of its columns)."""
    live = [v for v in views if v is not None]
    nbd = live[0].ndim - 2
    single = all(n == 1 for n in live[0].shape[:nbd])
    # (a view that follows the query rows, the mask, is passed whole only down to one query row or rows
    # broadcast: ``run`` narrows its columns, and a piece of rows of a wide mask spans whole rows)
    loose = [single and i in keys and v is not None and not chunks.fits(v)
             and (not on_rows[i] or v.shape[nbd] == 1 or v.stride[nbd] == 0) for i, v in enumerate(views)]
    if all(chunks.fits(v) for v, x in zip(views, loose) if v is not None and not x):
        run([None if v is None else v if x else chunks.windowed(v) for v, x in zip(views, loose)], i0)
        return
    dim = next((d for d in range(nsplit) if live[0].shape[d] > 1), -1)
    if dim < 0:
        for v, x in zip(views, loose):
            if v is not None and not x:
                chunks.windowed(v)  # the one that does not fit raises
    follow = [v is not None and (dim < nbd or r) for v, r in zip(views, on_rows)]
    step = min(chunks.rows(v, dim) for v, f, x in zip(views, follow, loose) if f and v is not None and not x)
    n = live[0].shape[dim]
    for s in range(0, n, step):
        e = min(s + step, n)
        _in_chunks([chunks.narrow(v, dim, s, e) if f and v is not None else v for v, f in zip(views, follow)],
                   on_rows, nsplit, run, i0 + (s if dim == nbd else 0), keys)


def _large(*views: WArray | None) -> bool:
    return any(v is not None and chunks.large(v) for v in views)


def attention_kernel(q: WArray, k: WArray, v: WArray, *mask: WArray, scale: float, causal: bool) -> WArray:
    from .kernels import full

    batch, L, S, Dv = q.shape[:-2], q.shape[-2], k.shape[-2], v.shape[-1]
    shape = (*batch, L, Dv)
    if math.prod(shape) == 0 or S == 0:  # nothing to compute, or no keys: the weighted sum of nothing is 0
        return full(shape, 0.0, q.dtype)
    out = laid_out(RT.alloc(math.prod(shape) * 4), shape, memory_order(q.shape, q.stride))
    wgsl = forward_kernel(_mask_kind(mask))
    m = mask[0] if mask else None
    D = q.shape[-1]
    if not _large(q, k, v, m, out):
        _forward(wgsl, (batch, L, S, D, Dv), out, _bindable(q), _bindable(k), v, m, scale, causal)
        return out
    # larger than a binding: by pieces of the batch, and of the query rows (a causal piece given its first row)
    views = [_full_rank(q, batch, L, D), _full_rank(k, batch, S, D), _full_rank(v, batch, S, Dv),
             None if m is None else _full_rank(m, batch, L, S), out]

    def run(vs: list[WArray | None], i0: int) -> None:
        pq, pk, pv, pm, po = vs
        assert pq is not None and pk is not None and pv is not None and po is not None
        _forward(wgsl, (pq.shape[:-2], pq.shape[-2], S, D, Dv), po, pq, pk, pv, pm, scale, causal, i0)

    _in_chunks(views, [True, False, False, True, True], len(batch) + 1, run, keys=(1, 2, 3))
    return out


def attention_backward_kernel(q: WArray, k: WArray, v: WArray, *rest: WArray, scale: float, causal: bool,
                              orders: tuple[tuple[int, ...], ...]) -> WArray:
    """The gradients of q, k and v packed into one flat array, in that order, each dense with its dims in memory
    in the order given (``orders``, the caller's: it makes the views)."""
    from .kernels import full

    *mask_l, g = rest
    mask = tuple(mask_l)
    batch, L, D, S, Dv = q.shape[:-2], q.shape[-2], q.shape[-1], k.shape[-2], v.shape[-1]
    nb = math.prod(batch)
    n = nb * (L * D + S * D + S * Dv)
    if n == 0 or nb * L * S == 0 or D + Dv == 0:
        return full((n,), 0.0, q.dtype)
    out = RT.empty((n,), q.dtype)
    m = mask[0] if mask else None
    kind = _mask_kind(mask)
    grads = _packed(out, (q, k, v), orders)
    if _large(q, k, v, m, g, out) and q.shape[:-2] == k.shape[:-2] == v.shape[:-2]:
        # larger than a binding: by pieces of the batch, and of the query rows, each piece's gradients packed into a
        # temporary (the kernels bind one buffer for the three) and copied out. The pieces of one batch piece's
        # query rows come one after another: the first makes the temporary, each adds its rows' share into its
        # dk and dv (and copies out its dq), the last copies dk and dv out.
        from .kernels import assign

        kv_size = S * (D + Dv)
        if (D + kv_size) * 4 > chunks.flat_budget(4):
            # one (batch, head)'s dk and dv do not fit one binding with a row's dq: by blocks of keys instead
            views = [_full_rank(q, batch, L, D), _full_rank(k, batch, S, D), _full_rank(v, batch, S, Dv),
                     None if m is None else _full_rank(m, batch, L, S), _full_rank(g, batch, L, Dv), *grads]

            def by_keys(vs: list[WArray | None], i0: int) -> None:
                pq, pk, pv, pm, pg, dq, dk, dv = vs
                assert pq is not None and pk is not None and pv is not None and pg is not None
                assert dq is not None and dk is not None and dv is not None
                _backward_by_keys(kind, (pq.shape[:-2], pq.shape[-2], S, D, Dv), (dq, dk, dv), pq, pk, pv, pm, pg,
                                  scale, causal, i0)

            _in_chunks(views, [True, False, False, True, True, True, False, False], len(batch) + 1, by_keys,
                       keys=(1, 2, 3, 6, 7))
            return out
        # (the last view stands for a piece's packed temporary, its rows' dq then the whole dk and dv, so that a
        # piece's three gradients fit one binding)
        per, bst = n // nb, list[int]()  # (each batch entry's temporary: L * D + kv_size, spanned by L rows of D + kv_size)
        for size in reversed(batch):
            bst.insert(0, per)
            per *= size
        proxy = WArray(out.st, (*batch, L, D + kv_size), np.dtype(np.float32), (*bst, D, 1), 0)
        views = [_full_rank(q, batch, L, D), _full_rank(k, batch, S, D), _full_rank(v, batch, S, Dv),
                 None if m is None else _full_rank(m, batch, L, S), _full_rank(g, batch, L, Dv), *grads, proxy]
        held: list[tuple[WArray, ...]] = []

        def run(vs: list[WArray | None], i0: int) -> None:
            pq, pk, pv, pm, pg, dq, dk, dv, _ = vs
            assert pq is not None and pk is not None and pv is not None and pg is not None and dq is not None
            b, rows = pq.shape[:-2], pq.shape[-2]
            nbp = math.prod(b)
            if i0 == 0:  # a piece's first rows: its temporary, sized for them (the later pieces are no longer)
                buf = RT.empty((nbp * (rows * D + kv_size),), q.dtype)
                held[:] = [_packed(buf, (pq, pk, pv), orders)]
            tmp = held[0]
            part = (laid_out(tmp[0].st, pq.shape, orders[0], tmp[0].offset), *tmp[1:])
            _backward(kind, (b, rows, S, D, Dv), part, pq, pk, pv, pm, pg, scale, causal, i0, i0 > 0)
            assign(dq, part[0])
            if i0 + rows == L:
                for d, t in zip((dk, dv), part[1:]):
                    assert d is not None
                    assign(d, t)

        _in_chunks(views, [True, False, False, True, True, True, False, False, True], len(batch) + 1, run)
        return out
    q, k, v, g = (_bindable(a) for a in (q, k, v, g))
    _backward(kind, (batch, L, S, D, Dv), grads, q, k, v, m, g, scale, causal)
    return out


def _packed(out: WArray, like: tuple[WArray, ...], orders: tuple[tuple[int, ...], ...]) -> tuple[WArray, ...]:
    """Views of the flat ``out`` holding arrays of the shapes of ``like`` one after another, each dense with its
    dims in memory in the order given."""
    views, at = [], 0
    for a, order in zip(like, orders):
        views.append(laid_out(out.st, a.shape, order, out.offset + at))
        at += a.size
    return tuple(views)


KERNELS: dict[str, Any] = {"scaled_dot_product_attention": attention_kernel,
                           "attention_backward": attention_backward_kernel}
