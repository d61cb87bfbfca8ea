"""The matrix factorizations on WebGPU (``backends/webgpu/factorizations``: cholesky, lu, slogdet, qr, eigh, svd,
eig, matrix_exp) against torch: LU's and QR's factors as torch's (LAPACK's pivots and signs), eigenvalues and singular
values against float64, eigen- and singular vectors (not unique in sign) through reconstructions, orthogonality
and magnitudes; gradients through the existing vjps on the device; a matrix that is not positive-definite raises
at the next sync. Matrices up to 64x64 (the limit: each lane's loops stay under lavapipe's 65,535 iterations).
Skipped without a WebGPU adapter unless SHAPETORCH_REQUIRE_WEBGPU=1.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
from _oracle import fast, shapes
from test_webgpu import webgpu  # noqa: F401  (the module fixture: skip or fail without an adapter)

DEV = "webgpu"


def _host(t: st.Tensor) -> np.ndarray:
    assert t.device == st.device(DEV)
    return t.detach().cpu().numpy()


def _close(got: st.Tensor, want: torch.Tensor | np.ndarray, tol: float = 1e-4) -> None:
    w = want.detach().numpy() if isinstance(want, torch.Tensor) else want
    g = _host(got)
    assert g.shape == w.shape
    np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def _mh(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


def _orthonormal_columns(q: np.ndarray, tol: float = 1e-4) -> None:
    k = q.shape[-1]
    np.testing.assert_allclose(_mh(q) @ q, np.broadcast_to(np.eye(k), (*q.shape[:-2], k, k)), atol=tol)


@given(batch=shapes(0, 2, 0, 3), n=hs.sampled_from([0, 1, 2, 5, 17]), upper=hs.booleans(), seed=hs.integers(0, 2**16))
@fast(15)
def test_cholesky(batch, n, upper, seed):
    a = np.random.default_rng(seed).normal(size=(*batch, n, n))
    spd = (a @ _mh(a) + n * np.eye(n)).astype(np.float32)
    if n > 1:  # the other triangle is not read (upper: the upper one, as torch)
        spd[(..., -1, 0) if upper else (..., 0, -1)] = 1e4
    got = st.linalg.cholesky(st.tensor(spd, device=DEV), upper=upper)
    _close(got, torch.linalg.cholesky(torch.tensor(spd, dtype=torch.float64), upper=upper).float(), tol=2e-4)


def test_cholesky_not_positive_definite_raises_at_the_next_sync():
    a = np.stack([np.eye(3), [[1.0, 0, 0], [0, 1.0, 2.0], [0, 2.0, 1.0]]]).astype(np.float32)
    r = st.linalg.cholesky(st.tensor(a, device=DEV))
    with pytest.raises(st.linalg.LinAlgError) as e:
        r.cpu()
    with pytest.raises(torch.linalg.LinAlgError) as t:
        torch.linalg.cholesky(torch.tensor(a[1]))
    assert e.value.code == "linalg_error_not_positive_definite"
    assert str(e.value).split(": ", 1)[1] == str(t.value).split(": ", 1)[1]  # order 3, worded as torch
    nan = st.linalg.cholesky(st.full((2, 2), float("nan"), device=DEV))
    with pytest.raises(st.linalg.LinAlgError):
        nan.cpu()


@given(batch=shapes(0, 2, 0, 2), m=hs.sampled_from([0, 1, 3, 6, 20]), n=hs.sampled_from([1, 3, 6, 20]),
       seed=hs.integers(0, 2**16))
@fast(20)
def test_lu_and_qr_match_lapack(batch, m, n, seed):
    a = np.random.default_rng(seed).normal(size=(*batch, m, n)).astype(np.float32)
    ta = torch.tensor(a)
    P, L, U = st.linalg.lu(st.tensor(a, device=DEV))
    tP, tL, tU = torch.linalg.lu(ta)
    _close(P, tP, tol=0)  # the same pivots
    _close(L, tL)
    _close(U, tU)
    LU, piv = st.linalg.lu_factor(st.tensor(a, device=DEV)) if m == n else (None, None)
    if LU is not None:
        tLU, tpiv = torch.linalg.lu_factor(ta)
        _close(LU, tLU)
        np.testing.assert_array_equal(piv.cpu().numpy(), tpiv.numpy())
    for mode in ("reduced", "complete", "r"):
        Q, R = st.linalg.qr(st.tensor(a, device=DEV), mode=mode)
        tQ, tR = torch.linalg.qr(ta, mode=mode)
        _close(R, tR, tol=2e-4)  # LAPACK's signs: R's diagonal is -sign(a_jj) |column|
        _close(Q, tQ, tol=2e-4)


@given(batch=shapes(0, 2, 0, 3), n=hs.sampled_from([0, 1, 2, 4, 9]), seed=hs.integers(0, 2**16))
@fast(20)
def test_slogdet_and_logdet(batch, n, seed):
    rng = np.random.default_rng(seed)
    a = (rng.normal(size=(*batch, n, n)) + np.sqrt(n) * np.eye(n)).astype(np.float32)
    sign, logabs = st.linalg.slogdet(st.tensor(a, device=DEV))
    ts, tl = torch.linalg.slogdet(torch.tensor(a, dtype=torch.float64))
    _close(sign, ts.float(), tol=0)
    _close(logabs, tl.float(), tol=1e-4)
    _close(st.logdet(st.tensor(a, device=DEV)), torch.logdet(torch.tensor(a, dtype=torch.float64)).float(), tol=1e-4)
    singular = st.linalg.slogdet(st.zeros(2, 3, 3, device=DEV))
    assert _host(singular.sign).tolist() == [0.0, 0.0]
    assert np.all(np.isneginf(_host(singular.logabsdet)))


@given(batch=shapes(0, 2, 0, 3), n=hs.sampled_from([0, 1, 2, 5, 12]), uplo=hs.sampled_from(["L", "U"]),
       seed=hs.integers(0, 2**16))
@fast(15)
def test_eigh(batch, n, uplo, seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(*batch, n, n)).astype(np.float32)
    a[..., :1, :] *= 3  # spread the eigenvalues
    sym = np.tril(a) + _mh(np.tril(a, -1)) if uplo == "L" else np.triu(a) + _mh(np.triu(a, 1))
    w, V = st.linalg.eigh(st.tensor(a, device=DEV), UPLO=uplo)
    tw = torch.linalg.eigvalsh(torch.tensor(a, dtype=torch.float64), UPLO=uplo)
    _close(w, tw.float(), tol=2e-5 * max(1, n))  # ascending, as torch
    v, wv = _host(V), _host(w)
    _orthonormal_columns(v)
    np.testing.assert_allclose(v @ (wv[..., :, None] * _mh(v)), sym, atol=1e-4 * max(1, n))
    _close(st.linalg.eigvalsh(st.tensor(a, device=DEV), UPLO=uplo), tw.float(), tol=2e-5 * max(1, n))


def _eig_matrices(kind: str, batch: tuple[int, ...], n: int, rng: np.random.Generator) -> np.ndarray:
    """Real matrices whose eigenvalues are of ``kind``: random (real and complex pairs), only complex pairs (2x2
    rotation-scalings conjugated by a random matrix), repeated (a diagonal of two values, conjugated), triangular
    (the diagonal, in place), diagonal, or a Jordan block (defective: one eigenvector)."""
    a = rng.normal(size=(*batch, n, n))
    if kind == "pairs" and n > 1:
        d = np.zeros((*batch, n, n))
        for i in range(0, n - 1, 2):
            r, t = rng.normal(size=2)
            d[..., i:i + 2, i:i + 2] = [[r, -2 - abs(t)], [2 + abs(t), r]]
        if n % 2:
            d[..., -1, -1] = 0.5
        a = a + 3 * np.eye(n)  # well conditioned
        return (a @ d @ np.linalg.inv(a)).astype(np.float32)
    if kind == "repeated":
        d = np.diag(np.where(np.arange(n) % 2 == 0, 2.0, -1.0))
        a = a + 3 * np.eye(n)
        return (a @ d @ np.linalg.inv(a)).astype(np.float32)
    if kind == "triangular":
        return np.triu(a).astype(np.float32)
    if kind == "diagonal":
        return (np.eye(n) * a).astype(np.float32)
    if kind == "jordan":
        return np.broadcast_to(np.eye(n) * 1.5 + np.eye(n, k=1), a.shape).astype(np.float32).copy()
    return a.astype(np.float32)


def _match(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """The eigenvalues ``got`` reordered to pair with ``want`` (the closest assignment: equal values, or
    eigenvalues only nearly equal, may come in either order)."""
    from scipy.optimize import linear_sum_assignment

    out = np.empty_like(got)
    for i in np.ndindex(got.shape[:-1]):
        rows, cols = linear_sum_assignment(np.abs(want[i][:, None] - got[i][None, :]))
        out[i][rows] = got[i][cols]
    return out


@given(batch=shapes(0, 2, 0, 3), n=hs.sampled_from([0, 1, 2, 3, 5, 12]),
       kind=hs.sampled_from(["random", "pairs", "repeated", "triangular", "diagonal", "jordan"]),
       seed=hs.integers(0, 2**16))
@fast(25)
def test_eig(batch, n, kind, seed):
    """Eigenvalues as torch's (float64) as a multiset; A V = V diag(w) with unit columns; LAPACK geev's
    conventions: a conjugate pair with the positive imaginary part first and conjugate vectors, a complex
    vector's largest component real; eigvals is eig's eigenvalues."""
    a = _eig_matrices(kind, batch, n, np.random.default_rng(seed))
    # a defective eigenvalue is found to about the square root (a k-fold one, the k-th root) of the rounding
    _check_eig(a, 2e-3 if kind == "jordan" and n < 5 else 2e-2 if kind == "jordan" else 1e-4 * max(1, n))


@pytest.mark.parametrize("a", [[[5.0]], [[1.0, 2.0], [3.0, 4.0]], [[0.0, -1.0], [1.0, 0.0]], [[2.0, 0.0], [0.0, 2.0]],
                               [[1.0, 1.0], [0.0, 1.0]], [[0.0, 1.0], [1.0, 0.0]], [[4.0, 1.0, 0.0], [2.0, 3.0, 1.0],
                                                                                   [0.0, 5.0, -2.0]]])
def test_eig_of_small_matrices(a):
    """1x1, 2x2 blocks with real (rotated to triangular) and complex eigenvalues, a repeated and a defective
    eigenvalue, a 3x3 deflating to a 2x2 block."""
    a = np.asarray(a, np.float32)
    tol = 2e-3 if a.tolist() == [[1.0, 1.0], [0.0, 1.0]] else 1e-5  # defective: the square root of the rounding
    _check_eig(a, tol)
    _check_eig(np.stack([a, -a, a.T]), tol)


def _check_eig(a: np.ndarray, tol: float) -> None:
    n = a.shape[-1]
    batch = a.shape[:-2]
    x = st.tensor(a, device=DEV)
    before = st.memory_stats()
    w, V = st.linalg.eig(x)
    after = st.memory_stats()  # computed on the device: nothing read back, nothing uploaded
    assert (after["num_readbacks"], after["num_bytes_uploaded"]) == (before["num_readbacks"],
                                                                      before["num_bytes_uploaded"])
    assert w.dtype == st.complex64 and V.dtype == st.complex64
    assert w.shape == (*batch, n) and V.shape == (*batch, n, n)
    gw, gV = _host(w), _host(V)
    tw = torch.linalg.eigvals(torch.tensor(a, dtype=torch.float64)).numpy()
    top = max(1.0, float(np.abs(a).max(initial=0)))
    np.testing.assert_allclose(_match(gw, tw), tw, atol=tol * top)
    np.testing.assert_allclose(a @ gV, gV * gw[..., None, :], atol=1e-4 * max(1, n) * top)
    np.testing.assert_allclose(np.linalg.norm(gV, axis=-2), 1, atol=1e-5 * max(1, n))
    for i in np.ndindex(gw.shape[:-1]):
        j = 0
        while j < n:
            if gw[i][j].imag != 0:
                assert gw[i][j].imag > 0 and gw[i][j + 1] == np.conj(gw[i][j])
                np.testing.assert_array_equal(gV[i][:, j + 1], np.conj(gV[i][:, j]))
                assert gV[i][np.argmax(np.abs(gV[i][:, j])), j].imag == 0
                j += 1
            else:
                assert not gV[i][:, j].imag.any()
            j += 1
    np.testing.assert_array_equal(_host(st.linalg.eigvals(st.tensor(a, device=DEV))), gw)


@pytest.mark.parametrize("n,spread", [(8, 6), (8, 12), (16, 12), (40, 8)])
def test_eig_of_badly_scaled_matrices(n, spread):
    """A = D M D^-1 with D's entries powers of two over 2^-spread..2^spread: the kernel balances A first (LAPACK
    gebal's scaling, which geev runs), so the eigenvalues come out to float32's rounding of M's norm, not of A's
    (unbalanced, the error was 1e-1 to 4e2 of the largest eigenvalue), and D^-1 v are M's eigenvectors."""
    rng = np.random.default_rng(n + spread)
    m = rng.normal(size=(3, n, n))
    d = 2.0 ** rng.integers(-spread, spread + 1, size=(3, n))
    a = (d[..., :, None] * m / d[..., None, :]).astype(np.float32)
    w, V = st.linalg.eig(st.tensor(a, device=DEV))
    gw, gV = _host(w), _host(V)
    tw = torch.linalg.eigvals(torch.tensor(a, dtype=torch.float64)).numpy()
    top = np.abs(tw).max(-1, keepdims=True)
    np.testing.assert_allclose(_match(gw, tw) / top, tw / top, atol=2e-5 * n)
    y = gV / d[..., :, None]  # M's eigenvectors
    y = y / np.linalg.norm(y, axis=-2, keepdims=True)
    mm = (d[..., :, None] ** -1 * a * d[..., None, :]).astype(np.float64)
    np.testing.assert_allclose(mm @ y / top[..., None], y * gw[..., None, :] / top[..., None], atol=2e-5 * n)
    np.testing.assert_allclose(np.linalg.norm(gV, axis=-2), 1, atol=1e-5 * n)


