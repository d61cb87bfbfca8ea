"""The overloads that only pyright reads: literal sizes kept by the factories, broadcasting checked per dim,
``x[:, i]``.

pyright has no plugin, so what it checks is what overloads can say. Two devices carry these checks:

* A TypeVar bound to a union of literal sizes (``_Z0`` .. ``_Z3``, bound to ``_LitSize``) keeps a literal
  argument literal; a plain TypeVar would be widened to ``int`` (``zeros(2, 3)`` would be
  ``Tensor[tuple[int, int]]``, and an ``int`` size matches nothing).
* Broadcasting is written per dim against ``_HasShape``, a protocol with a covariant shape: a dim of the
  other operand is ``_P1 | Literal[1]``, so ``(6, 8) + (1, 8)`` and ``(6, 8) + (8,)`` match and
  ``(6, 8) + (3,)`` matches nothing. There is deliberately no catch-all ``Tensor[Any, Any]`` overload
  beside them: it would accept the mismatch too. Every legal case is spelled out instead (any rank of
  the longer operand, up to 4 dims of the shorter one, scalars, 0-d tensors, unknown ranks, ranks above 4).

Each line here carries ``PYRIGHT_ONLY`` (the mypy-without-plugin branch drops it, see
``render_module.for_mypy``): mypy solves a fixed-rank pattern against an unknown rank to ``Never``, so
mypy alone keeps its own, coarser overloads. The lines they replace carry ``MYPY_ONLY``.
"""

from __future__ import annotations

PYRIGHT_ONLY = "  # pyright only"
MYPY_ONLY = "  # mypy alone only"
MAX_ALIGNED = 4  # dims of the shorter operand spelled out per position
_P = [f"_P{i}" for i in range(1, MAX_ALIGNED + 1)]
_Z = [f"_Z{i}" for i in range(MAX_ALIGNED)]
# a shape of rank above MAX_ALIGNED: no overload spells its dims out, so it is accepted as it is
BIG_RANK = "tuple[Any, Any, Any, Any, Any, Unpack[tuple[Any, ...]]]"


def pyright_only(lines: list[str]) -> list[str]:
    return [ln + PYRIGHT_ONLY for ln in lines]


def mypy_only(lines: list[str]) -> list[str]:
    return [ln + MYPY_ONLY for ln in lines]


def typevars() -> list[str]:
    """The module-level declarations these overloads use (the literal-size union comes from nn_stubs)."""
    from nn_stubs import LITERAL_SIZES  # stubs/nn_stubs.py: one table of literal sizes for every constructor

    return [
        f"_LitSize: TypeAlias = _L[{', '.join(map(str, LITERAL_SIZES))}]  # see nn_stubs.LITERAL_SIZES",
        *[f'{z} = TypeVar("{z}", bound=_LitSize)' for z in _Z],
        *[f'{p} = TypeVar("{p}")' for p in _P],
        '_ShC = TypeVar("_ShC", bound=tuple[Any, ...], covariant=True)',
        "",
        "class _OnlyAny:",
        '    """No value has this type, so only ``Any`` matches it: a list of Any-typed tensors takes the overload',
        '    that asks for it (an Any result) instead of the first rank-specific one."""',
        "",
        "class _HasShape(Protocol[_ShC]):",
        '    """Anything with a shape: a covariant view of a tensor, so a dim may be matched by a union."""',
        "    @property",
        "    def shape(self) -> _ShC: ...",
    ]


# ---------------------------------------------------------------------------------- factories
def literal_factory(name: str, first: str, ret_dtype: str, kw: str) -> list[str]:
    """``zeros(2, 3)`` -> ``Tensor[tuple[Literal[2], Literal[3]], ...]`` when every size is in the literal table;
    the overloads of ``render_overloads.sized`` (``Any`` sizes) follow for every other call."""
    kw = f", *, {kw}" if kw else ""
    out: list[str] = []
    for n in range(1, MAX_ALIGNED + 1):
        params = ", ".join(f"s{i}: {_Z[i]}" for i in range(n))
        out += ["@overload", f"def {name}({first}{params}, /{kw}) -> Tensor[tuple[{', '.join(_Z[:n])}], {ret_dtype}]: ..."]
    return pyright_only(out)


