"""More reductions against torch: aminmax, median/nanmedian, mode, quantile/nanquantile, nansum/nanmean, cov,
corrcoef, dist, var_ (OpInfo samples, hypothesis shapes/dims, NaNs, errors, gradients)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
from _oracle import assert_same, compare, fast, make, seeds, shapes, values
from test_ops_sorting import arg_or_kw, check_sample_grads, check_samples, values_and_valid_indices

F64, F32, I64 = torch.float64, torch.float32, torch.int64
CODES = ("dimension_error_out_of_range", "argument_error_invalid", "method_dtype_not_supported_error",
         "reduction_error_empty_input", "dtype_error_mismatch", "dim_error_repeated", "broadcast_error")


@pytest.mark.parametrize("name", ["aminmax", "nansum", "nanmean", "quantile", "nanquantile", "cov", "corrcoef",
                                  "dist"])
def test_opinfo_samples(name):
    dtypes = [F64, F32] if name in ("quantile", "nanquantile", "nanmean", "dist") else [F64, F32, I64]
    assert check_samples(name, dtypes) > 0


@pytest.mark.parametrize("name", ["median", "nanmedian", "mode"])
def test_opinfo_samples_values_and_indices(name):
    # which of several equal elements torch's index points at is unspecified: values must match, indices
    # must point at them (the no-dim median is a single value and compared exactly)
    def cmp(got, expected, s):
        if isinstance(expected, torch.Tensor):
            compare_exact(got, expected)
        else:
            values_and_valid_indices(arg_or_kw(0, "dim", -1))(got, expected, s)

    assert check_samples(name, [F64, F32, I64], compare=cmp) > 0


def compare_exact(got, expected):
    assert_same(got, expected)


@pytest.mark.parametrize("name", ["aminmax", "median", "nanmedian", "mode", "quantile", "nanquantile", "nansum",
                                  "nanmean", "cov", "corrcoef", "dist"])
def test_opinfo_grads(name):
    check_sample_grads(name, limit=25)


def test_var_alias_and_methods():
    assert st.var_ is st.var
    x = (values((3, 4), "float64", 1), "float64")
    compare(lambda lib, a: (lib.var if lib is torch else lib.var_)(a, 1, correction=0), x)
    compare(lambda lib, a: a.nanmean(0), x)
    compare(lambda lib, a: a.quantile(0.3, dim=1, keepdim=True), x)
    compare(lambda lib, a: a.aminmax(dim=0), x)


@pytest.mark.parametrize("name", ["median", "nanmedian", "mode"])
@fast(30)
@given(shape=shapes(0, 3, max_side=4), seed=seeds, keepdim=hs.booleans(), data=hs.data())
def test_select_reductions_dims(name, shape, seed, keepdim, data):
    dim = data.draw(hs.integers(-max(len(shape), 1) - 1, max(len(shape), 1)))
    n = int(np.prod(shape))
    arr = np.random.default_rng(seed).permutation(max(n, 1))[:n].reshape(shape).astype(np.float64)
    if n and data.draw(hs.booleans()) and name != "mode":
        arr.reshape(-1)[data.draw(hs.integers(0, n - 1))] = np.nan
    x = (arr, "float64")
    compare(lambda lib, a: getattr(lib, name)(a, dim, keepdim), x, codes=CODES)
    if name != "mode":
        compare(lambda lib, a: getattr(a, name)(), x, codes=CODES)


def test_median_mode_ties():
    x = (np.array([[1.0, 3.0, 3.0, 1.0, 2.0, 2.0], [5.0, 5.0, 4.0, 4.0, 4.0, 5.0]]), "float64")
    compare(lambda lib, a: lib.mode(a, 1), x)
    compare(lambda lib, a: lib.median(a), x)
    compare(lambda lib: lib.nanmedian(lib.tensor([float("nan")] * 3, dtype=lib.float64), 0))
    ours, theirs = make(np.array([1.0, 2.0, 2.0, 3.0]), "float64", requires_grad=True)
    st.median(ours).backward()
    torch.median(theirs).backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy())  # shared by the tied elements


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@fast(25)
@given(shape=shapes(0, 3, max_side=4), seed=seeds, keepdim=hs.booleans(), data=hs.data())
def test_quantile_forms(interpolation, shape, seed, keepdim, data):
    dim = data.draw(hs.none() | hs.integers(-max(len(shape), 1) - 1, max(len(shape), 1)))
    arr = values(shape, "float64", seed)
    if arr.size and data.draw(hs.booleans()):
        arr.reshape(-1)[0] = np.nan
    q = data.draw(hs.sampled_from([0.0, 0.25, 0.5, 1.0, "vec", "bad"]))
    x = (arr, "float64")
    for name in ("quantile", "nanquantile"):
        if q == "vec":
            compare(lambda lib, a: getattr(lib, name)(a, lib.tensor([0.1, 0.5, 0.9], dtype=lib.float64), dim,
                                                     keepdim, interpolation=interpolation), x, codes=CODES)
        else:
            qq = 1.5 if q == "bad" else q
            compare(lambda lib, a: getattr(lib, name)(a, qq, dim, keepdim, interpolation=interpolation), x,
                    codes=CODES)


def test_quantile_errors():
    x = (values((2, 3), "float32", 1), "float32")
    compare(lambda lib, a: lib.quantile(a, lib.tensor([0.5], dtype=lib.float64)), x, codes=CODES)
    compare(lambda lib, a: lib.quantile(a, lib.tensor([[0.5]])), x, codes=CODES)
    compare(lambda lib, a: lib.quantile(a, 0.5, interpolation="cubic"), x, codes=CODES)
    compare(lambda lib, a: lib.quantile(a.to(lib.int64), 0.5), x, codes=CODES)
    compare(lambda lib, a: lib.quantile(a[:0], 0.5), x, codes=CODES)


@fast(40)
@given(shape=shapes(0, 3, max_side=4), seed=seeds, keepdim=hs.booleans(), data=hs.data())
def test_nansum_nanmean_aminmax(shape, seed, keepdim, data):
    n = max(len(shape), 1)
    dim = data.draw(hs.none() | hs.integers(-n - 1, n) | hs.lists(hs.integers(-n, n - 1), max_size=2))
    dtype = data.draw(hs.sampled_from(["float64", "float32", "int32", "bool"]))
    arr = values(shape, dtype, seed)
    if arr.size and dtype.startswith("float") and data.draw(hs.booleans()):
        arr.reshape(-1)[0] = np.nan
    x = (arr, dtype)
    compare(lambda lib, a: lib.nansum(a, dim, keepdim), x, codes=CODES)
    compare(lambda lib, a: lib.nanmean(a, dim, keepdim), x, codes=CODES)
    one = dim if dim is None or isinstance(dim, int) else None
    compare(lambda lib, a: lib.aminmax(a, dim=one, keepdim=keepdim), x, codes=CODES)


@fast(30)
@given(shape=shapes(0, 2, max_side=4), seed=seeds, correction=hs.sampled_from([0, 1, 2]), data=hs.data())
def test_cov_corrcoef(shape, seed, correction, data):
    dtype = data.draw(hs.sampled_from(["float64", "int64", "complex128"]))
    x = (values(shape, dtype, seed), dtype)
    compare(lambda lib, a: lib.cov(a, correction=correction), x, codes=CODES)
    compare(lambda lib, a: lib.corrcoef(a), x, codes=CODES)
    n_obs = shape[-1] if shape else 1
    if len(shape) <= 2:
        fw = (np.random.default_rng(seed).integers(0, 3, size=(n_obs,)), "int64")
        aw = (np.abs(values((n_obs,), "float64", seed + 1)), "float64")
        compare(lambda lib, a, f, w: lib.cov(a, correction=correction, fweights=f, aweights=w), x, fw, aw,
                codes=CODES)


def test_cov_weight_errors():
    x = (values((2, 3), "float64", 1), "float64")
    compare(lambda lib, a: lib.cov(a, fweights=lib.tensor([1.0, 2.0, 3.0])), x, codes=CODES)
    compare(lambda lib, a: lib.cov(a, fweights=lib.tensor([1, -2, 3])), x, codes=CODES)
    compare(lambda lib, a: lib.cov(a, aweights=lib.tensor([1, 2, 3])), x, codes=CODES)
    compare(lambda lib, a: lib.cov(a, aweights=lib.tensor([1.0, 2.0])), x, codes=CODES)
    compare(lambda lib, a: lib.cov(a.reshape(1, 2, 3)), x, codes=CODES)


@fast(30)
@given(seed=seeds, p=hs.sampled_from([0, 1, 2, 3, 0.5, float("inf"), -float("inf")]), data=hs.data())
def test_dist_broadcasts(seed, p, data):
    a_shape = data.draw(shapes(0, 3, max_side=3))
    b_shape = data.draw(shapes(0, 3, max_side=3))
    compare(lambda lib, a, b: lib.dist(a, b, p), (values(a_shape, "float64", seed), "float64"),
            (values(b_shape, "float64", seed + 1), "float64"), codes=CODES)
    compare(lambda lib, a, b: a.dist(b), (values(a_shape, "int64", seed), "int64"),
            (values(a_shape, "int64", seed), "int64"), codes=CODES)
