"""WebGPU kernels of the fused cross-entropy primitives (``cross_entropy_loss`` and ``cross_entropy_backward``, see
``ops/loss.py`` for the formulas): a row kernel and, for 'mean' and 'sum', one reduction over the rows, where the
composite made a log_softmax, a gather of the targets, masks, products and sums, and as many kernels again for the
gradient.

Rows are (M, C) contiguous logits, one workgroup of :data:`CWG` threads each. Targets are read as i32 (an index
outside ``[0, C)`` that is not ``ignore_index`` has been reported by the caller's device-side range check; here
it reads class 0, in bounds, as the composite's does). Meta: ``[M, C, ignore_index, smoothing (f32 bits), mode,
offsets of x, t, w, g]``; mode 0 'none', 1 'sum', 2 'mean'.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .codegen import _INF, workgroup_reductions
from .runtime import RT, WArray

CWG = 64

_HEAD = f"""@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<storage, read> xb: array<f32>;
@group(0) @binding(3) var<storage, read> tb: array<i32>;
WBIND
var<workgroup> red: array<f32, {CWG}>;
{workgroup_reductions(CWG)}
// the target of row r (0 when ignored or out of range) and its weight w[t] * valid
fn tgt(r: u32) -> i32 {{
  let t = tb[prm[6] + r];
  if (t < 0 || u32(t) >= prm[1]) {{ return 0; }}
  return t;
}}
fn valid(r: u32) -> f32 {{ return select(1.0, 0.0, tb[prm[6] + r] == bitcast<i32>(prm[2])); }}
fn row_weight(r: u32) -> f32 {{ return valid(r) * wv(u32(tgt(r))); }}
"""

_ROW_MAIN = f"""@compute @workgroup_size({CWG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lv: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {{
  let r = wid.x + wid.y * nwg.x;
  if (r >= prm[0]) {{ return; }}
  let lid = lv.x;
  let C = prm[1];
  let e = bitcast<f32>(prm[3]);
  let x0 = prm[5] + r * C;
  var m = -{_INF};
  for (var c = lid; c < C; c = c + {CWG}u) {{ m = max(m, xb[x0 + c]); }}
  m = wmax(m, lid);
  var s = 0.0;
  for (var c = lid; c < C; c = c + {CWG}u) {{ s = s + exp(xb[x0 + c] - m); }}
  let lse = m + log(wsum(s, lid));
  let t = u32(tgt(r));
  let ok = valid(r);
  let wt = ok * wv(t);
BODY
}}"""

_FORWARD = """
  var sm = 0.0;  // the smoothing term: sum_c w[c] * -logp[c]
  if (e > 0.0) {
    for (var c = lid; c < C; c = c + CWGu) { sm = sm + wv(c) * (lse - xb[x0 + c]); }
    sm = wsum(sm, lid);
  }
  if (lid == 0u) {
    let loss = (1.0 - e) * wt * (lse - xb[x0 + t]) + e / f32(C) * ok * sm;
    if (prm[4] == 0u) { out[r] = loss; } else { out[2u * r] = loss; out[2u * r + 1u] = wt; }
  }"""

# the gradient: (softmax(x) * s_r - k_rc) * gd_r, with s_r = wt (1 - e) + ok e / C sum(w) and
# k_rc = wt (1 - e) [c == t] + ok e / C w[c]; gd_r = g[r] ('none'), g ('sum'), g / sum_r wt_r ('mean', the sum in
# ``den``, made by the reduction kernel)
_BACKWARD = """
  var ws = f32(C);
  if (HASW && e > 0.0) {
    var a = 0.0;
    for (var c = lid; c < C; c = c + CWGu) { a = a + wv(c); }
    ws = wsum(a, lid);
  }
  let sr = wt * (1.0 - e) + ok * e / f32(C) * ws;
  var gd = gb[prm[8]];
  if (prm[4] == 0u) { gd = gb[prm[8] + r]; }
  if (prm[4] == 2u) { gd = gd / den[0]; }
  for (var c = lid; c < C; c = c + CWGu) {
    var k = ok * e / f32(C) * wv(c);
    if (c == t) { k = k + wt * (1.0 - e); }
    out[x0 - prm[5] + c] = (exp(xb[x0 + c] - lse) * sr - k) * gd;
  }"""


def _wbind(has_w: bool, extra: str) -> str:
    w = ("@group(0) @binding(4) var<storage, read> wb: array<f32>;\nfn wv(c: u32) -> f32 { return wb[prm[7] + c]; }"
         if has_w else "fn wv(c: u32) -> f32 { return 1.0; }")
    return w + extra


@functools.cache
def forward_kernel(has_w: bool) -> str:
    """Per row: its loss (and, when reduced, its weight ``w[t] * valid`` beside it, for the reduction)."""
    body = _FORWARD.replace("CWGu", f"{CWG}u")
    return _HEAD.replace("WBIND", _wbind(has_w, "")) + _ROW_MAIN.replace("BODY", body)


@functools.cache
def backward_kernel(has_w: bool) -> str:
    k = 5 if has_w else 4
    extra = (f"\n@group(0) @binding({k}) var<storage, read> gb: array<f32>;"
             f"\n@group(0) @binding({k + 1}) var<storage, read> den: array<f32>;")
    body = _BACKWARD.replace("CWGu", f"{CWG}u").replace("HASW", "true" if has_w else "false")
    return _HEAD.replace("WBIND", _wbind(has_w, extra)) + _ROW_MAIN.replace("BODY", body)


_REDUCE = f"""var<workgroup> ra: array<f32, {CWG}>;
var<workgroup> rb: array<f32, {CWG}>;
@compute @workgroup_size({CWG})
fn main(@builtin(local_invocation_id) lv: vec3<u32>) {{
  let lid = lv.x;
  var a = 0.0;
  var b = 0.0;
  for (var r = lid; r < prm[0]; r = r + {CWG}u) {{ TERMS }}
  ra[lid] = a;
  rb[lid] = b;
  workgroupBarrier();
  for (var s = {CWG // 2}u; s > 0u; s = s >> 1u) {{
    if (lid < s) {{ ra[lid] = ra[lid] + ra[lid + s]; rb[lid] = rb[lid] + rb[lid + s]; }}
    workgroupBarrier();
  }}
  if (lid == 0u) {{ out[0] = RESULT; }}
}}"""


@functools.cache
def reduce_kernel(mode: str) -> str:
    """One workgroup over the rows' (loss, weight) pairs: 'sum' the losses' sum, 'mean' it over the weights'."""
    head = """@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<storage, read> pairs: array<f32>;
"""
    res = {"sum": "ra[0]", "mean": "ra[0] / rb[0]"}[mode]
    return head + _REDUCE.replace("TERMS", "a = a + pairs[2u * r]; b = b + pairs[2u * r + 1u];").replace(
        "RESULT", res)


@functools.cache
def denominator_kernel(has_w: bool) -> str:
    """One workgroup: 'mean''s divisor ``sum_r w[t_r] * valid_r``, from the targets alone (for the gradient)."""
    head = _HEAD.split("var<workgroup>", 1)[0].replace("@group(0) @binding(2) var<storage, read> xb: array<f32>;\n", "")
    head = head.replace("@binding(3) var<storage, read> tb", "@binding(2) var<storage, read> tb")
    head = head.replace("WBIND", _wbind(has_w, "").replace("@binding(4)", "@binding(3)"))
    fns = "fn tgt" + _HEAD.split("fn tgt", 1)[1]
    return head + fns + _REDUCE.replace("TERMS", "b = b + row_weight(r);").replace("RESULT", "rb[0]")


_MODES = {"none": 0, "sum": 1, "mean": 2}


def _meta(x: WArray, t: WArray, w: WArray | None, g: WArray | None, ignore_index: int, smoothing: float,
          mode: int) -> list[int]:
    return [x.shape[0], x.shape[1], ignore_index & 0xFFFFFFFF, int(np.array(smoothing, np.float32).view(np.uint32)),
            mode, x.offset, t.offset, 0 if w is None else w.offset, 0 if g is None else g.offset]


def _buf(a: WArray) -> Any:
    assert a.st is not None  # the callers' arrays are not empty
    return a.st.buf


def _dense(a: WArray) -> WArray:
    from .kernels import contiguous_copy

    return a if a.contiguous else contiguous_copy(a)


def _pairs(x: WArray, t: WArray, w: WArray | None, ignore_index: int, smoothing: float) -> WArray:
    """(M, 2) per-row (loss, weight) pairs."""
    from .kernels import _grid

    pairs = RT.empty((x.shape[0], 2), np.dtype(np.float32))
    bufs = [_buf(pairs), _buf(x), _buf(t)] + ([_buf(w)] if w is not None else [])
    RT.dispatch(forward_kernel(w is not None), bufs, _meta(x, t, w, None, ignore_index, smoothing, 1),
                _grid(x.shape[0], 1))
    return pairs


def _reduce(pairs: WArray, mode: str) -> WArray:
    out = RT.empty((), np.dtype(np.float32))
    RT.dispatch(reduce_kernel(mode), [_buf(out), _buf(pairs)], [pairs.shape[0]], (1, 1, 1))
    return out


def cross_entropy_kernel(x: WArray, t: WArray, *w: WArray, ignore_index: int, reduction: str,
                         smoothing: float) -> Any:
    from .kernels import _grid, full

    n, c = x.shape
    if n == 0 or c == 0:  # an empty batch: 'mean' is 0 / 0 (NaN) as torch, 'sum' 0, 'none' empty
        return full((n,) if reduction == "none" else (), float("nan") if reduction == "mean" else 0.0, x.dtype)
    x, t = _dense(x), _dense(t)
    wv = _dense(w[0]) if w else None
    if reduction == "none":
        out = RT.empty((n,), x.dtype)
        bufs = [_buf(out), _buf(x), _buf(t)] + ([_buf(wv)] if wv is not None else [])
        RT.dispatch(forward_kernel(wv is not None), bufs, _meta(x, t, wv, None, ignore_index, smoothing, 0),
                    _grid(n, 1))
        return out
    return _reduce(_pairs(x, t, wv, ignore_index, smoothing), reduction)


def cross_entropy_backward_kernel(x: WArray, t: WArray, *rest: WArray, ignore_index: int, reduction: str,
                                  smoothing: float) -> Any:
    from .kernels import _grid, full

    *w, g = rest
    n, c = x.shape
    if n == 0 or c == 0:
        return full((n, c), 0.0, x.dtype)
    x, t, g = _dense(x), _dense(t), _dense(g)
    wv = _dense(w[0]) if w else None
    den = g
    if reduction == "mean":
        den = RT.empty((), x.dtype)
        bufs = [_buf(den), _buf(t)] + ([_buf(wv)] if wv is not None else [])
        RT.dispatch(denominator_kernel(wv is not None), bufs, _meta(x, t, wv, None, ignore_index, smoothing, 2),
                    (1, 1, 1))
    out = RT.empty((n, c), x.dtype)
    bufs = [_buf(out), _buf(x), _buf(t)] + ([_buf(wv)] if wv is not None else [])
    bufs += [_buf(g), _buf(den)]
    RT.dispatch(backward_kernel(wv is not None), bufs,
                _meta(x, t, wv, g, ignore_index, smoothing, _MODES[reduction]), _grid(n, 1))
    return out


KERNELS: dict[str, Any] = {"cross_entropy_loss": cross_entropy_kernel,
                           "cross_entropy_backward": cross_entropy_backward_kernel}
