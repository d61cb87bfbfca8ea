"""WebGPU kernels of the small dense solvers: ``inverse``, ``linalg_solve`` and ``det`` (float32), and the first two
and ``solve_ex`` of complex64 too (the same elimination in complex arithmetic).

One thread per matrix runs Gaussian elimination with partial pivoting (the row of the largest magnitude in
the column, as LAPACK's getrf) on a float32 copy of its matrix, then back substitution over the right-hand
sides (the identity for the inverse); the determinant is the product of the pivots with the permutation's
sign. That is O(n^3) serial work per matrix, fine for the small matrices of a model (a batch of 3x3
transforms, a 32x32 covariance). lavapipe stops a shader's long loops early (measured: elimination went wrong
from 40x40 with 40 right-hand sides, and for the determinant alone at 64x64), so a matrix larger than
:data:`MAX_N` is a ``device_error_limit`` naming the op (move it to the CPU), and many right-hand sides are
solved in chunks of columns, each on a fresh copy of the matrix, so that one thread's innermost updates stay
under :data:`MAX_WORK`.

A zero pivot (a singular matrix) makes ``inverse`` and ``solve`` record torch's ``linalg_error_singular``,
raised at the next sync as the other device-side checks (torch raises at the call; the device does not name
the diagonal element); ``det`` is 0 there, as torch's. ``solve_ex`` (and ``inv_ex``, a solve with the identity,
as torch's) records no check: the same elimination writes LAPACK getrf's ``info`` per matrix into a device
tensor, and a singular system's result is what the substitutions make of the zero pivot (infinities, NaN).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..._errors import fail
from . import chunks
from . import kernels as K
from .runtime import RT, WG, WArray, contiguous_strides

MAX_N = 32
MAX_WORK = 32 * 32 * 32  # n * n * (right-hand sides) per thread
_F32 = np.dtype(np.float32)
_C64 = np.dtype(np.complex64)
_I32 = np.dtype(np.int32)


# The scalar arithmetic of the elimination, real or complex (vec2<f32>: (re, im)). A complex pivot is the element
# of the largest |re| + |im|, as LAPACK's cgetrf (icamax) chooses it, so P, L and U are torch's.
_ARITH = {
    "f32": """fn mul(x: f32, y: f32) -> f32 { return x * y; }
fn dv(x: f32, y: f32) -> f32 { return x / y; }
fn mag(x: f32) -> f32 { return abs(x); }
fn zero(x: f32) -> bool { return x == 0.0; }
const ONE = 1.0;""",
    "vec2<f32>": """fn mul(x: vec2<f32>, y: vec2<f32>) -> vec2<f32> { return vec2<f32>(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x); }
fn dv(x: vec2<f32>, y: vec2<f32>) -> vec2<f32> {
  // Smith's division: no overflow of |y|^2 for large y
  if (abs(y.x) >= abs(y.y)) {
    let r = y.y / y.x; let t = y.x + y.y * r;
    return vec2<f32>((x.x + x.y * r) / t, (x.y - x.x * r) / t);
  }
  let r = y.x / y.y; let t = y.x * r + y.y;
  return vec2<f32>((x.x * r + x.y) / t, (x.y * r - x.x) / t);
}
fn mag(x: vec2<f32>) -> f32 { return abs(x.x) + abs(x.y); }
fn zero(x: vec2<f32>) -> bool { return x.x == 0.0 && x.y == 0.0; }
const ONE = vec2<f32>(1.0, 0.0);""",
}


@functools.cache
def _shader(t: str = "f32") -> str:
    """The elimination of ``t`` elements (``f32``, or ``vec2<f32>`` for complex64)."""
    return f"""
