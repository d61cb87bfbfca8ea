"""Joining and splitting against torch: cat/stack, split/chunk/tensor_split, narrow/select/unbind."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
from _oracle import compare, fast, seeds, shapes, values

DIM = ("dimension_error_out_of_range", "dim_error_repeated", "transpose_dims_error_out_of_range")


def x_of(shape, seed=0):
    return (values(shape, "float32", seed), "float32")


@hs.composite
def cat_inputs(draw):
    base = draw(shapes(0, 3))
    out = [base]
    d = draw(hs.integers(-len(base) - 1, len(base))) if base else draw(hs.integers(-1, 1))
    for _ in range(draw(hs.integers(0, 3))):
        s = list(base)
        if s and -len(s) <= d < len(s):
            s[d] = draw(hs.integers(0, 3))
        if draw(hs.integers(0, 4)) == 0 and s:
            s[draw(hs.integers(0, len(s) - 1))] += 1  # a mismatch
        if draw(hs.integers(0, 6)) == 0:
            s = [0]  # torch's legacy empty 1-D tensor
        out.append(tuple(s))
    return out, d


@fast(60)
@given(inp=cat_inputs(), dtypes=hs.lists(hs.sampled_from(["int64", "float32", "bool", "float64"]), min_size=4,
                                          max_size=4), seed=seeds)
def test_cat(inp, dtypes, seed):
    shape_list, d = inp
    if all(s == (0,) for s in shape_list) and d not in (0, -1):
        return  # torch accepts any dim when every tensor is a legacy (0,); shapetorch checks the dim (differs)
    args = [(values(s, dtypes[i], seed + i), dtypes[i]) for i, s in enumerate(shape_list)]
    compare(lambda lib, *ts: lib.cat(ts, d), *args, codes=("cat_error", "dimension_error"))


@fast(40)
@given(inp=cat_inputs(), seed=seeds)
def test_stack(inp, seed):
    shape_list, d = inp
    args = [x_of(s, seed + i) for i, s in enumerate(shape_list)]
    compare(lambda lib, *ts: lib.stack(ts, d), *args, codes=("stack_error", "cat_error", "dimension_error"))


def _legacy_empty_grads(lib, dim, where):
    """``cat`` with a legacy empty (0,) input that requires grad, joined to a tensor of more dims: the empty input
    is in the graph (the result requires grad) and its gradient is an empty tensor."""
    e = lib.empty(0, requires_grad=True)
    x = lib.ones(2, 3)
    r = lib.cat([e, x] if where == 0 else [x, e, e], dim)
    out = [r.requires_grad, None if r.grad_fn is None else r.grad_fn.name()]
    (g,) = lib.autograd.grad(r.sum(), e, create_graph=True)
    out.append((tuple(g.shape), g.requires_grad))
    r = lib.cat([e, x.requires_grad_()], dim)
    (r * r).sum().backward()
    return [*out, tuple(e.grad.shape), x.grad.tolist()]


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("where", [0, 1])
def test_cat_legacy_empty_input_gradient(dim, where):
    assert _legacy_empty_grads(st, dim, where) == _legacy_empty_grads(torch, dim, where)


def test_cat_stack_empty_list():
    compare(lambda lib: lib.cat([]), codes="cat_error_empty")
    compare(lambda lib: lib.stack([]), codes="cat_error_empty")


@fast(50)
@given(shape=shapes(0, 3), data=hs.data(), seed=seeds)
def test_split_chunk_tensor_split(shape, data, seed):
    n = max(len(shape), 1)
    d = data.draw(hs.integers(-n - 1, n))
    size = shape[d] if shape and -n <= d < n else 1
    codes = ("split_error", "chunk_error", "dimension_error")
    k = data.draw(hs.integers(-1, 4))
    compare(lambda lib, x: x.split(k, d), x_of(shape, seed), codes=codes)
    sections = data.draw(hs.lists(hs.integers(-1, 3), max_size=3))
    if data.draw(hs.booleans()) and sections:
        sections[-1] = size - sum(sections[:-1])
    compare(lambda lib, x: x.split(sections, d), x_of(shape, seed), codes=codes)
    compare(lambda lib, x: x.chunk(k, d), x_of(shape, seed), codes=codes)
    compare(lambda lib, x: x.tensor_split(k, d), x_of(shape, seed), codes=codes)
    idx = data.draw(hs.lists(hs.integers(-4, 5), max_size=3))
    compare(lambda lib, x: x.tensor_split(idx, d), x_of(shape, seed), codes=codes)


@fast(50)
@given(shape=shapes(0, 3), data=hs.data(), seed=seeds)
def test_narrow_select_unbind(shape, data, seed):
    n = max(len(shape), 1)
    d = data.draw(hs.integers(-n - 1, n))
    size = shape[d] if shape and -n <= d < n else 2
    start = data.draw(hs.integers(-size - 1, size + 1))
    length = data.draw(hs.integers(-1, size + 1))
    codes = ("narrow_error", "select_error", "dimension_error", "unbind_error")
    compare(lambda lib, x: x.narrow(d, start, length), x_of(shape, seed), codes=codes)
    i = data.draw(hs.integers(-size - 1, size))
    compare(lambda lib, x: x.select(d, i), x_of(shape, seed), codes=codes)
    compare(lambda lib, x: x.unbind(d), x_of(shape, seed), codes=codes)


@pytest.mark.parametrize(("name", "shape", "need"), [("hsplit", (), "1 dimension,"), ("vsplit", (3,), "2 dimensions,"),
                                                     ("dsplit", (2, 2), "3 dimensions,")])
def test_directional_split_rank_message(name, shape, need):
    """torch refuses a tensor of too few dims with a RuntimeError; the message counts the dims it needs
    (in correct English, where torch's says "at least 3 dimension")."""
    import torch

    import shapetorch as st

    with pytest.raises(RuntimeError, match="requires a tensor with at least"):
        getattr(torch, name)(torch.zeros(shape), 1)
    with pytest.raises(RuntimeError) as info:
        getattr(st, name)(st.zeros(shape), 1)
    assert f"requires a tensor with at least {need} but got a tensor with {len(shape)} dimensions" in str(info.value)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 2)])
