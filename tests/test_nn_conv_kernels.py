"""The CPU kernels of the convolutional steps, path by path, against torch: the convolution's weight gradient on the
shared-padding grid (its column chunks, sample chunks and both product orientations, hypothesis-drawn geometries,
channels-last and sliced arrays, float32 and float64, empty batches), the batch's chunks, batch norm's running
statistics written on their arrays, and relu's gradient mask in blocks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
import shapetorch.nn.functional as F
from _nn_oracle import close
from _oracle import fast  # noqa: I001
from shapetorch.ops import convolution


def data(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=shape)


def channels_last(a: np.ndarray) -> np.ndarray:
    """``a`` (N, C, *S) with channels-last strides (torch's channels_last memory format), the same values."""
    return np.ascontiguousarray(np.moveaxis(a, 1, -1)).transpose((0, a.ndim - 1) + tuple(range(1, a.ndim - 1)))


GRID_LAYERS = [
    # (x shape, w shape, padding, dilation): 16 channels write (O, C) products, fewer (C, O)
    ((3, 16, 6, 6), (16, 16, 3, 3), 1, 1),
    ((3, 4, 7, 5), (6, 4, 3, 3), 1, 1),
    ((2, 6, 9, 9), (5, 6, 5, 5), 0, 1),  # no padding: the rows' cells are the image's
    ((2, 4, 5, 5), (3, 4, 3, 3), 3, 1),  # padding past the kernel: the output is wider than image + padding
    ((2, 16, 7, 6), (4, 16, 3, 2), (1, 2), (2, 1)),
    ((3, 8, 11), (5, 8, 3), 2, 2),
    ((2, 4, 4, 5, 3), (3, 4, 3, 2, 2), 1, 1),
    ((2, 3, 5, 4, 4), (2, 3, 2, 3, 3), (2, 0, 1), (1, 1, 2)),
]


@pytest.mark.parametrize("x_shape,w_shape,padding,dilation", GRID_LAYERS)
@pytest.mark.parametrize("split", ["whole", "columns", "samples", "packed"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_weight_gradient_on_the_shared_grid(monkeypatch: pytest.MonkeyPatch, x_shape: Any, w_shape: Any,
                                            padding: Any, dilation: Any, split: str, dtype: str) -> None:
    """NOTE [weight gradient on the grid]: the input's and the gradient's reads at the shared padding, cut into
    products of 7 columns (a cut inside a row and inside a sample), one sample per chunk, or whole chunks as a wide
    layer's, give torch's gradients."""
    if split == "columns":
        monkeypatch.setattr(convolution, "_SMALL_GEMM", 7 * w_shape[0] * w_shape[1])
        monkeypatch.setattr(convolution, "_SMALL_GEMM_COLUMNS", 1)
    elif split == "samples":
        monkeypatch.setattr(convolution, "_CHUNK", 1)
    elif split == "packed":  # as a layer too wide for the small-matrix kernels: whole chunks, (C, O) products
        monkeypatch.setattr(convolution, "_SMALL_GEMM", 1)
    nd = len(w_shape) - 2
    x, w = data(*x_shape).astype(dtype), data(*w_shape, seed=1).astype(dtype)
    tol = 1e-10 if dtype == "float64" else 2e-4
    kw = {"padding": padding, "dilation": dilation}
    xs, ws = st.tensor(x, requires_grad=True), st.tensor(w, requires_grad=True)
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    ys, yt = getattr(F, f"conv{nd}d")(xs, ws, **kw), getattr(TF, f"conv{nd}d")(xt, wt, **kw)
    cot = data(*tuple(yt.shape), seed=2).astype(dtype)
    gs = st.autograd.grad(ys, [xs, ws], st.tensor(cot))
    gt = torch.autograd.grad(yt, [xt, wt], torch.tensor(cot))
    close(gs[1], gt[1], tol, what="weight gradient")
    close(gs[0], gt[0], tol, what="input gradient")


@fast(30)
@given(n=hs.integers(1, 3), c=hs.sampled_from([2, 5, 16, 17]), o=hs.sampled_from([1, 3, 16]), h=hs.integers(1, 7),
       w=hs.integers(1, 6), kh=hs.integers(1, 4), kw=hs.integers(1, 3), p=hs.integers(0, 4), d=hs.integers(1, 2),
       cols=hs.sampled_from([1, 5, 1 << 30]))
def test_weight_gradient_on_the_grid_as_torch(n: int, c: int, o: int, h: int, w: int, kh: int, kw: int, p: int, d: int,
                                              cols: int) -> None:
    """Any stride-1 geometry torch accepts (padding past the kernel, a kernel as wide as the padded input, one
    channel more or less than the orientation's threshold, products of a few columns): torch's weight gradient."""
    x, wt = data(n, c, h, w), data(o, c, kh, kw, seed=1)
    try:
        yt = TF.conv2d(torch.tensor(x), torch.tensor(wt), padding=p, dilation=d)
    except RuntimeError:
        return
    g = data(*tuple(yt.shape), seed=2)
    old = convolution._SMALL_GEMM, convolution._SMALL_GEMM_COLUMNS
    convolution._SMALL_GEMM, convolution._SMALL_GEMM_COLUMNS = min(old[0], cols * c * o), 1
    try:
        got = convolution._conv_weight_grad_kernel(x, g, wt.shape, (1, 1), (p, p), (d, d), 1)
    finally:
        convolution._SMALL_GEMM, convolution._SMALL_GEMM_COLUMNS = old
    want = torch.ops.aten.convolution_backward(torch.tensor(g), torch.tensor(x), torch.tensor(wt), None, [1, 1], [p, p],
                                               [d, d], False, [0, 0], 1, [False, True, False])[1]
    close(got, want, 1e-10)


@pytest.mark.parametrize("layout", ["channels_last", "sliced"])
@pytest.mark.parametrize("x_shape,w_shape,padding,dilation", GRID_LAYERS[:3])
def test_weight_gradient_of_strided_arrays(layout: str, x_shape: Any, w_shape: Any, padding: Any,
                                           dilation: Any) -> None:
    """The kernels read channels-last and sliced inputs and output gradients as they are (no contiguous copy is
    assumed): torch's gradients either way."""
    nd = len(w_shape) - 2
    x, w = data(*x_shape), data(*w_shape, seed=1)
    kw = {"padding": padding, "dilation": dilation}
    yt = getattr(TF, f"conv{nd}d")(torch.tensor(x), torch.tensor(w), **kw)
    cot = data(*tuple(yt.shape), seed=2)
    if layout == "channels_last":
        xa, ca = channels_last(x), channels_last(cot)
    else:  # every other element of a wider array along the last dim
        wide_x, wide_c = np.zeros(x.shape[:-1] + (2 * x.shape[-1],)), np.zeros(cot.shape[:-1] + (2 * cot.shape[-1],))
        wide_x[..., ::2], wide_c[..., ::2] = x, cot
        xa, ca = wide_x[..., ::2], wide_c[..., ::2]
    assert not xa.flags.c_contiguous and not ca.flags.c_contiguous
    for a, b in zip(convolution._conv_weight_grad_kernel(xa, ca, w.shape, (1,) * nd, convolution.ntuple(padding, nd),
                                                         convolution.ntuple(dilation, nd), 1)[None],
                    torch.ops.aten.convolution_backward(torch.tensor(cot), torch.tensor(x), torch.tensor(w), None,
                                                        [1] * nd, list(convolution.ntuple(padding, nd)),
                                                        list(convolution.ntuple(dilation, nd)), False, [0] * nd, 1,
                                                        [False, True, False])[1][None]):
        close(a, b, 1e-10)


@pytest.mark.parametrize("x_shape,w_shape,padding", [((0, 16, 6, 6), (16, 16, 3, 3), 1), ((0, 4, 7), (6, 4, 3), 0)])
def test_weight_gradient_of_an_empty_batch(x_shape: Any, w_shape: Any, padding: int) -> None:
    nd = len(w_shape) - 2
    x, w = data(*x_shape), data(*w_shape, seed=1)
    xs, ws = st.tensor(x, requires_grad=True), st.tensor(w, requires_grad=True)
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    getattr(F, f"conv{nd}d")(xs, ws, padding=padding).sum().backward()
    getattr(TF, f"conv{nd}d")(xt, wt, padding=padding).sum().backward()
    close(ws.grad, wt.grad, 0)
    close(xs.grad, xt.grad, 0)


def _bn_run(momentum: float | None, watch: bool, dtype: str) -> tuple[dict[str, np.ndarray], dict[str, int]]:
    """Three training calls of a BatchNorm2d; ``watch``: under the profiler, which makes the running statistics'
    updates take the in-place ops (NOTE [running statistics])."""
    m = st.nn.BatchNorm2d(3, momentum=momentum).to(getattr(st, dtype))
    x = st.tensor(data(5, 3, 4, 2) * 3 + 1.5, dtype=getattr(st, dtype), requires_grad=True)
    with st.autograd.profiler.profile(enabled=watch):
        for i in range(3):
            m(x * (i + 1)).sum().backward()
    versions = {k: m.state_dict()[k]._version for k in ("running_mean", "running_var", "num_batches_tracked")}
    return {k: v.numpy().copy() for k, v in m.state_dict().items()}, versions


@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_running_statistics_on_the_arrays(momentum: float | None, dtype: str) -> None:
    """The running statistics and the batch count written on their arrays: the in-place ops' bits, torch's values
    (momentum None: the cumulative average over the counted batches) and torch's versions (the count's bumped once
    a call, the statistics' untouched)."""
    fast, versions = _bn_run(momentum, False, dtype)
    ops, _ = _bn_run(momentum, True, dtype)
    for k in fast:
        np.testing.assert_array_equal(fast[k], ops[k], err_msg=k)
    tm = torch.nn.BatchNorm2d(3, momentum=momentum).to(getattr(torch, dtype))
    x = torch.tensor(data(5, 3, 4, 2) * 3 + 1.5, dtype=getattr(torch, dtype), requires_grad=True)
    for i in range(3):
        tm(x * (i + 1)).sum().backward()
    for k, v in tm.state_dict().items():
        np.testing.assert_allclose(fast[k], v.numpy(), rtol=1e-6, atol=1e-6, err_msg=k)
    assert versions == {k: tm.state_dict()[k]._version for k in versions}


def test_running_statistics_that_are_views_take_the_ops() -> None:
    """A running mean that is a view of a larger buffer is written through the ops (its base sees the write)."""
    base = st.zeros(6)
    rm, rv = base[::2], st.ones(3)
    x = st.tensor(data(4, 3, 5) + 2.0)
    F.batch_norm(x, rm, rv, training=True, momentum=0.5)
    expected = 0.5 * data(4, 3, 5).transpose(1, 0, 2).reshape(3, -1).mean(1) + 1.0
    np.testing.assert_allclose(base.numpy()[::2], expected, rtol=1e-6)
    np.testing.assert_array_equal(base.numpy()[1::2], 0)


SPECIAL = [-2.0, -0.0, 0.0, 1.5, np.nan, np.inf, -np.inf, 3.0, -1.0, 2.0, -np.nan, 5e-324, -5e-324]


@pytest.mark.parametrize("block", [5, 1 << 16])  # blocks that cut the array (and end short), one block
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_relu_gradient_in_blocks(monkeypatch: pytest.MonkeyPatch, block: int, layout: str, dtype: str) -> None:
    """NOTE [relu's gradient mask]: blocks of the mask, and strided arrays' four passes, are torch's
    threshold_backward bit for bit, with signed zeros, NaNs of both signs, infs and subnormals among the values."""
    from shapetorch.ops import activation

    monkeypatch.setattr(activation, "_RELU_BLOCK", block)
    rng = np.random.default_rng(5)
    x = rng.normal(size=(2, 43)).astype(dtype)  # (86 elements: a last block of one)
    cot = rng.normal(size=(2, 43)).astype(dtype)
    x.reshape(-1)[:13], cot.reshape(-1)[-13:] = SPECIAL, SPECIAL[::-1]
    x.reshape(-1)[11:13] = np.array([1, 1], dtype=f"u{x.itemsize}").view(dtype) * np.array([1, -1], dtype=dtype)
    x.reshape(-1)[-1] = 1.0  # the last block's one element passes its gradient
    if layout == "transposed":
        x, cot = x.T, cot.T
    xs, xt = st.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (gs,) = st.autograd.grad(F.relu(xs), [xs], st.tensor(cot))
    (gt,) = torch.autograd.grad(TF.relu(xt), [xt], torch.tensor(cot))
    assert gs.numpy().tobytes() == gt.numpy().tobytes()


@pytest.mark.parametrize("n,per_sample,budget", [(32, 9248, 1 << 18), (64, 23296, 1 << 18), (5, 1, 1), (7, 10, 25),
                                                 (1, 10**9, 1 << 18), (0, 5, 1 << 18), (100, 3, 31)])
def test_batch_chunks_are_even(n: int, per_sample: int, budget: int) -> None:
    """The batch's chunks cover it in order, each within the budget (one sample at least), as few as the budget
    allows and of sizes that differ by less than their count (no short remainder: 28 + 4 samples became 16 + 16)."""
    parts = convolution._chunks(n, per_sample, budget)
    step = max(1, min(n, budget // per_sample))
    assert [i for p in parts for i in range(p.start, p.stop)] == list(range(n))
    assert len(parts) == -(-n // step)
    sizes = [p.stop - p.start for p in parts]
    assert all(0 < s <= step for s in sizes)
    assert not sizes or max(sizes) - min(sizes) < len(sizes)
