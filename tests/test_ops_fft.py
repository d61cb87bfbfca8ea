"""shapetorch.fft (fft, ifft, rfft, irfft) and stft/istft against torch: OpInfo samples, hypothesis lengths and
norms, error verdicts, float64 gradients (complex cotangents), second order and forward mode."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
from _opinfo_tables import errors, grads, with_error_inputs
from _opinfo_tables import values as sample_values
from _oracle import compare, fast, seeds, shapes, values

FFTS = {f"fft.{n}": (lambda lib, x, *a, _n=n, **k: getattr(lib.fft, _n)(x, *a, **k))
        for n in ("fft", "ifft", "rfft", "irfft")}
STFT = {
    "stft": lambda lib, x, *a, **k: lib.stft(x, *a, **k),
    "istft": lambda lib, x, *a, **k: lib.istft(x, *a, **k),
}
TOL = (1e-4, 1e-4)


@pytest.mark.parametrize("name", sorted(FFTS))
def test_opinfo_samples(name):
    assert sample_values(name, FFTS[name], tol=TOL, dtypes=("float32", "float64", "int64", "complex64")) > 0


@pytest.mark.parametrize("name", sorted(FFTS))
def test_opinfo_grads(name):
    assert grads(name, FFTS[name], max_samples=6) > 0
    if name != "fft.rfft":
        assert grads(name, FFTS[name], max_samples=4, dtype="complex128") > 0


@pytest.mark.parametrize("name", with_error_inputs(sorted(FFTS)))
def test_opinfo_error_inputs(name):
    assert errors(name, FFTS[name]) > 0


@pytest.mark.parametrize("name", sorted(STFT))
def test_opinfo_stft_samples(name):
    assert sample_values(name, STFT[name], tol=TOL, dtypes=("float32", "float64", "complex64")) > 0


@pytest.mark.parametrize("name", sorted(STFT))
def test_opinfo_stft_grads(name):
    assert grads(name, STFT[name], max_samples=4, dtype="complex128" if name == "istft" else "float64") > 0


# -- hypothesis ---------------------------------------------------------------------------------------------------


@fast(20)
@given(shape=shapes(0, 3, max_side=5), n=hs.none() | hs.integers(-1, 7), dim=hs.integers(-3, 2),
       norm=hs.sampled_from([None, "backward", "forward", "ortho", "bad"]),
       name=hs.sampled_from(["fft", "ifft", "rfft", "irfft"]), dtype=hs.sampled_from(["float64", "complex128", "int32"]),
       seed=seeds)
def test_fft_args(shape, n, dim, norm, name, dtype, seed):
    if 0 in shape and (len(shape) > 1 or n is not None):
        return  # torch's MKL fails inside on empty batches ("Inconsistent configuration parameters"): no oracle
    compare(lambda lib, x: getattr(lib.fft, name)(x, n, dim, norm), (values(shape, dtype, seed), dtype),
            codes=("argument_error", "dimension_error", "method_dtype"), tol=None if dtype == "int32" else (1e-9, 1e-9))


@fast(20)
@given(length=hs.integers(4, 24), batch=hs.booleans(), n_fft=hs.integers(2, 8), hop=hs.none() | hs.integers(1, 4),
       win=hs.none() | hs.integers(1, 8), center=hs.booleans(), normalized=hs.booleans(),
       onesided=hs.none() | hs.booleans(), window=hs.booleans(), seed=seeds)
def test_stft_args(length, batch, n_fft, hop, win, center, normalized, onesided, window, seed):
    shape = (2, length) if batch else (length,)

    def fn(lib, x):
        w = None
        if window:
            w = lib.hann_window(win or n_fft, dtype=lib.float64) if hasattr(lib, "hann_window") else None
        return lib.stft(x, n_fft, hop, win, w, center, "reflect", normalized, onesided, return_complex=True)

    compare(fn, (values(shape, "float64", seed), "float64"), codes=("argument_error", "pad_error"), tol=(1e-9, 1e-9))


@fast(20)
@given(frames=hs.integers(1, 6), batch=hs.booleans(), n_fft=hs.integers(2, 8), hop=hs.none() | hs.integers(1, 3),
       center=hs.booleans(), normalized=hs.booleans(), length=hs.none() | hs.integers(1, 20), seed=seeds)
def test_istft_args(frames, batch, n_fft, hop, center, normalized, length, seed):
    shape = (2,) if batch else ()
    spec = values(shape + (n_fft // 2 + 1, frames), "complex128", seed)
    compare(lambda lib, x: lib.istft(x, n_fft, hop, None, None, center, normalized, None, length), (spec, "complex128"),
            codes=("argument_error",), tol=(1e-9, 1e-9))


# -- specific behaviours -------------------------------------------------------------------------------------------


def test_round_trips_and_dtypes():
    x = (values((3, 8), "float32", 1), "float32")
    compare(lambda lib, a: lib.fft.irfft(lib.fft.rfft(a), 8), x, tol=TOL)
    compare(lambda lib, a: lib.fft.ifft(lib.fft.fft(a, 10, 0), None, 0, "ortho"), x, tol=TOL)
    compare(lambda lib, a: lib.fft.fft(a.long()), x, tol=TOL)
    compare(lambda lib, a: lib.fft.fft(a > 0), x, tol=TOL)
    compare(lambda lib, a: lib.fft.fft(a.half()), x, codes="method_dtype_not_supported_error")
    compare(lambda lib, a: lib.fft.rfft(a.to(lib.complex64)), x, codes="method_dtype_not_supported_error")
    compare(lambda lib, a: lib.fft.fft(a[0, 0]), x, codes="dimension_error_zero_dim")
    compare(lambda lib, a: lib.fft.fft(a, 0), x, codes="argument_error_invalid")
    compare(lambda lib, a: lib.fft.irfft(a[:, :1]), x, codes="argument_error_invalid")
    compare(lambda lib, a: lib.fft.irfft(a[:, :1], 1), x, tol=TOL)
    compare(lambda lib, a: lib.fft.fft(a, norm="foo"), x, codes="argument_error_invalid")
    assert st.fft.fft is st.fft_fft and not hasattr(st.Tensor, "fft")


def test_stft_istft_forms():
    sig = (values((20,), "float32", 2), "float32")
    compare(lambda lib, a: lib.stft(a, 4), sig, codes="argument_error_invalid")
    compare(lambda lib, a: lib.stft(a, 4, return_complex=False), sig, tol=TOL)
    compare(lambda lib, a: a.stft(4, return_complex=True, onesided=False), sig, tol=TOL)
    compare(lambda lib, a: lib.stft(a, 8, 2, 5, return_complex=True, center=False), sig, tol=TOL)
    compare(lambda lib, a: lib.stft(a, 8, 2, return_complex=True, pad_mode="constant"), sig, tol=TOL)
    compare(lambda lib, a: lib.stft(a, 8, 2, return_complex=True, align_to_window=True), sig,
            codes="argument_error_invalid")
    compare(lambda lib, a: lib.stft(a.to(lib.complex64), 4, return_complex=True), sig, tol=TOL)
    compare(lambda lib, a: lib.stft(a.to(lib.complex64), 4, return_complex=True, onesided=True), sig,
            codes="argument_error_invalid")
    compare(lambda lib, a: lib.stft(a, 4, window=lib.ones(3), return_complex=True), sig, codes="argument_error_invalid")
    compare(lambda lib, a: lib.stft(a, 4, window=lib.ones(4, dtype=lib.float64), return_complex=True), sig)
    compare(lambda lib, a: lib.stft(a.long(), 4, return_complex=True), sig, codes="method_dtype_not_supported_error")
    compare(lambda lib, a: lib.stft(a[:2], 8, return_complex=True), sig, codes="pad_error_invalid_padding")
    spec = (values((3, 5), "complex64", 3), "complex64")
    compare(lambda lib, s: lib.istft(s, 4), spec, tol=TOL)
    compare(lambda lib, s: s.istft(4, length=20), spec, tol=TOL)
    compare(lambda lib, s: lib.istft(s.real, 4), spec, codes="method_dtype_not_supported_error")
    compare(lambda lib, s: lib.istft(s, 4, return_complex=True), spec, codes="argument_error_invalid")
    compare(lambda lib, s: lib.istft(lib.cat([s, s[:1]]), 4, onesided=False, return_complex=True), spec, tol=TOL)
    compare(lambda lib, s: lib.istft(s.to(lib.complex128), 4, window=lib.ones(4)), spec, tol=TOL)
    compare(lambda lib, s: lib.istft(s.unsqueeze(0), 4, center=False, window=lib.tensor([0.0, 1.0, 1.0, 0.0])), spec,
            codes="argument_error_invalid")
    x = values((64,), "float64", 4)
    w = np.hanning(16)
    out = []
    for lib in (st, torch):
        spec_ = lib.stft(lib.tensor(x), 16, 4, window=lib.tensor(w), return_complex=True)
        out.append(lib.istft(spec_, 16, 4, window=lib.tensor(w), length=64).numpy())
    np.testing.assert_allclose(out[0], x, atol=1e-10)
    np.testing.assert_allclose(out[0], out[1], atol=1e-10)


def test_second_order_and_forward_mode():
    import torch.autograd.forward_ad as fwt

    import shapetorch.autograd.forward_ad as fws

    a = values((6,), "float64", 5)
    res = []
    for lib in (st, torch):
        x = lib.tensor(a, requires_grad=True)
        c = lib.tensor(values((4,), "complex128", 8))  # (a complex tensor: a complex Python scalar's mul vjp
        w = lib.tensor(values((6,), "float64", 9))     # misses its conj in shapetorch, outside these ops)
        y = (lib.fft.irfft(lib.fft.rfft(x * x) * c, 6) * w).sum() + (lib.view_as_real(lib.fft.fft(x, 8)) ** 2).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), x)
        res.append((g.detach().numpy(), h.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-9, atol=1e-12)
    t = values((6,), "float64", 6)
    tans = []
    for lib, fw in ((st, fws), (torch, fwt)):
        with fw.dual_level():
            x = fw.make_dual(lib.tensor(a), lib.tensor(t))
            tans.append(fw.unpack_dual(lib.fft.ifft(lib.fft.rfft(x), 5, norm="ortho")).tangent.numpy())
    np.testing.assert_allclose(tans[0], tans[1], rtol=1e-9, atol=1e-12)
    assert st.autograd.gradcheck(lambda z: st.fft.irfft(st.view_as_complex(z), 7),
                                 (st.tensor(values((4, 2), "float64", 7), requires_grad=True),))
    assert st.autograd.gradcheck(lambda z: st.view_as_real(st.fft.fft(z, 5, norm="ortho")),
                                 (st.tensor(values((3, 4), "float64", 8), requires_grad=True),))


@fast(20)
# n_fft below 8: centring pads n_fft // 2 on each side, and a reflect pad as wide as the input is the pad
# rule's refusal (checked by the runtime's pad), not stft's
@given(length=hs.integers(4, 24), batch=hs.booleans(), n_fft=hs.integers(2, 7), hop=hs.integers(1, 4),
       center=hs.booleans(), onesided=hs.booleans())
def test_stft_rule_shape_matches_torch(length, batch, n_fft, hop, center, onesided):
    """The stft rule's result shape (what the plugin reports; the checking mode does not cover stft) is
    torch's, batched or not: a slip in the batch dims it keeps (`shape[:-1]`) went unnoticed."""
    from shapetorch._rules.errors import RuleError
    from shapetorch._rules.fft import stft_shape

    shape = (3, length) if batch else (length,)
    try:
        want = torch.stft(torch.zeros(shape, dtype=torch.float64), n_fft, hop, center=center, onesided=onesided,
                          return_complex=True).shape
    except RuntimeError:
        with pytest.raises(RuleError):
            stft_shape(shape, n_fft, hop, n_fft, None, center, onesided)
        return
    assert stft_shape(shape, n_fft, hop, n_fft, None, center, onesided) == tuple(want)