def test_directional_stacks_and_splits(shape):
    """hstack/vstack/dstack/column_stack of two tensors of each rank, and hsplit/vsplit/dsplit at an index where the
    rank allows, against torch (each picks its dim from the rank: a wrong dim gives other shapes)."""
    for name in ("hstack", "vstack", "dstack", "column_stack"):
        compare(lambda lib, x, y, name=name: getattr(lib, name)([x, y]), x_of(shape, 0), x_of(shape, 1))
    for name, rank in (("hsplit", 1), ("vsplit", 2), ("dsplit", 3)):
        if len(shape) >= rank:
            compare(lambda lib, x, name=name: getattr(lib, name)(x, [1]), x_of(shape, 2))


@pytest.mark.parametrize("other", [(4,), (0,)])
def test_cat_gradient_of_empty_pieces(other):
    """Empty 1-D pieces beside 1-D tensors are ordinary pieces of the cat: each gets an empty gradient, as torch's."""
    import numpy as np
    import torch

    import shapetorch as st

    grads = {}
    for lib in (st, torch):
        x = lib.tensor(np.arange(np.prod(other), dtype=np.float32).reshape(other), requires_grad=True)
        e = lib.zeros(0, requires_grad=True)
        out = lib.cat([e, x, e], 0)
        (out * lib.arange(out.numel(), dtype=lib.float32).reshape(out.shape)).sum().backward()
        grads[lib.__name__] = [None if t.grad is None else t.grad.detach().numpy().copy() for t in (x, e)]
    for ours, theirs in zip(grads["shapetorch"], grads["torch"], strict=True):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            assert ours.shape == theirs.shape and (ours == theirs).all()
