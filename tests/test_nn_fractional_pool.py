"""Fractional max pooling against torch with the same random samples: outputs, indices and gradients in 2-D and
3-D (batched, unbatched, output_ratio, NaNs), the modules, and torch's refusals."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import shapetorch as st
import shapetorch.nn.functional as SF

CASES = [
    (2, (2, 3, 7, 9), 2, {"output_size": (3, 4)}, "float32"),
    (2, (1, 2, 10, 10), 3, {"output_size": 5}, "float64"),
    (2, (3, 11, 8), (2, 3), {"output_ratio": (0.5, 0.7)}, "float32"),  # unbatched
    (2, (2, 2, 5, 5), 2, {"output_size": (4, 4)}, "float64"),  # windows overlapping a lot
    (2, (1, 1, 6, 6), 2, {"output_size": (1, 1)}, "float32"),
    (3, (2, 3, 6, 7, 8), (2, 3, 2), {"output_size": (3, 4, 5)}, "float32"),
    (3, (2, 5, 6, 7), 2, {"output_ratio": 0.5}, "float64"),  # unbatched
]


@pytest.mark.parametrize(("nd", "shape", "kernel", "size", "dtype"), CASES)
def test_fractional_max_pool_as_torch(nd, shape, kernel, size, dtype):
    rng = np.random.default_rng(len(shape) + nd)
    x = rng.normal(size=shape).astype(dtype)
    if nd == 2 and shape[-1] == 5:
        x[0, 0, 1:3, 1:3] = np.nan  # NaNs: torch's kernel picks the last NaN of a window
    batch = 1 if len(shape) == nd + 1 else shape[0]
    samples = rng.uniform(size=(batch, shape[-nd - 1], nd)).astype(dtype)
    name = f"fractional_max_pool{nd}d"
    xs, xt = st.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ys, is_ = getattr(SF, name)(xs, kernel, return_indices=True, _random_samples=st.tensor(samples), **size)
    yt, it = getattr(TF, name)(xt, kernel, return_indices=True, _random_samples=torch.tensor(samples), **size)
    np.testing.assert_array_equal(is_.numpy(), it.numpy())
    np.testing.assert_array_equal(ys.detach().numpy(), yt.detach().numpy())
    assert is_.dtype == st.int64 and ys.dtype == getattr(st, dtype)
    cot = rng.normal(size=tuple(yt.shape)).astype(dtype)
    ys.backward(st.tensor(cot))
    yt.backward(torch.tensor(cot))
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=1e-6, atol=1e-6)
    w_s, w_t = getattr(SF, f"{name}_with_indices"), getattr(TF, f"{name}_with_indices")
    a = w_s(st.tensor(x), kernel, _random_samples=st.tensor(samples), **size)
    b = w_t(torch.tensor(x), kernel, _random_samples=torch.tensor(samples), **size)
    np.testing.assert_array_equal(a[1].numpy(), b[1].numpy())


@pytest.mark.parametrize("nd", [2, 3])
def test_fractional_max_pool_modules_as_torch(nd):
    shape = (2, 3) + (6,) * nd
    x = np.random.default_rng(nd).normal(size=shape).astype(np.float32)
    samples = np.random.default_rng(9).uniform(size=(2, 3, nd)).astype(np.float32)
    cls = f"FractionalMaxPool{nd}d"
    sm = getattr(st.nn, cls)(2, output_size=3, return_indices=True, _random_samples=st.tensor(samples))
    tm = getattr(torch.nn, cls)(2, output_size=3, return_indices=True, _random_samples=torch.tensor(samples))
    assert list(sm.state_dict()) == list(tm.state_dict()) == ["_random_samples"]
    (ys, is_), (yt, it) = sm(st.tensor(x)), tm(torch.tensor(x))
    np.testing.assert_array_equal(is_.numpy(), it.numpy())
    np.testing.assert_array_equal(ys.numpy(), yt.numpy())
    assert repr(sm) == repr(tm)
    assert list(getattr(st.nn, cls)(2, output_ratio=0.5).state_dict()) == []
    # without samples: each output is the maximum of a window of the input that holds it
    y, idx = getattr(st.nn, cls)(2, output_ratio=0.5, return_indices=True)(st.tensor(x))
    assert tuple(y.shape) == (2, 3) + (3,) * nd
    np.testing.assert_array_equal(y.numpy(), np.take_along_axis(x.reshape(2, 3, -1), idx.numpy().reshape(2, 3, -1),
                                                                -1).reshape(y.shape))


def test_fractional_max_pool_refusals_as_torch():
    x = np.zeros((1, 1, 7, 7), np.float32)
    for lib, F in ((st, SF), (torch, TF)):
        with pytest.raises(ValueError, match="requires specifying either an output_size or an output_ratio"):
            F.fractional_max_pool2d(lib.tensor(x), 2)
        with pytest.raises(RuntimeError, match="pool height 5 too large relative to input height 7"):
            F.fractional_max_pool2d(lib.tensor(x), 5, output_size=(4, 4))
        with pytest.raises(RuntimeError, match="Expect _random_samples.size\\(1\\) equals to input channel size"):
            F.fractional_max_pool2d(lib.tensor(x), 2, output_size=3, _random_samples=lib.rand(1, 2, 2))
        with pytest.raises(ValueError, match="output_ratio must be between 0 and 1"):
            lib.nn.FractionalMaxPool2d(2, output_ratio=1.5)
        with pytest.raises(ValueError, match="only one of output_size and output_ratio may be specified"):
            lib.nn.FractionalMaxPool3d(2, output_size=2, output_ratio=0.5)
        with pytest.raises(ValueError, match="requires specifying either an output size, or a pooling ratio"):
            lib.nn.FractionalMaxPool2d(2)


@pytest.mark.parametrize("nd", [2, 3])
def test_fractional_max_pool_too_few_dims_as_torch(nd):
    name = f"fractional_max_pool{nd}d"
    for lib, F in ((st, SF), (torch, TF)):
        x = lib.zeros(*(7,) * nd)
        with pytest.raises(RuntimeError, match=rf"Expected {nd + 1}D or {nd + 2}D tensor, but got: \[7"):
            getattr(F, name)(x, 2, output_size=2, _random_samples=lib.rand(1, 1, nd))
        with pytest.raises(IndexError):
            getattr(F, name)(x, 2, output_size=2)
