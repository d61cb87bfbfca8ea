"""WebGPU kernel of ``layer_norm_weight_grad``: the weight gradient of ``layer_norm``, ``dw = sum_rows(g * xhat)``,
in two dispatches (each row's mean and reciprocal standard deviation, then one thread per column summing over the
rows) where the composite made the normalized input again, a product and a sum. The input gradient is
``layer_norm_backward``, a row kernel of its own; the bias gradient is a sum of ``g``.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from .codegen import RWG, workgroup_reductions
from .runtime import RT, WG, WArray


@functools.cache
def stats_kernel() -> str:
    """One workgroup per contiguous row of length L: ``stat[2r] = mean``, ``stat[2r + 1] = rstd``.
    meta: [rows, L, eps (f32 bits), offset of x]."""
    return f"""@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> stat: array<f32>;
@group(0) @binding(2) var<storage, read> xb: array<f32>;
var<workgroup> red: array<f32, {RWG}>;
{workgroup_reductions(RWG)}
@compute @workgroup_size({RWG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lv: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {{
  let r = wid.x + wid.y * nwg.x;
  if (r >= prm[0]) {{ return; }}
  let lid = lv.x;
  let L = prm[1];
  let x0 = prm[3] + r * L;
  var s = 0.0;
  for (var j = lid; j < L; j = j + {RWG}u) {{ s = s + xb[x0 + j]; }}
  let mean = wsum(s, lid) / f32(L);
  var q = 0.0;
  for (var j = lid; j < L; j = j + {RWG}u) {{ let d = xb[x0 + j] - mean; q = q + d * d; }}
  let rstd = inverseSqrt(wsum(q, lid) / f32(L) + bitcast<f32>(prm[2]));
  if (lid == 0u) {{ stat[2u * r] = mean; stat[2u * r + 1u] = rstd; }}
}}"""


@functools.cache
def column_kernel() -> str:
    """One thread per column j: ``out[j] = sum_r g[r, j] * (x[r, j] - mean_r) * rstd_r``, over the rows in order.
    meta: [rows, L, offset of x, offset of g]."""
    return f"""@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<storage, read> xb: array<f32>;
@group(0) @binding(3) var<storage, read> gb: array<f32>;
@group(0) @binding(4) var<storage, read> stat: array<f32>;
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let j = gid.x + gid.y * nwg.x * {WG}u;
  let L = prm[1];
  if (j >= L) {{ return; }}
  var dw = 0.0;
  for (var r = 0u; r < prm[0]; r = r + 1u) {{
    let g = gb[prm[3] + r * L + j];
    dw = dw + g * (xb[prm[2] + r * L + j] - stat[2u * r]) * stat[2u * r + 1u];
  }}
  out[j] = dw;
}}"""


def layer_norm_weight_grad_kernel(x: WArray, g: WArray, nd: int, eps: float) -> WArray:
    """The weight's gradient, of shape ``x.shape[-nd:]``."""
    from .kernels import _grid, cast, contiguous_copy, full

    norm = x.shape[x.ndim - nd:]
    L = math.prod(norm)
    rows = x.size // L if L else 0
    if rows == 0 or L == 0:
        return full(norm, 0.0, x.dtype)
    dtype = x.dtype
    if dtype != np.float32:  # float16: summed in float32, as the row kernels compute
        x, g = cast(x, np.dtype(np.float32)), cast(g, np.dtype(np.float32))
    x, g = (a if a.contiguous else contiguous_copy(a) for a in (x, g))
    assert x.st is not None and g.st is not None
    stat = RT.empty((rows, 2), np.dtype(np.float32))
    out = RT.empty(norm, np.dtype(np.float32))
    assert stat.st is not None and out.st is not None
    RT.dispatch(stats_kernel(), [stat.st.buf, x.st.buf], [rows, L, int(np.array(eps, np.float32).view(np.uint32)),
                                                           x.offset], _grid(rows, 1))
    RT.dispatch(column_kernel(), [out.st.buf, x.st.buf, g.st.buf, stat.st.buf], [rows, L, x.offset, g.offset],
                _grid(L))
    return out if dtype == np.float32 else cast(out, dtype)


KERNELS: dict[str, Any] = {"layer_norm_weight_grad": layer_norm_weight_grad_kernel}
