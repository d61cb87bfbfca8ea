"""mypy types <-> rule shapes.

A shape type is ``tuple[...]``: ``Literal[3]`` is the size 3, a ``Dim`` subclass or a TypeVar is
``Sym(name)``, anything else (``Any``, ``int``) is ``UNKNOWN``. ``tuple[Any, ...]`` (or ``Any``)
has an unknown rank, and ``tuple[*tuple[Any, ...], L[3]]`` has unknown leading dims: the rules are
then only applied where the known suffix decides the answer. Symbols are mapped back to the mypy
type they came from, so ``Batch`` and ``B`` flow through every op.
"""

from __future__ import annotations

from dataclasses import dataclass

from mypy.maptype import map_instance_to_supertype
from mypy.plugin import CheckerPluginInterface
from mypy.types import (
    AnyType,
    Instance,
    LiteralType,
    ProperType,
    TupleType,
    Type,
    TypeOfAny,
    TypeVarId,
    TypeVarType,
    UnpackType,
    get_proper_type,
)

from shapetorch._rules import UNKNOWN, Sym
from shapetorch._rules.dims import Dim, Shape

TENSOR = "shapetorch.Tensor"
DIM_BASE = "shapetorch.Dim"
MODULE = "shapetorch"

# dtype class name in the stubs <-> dtype name in the rules
_CLASS_OF = {"bool": "bool_"}
_NAME_OF = {v: k for k, v in _CLASS_OF.items()}


@dataclass
class TensorInfo:
    """What the plugin knows about one Tensor type.

    ``shape`` is None when the rank is unknown. When ``variadic`` is set, ``shape`` is only the
    known suffix and ``variadic`` is the ``*tuple[Any, ...]`` (or ``*Ts``) item in front of it.
    """

    shape: Shape | None
    dtype: str | None
    dtype_type: Type
    variadic: Type | None = None

    @property
    def exact(self) -> bool:
        return self.shape is not None and self.variadic is None


# ``x.shape`` gives its unbounded TypeVars an ``int`` bound (``hooks.views.shape_attr``), so that sizes read from
# it can be computed with. mypy tells the two apart, so a result built from such a size names the TypeVar as
# declared, the one a signature's return type uses: (fullname, id) -> the declared TypeVar.
DECLARED_TYPEVARS: dict[tuple[str, TypeVarId], TypeVarType] = {}


