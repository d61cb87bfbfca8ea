"""NaN and inf through the resampling ops on the CPU, against torch: a non-finite value reaches the outputs (and,
for the pooling gradients, the input elements) that torch's loops reach, and no other. Products with weight
matrices would spread one through their zero weights (``0 * inf`` is NaN). Also the finite cases found beside them:
torch's float32 interpolation weights, and grid_sample's gradient at grid points on the border."""

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


@pytest.mark.parametrize(("mode", "padding_mode", "align_corners"),
                         list(itertools.product(("bilinear", "bicubic"), ("zeros", "border", "reflection"),
                                                (False, True))))
def test_grid_sample_grid_gradient_on_the_lattice(mode: str, padding_mode: str, align_corners: bool) -> None:
    """A finite input, grid points exactly on pixels and on the border (an identity affine grid with
    align_corners puts the corners there): torch's clip gives a point on the border no gradient."""
    x = torch.randn(1, 2, 4, 5, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    gen = torch.Generator().manual_seed(1)
    grids = [torch.randint(-6, 7, (1, 3, 4, 2), generator=gen).double() / 4.0,
             torch.nn.functional.affine_grid(torch.eye(2, 3, dtype=torch.float64)[None], [1, 2, 4, 5],
                                             align_corners=align_corners)]
    for grid in grids:
        g = torch.randn((1, 2, *grid.shape[1:3]), generator=gen, dtype=torch.float64)
        xt, gt = x.clone().requires_grad_(), grid.clone().requires_grad_()
        torch.nn.functional.grid_sample(xt, gt, mode, padding_mode, align_corners).backward(g)
        xs, gs = st.tensor(x.numpy(), requires_grad=True), st.tensor(grid.numpy(), requires_grad=True)
        st.nn.functional.grid_sample(xs, gs, mode, padding_mode, align_corners).backward(st.tensor(g.numpy()))
        assert_same([xs.grad, gs.grad], [xt.grad, gt.grad])


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


# -- average pooling's gradients -------------------------------------------------------------------------

def _with_holes(g: torch.Tensor, seed: int) -> torch.Tensor:
    """``g`` with one to three of inf, -inf and NaN at random elements."""
    gen = torch.Generator().manual_seed(seed)
    flat = g.view(-1)
    for v in (INF, -INF, NAN)[: 1 + seed % 3]:
        flat[int(torch.randint(flat.numel(), (1,), generator=gen))] = v
    return g


def _pool_grads(pool: Any, shape: tuple[int, ...], seed: int) -> tuple[Any, torch.Tensor]:
    x = torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    xt = x.clone().requires_grad_()
    yt = pool(torch, xt)
    g = _with_holes(torch.randn(yt.shape, generator=torch.Generator().manual_seed(seed + 1), dtype=torch.float64), seed)
    yt.backward(g)
    xs = st.tensor(x.numpy(), requires_grad=True)
    pool(st, xs).backward(st.tensor(g.numpy()))
    assert xt.grad is not None
    return xs.grad, xt.grad


_AVG = [  # (nd, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
    (1, 2, None, 0, False, True, None), (1, 3, 2, 1, True, False, None), (1, 3, 1, 1, False, True, None),
    (2, 2, None, 0, False, True, None), (2, 3, 2, 1, True, True, None), (2, 3, 2, 1, True, False, None),
    (2, 2, 1, 1, False, False, 3), (2, 3, 3, 1, True, True, -2), (2, (2, 3), (1, 2), (1, 0), False, True, None),
    (3, 2, None, 0, False, True, None), (3, 3, 2, 1, True, False, None), (3, 2, 1, 1, False, True, 5),
]


@pytest.mark.parametrize(("nd", "k", "s", "p", "ceil", "cip", "dov"), _AVG)
def test_avg_pool_gradient_of_nonfinite_output_gradient(nd: int, k: Any, s: Any, p: Any, ceil: bool, cip: bool,
                                                        dov: int | None) -> None:
    """An inf, -inf or NaN in the output's gradient reaches the input elements of its windows only (the four
    others of a 4x4 input's kernel-2 gradient stay 0.25, not NaN)."""
    extra = {} if nd == 1 else {"divisor_override": dov}

    def pool(lib: Any, t: Any) -> Any:
        return getattr(lib.nn.functional, f"avg_pool{nd}d")(t, k, s, p, ceil, cip, **extra)

    for seed in range(4):
        shape = (2, 2) + (5,) * nd if seed % 2 else (2,) + (4,) * nd  # batched and unbatched
        assert_same(*_pool_grads(pool, shape, seed))


@pytest.mark.parametrize(("nd", "out"), [(1, 3), (1, 1), (2, (3, 2)), (2, 1), (2, (5, 7)), (3, (2, 3, 2)), (3, 1)])
def test_adaptive_avg_pool_gradient_of_nonfinite_output_gradient(nd: int, out: Any) -> None:
    def pool(lib: Any, t: Any) -> Any:
        return getattr(lib.nn.functional, f"adaptive_avg_pool{nd}d")(t, out)

    for seed in range(4):
        assert_same(*_pool_grads(pool, (2, 2) + (5,) * nd, seed))


def test_avg_pool_gradient_example() -> None:
    """The note's example: kernel 2 over 4x4, an inf in one output's gradient."""
    x = st.zeros(1, 1, 4, 4, requires_grad=True)
    g = st.ones(1, 1, 2, 2)
    g[0, 0, 0, 0] = INF
    st.nn.functional.avg_pool2d(x, 2).backward(g)
    assert x.grad is not None
    assert np.isinf(x.grad.numpy()[0, 0, :2, :2]).all()
    np.testing.assert_array_equal(np.isinf(x.grad.numpy()).sum(), 4)
    np.testing.assert_array_equal(x.grad.numpy()[0, 0, 2:], 0.25)


@pytest.mark.parametrize("adaptive", [False, True])
def test_avg_pool_double_backward_and_forward_mode(adaptive: bool) -> None:
    """The guard is an identity on the pooled values: double backward (through a finite and a non-finite first
    gradient) and forward mode are torch's, and the node keeps torch's name."""
    def pool(lib: Any, t: Any) -> Any:
        f = lib.nn.functional
        return f.adaptive_avg_pool2d(t, (2, 3)) if adaptive else f.avg_pool2d(t, 3, 2, 1, ceil_mode=True)

    x = torch.randn(2, 2, 5, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    for finite in (True, False):
        results = []
        for lib in (torch, st):
            t = lib.tensor(x.numpy(), requires_grad=True)
            y = pool(lib, t)
            g = lib.ones(y.shape, dtype=lib.float64, requires_grad=True)
            (gx,) = lib.autograd.grad((y * y).sum() if finite else y, t, None if finite else g, create_graph=True)
            if not finite:
                gx = gx * lib.arange(gx.numel(), dtype=lib.float64).reshape(gx.shape)
            # (w.r.t. g: torch's zero gradient for t there is None here, as before the guard)
            results.append(lib.autograd.grad(gx.sum(), t if finite else g))
            results.append(y.grad_fn.name())
        assert_same(results[2], results[0])
        assert results[3] == results[1]
    tangent = torch.randn(x.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    with torch.autograd.forward_ad.dual_level():
        want = torch.autograd.forward_ad.unpack_dual(pool(torch, torch.autograd.forward_ad.make_dual(x, tangent))).tangent
    fa = st.autograd.forward_ad
    with fa.dual_level():
        got = fa.unpack_dual(pool(st, fa.make_dual(st.tensor(x.numpy()), st.tensor(tangent.numpy())))).tangent
    assert_same(got, want)


@pytest.mark.parametrize(("mode", "spatial", "kwargs"), _RESIZES)
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_interpolate_gradient_of_nonfinite_output_gradient(mode: str, spatial: tuple[int, ...],
                                                           kwargs: dict[str, Any], align_corners: bool,
                                                           dtype: torch.dtype) -> None:
    """An inf, -inf or NaN in the output's gradient reaches the input elements of its two taps per dim only:
    inf through a nonzero weight, NaN through a zero one (torch multiplies it too), and the node is torch's."""
    def resize(lib: Any, t: Any) -> Any:
        return lib.nn.functional.interpolate(t, mode=mode, align_corners=align_corners, **kwargs)

    for seed in range(3):
        x = torch.randn((2, 2, *spatial), generator=torch.Generator().manual_seed(seed), dtype=dtype)
        xt = x.clone().requires_grad_()
        yt = resize(torch, xt)
        g = _with_holes(torch.randn(yt.shape, generator=torch.Generator().manual_seed(seed + 1), dtype=dtype), seed)
        yt.backward(g)
        xs = st.tensor(x.numpy(), requires_grad=True)
        ys = resize(st, xs)
        ys.backward(st.tensor(g.numpy()))
        assert_same(xs.grad, xt.grad)
        assert ys.grad_fn.name() == yt.grad_fn.name()


def test_guard_saves_nothing() -> None:
    """torch's upsample node saves no tensor: an in-place change of the input after the call leaves backward
    running (the guard's node reads only the gradient and the geometry)."""
    for lib in (torch, st):
        x = lib.ones(1, 1, 4, 4, requires_grad=True)
        h = x * 1
        y = lib.nn.functional.interpolate(h, size=(6, 6), mode="bilinear")
        h.mul_(2)
        y.sum().backward()
        assert x.grad is not None
        np.testing.assert_allclose(x.grad.sum().item(), 36.0)


@pytest.mark.parametrize(("nd", "out"), [(1, 2), (1, 3), (2, 1), (2, 2), (2, (3, 2)), (3, 1), (3, 2)])
def test_adaptive_max_pool_bin_of_several_nans(nd: int, out: Any) -> None:
    """A bin holding several NaNs: torch's loop keeps the last one in row-major order, which gets the gradient and
    is the index returned (the first maximum where there is no NaN)."""
    for seed in range(4):
        gen = torch.Generator().manual_seed(seed)
        x = torch.randn((2, *(5,) * nd), generator=gen)
        x.view(-1)[torch.randperm(x.numel(), generator=gen)[: x.numel() // 4]] = NAN
        x[0].view(-1)[:3] = 0.5  # ties (the first one wins) beside the NaNs
        got = []
        for lib in (torch, st):
            t = lib.tensor(x.numpy(), requires_grad=True)
            y, idx = getattr(lib.nn.functional, f"adaptive_max_pool{nd}d")(t, out, return_indices=True)
            y.backward(lib.ones(y.shape))
            got.append((y.detach().numpy(), idx.numpy(), t.grad.numpy()))
        (ty, ti, tg), (sy, si, sg) = got
        np.testing.assert_array_equal(sy, ty)
        np.testing.assert_array_equal(si, ti)
        np.testing.assert_array_equal(sg, tg)
