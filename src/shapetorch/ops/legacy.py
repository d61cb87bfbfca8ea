"""torch's legacy tensor constructors and typed tensor classes, which older model code still uses.

- ``Tensor(2, 3)`` (sizes: an uninitialised tensor; here zero-filled), ``Tensor([1, 2])`` (data, made
  floating), ``Tensor()`` (empty), ``x.new(...)`` (the same, in ``x``'s dtype and device).
- ``FloatTensor``, ``LongTensor``, ...: the same constructors in one dtype, and classes for ``isinstance``
  (``isinstance(x, LongTensor)`` is true for an int64 CPU tensor) and ``x.type(LongTensor)``.
- ``x.type()`` names the typed class, as torch: ``'shapetorch.FloatTensor'``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._dtype import DTYPES, DType, get_default_dtype, to_dtype
from .._errors import fail
from .._tensor import Size, Tensor
from ._registry import method
from .creation import tensor, zeros

# the typed classes' names, by dtype
TYPE_NAMES = {
    "float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor", "bfloat16": "BFloat16Tensor",
    "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor",
    "bool": "BoolTensor", "complex64": "ComplexFloatTensor", "complex128": "ComplexDoubleTensor",
}


def _sizes(args: tuple[Any, ...]) -> tuple[int, ...] | None:
    """The sizes of ``Tensor(2, 3)`` or ``Tensor(Size([2, 3]))``; None when the arguments are data."""
    if not args:
        return (0,)
    if len(args) == 1 and isinstance(args[0], Size):
        return tuple(args[0])
    if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
        return tuple(int(a) for a in args)
    return None


def construct(dtype: type[DType], device: Any, *args: Any) -> Tensor:
    """The legacy constructor in ``dtype``: sizes give a zero-filled tensor, one sequence or array gives its data."""
    sizes = _sizes(args)
    if sizes is not None:
        if any(s < 0 for s in sizes):
            fail("argument_error_invalid", op="Tensor",
                 problem=f"Trying to create tensor with negative dimension {min(sizes)}: {list(sizes)}")
        return zeros(sizes, dtype=dtype, device=device)
    if len(args) != 1:
        raise TypeError(f"new(): data must be a sequence (got {', '.join(type(a).__name__ for a in args)})")
    data = args[0]
    if isinstance(data, Tensor):
        if data.dtype is not dtype:
            raise TypeError(f"expected {dtype.name} (got {data.dtype.name})")
        return data
    if isinstance(data, (int, float, bool, complex)):
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
    return tensor(data, dtype=dtype, device=device)


class _TypedMeta(type):
    """``isinstance(x, LongTensor)``: an int64 tensor on the CPU, as torch's typed classes answer."""

    dtype: type[DType]

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == "cpu"

    def __call__(cls, *args: Any, device: Any = None) -> Tensor:
        return construct(cls.dtype, device, *args)


def _typed(dtype_name: str) -> type:
    name = TYPE_NAMES[dtype_name]
    return _TypedMeta(name, (), {"dtype": DTYPES[dtype_name], "__module__": "shapetorch", "__qualname__": name})


TYPED = {TYPE_NAMES[name]: _typed(name) for name in TYPE_NAMES}


def _legacy_new(cls: type, *args: Any, device: Any = None) -> Tensor:
    """``Tensor(...)``: the legacy constructor in the default dtype."""
    return construct(get_default_dtype(), device, *args)


def _new(self: Tensor, *args: Any, device: Any = None) -> Tensor:
    """``x.new(...)``: the legacy constructor in ``x``'s dtype, on its device unless told."""
    return construct(self.dtype, device if device is not None else self.device, *args)


def _type(self: Tensor, dtype: Any = None, non_blocking: bool = False) -> Any:
    """``x.type()``: the typed class's name; ``x.type(LongTensor)``, ``x.type('torch.LongTensor')``,
    ``x.type(int64)``: ``x`` in that dtype."""
    if dtype is None:
        return f"shapetorch.{TYPE_NAMES[self.dtype.name]}"
    if isinstance(dtype, _TypedMeta):
        target: Any = dtype.dtype
    elif isinstance(dtype, str) and dtype.rsplit(".", 1)[-1] in TYPED:
        target = TYPED[dtype.rsplit(".", 1)[-1]].dtype  # type: ignore[attr-defined]
    else:
        target = to_dtype(dtype)
    return self if target is self.dtype else self.to(target)


Tensor.__new__ = _legacy_new  # type: ignore[assignment,method-assign]
method("new", _new)
method("type", _type)