def test_eig_over_a_folded_grid_and_past_the_binding_limit(monkeypatch):
    """Under a limit of 4 workgroups per grid dimension, 15 matrices take a 4 x 4 grid (a workgroup each,
    numbered across it, the last one idle); under a 4 KiB binding limit the batch runs in chunks, and a single
    matrix too large for a binding is refused naming eig."""
    from shapetorch.backends.webgpu.runtime import RT

    st.synchronize()
    monkeypatch.setattr(RT, "max_groups", 4)
    a = np.random.default_rng(4).normal(size=(15, 3, 3)).astype(np.float32)
    w, V = st.linalg.eig(st.tensor(a, device=DEV))
    gw, gV = _host(w), _host(V)
    np.testing.assert_allclose(a @ gV, gV * gw[..., None, :], atol=1e-5)
    np.testing.assert_allclose(_match(gw, np.linalg.eigvals(a)), np.linalg.eigvals(a), atol=1e-5)
    monkeypatch.setattr(RT, "max_groups", 65535)
    monkeypatch.setattr(RT, "max_binding", 4096)
    # 60 5x5 matrices (12 kB of eigenvectors) run in chunks of 19, the outputs bound as windows; a transposed
    # view is copied first
    b = np.random.default_rng(5).normal(size=(60, 5, 5)).astype(np.float32)
    for x, m in ((st.tensor(b, device=DEV), b), (st.tensor(b, device=DEV).mT, np.swapaxes(b, -1, -2))):
        w, V = st.linalg.eig(x)
        gw, gV = _host(w), _host(V)
        np.testing.assert_allclose(m @ gV, gV * gw[..., None, :], atol=1e-5)
        np.testing.assert_allclose(np.linalg.norm(gV, axis=-2), 1, atol=1e-5)
        np.testing.assert_allclose(_match(gw, np.linalg.eigvals(m)), np.linalg.eigvals(m), atol=1e-4)
    with pytest.raises(st.DeviceError) as e:  # one 32x32 matrix's eigenvectors (8 kB) do not fit a binding
        st.linalg.eig(st.ones(1, 32, 32, device=DEV))
    assert e.value.code == "device_error_limit" and str(e.value).startswith("linalg.eig:")


