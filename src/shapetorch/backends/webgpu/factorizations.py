"""WebGPU kernels of the matrix factorizations: Cholesky, LU with partial pivoting (and slogdet from it, and
the permutation of ``lu_solve`` from its pivots), Householder QR, the symmetric eigendecomposition (cyclic
Jacobi), the general eigendecomposition of real matrices (Hessenberg reduction, Francis double-shift QR to the
real Schur form, back substitution), the SVD (one-sided Jacobi), LDL^T with Bunch-Kaufman pivoting, and
``matrix_exp`` (scaling and squaring with a Pade approximant, in the matmul and solve kernels).

The op layer (``ops/linalg.py``) computes a factorization's outputs first and then makes each output a
primitive whose kernel hands the value back (so that each output's gradient is its own part of torch's
formula); :func:`factor` is where a WebGPU tensor's outputs are computed, on the device, and the primitives'
kernels here hand them back as the CPU's do.

One workgroup of :data:`LANES` invocations factors one matrix, a lane per row or per column, the matrix in
a storage buffer and the barriers between the steps. lavapipe counts every loop iteration of an invocation
against one bound of 65,535 (measured: two nested loops of 100 and 1,000 iterations stopped after 65,405),
so the work is spread over the lanes until each lane's loops stay far below it: matrices up to
:data:`MAX_N` in each dim (larger ones are a ``device_error_limit``), at most :data:`MAX_SWEEPS` Jacobi
sweeps. Every step is float32 (WGSL has no f64), where the CPU calls LAPACK in the tensor's precision.

Errors found on the device are raised at the next sync, as the other device-side checks: a matrix that is not
positive-definite for ``cholesky`` (torch's ``linalg_error_not_positive_definite``, naming the order of the
failing leading minor of one of the failing matrices), a NaN given to ``svd`` (``linalg_error_not_converged``),
a non-finite matrix given to ``eig`` or one its QR iteration does not reduce (the same code).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..._errors import fail
from . import chunks, linalg_kernels
from . import codegen as G
from . import kernels as K
from .runtime import RT, WArray, to_host

LANES = 64  # invocations per matrix
MAX_N = 64  # rows and columns, one lane each
MAX_SWEEPS = 15  # Jacobi sweeps: 15 * 64 * 63 / 2 rotations stay under lavapipe's loop bound
_F32 = np.dtype(np.float32)
_I32 = np.dtype(np.int32)
_C64 = np.dtype(np.complex64)

_HEAD = """
@group(0) @binding(0) var<storage, read> prm: array<u32>;
"""
_MAIN = f"""@compute @workgroup_size({LANES})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {{
  let b = wid.x + wid.y * nwg.x;
  if (b >= prm[0]) {{ return; }}"""


def _sync() -> str:
    return "storageBarrier(); workgroupBarrier();"


def _tree(names: tuple[str, ...]) -> str:
    """Straight-line sums of the workgroup arrays ``names`` (LANES entries) into entry 0: no loop, so no
    iterations counted."""
    out = []
    step = LANES // 2
    while step:
        adds = " ".join(f"{n}[lid] = {n}[lid] + {n}[lid + {step}u];" for n in names)
        out.append(f"  if (lid < {step}u) {{ {adds} }}\n  workgroupBarrier();")
        step //= 2
    return "\n".join(out)


def _limit(op: str, *dims: int) -> None:
    if max(dims, default=0) > MAX_N:
        fail("device_error_limit", op=op,
             problem=f"a {'x'.join(map(str, dims))} matrix (one workgroup factors a matrix, a lane per row: at most "
                     f"{MAX_N} rows and columns on WebGPU); move the tensor to the CPU")


def _float32(op: str, a: WArray) -> None:
    if a.dtype != _F32:
        K._no_kernel(op, a.dtype)


def _groups(n: int) -> tuple[int, int, int]:
    return K._grid(n, 1)


def _batch(a: WArray) -> int:
    return math.prod(a.shape[:-2])


def _work(a: WArray) -> WArray:
    """A contiguous float32 copy the kernel may overwrite."""
    return K.contiguous_copy(a)


# -- Cholesky ---------------------------------------------------------------------------------------------
@functools.cache
def _cholesky_shader() -> str:
    return f"""{_HEAD}
@group(0) @binding(1) var<storage, read_write> a: array<f32>;   // (batch, n, n): A in, L out
@group(0) @binding(2) var<storage, read_write> info: array<i32>;
{_MAIN}
  let n = prm[1];
  let A0 = b * n * n;
  if (lid == 0u) {{ info[b] = 0; }}
  {_sync()}
  for (var j = 0u; j < n; j = j + 1u) {{
    if (lid == j) {{
      var d = a[A0 + j * n + j];
      for (var k = 0u; k < j; k = k + 1u) {{ d = d - a[A0 + j * n + k] * a[A0 + j * n + k]; }}
      // LAPACK's potrf stops at a minor that is not positive (or NaN); the rest is still computed here
      if (!(d > 0.0) && info[b] == 0) {{ info[b] = i32(j) + 1; }}
      a[A0 + j * n + j] = sqrt(d);
    }}
    {_sync()}
    if (lid > j && lid < n) {{
      var s = a[A0 + lid * n + j];
      for (var k = 0u; k < j; k = k + 1u) {{ s = s - a[A0 + lid * n + k] * a[A0 + j * n + k]; }}
      a[A0 + lid * n + j] = s / a[A0 + j * n + j];
    }}
    {_sync()}
  }}
  if (lid < n) {{
    for (var c = lid + 1u; c < n; c = c + 1u) {{ a[A0 + lid * n + c] = 0.0; }}
  }}
}}"""


def cholesky_ex(a: WArray, upper: bool, check_errors: bool, op: str = "linalg.cholesky_ex") -> tuple[WArray, WArray]:
    """(L, info): info is the order of the first leading minor that is not positive-definite, else 0 (a check
    raised at the next sync with ``check_errors``)."""
    _float32(op, a)
    n = a.shape[-1]
    _limit(op, n, n)
    nb = _batch(a)
    if nb == 0 or n == 0:
        return K.contiguous_copy(a), K.full(a.shape[:-2], 0, _I32)
    L = _work(_transpose(a) if upper else a)  # upper: from the upper triangle (A^T's lower one), as torch
    info = RT.empty(a.shape[:-2], _I32)
    assert L.st is not None and info.st is not None
    RT.dispatch(_cholesky_shader(), [L.st.buf, info.st.buf], [nb, n], _groups(nb))
    if check_errors:
        K.check_range(info, 0, 1, "linalg_error_not_positive_definite", op, order=None)
    return (K.contiguous_copy(_transpose(L)) if upper else L), info


def cholesky(a: WArray, upper: bool) -> WArray:
    return cholesky_ex(a, upper, True, "linalg.cholesky")[0]


@functools.cache
def _permutation_shader() -> str:
    return f"""{_HEAD}
@group(0) @binding(1) var<storage, read> piv: array<i32>;     // (batch, k): 1-based row swaps, in order
@group(0) @binding(2) var<storage, read_write> P: array<f32>; // (batch, m, m)
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let b = gid.x + gid.y * nwg.x * 64u;
  if (b >= prm[0]) {{ return; }}
  let m = prm[1];
  let k = prm[2];
  var perm: array<i32, {MAX_N}>;
  for (var i = 0u; i < m; i = i + 1u) {{ perm[i] = i32(i); }}
  for (var i = 0u; i < k; i = i + 1u) {{
    let p = u32(clamp(piv[prm[3] + b * k + i] - 1, 0, i32(m) - 1));
    let t = perm[i]; perm[i] = perm[p]; perm[p] = t;
  }}
  for (var r = 0u; r < m; r = r + 1u) {{
    for (var i = 0u; i < m; i = i + 1u) {{ P[b * m * m + r * m + i] = select(0.0, 1.0, perm[i] == i32(r)); }}
  }}
}}"""


def permutation(piv: WArray, m: int) -> WArray:
    """P of ``A = P L U`` from LAPACK's 1-based row swaps (as ``lu_factor`` gives them)."""
    _limit("linalg.lu_solve", m)
    batch = piv.shape[:-1]
    k = piv.shape[-1]
    P = RT.empty((*batch, m, m), _F32)
    nb = math.prod(batch)
    src = piv if piv.contiguous and piv.dtype == _I32 else K.contiguous_copy(K.cast(piv, _I32))
    if nb and m and P.st is not None and src.st is not None:
        RT.dispatch(_permutation_shader(), [src.st.buf, P.st.buf], [nb, m, k, src.offset], K._grid(nb, 64))
    return P


