"""The 3-D pooling, norm and transposed-convolution layers, max unpooling, adaptive max pooling's indices and
instance norm's running statistics, against torch: values, gradients, indices and refusals."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import shapetorch as st

R = np.random.default_rng(0)


def _arr(*shape: int, lo: float = -2.0, hi: float = 2.0) -> np.ndarray:
    return R.uniform(lo, hi, shape)


# -- the 3-D layers, max unpooling and instance norm's running statistics --------------------------------------

LAYERS_3D: list[tuple[str, Callable[[Any], Any], tuple[int, ...]]] = [
    ("MaxPool3d", lambda nn: nn.MaxPool3d((2, 3, 2), stride=(1, 2, 1), padding=(1, 1, 0), ceil_mode=True), (2, 3, 5, 6, 4)),
    ("AvgPool3d", lambda nn: nn.AvgPool3d(3, 2, 1, count_include_pad=False), (2, 3, 5, 6, 7)),
    ("AdaptiveAvgPool3d", lambda nn: nn.AdaptiveAvgPool3d((2, 3, 4)), (2, 3, 5, 6, 7)),
    ("AdaptiveMaxPool3d", lambda nn: nn.AdaptiveMaxPool3d(2), (1, 2, 5, 3, 4)),
    ("BatchNorm3d", lambda nn: nn.BatchNorm3d(3), (2, 3, 2, 3, 2)),
    ("InstanceNorm3d", lambda nn: nn.InstanceNorm3d(3, affine=True), (2, 3, 2, 3, 2)),
    ("InstanceNorm3d unbatched", lambda nn: nn.InstanceNorm3d(3), (3, 2, 3, 2)),
    ("InstanceNorm1d unbatched", lambda nn: nn.InstanceNorm1d(3), (3, 5)),
    ("InstanceNorm2d unbatched", lambda nn: nn.InstanceNorm2d(3, affine=True), (3, 4, 5)),
    ("ConvTranspose3d", lambda nn: nn.ConvTranspose3d(3, 2, (2, 3, 2), stride=2, padding=1, output_padding=1),
     (1, 3, 3, 4, 3)),
]


@pytest.mark.parametrize("name,make,shape", LAYERS_3D, ids=[x[0] for x in LAYERS_3D])
def test_3d_layers_match_torch(name: str, make: Callable[[Any], Any], shape: tuple[int, ...]) -> None:
    torch.manual_seed(0)
    tm = make(torch.nn).double()
    sm = make(st.nn).double()
    sm.load_state_dict({k: st.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = _arr(*shape)
    xt, xs = torch.tensor(x, requires_grad=True), st.tensor(x, requires_grad=True)
    yt, ys = tm(xt), sm(xs)
    np.testing.assert_allclose(ys.detach().numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-12)
    w = np.linspace(0.5, 1.5, yt.numel()).reshape(tuple(yt.shape))
    (yt * torch.tensor(w)).sum().backward()
    (ys * st.tensor(w)).sum().backward()
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-12)
    for k, v in tm.state_dict().items():  # running statistics updated alike
        np.testing.assert_allclose(sm.state_dict()[k].numpy(), v.numpy(), rtol=1e-10, err_msg=k)


@pytest.mark.parametrize("nd,shape,kw", [(1, (2, 3, 8), {}), (2, (1, 2, 5, 6), {"stride": 1}),
                                          (2, (1, 2, 6, 6), {"padding": 1}), (3, (1, 1, 4, 4, 6), {})])
def test_max_unpool_inverts_max_pool_as_torch(nd: int, shape: tuple[int, ...], kw: dict[str, Any]) -> None:
    x = _arr(*shape)
    outs = []
    for lib in (torch, st):
        F = lib.nn.functional
        xt = lib.tensor(x, requires_grad=True)
        y, idx = getattr(F, f"max_pool{nd}d")(xt, 2, return_indices=True, **kw)
        up = getattr(lib.nn, f"MaxUnpool{nd}d")(2, **kw)(y, idx, output_size=xt.shape)
        up.pow(2).sum().backward()
        outs.append((up.detach().numpy(), xt.grad.numpy(), getattr(F, f"max_pool{nd}d_with_indices")(xt, 2)[1].numpy()))
    for a, b in zip(*outs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_instance_norm_running_statistics_as_torch() -> None:
    x = _arr(4, 3, 6)
    stats = []
    for lib in (torch, st):
        m = lib.nn.InstanceNorm1d(3, track_running_stats=True, momentum=0.3).double()
        m(lib.tensor(x))
        m(lib.tensor(x * 2 + 1))
        m.eval()
        stats.append((m.running_mean.numpy(), m.running_var.numpy(), m(lib.tensor(x)).detach().numpy()))
    for a, b in zip(*stats, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10)


def test_norm_layers_refuse_ranks_and_sizes_as_torch() -> None:
    for make, shape in [(lambda nn: nn.BatchNorm3d(3), (2, 3, 4, 5)), (lambda nn: nn.InstanceNorm1d(3), (2, 3, 4, 5)),
                        (lambda nn: nn.InstanceNorm2d(3), (3, 4)), (lambda nn: nn.InstanceNorm1d(4, affine=True), (2, 3, 5))]:
        with pytest.raises(ValueError) as theirs:
            make(torch.nn)(torch.zeros(shape))
        with pytest.raises(ValueError) as ours:
            make(st.nn)(st.zeros(shape))
        assert isinstance(ours.value, st.ShapetorchError)
        assert str(theirs.value).split("(")[0] in str(ours.value), (theirs.value, ours.value)
    with pytest.warns(UserWarning, match="does not match num_features"):
        st.nn.InstanceNorm1d(4)(st.zeros(2, 3, 5))
    for lib in (torch, st):
        with pytest.raises(RuntimeError, match="invalid max index"):
            y, i = lib.nn.functional.max_pool2d(lib.zeros(1, 1, 4, 4), 2, return_indices=True)
            lib.nn.functional.max_unpool2d(y, i * 10, 2)



@pytest.mark.parametrize("nd,shape,out", [(1, (2, 3, 7), 3), (2, (2, 3, 7, 5), (3, 2)), (3, (1, 2, 5, 4, 3), (2, 3, 2)),
                                          (2, (1, 1, 4, 4), 1), (2, (2, 2, 6, 6), (4, 4))])
def test_adaptive_max_pool_indices_as_torch(nd: int, shape: tuple[int, ...], out: Any) -> None:
    """``return_indices``: each bin's first maximum, or its last NaN, as a flat index of the input plane; the
    module's flag too, and max unpooling takes them back."""
    rng = np.random.default_rng(nd)
    for trial in range(6):
        x = rng.integers(0, 3, shape).astype(np.float64)  # ties in most bins
        if trial >= 3:
            x.reshape(-1)[trial::5] = np.nan
        results = []
        for lib in (torch, st):
            m = getattr(lib.nn, f"AdaptiveMaxPool{nd}d")(out, return_indices=True)
            values, indices = m(lib.tensor(x))
            results.append((values.numpy(), indices.numpy(), str(indices.dtype).split(".")[-1]))
        (tv, ti, td), (sv, si, sd) = results
        np.testing.assert_array_equal(si, ti)
        np.testing.assert_allclose(sv, tv, equal_nan=True)
        assert sd == td == "int64"