def test_eig_of_non_finite_input_raises_at_the_next_sync():
    """torch's eig checks before LAPACK runs; the device checks in the kernel and raises at the next sync."""
    for bad in (np.nan, np.inf):
        a = np.ones((2, 3, 3), np.float32)
        a[1, 2, 0] = bad
        for fn in (st.linalg.eigvals, lambda x: st.linalg.eig(x).eigenvectors):
            got = fn(st.tensor(a, device=DEV))
            with pytest.raises(st.linalg.LinAlgError) as e:
                got.cpu()
            assert e.value.code == "linalg_error_not_converged"
        with pytest.raises(RuntimeError):  # torch's class (LinAlgError is one, as the CPU's)
            torch.linalg.eig(torch.tensor(a))


@given(batch=shapes(0, 2, 0, 2), m=hs.sampled_from([0, 1, 3, 7, 16]), n=hs.sampled_from([1, 3, 7, 16]),
       full=hs.booleans(), rank_deficient=hs.booleans(), seed=hs.integers(0, 2**16))
@fast(20)
def test_svd(batch, m, n, full, rank_deficient, seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(*batch, m, n)).astype(np.float32)
    if rank_deficient and min(m, n) > 1:
        a[..., :, 0] = 0.0  # a zero singular value: its vectors still orthonormal, as LAPACK's
    U, S, Vh = st.linalg.svd(st.tensor(a, device=DEV), full_matrices=full)
    tU, tS, tVh = torch.linalg.svd(torch.tensor(a, dtype=torch.float64), full_matrices=full)
    assert U.shape == tU.shape and S.shape == tS.shape and Vh.shape == tVh.shape
    _close(S, tS.float(), tol=1e-4 * max(1, m, n))  # descending, as torch
    u, s, vh = _host(U), _host(S), _host(Vh)
    k = min(m, n)
    _orthonormal_columns(u)
    _orthonormal_columns(_mh(vh))
    np.testing.assert_allclose((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a, atol=1e-4 * max(1, m, n))
    _close(st.linalg.svdvals(st.tensor(a, device=DEV)), tS.float(), tol=1e-4 * max(1, m, n))


def test_svd_of_nan_raises_at_the_next_sync():
    a = np.ones((2, 3, 3), np.float32)
    a[1, 0, 2] = np.nan
    S = st.linalg.svdvals(st.tensor(a, device=DEV))
    with pytest.raises(st.linalg.LinAlgError) as e:
        S.cpu()
    assert e.value.code == "linalg_error_not_converged"
    with pytest.raises(torch.linalg.LinAlgError):
        torch.linalg.svdvals(torch.tensor(a))


def test_the_largest_matrices_and_the_limit():
    """64x64, the largest a workgroup takes: every lane's loops stay under lavapipe's bound (a Jacobi sweep
    is 2,016 rotations); 65 rows is a coded device_error_limit."""
    rng = np.random.default_rng(7)
    a = rng.normal(size=(64, 64)).astype(np.float32)
    sym = (a + a.T) / 2
    w, V = st.linalg.eigh(st.tensor(sym, device=DEV))
    v, wv = _host(V), _host(w)
    np.testing.assert_allclose(v @ np.diag(wv) @ v.T, sym, atol=1e-4)
    np.testing.assert_allclose(wv, np.linalg.eigvalsh(sym.astype(np.float64)), atol=1e-4)
    U, S, Vh = st.linalg.svd(st.tensor(a, device=DEV))
    np.testing.assert_allclose((_host(U) * _host(S)) @ _host(Vh), a, atol=1e-4)
    P, L, Uf = st.linalg.lu(st.tensor(a, device=DEV))
    np.testing.assert_allclose(_host(P) @ _host(L) @ _host(Uf), a, atol=1e-5)
    # eig: a random matrix, and the cyclic shift (all eigenvalues on the unit circle, which needs the QR
    # iteration's exceptional shifts) and a companion matrix, whose Schur forms take the most sweeps
    cyc = np.roll(np.eye(64, dtype=np.float32), 1, axis=0)
    comp = np.eye(64, k=-1, dtype=np.float32)
    comp[:, -1] = rng.normal(size=64)
    for m in (a, cyc, comp):
        w, V = st.linalg.eig(st.tensor(m, device=DEV))
        gw, gV = _host(w), _host(V)
        np.testing.assert_allclose(m @ gV, gV * gw[None, :], atol=1e-4)
        tw = np.linalg.eigvals(m.astype(np.float64))
        np.testing.assert_allclose(_match(gw[None], tw[None])[0], tw, atol=1e-3)
    for make in (lambda: st.linalg.qr(st.zeros(65, 3, device=DEV)), lambda: st.linalg.eigh(st.zeros(65, 65, device=DEV)),
                 lambda: st.linalg.svd(st.zeros(2, 70, device=DEV)), lambda: st.linalg.eig(st.zeros(65, 65, device=DEV))):
        with pytest.raises(st.DeviceError) as e:
            make()
        assert e.value.code == "device_error_limit"


@given(batch=shapes(0, 2, 0, 2), n=hs.sampled_from([0, 1, 2, 5, 8]), scale=hs.sampled_from([0.1, 1.0, 6.0, 20.0]),
       seed=hs.integers(0, 2**16))
@fast(15)
def test_matrix_exp(batch, n, scale, seed):
    a = (np.random.default_rng(seed).normal(size=(*batch, n, n)) * scale / max(1, n) ** 0.5).astype(np.float32)
    got = _host(st.matrix_exp(st.tensor(a, device=DEV)))
    want = torch.matrix_exp(torch.tensor(a, dtype=torch.float64)).numpy()
    top = max(1.0, float(np.abs(want).max(initial=0)))
    np.testing.assert_allclose(got / top, want / top, atol=2e-5 * max(1, n))  # relative to the largest entry


def test_gradients_on_the_device():
    """The vjps (torch's formulas in solves, matmuls and the factors) run on the device."""
    rng = np.random.default_rng(3)
    a = rng.normal(size=(2, 4, 4)).astype(np.float32)
    spd = a @ _mh(a) + 4 * np.eye(4, dtype=np.float32)
    tall = rng.normal(size=(2, 5, 3)).astype(np.float32)
    pairs = _eig_matrices("pairs", (2,), 4, rng)  # complex eigenvalues: the gradient goes through complex solves
    cases = [
        (spd, lambda lib, x: lib.linalg.cholesky(x).sum()),
        (tall, lambda lib, x: (lib.linalg.qr(x).Q * 1.5).sum() + lib.linalg.qr(x).R.pow(2).sum()),
        (a, lambda lib, x: lib.linalg.slogdet(x).logabsdet.sum()),
        (a, lambda lib, x: (lib.linalg.lu(x).L * 0.5).sum() + lib.linalg.lu(x).U.sum()),
        (spd, lambda lib, x: lib.linalg.eigh(x).eigenvalues.pow(2).sum()
         + (lib.linalg.eigh(x).eigenvectors.pow(2) * lib.arange(4.0, device=x.device)).sum()),
        (tall, lambda lib, x: lib.linalg.svdvals(x).sum()),
        (pairs, lambda lib, x: lib.linalg.eigvals(x).abs().sum()  # phase-invariant
         + (lib.linalg.eig(x).eigenvectors.abs().pow(2) * lib.arange(4.0, device=x.device)[:, None]).sum()),
        (a * 0.3, lambda lib, x: lib.matrix_exp(x).sum()),
    ]
    for value, fn in cases:
        ours = st.tensor(value, device=DEV, requires_grad=True)
        theirs = torch.tensor(value, dtype=torch.float64, requires_grad=True)
        fn(st, ours).backward()
        fn(torch, theirs).backward()
        assert ours.grad is not None and ours.grad.device == st.device(DEV)
        _close(ours.grad, theirs.grad.float(), tol=2e-3)


def test_other_dtypes_are_refused_with_a_code():
    with pytest.raises(st.ShapetorchError) as e:
        st.linalg.qr(st.eye(3, device=DEV).half())
    assert e.value.code == "method_dtype_not_supported_error"


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_factor_and_lu_solve(left, adjoint):
    """lu_solve builds P from the pivots on the device (LAPACK's row swaps applied in order)."""
    rng = np.random.default_rng(4)
    a = rng.normal(size=(3, 6, 6)).astype(np.float32)
    b = rng.normal(size=(3, 6, 2) if left else (3, 2, 6)).astype(np.float32)
    LU, piv = st.linalg.lu_factor(st.tensor(a, device=DEV))
    tLU, tpiv = torch.linalg.lu_factor(torch.tensor(a))
    got = st.linalg.lu_solve(LU, piv, st.tensor(b, device=DEV), left=left, adjoint=adjoint)
    _close(got, torch.linalg.lu_solve(tLU, tpiv, torch.tensor(b), left=left, adjoint=adjoint), tol=1e-4)


def test_cholesky_ex_and_lu_factor_report_on_the_device():
    a = np.random.default_rng(5).normal(size=(3, 4, 4)).astype(np.float32)
    spd = a @ _mh(a) + 4 * np.eye(4, dtype=np.float32)
    spd[1, 2, 2] = -50.0  # the leading minor of order 3 of the second matrix
    L, info = st.linalg.cholesky_ex(st.tensor(spd, device=DEV))
    tL, tinfo = torch.linalg.cholesky_ex(torch.tensor(spd))
    assert info.device == st.device(DEV) and info.dtype == st.int32
    np.testing.assert_array_equal(info.cpu().numpy(), tinfo.numpy())
    _close(L[0], tL[0])
    L, info = st.linalg.cholesky_ex(st.tensor(spd, device=DEV), check_errors=True)
    with pytest.raises(st.linalg.LinAlgError) as e:
        info.cpu()
    assert e.value.code == "linalg_error_not_positive_definite"
    LU, piv = st.linalg.lu_factor(st.zeros(2, 3, 3, device=DEV))
    with pytest.raises(RuntimeError) as e:  # torch's class; the batch element is not named on the device
        LU.cpu()
    assert e.value.code == "linalg_error_lu_zero_pivot"  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError):
        torch.linalg.lu_factor(torch.zeros(2, 3, 3))
    _, _, info = st.linalg.lu_factor_ex(st.tensor([[1.0, 2.0], [2.0, 4.0]], device=DEV))
    assert info.cpu().item() == torch.linalg.lu_factor_ex(torch.tensor([[1.0, 2.0], [2.0, 4.0]])).info.item()


