"""Backends: where a tensor's elements live. ``numpy_backend`` is the default and the reference.

Each backend registers its device type with ``shapetorch._device`` here, at import; the WebGPU backend
is loaded (and ``wgpu`` imported) only when a WebGPU tensor is first made.
"""

from __future__ import annotations

from types import ModuleType

from .._device import register_device


def _load_numpy() -> ModuleType:
    from . import numpy_backend

    return numpy_backend


def _load_webgpu() -> ModuleType:
    # imports wgpu and requests the adapter; a DeviceError says why when there is none
    from .webgpu import backend as webgpu_backend

    return webgpu_backend


register_device("cpu", _load_numpy)
register_device("webgpu", _load_webgpu)