# -- LU with partial pivoting ------------------------------------------------------------------------------
@functools.cache
def _lu_shader() -> str:
    return f"""{_HEAD}
@group(0) @binding(1) var<storage, read_write> a: array<f32>;    // (batch, m, n): A in, packed LU out
@group(0) @binding(2) var<storage, read_write> L: array<f32>;    // (batch, m, k)
@group(0) @binding(3) var<storage, read_write> U: array<f32>;    // (batch, k, n)
@group(0) @binding(4) var<storage, read_write> P: array<f32>;    // (batch, m, m)
@group(0) @binding(5) var<storage, read_write> ints: array<i32>; // (batch, k + 1 + m): pivots, info, perm
@group(0) @binding(6) var<storage, read_write> det: array<f32>;  // (batch, 2): sign, log|det| (square)
var<workgroup> piv_row: u32;
{_MAIN}
  let m = prm[1];
  let n = prm[2];
  let k = min(m, n);
  let A0 = b * m * n;
  let I0 = b * (k + 1u + m);
  let perm = I0 + k + 1u;
  if (lid < m) {{ ints[perm + lid] = i32(lid); }}
  if (lid == 0u) {{ ints[I0 + k] = 0; }}
  {_sync()}
  for (var j = 0u; j < k; j = j + 1u) {{
    if (lid == 0u) {{
      // the first row of the largest magnitude (LAPACK's idamax)
      var p = j;
      var best = abs(a[A0 + j * n + j]);
      for (var i = j + 1u; i < m; i = i + 1u) {{
        let v = abs(a[A0 + i * n + j]);
        if (v > best) {{ best = v; p = i; }}
      }}
      ints[I0 + j] = i32(p) + 1;
      if (a[A0 + p * n + j] == 0.0 && ints[I0 + k] == 0) {{ ints[I0 + k] = i32(j) + 1; }}
      let t = ints[perm + j]; ints[perm + j] = ints[perm + p]; ints[perm + p] = t;
      piv_row = p;
    }}
    {_sync()}
    let p = piv_row;
    if (lid < n && p != j) {{
      let t = a[A0 + j * n + lid]; a[A0 + j * n + lid] = a[A0 + p * n + lid]; a[A0 + p * n + lid] = t;
    }}
    {_sync()}
    if (lid > j && lid < m) {{
      let pv = a[A0 + j * n + j];
      if (pv != 0.0) {{
        let f = a[A0 + lid * n + j] / pv;
        a[A0 + lid * n + j] = f;
        for (var c = j + 1u; c < n; c = c + 1u) {{ a[A0 + lid * n + c] = a[A0 + lid * n + c] - f * a[A0 + j * n + c]; }}
      }}
    }}
    {_sync()}
  }}
  if (lid < m) {{
    for (var c = 0u; c < k; c = c + 1u) {{
      L[b * m * k + lid * k + c] = select(select(0.0, 1.0, c == lid), a[A0 + lid * n + c], lid > c);
    }}
    // P[r, i] = 1 where perm[i] == r: A = P L U
    for (var i = 0u; i < m; i = i + 1u) {{
      P[b * m * m + lid * m + i] = select(0.0, 1.0, ints[perm + i] == i32(lid));
    }}
  }}
  if (lid < k) {{
    for (var c = 0u; c < n; c = c + 1u) {{
      U[b * k * n + lid * n + c] = select(0.0, a[A0 + lid * n + c], c >= lid);
    }}
  }}
  if (lid == 0u && m == n) {{
    var sign = 1.0;
    var logabs = 0.0;
    var zero = false;
    for (var j = 0u; j < k; j = j + 1u) {{
      let u = a[A0 + j * n + j];
      if (ints[I0 + j] != i32(j) + 1) {{ sign = -sign; }}
      if (u < 0.0) {{ sign = -sign; }}
      if (u == 0.0) {{ zero = true; }} else {{ logabs = logabs + log(abs(u)); }}
    }}
    det[2u * b] = select(sign, 0.0, zero);
    det[2u * b + 1u] = select(logabs, -bitcast<f32>(0x7f800000u), zero);
  }}
}}"""


def lu(a: WArray) -> tuple[WArray, WArray, WArray, WArray, WArray, WArray, WArray]:
    """(P, L, U, pivots, info, sign, logabsdet) of ``A = P L U`` (LAPACK's getrf pivoting: the first row of the
    largest magnitude); sign and logabsdet only mean something for square matrices."""
    op = "linalg.lu"
    _float32(op, a)
    m, n = a.shape[-2:]
    _limit(op, m, n)
    k = min(m, n)
    batch = a.shape[:-2]
    nb = _batch(a)
    L, U, P = RT.empty((*batch, m, k), _F32), RT.empty((*batch, k, n), _F32), RT.empty((*batch, m, m), _F32)
    ints = RT.empty((*batch, k + 1 + m), np.dtype(np.int64))
    det = RT.empty((*batch, 2), _F32)
    if nb == 0 or m == 0 or n == 0:
        P = K.expand_kernel(K.eye(m, m, _F32), (*batch, m, m)) if m else P
        piv = K.arange(1, 1, k, _I32) if k else RT.empty((k,), _I32)
        return (K.contiguous_copy(P), L, U, K.contiguous_copy(K.expand_kernel(piv, (*batch, k))),
                K.full(batch, 0, _I32), K.full(batch, 1.0, _F32), K.full(batch, 0.0, _F32))
    work = _work(a)
    assert all(x.st is not None for x in (work, L, U, P, ints, det))
    RT.dispatch(_lu_shader(), [x.st.buf for x in (work, L, U, P, ints, det) if x.st is not None], [nb, m, n],
                _groups(nb))
    step = ints.stride[-1]
    piv = K.cast(K._view(ints, (*batch, k), ints.stride[:-1] + (step,)), _I32)
    info = K.cast(K._view(ints, batch, ints.stride[:-1], ints.offset + k), _I32)
    sign = K._view(det, batch, det.stride[:-1], det.offset)
    logabs = K._view(det, batch, det.stride[:-1], det.offset + 1)
    return P, L, U, piv, info, K.contiguous_copy(sign), K.contiguous_copy(logabs)


def slogdet(a: WArray) -> tuple[WArray, WArray]:
    _float32("linalg.slogdet", a)
    _, _, _, _, _, sign, logabs = lu(a)
    return sign, logabs


# -- Householder QR ------------------------------------------------------------------------------------------
@functools.cache
def _qr_shader() -> str:
    return f"""{_HEAD}
@group(0) @binding(1) var<storage, read_write> a: array<f32>;  // (batch, m, n): A in, reflectors below the diagonal
@group(0) @binding(2) var<storage, read_write> Q: array<f32>;  // (batch, m, qc)
@group(0) @binding(3) var<storage, read_write> R: array<f32>;  // (batch, rr, n)
var<workgroup> tau: array<f32, {LANES}>;
var<workgroup> scale: f32;
var<workgroup> beta: f32;
{_MAIN}
  let m = prm[1];
  let n = prm[2];
  let qc = prm[3];
  let rr = prm[4];
  let k = min(m, n);
  let A0 = b * m * n;
  for (var j = 0u; j < k; j = j + 1u) {{
    if (lid == 0u) {{
      // LAPACK's larfg: H = I - tau v v^T with v = (1, x / (alpha - beta)), beta = -sign(alpha) |(alpha, x)|
      let alpha = a[A0 + j * n + j];
      var xn = 0.0;
      for (var i = j + 1u; i < m; i = i + 1u) {{ xn = xn + a[A0 + i * n + j] * a[A0 + i * n + j]; }}
      if (xn == 0.0) {{
        tau[j] = 0.0; scale = 0.0; beta = alpha;
      }} else {{
        let r = sqrt(alpha * alpha + xn);
        let bt = select(r, -r, alpha >= 0.0);
        tau[j] = (bt - alpha) / bt; scale = 1.0 / (alpha - bt); beta = bt;
      }}
    }}
    {_sync()}
    if (lid > j && lid < m) {{ a[A0 + lid * n + j] = a[A0 + lid * n + j] * scale; }}
    {_sync()}
    if (lid > j && lid < n) {{
      var s = a[A0 + j * n + lid];
      for (var i = j + 1u; i < m; i = i + 1u) {{ s = s + a[A0 + i * n + j] * a[A0 + i * n + lid]; }}
      s = s * tau[j];
      a[A0 + j * n + lid] = a[A0 + j * n + lid] - s;
      for (var i = j + 1u; i < m; i = i + 1u) {{ a[A0 + i * n + lid] = a[A0 + i * n + lid] - s * a[A0 + i * n + j]; }}
    }}
    {_sync()}
    if (lid == 0u) {{ a[A0 + j * n + j] = beta; }}
    {_sync()}
  }}
  if (lid < n) {{
    for (var r = 0u; r < rr; r = r + 1u) {{ R[b * rr * n + r * n + lid] = select(0.0, a[A0 + r * n + lid], r <= lid); }}
  }}
  if (lid < qc) {{
    // column lid of H_1 ... H_k applied to the identity's column (LAPACK's orgqr, backwards)
    let Q0 = b * m * qc;
    for (var i = 0u; i < m; i = i + 1u) {{ Q[Q0 + i * qc + lid] = select(0.0, 1.0, i == lid); }}
    for (var jj = 0u; jj < k; jj = jj + 1u) {{
      let j = k - 1u - jj;
      var s = Q[Q0 + j * qc + lid];
      for (var i = j + 1u; i < m; i = i + 1u) {{ s = s + a[A0 + i * n + j] * Q[Q0 + i * qc + lid]; }}
      s = s * tau[j];
      Q[Q0 + j * qc + lid] = Q[Q0 + j * qc + lid] - s;
      for (var i = j + 1u; i < m; i = i + 1u) {{ Q[Q0 + i * qc + lid] = Q[Q0 + i * qc + lid] - s * a[A0 + i * n + j]; }}
    }}
  }}
}}"""


