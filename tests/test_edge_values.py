"""Values and gradients against torch where formulas break down: zeros, ties, constants, huge and
negative magnitudes, NaN and inf, empty and 0-d tensors. Each gradient's shape and dtype is asserted
too, so a wrongly shaped gradient that happens to broadcast cannot pass."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import shapetorch as st

INF, NAN = math.inf, math.nan


def run(lib, fn, values, grad=True):
    xs = [lib.tensor(v, dtype=lib.float64, requires_grad=grad) for v in values]
    out = fn(lib, *xs)
    if not grad:
        return out, None
    seed = lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)), dtype=lib.float64)
    gs = lib.autograd.grad(out, xs, seed, allow_unused=True)
    return out, gs


def assert_same(fn, *values, grad=True):
    """``fn`` on shapetorch and torch: equal values, and equal gradients of the same shape and dtype."""
    out, gs = run(st, fn, values, grad)
    t_out, t_gs = run(torch, fn, values, grad)
    assert tuple(out.shape) == tuple(t_out.shape) and out.dtype.name == str(t_out.dtype).split(".")[-1]
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=1e-12, atol=1e-300)
    for i, (g, t) in enumerate(zip(gs or (), t_gs or ())):
        assert (g is None) == (t is None), f"gradient {i}: {g} vs torch {t}"
        if g is None:
            continue
        assert tuple(g.shape) == tuple(t.shape), f"gradient {i} has shape {tuple(g.shape)}, torch {tuple(t.shape)}"
        assert g.dtype.name == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-10, atol=1e-300, err_msg=f"gradient {i}")


# -- the places where the textbook formula gives nan and torch gives a finite value ---------------------

FINITE_WHERE_FORMULAS_FAIL = {
    "prod with one zero": (lambda m, x: m.prod(x), [[2.0, 0.0, 3.0]]),
    "prod with two zeros": (lambda m, x: m.prod(x), [[0.0, 4.0, 0.0]]),
    "prod along a dim": (lambda m, x: m.prod(x, 1), [[[1.0, 0.0, 3.0], [2.0, 0.0, 0.0], [1.5, 2.0, -1.0]]]),
    "prod keepdim": (lambda m, x: m.prod(x, 0, keepdim=True), [[[0.0, 1.0], [5.0, 0.0]]]),
    "prod of one element": (lambda m, x: m.prod(x, 0), [[[0.0, 2.0]]]),
    "pow: exponent's gradient at base 0": (lambda m, x, y: m.pow(x, y), [[0.0, 0.0, 0.0, 2.0], [0.0, 2.0, -1.0, 0.5]]),
    "pow: base's gradient at exponent 0": (lambda m, x: m.pow(x, 0), [[0.0, 2.0]]),
    "pow: scalar base 0": (lambda m, y: m.pow(0.0, y), [[0.0, -1.0, 2.0]]),
    "rpow: scalar base 2": (lambda m, y: 2.0**y, [[0.0, -1.0, 2.0]]),
    "atan2 at the origin": (lambda m, x, y: m.atan2(x, y), [[0.0, 1.0, 0.0], [0.0, 0.0, -2.0]]),
    "std of a constant": (lambda m, x: m.std(x), [[2.0, 2.0, 2.0]]),
    "std along a dim, one row constant": (lambda m, x: m.std(x, 1), [[[2.0, 2.0], [1.0, 3.0]]]),
    "std_mean of a constant": (lambda m, x: m.std_mean(x)[0], [[-1.0, -1.0]]),
    "norm of zeros": (lambda m, x: m.norm(x), [[0.0, 0.0]]),
}


@pytest.mark.parametrize("case", sorted(FINITE_WHERE_FORMULAS_FAIL))
def test_finite_gradients_where_torch_has_them(case):
    fn, values = FINITE_WHERE_FORMULAS_FAIL[case]
    assert_same(fn, *values)


# -- ties: the gradient is split as torch splits it -----------------------------------------------------

TIES = {
    "maximum": (lambda m, x, y: m.maximum(x, y), [[1.0, 2.0, -3.0], [1.0, 3.0, -3.0]]),
    "minimum": (lambda m, x, y: m.minimum(x, y), [[1.0, 2.0, -3.0], [1.0, 3.0, -3.0]]),
    "fmax": (lambda m, x, y: m.fmax(x, y), [[1.0, 2.0], [1.0, 0.0]]),
    "amax": (lambda m, x: m.amax(x), [[1.0, 4.0, 4.0, 2.0]]),
    "amin along a dim": (lambda m, x: m.amin(x, 1), [[[1.0, 1.0], [0.0, 3.0]]]),
    "max (all)": (lambda m, x: m.max(x), [[4.0, 4.0, 1.0]]),
    "clamp at its bounds": (lambda m, x: m.clamp(x, -1.0, 1.0), [[-1.0, 1.0, 0.5, 2.0]]),
    "relu at 0": (lambda m, x: m.relu(x), [[0.0, -0.0, 1.0]]),
    "abs at 0": (lambda m, x: m.abs(x), [[0.0, -2.0]]),
    "sort with ties": (lambda m, x: m.sort(x).values * m.arange(4.0, dtype=m.float64), [[2.0, 1.0, 2.0, 1.0]]),
}


@pytest.mark.parametrize("case", sorted(TIES))
def test_ties(case):
    fn, values = TIES[case]
    assert_same(fn, *values)


# -- scatter: values read from the right block of src, and gradients for input and src --------------

INDEX = [[0, 1, 2, 0], [1, 2, 0, 1]]


@pytest.mark.parametrize("op", ["scatter", "scatter_add"])
@pytest.mark.parametrize("src_shape", [(2, 4), (3, 5)])  # (3, 5): only src[:2, :4] is read
def test_scatter_reads_the_leading_block_of_src(op, src_shape):
    src = np.arange(math.prod(src_shape), dtype=np.float64).reshape(src_shape) + 1
    outs = []
    for lib in (st, torch):
        x = lib.zeros(3, 4, dtype=lib.float64)
        outs.append(getattr(x, op)(0, lib.tensor(INDEX), lib.tensor(src)).numpy())
    np.testing.assert_array_equal(outs[0], outs[1])


@pytest.mark.parametrize("op", ["scatter", "scatter_add"])
def test_scatter_gradients_reach_input_and_src(op):
    idx = INDEX
    assert_same(lambda m, x, s: getattr(x, op)(0, m.tensor(idx), s) * m.arange(12.0, dtype=m.float64).reshape(3, 4),
                np.zeros((3, 4)), np.arange(8.0).reshape(2, 4) - 3)


def test_scatter_with_a_larger_src_gives_src_a_zero_padded_gradient():
    """torch refuses this backward (shape check of its engine); the gradient is defined: 0 where unread."""
    x = st.zeros(3, 4, dtype=st.float64, requires_grad=True)
    src = st.ones(3, 5, dtype=st.float64, requires_grad=True)
    x.scatter(0, st.tensor(INDEX), src).sum().backward()
    expected = np.zeros((3, 5))
    expected[:2, :4] = 1
    np.testing.assert_array_equal(src.grad.numpy(), expected)
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 1, 0, 0], [0, 0, 1, 0], [1, 0, 0, 1]])  # where unwritten


def test_scatter_value_gradient():
    assert_same(lambda m, x: x.scatter(1, m.tensor([[0], [2]]), 5.0) * 2, np.arange(6.0).reshape(2, 3))


# -- a sweep of elementwise ops over edge values -----------------------------------------------------------

EDGE = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 1e-200, 1e200, -1e200, INF, -INF, NAN]
UNARY = ["exp", "expm1", "log", "log1p", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "abs", "neg", "square",
         "atan", "asinh", "erf", "reciprocal", "sign", "floor", "relu", "trunc", "frac"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_values_and_gradients_at_edge_values(name):
    with np.errstate(all="ignore"):
        assert_same(lambda m, x: getattr(m, name)(x), EDGE)


BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "fmin", "atan2", "hypot", "pow", "copysign", "xlogy"]
A = [0.0, 0.0, 1.0, -1.0, 2.0, 1e200, -1e200, INF, 0.0, NAN, 3.0, -0.0]
B = [0.0, 1.0, 1.0, 0.0, -2.0, 1e200, 2.0, 1.0, INF, 1.0, NAN, 0.0]


@pytest.mark.parametrize("name", BINARY)
def test_binary_values_and_gradients_at_edge_values(name):
    with np.errstate(all="ignore"):
        assert_same(lambda m, x, y: getattr(m, name)(x, y), A, B)


@pytest.mark.parametrize("shape", [(0,), (2, 0), ()])
@pytest.mark.parametrize("op", ["sum", "mean", "prod", "amax", "std", "cumsum", "softmax", "logsumexp"])
def test_empty_and_zero_dim(shape, op):
    def fn(m, x):
        if op in ("cumsum", "softmax", "logsumexp"):
            return getattr(m, op)(x, -1 if shape else 0)
        if op == "amax" and 0 in shape:
            return m.amax(x, 0) if len(shape) == 2 else x.sum()
        return getattr(m, op)(x)

    value = np.full(shape, 1.5)
    with np.errstate(all="ignore"):
        assert_same(fn, value)


# -- forward-mode AD through in-place ops and __setitem__: torch's tangent, or a coded refusal ----------

INPLACE = {
    "mul_": lambda m, y, x: y.mul_(2),
    "add_ a dual": lambda m, y, x: y.add_(x * x),
    "exp_": lambda m, y, x: y.exp_(),
    "clamp_": lambda m, y, x: y.clamp_(max=2.5),
    "masked_fill_": lambda m, y, x: y.masked_fill_(x > 2, 0.0),
    "copy_ a dual": lambda m, y, x: y.copy_(x * 3),
    "setitem a dual into a plain tensor": lambda m, y, x: y.zero_().__setitem__(slice(1, None), x[1:] * 3),
    "setitem a constant into a dual": lambda m, y, x: y.__setitem__(0, 7.0),
    "setitem a dual by a mask": lambda m, y, x: y.__setitem__(x > 1.5, x[x > 1.5] ** 2),
}


@pytest.mark.parametrize("case", sorted(INPLACE))
def test_forward_ad_through_inplace_ops(case):
    got = []
    for m in (st, torch):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(m.tensor([1.0, 2.0, 3.0], dtype=m.float64), m.tensor([1.0, -1.0, 0.5], dtype=m.float64))
            y = x.clone() if case != "setitem a dual into a plain tensor" else m.zeros(3, dtype=m.float64)
            INPLACE[case](m, y, x)
            t = fw.unpack_dual(y).tangent
            got.append((y.detach().numpy().copy(), np.zeros(3) if t is None else t.numpy().copy()))
    np.testing.assert_array_equal(got[0][0], got[1][0])
    np.testing.assert_array_equal(got[0][1], got[1][1])


def test_forward_ad_inplace_on_a_view_is_refused_with_a_code():
    fw = st.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(st.tensor([1.0, 2.0, 3.0]), st.ones(3))
        base = x.clone()
        with pytest.raises(RuntimeError) as e:
            base[1:].mul_(5)
        assert e.value.code == "autograd_forward_inplace_view_error"
        base.mul_(5)  # in place on the base itself is supported
        assert fw.unpack_dual(base).tangent.tolist() == [5.0, 5.0, 5.0]
    assert fw.unpack_dual(base).tangent is None  # the shared tangent left with its level
