"""index_add/copy/fill/put/reduce, scatter_reduce, select/slice/diagonal_scatter, take_along_dim, argwhere,
unravel_index and masked_select_async against torch: OpInfo samples, hypothesis shapes, error verdicts,
float64 gradients, in-place variants."""

from __future__ import annotations

import asyncio

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


PLAIN = ["argwhere", "diagonal_scatter", "index_add", "index_copy", "index_fill", "index_put", "select_scatter",
         "slice_scatter", "take_along_dim", "unravel_index"]
VARIANTS = [("index_reduce", v) for v in ("prod", "mean", "amax", "amin")] + \
           [("scatter_reduce", v) for v in ("sum", "prod", "mean", "amax", "amin")]


@pytest.mark.parametrize("name", PLAIN)
def test_opinfo_samples(name):
    assert sample_values(name, _fn(name)) > 0


@pytest.mark.parametrize(("name", "variant"), VARIANTS)
def test_opinfo_reduce_samples(name, variant):
    assert sample_values(name, _fn(name), variant, dtypes=("float32", "float64", "int64")) > 0


@pytest.mark.parametrize("name", ["diagonal_scatter", "index_add", "index_copy", "index_fill", "index_put",
                                  "select_scatter", "slice_scatter", "take_along_dim"])
def test_opinfo_grads(name):
    assert grads(name, _fn(name)) > 0


@pytest.mark.parametrize(("name", "variant"), VARIANTS)
def test_opinfo_reduce_grads(name, variant):
    grads(name, _fn(name), variant, max_samples=6)


@pytest.mark.parametrize(("name", "variant"), with_error_inputs([(n, "") for n in PLAIN] + [("index_reduce", "prod"),
                                                                                              ("scatter_reduce", "sum")]))
def test_opinfo_error_inputs(name, variant):
    assert errors(name, _fn(name), variant) > 0


# -- hypothesis -------------------------------------------------------------------------------------------------


@fast(20)
@given(shape=shapes(0, 3), dim=hs.integers(-3, 2), data=hs.data(), seed=seeds)
def test_index_add_copy_fill(shape, dim, data, seed):
    n = max(len(shape), 1)
    size = shape[dim % n] if shape and -n <= dim < n else 1
    idx = np.array(data.draw(hs.lists(hs.integers(-1, size), max_size=3)), dtype=np.int64)
    if data.draw(hs.booleans()) and idx.size == 1:
        idx = idx.reshape(())
    sshape = list(shape) if shape else []
    if shape and -n <= dim < n:
        sshape[dim % n] = idx.size
    elif not shape:
        sshape = [idx.size] if idx.ndim else []
    x = (values(shape, "float64", seed), "float64")
    src = (values(tuple(sshape), "float64", seed + 1), "float64")
    ix = (idx, "int64")
    codes = ("at_error", "index_error", "setitem_error", "dimension_error", "dtype_error")
    compare(lambda lib, a, i, s: lib.index_add(a, dim, i, s, alpha=2), x, ix, src, codes=codes)
    compare(lambda lib, a, i, s: lib.index_copy(a, dim, i, s), x, ix, src, codes=codes)
    if 0 not in shape:  # torch's index_fill fails inside (setStorage) on empty tensors: no oracle there
        compare(lambda lib, a, i: lib.index_fill(a, dim, i, -1.5), x, ix, codes=codes)


@fast(20)
@given(shape=shapes(1, 3, min_side=1), data=hs.data(), seed=seeds,
       reduce=hs.sampled_from(["sum", "prod", "mean", "amax", "amin"]), include_self=hs.booleans(),
       dtype=hs.sampled_from(["float64", "int64"]))
