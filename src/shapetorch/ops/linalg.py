"""torch.linalg: factorizations (cholesky, qr, svd, eigh, eig), solvers (solve, solve_triangular, lstsq),
determinants, norms, and the functions written in them (pinv, matrix_rank, cond, matrix_power, matrix_exp, ...).

The op table names the functions torch has only under ``torch.linalg`` as ATen does (``linalg_solve``,
``linalg_svd``, ...); ``shapetorch.linalg`` gives them their public names. Functions torch also has at the
top level (``det``, ``slogdet``, ``matrix_power``, ``matrix_exp``, ``cross``) are registered once, under that name.

A factorization is computed once by NumPy's LAPACK; each of its outputs is then a primitive of its own whose
kernel hands back the precomputed array and whose vjp is that output's part of torch's backward formula.
The formulas are linear in the output gradients, so the engine's sum over the outputs is the whole formula.
Each vjp reads the sibling outputs (the tensors, recorded on its node), so double backward works.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._engine.primitives import Prim
from .._errors import fail
from .._rules import matrix as RX
from .._tensor import Tensor
from . import return_types as RT
from ._common import autocast_inputs, be, cast, check, dtype_name, need_floating, new_tensor, zero_grad
from ._registry import public
from .matrix import matrices, singular_error
from .return_types import (
    PLU,
    QR,
    SVD,
    CholeskyEx,
    Eigh,
    InvEx,
    LDLFactor,
    LDLFactorEx,
    Lstsq,
    LUFactor,
    LUFactorEx,
    SlogDet,
    SolveEx,
    SVDLegacy,
    TriangularSolve,
)

Arr = Any
_FLOAT = ("float32", "float64", "complex64", "complex128")
















def _floating(x: Tensor, op: str) -> None:
    name = dtype_name(x)
    if name not in _FLOAT:
        fail("method_dtype_not_supported_error", op=op, dtype=name,
             hint=f" ({op} expects a floating point or complex tensor: float32, float64, complex64 or complex128)")


def _same(op: str, a: Tensor, b: Tensor) -> None:
    if dtype_name(a) != dtype_name(b):
        fail("dtype_error_mismatch", op=op, what="A and B", a=a.dtype.name, b=b.dtype.name)


def _new(data: Arr, like: Tensor) -> Tensor:
    return Tensor._make(data if data.flags.c_contiguous else data.copy(), like._device)


def _given(a: Arr, value: Arr, **_: Any) -> Arr:
    """The kernel of an output of a factorization computed beforehand: the value itself."""
    return value


_zero_grad = zero_grad  # (A^0, the count of non-zeros, an empty product: differentiable outputs of gradient zero)


def _outputs(input: Tensor, prims: tuple[Prim, ...], values: tuple[Arr, ...], **params: Any) -> list[Tensor]:
    """One primitive per output of a factorization; each node's ``outs`` param is one list of all the outputs.

    The list exists before the first output does, holding the values as constants, and is filled with the
    outputs themselves afterwards: forward-mode AD runs an output's vjp (its jvp by the double-vjp trick) the
    moment that output is made, before its siblings exist, and finds them there as constants; backward later
    finds the outputs themselves, so double backward differentiates through the siblings."""
    outs: list[Tensor] = [Tensor._make(v, input._device) for v in values]
    made = [p(input, value=v, outs=outs, **params) for p, v in zip(prims, values)]
    outs[:] = made
    return made


def _eye_like(a: Tensor, n: int) -> Tensor:
    from .creation import eye

    return eye(n, dtype=a.dtype, device=a.device)


def _on_host(a: Tensor) -> bool:
    """Whether a factorization of ``a`` runs here in NumPy/LAPACK; elsewhere the device's ``factor`` computes
    the outputs (``backends/webgpu/factorizations.py``)."""
    return isinstance(a._data, (np.ndarray, np.generic))


def _diag(v: Tensor) -> Tensor:
    from .matrix import diag_embed

    return diag_embed(v)


# -- errors of LAPACK, as torch words them ------------------------------------------------------------------------

def _not_pd(op: str, a: Arr) -> int:
    """The order of the first leading minor of the first matrix that is not positive-definite, or 0."""
    for m in matrices(a):
        try:
            d = np.diagonal(np.linalg.cholesky(m))
            if not np.isnan(d).any():
                continue
            return int(np.isnan(d).argmax()) + 1  # LAPACK's potrf stops at a NaN pivot, NumPy goes on
        except np.linalg.LinAlgError:
            pass
        lo, hi = 1, m.shape[-1]  # failing is monotonic in the order: bisect for the first that fails
        while lo < hi:
            mid = (lo + hi) // 2
            try:
                np.linalg.cholesky(m[:mid, :mid])
                lo = mid + 1
            except np.linalg.LinAlgError:
                hi = mid
        return lo
    return 0


# -- inverse and solve ------------------------------------------------------------------------------------------------

@public("linalg", method=False)
def linalg_inv(A: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The inverse of each square matrix; a singular one raises torch's error."""
    A = autocast_inputs("linalg_inv", A)[0]
    from .matrix import inverse

    r = inverse(A)
    return r if out is None else out.copy_(r)


@public("linalg", method=False)
def linalg_inv_ex(A: Tensor, *, check_errors: bool = False) -> InvEx:
    """``(inverse, info)``: info is 0 where the inverse exists, else the pivot at which LU met zero (no error).
    As torch's, a solve with the identity: a singular matrix's inverse is what LU's substitutions make of the
    zero pivot (infinities, NaN), the other matrices of the batch are inverted."""
    check(RX.inverse_shape, A._data.shape, op="linalg.inv_ex")
    _floating(A, "linalg.inv_ex")
    eye = _eye_like(A, A._data.shape[-1]).expand(*A._data.shape)
    return RT.linalg_inv_ex(*_solve_ex(A, eye, True, check_errors, "linalg.inv_ex", "inversion"))


def _info_error(op: str, info: Arr, what: str) -> None:
    """torch's error (``check_errors=True``) for the first matrix whose LU ``info`` (a host array) is not 0."""
    flat = np.asarray(info).reshape(-1)
    if not flat.any():
        return
    b = int(np.flatnonzero(flat)[0])
    cause = "The solver failed" if what == "solve" else \
        f"The diagonal element {int(flat[b])} is zero, the {what} could not be completed"
    fail("linalg_error_singular", op=f"{op}: (Batch element {b})" if np.ndim(info) else op, cause=cause)


def _solve_kernel(a: Arr, b: Arr) -> Arr:
    try:
        return np.linalg.solve(a, b).astype(a.dtype, copy=False)
    except np.linalg.LinAlgError:
        singular_error("linalg.solve", a, "solve")
        raise


def _solve_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    a = n.inputs[0]
    gb = _SOLVE(a.mH, g)
    ga = -(gb @ n.out.mH) if a.requires_grad else None
    return ga, gb


_SOLVE = Prim("linalg_solve", _solve_kernel, _solve_vjp, save_output=True)
def _solve_jvp(ts: tuple[Any, ...], n: Any) -> Any:
    a = n.inputs[0]
    rhs = ts[1] if ts[1] is not None else None
    if ts[0] is not None:
        da = ts[0] @ n.out
        rhs = -da if rhs is None else rhs - da
    return None if rhs is None else _SOLVE(a, rhs)


_SOLVE.jvp = _solve_jvp


@public("linalg", method=False)
def linalg_solve(A: Tensor, B: Tensor, *, left: bool = True, out: Tensor | None = None) -> Tensor:
    """The solution X of ``A X = B`` (``X A = B`` when not ``left``); B may be a batch of vectors."""
    A, B = autocast_inputs("linalg_solve", A, B)
    shape = check(RX.solve_shape, A._data.shape, B._data.shape, left, op="linalg.solve")
    _floating(A, "linalg.solve")
    _same("linalg.solve", A, B)
    vector = len(shape) == A._data.ndim - 1 or (B._data.ndim == 1)
    batch = shape[:-1] if vector else shape[:-2]
    n = A._data.shape[-1]
    Ab = A.expand(*batch, n, n)
    if vector:
        Bm = B.unsqueeze(-1).expand(*batch, n, 1)
        r = _SOLVE(Ab if left else Ab.mT, Bm).squeeze(-1)
    elif left:
        r = _SOLVE(Ab, B.expand(*batch, *B._data.shape[-2:]))
    else:
        r = _SOLVE(Ab.mT, B.expand(*batch, *B._data.shape[-2:]).mT).mT
    return r if out is None else out.copy_(r)


@public("linalg", method=False)
def linalg_solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False,
                            out: Tensor | None = None) -> Tensor:
    """``A X = B`` (or ``X A = B``) reading only A's upper or lower triangle (its diagonal taken as 1 if
    ``unitriangular``). Written in solve, so it batches and differentiates as solve does."""
    check(RX.inverse_shape, A._data.shape, op="linalg.solve_triangular")
    if B._data.ndim < 2:
        fail("linalg_error_requires_at_least_2d", op="linalg.solve_triangular", shape=tuple(B._data.shape))
    _floating(A, "linalg.solve_triangular")
    if A._data.dtype != B._data.dtype:  # torch casts B to A's dtype (a complex B to a real A loses its imaginary part)
        B = cast(B.real if B.is_complex() and not A.is_complex() else B, dtype_name(A))
    T = A.triu() if upper else A.tril()
    if unitriangular:
        T = T.triu(1) + _eye_like(A, A._data.shape[-1]) if upper else T.tril(-1) + _eye_like(A, A._data.shape[-1])
    r = linalg_solve(T, B, left=left) if B._data.ndim >= 2 else linalg_solve(T, B.unsqueeze(-1)).squeeze(-1)
    return r if out is None else out.copy_(r)


# -- determinants -----------------------------------------------------------------------------------------------------

def _det_kernel(a: Arr) -> Arr:
    return np.asarray(np.linalg.det(a)).astype(a.dtype)


def _cofactor(a: Tensor) -> Tensor:
    """The cofactor matrix conj(d det / dA) = det(A) A^{-H}: through the SVD, so it holds for singular A too."""
    U, S, Vh = linalg_svd(a, full_matrices=False)
    n = S._data.shape[-1]
    if n == 0:
        return a.new_zeros(a._data.shape)
    from .creation import ones
    # prod_{j != i} s_j, without dividing by s_i
    mask = ones(n, n, dtype=S.dtype, device=S.device) - _eye_like(S, n)
    others = (S.unsqueeze(-2) * mask + (1 - mask)).prod(-1)
    phase = det(U.detach()) * det(Vh.detach())
    out: Tensor = (U * others.unsqueeze(-2).to(U.dtype)) @ Vh
    return out * phase.unsqueeze(-1).unsqueeze(-1)


