"""``convert_conv2d_weight_memory_format`` / ``convert_conv3d_weight_memory_format``: convolution weights in
another memory format (channels_last), found recursively in a module tree."""

from __future__ import annotations

from typing import Any

from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module: Module, memory_format: Any, kinds: tuple[type, ...]) -> Module:
    if isinstance(module, kinds):
        w: Any = module.weight
        w.data = w.detach().contiguous(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module: Module, memory_format: Any) -> Module:
    """Store the weight of every Conv2d / ConvTranspose2d in ``module`` (itself included) in ``memory_format``;
    returns ``module``."""
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module: Module, memory_format: Any) -> Module:
    """Store the weight of every Conv3d / ConvTranspose3d in ``module`` (itself included) in ``memory_format``;
    returns ``module``."""
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
