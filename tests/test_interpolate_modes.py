"""``F.interpolate`` in every mode torch 2.13 has: 'bicubic', 'area', 'lanczos' and ``antialias=True`` beside the
older modes, uint8 images bit for bit (torch's fixed-point kernels), the options each mode refuses, and the node
names. torch is the oracle; the few places where torch contradicts itself are excluded by name below and listed
in docs/compatibility.md ("Interpolation")."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as hs

import shapetorch as st
from shapetorch import ShapetorchError

F = torch.nn.functional
MODES_2D = ["nearest", "nearest-exact", "bilinear", "bicubic", "lanczos", "area"]


@hs.composite
def resizes(draw: Any) -> tuple[tuple[int, ...], dict[str, Any]]:
    """An image batch's shape and interpolate's keywords, for a 2-D mode."""
    mode = draw(hs.sampled_from(MODES_2D))
    spatial = tuple(draw(hs.lists(hs.integers(1, 10), min_size=2, max_size=2)))
    kw: dict[str, Any] = {"mode": mode}
    if mode in ("bilinear", "bicubic"):
        kw["antialias"] = draw(hs.booleans())
        kw["align_corners"] = draw(hs.booleans())
    elif mode == "lanczos":
        kw["antialias"] = True
    if draw(hs.booleans()):
        kw["size"] = tuple(draw(hs.lists(hs.integers(1, 12), min_size=2, max_size=2)))
    else:
        factors = draw(hs.lists(hs.sampled_from([0.35, 0.5, 0.7, 1.0, 1.3, 1.5, 2.0, 2.4, 3.0]), min_size=2,
                                max_size=2))
        kw["scale_factor"] = tuple(factors)
        if mode != "area":
            kw["recompute_scale_factor"] = draw(hs.booleans())
        if any(int(n * f) < 1 for n, f in zip(spatial, factors)):
            kw["scale_factor"] = 2.0
    return (2, 3, *spatial), kw


def _out_spatial(shape: tuple[int, ...], kw: dict[str, Any]) -> tuple[int, ...]:
    if "size" in kw:
        return tuple(kw["size"])
    f = kw["scale_factor"]
    factors = (f, f) if isinstance(f, float) else f
    return tuple(int(n * s) for n, s in zip(shape[2:], factors))


def _torch_antialias_width_one_bug(shape: tuple[int, ...], kw: dict[str, Any]) -> bool:
    """torch's antialiased kernels read only the first row when their vertical pass runs on a width of 1 (the
    width is 1 or is resized to 1 first): every output row is then the first input row's."""
    out = _out_spatial(shape, kw)
    return bool(kw.get("antialias")) and out[-1] == 1 and shape[-2] != out[0]


def _torch_backward_disagrees(shape: tuple[int, ...], kw: dict[str, Any]) -> bool:
    """Where torch's backward is not the gradient of its own forward: a dim kept at its size (or doubled, for
    'nearest') under an explicit scale_factor that the forward applies and the backward ignores, or the reverse
    (bicubic's backward copies a same-size image, the antialiased backward resizes the dims its forward skips)."""
    if "scale_factor" not in kw or kw.get("recompute_scale_factor") or kw["mode"] in ("area", "nearest-exact"):
        return False
    out = _out_spatial(shape, kw)
    return any(o in (n, 2 * n) for n, o in zip(shape[2:], out))


@settings(max_examples=150, deadline=None)
@given(resizes(), hs.sampled_from(["float32", "float64"]), hs.integers(0, 2**16))
def test_float_resize_and_gradient_are_torchs(case: tuple[tuple[int, ...], dict[str, Any]], dtype: str,
                                             seed: int) -> None:
    shape, kw = case
    if _torch_antialias_width_one_bug(shape, kw):
        return
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    xt = torch.tensor(x, requires_grad=True)
    xs = st.tensor(x, requires_grad=True)
    want = F.interpolate(xt, **kw)
    got = st.nn.functional.interpolate(xs, **kw)
    tol = 1e-5 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=tol, atol=tol)
    if _torch_backward_disagrees(shape, kw):
        return
    g = np.random.default_rng(seed + 1).standard_normal(tuple(want.shape)).astype(dtype)
    want.backward(torch.tensor(g))
    got.backward(st.tensor(g))
    assert xs.grad is not None and xt.grad is not None
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=tol, atol=tol)
    assert got.grad_fn is not None and want.grad_fn is not None
    assert got.grad_fn.name() == want.grad_fn.name()


