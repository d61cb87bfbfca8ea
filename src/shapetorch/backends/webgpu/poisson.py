"""Poisson counts drawn on the device: one thread per rate, from the counter-based generator of the other draws.

Element ``i`` of a call takes its uniforms from Philox4x32-10 of the counters ``(i, j, offset)``, ``j = 0, 1, ...``
(four per counter), under the key ``seed``, so a seeded call repeats exactly and every thread works alone.

- rate < 10: multiplication of uniforms (Knuth): the count of uniforms whose running product stays above
  ``exp(-rate)``; about ``rate + 1`` uniforms per draw.
- rate >= 10: Hörmann's transformed rejection with squeeze (PTRS, 1993), as NumPy's sampler: a candidate from a
  transformed uniform, accepted at once by the squeeze (about 86% of candidates) or by the exact test against
  ``log P(k)``. ``log P(k)`` is written as ``n·log1pmx(d) - log1p(d) - log(n)/2 - log(2π)/2 - 1/(12n) +
  1/(360n³)`` with ``n = k + 1`` and ``d = (rate - n) / n`` (Stirling's series with the large terms cancelled
  analytically), so that float32 keeps its precision for large rates, where ``k log(rate) - lgamma(k + 1)``
  would lose it to cancellation.

A negative or NaN rate records the check's id in the flag buffer: torch's error (``argument_error_invalid``) is
raised at the next sync, as the other device-side checks. The loops are bounded (lavapipe bounds a shader's
loops): 1024 uniforms for the small rates, 256 candidates for the large ones, far past what any draw needs.
"""

from __future__ import annotations

import functools

from . import codegen as G
from . import kernels as K
from .runtime import RT, WG, WArray


@functools.cache
def poisson_shader(st: str, p_st: str) -> str:
    """meta: [n, key_lo, key_hi, offset_lo, offset_hi, nd, shape[nd], rate offset, rate strides[nd], check id]."""
    return f"""{G._enable((st, p_st))}
@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<{st}>;
@group(0) @binding(2) var<storage, read> R: array<{p_st}>;
@group(0) @binding(3) var<storage, read_write> flag: array<atomic<u32>, 4>;
{G._strided_off(5)}
{G.PHILOX}
fn uniforms(i: u32, j: u32) -> vec4<f32> {{
  let w = philox(vec4<u32>(i, j, prm[3], prm[4]), vec2<u32>(prm[1], prm[2]));
  return vec4<f32>(w >> vec4<u32>(8u)) * {1.0 / 2**24!r};
}}
// log(1 + d) - d, by its series near 0 (where the subtraction would cancel)
fn log1pmx(d: f32) -> f32 {{
  if (abs(d) < 0.25) {{
    var s = 0.0;
    for (var m = 14; m >= 2; m = m - 1) {{
      s = s * d + select(-1.0, 1.0, (m & 1) == 1) / f32(m);
    }}
    return s * d * d;
  }}
  return log(1.0 + d) - d;
}}
// log(rate^k exp(-rate) / k!)
fn log_pmf(k: f32, rate: f32) -> f32 {{
  if (k < 10.0) {{
    var lf = 0.0;
    for (var m = 2.0; m <= k; m = m + 1.0) {{ lf = lf + log(m); }}
    return k * log(rate) - rate - lf;
  }}
  let n = k + 1.0;
  let d = (rate - n) / n;
  let l = log1pmx(d);
  return n * l - (l + d) - 0.5 * log(n) - 0.9189385332046727 - 1.0 / (12.0 * n) + 1.0 / (360.0 * n * n * n);
}}
fn knuth(i: u32, rate: f32) -> f32 {{
  let limit = exp(-rate);
  var prod = 1.0;
  var k = 0.0;
  for (var j = 0u; j < 256u; j = j + 1u) {{
    let u = uniforms(i, j);
    for (var c = 0; c < 4; c = c + 1) {{
      prod = prod * u[c];
      if (prod <= limit) {{ return k; }}
      k = k + 1.0;
    }}
  }}
  return k;
}}
fn ptrs(i: u32, rate: f32) -> f32 {{
  let slam = sqrt(rate);
  let b = 0.931 + 2.53 * slam;
  let a = -0.059 + 0.02483 * b;
  let inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
  let vr = 0.9277 - 3.6224 / (b - 2.0);
  var k = 0.0;
  for (var j = 0u; j < 128u; j = j + 1u) {{
    let w = uniforms(i, j);
    for (var c = 0; c < 4; c = c + 2) {{
      let U = w[c] - 0.5;
      let V = w[c + 1];
      let us = 0.5 - abs(U);
      k = floor((2.0 * a / us + b) * U + rate + 0.43);
      if (us >= 0.07 && V <= vr) {{ return k; }}
      if (k < 0.0 || (us < 0.013 && V > us)) {{ continue; }}
      // V is in [0, 1): log(0) is -inf, which accepts
      if (log(V) + log(inv_alpha) - log(a / (us * us) + b) <= log_pmf(k, rate)) {{ return k; }}
    }}
  }}
  return max(k, 0.0);
}}
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let i = gid.x + gid.y * nwg.x * {WG}u;
  if (i >= prm[0]) {{ return; }}
  let rate = {G.load_expr(p_st, "R[off(i)]")};
  var r = 0.0;
  // NaN by its bits: a compiler may assume comparisons with NaN never happen
  if (rate < 0.0 || (bitcast<u32>(rate) & 0x7fffffffu) > 0x7f800000u) {{
    atomicCompareExchangeWeak(&flag[0], 0u, prm[7u + 2u * prm[5]]);
  }} else if (rate < 10.0) {{
    r = knuth(i, rate);
  }} else {{
    r = ptrs(i, rate);
  }}
  out[i] = {G.store_expr(st, "r")};
}}"""


def draw(rates: WArray, seed: int, offset: int) -> WArray:
    """Poisson counts of ``rates`` (a float tensor), in its dtype, contiguous."""
    out = RT.empty(rates.shape, rates.dtype)
    if out.st is None or rates.st is None:
        return out
    cid = RT.add_check("argument_error_invalid", "poisson", problem="invalid Poisson rate, expected rate to be "
                       "non-negative")
    meta = [out.size, seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF, offset & 0xFFFFFFFF, (offset >> 32) & 0xFFFFFFFF,
            rates.ndim, *rates.shape, rates.offset, *rates.stride, cid]
    st = K._st(rates.dtype)
    if RT.recorder is not None:  # (a captured graph draws fresh numbers at each replay)
        RT.recorder.random(1)
    RT.dispatch(poisson_shader(st, st), [out.st.buf, rates.st.buf, RT.flag], meta, K._grid(out.size))
    return out
