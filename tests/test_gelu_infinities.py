"""gelu at the infinities and NaN, value and gradient, against torch (both approximations, float32 and float64).

One deliberate difference: torch's float32 exact gelu gives NaN at +inf in its vectorised CPU path (any tensor of
more than one element) but +inf in its scalar path (one element) and in float64; shapetorch gives the limit, +inf,
everywhere (docs/compatibility.md)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import shapetorch as st

SPECIAL = [float("inf"), -float("inf"), float("nan"), 0.5, -3.0]


def _gelu(lib, values, dtype, approximate):
    x = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
    y = lib.nn.functional.gelu(x, approximate=approximate)
    y.sum().backward()
    return y.detach().numpy(), x.grad.numpy()


def _torch_vectorised_float32_quirk(dtype: str, approximate: str) -> bool:
    return dtype == "float32" and approximate == "none"


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gelu_at_infinities_matches_torch(dtype: str, approximate: str) -> None:
    ours_y, ours_g = _gelu(st, SPECIAL, dtype, approximate)
    theirs_y, theirs_g = _gelu(torch, SPECIAL, dtype, approximate)
    if _torch_vectorised_float32_quirk(dtype, approximate):
        assert np.isnan(theirs_y[0])  # torch's vectorised path; its one-element path gives the limit:
        assert _gelu(torch, SPECIAL[:1], dtype, approximate)[0][0] == np.inf
        assert ours_y[0] == np.inf
        ours_y, theirs_y = ours_y[1:], theirs_y[1:]
    np.testing.assert_allclose(ours_y, theirs_y, rtol=1e-4, atol=1e-6, equal_nan=True)
    np.testing.assert_allclose(ours_g, theirs_g, rtol=1e-4, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gelu_of_one_infinite_element_matches_torch(dtype: str, approximate: str) -> None:
    for v in SPECIAL[:3]:
        ours = _gelu(st, [v], dtype, approximate)
        theirs = _gelu(torch, [v], dtype, approximate)
        for a, b in zip(ours, theirs):
            np.testing.assert_array_equal(a, b)