def test_scatter_reduce(shape, data, seed, reduce, include_self, dtype):
    dim = data.draw(hs.integers(-len(shape), len(shape) - 1))
    ishape = tuple(data.draw(hs.integers(0, s)) for s in shape)
    size = shape[dim]
    rng = np.random.default_rng(seed)
    index = rng.integers(0, size, size=ishape).astype(np.int64)
    compare(lambda lib, a, i, s: lib.scatter_reduce(a, dim, i, s, reduce, include_self=include_self),
            (values(shape, dtype, seed), dtype), (index, "int64"), (values(shape, dtype, seed + 1), dtype))


@fast(20)
@given(shape=shapes(1, 3, min_side=1), data=hs.data(), seed=seeds,
       reduce=hs.sampled_from(["prod", "mean", "amax", "amin"]), include_self=hs.booleans())
def test_index_reduce(shape, data, seed, reduce, include_self):
    dim = data.draw(hs.integers(-len(shape), len(shape) - 1))
    idx = np.array(data.draw(hs.lists(hs.integers(0, shape[dim] - 1), max_size=4)), dtype=np.int64)
    sshape = list(shape)
    sshape[dim] = idx.size
    compare(lambda lib, a, i, s: lib.index_reduce(a, dim, i, s, reduce, include_self=include_self),
            (values(shape, "float32", seed), "float32"), (idx, "int64"),
            (values(tuple(sshape), "float32", seed + 1), "float32"))


@fast(20)
@given(shape=shapes(0, 3), data=hs.data(), seed=seeds)
def test_select_slice_scatter(shape, data, seed):
    dim = data.draw(hs.integers(-4, 3))
    index = data.draw(hs.integers(-4, 4))
    n = max(len(shape), 1)
    ok = -n <= dim < n and shape
    sel = tuple(s for i, s in enumerate(shape) if i != dim % n) if ok else ()
    start, end, step = data.draw(hs.none() | hs.integers(-4, 4)), data.draw(hs.none() | hs.integers(-4, 5)), \
        data.draw(hs.integers(1, 2))
    sl = tuple(len(range(*slice(start, end, step).indices(s))) if i == dim % n else s
               for i, s in enumerate(shape)) if ok else ()
    if data.draw(hs.integers(0, 4)) == 0:
        sl = sl + (1,)
    x = (values(shape, "float32", seed), "float32")
    codes = ("select_error", "dimension_error", "setitem_error", "slice_error")
    compare(lambda lib, a, s: lib.select_scatter(a, s, dim, index), x, (values(sel, "float32", 1), "float32"),
            codes=codes)
    compare(lambda lib, a, s: lib.slice_scatter(a, s, dim, start, end, step), x,
            (values(sl, "float32", 2), "float32"), codes=codes)


@fast(20)
@given(shape=shapes(2, 4), offset=hs.integers(-3, 3), d1=hs.integers(-3, 2), d2=hs.integers(-3, 2), seed=seeds)
def test_diagonal_scatter(shape, offset, d1, d2, seed):
    n = len(shape)
    if not (-n <= d1 < n and -n <= d2 < n) or d1 % n == d2 % n:
        src_shape: tuple[int, ...] = (1,)
    else:
        a, b = d1 % n, d2 % n
        length = max(0, min(shape[a], shape[b] - offset) if offset >= 0 else min(shape[a] + offset, shape[b]))
        src_shape = tuple(s for i, s in enumerate(shape) if i not in (a, b)) + (length,)
    compare(lambda lib, x, s: lib.diagonal_scatter(x, s, offset, d1, d2), (values(shape, "int64", seed), "int64"),
            (values(src_shape, "int64", seed + 1), "int64"), codes=("dimension_error", "dim_error", "setitem_error"))


@fast(20)
@given(shape=shapes(0, 3), data=hs.data(), seed=seeds)
def test_take_along_dim(shape, data, seed):
    dim = data.draw(hs.none() | hs.integers(-3, 2))
    ishape = data.draw(shapes(0, 3))
    size = shape[dim % len(shape)] if dim is not None and shape and -len(shape) <= dim < len(shape) else \
        max(int(np.prod(shape)), 1)
    index = np.random.default_rng(seed).integers(-max(size, 1), max(size, 1), size=ishape).astype(np.int64)
    compare(lambda lib, a, i: lib.take_along_dim(a, i, dim), (values(shape, "float32", seed), "float32"),
            (index, "int64"), codes=("index_error", "broadcast_error", "dimension_error", "at_error"))


