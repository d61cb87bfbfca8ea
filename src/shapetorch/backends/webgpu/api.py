"""Public functions of the WebGPU device: availability, memory statistics, cache, synchronisation.

``is_webgpu_available`` and ``require_webgpu`` are registered in the op table (category ``device``) by
``shapetorch.ops``, so they are ``shapetorch.is_webgpu_available()`` etc.
Importing this module does not import ``wgpu``; each function imports it only when it must.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from ..._device import device
from ..._errors import fail

_RUNTIME = "shapetorch.backends.webgpu.runtime"


def _runtime() -> Any:
    from . import runtime

    return runtime.RT


def unavailable_reason() -> str | None:
    """Why ``device='webgpu'`` cannot be used here, or None when it can."""
    if os.environ.get("SHAPETORCH_WEBGPU_DISABLE") == "1":
        return "disabled by SHAPETORCH_WEBGPU_DISABLE=1"
    rt = _runtime()
    return None if rt.init() else str(rt.error)


def is_webgpu_available() -> bool:
    """True when a WebGPU adapter and device can be used (imports ``wgpu`` and requests them once)."""
    return unavailable_reason() is None


def require_webgpu() -> device:
    """``device('webgpu')``, or a DeviceError saying why WebGPU is not available."""
    why = unavailable_reason()
    if why is not None:
        fail("device_error_requires", op="require_webgpu", problem=f"WebGPU is not available: {why}")
    return device("webgpu")


def live() -> bool:
    """Whether the WebGPU runtime has been started (memory questions never start it)."""
    return _RUNTIME in sys.modules and sys.modules[_RUNTIME].RT.device is not None


def capturing() -> bool:
    """Whether a WebGPU graph capture is underway (``shapetorch.webgpu.graph``); never starts the runtime."""
    return live() and sys.modules[_RUNTIME].RT.recorder is not None


def stats() -> dict[str, int]:
    """Buffer statistics of the WebGPU runtime; zeros before the first WebGPU tensor (no wgpu import)."""
    if not live():
        return dict.fromkeys(STAT_KEYS, 0)
    return dict(sys.modules[_RUNTIME].RT.stats())


def reset_peak() -> None:
    if live():
        sys.modules[_RUNTIME].RT.peak_bytes = sys.modules[_RUNTIME].RT.live_bytes


def empty_cache() -> None:
    """Free the pooled (unused) WebGPU buffers."""
    if live():
        sys.modules[_RUNTIME].RT.empty_cache()


def synchronize() -> None:
    """Submit the recorded WebGPU work and wait until it is done."""
    if live():
        sys.modules[_RUNTIME].RT.synchronize()


STAT_KEYS = ("allocated_bytes", "reserved_bytes", "pooled_bytes", "peak_allocated_bytes", "num_buffers_created",
             "num_buffer_reuses", "num_dispatches", "num_submits", "num_pipelines", "num_bytes_uploaded",
             "num_readbacks", "num_check_reads")
