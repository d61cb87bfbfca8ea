"""Grid sampling: ``affine_grid`` and ``grid_sample`` (spatial transformers, optical-flow warps).

``grid_sample`` reads the input at the (x, y[, z]) positions of a grid normalised to [-1, 1], with torch's
conventions: ``align_corners`` decides whether -1 and 1 are the centres or the outer edges of the corner
pixels; ``padding_mode`` decides what a position outside reads (zeros, the nearest border pixel, or the
input reflected at its border); ``mode`` is bilinear (trilinear for 5-D), nearest (ties to even, as
torch's ``nearbyint``) or bicubic (A = -0.75, 4-D only). It is written in differentiable ops (a gather per
tap and weights linear in the coordinates), so gradients flow to the input and to the grid as torch's
piecewise formulas give them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._errors import fail
from .._tensor import Tensor
from .conversion import where
from .creation import linspace, ones
from .joining import stack

_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")


def _invalid(op: str, problem: str) -> Any:
    fail("argument_error_invalid", op=op, problem=problem)


def _base(n: int, align_corners: bool, like: Tensor) -> Tensor:
    """The normalised pixel centres along a dim of size n."""
    if n <= 1:
        return like.new_zeros((max(n, 0),))
    steps = linspace(-1.0, 1.0, n, dtype=like.dtype, device=like.device)
    return steps if align_corners else steps * ((n - 1) / n)


def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    """The sampling grid of a batch of affine maps: (N, 2, 3) for an (N, C, H, W) ``size`` gives (N, H, W, 2);
    (N, 3, 4) for (N, C, D, H, W) gives (N, D, H, W, 3)."""
    align = bool(align_corners)
    size = tuple(int(s) for s in size)
    if not theta.is_floating_point():
        _invalid("affine_grid", f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[1:]) != (2, 3):
            _invalid("affine_grid", f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {list(size)}. "
                                    f"Got {list(theta.shape)}.")
    elif len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[1:]) != (3, 4):
            _invalid("affine_grid", f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {list(size)}. "
                                    f"Got {list(theta.shape)}.")
    else:
        _invalid("affine_grid", f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                f"respectively. Got size {list(size)}.")
    if min(size) <= 0:
        _invalid("affine_grid", f"Expected non-zero, positive output size. Got {list(size)}")
    if theta.shape[0] != size[0]:
        _invalid("affine_grid", f"Expected theta batch size {theta.shape[0]} to match size[0] {size[0]}")
    spatial = size[2:]
    k = len(spatial)
    # coordinates in (x, y[, z]) order: x runs along the last dim
    axes = [_base(n, align, theta) for n in reversed(spatial)]
    parts = []
    for i, axis in enumerate(axes):
        shape = [1] * k
        shape[k - 1 - i] = spatial[k - 1 - i]
        parts.append(axis.reshape(shape).expand(*spatial))
    parts.append(ones(*spatial, dtype=theta.dtype, device=theta.device))
    base = stack(parts, -1).reshape(1, -1, k + 1)  # (1, prod(spatial), k + 1)
    grid: Tensor = base @ theta.mT  # (N, prod(spatial), k)
    return grid.reshape(size[0], *spatial, k)


def _unnormalize(coord: Tensor, size: int, align: bool) -> Tensor:
    out: Tensor = (coord + 1) / 2 * (size - 1) if align else ((coord + 1) * size - 1) / 2
    return out


def _reflect(coord: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """Reflect at the borders until inside [low, high] (in units of half pixels), as torch's."""
    if twice_low == twice_high:
        return coord * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    dist = (coord - low).abs()
    extra = dist.fmod(span)
    flips = (dist / span).floor().detach()
    out: Tensor = where(flips.fmod(2) == 0, extra + low, span - extra + low)
    return out


def _clip(coord: Tensor, size: int) -> Tensor:
    """``coord`` clamped to [0, size - 1], with torch's gradient: 1 strictly inside only (``clamp``'s is 1 at the
    bounds too, which gave a grid point exactly on the border a gradient torch does not give it)."""
    inside = (coord > 0).logical_and(coord < size - 1)
    return where(inside, coord, coord.clamp(0, size - 1).detach())


def _pad_coord(coord: Tensor, size: int, padding: str, align: bool) -> Tensor:
    if padding == "border":
        return _clip(coord, size)
    if padding == "reflection":
        coord = _reflect(coord, 0, 2 * (size - 1)) if align else _reflect(coord, -1, 2 * size - 1)
        return _clip(coord, size)
    return coord