# ---------------------------------------------------------------------------------- broadcasting
def _dims(n: int, ones: bool = True) -> str:
    return ", ".join(f"{p} | _L[1]" if ones else p for p in _P[:n])


def broadcast_checked(name: str, method: bool, other: str, ret_dtype: str) -> list[str]:
    """The broadcasting overloads of a binary op, after its same-shape, bias and scalar ones: the result has
    the broadcast shape (dtype ``ret_dtype``: a mix of dtypes needs the plugin's promotion rules)."""
    a = "self" if method else "input"
    out: list[str] = []
    # `y + x` with two tensors is decided by `__add__` (pyright tries `__radd__` only after it fails), so a
    # reflected operator needs no broadcasting overloads: one check per operator, and a smaller stub
    reflected = name.startswith("__r")
    for n in range(1, MAX_ALIGNED + 1 if not reflected else 1):
        long_ = f"_HasShape[tuple[Unpack[_Bs], {_dims(n)}]]"
        short = f"_HasShape[tuple[{_dims(n)}]]"
        ret = f"Tensor[tuple[Unpack[_Bs], {_dims(n, ones=False)}], {ret_dtype}]"
        out += ["@overload", f"def {name}({a}: {long_}, {other}: {short}) -> {ret}: ...",
                "@overload", f"def {name}({a}: {short}, {other}: {long_}) -> {ret}: ..."]
    out += [
        "@overload",
        f"def {name}({a}: Tensor[_S2, Any], {other}: Tensor[tuple[()], Any] | _complex) -> Tensor[_S2, {ret_dtype}]: ...",
        "@overload",
        f"def {name}({a}: Tensor[tuple[()], Any], {other}: Tensor[_S2, Any]) -> Tensor[_S2, {ret_dtype}]: ...",
    ]
    if not reflected:
        out += [
            "@overload",
            f"def {name}({a}: Tensor[{BIG_RANK}, Any], {other}: Tensor[Any, Any]) -> Tensor[AnyShape, {ret_dtype}]: ...",
            "@overload",
            f"def {name}({a}: Tensor[Any, Any], {other}: Tensor[{BIG_RANK}, Any]) -> Tensor[AnyShape, {ret_dtype}]: ...",
        ]
    return pyright_only(out)


# ---------------------------------------------------------------------------------- indexing
def getitem_columns() -> list[str]:
    """``x[:, i]`` drops dim 1 and ``x[:, :, i]`` dim 2 (a full slice keeps its dim)."""
    full = "slice[None, None, None]"
    return pyright_only([
        "@overload",
        f"def __getitem__(self: Tensor[tuple[_M, Any, Unpack[_Ts]], D], index: tuple[{full}, _int], /) "
        "-> Tensor[tuple[_M, Unpack[_Ts]], D]: ...",
        "@overload",
        f"def __getitem__(self: Tensor[tuple[_M, _N, Any, Unpack[_Ts]], D], index: tuple[{full}, {full}, _int], /) "
        "-> Tensor[tuple[_M, _N, Unpack[_Ts]], D]: ...",
    ])