class Converter:
    """Converts the types of one call and remembers which mypy type each symbol came from."""

    def __init__(self, api: CheckerPluginInterface) -> None:
        self.api = api
        self.syms: dict[str, Type] = {}

    # -- mypy -> rules ---------------------------------------------------------------------
    def dim(self, t: Type) -> Dim:
        p = get_proper_type(t)
        if isinstance(p, LiteralType) and type(p.value) is int:
            return p.value
        if isinstance(p, Instance):
            if p.last_known_value is not None and type(p.last_known_value.value) is int:
                return p.last_known_value.value
            if p.type.has_base(DIM_BASE) and p.type.fullname != DIM_BASE:
                return self._sym(p.type.name, t)
        if isinstance(p, TypeVarType):
            return self._sym(p.name, DECLARED_TYPEVARS.get((p.fullname, p.id), t))
        return UNKNOWN

    def _sym(self, name: str, t: Type) -> Sym:
        self.syms.setdefault(name, t)
        return Sym(name)

    def shape(self, t: Type) -> tuple[Shape | None, Type | None]:
        """(dims, variadic item) of a shape type; (None, None) when the rank is unknown."""
        p = get_proper_type(t)
        if isinstance(p, TupleType):
            dims: list[Dim] = []
            variadic: Type | None = None
            for item in p.items:
                if isinstance(item, UnpackType):
                    if variadic is not None or dims:  # only a leading variadic part is understood
                        return None, None
                    variadic = item
                    continue
                dims.append(self.dim(item))
            return tuple(dims), variadic
        return None, None

    def tensor(self, t: Type | None) -> TensorInfo | None:
        """The TensorInfo of a Tensor type, or None if ``t`` is not a Tensor."""
        if t is None:
            return None
        p = get_proper_type(t)
        if isinstance(p, Instance) and p.type.fullname != TENSOR and p.type.has_base(TENSOR):
            base = next(b for b in p.type.mro if b.fullname == TENSOR)  # a Parameter is a Tensor
            p = map_instance_to_supertype(p, base)
        if not (isinstance(p, Instance) and p.type.fullname == TENSOR and len(p.args) == 2):
            return None
        shape, variadic = self.shape(p.args[0])
        return TensorInfo(shape, dtype_name(p.args[1]), p.args[1], variadic)

    # -- rules -> mypy ---------------------------------------------------------------------
    def any(self) -> AnyType:
        return AnyType(TypeOfAny.special_form)

    def tuple_any(self) -> Instance:
        return self.api.named_generic_type("builtins.tuple", [self.any()])

    def dim_type(self, d: Dim) -> Type:
        if type(d) is int:
            return LiteralType(d, fallback=self.api.named_generic_type("builtins.int", []))
        if isinstance(d, Sym):
            return self.syms.get(d.name, self.any())
        return self.any()

    def shape_type(self, shape: Shape | None, variadic: Type | None = None) -> Type:
        if shape is None:
            return self.tuple_any()
        items = [self.dim_type(d) for d in shape]
        if variadic is not None:
            items.insert(0, variadic)
        return TupleType(items, fallback=self.tuple_any())

    def dtype_type(self, name: str | None, fallback: Type | None = None) -> Type:
        if name is None:
            return fallback if fallback is not None else self.any()
        return self.api.named_generic_type(f"{MODULE}.{_CLASS_OF.get(name, name)}", [])

    def tensor_type(self, shape: Shape | None, dtype: Type, variadic: Type | None = None) -> Instance:
        return self.api.named_generic_type(TENSOR, [self.shape_type(shape, variadic), dtype])

    def unknown_tensor(self, dtype: Type | None = None) -> Instance:
        return self.tensor_type(None, dtype if dtype is not None else AnyType(TypeOfAny.from_error))


def dtype_name(t: Type) -> str | None:
    """The rule name of a dtype type (``shapetorch.float32`` -> ``float32``), or None if unknown."""
    p: ProperType = get_proper_type(t)
    if isinstance(p, Instance) and p.type.fullname.startswith(MODULE + ".") and p.type.has_base(f"{MODULE}.DType"):
        name = p.type.name
        if name == "DType":
            return None
        return _NAME_OF.get(name, name)
    return None


def fmt_dims(info: TensorInfo) -> str:
    """``(Batch, 3, ?)``; ``(..., 3)`` for unknown leading dims; ``(...)`` for an unknown rank."""
    if info.shape is None:
        return "(...)"
    parts = [repr(d) for d in info.shape]
    if info.variadic is not None:
        parts.insert(0, "...")
    if len(parts) == 1 and info.variadic is None:
        return f"({parts[0]},)"
    return "(" + ", ".join(parts) + ")"


# -- text for tools outside a check (the language server's hovers and inlay hints) ----------------
class _TypeReader(Converter):
    """Reads types (mypy -> rules) without a check in progress: the reading half needs no plugin API."""

    def __init__(self) -> None:
        self.syms = {}


def shape_text(t: Type) -> str | None:
    """The compact form of ``reveal_shape`` for a Tensor type, ``(Batch, 196, 768) float32``; for a layer
    of ``shapetorch.nn`` with typed sizes, ``Linear[784, 256]``; None for any other type."""
    reader = _TypeReader()
    info = reader.tensor(t)
    if info is not None:
        return f"{fmt_dims(info)} {info.dtype or info.dtype_type}"
    p = get_proper_type(t)
    if isinstance(p, Instance) and p.args and p.type.fullname.startswith(MODULE + ".nn."):
        return f"{p.type.name}[{', '.join(repr(reader.dim(a)) for a in p.args)}]"
    return None