def _det_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    a = n.inputs[0]
    return ((g.conj() * 1).conj().unsqueeze(-1).unsqueeze(-1) * _cofactor(a).conj(),)


_DET = Prim("det", _det_kernel, _det_vjp)


@public("linalg")
def det(A: Tensor) -> Tensor:
    """The determinant of each square matrix (gradients hold for singular matrices too, through the SVD)."""
    check(RX.inverse_shape, A._data.shape, op="linalg.det")
    _floating(A, "linalg.det")
    return _DET(A)


def _slogdet_arrays(a: Arr) -> tuple[Arr, Arr]:
    sign, logabs = np.linalg.slogdet(a)
    real = np.float32 if a.dtype in (np.float32, np.complex64) else np.float64
    return np.asarray(sign).astype(a.dtype), np.asarray(logabs).astype(real)


def _logabsdet_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    a = n.inputs[0]
    inv_h = linalg_inv(a).mH
    return (g.to(a.dtype).unsqueeze(-1).unsqueeze(-1) * inv_h,)


_SIGN = Prim("linalg_slogdet_sign", _given, lambda g, n: (None,))
_LOGABSDET = Prim("linalg_slogdet_logabsdet", _given, _logabsdet_vjp)


@public("linalg")
def slogdet(A: Tensor) -> SlogDet:
    """``(sign, logabsdet)`` of each determinant: ``det = sign * exp(logabsdet)``, accurate where det under- or
    overflows. The gradient flows through logabsdet (that of a complex sign is not computed)."""
    check(RX.inverse_shape, A._data.shape, op="linalg.slogdet")
    _floating(A, "linalg.slogdet")
    sign, logabs = _slogdet_arrays(A._data) if _on_host(A) else be(A).factor("slogdet", A._data)
    return RT.linalg_slogdet(*_outputs(A, (_SIGN, _LOGABSDET), (sign, logabs)))


@public("linalg")
def logdet(input: Tensor) -> Tensor:
    """log(det(A)): nan for a negative determinant, -inf for zero."""
    s, la = slogdet(input)
    from .conversion import where

    out: Tensor = where(s < 0, float("nan"), la) if not input.is_complex() else la + s.log()
    return out


# -- cholesky -------------------------------------------------------------------------------------------------------

def _phi(x: Tensor) -> Tensor:
    """The lower triangle with its diagonal halved."""
    return x.tril() - 0.5 * _diag(x.diagonal(0, -2, -1))


def _cholesky_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    upper = n.params["upper"]
    L = n.params["outs"][0]
    if upper:
        L, g = L.mH, g.mH
    P = _phi(L.mH @ g.tril())
    S = linalg_solve_triangular(L.mH, linalg_solve_triangular(L, P, upper=False, left=False), upper=True)
    return (0.5 * (S.mH + S),)


_CHOLESKY = Prim("linalg_cholesky", _given, _cholesky_vjp)


def _cholesky_arrays(a: Arr, upper: bool) -> tuple[Arr, int]:
    if upper:  # LAPACK's potrf with uplo 'U', as torch: U^H U from the upper triangle, the lower one of A^H
        a = np.conj(np.swapaxes(a, -1, -2))
    try:
        L = np.linalg.cholesky(a) if a.size else a.copy()
    except np.linalg.LinAlgError:
        return np.full_like(a, np.nan), _not_pd("linalg.cholesky", a)
    bad = np.isnan(np.diagonal(L, 0, -2, -1).real).reshape(-1, a.shape[-1]) if a.size else np.zeros((0, 0), bool)
    if bad.any():  # NumPy carries NaN through; LAPACK (so torch) stops at the first NaN pivot, as not positive-definite
        return np.full_like(a, np.nan), int(np.argmax(bad[bad.any(axis=1)][0])) + 1
    return (np.conj(np.swapaxes(L, -1, -2)) if upper else L), 0


@public("linalg", method=False)
def linalg_cholesky(A: Tensor, *, upper: bool = False, out: Tensor | None = None) -> Tensor:
    """L with ``A = L L^H`` from A's lower triangle; L^H when ``upper``. Not positive-definite: torch's error."""
    A = autocast_inputs("linalg_cholesky", A)[0]
    check(RX.inverse_shape, A._data.shape, op="linalg.cholesky")
    _floating(A, "linalg.cholesky")
    # a device records the positive-definiteness check and raises at the next sync
    L, order = _cholesky_arrays(A._data, upper) if _on_host(A) else (be(A).factor("cholesky", A._data, upper=upper), 0)
    if order:
        fail("linalg_error_not_positive_definite", op="linalg.cholesky", order=order)
    r = _outputs(A, (_CHOLESKY,), (L.astype(A._data.dtype, copy=False),), upper=upper)[0]
    return r if out is None else out.copy_(r)


@public("linalg", method=False)
def linalg_cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False) -> CholeskyEx:
    """``(L, info)``: info is the order of the first leading minor that is not positive-definite, else 0."""
    check(RX.inverse_shape, A._data.shape, op="linalg.cholesky_ex")
    _floating(A, "linalg.cholesky_ex")
    if not _on_host(A):  # info from the device's factorization (L is NaN from a failing minor on)
        L, dinfo = be(A).factor("cholesky_ex", A._data, upper=upper, check_errors=check_errors)
        return RT.linalg_cholesky_ex(_outputs(A, (_CHOLESKY,), (L,), upper=upper)[0], _new(dinfo, A))
    info = np.zeros(A._data.shape[:-2], dtype=np.int32)
    flat, mats = info.reshape(-1), matrices(A._data)
    for b, m in enumerate(mats):
        flat[b] = _not_pd("linalg.cholesky_ex", m[None]) if m.size else 0
    if check_errors and flat.any():
        fail("linalg_error_not_positive_definite", op="linalg.cholesky_ex", order=int(flat[flat > 0][0]))
    if flat.any():
        L = np.linalg.cholesky(np.where(flat.reshape(info.shape)[..., None, None] > 0,
                                        np.eye(A._data.shape[-1], dtype=A._data.dtype), A._data))
        return RT.linalg_cholesky_ex(_new(np.conj(np.swapaxes(L, -1, -2)) if upper else L, A), _new(info, A))
    return RT.linalg_cholesky_ex(linalg_cholesky(A, upper=upper), _new(info, A))


# -- eigh -----------------------------------------------------------------------------------------------------------

def _eigh_values_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    outs = n.params["outs"]
    V = outs[1] if len(outs) > 1 else linalg_eigh(n.inputs[0], n.params["UPLO"]).eigenvectors
    return ((V * g.to(V.dtype).unsqueeze(-2)) @ V.mH,)


def _eigh_vectors_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    w, V = n.params["outs"]
    VhgV = V.mH @ g
    skew = 0.5 * (VhgV - VhgV.mH)
    E = w.unsqueeze(-2) - w.unsqueeze(-1)
    k = w._data.shape[-1]
    eye = _eye_like(w, k)
    ratio = (skew / (E + eye).to(skew.dtype)) * (1 - eye).to(skew.dtype)
    return (V @ ratio @ V.mH,)


_EIGH_W = Prim("linalg_eigh_eigenvalues", _given, _eigh_values_vjp)
_EIGH_V = Prim("linalg_eigh_eigenvectors", _given, _eigh_vectors_vjp)


def _eigh_arrays(a: Arr, UPLO: str) -> tuple[Arr, Arr]:
    if a.size == 0:
        return np.zeros(a.shape[:-1], dtype=np.abs(a).dtype), a.copy()
    if np.isnan(np.tril(a) if UPLO == "L" else np.triu(a)).any():  # LAPACK does not converge: torch raises
        fail("linalg_error_not_converged", op="linalg.eigh")
    w, V = np.linalg.eigh(a, UPLO=UPLO)  # type: ignore[call-overload]
    return w, V


