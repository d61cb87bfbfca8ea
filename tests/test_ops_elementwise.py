"""Elementwise ops against torch: unary math, binary arithmetic and comparisons with broadcasting and
type promotion over all 12 dtypes, Python operators and scalars, 0-d tensors, in-place variants."""

from __future__ import annotations

import operator

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
from _oracle import (
    DTYPES,
    INTS,
    Same,
    broadcast_pairs,
    compare,
    fast,
    make,
    rand,
    seeds,
    shapes,
    values,
)

UNARY = [
    "neg", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "reciprocal", "abs",
    "sgn", "sign", "floor", "ceil", "trunc", "frac", "round", "square", "bitwise_not", "logical_not",
]
# complex kernels whose branch cuts/rounding NumPy and torch resolve the same way only away from the cuts
_NO_COMPLEX = {"sign", "floor", "ceil", "trunc", "frac", "round"}
BINARY = [
    "add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod", "pow", "atan2", "maximum",
    "minimum", "eq", "ne", "lt", "le", "gt", "ge", "bitwise_and", "bitwise_or", "bitwise_xor", "logical_and",
    "logical_or", "logical_xor",
]
_DIVISORS = {"div", "true_divide", "floor_divide", "remainder", "fmod"}


def _unary_fn(name):
    return lambda lib, x: getattr(lib, name)(x)


def _binary_fn(name):
    return lambda lib, x, y: getattr(lib, name)(x, y)


def _mismatches(check, cases):
    """Run every case; collect failures so one test lists all of an op's mismatching dtypes."""
    bad = []
    for case in cases:
        try:
            check(*case)
        except (AssertionError, pytest.fail.Exception) as e:
            bad.append(f"{case}: {str(e).splitlines()[0][:300]}")
    assert not bad, f"{len(bad)} mismatches:\n" + "\n".join(bad[:20])


@pytest.mark.parametrize("name", UNARY)
def test_unary_every_dtype(name):
    def check(dtype):
        positive = name in ("log", "log2", "log10", "sqrt", "rsqrt", "acosh")
        arr = values((2, 3), dtype, 1, positive=positive)
        if name in ("asin", "acos", "atanh") and dtype not in INTS + ["bool"]:
            arr = arr / 8
        if name == "acosh" and dtype not in INTS + ["bool"]:
            arr = arr + 1
        compare(_unary_fn(name), (arr, dtype), codes="method_dtype_not_supported_error")

    _mismatches(check, [(d,) for d in DTYPES if not (d.startswith("complex") and name in _NO_COMPLEX)])


@pytest.mark.parametrize("name", ["exp", "neg", "abs", "sqrt", "sigmoid", "round", "floor", "logical_not"])
@fast(25)
@given(shape=shapes(), dtype=hs.sampled_from(["bool", "int64", "int32", "float32", "float64", "float16"]), seed=seeds)
def test_unary_shapes(name, shape, dtype, seed):
    compare(_unary_fn(name), (values(shape, dtype, seed, positive=name == "sqrt"), dtype),
            codes="method_dtype_not_supported_error")


def test_unary_method_and_inplace():
    x, tx = rand((2, 3), "float64", 3)
    compare(lambda lib, a: a.exp(), (x, tx))
    compare(lambda lib, a: a.clone().sin_(), (x, tx))
    i, ti = rand((3,), "int64", 4)
    # torch: exp_ on an integer tensor cannot hold the float result
    compare(lambda lib, a: a.clone().exp_(), (i, ti), codes="dtype_error_cannot_cast")
    compare(lambda lib, a: a.clone().neg_(), (i, ti))
    compare(lambda lib, a: -a, (i, ti))
    b, tb = rand((3,), "bool", 5)
    compare(lambda lib, a: -a, (b, tb), codes="method_dtype_not_supported_error")
    compare(lambda lib, a: ~a, (b, tb))
    compare(lambda lib, a: ~a, (i, ti))
    compare(lambda lib, a: ~a, (x, tx), codes="method_dtype_not_supported_error")
    compare(lambda lib, a: abs(a), (i, ti))
    compare(lambda lib, a: a.round(decimals=1), (x, tx))


# a dtype no kernel takes; subtraction with a bool operand is torch's own RuntimeError, pointing to ~ or ^
DTYPE_REFUSALS = ("method_dtype_not_supported_error", "sub_error_bool")


@pytest.mark.parametrize("name", BINARY)
def test_binary_every_dtype_pair(name):
    def check(da, db):
        a = values((2, 3), da, 7)
        b = values((3,), db, 8, nonzero=name in _DIVISORS or name == "pow", positive=name == "pow" and db in INTS)
        if name == "pow" and da in INTS:
            a = np.clip(a, -3, 3) if da != "uint8" else np.clip(a, 0, 3)
        compare(_binary_fn(name), (a, da), (b, db), codes=DTYPE_REFUSALS)

    pairs = [(a, b) for a in DTYPES for b in DTYPES]
    _mismatches(check, pairs)


