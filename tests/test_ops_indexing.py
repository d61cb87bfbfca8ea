"""Indexing against torch: get and set with ints, slices, None, Ellipsis, bool and integer tensors and lists
(ints act like select, as torch); gather, index_select, scatter/scatter_add."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
from _oracle import compare, fast, index_tuples, rand, realize_index, seeds, shapes, values

INDEX_CODES = ("index_error", "at_error", "slice_error", "setitem_error")


@fast(60)
@given(shape=shapes(0, 4), data=hs.data(), seed=seeds)
def test_getitem(shape, data, seed):
    index = data.draw(index_tuples(shape))
    compare(lambda lib, x: x[realize_index(index, lib)], (values(shape, "float32", seed), "float32"),
            codes=INDEX_CODES)


@fast(50)
@given(shape=shapes(0, 3), data=hs.data(), seed=seeds, scalar=hs.booleans())
def test_setitem(shape, data, seed, scalar):
    index = data.draw(index_tuples(shape, tensors=data.draw(hs.booleans())))
    vshape = data.draw(shapes(0, 2))

    def fn(lib, x, v):
        x[realize_index(index, lib)] = 2.5 if scalar else v
        return x

    # same dtype: torch's index_put with tensor indices refuses a value of another dtype; shapetorch casts
    compare(fn, (values(shape, "float64", seed), "float64"), (values(vshape, "float64", seed), "float64"),
            codes=INDEX_CODES)


def test_ints_act_like_select():
    x, tx = rand((3, 4, 5), "int64", 1)
    compare(lambda lib, a: a[0, :, [1, 2]], (x, tx))
    compare(lambda lib, a: a[0, :, lib.tensor([[1], [2]])], (x, tx))
    compare(lambda lib, a: a[[0, 1], :, [1, 2]], (x, tx))
    compare(lambda lib, a: a[:, [0, 1], [1, 2]], (x, tx))
    compare(lambda lib, a: a[[0], 1:, None, [2]], (x, tx))
    compare(lambda lib, a: a[lib.tensor(1)], (x, tx))
    compare(lambda lib, a: a[a > 2], (x, tx))
    compare(lambda lib, a: a[True], (x, tx))
    compare(lambda lib, a: a[False], (x, tx))
    compare(lambda lib, a: a[0, 0, 0, 0], (x, tx), codes="index_error_too_many_indices")
    compare(lambda lib, a: a[::-1], (x, tx), codes="slice_error", plain=(ValueError,))
    compare(lambda lib, a: a[lib.tensor([0.5])], (x, tx), codes="index_error_invalid_index")
    compare(lambda lib, a: a[[5]], (x, tx), codes="at_error_index_out_of_bounds")
    compare(lambda lib, a: a[[0, 1], :, [1, 2, 3]], (x, tx), codes="index_error_broadcast")


def test_setitem_forms():
    def put(index, value):
        def fn(lib, a):
            v = lib.tensor(value) if isinstance(value, list) else value
            a[index] = v
            return a
        return fn

    x = (values((3, 4), "float32", 1), "float32")
    compare(put((0,), [1.0, 2.0, 3.0, 4.0]), x)
    compare(put((slice(None), 1), [1.0, 2.0, 3.0]), x)
    compare(put((Ellipsis, None), 7), x)
    compare(put(([0, 2],), [[1.0] * 4]), x)
    compare(put((0,), [1.0, 2.0]), x, codes="setitem_error")
    compare(put((slice(None), 0), [[[1.0, 2.0, 3.0]]]), x)  # leading 1s of the value are dropped
    i = (values((3, 4), "int32", 1), "int32")
    compare(put((0, 0), 2.7), i)


@fast(50)
@given(shape=shapes(0, 3), data=hs.data(), seed=seeds)
def test_gather_scatter(shape, data, seed):
    n = max(len(shape), 1)
    d = data.draw(hs.integers(-n - 1, n))
    ishape = tuple(data.draw(hs.integers(0, s + 1 if s else 2)) for s in shape)
    if data.draw(hs.integers(0, 5)) == 0:
        ishape = ishape + (1,)  # wrong rank
    size = shape[d] if shape and -n <= d < n else 1
    idx = np.random.default_rng(seed).integers(0, max(size, 1), size=ishape).astype(np.int64)
    if idx.size == 0:  # torch skips its shape checks for an empty index; shapetorch checks them (differs)
        return
    codes = ("gather_error", "scatter_error", "index_error", "at_error", "dimension_error")
    x = (values(shape, "float64", seed), "float64")
    compare(lambda lib, a, i: a.gather(d, i), x, (idx, "int64"), codes=codes)
    src = (values(tuple(s + 1 for s in ishape), "float64", seed), "float64")
    compare(lambda lib, a, i, s: a.scatter_add(d, i, s), x, (idx, "int64"), src, codes=codes)
    uniq = idx if idx.size <= 1 else np.zeros_like(idx)  # scatter with duplicates is nondeterministic
    compare(lambda lib, a, i, s: a.scatter(d, i, s) if i.numel() <= 1 else a, x, (uniq, "int64"), src, codes=codes)
    compare(lambda lib, a, i: a.scatter(d, i, 1.5) if i.numel() else a, x, (idx, "int64"), codes=codes)


@fast(40)
@given(shape=shapes(0, 3), data=hs.data(), seed=seeds)
def test_index_select(shape, data, seed):
    n = max(len(shape), 1)
    d = data.draw(hs.integers(-n - 1, n))
    size = shape[d] if shape and -n <= d < n else 1
    k = data.draw(hs.integers(0, 3)) if shape else 1  # torch: a 0-d input takes exactly one index (differs)
    idx = np.random.default_rng(seed).integers(0, size + 1, size=(k,)).astype(np.int64)
    compare(lambda lib, a, i: a.index_select(d, i), (values(shape, "float32", seed), "float32"), (idx, "int64"),
            codes=("index_select_error", "index_error", "at_error", "dimension_error"))


def test_gather_index_dtype():
    x, tx = rand((3, 4), "float32", 1)
    compare(lambda lib, a: a.gather(1, lib.tensor([[0], [1], [2]], dtype=lib.int16)), (x, tx), codes="dtype_error")
    compare(lambda lib, a: a.index_select(0, lib.tensor([0.0])), (x, tx), codes="index_error")


def test_inplace_scatter_and_setitem_share_storage():
    x = st.zeros(3, 4)
    row = x[1]
    x.scatter_(1, st.tensor([[0], [1], [2]]), 5.0)
    row[2] = 9.0
    t = torch.zeros(3, 4)
    trow = t[1]
    t.scatter_(1, torch.tensor([[0], [1], [2]]), 5.0)
    trow[2] = 9.0
    np.testing.assert_array_equal(x.numpy(), t.numpy())


VIEW_KEYS = ["0", "1:", "0, 1:", "1:, 0", ":, 0", ":", "...", "None", "0, None", "None, 0", ":, :, 1:", "0, ..., None",
             "..., 0", "1:, None", ":2, ::2", "::2", ":, :4", ":, 0:9", "0, 0, 0", "-1", ":, None, :", "None, None",
             "True", "[0, 2]", "lib.tensor(0)", "np.int64(1)", "1:lib.tensor(2)", "(0,)"]


def test_grad_fn_names_of_indexing_as_torch():
    """A basic index's node is named for torch's last view op (Select for an int, Slice for a slice, Unsqueeze for
    None); a slice over a whole dim inside a tuple is no op, and an index of no op an alias. Users see the name
    in every printed tensor that requires grad. It was SliceBackward0 for all."""
    def names(lib):
        w = lib.ones(3, 4, 5, requires_grad=True)
        return [eval(f"w[{k}]", {"w": w, "lib": lib, "np": np}).grad_fn.name() for k in VIEW_KEYS]

    assert names(st) == names(torch)