def _uplo(UPLO: str, op: str) -> None:
    if UPLO not in ("L", "U"):
        fail("argument_error_invalid", op=op, problem=f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


@public("linalg", method=False)
def linalg_eigh(A: Tensor, UPLO: str = "L", *, out: Any = None) -> Eigh:
    """Eigenvalues (ascending, real) and orthonormal eigenvectors of Hermitian matrices, from one triangle."""
    check(RX.eigh_shapes, A._data.shape, op="linalg.eigh")
    _floating(A, "linalg.eigh")
    _uplo(UPLO, "linalg.eigh")
    w, V = _eigh_arrays(A._data, UPLO) if _on_host(A) else be(A).factor("eigh", A._data, UPLO=UPLO)
    return RT.linalg_eigh(*_outputs(A, (_EIGH_W, _EIGH_V), (w, V), UPLO=UPLO))


@public("linalg", method=False)
def linalg_eigvalsh(A: Tensor, UPLO: str = "L", *, out: Tensor | None = None) -> Tensor:
    """The eigenvalues of :func:`linalg_eigh` alone (their gradient still uses the eigenvectors)."""
    check(RX.eigh_shapes, A._data.shape, op="linalg.eigvalsh")
    _floating(A, "linalg.eigvalsh")
    _uplo(UPLO, "linalg.eigvalsh")
    w, _ = _eigh_arrays(A._data, UPLO) if _on_host(A) else be(A).factor("eigh", A._data, UPLO=UPLO)
    r = _outputs(A, (_EIGH_W,), (w,), UPLO=UPLO)[0]
    return r if out is None else out.copy_(r)


# -- eig (general matrices: complex results) --------------------------------------------------------------------------

def _complex_of(a: Arr) -> Any:
    return np.complex64 if a.dtype in (np.float32, np.complex64) else np.complex128


def _eig_vjp(which: int) -> Any:
    def vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
        a = n.inputs[0]
        outs = n.params["outs"]
        L, V = (outs[0], outs[1]) if len(outs) > 1 else linalg_eig(a)
        Vh = V.mH
        k = L._data.shape[-1]
        eye = _eye_like(L, k).to(V.dtype)
        if which == 0:
            inner = _diag(g.to(V.dtype))
        else:
            VhgV = Vh @ g
            VhgV = VhgV - Vh @ (V * VhgV.diagonal(0, -2, -1).real.to(V.dtype).unsqueeze(-2))
            Lc = L.conj()
            E = Lc.unsqueeze(-2) - Lc.unsqueeze(-1)
            inner = VhgV / (E + eye) * (1 - eye)
        gA = linalg_solve(Vh, inner @ Vh)
        return (gA if a.is_complex() else gA.real,)

    return vjp


_EIG_W = Prim("linalg_eig_eigenvalues", _given, _eig_vjp(0))
_EIG_V = Prim("linalg_eig_eigenvectors", _given, _eig_vjp(1))


@public("linalg", method=False)
def linalg_eig(A: Tensor, *, out: Any = None) -> Eigh:
    """Eigenvalues and (unit-norm) eigenvectors of general square matrices, always complex."""
    check(RX.eigh_shapes, A._data.shape, op="linalg.eig")
    _floating(A, "linalg.eig")
    ct = _complex_of(A._data)
    if not _on_host(A) and not A.is_complex():  # the device's kernel; its finiteness check raises at the next sync
        return RT.linalg_eig(*_outputs(A, (_EIG_W, _EIG_V), be(A).factor("eig", A._data)))
    # a device's complex matrices are read back, LAPACK's geev runs on the host and the results are uploaded
    # (torch's CUDA eig syncs the same way: its geev runs on the host too)
    a = A._data if _on_host(A) else be(A).to_numpy(A._data)
    if not np.isfinite(a).all():  # torch checks before LAPACK, which would not converge
        fail("linalg_error_not_converged", op="linalg.eig")
    if a.size:
        w, V = np.linalg.eig(a)
    else:
        w, V = np.zeros(a.shape[:-1]), a
    w, V = np.asarray(w).astype(ct), np.asarray(V).astype(ct)
    if not _on_host(A):
        w, V = be(A).from_numpy(w), be(A).from_numpy(V)
    return RT.linalg_eig(*_outputs(A, (_EIG_W, _EIG_V), (w, V)))


@public("linalg", method=False)
def linalg_eigvals(A: Tensor, *, out: Tensor | None = None) -> Tensor:
    r = linalg_eig(A).eigenvalues
    return r if out is None else out.copy_(r)


# -- svd ----------------------------------------------------------------------------------------------------------------

def _svd_vjp(which: int) -> Any:
    """torch's svd_backward, the part of output ``which`` (0: U, 1: S, 2: Vh)."""

    def vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
        U, S, Vh = n.params["outs"]
        m, nn = n.inputs[0]._data.shape[-2:]
        k = S._data.shape[-1]
        if n.params["full_matrices"]:
            U, Vh = U[..., :, :k], Vh[..., :k, :]
            if which == 0:
                g = g[..., :, :k]
            elif which == 2:
                g = g[..., :k, :]
        Sc = S.to(U.dtype)
        if which == 1:
            return ((U * g.to(U.dtype).unsqueeze(-2)) @ Vh,)
        eye = _eye_like(S, k)
        S2 = S * S
        E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + eye
        if which == 0:
            UhgU = U.mH @ g
            skew = UhgU - UhgU.mH
            inner = skew * Sc.unsqueeze(-2) / E.to(U.dtype)
            if U.is_complex():
                inner = inner + _diag(UhgU.diagonal(0, -2, -1).imag.to(U.dtype) * 1j / (2 * Sc))
            gA = U @ inner
            if m > k:
                gUS = g / Sc.unsqueeze(-2)
                gA = gA + gUS - U @ (U.mH @ gUS)
            return (gA @ Vh,)
        V, gV = Vh.mH, g.mH
        VhgV = Vh @ gV
        skew = VhgV - VhgV.mH
        inner = Sc.unsqueeze(-1) * skew / E.to(U.dtype)
        gA = inner @ Vh
        if nn > k:
            gVS = gV / Sc.unsqueeze(-2)
            gA = gA + gVS.mH - (gVS.mH @ V) @ Vh
        return (U @ gA,)

    return vjp


_SVD_U = Prim("linalg_svd_U", _given, _svd_vjp(0))
_SVD_S = Prim("linalg_svd_S", _given, _svd_vjp(1))
_SVD_VH = Prim("linalg_svd_Vh", _given, _svd_vjp(2))


def _svd_arrays(a: Arr, full_matrices: bool) -> tuple[Arr, Arr, Arr]:
    m, n = a.shape[-2:]
    if a.size == 0:
        k = min(m, n)
        batch = a.shape[:-2]
        real = np.abs(a).dtype
        eye_u = np.broadcast_to(np.eye(m, m if full_matrices else k, dtype=a.dtype), (*batch, m, m if full_matrices else k))
        eye_v = np.broadcast_to(np.eye(n if full_matrices else k, n, dtype=a.dtype),
                                (*batch, n if full_matrices else k, n))
        return eye_u.copy(), np.zeros((*batch, k), dtype=real), eye_v.copy()
    if np.isnan(a).any():  # LAPACK does not converge; torch says so before it tries
        fail("linalg_error_not_converged", op="linalg.svd")
    if np.isinf(a).any():  # torch's LAPACK call returns NaN factors (where NumPy's raises)
        U, S, Vh = np.linalg.svd(np.zeros_like(a), full_matrices=full_matrices)
        return np.full_like(U, np.nan), np.full_like(S, np.nan), np.full_like(Vh, np.nan)
    U, S, Vh = np.linalg.svd(a, full_matrices=full_matrices)
    return U, S, Vh


@public("linalg", method=False)
def linalg_svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None, out: Any = None) -> SVD:
    """``A = U diag(S) Vh`` with S descending. Gradients as torch's: they require distinct singular values, and
    for complex input a loss that does not depend on the singular vectors' phases."""
    check(RX.svd_shapes, A._data.shape, full_matrices, op="linalg.svd")
    _floating(A, "linalg.svd")
    if driver is not None:
        fail("argument_error_invalid", op="linalg.svd",
             problem="keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend.")
    arrays = (_svd_arrays(A._data, full_matrices) if _on_host(A) else
              be(A).factor("svd", A._data, full_matrices=full_matrices))
    return RT.linalg_svd(*_outputs(A, (_SVD_U, _SVD_S, _SVD_VH), arrays, full_matrices=full_matrices))


@public("linalg", method=False)
def linalg_svdvals(A: Tensor, *, driver: str | None = None, out: Tensor | None = None) -> Tensor:
    """The singular values, descending (their gradient is ``U diag(g) Vh``)."""
    r = linalg_svd(A, full_matrices=False, driver=driver).S
    return r if out is None else out.copy_(r)


# -- qr -----------------------------------------------------------------------------------------------------------------

def _copyltu(M: Tensor) -> Tensor:
    """The Hermitian matrix whose lower triangle is M's (and whose diagonal is M's real diagonal)."""
    low = M.tril(-1)
    d = M.diagonal(0, -2, -1)
    return low + low.mH + _diag(d.real.to(M.dtype) if M.is_complex() else d)


