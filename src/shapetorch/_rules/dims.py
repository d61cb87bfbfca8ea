"""Dims and shapes as the rules see them.

A dim is an ``int`` (a known size), a :class:`Sym` (a named size: ``Batch``, a TypeVar, or a
product such as ``h*w``), or :data:`UNKNOWN`. At runtime only ints occur, so every check is exact;
the static checker passes symbols and unknowns, and the rules stay gradual: an unknown never
raises, two different symbols are different sizes, and an int against a symbol is undecidable.
"""

from __future__ import annotations

from typing import Final, TypeAlias


class Sym:
    """A named size. Symbols with the same name are the same size."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sym) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("Sym", self.name))

    def __repr__(self) -> str:
        return self.name


class _Unknown:
    __slots__ = ()

    def __repr__(self) -> str:
        return "?"

    def __reduce__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Final = _Unknown()

Dim: TypeAlias = int | Sym | _Unknown
Shape = tuple[Dim, ...]


def fmt_shape(shape: Shape) -> str:
    """``(2, B, ?)``: a shape as it appears in messages."""
    if len(shape) == 1:
        return f"({shape[0]!r},)"
    return "(" + ", ".join(repr(d) for d in shape) + ")"


def same(a: Dim, b: Dim) -> bool | None:
    """True/False when decidable, None when not (an unknown, or an int against a symbol)."""
    if a is UNKNOWN or b is UNKNOWN:
        return None
    if type(a) is type(b):
        return a == b
    return None


def differ(a: Dim, b: Dim) -> bool:
    """A real contradiction: both sizes known (or both named) and different."""
    return same(a, b) is False


def dim_add(a: Dim, b: Dim) -> Dim:
    """The sum of two sizes: exact for ints, the other size when one is 0, else unknown."""
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    if a == 0:
        return b
    if b == 0:
        return a
    return UNKNOWN


def dim_mul(a: Dim, b: Dim) -> Dim:
    """The product of two sizes; symbolic products are kept as a canonical ``a*b`` name."""
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    if a == 1:
        return b
    if b == 1:
        return a
    if a is UNKNOWN or b is UNKNOWN:
        return UNKNOWN
    if a == 0 or b == 0:
        return 0
    return _from_factors(_factors(a) + _factors(b))


def _from_factors(factors: list[str]) -> Dim:
    """Canonical product: named factors sorted, numbers multiplied into one trailing factor, so
    ``Batch*Seq*8`` and ``2*4*Batch*Seq`` are the same size."""
    names, number = _split(factors)
    if not names:
        return number
    return Sym("*".join(sorted(names) + ([str(number)] if number != 1 else [])))


def _factors(d: Dim) -> list[str]:
    return d.name.split("*") if isinstance(d, Sym) else [str(d)]


def prod(dims: Shape) -> Dim:
    out: Dim = 1
    for d in dims:
        out = dim_mul(out, d)
    return out


def known(shape: Shape) -> bool:
    return all(isinstance(d, int) for d in shape)


def dim_div(a: Dim, b: Dim) -> Dim:
    """``a / b`` when it is exact and decidable, else UNKNOWN (the rules never guess)."""
    if isinstance(a, int) and isinstance(b, int):
        return a // b if b and a % b == 0 else UNKNOWN
    if b == 1:
        return a
    if a is UNKNOWN or b is UNKNOWN or a == b:
        return 1 if a == b and a is not UNKNOWN else UNKNOWN
    names_a, num_a = _split(_factors(a))
    names_b, num_b = _split(_factors(b))
    for f in names_b:
        if f not in names_a:
            return UNKNOWN
        names_a.remove(f)
    if num_a % num_b:
        return UNKNOWN
    return _from_factors([*names_a, str(num_a // num_b)])


def _cancel(a: Dim, b: Dim) -> tuple[list[str], int, list[str], int] | None:
    """The named factors of ``a`` and ``b`` that the other lacks, and each one's number; None if unknown."""
    if a is UNKNOWN or b is UNKNOWN:
        return None
    names_a, num_a = _split(_factors(a))
    names_b, num_b = _split(_factors(b))
    for f in list(names_b):
        if f in names_a:
            names_a.remove(f)
            names_b.remove(f)
    return names_a, num_a, names_b, num_b


def product_differ(a: Dim, b: Dim) -> bool:
    """Two element counts (products of named sizes and numbers) that cannot be equal.

    Named factors on both sides cancel; what is left decides only when one side has no name left:
    ``Batch*16000`` against ``Batch*16160`` differ, and so does ``16000`` against ``T*161`` (161 does
    not divide 16000, whatever T is); ``D`` against ``H*Dh`` is undecidable (a named size may be a
    product of others), as is ``16000`` against ``T*160``. Unlike :func:`differ`, two different names
    are not taken for two different sizes here: a product of names says nothing about their relations.
    Cancelling a name takes its size for non-zero, as named dims are meant (a batch, a sequence): an empty
    batch is the one case where ``(Batch, 16000).reshape(Batch, 101, 160)`` runs."""
    c = _cancel(a, b)
    if c is None:
        return False
    names_a, num_a, names_b, num_b = c
    if names_a and names_b:
        return False
    if not names_a and not names_b:
        return num_a != num_b
    number, multiple = (num_a, num_b) if not names_a else (num_b, num_a)
    return number % multiple != 0 if multiple else number != 0


def product_indivisible(a: Dim, b: Dim) -> bool:
    """``a`` is a count that ``b`` cannot divide (the -1 of a reshape cannot be inferred): a proof, never a guess."""
    c = _cancel(a, b)
    if c is None:
        return False
    names_a, num_a, names_b, num_b = c
    if names_a or names_b or num_b == 0:
        return False
    return num_a % num_b != 0


def _split(factors: list[str]) -> tuple[list[str], int]:
    number = 1
    for f in factors:
        if f.isdigit():
            number *= int(f)
    return [f for f in factors if not f.isdigit()], number