@settings(max_examples=150, deadline=None)
@given(resizes(), hs.sampled_from([1, 3, 4, 5]), hs.integers(0, 2**16))
def test_uint8_resize_is_torchs_bit_for_bit(case: tuple[tuple[int, ...], dict[str, Any]], channels: int,
                                            seed: int) -> None:
    """torch's uint8 kernels weigh in fixed point (int16 weights, as many fraction bits as the largest weight
    leaves room for), round and saturate after each dim, the width first; 1-4 channels take its vectorized kernel
    and more its generic one, which agree."""
    shape, kw = case
    if kw["mode"] == "area" or _torch_antialias_width_one_bug(shape, kw):
        return
    if kw["mode"] in ("bilinear", "bicubic", "lanczos") and 1 in _out_spatial(shape, kw):
        return  # torch: an internal assertion of its vectorized uint8 kernel
    shape = (shape[0], channels, *shape[2:])
    x = np.random.default_rng(seed).integers(0, 256, shape).astype(np.uint8)
    want = F.interpolate(torch.tensor(x), **kw)
    got = st.nn.functional.interpolate(st.tensor(x), **kw)
    assert got.dtype == st.uint8
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("mode", ["linear", "nearest", "nearest-exact", "area"])
@pytest.mark.parametrize("rank", [1, 3])
def test_other_ranks_are_torchs(mode: str, rank: int) -> None:
    if mode == "linear":
        mode = {1: "linear", 3: "trilinear"}[rank]
    rng = np.random.default_rng(rank)
    for spatial, kw in [((5,) * rank, {"size": (3,) * rank}), ((4,) * rank, {"scale_factor": 1.7}),
                        ((3,) * rank, {"scale_factor": 2.0})]:
        x = rng.standard_normal((2, 2, *spatial)).astype(np.float32)
        want = F.interpolate(torch.tensor(x), mode=mode, **kw)
        got = st.nn.functional.interpolate(st.tensor(x), mode=mode, **kw)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("mode", "antialias"), [("bicubic", False), ("bicubic", True), ("bilinear", True),
                                                 ("lanczos", True)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_nonfinite_input_reaches_the_taps_that_read_it(mode: str, antialias: bool, dtype: torch.dtype) -> None:
    """torch's loops: an inf multiplies the taps of the outputs that read it (a zero-weight tap gives NaN, a
    weight that float32 leaves at 3e-14 an inf), and the outputs that do not read it stay finite."""
    x = torch.randn(1, 2, 7, 8, generator=torch.Generator().manual_seed(0), dtype=dtype)
    x[0, 0, 3, 4] = float("inf")
    x[0, 1, 0, 0] = float("nan")
    x[0, 1, 5, 2] = -float("inf")
    for size in [(5, 6), (11, 13), (3, 3), (7, 4)]:
        want = F.interpolate(x, size=size, mode=mode, antialias=antialias)
        got = st.nn.functional.interpolate(st.tensor(x.numpy()), size=size, mode=mode, antialias=antialias)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_double_backward_of_bicubic() -> None:
    x = torch.randn(1, 1, 4, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(2))

    def grad_sum(lib: Any, t: Any) -> Any:
        y = lib.nn.functional.interpolate(t, size=(7, 3), mode="bicubic", antialias=False)
        (g,) = lib.autograd.grad((y ** 2).sum(), t, create_graph=True)
        return (g ** 2).sum()

    xt = x.clone().requires_grad_()
    xs = st.tensor(x.numpy(), requires_grad=True)
    grad_sum(torch, xt).backward()
    grad_sum(st, xs).backward()
    assert xs.grad is not None and xt.grad is not None
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize(("shape", "kw", "cls"), [
    ((1, 1, 4, 4), {"size": 2, "mode": "nearest", "align_corners": False}, ValueError),
    ((1, 1, 4, 4), {"size": 2, "mode": "area", "align_corners": True}, ValueError),
    ((1, 1, 4, 4), {"size": 2, "mode": "nearest-exact", "align_corners": False}, ValueError),
    ((1, 1, 4, 4), {"size": 2, "mode": "nearest", "antialias": True}, ValueError),
    ((1, 1, 4), {"size": 2, "mode": "linear", "antialias": True}, ValueError),
    ((1, 1, 4, 4), {"size": 2, "mode": "lanczos"}, ValueError),
    ((1, 1, 4, 4), {"size": 2, "mode": "lanczos", "antialias": True, "align_corners": True}, ValueError),
    ((1, 1, 4, 4), {"size": (2, 2), "mode": "bilinear", "recompute_scale_factor": True}, ValueError),
    ((1, 1, 4), {"size": 2, "mode": "bicubic"}, NotImplementedError),
    ((1, 1, 4, 4, 4), {"size": 2, "mode": "lanczos", "antialias": False}, NotImplementedError),
    ((1, 1, 4, 4), {"size": 2, "mode": "cubic"}, NotImplementedError),
])
def test_refused_options_are_torchs(shape: tuple[int, ...], kw: dict[str, Any], cls: type[Exception]) -> None:
    with pytest.raises(cls):
        F.interpolate(torch.zeros(shape), **kw)
    with pytest.raises(cls) as caught:
        st.nn.functional.interpolate(st.zeros(*shape), **kw)
    assert isinstance(caught.value, ShapetorchError)
    assert caught.value.code in ("upsample_error_option", "upsample_error_size", "upsample_error_input_rank",
                                 "upsample_error_mode")


def test_dtypes_torch_has_no_kernel_for() -> None:
    for dtype, kw in [("int32", {"mode": "bicubic"}), ("int32", {"mode": "area"}), ("uint8", {"mode": "area"}),
                      ("bfloat16", {"mode": "bilinear", "antialias": True})]:
        with pytest.raises(NotImplementedError):
            F.interpolate(torch.zeros(1, 1, 4, 4, dtype=getattr(torch, dtype)), size=(2, 3), **kw)
        with pytest.raises(NotImplementedError):
            st.nn.functional.interpolate(st.zeros(1, 1, 4, 4, dtype=getattr(st, dtype)), size=(2, 3), **kw)
