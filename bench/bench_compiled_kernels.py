"""Would a compiled-kernel library (numba, numexpr) close the elementwise-bound gaps to torch on the CPU?

Run: ``python -m bench.bench_compiled_kernels [--threads N] [--repeat R] [--no-probe]``. Neither numba nor numexpr
is a dependency of shapetorch: install them into a scratch environment to measure them (the script says which
are missing and times the rest). In one process and interleaved, under the CPU clock (``time.process_time``,
all the process's threads), it times each kernel as shapetorch runs it now (its own NumPy kernels), as numba
(``@njit(cache=True, fastmath=False, error_model='numpy')``, serial and ``parallel=True``; GELU also ``@vectorize``) and numexpr
(one expression where it can say the kernel) would, and as torch does:

- exact GELU forward and gradient, float32 (8, 64, 512);
- layer_norm forward and backward (dx, dw, db) over the rows of (512, 128) float32 with weight and bias;
- one LSTM time step's pointwise gate work on (16, 4 x 128): ``gates = gi_t + gh``, sigmoid of i, f, o, tanh
  of g and of c_t, and the products (the GEMM is not part of it);
- softmax over the rows of (4096, 1024) float32.

Each result is checked against a float64 reference (max |error| and max ulp where |y| >= 1/4). Unless
``--no-probe``, fresh interpreters measure ``import numba``/``import numexpr`` (after numpy), numba's first-call
compile time with an empty on-disk cache and then with the cache filled, and the installed size of each package
with its dependencies (numba's llvmlite). Tests never assert these numbers.
"""

from __future__ import annotations

import argparse
import atexit
import importlib.metadata
import importlib.util
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable
from typing import Any

import numpy as np

# numba's prange where numba is loaded (see _load_numba); plain range lets the kernels below stay importable
prange = range

F32 = np.float32
_HALF, _ONE = F32(0.5), F32(1.0)
_MINUS_SQRT_HALF = F32(-math.sqrt(0.5))
_INV_SQRT_2PI = F32(1.0 / math.sqrt(2.0 * math.pi))

GELU_SHAPE, LN_SHAPE, SOFTMAX_SHAPE = (8, 64, 512), (512, 128), (4096, 1024)
LSTM_BATCH, LSTM_HIDDEN = 16, 128
LN_EPS = 1e-5


# -- numba kernels (plain Python until _load_numba compiles them) ----------------------------------------------------

def nb_gelu(x: Any, out: Any) -> None:
    """GELU of the flat float32 ``x``: x * Phi(x), Phi(x) = erfc(-x / sqrt(2)) / 2 (no cancellation for x < 0)."""
    for i in prange(x.size):
        v = x[i]
        out[i] = v * (_HALF * math.erfc(v * _MINUS_SQRT_HALF))


def nb_gelu_scalar(v: Any) -> Any:
    return v * (_HALF * math.erfc(v * _MINUS_SQRT_HALF))


def nb_gelu_backward(x: Any, g: Any, out: Any) -> None:
    for i in prange(x.size):
        v = x[i]
        cdf = _HALF * math.erfc(v * _MINUS_SQRT_HALF)
        pdf = math.exp(v * v * -_HALF) * _INV_SQRT_2PI
        out[i] = g[i] * (cdf + v * pdf)


# GELU with an exp of its own: numba's math.exp/erf/erfc are scalar calls into the C library (llvmlite's LLVM has no
# vector math library), which LLVM cannot vectorise. exp(z) = 2^n p(r) (n = round(z / ln 2), r = z - n ln 2 in two
# parts, p of degree 6) and Abramowitz-Stegun 7.1.26 for erfc (shapetorch's float32 formula) are loops that it
# does vectorise (AVX2 here), in blocks that stay in L1: the exponent 2^n is built in an int32 view of a scratch
# buffer, as numba has no scalar bit cast.
_LOG2E, _LN2_HI, _LN2_LO = F32(1.4426950408889634), F32(0.693145751953125), F32(1.428606765330187e-06)
_ROUND = F32(12582912.0)  # 1.5 * 2^23: z / ln 2 + _ROUND has n in its low mantissa bits
_E6, _E5, _E4, _E3, _E2 = F32(1 / 720), F32(1 / 120), F32(1 / 24), F32(1 / 6), _HALF
_Z_MIN = F32(-87.0)
_AS_P = F32(0.3275911 * math.sqrt(0.5))
_AS1, _AS2, _AS3, _AS4, _AS5 = (F32(v) for v in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429))
_BLOCK = 2048


