"""The overloads that only pyright reads, chosen by a literal dim: ``x.transpose(1, 2)``, ``x.permute(0, 2, 1)``,
``x.T``, ``x.unsqueeze(2)``, ``x.squeeze(1)``, ``x.sum(dim=1)`` (every reduction), ``x.max(dim=1).values``,
``st.gather(x, 1, index)``, ``x[:, :k]``.

Each result is the runtime's own shape rule (``shapetorch._rules``) evaluated on symbolic dims: a TypeVar per
dim that the op touches (``_P1`` ..), and one symbol for the rest of the shape, written as ``Unpack[_Ts]``.
So nothing here restates a rule.

A dim counted from the front binds a prefix of the shape (``tuple[_P1, _P2, *_Ts]``) and a dim counted from the
back a suffix (``tuple[*_Ts, _P1]``): one overload serves every rank that has the dim. A tensor of unknown rank
matches it and the ``Any``-shaped fallback after it, with different results, and pyright answers such an
ambiguous call with ``Any``: never with a rank it made up. permute, ``.T`` and gather, whose arguments name
every dim, are written per rank (1 to 4; above that the fallback's unknown shape).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import permutations, product

from shapetorch._rules.dims import UNKNOWN, Dim, Shape, Sym
from shapetorch._rules.reduction import reduce_shape
from shapetorch._rules.scatter import gather_shape
from shapetorch._rules.views import permute_shape, squeeze_shape, transpose_shape, unsqueeze_shape

from .render_pyright import BIG_RANK, pyright_only

MAX_DIM = 4  # dims 0..3 and -1..-4; permute, .T and gather on ranks 1 to 4
_P = [Sym(f"_P{i}") for i in range(1, MAX_DIM + 1)]
_REST = Sym("Unpack[_Ts]")  # the dims the op leaves alone, of any number
FRONT = tuple(range(MAX_DIM))
BACK = tuple(range(-1, -MAX_DIM - 1, -1))


def shape_text(shape: Shape) -> str:
    """A symbolic shape as a stub's tuple type: a symbol is its TypeVar, an int its literal, unknown ``Any``."""
    parts = [d.name if isinstance(d, Sym) else f"_L[{d}]" if isinstance(d, int) else "Any" for d in shape]
    return f"tuple[{', '.join(parts)}]" if parts else "tuple[()]"


def pattern(*dims: int, at: dict[int, Dim] | None = None) -> Shape:
    """The least shape that has ``dims`` (all from the front or all from the back), the rest left to ``_Ts``;
    ``at`` pins a dim to a size (``squeeze`` tells a 1 from any other size)."""
    if all(d >= 0 for d in dims):
        reach = max(dims, default=-1) + 1
        named = [_P[i] for i in range(reach)]
        shape: Shape = (*named, _REST)
    else:
        reach = -min(dims)
        named = [_P[i] for i in range(reach)]
        shape = (_REST, *named)
    for d, size in (at or {}).items():
        i = d if d >= 0 else len(shape) + d
        shape = (*shape[:i], size, *shape[i + 1:])
    return shape


def _ov(line: str) -> list[str]:
    return ["@overload", line]


def _chain_break(name: str, first: str) -> str:
    """A plain declaration before the overloads that replace an op's common ones for pyright: pyright reads the
    last declaration, but joins it to the overloads above when the one before is overloaded too (a bare
    ``name: Any`` would end the chain as well, but in a class it is an instance variable, and the methods after
    it would not be bound)."""
    head = "self" if first == "self" else "*args: Any"
    rest = ", *args: Any" if first == "self" else ""
    return f"def {name}({head}{rest}, **kwargs: Any) -> Any: ...  # ends the chain of overloads above"


# ---------------------------------------------------------------------------------- one dim or two
def transpose() -> list[str]:
    """``transpose(a, b)`` with both dims from the front or both from the back (a mixed pair needs the rank)."""
    out: list[str] = []
    for side in (FRONT, BACK):
        for a, b in permutations(side, 2):
            shape = pattern(a, b)
            out += _ov(f"def transpose(self: Tensor[{shape_text(shape)}, D], dim0: _L[{a}], dim1: _L[{b}]) "
                       f"-> Tensor[{shape_text(transpose_shape(shape, a, b))}, D]: ...")
    return pyright_only(out)