def qr(a: WArray, mode: str) -> tuple[WArray, WArray]:
    """(Q, R) with LAPACK's geqrf/orgqr signs (R's diagonal is -sign(a_jj) |column|), as torch's; mode 'r'
    gives an empty Q."""
    op = "linalg.qr"
    _float32(op, a)
    m, n = a.shape[-2:]
    _limit(op, m, n)
    k = min(m, n)
    batch = a.shape[:-2]
    qc = m if mode == "complete" else k
    rr = m if mode == "complete" else k
    Q, R = RT.empty((*batch, m, qc), _F32), RT.empty((*batch, rr, n), _F32)
    nb = _batch(a)
    if nb and m and n:
        work = _work(a)
        assert work.st is not None and Q.st is not None and R.st is not None
        RT.dispatch(_qr_shader(), [work.st.buf, Q.st.buf, R.st.buf], [nb, m, n, qc, rr], _groups(nb))
    elif nb and m and qc:  # n == 0 (complete): Q is the identity
        Q = K.contiguous_copy(K.expand_kernel(K.eye(m, qc, _F32), (*batch, m, qc)))
    if mode == "r":
        Q = RT.empty((0,), _F32)
    return Q, R


# -- symmetric eigendecomposition: cyclic Jacobi -----------------------------------------------------------
@functools.cache
def _eigh_shader() -> str:
    return f"""{_HEAD}
@group(0) @binding(1) var<storage, read> src: array<f32>;       // (batch, n, n) contiguous
@group(0) @binding(2) var<storage, read_write> a: array<f32>;   // (batch, n, n): the work matrix
@group(0) @binding(3) var<storage, read_write> V: array<f32>;   // (batch, n, n): the rotations
@group(0) @binding(4) var<storage, read_write> w: array<f32>;   // (batch, n): eigenvalues, ascending
@group(0) @binding(5) var<storage, read_write> vo: array<f32>;  // (batch, n, n): eigenvectors (columns), sorted
var<workgroup> off: array<f32, {LANES}>;
var<workgroup> tot: array<f32, {LANES}>;
var<workgroup> rot: array<f32, 6>;
var<workgroup> done: u32;
var<workgroup> order: array<u32, {LANES}>;
{_MAIN}
  let n = prm[1];
  let lower = prm[2] != 0u;
  let A0 = b * n * n;
  if (lid < n) {{
    for (var c = 0u; c < n; c = c + 1u) {{
      // one triangle is read (UPLO), as LAPACK's syevd
      let r0 = select(min(lid, c), max(lid, c), lower);
      let c0 = select(max(lid, c), min(lid, c), lower);
      a[A0 + lid * n + c] = src[A0 + r0 * n + c0];
      V[A0 + lid * n + c] = select(0.0, 1.0, lid == c);
    }}
  }}
  {_sync()}
  for (var sweep = 0u; sweep < {MAX_SWEEPS}u; sweep = sweep + 1u) {{
    var o = 0.0;
    var t = 0.0;
    if (lid < n) {{
      for (var c = 0u; c < n; c = c + 1u) {{
        let v = a[A0 + lid * n + c];
        t = t + v * v;
        if (c != lid) {{ o = o + v * v; }}
      }}
    }}
    off[lid] = o;
    tot[lid] = t;
    workgroupBarrier();
{_tree(("off", "tot"))}
    // converged when the off-diagonal part is at float32's rounding of the whole
    if (lid == 0u) {{ done = select(0u, 1u, off[0] <= 1e-13 * tot[0]); }}
    if (workgroupUniformLoad(&done) != 0u) {{ break; }}
    for (var p = 0u; p + 1u < n; p = p + 1u) {{
      for (var q = p + 1u; q < n; q = q + 1u) {{
        if (lid == 0u) {{
          let app = a[A0 + p * n + p];
          let aqq = a[A0 + q * n + q];
          let apq = a[A0 + p * n + q];
          var c = 1.0;
          var s = 0.0;
          var tt = 0.0;
          if (abs(apq) > 1e-37) {{
            let theta = (aqq - app) / (2.0 * apq);
            tt = select(-1.0, 1.0, theta >= 0.0) / (abs(theta) + sqrt(1.0 + theta * theta));
            c = 1.0 / sqrt(1.0 + tt * tt);
            s = tt * c;
          }}
          rot[0] = c; rot[1] = s; rot[2] = tt; rot[3] = app; rot[4] = aqq; rot[5] = apq;
        }}
        {_sync()}
        let c = rot[0];
        let s = rot[1];
        if (lid < n) {{
          if (lid != p && lid != q) {{
            let akp = a[A0 + lid * n + p];
            let akq = a[A0 + lid * n + q];
            let np = c * akp - s * akq;
            let nq = s * akp + c * akq;
            a[A0 + lid * n + p] = np; a[A0 + p * n + lid] = np;
            a[A0 + lid * n + q] = nq; a[A0 + q * n + lid] = nq;
          }} else if (lid == p) {{
            a[A0 + p * n + p] = rot[3] - rot[2] * rot[5];
            a[A0 + q * n + q] = rot[4] + rot[2] * rot[5];
            a[A0 + p * n + q] = 0.0; a[A0 + q * n + p] = 0.0;
          }}
          let vkp = V[A0 + lid * n + p];
          let vkq = V[A0 + lid * n + q];
          V[A0 + lid * n + p] = c * vkp - s * vkq;
          V[A0 + lid * n + q] = s * vkp + c * vkq;
        }}
        {_sync()}
      }}
    }}
  }}
  if (lid == 0u) {{
    // ascending, a stable selection of indices
    for (var i = 0u; i < n; i = i + 1u) {{ order[i] = i; }}
    for (var i = 0u; i < n; i = i + 1u) {{
      var best = i;
      for (var j = i + 1u; j < n; j = j + 1u) {{
        if (a[A0 + order[j] * n + order[j]] < a[A0 + order[best] * n + order[best]]) {{ best = j; }}
      }}
      let t = order[i]; order[i] = order[best]; order[best] = t;
    }}
  }}
  workgroupBarrier();
  if (lid < n) {{
    w[b * n + lid] = a[A0 + order[lid] * n + order[lid]];
    for (var c = 0u; c < n; c = c + 1u) {{ vo[A0 + lid * n + c] = V[A0 + lid * n + order[c]]; }}
  }}
}}"""


def eigh(a: WArray, UPLO: str) -> tuple[WArray, WArray]:
    op = "linalg.eigh"
    _float32(op, a)
    n = a.shape[-1]
    _limit(op, n, n)
    batch = a.shape[:-2]
    nb = _batch(a)
    w, vo = RT.empty((*batch, n), _F32), RT.empty(a.shape, _F32)
    if nb == 0 or n == 0:
        return w, vo
    src = a if a.contiguous and a.offset == 0 else K.contiguous_copy(a)
    work, V = RT.empty(a.shape, _F32), RT.empty(a.shape, _F32)
    bufs = [x.st.buf for x in (src, work, V, w, vo) if x.st is not None]
    RT.dispatch(_eigh_shader(), bufs, [nb, n, int(UPLO == "L")], _groups(nb))
    return w, vo


# -- general (nonsymmetric) eigendecomposition: Hessenberg, Francis double-shift QR, back substitution -------
EIG_STEP_BUDGET = 24000  # bulge-chase steps per matrix: with the reduction and the vectors, under lavapipe's bound
EIG_MAX_ITS = 40  # double-shift sweeps without a deflation (exceptional shifts at the 10th, 20th and 30th)