def nb_exp_half_square(x: Any, p: Any, bits: Any) -> None:
    """``exp(-x^2 / 2) = p * bits.view(float32)``: the polynomial into ``p``, 2^n's bits into ``bits``."""
    for i in range(x.size):
        v = x[i]
        z = max(v * v * -_HALF, _Z_MIN)
        t = z * _LOG2E + _ROUND
        n = t - _ROUND
        r = z - n * _LN2_HI - n * _LN2_LO
        p[i] = _ONE + r * (_ONE + r * (_E2 + r * (_E3 + r * (_E4 + r * (_E5 + r * _E6)))))
        bits[i] = (np.int32(n) + np.int32(127)) << np.int32(23)


def nb_exp_into(z: Any, p: Any, bits: Any) -> None:
    """``exp(z) = p * bits.view(float32)`` for z <= 0 (softmax's shifted logits; below -87, exp(-87))."""
    for i in range(z.size):
        zi = max(z[i], _Z_MIN)
        t = zi * _LOG2E + _ROUND
        n = t - _ROUND
        r = zi - n * _LN2_HI - n * _LN2_LO
        p[i] = _ONE + r * (_ONE + r * (_E2 + r * (_E3 + r * (_E4 + r * (_E5 + r * _E6)))))
        bits[i] = (np.int32(n) + np.int32(127)) << np.int32(23)


def nb_softmax_ownexp(x: Any, out: Any) -> None:
    n, d = x.shape
    for r in prange(n):
        xr, orow = x[r], out[r]
        poly = np.empty(d, np.float32)
        scale = np.empty(d, np.float32)  # (separate buffers: LLVM does not vectorise a loop over aliased ones)
        m = xr[0]
        for j in range(1, d):
            m = max(m, xr[j])
        for j in range(d):
            orow[j] = xr[j] - m
        nb_exp_into(orow, poly, scale.view(np.int32))
        s = F32(0.0)
        for j in range(d):
            orow[j] = poly[j] * scale[j]
            s += orow[j]
        inv = _ONE / s
        for j in range(d):
            orow[j] *= inv


