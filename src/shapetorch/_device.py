"""Devices: ``device("cpu")``, ``device("webgpu")``, and the registry that maps a device type to its backend."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._errors import fail
from ._rules.errors import did_you_mean

# device type -> a loader returning the backend module, registered by the backends themselves
# (``shapetorch.backends``, above this module). Loaders run on first use, so the WebGPU backend (and
# wgpu) is imported only when a WebGPU tensor is first made.
BACKEND_LOADERS: dict[str, Callable[[], Any]] = {}
_BACKENDS: dict[str, Any] = {}


def register_device(type: str, loader: Callable[[], Any]) -> None:
    BACKEND_LOADERS[type] = loader
    _BACKENDS.pop(type, None)
    _BY_NAME.clear()


def unregister_device(type: str) -> None:
    BACKEND_LOADERS.pop(type, None)
    _BACKENDS.pop(type, None)
    _BY_NAME.clear()  # (its name is unknown again)


def list_devices() -> list[str]:
    return list(BACKEND_LOADERS)


def backend(type: str) -> Any:
    be = _BACKENDS.get(type)
    if be is None:
        if type not in BACKEND_LOADERS:
            _unknown(type)
        be = _BACKENDS[type] = BACKEND_LOADERS[type]()
    return be


def _unknown(text: str) -> None:
    fail(
        "device_error_requires", op="device",
        problem=f"unknown device {text!r}; known devices: {', '.join(BACKEND_LOADERS)}{did_you_mean(text, BACKEND_LOADERS)}",
    )


class device:
    """``torch.device``: a type (``'cpu'``, ``'webgpu'``) and an optional index."""

    __slots__ = ("index", "type")
    type: str
    index: int | None

    def __init__(self, type: str | device, index: int | None = None) -> None:
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if not isinstance(type, str):
            raise TypeError(f"device() expects a string such as 'cpu', got {type!r}")
        name, _, idx = type.partition(":")
        if name not in BACKEND_LOADERS:
            _unknown(type)
        self.type = name
        self.index = int(idx) if idx else index

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __repr__(self) -> str:
        idx = f", index={self.index}" if self.index is not None else ""
        return f"device(type='{self.type}'{idx})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"


CPU = object.__new__(device)  # the default device; its backend registers "cpu" when shapetorch.backends is imported
CPU.type, CPU.index = "cpu", None


DEFAULT: list[device] = []  # set_default_device's choice; empty means "cpu"


# NOTE [one device object]: the engine's fast paths test that two tensors are on one device by identity
# (``b._device is a._device``, ``Prim.call2``), and an equal but distinct object sends the call to the general path
# and ``device.__eq__``. So ``to_device`` gives one object per (type, index): a module moved with ``.to("webgpu")``,
# whose parameters each got a new device before, and the tensors made with ``device="webgpu"`` share it.
_CANONICAL: dict[tuple[str, int | None], device] = {("cpu", None): CPU}
_BY_NAME: dict[str, device] = {}  # a device string's object (emptied when a device type is registered or removed)


def to_device(d: object) -> device:
    """A device argument as a device; None means the default device (``set_default_device``)."""
    if d is None:
        return DEFAULT[0] if DEFAULT else CPU
    if isinstance(d, device):
        return _CANONICAL.get((d.type, d.index)) or _CANONICAL.setdefault((d.type, d.index), d)
    if isinstance(d, str):
        dv = _BY_NAME.get(d)
        if dv is None:
            made = device(d)  # (raises for an unknown type)
            dv = _BY_NAME[d] = _CANONICAL.setdefault((made.type, made.index), made)
        return dv
    raise TypeError(f"expected a device or a device string, got {d!r}")
