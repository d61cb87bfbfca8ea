"""Upsample, PixelShuffle/Unshuffle, the padding modules, CosineSimilarity and PairwiseDistance against torch:
values and input gradients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import shapetorch as st

LAYERS: dict[str, tuple[Callable[[Any], Any], tuple[int, ...]]] = {
    "Upsample_nearest": (lambda nn: nn.Upsample(scale_factor=2), (1, 2, 3, 3)),
    "Upsample_bilinear": (lambda nn: nn.Upsample(size=(5, 4), mode="bilinear", align_corners=False), (2, 1, 3, 3)),
    "Upsample_bilinear_ac": (lambda nn: nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True), (1, 1, 2, 3)),
    "PixelShuffle": (lambda nn: nn.PixelShuffle(2), (2, 8, 2, 3)),
    "PixelShuffle_unbatched": (lambda nn: nn.PixelShuffle(3), (9, 2, 2)),
    "PixelUnshuffle": (lambda nn: nn.PixelUnshuffle(2), (1, 2, 4, 6)),
    "ZeroPad2d": (lambda nn: nn.ZeroPad2d((1, 0, 2, 1)), (1, 2, 3, 3)),
    "ConstantPad1d": (lambda nn: nn.ConstantPad1d(2, 3.5), (2, 3, 4)),
    "ConstantPad3d": (lambda nn: nn.ConstantPad3d(1, -1.0), (1, 1, 2, 2, 2)),
    "ReflectionPad1d": (lambda nn: nn.ReflectionPad1d((2, 1)), (1, 2, 4)),
    "ReflectionPad2d": (lambda nn: nn.ReflectionPad2d(1), (1, 1, 3, 4)),
    "ReplicationPad1d": (lambda nn: nn.ReplicationPad1d(2), (1, 2, 3)),
    "ReplicationPad2d": (lambda nn: nn.ReplicationPad2d((1, 2, 0, 1)), (1, 2, 3, 3)),
    "CircularPad2d": (lambda nn: nn.CircularPad2d(1), (1, 1, 3, 3)),
}


@pytest.mark.parametrize("name", LAYERS)
def test_layer_matches_torch(name: str) -> None:
    make, shape = LAYERS[name]
    x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    xt, xs = torch.tensor(x, requires_grad=True), st.tensor(x, requires_grad=True)
    yt, ys = make(torch.nn)(xt), make(st.nn)(xs)
    np.testing.assert_allclose(ys.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)
    w = np.random.default_rng(1).normal(size=tuple(yt.shape)).astype(np.float32)
    (yt * torch.tensor(w)).sum().backward()
    (ys * st.tensor(w)).sum().backward()
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layer", ["CosineSimilarity", "PairwiseDistance"])
@pytest.mark.parametrize("kwargs", [{}, {"eps": 1e-3}])
def test_distances_match_torch(layer: str, kwargs: dict[str, Any]) -> None:
    a, b = (np.random.default_rng(s).normal(size=(4, 5)).astype(np.float32) for s in (0, 1))
    at, bt = torch.tensor(a, requires_grad=True), torch.tensor(b)
    as_, bs = st.tensor(a, requires_grad=True), st.tensor(b)
    yt, ys = getattr(torch.nn, layer)(**kwargs)(at, bt), getattr(st.nn, layer)(**kwargs)(as_, bs)
    np.testing.assert_allclose(ys.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)
    yt.sum().backward()
    ys.sum().backward()
    np.testing.assert_allclose(as_.grad.numpy(), at.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_pixel_shuffle_refuses_what_torch_refuses() -> None:
    with pytest.raises(RuntimeError):
        torch.nn.PixelShuffle(2)(torch.zeros(1, 3, 2, 2))
    with pytest.raises(RuntimeError) as e:
        st.nn.PixelShuffle(2)(st.zeros(1, 3, 2, 2))
    assert e.value.code == "pixel_shuffle_error_shape"
