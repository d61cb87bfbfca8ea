"""WebGPU kernels of complex64 tensors and the discrete Fourier transforms.

A complex64 tensor is stored as NumPy stores it, interleaved (real, imaginary) float32 pairs; kernels read and
write one ``vec2<f32>`` per element (``runtime.STORAGE``), so views, copies, casts, indexing and the elementwise
ops of ``codegen.UNARY_COMPLEX``/``BINARY_COMPLEX`` (add, sub, mul, div, neg, conj, exp, log, sqrt, abs, angle,
equality), ``sum``/``prod``/``mean`` work through the generic kernels; any other op finds no complex entry and
is refused with a coded error naming it and the dtype. complex128 is not stored on the device, as float64 is not
(WGSL has no f64): it is refused the same way.

Here: the real and imaginary parts as float32 views of the same buffer (strides and offset doubled, the
imaginary part one float further; so ``real``/``imag`` write through, as torch's), ``view_as_real`` and
``view_as_complex`` (views), ``complex``, the copies of the parts, complex ``matmul`` (four real matmuls on the
parts' views) and the FFT primitives.

The FFTs (``fft_c2c``, ``fft_r2c``, ``fft_c2r``; every ``torch.fft`` function composes from them), along one dim
of a batch, for any length n:

- a power of two: radix-2 Stockham passes (:func:`_stockham`), one dispatch per pass ping-ponging between two
  buffers, each invocation one butterfly; O(n log n) work, no per-line limit;
- up to :data:`DIRECT_MAX` points otherwise: a direct DFT (one dispatch; one invocation per output sums the n terms
  with twiddles exp(-+2 pi i t / n), t = j k mod n kept exact in integers);
- longer: Bluestein's chirp convolution (:func:`_bluestein`): the chirped input zero-padded to a power of two
  M >= 2n - 1, its Stockham transform times the chirp kernel's, transformed back, chirped again: O(M log M). The
  chirp's angle uses j^2 mod 2n in 32-bit integers, so n is at most :data:`BLUESTEIN_MAX` (longer: a coded
  ``device_error_limit``).

``rfft`` of a length that is not direct is the complex transform of the real signal cut to n/2 + 1 bins; ``irfft``
completes the Hermitian spectrum on the device (the imaginary parts of bins 0 and n/2 dropped, as pocketfft) and
takes the real part of its inverse. Twiddles are float32, so results agree with torch's float32 ones to about 1e-6
of the line's magnitude (measured up to 20000 points).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ..._errors import fail
from . import chunks
from . import codegen as G
from . import kernels as K
from .runtime import RT, WG, WArray

MAX_N = 16384  # points in one transformed line
_F32 = np.dtype(np.float32)
_C64 = np.dtype(np.complex64)


def _complex64(op: str, a: WArray) -> None:
    if a.dtype != _C64:
        K._no_kernel(op, a.dtype)


# -- parts and views ------------------------------------------------------------------------------------------
def _part(a: WArray, imag: bool) -> WArray:
    """The real (or imaginary) parts of complex ``a`` as a float32 view of its buffer."""
    return WArray(a.st, a.shape, _F32, tuple(2 * s for s in a.stride), 2 * a.offset + int(imag))


def real_kernel(a: WArray) -> WArray:
    _complex64("real", a)
    return _part(a, False)


def imag_kernel(a: WArray) -> WArray:
    _complex64("imag", a)
    return _part(a, True)


def real_part_kernel(z: WArray) -> WArray:
    _complex64("real", z)
    return K.contiguous_copy(_part(z, False))


def imag_part_kernel(z: WArray) -> WArray:
    _complex64("imag", z)
    return K.contiguous_copy(_part(z, True))


def view_as_real_kernel(a: WArray) -> WArray:
    _complex64("view_as_real", a)
    return WArray(a.st, (*a.shape, 2), _F32, (*(2 * s for s in a.stride), 1), 2 * a.offset)


def view_as_complex_kernel(a: WArray) -> WArray:
    """The op layer has checked the layout (last dim of size 2 and stride 1, the other strides and the offset
    even), so the pairs are complex64 elements of the same buffer."""
    if a.dtype != _F32:
        K._no_kernel("view_as_complex", a.dtype)
    return WArray(a.st, a.shape[:-1], _C64, tuple(s // 2 for s in a.stride[:-1]), a.offset // 2)


def complex_kernel(re: K.Operand, im: K.Operand) -> WArray:
    for x in (re, im):
        if isinstance(x, WArray) and x.dtype != _F32:
            K._no_kernel("complex", x.dtype)
    shape = K._broadcast(*(x.shape for x in (re, im) if isinstance(x, WArray)))
    return K.elementwise("vec2<f32>(a, b)", _C64, [("a", re, _F32), ("b", im, _F32)], shape)


def to_complex_kernel(a: WArray, dtype: Any) -> WArray:
    """A real tensor as complex (fft's input cast); complex128 is refused as on every WebGPU path."""
    RT.check_dtype(np.dtype(dtype), "fft")
    return K.cast(a, np.dtype(dtype))


def matmul_complex(a: WArray, b: WArray) -> WArray:
    """(Ar + i Ai)(Br + i Bi) in four real matmuls on the parts' views, joined into one complex result."""
    if a.dtype != b.dtype:
        b = K.cast(b, _C64) if b.dtype != _C64 else b
        a = K.cast(a, _C64) if a.dtype != _C64 else a
    ar, ai, br, bi = _part(a, False), _part(a, True), _part(b, False), _part(b, True)
    mm = K.matmul_kernel
    re = K.elementwise("a - b", _F32, [("a", mm(ar, br), _F32), ("b", mm(ai, bi), _F32)], _out_shape(a, b))
    im = K.elementwise("a + b", _F32, [("a", mm(ar, bi), _F32), ("b", mm(ai, br), _F32)], _out_shape(a, b))
    return complex_kernel(re, im)


def solve_complex(a: WArray, b: WArray) -> WArray:
    """A X = B for complex A (or B): the solve kernel's elimination in complex arithmetic (``linalg_kernels``),
    so complex matrices go as far as real ones (32x32)."""
    from . import linalg_kernels

    a, b = (x if x.dtype == _C64 else to_complex_kernel(x, _C64) for x in (a, b))
    return linalg_kernels.solve_kernel(a, b)


def inverse_complex(a: WArray) -> WArray:
    from . import linalg_kernels

    return linalg_kernels.inverse_kernel(a)


def _out_shape(a: WArray, b: WArray) -> tuple[int, ...]:
    if a.ndim == 1 and b.ndim == 1:
        return ()
    if a.ndim == 1:
        return (*b.shape[:-2], b.shape[-1])
    if b.ndim == 1:
        return a.shape[:-1]
    return (*K._broadcast(a.shape[:-2], b.shape[:-2]), a.shape[-2], b.shape[-1])


# -- the Fourier transforms -----------------------------------------------------------------------------------
@functools.cache
def _dft_shader(kind: str) -> str:
    """One output element per invocation. kind: 'c2c' (complex in and out), 'r2c' (real in: the first n // 2 + 1
    bins), 'c2r' (the n // 2 + 1 bins of a Hermitian spectrum in, real out; the imaginary parts of bin 0 and of
    bin n / 2 are ignored, as pocketfft's)."""
    tin = "f32" if kind == "r2c" else "vec2<f32>"
    tout = "f32" if kind == "c2r" else "vec2<f32>"
    if kind == "c2r":
        body = """
    let x = src[base + j * inner];
    var term = x.x * c - x.y * s;
    if (j == 0u || 2u * j == period) { term = x.x * c; } else { term = 2.0 * term; }
    acc = acc + vec2<f32>(term, 0.0);"""
        store = "acc.x * scale"
    else:
        load = "vec2<f32>(src[base + j * inner], 0.0)" if kind == "r2c" else "src[base + j * inner]"
        body = f"""
    let x = {load};
    acc = acc + vec2<f32>(x.x * c - x.y * s, x.x * s + x.y * c);"""
        store = "acc * scale"
    return f"""
@group(0) @binding(0) var<storage, read> prm: array<u32>;  // [total, n (terms), m (outputs per line), inner,
                                                           //  sign (1: exp(+i)), scale bits, src offset, len]
@group(0) @binding(1) var<storage, read> src: array<{tin}>;
@group(0) @binding(2) var<storage, read_write> dst: array<{tout}>;

@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let i = gid.x + gid.y * nwg.x * {WG}u;
  if (i >= prm[0]) {{ return; }}
  let n = prm[1];
  let m = prm[2];
  let inner = prm[3];
  let period = prm[7];  // the transform's length (the twiddles' period)
  let scale = bitcast<f32>(prm[5]);
  let o = i / (m * inner);
  let k = (i / inner) % m;
  let r = i % inner;
  let base = prm[6] + o * n * inner + r;
  let w = select(-6.283185307179586, 6.283185307179586, prm[4] == 1u) / f32(period);
  var acc = vec2<f32>(0.0);
  var t = 0u;  // j * k mod period, exact
  for (var j = 0u; j < n; j = j + 1u) {{
    let ang = w * f32(t);
    let c = cos(ang);
    let s = sin(ang);{body}
    t = t + k;
    if (t >= period) {{ t = t - period; }}
  }}
  dst[i] = {store};
}}"""


def _scale(norm: str, length: int, forward: bool) -> float:
    if norm == "ortho":
        return 1.0 / math.sqrt(length)
    return 1.0 / length if (norm == "forward") == forward else 1.0


def _dft(kind: str, op: str, a: WArray, axis: int, terms: int, outputs: int, length: int, forward: bool,
         norm: str) -> WArray:
    """Transform ``a`` along ``axis``: ``terms`` inputs per line, ``outputs`` outputs, period ``length``."""
    if length > MAX_N:
        fail("device_error_limit", op=op,
             problem=f"a transform of {length} points (one invocation sums a line: at most {MAX_N} on WebGPU); "
                     "move the tensor to the CPU")
    axis %= a.ndim
    shape = list(a.shape)
    shape[axis] = outputs
    out = RT.empty(tuple(shape), _F32 if kind == "c2r" else _C64)
    if out.st is None or a.size == 0:
        return out
    src = a if a.contiguous else K.contiguous_copy(a)
    if chunks.large(src) or chunks.large(out):
        RT._too_large(max(src.size * src.itemsize, out.size * out.itemsize))
    assert src.st is not None
    inner = math.prod(a.shape[axis + 1:])
    scale = int(np.array(_scale(norm, length, forward), dtype=np.float32).view(np.uint32))
    meta = [out.size, terms, outputs, inner, int(not forward), scale, src.offset, length]
    RT.dispatch(_dft_shader(kind), [src.st.buf, out.st.buf], meta, K._grid(out.size))
    return out


@functools.cache
def _stockham_shader() -> str:
    """One radix-2 pass of a Stockham FFT over lines laid out (outer, n, inner): each invocation takes the pair
    (j, j + n/2) of its line, twiddles the second by exp(-+i pi k / span) (k = j mod span) and writes the sum and
    difference to positions 2 span (j / span) + k and that + span of the output (the autosorting order: after
    log2 n passes with span 1, 2, ..., n/2 the line is the DFT in natural order). The last pass also scales."""
    return f"""
@group(0) @binding(0) var<storage, read> prm: array<u32>;  // [threads, n, inner, span, sign (1: +i), scale bits, off]
@group(0) @binding(1) var<storage, read> src: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec2<f32>>;

@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let i = gid.x + gid.y * nwg.x * {WG}u;
  if (i >= prm[0]) {{ return; }}
  let n = prm[1];
  let inner = prm[2];
  let span = prm[3];
  let half = n / 2u;
  let j = (i / inner) % half;
  let o = i / (half * inner);
  let r = i % inner;
  let line = o * n * inner + r;
  let k = j % span;
  let ang = select(-3.141592653589793, 3.141592653589793, prm[4] == 1u) * f32(k) / f32(span);
  let w = vec2<f32>(cos(ang), sin(ang));
  let v0 = src[prm[6] + line + j * inner];
  let x1 = src[prm[6] + line + (j + half) * inner];
  let v1 = vec2<f32>(x1.x * w.x - x1.y * w.y, x1.x * w.y + x1.y * w.x);
  let at = (j / span) * 2u * span + k;
  let scale = bitcast<f32>(prm[5]);
  dst[line + at * inner] = (v0 + v1) * scale;
  dst[line + (at + span) * inner] = (v0 - v1) * scale;
}}"""


def _pow2(n: int) -> bool:
    return n >= 2 and n & (n - 1) == 0


def _stockham(a: WArray, axis: int, forward: bool, norm: str) -> WArray:
    """The c2c transform of complex ``a`` along ``axis`` (a power-of-two length) in log2 n radix-2 passes,
    ping-ponging between two buffers: O(n log n) work and error growth, where the direct DFT is O(n^2)."""
    n = a.shape[axis]
    src = a if a.contiguous else K.contiguous_copy(a)
    if chunks.large(src):
        RT._too_large(src.size * src.itemsize)
    inner = math.prod(a.shape[axis + 1:])
    threads = src.size // 2
    passes = n.bit_length() - 1
    scale = int(np.array(_scale(norm, n, forward), dtype=np.float32).view(np.uint32))
    one = int(np.array(1.0, dtype=np.float32).view(np.uint32))
    bufs = [RT.empty(a.shape, _C64), RT.empty(a.shape, _C64) if passes > 1 else None]
    cur, off = src, src.offset
    for p in range(passes):
        out = bufs[p % 2]
        assert out is not None and out.st is not None and cur.st is not None
        meta = [threads, n, inner, 1 << p, int(not forward), scale if p == passes - 1 else one, off]
        RT.dispatch(_stockham_shader(), [cur.st.buf, out.st.buf], meta, K._grid(threads))
        cur, off = out, 0
    return cur


@functools.cache
def _hermitian_shader() -> str:
    """The full spectrum (outer, n, inner) of a real signal from its first m = n/2 + 1 bins (outer, m, inner): bin
    j > n/2 is conj(bin n - j); the imaginary parts of bin 0 and bin n/2 are dropped, as pocketfft's c2r does."""
    return f"""
@group(0) @binding(0) var<storage, read> prm: array<u32>;  // [total, n, m, inner, src offset]
@group(0) @binding(1) var<storage, read> src: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec2<f32>>;

@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let i = gid.x + gid.y * nwg.x * {WG}u;
  if (i >= prm[0]) {{ return; }}
  let n = prm[1];
  let m = prm[2];
  let inner = prm[3];
  let j = (i / inner) % n;
  let o = i / (n * inner);
  let r = i % inner;
  let jj = select(n - j, j, 2u * j <= n);
  var v = src[prm[4] + (o * m + jj) * inner + r];
  if (jj == 0u || 2u * jj == n) {{ v.y = 0.0; }}
  dst[i] = select(vec2<f32>(v.x, -v.y), v, 2u * j <= n);
}}"""


@functools.cache
def _chirp_shader(kind: str) -> str:
    """Bluestein's chirp c_j = exp(-+i pi j^2 / n) (the angle from j^2 mod 2n, exact in integers). kind 'pre':
    a (outer, M, inner) = x c_j for j < n, else 0; 'post': X (outer, n, inner) = scale c_k conv_k of conv (outer, M,
    inner); 'kernel': b (M,) = conj(c_j) at j and at M - j (j < n), else 0."""
    src_t = "vec2<f32>"
    if kind == "pre":
        idx = """  let M = prm[2];
  let j = (i / inner) % M;
  let o = i / (M * inner);
  let r = i % inner;
  if (j >= n) { dst[i] = vec2<f32>(0.0); return; }
  let x = src[prm[5] + (o * n + j) * inner + r];"""
        store = "dst[i] = vec2<f32>(x.x * c.x - x.y * c.y, x.x * c.y + x.y * c.x);"
    elif kind == "post":
        idx = """  let M = prm[2];
  let j = (i / inner) % n;
  let o = i / (n * inner);
  let r = i % inner;
  let x = src[(o * M + j) * inner + r] * bitcast<f32>(prm[4]);"""
        store = "dst[i] = vec2<f32>(x.x * c.x - x.y * c.y, x.x * c.y + x.y * c.x);"
    else:
        idx = """  let M = prm[2];
  var j = i;
  if (i >= n) { j = M - i; }
  if (i >= n && M - i >= n) { dst[i] = vec2<f32>(0.0); return; }"""
        store = "dst[i] = vec2<f32>(c.x, -c.y);"
    src = f"@group(0) @binding(1) var<storage, read> src: array<{src_t}>;" if kind != "kernel" else ""
    return f"""
@group(0) @binding(0) var<storage, read> prm: array<u32>;  // [total, n, M, inner, scale bits, src offset, sign]
{src}
@group(0) @binding({1 if kind == "kernel" else 2}) var<storage, read_write> dst: array<vec2<f32>>;

@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let i = gid.x + gid.y * nwg.x * {WG}u;
  if (i >= prm[0]) {{ return; }}
  let n = prm[1];
  let inner = prm[3];
{idx}
  let t = (j * j) % (2u * n);
  let ang = select(-3.141592653589793, 3.141592653589793, prm[6] == 1u) * f32(t) / f32(n);
  let c = vec2<f32>(cos(ang), sin(ang));
  {store}
}}"""


BLUESTEIN_MAX = 32767  # j^2 < 2^32 for the chirp's exact angle


def _bluestein(a: WArray, axis: int, forward: bool, norm: str) -> WArray:
    """The c2c transform of complex ``a`` along ``axis`` for any length n: X_k = c_k sum_j (x_j c_j) conj(c_{k-j}),
    a convolution done with radix-2 Stockham transforms of length M >= 2n - 1 (a power of two): O(M log M)."""
    n = a.shape[axis]
    if n > BLUESTEIN_MAX:
        fail("device_error_limit", op="fft",
             problem=f"a transform of {n} points (not a power of two: at most {BLUESTEIN_MAX} on WebGPU); "
                     "move the tensor to the CPU")
    M = 1 << (2 * n - 2).bit_length()
    inner = math.prod(a.shape[axis + 1:])
    outer = a.size // (n * inner)
    src = a if a.contiguous else K.contiguous_copy(a)
    sign = int(not forward)
    padded = RT.empty((outer, M, inner), _C64)
    if chunks.large(src) or chunks.large(padded):
        RT._too_large(padded.size * padded.itemsize)
    kern = RT.empty((M,), _C64)
    assert padded.st is not None and kern.st is not None and src.st is not None
    RT.dispatch(_chirp_shader("pre"), [src.st.buf, padded.st.buf], [padded.size, n, M, inner, 0, src.offset, sign],
                K._grid(padded.size))
    RT.dispatch(_chirp_shader("kernel"), [kern.st.buf], [M, n, M, inner, 0, 0, sign], K._grid(M))
    spec = _stockham(padded, 1, True, "backward")
    kspec = _stockham(kern, 0, True, "backward")
    column = K._view(kspec, (M, 1), (1, 0), kspec.offset)
    prod = K.elementwise("c_mul(a, b)", _C64, [("a", spec, _C64), ("b", column, _C64)], (outer, M, inner))
    conv = _stockham(prod, 1, False, "backward")  # the inverse with its 1/M
    out = RT.empty(a.shape, _C64)
    assert out.st is not None and conv.st is not None
    scale = int(np.array(_scale(norm, n, forward), dtype=np.float32).view(np.uint32))
    RT.dispatch(_chirp_shader("post"), [conv.st.buf, out.st.buf], [out.size, n, M, inner, scale, 0, sign],
                K._grid(out.size))
    return out


DIRECT_MAX = 64  # up to this length the one-dispatch direct DFT; above, Bluestein's three Stockham transforms


def _c2c_any(a: WArray, axis: int, forward: bool, norm: str) -> WArray:
    n = a.shape[axis]
    if _pow2(n):
        return _stockham(a, axis, forward, norm)
    if n <= DIRECT_MAX:
        return _dft("c2c", "fft", a, axis, n, n, n, forward, norm)
    return _bluestein(a, axis, forward, norm)


def c2c_kernel(a: WArray, axis: int, forward: bool, norm: Any) -> WArray:
    _complex64("fft", a)
    axis %= max(a.ndim, 1)
    n = a.shape[axis]
    if a.size == 0:
        return _dft("c2c", "fft", a, axis, n, n, n, forward, norm)
    return _c2c_any(a, axis, forward, norm)


def _direct(n: int, size: int) -> bool:
    return size == 0 or (n <= DIRECT_MAX and not _pow2(n))


def r2c_kernel(a: WArray, axis: int, norm: Any) -> WArray:
    if a.dtype != _F32:
        K._no_kernel("rfft", a.dtype)
    axis %= max(a.ndim, 1)
    n = a.shape[axis]
    if _direct(n, a.size):
        return _dft("r2c", "rfft", a, axis, n, n // 2 + 1, n, True, norm)
    full = _c2c_any(K.cast(a, _C64), axis, True, norm)  # the complex transform, cut to the n/2 + 1 bins
    shape = list(a.shape)
    shape[axis] = n // 2 + 1
    return K.contiguous_copy(K._view(full, tuple(shape), full.stride, full.offset))


def c2r_kernel(a: WArray, axis: int, n: int, norm: Any) -> WArray:
    _complex64("irfft", a)
    axis %= max(a.ndim, 1)
    if _direct(n, a.size):
        return _dft("c2r", "irfft", a, axis, a.shape[axis], n, n, False, norm)
    shape = list(a.shape)  # the Hermitian spectrum completed, its inverse transform, the real part
    shape[axis] = n
    full = RT.empty(tuple(shape), _C64)
    src = a if a.contiguous else K.contiguous_copy(a)
    assert full.st is not None and src.st is not None
    inner = math.prod(a.shape[axis + 1:])
    RT.dispatch(_hermitian_shader(), [src.st.buf, full.st.buf], [full.size, n, a.shape[axis], inner, src.offset],
                K._grid(full.size))
    return K.contiguous_copy(_part(_c2c_any(full, axis, False, norm), False))


def table() -> dict[str, Any]:
    """The kernels of this module by primitive name, for :func:`.kernels.register`."""
    return {"real": real_kernel, "imag": imag_kernel, "real_part": real_part_kernel, "imag_part": imag_part_kernel,
            "fft_real_part": real_part_kernel, "fft_to_complex": to_complex_kernel, "complex": complex_kernel,
            "view_as_real": view_as_real_kernel, "view_as_complex": view_as_complex_kernel,
            "fft_c2c": c2c_kernel, "fft_r2c": r2c_kernel, "fft_c2r": c2r_kernel}


# -- index writes ------------------------------------------------------------------------------------------------
# ``index_put`` takes complex64 with its real kernel: its elementwise copy (a basic index) and its write by offsets
# (``put``) move whole (re, im) elements. Any other write into a complex tensor by index is two writes of the real
# kernels: the real parts into the real parts' float32 view (``_part``: strides doubled), the imaginary parts into
# the imaginary parts' view (scatter's shader reads a number as one word, so a complex one cannot go whole).
# Complex assignment and addition are componentwise, so one path serves plain writes, numbers (``complex(v)``
# split) and the accumulating writes (``index_add``, ``scatter_add``, an advanced index's gradient: the float
# atomics of each part), at twice the dispatches of a real write, with no 8-byte atomics.
def _value_parts(v: Any) -> tuple[Any, Any]:
    """The real and imaginary parts of a value written into a complex64 tensor: float32 views of a complex
    array, a real array and 0, or the parts of a number."""
    if isinstance(v, np.ndarray):
        v = np.asarray(v).astype(_C64)
        return np.ascontiguousarray(v.real), np.ascontiguousarray(v.imag)
    if isinstance(v, WArray):
        return (_part(v, False), _part(v, True)) if v.dtype == _C64 else (v, 0.0)
    c = complex(v)
    return c.real, c.imag


def _index_backward_advanced(g: WArray, shape: tuple[int, ...], idx1: tuple[Any, ...],
                             idx2: tuple[Any, ...]) -> WArray:
    out = K.full(tuple(shape), 0, _C64)
    for imag, part in enumerate(_value_parts(g)):
        target = K.basic_index(_part(out, bool(imag)), idx1)
        K.put(target, K._adv(target, idx2), part, accumulate=True)
    return out


def _index_along(op: str, a: WArray, src: WArray, index: Any, axis: int) -> WArray:
    out = K.contiguous_copy(a)
    for imag, part in enumerate(_value_parts(src)):
        target = _part(out, bool(imag))
        K.put(target, K._index_along(target, index, axis), part, accumulate=op == "index_add")
    return out


def _scatter_parts(op: str, out: WArray, index: WArray, src: Any, axis: int) -> WArray:
    """``op`` of ``src`` into ``out`` (a fresh contiguous complex64 array), in place, part by part."""
    if out.ndim == 0:  # (the real kernel takes a 0-d array on the host: as one element of a 1-d array here)
        one = _scatter_parts(op, K.reshape_kernel(out, (1,)), K.reshape_kernel(index, (1,)),
                             K.reshape_kernel(src, (1,)) if isinstance(src, WArray) else src, 0)
        return K.reshape_kernel(one, ())
    for imag, part in enumerate(_value_parts(src)):
        K._scatter(op, _part(out, bool(imag)), index, part, axis, fresh=True)
    return out


def _scatter(a: WArray, index: WArray, src: Any, axis: int) -> WArray:
    return _scatter_parts("scatter", K.contiguous_copy(a), index, src, axis)


def _scatter_add(a: WArray, index: WArray, src: Any, axis: int) -> WArray:
    return _scatter_parts("scatter_add", K.contiguous_copy(a), index, src, axis)


def _put_along_add(g: WArray, index: WArray, shape: tuple[int, ...], axis: int) -> WArray:
    """The gradient of a complex gather (``take_along_dim``): g added into zeros at the index."""
    return _scatter_parts("scatter_add", K.full(tuple(shape), 0, _C64), K.expand_kernel(index, g.shape), g, axis)


_WRITES: dict[str, Any] = {
    "scatter": _scatter, "scatter_add": _scatter_add, "put_along_dim_add": _put_along_add,
    "index_copy": lambda a, src, index, axis: _index_along("index_copy", a, src, index, axis),
    "index_add": lambda a, src, index, axis: _index_along("index_add", a, src, index, axis),
}


# primitives whose WebGPU kernels take complex64 (tested in tests/test_webgpu_complex.py): the complex entries of the
# op tables, the copies, views and gathers that move elements whatever they hold, and this module's
COMPLEX_OK = frozenset({
    *G.UNARY_COMPLEX, *G.UNARY_COMPLEX_REAL, *G.BINARY_COMPLEX, *G.PREDICATE_COMPLEX, *table(),
    "sum", "prod", "where", "to_copy", "clone", "reshape", "view", "permute", "expand", "unfold", "diagonal",
    "index", "select", "slice", "index_select", "split_with_sizes", "unbind", "gather", "cat", "flip", "roll", "matmul", "linalg_constant",
    "index_backward", "linalg_eig_eigenvalues", "linalg_eig_eigenvectors", "linalg_solve", "inverse",
    "diagonal_scatter", "diagonal_backward", "linalg_solve_ex_result", "triangle",
    "as_strided", "take_along_dim", "index_put", *_WRITES,
})


def _refusing(name: str, kernel: Any) -> Any:
    """``kernel``, refusing complex64 input with a coded error naming the primitive (its shader, written for
    real numbers, would not compile or would treat (re, im) as two unrelated numbers)."""
    def run(*args: Any, **params: Any) -> Any:
        for a in args:
            if type(a) is WArray and a.dtype == _C64:
                K._no_kernel(name, _C64)
        return kernel(*args, **params)

    run.__name__ = run.__qualname__ = getattr(kernel, "__name__", name)
    return run


def install() -> None:
    """Complex inputs of primitives whose kernels are the real ones (registered by ``kernels.register``): matmul
    and angle get complex paths; every primitive not in :data:`COMPLEX_OK` refuses complex64 with a coded error."""
    from ..._engine.primitives import PRIMS

    for name, p in PRIMS.items():
        if "webgpu" in p.kernels and name not in COMPLEX_OK:
            k = p.kernels["webgpu"]
            # kernels.register's wrapper is made again with the refusal inside it (one frame per call, not two)
            p.kernels["webgpu"] = K.rewrap(k, refuse_complex=True) if K.is_named(k) else _refusing(name, k)

    def matmul(a: WArray, b: WArray, *args: Any, **params: Any) -> WArray:
        if args or params:
            K._no_kernel("matmul with a bias", _C64)
        return matmul_complex(a, b)

    # (inside matmul's own wrapper: a real product, a GPT step's most frequent kernel, takes no frame for it)
    PRIMS["matmul"].kernels["webgpu"] = K.rewrap(PRIMS["matmul"].kernels["webgpu"], complex_kernel=matmul)
    real_angle = PRIMS["angle"].kernels["webgpu"]

    def angle(a: WArray) -> WArray:
        if a.dtype == _C64:
            return K.elementwise(G.UNARY_COMPLEX_REAL["angle"], _F32, [("a", a, _C64)], a.shape)
        return real_angle(a)

    PRIMS["angle"].kernels["webgpu"] = angle

    def index_backward(g: WArray, shape: tuple[int, ...], idx1: tuple[Any, ...],
                       idx2: tuple[Any, ...] | None) -> WArray:
        """The gradient of a basic index of a complex tensor: the real kernel on the (re, im) pairs as a trailing
        float32 dim of 2 (an advanced index's accumulation: part by part, ``_index_backward_advanced``)."""
        if idx2 is not None:
            return _index_backward_advanced(g, shape, idx1, idx2)
        pairs = (*idx1, slice(None)) if any(it is Ellipsis for it in idx1) else (*idx1, Ellipsis, slice(None))
        out = PRIMS["index_backward"].kernels["webgpu"](view_as_real_kernel(g), (*shape, 2), pairs, None)
        return view_as_complex_kernel(out)

    PRIMS["index_backward"].kernels["webgpu"] = K.rewrap(PRIMS["index_backward"].kernels["webgpu"],
                                                         complex_kernel=index_backward)
    for name, write in _WRITES.items():
        k = PRIMS[name].kernels["webgpu"]
        PRIMS[name].kernels["webgpu"] = K.rewrap(k, complex_kernel=write) if K.is_named(k) else _by_dtype(k, write)
    for name, real_k, complex_k in (("linalg_solve", PRIMS["linalg_solve"].kernels["webgpu"], solve_complex),
                                    ("inverse", PRIMS["inverse"].kernels["webgpu"], inverse_complex),
                                    ("conj_physical", PRIMS["conj_physical"].kernels["webgpu"], _conj_physical)):
        PRIMS[name].kernels["webgpu"] = _by_dtype(real_k, complex_k)


def _conj_physical(a: WArray) -> WArray:
    return K.elementwise(G.UNARY_COMPLEX["conj_physical"], _C64, [("a", a, _C64)], a.shape)


def _by_dtype(real_k: Any, complex_k: Any) -> Any:
    def run(*args: Any, **params: Any) -> Any:
        if any(type(a) is WArray and a.dtype == _C64 for a in args):
            return complex_k(*args, **params)
        return real_k(*args, **params)

    return run