@fast(20)
@given(ishape=shapes(0, 2), shape=hs.integers(0, 5) | hs.lists(hs.integers(-1, 4), max_size=3), seed=seeds)
def test_unravel_index(ishape, shape, seed):
    index = np.random.default_rng(seed).integers(-20, 20, size=ishape).astype(np.int64)
    if shape == 0 or (isinstance(shape, list) and 0 in shape):
        return  # torch divides by zero here (a ZeroDivisionError or garbage), no oracle
    compare(lambda lib, i: lib.unravel_index(i, shape), (index, "int64"), codes="argument_error")


# -- specific behaviours --------------------------------------------------------------------------------------------


def test_errors_like_torch():
    x = (values((3, 4), "float32", 0), "float32")
    i01 = (np.array([0, 1]), "int64")
    compare(lambda lib, a, i: lib.index_add(a, 0, i, lib.ones(2, 4, dtype=lib.float64)), x, i01,
            codes="dtype_error_mismatch")
    compare(lambda lib, a: lib.index_add(a, 0, lib.tensor([0, 5]), lib.ones(2, 4)), x, codes="at_error")
    compare(lambda lib, a: lib.index_add(a, 0, lib.tensor([0, -1]), lib.ones(2, 4)), x, codes="at_error")
    compare(lambda lib, a: lib.index_add(a, 0, lib.tensor([0, 1], dtype=lib.int32), lib.ones(2, 4)), x)
    compare(lambda lib, a: lib.index_copy(a, 0, lib.tensor([0, 1], dtype=lib.int32), lib.ones(2, 4)), x,
            codes="dtype_error_mismatch")
    compare(lambda lib, a: lib.index_copy(a, 0, lib.tensor([0]), lib.ones(2, 4)), x, codes="setitem_error")
    compare(lambda lib, a: lib.index_fill(a, 0, lib.tensor([0, -1]), 2.0), x)
    compare(lambda lib, a: lib.index_fill(a, 1, lib.tensor([3]), lib.tensor(2.0, dtype=lib.float64)), x)
    compare(lambda lib, a: lib.index_fill(a, 0, lib.tensor([0]), lib.tensor([2.0])), x, codes="argument_error")
    compare(lambda lib, a: lib.index_reduce(a, 0, lib.tensor([0, -1]), lib.ones(2, 4), "prod"), x, codes="at_error")
    compare(lambda lib, a: lib.index_reduce(a, 0, lib.tensor([0]), lib.ones(1, 4), "sum"), x, codes="argument_error")
    compare(lambda lib, a: lib.scatter_reduce(a, 0, lib.tensor([[0, 1]]), a.double(), "sum"), x,
            codes="dtype_error_mismatch")
    compare(lambda lib, a: lib.scatter_reduce(a, 0, lib.tensor([[0, 1]]), -a, "max"), x)
    compare(lambda lib, a: lib.scatter_reduce(a, 0, lib.tensor([[0, 1]]), -a, "min"), x)
    compare(lambda lib, a: lib.scatter_reduce(a, 0, lib.tensor([[0, 1]]), a, "foo"), x, codes="argument_error")
    compare(lambda lib, a: lib.scatter_reduce(a, 0, lib.tensor([[0, 5]]), a, "sum"), x, codes="at_error")
    compare(lambda lib, a: lib.select_scatter(a, lib.zeros(4, dtype=lib.float64), 0, 0), x)
    compare(lambda lib, a: lib.select_scatter(a, lib.zeros(1, 4), 0, 0), x, codes="setitem_error")
    compare(lambda lib, a: lib.slice_scatter(a, lib.zeros(3, 2), 1, 0, 10, 2), x)
    compare(lambda lib, a: lib.diagonal_scatter(a, lib.zeros(3, dtype=lib.int64)), x)
    compare(lambda lib, a: lib.index_put(a, (lib.tensor([0, 1]),), lib.ones(4, dtype=lib.float64)), x,
            codes="dtype_error_mismatch")
    compare(lambda lib, a: lib.index_put(a, (lib.tensor([0, 0]),), lib.tensor(1.0), accumulate=True), x)
    compare(lambda lib, a: lib.index_put(a, (None, lib.tensor([3, 3, 0])), lib.ones(3, 1), accumulate=True), x,
            codes="index_error_invalid_index")
    compare(lambda lib, a: lib.index_put(a, (lib.tensor([0, 2, 0]), lib.tensor([3, 3, 3])), lib.ones(3),
                                         accumulate=True), x)
    compare(lambda lib, a: lib.take_along_dim(a, lib.tensor([0, 1]), 1), x, codes="index_error_rank_mismatch")
    compare(lambda lib, a: lib.take_along_dim(a, lib.tensor([[0, 1]], dtype=lib.int32), 1), x,
            codes="dtype_error_mismatch")
    compare(lambda lib, a: lib.take_along_dim(a, lib.tensor([[0, -1]]), 1), x)
    compare(lambda lib: lib.unravel_index(lib.tensor([5.0]), (3, 4)), codes="argument_error_refused")
    compare(lambda lib: lib.unravel_index(lib.tensor([5]), (3, -4)), codes="argument_error_invalid_value")
    compare(lambda lib: lib.unravel_index(lib.tensor([[5, -1], [12, 3]]), (3, 4)))
    compare(lambda lib: lib.argwhere(lib.tensor([[0, 1], [2, 0]])))
    compare(lambda lib: lib.argwhere(lib.tensor(3.0)))