@pytest.mark.parametrize("name", ["add", "mul", "sub", "div", "maximum", "eq", "lt", "atan2", "bitwise_and"])
@fast(30)
@given(pair=broadcast_pairs(), da=hs.sampled_from(DTYPES), db=hs.sampled_from(DTYPES), seed=seeds)
def test_binary_broadcasting(name, pair, da, db, seed):
    sa, sb = pair
    compare(_binary_fn(name), (values(sa, da, seed), da), (values(sb, db, seed + 1, nonzero=True), db),
            codes=("broadcast_error_incompatible_dimensions", *DTYPE_REFUSALS))


@fast(40)
@given(pair=broadcast_pairs(compatible=False))
def test_broadcast_incompatible_is_a_shape_error(pair):
    sa, sb = pair
    err = compare(lambda lib, x, y: x + y, (values(sa, "float32"), "float32"), (values(sb, "float32"), "float32"),
                  codes="broadcast_error_incompatible_dimensions")
    assert isinstance(err, st.ShapeError)


OPERATORS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "//": operator.floordiv,
    "%": operator.mod, "**": operator.pow, "==": operator.eq, "!=": operator.ne, "<": operator.lt,
    "<=": operator.le, ">": operator.gt, ">=": operator.ge, "&": operator.and_, "|": operator.or_,
    "^": operator.xor,
}
SCALARS = [0, 2, -3, 1.5, -0.5, True, False, 2j, 1 + 1j]


@fast(60)
@given(op=hs.sampled_from(sorted(OPERATORS)), dtype=hs.sampled_from(DTYPES), scalar=hs.sampled_from(SCALARS),
       reflected=hs.booleans(), shape=shapes(0, 2), seed=seeds)
def test_python_operators_with_scalars(op, dtype, scalar, reflected, shape, seed):
    f = OPERATORS[op]
    divides = op in ("/", "//", "%")
    if divides and not reflected and scalar in (0, False):
        scalar = 3
    if op == "**" and not reflected and isinstance(scalar, int) and scalar < 0:
        scalar = 2
    arr = values(shape, dtype, seed, nonzero=divides and reflected, positive=op == "**" and reflected)
    if op == "**" and dtype in INTS:
        arr = np.clip(arr, 0, 3)
    if reflected:
        compare(lambda lib, x, s: f(s, x), (arr, dtype), Same(scalar), codes=DTYPE_REFUSALS)
    else:
        compare(lambda lib, x, s: f(x, s), (arr, dtype), Same(scalar), codes=DTYPE_REFUSALS)


@fast(60)
@given(op=hs.sampled_from(["+", "-", "*", "/", "<", "=="]), da=hs.sampled_from(DTYPES), db=hs.sampled_from(DTYPES),
       zero_dim_first=hs.booleans(), seed=seeds)
def test_zero_dim_tensors_promote_like_scalars(op, da, db, zero_dim_first, seed):
    f = OPERATORS[op]
    t = (values((3,), da, seed), da)
    z = (values((), db, seed + 1, nonzero=True), db)
    args = (z, t) if zero_dim_first else (t, z)
    compare(lambda lib, x, y: f(x, y), *args, codes=DTYPE_REFUSALS)


def test_scalar_tensor_function_forms():
    x, tx = rand((2, 2), "int32", 2)
    compare(lambda lib, a: lib.add(a, 2.5), (x, tx))
    compare(lambda lib, a: lib.add(a, 2, alpha=3), (x, tx))
    compare(lambda lib, a: lib.sub(a, 1, alpha=2), (x, tx))
    compare(lambda lib, a: lib.mul(a, True), (x, tx))
    compare(lambda lib, a: lib.div(a, 2, rounding_mode="floor"), (x, tx))
    compare(lambda lib, a: lib.div(a, 2, rounding_mode="trunc"), (x, tx))
    f, tf = rand((2, 2), "float16", 2)
    compare(lambda lib, a: lib.div(a, 3, rounding_mode="trunc"), (f, tf))
    compare(lambda lib, a: a + np.float64(1.5), (f, tf))
    compare(lambda lib, a: lib.pow(a, 2), (f, tf))
    compare(lambda lib, a: lib.pow(2, a), (f, tf))


INPLACE = ["add_", "sub_", "mul_", "div_", "remainder_", "pow_", "maximum_", "eq_", "bitwise_and_", "atan2_"]


