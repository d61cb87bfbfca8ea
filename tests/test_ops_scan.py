"""Scans against torch: cumsum, cumprod, cummax, cummin, logcumsumexp, diff, cumulative_trapezoid, trapezoid.

OpInfo samples, hypothesis shapes/dims/dtypes, gradients (cumprod with zeros), forward mode, in-place forms.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
from _oracle import compare, fast, make, seeds, shapes, values
from test_ops_sorting import check_sample_grads, check_samples

F64, F32, I64 = torch.float64, torch.float32, torch.int64
CODES = ("dimension_error_out_of_range", "argument_error_invalid", "method_dtype_not_supported_error",
         "dimension_error_zero_dim", "cat_error_size_mismatch", "dtype_error_cannot_cast")


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "diff", "trapezoid",
                                  "cumulative_trapezoid"])
def test_opinfo_samples(name):
    dtypes = [F64, F32] if name == "logcumsumexp" else [F64, F32, I64]
    assert check_samples(name, dtypes) > 0


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "diff", "trapezoid",
                                  "cumulative_trapezoid"])
def test_opinfo_grads(name):
    assert check_sample_grads(name) > 0


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"])
@fast(30)
@given(shape=shapes(0, 3, max_side=4), seed=seeds, data=hs.data())
def test_scan_dims_and_dtypes(name, shape, seed, data):
    dim = data.draw(hs.integers(-max(len(shape), 1) - 1, max(len(shape), 1)))
    dtype = data.draw(hs.sampled_from(["float32", "float64", "int32", "bool", "uint8", "float16", "complex64"]))
    x = (values(shape, dtype, seed), dtype)
    compare(lambda lib, a: getattr(lib, name)(a, dim), x, codes=CODES)
    if name in ("cumsum", "cumprod"):
        out = data.draw(hs.sampled_from(["float64", "int64", "int16"]))
        compare(lambda lib, a: getattr(a, name)(dim, dtype=getattr(lib, out)), x, codes=CODES)


def test_cummax_ties_and_nans():
    x = (np.array([1.0, 3.0, 3.0, np.nan, 2.0, np.nan, 5.0]), "float64")
    compare(lambda lib, a: lib.cummax(a, 0), x)
    compare(lambda lib, a: lib.cummin(a, 0), x)
    compare(lambda lib, a: lib.cummax(a, 0), (np.array([1, 3, 3, 2, 3]), "int64"))
    compare(lambda lib, a: lib.cummin(a, -1), (np.array([[True, False, False]]), "bool"))


@pytest.mark.parametrize("zeros", [0, 1, 2])
def test_cumprod_grad_with_zeros(zeros):
    arr = values((3, 5), "float64", 4)
    arr[0, 1] = 0.0
    if zeros > 1:
        arr[1, 3] = arr[1, 1] = 0.0
    if zeros == 0:
        arr = np.abs(arr) + 0.5
    for dim in (0, 1):
        ours, theirs = make(arr, "float64", requires_grad=True)
        cot = values((3, 5), "float64", 9)
        (g_o,) = st.autograd.grad(st.cumprod(ours, dim), ours, st.tensor(cot))
        (g_t,) = torch.autograd.grad(torch.cumprod(theirs, dim), theirs, torch.tensor(cot))
        np.testing.assert_allclose(g_o.numpy(), g_t.numpy(), rtol=1e-10, atol=1e-12)


def test_gradcheck_and_second_order():
    x = st.tensor([[0.5, 0.0, 1.5, -2.0], [1.0, 2.0, -0.5, 0.3]], dtype=st.float64, requires_grad=True)
    assert st.autograd.gradcheck(lambda a: st.cumprod(a, 1), (x,))
    assert st.autograd.gradcheck(lambda a: st.cumsum(a, 0), (x,))
    assert st.autograd.gradcheck(lambda a: st.logcumsumexp(a, 1), (x,))
    assert st.autograd.gradcheck(lambda a: st.cummax(a, 1).values, (x,))
    assert st.autograd.gradgradcheck(lambda a: st.logcumsumexp(a, 1), (x,))
    y = st.tensor([[0.5, 1.2, 1.5, -2.0]], dtype=st.float64, requires_grad=True)
    assert st.autograd.gradgradcheck(lambda a: st.cumprod(a, 1), (y,))


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "logcumsumexp"])
def test_forward_mode_matches_torch(name):
    import torch.autograd.forward_ad as tfw

    import shapetorch.autograd.forward_ad as fw

    arr = values((3, 4), "float64", 2)
    arr[1, 2] = 0.0
    tan = values((3, 4), "float64", 3)
    for dim in (0, 1):
        with fw.dual_level():
            got = fw.unpack_dual(getattr(st, name)(fw.make_dual(st.tensor(arr), st.tensor(tan)), dim)).tangent
        with tfw.dual_level():
            exp = tfw.unpack_dual(getattr(torch, name)(tfw.make_dual(torch.tensor(arr), torch.tensor(tan)), dim)).tangent
        np.testing.assert_allclose(got.numpy(), exp.numpy(), rtol=1e-10, atol=1e-12)


def test_complex_logcumsumexp_and_cumprod():
    x = (values((2, 4), "complex128", 5), "complex128")
    compare(lambda lib, a: lib.logcumsumexp(a, 1), x)
    compare(lambda lib, a: lib.cumprod(a, 0), x)


def test_inplace_scans():
    x = (values((2, 3), "float32", 1), "float32")
    compare(lambda lib, a: a.clone().cumsum_(1), x)
    compare(lambda lib, a: a.clone().cumprod_(0), x)
    compare(lambda lib, a: a.clone().cumsum_(0, dtype=lib.float64), x, codes=CODES)
    compare(lambda lib, a: a.clone().cumsum_(0), (values((2, 3), "int32", 1), "int32"))


@fast(40)
@given(shape=shapes(0, 3, max_side=4), n=hs.integers(-1, 4), seed=seeds, data=hs.data())
def test_diff(shape, n, seed, data):
    dim = data.draw(hs.integers(-max(len(shape), 1) - 1, max(len(shape), 1)))
    dtype = data.draw(hs.sampled_from(["float64", "int64", "bool"]))
    x = (values(shape, dtype, seed), dtype)
    compare(lambda lib, a: lib.diff(a, n, dim), x, codes=CODES)
    if shape:
        extra = list(shape)
        extra[dim % len(shape) if -len(shape) - 1 < dim < len(shape) + 1 else 0] = data.draw(hs.integers(0, 2))
        if data.draw(hs.booleans()) and len(extra) > 1:
            extra[0] += 1  # a mismatch off the diff dim: rejected by both
        p = (values(extra, dtype, seed + 1), dtype)
        compare(lambda lib, a, b: a.diff(n=max(n, 0), dim=dim, prepend=b, append=b), x, p, codes=CODES)


@fast(40)
@given(shape=shapes(0, 3, max_side=4), seed=seeds, data=hs.data())
def test_trapezoid_forms(shape, seed, data):
    dim = data.draw(hs.integers(-max(len(shape), 1) - 1, max(len(shape), 1)))
    dtype = data.draw(hs.sampled_from(["float64", "int64"]))
    y = (values(shape, dtype, seed), dtype)
    dx = data.draw(hs.sampled_from([0.5, 2]))
    for name in ("trapezoid", "cumulative_trapezoid"):
        compare(lambda lib, a: getattr(lib, name)(a, dim=dim), y, codes=CODES)
        compare(lambda lib, a: getattr(lib, name)(a, dx=dx, dim=dim), y, codes=CODES)
        if shape and -len(shape) <= dim < len(shape):
            xs = (np.cumsum(np.abs(values((shape[dim],), "float64", seed + 2))), "float64")
            compare(lambda lib, a, b: getattr(lib, name)(a, b, dim=dim), y, xs, codes=CODES)
            xfull = (values(shape, "float64", seed + 3), "float64")
            compare(lambda lib, a, b: getattr(lib, name)(a, b, dim=dim), y, xfull, codes=CODES)
