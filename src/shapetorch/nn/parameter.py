"""``nn.Parameter``: a leaf tensor that a Module registers as one of its parameters, and ``Buffer``."""

from __future__ import annotations

from typing import Any

from .._tensor import Tensor
from ..ops.creation import empty


def _data_of(data: Any) -> Tensor:
    if data is None:
        return empty(0)
    if not isinstance(data, Tensor):
        raise TypeError(f"Parameter data must be a Tensor, not {type(data).__name__}")
    return data


class Parameter(Tensor):
    """A Tensor that is a module parameter: it shares ``data``'s storage and requires grad by default."""

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        src = _data_of(data)
        p = object.__new__(cls)
        p._data = src._shareable_data()
        p._device = src._device
        p.requires_grad = requires_grad
        return p

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass

    @property
    def data(self) -> Tensor:
        """The values without the autograd history (shares storage)."""
        return Tensor._make(self._shareable_data(), self._device)

    @data.setter
    def data(self, value: Tensor) -> None:
        self._data = value._data
        self._device = value._device

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, protocol: Any) -> Any:
        return _rebuild_parameter, (Tensor._make(self._data, self._device), self.requires_grad)

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        out = Parameter(Tensor._make(self._data.copy(), self._device), self.requires_grad)
        memo[id(self)] = out
        return out


def _rebuild_parameter(data: Tensor, requires_grad: bool) -> Parameter:
    """Unpickle a Parameter (its data pickles as a tensor)."""
    return Parameter(data, requires_grad)


class Buffer(Tensor):
    """``nn.Buffer``: marks a tensor to be registered as a buffer when assigned to a Module attribute."""

    persistent: bool = True

    def __new__(cls, data: Tensor, *, persistent: bool = True) -> Buffer:
        b = object.__new__(cls)
        b._data, b._device = data._shareable_data(), data._device
        b.persistent = persistent
        return b

    def __init__(self, data: Tensor, *, persistent: bool = True) -> None:
        pass


def is_lazy(param: Any) -> bool:
    return False