@functools.cache
def _eig_shader() -> str:
    sync = _sync()
    return f"""{_HEAD}
@group(0) @binding(1) var<storage, read_write> H: array<f32>;        // (batch, n, n): A in, its real Schur form T
@group(0) @binding(2) var<storage, read_write> Z: array<f32>;        // (batch, n, n): the Schur vectors
@group(0) @binding(3) var<storage, read_write> X: array<vec2<f32>>;  // (batch, n, n): T's eigenvectors (columns)
@group(0) @binding(4) var<storage, read_write> w: array<vec2<f32>>;  // (batch, n): eigenvalues, from prm[3]
@group(0) @binding(5) var<storage, read_write> V: array<vec2<f32>>;  // (batch, n, n): unit eigenvectors, from prm[2]
@group(0) @binding(6) var<storage, read_write> info: array<i32>;     // (batch): 1 when not converged / not finite
var<workgroup> red: array<f32, {LANES}>;
var<workgroup> vv: array<f32, {LANES}>;
var<workgroup> wr: array<f32, {LANES}>;
var<workgroup> wi: array<f32, {LANES}>;
var<workgroup> refl: array<f32, 3>;  // a 2x2 block's rotation (cos, sin); [2]: a Hessenberg reflector's tau
var<workgroup> first: array<f32, 3>; // the first column of the double shift's polynomial in H
var<workgroup> lsmall: atomic<u32>;
var<workgroup> whi: i32;   // the last row of the unreduced window, -1 when done
var<workgroup> wl: u32;    // its first row
var<workgroup> act: u32;   // 0: deflated, 1: a double-shift sweep, 2: a 2x2 block's rotation, 3: stop
var<workgroup> wsc: f32;   // the power of two A was divided by
var<workgroup> dsc: array<f32, {LANES}>;  // the balancing's row scales D (A = D B D^-1), powers of two
var<workgroup> bal: f32;   // the balancing step's factor
var<workgroup> noconv: u32;
var<workgroup> its: u32;
var<workgroup> steps: u32;

{G.HELPERS}

{_MAIN}
  let n = prm[1];
  let A0 = b * n * n;
  let EPS = 1.1920929e-7;
  let SMALL = 1e-30;  // LAPACK's smlnum: safe minimum over the precision, times a window's order (A is ~1)
  // not finite: torch refuses before LAPACK runs; the largest magnitude sets a power-of-two scale (exact), so
  // that the shifts' products neither overflow nor underflow
  var amax = 0.0;
  var bad = 0.0;
  if (lid < n) {{
    for (var c = 0u; c < n; c = c + 1u) {{
      let v = H[A0 + lid * n + c];
      if ((bitcast<u32>(v) & 0x7f800000u) == 0x7f800000u) {{ bad = 1.0; }}
      amax = max(amax, abs(v));
      Z[A0 + lid * n + c] = select(0.0, 1.0, lid == c);
    }}
  }}
  red[lid] = amax;
  vv[lid] = bad;
  workgroupBarrier();
  if (lid == 0u) {{
    var m = 0.0;
    var nb = 0.0;
    for (var i = 0u; i < {LANES}u; i = i + 1u) {{ m = max(m, red[i]); nb = max(nb, vv[i]); }}
    wsc = select(1.0, exp2(floor(log2(m))), m > 0.0 && nb == 0.0);
    info[b] = i32(nb);
    whi = select(i32(n) - 1, -1, nb != 0.0);
    its = 0u;
    steps = 0u;
  }}
  let sc = workgroupUniformLoad(&wsc);
  if (lid < n) {{
    for (var c = 0u; c < n; c = c + 1u) {{ H[A0 + lid * n + c] = H[A0 + lid * n + c] / sc; }}
  }}
  dsc[lid] = 1.0;
  {sync}
  // balancing, as LAPACK's gebal (job 'S', the scaling; geev runs it before the reduction): row i divided and
  // column i multiplied by a power of two f (exact) that brings the 2-norms c of column i and r of row i within a
  // factor of 2 of each other, kept when c + r shrinks below 0.95 of its value, in sweeps until none is kept.
  // Without it a badly scaled matrix (D M D^-1, D spread over 2^-6..2^6) lost every digit: the QR iteration's error
  // is float32's rounding times the matrix's norm, and the norm is what balancing brings down. LAPACK's two loops
  // (f doubled while c < r / 2, halved while c / 2 >= r) are counted in closed form
  for (var sweep = 0u; sweep < 16u; sweep = sweep + 1u) {{
    if (lid == 0u) {{ noconv = 0u; }}
    for (var i = 0u; i < n; i = i + 1u) {{
      var cc = 0.0;
      var rr = 0.0;
      if (lid < n) {{
        let x = H[A0 + lid * n + i];
        let y = H[A0 + i * n + lid];
        cc = x * x;
        rr = y * y;
      }}
      red[lid] = cc;
      vv[lid] = rr;
      workgroupBarrier();
{_tree(("red", "vv"))}
      if (lid == 0u) {{
        let c = sqrt(red[0]);
        let r = sqrt(vv[0]);
        var f = 1.0;
        if (c > 0.0 && r > 0.0) {{
          var k = 0.0;
          if (c < r * 0.5) {{ k = ceil((log2(r / c) - 1.0) * 0.5); }}
          else if (c * 0.5 >= r) {{ k = -(floor((log2(c / r) - 1.0) * 0.5) + 1.0); }}
          let g = exp2(k);
          if (k != 0.0 && c * g + r / g < 0.95 * (c + r)) {{ f = g; noconv = 1u; }}
        }}
        bal = f;
      }}
      let f = workgroupUniformLoad(&bal);
      if (f != 1.0 && lid < n) {{ H[A0 + i * n + lid] = H[A0 + i * n + lid] / f; }}
      {sync}
      if (f != 1.0 && lid < n) {{ H[A0 + lid * n + i] = H[A0 + lid * n + i] * f; }}
      if (lid == 0u) {{ dsc[i] = dsc[i] * f; }}
      {sync}
    }}
    if (workgroupUniformLoad(&noconv) == 0u) {{ break; }}
  }}
  // Householder reduction to upper Hessenberg form, H = Q^T A Q, Q accumulated in Z
  for (var k = 0u; k + 2u < n; k = k + 1u) {{
    if (lid == 0u) {{
      let alpha = H[A0 + (k + 1u) * n + k];
      var xn = 0.0;
      for (var i = k + 2u; i < n; i = i + 1u) {{ xn = xn + H[A0 + i * n + k] * H[A0 + i * n + k]; }}
      var t = 0.0;
      var s = 0.0;
      var beta = alpha;
      if (xn != 0.0) {{
        let r = sqrt(alpha * alpha + xn);
        beta = select(r, -r, alpha >= 0.0);
        t = (beta - alpha) / beta;
        s = 1.0 / (alpha - beta);
      }}
      refl[2] = t;
      vv[k + 1u] = 1.0;
      H[A0 + (k + 1u) * n + k] = beta;
      for (var i = k + 2u; i < n; i = i + 1u) {{ vv[i] = H[A0 + i * n + k] * s; H[A0 + i * n + k] = 0.0; }}
    }}
    {sync}
    let t = refl[2];
    if (lid > k && lid < n) {{  // the rows k+1.. of column lid
      var s = 0.0;
      for (var i = k + 1u; i < n; i = i + 1u) {{ s = s + vv[i] * H[A0 + i * n + lid]; }}
      s = s * t;
      for (var i = k + 1u; i < n; i = i + 1u) {{ H[A0 + i * n + lid] = H[A0 + i * n + lid] - s * vv[i]; }}
    }}
    {sync}
    if (lid < n) {{  // the columns k+1.. of row lid, and of Z's
      var s = 0.0;
      var sz = 0.0;
      for (var j = k + 1u; j < n; j = j + 1u) {{
        s = s + H[A0 + lid * n + j] * vv[j];
        sz = sz + Z[A0 + lid * n + j] * vv[j];
      }}
      s = s * t;
      sz = sz * t;
      for (var j = k + 1u; j < n; j = j + 1u) {{
        H[A0 + lid * n + j] = H[A0 + lid * n + j] - s * vv[j];
        Z[A0 + lid * n + j] = Z[A0 + lid * n + j] - sz * vv[j];
      }}
    }}
    {sync}
  }}
  // Francis double-shift QR on the window [l, hi] to the real Schur form (all of T and Z kept up to date, for
  // the eigenvectors); a window of 1 or 2 rows deflates
  loop {{
    if (lid == 0u) {{ atomicStore(&lsmall, 0u); }}
    {sync}
    let hi = workgroupUniformLoad(&whi);
    if (hi < 0) {{ break; }}
    let uh = u32(hi);
    if (lid >= 1u && lid <= uh) {{
      // a negligible subdiagonal element: LAPACK dlahqr's test (Ahues and Tisseur's beside the classic one), so
      // that blocks deflate where LAPACK's do and the eigenvalues mostly come in its order
      let k = lid;
      let s = abs(H[A0 + k * n + k - 1u]);
      let hkk = H[A0 + k * n + k];
      let hpp = H[A0 + (k - 1u) * n + k - 1u];
      var t = abs(hpp) + abs(hkk);
      if (t == 0.0) {{
        if (k >= 2u) {{ t = t + abs(H[A0 + (k - 1u) * n + k - 2u]); }}
        if (k + 1u <= uh) {{ t = t + abs(H[A0 + (k + 1u) * n + k]); }}
      }}
      var small = s <= SMALL;
      if (!small && s <= EPS * t) {{
        let up = abs(H[A0 + (k - 1u) * n + k]);
        let ab = max(s, up);
        let ba = min(s, up);
        let aa = max(abs(hkk), abs(hpp - hkk));
        let bb = min(abs(hkk), abs(hpp - hkk));
        let ss = aa + ab;
        small = ba * (ab / ss) <= max(SMALL, EPS * (bb * (aa / ss)));
      }}
      if (small) {{ atomicMax(&lsmall, lid); }}
    }}
    {sync}
    if (lid == 0u) {{
      let l = atomicLoad(&lsmall);
      if (l > 0u) {{ H[A0 + l * n + l - 1u] = 0.0; }}
      act = 0u;
      if (l == uh) {{
        wr[uh] = H[A0 + uh * n + uh]; wi[uh] = 0.0;
        whi = hi - 1; its = 0u;
      }} else if (l + 1u == uh) {{
        let p = uh - 1u;
        let a = H[A0 + p * n + p];
        let bb = H[A0 + p * n + uh];
        let c = H[A0 + uh * n + p];
        let d = H[A0 + uh * n + uh];
        let hp = 0.5 * (a - d);
        let disc = hp * hp + bb * c;
        if (disc >= 0.0) {{
          // real: rotate so the block is upper triangular, its first column an eigenvector (mu - d, c)
          let mu = d + hp + select(-1.0, 1.0, hp >= 0.0) * sqrt(disc);
          let u0 = mu - d;
          let r = sqrt(u0 * u0 + c * c);
          refl[0] = select(1.0, u0 / r, r > 0.0);
          refl[1] = select(0.0, c / r, r > 0.0);
          wi[p] = 0.0; wi[uh] = 0.0;
          act = 2u;
        }} else {{
          let q = sqrt(-disc);
          wr[p] = d + hp; wr[uh] = d + hp;
          wi[p] = q; wi[uh] = -q;  // the positive imaginary part first, as LAPACK
        }}
        whi = hi - 2; its = 0u;
      }} else {{
        its = its + 1u;
        steps = steps + (uh - l);
        if (its > {EIG_MAX_ITS}u || steps > {EIG_STEP_BUDGET}u) {{
          info[b] = 1;  // not converged: LAPACK's info > 0, torch's error
          act = 3u;
        }} else {{
          // the shifts as LAPACK's dlahqr: the trailing 2x2 block's eigenvalues, a complex pair or twice the
          // real one nearer its last diagonal element; exceptional ones (from the window's top at the 10th, 30th
          // sweep without a deflation, its bottom at the 20th, 40th) break cycles
          var h11 = H[A0 + (uh - 1u) * n + uh - 1u];
          var h21 = H[A0 + uh * n + uh - 1u];
          var h12 = H[A0 + (uh - 1u) * n + uh];
          var h22 = H[A0 + uh * n + uh];
          if (its % 10u == 0u) {{
            var ex = abs(H[A0 + uh * n + uh - 1u]) + abs(H[A0 + (uh - 1u) * n + uh - 2u]);
            var at = H[A0 + uh * n + uh];
            if (its % 20u != 0u) {{
              ex = abs(H[A0 + (l + 1u) * n + l]) + abs(H[A0 + (l + 2u) * n + l + 1u]);
              at = H[A0 + l * n + l];
            }}
            h11 = 0.75 * ex + at; h12 = -0.4375 * ex; h21 = ex; h22 = h11;
          }}
          let s4 = abs(h11) + abs(h12) + abs(h21) + abs(h22);
          var r1 = vec2<f32>(0.0, 0.0);
          var r2 = vec2<f32>(0.0, 0.0);
          if (s4 != 0.0) {{
            let g11 = h11 / s4;
            let g22 = h22 / s4;
            let tr = 0.5 * (g11 + g22);
            let det = (g11 - tr) * (g22 - tr) - (h12 / s4) * (h21 / s4);
            let rd = sqrt(abs(det));
            if (det >= 0.0) {{
              r1 = vec2<f32>(tr * s4, rd * s4);
              r2 = vec2<f32>(r1.x, -r1.y);
            }} else {{
              let e1 = tr + rd;
              let e2 = tr - rd;
              let e = select(e2, e1, abs(e1 - g22) <= abs(e2 - g22)) * s4;
              r1 = vec2<f32>(e, 0.0);
              r2 = r1;
            }}
          }}
          // the first column of (H - r1)(H - r2), scaled
          let h00 = H[A0 + l * n + l];
          var h10 = H[A0 + (l + 1u) * n + l];
          let sf = abs(h00 - r2.x) + abs(r2.y) + abs(h10);
          h10 = h10 / sf;
          first[0] = h10 * H[A0 + l * n + l + 1u] + (h00 - r1.x) * ((h00 - r2.x) / sf) - r1.y * (r2.y / sf);
          first[1] = h10 * (h00 + H[A0 + (l + 1u) * n + l + 1u] - r1.x - r2.x);
          first[2] = h10 * H[A0 + (l + 2u) * n + l + 1u];
          wl = l;
          act = 1u;
        }}
      }}
    }}
    {sync}
    let what = workgroupUniformLoad(&act);
    if (what == 3u) {{ break; }}
    if (what == 2u) {{
      let p = uh - 1u;
      let cs = refl[0];
      let sn = refl[1];
      if (lid >= p && lid < n) {{
        let hp = H[A0 + p * n + lid];
        let hq = H[A0 + uh * n + lid];
        H[A0 + p * n + lid] = cs * hp + sn * hq;
        H[A0 + uh * n + lid] = cs * hq - sn * hp;
      }}
      {sync}
      if (lid <= uh) {{
        let hp = H[A0 + lid * n + p];
        let hq = H[A0 + lid * n + uh];
        H[A0 + lid * n + p] = cs * hp + sn * hq;
        H[A0 + lid * n + uh] = cs * hq - sn * hp;
      }}
      if (lid < n) {{
        let zp = Z[A0 + lid * n + p];
        let zq = Z[A0 + lid * n + uh];
        Z[A0 + lid * n + p] = cs * zp + sn * zq;
        Z[A0 + lid * n + uh] = cs * zq - sn * zp;
      }}
      {sync}
      if (lid == 0u) {{ H[A0 + uh * n + p] = 0.0; }}
    }}
    if (what == 1u) {{
      let l = workgroupUniformLoad(&wl);
      for (var k = l; k < uh; k = k + 1u) {{
        let three = k + 2u <= uh;
        // every lane computes the step's reflector from the same values (no lane-0 phase, one barrier less)
        var x = first[0];
        var y = first[1];
        var z = first[2];
        if (k > l) {{
          x = H[A0 + k * n + k - 1u];
          y = H[A0 + (k + 1u) * n + k - 1u];
          z = select(0.0, H[A0 + (k + 2u) * n + k - 1u], three);
        }}
        // larfg on (x, y, z), scaled by its 1-norm: (I - tau v v^T) (x, y, z) = (beta, 0, 0)
        let sn = abs(x) + abs(y) + abs(z);
        var t = 0.0;
        var v1 = 0.0;
        var v2 = 0.0;
        var beta = x;
        if (sn != 0.0 && abs(y) + abs(z) != 0.0) {{
          let xs = x / sn;
          let ys = y / sn;
          let zs = z / sn;
          let r = sqrt(xs * xs + ys * ys + zs * zs);
          let bs = select(r, -r, xs >= 0.0);
          t = (bs - xs) / bs;
          v1 = ys / (xs - bs);
          v2 = zs / (xs - bs);
          beta = bs * sn;
        }}
        if (lid >= k && lid < n) {{  // rows k, k+1, k+2 of column lid
          let h0 = H[A0 + k * n + lid];
          let h1 = H[A0 + (k + 1u) * n + lid];
          var h2 = 0.0;
          if (three) {{ h2 = H[A0 + (k + 2u) * n + lid]; }}
          let s = t * (h0 + v1 * h1 + v2 * h2);
          H[A0 + k * n + lid] = h0 - s;
          H[A0 + (k + 1u) * n + lid] = h1 - s * v1;
          if (three) {{ H[A0 + (k + 2u) * n + lid] = h2 - s * v2; }}
        }}
        {sync}
        if (lid == 0u && k > l) {{  // column k-1 (read above, untouched by the row and column updates)
          H[A0 + k * n + k - 1u] = beta;
          H[A0 + (k + 1u) * n + k - 1u] = 0.0;
          if (three) {{ H[A0 + (k + 2u) * n + k - 1u] = 0.0; }}
        }}
        if (lid <= min(k + 3u, uh)) {{  // columns k, k+1, k+2 of row lid
          let h0 = H[A0 + lid * n + k];
          let h1 = H[A0 + lid * n + k + 1u];
          var h2 = 0.0;
          if (three) {{ h2 = H[A0 + lid * n + k + 2u]; }}
          let s = t * (h0 + v1 * h1 + v2 * h2);
          H[A0 + lid * n + k] = h0 - s;
          H[A0 + lid * n + k + 1u] = h1 - s * v1;
          if (three) {{ H[A0 + lid * n + k + 2u] = h2 - s * v2; }}
        }}
        if (lid < n) {{
          let z0 = Z[A0 + lid * n + k];
          let z1 = Z[A0 + lid * n + k + 1u];
          var z2 = 0.0;
          if (three) {{ z2 = Z[A0 + lid * n + k + 2u]; }}
          let s = t * (z0 + v1 * z1 + v2 * z2);
          Z[A0 + lid * n + k] = z0 - s;
          Z[A0 + lid * n + k + 1u] = z1 - s * v1;
          if (three) {{ Z[A0 + lid * n + k + 2u] = z2 - s * v2; }}
        }}
        {sync}
      }}
    }}
  }}
  {sync}
  // eigenvector i of T by back substitution (complex for a complex pair: T's 2x2 blocks solved by Cramer's
  // rule), then Z times it, normalized as LAPACK's geev: unit norm, a complex one's largest component real
  if (lid < n) {{
    let i = lid;
    var lr = wr[i];
    let li = wi[i];
    if (li == 0.0) {{ lr = H[A0 + i * n + i]; }}
    let lam = vec2<f32>(lr, li);
    let smin = max(EPS * (abs(lr) + abs(li)), 1e-30);
    let X0 = A0;
    let V0 = A0 + prm[2];  // the outputs are bound as windows of the whole batch's (a chunk of it)
    for (var k = 0u; k < n; k = k + 1u) {{ X[X0 + k * n + i] = vec2<f32>(0.0, 0.0); }}
    var top = i;
    var k = i;  // rows k-1, k-2, ... 0 remain
    if (li == 0.0) {{
      X[X0 + i * n + i] = vec2<f32>(1.0, 0.0);
    }} else {{
      let p = select(i - 1u, i, li > 0.0);
      top = p + 1u;
      X[X0 + p * n + i] = vec2<f32>(H[A0 + p * n + p + 1u], 0.0);
      X[X0 + (p + 1u) * n + i] = lam - vec2<f32>(H[A0 + p * n + p], 0.0);
      k = p;
    }}
    loop {{
      if (k == 0u) {{ break; }}
      let r = k - 1u;
      if (r >= 1u && H[A0 + r * n + r - 1u] != 0.0) {{  // a 2x2 block in rows r-1, r
        let q = r - 1u;
        var s0 = vec2<f32>(0.0, 0.0);
        var s1 = vec2<f32>(0.0, 0.0);
        for (var j = r + 1u; j <= top; j = j + 1u) {{
          let xj = X[X0 + j * n + i];
          s0 = s0 + H[A0 + q * n + j] * xj;
          s1 = s1 + H[A0 + r * n + j] * xj;
        }}
        let a = vec2<f32>(H[A0 + q * n + q], 0.0) - lam;
        let bb = H[A0 + q * n + r];
        let c = H[A0 + r * n + q];
        let d = vec2<f32>(H[A0 + r * n + r], 0.0) - lam;
        var det = c_mul(a, d) - vec2<f32>(bb * c, 0.0);
        if (abs(det.x) + abs(det.y) < smin) {{ det = vec2<f32>(smin, 0.0); }}
        X[X0 + q * n + i] = c_div(-c_mul(d, s0) + bb * s1, det);
        X[X0 + r * n + i] = c_div(-c_mul(a, s1) + c * s0, det);
        k = q;
      }} else {{
        var s = vec2<f32>(0.0, 0.0);
        for (var j = r + 1u; j <= top; j = j + 1u) {{ s = s + H[A0 + r * n + j] * X[X0 + j * n + i]; }}
        var den = vec2<f32>(H[A0 + r * n + r], 0.0) - lam;
        if (abs(den.x) + abs(den.y) < smin) {{ den = vec2<f32>(smin, 0.0); }}
        X[X0 + r * n + i] = c_div(-s, den);
        k = r;
      }}
      // a nearly defective matrix grows the solution by 1/smin a row: rescale it before it overflows
      let g = abs(X[X0 + k * n + i].x) + abs(X[X0 + k * n + i].y)
            + abs(X[X0 + (k + 1u) * n + i].x) + abs(X[X0 + (k + 1u) * n + i].y);
      if (g > 1e15) {{
        for (var j = k; j <= top; j = j + 1u) {{ X[X0 + j * n + i] = X[X0 + j * n + i] / g; }}
      }}
    }}
    var nrm = 0.0;
    var big = 0.0;
    var at = 0u;
    for (var r = 0u; r < n; r = r + 1u) {{
      var s = vec2<f32>(0.0, 0.0);
      for (var j = 0u; j <= top; j = j + 1u) {{ s = s + Z[A0 + r * n + j] * X[X0 + j * n + i]; }}
      s = s * dsc[r];  // back to A's eigenvector (gebak): x = D y for B = D^-1 A D
      V[V0 + r * n + i] = s;
      let m2 = dot(s, s);
      nrm = nrm + m2;
      if (m2 > big) {{ big = m2; at = r; }}
    }}
    // the largest component's conjugate phase (1 for a real eigenvector), over the norm
    var f = vec2<f32>(1.0, 0.0);
    if (li != 0.0 && big > 0.0) {{ f = vec2<f32>(V[V0 + at * n + i].x, -V[V0 + at * n + i].y) / sqrt(big); }}
    f = f / sqrt(nrm);
    for (var r = 0u; r < n; r = r + 1u) {{ V[V0 + r * n + i] = c_mul(V[V0 + r * n + i], f); }}
    if (li != 0.0) {{ V[V0 + at * n + i].y = 0.0; }}
    w[prm[3] + b * n + i] = lam * sc;
  }}
}}"""