# -- N-D transforms, the Hermitian pair, frequencies and shifts, against torch --------------------------------------

_ND_RNG = np.random.default_rng(7)
_REAL = _ND_RNG.standard_normal((3, 4, 6))
_CPLX = _REAL + 1j * _ND_RNG.standard_normal((3, 4, 6))
_ND_KWARGS = [{}, {"s": (3, 5)}, {"dim": (0, 2)}, {"norm": "ortho"}, {"norm": "forward"}]


def _same_nd(ours: st.Tensor, theirs: torch.Tensor) -> None:
    t = theirs.detach().resolve_conj().numpy()
    assert tuple(ours.shape) == t.shape and ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_allclose(ours.detach().numpy(), t, atol=1e-9)


@pytest.mark.parametrize("kwargs", _ND_KWARGS)
@pytest.mark.parametrize(("name", "data"), [(n, d) for n in ("fft2", "ifft2", "fftn", "ifftn") for d in ("real", "complex")]
                         + [(n, "real") for n in ("rfft2", "rfftn", "ihfft2", "ihfftn")]
                         + [(n, "complex") for n in ("irfft2", "irfftn", "hfft2", "hfftn")])
def test_nd_transforms_against_torch(name: str, data: str, kwargs: dict[str, object]) -> None:
    a = _REAL if data == "real" else _CPLX
    kw = {**kwargs, "s": (3, 8)} if "s" in kwargs and name in ("irfft2", "irfftn", "hfft2", "hfftn") else kwargs
    _same_nd(getattr(st.fft, name)(st.tensor(a), **kw), getattr(torch.fft, name)(torch.tensor(a), **kw))


