"""Binary/ternary arithmetic, comparisons and predicates, frombuffer / tril_indices, multinomial / poisson,
the async variants and the torch-namespace activations, against torch: OpInfo samples, every dtype pair's
accept/reject and result dtype, broadcasting (hypothesis), gradients and forward AD."""

from __future__ import annotations

import asyncio
import itertools

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw
import torch.nn.functional as TF
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
import shapetorch.autograd.forward_ad as sfw
from _opinfo_elementwise import check_samples, grad_samples, supported
from _oracle import DTYPES, Same, broadcast_pairs, compare, fast, make, seeds, values

BINARY = ["bitwise_left_shift", "bitwise_right_shift", "complex", "copysign", "float_power", "fmax", "fmin", "gcd",
          "heaviside", "hypot", "lcm", "ldexp", "logaddexp", "logaddexp2", "nextafter", "polar", "xlogy"]
TERNARY = ["addcdiv", "addcmul", "lerp"]
LOGICAL = ["allclose", "equal", "isclose", "isin"]
DIFFERENTIABLE = ["addcdiv", "addcmul", "complex", "copysign", "float_power", "fmax", "fmin", "hypot", "ldexp", "lerp",
                  "logaddexp", "logaddexp2", "nextafter", "polar", "xlogy"]
# the OpInfo samples in a representative dtype of each kind (every dtype's accept/reject is tested below)
OPINFO_DTYPES = ["bool", "uint8", "int32", "float16", "bfloat16", "float32", "float64", "complex128"]
CODES = ("method_dtype_not_supported_error", "dtype_error_mismatch", "argument_error_invalid",
         "broadcast_error_incompatible_dimensions", "div_error_integer_division_by_zero", "dtype_error_cannot_cast")


@pytest.mark.parametrize("name", BINARY + TERNARY + LOGICAL + ["tril_indices", "triu_indices"])
def test_opinfo_samples_every_supported_dtype(name):
    ran = sum(check_samples(name, d) for d in OPINFO_DTYPES if d in supported(name))
    assert ran > 0


_PAIRS = [(a, b) for a, b in itertools.product(DTYPES, DTYPES) if a == b or {a, b} & {"float32", "int64", "bool"}]


@pytest.mark.parametrize("name", BINARY + ["isclose", "isin", "equal", "allclose"])
def test_dtype_pairs_accepted_or_rejected_as_torch(name):
    bad = []
    for da, db in _PAIRS:
        a, b = values((2, 3), da, 1, positive=True), values((3,), db, 2, positive=True)
        if name in ("bitwise_left_shift", "bitwise_right_shift"):
            b = np.abs(b) % 9 if db != "bool" else b
        try:
            # ldexp's 2 ** other in float32: torch's pow rounds 1 ulp apart from NumPy's
            tol = (1e-6, 1e-6) if name == "ldexp" and "float32" in (da, db) else None
            compare(lambda lib, x, y: getattr(lib, name)(x, y), (a, da), (b, db), codes=CODES, tol=tol)
        except (AssertionError, pytest.fail.Exception) as e:
            bad.append(f"{da},{db}: {str(e).splitlines()[0][:200]}")
    assert not bad, "\n".join(bad[:15])


@pytest.mark.parametrize("name", TERNARY)
def test_ternary_dtypes_as_torch(name):
    for dtype in DTYPES:
        xs = [(values((2, 3), dtype, i, positive=True), dtype) for i in range(3)]
        compare(lambda lib, a, b, c: getattr(lib, name)(a, b, c), *xs, codes=CODES)
    compare(lambda lib, a, b, c: getattr(lib, name)(a, b, c), (values((3,), "float32"), "float32"),
            (values((3,), "float64"), "float64"), (values((3,), "float32", 1, positive=True), "float32"), codes=CODES)
    if name != "lerp":
        for dtype, value in (("int64", 2), ("int64", 0.5), ("float32", 0.5), ("float64", -3)):
            xs = [(values((2, 3), dtype, i, positive=True), dtype) for i in range(3)]
            compare(lambda lib, a, b, c: getattr(lib, name)(a, b, c, value=value), *xs, codes=CODES)


@fast(40)
@given(pair=broadcast_pairs(), seed=seeds,
       name=hs.sampled_from(["hypot", "fmax", "copysign", "xlogy", "logaddexp", "nextafter", "lerp", "addcmul",
                             "isclose", "float_power", "heaviside"]))
