"""NaN and inf through the resampling ops on the CPU, against torch: a non-finite value reaches the outputs (and,
for the pooling gradients, the input elements) that torch's loops reach, and no other. Products with weight
matrices would spread one through their zero weights (``0 * inf`` is NaN)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
import torch

import shapetorch as st
from _oracle import assert_same

INF, NAN = float("inf"), float("nan")


def _holes(shape: tuple[int, ...], seed: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """A random input with a NaN, an inf and a -inf at random elements (some may land on the same one)."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=gen, dtype=dtype)
    flat = x.view(-1)
    for v in (NAN, INF, -INF):
        flat[int(torch.randint(flat.numel(), (1,), generator=gen))] = v
    return x


# -- grid_sample -----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("mode", "padding_mode", "align_corners"),
                         list(itertools.product(("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection"),
                                                (False, True))))
def test_grid_sample_reads_no_nonfinite_value_outside(mode: str, padding_mode: str, align_corners: bool) -> None:
    """Grid points on and near the lattice, inside and outside: a tap outside the input (read at a clamped
    element and masked) must not turn a NaN or inf there into NaN."""
    for seed in range(6):
        x = _holes((1, 2, 4, 5), seed)
        gen = torch.Generator().manual_seed(100 + seed)
        grid = torch.randint(-6, 7, (1, 3, 4, 2), generator=gen) / 4.0
        if seed % 2:
            grid = grid + torch.rand(grid.shape, generator=gen) * 0.1
        want = torch.nn.functional.grid_sample(x, grid, mode, padding_mode, align_corners)
        got = st.nn.functional.grid_sample(st.tensor(x.numpy()), st.tensor(grid.numpy()), mode, padding_mode,
                                           align_corners)
        assert_same(got, want)


def test_grid_sample_input_gradient_with_nonfinite_input() -> None:
    x = _holes((1, 2, 4, 4), 3)
    grid = torch.tensor([[[[-1.2, 0.9], [0.0, 1.25]], [[1.5, -0.25], [0.3, -0.7]]]])
    g = torch.randn(1, 2, 2, 2, generator=torch.Generator().manual_seed(0))
    xt = x.clone().requires_grad_()
    torch.nn.functional.grid_sample(xt, grid, align_corners=False).backward(g)
    xs = st.tensor(x.numpy(), requires_grad=True)
    st.nn.functional.grid_sample(xs, st.tensor(grid.numpy()), align_corners=False).backward(st.tensor(g.numpy()))
    assert_same(xs.grad, xt.grad)


# -- interpolate -----------------------------------------------------------------------------------------

_RESIZES = [
    ("linear", (7,), {"size": 5}), ("linear", (1,), {"size": 5}), ("linear", (3,), {"scale_factor": 3.0}),
    ("linear", (4,), {"size": 3}), ("linear", (4,), {"size": 4}),
    ("bilinear", (4, 4), {"size": (3, 3)}), ("bilinear", (3, 1), {"size": (3, 7)}),
    ("bilinear", (2, 3), {"scale_factor": 3.0}), ("bilinear", (4, 3), {"size": (4, 2)}),
    ("bilinear", (5, 5), {"scale_factor": 0.5}),
    ("trilinear", (3, 2, 2), {"size": (3, 5, 7)}), ("trilinear", (1, 4, 4), {"scale_factor": 3.0}),
]


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize(("mode", "spatial", "kwargs"), _RESIZES)
def test_interpolate_nonfinite_input(mode: str, spatial: tuple[int, ...], kwargs: dict[str, Any],
                                     align_corners: bool) -> None:
    """Including torch's float32 weights that come out 3e-8 where exact arithmetic gives 0 (inf, not NaN), and a
    dim of the same size (a copy: a NaN stays in its own row)."""
    for seed in range(4):
        x = _holes((2, 2, *spatial), seed)
        want = torch.nn.functional.interpolate(x, mode=mode, align_corners=align_corners, **kwargs)
        got = st.nn.functional.interpolate(st.tensor(x.numpy()), mode=mode, align_corners=align_corners, **kwargs)
        assert_same(got, want)


def test_upsample_bilinear_nan_input() -> None:
    """The fuzzer's case: a NaN in the first element of a 4x4 image made 3x3."""
    x = torch.randn(2, 3, 4, 4, generator=torch.Generator().manual_seed(0))
    x[0, 0, 0, 0] = NAN
    with pytest.warns(UserWarning):
        want = torch.nn.functional.upsample_bilinear(x, size=(3, 3))
    got = st.nn.functional.upsample_bilinear(st.tensor(x.numpy()), size=(3, 3))
    assert_same(got, want)


def test_interpolate_nonfinite_input_differentiates_the_finite_values() -> None:
    x = _holes((1, 1, 3, 4), 1)
    g = torch.randn(1, 1, 5, 6, generator=torch.Generator().manual_seed(0))
    xt = x.clone().requires_grad_()
    torch.nn.functional.interpolate(xt, size=(5, 6), mode="bilinear").backward(g)
    xs = st.tensor(x.numpy(), requires_grad=True)
    st.nn.functional.interpolate(xs, size=(5, 6), mode="bilinear").backward(st.tensor(g.numpy()))
    assert_same(xs.grad, xt.grad)


def test_linear_weights_are_torchs_in_float32() -> None:
    """The weights of a finite input, element by element, where float32 rounding decides whether one is 0."""
    for size, out in itertools.product(range(1, 7), range(1, 14)):
        eye = torch.eye(size).reshape(size, 1, size)
        for kwargs in ({"size": out}, {"scale_factor": out / size}):
            want = torch.nn.functional.interpolate(eye, mode="linear", **kwargs)
            got = st.nn.functional.interpolate(st.tensor(eye.numpy()), mode="linear", **kwargs)
            assert np.array_equal(got.numpy() != 0, want.numpy() != 0), (size, kwargs)
            assert_same(got, want)
