"""The public namespace of ``shapetorch``, loaded on first attribute access (see ``__init__``).

Functions come from the op registry, so each op is named in one place: its module.
"""

from __future__ import annotations

import builtins as _builtins
import math as _math
from typing import TYPE_CHECKING, Any

from . import (
    _compile,  # noqa: F401  (registers shapetorch.compile in the op table)
    autograd,
    config,
    memory,
    ops,
    serialization,  # noqa: F401  (registers shapetorch.save / shapetorch.load in the op table)
)
from ._device import device, list_devices, register_device, unregister_device
from ._dtype import (
    DType,
    bfloat16,
    bool_,
    complex64,
    complex128,
    finfo,
    float16,
    float32,
    float64,
    get_default_dtype,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    set_default_dtype,
    uint8,
)
from ._errors import (
    AllocationError,
    ArgumentError,
    ArgumentValueError,
    AutogradError,
    AutogradNotImplementedError,
    DeviceError,
    DimensionError,
    DTypeError,
    DTypeNotSupportedError,
    RegistryError,
    ShapeError,
    ShapeNotSupportedError,
    ShapetorchError,
    ShapeValueError,
)
from ._layout import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    jagged,
    layout,
    legacy_contiguous_format,
    memory_format,
    preserve_format,
    sparse_bsc,
    sparse_bsr,
    sparse_coo,
    sparse_csc,
    sparse_csr,
    strided,
)
from ._printing import get_printoptions, printoptions, set_printoptions
from ._rules.dims import Sym
from ._rules.dtypes import promote_types as _promote_names
from ._tensor import Size, Tensor
from .autograd import enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, set_grad_enabled
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled
from .ops._registry import FUNCTIONS
from .ops.legacy import TYPED
from .ops.random import Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from .registry import *  # noqa: F403  (the extension API is public as it is)
from .registry import __all__ as _registry_all

builtins_bool, builtins_int = _builtins.bool, _builtins.int  # before the dtype aliases shadow them
bool = bool_
half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble = complex64, complex128

globals().update(FUNCTIONS)
globals().update(TYPED)  # FloatTensor, LongTensor, ...

inf, nan, pi, e, newaxis = _math.inf, _math.nan, _math.pi, _math.e, None

if TYPE_CHECKING:  # the names that globals().update(FUNCTIONS) defines, spelled out for the type checker
    from .ops.activation import *  # noqa: F403
    from .ops.arithmetic import *  # noqa: F403
    from .ops.comparison import *  # noqa: F403
    from .ops.complex import *  # noqa: F403
    from .ops.conversion import *  # noqa: F403
    from .ops.creation import *  # noqa: F403
    from .ops.einops import *  # noqa: F403
    from .ops.einsum import *  # noqa: F403
    from .ops.indexing import *  # noqa: F403
    from .ops.joining import *  # noqa: F403
    from .ops.matmul import *  # noqa: F403
    from .ops.random import *  # noqa: F403
    from .ops.reduction import *  # noqa: F403
    from .ops.scatter import *  # noqa: F403
    from .ops.unary import *  # noqa: F403
    from .ops.views import *  # noqa: F403


class Dim:
    """Base class for named dims in annotations: ``class Batch(Dim): ...`` then ``Tensor[tuple[Batch, L[3]], float32]``."""


def promote_types(type1: type[DType], type2: type[DType]) -> type[DType]:
    from ._dtype import DTYPES

    return DTYPES[_promote_names(type1.name, type2.name)]


def result_type(tensor1: Any, tensor2: Any) -> type[DType]:
    from ._dtype import DTYPES
    from .ops._common import promoted

    return DTYPES[promoted(tensor1, tensor2)]


def can_cast(from_: type[DType], to: type[DType]) -> _builtins.bool:
    from .ops._common import can_cast as _can

    return _can(from_.name, to.name)


def is_tensor(obj: object) -> _builtins.bool:
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> _builtins.int:
    return input.numel()


def broadcast_shapes(*shapes: Any) -> Size:
    from ._rules.broadcast import broadcast_shapes as rule
    from .ops._common import check

    return Size(check(rule, *(tuple(s) if not isinstance(s, builtins_int) else (s,) for s in shapes), op="broadcast_shapes"))


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t.expand(shape) for t in tensors)


def __getattr__(name: str) -> Any:
    """``shapetorch.GradScaler`` is ``shapetorch.amp.GradScaler``; amp loads only when it is asked for."""
    if name == "GradScaler":
        from .amp import GradScaler

        return GradScaler
    raise AttributeError(name)


def reveal_shape(tensor: Tensor) -> Tensor:
    """Print the shape and dtype, as the mypy plugin reports them statically; returns ``tensor``."""
    from ._rules.dims import fmt_shape

    print(f"Shape: {fmt_shape(tuple(tensor.shape))}  dtype: {tensor.dtype.name}")
    return tensor


__all__ = [
    "channels_last", "channels_last_3d", "contiguous_format", "e", "inf", "jagged", "layout",
    "legacy_contiguous_format", "memory_format", "nan", "newaxis", "pi", "preserve_format", "sparse_bsc",
    "sparse_bsr", "sparse_coo", "sparse_csc", "sparse_csr", "strided",
    "config",
    "memory",
    "reveal_shape",
    "get_printoptions", "printoptions", "set_printoptions",
        "AllocationError", "ArgumentError", "ArgumentValueError", "AutogradError", "AutogradNotImplementedError", "DType", "DTypeError", "DTypeNotSupportedError", "DeviceError", "Dim", "DimensionError", "Generator", "RegistryError",
        "ShapeError", "ShapeNotSupportedError", "ShapeValueError", "ShapetorchError", "Size", "Sym", "Tensor", "autograd", "bfloat16", "bool", "broadcast_shapes",
        "broadcast_tensors", "can_cast", "cdouble", "cfloat", "complex64", "complex128", "default_generator", "device",
        "double", "enable_grad", "finfo", "float", "float16", "iinfo", "float32", "float64", "get_default_dtype",
        "get_rng_state", "half", "inference_mode", "initial_seed", "int", "int8", "int16", "int32", "int64",
        "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "set_anomaly_enabled", "GradScaler",  # noqa: F405
        "is_grad_enabled", "is_inference_mode_enabled", "is_tensor", "list_devices",  "long",
        "manual_seed", "no_grad", "numel", "ops", "promote_types", "register_device", "result_type", "seed",
        "set_default_dtype", "set_grad_enabled", "set_rng_state", "short", "uint8", "unregister_device",
]
__all__ += sorted(TYPED)  # noqa: PLE0605
__all__ += [n for n in _registry_all if n not in __all__]
__all__ += sorted(set(FUNCTIONS) - set(__all__))  # noqa: PLE0605  (every registered op)