def test_broadcasting_as_torch(pair, seed, name):
    a, b = values(pair[0], "float64", seed), values(pair[1], "float64", seed + 1)
    fns = {"lerp": lambda lib, x, y: lib.lerp(x, y, 0.3), "addcmul": lambda lib, x, y: lib.addcmul(x, y, y, value=2)}
    fn = fns.get(name, lambda lib, x, y: getattr(lib, name)(x, y))
    compare(fn, (a, "float64"), (b, "float64"), codes="broadcast_error_incompatible_dimensions")


@pytest.mark.parametrize("name", ["copysign", "float_power", "hypot", "ldexp", "xlogy", "gcd", "bitwise_left_shift",
                                  "heaviside", "lerp", "addcmul", "addcdiv", "nextafter"])
def test_method_inplace_and_out(name):
    dtype = "int64" if name in ("gcd", "bitwise_left_shift") else "float64"
    x, y = values((2, 3), dtype, 1, positive=True), values((2, 3), dtype, 2, positive=True)
    extra = {"lerp": (Same(0.25),), "addcmul": ((x, dtype),), "addcdiv": ((x, dtype),)}.get(name, ())
    compare(lambda lib, a, b, *r: getattr(a, name)(b, *r), (x, dtype), (y, dtype), *extra)
    compare(lambda lib, a, b, *r: getattr(a.clone(), name + "_")(b, *r), (x, dtype), (y, dtype), *extra, codes=CODES)
    compare(lambda lib, a, b, *r: getattr(lib, name)(a, b, *r, out=lib.empty_like(a)), (x, dtype), (y, dtype), *extra)


def test_scalars_and_python_operators():
    x, tx = make(values((4,), "int32", 3), "int32")
    compare(lambda lib, a: a << 2, (x, tx))
    compare(lambda lib, a: a >> 1, (x, tx))
    compare(lambda lib, a: 3 << a.abs(), (x, tx))
    compare(lambda lib, a: lib.float_power(a, 2), (x, tx))
    compare(lambda lib, a: lib.float_power(2, a), (x, tx))
    compare(lambda lib, a: lib.float_power(a, 1j), (x, tx))
    compare(lambda lib, a: lib.xlogy(2.0, a.abs()), (x, tx))
    compare(lambda lib, a: lib.xlogy(a, 3), (x, tx))
    compare(lambda lib, a: a.float().float_power_(2), (x, tx), codes="dtype_error_mismatch")
    compare(lambda lib, a: a.double().float_power_(2), (x, tx))


def test_bool_pow_as_torch():
    """A Python bool exponent works on a bool tensor in torch (its Scalar overload); a bool tensor
    exponent is refused, and an int exponent promotes to int64."""
    b = (np.array([True, False, True]), "bool")
    for exponent in (True, False, 2, 0, 2.5):
        compare(lambda lib, a: a ** exponent, b)
        compare(lambda lib, a: a.pow(exponent), b)
    compare(lambda lib, a: a.clone().pow_(False), b)
    compare(lambda lib, a, e: a ** e, b, b, codes="method_dtype_not_supported_error")


def test_bool_subtraction_raises_torchs_runtime_error():
    """Subtraction with a bool operand (tensor or Python bool) is torch's plain RuntimeError, not a
    NotImplementedError as a missing kernel, with its message pointing to ``~`` or ``^``."""
    def forms(lib):
        x, b, i = lib.tensor([1.0, 2.0]), lib.tensor([True, False]), lib.tensor([1, 2])
        return [lambda: True - x, lambda: x - True, lambda: False - b, lambda: b - False, lambda: b - b,
                lambda: b - 1.5, lambda: True - i, lambda: x - b, lambda: lib.sub(b, b), lambda: lib.sub(x, True),
                lambda: lib.rsub(b, b), lambda: lib.rsub(x, True), lambda: b.clone().sub_(b),
                lambda: x.clone().__isub__(True)]

    for theirs, ours in zip(forms(torch), forms(st), strict=True):
        with pytest.raises(RuntimeError) as want:
            theirs()
        with pytest.raises(st.ShapetorchError) as got:
            ours()
        assert type(want.value) is RuntimeError and not isinstance(got.value, NotImplementedError)
        assert isinstance(got.value, RuntimeError) and got.value.code == "sub_error_bool"
        assert str(got.value).endswith(str(want.value)), (str(got.value), str(want.value))