@pytest.mark.parametrize("kwargs", [{}, {"n": 9}, {"norm": "ortho"}, {"norm": "forward"}, {"dim": 0}])
def test_hermitian_pair_against_torch(kwargs: dict[str, object]) -> None:
    _same_nd(st.fft.hfft(st.tensor(_CPLX), **kwargs), torch.fft.hfft(torch.tensor(_CPLX), **kwargs))
    _same_nd(st.fft.ihfft(st.tensor(_REAL), **kwargs), torch.fft.ihfft(torch.tensor(_REAL), **kwargs))


def test_frequencies_shifts_and_nd_gradient_against_torch() -> None:
    for n in (1, 4, 5):
        _same_nd(st.fft.fftfreq(n, 0.5), torch.fft.fftfreq(n, 0.5))
        _same_nd(st.fft.rfftfreq(n), torch.fft.rfftfreq(n))
    for kw in ({}, {"dim": 1}, {"dim": (0, 2)}):
        _same_nd(st.fft.fftshift(st.tensor(_REAL), **kw), torch.fft.fftshift(torch.tensor(_REAL), **kw))
        _same_nd(st.fft.ifftshift(st.tensor(_REAL), **kw), torch.fft.ifftshift(torch.tensor(_REAL), **kw))
    x, tx = st.tensor(_REAL, requires_grad=True), torch.tensor(_REAL, requires_grad=True)
    st.fft.rfftn(x).abs().sum().backward()
    torch.fft.rfftn(tx).abs().sum().backward()
    _same_nd(x.grad, tx.grad)
    with pytest.raises(RuntimeError):
        st.fft.fftn(st.tensor(_REAL), s=(3, 4), dim=(0,))