def eig(a: WArray) -> tuple[WArray, WArray]:
    """(eigenvalues, eigenvectors) of real square float32 matrices, both complex64; an input that is not finite
    or a matrix the QR iteration does not reduce raises torch's ``linalg_error_not_converged`` at the next sync."""
    op = "linalg.eig"
    _float32(op, a)
    n = a.shape[-1]
    _limit(op, n, n)
    batch = a.shape[:-2]
    nb = _batch(a)
    w, V = RT.empty((*batch, n), _C64), RT.empty(a.shape, _C64)
    if nb == 0 or n == 0:
        return w, V
    # the batch in chunks whose work buffers each fit one binding; the outputs bound as windows of the whole
    src = a if a.contiguous else K.contiguous_copy(a)
    flat = K._view(src, (nb, n, n), (n * n, n, 1), src.offset)
    per = max(1, chunks.flat_budget(_C64.itemsize) // (n * n))
    assert w.st is not None and V.st is not None
    outer, RT.op = RT.op, op  # a grid or binding over the adapter's limits is refused naming the op
    try:
        for b0 in range(0, nb, per):
            b1 = min(nb, b0 + per)
            H = K.contiguous_copy(chunks.narrow(flat, 0, b0, b1))
            Z, X, info = RT.empty(H.shape, _F32), RT.empty(H.shape, _C64), RT.empty((b1 - b0,), _I32)
            vb, v0 = chunks.flat_window(V.st, _C64.itemsize, b0 * n * n, b1 * n * n)
            wb, w0 = chunks.flat_window(w.st, _C64.itemsize, b0 * n, b1 * n)
            bufs = [H.st.buf, Z.st.buf, X.st.buf, wb, vb, info.st.buf]  # type: ignore[union-attr]
            RT.dispatch(_eig_shader(), bufs, [b1 - b0, n, b0 * n * n - v0, b0 * n - w0], _groups(b1 - b0))
            K.check_range(info, 0, 1, "linalg_error_not_converged", op)
    finally:
        RT.op = outer
    return w, V


# -- SVD: one-sided Jacobi on the columns of a tall matrix ---------------------------------------------------
@functools.cache
def _svd_shader() -> str:
    return f"""{_HEAD}
@group(0) @binding(1) var<storage, read_write> W: array<f32>;  // (batch, m, n), m >= n: A in, U S out
@group(0) @binding(2) var<storage, read_write> V: array<f32>;  // (batch, n, n): the rotations
@group(0) @binding(3) var<storage, read_write> U: array<f32>;  // (batch, m, n): unit columns, sorted (0 where S is)
@group(0) @binding(4) var<storage, read_write> S: array<f32>;  // (batch, n): descending
@group(0) @binding(5) var<storage, read_write> Vs: array<f32>; // (batch, n, n): V's columns, sorted
var<workgroup> x: array<f32, {LANES}>;
var<workgroup> y: array<f32, {LANES}>;
var<workgroup> z: array<f32, {LANES}>;
var<workgroup> rot: array<f32, 2>;
var<workgroup> turned: u32;
var<workgroup> sig: array<f32, {LANES}>;
var<workgroup> order: array<u32, {LANES}>;
{_MAIN}
  let m = prm[1];
  let n = prm[2];
  let tol = bitcast<f32>(prm[3]);
  let W0 = b * m * n;
  let V0 = b * n * n;
  if (lid < n) {{
    for (var c = 0u; c < n; c = c + 1u) {{ V[V0 + lid * n + c] = select(0.0, 1.0, lid == c); }}
  }}
  if (lid == 0u) {{ turned = 1u; }}
  {_sync()}
  for (var sweep = 0u; sweep < {MAX_SWEEPS}u; sweep = sweep + 1u) {{
    if (workgroupUniformLoad(&turned) == 0u) {{ break; }}
    if (lid == 0u) {{ turned = 0u; }}
    for (var p = 0u; p + 1u < n; p = p + 1u) {{
      for (var q = p + 1u; q < n; q = q + 1u) {{
        var wp = 0.0;
        var wq = 0.0;
        if (lid < m) {{ wp = W[W0 + lid * n + p]; wq = W[W0 + lid * n + q]; }}
        x[lid] = wp * wp;
        y[lid] = wq * wq;
        z[lid] = wp * wq;
        workgroupBarrier();
{_tree(("x", "y", "z"))}
        if (lid == 0u) {{
          let al = x[0];
          let be = y[0];
          let ga = z[0];
          var c = 1.0;
          var s = 0.0;
          // rotate while the columns are not orthogonal to float32's rounding (LAPACK's gesvj criterion)
          if (ga != 0.0 && abs(ga) > tol * sqrt(al) * sqrt(be)) {{
            let zeta = (be - al) / (2.0 * ga);
            let t = select(-1.0, 1.0, zeta >= 0.0) / (abs(zeta) + sqrt(1.0 + zeta * zeta));
            c = 1.0 / sqrt(1.0 + t * t);
            s = c * t;
            turned = 1u;
          }}
          rot[0] = c; rot[1] = s;
        }}
        workgroupBarrier();
        let c = rot[0];
        let s = rot[1];
        if (lid < m) {{
          W[W0 + lid * n + p] = c * wp - s * wq;
          W[W0 + lid * n + q] = s * wp + c * wq;
        }}
        if (lid < n) {{
          let vp = V[V0 + lid * n + p];
          let vq = V[V0 + lid * n + q];
          V[V0 + lid * n + p] = c * vp - s * vq;
          V[V0 + lid * n + q] = s * vp + c * vq;
        }}
        {_sync()}
      }}
    }}
    workgroupBarrier();
  }}
  if (lid < n) {{
    var t = 0.0;
    for (var r = 0u; r < m; r = r + 1u) {{ t = t + W[W0 + r * n + lid] * W[W0 + r * n + lid]; }}
    sig[lid] = sqrt(t);
  }}
  workgroupBarrier();
  if (lid == 0u) {{
    for (var i = 0u; i < n; i = i + 1u) {{ order[i] = i; }}
    for (var i = 0u; i < n; i = i + 1u) {{
      var best = i;
      for (var j = i + 1u; j < n; j = j + 1u) {{ if (sig[order[j]] > sig[order[best]]) {{ best = j; }} }}
      let t = order[i]; order[i] = order[best]; order[best] = t;
    }}
  }}
  workgroupBarrier();
  if (lid < n) {{ S[b * n + lid] = sig[order[lid]]; }}
  if (lid < m) {{
    for (var c = 0u; c < n; c = c + 1u) {{
      let sc = sig[order[c]];
      U[W0 + lid * n + c] = select(0.0, W[W0 + lid * n + order[c]] / sc, sc > 0.0);
    }}
  }}
  if (lid < n) {{
    for (var c = 0u; c < n; c = c + 1u) {{ Vs[V0 + lid * n + c] = V[V0 + lid * n + order[c]]; }}
  }}
}}"""


def _transpose(a: WArray) -> WArray:
    return K._view(a, (*a.shape[:-2], a.shape[-1], a.shape[-2]), (*a.stride[:-2], a.stride[-1], a.stride[-2]))


def _complete(U: WArray, S: WArray, cols: int) -> WArray:
    """U's unit columns (zero where the singular value is) with the zero ones replaced and ``cols`` columns in
    all: Q of U's complete QR spans U's columns first (S descends, so the zero columns come last) and then
    their orthogonal complement."""
    m, k = U.shape[-2:]
    Q, _ = qr(U, "complete")
    batch = U.shape[:-2]
    lead = K._view(Q, (*batch, m, k), Q.stride, Q.offset)
    s = K._view(S, (*batch, 1, k), (*S.stride[:-1], 0, S.stride[-1]), S.offset)
    kept = K.where_kernel(K.elementwise("select(0u, 1u, a > 0.0)", np.dtype(bool), [("a", s, _F32)], s.shape),
                          U, lead)
    if cols == k:
        return kept
    rest = K._view(Q, (*batch, m, cols - k), Q.stride, Q.offset + k * Q.stride[-1])
    return K.cat_kernel(kept, K.contiguous_copy(rest), axis=len(batch) + 1)


def svd(a: WArray, full_matrices: bool) -> tuple[WArray, WArray, WArray]:
    op = "linalg.svd"
    _float32(op, a)
    m, n = a.shape[-2:]
    _limit(op, m, n)
    k = min(m, n)
    batch = a.shape[:-2]
    nb = _batch(a)
    tall = m >= n
    rows, cols = (m, n) if tall else (n, m)
    if nb == 0 or k == 0:
        ucols, vrows = (m, n) if full_matrices else (k, k)
        U = K.contiguous_copy(K.expand_kernel(K.eye(m, ucols, _F32), (*batch, m, ucols)))
        Vh = K.contiguous_copy(K.expand_kernel(K.eye(vrows, n, _F32), (*batch, vrows, n)))
        return U, K.full((*batch, k), 0.0, _F32), Vh
    # LAPACK does not converge on a NaN, and torch says so: checked here, raised at the next sync
    nans = K.elementwise("select(0, 1, nan_f(a))", _I32, [("a", a, _F32)], a.shape)
    K.check_range(K.reduce("amax")(nans, tuple(range(a.ndim))), 0, 1, "linalg_error_not_converged", op)
    work = K.contiguous_copy(a if tall else _transpose(a))
    V, Uc, S, Vs = (RT.empty((*batch, cols, cols), _F32), RT.empty((*batch, rows, cols), _F32),
                    RT.empty((*batch, cols), _F32), RT.empty((*batch, cols, cols), _F32))
    tol = float(np.sqrt(rows) * np.finfo(np.float32).eps)
    bufs = [x.st.buf for x in (work, V, Uc, S, Vs) if x.st is not None]
    RT.dispatch(_svd_shader(), bufs, [nb, rows, cols, int(np.array(tol, np.float32).view(np.uint32))], _groups(nb))
    left = _complete(Uc, S, rows if full_matrices else cols)  # the long side's singular vectors
    if tall:
        return left, S, K.contiguous_copy(_transpose(Vs))
    return Vs, S, K.contiguous_copy(_transpose(left))


# -- matrix_exp: scaling and squaring with the [13/13] Pade approximant -------------------------------------
# Higham (2005), "The scaling and squaring method for the matrix exponential revisited": the coefficients of
# the degree-13 approximant and the 1-norm up to which it needs no scaling
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
           10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0,
           1.0)
