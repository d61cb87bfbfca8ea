"""What torch tells about a tensor's memory and kind, and the methods that only concern them.

Every shapetorch tensor is a dense, strided, non-quantized tensor in ordinary (unpinned, unshared)
memory, with its conjugation and negation applied eagerly: so ``is_sparse``, ``is_quantized``,
``is_conj()``, ... are False, ``resolve_conj()`` is the tensor itself, and ``pin_memory()`` and
``share_memory_()`` have nothing to do. ``data_ptr()`` and ``storage_offset()`` describe the real
NumPy memory (a WebGPU tensor's ``data_ptr`` is its buffer's identity, which is all code compares it for).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _layout as L
from .._tensor import Tensor
from ._registry import method, public
from .views import _storage


def _tensor(x: Any) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    return x


def _data_ptr(self: Tensor) -> int:
    a = self._data
    if isinstance(a, np.ndarray):
        return int(a.__array_interface__["data"][0])
    return id(getattr(a, "buffer", a))


def _storage_offset(self: Tensor) -> int:
    return _storage(self)[1] if isinstance(self._data, np.ndarray) else 0


def _get_device(self: Tensor) -> int:
    """-1 for a CPU tensor, as torch; the device's index otherwise."""
    return -1 if self.device.type == "cpu" else (self.device.index or 0)


@public("misc")
def is_signed(input: Tensor) -> bool:
    """Whether the dtype holds negative values (not bool or uint8)."""
    return input.dtype.name not in ("bool", "uint8")


@public("misc")
def is_same_size(input: Tensor, other: Tensor) -> bool:
    return tuple(input.shape) == tuple(other.shape)


@public("misc")
def is_conj(input: Tensor) -> bool:
    """False: a conjugate is computed when it is asked for, never kept as a lazy bit."""
    return False


@public("misc")
def is_neg(input: Tensor) -> bool:
    return False


@public("misc")
def resolve_conj(input: Tensor) -> Tensor:
    return _tensor(input)


@public("misc")
def resolve_neg(input: Tensor) -> Tensor:
    return _tensor(input)


def _apply_(self: Tensor, callable: Callable[[Any], Any]) -> Tensor:
    """Apply a Python function to each element in place (CPU tensors, as torch)."""
    from ._common import write_inplace

    if self.device.type != "cpu":
        raise TypeError("apply_ is only implemented on CPU tensors")
    values = [callable(v) for v in self._data.reshape(-1).tolist()]
    out = Tensor._make(np.asarray(values, dtype=self._data.dtype).reshape(self._data.shape), self._device)
    return write_inplace(self, out, "apply_")


def _map_(self: Tensor, tensor: Tensor, callable: Callable[[Any, Any], Any]) -> Tensor:
    """``self[i] = callable(self[i], tensor[i])`` in place, ``tensor`` broadcast to ``self``'s shape."""
    from ._common import write_inplace

    other = np.broadcast_to(tensor._data, self._data.shape).reshape(-1).tolist()
    values = [callable(a, b) for a, b in zip(self._data.reshape(-1).tolist(), other)]
    out = Tensor._make(np.asarray(values, dtype=self._data.dtype).reshape(self._data.shape), self._device)
    return write_inplace(self, out, "map_")


def _identity(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    return self


def _false(self: Tensor, *args: Any, **kwargs: Any) -> bool:
    return False


def _as_subclass(self: Tensor, cls: type) -> Tensor:
    """The same data and graph as an instance of ``cls`` (a subclass of Tensor)."""
    out: Tensor = object.__new__(cls)
    out.__dict__.update(self.__dict__)
    return out


def _dim_order(self: Tensor, *, ambiguity_check: bool = False) -> tuple[int, ...]:
    """The dims from outermost to innermost in memory (stable for equal strides)."""
    strides = self.stride()
    return tuple(sorted(range(self.dim()), key=lambda d: -strides[d]))


method("data_ptr", _data_ptr)
method("storage_offset", _storage_offset)
method("get_device", _get_device)
method("apply_", _apply_)
method("map_", _map_)
method("as_subclass", _as_subclass)
method("dim_order", _dim_order)
for _name in ("pin_memory", "share_memory_", "to_dense", "coalesce", "record_stream"):
    method(_name, _identity)
for _name in ("is_pinned", "is_shared", "is_coalesced", "is_set_to"):
    method(_name, _false)
for _name in ("is_sparse", "is_sparse_csr", "is_quantized", "is_meta", "is_mkldnn", "is_nested", "is_mps", "is_xpu",
              "is_xla", "is_ipu", "is_vulkan", "is_maia", "is_mtia"):
    setattr(Tensor, _name, property(_false))
Tensor.layout = property(lambda self: L.strided)  # type: ignore[attr-defined]
