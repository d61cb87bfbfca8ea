"""Reductions against torch: one or several dims, keepdim, dims out of range and repeated, empty dims."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as hs

from _oracle import DTYPES, compare, fast, rand, seeds, shapes, values

DIM_CODES = (
    "dimension_error_out_of_range", "dim_error_repeated", "method_dtype_not_supported_error", "reduction_error_empty_input",
)


@hs.composite
def dim_args(draw, rank):
    """None, one dim, or a list of dims (some out of range, some repeated)."""
    n = max(rank, 1)
    one = hs.integers(-n - 1, n)
    return draw(hs.none() | one | hs.lists(one, min_size=0, max_size=3))


@hs.composite
def shape_and_dims(draw):
    shape = draw(shapes(0, 4))
    return shape, draw(dim_args(len(shape)))


def _call(name, dim, keepdim, **kw):
    def fn(lib, x):
        f = getattr(x, name)
        if dim is None:
            return f(**kw)
        return f(dim=dim, keepdim=keepdim, **kw)

    return fn


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "amax", "amin", "logsumexp", "all", "any", "std", "var",
                                  "norm"])
@fast(40)
@given(sd=shape_and_dims(), keepdim=hs.booleans(), dtype=hs.sampled_from(["float32", "float64", "int64", "bool"]),
       seed=seeds)
def test_reduce_over_dims(name, sd, keepdim, dtype, seed):
    shape, dim = sd
    if name == "logsumexp" and not dim and dim != 0:  # torch requires dims (and fails on dim=[] itself)
        dim = list(range(len(shape)))
    if name == "norm" and isinstance(dim, list) and len(dim) > 2:  # torch.norm: 'fro' over >2 dims is an error
        dim = dim[:2]
    if name == "prod" and isinstance(dim, list):  # torch.prod takes one dim only; shapetorch also takes lists
        dim = dim[0] if dim else None
    compare(_call(name, dim, keepdim), (values(shape, dtype, seed), dtype), codes=DIM_CODES)


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "amax", "amin", "all", "any", "std", "var", "norm",
                                  "logsumexp", "argmax", "argmin", "max", "min"])
def test_reduce_every_dtype(name):
    bad = []
    for dtype in DTYPES:
        for dim in (None, 1, -1):
            if name == "logsumexp" and dim is None:
                continue
            try:
                compare(_call(name, dim, False), (values((2, 3), dtype, 3), dtype), codes=DIM_CODES)
            except (AssertionError, pytest.fail.Exception) as e:
                bad.append(f"{dtype} dim={dim}: {str(e).splitlines()[0][:200]}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin"])
@fast(40)
@given(shape=shapes(0, 4), keepdim=hs.booleans(), seed=seeds, data=hs.data())
def test_max_min_arg_with_dim(name, shape, keepdim, seed, data):
    dim = data.draw(hs.integers(-max(len(shape), 1) - 1, max(len(shape), 1)))
    # int data has ties: torch and shapetorch both return the first index of the extreme
    arr = values(shape, data.draw(hs.sampled_from(["float64", "int64"])), seed)
    dtype = str(arr.dtype)
    compare(lambda lib, x: getattr(lib, name)(x, dim, keepdim=keepdim), (arr, dtype), codes=DIM_CODES)


@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin"])
@fast(25)
@given(shape=shapes(0, 4), seed=seeds)
def test_max_min_arg_without_dim(name, shape, seed):
    compare(lambda lib, x: getattr(lib, name)(x), (values(shape, "float32", seed), "float32"),
            codes="reduction_error_empty_input")


def test_max_min_binary_form_and_namedtuple():
    x, tx = rand((3, 4), "float32", 1)
    y, ty = rand((4,), "float32", 2)
    compare(lambda lib, a, b: lib.max(a, b), (x, tx), (y, ty))
    compare(lambda lib, a, b: lib.min(a, b), (x, tx), (y, ty))
    compare(lambda lib, a: a.max(dim=1).values, (x, tx))
    compare(lambda lib, a: a.min(0, True).indices, (x, tx))
    compare(lambda lib, a: a.argmax(dim=0, keepdim=True), (x, tx))


@fast(40)
@given(shape=shapes(0, 3), correction=hs.sampled_from([0, 1, 2]), keepdim=hs.booleans(), seed=seeds, data=hs.data())
def test_std_var_correction(shape, correction, keepdim, seed, data):
    dim = data.draw(dim_args(len(shape)))
    x = (values(shape, "float64", seed), "float64")
    compare(lambda lib, a: lib.var(a, dim, correction=correction, keepdim=keepdim), x, codes=DIM_CODES)
    compare(lambda lib, a: lib.std(a, dim, correction=correction, keepdim=keepdim), x, codes=DIM_CODES)


def test_std_var_forms():
    x, tx = rand((3, 4), "float32", 1)
    compare(lambda lib, a: a.var(1, unbiased=False), (x, tx))
    compare(lambda lib, a: a.std(unbiased=False), (x, tx))
    compare(lambda lib, a: lib.var(a, 0), (x, tx))
    compare(lambda lib, a: lib.std_mean(a, 1), (x, tx))
    compare(lambda lib, a: lib.var_mean(a, 1, keepdim=True), (x, tx))
    c, tc = rand((3, 4), "complex64", 1)
    compare(lambda lib, a: a.var(1), (c, tc))


@pytest.mark.parametrize("p", [1, 2, 3, 0, 0.5, float("inf"), -float("inf"), "fro"])
def test_norm_orders(p):
    x, tx = rand((3, 4), "float64", 1)
    compare(lambda lib, a: a.norm(p), (x, tx))
    compare(lambda lib, a: a.norm(p, dim=1, keepdim=True), (x, tx))
    c, tc = rand((3, 4), "complex128", 1)
    compare(lambda lib, a: a.norm(p, dim=0), (c, tc))


def test_sum_prod_dtype_argument_and_accumulation():
    x, tx = rand((3, 4), "int8", 1)
    compare(lambda lib, a: a.sum(), (x, tx))
    compare(lambda lib, a: a.sum(dtype=lib.float64), (x, tx))
    compare(lambda lib, a: a.prod(1), (x, tx))
    compare(lambda lib, a: a.mean(), (x, tx), codes="method_dtype_not_supported_error")
    compare(lambda lib, a: a.mean(dtype=lib.float32), (x, tx))
    b, tb = rand((3, 4), "bool", 1)
    compare(lambda lib, a: a.sum(0), (b, tb))
    u, tu = rand((3, 4), "uint8", 1)
    compare(lambda lib, a: a.all(1), (u, tu))
    compare(lambda lib, a: a.any(), (u, tu))


def test_empty_reductions():
    e, te = rand((0, 3), "float32", 1)
    compare(lambda lib, a: a.sum(0), (e, te))
    compare(lambda lib, a: a.prod(0), (e, te))
    compare(lambda lib, a: a.mean(0), (e, te))
    compare(lambda lib, a: a.all(0), (e, te))
    compare(lambda lib, a: a.any(), (e, te))
    compare(lambda lib, a: a.logsumexp(0), (e, te))
    compare(lambda lib, a: a.amax(1), (e, te))
    compare(lambda lib, a: a.amax(0), (e, te), codes="reduction_error_empty_input")
    compare(lambda lib, a: a.argmax(), (e, te), codes="reduction_error_empty_input")
    compare(lambda lib, a: a.max(1), (e, te))
