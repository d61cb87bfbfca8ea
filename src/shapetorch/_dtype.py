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


# -- finfo and iinfo -------------------------------------------------------------------------------------------------

class finfo:
    """Machine limits of a floating dtype, as ``torch.finfo`` (a complex dtype gives its real part's)."""

    # bits, eps, max, smallest normal (tiny), resolution: the IEEE 754 (and bfloat16) formats' exact values
    _TABLE: ClassVar[dict[str, tuple[int, float, float, float, float]]] = {
        "float16": (16, 2.0 ** -10, 65504.0, 2.0 ** -14, 1e-3),
        "bfloat16": (16, 2.0 ** -7, (2 - 2.0 ** -7) * 2.0 ** 127, 2.0 ** -126, 1e-2),
        "float32": (32, 2.0 ** -23, (2 - 2.0 ** -23) * 2.0 ** 127, 2.0 ** -126, 1e-6),
        "float64": (64, 2.0 ** -52, (2 - 2.0 ** -52) * 2.0 ** 1023, 2.0 ** -1022, 1e-15),
    }

    def __init__(self, type: object = None) -> None:
        d = get_default_dtype() if type is None else to_dtype(type, "finfo")
        name = {"complex64": "float32", "complex128": "float64"}.get(d.name, d.name)
        if name not in self._TABLE:
            from ._errors import fail

            fail("argument_error_refused", op="finfo",
                 problem=f"finfo requires a floating point input type, got {d.name}; use iinfo for integer dtypes")
        self.bits, self.eps, self.max, self.tiny, self.resolution = self._TABLE[name]
        self.min = -self.max
        self.smallest_normal = self.tiny
        self.dtype = name

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.tiny:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer (or bool) dtype, as ``torch.iinfo``."""

    def __init__(self, type: object) -> None:
        d = to_dtype(type, "iinfo")
        if d.is_floating_point or d.name.startswith("complex") or d.name == "bool":
            from ._errors import fail

            fail("argument_error_refused", op="iinfo",
                 problem=f"iinfo supports the integer dtypes, got {d.name}; use finfo for floating ones")
        self.bits = d.itemsize * 8
        signed = d.name.startswith("int")
        self.min = -(2 ** (self.bits - 1)) if signed else 0
        self.max = 2 ** (self.bits - 1) - 1 if signed else 2 ** self.bits - 1
        self.dtype = d.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
