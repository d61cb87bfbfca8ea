"""Views against torch: reshape/view, permute and transposes, squeeze/unsqueeze, flatten/unflatten,
expand/broadcast_to; views share storage and write through to their base."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
from _oracle import compare, fast, rand, seeds, shapes, values

RESHAPE_CODES = ("reshape_error", "view_error")
DIM = ("dimension_error_out_of_range", "dim_error_repeated", "transpose_dims_error_out_of_range")


def x_of(shape, seed=0):
    return (values(shape, "float32", seed), "float32")


@hs.composite
def new_sizes(draw, shape):
    """A target shape: a factorisation of numel (maybe with one -1), or a wrong one."""
    n = math.prod(shape)
    sizes = []
    rest = n
    for _ in range(draw(hs.integers(0, 3))):
        divs = [d for d in range(1, 5) if rest % d == 0] if rest else [0, 1, 2]
        d = draw(hs.sampled_from(divs))
        sizes.append(d)
        rest = rest // d if d else 0
    sizes.append(rest)
    sizes = draw(hs.permutations(sizes))
    mode = draw(hs.sampled_from(["exact", "exact", "infer", "wrong", "two_infer", "neg"]))
    if mode == "infer":
        sizes[draw(hs.integers(0, len(sizes) - 1))] = -1
    elif mode == "wrong":
        sizes[-1] += 1
    elif mode == "two_infer" and len(sizes) > 1:
        sizes[0] = sizes[1] = -1
    elif mode == "neg":
        sizes[0] = -2
    return tuple(sizes)


@fast(60)
@given(data=hs.data(), shape=shapes(0, 4), seed=seeds)
def test_reshape_and_view(data, shape, seed):
    sizes = data.draw(new_sizes(shape))
    compare(lambda lib, x: x.reshape(sizes), x_of(shape, seed), codes=RESHAPE_CODES)
    compare(lambda lib, x: x.view(*sizes), x_of(shape, seed), codes=RESHAPE_CODES)
    compare(lambda lib, x: lib.reshape(x, sizes), x_of(shape, seed), codes=RESHAPE_CODES)


def test_view_of_non_contiguous():
    x, tx = rand((2, 3, 4), "float32")
    compare(lambda lib, a: a.transpose(0, 1).view(6, 4), (x, tx), codes="view_error_incompatible_strides")
    compare(lambda lib, a: a.transpose(1, 2).view(2, 12), (x, tx), codes="view_error_incompatible_strides")
    compare(lambda lib, a: a.transpose(0, 1).view(3, 2, 4), (x, tx))
    compare(lambda lib, a: a.transpose(0, 1).reshape(6, 4), (x, tx))


@fast(50)
@given(shape=shapes(0, 4), data=hs.data(), seed=seeds)
def test_permute_transpose_movedim(shape, data, seed):
    r = len(shape)
    n = max(r, 1)
    perm = data.draw(hs.permutations(range(r)) | hs.lists(hs.integers(-n - 1, n), max_size=r + 1))
    compare(lambda lib, x: x.permute(tuple(perm)), x_of(shape, seed), codes=("permute_error",) + DIM)
    d0, d1 = data.draw(hs.integers(-n - 1, n)), data.draw(hs.integers(-n - 1, n))
    compare(lambda lib, x: x.transpose(d0, d1), x_of(shape, seed), codes=DIM)
    compare(lambda lib, x: lib.swapaxes(x, d0, d1), x_of(shape, seed), codes=DIM)
    src = data.draw(hs.lists(hs.integers(-n - 1, n), max_size=2))
    dst = data.draw(hs.lists(hs.integers(-n - 1, n), min_size=len(src), max_size=len(src)))
    compare(lambda lib, x: lib.movedim(x, src, dst), x_of(shape, seed), codes=("permute_error",) + DIM)
    if src:
        compare(lambda lib, x: x.movedim(src[0], dst[0]), x_of(shape, seed), codes=DIM)
    compare(lambda lib, x: x.t(), x_of(shape, seed), codes="transpose_error_requires_2d_tensor")
    compare(lambda lib, x: x.mT, x_of(shape, seed), codes="transpose_error_requires_2d_tensor")
    compare(lambda lib, x: x.T if x.dim() in (0, 2) else x.permute(*range(x.dim() - 1, -1, -1)), x_of(shape, seed))


@fast(50)
@given(shape=shapes(0, 4), data=hs.data(), seed=seeds)
def test_squeeze_unsqueeze_flatten(shape, data, seed):
    n = max(len(shape), 1)
    d = data.draw(hs.integers(-n - 1, n))
    compare(lambda lib, x: x.squeeze(), x_of(shape, seed))
    compare(lambda lib, x: x.squeeze(d), x_of(shape, seed), codes=DIM)
    ds = data.draw(hs.lists(hs.integers(-n - 1, n), max_size=3))
    compare(lambda lib, x: x.squeeze(tuple(ds)), x_of(shape, seed), codes=DIM)
    u = data.draw(hs.integers(-n - 2, n + 1))
    compare(lambda lib, x: x.unsqueeze(u), x_of(shape, seed), codes=DIM)
    s, e = data.draw(hs.integers(-n - 1, n)), data.draw(hs.integers(-n - 1, n))
    compare(lambda lib, x: x.flatten(), x_of(shape, seed))
    compare(lambda lib, x: x.flatten(s, e), x_of(shape, seed), codes=DIM + ("flatten_error",))


@fast(40)
@given(shape=shapes(1, 4), data=hs.data(), seed=seeds)
def test_unflatten(shape, data, seed):
    n = len(shape)
    d = data.draw(hs.integers(-n - 1, n))
    size = shape[d] if -n <= d < n else 4
    sizes = data.draw(new_sizes((size,)))
    compare(lambda lib, x: x.unflatten(d, sizes), x_of(shape, seed), codes=DIM + ("unflatten_error",))


@fast(50)
@given(shape=shapes(0, 3), data=hs.data(), seed=seeds)
def test_expand_and_broadcast_to(shape, data, seed):
    lead = data.draw(hs.lists(hs.integers(0, 3), max_size=2))  # torch accepts a leading -1 for 0-d (a torch bug)
    tail = [data.draw(hs.sampled_from([s, -1, 1, 3, 0] if s == 1 else [s, -1, s + 1, -2])) for s in shape]
    if data.draw(hs.booleans()) and tail:
        tail = tail[1:]  # fewer sizes than dims: an error
    sizes = tuple(lead + tail)
    compare(lambda lib, x: x.expand(sizes), x_of(shape, seed), codes="expand_error")
    compare(lambda lib, x: lib.broadcast_to(x, sizes), x_of(shape, seed), codes="expand_error")
    y = values(tuple(max(s, 1) for s in sizes), "float32")
    compare(lambda lib, x, other: x.expand_as(other), x_of(shape, seed), (y, "float32"), codes="expand_error")


VIEWS = {
    "reshape": lambda x: x.reshape(3, 4), "view": lambda x: x.view(-1), "permute": lambda x: x.permute(1, 0),
    "transpose": lambda x: x.transpose(0, 1), "t": lambda x: x.t(), "mT": lambda x: x.mT,
    "unsqueeze": lambda x: x.unsqueeze(0), "squeeze": lambda x: x.unsqueeze(1).squeeze(1),
    "flatten": lambda x: x.flatten(), "unflatten": lambda x: x.unflatten(1, (2, 2)),
    "expand": lambda x: x[:1].expand(5, 4), "narrow": lambda x: x.narrow(1, 1, 2), "select": lambda x: x.select(0, 1),
    "slice": lambda x: x[1:, ::2], "split": lambda x: x.split(1)[1], "chunk": lambda x: x.chunk(2, 1)[1],
    "unbind": lambda x: x.unbind(1)[2], "detach": lambda x: x.detach(), "movedim": lambda x: x.movedim(0, 1),
    "diagonal": lambda x: x.diagonal(), "ellipsis": lambda x: x[..., None, 1],
}


def test_views_write_through_to_base():
    import torch

    for name, f in VIEWS.items():
        ours = st.arange(12.0).reshape(3, 4)
        theirs = torch.arange(12.0).reshape(3, 4)
        vo, vt = f(ours), f(theirs)
        if name == "expand":  # torch forbids writing to an expanded view; write through the base instead
            ours[0, 1] = -1.0
            theirs[0, 1] = -1.0
        else:
            vo.mul_(10)
            vt.mul_(10)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=name)
        np.testing.assert_array_equal(vo.numpy(), vt.numpy(), err_msg=name)
        vo2 = f(ours)
        ours.add_(1)
        theirs.add_(1)
        np.testing.assert_array_equal(vo2.numpy(), f(theirs).numpy(), err_msg=name + " (base write)")


def test_reshape_copies_when_it_must():
    x = st.arange(6.0).reshape(2, 3)
    y = x.t().reshape(6)  # not expressible as a view: a copy
    y[0] = 100.0
    assert x[0, 0].item() == 0.0


# torch's parser takes a bool as an int in a list of ints (sizes or dims) except as the first element, by which it
# tells a list from a number: ``reshape(-1, True)`` is (6, 1), ``zeros((True, 2))`` and ``reshape(True, -1)`` are
# TypeErrors. It takes the list by keyword too (``zeros(size=(2, 3))``, ``x.view(size=(6,))``), but not a number
_INT_LISTS = {
    "zeros size=": lambda lib, x: lib.zeros(size=(2, True)),
    "rand size=": lambda lib, x: lib.rand(size=[2]),
    "reshape shape=": lambda lib, x: x.reshape(shape=(6,)),
    "function reshape shape=": lambda lib, x: lib.reshape(x, shape=(3, 2)),
    "view size=": lambda lib, x: x.view(size=(6, True)),
    "view shape=": lambda lib, x: x.view(shape=(6,)),
    "expand size=": lambda lib, x: x[:1].expand(size=(4, 3)),
    "permute dims=": lambda lib, x: x.permute(dims=(1, 0)),
    "repeat repeats=": lambda lib, x: x.repeat(repeats=(2, 1)),
    "new_zeros size=": lambda lib, x: x.new_zeros(size=(2,)),
    "new_full size= fill_value=": lambda lib, x: x.new_full(size=(2,), fill_value=3.0),
    "new_full no fill_value": lambda lib, x: x.new_full((2,)),
    "zeros size= number": lambda lib, x: lib.zeros(size=2),
    "reshape shape= number": lambda lib, x: x.reshape(shape=6),
    "zeros size= twice": lambda lib, x: lib.zeros(2, size=(2,)),
    "reshape tuple": lambda lib, x: x.reshape((-1, 1, True)), "reshape": lambda lib, x: x.reshape(-1, True),
    "reshape first": lambda lib, x: x.reshape(True, -1), "reshape first tuple": lambda lib, x: x.reshape((True, 6)),
    "reshape one": lambda lib, x: x.reshape(True), "view": lambda lib, x: x.view(2, 3, True),
    "view list": lambda lib, x: x.view([6, True]), "view zero": lambda lib, x: lib.ones(0).view(0, False),
    "expand": lambda lib, x: x[:1].expand(3, True, 3), "expand first": lambda lib, x: x.expand(True, 2, 3),
    "expand tuple first": lambda lib, x: x.expand((True, 2, 3)), "broadcast_to": lambda lib, x: x[:1].broadcast_to((2, True, 3)),
    "new_zeros": lambda lib, x: x.new_zeros(2, True), "new_zeros tuple": lambda lib, x: x.new_zeros((2, True)),
    "new_ones first": lambda lib, x: x.new_ones((True,)), "new_empty one": lambda lib, x: x.new_empty(True),
    "new_full": lambda lib, x: x.new_full((2, True), 1.0), "zeros": lambda lib, x: lib.zeros(2, True),
    "zeros tuple": lambda lib, x: lib.zeros((2, True, False)), "zeros one": lambda lib, x: lib.zeros(True),
    "zeros first": lambda lib, x: lib.zeros((True,)), "ones first": lambda lib, x: lib.ones(True, 2),
    "full": lambda lib, x: lib.full((2, True), 1.0), "rand": lambda lib, x: lib.rand(2, True),
    "randint": lambda lib, x: lib.randint(0, 5, (2, True)), "randint first": lambda lib, x: lib.randint(0, 5, (True, 2)),
    "empty_strided": lambda lib, x: lib.empty_strided((2, True), (1, True)),
    "as_strided": lambda lib, x: x.as_strided((2, True), (1, True)), "repeat": lambda lib, x: x.repeat(2, True),
    "repeat first": lambda lib, x: x.repeat(True, 2), "tile": lambda lib, x: x.tile((2, True)),
    "tile first": lambda lib, x: x.tile((True, 2)), "permute": lambda lib, x: x.permute(0, True),
    "flip": lambda lib, x: x.flip((0, True)), "roll": lambda lib, x: x.roll((1, True), (0, 1)),
    "unflatten": lambda lib, x: x.unflatten(1, (3, True)), "unflatten first": lambda lib, x: x.unflatten(1, (True, 3)),
    "resize_": lambda lib, x: x.clone().resize_(6, True), "sum dims": lambda lib, x: x.sum((0, True)),
    "sum dims first": lambda lib, x: x.sum((True,)), "sum dim": lambda lib, x: x.sum(True),
    "amax dims": lambda lib, x: x.amax((0, True)), "std dims": lambda lib, x: x.std(dim=(0, True)),
    "squeeze dims": lambda lib, x: lib.ones(1, 1).squeeze((0, True)),
    "movedim": lambda lib, x: x.movedim((0, True), (1, 0)), "flatten": lambda lib, x: x.flatten(0, True),
    "unsqueeze": lambda lib, x: x.unsqueeze(True), "narrow": lambda lib, x: x.narrow(0, 0, True),
}


@pytest.mark.parametrize("case", list(_INT_LISTS))
def test_lists_of_ints_as_torch(case):
    verdicts = []
    for lib in (torch, st):
        try:
            verdicts.append(tuple(_INT_LISTS[case](lib, lib.ones(2, 3)).shape))
        except TypeError:
            verdicts.append("TypeError")
    assert verdicts[1] == verdicts[0]
