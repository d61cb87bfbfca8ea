"""einops patterns: ``rearrange``, ``reduce``, ``repeat``, ``pack`` and ``unpack``, with einops' semantics.

Two stages, as einops does it: :func:`prepare` turns (pattern, operation, keyword axis names, input rank)
into a :class:`Recipe` (cached; it never sees a size), and :func:`solve` binds a recipe to a shape and
the keyword sizes. The shape stage works on symbolic dims too: sizes are multiplied and divided with
``dim_mul``/``dim_div``, and only a real contradiction raises. The checks run in einops' order, so the
first error is the one einops reports.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .dims import Dim, Shape, differ, dim_div, dim_mul, fmt_shape, prod
from .errors import RuleError, did_you_mean

REDUCTIONS = ("min", "max", "sum", "mean", "prod", "any", "all")
CALLABLE = "<callable>"  # what the runtime passes as the operation for a user's reduction function
_ELL = "\u2026"  # '...' becomes one character while parsing, so it can never clash with an axis name
_ANON = "#"  # anonymous axes are named '<value>#<side><n>': never equal to each other or to a real name


def _anon_value(name: str) -> int | None:
    return int(name.split(_ANON, maxsplit=1)[0]) if _ANON in name else None


def show_axis(name: str) -> str:
    return name.split(_ANON, maxsplit=1)[0].replace(_ELL, "...")


def axis_name_problem(name: str, allow_underscore: bool = False) -> str | None:
    """Why ``name`` cannot name an axis, or None: identifiers that neither start nor end with '_'."""
    if not name.isidentifier():
        return "not a valid python identifier"
    if (name[0] == "_" or name[-1] == "_") and not (allow_underscore and name == "_"):
        return "axis names should not start or end with an underscore"
    return None


@dataclass(frozen=True)
class Side:
    groups: tuple[tuple[str, ...] | str, ...]  # a group of axis names, or _ELL for a bare ellipsis
    names: frozenset[str]
    has_ellipsis: bool
    ellipsis_in_group: bool
    anonymous: tuple[str, ...]


def _parse_side(text: str, pattern: str, op: str, tag: str) -> Side:
    def bad(problem: str) -> RuleError:
        return RuleError("einops_error_invalid_pattern", op=op, pattern=pattern, problem=problem)

    has_ellipsis = False
    if "." in text:
        if text.count("...") != 1 or text.count(".") != 3:
            raise bad("dots are only allowed as one ellipsis '...' per side")
        text = text.replace("...", _ELL)
        has_ellipsis = True
    groups: list[tuple[str, ...] | str] = []
    names: list[str] = []
    anonymous: list[str] = []
    group: list[str] | None = None
    ellipsis_in_group = False

    def add(token: str) -> None:
        nonlocal ellipsis_in_group
        if token in names:
            raise bad(f"axis {show_axis(token)!r} appears twice on one side")
        if token == _ELL:
            names.append(token)
            if group is None:
                groups.append(_ELL)
            else:
                group.append(_ELL)
                ellipsis_in_group = True
            return
        if token.isdecimal():
            value = int(token)
            if value == 1:  # a unit axis: an empty group outside parentheses, nothing inside them
                if group is None:
                    groups.append(())
                return
            if value == 0:
                raise bad("anonymous axes must have a positive length, not 0")
            token = f"{value}{_ANON}{tag}{len(anonymous)}"
            anonymous.append(token)
        else:
            problem = axis_name_problem(token)
            if problem is not None:
                raise bad(f"invalid axis name {token!r}: {problem}")
        names.append(token)
        if group is None:
            groups.append((token,))
        else:
            group.append(token)

    token = ""
    for ch in text:
        if ch in "() ":
            if token:
                add(token)
            token = ""
            if ch == "(":
                if group is not None:
                    raise bad("parentheses cannot be nested (axis composition is one level)")
                group = []
            elif ch == ")":
                if group is None:
                    raise bad("unbalanced parentheses")
                groups.append(tuple(group))
                group = None
        elif ch.isalnum() or ch in ("_", _ELL):
            token += ch
        else:
            raise bad(f"unknown character {ch!r}")
    if group is not None:
        raise bad("unbalanced parentheses")
    if token:
        add(token)
    return Side(tuple(groups), frozenset(names), has_ellipsis, ellipsis_in_group, tuple(anonymous))


@dataclass(frozen=True)
class Recipe:
    """What a pattern means for one input rank, before any size is known."""

    pattern: str
    operation: str
    axes: tuple[str, ...]  # elementary axes: the input's in order, then the ones only the output has
    input_groups: tuple[tuple[int, ...], ...]  # per input dim, the elementary axes it is made of
    output_groups: tuple[tuple[int, ...], ...]  # per output dim
    n_input_axes: int  # axes[:n_input_axes] come from the input
    permutation: tuple[int, ...]  # input axes kept (in output order), then the reduced ones
    n_reduced: int
    added: tuple[tuple[int, int], ...]  # (position after the permutation, axis) for each new output axis
    keywords: tuple[str, ...]


def _fmt_names(names: Sequence[str] | set[str] | frozenset[str]) -> str:
    return ", ".join(repr(show_axis(n)) for n in sorted(names, key=show_axis))


@functools.lru_cache(maxsize=1024)
def prepare(pattern: str, operation: str, keywords: tuple[str, ...], ndim: int, op: str = "") -> Recipe:
    op = op or (operation if operation in ("rearrange", "repeat") else "reduce")
    parts = pattern.split("->")
    if len(parts) != 2:
        raise RuleError("einops_error_invalid_pattern", op=op, pattern=pattern,
                        problem="a pattern needs exactly one '->' between the input and the output")
    left = _parse_side(parts[0], pattern, op, "L")
    right = _parse_side(parts[1], pattern, op, "R")
    if right.has_ellipsis and not left.has_ellipsis:
        raise RuleError("einops_error_invalid_pattern", op=op, pattern=pattern,
                        problem="'...' on the right side but not on the left")
    if left.ellipsis_in_group:
        raise RuleError("einops_error_invalid_pattern", op=op, pattern=pattern,
                        problem="'...' cannot be inside parentheses on the left side")
    _check_names(pattern, operation, keywords, left, right, op=op)

    if left.has_ellipsis:
        n_other = len(left.groups) - 1
        if ndim < n_other:
            raise RuleError("einops_error_dimension_mismatch", op=op, pattern=pattern, shape=f"(rank {ndim})",
                            problem=f"the pattern needs at least {n_other} dims, the input has {ndim}")
        ell = tuple(f"{_ELL}{i}" for i in range(ndim - n_other))
    else:
        if ndim != len(left.groups):
            raise RuleError("einops_error_dimension_mismatch", op=op, pattern=pattern, shape=f"(rank {ndim})",
                            problem=f"the pattern needs {len(left.groups)} dims, the input has {ndim}")
        ell = ()
    lgroups = _expand_ellipsis(left.groups, ell, split=True)
    rgroups = _expand_ellipsis(right.groups, ell, split=True)

    axes: list[str] = [a for g in lgroups for a in g]
    n_input_axes = len(axes)
    right_names = {a for g in rgroups for a in g}
    axes += [a for g in rgroups for a in g if a not in axes]
    index = {a: i for i, a in enumerate(axes)}

    for k in keywords:
        problem = axis_name_problem(k)
        if problem is not None:
            raise RuleError("einops_error_invalid_pattern", op=op, pattern=pattern,
                            problem=f"invalid axis name {k!r}: {problem}")
        if k not in index:
            raise RuleError("einops_error_undefined_axis", op=op, pattern=pattern,
                            problem=f"axis {k!r} was given a size but is not used",
                            hint=did_you_mean(k, [show_axis(a) for a in axes if not a.startswith(_ELL)]))
    given = set(keywords)
    for g in lgroups:
        unknown = [a for a in g if a not in given and _anon_value(a) is None]
        if len(unknown) > 1:
            raise RuleError("einops_error_ambiguous_decomposition", op=op, pattern=pattern,
                            axes=_fmt_names(unknown))

    kept = [index[a] for g in rgroups for a in g if index[a] < n_input_axes]
    reduced = [i for i in range(n_input_axes) if axes[i] not in right_names]
    flat_right = [a for g in rgroups for a in g]
    added = tuple((pos, index[a]) for pos, a in enumerate(flat_right) if index[a] >= n_input_axes)
    return Recipe(
        pattern, operation, tuple(axes), tuple(tuple(index[a] for a in g) for g in lgroups),
        tuple(tuple(index[a] for a in g) for g in rgroups), n_input_axes, tuple(kept + reduced), len(reduced),
        added, keywords,
    )


def _expand_ellipsis(groups: tuple[tuple[str, ...] | str, ...], ell: tuple[str, ...],
                     split: bool) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for g in groups:
        if g == _ELL:
            out.extend((a,) for a in ell)
        else:
            out.append(tuple(a for name in g for a in (ell if name == _ELL else (name,))))
    return out


def _check_names(pattern: str, operation: str, keywords: tuple[str, ...], left: Side, right: Side, *, op: str) -> None:
    """Which axes may appear on only one side depends on the operation."""
    # '...' counts as a name here: rearrange and repeat cannot drop it, a reduction can
    lnames, rnames = set(left.names), set(right.names)
    if operation == "rearrange":
        if left.anonymous or right.anonymous:
            axis = show_axis((right.anonymous or left.anonymous)[0])
            raise RuleError("einops_error_anonymous_in_output", op=op, pattern=pattern, axis=axis,
                            side="output" if right.anonymous else "input")
        only = lnames ^ rnames
        if only:
            _undefined(pattern, op, only, lnames, rnames, where="rearrange needs every axis on both sides")
    elif operation == "repeat":
        only_left = lnames - rnames
        if only_left:
            _undefined(pattern, op, only_left, lnames, rnames, where="repeat cannot remove axes")
        missing = {n for n in rnames - lnames if _anon_value(n) is None} - set(keywords)
        if missing:
            raise RuleError("einops_error_repeat_missing_size", op=op, pattern=pattern, axes=_fmt_names(missing),
                            example=", ".join(f"{n}=..." for n in sorted(missing)))
    elif operation in REDUCTIONS or operation == CALLABLE:
        extra = rnames - lnames
        if extra:
            anon = sorted(n for n in extra if _anon_value(n) is not None)
            if anon:
                raise RuleError("einops_error_anonymous_in_output", op=op, pattern=pattern,
                                axis=show_axis(anon[0]), side="output")
            hint = did_you_mean(sorted(extra)[0], sorted(lnames - rnames)) if len(extra) == 1 else ""
            raise RuleError("einops_error_reduce_undefined_output", op=op, pattern=pattern, axes=_fmt_names(extra),
                            operation=operation, hint=hint)
    else:
        raise RuleError("einops_error_invalid_pattern", op=op, pattern=pattern,
                        problem=f"unknown reduction {operation!r}; expected one of {', '.join(REDUCTIONS)} "
                        "or a callable" + did_you_mean(operation, REDUCTIONS))


def _undefined(pattern: str, op: str, names: set[str], lnames: set[str], rnames: set[str], *, where: str) -> None:
    # A typo is usually in the output: name an output-only axis first and suggest an input-only one.
    right_only = sorted(names & rnames, key=show_axis)
    first = right_only[0] if right_only else sorted(names, key=show_axis)[0]
    other = (lnames - rnames) if first in rnames else (rnames - lnames)
    hint = did_you_mean(show_axis(first), sorted(show_axis(n) for n in other if _anon_value(n) is None))
    side = "right" if first in rnames else "left"
    more = f" (all such axes: {_fmt_names(names)})" if len(names) > 1 else ""
    raise RuleError("einops_error_undefined_axis", op=op, pattern=pattern,
                    problem=f"axis {show_axis(first)!r} appears on the {side} side only{more}; {where}", hint=hint)


def solve(recipe: Recipe, shape: Shape, sizes: Mapping[str, Dim], op: str = "") -> tuple[Dim, ...]:
    """The size of every elementary axis, from the input shape and the keyword sizes."""
    op = op or (recipe.operation if recipe.operation in ("rearrange", "repeat") else "reduce")
    lengths: list[Dim | None] = [None] * len(recipe.axes)
    for i, a in enumerate(recipe.axes):
        value = _anon_value(a)
        if value is not None:
            lengths[i] = value
        elif a in sizes:
            lengths[i] = sizes[a]
    for dim, (group, length) in enumerate(zip(recipe.input_groups, shape, strict=True)):
        unknown = [i for i in group if lengths[i] is None]
        known = prod(tuple(lengths[i] for i in group if lengths[i] is not None))  # type: ignore[misc]
        if not unknown:
            if differ(length, known):
                raise _mismatch(recipe, shape, sizes, op, dim=dim, length=length, known=known, group=group, divide=False)
            continue
        if isinstance(length, int) and isinstance(known, int) and (known == 0 or length % known):
            raise _mismatch(recipe, shape, sizes, op, dim=dim, length=length, known=known, group=group, divide=True)
        lengths[unknown[0]] = length if known == 1 else dim_div(length, known)
    return tuple(x if x is not None else 1 for x in lengths)


def _mismatch(recipe: Recipe, shape: Shape, sizes: Mapping[str, Dim], op: str, *, dim: int, length: Dim, known: Dim,
              group: tuple[int, ...], divide: bool) -> RuleError:
    names = [show_axis(recipe.axes[i]) for i in group]
    what = "()" if not names else names[0] if len(names) == 1 else "(" + " ".join(names) + ")"
    if divide:
        problem = f"input dim {dim} of size {length} cannot be split as {what}: it is not divisible by {known}"
    elif not names:
        problem = f"input dim {dim} is a unit axis {what} but has size {length}"
    else:
        problem = f"input dim {dim} is {what} of size {known} but has size {length}"
    return RuleError("einops_error_dimension_mismatch", op=op, pattern=recipe.pattern, shape=shape, problem=problem)


def output_shape(recipe: Recipe, lengths: tuple[Dim, ...]) -> Shape:
    out: list[Dim] = []
    for group in recipe.output_groups:
        size: Dim = 1
        for i in group:
            size = dim_mul(size, lengths[i])
        out.append(size)
    return tuple(out)


def einops_shape(pattern: str, operation: str, shape: Shape, sizes: Mapping[str, Dim] | None = None) -> Shape:
    sizes = dict(sizes or {})
    recipe = prepare(pattern, operation, tuple(sizes), len(shape))
    return output_shape(recipe, solve(recipe, shape, sizes))


def rearrange_shape(pattern: str, shape: Shape, **sizes: Dim) -> Shape:
    return einops_shape(pattern, "rearrange", shape, sizes)


def repeat_shape(pattern: str, shape: Shape, **sizes: Dim) -> Shape:
    return einops_shape(pattern, "repeat", shape, sizes)


def einops_reduce_shape(pattern: str, shape: Shape, reduction: str = "sum", **sizes: Dim) -> Shape:
    return einops_shape(pattern, reduction, shape, sizes)


# -- pack / unpack ------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def parse_pack(pattern: str, op: str = "pack") -> tuple[int, int]:
    """``'b * c'``: the number of axes before and after the ``*``."""
    axes = pattern.split()
    if len(set(axes)) != len(axes):
        raise RuleError("einops_error_invalid_pattern", op=op, pattern=pattern, problem="an axis name is repeated")
    if "*" not in axes:
        raise RuleError("einops_error_invalid_pattern", op=op, pattern=pattern, problem="no '*' axis")
    for a in axes:
        problem = None if a == "*" else axis_name_problem(a)
        if problem is not None:
            raise RuleError("einops_error_invalid_pattern", op=op, pattern=pattern,
                            problem=f"invalid axis name {a!r}: {problem}")
    before = axes.index("*")
    return before, len(axes) - before - 1


def pack_shape(pattern: str, shapes: Sequence[Shape]) -> tuple[Shape, list[Shape]]:
    """The packed shape and the packed shapes ('PS') that ``unpack`` needs."""
    before, after = parse_pack(pattern, "pack")
    if not shapes:
        raise RuleError("einops_error_dimension_mismatch", op="pack", pattern=pattern, shape="()",
                        problem="pack needs at least one tensor")
    packed: list[Shape] = []
    total: Dim = 0
    first: Shape | None = None
    for i, shape in enumerate(shapes):
        if len(shape) < before + after:
            raise RuleError("einops_error_dimension_mismatch", op="pack", pattern=pattern, shape=shape,
                            problem=f"tensor {i} has {len(shape)} dims but the pattern needs at least {before + after}")
        outer = shape[:before] + shape[len(shape) - after :]
        if first is None:
            first = outer
        for j, (x, y) in enumerate(zip(first, outer, strict=True)):
            if differ(x, y):
                raise RuleError("einops_error_dimension_mismatch", op="pack", pattern=pattern, shape=shape,
                                problem=f"tensor {i} has size {y} where tensor 0 has {x} "
                                f"(axis {pattern.split()[j if j < before else j + 1]!r})")
        inner = shape[before : len(shape) - after]
        packed.append(inner)
        n = prod(inner)
        total = n if total == 0 else total if n == 0 else _add(total, n)
    assert first is not None
    return first[:before] + (total,) + first[before:], packed


def _add(a: Dim, b: Dim) -> Dim:
    from .dims import UNKNOWN

    return a + b if isinstance(a, int) and isinstance(b, int) else UNKNOWN


def unpack_shapes(pattern: str, shape: Shape, packed_shapes: Sequence[Sequence[Dim]]) -> list[Shape]:
    """The shape of every piece ``unpack`` returns; one packed shape may hold a single -1."""
    before, after = parse_pack(pattern, "unpack")
    if len(shape) != before + 1 + after:
        raise RuleError("einops_error_dimension_mismatch", op="unpack", pattern=pattern, shape=shape,
                        problem=f"the pattern needs {before + 1 + after} dims, the input has {len(shape)}")
    ps = [tuple(p) for p in packed_shapes]
    unknown = [i for i, p in enumerate(ps) if -1 in p]
    if len(unknown) > 1 or any(p.count(-1) > 1 for p in ps):
        raise RuleError("einops_error_ambiguous_decomposition", op="unpack", pattern=pattern,
                        axes=f"more than one -1 in the packed shapes {ps}")
    length = shape[before]
    known = [prod(p) for i, p in enumerate(ps) if i not in unknown]
    used: Dim = 0
    for n in known:
        used = n if used == 0 else used if n == 0 else _add(used, n)
    out = [list(p) for p in ps]
    if unknown:
        p = ps[unknown[0]]
        rest = prod(tuple(d for d in p if d != -1))
        left = length - used if isinstance(length, int) and isinstance(used, int) else None
        if left is not None and isinstance(rest, int) and (left < 0 or rest == 0 or left % rest):
            raise _split_error(pattern, shape, ps, length)
        out[unknown[0]][p.index(-1)] = left // rest if left is not None and isinstance(rest, int) else \
            dim_div(length, rest) if used == 0 else _unknown()
    elif differ(length, used):
        raise _split_error(pattern, shape, ps, length)
    return [shape[:before] + tuple(p) + shape[before + 1 :] for p in out]


def _unknown() -> Dim:
    from .dims import UNKNOWN

    return UNKNOWN


def _split_error(pattern: str, shape: Shape, ps: list[tuple[Dim, ...]], length: Dim) -> RuleError:
    return RuleError("einops_error_dimension_mismatch", op="unpack", pattern=pattern, shape=shape,
                     problem=f"cannot split the packed axis of size {length} into the packed shapes "
                     "[" + ", ".join(fmt_shape(p) for p in ps) + "]")