@pytest.mark.parametrize("name", [n for n in INPLACE if n not in ("maximum_",)])
def test_inplace_every_dtype_pair(name):
    def check(da, db):
        a = values((2, 3), da, 11)
        b = values((3,), db, 12, nonzero=True, positive=name == "pow_")
        if name == "pow_" and da in INTS:
            a = np.clip(a, 0, 3)
        compare(lambda lib, x, y: getattr(x, name)(y), (a, da), (b, db),
                codes=("dtype_error_cannot_cast", *DTYPE_REFUSALS))

    _mismatches(check, [(a, b) for a in DTYPES for b in DTYPES])


def test_int_add_float_inplace_is_a_dtype_error():
    x = st.tensor([1, 2, 3])
    with pytest.raises(st.DTypeError) as info:
        x.add_(1.5)
    assert info.value.code == "dtype_error_cannot_cast"
    assert x.tolist() == [1, 2, 3]  # nothing was written
    with pytest.raises(RuntimeError):
        torch.tensor([1, 2, 3]).add_(1.5)
    with pytest.raises(st.DTypeError):
        x += 0.5
    x += 2  # an int scalar is fine
    assert x.tolist() == [3, 4, 5]


@fast(40)
@given(pair=broadcast_pairs(), dtype=hs.sampled_from(["float32", "int64"]), seed=seeds)
def test_inplace_broadcast_keeps_self_shape(pair, dtype, seed):
    """``x.add_(y)``: y must broadcast to x's shape; x's shape never changes."""
    sa, sb = pair
    compare(lambda lib, x, y: x.add_(y), (values(sa, dtype, seed), dtype), (values(sb, dtype, seed), dtype),
            codes=("broadcast_error", "inplace_error_shape_change"))
    compare(lambda lib, x, y: x.mul_(y), (values(sa, dtype, seed), dtype), (values(sb, dtype, seed), dtype),
            codes=("broadcast_error", "inplace_error_shape_change"))


def test_inplace_operators_and_identity():
    x, tx = rand((2, 3), "float32", 1)
    y, ty = rand((3,), "float32", 2)
    for lib, a, b in ((st, x, y), (torch, tx, ty)):
        before = a
        a += b
        a *= 2
        a -= 1
        a /= 4
        assert a is before
    compare(lambda lib, a: a, (x, tx))


def test_out_argument():
    x, tx = rand((2, 3), "float32", 1)
    o, to = rand((2, 3), "float32", 2)
    compare(lambda lib, a, out: lib.add(a, a, out=out), (x, tx), (o, to))
    i, ti = rand((2, 3), "int64", 2)
    compare(lambda lib, a, out: lib.add(a, a, out=out), (x, tx), (i, ti), codes="dtype_error_cannot_cast")


def test_clamp_where_and_friends():
    x, tx = rand((3, 4), "float32", 5)
    lo, tlo = rand((4,), "float32", 6)
    compare(lambda lib, a: lib.clamp(a, -1, 1), (x, tx))
    compare(lambda lib, a: a.clamp(min=0.5), (x, tx))
    compare(lambda lib, a, b: a.clamp(min=b), (x, tx), (lo, tlo))
    compare(lambda lib, a: a.clip(max=0), (x, tx))
    i, ti = rand((3, 4), "int32", 5)
    compare(lambda lib, a: a.clamp(-2, 2), (i, ti))
    compare(lambda lib, a: a.clamp(-2.5, 2.5), (i, ti))
    compare(lambda lib, a: a.clone().clamp_(0, 1), (x, tx))
    compare(lambda lib, a: a.clamp(), (x, tx), codes="argument_error_invalid")


@fast(40)
@given(shapes3=hs.tuples(shapes(0, 3), shapes(0, 3), shapes(0, 3)), da=hs.sampled_from(DTYPES),
       db=hs.sampled_from(DTYPES), seed=seeds)
def test_where_broadcast_and_promotion(shapes3, da, db, seed):
    sc, sa, sb = shapes3
    compare(lambda lib, c, a, b: lib.where(c, a, b), (values(sc, "bool", seed), "bool"), (values(sa, da, seed), da),
            (values(sb, db, seed), db), codes="broadcast_error")


def test_where_scalars_and_condition_dtype():
    c, tc = rand((2, 3), "bool", 1)
    x, tx = rand((2, 3), "int64", 1)
    compare(lambda lib, cond, a: lib.where(cond, a, 0.5), (c, tc), (x, tx))
    compare(lambda lib, cond, a: lib.where(cond, 1, a), (c, tc), (x, tx))
    compare(lambda lib, cond, a: a.where(cond, -1), (c, tc), (x, tx))
    compare(lambda lib, cond, a: lib.where(a, a, a), (c, tc), (x, tx), codes="dtype_error_mismatch")
    compare(lambda lib, cond: lib.where(cond), (c, tc))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "complex64", "complex128", "int8",
                                   "uint8", "int16", "int32", "int64", "bool"])
