"""``F.unfold`` / ``F.fold`` and ``nn.Unfold`` / ``nn.Fold`` against torch: values, gradients (and the gradient of
the gradient), dtypes, shapes over drawn sizes and arguments, and torch's verdict on bad input."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as hs

import shapetorch as st

TF, SF = torch.nn.functional, st.nn.functional


def _pair(draw: Any, lo: int, hi: int) -> Any:
    a, b = draw(hs.integers(lo, hi)), draw(hs.integers(lo, hi))
    return a if draw(hs.booleans()) and a == b else (a, b)


@hs.composite
def _case(draw: Any) -> tuple[tuple[int, ...], dict[str, Any]]:
    k, d, p, s = _pair(draw, 1, 3), _pair(draw, 1, 2), _pair(draw, 0, 2), _pair(draw, 1, 3)
    two = [(v, v) if isinstance(v, int) else v for v in (k, d, p)]
    # a spatial size at least as large as the dilated kernel minus the padding, so there is one block
    hw = [max(1, two[1][i] * (two[0][i] - 1) + 1 - 2 * two[2][i]) + draw(hs.integers(0, 4)) for i in range(2)]
    batch = [draw(hs.integers(1, 2))] if draw(hs.booleans()) else []
    shape = (*batch, draw(hs.integers(1, 3)), *hw)
    return shape, {"kernel_size": k, "dilation": d, "padding": p, "stride": s}


def _close(a: Any, b: Any) -> None:
    assert tuple(a.shape) == tuple(b.shape) and str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(_case())
def test_unfold_then_fold_as_torch_with_gradients(case: tuple[tuple[int, ...], dict[str, Any]]) -> None:
    shape, kw = case
    a = np.random.default_rng(len(shape)).standard_normal(shape)
    xt, xs = torch.tensor(a, requires_grad=True), st.tensor(a, requires_grad=True)
    ut, us = TF.unfold(xt, **kw), SF.unfold(xs, **kw)
    _close(us, ut)
    out_size = shape[-2:]
    ft, fs = TF.fold(ut * ut, out_size, **kw), SF.fold(us * us, out_size, **kw)
    _close(fs, ft)
    w = np.random.default_rng(1).standard_normal(tuple(ft.shape))
    gt, = torch.autograd.grad((ft * torch.tensor(w)).sum(), xt, create_graph=True)
    gs, = st.autograd.grad((fs * st.tensor(w)).sum(), xs, create_graph=True)
    _close(gs, gt)
    (ggt,), (ggs,) = torch.autograd.grad(gt.pow(2).sum(), xt), st.autograd.grad(gs.pow(2).sum(), xs)
    _close(ggs, ggt)


@pytest.mark.parametrize("dtype", ["float32", "float16", "complex64", "bool"])
def test_unfold_dtypes_torch_accepts(dtype: str) -> None:
    a = np.arange(18).reshape(1, 2, 3, 3) % 3
    t = torch.tensor(a).to(getattr(torch, dtype))
    s = st.tensor(a).to(getattr(st, dtype))
    _close(SF.unfold(s, 2, padding=1), TF.unfold(t, 2, padding=1))
    if dtype != "bool":
        _close(SF.fold(SF.unfold(s, 2), (3, 3), 2), TF.fold(TF.unfold(t, 2), (3, 3), 2))


def test_modules_and_repr() -> None:
    a = np.random.default_rng(0).standard_normal((2, 3, 6, 5)).astype(np.float32)
    for args in [((2, 3),), ((3,), {"stride": 2, "padding": 1})]:
        kwargs = args[1] if len(args) > 1 else {}
        mt, ms = torch.nn.Unfold(*args[0], **kwargs), st.nn.Unfold(*args[0], **kwargs)
        assert repr(ms) == repr(mt)
        ut, us = mt(torch.tensor(a)), ms(st.tensor(a))
        _close(us, ut)
        ft, fs = torch.nn.Fold((6, 5), *args[0], **kwargs), st.nn.Fold((6, 5), *args[0], **kwargs)
        assert repr(fs) == repr(ft)
        _close(fs(us), ft(ut))


BAD = {
    "unfold_2d_input": lambda F, lib: F.unfold(lib.ones(3, 4), 2),
    "unfold_1d_input": lambda F, lib: F.unfold(lib.ones(3), 2),
    "unfold_5d_input": lambda F, lib: F.unfold(lib.ones(1, 1, 3, 4, 4), 2),
    "unfold_zero_channels": lambda F, lib: F.unfold(lib.ones(1, 0, 3, 3), 2),
    "unfold_kernel_too_large": lambda F, lib: F.unfold(lib.ones(1, 1, 3, 3), 4),
    "unfold_kernel_zero": lambda F, lib: F.unfold(lib.ones(1, 1, 3, 3), 0),
    "unfold_stride_zero": lambda F, lib: F.unfold(lib.ones(1, 1, 3, 3), 2, stride=0),
    "unfold_dilation_zero": lambda F, lib: F.unfold(lib.ones(1, 1, 3, 3), 2, dilation=0),
    "unfold_negative_padding": lambda F, lib: F.unfold(lib.ones(1, 1, 3, 3), 2, padding=-1),
    "unfold_three_kernel_sizes": lambda F, lib: F.unfold(lib.ones(1, 1, 3, 3), (2, 2, 2)),
    "unfold_float_kernel": lambda F, lib: F.unfold(lib.ones(1, 1, 3, 3), 2.5),
    "unfold_int64": lambda F, lib: F.unfold(lib.ones(1, 1, 3, 3, dtype=lib.int64), 2),
    "fold_4d_input": lambda F, lib: F.fold(lib.ones(1, 4, 4, 1), (3, 3), 2),
    "fold_1d_input": lambda F, lib: F.fold(lib.ones(4), (3, 3), 2),
    "fold_blocks_mismatch": lambda F, lib: F.fold(lib.ones(1, 4, 5), (3, 3), 2),
    "fold_channels_not_divisible": lambda F, lib: F.fold(lib.ones(1, 5, 4), (3, 3), 2),
    "fold_output_too_small": lambda F, lib: F.fold(lib.ones(1, 4, 4), (1, 1), 2),
    "fold_stride_zero": lambda F, lib: F.fold(lib.ones(1, 4, 4), 3, 2, stride=0),
    "fold_three_output_sizes": lambda F, lib: F.fold(lib.ones(1, 4, 4), (3, 3, 3), 2),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_gets_torchs_verdict(name: str) -> None:
    with pytest.raises(Exception) as theirs:
        BAD[name](TF, torch)
    with pytest.raises(Exception) as ours:
        BAD[name](SF, st)
    builtin = next(c for c in type(theirs.value).__mro__ if c.__module__ == "builtins")
    assert isinstance(ours.value, builtin), f"{type(ours.value).__mro__} is not a {builtin}"
    code = {"unfold_2d_input": "dimension_error_out_of_range", "unfold_1d_input": "dimension_error_out_of_range",
            "unfold_float_kernel": "argument_error_refused",
            "unfold_int64": "method_dtype_not_supported_error"}.get(name, "conv_error_invalid_argument")
    assert getattr(ours.value, "code", None) == code
    if code == "conv_error_invalid_argument":  # the message is torch's own words
        assert str(theirs.value) in str(ours.value)