def _read(flat: Tensor, sizes: Sequence[int], taps: Sequence[Tensor]) -> Tensor:
    """``input[n, :, taps...]`` for integer-valued tap coordinates (N, P) each, zero where any is outside."""
    inside: Tensor | None = None
    index: Tensor | None = None
    stride = 1
    for tap, n in zip(taps, sizes):  # taps in (x, y[, z]) order: x is the innermost dim
        ok: Tensor = (tap >= 0).logical_and(tap <= n - 1)
        inside = ok if inside is None else inside.logical_and(ok)
        term = tap.nan_to_num(0.0).clamp(0, n - 1).long() * stride  # (a NaN tap is outside: read 0, as torch)
        index = term if index is None else index + term
        stride *= n
    assert index is not None and inside is not None
    c = flat.shape[1]
    values = flat.gather(2, index.unsqueeze(1).expand(-1, c, -1))
    # selected, not multiplied by the mask: an outside tap reads a clamped element, and a NaN or inf there times
    # 0 would be NaN where torch's kernel never reads it
    out: Tensor = where(inside.unsqueeze(1), values, values.new_zeros(()))
    return out


def _cubic(t: Tensor) -> list[Tensor]:
    """The four bicubic weights of a fractional offset t (A = -0.75, torch's)."""
    a = -0.75

    def near(x: Tensor) -> Tensor:
        out: Tensor = ((a + 2) * x - (a + 3)) * x * x + 1
        return out

    def far(x: Tensor) -> Tensor:
        out: Tensor = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return out

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """``input`` (N, C, H, W) or (N, C, D, H, W) read at ``grid``'s (N, H', W', 2) or (N, D', H', W', 3)
    normalised positions: (N, C, H', W') or (N, C, D', H', W')."""
    op = "grid_sample"
    align = bool(align_corners)
    if mode not in _MODES:
        _invalid(op, f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                     f"but got: '{mode}'")
    if padding_mode not in _PADDINGS:
        _invalid(op, f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                     f"'reflection', but got: '{padding_mode}'")
    if input.dim() not in (4, 5) or grid.dim() != input.dim():
        _invalid(op, f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but got "
                     f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    k = input.dim() - 2
    if grid.shape[0] != input.shape[0]:
        _invalid(op, f"grid_sampler(): expected grid and input to have same batch size, but got input with sizes "
                     f"{list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != k:
        _invalid(op, f"grid_sampler(): expected grid to have size {k} in last dimension, but got grid with sizes "
                     f"{list(grid.shape)}")
    if mode == "bicubic" and k != 2:
        _invalid(op, "grid_sampler(): bicubic interpolation only supports 4D input")
    if input.dtype is not grid.dtype:
        _invalid(op, f"grid_sampler(): expected input and grid to have same dtype, but input has "
                     f"{input.dtype} and grid has {grid.dtype}")
    n, c = input.shape[0], input.shape[1]
    sizes = tuple(reversed(input.shape[2:]))  # (W, H[, D]): the size each grid coordinate runs along
    out_spatial = tuple(grid.shape[1:-1])
    flat = input.reshape(n, c, -1)
    g = grid.reshape(n, -1, k)
    coords = [_unnormalize(g[..., i], sizes[i], align) for i in range(k)]
    if mode == "bicubic":
        out = _bicubic(flat, sizes, coords, padding_mode, align)
    else:
        coords = [_pad_coord(x, s, padding_mode, align) for x, s in zip(coords, sizes)]
        if mode == "nearest":
            out = _read(flat, sizes, [x.round().detach() for x in coords])
            if g.requires_grad:  # the grid's gradient is zero, as torch gives it (not None): an exact zero term
                out = out + (g.sum(-1) * 0).nan_to_num(0.0, 0.0, 0.0).unsqueeze(1)
        else:
            out = _linear(flat, sizes, coords)
    return out.reshape(n, c, *out_spatial)


def _linear(flat: Tensor, sizes: Sequence[int], coords: Sequence[Tensor]) -> Tensor:
    lows = [x.floor().detach() for x in coords]
    fracs = [x - low for x, low in zip(coords, lows)]
    out: Tensor | None = None
    for corner in range(2 ** len(coords)):
        taps, weight = [], None
        for i, (low, frac) in enumerate(zip(lows, fracs)):
            up = (corner >> i) & 1
            taps.append(low + up)
            w = frac if up else 1 - frac
            weight = w if weight is None else weight * w
        assert weight is not None
        term = _read(flat, sizes, taps) * weight.unsqueeze(1)
        out = term if out is None else out + term
    assert out is not None
    return out


def _bicubic(flat: Tensor, sizes: Sequence[int], coords: Sequence[Tensor], padding: str, align: bool) -> Tensor:
    (x, y), (w, h) = coords, sizes
    x0, y0 = x.floor().detach(), y.floor().detach()
    wx, wy = _cubic(x - x0), _cubic(y - y0)
    out: Tensor | None = None
    for j in range(4):
        ty = _pad_coord(y0 + (j - 1), h, padding, align).detach()
        row: Tensor | None = None
        for i in range(4):
            tx = _pad_coord(x0 + (i - 1), w, padding, align).detach()
            term = _read(flat, sizes, [tx, ty]) * wx[i].unsqueeze(1)
            row = term if row is None else row + term
        assert row is not None
        term = row * wy[j].unsqueeze(1)
        out = term if out is None else out + term
    assert out is not None
    return out