def unsqueeze() -> list[str]:
    """``unsqueeze(d)``: a 1 inserted before the d-th dim from the front, or after the |d|-th from the back."""
    out: list[str] = []
    for d in (*FRONT, *BACK):
        # the result has one dim more, so the input needs one dim less than ``d`` reaches
        shape = pattern() if d in (0, -1) else pattern(d - 1) if d > 0 else pattern(d + 1)
        out += _ov(f"def unsqueeze(self: Tensor[{shape_text(shape)}, D], dim: _L[{d}]) "
                   f"-> Tensor[{shape_text(unsqueeze_shape(shape, d))}, D]: ...")
    return pyright_only(out)


def squeeze() -> list[str]:
    """``squeeze(d)`` drops the dim when it is 1 and keeps any other size (a TypeVar too, as the plugin does);
    ``Any`` there matches both, which pyright answers with ``Any``."""
    out: list[str] = []
    for d in (*FRONT, *BACK):
        for size in (1, None):
            shape = pattern(d) if size is None else pattern(d, at={d: size})
            out += _ov(f"def squeeze(self: Tensor[{shape_text(shape)}, D], dim: _L[{d}]) "
                       f"-> Tensor[{shape_text(squeeze_shape(shape, d))}, D]: ...")
    return pyright_only(out)


def reductions(name: str, first: str, self_dtype: str, result_dtype: str, skip: Sequence[int] = ()) -> list[str]:
    """``sum(dim=d)``, ``mean(x, d, keepdim=True)``, ...: the dim dropped, or kept as a 1."""
    out: list[str] = []
    for d in (*FRONT, *BACK):
        if d in skip:
            continue
        shape = pattern(d)
        for keep in (False, True):
            kw = "keepdim: _L[False] = False" if not keep else "keepdim: _L[True]"
            out += _ov(f"def {name}({first}: Tensor[{shape_text(shape)}, {self_dtype}], dim: _L[{d}], {kw}) "
                       f"-> Tensor[{shape_text(reduce_shape(shape, d, keep))}, {result_dtype}]: ...")
    return pyright_only(out)


def values_indices(name: str, first: str, d_type: str, rest: list[str]) -> list[str]:
    """``max(dim=d)`` / ``min(dim=d)``: (values, indices) with the dim dropped or kept as a 1; ``rest`` is the
    op's declaration for every branch, declared again after these."""
    out = [_chain_break(name, first)]
    for d in (*FRONT, *BACK):
        shape = pattern(d)
        for keep in (False, True):
            kw = "keepdim: _L[False] = False" if not keep else "keepdim: _L[True]"
            out += _ov(f"def {name}({first}: Tensor[{shape_text(shape)}, {d_type}], dim: _L[{d}], {kw}) "
                       f"-> _ValuesIndices[{shape_text(reduce_shape(shape, d, keep))}, {d_type}]: ...")
    return pyright_only([*out, *rest])


# ---------------------------------------------------------------------------------- every dim named
def _ranked(rank: int) -> Shape:
    return tuple(_P[:rank])


def permute() -> list[str]:
    """``permute(2, 0, 1)``, ranks 1 to 4; a dim may be counted from the back (``permute(0, -1, 1)``)."""
    out: list[str] = []
    for rank in range(1, MAX_DIM + 1):
        shape = _ranked(rank)
        for order in permutations(range(rank)):
            params = ", ".join(f"d{i}: _L[{d}, {d - rank}]" for i, d in enumerate(order))
            out += _ov(f"def permute(self: Tensor[{shape_text(shape)}, D], {params}, /) "
                       f"-> Tensor[{shape_text(permute_shape(shape, order))}, D]: ...")
    return pyright_only(out)