def nb_gelu_ownexp(x: Any, out: Any) -> None:
    for blk in prange((x.size + _BLOCK - 1) // _BLOCK):
        lo = blk * _BLOCK
        hi = min(lo + _BLOCK, x.size)
        xb, ob = x[lo:hi], out[lo:hi]
        scale = np.empty(hi - lo, np.float32)
        nb_exp_half_square(xb, ob, scale.view(np.int32))
        for i in range(hi - lo):
            v = xb[i]
            a = max(v, -v)
            t = _ONE / (_ONE + _AS_P * a)
            q = _HALF * t * (_AS1 + t * (_AS2 + t * (_AS3 + t * (_AS4 + t * _AS5)))) * (ob[i] * scale[i])
            ob[i] = v * (_ONE - q if v >= F32(0.0) else q)


def nb_gelu_backward_ownexp(x: Any, g: Any, out: Any) -> None:
    for blk in prange((x.size + _BLOCK - 1) // _BLOCK):
        lo = blk * _BLOCK
        hi = min(lo + _BLOCK, x.size)
        xb, ob = x[lo:hi], out[lo:hi]
        scale = np.empty(hi - lo, np.float32)
        nb_exp_half_square(xb, ob, scale.view(np.int32))
        for i in range(hi - lo):
            v = xb[i]
            e = ob[i] * scale[i]
            a = max(v, -v)
            t = _ONE / (_ONE + _AS_P * a)
            q = _HALF * t * (_AS1 + t * (_AS2 + t * (_AS3 + t * (_AS4 + t * _AS5)))) * e
            ob[i] = g[lo + i] * ((_ONE - q if v >= F32(0.0) else q) + v * e * _INV_SQRT_2PI)


def nb_layer_norm(x: Any, w: Any, b: Any, eps: Any, out: Any) -> None:
    n, d = x.shape
    for r in prange(n):
        s = F32(0.0)
        for j in range(d):
            s += x[r, j]
        mean = s / F32(d)
        q = F32(0.0)
        for j in range(d):
            t = x[r, j] - mean
            q += t * t
        rstd = _ONE / math.sqrt(q / F32(d) + eps)
        for j in range(d):
            out[r, j] = (x[r, j] - mean) * rstd * w[j] + b[j]


def nb_layer_norm_backward(x: Any, g: Any, w: Any, eps: Any, dx: Any, dw: Any, db: Any) -> None:
    """dx, dw, db from x and g (the row statistics recomputed, as shapetorch's backward does)."""
    n, d = x.shape
    means = np.empty(n, np.float32)
    rstds = np.empty(n, np.float32)
    for r in prange(n):
        s = F32(0.0)
        for j in range(d):
            s += x[r, j]
        mean = s / F32(d)
        q = F32(0.0)
        for j in range(d):
            t = x[r, j] - mean
            q += t * t
        rstd = _ONE / math.sqrt(q / F32(d) + eps)
        means[r], rstds[r] = mean, rstd
        sg = F32(0.0)
        sgh = F32(0.0)
        for j in range(d):
            gw = g[r, j] * w[j]
            sg += gw
            sgh += gw * (x[r, j] - mean) * rstd
        sg /= F32(d)
        sgh /= F32(d)
        for j in range(d):
            dx[r, j] = rstd * (g[r, j] * w[j] - sg - (x[r, j] - mean) * rstd * sgh)
    dw[:] = 0
    db[:] = 0
    for r in range(n):  # row by row, each row's sum vectorised along the columns
        for j in range(d):
            dw[j] += g[r, j] * (x[r, j] - means[r]) * rstds[r]
            db[j] += g[r, j]


def nb_lstm_step(gi: Any, gh: Any, c: Any, h_out: Any, c_out: Any) -> None:
    """torch's gate layout (i, f, g, o) along the last axis of (B, 4H)."""
    bsz, k = c.shape
    for r in prange(bsz):
        for j in range(k):
            i = _ONE / (_ONE + math.exp(-(gi[r, j] + gh[r, j])))
            f = _ONE / (_ONE + math.exp(-(gi[r, k + j] + gh[r, k + j])))
            gg = math.tanh(gi[r, 2 * k + j] + gh[r, 2 * k + j])
            o = _ONE / (_ONE + math.exp(-(gi[r, 3 * k + j] + gh[r, 3 * k + j])))
            cn = f * c[r, j] + i * gg
            c_out[r, j] = cn
            h_out[r, j] = o * math.tanh(cn)


def nb_softmax(x: Any, out: Any) -> None:
    n, d = x.shape
    for r in prange(n):
        m = x[r, 0]
        for j in range(1, d):
            if x[r, j] > m:
                m = x[r, j]
        s = F32(0.0)
        for j in range(d):
            e = math.exp(x[r, j] - m)
            out[r, j] = e
            s += e
        inv = _ONE / s
        for j in range(d):
            out[r, j] *= inv


_NB_KERNELS = ("nb_gelu", "nb_gelu_backward", "nb_gelu_ownexp", "nb_gelu_backward_ownexp", "nb_layer_norm",
               "nb_layer_norm_backward", "nb_lstm_step", "nb_softmax", "nb_softmax_ownexp")
# error_model="numpy": a division by zero gives inf or NaN, as NumPy's; numba's default (Python's) tests every
# divisor and raises, which also keeps LLVM from vectorising a loop that divides
_NB_REASSOC = ("nb_layer_norm", "nb_layer_norm_backward", "nb_softmax", "nb_softmax_ownexp")
_NB_OPTIONS = {"cache": True, "fastmath": False, "error_model": "numpy"}


def _load_numba() -> dict[str, Any] | None:
    """The numba kernels compiled lazily: ``name`` serial, ``name+par`` with ``parallel=True``, and the GELU
    ``@vectorize``; None when numba is not importable."""
    if importlib.util.find_spec("numba") is None:
        return None
    if "NUMBA_CACHE_DIR" not in os.environ:  # a cache of this run's own, removed at exit
        os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="numba-cache-")
        atexit.register(shutil.rmtree, os.environ["NUMBA_CACHE_DIR"], True)
    import numba

    globals()["prange"] = numba.prange
    got: dict[str, Any] = {}
    globals()["nb_exp_half_square"] = numba.njit(**_NB_OPTIONS)(nb_exp_half_square)
    globals()["nb_exp_into"] = numba.njit(**_NB_OPTIONS)(nb_exp_into)
    for name in _NB_KERNELS:
        got[name] = numba.njit(**_NB_OPTIONS)(_renamed(name, name))
        # a function of its own name: numba's on-disk cache is indexed by the function, not by its options, so
        # one function compiled both ways would load the serial machine code for the parallel one
        got[name + "+par"] = numba.njit(**_NB_OPTIONS, parallel=True)(_renamed(name, name + "_par"))
        if name in _NB_REASSOC:  # row sums in any order: LLVM can then vectorise them
            got[name + "+reassoc"] = numba.njit(**{**_NB_OPTIONS, "fastmath": {"reassoc"}})(
                _renamed(name, name + "_reassoc"))
    vec: list[Any] = []

    def gelu_vectorized(x: Any) -> Any:  # compiled at its first call, as the others (vectorize compiles eagerly)
        if not vec:
            vec.append(numba.vectorize(["float32(float32)"], cache=True)(nb_gelu_scalar))
        return vec[0](x)
    got["nb_gelu+vec"] = gelu_vectorized
    return got


def _renamed(name: str, new: str) -> Any:
    fn = globals()[name]
    copy = types.FunctionType(fn.__code__.replace(co_name=new, co_qualname=new), globals(), new)
    copy.__qualname__ = new
    return copy


# -- the cases ---------------------------------------------------------------------------------------------------------

def _exact_gelu(x64: Any) -> tuple[Any, Any]:
    """(GELU, its derivative) in float64."""
    erfc = np.frompyfunc(math.erfc, 1, 1)
    cdf = 0.5 * erfc(-x64 * math.sqrt(0.5)).astype(np.float64)
    return x64 * cdf, cdf + x64 * np.exp(-0.5 * x64 * x64) / math.sqrt(2 * math.pi)


def _errors(got: Any, ref: Any) -> tuple[float, float]:
    """(max |got - ref|, max ulp of float32 where |ref| >= 1/4)."""
    got, ref = np.asarray(got, np.float64).reshape(-1), np.asarray(ref).reshape(-1)
    err = np.abs(got - ref)
    big = np.abs(ref) >= 0.25
    ulp = err[big] / np.spacing(np.abs(ref[big]).astype(np.float32)).astype(np.float64)
    return float(err.max()), float(ulp.max()) if ulp.size else 0.0


Variant = tuple[Callable[[], Any], Callable[[], Any]]  # (timed call, the result to check)


def _into(call: Callable[[], Any], buf: Any) -> Variant:
    """A kernel that writes into ``buf``: its result is a copy of ``buf`` right after a call of its own."""
    def result() -> Any:
        call()
        return buf.copy()
    return call, result


def cases(nb: dict[str, Any] | None, ne: Any, torch: Any) -> list[tuple[str, dict[str, Variant], Any]]:
    """(kernel, {variant: (call, result)}, float64 reference or a tuple of them)."""
    import shapetorch as st
    from shapetorch.backends import thread_pool
    from shapetorch.ops import activation as act

    rng = np.random.default_rng(0)
    out: list[tuple[str, dict[str, Variant], Any]] = []

    # GELU forward and gradient
    x = (rng.standard_normal(GELU_SHAPE) * 3).astype(F32)
    g = rng.standard_normal(GELU_SHAPE).astype(F32)
    x64 = x.astype(np.float64)
    gelu64, dgelu64 = _exact_gelu(x64)
    fwd: dict[str, Variant] = {
        "numpy now": (lambda: thread_pool.flat(act._gelu_runs, (x,), act._GELU_PASSES),) * 2}
    bwd: dict[str, Variant] = {
        "numpy now": (lambda: thread_pool.flat(act._gelu_backward_runs, (x, g), act._GELU_PASSES),) * 2}
    xf, gf = x.reshape(-1), g.reshape(-1)
    of = np.empty_like(xf)
    if nb is not None:
        for tag in ("", "+par"):
            fwd["numba" + tag] = _into(lambda k=nb["nb_gelu" + tag]: k(xf, of), of)
            bwd["numba" + tag] = _into(lambda k=nb["nb_gelu_backward" + tag]: k(xf, gf, of), of)
            fwd["numba own exp" + tag] = _into(lambda k=nb["nb_gelu_ownexp" + tag]: k(xf, of), of)
            bwd["numba own exp" + tag] = _into(lambda k=nb["nb_gelu_backward_ownexp" + tag]: k(xf, gf, of), of)
        fwd["numba vectorize"] = (lambda: nb["nb_gelu+vec"](x),) * 2
    if ne is not None:
        # no erf in numexpr: Abramowitz-Stegun 7.1.26 (shapetorch's float32 formula) in one expression
        c = {"p": F32(0.3275911 * math.sqrt(0.5)), "a1": F32(0.254829592), "a2": F32(-0.284496736),
             "a3": F32(1.421413741), "a4": F32(-1.453152027), "a5": F32(1.061405429), "h": _HALF, "one": _ONE,
             "mh": F32(-0.5), "k": _INV_SQRT_2PI}
        t = "(one / (one + p * abs(x)))"  # numexpr has no let-binding: t is written out where it appears
        tail = f"(h * {t} * (a1 + {t} * (a2 + {t} * (a3 + {t} * (a4 + {t} * a5)))) * exp(mh * x * x))"
        cdf = f"where(x >= 0, one - {tail}, {tail})"
        env = {**c, "x": x, "g": g}
        fwd_expr = f"x * {cdf}"
        bwd_expr = f"g * ({cdf} + x * k * exp(mh * x * x))"
        fwd["numexpr (A&S)"] = (lambda: ne.evaluate(fwd_expr, local_dict=env),) * 2
        bwd["numexpr (A&S)"] = (lambda: ne.evaluate(bwd_expr, local_dict=env),) * 2
    if torch is not None:
        tx, tg = torch.from_numpy(x), torch.from_numpy(g)
        fwd["torch"] = (lambda: torch.nn.functional.gelu(tx),) * 2
        bwd["torch"] = (lambda: torch.ops.aten.gelu_backward(tg, tx),) * 2
    out.append(("gelu forward (8,64,512)", fwd, gelu64))
    out.append(("gelu gradient", bwd, g.astype(np.float64) * dgelu64))

    # layer_norm forward and backward
    xl = rng.standard_normal(LN_SHAPE).astype(F32)
    gl = rng.standard_normal(LN_SHAPE).astype(F32)
    w = (1 + 0.1 * rng.standard_normal(LN_SHAPE[1])).astype(F32)
    b = (0.1 * rng.standard_normal(LN_SHAPE[1])).astype(F32)
    xl64, gl64, w64 = xl.astype(np.float64), gl.astype(np.float64), w.astype(np.float64)
    mu = xl64.mean(1, keepdims=True)
    rs = 1 / np.sqrt(((xl64 - mu) ** 2).mean(1, keepdims=True) + LN_EPS)
    hat = (xl64 - mu) * rs
    gw64 = gl64 * w64
    dx64 = rs * (gw64 - gw64.mean(1, keepdims=True) - hat * (gw64 * hat).mean(1, keepdims=True))
    ln_ref = hat * w64 + b
    lnf: dict[str, Variant] = {"numpy now": (lambda: act._layer_norm_kernel(
        xl, w, b, nd=1, eps=LN_EPS, has_w=True, has_b=True),) * 2}
    lnb: dict[str, Variant] = {"numpy now": (lambda: act._layer_norm_backward_arrays(
        xl, gl, w, 1, LN_EPS, (True, True, True))[0],) * 2}
    ol, dw, db = np.empty_like(xl), np.empty_like(w), np.empty_like(b)
    eps32 = F32(LN_EPS)
    if nb is not None:
        for tag in ("", "+par", "+reassoc"):
            lnf["numba" + tag] = _into(lambda k=nb["nb_layer_norm" + tag]: k(xl, w, b, eps32, ol), ol)
            lnb["numba" + tag] = _into(lambda k=nb["nb_layer_norm_backward" + tag]: k(xl, gl, w, eps32, ol, dw, db),
                                       ol)
    if ne is not None:
        def ne_ln() -> Any:  # the statistics in NumPy, the rest one expression
            m = xl.mean(1, keepdims=True)
            r = 1 / np.sqrt(xl.var(1, keepdims=True) + eps32)
            return ne.evaluate("(xl - m) * r * w + b", local_dict={"xl": xl, "m": m, "r": r, "w": w, "b": b})
        lnf["numexpr (+numpy stats)"] = (ne_ln, ne_ln)
    if torch is not None:
        txl, tgl, tw, tb = (torch.from_numpy(a) for a in (xl, gl, w, b))
        tmean = txl.mean(1, keepdim=True)
        trstd = 1 / torch.sqrt(txl.var(1, keepdim=True, unbiased=False) + LN_EPS)
        lnf["torch"] = (lambda: torch.nn.functional.layer_norm(txl, (LN_SHAPE[1],), tw, tb, LN_EPS),) * 2
        lnb["torch"] = (lambda: torch.ops.aten.native_layer_norm_backward(
            tgl, txl, (LN_SHAPE[1],), tmean, trstd, tw, tb, (True, True, True))[0],) * 2
    out.append(("layer_norm forward (512,128)", lnf, ln_ref))
    out.append(("layer_norm backward (dx,dw,db)", lnb, dx64))

    # one LSTM step's pointwise work
    bsz, k = LSTM_BATCH, LSTM_HIDDEN
    gi = rng.standard_normal((bsz, 4 * k)).astype(F32)
    gh = rng.standard_normal((bsz, 4 * k)).astype(F32)
    c0 = rng.standard_normal((bsz, k)).astype(F32)
    pre64 = gi.astype(np.float64) + gh

    def sig(a: Any) -> Any:
        return 1 / (1 + np.exp(-a))
    c_ref = sig(pre64[:, k:2 * k]) * c0 + sig(pre64[:, :k]) * np.tanh(pre64[:, 2 * k:3 * k])
    h_ref = sig(pre64[:, 3 * k:]) * np.tanh(c_ref)
    # shapetorch's layer kernel (ops/recurrent.py, _lstm_steps): gates laid out (4, B, H) as o, i, f, g, the
    # sigmoid blocks negated in gi and in the weights; the passes of one step after its GEMM
    order = (3, 0, 1, 2)
    x4 = np.stack([gi[:, j * k:(j + 1) * k] for j in order])
    g4 = np.stack([gh[:, j * k:(j + 1) * k] for j in order])
    x4[:3] *= -1
    g4[:3] *= -1
    pre4, tmp = np.empty_like(x4), np.empty((bsz, k), F32)
    hs, cs = np.empty((bsz, k), F32), np.empty((bsz, k), F32)

    def st_step() -> Any:
        np.add(x4, g4, out=pre4)
        s3 = pre4[:3]
        np.exp(s3, out=s3)
        s3 += 1
        np.reciprocal(s3, out=s3)
        gg = pre4[3]
        np.tanh(gg, out=gg)
        np.multiply(pre4[2], c0, out=cs)
        np.multiply(pre4[1], gg, out=tmp)
        np.add(cs, tmp, out=cs)
        np.tanh(cs, out=tmp)
        np.multiply(pre4[0], tmp, out=hs)
        return hs
    lstm: dict[str, Variant] = {"numpy now": _into(st_step, hs)}
    if nb is not None:
        for tag in ("", "+par"):
            lstm["numba" + tag] = _into(lambda kern=nb["nb_lstm_step" + tag]: kern(gi, gh, c0, hs, cs), hs)
    if ne is not None:
        ld = {"one": _ONE, "c": c0}
        for j, name in enumerate("ifgo"):
            ld[name] = gi[:, j * k:(j + 1) * k]
            ld[name + "h"] = gh[:, j * k:(j + 1) * k]

        def ne_step() -> Any:
            ne.evaluate("one / (one + exp(-(f + fh))) * c + one / (one + exp(-(i + ih))) * tanh(g + gh)",
                        local_dict=ld, out=cs)
            return ne.evaluate("one / (one + exp(-(o + oh))) * tanh(cn)",
                               local_dict={"one": _ONE, "o": ld["o"], "oh": ld["oh"], "cn": cs}, out=hs)
        lstm["numexpr"] = (ne_step, lambda: ne_step().copy())
    if torch is not None:
        tgi, tgh, tc = (torch.from_numpy(a) for a in (gi, gh, c0))

        def torch_step() -> Any:
            i, f, gg, o = (tgi + tgh).chunk(4, 1)
            cn = torch.sigmoid(f) * tc + torch.sigmoid(i) * torch.tanh(gg)
            return torch.sigmoid(o) * torch.tanh(cn)
        lstm["torch (eager ops)"] = (torch_step,) * 2
    out.append(("lstm step gates (16,4x128)", lstm, h_ref))

    # softmax over rows
    xs = rng.standard_normal(SOFTMAX_SHAPE).astype(F32) * 4
    xs64 = xs.astype(np.float64)
    e64 = np.exp(xs64 - xs64.max(1, keepdims=True))
    sm: dict[str, Variant] = {"numpy now": (lambda: act._softmax_kernel(xs, axis=-1),) * 2}
    os_ = np.empty_like(xs)
    if nb is not None:
        for tag in ("", "+par", "+reassoc"):
            sm["numba" + tag] = _into(lambda kern=nb["nb_softmax" + tag]: kern(xs, os_), os_)
            sm["numba own exp" + tag] = _into(lambda kern=nb["nb_softmax_ownexp" + tag]: kern(xs, os_), os_)
    if ne is not None:
        def ne_softmax() -> Any:  # the max and the sums in NumPy
            m = xs.max(1, keepdims=True)
            e = ne.evaluate("exp(xs - m)", local_dict={"xs": xs, "m": m})
            r = 1 / e.sum(1, keepdims=True)
            return ne.evaluate("e * r", local_dict={"e": e, "r": r}, out=e)
        sm["numexpr (+numpy max/sum)"] = (ne_softmax, ne_softmax)
    if torch is not None:
        txs = torch.from_numpy(xs)
        sm["torch"] = (lambda: torch.softmax(txs, -1),) * 2
    out.append(("softmax (4096,1024)", sm, e64 / e64.sum(1, keepdims=True)))
    del st
    return out


# -- the probes in fresh interpreters --------------------------------------------------------------------------------

def _installed_mb(*dists: str) -> float | None:
    total = 0
    for name in dists:
        try:
            files = importlib.metadata.distribution(name).files or []
        except importlib.metadata.PackageNotFoundError:
            return None
        for f in files:
            p = f.locate()
            if os.path.isfile(p):
                total += os.path.getsize(p)
    return total / 2**20


def _import_time(module: str, tries: int = 3) -> float | None:
    if importlib.util.find_spec(module) is None:
        return None
    code = f"import numpy, time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    return statistics.median(float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                                  check=True).stdout) for _ in range(tries))


def _compile_probe() -> None:
    """(In a fresh interpreter) each numba kernel's first call and second call, in seconds, as JSON."""
    t0 = time.perf_counter()
    nb = _load_numba()
    assert nb is not None
    got: dict[str, Any] = {"import": time.perf_counter() - t0}
    x = np.ones(1024, F32)
    m = np.ones((16, 512), F32)
    c = np.ones((16, 128), F32)
    w = np.ones(512, F32)
    args: dict[str, tuple[Any, ...]] = {
        "nb_gelu": (x, x.copy()), "nb_gelu_backward": (x, x, x.copy()),
        "nb_gelu_ownexp": (x, x.copy()), "nb_gelu_backward_ownexp": (x, x, x.copy()),
        "nb_layer_norm": (m, w, w, F32(1e-5), m.copy()),
        "nb_layer_norm_backward": (m, m, w, F32(1e-5), m.copy(), w.copy(), w.copy()),
        "nb_lstm_step": (m, m, c, c.copy(), c.copy()), "nb_softmax": (m, m.copy()),
        "nb_softmax_ownexp": (m, m.copy())}
    for name, fn in nb.items():
        a = args[name.split("+")[0]] if not name.endswith("+vec") else (x,)
        t0 = time.perf_counter()
        fn(*a)
        t1 = time.perf_counter()
        fn(*a)
        got[name] = t1 - t0
    print(json.dumps(got))


def probes() -> dict[str, Any]:
    res: dict[str, Any] = {
        "installed MB": {"numba+llvmlite": _installed_mb("numba", "llvmlite"), "numexpr": _installed_mb("numexpr")},
        "import s (after numpy)": {m: _import_time(m) for m in ("numba", "numexpr", "torch")},
    }
    if importlib.util.find_spec("numba") is not None:
        cmd = [sys.executable, "-m", "bench.bench_compiled_kernels", "--compile-probe"]
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
            env = {**os.environ, "NUMBA_CACHE_DIR": cache}
            for label in ("first call s (empty cache)", "first call s (cache filled)"):
                run = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env, cwd=root)
                res[label] = json.loads(run.stdout.strip().splitlines()[-1])
    return res