def test_alpha_of_add_and_sub_checked_as_torch():
    """alpha must fit the operands' result dtype: a bool alpha only for bool results, a float one not for
    integers, a complex one only for complex results (a RuntimeError in torch); otherwise the values agree."""
    cases = [("float32", True), ("float32", 1j), ("int64", 2.0), ("int64", True), ("bool", 1.5), ("bool", True),
             ("bool", 2), ("float32", 0.5), ("int64", 3), ("complex64", 1j), ("float32", np.float64(2.0))]
    for dtype, alpha in cases:
        a = (values((3,), dtype, 1), dtype)
        for fn in (lambda lib, x: lib.add(x, x, alpha=alpha), lambda lib, x: lib.sub(x, 1, alpha=alpha),
                   lambda lib, x: lib.rsub(x, x, alpha=alpha), lambda lib, x: x.clone().add_(x, alpha=alpha)):
            got = compare(fn, a, codes=("alpha_error_type", "sub_error_bool"))
            if isinstance(got, st.ShapetorchError):
                assert isinstance(got, RuntimeError) and not isinstance(got, NotImplementedError)


def test_shift_edges_as_torch():
    for dtype in ("uint8", "int8", "int16", "int32", "int64"):
        a = np.array([1, 5, 100, 127, 0, 3], dtype=np.int64)
        if dtype != "uint8":
            a = np.concatenate([a, -a])
        s = np.array([0, 1, 7, 8, 9, 70] * (len(a) // 6), dtype=np.int64)
        for name in ("bitwise_left_shift", "bitwise_right_shift"):
            compare(lambda lib, x, y: getattr(lib, name)(x, y), (a, dtype), (s, dtype))


def test_special_values_as_torch():
    v = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-310, 2.5])
    a, b = np.meshgrid(v, v)
    for name in ("copysign", "fmax", "fmin", "hypot", "logaddexp", "logaddexp2", "nextafter", "xlogy", "heaviside"):
        for dtype in ("float64", "float32", "float16", "bfloat16"):
            y = np.nan_to_num(b, nan=3.0) if name == "copysign" else b  # torch's half NaNs carry a sign bit
            compare(lambda lib, x, y: getattr(lib, name)(x, y), (a, dtype), (y, dtype))
    compare(lambda lib, x, y: lib.isclose(x, y, equal_nan=True), (a, "float64"), (b, "float64"))
    compare(lambda lib, x, y: lib.isclose(x, y, rtol=0, atol=0), (a, "float64"), (b, "float64"))
    compare(lambda lib, x, y: lib.isclose(x, y, rtol=-1.0), (a, "float64"), (b, "float64"), codes=CODES)
    compare(lambda lib, x, y: lib.complex(x, y), (a, "float64"), (b, "float64"))
    compare(lambda lib, x, y: lib.polar(x.abs(), y), (a, "float32"), (b, "float32"))


def test_equal_allclose_isin_values():
    x = values((3, 4), "float64", 5)
    compare(lambda lib, a, b: lib.equal(a, b), (x, "float64"), (x.copy(), "float64"))
    compare(lambda lib, a, b: lib.equal(a, b), (x, "float64"), (x[:2], "float64"))
    compare(lambda lib, a, b: lib.equal(a, b), (x, "float64"), (x.astype(np.float32), "float32"))
    compare(lambda lib, a, b: lib.allclose(a, b), (x, "float64"), (x + 1e-9, "float64"))
    compare(lambda lib, a, b: lib.allclose(a, b, atol=0.1), (x, "float64"), (x + 0.05, "float64"))
    ints = np.array([[1, 2, 3], [4, 5, 6]])
    compare(lambda lib, a, b: lib.isin(a, b), (ints, "int64"), (np.array([2, 6, 9]), "int64"))
    compare(lambda lib, a, b: lib.isin(a, b, invert=True), (ints, "int64"), (np.array([2.0, 6.5]), "float32"))
    compare(lambda lib, a: lib.isin(a, 5), (ints, "int64"))
    compare(lambda lib, a: lib.isin(3, a), (ints, "int64"))


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_opinfo_gradients_match_torch(name):
    assert grad_samples(name) > 0


