"""``Variable``: the deprecated wrapper. ``Variable(t)`` and ``Variable(t, requires_grad)`` return tensors."""

from __future__ import annotations

from typing import Any


class _VariableMeta(type):
    def __instancecheck__(cls, other: Any) -> bool:
        from .._tensor import Tensor

        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """Deprecated: tensors do everything Variables did. ``isinstance(t, Variable)`` holds for any tensor."""

    def __new__(cls, data: Any = None, requires_grad: bool = False, volatile: bool = False) -> Any:
        from .._tensor import Tensor
        from ..ops.creation import tensor

        if data is None:
            data = tensor([])
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if requires_grad:
            out.requires_grad_(True)
        return out