# -- main ------------------------------------------------------------------------------------------------------------

def _fmt(s: float) -> str:
    return f"{s * 1e6:9.1f} us" if s < 1e-2 else f"{s * 1e3:9.2f} ms"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=1, help="threads for every library (default 1)")
    p.add_argument("--repeat", type=int, default=7, help="interleaved rounds; the median round is reported")
    p.add_argument("--min-time", type=float, default=0.3)
    p.add_argument("--no-probe", action="store_true", help="skip import, compile and install-size probes")
    p.add_argument("--only", help="only the kernels whose name starts with this")
    p.add_argument("--json", help="also write the results here")
    p.add_argument("--compile-probe", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.compile_probe:
        _compile_probe()
        return 0

    from ._timing import loop_count

    print(f"load average before: {os.getloadavg()}")
    missing = [m for m in ("numba", "numexpr", "torch") if importlib.util.find_spec(m) is None]
    if missing:
        print("not importable, not measured: " + ", ".join(missing))
    versions = {m: importlib.metadata.version(m) for m in ("numpy", "numba", "llvmlite", "numexpr", "torch")
                if importlib.util.find_spec(m) is not None}
    print(f"versions: {versions}")
    report: dict[str, Any] = {"threads": args.threads, "missing": missing, "versions": versions,
                              "load before": os.getloadavg()}
    if not args.no_probe:
        report["probes"] = probes()
        print(json.dumps(report["probes"], indent=1))

    import shapetorch as st

    st.set_num_threads(args.threads)
    nb = _load_numba()
    ne = torch = None
    if "numexpr" not in missing:
        import numexpr as ne

        ne.set_num_threads(args.threads)
    if "torch" not in missing:
        import torch

        torch.set_num_threads(args.threads)
    if nb is not None:
        import numba

        numba.set_num_threads(args.threads)

    rows: list[dict[str, Any]] = []
    for kernel, variants, ref in cases(nb, ne, torch):
        if args.only and not kernel.startswith(args.only):
            continue
        for call, _ in variants.values():
            call()  # compile / warm up
        loops = {v: loop_count(call, args.min_time) for v, (call, _) in variants.items()}
        runs: dict[str, list[float]] = {v: [] for v in variants}
        for _ in range(args.repeat):
            for v, (call, _) in variants.items():
                t0 = time.process_time()
                for _ in range(loops[v]):
                    call()
                runs[v].append((time.process_time() - t0) / loops[v])
        key = next((v for v in variants if v.startswith("torch")), None)
        torch_t = statistics.median(runs[key]) if key else None
        print(f"\n{kernel}")
        for v, (_, result) in variants.items():
            med = statistics.median(runs[v])
            err, ulp = _errors(result(), ref)
            ratio = f"{med / torch_t:6.2f}x torch" if torch_t else ""
            print(f"  {v:26s} {_fmt(med)}  {ratio}   max|err| {err:.2e}  max ulp {ulp:6.1f}")
            rows.append({"kernel": kernel, "variant": v, "median_s": med, "runs_s": runs[v],
                         "max_abs_err": err, "max_ulp": ulp})
    report["rows"] = rows
    report["load after"] = os.getloadavg()
    print(f"\nload average after: {report['load after']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
