"""The small dense solvers on WebGPU (``backends/webgpu/linalg_kernels``: inverse, solve, det) against torch's
float64 results: one thread per matrix, matrices up to 32x32 (larger: a coded device_error_limit), singular
matrices refused at the next sync. Skipped without a WebGPU adapter unless SHAPETORCH_REQUIRE_WEBGPU=1.
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


def _matrices(batch: tuple[int, ...], n: int, seed: int) -> np.ndarray:
    """Well-conditioned matrices (a normal draw plus sqrt(n) on the diagonal), so that float32 elimination
    stays within a few ulps of the float64 answer and the comparison tests the algorithm, not the conditioning;
    rows are shuffled so that pivoting is exercised."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(*batch, n, n)) + np.sqrt(n) * np.eye(n)
    return a[..., rng.permutation(n), :].astype(np.float32)


def _close(got: st.Tensor, want: torch.Tensor, tol: float = 1e-4) -> None:
    assert got.device == st.device(DEV) and got.dtype == st.float32
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=tol, atol=tol)


@given(batch=shapes(0, 2, 0, 3), n=hs.sampled_from([0, 1, 2, 3, 5, 16, 32]), m=hs.integers(1, 40),
       seed=hs.integers(0, 2**16))
@fast(20)
def test_inverse_solve_det(batch, n, m, seed):
    a = _matrices(batch, n, seed)
    b = np.random.default_rng(seed + 1).normal(size=(*batch, n, m)).astype(np.float32)
    ta, tb = torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64)
    _close(st.linalg.inv(st.tensor(a, device=DEV)), torch.linalg.inv(ta))
    _close(st.linalg.solve(st.tensor(a, device=DEV), st.tensor(b, device=DEV)), torch.linalg.solve(ta, tb))
    got = st.linalg.det(st.tensor(a, device=DEV))
    want = torch.linalg.det(ta)
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-4)  # a product of n pivots


def test_many_right_hand_sides_are_solved_in_chunks():
    """32x32 with 100 columns: more inner work than one thread may loop through on lavapipe, so the columns
    go in chunks (each a fresh elimination); every column must still be right."""
    a = _matrices((2,), 32, 3)
    b = np.random.default_rng(4).normal(size=(2, 32, 100)).astype(np.float32)
    _close(st.linalg.solve(st.tensor(a, device=DEV), st.tensor(b, device=DEV)),
           torch.linalg.solve(torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64)))
    v = b[..., 0]  # a batch of vectors
    _close(st.linalg.solve(st.tensor(a, device=DEV), st.tensor(v, device=DEV)),
           torch.linalg.solve(torch.tensor(a, dtype=torch.float64), torch.tensor(v, dtype=torch.float64)))


def test_gradients_of_inverse_and_solve_on_the_device():
    a = _matrices((2,), 4, 5)
    b = np.random.default_rng(6).normal(size=(2, 4, 3)).astype(np.float32)
    sa, sb = st.tensor(a, device=DEV, requires_grad=True), st.tensor(b, device=DEV, requires_grad=True)
    ta = torch.tensor(a, dtype=torch.float64, requires_grad=True)
    tb = torch.tensor(b, dtype=torch.float64, requires_grad=True)
    (st.linalg.inv(sa).sum() + st.linalg.solve(sa, sb).pow(2).sum()).backward()
    (torch.linalg.inv(ta).sum() + torch.linalg.solve(ta, tb).pow(2).sum()).backward()
    assert sa.grad is not None and sb.grad is not None
    _close(sa.grad, ta.grad)
    _close(sb.grad, tb.grad)


def test_singular_matrices():
    """inverse and solve: torch's LinAlgError (linalg_error_singular) at the next sync; det: 0."""
    s = st.tensor([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]], device=DEV)
    # one at a time: a sync raises the first failed check of its batch, once
    for make in (lambda: st.linalg.inv(s), lambda: st.linalg.solve(s, st.ones(2, 2, 1, device=DEV))):
        r = make()
        with pytest.raises(st.linalg.LinAlgError) as e:
            r.cpu()
        assert e.value.code == "linalg_error_singular"
        with pytest.raises(torch.linalg.LinAlgError):
            torch.linalg.inv(torch.tensor(s.cpu().numpy()))
    assert st.linalg.det(s).tolist() == [0.0, 1.0]


