"""einsum: equation parsing (cached, shape-independent) and the shape rule, with torch's accept/reject.

Labels are numbered as torch numbers them: ``A``-``Z`` are 0-25 and ``a``-``z`` are 26-51, so the
implicit output (labels seen once, in label order) puts upper case before lower case. The checks run
in the order torch runs them, so the first error is torch's first error: the input terms are scanned
left to right (syntax, and too few operands as soon as a comma runs past the last one), then too many
operands, then each term's rank, then the output term, then the sizes.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral

from .dims import UNKNOWN, Dim, Shape, differ, fmt_shape
from .errors import RuleError, did_you_mean

ELLIPSIS = -1  # stands for '...' in a parsed term
N_LABELS = 52
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def letter(label: int) -> str:
    return "..." if label == ELLIPSIS else _LETTERS[label]


def _label(ch: str) -> int:
    return _LETTERS.index(ch) if ("A" <= ch <= "Z" or "a" <= ch <= "z") else -2


@dataclass(frozen=True)
class Equation:
    """A parsed equation. Errors are kept, not raised, because whether (and which) one is reported
    depends on the number and ranks of the operands, which parsing must not see."""

    source: str
    terms: tuple[tuple[int, ...], ...]  # the input terms scanned before any syntax error
    lhs_error: tuple[int, str] | None  # (term index, problem) of the first syntax error on the left
    output: tuple[int, ...] | None  # the explicit output term; None means implicit
    rhs_error: tuple[str, str, str] | None  # (code, letter, problem) of the first error on the right


def _scan_term(text: str, offset: int, where: str) -> tuple[list[int], str | None]:
    """One term: labels and ELLIPSIS; spaces are skipped, as torch skips them."""
    labels: list[int] = []
    seen_ellipsis = False
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == " ":
            i += 1
            continue
        if ch == ".":
            if seen_ellipsis:
                return labels, f"found '.' for {where} for which an ellipsis was already found"
            if text[i : i + 3] != "...":
                return labels, f"found '.' for {where} that is not part of any ellipsis (...)"
            labels.append(ELLIPSIS)
            seen_ellipsis = True
            i += 3
            continue
        label = _label(ch)
        if label < 0:
            return labels, f"invalid subscript {ch!r} at index {offset + i}; subscripts must be in [a-zA-Z]"
        labels.append(label)
        i += 1
    return labels, None


def _output_hint(wrong: str, terms: Sequence[Sequence[int]], output: Sequence[int]) -> str:
    """What an unknown output letter was likely meant to be. Any two letters are one edit apart, so edit
    distance says nothing: the same letter in the other case is the first guess, then the input letters the
    output leaves out (those are summed over; a typo in the output usually stands for one of them)."""
    inputs = {letter(lb) for term in terms for lb in term if lb != ELLIPSIS}
    swapped = wrong.swapcase()
    if swapped in inputs:
        return did_you_mean(swapped, [swapped])
    summed = sorted(inputs - {letter(lb) for lb in output if lb != ELLIPSIS})
    if len(summed) == 1:
        return f"; did you mean {summed[0]!r}?"
    if summed:
        return f"; did you mean one of {', '.join(map(repr, summed))} (the input letters the output leaves out)?"
    return ""


@functools.lru_cache(maxsize=1024)
def parse_equation(equation: str) -> Equation:
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    terms: list[tuple[int, ...]] = []
    lhs_error: tuple[int, str] | None = None
    start = 0
    for t, text in enumerate(lhs.split(",")):
        labels, problem = _scan_term(text, start, f"operand {t}")
        terms.append(tuple(labels))
        if problem is not None:
            lhs_error = (t, problem)
            break
        start += len(text) + 1
    output: tuple[int, ...] | None = None
    rhs_error: tuple[str, str, str] | None = None
    if arrow >= 0 and lhs_error is None:
        labels, problem = _scan_term(equation[arrow + 2 :], arrow + 2, "output")
        count = [0] * N_LABELS
        for term in terms:
            for label in term:
                if label != ELLIPSIS:
                    count[label] += 1
        seen: set[int] = set()
        for label in labels:  # torch reports the first bad output label before a later syntax error
            if label == ELLIPSIS:
                continue
            if label in seen:
                rhs_error = ("einsum_error_unknown_output_index", letter(label), "appears more than once in the output")
                break
            if not count[label]:
                rhs_error = ("einsum_error_unknown_output_index", letter(label),
                             "does not appear in any input term" + _output_hint(letter(label), terms, labels))
                break
            seen.add(label)
        if rhs_error is None and problem is not None:
            rhs_error = ("einsum_error_invalid_equation", "", problem)
        output = tuple(labels)
    return Equation(equation, tuple(terms), lhs_error, output, rhs_error)


def sublist_equation(args: Sequence[object]) -> tuple[str, int]:
    """``einsum(a, [0, 1], b, [1, 2], [0, 2])``: the equation string and the number of operands.

    ``args`` alternate operand, sublist; an odd count means the last sublist is the output.
    """
    def term(sub: object) -> str:
        if not isinstance(sub, (list, tuple)):
            raise RuleError("einsum_error_invalid_sublist_element", op="einsum", element=sub)
        out = []
        for s in sub:
            if s is Ellipsis:
                out.append("...")
            elif isinstance(s, Integral):
                if not 0 <= int(s) < N_LABELS:
                    raise RuleError("einsum_error_index_out_of_range", op="einsum", index=s)
                out.append(_LETTERS[int(s)])
            elif isinstance(s, (int, float)) and not 0 <= s < N_LABELS:
                # torch range-checks any number before it notices that it is not an int
                raise RuleError("einsum_error_index_out_of_range", op="einsum", index=s)
            else:
                raise RuleError("einsum_error_invalid_sublist_element", op="einsum", element=s)
        return "".join(out)

    equation = ",".join(term(s) for s in args[1::2])
    if len(args) % 2 == 1:
        return equation + "->" + term(args[-1]), len(args[:-1:2])
    return equation, len(args[::2])


@dataclass(frozen=True)
class Binding:
    """An equation bound to operand shapes: every operand's dims as labels, and each label's size.

    The dims covered by '...' get labels ``52 + k`` for the k-th (left-aligned) broadcast ellipsis dim,
    so the execution treats them like letters.
    """

    operands: tuple[tuple[int, ...], ...]
    sizes: dict[int, Dim]
    output: tuple[int, ...]
    shape: Shape


def einsum_shape(equation: str, *shapes: Shape, op: str = "einsum") -> Shape:
    return bind_einsum(equation, tuple(shapes), op).shape


def bind_einsum(equation: str, shapes: tuple[Shape, ...], op: str = "einsum") -> Binding:
    eq = parse_equation(equation)
    n = len(shapes)
    if eq.lhs_error is not None and eq.lhs_error[0] < n:
        raise RuleError("einsum_error_invalid_equation", op=op, equation=equation, problem=eq.lhs_error[1])
    if len(eq.terms) > n or eq.lhs_error is not None:
        raise RuleError("einsum_error_operand_count_mismatch", op=op, equation=equation,
                        terms=len(eq.terms) if eq.lhs_error is None else f"at least {len(eq.terms)}",
                        operands=n)
    if len(eq.terms) < n:
        raise RuleError("einsum_error_operand_count_mismatch", op=op, equation=equation, terms=len(eq.terms),
                        operands=n)
    ell_dims = 0
    for i, (term, shape) in enumerate(zip(eq.terms, shapes, strict=True)):
        has_ell = ELLIPSIS in term
        nlabels = len(term) - has_ell
        if (nlabels > len(shape)) if has_ell else (nlabels != len(shape)):
            raise RuleError("einsum_error_subscript_rank_mismatch", op=op, equation=equation,
                            term=_term_text(term), i=i, shape=shape, subscripts=nlabels,
                            hint="" if has_ell else "; use '...' to cover extra dimensions" * (nlabels < len(shape)))
        if has_ell:
            ell_dims = max(ell_dims, len(shape) - nlabels)
    if eq.rhs_error is not None:
        code, name, problem = eq.rhs_error
        if code == "einsum_error_invalid_equation":
            raise RuleError(code, op=op, equation=equation, problem=problem)
        raise RuleError(code, op=op, equation=equation, letter=name, problem=problem)

    sizes: dict[int, Dim] = {}
    operands: list[tuple[int, ...]] = []
    for i, (term, shape) in enumerate(zip(eq.terms, shapes, strict=True)):
        labels = _expand(term, len(shape), ell_dims)
        operands.append(labels)
        mine: dict[int, Dim] = {}
        for label, size in zip(labels, shape, strict=True):
            if label in mine:  # a repeated label takes a diagonal: sizes must be equal, no broadcasting
                if differ(mine[label], size):
                    raise _size_error(op, equation, label, i=i, shape=shape, size=size, prev=mine[label], ell_dims=ell_dims, repeated=True)
                mine[label] = _better(mine[label], size)
            else:
                mine[label] = size
        for label, size in mine.items():
            if label not in sizes:
                sizes[label] = size
                continue
            joined = _broadcast(sizes[label], size)
            if joined is None:
                raise _size_error(op, equation, label, i=i, shape=shape, size=size, prev=sizes[label], ell_dims=ell_dims,
                                  repeated=False)
            sizes[label] = joined

    if eq.output is None:
        once = sorted(lb for lb in range(N_LABELS) if sum(t.count(lb) for t in eq.terms) == 1)
        out = tuple(range(N_LABELS, N_LABELS + ell_dims)) + tuple(once)
    else:
        out = _expand(eq.output, len(eq.output) - (ELLIPSIS in eq.output) + ell_dims, ell_dims)
    shape_out = tuple(sizes.get(lb, 1) for lb in out)
    return Binding(tuple(operands), sizes, out, shape_out)


def _expand(term: tuple[int, ...], rank: int, ell_dims: int) -> tuple[int, ...]:
    """Replace '...' by the labels of the ellipsis dims it covers (right-aligned, as they broadcast)."""
    if ELLIPSIS not in term:
        return term
    k = term.index(ELLIPSIS)
    covered = rank - (len(term) - 1)
    ell = tuple(range(N_LABELS + ell_dims - covered, N_LABELS + ell_dims))
    return term[:k] + ell + term[k + 1 :]


def _term_text(term: tuple[int, ...]) -> str:
    return "".join(letter(lb) for lb in term)


def _better(a: Dim, b: Dim) -> Dim:
    """Of two sizes that may be equal, the more informative one."""
    if isinstance(a, int):
        return a
    if isinstance(b, int) or a is UNKNOWN:
        return b
    return a


def _broadcast(prev: Dim, size: Dim) -> Dim | None:
    """torch broadcasts size-1 subscripts across operands (never within one); None on a contradiction."""
    if size in (prev, 1):
        return prev
    if prev == 1:
        return size
    if differ(prev, size):
        return None
    # Undecidable (an unknown, or an int against a symbol that may be 1): keep the more informative size.
    return _better(prev, size)


def _size_error(op: str, equation: str, label: int, *, i: int, shape: Shape, size: Dim, prev: Dim, ell_dims: int,
                repeated: bool) -> RuleError:
    if label >= N_LABELS:  # counted from the right, because operands' '...' dims broadcast right-aligned
        subject = f"dimension {label - N_LABELS - ell_dims} covered by '...'"
    else:
        subject = f"subscript {letter(label)!r}"
    if repeated:
        problem = f"is repeated in operand {i} (shape {fmt_shape(shape)}) with different sizes {prev} and {size}"
    else:
        problem = (f"has size {size} in operand {i} (shape {fmt_shape(shape)}), which does not broadcast with "
                   f"size {prev} seen before")
    return RuleError("einsum_error_dimension_mismatch", op=op, equation=equation, subject=subject, problem=problem)


