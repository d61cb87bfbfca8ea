"""``nn.parallel``: ``DataParallel``, which on a machine without CUDA devices runs the wrapped module as is."""

from __future__ import annotations

from typing import Any

from ..modules.module import Module

__all__ = ["DataParallel"]


class DataParallel(Module):
    """Wraps ``module`` (reachable as ``.module``; its state dict entries are prefixed ``module.``). torch splits
    each batch over its CUDA devices; with none, as here, forward calls the module directly, which is what
    torch does too."""

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids: list[Any] = []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)