def test_large_matrices_and_other_dtypes_are_refused_with_a_code():
    with pytest.raises(st.DeviceError) as e:
        st.linalg.inv(st.zeros(33, 33, device=DEV))
    assert e.value.code == "device_error_limit" and "32x32" in str(e.value)
    with pytest.raises(st.DeviceError):
        st.linalg.det(st.zeros(2, 40, 40, device=DEV))
    with pytest.raises(st.ShapetorchError) as e:
        st.linalg.inv(st.eye(3, device=DEV).half())
    assert e.value.code in ("method_dtype_not_supported_error", "kernel_not_registered_error")


# the last is singular with info 1 but its transpose's LU has info 2: left=False must factor A, as torch
_SING = [[[1.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]], [[1.0, 2.0], [2.0, 4.0]], [[0.0, 1.0], [0.0, 1.0]]]


def _reads() -> int:
    return int(st.memory_stats()["num_readbacks"])


@pytest.mark.parametrize("which", ["inv_ex", "solve_ex", "solve_ex_vector", "solve_ex_right", "solve_ex_broadcast"])
def test_ex_variants_give_info_on_the_device_as_torch(which):
    """inv_ex and solve_ex run on the device: info is a device int32 tensor, nothing is read back until asked,
    and singular matrices give torch's info and LU's infinities/NaNs (the other matrices are solved)."""
    a = np.array(_SING, dtype=np.float32)
    b = np.random.default_rng(0).normal(size=(4, 2, 4)).astype(np.float32)
    calls = {
        "inv_ex": lambda L, A, B: L.linalg.inv_ex(A),
        "solve_ex": lambda L, A, B: L.linalg.solve_ex(A, B),
        "solve_ex_vector": lambda L, A, B: L.linalg.solve_ex(A, B[..., 0]),
        "solve_ex_right": lambda L, A, B: L.linalg.solve_ex(A, B.mT, left=False),
        "solve_ex_broadcast": lambda L, A, B: L.linalg.solve_ex(A[1:2], B),  # info keeps A's batch shape (1,)
    }
    before = _reads()
    got = calls[which](st, st.tensor(a, device=DEV), st.tensor(b, device=DEV))
    assert _reads() == before
    want = calls[which](torch, torch.tensor(a), torch.tensor(b))
    assert got[1].device == st.device(DEV) and got[1].dtype == st.int32
    assert got[1].tolist() == want[1].tolist()
    assert got[0].shape == tuple(want[0].shape) and got[0].device == st.device(DEV)
    np.testing.assert_allclose(got[0].cpu().numpy(), want[0].numpy(), rtol=1e-5, atol=1e-5)
    cpu = calls[which](st, st.tensor(a), st.tensor(b))  # the CPU's answer is the device's
    np.testing.assert_allclose(got[0].cpu().numpy(), cpu[0].numpy(), rtol=1e-5, atol=1e-5)


def test_ex_variants_check_errors_raise_torchs_error_at_the_call():
    a = st.tensor(_SING, device=DEV)
    for call, ta in ((lambda L, A: L.linalg.inv_ex(A, check_errors=True), torch.tensor(_SING)),
                     (lambda L, A: L.linalg.solve_ex(A, L.ones(4, 2, 1, device=A.device), check_errors=True),
                      torch.tensor(_SING)),
                     (lambda L, A: L.linalg.inv_ex(A[2], check_errors=True), torch.tensor(_SING))):
        with pytest.raises(st.linalg.LinAlgError) as e:
            call(st, a)
        with pytest.raises(torch.linalg.LinAlgError) as t:
            call(torch, ta)
        assert e.value.code == "linalg_error_singular" and str(e.value).split(" [")[0] in str(t.value)
    ok = st.linalg.inv_ex(st.eye(2, device=DEV) * 2, check_errors=True)  # no error: the inverse, info 0
    assert ok.inverse.tolist() == [[0.5, 0.0], [0.0, 0.5]] and ok.info.tolist() == 0


def test_ex_variants_differentiate_on_the_device():
    a = _matrices((2,), 4, 7)
    b = np.random.default_rng(8).normal(size=(2, 4, 3)).astype(np.float32)
    sa, sb = st.tensor(a, device=DEV, requires_grad=True), st.tensor(b, device=DEV, requires_grad=True)
    ta = torch.tensor(a, dtype=torch.float64, requires_grad=True)
    tb = torch.tensor(b, dtype=torch.float64, requires_grad=True)
    (st.linalg.inv_ex(sa)[0].sum() + st.linalg.solve_ex(sa, sb, left=True)[0].pow(2).sum()).backward()
    (torch.linalg.inv_ex(ta)[0].sum() + torch.linalg.solve_ex(ta, tb)[0].pow(2).sum()).backward()
    assert sa.grad is not None and sb.grad is not None
    _close(sa.grad, ta.grad)
    _close(sb.grad, tb.grad)
