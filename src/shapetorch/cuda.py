"""``shapetorch.cuda``: torch's CUDA namespace on a machine with no CUDA device.

Programs begin with ``device = "cuda" if torch.cuda.is_available() else "cpu"`` and seed every stream
with ``torch.cuda.manual_seed_all``; those run unchanged. What reports on CPU-only torch answers as it
does there (no devices, no memory in use); what needs a device raises a ``DeviceError`` with the code
``device_error_cuda_unavailable`` (torch's CPU-only build raises ``AssertionError`` there).
"""

from __future__ import annotations

from typing import Any, NoReturn

from ._errors import fail

__all__ = [
    "current_device", "device", "device_count", "empty_cache", "get_device_capability", "get_device_name",
    "get_device_properties", "init", "is_available", "is_bf16_supported", "is_initialized", "manual_seed",
    "manual_seed_all", "max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved",
    "reset_peak_memory_stats", "seed", "seed_all", "set_device", "synchronize",
]


def _unavailable(op: str) -> NoReturn:
    fail("device_error_cuda_unavailable", op=f"cuda.{op}")


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


# Seeding and synchronizing a device that does not exist do nothing, as on CPU-only torch.
def manual_seed(seed: int) -> None:
    pass


def manual_seed_all(seed: int) -> None:
    pass


def seed() -> None:
    pass


def seed_all() -> None:
    pass


def synchronize(device: Any = None) -> None:
    pass


def empty_cache() -> None:
    pass


def reset_peak_memory_stats(device: Any = None) -> None:
    pass


def memory_allocated(device: Any = None) -> int:
    return 0


def max_memory_allocated(device: Any = None) -> int:
    return 0


def memory_reserved(device: Any = None) -> int:
    return 0


def max_memory_reserved(device: Any = None) -> int:
    return 0


def init() -> NoReturn:
    _unavailable("init")


def current_device() -> NoReturn:
    _unavailable("current_device")


def set_device(device: Any) -> NoReturn:
    _unavailable("set_device")


def get_device_name(device: Any = None) -> NoReturn:
    _unavailable("get_device_name")


def get_device_properties(device: Any = None) -> NoReturn:
    _unavailable("get_device_properties")


def get_device_capability(device: Any = None) -> NoReturn:
    _unavailable("get_device_capability")


class device:
    """torch's name. ``with torch.cuda.device(0):`` needs a device."""

    def __init__(self, device: Any) -> None:
        _unavailable("device")
