"""Backends: where a tensor's elements live. ``numpy_backend`` is the default and the reference.

Each backend registers its device type with ``shapetorch._device`` here, at import; the WebGPU backend
is loaded (and ``wgpu`` imported) only when a WebGPU tensor is first made. ``cudnn``, ``cuda`` and ``mps``
hold torch's flags of those backends, which scripts set; shapetorch has none of them.
"""

from __future__ import annotations

from types import ModuleType

from .._device import register_device
from . import cuda, cudnn, mps  # noqa: F401  ( torch.backends' flag modules: scripts set them; they hold flags only)


def _load_numpy() -> ModuleType:
    from . import numpy_backend

    return numpy_backend


def _load_webgpu() -> ModuleType:
    # imports wgpu and requests the adapter; a DeviceError says why when there is none
    from .webgpu import backend as webgpu_backend

    return webgpu_backend


register_device("cpu", _load_numpy)
register_device("webgpu", _load_webgpu)