def test_where_selects_the_bits_torch_selects(dtype):
    """where (and masked_fill) pick elements as bit operations on the CPU: the same bits as torch for every dtype
    (a -0.0 and a NaN kept, an inf of the side not taken left out), with a condition that broadcasts (a causal
    mask), one side of one element (masked_fill's value) and both sides full."""
    rng = np.random.default_rng(3)
    full = rng.normal(size=(3, 4, 5)) * 4
    other = rng.normal(size=(3, 4, 5)) * 4
    if dtype.startswith(("float", "bfloat", "complex")):
        full[0, 0, :3], other[1, 1, :3] = (np.nan, -0.0, np.inf), (np.nan, -0.0, -np.inf)
    tdt = getattr(torch, dtype)
    ta, tb = torch.tensor(full).to(tdt), torch.tensor(other).to(tdt)
    for cond in (rng.random((3, 4, 5)) > 0.5, np.tril(np.ones((4, 5), bool)), rng.random((5,)) > 0.5):
        tc = torch.tensor(cond)
        for ta_, tb_ in ((ta, tb), (ta, tb[0, 0, 0]), (ta[0, 0, 1], tb), (tb[1, 1, 1], ta)):
            want = torch.where(tc, ta_, tb_)
            sa, sb = (st.tensor(t.float().numpy() if dtype == "bfloat16" else t.numpy()).to(getattr(st, dtype))
                      for t in (ta_, tb_))
            got = st.where(st.tensor(cond), sa, sb)
            assert tuple(got.shape) == tuple(want.shape) and got.dtype == sa.dtype
            same = np.where(cond, sa.numpy(), sb.numpy())  # bit for bit: np.where's choice
            np.testing.assert_array_equal(got.numpy().view(np.uint8), same.view(np.uint8))
            w = want.float().numpy() if dtype == "bfloat16" else want.numpy()
            np.testing.assert_array_equal(got.float().numpy() if dtype == "bfloat16" else got.numpy(), w)
    x, tx = rand((3, 4, 5), "float32", 1)
    m = np.tril(np.ones((4, 5), bool))
    compare(lambda lib, a: a.masked_fill(lib.tensor(m), float("-inf")), (x, tx))
    # every operand 0-d: a 0-d tensor (an array, not a NumPy scalar)
    for c in (True, False):
        got = st.where(st.tensor(c), st.tensor(1.5), st.tensor(2.5))
        assert type(got._data) is np.ndarray and got.shape == () and got.item() == (1.5 if c else 2.5)
        got = st.tensor(3.0).masked_fill(st.tensor(c), 1.0)
        assert type(got._data) is np.ndarray and got.item() == (1.0 if c else 3.0)


@pytest.mark.parametrize("fill", [False, True])
def test_where_gradient_is_a_select(fill):
    """where's gradient is the cotangent where each side was taken and 0 elsewhere, even for an inf or NaN cotangent
    (a product with the mask gave NaN there); masked_fill's value gets none; double backward through it."""
    rng = np.random.default_rng(4)
    cond = rng.random((3, 4)) > 0.5
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(4,))
    cot = rng.normal(size=(3, 4))
    cot[0, :2], cot[1, :2] = np.inf, np.nan
    got = []
    for lib in (st, torch):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        if fill:
            z = (x * x).masked_fill(lib.tensor(cond), 2.5)
            (gx,) = lib.autograd.grad(z, [x], lib.tensor(cot))
            gy = gx
        else:
            z = lib.where(lib.tensor(cond), x * x, y * y)
            gx, gy = lib.autograd.grad(z, [x, y], lib.tensor(cot))
        # double backward with a finite cotangent
        z2 = lib.where(lib.tensor(cond), x * x, y * y)
        g1 = lib.autograd.grad(z2, [x, y], lib.tensor(np.nan_to_num(cot, nan=1.0, posinf=2.0)), create_graph=True)
        g2 = lib.autograd.grad(sum((g * g).sum() for g in g1), [x, y])
        got.append([t.detach().numpy() for t in (z, gx, gy, *g2)])
    for s_, t_ in zip(*got):
        np.testing.assert_allclose(s_, t_, rtol=1e-12, atol=0)


def test_clone_contiguous_detach():
    x, tx = rand((3, 4), "float32", 1)
    compare(lambda lib, a: a.t().contiguous(), (x, tx))
    compare(lambda lib, a: a.t().is_contiguous(), (x, tx))
    compare(lambda lib, a: a.t().contiguous().is_contiguous(), (x, tx))
    compare(lambda lib, a: a.clone(), (x, tx))
    compare(lambda lib, a: a.detach(), (x, tx))
    c = x.clone()
    c[0, 0] = 100.0
    assert x[0, 0].item() != 100.0
    d = x.detach()
    d[0, 0] = 100.0
    assert x[0, 0].item() == 100.0  # detach shares storage, as torch
    g, _ = make(values((2,), "float64"), "float64", requires_grad=True)
    assert not g.detach().requires_grad and g.clone().requires_grad
