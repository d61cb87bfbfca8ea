"""Public functions of the WebGPU device: availability, memory statistics, cache, synchronisation.

Registered in the op table (category ``device``), so they are ``shapetorch.is_webgpu_available()`` etc.
Importing this module does not import ``wgpu``; each function imports it only when it must.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from ..._device import device
from ..._errors import fail
from ...ops._registry import public

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


@public("device", method=False)
def is_webgpu_available() -> bool:
    """True when a WebGPU adapter and device can be used (imports ``wgpu`` and requests them once)."""
    return unavailable_reason() is None


@public("device", method=False)
def require_webgpu() -> device:
    """``device('webgpu')``, or a DeviceError saying why WebGPU is not available."""
    why = unavailable_reason()
    if why is not None:
        fail("device_error_requires", op="require_webgpu", problem=f"WebGPU is not available: {why}")
    return device("webgpu")


def _check(dev: Any) -> None:
    if dev is not None and device(dev).type != "webgpu":
        fail("device_error_requires", op="memory_stats", problem=f"memory statistics are kept for 'webgpu', not {dev}")


@public("device", method=False)
def memory_stats(device: Any = None) -> dict[str, int]:
    """WebGPU buffer statistics: allocated/reserved/pooled/peak bytes, buffers created and reused, dispatches,
    submits, pipelines. All zero before the first WebGPU tensor (``wgpu`` is not imported for this)."""
    _check(device)
    if _RUNTIME not in sys.modules or sys.modules[_RUNTIME].RT.device is None:
        return {"allocated_bytes": 0, "reserved_bytes": 0, "pooled_bytes": 0, "peak_allocated_bytes": 0,
                "num_buffers_created": 0, "num_buffer_reuses": 0, "num_dispatches": 0, "num_submits": 0,
                "num_pipelines": 0}
    return dict(sys.modules[_RUNTIME].RT.stats())


@public("device", method=False)
def memory_allocated(device: Any = None) -> int:
    """Bytes held by live WebGPU tensors (in pooled size classes)."""
    return memory_stats(device)["allocated_bytes"]


@public("device", method=False)
def memory_reserved(device: Any = None) -> int:
    """Bytes of GPU buffers held: live tensors plus the pool of free buffers kept for reuse."""
    return memory_stats(device)["reserved_bytes"]


@public("device", method=False)
def empty_cache(device: Any = None) -> None:
    """Free the pooled (unused) WebGPU buffers."""
    _check(device)
    if _RUNTIME in sys.modules and sys.modules[_RUNTIME].RT.device is not None:
        sys.modules[_RUNTIME].RT.empty_cache()


@public("device", method=False)
def synchronize(device: Any = None) -> None:
    """Submit the recorded WebGPU work and wait until it is done."""
    _check(device)
    if _RUNTIME in sys.modules and sys.modules[_RUNTIME].RT.device is not None:
        sys.modules[_RUNTIME].RT.synchronize()
