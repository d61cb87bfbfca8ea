"""Statistics against torch: median/nanmedian, mode, quantile/nanquantile, cov, corrcoef, bincount, histc,
histogram, and the reductions aminmax, nansum/nanmean, dist, var_ (OpInfo samples, hypothesis shapes/dims, NaNs,
errors, gradients); also cartesian_prod/combinations, is_complex/is_floating_point/is_nonzero and sym_*."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
from _oracle import DTYPES, assert_same, compare, fast, make, seeds, shapes, values
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

    def finite(lib, out):
        # with no degrees of freedom left both divide by zero; the signs of complex infinities then differ
        # (neither is meaningful), so complex results are compared where they are finite
        return lib.where(lib.isfinite(out), out, lib.zeros_like(out)) if out.is_complex() else out

    compare(lambda lib, a: finite(lib, lib.cov(a, correction=correction)), x, codes=CODES)
    compare(lambda lib, a: finite(lib, lib.corrcoef(a)), x, codes=CODES)
    n_obs = shape[-1] if shape else 1
    if len(shape) <= 2:
        fw = (np.random.default_rng(seed).integers(0, 3, size=(n_obs,)), "int64")
        aw = (np.abs(values((n_obs,), "float64", seed + 1)), "float64")
        compare(lambda lib, a, f, w: finite(lib, lib.cov(a, correction=correction, fweights=f, aweights=w)), x, fw,
                aw, codes=CODES)


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


# -- counting (bincount, histc, histogram), cartesian_prod / combinations, predicates, sym_* -----------------

PREDICATE_CODES = ("dimension_error_out_of_range", "argument_error_invalid", "method_dtype_not_supported_error",
         "dtype_error_mismatch", "item_error_not_scalar")


@pytest.mark.parametrize("name", ["bincount", "histc", "histogram", "cartesian_prod", "combinations"])
def test_counting_and_combinatorics_opinfo_samples(name):
    dtypes = [I64, torch.int32, torch.uint8] if name == "bincount" else [F64, F32] if name.startswith("hist") else \
        [F64, F32, I64]
    assert check_samples(name, dtypes) > 0


@pytest.mark.parametrize("name", ["cartesian_prod", "combinations"])
def test_combinatorics_opinfo_grads(name):
    assert check_sample_grads(name) > 0


@fast(40)
@given(n=hs.integers(0, 8), seed=seeds, minlength=hs.integers(-1, 6), data=hs.data())
def test_bincount(n, seed, minlength, data):
    rng = np.random.default_rng(seed)
    arr = rng.integers(-1 if data.draw(hs.booleans()) else 0, 6, size=(n,))
    x = (arr, data.draw(hs.sampled_from(["int64", "int32", "uint8", "float32"])) if arr.min(initial=0) >= 0
         else "int64")
    compare(lambda lib, a: lib.bincount(a, minlength=minlength), x, codes=PREDICATE_CODES)
    wdt = data.draw(hs.sampled_from(["float32", "float64", "int64", "float16"]))
    w = (values((n,), wdt, seed), wdt)
    compare(lambda lib, a, b: a.bincount(b, minlength=max(minlength, 0)), x, w, codes=PREDICATE_CODES)
    compare(lambda lib, a: lib.bincount(a.reshape(1, -1)), x, codes=PREDICATE_CODES)


@fast(40)
@given(shape=shapes(0, 3, max_side=4), seed=seeds, bins=hs.integers(0, 6), data=hs.data())
def test_histc_histogram(shape, seed, bins, data):
    dtype = data.draw(hs.sampled_from(["float32", "float64", "int64"]))
    x = (values(shape, dtype, seed), dtype)
    lo, hi = data.draw(hs.sampled_from([(0, 0), (-1.0, 1.0), (2.0, 2.0), (1.0, -1.0)]))
    compare(lambda lib, a: lib.histc(a, bins, min=lo, max=hi), x, codes=PREDICATE_CODES)
    compare(lambda lib, a: a.histogram(bins), x, codes=PREDICATE_CODES)
    if lo <= hi:
        density = data.draw(hs.booleans())
        w = (np.abs(values(shape, dtype, seed + 1)), dtype)
        compare(lambda lib, a, b: lib.histogram(a, bins, range=(lo, hi), weight=b, density=density), x, w,
                codes=PREDICATE_CODES)
    edges = (np.sort(values((max(bins, 1),), "float64", seed + 2)), dtype)
    compare(lambda lib, a, e: lib.histogram(a, e), x, edges, codes=PREDICATE_CODES)


@fast(30)
@given(sizes=hs.lists(hs.integers(0, 3), min_size=0, max_size=3), seed=seeds, r=hs.integers(-1, 4),
       repl=hs.booleans())
def test_cartesian_prod_combinations(sizes, seed, r, repl):
    xs = [(values((s,), "float64", seed + i), "float64") for i, s in enumerate(sizes)]
    compare(lambda lib, *ts: lib.cartesian_prod(*ts), *xs, codes=PREDICATE_CODES)
    if xs:
        compare(lambda lib, a: lib.combinations(a, r, with_replacement=repl), xs[0], codes=PREDICATE_CODES)
    compare(lambda lib, a: lib.combinations(a, 2), (values((2, 2), "float64", seed), "float64"), codes=PREDICATE_CODES)
    compare(lambda lib, a, b: lib.cartesian_prod(a, b), (values((2,), "float64", seed), "float64"),
            (values((2,), "int64", seed), "int64"), codes=PREDICATE_CODES)


@pytest.mark.parametrize("dtype", DTYPES)
def test_predicates(dtype):
    x, tx = make(values((2,), dtype, 0), dtype)
    assert st.is_complex(x) == torch.is_complex(tx)
    assert st.is_floating_point(x) == torch.is_floating_point(tx)
    for arr in (np.array([0]), np.array([[3]]), np.array(1), np.array([1, 2]), np.zeros(0)):
        compare(lambda lib, a: lib.is_nonzero(a), (arr, dtype), codes=PREDICATE_CODES)
        compare(lambda lib, a: a.is_nonzero(), (arr, dtype), codes=PREDICATE_CODES)


def test_sym_helpers():
    for v in (3, 2.7, -2.7, True, 0.0):
        assert st.sym_float(v) == torch.sym_float(v) and type(st.sym_float(v)) is type(torch.sym_float(v))
        assert st.sym_int(v) == torch.sym_int(v) and type(st.sym_int(v)) is type(torch.sym_int(v))
        assert st.sym_not(v) == torch.sym_not(v)
    assert st.sym_float(st.tensor(2.5)) == 2.5
    assert st.sym_int(st.tensor(7)) == 7
    assert st.sym_not(st.tensor(0)) is True