def _qr_vjp(which: int) -> Any:
    def vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
        Q, R = n.params["outs"]
        mode = n.params["mode"]
        m, nn = n.inputs[0]._data.shape[-2:]
        if mode == "r":
            fail("autograd_error_not_differentiable", op="linalg.qr",
                 problem="The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                         "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
        if mode == "complete" and m > nn:
            fail("autograd_error_not_differentiable", op="linalg.qr",
                 problem="The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
        gQ = g if which == 0 else None
        gR = g if which == 1 else None
        if m >= nn:
            M = (R @ gR.mH) if gR is not None else -(gQ.mH @ Q)  # type: ignore[union-attr]
            X = (Q @ _copyltu(M)) if gR is not None else gQ + Q @ _copyltu(M)
            return (linalg_solve_triangular(R, X.mH, upper=True).mH,)
        # wide: A = Q [X | Y] with X = Q R1 square, Y = Q R2
        R1 = R[..., :, :m]
        if gR is not None:
            gR1, gR2 = gR[..., :, :m], gR[..., :, m:]
            gX = Q @ _copyltu(R1 @ gR1.mH)
            gX = linalg_solve_triangular(R1, gX.mH, upper=True).mH
            # Y's own gradient Q gR2, plus the part of Q's gradient Y gR2^H that passes through X
            gQ2 = n.inputs[0][..., :, m:] @ gR2.mH
            gX = gX + linalg_solve_triangular(R1, (gQ2 + Q @ _copyltu(-(gQ2.mH @ Q))).mH, upper=True).mH
            from .joining import cat

            return (cat([gX, Q @ gR2], -1),)
        assert gQ is not None
        gX = gQ + Q @ _copyltu(-(gQ.mH @ Q))
        gX = linalg_solve_triangular(R1, gX.mH, upper=True).mH
        from .joining import cat

        return (cat([gX, gX.new_zeros((*gX._data.shape[:-1], nn - m))], -1),)

    return vjp


_QR_Q = Prim("linalg_qr_Q", _given, _qr_vjp(0))
_QR_R = Prim("linalg_qr_R", _given, _qr_vjp(1))


@public("linalg", method=False)
def linalg_qr(A: Tensor, mode: str = "reduced", *, out: Any = None) -> QR:
    """``A = Q R``, Q with orthonormal columns and R upper triangular (LAPACK's signs, as torch's)."""
    if not isinstance(mode, str):
        fail("argument_error_type", op="linalg.qr", name="mode", position=" (position 2)", expected="str",
             got=type(mode).__name__)
    check(RX.qr_shapes, A._data.shape, mode, op="linalg.qr")
    _floating(A, "linalg.qr")
    a = A._data
    if not _on_host(A):
        return RT.linalg_qr(*_outputs(A, (_QR_Q, _QR_R), be(A).factor("qr", a, mode=mode), mode=mode))
    if a.size == 0:
        from .creation import zeros

        Qs, Rs = check(RX.qr_shapes, a.shape, mode, op="linalg.qr")
        Q = np.broadcast_to(np.eye(Qs[-2], Qs[-1], dtype=a.dtype), Qs).copy() if mode != "r" else np.zeros(0, a.dtype)
        R = np.zeros(Rs, dtype=a.dtype)
        del zeros
    else:
        Q, R = np.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
        if mode == "r":
            Q = np.zeros(0, dtype=a.dtype)
    outs = _outputs(A, (_QR_Q, _QR_R), (np.asarray(Q).astype(a.dtype), np.asarray(R).astype(a.dtype)), mode=mode)
    return RT.linalg_qr(*outs)


# -- norms -------------------------------------------------------------------------------------------------------------

def _real_dtype(x: Tensor) -> Any:
    from .._dtype import to_dtype

    return to_dtype({"complex64": "float32", "complex128": "float64"}.get(dtype_name(x), dtype_name(x)))


@public("linalg", method=False)
def linalg_vector_norm(x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
                       out: Tensor | None = None) -> Tensor:
    """The vector ``ord``-norm over ``dim`` (every element by default): sum(|x|^ord)^(1/ord), max/min for
    +-inf, the count of non-zeros for 0."""
    from .reduction import amax, amin, norm

    name = dtype_name(x)
    if name not in ("float16", "bfloat16", *_FLOAT):
        fail("method_dtype_not_supported_error", op="linalg.vector_norm", dtype=name,
             hint=" (linalg.vector_norm expects a floating point or complex tensor)")
    if dtype is not None:
        x = x.to(dtype)
    if isinstance(dim, int):
        dim = (dim,)
    inf = float("inf")
    if x._data.size == 0 and (ord in (inf, -inf) or (isinstance(ord, (int, float)) and ord < 0)):
        fail("argument_error_invalid", op="linalg.vector_norm",
             problem=f"linalg.vector_norm cannot compute the {ord} norm on an empty tensor because the operation "
                     "does not have an identity")
    a = x.abs() if x.is_complex() else x
    if ord == 2:
        r: Tensor = norm(a, 2, dim, keepdim)
    elif ord == inf:
        r = amax(a.abs(), dim if dim is not None else (), keepdim) if dim is not None else a.abs().amax()
        if keepdim and dim is None:
            r = r.reshape((1,) * x._data.ndim)
    elif ord == -inf:
        r = amin(a.abs(), dim if dim is not None else (), keepdim) if dim is not None else a.abs().amin()
        if keepdim and dim is None:
            r = r.reshape((1,) * x._data.ndim)
    else:
        r = norm(a, ord, dim, keepdim)
        if ord == 0:
            r = _zero_grad(x, r)
    return r.to(_real_dtype(x)) if out is None else out.copy_(r)


def _matrix_dims(A: Tensor, dim: Any, op: str) -> tuple[int, int]:
    from .._rules.axes import wrap_dim

    if A._data.ndim < 2:
        fail("linalg_error_requires_at_least_2d", op=op, shape=tuple(A._data.shape))
    d0, d1 = (check(wrap_dim, d, A._data.ndim, op) for d in dim)
    if d0 == d1:
        fail("dim_error_repeated", op=op, dim=dim[0], dims=list(dim))
    return d0, d1


@public("linalg", method=False)
def linalg_matrix_norm(A: Tensor, ord: Any = "fro", dim: tuple[int, int] = (-2, -1), keepdim: bool = False, *,
                       dtype: Any = None, out: Tensor | None = None) -> Tensor:
    """'fro', 'nuc', +-1, +-2 and +-inf matrix norms over the two dims ``dim``."""
    op = "linalg.matrix_norm"
    d0, d1 = _matrix_dims(A, dim, op)
    _floating(A, op)
    if dtype is not None:
        A = A.to(dtype)
    inf = float("inf")
    if ord not in ("fro", "nuc", 2, -2, 1, -1, inf, -inf):
        fail("argument_error_invalid", op=op, problem=f"Order {ord} not supported.")
    if ord != "fro" and A._data.size == 0:  # torch: every norm of an empty matrix is 0
        keep = [1 if i in (d0, d1) else s for i, s in enumerate(A._data.shape)]
        z = A.abs().new_zeros(keep if keepdim else [s for i, s in enumerate(A._data.shape) if i not in (d0, d1)])
        return z if out is None else out.copy_(z)
    if ord == "fro":
        r = linalg_vector_norm(A, 2, (d0, d1), keepdim)
    elif ord in ("nuc", 2, -2):
        moved = A.movedim((d0, d1), (-2, -1))
        s = linalg_svdvals(moved)
        r = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
        if keepdim:
            r = r.unsqueeze(-1).unsqueeze(-1).movedim((-2, -1), (d0, d1))
    elif ord in (1, -1, inf, -inf):
        summed, other = (d0, d1) if ord in (1, -1) else (d1, d0)
        colsum = A.abs().sum(summed, keepdim=True)
        r = colsum.amax(other, keepdim=True) if ord > 0 else colsum.amin(other, keepdim=True)
        if not keepdim:
            r = r.squeeze((d0, d1))
    else:
        fail("argument_error_invalid", op=op, problem=f"Order {ord} not supported.")
    return r.to(_real_dtype(A)) if out is None else out.copy_(r)


@public("linalg", method=False)
def linalg_norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
                out: Tensor | None = None) -> Tensor:
    """A vector norm for one dim (or a 1-D input), a matrix norm for two (or a 2-D input); ``ord=None`` is the
    2-norm of the flattened input (Frobenius for matrices)."""
    if isinstance(dim, int):
        dim = (dim,)
    if ord is None:
        return linalg_vector_norm(A, 2, dim, keepdim, dtype=dtype, out=out)
    if (dim is not None and len(dim) == 2) or (dim is None and A._data.ndim == 2):
        return linalg_matrix_norm(A, ord, tuple(dim) if dim is not None else (-2, -1), keepdim, dtype=dtype, out=out)
    if isinstance(ord, str):
        fail("argument_error_invalid", op="linalg.norm",
             problem=f"linalg.vector_norm: ord {ord!r} is only a matrix norm (give a 2-D input or two dims)")
    if dim is None and A._data.ndim != 1:
        fail("argument_error_invalid", op="linalg.norm",
             problem="If dim is not specified but ord is, the input must be 1D or 2D. Got " f"{A._data.ndim}D.")
    return linalg_vector_norm(A, ord, dim, keepdim, dtype=dtype, out=out)


@public("linalg", method=False)
def linalg_cond(A: Tensor, p: Any = None, *, out: Tensor | None = None) -> Tensor:
    """The condition number: sigma_max / sigma_min for p None, 2, -2; ``norm(A, p) norm(inv(A), p)`` otherwise."""
    if not (p is None or isinstance(p, (int, float, str))):  # torch's parser: a Number or a str
        fail("argument_error_type", op="linalg.cond", name="p", position=" (position 2)", expected="Number or str",
             got=type(p).__name__)
    check(RX.inverse_shape if p not in (None, 2, -2) else RX.svd_shapes, A._data.shape, op="linalg.cond")
    _floating(A, "linalg.cond")
    if not A._data.size:  # torch: the condition number of an empty matrix is 0
        r0 = A.new_zeros(tuple(A._data.shape[:-2]), dtype=_real_dtype(A))
        return r0 if out is None else out.copy_(r0)
    if p in (None, 2, -2):
        s = linalg_svdvals(A)
        r = s.amax(-1) / s.amin(-1) if p != -2 else s.amin(-1) / s.amax(-1)
    else:
        r = linalg_matrix_norm(A, p) * linalg_matrix_norm(linalg_inv(A), p)
    return r if out is None else out.copy_(r)


@public("linalg", method=False)
def linalg_matrix_rank(A: Tensor, *, atol: Any = None, rtol: Any = None, hermitian: bool = False,
                       tol: Any = None, out: Tensor | None = None) -> Tensor:
    """The number of singular values above ``max(atol, rtol * sigma_max)`` (rtol defaults to eps * max(m, n))."""
    check(RX.svd_shapes, A._data.shape, op="linalg.matrix_rank")
    _floating(A, "linalg.matrix_rank")
    s = (linalg_eigvalsh(A).abs() if hermitian else linalg_svdvals(A)).detach()
    smax = s.amax(-1, keepdim=True) if s._data.shape[-1] else s.new_zeros((*s._data.shape[:-1], 1))
    from .._dtype import finfo

    if tol is not None:
        atol = tol
    eps = finfo(_real_dtype(A)).eps
    if rtol is None:
        rtol = eps * max(A._data.shape[-2:]) if atol is None or _is_zero(atol) else 0.0
    thresh = smax * (rtol.unsqueeze(-1) if isinstance(rtol, Tensor) else rtol)
    if atol is not None:
        from .arithmetic import maximum

        at = atol.unsqueeze(-1) if isinstance(atol, Tensor) else atol
        thresh = maximum(thresh, at if isinstance(at, Tensor) else smax.new_full((), at))
    r = (s > thresh).sum(-1)
    return r if out is None else out.copy_(r)


def _is_zero(x: Any) -> bool:
    return not isinstance(x, Tensor) and x == 0


@public("linalg", method=False)
def linalg_pinv(A: Tensor, *, atol: Any = None, rtol: Any = None, hermitian: bool = False,
                rcond: Any = None, out: Tensor | None = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse through the SVD; singular values at or below the cut-off are dropped."""
    check(RX.svd_shapes, A._data.shape, op="linalg.pinv")
    _floating(A, "linalg.pinv")
    if rcond is not None:
        rtol = rcond
    U, S, Vh = linalg_svd(A, full_matrices=False)
    smax = S.amax(-1, keepdim=True).detach() if S._data.shape[-1] else S.new_zeros((*S._data.shape[:-1], 1))
    from .._dtype import finfo

    if rtol is None:
        rtol = finfo(_real_dtype(A)).eps * max(A._data.shape[-2:]) if atol is None or _is_zero(atol) else 0.0
    thresh = smax * (rtol.unsqueeze(-1) if isinstance(rtol, Tensor) else rtol)
    if atol is not None:
        from .arithmetic import maximum

        thresh = maximum(thresh, atol.unsqueeze(-1) if isinstance(atol, Tensor) else smax.new_full((), atol))
    from .conversion import where

    keep = S > thresh
    inv_s = where(keep, 1 / where(keep, S, S.new_ones(())), S.new_zeros(()))
    r: Tensor = (Vh.mH * inv_s.to(Vh.dtype).unsqueeze(-2)) @ U.mH
    return r if out is None else out.copy_(r)


@public("linalg")
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    input = autocast_inputs("pinverse", input)[0]
    return linalg_pinv(input, rtol=rcond)


@public("linalg", method=False)
def linalg_lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None) -> Lstsq:
    """The least-squares solution of ``A X = B`` through the pseudo-inverse (so gradients flow); like torch's
    default CPU driver 'gelsy', it reports the rank and leaves residuals and singular values empty."""
    op = "linalg.lstsq"
    check(RX.lstsq_shape, A._data.shape, B._data.shape, op=op)
    _floating(A, op)
    _same(op, A, B)
    drivers = ("gels", "gelsy", "gelsd", "gelss")
    if driver is not None and driver not in drivers:
        fail("argument_error_invalid", op=op,
             problem=f"parameter `driver` should be one of (gels, gelsy, gelsd, gelss), but got {driver}")
    if driver == "gels":
        _gels_full_rank(be(A).to_numpy(A.detach()._data), op)
    vector = RX.lstsq_vector(A._data.shape, B._data.shape)
    X = linalg_pinv(A, rtol=rcond) @ (B.unsqueeze(-1) if vector else B)
    if vector:
        X = X.squeeze(-1)
    elif B._data.ndim < A._data.ndim:  # torch's quirk: the solution is broadcast to A.shape[:-2] with B.shape[:-1]
        X = X.expand(*RX.lstsq_batch(A._data.shape, B._data.shape, op), *X._data.shape[-2:])
    rank = linalg_matrix_rank(A, rtol=rcond).to(_int64()) if driver != "gels" else A.new_zeros(0).to(_int64())
    real = _real_dtype(A)
    sv = linalg_svdvals(A).detach().to(real) if driver in ("gelsd", "gelss") else A.new_zeros(0).to(real)
    m, n = A._data.shape[-2:]
    res = A.new_zeros(0).to(real)
    if m > n and driver != "gelsy" and bool((rank == n).all()):
        resid = (A @ X.unsqueeze(-1) if vector else A @ X) - (B.unsqueeze(-1) if vector else B)
        res = (resid.abs() ** 2).sum(-2).detach()
        if vector:
            res = res.squeeze(-1)
    return RT.linalg_lstsq(X, res, rank, sv)


def _gels_full_rank(a: Arr, op: str) -> None:
    """``driver='gels'`` (LAPACK's QR solver) refuses a matrix that is not of full rank: a zero on the diagonal of
    the triangular factor of A, or of A^H when A is wide. LAPACK tests for an exact zero, which the rounding of
    the factorization decides (torch's MKL gives one for a repeated row where OpenBLAS leaves 1e-16), so a
    diagonal element within ``max(m, n) * eps`` of the largest counts as zero here (docs/compatibility.md).
    An all-zero matrix is LAPACK's quick return: the solution is zero, no error."""
    m, n = a.shape[-2:]
    if not a.size or not np.any(a):
        return
    tall = a if m >= n else np.conj(np.swapaxes(a, -1, -2))
    r = np.abs(np.diagonal(np.linalg.qr(tall, mode="r"), axis1=-2, axis2=-1))
    tol = max(m, n) * np.finfo(a.dtype).eps * r.max(axis=-1, keepdims=True)
    bad = (r <= tol) & np.any(a != 0, axis=(-2, -1))[..., None]
    if not bad.any():
        return
    flat = bad.reshape(-1, bad.shape[-1])
    b = int(np.flatnonzero(flat.any(axis=1))[0])
    fail("linalg_error_not_full_rank", op=op, batch=f"(Batch element {b}): " if a.ndim > 2 else "",
         index=int(np.flatnonzero(flat[b])[0]) + 1)


def _int64() -> Any:
    from .._dtype import int64

    return int64


# -- products and powers -----------------------------------------------------------------------------------------------

@public("linalg")
def matrix_power(input: Tensor, n: int) -> Tensor:
    """A^n by repeated squaring; n < 0 inverts first; n = 0 is the identity (for every dtype)."""
    check(RX.inverse_shape, input._data.shape, op="linalg.matrix_power")
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"matrix_power(): argument 'n' must be int, not {type(n).__name__}")
    k = input._data.shape[-1]
    if n == 0:
        return _zero_grad(input, _eye_like(input, k).expand(input._data.shape).clone())
    a = linalg_inv(input) if n < 0 else input
    n = abs(n)
    result: Tensor | None = None
    while True:
        if n & 1:
            result = a if result is None else result @ a
        n >>= 1
        if not n:
            break
        a = a @ a
    assert result is not None
    return result


def _expm_kernel(a: Arr) -> Arr:
    """In double precision (the result can be far larger than the input, so float32 steps lose digits)."""
    import scipy.linalg

    if a.size == 0:
        return a.copy()
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    return np.asarray(scipy.linalg.expm(a.astype(wide))).astype(a.dtype)


def _expm_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    """The Frechet derivative's adjoint: the upper-right block of exp([[A^H, G], [0, A^H]])."""
    from .joining import cat

    a = n.inputs[0]
    k = a._data.shape[-1]
    ah = a.mH
    top = cat([ah, g], -1)
    bottom = cat([a.new_zeros(a._data.shape), ah], -1)
    big = matrix_exp(cat([top, bottom], -2))
    return (big[..., :k, k:],)


_EXPM = Prim("matrix_exp", _expm_kernel, _expm_vjp)


@public("linalg")
def matrix_exp(A: Tensor) -> Tensor:
    """The matrix exponential (scipy's scaling and squaring with Pade approximants)."""
    check(RX.inverse_shape, A._data.shape, op="linalg.matrix_exp")
    if dtype_name(A) not in ("float16", "bfloat16"):  # torch's matrix_exp also takes the half types
        _floating(A, "linalg.matrix_exp")
    return _EXPM(A)


def _cross_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    a, b = n.inputs
    axis = n.params["axis"]
    return _CROSS(b, g, axis=axis), _CROSS(g, a, axis=axis)


_CROSS = Prim("cross", lambda a, b, axis: np.cross(a, b, axis=axis), _cross_vjp)
_CROSS.jvp = lambda ts, n: _sum_some([None if ts[0] is None else _CROSS(ts[0], n.inputs[1], **n.params),
                                      None if ts[1] is None else _CROSS(n.inputs[0], ts[1], **n.params)])


def _sum_some(parts: list[Any]) -> Any:
    parts = [p for p in parts if p is not None]
    return None if not parts else parts[0] if len(parts) == 1 else parts[0] + parts[1]


@public("linalg", method=False)
def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1, out: Tensor | None = None) -> Tensor:
    """The cross product of 3-vectors along ``dim``, the other dims broadcast."""
    shape = check(RX.cross_shape, input._data.shape, other._data.shape, dim, op="linalg.cross")
    for t in (input, other):  # torch looks for a bool kernel before it compares the dtypes
        if t._data.dtype.kind == "b":
            fail("method_dtype_not_supported_error", op="cross", dtype="bool", hint="")
    _same("linalg.cross", input, other)
    axis = dim % len(shape)
    r = _CROSS(input.expand(shape), other.expand(shape), axis=axis)
    return r if out is None else out.copy_(r)


@public("linalg")
def cross(input: Tensor, other: Tensor, dim: int | None = None, *, out: Tensor | None = None) -> Tensor:
    """torch.cross: as linalg.cross, but ``dim=None`` takes the first dim of size 3 (deprecated in torch)."""
    if dim is None:
        shape = check(RX.cross_shape, input._data.shape, other._data.shape, -1, op="cross") \
            if input._data.ndim == 0 else None
        sizes = input._data.shape
        dim = next((i for i, s in enumerate(sizes) if s == 3), -1)
        del shape
    return linalg_cross(input, other, dim=dim, out=out)


@public("linalg", method=False)
def linalg_multi_dot(tensors: Any, *, out: Tensor | None = None) -> Tensor:
    """The product of a chain of matrices (a 1-D first or last one as a row or column vector), multiplied in
    the cheapest order (the classic dynamic program over the sizes)."""
    ts = list(tensors)
    shape = check(RX.multi_dot_shape, [tuple(t._data.shape) for t in ts], op="linalg.multi_dot")
    for t in ts[1:]:
        _same("linalg.multi_dot", ts[0], t)
    mats = [ts[0].unsqueeze(0) if ts[0]._data.ndim == 1 else ts[0], *ts[1:-1],
            ts[-1].unsqueeze(-1) if ts[-1]._data.ndim == 1 else ts[-1]]
    dims = [m._data.shape[0] for m in mats] + [mats[-1]._data.shape[1]]
    k = len(mats)
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j] = -1
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if cost[i][j] < 0 or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s

    def chain(i: int, j: int) -> Tensor:
        if i == j:
            return mats[i]
        return chain(i, split[i][j]) @ chain(split[i][j] + 1, j)

    r = chain(0, k - 1).reshape(shape)
    return r if out is None else out.copy_(r)


@public("linalg", method=False)
def linalg_vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out: Tensor | None = None) -> Tensor:
    """``sum(conj(x) * y, dim)`` with broadcasting."""
    x, y = autocast_inputs("linalg_vecdot", x, y)
    _same("linalg.vecdot", x, y)
    r: Tensor = (x.conj() * y).sum(dim)
    return r if out is None else out.copy_(r)