_THETA13 = 5.371920351148152


def _lin(terms: list[tuple[float, WArray]], shape: tuple[int, ...], eye: WArray | None = None,
         c0: float = 0.0) -> WArray:
    """sum of c * X (plus c0 * I)."""
    names = "abcdefgh"
    ops: list[tuple[str, Any, np.dtype[Any]]] = [(names[i], x, _F32) for i, (_, x) in enumerate(terms)]
    expr = " + ".join(f"{c!r} * {names[i]}" for i, (c, _) in enumerate(terms))
    if eye is not None:
        ops.append(("e", eye, _F32))
        expr += f" + {c0!r} * e"
    return K.elementwise(expr, _F32, ops, shape)


def matrix_exp(a: WArray) -> WArray:
    """exp(A): each matrix scaled by 2^-s (s from its 1-norm, so that the Pade approximant is accurate), the
    approximant as a solve, then squared s times. The 1-norms are read back to choose the number of squarings
    (torch reads them on CUDA too); a matrix needing fewer squarings than the batch's largest keeps its value
    through the extra rounds."""
    op = "linalg.matrix_exp"
    _float32(op, a)
    n = a.shape[-1]
    if n > linalg_kernels.MAX_N:
        fail("device_error_limit", op=op,
             problem=f"{n}x{n} matrices (the Pade approximant is a solve of one thread per matrix: at most "
                     f"{linalg_kernels.MAX_N}x{linalg_kernels.MAX_N} on WebGPU); move the tensor to the CPU")
    batch = a.shape[:-2]
    if _batch(a) == 0 or n == 0:
        return K.contiguous_copy(a)
    shape = a.shape
    norm = K.reduce("amax")(K.reduce("sum")(K.elementwise("abs(a)", _F32, [("a", a, _F32)], shape), len(shape) - 2),
                            len(shape) - 2)
    norms = np.asarray(to_host(norm), dtype=np.float64).reshape(batch)
    with np.errstate(divide="ignore"):
        s = np.where(norms > _THETA13, np.ceil(np.log2(np.maximum(norms, 1e-300) / _THETA13)), 0).astype(np.int64)
    s = np.where(np.isfinite(norms), s, 0)
    scale = RT.upload((2.0 ** -s).astype(np.float32).reshape(*batch, 1, 1))
    A = K.elementwise("a * b", _F32, [("a", a, _F32), ("b", scale, _F32)], shape)
    eye = K.expand_kernel(K.eye(n, n, _F32), shape)
    b = [c / _PADE13[0] for c in _PADE13]  # scaled to b0 = 1: the same quotient, smaller numbers
    A2 = K.matmul_kernel(A, A)
    A4 = K.matmul_kernel(A2, A2)
    A6 = K.matmul_kernel(A4, A2)
    inner_u = K.matmul_kernel(A6, _lin([(b[13], A6), (b[11], A4), (b[9], A2)], shape))
    Up = K.matmul_kernel(A, _lin([(1.0, inner_u), (b[7], A6), (b[5], A4), (b[3], A2)], shape, eye, b[1]))
    inner_v = K.matmul_kernel(A6, _lin([(b[12], A6), (b[10], A4), (b[8], A2)], shape))
    Vp = _lin([(1.0, inner_v), (b[6], A6), (b[4], A4), (b[2], A2)], shape, eye, b[0])
    X = linalg_kernels.solve_kernel(_lin([(1.0, Vp), (-1.0, Up)], shape), _lin([(1.0, Vp), (1.0, Up)], shape))
    rounds = int(s.max(initial=0))
    if rounds:
        left = RT.upload(s.astype(np.int32).reshape(*batch, 1, 1))
        for r in range(rounds):
            sq = K.matmul_kernel(X, X)
            X = K.elementwise("select(x, y, f32(c) > s0)", _F32, [("x", X, _F32), ("y", sq, _F32),
                                                              ("c", left, np.dtype(np.int32))], shape, extra=[r])
    return X


