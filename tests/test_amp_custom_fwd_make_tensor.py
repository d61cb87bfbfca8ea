"""torch.amp.custom_fwd / custom_bwd and torch.testing.make_tensor / assert_allclose against torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import shapetorch as st


def _function(lib, cast_inputs, seen):
    """A custom Function whose forward and backward record the autocast state and dtypes they ran with."""

    class MatmulSquare(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type="cpu", cast_inputs=cast_inputs)
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            seen["fwd"] = (lib.is_autocast_enabled("cpu"), str(a.dtype).split(".")[-1], str((a @ b).dtype).split(".")[-1])
            return a @ b

        @staticmethod
        @lib.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            seen["bwd"] = (lib.is_autocast_enabled("cpu"), str((g @ b.t()).dtype).split(".")[-1])
            return g @ b.t(), a.t() @ g

    return MatmulSquare


@pytest.mark.parametrize("autocast_on", [True, False])
@pytest.mark.parametrize("cast", [None, "float32"])
def test_custom_fwd_bwd_run_as_torchs(autocast_on, cast):
    x = np.random.default_rng(0).normal(size=(3, 3)).astype(np.float32)
    results = []
    for lib in (st, torch):
        seen: dict[str, tuple] = {}
        fn = _function(lib, None if cast is None else getattr(lib, cast), seen)
        a, b = lib.tensor(x, requires_grad=True), lib.tensor(x.T.copy(), requires_grad=True)
        with lib.autocast("cpu", enabled=autocast_on):
            out = fn.apply(a, b)
        out.float().sum().backward()
        results.append((seen["fwd"], seen["bwd"], str(out.dtype).split(".")[-1], str(a.grad.dtype).split(".")[-1]))
    assert results[0] == results[1]


def test_custom_fwd_checks_device_type_as_torch():
    for lib in (st, torch):
        with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
            lib.amp.custom_fwd(lambda ctx: None, device_type=1)
        with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
            lib.amp.custom_bwd(device_type=None)
        with pytest.raises(TypeError):
            lib.amp.custom_fwd(lambda ctx: None)  # device_type is required


DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_make_tensor_ranges_and_flags_as_torch(dtype):
    sd, td = getattr(st, dtype), getattr(torch, dtype)
    ours = st.testing.make_tensor(4, 6, dtype=sd, device="cpu", exclude_zero=True, noncontiguous=True)
    theirs = torch.testing.make_tensor(4, 6, dtype=td, device="cpu", exclude_zero=True, noncontiguous=True)
    assert tuple(ours.shape) == tuple(theirs.shape) == (4, 6)
    assert ours.stride() == theirs.stride() and ours.is_contiguous() == theirs.is_contiguous() is False
    assert ours.dtype == sd
    values = ours.numpy()
    if dtype == "bool":
        assert values.all()  # zeros (False) excluded
    elif dtype.startswith("complex"):
        assert (np.abs(values.real) <= 9).all() and (np.abs(values.imag) <= 9).all()
    else:
        lo = 0 if dtype == "uint8" else -9
        hi = 10 if dtype.startswith(("int", "uint")) else 9
        # a half-precision draw just under ``high`` may round up to it (torch's too)
        below = (values <= hi) if dtype in ("float16", "bfloat16") else (values < hi)
        assert (values >= lo).all() and below.all() and (values != 0).all()
    narrow = st.testing.make_tensor((50,), dtype=sd, device="cpu", low=1, high=3)
    if dtype not in ("bool", "complex64", "complex128"):
        v = narrow.numpy().astype(np.float64)
        assert v.min() >= 1 and (v.max() <= 3 if dtype in ("float16", "bfloat16") else v.max() < 3)
    floating = dtype.startswith(("float", "bfloat", "complex"))
    if floating:
        assert st.testing.make_tensor(2, dtype=sd, device="cpu", requires_grad=True).requires_grad
    else:
        for lib, d in ((st, sd), (torch, td)):
            with pytest.raises(ValueError, match="`requires_grad=True` is not supported"):
                lib.testing.make_tensor(2, dtype=d, device="cpu", requires_grad=True)


def test_make_tensor_refusals_as_torch():
    for lib in (st, torch):
        for kw, match in (({"low": 3, "high": 1}, "`low` must be less than `high`"),
                          ({"low": float("nan")}, "`low` and `high` cannot be NaN"),
                          ({"low": 300, "high": 400, "dtype": lib.int8}, "The value interval specified by"),
                          ({"noncontiguous": True, "memory_format": lib.channels_last}, "mutually exclusive")):
            with pytest.raises(ValueError, match=match):
                lib.testing.make_tensor(2, 3, **{"dtype": lib.float32, "device": "cpu", **kw})
        t = lib.testing.make_tensor(2, 3, 4, 5, dtype=lib.float32, device="cpu", memory_format=lib.channels_last)
        assert t.is_contiguous(memory_format=lib.channels_last)
        big = lib.testing.make_tensor(1000, dtype=lib.float16, device="cpu", low=-1e9, high=1e9)
        assert bool(big.isfinite().all())  # clamped to the dtype's finite range


def test_assert_allclose_is_deprecated_with_its_own_tolerances():
    cases = [([1.0, 2.0], [1.0, 2.00001], {}), ([1.0, 2.0], [1.0, 2.01], {}), ([1.0, float("nan")], [1.0, float("nan")], {}),
             ([1.0, float("nan")], [1.0, float("nan")], {"equal_nan": False}), ([1, 2], [1.0, 2.0], {}),
             ([1.0, 2.0], [1.1, 2.0], {"rtol": 0.2, "atol": 0.0})]
    for actual, expected, kw in cases:
        verdicts = []
        for lib in (st, torch):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                try:
                    lib.testing.assert_allclose(lib.tensor(actual), expected, **kw)
                    verdicts.append(True)
                except AssertionError:
                    verdicts.append(False)
            assert any(issubclass(x.category, FutureWarning) and "assert_allclose" in str(x.message) for x in w)
        assert verdicts[0] == verdicts[1], (actual, expected, kw)
