"""The operator dunders of ``Tensor``: arithmetic and comparison (precise and permissive), in-place, unary
and conversions.

``__matmul__`` is declared with ``matmul`` (``render_overloads.matmul_precise``) and ``__getitem__`` with
the views (``render_tensor``).
"""

from __future__ import annotations

from .render_overloads import binary_permissive, binary_precise
from .render_pyright import MYPY_ONLY, PYRIGHT_ONLY, mypy_only, setitem_columns
from .tables import COMPARE, DUNDERS


def dunders_common() -> list[str]:
    """The same in every branch: conversions, unary operators, ``x[i] = v`` and the in-place operators."""
    out = [
        "def __len__(self) -> _int: ...",
        "def __iter__(self) -> Iterator[Tensor[AnyShape, D]]: ...",
        "def __bool__(self) -> _bool: ...",
        "def __float__(self) -> _float: ...",
        "def __int__(self) -> _int: ...",
        "def __index__(self) -> _int: ...",
        "def __hash__(self) -> _int: ...",
        "def __neg__(self) -> Tensor[S, D]: ...",
        "def __pos__(self) -> Tensor[S, D]: ...",
        "def __abs__(self) -> Tensor[S, D]: ...",
        "def __invert__(self) -> Tensor[S, D]: ...",
    ]
    # x += y takes any y: pyright retries a failed `x += y` as `x = x + y`, which broadcasting allows, so an
    # overload cannot make it stricter there; the plugin checks that y broadcasts to x
    for d in DUNDERS:
        out.append(f"def __i{d}__(self, other: Tensor[Any, Any] | _complex) -> Self: ...")
    return out


_SETITEM = "def __setitem__(self, index: Any, value: Tensor[Any, Any] | _complex) -> None: ..."


def dunders_precise() -> list[str]:
    """``x + y``, ``y + x``, ``x < y``, ...: the precise overloads."""
    out: list[str] = [*mypy_only([_SETITEM]), *setitem_columns()]
    for d, rule in DUNDERS.items():
        out += binary_precise(f"__{d}__", rule, True)
        out += binary_precise(f"__r{d}__", rule, True)
    for c in COMPARE:
        lines = binary_precise(f"__{c}__", "bool", True)
        if c in ("eq", "ne"):
            lines = [_ignore_override(ln) if ln.startswith("def") else ln for ln in lines]
        out += lines
    return out


def _ignore_override(line: str) -> str:
    """``line`` with mypy's override ignore, before a branch marker (``render_pyright``) if it has one."""
    for marker in (PYRIGHT_ONLY, MYPY_ONLY):
        if line.endswith(marker):
            return line.removesuffix(marker) + "  # type: ignore[override]" + marker
    return line + "  # type: ignore[override]"


def dunders_permissive() -> list[str]:
    """``x + y``, ``y + x``, ``x < y``, ...: one permissive declaration each (the plugin computes the result)."""
    out: list[str] = [_SETITEM]
    for d, rule in DUNDERS.items():
        out += binary_permissive(f"__{d}__", rule, True)
        out += binary_permissive(f"__r{d}__", rule, True)
    for c in COMPARE:
        ln = binary_permissive(f"__{c}__", "bool", True)[0]
        out.append(ln + ("  # type: ignore[override]" if c in ("eq", "ne") else ""))
    return out
