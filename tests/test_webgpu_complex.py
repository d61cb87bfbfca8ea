"""complex64 tensors and the FFTs on WebGPU (``backends/webgpu/complex_kernels``) against torch (complex64 on the
CPU) and against shapetorch's CPU results: storage and transfers, the parts and views, the elementwise ops and
reductions typical complex code uses, matmul, reads and writes by index (values and gradients), every
``torch.fft`` function with each norm and odd, even and prime lengths, and gradients through them. Ops without a complex kernel must be refused with a coded error.

Skipped without a WebGPU adapter unless SHAPETORCH_REQUIRE_WEBGPU=1 (then it fails), as test_webgpu.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import shapetorch as st
from test_webgpu import (
    DEV,
    webgpu,  # noqa: F401  (the module fixture: skip or fail without an adapter)
)


def _z(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(np.complex64)


def _r(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


def _same(got: st.Tensor, want: torch.Tensor, tol: float = 1e-5) -> None:
    assert got.device == st.device(DEV)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert got.shape == tuple(want.shape)
    g, w = got.cpu().numpy(), want.detach().resolve_conj().numpy()
    scale = max(1.0, float(np.abs(w).max())) if w.size else 1.0
    np.testing.assert_allclose(g, w, rtol=tol, atol=tol * scale)


def test_complex_storage_and_transfers_round_trip():
    z = _z((3, 4))
    a = st.tensor(z, device=DEV)
    assert a.dtype == st.complex64 and a.device == st.device(DEV)
    np.testing.assert_array_equal(a.cpu().numpy(), z)  # bit for bit: interleaved float32 pairs
    np.testing.assert_array_equal(st.tensor(z).to(DEV).cpu().numpy(), z)
    np.testing.assert_array_equal(a.mT.contiguous().cpu().numpy(), z.T)  # strided copies of complex elements
    np.testing.assert_array_equal(a[1:, ::2].cpu().numpy(), z[1:, ::2])
    np.testing.assert_array_equal(st.zeros(2, dtype=st.complex64, device=DEV).cpu().numpy(), np.zeros(2, np.complex64))
    np.testing.assert_array_equal(st.tensor(_r((3,))).to(DEV).to(st.complex64).cpu().numpy(),
                                  _r((3,)).astype(np.complex64))
    with pytest.raises(st.ShapetorchError) as e:  # complex128 is refused as float64 is (WGSL has no f64)
        st.tensor(z.astype(np.complex128), device=DEV)
    assert e.value.code == "method_dtype_not_supported_error" and "complex128" in str(e.value)


def test_parts_and_views_share_storage_as_torch():
    z = _z((2, 3), 1)
    a, t = st.tensor(z, device=DEV), torch.tensor(z)
    for f in (lambda x: x.real, lambda x: x.imag, lambda x: torch_or_st(x).view_as_real(x),
              lambda x: x.conj(), lambda x: x.abs(), lambda x: x.angle(),
              lambda x: torch_or_st(x).complex(x.real, x.imag * 2),
              lambda x: torch_or_st(x).view_as_complex(torch_or_st(x).view_as_real(x)[1:]),
              lambda x: torch_or_st(x).view_as_real(x.mT)):
        _same(f(a), f(t).resolve_conj() if f(t).is_complex() else f(t))
    a.real.mul_(2)  # a write through the real part's view reaches the complex tensor, as torch's
    a.imag[0].fill_(-1)
    t.real.mul_(2)
    t.imag[0].fill_(-1)
    _same(a, t)


def torch_or_st(x: object) -> object:
    return st if isinstance(x, st.Tensor) else torch


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "neg", "exp", "log", "sqrt", "reciprocal", "scalar",
                                "real_mix", "real_first", "conj_physical", "sum", "mean", "prod", "eq", "isnan", "where"])
def test_elementwise_and_reductions(op):
    x, y, r = _z((3, 4), 2), _z((4,), 3), _r((3, 1), 4)
    calls = {
        "add": lambda L, a, b, c: a + b, "sub": lambda L, a, b, c: a - b, "mul": lambda L, a, b, c: a * b,
        "div": lambda L, a, b, c: a / b, "neg": lambda L, a, b, c: -a, "exp": lambda L, a, b, c: a.exp(),
        "log": lambda L, a, b, c: a.log(), "sqrt": lambda L, a, b, c: a.sqrt(),
        "reciprocal": lambda L, a, b, c: a.reciprocal(),
        "scalar": lambda L, a, b, c: (a * (2 - 1j) + 3) / 2j - 0.5,
        "real_mix": lambda L, a, b, c: a * c + c,  # float32 promoted to complex64
        "real_first": lambda L, a, b, c: c / a - c * b,
        "conj_physical": lambda L, a, b, c: L.conj_physical(a),
        "sum": lambda L, a, b, c: a.sum(0), "mean": lambda L, a, b, c: a.mean(), "prod": lambda L, a, b, c: a.prod(1),
        "eq": lambda L, a, b, c: a == a[0], "isnan": lambda L, a, b, c: (a / 0).isnan(),
        "where": lambda L, a, b, c: L.where(c > 0, a, b),
    }
    f = calls[op]
    want = f(torch, torch.tensor(x), torch.tensor(y), torch.tensor(r))
    got = f(st, st.tensor(x, device=DEV), st.tensor(y, device=DEV), st.tensor(r, device=DEV))
    _same(got, want, 2e-5)


@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((2, 3, 4), (4,)), ((4,), (4,)), ((2, 1, 3, 4), (3, 4, 2))])
def test_matmul(shapes):
    a, b = _z(shapes[0], 5), _z(shapes[1], 6)
    _same(st.tensor(a, device=DEV) @ st.tensor(b, device=DEV), torch.tensor(a) @ torch.tensor(b), 1e-5)


@pytest.mark.parametrize("k", [-9, -1, 0, 2, 9])
def test_tril_and_triu_of_complex_and_their_gradients(k):
    """One (re, im) pair an element kept or zeroed together, strided input (a transpose), the gradient (tril/triu
    of the incoming gradient) against torch."""
    z, w = _z((2, 4, 5), 3), _z((2, 5, 4), 4)
    a, t = st.tensor(z, device=DEV, requires_grad=True), torch.tensor(z, requires_grad=True)
    got = (a.tril(k), a.mT.triu(k))
    want = (t.tril(k), t.mT.triu(k))
    for g_, w_ in zip(got, want):
        _same(g_.detach(), w_, 0.0)
    (got[0].sum() + (got[1] * st.tensor(w, device=DEV)).sum()).abs().backward()
    (want[0].sum() + (want[1] * torch.tensor(w)).sum()).abs().backward()
    _same(a.grad, t.grad, 1e-5)


@pytest.mark.parametrize("call", [lambda x: x.sin(), lambda x: x.cumsum(0), lambda x: x.max(), lambda x: x.pow(2),
                                  lambda x: x.sort()[0], lambda x: x.tanh(), lambda x: st.nn.functional.pad(x, (1, 1)),
                                  lambda x: st.linalg.det(x + 0)])
def test_ops_without_a_complex_kernel_are_refused_with_a_code(call):
    a = st.tensor(_z((2, 2)), device=DEV)
    with pytest.raises(st.ShapetorchError) as e:
        call(a).cpu()
    assert e.value.code in ("method_dtype_not_supported_error", "kernel_not_registered_error")
    assert "complex64" in str(e.value)


_FFT = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn",
        "irfftn", "hfft2", "ihfft2"]


@pytest.mark.parametrize("name", _FFT)
@pytest.mark.parametrize("norm", [None, "forward", "ortho"])
@pytest.mark.parametrize("shape", [(3, 7, 6), (2, 8, 16)])  # the direct DFT; radix-2 Stockham passes
def test_fft_functions_match_torch_and_the_cpu(name, norm, shape):
    complex_in = name.startswith(("fft", "ifft", "irfft", "hfft"))
    x = _z(shape, 7) if complex_in else _r(shape, 7)
    f = getattr(torch.fft, name)
    want = f(torch.tensor(x), norm=norm)
    got = getattr(st.fft, name)(st.tensor(x, device=DEV), norm=norm)
    _same(got, want, 2e-5)
    cpu = getattr(st.fft, name)(st.tensor(x), norm=norm)
    np.testing.assert_allclose(got.cpu().numpy(), cpu.numpy(), rtol=2e-5, atol=2e-5 * max(1, np.abs(cpu.numpy()).max()))


@pytest.mark.parametrize("n,dim", [(1, -1), (2, 0), (5, 1), (8, -1), (13, 0), (16, 1), (64, -1), (97, 1), (100, 0),
                                   (129, -1)])
def test_fft_lengths_padding_and_dims(n, dim):
    """Odd, even, prime and power-of-two lengths, cut or zero-padded by ``n``, along each dim of a batch: the direct
    DFT up to 64 points, radix-2 Stockham passes for powers of two, Bluestein's chirp convolution otherwise."""
    x, r = _z((9, 12, 3), 8), _r((9, 12, 3), 9)
    for name, data in (("fft", x), ("ifft", x), ("rfft", r), ("irfft", x), ("hfft", x), ("ihfft", r)):
        want = getattr(torch.fft, name)(torch.tensor(data), n=n, dim=dim)
        _same(getattr(st.fft, name)(st.tensor(data, device=DEV), n=n, dim=dim), want, 3e-5)


