"""The WebGPU kernels' per-signature caches (launch plans, view layouts, contiguity) never serve a stale launch:
the same op with other shapes, strides, dtypes, views and offsets, in-place writes to a planned result, a buffer
freed and handed out again, and a device error between two calls all give torch's values and gradients.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import shapetorch as st
from test_webgpu import DEV, data, run, webgpu  # noqa: F401  (the module fixture skips or fails without WebGPU)


def _slice_grad(x: np.ndarray, g: st.Tensor, index: tuple) -> np.ndarray:
    """The gradient of ``x[index]`` for an incoming gradient ``g`` (a webgpu tensor of any layout)."""
    X = st.tensor(x, device=DEV, requires_grad=True)
    (gx,) = st.autograd.grad(X[index], X, g)
    return gx.numpy()


def _torch_slice_grad(x: np.ndarray, g: np.ndarray, index: tuple) -> np.ndarray:
    X = torch.tensor(x, requires_grad=True)
    (gx,) = torch.autograd.grad(X[index], X, torch.from_numpy(np.ascontiguousarray(g)))
    return gx.numpy()


def test_a_slice_gradient_planned_once_reads_each_incoming_gradient_at_its_own_offset_and_layout():
    """``index_backward`` of a basic index is recorded from a plan kept per (gradient layout, dtype, shape, index):
    gradients at other offsets of one buffer, transposed and broadcast gradients, another index and another dtype
    each give torch's result (a plan that kept the first call's offset, strides or dtype would not)."""
    from shapetorch.backends.webgpu import kernels as K

    x = data((5, 6))
    big = data((7, 4), seed=3)
    G = st.tensor(big, device=DEV)
    plans = 0
    for i in range(3):  # the same signature, the gradient at offsets 0, 4, 8 of one buffer
        got = _slice_grad(x, G[i:i + 5, 1:3], (slice(None), slice(2, 4)))
        np.testing.assert_array_equal(got, _torch_slice_grad(x, big[i:i + 5, 1:3], (slice(None), slice(2, 4))))
        if i == 0:
            plans = len(K._EMBED_PLANS)
        assert len(K._EMBED_PLANS) == plans  # found again, not made again
    # the same shapes, other layouts: a transposed gradient, a broadcast one
    gt = data((2, 5), seed=4)
    got = _slice_grad(x, st.tensor(gt, device=DEV).t(), (slice(None), slice(2, 4)))
    np.testing.assert_array_equal(got, _torch_slice_grad(x, gt.T, (slice(None), slice(2, 4))))
    row = data((1, 2), seed=5)
    got = _slice_grad(x, st.tensor(row, device=DEV).expand(5, 2), (slice(None), slice(2, 4)))
    np.testing.assert_array_equal(got, _torch_slice_grad(x, np.broadcast_to(row, (5, 2)), (slice(None), slice(2, 4))))
    # the same gradient shape, another index (an int, a step, a negative start) and another input shape
    for index in [(slice(None), slice(1, 5, 2)), (slice(None, None, 1), slice(-2, None)), (slice(0, 5), slice(4, 6))]:
        g = data((5, 2), seed=6)
        np.testing.assert_array_equal(_slice_grad(x, st.tensor(g, device=DEV), index), _torch_slice_grad(x, g, index))
    g = data((4, 2), seed=7)
    np.testing.assert_array_equal(_slice_grad(data((4, 9)), st.tensor(g, device=DEV), (slice(None), slice(3, 5))),
                                  _torch_slice_grad(data((4, 9)), g, (slice(None), slice(3, 5))))
    g = data((6,), seed=8)
    np.testing.assert_array_equal(_slice_grad(x, st.tensor(g, device=DEV), (2,)), _torch_slice_grad(x, g, (2,)))
    # another dtype, the same shapes and index
    from shapetorch.backends.webgpu.runtime import RT

    if RT.has_f16:
        h = np.arange(10, dtype=np.float16).reshape(5, 2)
        X = st.tensor(x.astype(np.float16), device=DEV, requires_grad=True)
        (gx,) = st.autograd.grad(X[:, 2:4], X, st.tensor(h, device=DEV))
        assert gx.dtype == st.float16
        want = np.zeros((5, 6), np.float16)
        want[:, 2:4] = h
        np.testing.assert_array_equal(gx.numpy(), want)


def test_a_planned_result_written_in_place_and_its_buffer_reused_stay_correct():
    """A planned slice gradient written in place afterwards, then freed: its buffer goes back to the pool and the
    next call of the same signature gets it (or another) and the plan still writes every element."""
    x = data((4, 6))
    for k in range(3):
        g = data((4, 3), seed=k)
        X = st.tensor(x, device=DEV, requires_grad=True)
        (gx,) = st.autograd.grad(X[:, 1:4], X, st.tensor(g, device=DEV))
        gx.mul_(2).add_(1)  # in place over the planned output
        want = 2 * _torch_slice_grad(x, g, (slice(None), slice(1, 4))) + 1
        np.testing.assert_array_equal(gx.numpy(), want)
        del gx, X  # the buffers go back to the pool: the next round's outputs take them again
        st.synchronize()


def test_caches_survive_a_device_error_between_two_calls():
    """A failed device-side check (an embedding index out of range) between two calls of one signature: the error is
    raised, and the planned launches recorded after it are correct."""
    x = data((5, 6))
    g = data((5, 2), seed=1)
    index = (slice(None), slice(2, 4))
    np.testing.assert_array_equal(_slice_grad(x, st.tensor(g, device=DEV), index), _torch_slice_grad(x, g, index))
    emb = st.nn.Embedding(4, 3).to(DEV)
    with pytest.raises(IndexError):
        emb(st.tensor([1, 9], device=DEV)).detach().numpy()
    g2 = data((5, 2), seed=2)
    np.testing.assert_array_equal(_slice_grad(x, st.tensor(g2, device=DEV), index), _torch_slice_grad(x, g2, index))
    run(lambda lib, a: a.permute(1, 0)[1:3] * 2, data((4, 3)))


def test_permuted_views_of_one_shape_with_other_strides_and_offsets():
    """The permuted layout is kept per (shape, strides, axes): the same permutation of a contiguous array, of a
    transposed view and of a strided slice, and another permutation of the same array, each read as torch's."""
    a = data((3, 4, 5))
    run(lambda lib, x: x.permute(2, 0, 1) * 1, a)
    run(lambda lib, x: x.transpose(0, 2).permute(2, 0, 1) * 1, data((5, 4, 3), seed=1))
    run(lambda lib, x: x[:, 1:, ::2].permute(2, 0, 1) * 1, data((3, 5, 10), seed=2))
    run(lambda lib, x: x.permute(1, 2, 0) * 1, a)
    run(lambda lib, x: x.permute(-1, 0, 1) * 1, a)
    run(lambda lib, x: x.mT.contiguous() + x.permute(0, 2, 1), a)


