"""Layers that move or pad elements without weights: Upsample, PixelShuffle/PixelUnshuffle, the padding
modules, and the distance layers CosineSimilarity and PairwiseDistance."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._rules.nn import interpolate_shape, pad_layer_shape
from ..._tensor import Tensor
from ...ops._common import check
from .. import functional as F
from .module import Module


class Upsample(Module):
    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None, recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size, self.mode, self.align_corners = size, mode, align_corners
        self.scale_factor = float(scale_factor) if isinstance(scale_factor, (int, float)) else scale_factor
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        # The rule the mypy plugin runs on this call: the input's rank for the mode, the output's spatial sizes.
        size = self.size if self.size is None or isinstance(self.size, int) else tuple(self.size)
        check(interpolate_shape, tuple(input.shape), size, self.scale_factor, self.mode, op="Upsample")
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class ChannelShuffle(Module):
    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class PixelShuffle(Module):
    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class Fold(Module):
    """Sums sliding local blocks (columns) back into a (N, C, *output_size) tensor: ``F.fold``."""

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.output_size, self.kernel_size, self.dilation = output_size, kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """Extracts sliding local blocks of a (N, C, H, W) tensor as columns: ``F.unfold``."""

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, stride={self.stride}"


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class _PadNd(Module):
    mode = "constant"
    dims = 1

    def __init__(self, padding: int | Sequence[int], value: float = 0.0) -> None:
        super().__init__()
        self.padding = (padding,) * (2 * self.dims) if isinstance(padding, int) else tuple(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        # The rule the mypy plugin runs on this call, named for the layer in its message.
        check(pad_layer_shape, tuple(input.shape), self.padding, self.mode, self.dims, op=type(self).__name__)
        if self.mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        # torch's wordings: ConstantPad names its padding, the reflect/replicate/circular and zero pads do not
        if self.mode == "constant" and not type(self).__name__.startswith("ZeroPad"):
            return f"padding={self.padding}, value={self.value}"
        return f"{self.padding}"


def _pad(name: str, mode: str, dims: int) -> type[_PadNd]:
    return type(name, (_PadNd,), {"mode": mode, "dims": dims, "__module__": __name__,
                                  "__doc__": f"Pad the last {dims} dim(s) ({mode}), as torch.nn.{name}."})


ConstantPad1d, ConstantPad2d, ConstantPad3d = (_pad(f"ConstantPad{d}d", "constant", d) for d in (1, 2, 3))
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = (_pad(f"ReflectionPad{d}d", "reflect", d) for d in (1, 2, 3))
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = (_pad(f"ReplicationPad{d}d", "replicate", d) for d in (1, 2, 3))
CircularPad1d, CircularPad2d, CircularPad3d = (_pad(f"CircularPad{d}d", "circular", d) for d in (1, 2, 3))


class ZeroPad1d(ConstantPad1d):  # type: ignore[misc,valid-type]
    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__(padding, 0.0)


class ZeroPad2d(ConstantPad2d):  # type: ignore[misc,valid-type]
    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__(padding, 0.0)


class ZeroPad3d(ConstantPad3d):  # type: ignore[misc,valid-type]
    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__(padding, 0.0)


class CosineSimilarity(Module):
    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


__all__ = [
    "ChannelShuffle", "UpsamplingBilinear2d", "UpsamplingNearest2d", "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "CosineSimilarity", "Fold", "PairwiseDistance", "PixelShuffle", "PixelUnshuffle", "ReflectionPad1d", "ReflectionPad2d",
    "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "Unfold", "Upsample", "ZeroPad1d",
    "ZeroPad2d", "ZeroPad3d",
]
