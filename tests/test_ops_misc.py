"""Misc ops against torch: bincount, histc, histogram, cartesian_prod, combinations, is_complex,
is_floating_point, is_nonzero, sym_float/sym_int/sym_not, and vmap (against torch.vmap)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
from _oracle import DTYPES, compare, fast, make, seeds, shapes, values
from test_ops_sorting import check_sample_grads, check_samples

F64, F32, I64 = torch.float64, torch.float32, torch.int64
CODES = ("dimension_error_out_of_range", "argument_error_invalid", "method_dtype_not_supported_error",
         "dtype_error_mismatch", "item_error_not_scalar")


@pytest.mark.parametrize("name", ["bincount", "histc", "histogram", "cartesian_prod", "combinations"])
def test_opinfo_samples(name):
    dtypes = [I64, torch.int32, torch.uint8] if name == "bincount" else [F64, F32] if name.startswith("hist") else \
        [F64, F32, I64]
    assert check_samples(name, dtypes) > 0


@pytest.mark.parametrize("name", ["cartesian_prod", "combinations"])
def test_opinfo_grads(name):
    assert check_sample_grads(name) > 0


@fast(40)
@given(n=hs.integers(0, 8), seed=seeds, minlength=hs.integers(-1, 6), data=hs.data())
def test_bincount(n, seed, minlength, data):
    rng = np.random.default_rng(seed)
    arr = rng.integers(-1 if data.draw(hs.booleans()) else 0, 6, size=(n,))
    x = (arr, data.draw(hs.sampled_from(["int64", "int32", "uint8", "float32"])) if arr.min(initial=0) >= 0
         else "int64")
    compare(lambda lib, a: lib.bincount(a, minlength=minlength), x, codes=CODES)
    wdt = data.draw(hs.sampled_from(["float32", "float64", "int64", "float16"]))
    w = (values((n,), wdt, seed), wdt)
    compare(lambda lib, a, b: a.bincount(b, minlength=max(minlength, 0)), x, w, codes=CODES)
    compare(lambda lib, a: lib.bincount(a.reshape(1, -1)), x, codes=CODES)


@fast(40)
@given(shape=shapes(0, 3, max_side=4), seed=seeds, bins=hs.integers(0, 6), data=hs.data())
def test_histc_histogram(shape, seed, bins, data):
    dtype = data.draw(hs.sampled_from(["float32", "float64", "int64"]))
    x = (values(shape, dtype, seed), dtype)
    lo, hi = data.draw(hs.sampled_from([(0, 0), (-1.0, 1.0), (2.0, 2.0), (1.0, -1.0)]))
    compare(lambda lib, a: lib.histc(a, bins, min=lo, max=hi), x, codes=CODES)
    compare(lambda lib, a: a.histogram(bins), x, codes=CODES)
    if lo <= hi:
        density = data.draw(hs.booleans())
        w = (np.abs(values(shape, dtype, seed + 1)), dtype)
        compare(lambda lib, a, b: lib.histogram(a, bins, range=(lo, hi), weight=b, density=density), x, w,
                codes=CODES)
    edges = (np.sort(values((max(bins, 1),), "float64", seed + 2)), dtype)
    compare(lambda lib, a, e: lib.histogram(a, e), x, edges, codes=CODES)


@fast(30)
@given(sizes=hs.lists(hs.integers(0, 3), min_size=0, max_size=3), seed=seeds, r=hs.integers(-1, 4),
       repl=hs.booleans())
def test_cartesian_prod_combinations(sizes, seed, r, repl):
    xs = [(values((s,), "float64", seed + i), "float64") for i, s in enumerate(sizes)]
    compare(lambda lib, *ts: lib.cartesian_prod(*ts), *xs, codes=CODES)
    if xs:
        compare(lambda lib, a: lib.combinations(a, r, with_replacement=repl), xs[0], codes=CODES)
    compare(lambda lib, a: lib.combinations(a, 2), (values((2, 2), "float64", seed), "float64"), codes=CODES)
    compare(lambda lib, a, b: lib.cartesian_prod(a, b), (values((2,), "float64", seed), "float64"),
            (values((2,), "int64", seed), "int64"), codes=CODES)


@pytest.mark.parametrize("dtype", DTYPES)
def test_predicates(dtype):
    x, tx = make(values((2,), dtype, 0), dtype)
    assert st.is_complex(x) == torch.is_complex(tx)
    assert st.is_floating_point(x) == torch.is_floating_point(tx)
    for arr in (np.array([0]), np.array([[3]]), np.array(1), np.array([1, 2]), np.zeros(0)):
        compare(lambda lib, a: lib.is_nonzero(a), (arr, dtype), codes=CODES)
        compare(lambda lib, a: a.is_nonzero(), (arr, dtype), codes=CODES)


def test_sym_helpers():
    for v in (3, 2.7, -2.7, True, 0.0):
        assert st.sym_float(v) == torch.sym_float(v) and type(st.sym_float(v)) is type(torch.sym_float(v))
        assert st.sym_int(v) == torch.sym_int(v) and type(st.sym_int(v)) is type(torch.sym_int(v))
        assert st.sym_not(v) == torch.sym_not(v)
    assert st.sym_float(st.tensor(2.5)) == 2.5
    assert st.sym_int(st.tensor(7)) == 7
    assert st.sym_not(st.tensor(0)) is True


# -- vmap against torch.vmap ------------------------------------------------------------------------------

VMAP_CASES = {
    "dot": (lambda lib: lambda a, b: (a * b).sum(), [(4, 3), (4, 3)], 0, 0),
    "in_dims_none": (lambda lib: lambda a, b: a @ b, [(5, 2, 3), (3, 4)], (0, None), 0),
    "in_dims_1_out_1": (lambda lib: lambda a: a.softmax(0) if lib is torch else lib.softmax(a, 0), [(3, 6)], 1, 1),
    "negative_dims": (lambda lib: lambda a, b: a - b.mean(), [(2, 3, 4), (4, 5)], (-1, 0), -1),
    "tuple_out": (lambda lib: lambda a: (a.sum(), a.cumsum(0)), [(3, 4)], 0, (0, 1)),
    "nested": (lambda lib: lambda a: lib.sort(a).values, [(2, 5)], 0, 0),
}


@pytest.mark.parametrize("case", sorted(VMAP_CASES))
def test_vmap_matches_torch(case):
    make_fn, in_shapes, in_dims, out_dims = VMAP_CASES[case]
    inputs = [(values(s, "float64", i), "float64") for i, s in enumerate(in_shapes)]
    compare(lambda lib, *xs: (torch.vmap if lib is torch else st.vmap)(make_fn(lib), in_dims, out_dims)(*xs), *inputs)


def test_vmap_nested_pytrees_and_kwargs():
    x = values((3, 2), "float64", 1)
    y = values((2, 3), "float64", 2)

    def fn(lib):
        return lambda d, scale=1.0: {"s": (d["a"] * d["b"]).sum() * scale, "p": [d["a"] + 1]}

    for lib, vm in ((torch, torch.vmap), (st, st.vmap)):
        out = vm(fn(lib), in_dims=({"a": 0, "b": 1},))({"a": lib.tensor(x), "b": lib.tensor(y)}, scale=2.0)
        if lib is torch:
            expected = out
        else:
            np.testing.assert_allclose(out["s"].numpy(), expected["s"].numpy())
            np.testing.assert_allclose(out["p"][0].numpy(), expected["p"][0].numpy())


def test_vmap_gradients_and_nesting():
    a_np = values((3, 4), "float64", 3)
    ours, theirs = make(a_np, "float64", requires_grad=True)
    out_o = st.vmap(st.vmap(lambda v: v.exp() * v))(ours).sum()
    out_t = torch.vmap(torch.vmap(lambda v: v.exp() * v))(theirs).sum()
    out_o.backward()
    out_t.backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)


def test_vmap_errors_like_torch():
    a, b = st.ones(3, 2), st.ones(4, 2)
    with pytest.raises(ValueError, match="same size"):
        st.vmap(lambda x, y: x + y)(a, b)
    with pytest.raises(ValueError, match="at least one input"):
        st.vmap(lambda x: x, in_dims=None)(a)
    with pytest.raises(ValueError):
        st.vmap(lambda x: x, in_dims=2)(a)
    with pytest.raises(ValueError):
        st.vmap(lambda x: x, in_dims=(0, 0))(a)
    with pytest.raises(ValueError):
        st.vmap(lambda x, n: x * n)(a, 2)
    with pytest.raises(ValueError, match="Tensors"):
        st.vmap(lambda x: 3)(a)
    with pytest.raises(RuntimeError):
        st.vmap(lambda x: x, randomness="sometimes")
    for fn, args in ((lambda x, y: x + y, (torch.ones(3, 2), torch.ones(4, 2))),
                     (lambda x, n: x * n, (torch.ones(3, 2), 2)), (lambda x: 3, (torch.ones(3),))):
        with pytest.raises(ValueError):
            torch.vmap(fn)(*args)


def test_vmap_randomness_same_replays_the_generator():
    st.manual_seed(0)
    same = st.vmap(lambda x: x + st.rand(()), randomness="same")(st.zeros(4))
    assert len(set(same.tolist())) == 1
    different = st.vmap(lambda x: x + st.rand(()), randomness="different")(st.zeros(4))
    assert len(set(different.tolist())) == 4