@public("linalg", method=False)
def linalg_diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """torch.diagonal with the defaults of a batch of matrices (the last two dims)."""
    out: Tensor = A.diagonal(offset, dim1, dim2)
    return out


@public("linalg", method=False)
def linalg_vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """The Vandermonde matrix with increasing powers: ``out[..., i, j] = x[..., i] ** j``, N columns."""
    if x._data.dtype.kind == "b":
        fail("method_dtype_not_supported_error", op="linalg.vander", dtype="bool",
             hint=" (floating point, complex and integer tensors only)")
    if x._data.ndim < 1:
        x = x.reshape(1)
    n = x._data.shape[-1] if N is None else N
    if n < 0 or (n == 0 and x._data.shape[-1] != 0 and False):
        fail("argument_error_invalid", op="linalg.vander", problem="N must be greater than 1.")
    if n <= 1:
        if n < 1 and N is not None:
            fail("argument_error_invalid", op="linalg.vander", problem="N must be greater than 1.")
        return x.unsqueeze(-1).new_ones((*x._data.shape, n))
    from .joining import cat

    ones = x.unsqueeze(-1).new_ones((*x._data.shape, 1))
    powers = x.unsqueeze(-1).expand(*x._data.shape, n - 1).cumprod(-1)
    return cat([ones.to(powers.dtype), powers], -1)


