"""dtypes as classes: the class is both the static type (``Tensor[S, float32]``) and the runtime value."""

from __future__ import annotations

from typing import ClassVar

from ._rules import dtypes as R


class _DTypeMeta(type):
    name: str

    def __repr__(cls) -> str:
        return f"shapetorch.{cls.name}"

    def __str__(cls) -> str:
        return f"shapetorch.{cls.name}"


class DType(metaclass=_DTypeMeta):
    """Base of the dtype classes. Attributes mirror ``torch.dtype``."""

    name: ClassVar[str] = "dtype"
    itemsize: ClassVar[int] = 0
    is_floating_point: ClassVar[bool] = False
    is_complex: ClassVar[bool] = False
    is_signed: ClassVar[bool] = False

    def __init_subclass__(cls) -> None:
        info = R.DTYPES[cls.name]
        cls.itemsize = max(info.bits // 8, 1)
        cls.is_floating_point = info.kind == "f"
        cls.is_complex = info.kind == "c"
        cls.is_signed = info.kind in "ifc"
        DTYPES[cls.name] = cls

    def __new__(cls) -> DType:
        raise TypeError(f"{cls!r} is a dtype class and is used as it is, not instantiated")

    @classmethod
    def to_real(cls) -> type[DType]:
        return DTYPES[R.to_real(cls.name)]

    @classmethod
    def to_complex(cls) -> type[DType]:
        return DTYPES[R.to_complex(cls.name)]


DTYPES: dict[str, type[DType]] = {}


# The class names follow torch's dtype names; `bool` is spelled `bool_` here so the builtin stays usable.
class bool_(DType):
    name = "bool"


class uint8(DType):
    name = "uint8"


class int8(DType):
    name = "int8"


class int16(DType):
    name = "int16"


class int32(DType):
    name = "int32"


class int64(DType):
    name = "int64"


class float16(DType):
    name = "float16"


class bfloat16(DType):
    name = "bfloat16"


class float32(DType):
    name = "float32"


class float64(DType):
    name = "float64"


class complex64(DType):
    name = "complex64"


class complex128(DType):
    name = "complex128"


ALIASES: dict[str, type[DType]] = {
    "bool": bool_, "half": float16, "float": float32, "double": float64, "short": int16, "int": int32,
    "long": int64, "cfloat": complex64, "cdouble": complex128,
}

_default: list[type[DType]] = [float32]


def get_default_dtype() -> type[DType]:
    return _default[0]


def set_default_dtype(d: type[DType]) -> None:
    """Like torch: only float32 and float64 (and float16/bfloat16) may be the default."""
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d!r}")
    _default[0] = d


def to_dtype(d: object, op: str = "dtype") -> type[DType]:
    """Accept a dtype class or its name ('float32', 'long'); anything else is a DTypeError."""
    if isinstance(d, type) and issubclass(d, DType) and d is not DType:
        return d
    if isinstance(d, str):
        name = d.removeprefix("shapetorch.").removeprefix("torch.")
        found = DTYPES.get(name) or ALIASES.get(name)
        if found is not None:
            return found
    from ._errors import fail
    from ._rules.errors import did_you_mean

    fail("dtype_not_found_error", op=op, name=str(d), hint=did_you_mean(str(d), [*DTYPES, *ALIASES]))