def reversed_descriptor() -> list[str]:
    """``x.T``: every dim reversed (torch's ``T`` on rank 0 to 4; above that an unknown shape). A property cannot
    be overloaded, a descriptor's ``__get__`` can."""
    out = ["class _Reversed:", '    """``Tensor.T`` for pyright: the dims in reverse order."""']
    for rank in range(0, MAX_DIM + 1):
        shape = _ranked(rank)
        out += ["    @overload", f"    def __get__(self, obj: Tensor[{shape_text(shape)}, _D2], owner: Any) "
                f"-> Tensor[{shape_text(permute_shape(shape, tuple(reversed(range(rank)))))}, _D2]: ..."]
    out += ["    @overload", "    def __get__(self, obj: Tensor[Any, _D2], owner: Any) -> Tensor[AnyShape, _D2]: ..."]
    return out


def gather(first: str, self_dtype: str) -> list[str]:
    """``gather(x, dim, index)``: the index has the input's rank (torch lets a 0-d and a 1-d stand for each other)
    and gives the result its shape. Each pair of ranks the rule accepts is one overload, so an index of another
    rank matches none; ranks above 4 have an unknown result. These replace the common declaration for pyright."""
    out = [_chain_break("gather", first)]
    sparse = "*, sparse_grad: _bool = False"
    for rank, index_rank in product(range(MAX_DIM + 1), repeat=2):
        shape: Shape = (UNKNOWN,) * rank
        index = _ranked(index_rank)
        try:
            result = gather_shape(shape, 0, index)
        except Exception:  # a RuleError: torch rejects this pair of ranks
            continue
        out += _ov(f"def gather({first}: Tensor[{shape_text(shape)}, {self_dtype}], dim: _int, "
                   f"index: Tensor[{shape_text(index)}, Any], {sparse}) -> Tensor[{shape_text(result)}, {self_dtype}]: ...")
    big = f"Tensor[{BIG_RANK}, Any]"
    out += _ov(f"def gather({first}: Tensor[{BIG_RANK}, {self_dtype}], dim: _int, index: Tensor[Any, Any], {sparse}) "
               f"-> Tensor[AnyShape, {self_dtype}]: ...")
    out += _ov(f"def gather({first}: Tensor[Any, {self_dtype}], dim: _int, index: {big}, {sparse}) "
               f"-> Tensor[AnyShape, {self_dtype}]: ...")
    return pyright_only(out)


# ---------------------------------------------------------------------------------- slices
_FULL = "slice[None, None, None]"
_PART = "slice[Any, Any, Any]"


def getitem_slices() -> list[str]:
    """``x[:k]``, ``x[:, :k]``, ``x[:, 1:, ::2]``: a slice keeps its dim, ``:`` with its size, any other slice
    with an unknown one (a length is arithmetic). The overloads that keep more sizes come first."""
    out: list[str] = []
    for n in (1, 2, 3):
        for full in sorted(product((True, False), repeat=n), key=lambda f: -sum(f)):
            shape = pattern(n - 1)
            result = tuple(d if keep else UNKNOWN for d, keep in zip(shape, full)) + shape[n:]
            kinds = [_FULL if keep else _PART for keep in full]
            index = kinds[0] if n == 1 else f"tuple[{', '.join(kinds)}]"
            out += _ov(f"def __getitem__(self: Tensor[{shape_text(shape)}, D], index: {index}, /) "
                       f"-> Tensor[{shape_text(result)}, D]: ...")
    return pyright_only(out)


def along(make: Callable[[int], tuple[str, Shape]], name: str, first: str, d_type: str, default: int | None) -> list[str]:
    """Overloads of a function of one literal dim whose result ``make(d)`` computes: (pattern, result) texts."""
    out: list[str] = []
    for d in (*FRONT, *BACK):
        shape_in, result = make(d)
        dflt = f" = {d}" if d == default else ""
        out += _ov(f"def {name}({first}: Tensor[{shape_in}, {d_type}], dim: _L[{d}]{dflt}) "
                   f"-> Tensor[{shape_text(result)}, {d_type}]: ...")
    return out