@public("linalg", method=False, aliases=("orgqr",))
def linalg_householder_product(A: Tensor, tau: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The first n columns of the product of the Householder reflectors ``I - tau_i v_i v_i^H``, ``v_i`` the
    i-th column of A below the diagonal with a 1 on it (LAPACK's orgqr), written in differentiable ops."""
    op = "linalg.householder_product"
    if A._data.ndim < 2:
        fail("linalg_error_requires_at_least_2d", op=op, shape=tuple(A._data.shape))
    m, n = A._data.shape[-2:]
    k = tau._data.shape[-1] if tau._data.ndim else 0
    if m < n:
        fail("argument_error_invalid", op=op,
             problem="input.shape[-2] must be greater than or equal to input.shape[-1]")
    if k > n:
        fail("argument_error_invalid", op=op, problem="input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if tau._data.ndim != A._data.ndim - 1 or tuple(tau._data.shape[:-1]) != tuple(A._data.shape[:-2]):
        fail("argument_error_invalid", op=op, problem=f"Expected batch dimensions of tau to be equal to input's, "
                                                      f"got {tuple(tau._data.shape)} and {tuple(A._data.shape)}")
    _floating(A, op)
    _same(op, A, tau)
    Q = _eye_like(A, m)[:, :n].expand(*A._data.shape[:-2], m, n)
    low = A.tril(-1) + _eye_like(A, m)[:, :n]
    for i in reversed(range(k)):
        v = low[..., :, i:i + 1]
        Q = Q - (tau[..., i:i + 1].unsqueeze(-1) * v) @ (v.mH @ Q)
    if k == 0:
        Q = _zero_grad(A, Q.contiguous())
    return Q if out is None else out.copy_(Q)


def _geqrf_kernel(a: Arr) -> tuple[Arr, Arr]:
    from scipy.linalg import lapack

    m, n = a.shape[-2:]
    if a.size == 0:  # (no matrix, or matrices without rows or columns: nothing to reflect)
        return a.copy(), np.zeros((*a.shape[:-2], min(m, n)), a.dtype)
    batch = a.reshape(-1, m, n)
    packed = np.empty_like(batch)
    taus = np.empty((batch.shape[0], min(m, n)), a.dtype)
    (routine,) = lapack.get_lapack_funcs(("geqrf",), (batch,))
    for i, mat in enumerate(batch):
        qr, tau, _, _ = routine(mat)
        packed[i], taus[i] = qr, tau
    return packed.reshape(a.shape), taus.reshape(*a.shape[:-2], min(m, n))


_GEQRF_A = Prim("geqrf", _given, None)
_GEQRF_TAU = Prim("geqrf_tau", _given, None)


@public("linalg")
def geqrf(input: Tensor, *, out: Any = None) -> Any:
    """LAPACK's geqrf: the compact QR factorization, R in the upper triangle of ``a`` and the Householder vectors
    below it, their scales in ``tau`` (``householder_product(a, tau)`` is Q). As torch's, the result is in the
    graph but backward through it raises (no derivative is implemented). A device tensor is factored on the
    host and its results moved back."""
    op = "geqrf"
    if input._data.ndim < 2:
        fail("linalg_error_requires_at_least_2d", op=op, shape=tuple(input._data.shape))
    _floating(input, op)
    values = _geqrf_kernel(be(input).to_numpy(input._data))
    if not _on_host(input):  # (factored on the host, the results moved back)
        values = tuple(be(input).from_numpy(v) for v in values)
    a, tau = _outputs(input, (_GEQRF_A, _GEQRF_TAU), values)
    if tau._grad_fn is not None:  # torch's one node for both outputs
        tau._grad_fn.label = "GeqrfBackward0"
    if out is not None:
        return RT.geqrf(out[0].copy_(a), out[1].copy_(tau))
    return RT.geqrf(a, tau)


# -- LU: factor, unpack, solve ----------------------------------------------------------------------------------------













def _permutation(pivots: Arr, m: int) -> Arr:
    """LAPACK's row swaps (1-based ``pivots``, applied in order) as a permutation of ``range(m)`` per matrix:
    row ``i`` of ``P^T A`` is row ``perm[i]`` of A."""
    batch = pivots.shape[:-1]
    flat = pivots.reshape(int(np.prod(batch)), pivots.shape[-1]) - 1
    perm = np.tile(np.arange(m), (flat.shape[0], 1))
    for b in range(flat.shape[0]):
        for i, p in enumerate(flat[b]):
            perm[b, i], perm[b, p] = perm[b, p], perm[b, i]
    return perm.reshape(*batch, m)


def _permutation_matrix(perm: Arr, dtype: Any) -> Arr:
    """P with ``A = P (P^T A)``: column ``i`` of P is the unit vector at ``perm[i]``."""
    m = perm.shape[-1]
    P = np.zeros((*perm.shape, m), dtype=dtype)
    np.put_along_axis(P, perm[..., :, None], 1, axis=-1)
    return np.swapaxes(P, -1, -2)


def _lu_arrays(a: Arr) -> tuple[Arr, Arr, Arr]:
    """scipy's LU (LAPACK getrf) of each matrix: the packed factors, 1-based int32 pivots, and info (the 1-based
    index of U's first zero diagonal entry, else 0)."""
    import scipy.linalg

    m, n = a.shape[-2:]
    k = min(m, n)
    mats = matrices(a)
    lu = np.empty_like(mats)
    piv = np.empty((mats.shape[0], k), dtype=np.int32)
    info = np.zeros(mats.shape[0], dtype=np.int32)
    for b, mat in enumerate(mats):
        if mat.size == 0:
            lu[b], piv[b] = mat, np.arange(1, k + 1)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lu[b], p = scipy.linalg.lu_factor(mat, check_finite=False)
        piv[b] = p[:k] + 1
        zero = np.flatnonzero(np.diagonal(lu[b])[:k] == 0)
        info[b] = int(zero[0]) + 1 if zero.size else 0
    batch = a.shape[:-2]
    return lu.reshape(a.shape), piv.reshape(*batch, k), info.reshape(batch)


def _lu_vjp(which: int) -> Any:
    """torch's LU backward, split by output (it is linear in the gradients of L and U); square, wide and tall."""

    def vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
        from .joining import cat

        P, L, U = n.params["outs"]
        gL, gU = (g, None) if which == 1 else (None, g)
        m, nn = L._data.shape[-2], U._data.shape[-1]
        k = min(m, nn)
        if m == nn:
            gA = (L.mH @ gL).tril(-1) if gL is not None else (gU @ U.mH).triu()
            gA = linalg_solve_triangular(U.mH, gA, upper=False, left=False)
        elif m < nn:  # wide: U = [U1 U2]
            U1 = U[..., :, :k]
            if gL is not None:
                gA = linalg_solve_triangular(U1.mH, (L.mH @ gL).tril(-1), upper=False, left=False)
                gA = cat([gA, gA.new_zeros((*gA._data.shape[:-1], nn - k))], -1)
            else:
                assert gU is not None
                gA = linalg_solve_triangular(U1.mH, (-(gU.triu() @ U.mH)).tril(-1), upper=False, left=False)
                gA = cat([gA + gU[..., :, :k].triu(), gU[..., :, k:]], -1)
        else:  # tall: L = [L1; L2]
            L1 = L[..., :k, :]
            if gU is not None:
                gA = linalg_solve_triangular(L1.mH, (gU @ U.mH).triu(), upper=True, unitriangular=True)
                gA = cat([gA, gA.new_zeros((*gA._data.shape[:-2], m - k, gA._data.shape[-1]))], -2)
            else:
                assert gL is not None
                gA = linalg_solve_triangular(L1.mH, (-(L.mH @ gL.tril(-1))).triu(), upper=True, unitriangular=True)
                gA = cat([gA + gL[..., :k, :].tril(-1), gL[..., k:, :]], -2)
            return (P @ linalg_solve_triangular(U.mH, gA, upper=False, left=False),)
        if m <= nn:
            gA = linalg_solve_triangular(L.mH, gA, upper=True, unitriangular=True)
        return (P @ gA,)

    return vjp


_LU_L = Prim("linalg_lu_L", _given, _lu_vjp(1))
_LU_U = Prim("linalg_lu_U", _given, _lu_vjp(2))


def _no_pivot(pivot: bool, op: str) -> None:
    if not pivot:
        fail("linalg_error_lu_without_pivoting", op=op)


def _plu(A: Tensor, op: str) -> tuple[PLU, Arr, Arr]:
    """``(P, L, U)`` of A as differentiable outputs, with the pivots and info they came from."""
    check(RX.lu_shapes, A._data.shape, op=op)
    _floating(A, op)
    a = A._data
    if not _on_host(A):
        P_, L_, U_, piv, info, _, _ = be(A).factor("lu", a)
        made = [Tensor._make(P_, A._device), Tensor._make(L_, A._device), Tensor._make(U_, A._device)]
        made[1:] = [_LU_L(A, value=L_, outs=made), _LU_U(A, value=U_, outs=made)]
        return RT.linalg_lu(*made), piv, info
    lu, piv, info = _lu_arrays(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    L = np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=a.dtype)
    U = np.triu(lu[..., :k, :])
    P = _permutation_matrix(_permutation(piv, m) if k else np.broadcast_to(np.arange(m), (*a.shape[:-2], m)), a.dtype)
    # P is a constant (no gradient, as torch's); it heads the outputs list the vjps of L and U read
    outs: list[Tensor] = [_new(P, A), Tensor._make(L, A._device), Tensor._make(U, A._device)]
    outs[1:] = [_LU_L(A, value=L, outs=outs), _LU_U(A, value=U, outs=outs)]
    return RT.linalg_lu(*outs), piv, info


@public("linalg", method=False)
def linalg_lu(A: Tensor, *, pivot: bool = True, out: Any = None) -> PLU:
    """``A = P L U`` with partial pivoting: P a permutation, L unit lower trapezoidal, U upper trapezoidal; any
    (..., m, n). Singular input is not an error. Differentiable in L and U (torch's formulas)."""
    _no_pivot(pivot, "linalg.lu")
    return _plu(A, "linalg.lu")[0]


def _pack(L: Tensor, U: Tensor) -> Tensor:
    """LAPACK's packed LU: U on and above the diagonal, L's strict lower part below (for any m, n)."""
    from .joining import cat

    m, n = L._data.shape[-2], U._data.shape[-1]
    if m > n:
        U = cat([U, U.new_zeros((*U._data.shape[:-2], m - n, n))], -2)
    elif m < n:
        L = cat([L, L.new_zeros((*L._data.shape[:-1], n - m))], -1)
    out: Tensor = L.tril(-1) + U.triu()
    return out


def _lu_zero_pivot(A: Tensor, op: str, info: Arr) -> None:
    """torch's error for the first zero pivot in ``info``, if any; a device checks ``info`` where it is and raises
    at the next sync (without the batch element, which its check does not keep)."""
    if not _on_host(A):
        be(A).check_range(info, 0, 1, "linalg_error_lu_zero_pivot", op, batch="", i=None)
        return
    if not info.any():
        return
    flat = info.reshape(-1)
    b = int(np.flatnonzero(flat)[0])
    fail("linalg_error_lu_zero_pivot", op=op, batch=f"(Batch element {b}): " if info.ndim else "", i=int(flat[b]))


@public("linalg", method=False)
def linalg_lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False, out: Any = None) -> LUFactorEx:
    """``(LU, pivots, info)``: LAPACK's packed factors, 1-based int32 row swaps, and the 1-based index of U's first
    zero diagonal entry (0 where there is none; not an error unless ``check_errors``)."""
    _no_pivot(pivot, "linalg.lu_factor_ex")
    (_, L, U), piv, info = _plu(A, "linalg.lu_factor_ex")
    if check_errors:
        _lu_zero_pivot(A, "torch.linalg.lu_factor_ex", info)
    return RT.linalg_lu_factor_ex(_pack(L, U), _new(piv, A), _new(info, A))


@public("linalg", method=False)
def linalg_lu_factor(A: Tensor, *, pivot: bool = True, out: Any = None) -> LUFactor:
    """``(LU, pivots)`` for :func:`linalg_lu_solve`; a singular matrix raises torch's error."""
    _no_pivot(pivot, "linalg.lu_factor")
    (_, L, U), piv, info = _plu(A, "linalg.lu_factor")
    _lu_zero_pivot(A, "torch.linalg.lu_factor", info)
    return RT.linalg_lu_factor(_pack(L, U), _new(piv, A))


@public("linalg", method=False)
def linalg_lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False,
                    out: Tensor | None = None) -> Tensor:
    """X of ``A X = B`` (``X A = B`` when not ``left``; ``A^H`` for A when ``adjoint``) from ``lu_factor``'s
    output. Written in triangular solves of LU's triangles, so it batches and differentiates in LU and B."""
    op = "linalg.lu_solve"
    check(RX.lu_solve_shape, LU._data.shape, B._data.shape, left, op=op)
    _floating(LU, op)
    _same(op, LU, B)
    n = LU._data.shape[-1]
    if _on_host(LU):
        piv = np.asarray(pivots._data).astype(np.int64)
        P = _new(_permutation_matrix(_permutation(piv, n), LU._data.dtype), LU)
    else:  # the row swaps applied on the device
        P = Tensor._make(be(LU).factor("permutation", pivots._data, m=n), LU._device)
    L = LU.tril(-1) + _eye_like(LU, n)
    U = LU.triu()
    if left and not adjoint:  # X = U^-1 L^-1 P^T B
        r = linalg_solve_triangular(U, linalg_solve_triangular(L, P.mT @ B, upper=False, unitriangular=True), upper=True)
    elif left:  # A^H = U^H L^H P^T: X = P L^-H U^-H B
        y = linalg_solve_triangular(U.mH, B, upper=False)
        r = P @ linalg_solve_triangular(L.mH, y, upper=True, unitriangular=True)
    elif not adjoint:  # X = B U^-1 L^-1 P^T
        y = linalg_solve_triangular(U, B, upper=True, left=False)
        r = linalg_solve_triangular(L, y, upper=False, left=False, unitriangular=True) @ P.mT
    else:  # X = B P L^-H U^-H
        y = linalg_solve_triangular(L.mH, B @ P, upper=True, left=False, unitriangular=True)
        r = linalg_solve_triangular(U.mH, y, upper=False, left=False)
    return r if out is None else out.copy_(r)


@public("linalg", method=False)
def linalg_solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False,
                    out: Any = None) -> SolveEx:
    """``(result, info)``: :func:`linalg_solve`, with info the 1-based index of the first zero pivot of A's LU (0
    where A is invertible) instead of an error; a singular system's result is LU's (infinities or nan), as torch."""
    check(RX.solve_shape, A._data.shape, B._data.shape, left, op="linalg.solve_ex")
    _floating(A, "linalg.solve_ex")
    _same("linalg.solve_ex", A, B)
    return RT.linalg_solve_ex(*_solve_ex(A, B, left, check_errors, "torch.linalg.solve_ex", "solve"))


