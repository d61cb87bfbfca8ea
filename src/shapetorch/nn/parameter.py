"""``nn.Parameter``: a leaf tensor that a Module registers as one of its parameters, and ``Buffer``."""

from __future__ import annotations

from typing import Any

from .._errors import ShapetorchError, from_rule
from .._rules.errors import RuleError
from .._tensor import Tensor, plain_tensor_type
from ..ops._registry import TAKES_UNINITIALIZED, register_uninitialized
from ..ops.creation import empty


def _data_of(data: Any) -> Tensor:
    if data is None:
        return empty(0)
    if not isinstance(data, Tensor):
        raise TypeError(f"Parameter data must be a Tensor, not {type(data).__name__}")
    return data


@plain_tensor_type  # (NOTE [plain tensor types]: the engine's fast paths take it)
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


@plain_tensor_type
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


# What an uninitialized tensor still answers, as torch's ``UninitializedTensorMixin``: its metadata, the
# conversions a Module applies to it (``.to``, ``.float``...) and ``materialize``; anything that reads values
# raises ValueError. Names starting with "_" (the runtime's own fields) pass too.
_UNINITIALIZED_ALLOWED = TAKES_UNINITIALIZED | {
    "materialize", "cls_to_become", "dtype", "device", "requires_grad", "grad", "is_leaf", "data", "persistent"}


def _use_error(name: str) -> ShapetorchError:
    return from_rule(RuleError("argument_error_uninitialized", op=name))


class UninitializedTensorMixin:
    """A parameter or buffer whose shape is not known yet (what a lazy module holds until its first forward).

    ``materialize(shape)`` gives it storage and turns it, in place, into ``cls_to_become``: the object stays the
    same, so a module's dicts and an optimizer that already holds it see the materialized tensor."""

    cls_to_become: type[Tensor] = Tensor
    _data: Any
    _device: Any
    # (NOTE [uninitialized tensors]: every op's argument guard refuses it, by its class, and so does the engine's
    # general path, by this flag; ``_use_error`` is their error)
    _uninitialized = True
    _use_error = staticmethod(_use_error)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        register_uninitialized(cls)

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("_") or name in _UNINITIALIZED_ALLOWED:
            return object.__getattribute__(self, name)
        if name == "shape":
            raise RuntimeError(
                "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
                "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
                "`forward` to initialize the parameters before accessing their attributes.")
        raise _use_error(name)

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give the tensor uninitialized storage of ``shape`` (this one's device and dtype unless given) and
        make it a ``cls_to_become``."""
        from ..ops.creation import empty

        if device is None:
            device = self._device
        if dtype is None:
            dtype = Tensor.dtype.fget(self)  # type: ignore[attr-defined]
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        new = empty(shape, device=device, dtype=dtype)
        self._data, self._device = new._data, new._device
        self.__class__ = self.cls_to_become  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    __str__ = __repr__

    def __reduce_ex__(self, protocol: Any) -> Any:
        return type(self), ((self._requires_grad,) if isinstance(self, Parameter) else ())

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        cls: Any = type(self)
        dtype = Tensor.dtype.fget(self)  # type: ignore[attr-defined]
        out = cls(self._requires_grad if isinstance(self, Parameter) else False, self._device, dtype)
        memo[id(self)] = out
        return out


def _refuse(name: str) -> Any:
    def refused(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise _use_error(name)

    refused.__name__ = name
    return refused


# Operators are looked up on the type, not through __getattribute__: refused here too (== and != stay, as a
# container's membership test compares parameters).
for _name in ("__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__", "__rmul__",
              "__imul__", "__truediv__", "__rtruediv__", "__itruediv__", "__floordiv__", "__rfloordiv__",
              "__mod__", "__rmod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__neg__", "__pos__",
              "__abs__", "__invert__", "__and__", "__or__", "__xor__", "__lt__", "__le__", "__gt__", "__ge__",
              "__getitem__", "__setitem__", "__len__", "__iter__", "__bool__", "__float__", "__int__", "__index__",
              "__array__"):
    setattr(UninitializedTensorMixin, _name, _refuse(_name))


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter of unknown shape: a lazy module's weight before its first forward."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> UninitializedParameter:
        p = object.__new__(cls)
        p._data, p._device = _empty_data(device, dtype)
        p.requires_grad = requires_grad
        return p

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> None:
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer of unknown shape: a lazy norm layer's running statistics before its first forward."""

    cls_to_become = Tensor
    persistent: bool = True

    def __new__(cls, requires_grad: bool = False, device: Any = None, dtype: Any = None, *,
                persistent: bool = True) -> UninitializedBuffer:
        b = object.__new__(cls)
        b._data, b._device = _empty_data(device, dtype)
        if requires_grad:
            b.requires_grad = True
        b.persistent = persistent
        return b

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None, *,
                 persistent: bool = True) -> None:
        pass


def _empty_data(device: Any, dtype: Any) -> tuple[Any, Any]:
    t = empty(0, device=device, dtype=dtype)
    return t._data, t._device


def is_lazy(param: Any) -> bool:
    """Whether ``param`` is an uninitialized parameter or buffer (its shape comes with a lazy module's first
    forward)."""
    return isinstance(param, UninitializedTensorMixin)