@pytest.mark.parametrize("name", ["copysign", "fmax", "fmin", "hypot", "logaddexp", "logaddexp2", "xlogy", "ldexp",
                                  "lerp", "addcmul", "addcdiv", "float_power", "nextafter"])
def test_gradcheck_and_forward_ad(name):
    fns = {"lerp": lambda lib, a, b: lib.lerp(a, b, a.sigmoid()),
           "addcmul": lambda lib, a, b: lib.addcmul(a, b, a, value=0.5),
           "addcdiv": lambda lib, a, b: lib.addcdiv(a, b, a, value=2), "xlogy": lambda lib, a, b: lib.xlogy(a, b.abs()),
           "float_power": lambda lib, a, b: lib.float_power(a.abs(), b), "ldexp": lambda lib, a, b: lib.ldexp(a, b)}
    fn = fns.get(name, lambda lib, a, b: getattr(lib, name)(a, b))
    xa, xb = np.array([0.3, -1.7, 2.9, 0.5]), np.array([1.2, 0.4, -0.8, 3.1])
    a = st.tensor(xa, requires_grad=True)
    b = st.tensor(xb, requires_grad=name != "ldexp")
    assert st.autograd.gradcheck(lambda x, y: fn(st, x, y), (a, b), check_forward_ad=True)
    ta, tb = np.array([0.5, -1.0, 2.0, 1.5]), np.array([1.0, 0.25, -2.0, 0.5])
    with sfw.dual_level():
        ours = sfw.unpack_dual(fn(st, sfw.make_dual(st.tensor(xa), st.tensor(ta)),
                                  sfw.make_dual(st.tensor(xb), st.tensor(tb)))).tangent
    with tfw.dual_level():
        theirs = tfw.unpack_dual(fn(torch, tfw.make_dual(torch.tensor(xa), torch.tensor(ta)),
                                    tfw.make_dual(torch.tensor(xb), torch.tensor(tb)))).tangent
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-9, atol=1e-12)


def test_heaviside_has_no_derivative_as_torch():
    x = st.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    y = st.heaviside(x, st.tensor([0.5]))
    with pytest.raises(st.ShapetorchError):
        y.sum().backward()


# -- creation ------------------------------------------------------------------------------------------------

def test_frombuffer_shares_memory_and_checks_like_torch():
    for kw in ({}, {"count": 1, "offset": 4}, {"offset": 2, "count": -1}):
        dt = "int16" if kw.get("offset") == 2 else "int32"
        raw = bytearray(np.arange(4, dtype=np.int32).tobytes())
        compare(lambda lib: lib.frombuffer(bytearray(raw), dtype=getattr(lib, dt), **kw))
    for kw in ({"count": 5}, {"offset": 99}, {"offset": 3}, {"count": 0}):
        raw = bytearray(np.arange(4, dtype=np.int32).tobytes())
        compare(lambda lib: lib.frombuffer(bytearray(raw), dtype=lib.int32, **kw), plain=(ValueError,))
    buf = bytearray(np.arange(3, dtype=np.float32).tobytes())
    t = st.frombuffer(buf, dtype=st.float32)
    buf[0:4] = np.float32(7).tobytes()
    assert t.tolist() == [7.0, 1.0, 2.0]


@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
def test_tri_indices(name):
    for r, c, off in itertools.product((0, 1, 3, 5), (0, 2, 4), (-2, 0, 1, 7)):
        compare(lambda lib: getattr(lib, name)(r, c, off))
    compare(lambda lib: getattr(lib, name)(3, 3, dtype=lib.int32))
    compare(lambda lib: getattr(lib, name)(3, 3, dtype=lib.float32), codes=CODES, plain=(NotImplementedError,))
    with pytest.raises(RuntimeError):
        getattr(st, name)(-1, 3)


# -- random --------------------------------------------------------------------------------------------------

def test_multinomial_distribution_and_shapes():
    g = st.Generator().manual_seed(3)
    p = st.tensor([0.1, 0.0, 0.6, 0.3])
    draws = st.multinomial(p, 20000, True, generator=g)
    assert draws.dtype is st.int64 and tuple(draws.shape) == (20000,)
    freq = np.bincount(draws.numpy(), minlength=4) / 20000
    np.testing.assert_allclose(freq, [0.1, 0.0, 0.6, 0.3], atol=0.02)
    rows = st.multinomial(st.tensor([[1.0, 2.0, 0.0], [0.0, 0.0, 5.0]]), 3, generator=g)
    assert tuple(rows.shape) == (2, 3)
    for row in rows.numpy():
        assert sorted(row.tolist()) == [0, 1, 2]
    assert rows.numpy()[0, 2] == 2 and rows.numpy()[1, 0] == 2  # zero weights last, as torch
    first = [st.multinomial(p, 2, generator=st.Generator().manual_seed(9)).tolist() for _ in range(2)]
    assert first[0] == first[1]
    assert st.tensor([1.0, 1.0]).multinomial(1).shape == (1,)


