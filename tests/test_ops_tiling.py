"""Shape ops against torch: flip/fliplr/flipud/roll/rot90, tile and Tensor.repeat, atleast_*, meshgrid, dsplit,
narrow_copy, repeat_interleave, as_strided, view_as_complex/view_as_real — OpInfo samples, hypothesis
shapes, error verdicts and float64 gradients."""

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

OPS = {
    # OpInfo name (variant): call on either library
    "flip": lambda lib, x, *a, **k: lib.flip(x, *a, **k),
    "fliplr": lambda lib, x: lib.fliplr(x),
    "flipud": lambda lib, x: lib.flipud(x),
    "roll": lambda lib, x, *a, **k: lib.roll(x, *a, **k),
    "rot90": lambda lib, x, *a, **k: lib.rot90(x, *a, **k),
    "tile": lambda lib, x, *a: lib.tile(x, *a),
    "repeat": lambda lib, x, *a: x.repeat(*a),
    "atleast_1d": lambda lib, x, *a: lib.atleast_1d(x, *a),
    "atleast_2d": lambda lib, x, *a: lib.atleast_2d(x, *a),
    "atleast_3d": lambda lib, x, *a: lib.atleast_3d(x, *a),
    "dsplit": lambda lib, x, *a: lib.dsplit(x, *a),
    "narrow_copy": lambda lib, x, *a: lib.narrow_copy(x, *a),
    "repeat_interleave": lambda lib, x, *a, **k: lib.repeat_interleave(x, *a, **k),
    "as_strided": lambda lib, x, *a, **k: lib.as_strided(x, *a, **k),
    "view_as_complex": lambda lib, x: lib.view_as_complex(x),
    "view_as_real": lambda lib, x: lib.view_as_real(x),
}
MESHGRID = {
    "variadic_tensors": lambda lib, x, *a, **k: lib.meshgrid(x, *a, **k),
    "list_of_tensors": lambda lib, x, *a, **k: lib.meshgrid(x, *a, **k),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_opinfo_samples(name):
    assert sample_values(name, OPS[name]) > 0


@pytest.mark.parametrize("variant", sorted(MESHGRID))
def test_opinfo_meshgrid(variant):
    assert sample_values("meshgrid", MESHGRID[variant], variant) > 0


@pytest.mark.parametrize("name", ["flip", "roll", "rot90", "tile", "repeat", "atleast_3d", "dsplit", "narrow_copy",
                                  "repeat_interleave", "as_strided", "view_as_real", "view_as_complex"])
def test_opinfo_grads(name):
    assert grads(name, OPS[name], max_samples=6, dtype="complex128" if name == "view_as_real" else "float64") > 0


def test_opinfo_meshgrid_grads():
    assert grads("meshgrid", MESHGRID["list_of_tensors"], "list_of_tensors") > 0


@pytest.mark.parametrize("name", with_error_inputs(sorted(OPS)))
def test_opinfo_error_inputs(name):
    assert errors(name, OPS[name]) > 0


# -- hypothesis: shapes and arguments, accept/reject like torch -----------------------------------------------


@fast(20)
@given(shape=shapes(0, 4), dims=hs.lists(hs.integers(-5, 4), max_size=3), seed=seeds)
def test_flip_dims(shape, dims, seed):
    compare(lambda lib, x: lib.flip(x, dims), (values(shape, "float32", seed), "float32"),
            codes=("flip_error", "dim_error", "dimension_error"))


@fast(20)
@given(shape=shapes(0, 3), shifts=hs.lists(hs.integers(-4, 4), min_size=1, max_size=2),
       dims=hs.none() | hs.lists(hs.integers(-3, 2), max_size=2), seed=seeds)
def test_roll(shape, shifts, dims, seed):
    compare(lambda lib, x: lib.roll(x, shifts, dims), (values(shape, "int64", seed), "int64"),
            codes=("argument_error", "dimension_error"))


@fast(20)
@given(shape=shapes(0, 4), k=hs.integers(-5, 5), dims=hs.lists(hs.integers(-3, 3), max_size=3), seed=seeds)
def test_rot90(shape, k, dims, seed):
    compare(lambda lib, x: lib.rot90(x, k, dims), (values(shape, "float64", seed), "float64"),
            codes=("argument_error", "dimension_error"))


@fast(20)
@given(shape=shapes(0, 3), reps=hs.lists(hs.integers(-1, 3), max_size=4), seed=seeds)
def test_tile_and_repeat(shape, reps, seed):
    x = (values(shape, "bool", seed), "bool")
    compare(lambda lib, a: lib.tile(a, reps), x, codes="argument_error")
    if reps:
        compare(lambda lib, a: a.repeat(*reps), x, codes="argument_error")


@fast(20)
@given(shape=shapes(0, 3), reps=hs.integers(-1, 3) | hs.lists(hs.integers(-1, 3), max_size=4),
       dim=hs.none() | hs.integers(-3, 2), seed=seeds)
def test_repeat_interleave(shape, reps, dim, seed):
    def fn(lib, x):
        r = reps if isinstance(reps, int) else lib.tensor(reps, dtype=lib.int64)
        return lib.repeat_interleave(x, r, dim)

    compare(fn, (values(shape, "float32", seed), "float32"), codes=("argument_error", "dimension_error"))


@fast(20)
@given(shapes_=hs.lists(shapes(0, 2, max_side=3), min_size=1, max_size=3), indexing=hs.sampled_from(["ij", "xy"]))
def test_meshgrid(shapes_, indexing):
    inputs = [(values(s, "int64", i), "int64") for i, s in enumerate(shapes_)]
    compare(lambda lib, *xs: lib.meshgrid(*xs, indexing=indexing), *inputs, codes="argument_error")


@fast(20)
@given(shape=shapes(0, 4), seed=seeds)
def test_atleast(shape, seed):
    x = (values(shape, "float32", seed), "float32")
    for name in ("atleast_1d", "atleast_2d", "atleast_3d"):
        compare(lambda lib, a, n=name: getattr(lib, n)(a), x)
        compare(lambda lib, a, n=name: getattr(lib, n)([a, a]), x)


@fast(20)
@given(shape=shapes(0, 4, max_side=6), sections=hs.integers(0, 4) | hs.lists(hs.integers(0, 6), max_size=3),
       seed=seeds)
def test_dsplit(shape, sections, seed):
    compare(lambda lib, x: lib.dsplit(x, sections), (values(shape, "float32", seed), "float32"),
            codes="argument_error")


@fast(20)
@given(n=hs.integers(1, 12), data=hs.data())
def test_as_strided(n, data):
    size = data.draw(hs.lists(hs.integers(0, 3), max_size=3))
    stride = data.draw(hs.lists(hs.integers(0, 4), min_size=len(size), max_size=len(size)))
    offset = data.draw(hs.none() | hs.integers(0, 4))
    compare(lambda lib, x: lib.as_strided(x, size, stride, offset), (values((n,), "float32", 1), "float32"),
            codes="argument_error")


def test_views_share_storage():
    x = st.arange(12.0).reshape(3, 4)
    v = st.as_strided(x, (2, 2), (1, 4), 1)
    v[0, 0] = 100.0
    assert x[0, 1].item() == 100.0
    s = x[1:]  # as_strided reads the storage of a view's base, with the view's offset by default
    compare(lambda lib, a: lib.as_strided(a[1:], (2, 2), (1, 2)), (np.arange(12.0).reshape(3, 4), "float32"))
    del s
    c = st.view_as_complex(x.reshape(3, 2, 2))
    c[0, 0] = 5 + 6j
    assert x[0, 0].item() == 5.0 and x[0, 1].item() == 6.0
    r = st.view_as_real(c)
    r[1, 1, 0] = -1.0
    assert x[1, 2].item() == -1.0
    f = st.flip(x, 0)
    f[0, 0] = 42.0
    assert x[2, 0].item() != 42.0  # flip copies, as torch


def test_errors_like_torch():
    x = (values((3, 4), "float32", 0), "float32")
    compare(lambda lib, a: lib.flip(a, (0, 0)), x, codes="dim_error_repeated")
    compare(lambda lib, a: lib.flip(a, (2,)), x, codes="flip_error_dim_out_of_range")
    compare(lambda lib, a: lib.fliplr(a[0]), x, codes="argument_error_invalid")
    compare(lambda lib, a: lib.flipud(a[0, 0]), x, codes="argument_error_invalid")
    compare(lambda lib, a: lib.roll(a, 1, (0, 1)), x, codes="argument_error_invalid")
    compare(lambda lib, a: lib.roll(a[0, 0], 1, 0), x, codes="dimension_error_zero_dim")
    compare(lambda lib, a: lib.rot90(a, 1, (0, 0)), x, codes="argument_error_invalid")
    compare(lambda lib, a: lib.tile(a, (-1,)), x, codes="argument_error_invalid")
    compare(lambda lib, a: a.repeat(2), x, codes="argument_error_invalid")
    compare(lambda lib, a: lib.repeat_interleave(a, lib.tensor([1, 2]), 0), x, codes="argument_error_invalid")
    compare(lambda lib, a: lib.repeat_interleave(a, lib.tensor([1, -2, 0]), 0), x, codes="argument_error_invalid")
    compare(lambda lib, a: lib.repeat_interleave(a, 2, 0, output_size=5), x, codes="argument_error_invalid")
    compare(lambda lib, a: lib.repeat_interleave(a, lib.tensor([1.0, 2.0, 0.0]), 0), x,
            codes="method_dtype_not_supported_error")
    compare(lambda lib: lib.repeat_interleave(lib.tensor([1, 2, 0])))
    compare(lambda lib, a: lib.repeat_interleave(a, 2, 0, output_size=6), x)
    compare(lambda lib, a: lib.meshgrid(a[0], a[0].double(), indexing="ij"), x, codes="dtype_error_mismatch")
    compare(lambda lib, a: lib.meshgrid(a, indexing="ij"), x, codes="argument_error_invalid")
    compare(lambda lib, a: lib.meshgrid(a[0], indexing="foo"), x, codes="argument_error_invalid")
    compare(lambda lib, a: lib.dsplit(a, 2), x, codes="argument_error_invalid")
    compare(lambda lib, a: lib.narrow_copy(a, 0, 3, 1), x, codes="narrow_error")
    compare(lambda lib, a: lib.view_as_complex(a), x, codes="argument_error_invalid")
    compare(lambda lib, a: lib.view_as_complex(a.t()[:2].t()), x, codes="argument_error_invalid")
    compare(lambda lib, a: lib.view_as_complex(a[:, :2]), x)
    compare(lambda lib, a: lib.view_as_complex(a.long()), x, codes="method_dtype_not_supported_error")
    compare(lambda lib, a: lib.view_as_real(a), x, codes="method_dtype_not_supported_error")
    compare(lambda lib, a: lib.as_strided(a, (2, 2), (1, 20)), x, codes="argument_error_invalid")
    compare(lambda lib, a: lib.as_strided(a, (2, 2), (-1, 2)), x, codes="argument_error_invalid")
    compare(lambda lib, a: lib.as_strided(a, (2,), (1, 2)), x, codes="argument_error_invalid")


def test_inplace_and_methods():
    x, tx = rand((3, 4), "float32", 2)
    for name, args in (("flip", ((0, 1),)), ("fliplr", ()), ("flipud", ()), ("roll", (1, 0)), ("rot90", ()),
                       ("tile", ((2,),)), ("dsplit", ([1],)), ("narrow_copy", (0, 1, 1)),
                       ("repeat_interleave", (2,))):
        if name == "dsplit":
            compare(lambda lib, a, n=name, ar=args: getattr(a.unsqueeze(-1), n)(*ar), (x, tx))
        else:
            compare(lambda lib, a, n=name, ar=args: getattr(a, n)(*ar), (x, tx))
    y = st.arange(6.0)
    y.as_strided_((2, 2), (1, 2))
    ty = torch.arange(6.0)
    ty.as_strided_((2, 2), (1, 2))
    np.testing.assert_array_equal(y.numpy(), ty.numpy())


def test_forward_mode():
    import torch.autograd.forward_ad as fwt

    import shapetorch.autograd.forward_ad as fwst

    a = values((3, 4), "float64", 3)
    t = values((3, 4), "float64", 4)
    outs = []
    for lib, fw in ((st, fwst), (torch, fwt)):
        with fw.dual_level():
            x = fw.make_dual(lib.tensor(a), lib.tensor(t))
            y = lib.roll(lib.flip(x, (0,)), 1, 1)
            outs.append(fw.unpack_dual(y).tangent.numpy())
    np.testing.assert_allclose(outs[0], outs[1])


# Every method that takes sizes or dims, in each form a torch user writes them: varargs, one tuple, one list,
# a keyword (torch's parser accepts them all for a method; x.tile(2, 3) was refused here).
SIZE_FORMS = {
    "tile": [(2, 3), ((2, 3),), ([2, 3],), (2,), ((),)],
    "repeat": [(2, 3), ((2, 3),), ([2, 3],), (2, 1, 1)],
    "expand": [(2, 2, 3), ((2, 2, 3),), ([2, -1, 3],)],
    "permute": [(1, 0), ((1, 0),), ([1, 0],)],
    "view": [(3, 2), ((3, 2),), ([6],), (-1,)],
    "reshape": [(3, 2), ((3, 2),), ([-1],)],
    "new_ones": [(2, 3), ((2, 3),), ([4],), ()],
    "new_zeros": [(2, 3), ((2, 3),)],
    "new_empty": [(2, 3), ((2, 3),)],
    "flip": [(0, 1), ((0, 1),), ([1],), (0,)],
    "sum": [((0, 1),), ([1],)],
    "amax": [((0, 1),)],
    "mean": [((0, 1),)],
    "squeeze": [((0, 1),)],
    "broadcast_to": [((2, 2, 3),)],
}
SIZE_KEYWORDS = {"tile": "dims", "repeat": "repeats", "expand": "size", "permute": "dims", "view": "size",
                 "reshape": "shape", "new_ones": "size", "flip": "dims"}


@pytest.mark.parametrize("name", sorted(SIZE_FORMS))
def test_size_argument_forms_as_torch(name):
    x, tx = rand((2, 3), "float32", 3)
    calls = [lambda a, ar=args: getattr(a, name)(*ar) for args in SIZE_FORMS[name]]
    if name in SIZE_KEYWORDS:
        calls.append(lambda a: getattr(a, name)(**{SIZE_KEYWORDS[name]: SIZE_FORMS[name][1][0]}))
    calls.append(lambda a: getattr(a, name)(2.5))  # a float size: both refuse with a TypeError
    for call in calls:
        try:
            expected = call(tx)
        except TypeError:
            with pytest.raises(TypeError):
                call(x)
            continue
        got = call(x)
        assert tuple(got.shape) == tuple(expected.shape)
        if not name.startswith("new_"):  # new_empty's values are whatever memory held
            np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)


def test_tile_function_takes_one_sequence():
    """torch.tile takes dims as one sequence: more positional arguments are a TypeError, as torch."""
    x, tx = rand((2, 3), "float32", 4)
    with pytest.raises(TypeError):
        torch.tile(tx, 2, 3)
    with pytest.raises(TypeError):
        st.tile(x, 2, 3)
    compare(lambda lib, a: lib.tile(a, dims=[2, 1, 2]), (x, tx))