@group(0) @binding(0) var<storage, read> prm: array<u32>;        // [batch, n, m, check id, trans]
@group(0) @binding(1) var<storage, read_write> a: array<{t}>;    // (batch, n, n): the matrices, overwritten by U
@group(0) @binding(2) var<storage, read_write> x: array<{t}>;    // (batch, n, m): B in, X out
@group(0) @binding(3) var<storage, read_write> det: array<{t}>;  // (batch,)
@group(0) @binding(4) var<storage, read_write> flag: array<atomic<u32>, 4>;
@group(0) @binding(5) var<storage, read_write> info: array<i32>; // (batch,): LAPACK getrf's info
{_ARITH[t]}

@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let b = gid.x + gid.y * nwg.x * {WG}u;
  if (b >= prm[0]) {{ return; }}
  let n = prm[1];
  let m = prm[2];
  let A0 = b * n * n;
  let X0 = b * n * m;
  var sign = 1.0;
  var d = ONE;
  var singular = false;
  var first = 0u;
  // trans: the RHS is left alone while A is factored (P A = L U, packed as getrf's, the pivots in pv), then
  // A^T X = B is solved as getrs(trans) does: U^T, L^T, the row swaps in reverse
  let trans = prm[4] != 0u;
  var pv: array<u32, {MAX_N}>;
  for (var k = 0u; k < n; k = k + 1u) {{
    var p = k;
    var best = mag(a[A0 + k * n + k]);
    for (var i = k + 1u; i < n; i = i + 1u) {{
      let v = mag(a[A0 + i * n + k]);
      if (v > best) {{ best = v; p = i; }}
    }}
    if (p != k) {{
      for (var j = 0u; j < n; j = j + 1u) {{
        let t = a[A0 + k * n + j]; a[A0 + k * n + j] = a[A0 + p * n + j]; a[A0 + p * n + j] = t;
      }}
      for (var j = 0u; j < select(m, 0u, trans); j = j + 1u) {{
        let t = x[X0 + k * m + j]; x[X0 + k * m + j] = x[X0 + p * m + j]; x[X0 + p * m + j] = t;
      }}
      sign = -sign;
    }}
    pv[k] = p;
    let piv = a[A0 + k * n + k];
    d = mul(d, piv);
    if (zero(piv)) {{ if (!singular) {{ first = k + 1u; }} singular = true; continue; }}
    for (var i = k + 1u; i < n; i = i + 1u) {{
      let f = dv(a[A0 + i * n + k], piv);
      a[A0 + i * n + k] = f;  // L's multiplier (the substitutions below read only U unless trans)
      if (zero(f)) {{ continue; }}
      for (var j = k + 1u; j < n; j = j + 1u) {{ a[A0 + i * n + j] = a[A0 + i * n + j] - mul(f, a[A0 + k * n + j]); }}
      for (var j = 0u; j < select(m, 0u, trans); j = j + 1u) {{ x[X0 + i * m + j] = x[X0 + i * m + j] - mul(f, x[X0 + k * m + j]); }}
    }}
  }}
  det[b] = sign * d;
  info[b] = i32(first);
  if (singular && prm[3] != 0u) {{ atomicCompareExchangeWeak(&flag[0], 0u, prm[3]); }}
  if (trans) {{
    for (var k = 0u; k < n; k = k + 1u) {{
      for (var j = 0u; j < m; j = j + 1u) {{
        var s = x[X0 + k * m + j];
        for (var i = 0u; i < k; i = i + 1u) {{ s = s - mul(a[A0 + i * n + k], x[X0 + i * m + j]); }}
        x[X0 + k * m + j] = dv(s, a[A0 + k * n + k]);
      }}
    }}
    for (var kk = 0u; kk < n; kk = kk + 1u) {{
      let k = n - 1u - kk;
      for (var j = 0u; j < m; j = j + 1u) {{
        var s = x[X0 + k * m + j];
        for (var i = k + 1u; i < n; i = i + 1u) {{ s = s - mul(a[A0 + i * n + k], x[X0 + i * m + j]); }}
        x[X0 + k * m + j] = s;
      }}
    }}
    for (var kk = 0u; kk < n; kk = kk + 1u) {{
      let k = n - 1u - kk;
      let p = pv[k];
      if (p == k) {{ continue; }}
      for (var j = 0u; j < m; j = j + 1u) {{
        let t = x[X0 + k * m + j]; x[X0 + k * m + j] = x[X0 + p * m + j]; x[X0 + p * m + j] = t;
      }}
    }}
    return;
  }}
  for (var kk = 0u; kk < n; kk = kk + 1u) {{
    let k = n - 1u - kk;
    let piv = a[A0 + k * n + k];
    for (var j = 0u; j < m; j = j + 1u) {{
      var s = x[X0 + k * m + j];
      for (var i = k + 1u; i < n; i = i + 1u) {{ s = s - mul(a[A0 + k * n + i], x[X0 + i * m + j]); }}
      x[X0 + k * m + j] = dv(s, piv);
    }}
  }}
}}"""


def by_batch(fn: Callable[..., Any], mats: Sequence[WArray | None], nbatch: int, per: int) -> Any:
    """``fn(*mats)`` over runs of the batch (the first ``nbatch`` dims of every matrix operand, one batch shape)
    small enough that every buffer ``fn`` makes for a run fits one binding: ``per`` bytes a matrix, the largest
    of them. Each run's operands are contiguous copies of its matrices (so ``fn`` binds whole buffers, as for a
    small batch), each run's outputs (a tensor or a tuple; those with a batch dim first) are copied into the
    whole batch's. A batch that fits, or a single matrix, is ``fn``'s alone: a matrix over a binding is then
    refused by the runtime, naming the op (``RT.op``)."""
    first = next(m for m in mats if m is not None)
    batch = first.shape[:nbatch]
    nb = math.prod(batch)
    room = RT.max_binding - RT.align
    if nb <= 1 or nb * per <= room:
        return fn(*mats)
    step = max(1, room // per)
    flats = [None if m is None else K.reshape_kernel(m, (nb, *m.shape[nbatch:])) for m in mats]
    outs: list[WArray | None] = []
    batched: list[bool] = []
    single = False
    for b0 in range(0, nb, step):
        b1 = min(nb, b0 + step)
        got = fn(*(None if f is None else K.contiguous_copy(chunks.narrow(f, 0, b0, b1)) for f in flats))
        single = not isinstance(got, tuple)
        parts: list[WArray | None] = [got] if single else list(got)
        if not outs:  # an output without the batch (qr's empty Q in mode 'r') is the first run's
            batched = [p is not None and p.shape[:1] == (b1 - b0,) for p in parts]
            outs = [RT.empty((nb, *p.shape[1:]), p.dtype) if p is not None and whole else p
                    for p, whole in zip(parts, batched)]
        for out, p, whole in zip(outs, parts, batched):
            if whole and out is not None and p is not None:
                K.assign(chunks.narrow(out, 0, b0, b1), p)
    res = [K._view(o, (*batch, *o.shape[1:]), contiguous_strides((*batch, *o.shape[1:])))
           if whole and o is not None else o for o, whole in zip(outs, batched)]
    return res[0] if single else tuple(res)


def _eliminate(op: str, a: WArray, rhs: WArray | None, singular: str,
               trans: bool = False) -> tuple[WArray | None, WArray, WArray]:
    """Run the elimination on copies of ``a`` (..., n, n) and ``rhs`` (..., n, m); returns (X, det, info), info
    LAPACK getrf's (int32, the 1-based index of the first zero pivot, else 0). ``singular``: the cause of the
    ``linalg_error_singular`` a zero pivot records (raised at the next sync), or "" for none. ``trans``: factor
    ``a``'s transpose and solve with it as LAPACK's getrs(trans) does (torch's ``left=False``: the info and the
    infinities of a singular matrix are those of the LU of A, not of A^T)."""
    if a.dtype not in (_F32, _C64):
        K._no_kernel(op, a.dtype)
    n = a.shape[-1]
    if n > MAX_N:
        fail("device_error_limit", op=op,
             problem=f"{n}x{n} matrices (one thread eliminates a matrix: at most {MAX_N}x{MAX_N} on WebGPU); "
                     "move the tensor to the CPU")
    m = rhs.shape[-1] if rhs is not None else 0
    per = np.dtype(a.dtype).itemsize * n * max(n, m, 1)  # the largest buffer a matrix needs: its copy, or X
    outer, RT.op = RT.op, op  # a binding over the adapter's limit is refused naming the op
    try:
        return by_batch(lambda a_, rhs_: _eliminate_run(op, a_, rhs_, singular, trans), [a, rhs], a.ndim - 2,
                        per)
    finally:
        RT.op = outer


def _eliminate_run(op: str, a: WArray, rhs: WArray | None, singular: str,
                   trans: bool) -> tuple[WArray | None, WArray, WArray]:
    n = a.shape[-1]
    batch = a.shape[:-2]
    nb = math.prod(batch)
    det = RT.empty(batch, a.dtype)
    m = rhs.shape[-1] if rhs is not None else 0
    out = RT.empty(rhs.shape, a.dtype) if rhs is not None else None
    if nb == 0 or det.st is None or n == 0:
        return out, det, K.full(batch, 0, _I32)
    info = RT.empty(batch, _I32)
    assert info.st is not None
    cid = RT.add_check("linalg_error_singular", op, cause=singular) if singular else 0
    step = max(1, MAX_WORK // (n * n))
    for lo in range(0, max(m, 1), step):  # one pass for the determinant alone (m = 0)
        work = K.contiguous_copy(K._view(a, a.shape, (*a.stride[:-2], a.stride[-1], a.stride[-2]), a.offset)
                                 if trans else a)
        if rhs is not None and out is not None and m:  # (no columns: the factorization alone, for det and info)
            cols = min(step, m - lo)
            x = K.contiguous_copy(K._view(rhs, (*rhs.shape[:-1], cols), rhs.stride, rhs.offset + lo * rhs.stride[-1]))
        else:
            cols, x = 0, RT.empty((1,), a.dtype)
        assert work.st is not None and x.st is not None
        RT.dispatch(_shader("vec2<f32>" if a.dtype == _C64 else "f32"), [work.st.buf, x.st.buf, det.st.buf, RT.flag, info.st.buf], [nb, n, cols, cid, int(trans)],
                    K._grid(nb))
        if out is not None and cols:
            K.assign(K._view(out, x.shape, out.stride, out.offset + lo * out.stride[-1]), x)
    return out, det, info


def inverse_kernel(a: WArray) -> WArray:
    n = a.shape[-1]
    eye = K.full(a.shape, 0, a.dtype)
    K.assign(K.diagonal_kernel(eye, 0, a.ndim - 2, a.ndim - 1), 1.0)
    x, _, _ = _eliminate("linalg.inv", a, eye,
                      "The diagonal element is zero, the inversion could not be completed" if n else "")
    assert x is not None
    return x


def solve_kernel(a: WArray, b: WArray) -> WArray:
    x, _, _ = _eliminate("linalg.solve", a, b, "The solver failed")
    assert x is not None
    return x


def det_kernel(a: WArray) -> WArray:
    if a.shape[-1] == 0:
        return K.full(a.shape[:-2], 1.0, a.dtype)
    return _eliminate("linalg.det", a, None, "")[1]


def solve_ex(a: WArray, b: WArray, trans: bool = False) -> tuple[WArray, WArray]:
    """``linalg.solve_ex``'s (X, info) for ``a`` (..., n, n) and ``b`` (..., n, m) of one batch shape: nothing is
    checked or read back (a singular matrix gives LU's infinities and NaNs, as torch's, and its pivot in info)."""
    x, _, info = _eliminate("linalg.solve_ex", a, b, "", trans)
    assert x is not None
    return x, info


def table() -> dict[str, Any]:
    """The kernels of this module by primitive name, for :func:`.kernels.register`."""
    return {"inverse": inverse_kernel, "linalg_solve": solve_kernel, "det": det_kernel,
            "linalg_solve_ex_result": lambda a, b, value, **_: value}