@given(batch=shapes(0, 2, 0, 2), n=hs.sampled_from([0, 1, 2, 3, 6, 13]), kind=hs.sampled_from(["plain", "small", "zero"]),
       seed=hs.integers(0, 2**16))
@fast(20)
def test_ldl_factor_matches_lapack(batch, n, kind, seed):
    """Bunch-Kaufman as LAPACK's sytf2: the same 1x1 and 2x2 pivots (negative pivots name a 2x2 block), the
    same packed L and D, info at an exactly zero column."""
    a = np.random.default_rng(seed).normal(size=(*batch, n, n)).astype(np.float32)
    a = a + _mh(a)
    if kind == "small":  # small diagonal: 2x2 pivots
        a[..., range(n), range(n)] *= 0.01
    elif kind == "zero" and n > 2:
        a[..., 1, :] = 0.0
        a[..., :, 1] = 0.0
    LD, piv, info = st.linalg.ldl_factor_ex(st.tensor(a, device=DEV))
    tLD, tpiv, tinfo = torch.linalg.ldl_factor_ex(torch.tensor(a))
    _close(LD, tLD, tol=1e-4)
    np.testing.assert_array_equal(piv.cpu().numpy(), tpiv.numpy())
    np.testing.assert_array_equal(info.cpu().numpy(), tinfo.numpy())


def test_ldl_factor_of_a_singular_matrix_raises_at_the_next_sync():
    LD, piv = st.linalg.ldl_factor(st.zeros(3, 3, device=DEV))
    with pytest.raises(st.linalg.LinAlgError) as e:
        LD.cpu()
    assert e.value.code == "linalg_error_singular"


def test_ldl_solve_reads_back_and_returns_a_device_tensor():
    a = np.random.default_rng(6).normal(size=(2, 5, 5)).astype(np.float32)
    a = a + _mh(a)
    b = np.random.default_rng(7).normal(size=(2, 5, 3)).astype(np.float32)
    LD, piv = st.linalg.ldl_factor(st.tensor(a, device=DEV))
    got = st.linalg.ldl_solve(LD, piv, st.tensor(b, device=DEV))
    _close(got, torch.linalg.solve(torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64)).float(),
           tol=1e-3)