def test_multinomial_errors_as_torch():
    cases = [([0.0, 0.0], 1, False), ([1.0, -1.0], 1, False), ([1.0, float("nan")], 1, True), ([1.0, 0.0], 3, False),
             ([1.0, 1.0], 0, True)]
    for probs, n, repl in cases:
        compare(lambda lib, p: lib.multinomial(p, n, repl), (np.array(probs), "float32"), codes=CODES)
    compare(lambda lib, p: lib.multinomial(p, 1), (np.ones((2, 2, 2)), "float32"), codes=CODES)
    compare(lambda lib, p: lib.multinomial(p, 1), (np.ones(3), "int64"), codes=CODES)


def test_async_variants_await_the_sync_results():
    x = st.tensor([1.0, -2.0, 3.0])
    assert asyncio.run(st.masked_select_async(x, x > 0)).tolist() == [1.0, 3.0]
    a = asyncio.run(st.multinomial_async(st.tensor([0.0, 1.0]), 1, generator=st.Generator().manual_seed(0)))
    assert a.tolist() == [1]


def test_poisson():
    rates = st.tensor([0.0, 1.0, 50.0], dtype=st.float64, requires_grad=True)
    draws = st.poisson(rates.expand(4000, 3), generator=st.Generator().manual_seed(1))
    assert draws.dtype is st.float64 and draws.detach().numpy()[:, 0].max() == 0
    np.testing.assert_allclose(draws.detach().numpy().mean(0), [0.0, 1.0, 50.0], rtol=0.05, atol=0.05)
    draws.sum().backward()
    assert rates.grad.tolist() == [0.0, 0.0, 0.0]  # PoissonBackward0
    compare(lambda lib, r: lib.poisson(r), (np.array([1, 2]), "int64"), codes=CODES, plain=(NotImplementedError,))
    compare(lambda lib, r: lib.poisson(r), (np.array([-1.0]), "float32"), codes=CODES)


# -- activations in the torch namespace -------------------------------------------------------------------------

def test_activation_leftovers_as_torch():
    x = values((3, 4), "float64", 8)
    compare(lambda lib, a: lib.rrelu(a), (x, "float64"))
    compare(lambda lib, a: lib.rrelu(a, 0.1, 0.2), (x, "float64"))
    compare(lambda lib, a: lib.dropout(a, 0.5, False), (x, "float64"))
    for name, args in (("rrelu_", ()), ("threshold_", (0.1, 9.0)), ("elu_", ()), ("hardtanh_", (-0.5, 0.5)),
                       ("leaky_relu_", (0.2,))):
        torch_fn = getattr(torch, name, None) or getattr(TF, name)
        for dtype in DTYPES:
            arr = values((3, 4), dtype, 8)

            def fn(lib, a, name=name, args=args, torch_fn=torch_fn):
                return (torch_fn if lib is torch else getattr(st, name))(a.clone(), *args)

            compare(fn, (arr, dtype), codes=CODES)


def test_rrelu_training_slopes_and_gradient():
    x = st.tensor(np.linspace(-3, 3, 400), requires_grad=True)
    y = st.rrelu(x, 0.1, 0.3, training=True, generator=st.Generator().manual_seed(2))
    neg = x.detach().numpy() < 0
    slope = y.detach().numpy()[neg] / x.detach().numpy()[neg]
    assert slope.min() >= 0.1 and slope.max() <= 0.3 and slope.std() > 0.03
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy()[neg], slope)
    np.testing.assert_array_equal(x.grad.numpy()[~neg], 1.0)


def test_dropout_training_scales_kept_values():
    x = st.ones(10000, dtype=st.float64)
    y = st.dropout(x, 0.25, True).numpy()
    assert set(np.unique(y).tolist()) <= {0.0, 1 / 0.75}
    assert abs((y == 0).mean() - 0.25) < 0.03
