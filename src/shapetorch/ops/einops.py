"""einops' ``rearrange``, ``reduce``, ``repeat``, ``pack`` and ``unpack`` as composites of tensor ops.

The rule (``_rules.einops``) turns a pattern into a cached recipe and binds it to the shape; this module
runs the recipe as reshape -> permute -> reduce -> unsqueeze/expand -> reshape, skipping the steps that
would do nothing, so gradients and every backend come from those ops.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .._errors import raise_from_rule
from .._rules.einops import CALLABLE, output_shape, pack_shape, parse_pack, prepare, solve, unpack_shapes
from .._rules.errors import RuleError
from .._tensor import Tensor
from ._registry import public


@public("einops", method=False)
def clear_einops_cache() -> None:
    """Forget parsed patterns (recipes)."""
    prepare.cache_clear()
    parse_pack.cache_clear()


@public("einops", method=False)
def get_einops_cache_size() -> int:
    return prepare.cache_info().currsize + parse_pack.cache_info().currsize


def _ints(dims: Sequence[object]) -> tuple[int, ...]:
    """At runtime every size the rules return is an int (symbols only occur in the static checker)."""
    return tuple(d for d in dims if isinstance(d, int))


def _context(shape: Any, sizes: dict[str, Any]) -> str:
    bound = ", ".join(f"{k}={v}" for k, v in sizes.items()) or "none"
    return f"  input shape: {tuple(shape)}; axis sizes given: {bound}"


def _input(tensor: Any, op: str) -> Tensor:
    if isinstance(tensor, (list, tuple)):  # einops stacks a list of tensors on a new first axis
        if not tensor:
            raise TypeError(f"{op}(): cannot be applied to an empty list")
        from .joining import stack

        return stack(list(tensor))
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{op}(): expected a Tensor, got {type(tensor).__name__}")
    return tensor


def _apply(tensor: Any, pattern: str, operation: str, reduction: Any, sizes: dict[str, Any], op: str) -> Tensor:
    x = _input(tensor, op)
    shape = tuple(x._data.shape)
    try:
        recipe = prepare(pattern, operation, tuple(sizes), len(shape), op)
        lengths = solve(recipe, shape, sizes, op)
    except RuleError as e:
        raise_from_rule(e, _context(shape, sizes))
    ints = _ints(lengths)
    n_in = recipe.n_input_axes
    if any(len(g) != 1 for g in recipe.input_groups):
        x = x.reshape(ints[:n_in])
    if recipe.permutation != tuple(range(n_in)):
        x = x.permute(recipe.permutation)
    if recipe.n_reduced:
        x = _reduce(x, reduction, tuple(range(n_in - recipe.n_reduced, n_in)))
    if recipe.added:
        for pos, _ in recipe.added:
            x = x.unsqueeze(pos)
        target = list(x._data.shape)
        for pos, axis in recipe.added:
            target[pos] = ints[axis]
        x = x.expand(*target)
    final = _ints(output_shape(recipe, lengths))
    if tuple(x._data.shape) != final:
        x = x.reshape(final)
    return x


def _reduce(x: Tensor, reduction: Any, axes: tuple[int, ...]) -> Tensor:
    if callable(reduction):
        out = reduction(x, axes)
        if not isinstance(out, Tensor):
            raise TypeError(f"reduce(): the reduction must return a Tensor, got {type(out).__name__}")
        return out
    if reduction == "min":
        return x.amin(axes)
    if reduction == "max":
        return x.amax(axes)
    if reduction in ("prod", "any", "all"):  # these take one dim: merge the (trailing) reduced axes into one
        shape = tuple(x._data.shape)
        x = x.reshape(*shape[: axes[0]], -1) if len(axes) > 1 else x
        return getattr(x, reduction)(axes[0])
    return getattr(x, reduction)(axes)


@public("einops", method=False)
def rearrange(tensor: Tensor | Sequence[Tensor], pattern: str, **axes_lengths: int) -> Tensor:
    """einops.rearrange: ``rearrange(x, 'b (h w) c -> b h w c', h=4)``."""
    return _apply(tensor, pattern, "rearrange", None, axes_lengths, "rearrange")


@public("einops", method=False)
def reduce(tensor: Tensor | Sequence[Tensor], pattern: str, reduction: str | Callable[..., Any],
           **axes_lengths: int) -> Tensor:
    """einops.reduce: ``reduce(x, 'b c (h 2) (w 2) -> b c h w', 'max')``; a callable gets (tensor, axes)."""
    # An unknown name is reported by the rule, after the pattern's own errors, as einops orders them.
    operation = CALLABLE if callable(reduction) else str(reduction)
    return _apply(tensor, pattern, operation, reduction, axes_lengths, "reduce")


@public("einops", method=False)
def repeat(tensor: Tensor | Sequence[Tensor], pattern: str, **axes_lengths: int) -> Tensor:
    """einops.repeat: ``repeat(x, 'h w -> h w c', c=3)``, ``repeat(x, 'h w -> (2 h) w')``."""
    return _apply(tensor, pattern, "repeat", None, axes_lengths, "repeat")


@public("einops", method=False)
def pack(tensors: Sequence[Tensor], pattern: str) -> tuple[Tensor, list[tuple[int, ...]]]:
    """einops.pack: flatten the ``*`` axes of every tensor and concatenate; returns (packed, packed_shapes)."""
    shapes = [tuple(t._data.shape) for t in tensors]
    try:
        _, packed = pack_shape(pattern, shapes)
    except RuleError as e:
        raise_from_rule(e, f"  input shapes: {', '.join(str(s) for s in shapes)}")
    before, _after = parse_pack(pattern)
    from .joining import cat

    pieces = [t.reshape(*s[:before], -1, *s[before + len(p) :]) for t, s, p in zip(tensors, shapes, packed, strict=True)]
    return cat(pieces, before), [_ints(p) for p in packed]


@public("einops", method=False)
def unpack(tensor: Tensor, packed_shapes: Sequence[Sequence[int]], pattern: str) -> list[Tensor]:
    """einops.unpack: the inverse of :func:`pack` (one packed shape may contain a -1)."""
    shape = tuple(tensor._data.shape)
    try:
        shapes = unpack_shapes(pattern, shape, packed_shapes)
    except RuleError as e:
        raise_from_rule(e, f"  input shape: {shape}; packed shapes: {[tuple(p) for p in packed_shapes]}")
    before, _after = parse_pack(pattern, "unpack")
    out, start = [], 0
    for s in shapes:
        sizes = _ints(s)
        n = math.prod(sizes[before : len(sizes) - len(shape) + before + 1])
        out.append(tensor.narrow(before, start, n).reshape(sizes))
        start += n
    return out