# -- LDL^T with Bunch-Kaufman pivoting (LAPACK's sytf2, lower) -----------------------------------------------
_BK_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0  # the pivot threshold that bounds the growth of the entries


@functools.cache
def _ldl_shader() -> str:
    return f"""{_HEAD}
@group(0) @binding(1) var<storage, read_write> a: array<f32>;    // (batch, n, n): A in, packed L and D out
@group(0) @binding(2) var<storage, read_write> ints: array<i32>; // (batch, n + 1): pivots, info
var<workgroup> kp_: u32;
var<workgroup> step_: u32;
var<workgroup> skip_: u32;
{_MAIN}
  let n = prm[1];
  let A0 = b * n * n;
  let I0 = b * (n + 1u);
  if (lid == 0u) {{ ints[I0 + n] = 0; }}
  // the upper triangle is not read, and zero in the result (as torch's)
  if (lid < n) {{ for (var c = lid + 1u; c < n; c = c + 1u) {{ a[A0 + lid * n + c] = 0.0; }} }}
  {_sync()}
  var k = 0u;
  loop {{
    if (k >= n) {{ break; }}
    if (lid == 0u) {{
      var kstep = 1u;
      var kp = k;
      var skip = 0u;
      let absakk = abs(a[A0 + k * n + k]);
      var imax = k;
      var colmax = 0.0;
      for (var i = k + 1u; i < n; i = i + 1u) {{
        let v = abs(a[A0 + i * n + k]);
        if (v > colmax) {{ colmax = v; imax = i; }}
      }}
      if (max(absakk, colmax) == 0.0 || absakk != absakk) {{
        if (ints[I0 + n] == 0) {{ ints[I0 + n] = i32(k) + 1; }}
        skip = 1u;
      }} else if (absakk < {_BK_ALPHA!r} * colmax) {{
        var rowmax = 0.0;
        for (var j = k; j < imax; j = j + 1u) {{ rowmax = max(rowmax, abs(a[A0 + imax * n + j])); }}
        for (var j = imax + 1u; j < n; j = j + 1u) {{ rowmax = max(rowmax, abs(a[A0 + j * n + imax])); }}
        if (absakk >= {_BK_ALPHA!r} * colmax * (colmax / rowmax)) {{ kp = k; }}
        else if (abs(a[A0 + imax * n + imax]) >= {_BK_ALPHA!r} * rowmax) {{ kp = imax; }}
        else {{ kp = imax; kstep = 2u; }}
      }}
      kp_ = kp; step_ = kstep; skip_ = skip;
      ints[I0 + k] = select(i32(kp) + 1, -(i32(kp) + 1), kstep == 2u);
      if (kstep == 2u) {{ ints[I0 + k + 1u] = -(i32(kp) + 1); }}
    }}
    {_sync()}
    let kp = kp_;
    let kstep = workgroupUniformLoad(&step_);
    let skip = workgroupUniformLoad(&skip_);  // the barriers below depend on it
    let kk = k + kstep - 1u;
    if (skip == 0u && kp != kk) {{
      // rows and columns kk and kp of the trailing matrix interchanged (its lower triangle)
      let r = lid;
      if (r > kp && r < n) {{
        let t = a[A0 + r * n + kk]; a[A0 + r * n + kk] = a[A0 + r * n + kp]; a[A0 + r * n + kp] = t;
      }}
      if (r > kk && r < kp) {{
        let t = a[A0 + r * n + kk]; a[A0 + r * n + kk] = a[A0 + kp * n + r]; a[A0 + kp * n + r] = t;
      }}
      if (r == 0u) {{
        let t = a[A0 + kk * n + kk]; a[A0 + kk * n + kk] = a[A0 + kp * n + kp]; a[A0 + kp * n + kp] = t;
        if (kstep == 2u) {{
          let u = a[A0 + (k + 1u) * n + k]; a[A0 + (k + 1u) * n + k] = a[A0 + kp * n + k]; a[A0 + kp * n + k] = u;
        }}
      }}
    }}
    {_sync()}
    if (skip == 0u && kstep == 1u) {{
      let d11 = 1.0 / a[A0 + k * n + k];
      if (lid > k && lid < n) {{
        let xi = a[A0 + lid * n + k];
        for (var j = k + 1u; j <= lid; j = j + 1u) {{
          a[A0 + lid * n + j] = a[A0 + lid * n + j] - xi * (d11 * a[A0 + j * n + k]);
        }}
      }}
      {_sync()}
      if (lid > k && lid < n) {{ a[A0 + lid * n + k] = a[A0 + lid * n + k] * d11; }}
    }}
    if (skip == 0u && kstep == 2u && k + 2u < n) {{
      var d21 = a[A0 + (k + 1u) * n + k];
      let d11 = a[A0 + (k + 1u) * n + k + 1u] / d21;
      let d22 = a[A0 + k * n + k] / d21;
      let t = 1.0 / (d11 * d22 - 1.0);
      d21 = t / d21;
      if (lid >= k + 2u && lid < n) {{
        for (var j = k + 2u; j <= lid; j = j + 1u) {{
          let wk = d21 * (d11 * a[A0 + j * n + k] - a[A0 + j * n + k + 1u]);
          let wkp1 = d21 * (d22 * a[A0 + j * n + k + 1u] - a[A0 + j * n + k]);
          a[A0 + lid * n + j] = a[A0 + lid * n + j] - a[A0 + lid * n + k] * wk - a[A0 + lid * n + k + 1u] * wkp1;
        }}
      }}
      {_sync()}
      if (lid >= k + 2u && lid < n) {{
        let wk = d21 * (d11 * a[A0 + lid * n + k] - a[A0 + lid * n + k + 1u]);
        let wkp1 = d21 * (d22 * a[A0 + lid * n + k + 1u] - a[A0 + lid * n + k]);
        a[A0 + lid * n + k] = wk;
        a[A0 + lid * n + k + 1u] = wkp1;
      }}
    }}
    {_sync()}
    k = k + kstep;
  }}
}}"""