def test_inplace_methods_and_grad_rules():
    x, tx = rand((3, 4), "float32", 2)

    def fn(lib, a):
        b = a.clone()
        b.index_add_(0, lib.tensor([0, 0]), lib.ones(2, 4), alpha=3)
        b.index_copy_(1, lib.tensor([1]), lib.zeros(3, 1))
        b.index_fill_(1, lib.tensor([2]), 7.0)
        b.index_put_((lib.tensor([1]), lib.tensor([3])), lib.tensor(5.0))
        b.index_reduce_(0, lib.tensor([2, 2]), lib.full((2, 4), 2.0), "prod")
        b.scatter_reduce_(1, lib.tensor([[0, 0], [1, 1], [3, 3]]), lib.ones(3, 2), "amax", include_self=False)
        return b

    compare(fn, (x, tx))
    leaf = st.ones(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError):
        leaf.index_fill_(0, st.tensor([0]), 1.0)


def test_scatter_reduce_prod_grad_with_zeros():
    a = np.array([[1.0, 0.0, 2.0], [3.0, 4.0, 0.0]])
    s = np.array([[0.0, 2.0, 0.0], [5.0, 0.0, 0.0]])
    index = np.array([[0, 1, 2], [0, 1, 2]])
    res = []
    for lib in (st, torch):
        x = lib.tensor(a, requires_grad=True)
        src = lib.tensor(s, requires_grad=True)
        out = lib.scatter_reduce(x, 1, lib.tensor(index), src, "prod")
        (out * lib.tensor(np.arange(6.0).reshape(2, 3))).sum().backward()
        res.append((x.grad.numpy(), src.grad.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0])
    np.testing.assert_allclose(res[0][1], res[1][1])


def test_masked_select_async():
    x = st.tensor([[1.0, -2.0], [3.0, -4.0]])
    out = asyncio.run(st.masked_select_async(x, x > 0))
    assert out.tolist() == [1.0, 3.0]
