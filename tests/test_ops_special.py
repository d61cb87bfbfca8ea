"""Special functions and unary leftovers against torch: OpInfo samples per supported dtype, every dtype's
accept/reject, wide-range float64 accuracy (hypothesis), gradients (OpInfo, gradcheck), forward AD; windows."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
import shapetorch.autograd.forward_ad as sfw
from _opinfo_elementwise import check_samples, grad_samples, supported
from _oracle import DTYPES, compare, fast, values

UNARY = ["erf", "erfc", "erfinv", "lgamma", "digamma", "i0", "sinc", "angle", "conj_physical", "deg2rad", "rad2deg",
         "nan_to_num", "positive", "frexp"]
PREDICATES = ["isfinite", "isinf", "isnan", "isneginf", "isposinf", "isreal", "signbit"]
DIFFERENTIABLE = ["erf", "erfc", "erfinv", "lgamma", "digamma", "i0", "sinc", "angle", "conj_physical", "deg2rad",
                  "rad2deg", "nan_to_num", "positive", "frexp"]
# the OpInfo samples in a representative dtype of each kind (every dtype's accept/reject is tested below)
OPINFO_DTYPES = ["bool", "uint8", "int32", "float16", "bfloat16", "float32", "float64", "complex128"]
CODES = ("method_dtype_not_supported_error", "dtype_error_mismatch", "argument_error_invalid")


@pytest.mark.parametrize("name", UNARY + PREDICATES)
def test_opinfo_samples_every_supported_dtype(name):
    ran = sum(check_samples(name, d) for d in OPINFO_DTYPES if d in supported(name))
    assert ran > 0


@pytest.mark.parametrize("name", UNARY + PREDICATES)
def test_every_dtype_accepted_or_rejected_as_torch(name):
    for dtype in DTYPES:
        arr = values((2, 3), dtype, 3)
        if name == "erfinv" and dtype not in ("bool", "uint8", "int8", "int16", "int32", "int64"):
            arr = arr / 8
        compare(lambda lib, x: getattr(lib, name)(x), (arr, dtype), codes=CODES)


@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv", "lgamma", "digamma", "i0", "sinc", "deg2rad", "nan_to_num",
                                  "frexp", "angle", "isnan", "signbit"])
def test_method_and_inplace(name):
    x = values((3, 2), "float64", 4) / 4
    compare(lambda lib, a: getattr(a, name)(), (x, "float64"))
    if name not in ("frexp", "angle", "isnan", "signbit"):
        compare(lambda lib, a: getattr(a.clone(), name + "_")(), (x, "float64"))


EXTREMES = np.array([0.0, -0.0, 1.0, 2.0, -1.0, -2.0, 0.5, -0.5, 1e-300, -1e-300, 5e-324, 1e-8, 1e300, -1e300, 1e10,
                     -1e10 + 0.5, 26.5, -26.5, 5.9, 6.1, 27.0, 30.0, 171.6, 700.0, 720.0, np.inf, -np.inf, np.nan])


@pytest.mark.parametrize("name", ["erf", "erfc", "lgamma", "digamma", "i0", "sinc"])
def test_float64_extremes_match_torch(name):
    compare(lambda lib, x: getattr(lib, name)(x), (EXTREMES, "float64"), tol=(1e-12, 1e-300))


def test_erfinv_extremes_match_torch():
    x = np.array([0.0, -0.0, 1.0, -1.0, 1.5, -2.0, 1e-300, 0.5, -0.5, 0.9999999999, -1 + 1e-16, 1e-10, np.nan])
    compare(lambda lib, a: lib.erfinv(a), (x, "float64"), tol=(1e-12, 1e-300))


# relative accuracy: 1e-12 away from the zeros and poles of each function (absolute there)
@fast(30)
@given(data=hs.lists(hs.floats(-40, 40, allow_nan=False), min_size=1, max_size=40),
       name=hs.sampled_from(["erf", "erfc", "lgamma", "digamma", "i0", "sinc"]))
def test_float64_accuracy_hypothesis(data, name):
    x = np.array(data, dtype=np.float64)
    if name in ("lgamma", "digamma"):
        x = x[np.abs(x - np.round(x)) > 1e-6]  # torch's tan/sin of pi*x lose digits right at the poles
    ours = getattr(st, name)(st.tensor(x)).numpy()
    theirs = getattr(torch, name)(torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12 if name != "digamma" else 1e-10, atol=1e-12, equal_nan=True)


@fast(30)
@given(data=hs.lists(hs.floats(-1, 1, allow_nan=False), min_size=1, max_size=40))
def test_erfinv_accuracy_hypothesis(data):
    x = np.array(data, dtype=np.float64)
    np.testing.assert_allclose(st.erfinv(st.tensor(x)).numpy(), torch.erfinv(torch.tensor(x)).numpy(), rtol=1e-12,
                               atol=1e-15)


def test_large_arrays_are_vectorised():
    x = np.random.default_rng(0).normal(size=200_000) * 5
    for name in ("erf", "erfc", "lgamma", "digamma", "i0"):
        np.testing.assert_allclose(getattr(st, name)(st.tensor(x)).numpy(), getattr(torch, name)(torch.tensor(x)).numpy(),
                                   rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_opinfo_gradients_match_torch(name):
    assert grad_samples(name) > 0


@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.erf(x), lambda lib, x: lib.erfc(x), lambda lib, x: lib.erfinv(x.tanh()),
    lambda lib, x: lib.lgamma(x), lambda lib, x: lib.digamma(x), lambda lib, x: lib.i0(x),
    lambda lib, x: lib.sinc(x), lambda lib, x: lib.nan_to_num(x), lambda lib, x: lib.frexp(x)[0],
    lambda lib, x: lib.deg2rad(x),
], ids=["erf", "erfc", "erfinv", "lgamma", "digamma", "i0", "sinc", "nan_to_num", "frexp", "deg2rad"])
def test_gradcheck_and_forward_ad(fn):
    x = st.tensor([0.3, 1.7, 2.9, 0.05, 3.5], dtype=st.float64, requires_grad=True)
    assert st.autograd.gradcheck(lambda a: fn(st, a), (x,), check_forward_ad=True)
    assert st.autograd.gradgradcheck(lambda a: fn(st, a), (x,))
    tx = np.array([0.5, -1.0, 2.0, 1.5, -0.25])
    with sfw.dual_level():
        ours = sfw.unpack_dual(fn(st, sfw.make_dual(st.tensor(x.detach().numpy()), st.tensor(tx)))).tangent
    with tfw.dual_level():
        theirs = tfw.unpack_dual(fn(torch, tfw.make_dual(torch.tensor(x.detach().numpy()), torch.tensor(tx)))).tangent
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-9, atol=1e-12)


def test_complex_angle_and_sinc_gradients_match_torch():
    z = np.array([1 + 2j, -0.5 + 0.1j, 3 - 1j])
    cot = np.array([0.3, -1.2, 0.7])
    for fn in (lambda lib, a: lib.angle(a), lambda lib, a: lib.sinc(a).abs(),
               lambda lib, a: (lib.conj_physical(a) * lib.tensor([1 + 2j, 3j, 1])).abs()):
        ours = st.tensor(z, requires_grad=True)
        theirs = torch.tensor(z, requires_grad=True)
        fn(st, ours).backward(st.tensor(cot))
        fn(torch, theirs).backward(torch.tensor(cot))
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-9)


def test_frexp_returns_named_parts_and_out():
    x = st.tensor([0.0, 3.0, -0.75, 1e-310, float("inf")], dtype=st.float64)
    m, e = st.frexp(x)
    tm, te = torch.frexp(torch.tensor(x.numpy()))
    assert st.frexp(x).mantissa is not None and e.dtype is st.int32
    np.testing.assert_array_equal(m.numpy(), tm.numpy())
    np.testing.assert_array_equal(e.numpy(), te.numpy())


def test_nan_to_num_values_and_dtypes():
    x = np.array([np.nan, np.inf, -np.inf, 1.5])
    for dtype in ("float16", "bfloat16", "float32", "float64"):
        compare(lambda lib, a: lib.nan_to_num(a), (x, dtype))
        compare(lambda lib, a: lib.nan_to_num(a, nan=2.0, posinf=9.0, neginf=-9.0), (x, dtype))
    compare(lambda lib, a: lib.nan_to_num(a, posinf=5.0), (x + 1j * x[::-1], "complex128"))


def test_positive_is_identity_and_refuses_bool():
    x = st.tensor([1.0, -2.0])
    assert st.positive(x) is x
    compare(lambda lib, a: lib.positive(a), (np.array([True]), "bool"), codes="method_dtype_not_supported_error")


def test_erf_primitive_is_shared_with_gelu():
    x = values((4,), "float64", 2)
    compare(lambda lib, a: torch.nn.functional.gelu(a) if lib is torch else st.nn.functional.gelu(a), (x, "float64"))


# -- windows --------------------------------------------------------------------------------------------------

WINDOWS = ["bartlett_window", "blackman_window", "hamming_window", "hann_window", "kaiser_window"]


@pytest.mark.parametrize("name", WINDOWS)
def test_windows_match_torch(name):
    for n in (0, 1, 2, 3, 8, 17):
        for periodic in (True, False):
            for dtype in ("float32", "float64", "float16", "bfloat16"):
                compare(lambda lib: getattr(lib, name)(n, periodic, dtype=getattr(lib, dtype)))
    compare(lambda lib: getattr(lib, name)(5))
    compare(lambda lib: getattr(lib, name)(5, dtype=lib.int64), codes=CODES)
    compare(lambda lib: getattr(lib, name)(-1), codes=CODES)
    assert getattr(st, name)(4, requires_grad=True).requires_grad


def test_window_parameters_match_torch():
    compare(lambda lib: lib.hamming_window(7, False, 0.5, 0.3, dtype=lib.float64))
    for beta in (0.0, 5.0, 12.0, 40.0):
        compare(lambda lib: lib.kaiser_window(9, True, beta, dtype=lib.float64))


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_igamma_input_derivative_is_refused_at_backward_as_in_torch(name: str) -> None:
    # torch defines no derivative for the first argument: a backward that needs it raises NotImplementedError;
    # the second argument's derivative is computed (also with the first requiring no grad)
    for lib in (st, torch):
        a = lib.tensor([1.0, 2.5], requires_grad=True)
        x = lib.tensor([0.5, 3.0], requires_grad=True)
        out = getattr(lib, name)(a, x)
        assert out.grad_fn is not None
        with pytest.raises(NotImplementedError, match=f"the derivative for '{name}: input' is not implemented"):
            out.sum().backward()
    got, want = [], []
    for lib, res in ((st, got), (torch, want)):
        x = lib.tensor([0.5, 3.0], requires_grad=True)
        getattr(lib, name)(lib.tensor([1.0, 2.5]), x).sum().backward()
        res.append(x.grad.numpy())
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    with pytest.raises(st.AutogradNotImplementedError) as info:
        getattr(st, name)(st.tensor([1.0], requires_grad=True), st.tensor([1.0])).backward()
    assert info.value.code == "autograd_derivative_not_implemented"


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_igamma_input_derivative_is_refused_only_when_needed(name: str) -> None:
    """torch raises for the first argument only when the backward needs its gradient: ``autograd.grad`` and
    ``backward(inputs=...)`` with respect to ``other`` alone run, with the first argument requiring grad; asked
    for the first argument, or a plain backward, they raise."""
    got, want = [], []
    for lib, res in ((st, got), (torch, want)):
        a = lib.tensor([1.0, 2.5], requires_grad=True)
        x = lib.tensor([0.5, 3.0], requires_grad=True)
        out = getattr(lib, name)(a, x).sum()
        res.append(lib.autograd.grad(out, x, retain_graph=True)[0].numpy())
        out.backward(inputs=[x], retain_graph=True)
        res.append(x.grad.numpy())
        assert a.grad is None
        for call in (lambda: lib.autograd.grad(out, a, retain_graph=True),
                     lambda: lib.autograd.grad(out, (x, a), retain_graph=True), out.backward):
            with pytest.raises(NotImplementedError, match=f"the derivative for '{name}: input' is not implemented"):
                call()
    np.testing.assert_allclose(got, want, rtol=1e-6)