# solve_ex's result computed on a device with its info in one elimination: a primitive that hands the value back
# and differentiates as solve (its inputs are solve's, A or A^T and B as a matrix)
_SOLVED = Prim("linalg_solve_ex_result", lambda a, b, value, **_: value, _solve_vjp, save_output=True)
_SOLVED.jvp = _solve_jvp


def _solve_ex(A: Tensor, B: Tensor, left: bool, check_errors: bool, op: str, what: str) -> tuple[Tensor, Tensor]:
    """``(X, info)`` of solve_ex (and inv_ex, B the identity); with ``check_errors`` a zero pivot raises torch's
    error naming ``op`` (a device's info is read back for it: torch syncs there too)."""
    shape = check(RX.solve_shape, A._data.shape, B._data.shape, left, op=op.removeprefix("torch."))
    vector = len(shape) == A._data.ndim - 1 or B._data.ndim == 1
    batch = tuple(shape[:-1] if vector else shape[:-2])
    n = A._data.shape[-1]
    if not _on_host(A):
        return _solve_ex_device(A, B, left, vector, batch, check_errors, op, what)
    lu, piv, info = _lu_arrays(A._data)  # info has A's batch shape, as torch's (not the broadcast one)
    if check_errors:
        _info_error(op, info, what)
    if not info.any():
        return linalg_solve(A, B, left=left), _new(info, A)
    # LU's substitutions carried through the zero pivot (infinities, nan), as torch's: a constant, no gradient
    import scipy.linalg

    b = np.asarray(B._data)[..., None] if vector else np.asarray(B._data)
    b = np.broadcast_to(b, (*batch, *b.shape[-2:]))
    count = int(np.prod(batch))
    lus = np.broadcast_to(lu, (*batch, n, n)).reshape(count, n, n)
    pivs = np.broadcast_to(piv, (*batch, n)).reshape(count, n) - 1
    bs = b.reshape(count, *b.shape[-2:])
    x = np.empty(bs.shape, dtype=A._data.dtype)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(count):
            x[i] = (scipy.linalg.lu_solve((lus[i], pivs[i]), bs[i], check_finite=False) if left else
                    scipy.linalg.lu_solve((lus[i], pivs[i]), bs[i].T, trans=1, check_finite=False).T)
    r = _new(x.reshape(b.shape), A)
    return r.squeeze(-1) if vector else r, _new(info, A)


def _solve_ex_device(A: Tensor, B: Tensor, left: bool, vector: bool, batch: tuple[int, ...], check_errors: bool,
                     op: str, what: str) -> tuple[Tensor, Tensor]:
    """solve_ex on a device: one elimination per matrix of the broadcast batch gives X and info (nothing read back
    unless ``check_errors``); info is then cut to A's own batch shape, as torch's."""
    n = A._data.shape[-1]
    Ab = A.expand(*batch, n, n)
    if vector:
        a, b = (Ab if left else Ab.mT), B.unsqueeze(-1).expand(*batch, n, 1)
    else:
        Bb = B.expand(*batch, *B._data.shape[-2:])
        a, b = (Ab, Bb) if left else (Ab.mT, Bb.mT)
    # left=False factors A (not A^T) and solves with its transpose, as torch's getrs(trans): the same info
    x, dinfo = be(A).factor("solve_ex", a._data, b=b._data, trans=not left)
    X = _SOLVED(a, b, value=x)
    X = X.squeeze(-1) if vector else X if left else X.mT
    own = A._data.shape[:-2]
    extra = len(batch) - len(own)
    info = Tensor._make(dinfo, A._device)[(*(0,) * extra, *(slice(0, 1) if s == 1 and t != 1 else slice(None)
                                                            for s, t in zip(own, batch[extra:])))]
    if check_errors:
        _info_error(op, be(A).to_numpy(info._data), what)
    return X, info.contiguous()


# -- LDL^T (Bunch-Kaufman) ------------------------------------------------------------------------------------------

def _lapack(name: str, dtype: Any, hermitian: bool) -> Any:
    from scipy.linalg import lapack

    prefix = {np.float32: "s", np.float64: "d", np.complex64: "c", np.complex128: "z"}[np.dtype(dtype).type]
    kind = "he" if hermitian and prefix in "cz" else "sy"
    return getattr(lapack, f"{prefix}{kind}{name}")


# no vjp, as torch defines none: backward raises the engine's "not implemented" error, forward mode torch's
# NotImplementedError
_LDL = Prim("linalg_ldl_factor", _given)


@public("linalg", method=False)
def linalg_ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False,
                         out: Any = None) -> LDLFactorEx:
    """``(LD, pivots, info)``: LAPACK's Bunch-Kaufman ``A = L D L^T`` (``L D L^H`` when ``hermitian``) from A's
    lower triangle, packed as LAPACK's sytrf/hetrf leaves it (the upper triangle zeroed, as torch). Not
    differentiable, as in torch."""
    op = "linalg.ldl_factor_ex"
    check(RX.inverse_shape, A._data.shape, op=op)
    _floating(A, op)
    a = A._data
    if not _on_host(A):  # real matrices: hermitian changes nothing
        LD, dpiv, dinfo = be(A).factor("ldl", a)
        if check_errors:
            be(A).check_range(dinfo, 0, 1, "linalg_error_singular", op, cause="The factorization could not be completed")
        return RT.linalg_ldl_factor_ex(_LDL(A, value=LD), _new(dpiv, A), _new(dinfo, A))
    mats = matrices(a)
    ld = np.zeros_like(mats)
    piv = np.zeros((mats.shape[0], a.shape[-1]), dtype=np.int32)
    info = np.zeros(mats.shape[0], dtype=np.int32)
    for b, m in enumerate(mats):
        if m.size == 0:
            continue
        sytrf = _lapack("trf", a.dtype, hermitian)
        packed, p, inf = sytrf(m, lower=1)
        ld[b], piv[b], info[b] = np.tril(packed), p, inf
    if check_errors and info.any():
        fail("linalg_error_singular", op=op, cause="The factorization could not be completed")
    info = info.reshape(a.shape[:-2])
    return RT.linalg_ldl_factor_ex(_LDL(A, value=ld.reshape(a.shape)), _new(piv.reshape(*a.shape[:-1]), A), _new(info, A))


@public("linalg", method=False)
def linalg_ldl_factor(A: Tensor, *, hermitian: bool = False, out: Any = None) -> LDLFactor:
    """``(LD, pivots)`` of :func:`linalg_ldl_factor_ex`; an exactly singular D raises (torch's own check fails there
    with an internal assertion: a deliberate difference)."""
    LD, piv, info = linalg_ldl_factor_ex(A, hermitian=hermitian, check_errors=not _on_host(A))
    if _on_host(A) and bool(info._data.any()):
        fail("linalg_error_singular", op="linalg.ldl_factor", cause="The factorization could not be completed")
    return RT.linalg_ldl_factor(LD, piv)