def test_fft_of_a_long_line_agrees_within_float32():
    x = _z((2, 1000), 10)
    _same(st.fft.fft(st.tensor(x, device=DEV)), torch.fft.fft(torch.tensor(x)), 2e-5)
    y = _z((32768,), 11)  # a power of two: Stockham passes, no per-line limit
    _same(st.fft.ifft(st.tensor(y, device=DEV)), torch.fft.ifft(torch.tensor(y)), 2e-5)
    r = _r((2, 4096), 12)
    _same(st.fft.irfft(st.fft.rfft(st.tensor(r, device=DEV))), torch.fft.irfft(torch.fft.rfft(torch.tensor(r))), 2e-5)
    q = _z((3, 20000), 13)  # Bluestein: three 65536-point Stockham transforms
    _same(st.fft.fft(st.tensor(q, device=DEV)), torch.fft.fft(torch.tensor(q)), 2e-5)
    with pytest.raises(st.DeviceError) as e:  # Bluestein's chirp angle is exact up to 32767 points
        st.fft.fft(st.zeros(40000, dtype=st.complex64, device=DEV))
    assert e.value.code == "device_error_limit" and "fft" in str(e.value)


@pytest.mark.parametrize("loss", [
    lambda L, x: L.fft.rfft(x).abs().sum(),
    lambda L, x: (L.fft.fft(x, norm="ortho") * L.fft.fft(x).conj()).real.sum(),
    lambda L, x: L.fft.irfft(L.fft.rfft(x) * 2j, n=x.shape[-1]).pow(2).sum(),
    lambda L, x: L.fft.fft2(x).angle().sum() + L.fft.ifftn(x.to(L.complex64)).imag.pow(2).sum(),
    lambda L, x: L.fft.hfft(L.complex(x, x.flip(-1)), n=9).sum(),
])
def test_gradients_through_the_ffts_are_torchs(loss):
    x = _r((3, 8), 11)
    sx = st.tensor(x, device=DEV, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    loss(st, sx).backward()
    loss(torch, tx).backward()
    assert sx.grad is not None and tx.grad is not None
    _same(sx.grad, tx.grad, 1e-4)


def test_complex_gradients_on_the_device():
    z = _z((3, 3), 12)
    sa = st.tensor(z, device=DEV, requires_grad=True)
    ta = torch.tensor(z, requires_grad=True)
    for L, a in ((st, sa), (torch, ta)):
        ((a @ a.mT).exp().abs().sum() + (a / (a.conj() + 2)).log().real.mean()).backward()
    assert sa.grad is not None and ta.grad is not None
    _same(sa.grad, ta.grad, 1e-4)


def test_complex_solve_and_inverse_on_the_device():
    """A complex system is eliminated in complex arithmetic in the solve kernel."""
    a, b = _z((2, 5, 5), 13), _z((2, 5, 3), 14)
    _same(st.linalg.solve(st.tensor(a, device=DEV), st.tensor(b, device=DEV)),
          torch.linalg.solve(torch.tensor(a), torch.tensor(b)), 1e-4)
    _same(st.linalg.inv(st.tensor(a, device=DEV)), torch.linalg.inv(torch.tensor(a)), 1e-4)
    _same(st.linalg.solve(st.tensor(a[0], device=DEV), st.tensor(b[0, :, 0], device=DEV)),
          torch.linalg.solve(torch.tensor(a[0]), torch.tensor(b[0, :, 0])), 1e-4)


@pytest.mark.parametrize("n", [20, 32])
def test_complex_solve_and_inverse_past_16(n):
    """Past 16x16 (the real system of twice the order, the former path, was refused there): solve, inverse, both
    sides, and the gradient, as torch's."""
    a, b = _z((2, n, n), 15), _z((2, n, 3), 16)
    A, B = st.tensor(a, device=DEV), st.tensor(b, device=DEV)
    ta, tb = torch.tensor(a), torch.tensor(b)
    _same(st.linalg.solve(A, B), torch.linalg.solve(ta, tb), 1e-4)
    _same(st.linalg.inv(A), torch.linalg.inv(ta), 1e-4)
    _same(st.linalg.solve(A, B.mT, left=False), torch.linalg.solve(ta, tb.mT, left=False).resolve_conj(), 1e-4)
    A.requires_grad_()
    ta.requires_grad_()
    st.linalg.solve(A, B).abs().sum().backward()
    torch.linalg.solve(ta, tb).abs().sum().backward()
    _same(A.grad, ta.grad, 1e-4)


def test_complex_solve_past_32_is_refused_naming_it():
    with pytest.raises(st.DeviceError) as e:
        st.linalg.solve(st.tensor(_z((33, 33)), device=DEV), st.tensor(_z((33, 1)), device=DEV))
    assert e.value.code == "device_error_limit" and str(e.value).startswith("linalg.solve:")


def test_complex_inv_ex_and_solve_ex_on_the_device():
    """Their (X, info) as torch's, info on the device; an exactly singular complex matrix (its rows multiples by
    2 + 0i, so the elimination is exact in both) gives getrf's info 2, and raises with check_errors."""
    a, b = _z((3, 6, 6), 17), _z((3, 6, 2), 18)
    A, ta = st.tensor(a, device=DEV), torch.tensor(a)
    x, info = st.linalg.inv_ex(A)
    tx, tinfo = torch.linalg.inv_ex(ta)
    _same(x, tx, 1e-4)
    assert info.device == st.device(DEV) and info.cpu().tolist() == tinfo.tolist()
    x, info = st.linalg.solve_ex(A, st.tensor(b, device=DEV), left=True)
    _same(x, torch.linalg.solve_ex(ta, torch.tensor(b))[0], 1e-4)
    s = np.array([[1 + 1j, 2 - 1j], [2 + 2j, 4 - 2j]], dtype=np.complex64)
    info = st.linalg.inv_ex(st.tensor(s, device=DEV)).info
    assert info.item() == torch.linalg.inv_ex(torch.tensor(s)).info.item() == 2
    with pytest.raises(torch.linalg.LinAlgError):
        torch.linalg.inv_ex(torch.tensor(s), check_errors=True)
    with pytest.raises(st.linalg.LinAlgError):
        st.linalg.inv_ex(st.tensor(s, device=DEV), check_errors=True)


def test_eig_of_complex_matrices_is_the_cpus_and_torchs():
    """eig of complex64 matrices reads them back and runs LAPACK's geev on the host (torch's CUDA eig syncs too),
    so the device gives the CPU's values bit for bit; against torch, eigenvalues as a multiset and
    A V = V diag(w) with unit columns (eigenvectors are unique up to a phase, and torch's LAPACK may pick
    another). Real matrices have a device kernel (test_webgpu_factorizations.py)."""
    a = _z((3, 4, 4), 15)
    w, V = st.linalg.eig(st.tensor(a, device=DEV))
    cw, cV = st.linalg.eig(st.tensor(a))
    assert w.device == st.device(DEV) and w.dtype == st.complex64 and V.dtype == st.complex64
    np.testing.assert_array_equal(w.cpu().numpy(), cw.numpy())
    np.testing.assert_array_equal(V.cpu().numpy(), cV.numpy())
    tw = torch.linalg.eig(torch.tensor(a)).eigenvalues.numpy()
    gw, gV = w.cpu().numpy(), V.cpu().numpy()
    np.testing.assert_allclose(np.sort_complex(gw.reshape(-1)), np.sort_complex(tw.reshape(-1)), atol=1e-5)
    np.testing.assert_allclose(a @ gV, gV * gw[..., None, :], atol=1e-4)
    np.testing.assert_allclose(np.linalg.norm(gV, axis=-2), 1, atol=1e-5)
    np.testing.assert_array_equal(st.linalg.eigvals(st.tensor(a, device=DEV)).cpu().numpy(), gw)
    with pytest.raises(st.linalg.LinAlgError):  # torch's check before LAPACK
        st.linalg.eig(st.tensor(np.full((2, 2), np.nan, np.complex64), device=DEV))


def test_eig_gradients_on_the_device_are_torchs():
    a = _r((2, 4, 4), 16)
    sx = st.tensor(a, device=DEV, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    for L, x in ((st, sx), (torch, tx)):  # phase-invariant losses
        w, V = L.linalg.eig(x)
        (w.abs().sum() + V.abs().pow(2).mul(w.real.unsqueeze(-2)).sum()).backward()
    assert sx.grad is not None and tx.grad is not None
    _same(sx.grad, tx.grad, 1e-4)


def _put_basic(L, a, b):  # a slice written, as the Fourier layer's ``out_ft[:, :, :m] = ...``
    y = L.zeros(3, 5, dtype=L.complex64, device=a.device)
    y[:, 1:3] = a[:, :2] * b[:, :2]
    y[0, ::2] = b[1, :3]  # a strided write
    y[2, 3:] = 0.5 - 1j  # numbers: complex, real
    y[1, 0] = 2.0
    y[1, -1] = b.real[0, 0].detach()  # a real tensor, cast
    return y


def _copy_into_view(L, a, b):
    y = a * 1
    y[:, ::2].copy_(b[:, 2:])
    return y


def _put_advanced(L, a, b):
    i = L.tensor([2, 0], device=a.device)
    y = a * 1
    y[:, i] = b[:, :2]  # a slice and an integer tensor
    y[i, i] = b[0, 0]  # integer tensors only, a 0-d value
    y[i, 1] = 1 - 3j  # a number
    with L.no_grad():
        y[L.tensor([1], device=a.device), 3] = 2j  # in place, no index_put
    return y


def _scatter(L, a, b):
    i = L.tensor([[0, 2, 1], [1, 1, 0], [2, 0, 0]], device=a.device)
    return L.cat([(a * 1).scatter(0, i, b[:, :3]), a.gather(1, i.T), (b * 1).scatter(1, i, 2 - 1j),
                  a.scatter_add(0, i, b[:, 1:]), L.take_along_dim(b, i[:, :1], 1)], 1)


def _index_family(L, a, b):
    i = L.tensor([3, 0, 3], device=a.device)
    return L.cat([a[:, i], b.index_select(1, i), a[L.tensor([2, 0]), :3] * b[1:, 1:]], 0)


def _moves(L, a, b):
    m = a.real > 0
    return (L.stack([a.flip(1), a.roll(2, 1), L.where(m, a, b), a.masked_fill(m, 1.5 - 2j)]))


def _put_accumulate(L, a, b):
    i = L.tensor([0, 2, 0], device=a.device)
    return (a * 1).index_put((i,), b * 2, accumulate=True)


def _index_copy_and_add(L, a, b):
    i = L.tensor([1, 3], device=a.device)
    return (a * 1).index_copy(1, i, b[:, :2]) + (a * 1).index_add(1, i, b[:, 2:])


@pytest.mark.parametrize("write", [_put_basic, _copy_into_view, _put_advanced, _scatter, _index_family, _moves,
                                   _put_accumulate, _index_copy_and_add])
def test_indexing_reads_and_writes_of_complex_and_their_gradients(write):
    z, w = _z((3, 4), 20), _z((3, 4), 21)
    sa, sb = (st.tensor(v, device=DEV, requires_grad=True) for v in (z, w))
    ta, tb = (torch.tensor(v, requires_grad=True) for v in (z, w))
    got, want = write(st, sa, sb), write(torch, ta, tb)
    _same(got.detach(), want, 1e-6)
    c = _z(tuple(want.shape), 22)
    (got * st.tensor(c, device=DEV)).sum().abs().backward()
    (want * torch.tensor(c)).sum().abs().backward()
    for s, t in ((sa, ta), (sb, tb)):
        assert s.grad is not None and t.grad is not None
        _same(s.grad, t.grad, 1e-5)


def test_writes_into_a_0d_complex_tensor():
    for L, dev in ((st, DEV), (torch, "cpu")):
        x = L.tensor(1 + 2j, device=dev)
        got = (x.scatter(0, L.tensor(0, device=dev), 3 - 1j), x.scatter_add(0, L.tensor(0, device=dev), x * 2))
        if L is st:
            ours = got
        else:
            for o, t in zip(ours, got):
                _same(o, t, 0.0)
