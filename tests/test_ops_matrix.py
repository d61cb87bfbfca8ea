"""diag/diag_embed/diagflat, tril/triu, trace, inverse, kron, block_diag, cdist, addbmm, addr, chain_matmul and
tensordot against torch: OpInfo samples, hypothesis shapes, error verdicts, float64 gradients."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
from _opinfo_tables import errors, grads, with_error_inputs
from _opinfo_tables import values as sample_values
from _oracle import compare, fast, rand, seeds, shapes, values


def _fn(name):
    return lambda lib, x, *a, **k: getattr(lib, name)(x, *a, **k)


OPS = {n: _fn(n) for n in ("diag", "diag_embed", "diagflat", "tril", "triu", "trace", "kron", "addbmm", "addr",
                           "tensordot", "cdist")}
OPS["block_diag"] = lambda lib, *xs, **k: lib.block_diag(*xs, **k)
OPS["linalg.inv"] = lambda lib, x: (torch.linalg.inv if lib is torch else st.inverse)(x)
TOL = {"cdist": (1e-4, 1e-4), "linalg.inv": (1e-4, 1e-4), "addbmm": (1e-4, 1e-4), "tensordot": (1e-4, 1e-4)}


@pytest.mark.parametrize("name", sorted(OPS))
def test_opinfo_samples(name):
    assert sample_values(name, OPS[name], tol=TOL.get(name)) > 0


@pytest.mark.parametrize("name", sorted(OPS))
def test_opinfo_grads(name):
    assert grads(name, OPS[name], max_samples=6) > 0


@pytest.mark.parametrize("name", with_error_inputs(sorted(OPS)))
def test_opinfo_error_inputs(name):
    assert errors(name, OPS[name]) > 0


def test_trace_grad():
    a = values((3, 4), "float64", 1)
    gs = []
    for lib in (st, torch):
        x = lib.tensor(a, requires_grad=True)
        lib.trace(x).backward()
        gs.append(x.grad.numpy())
    np.testing.assert_array_equal(gs[0], gs[1])


# -- hypothesis --------------------------------------------------------------------------------------------------


@fast(20)
@given(shape=shapes(0, 3), k=hs.integers(-3, 3), seed=seeds, dtype=hs.sampled_from(["float32", "int64", "bool"]))
def test_diag_tril_triu(shape, k, seed, dtype):
    x = (values(shape, dtype, seed), dtype)
    codes = ("argument_error", "linalg_error", "dimension_error")
    compare(lambda lib, a: lib.diag(a, k), x, codes=codes)
    compare(lambda lib, a: lib.diagflat(a, k), x, codes=codes)
    compare(lambda lib, a: lib.tril(a, k), x, codes=codes)
    compare(lambda lib, a: lib.triu(a, k), x, codes=codes)
    compare(lambda lib, a: lib.trace(a), x, codes=codes + ("method_dtype",))


@fast(20)
@given(shape=shapes(0, 3), offset=hs.integers(-2, 2), d1=hs.integers(-4, 3), d2=hs.integers(-4, 3), seed=seeds)
def test_diag_embed(shape, offset, d1, d2, seed):
    compare(lambda lib, a: lib.diag_embed(a, offset, d1, d2), (values(shape, "float64", seed), "float64"),
            codes=("argument_error", "dimension_error"))


@fast(20)
@given(pair=hs.tuples(shapes(0, 3), shapes(0, 3)), seed=seeds,
       dtypes=hs.sampled_from([("float32", "float32"), ("int64", "float64"), ("bool", "bool"), ("int32", "int8")]))
def test_kron(pair, seed, dtypes):
    compare(lambda lib, a, b: lib.kron(a, b), (values(pair[0], dtypes[0], seed), dtypes[0]),
            (values(pair[1], dtypes[1], seed + 1), dtypes[1]))


@fast(20)
@given(ss=hs.lists(shapes(0, 3, max_side=3), max_size=3), seed=seeds)
def test_block_diag(ss, seed):
    dts = ["float32", "int64", "float64"]
    inputs = [(values(s, dts[i % 3], seed + i), dts[i % 3]) for i, s in enumerate(ss)]
    compare(lambda lib, *xs: lib.block_diag(*xs), *inputs, codes="argument_error")


@fast(20)
@given(n=hs.integers(0, 4), batch=shapes(0, 2, max_side=2), seed=seeds, dtype=hs.sampled_from(["float64", "complex128"]))
def test_inverse(n, batch, seed, dtype):
    a = values(batch + (n, n), dtype, seed) + 3 * np.eye(n)
    compare(lambda lib, x: lib.inverse(x), (a, dtype), tol=(1e-6, 1e-8))


@fast(20)
@given(pa=shapes(0, 4), pb=shapes(0, 4), seed=seeds, p=hs.sampled_from([0.0, 1.0, 2.0, 3.0, 0.5, float("inf")]))
def test_cdist(pa, pb, seed, p):
    compare(lambda lib, a, b: lib.cdist(a, b, p), (values(pa, "float64", seed), "float64"),
            (values(pb, "float64", seed + 1), "float64"), codes=("linalg_error", "matmul_error", "broadcast_error"),
            tol=(1e-6, 1e-8))


@fast(20)
@given(sa=shapes(0, 4), sb=shapes(0, 4), seed=seeds, data=hs.data())
def test_tensordot(sa, sb, seed, data):
    if data.draw(hs.booleans()):
        dims = data.draw(hs.integers(-1, 3))
    else:
        k = data.draw(hs.integers(0, 2))
        dims = (data.draw(hs.lists(hs.integers(-4, 3), min_size=k, max_size=k)),
                data.draw(hs.lists(hs.integers(-4, 3), min_size=k, max_size=k + data.draw(hs.integers(0, 1)))))
    compare(lambda lib, a, b: lib.tensordot(a, b, dims), (values(sa, "float64", seed), "float64"),
            (values(sb, "float64", seed + 1), "float64"),
            codes=("argument_error", "matmul_error", "dimension_error", "dim_error"))


@fast(20)
@given(b=hs.integers(0, 3), n=hs.integers(0, 3), m=hs.integers(0, 3), p=hs.integers(0, 3), ishape=shapes(0, 2),
       seed=seeds, beta=hs.sampled_from([0, 1, 0.5]), alpha=hs.sampled_from([1, 2.0]))
def test_addbmm_addr(b, n, m, p, ishape, seed, beta, alpha):
    codes = ("expand_error", "broadcast_error", "matmul_error", "batch_dimensions")
    compare(lambda lib, i, x, y: lib.addbmm(i, x, y, beta=beta, alpha=alpha), (values(ishape, "float64", seed), "float64"),
            (values((b, n, m), "float64", seed + 1), "float64"), (values((b, m, p), "float64", seed + 2), "float64"),
            codes=codes)
    compare(lambda lib, i, x, y: lib.addr(i, x, y, beta=beta, alpha=alpha), (values(ishape, "float64", seed), "float64"),
            (values((n,), "float64", seed + 1), "float64"), (values((m,), "float64", seed + 2), "float64"),
            codes=codes)


@fast(20)
@given(sizes=hs.lists(hs.integers(0, 3), min_size=2, max_size=5), seed=seeds)
def test_chain_matmul(sizes, seed):
    inputs = [(values((a, b), "float64", seed + i), "float64") for i, (a, b) in enumerate(zip(sizes, sizes[1:]))]
    compare(lambda lib, *ms: lib.chain_matmul(*ms), *inputs, tol=(1e-9, 1e-9))


# -- specific behaviours ---------------------------------------------------------------------------------------------


def test_errors_like_torch():
    x = (values((2, 3), "float32", 0), "float32")
    compare(lambda lib, a: lib.inverse(a), x, codes="linalg_error_not_square_matrix")
    compare(lambda lib, a: lib.inverse(a[0]), x, codes="linalg_error_requires_at_least_2d")
    compare(lambda lib: lib.inverse(lib.ones(2, 2)), codes="linalg_error_singular")
    compare(lambda lib: lib.inverse(lib.ones(2, 2, dtype=lib.int64)), codes="method_dtype_not_supported_error")
    compare(lambda lib: lib.inverse(lib.ones(2, 2, dtype=lib.float16)), codes="method_dtype_not_supported_error")
    compare(lambda lib, a: lib.trace(a.unsqueeze(0)), x, codes="linalg_error_requires_2d")
    compare(lambda lib, a: lib.trace(a > 0), x, codes="method_dtype_not_supported_error", plain=(NotImplementedError,))
    compare(lambda lib, a: lib.trace(a.to(lib.int8)), x)
    compare(lambda lib, a: lib.tril(a[0]), x, codes="linalg_error_requires_at_least_2d")
    compare(lambda lib, a: lib.diag(a.unsqueeze(0)), x, codes="argument_error_invalid")
    compare(lambda lib, a: lib.diag_embed(a, 0, 0, 0), x, codes="argument_error_invalid")
    compare(lambda lib, a: lib.block_diag(a.unsqueeze(0)), x, codes="argument_error_invalid")
    compare(lambda lib: lib.block_diag())
    compare(lambda lib, a: lib.cdist(a, a.long()), x, codes=("method_dtype", "dtype_error"))
    compare(lambda lib, a: lib.cdist(a, a[:, :2]), x, codes="matmul_error")
    compare(lambda lib, a: lib.cdist(a, a, -1.0), x, codes="argument_error_invalid")
    compare(lambda lib, a: lib.tensordot(a, a, ([0], [0, 1])), x, codes="argument_error_invalid")
    compare(lambda lib, a: lib.tensordot(a, a, ([1], [0])), x, codes="matmul_error")
    compare(lambda lib, a: lib.tensordot(a, a[:1], ([0], [0])), x)
    compare(lambda lib, a: lib.tensordot(a, a.double(), 1), x, plain=(RuntimeError,), codes="dtype_error")
    compare(lambda lib, a: lib.chain_matmul(a), x)
    compare(lambda lib, a: lib.chain_matmul(a[0]), x, codes="linalg_error_requires_2d")
    compare(lambda lib, a: lib.addr(lib.tensor(True), a[0] > 0, a[1] > 0), x)
    compare(lambda lib, a: lib.addbmm(a, a.unsqueeze(0), a.unsqueeze(0)), x, codes="matmul_error")


def test_inplace_and_methods():
    x, tx = rand((3, 3), "float64", 5)
    compare(lambda lib, a: a.clone().tril_(1).triu_(-1), (x, tx))
    compare(lambda lib, a: a.clone().addr_(a[0], a[1], beta=0.5), (x, tx))
    compare(lambda lib, a: a.clone().addbmm_(a.unsqueeze(0), a.unsqueeze(0), alpha=2), (x, tx))
    compare(lambda lib, a: (a.diag(), a.diag_embed(), a.diagflat(), a.trace(), a.inverse(), a.kron(a)), (x, tx),
            tol=(1e-6, 1e-8))


def test_inverse_second_order_and_forward_mode():
    a = values((3, 3), "float64", 7) + 4 * np.eye(3)
    res = []
    for lib in (st, torch):
        x = lib.tensor(a, requires_grad=True)
        (g,) = lib.autograd.grad(lib.inverse(x).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), x)
        res.append(h.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-9)
    assert st.autograd.gradcheck(st.inverse, (st.tensor(a, requires_grad=True),))
    assert st.autograd.gradcheck(lambda p, q: st.cdist(p, q, 3.0),
                                 (st.tensor(values((2, 3), "float64", 1), requires_grad=True),
                                  st.tensor(values((4, 3), "float64", 2), requires_grad=True)))