@public("linalg", method=False)
def linalg_ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False,
                     out: Tensor | None = None) -> Tensor:
    """X of ``A X = B`` from :func:`linalg_ldl_factor`'s output (LAPACK's sytrs/hetrs); batches broadcast."""
    op = "linalg.ldl_solve"
    batch = tuple(check(RX.lu_solve_shape, LD._data.shape, B._data.shape, True, op=op)[:-2])
    _floating(LD, op)
    _same(op, LD, B)
    n = LD._data.shape[-1]
    count = int(np.prod(batch))
    ld = np.broadcast_to(LD._data, (*batch, n, n)).reshape(count, n, n)
    piv = np.broadcast_to(np.asarray(pivots._data, dtype=np.int32), (*batch, n)).reshape(count, n)
    b = np.broadcast_to(B._data, (*batch, *B._data.shape[-2:])).reshape(count, *B._data.shape[-2:])
    x = np.empty_like(b)
    sytrs = _lapack("trs", LD._data.dtype, hermitian)
    for i in range(b.shape[0]):
        if b[i].size:
            x[i] = sytrs(ld[i], piv[i], b[i], lower=1)[0]
    x = x.reshape(*batch, *B._data.shape[-2:])
    # on a device: LD, the pivots and B were read back above (a sync); the solution goes back up
    r = _new(x, B) if _on_host(B) else Tensor._make(be(B).from_numpy(np.ascontiguousarray(x)), B._device)
    return r if out is None else out.copy_(r)


# -- tensorinv and tensorsolve: inverse and solve of a tensor read as a square matrix -------------------------------

@public("linalg", method=False)
def linalg_tensorinv(A: Tensor, ind: int = 2, *, out: Tensor | None = None) -> Tensor:
    """The inverse of A read as a matrix of its first ``ind`` dims by the rest: shape ``A.shape[ind:] +
    A.shape[:ind]``, so that ``tensordot(tensorinv(A, ind), A, ind)`` is the identity."""
    import math

    if isinstance(ind, int) and ind > A._data.ndim:  # torch slices the shape at ind first
        fail("argument_error_invalid", op="linalg.tensorinv",
             problem=f"ArrayRef: invalid slice, N = {ind}; size = {A._data.ndim}")
    check(RX.tensorinv_shape, A._data.shape, ind, op="linalg.tensorinv")
    lead, rest = tuple(A._data.shape[:ind]), tuple(A._data.shape[ind:])
    r = linalg_inv(A.reshape(math.prod(lead), math.prod(rest))).reshape(*rest, *lead)
    return r if out is None else out.copy_(r)


@public("linalg", method=False)
def linalg_tensorsolve(A: Tensor, B: Tensor, dims: Any = None, *, out: Tensor | None = None) -> Tensor:
    """X with ``tensordot(A, X, X.ndim) == B``: A's leading ``B.ndim`` dims read as rows, the rest as columns
    (``dims`` of A moved to the end first)."""
    import math

    op = "linalg.tensorsolve"
    if dims is not None:
        from .views import movedim

        dims = list(dims)
        A = movedim(A, dims, list(range(A._data.ndim - len(dims), A._data.ndim)))
    rest = tuple(check(RX.tensorsolve_shape, A._data.shape, B._data.shape, op=op))
    lead = tuple(A._data.shape[:B._data.ndim])
    r = linalg_solve(A.reshape(math.prod(lead), math.prod(rest)), B.reshape(-1)).reshape(rest)
    return r if out is None else out.copy_(r)


# -- torch's older spellings (``torch.svd``, ``torch.qr``, ``torch.lu``, ...) ------------------------------------------
# Each is the ``linalg`` function with torch's older argument order and result (``svd``'s V rather than Vh,
# ``triangular_solve``'s (b, A) order); the functions torch removed raise its message, pointing at the new one.

@public("linalg")
def svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> SVDLegacy:
    """``(U, S, V)`` with ``input = U diag(S) V^H``; without ``compute_uv`` U and V are zero-filled, as torch's."""
    U, S, Vh = linalg_svd(input, full_matrices=not some)
    if not compute_uv:
        return RT.svd(U.new_zeros(U._data.shape).detach(), S, Vh.new_zeros(Vh._data.shape).detach().mT)
    return RT.svd(U, S, Vh.mH)


@public("linalg")
def qr(input: Tensor, some: bool = True) -> QR:
    Q, R = linalg_qr(input, "reduced" if some else "complete")
    return RT.qr(Q, R)


@public("linalg")
def cholesky(input: Tensor, upper: bool = False) -> Tensor:
    if input._data.size == 0 and input._data.ndim >= 2:  # torch's older function checks no shape when empty
        return input.clone()
    return linalg_cholesky(input, upper=upper)


@public("linalg")
def lu(A: Tensor, pivot: bool = True, get_infos: bool = False) -> tuple[Tensor, ...]:
    """``(LU, pivots)``, with ``infos`` when ``get_infos`` (then a singular matrix is not an error)."""
    if get_infos:
        return tuple(linalg_lu_factor_ex(A, pivot=pivot))
    return tuple(linalg_lu_factor(A, pivot=pivot))


@public("linalg", method=False)
def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True) -> PLU:
    """``(P, L, U)`` from ``lu``'s packed factors and 1-based pivots."""
    if LU_data._data.ndim < 2:
        fail("argument_error_invalid", op="torch.lu_unpack",
             problem=f"Expected tensor with 2 or more dimensions. Got size: {list(LU_data._data.shape)} instead")
    m, n = LU_data._data.shape[-2:]
    k = min(m, n)
    L = LU_data[..., :, :k].tril(-1) + _eye_like(LU_data, m)[..., :, :k] if unpack_data else LU_data.new_zeros(0)
    U = LU_data[..., :k, :].triu() if unpack_data else LU_data.new_zeros(0)
    if not unpack_pivots:
        return RT.lu_unpack(LU_data.new_zeros(0), L, U)
    piv = np.asarray(LU_pivots.detach().cpu()._data).astype(np.int64)[..., :k]  # (read back from a device)
    P = new_tensor(_permutation_matrix(_permutation(piv, m), LU_data._data.dtype), LU_data._device) if k else \
        _eye_like(LU_data, m).expand(*LU_data._data.shape[:-2], m, m)
    return RT.lu_unpack(P, L, U)


@public("linalg")
def lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    return linalg_lu_solve(LU_data, LU_pivots, b)


@public("linalg")
def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> TriangularSolve:
    """``(X, A.clone())`` with ``op(A) X = b``, op the transpose when ``transpose``."""
    _same("triangular_solve", A, b)  # (linalg.solve_triangular casts b; the older function refuses another dtype)
    M = A.mT if transpose else A
    X = linalg_solve_triangular(M, b, upper=upper != transpose, unitriangular=unitriangular)
    return RT.triangular_solve(X, A.clone())


@public("linalg")
def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:
    """X of ``A X = B`` given A's Cholesky factor (lower ``L``, or upper when ``upper``)."""
    low = _factor(L, upper, "cholesky_solve")
    return linalg_solve(low @ low.mH, B)


def _factor(L: Tensor, upper: bool, op: str) -> Tensor:
    """The lower factor read from L's triangle, as LAPACK reads it, with the gradient of the whole of L: torch's
    formulas for cholesky_solve and cholesky_inverse differentiate ``A = L L^H`` in every entry of L. Its kernels
    are floating point and complex only (an integer or bool factor is refused before any arithmetic on it)."""
    if L._data.ndim < 2:
        fail("argument_error_invalid", op="cholesky_inverse", problem="The input tensor A must have at least 2 dimensions.")
    need_floating(L, op, complex_=True, hint="")
    low = L.mH if upper else L
    out: Tensor = low + (low.tril() - low).detach()  # the triangle's values exactly: x + (0 - x) is 0
    return out


@public("linalg")
def cholesky_inverse(L: Tensor, upper: bool = False) -> Tensor:
    """``A^-1`` given A's Cholesky factor."""
    low = _factor(L, upper, "cholesky_inverse")
    return linalg_inv(low @ low.mH)


@public("linalg")
def nuclear_norm(input: Tensor, dim: Any = (-2, -1), keepdim: bool = False) -> Tensor:
    return linalg_matrix_norm(input, "nuc", tuple(dim), keepdim)


@public("linalg", method=False)
def frobenius_norm(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    return linalg_matrix_norm(input, "fro", tuple(dim), keepdim)


@public("linalg", method=False)
def svd_lowrank(A: Tensor, q: int | None = 6, niter: int = 2, M: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """The q leading singular triplets ``(U, S, V)`` of ``A - M``. torch estimates them by randomized subspace
    iteration; here they are the exact ones (a full SVD, truncated), which that iteration approximates."""
    X = A if M is None else A - M
    k = min(q if q is not None else 6, *X._data.shape[-2:])
    U, S, Vh = linalg_svd(X, full_matrices=False)
    return U[..., :k], S[..., :k], Vh[..., :k, :].mH


@public("linalg", method=False)
def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True, niter: int = 2) -> tuple[Tensor, Tensor, Tensor]:
    """``svd_lowrank`` of A with its column means removed (when ``center``); q defaults to min(6, m, n)."""
    k = min(6, *A._data.shape[-2:]) if q is None else q
    return svd_lowrank(A - A.mean(-2, keepdim=True) if center else A, k, niter)


_REMOVED = {
    "solve": "`torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its arguments "
             "reversed and does not return the LU factorization.",
    "eig": "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real tensors "
           "mimicking complex tensors.",
    "symeig": "The default behavior has changed from using the upper triangular portion of the matrix by default to "
              "using the lower triangular portion. Use `torch.linalg.eigh` instead.",
    "lstsq": "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`. `torch.linalg.lstsq` has reversed arguments "
             "and does not return the QR decomposition in the returned tuple.",
    "matrix_rank": "Please use the `torch.linalg.matrix_rank` function instead.",
}


def _removed(name: str) -> Any:
    def fn(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"This function was deprecated since version 1.9 and is now removed. {_REMOVED[name]}")

    fn.__name__ = fn.__qualname__ = name
    return fn


for _name in _REMOVED:
    public("linalg", method=_name != "matrix_rank")(_removed(_name))


@public("linalg", method=False)
def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """NumPy's Vandermonde matrix, as ``torch.vander``: decreasing powers ``x**(N-1), ..., x**0`` unless
    ``increasing``; integer and bool inputs give int64. Built on ``linalg.vander`` (so it differentiates)."""
    if x._data.ndim != 1:
        fail("argument_error_invalid", op="vander", problem="x must be a one-dimensional tensor.")
    n = x._data.shape[0] if N is None else N
    if n < 0:
        fail("argument_error_invalid", op="vander", problem="N must be non-negative.")
    if x._data.dtype.kind in "biu":
        x = x.to("int64")
    if n == 0:
        return x.unsqueeze(-1).new_zeros((x._data.shape[0], 0))
    out = linalg_vander(x, N=n)
    return out if increasing else out.flip(-1)
