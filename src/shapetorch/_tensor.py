"""The Tensor: a backend array, its device, and its place in the autograd graph.

Methods and operators are attached by the op modules (``shapetorch.ops``) from the same table that
defines the functions, so ``x.add(y)``, ``x + y`` and ``shapetorch.add(x, y)`` are one op.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._device import CPU, device

if TYPE_CHECKING:
    from ._dtype import DType
    from .autograd.engine import Node


class Tensor:
    """A multi-dimensional array with PyTorch semantics.

    Fields that usually keep their default live on the class, so that making a tensor sets only
    ``_data`` and ``_device``: tiny ops are dominated by this cost.
    """

    _data: Any  # the backend's array (numpy.ndarray on "cpu")
    _device: device
    requires_grad: bool = False
    grad: Tensor | None = None
    _grad_fn: Node | None = None
    _base: Tensor | None = None  # set on views: the tensor whose storage this one shares
    _version_cell: list[int] | None = None  # shared by a base and its views; made on first write
    _retains_grad: bool = False
    _accumulator: Any = None  # the AccumulateGrad node of a leaf, made on demand
    _hooks: list[Any] | None = None
    _backward_hooks_dict: Any = None

    __array_priority__ = 1000  # numpy defers `ndarray + Tensor` to Tensor.__radd__

    if TYPE_CHECKING:
        # Methods are attached from the op table (shapetorch.ops); inside the runtime mypy sees them
        # as Any. Users get precise types from the stubs package (shapetorch-stubs).
        def __getattr__(self, name: str) -> Any: ...
        def __add__(self, other: Any) -> Tensor: ...
        def __radd__(self, other: Any) -> Tensor: ...
        def __sub__(self, other: Any) -> Tensor: ...
        def __rsub__(self, other: Any) -> Tensor: ...
        def __mul__(self, other: Any) -> Tensor: ...
        def __rmul__(self, other: Any) -> Tensor: ...
        def __truediv__(self, other: Any) -> Tensor: ...
        def __rtruediv__(self, other: Any) -> Tensor: ...
        def __pow__(self, other: Any) -> Tensor: ...
        def __rpow__(self, other: Any) -> Tensor: ...
        def __matmul__(self, other: Any) -> Tensor: ...
        def __neg__(self) -> Tensor: ...
        def __invert__(self) -> Tensor: ...
        def __lt__(self, other: Any) -> Tensor: ...
        def __le__(self, other: Any) -> Tensor: ...
        def __gt__(self, other: Any) -> Tensor: ...
        def __ge__(self, other: Any) -> Tensor: ...
        def __eq__(self, other: Any) -> Tensor: ...  # type: ignore[override]
        def __ne__(self, other: Any) -> Tensor: ...  # type: ignore[override]
        def __getitem__(self, index: Any) -> Tensor: ...
        def __setitem__(self, index: Any, value: Any) -> None: ...

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("make tensors with shapetorch.tensor(...), zeros(...), ... (Tensor(...) is torch's legacy constructor)")

    @classmethod
    def _make(cls, data: Any, dev: device = CPU) -> Tensor:
        t = object.__new__(cls)
        t._data = data
        t._device = dev
        return t

    # -- metadata -----------------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None) -> Any:
        if dim is None:
            return Size(self._data.shape)
        from ._errors import raise_from_rule
        from ._rules import wrap_dim
        from ._rules.errors import RuleError

        try:
            return self._data.shape[wrap_dim(dim, self._data.ndim, "size")] if self._data.ndim else 1
        except RuleError as e:
            raise_from_rule(e)

    @property
    def dtype(self) -> type[DType]:
        from ._device import backend

        return backend(self._device.type).dtype_of(self._data)  # type: ignore[no-any-return]

    @property
    def device(self) -> device:
        return self._device

    @property
    def ndim(self) -> int:
        return self._data.ndim  # type: ignore[no-any-return]

    def dim(self) -> int:
        return self._data.ndim  # type: ignore[no-any-return]

    ndimension = dim

    def numel(self) -> int:
        return self._data.size  # type: ignore[no-any-return]

    nelement = numel

    def element_size(self) -> int:
        return self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.numel() * self.dtype.itemsize

    @property
    def is_leaf(self) -> bool:
        return self._grad_fn is None

    @property
    def grad_fn(self) -> Node | None:
        return self._grad_fn

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def is_cpu(self) -> bool:
        return self._device.type == "cpu"

    def is_floating_point(self) -> bool:
        return bool(self.dtype.is_floating_point)

    def is_complex(self) -> bool:
        return bool(self.dtype.is_complex)

    @property
    def _version(self) -> int:
        return self._version_cell[0] if self._version_cell is not None else 0

    def _bump_version(self) -> None:
        """Record an in-place write; views share the counter with their base, as in torch."""
        owner = self._base if self._base is not None else self
        if owner._version_cell is None:
            owner._version_cell = [0]
        owner._version_cell[0] += 1
        self._version_cell = owner._version_cell

    def __len__(self) -> int:
        if not self._data.ndim:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]  # type: ignore[no-any-return]

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        from ._printing import tensor_repr

        return tensor_repr(self)

    __str__ = __repr__


class Size(tuple[int, ...]):
    """``torch.Size``: a tuple of ints that prints as ``shapetorch.Size([2, 3])``."""

    def __repr__(self) -> str:
        return f"shapetorch.Size({list(self)})"

    __str__ = __repr__

    def numel(self) -> int:
        n = 1
        for d in self:
            n *= d
        return n