def test_contiguity_is_judged_per_layout():
    """An array whose strides differ from row-major only at a size-1 axis counts as contiguous; one that differs
    elsewhere does not (the kernels copy or stride it), whatever was asked before for the same shape."""
    from shapetorch.backends.webgpu.runtime import is_contiguous

    assert is_contiguous((2, 1, 3), (3, 3, 1)) and is_contiguous((2, 1, 3), (3, 99, 1))
    assert not is_contiguous((2, 3), (1, 2)) and is_contiguous((2, 3), (3, 1))
    assert not is_contiguous((2, 1, 3), (1, 99, 2))
    x = st.tensor(data((2, 3)), device=DEV)
    assert x._data.contiguous and not x.t()._data.contiguous and x.t().contiguous()._data.contiguous
    assert x.unsqueeze(1)._data.contiguous
    run(lambda lib, a: a.t().reshape(6) + a.reshape(6), data((2, 3)))


def test_a_gather_planned_once_reads_each_input_and_index_at_its_own_offset_and_layout():
    """``gather`` is recorded from a plan kept per (input layout, index layout, dtypes, axis): the input and the index
    at other offsets of their buffers, a transposed input, an int32 index and another axis give torch's values, and
    max pooling (whose gradient scatters into fresh zeros) gives torch's values and gradients."""
    from shapetorch.backends.webgpu import kernels as K

    x = data((6, 5))
    ix = np.random.default_rng(0).integers(0, 5, (8, 3))
    X, IX = st.tensor(x, device=DEV), st.tensor(ix, device=DEV)
    plans = 0
    for i in range(3):
        got = st.gather(X[i:i + 4], 1, IX[i:i + 4]).numpy()
        np.testing.assert_array_equal(got, np.take_along_axis(x[i:i + 4], ix[i:i + 4], 1))
        if i == 0:
            plans = len(K._GATHER_PLANS)
        assert len(K._GATHER_PLANS) == plans  # found again, not made again
    np.testing.assert_array_equal(st.gather(X.t()[1:5], 1, IX[:4]).numpy(), np.take_along_axis(x.T[1:5], ix[:4], 1))
    np.testing.assert_array_equal(st.gather(X[:4], 1, IX[:4].to(st.int32)).numpy(),
                                  np.take_along_axis(x[:4], ix[:4], 1))
    np.testing.assert_array_equal(st.gather(X[:4, :3], 0, IX[:3] % 4).numpy(),
                                  np.take_along_axis(x[:4, :3], ix[:3] % 4, 0))
    np.testing.assert_array_equal(st.take_along_dim(X[1:5], IX[2:6], 1).numpy(),
                                  np.take_along_axis(x[1:5], ix[2:6], 1))
    for k in range(2):
        run(lambda lib, a: lib.nn.functional.max_pool2d(a[:, :, k:], 2), data((2, 3, 7, 6), seed=k))


def test_scatter_add_into_a_copy_leaves_its_input_as_it_was():
    """Out-of-place ``scatter_add`` writes a copy of its input (only the max-pooling gradient's fresh zeros are
    scattered into directly): the input reads as before, the result as torch's."""
    x = data((3, 5))
    ix = np.random.default_rng(1).integers(0, 5, (3, 4))
    src = data((3, 4), seed=2)
    X = st.tensor(x, device=DEV)
    got = X.scatter_add(1, st.tensor(ix, device=DEV), st.tensor(src, device=DEV))
    want = torch.from_numpy(x).scatter_add(1, torch.from_numpy(ix), torch.from_numpy(src))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    np.testing.assert_array_equal(X.numpy(), x)
