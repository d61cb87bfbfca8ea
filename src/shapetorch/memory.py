"""Memory statistics for every device: ``memory_stats``, ``memory_summary``, ``memory_allocated``,
``max_memory_allocated``, ``memory_reserved``, ``reset_peak_memory_stats``, ``empty_cache``, ``synchronize``.

``device=None`` means the accelerator in use: the default device if it is not "cpu", else "webgpu" once
a WebGPU tensor exists, else "cpu". On "cpu" the numbers come from ``tracemalloc`` (NumPy reports its
array allocations to it), which is started by the first call and makes Python allocations somewhat
slower while it runs; ``stop_cpu_memory_tracking()`` ends it.
"""

from __future__ import annotations

import tracemalloc
from typing import Any

from . import _device
from .backends.webgpu import api as webgpu
from .ops._registry import public

_CPU_STATE = {"peak_base": 0}


def _device_type(device: Any) -> str:
    if device is not None:
        return _device.to_device(device).type
    default = _device.to_device(None).type
    if default != "cpu":
        return default
    return "webgpu" if webgpu.live() else "cpu"


def _cpu_stats() -> dict[str, int]:
    if not tracemalloc.is_tracing():
        tracemalloc.start()
    current, peak = tracemalloc.get_traced_memory()
    stats = dict.fromkeys(webgpu.STAT_KEYS, 0)
    stats.update(allocated_bytes=current, reserved_bytes=current, peak_allocated_bytes=peak)
    return stats


@public("memory", method=False)
def memory_stats(device: Any = None) -> dict[str, int]:
    """Allocator statistics: allocated/reserved/pooled/peak bytes and, on WebGPU, buffers and dispatches."""
    return webgpu.stats() if _device_type(device) == "webgpu" else _cpu_stats()


@public("memory", method=False)
def memory_allocated(device: Any = None) -> int:
    """Bytes held by live tensors (on "cpu": all memory traced since tracking started)."""
    return memory_stats(device)["allocated_bytes"]


@public("memory", method=False)
def max_memory_allocated(device: Any = None) -> int:
    """The peak of ``memory_allocated`` since the start or the last ``reset_peak_memory_stats``."""
    return memory_stats(device)["peak_allocated_bytes"]


@public("memory", method=False)
def memory_reserved(device: Any = None) -> int:
    """Bytes held by the device: live tensors plus cached free buffers (on "cpu", the same as allocated)."""
    return memory_stats(device)["reserved_bytes"]


@public("memory", method=False)
def reset_peak_memory_stats(device: Any = None) -> None:
    if _device_type(device) == "webgpu":
        webgpu.reset_peak()
    elif tracemalloc.is_tracing():
        tracemalloc.reset_peak()
    else:
        tracemalloc.start()


@public("memory", method=False)
def empty_cache(device: Any = None) -> None:
    """Free cached, unused device buffers (NumPy returns memory itself, so "cpu" has none)."""
    if _device_type(device) == "webgpu":
        webgpu.empty_cache()


@public("memory", method=False)
def synchronize(device: Any = None) -> None:
    """Wait for the device's queued work ("cpu" runs eagerly and never waits)."""
    if _device_type(device) == "webgpu":
        webgpu.synchronize()


@public("memory", method=False)
def stop_cpu_memory_tracking() -> None:
    if tracemalloc.is_tracing():
        tracemalloc.stop()


def _fmt(n: int) -> str:
    size, unit = float(n), "B"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024 or unit == "GiB":
            break
        size /= 1024
    return f"{n} B" if unit == "B" else f"{size:.2f} {unit}"


@public("memory", method=False)
def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    """A table of ``memory_stats``, as ``torch.cuda.memory_summary`` prints one."""
    kind = _device_type(device)
    stats = memory_stats(device)
    width = 44
    lines = ["=" * width, f" shapetorch memory summary, device {kind!r}".ljust(width), "-" * width]
    for key, value in stats.items():
        if abbreviated and key.startswith("num_"):
            continue
        shown = _fmt(value) if key.endswith("_bytes") else str(value)
        lines.append(f" {key:<28}{shown:>14}")
    lines.append("=" * width)
    return "\n".join(lines)