def setitem_columns() -> list[str]:
    """``x[:, i] = v``: ``v`` must broadcast to the slot ``x[:, i]`` (a value of a higher rank is let through: torch
    drops its leading 1s). Every other index takes any value; that overload's index type leaves out exactly
    ``tuple[slice[None, None, None], int]``, so a mismatch there is not let through by it."""
    full = "slice[None, None, None]"
    q = [f"_P{i}" for i in range(1, MAX_ALIGNED + 1)]
    out: list[str] = []
    for rank in range(2, MAX_ALIGNED + 1):
        slot = [q[0], *q[1:rank - 1]]  # dim 1 is the one indexed away
        self_t = f"Tensor[tuple[{', '.join([q[0], 'Any', *q[1:rank - 1]])}], Any]"
        values = [f"_HasShape[tuple[{', '.join(f'{d} | _L[1]' for d in slot[len(slot) - k:])}]]"
                  for k in range(1, len(slot) + 1)]
        higher = f"_HasShape[tuple[{', '.join(['Any'] * (len(slot) + 1))}, Unpack[tuple[Any, ...]]]]"
        value = " | ".join([*values, higher, "Tensor[tuple[()], Any]", "_complex"])
        out += ["@overload", f"def __setitem__(self: {self_t}, index: tuple[{full}, _int], value: {value}, /) -> None: ..."]
    out += ["@overload",
            f"def __setitem__(self: Tensor[{BIG_RANK}, Any], index: tuple[{full}, _int], "
            "value: Tensor[Any, Any] | _complex, /) -> None: ..."]
    one = "_int | None | EllipsisType | Tensor[Any, Any] | list[Any]"
    partial = "slice[_int, Any, Any] | slice[Any, _int, Any] | slice[Any, Any, _int]"
    other = (f"{one} | slice[Any, Any, Any] | tuple[()] | tuple[Any] | tuple[Any, Any, Any, Unpack[tuple[Any, ...]]] "
             f"| tuple[{one} | {partial}, Any] | tuple[slice[Any, Any, Any], slice[Any, Any, Any] | None | EllipsisType "
             "| Tensor[Any, Any] | list[Any]]")
    out += ["@overload", f"def __setitem__(self, index: {other}, value: Tensor[Any, Any] | _complex, /) -> None: ..."]
    return pyright_only(out)


# ---------------------------------------------------------------------------------- views and joining
def literal_sized(name: str, first: str, ret_dtype: str) -> list[str]:
    """``x.reshape(2, -1, 16)`` -> ``Tensor[tuple[Literal[2], Any, Literal[16]], ...]``: literal sizes are kept, the
    inferred ``-1`` is unknown (its size is a quotient), and so are leading sizes that are not literals
    (``x.reshape(b, -1, 16)``); other sizes take the ``Any`` overloads that follow."""
    out: list[str] = []
    # leading sizes read from `.shape` (`x.reshape(b, 101, 160)`: a TypeVar, a named dim or an int) are unknown
    # here, the literal ones after them kept; the overloads with more literal sizes come first
    for unknown in range(MAX_ALIGNED):
        for n in range(unknown + 1, MAX_ALIGNED + 1):  # every size unknown: the ``Any`` overloads that follow
            for infer in (None, *range(unknown, n)):
                params = ", ".join(f"s{i}: {'_Size' if i < unknown else '_L[-1]' if i == infer else _Z[i]}"
                                   for i in range(n))
                dims = ", ".join("Any" if i < unknown or i == infer else _Z[i] for i in range(n))
                out += ["@overload", f"def {name}({first}{params}, /) -> Tensor[tuple[{dims}], {ret_dtype}]: ..."]
    return pyright_only(out)


def cat_by_dim(name: str) -> list[str]:
    """``cat`` along a literal dim of tensors of rank 1 to 4: the other dims are the same in every tensor, the
    joined one is unknown (a sum). Tensors whose other dims differ, or a dim that is not a literal, take the
    ``Any``-shaped overloads the caller adds after these, so this never rejects a call: it only keeps the other
    dims."""
    out = ["@overload", f"def {name}(tensors: Sequence[_OnlyAny], dim: _int = 0) -> Tensor[AnyShape, Any]: ...",
           # an unknown rank (``tuple[Any, ...]``) would match the first rank-specific pattern below and come out
           # with that rank: it, and ranks above MAX_ALIGNED, match this one first (a fixed rank of at most
           # MAX_ALIGNED does not)
           "@overload", f"def {name}(tensors: Sequence[Tensor[{BIG_RANK}, _D2]], dim: _int = 0) -> Tensor[AnyShape, _D2]: ..."]
    for rank in range(1, MAX_ALIGNED + 1):
        for d in range(rank):
            dims = ", ".join("Any" if i == d else _P[i] for i in range(rank))
            default = " = 0" if d == 0 else ""
            out += ["@overload", f"def {name}(tensors: Sequence[Tensor[tuple[{dims}], _D2]], dim: _L[{d}, {d - rank}]{default}) "
                    f"-> Tensor[tuple[{dims}], _D2]: ..."]
    return pyright_only(out)