def ldl(a: WArray) -> tuple[WArray, WArray, WArray]:
    """(LD, pivots, info) as LAPACK's sytrf (unblocked below its block size of 64, as here) leaves them: L and
    D packed in the lower triangle, 1-based pivots, negative for the rows of a 2x2 block."""
    op = "linalg.ldl_factor_ex"
    _float32(op, a)
    n = a.shape[-1]
    _limit(op, n, n)
    batch = a.shape[:-2]
    nb = _batch(a)
    if nb == 0 or n == 0:
        return K.full(a.shape, 0.0, _F32), K.full((*batch, n), 0, _I32), K.full(batch, 0, _I32)
    work = _work(a)
    ints = RT.empty((*batch, n + 1), np.dtype(np.int64))
    assert work.st is not None and ints.st is not None
    RT.dispatch(_ldl_shader(), [work.st.buf, ints.st.buf], [nb, n], _groups(nb))
    piv = K.cast(K._view(ints, (*batch, n), ints.stride), _I32)
    info = K.cast(K._view(ints, batch, ints.stride[:-1], ints.offset + n), _I32)
    return work, piv, info


# -- the primitives' kernels --------------------------------------------------------------------------------
def factor(kind: str, a: WArray, **params: Any) -> Any:
    """The outputs of factorization ``kind`` of the float32 matrices ``a``, computed on the device (see the
    module's docstring); the op layer makes them its primitives' outputs."""
    fns: dict[str, Callable[..., Any]] = {"cholesky": cholesky, "cholesky_ex": cholesky_ex, "lu": lu,
                                          "slogdet": slogdet, "qr": qr, "eigh": eigh, "svd": svd,
                                          "permutation": permutation, "ldl": ldl, "eig": eig,
                                          "solve_ex": linalg_kernels.solve_ex}
    fn = fns[kind]
    outer, RT.op = RT.op, _NAMES[kind]  # a grid or binding over the adapter's limits is refused naming the op
    try:
        if kind in ("eig", "solve_ex"):  # they run their batch in runs of their own
            return fn(a, **params)
        # every buffer of these kernels holds at most (d + 1)^2 float32 or int32 words a matrix (U, V or Q of
        # d x d, with the pivots and info of LU beside a d x d P); a batch over a binding runs in runs that fit
        if kind == "permutation":
            d, nbatch = params["m"], a.ndim - 1
        else:
            d, nbatch = max(a.shape[-2:]), a.ndim - 2
        return linalg_kernels.by_batch(lambda x: fn(x, **params), [a], nbatch, 4 * (d + 1) ** 2)
    finally:
        RT.op = outer


# the public op each factorization's errors name (as torch's messages do)
_NAMES = {"cholesky": "linalg.cholesky", "cholesky_ex": "linalg.cholesky_ex", "lu": "linalg.lu",
          "slogdet": "linalg.slogdet", "qr": "linalg.qr", "eigh": "linalg.eigh", "svd": "linalg.svd",
          "permutation": "linalg.lu_solve", "ldl": "linalg.ldl_factor_ex", "eig": "linalg.eig",
          "solve_ex": "linalg.solve_ex"}


def _given(a: WArray, value: WArray, **_: Any) -> WArray:
    """An output computed by :func:`factor` before its primitive ran: the value itself (as the CPU's kernel)."""
    return value


def table() -> dict[str, Any]:
    """The kernels of this module by primitive name, for :func:`.kernels.register`."""
    given = ("linalg_cholesky", "linalg_lu_L", "linalg_lu_U", "linalg_slogdet_sign", "linalg_slogdet_logabsdet",
             "linalg_qr_Q", "linalg_qr_R", "linalg_eigh_eigenvalues", "linalg_eigh_eigenvectors", "linalg_svd_U",
             "linalg_svd_S", "linalg_svd_Vh", "linalg_ldl_factor", "linalg_eig_eigenvalues", "linalg_eig_eigenvectors",
             "geqrf", "geqrf_tau")
    return {**dict.fromkeys(given, _given), "linalg_constant": lambda a, value: value, "overwrite": lambda a, value: value,
            "matrix_exp": matrix_exp}
