"""einops: rearrange/reduce/repeat/pack/unpack and their rule against the einops package."""

from __future__ import annotations

import warnings

import einops
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import shapetorch as st
from shapetorch._errors import ShapetorchError
from shapetorch._rules.dims import UNKNOWN, Sym
from shapetorch._rules.einops import einops_shape, rearrange_shape, repeat_shape
from shapetorch._rules.errors import RuleError

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NAMES = ["a", "b", "c", "h", "w"]


@hs.composite
def case(draw: hs.DrawFn) -> tuple[str, str, tuple[int, ...], dict[str, int]]:
    """(operation, pattern, shape, sizes): mostly valid, sometimes broken in one place."""
    names = draw(hs.lists(hs.sampled_from(NAMES), min_size=1, max_size=4, unique=True))
    size = {n: draw(hs.integers(1, 3)) for n in names}
    groups: list[list[str]] = []
    rest = list(names)
    while rest:
        k = draw(hs.integers(1, min(2, len(rest))))
        groups.append(rest[:k])
        rest = rest[k:]
    ell = draw(hs.booleans())
    left = " ".join(g[0] if len(g) == 1 else "(" + " ".join(g) + ")" for g in groups)
    shape = [int(np.prod([size[n] for n in g])) for g in groups]
    if ell:
        left = "... " + left
        shape = [2] * draw(hs.integers(0, 2)) + shape
    op = draw(hs.sampled_from(["rearrange", "reduce", "repeat"]))
    out_names = draw(hs.permutations(names))
    if op == "reduce":
        out_names = out_names[: draw(hs.integers(0, len(out_names)))]
    extra: dict[str, int] = {}
    if op == "repeat" and draw(hs.booleans()):
        out_names = [*out_names, "r"]
        extra["r"] = 2
    right = " ".join(out_names)
    if draw(hs.booleans()) and len(out_names) >= 2:
        right = f"({out_names[0]} {out_names[1]}) " + " ".join(out_names[2:])
    if ell:
        right = right + " ..." if op != "reduce" or draw(hs.booleans()) else right
    sizes = {g[0]: size[g[0]] for g in groups if len(g) > 1}  # one keyword per composite group
    sizes.update(extra)
    pattern = f"{left} -> {right}"
    mutation = draw(hs.integers(0, 8))
    if mutation == 1:
        shape = [s + draw(hs.integers(0, 2)) for s in shape]
    elif mutation == 2:
        shape = shape[:-1] if draw(hs.booleans()) else [*shape, 2]
    elif mutation == 3:
        i = draw(hs.integers(0, len(pattern)))
        pattern = pattern[:i] + draw(hs.sampled_from(["(", ")", ".", "x", " 2", " 1", "_", "->", " a"])) + pattern[i:]
    elif mutation == 4:
        sizes = {}
    elif mutation == 5:
        sizes[draw(hs.sampled_from([*NAMES, "q"]))] = draw(hs.integers(1, 3))
    return op, pattern, tuple(shape), sizes


def einops_outcome(op: str, pattern: str, shape: tuple[int, ...], sizes: dict[str, int]) -> tuple[int, ...] | None:
    x = np.zeros(shape)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if op == "reduce":
                return tuple(einops.reduce(x, pattern, "sum", **sizes).shape)
            return tuple(getattr(einops, op)(x, pattern, **sizes).shape)
    except (einops.EinopsError, ValueError, ZeroDivisionError):
        return None


@SETTINGS
@given(case())
def test_accept_reject_and_values_match_einops(c: tuple[str, str, tuple[int, ...], dict[str, int]]) -> None:
    op, pattern, shape, sizes = c
    expected = einops_outcome(op, pattern, shape, sizes)
    try:
        rule = einops_shape(pattern, "sum" if op == "reduce" else op, shape, sizes)
    except RuleError as e:
        assert expected is None, e.message
        assert e.code.startswith("einops_error_")
    else:
        assert rule == expected
    x = np.random.default_rng(0).standard_normal(shape)
    args = ("sum",) if op == "reduce" else ()
    try:
        got = getattr(st, op)(st.tensor(x), pattern, *args, **sizes)
    except ShapetorchError as e:
        assert expected is None and e.code.startswith("einops_error_")
        assert repr(pattern) in str(e) and "input shape" in str(e)
        return
    assert expected is not None
    want = getattr(einops, op)(x, pattern, *args, **sizes)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)




@pytest.mark.parametrize("reduction", ["sum", "mean", "min", "max", "prod"])
def test_reductions_and_gradients_match_torch_einops(reduction: str) -> None:
    x = np.random.default_rng(3).standard_normal((2, 4, 6)) + 2
    pattern = "b (h 2) (w 3) -> b w h"
    tx = torch.tensor(x, requires_grad=True)
    want = einops.reduce(tx, pattern, reduction)
    want.sum().backward()
    sx = st.tensor(x, requires_grad=True)
    got = st.reduce(sx, pattern, reduction)
    got.sum().backward()
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(sx.grad.numpy(), tx.grad.numpy(), rtol=1e-10)


def test_repeat_and_rearrange_gradients() -> None:
    x = np.random.default_rng(4).standard_normal((2, 3))
    tx, sx = torch.tensor(x, requires_grad=True), st.tensor(x, requires_grad=True)
    w = np.random.default_rng(5).standard_normal((3, 4, 2))
    (einops.repeat(tx, "h w -> w (h c) 2", c=2) * torch.tensor(w)).sum().backward()
    (st.repeat(sx, "h w -> w (h c) 2", c=2) * st.tensor(w)).sum().backward()
    np.testing.assert_allclose(sx.grad.numpy(), tx.grad.numpy())


def test_callable_reduction_and_list_input() -> None:
    xs = [np.full((2, 3), float(i)) for i in range(4)]
    got = st.reduce([st.tensor(x) for x in xs], "n h w -> h", lambda t, axes: t.sum(axes))
    np.testing.assert_allclose(got.numpy(), einops.reduce(xs, "n h w -> h", "sum"))


def test_pack_unpack_round_trip() -> None:
    a, b = np.zeros((2, 3, 5)), np.ones((2, 3, 7, 5))
    packed, ps = st.pack([st.tensor(a), st.tensor(b)], "i j * k")
    want, wps = einops.pack([a, b], "i j * k")
    assert tuple(packed.shape) == want.shape and ps == [tuple(p) for p in wps]
    back = st.unpack(packed, ps, "i j * k")
    assert [tuple(t.shape) for t in back] == [a.shape, b.shape]
    back = st.unpack(packed, [(), (-1,)], "i j * k")
    assert tuple(back[1].shape) == (2, 3, 7, 5)
    with pytest.raises(ShapetorchError) as info:
        st.unpack(packed, [(2,), (3,)], "i j * k")
    assert info.value.code == "einops_error_dimension_mismatch"
    with pytest.raises(ShapetorchError):
        st.pack([st.tensor(a)], "i j k")


@pytest.mark.parametrize(
    ("call", "code", "text"),
    [
        (lambda x: st.rearrange(x, "b h w -> b (hh w)"), "einops_error_undefined_axis", "did you mean 'h'"),
        (lambda x: st.rearrange(x, "b h w -> b h w", hh=3), "einops_error_undefined_axis", "did you mean 'h'"),
        (lambda x: st.rearrange(x, "b h w -> b (h w"), "einops_error_invalid_pattern", "unbalanced"),
        (lambda x: st.rearrange(x, "b h -> b h"), "einops_error_dimension_mismatch", "input shape"),
        (lambda x: st.rearrange(x, "b (h w) c -> b h w c", h=5), "einops_error_dimension_mismatch", "h=5"),
        (lambda x: st.rearrange(x, "b h (w c) -> b h w c"), "einops_error_ambiguous_decomposition", "w"),
        (lambda x: st.rearrange(x, "b h w -> b h w 2"), "einops_error_anonymous_in_output", "2"),
        (lambda x: st.reduce(x, "b h w -> b c", "sum"), "einops_error_reduce_undefined_output", "'c'"),
        (lambda x: st.repeat(x, "b h w -> b h w c"), "einops_error_repeat_missing_size", "c=..."),
    ],
)
def test_error_codes_and_messages(call: object, code: str, text: str) -> None:
    with pytest.raises(ShapetorchError) as info:
        call(st.zeros(2, 3, 4))  # type: ignore[operator]
    assert info.value.code == code
    assert text in str(info.value)


def test_symbolic_shapes() -> None:
    b, h, w = Sym("B"), Sym("H"), Sym("W")
    assert rearrange_shape("b h w c -> b (h w) c", (b, h, w, 3)) == (b, Sym("H*W"), 3)
    assert rearrange_shape("b (h w) -> b h w", (b, Sym("H*W")), w=w) == (b, h, w)
    assert rearrange_shape("b (h w) -> b h w", (b, UNKNOWN), h=2) == (b, 2, UNKNOWN)
    assert repeat_shape("h w -> h w c", (h, UNKNOWN), c=3) == (h, UNKNOWN, 3)
    assert einops_shape("b h w -> b", "max", (b, h, w)) == (b,)
    with pytest.raises(RuleError):
        rearrange_shape("b (h w) -> b h w", (b, 7), h=2)


def test_recipes_are_cached_and_clearable() -> None:
    st.clear_einops_cache()
    assert st.get_einops_cache_size() == 0
    st.rearrange(st.zeros(2, 3), "a b -> b a")
    st.rearrange(st.zeros(4, 5), "a b -> b a")  # same rank: the recipe is reused
    assert st.get_einops_cache_size() == 1
    st.clear_einops_cache()
    assert st.get_einops_cache_size() == 0


@hs.composite
def pack_case(draw: hs.DrawFn) -> tuple[str, list[tuple[int, ...]], list[tuple[int, ...]]]:
    """(pattern, the shapes to pack, the packed shapes to unpack by): inner sizes 0-3, axes around the `*` 0-2,
    sometimes a size that differs between tensors, packed shapes with a -1 (or a wrong size) in one place."""
    before, after = draw(hs.integers(0, 2)), draw(hs.integers(0, 2))
    pattern = " ".join(["a", "b"][:before] + ["*"] + ["c", "d"][:after])
    outer = [draw(hs.integers(1, 3)) for _ in range(before + after)]  # einops cannot unpack a 0 outer size
    shapes = []
    for _ in range(draw(hs.integers(1, 3))):
        mine = list(outer)
        if mine and draw(hs.integers(0, 5)) == 0:
            mine[draw(hs.integers(0, len(mine) - 1))] += 1  # differs from the others
        inner = [draw(hs.integers(0, 3)) for _ in range(draw(hs.integers(0, 2)))]
        shapes.append(tuple(mine[:before] + inner + mine[before:]))
    ps = [tuple(s[before:len(s) - after]) for s in shapes]
    how = draw(hs.integers(0, 3))
    if how == 1:  # one size left for unpack to infer
        i = draw(hs.integers(0, len(ps) - 1))
        ps[i] = (-1, *ps[i][1:]) if ps[i] else (-1,)
    elif how == 2:  # a wrong size
        i = draw(hs.integers(0, len(ps) - 1))
        ps[i] = (*ps[i], 2)
    return pattern, shapes, ps


@given(pack_case())
@SETTINGS
def test_pack_and_unpack_rules_match_einops(c: tuple[str, list[tuple[int, ...]], list[tuple[int, ...]]]) -> None:
    """The rules' pack and unpack shapes (the plugin's results; the runtime computes its own) against the
    einops package on every drawn case: accepted alike, the same shapes, refused alike. Kills slips in the
    running total of the packed axis, the used/left sizes of an unpack with -1, and the pattern checks."""
    from shapetorch._rules.einops import pack_shape, unpack_shapes

    pattern, shapes, ps = c
    try:
        want, want_ps = einops.pack([np.zeros(s) for s in shapes], pattern)
    except (einops.EinopsError, ValueError):  # on NumPy arrays einops leaves a size mismatch to concatenate
        with pytest.raises(RuleError):
            pack_shape(pattern, shapes)
        return
    got, got_ps = pack_shape(pattern, shapes)
    assert got == want.shape and got_ps == [tuple(p) for p in want_ps]
    try:
        back = einops.unpack(want, ps, pattern)
    except (einops.EinopsError, ValueError):
        with pytest.raises(RuleError):
            unpack_shapes(pattern, got, ps)
        return
    assert unpack_shapes(pattern, got, ps) == [t.shape for t in back]


@pytest.mark.parametrize("pattern", ["b * 1x", "b * b", "b c", "* _"])
def test_pack_pattern_refused_like_einops(pattern: str) -> None:
    from shapetorch._rules.einops import parse_pack

    with pytest.raises(einops.EinopsError):
        einops.pack([np.zeros((2, 3, 4))], pattern)
    with pytest.raises(RuleError) as info:
        parse_pack(pattern)
    assert info.value.code == "einops_error_invalid_pattern"


def test_split_message_says_not_divisible() -> None:
    """A group that cannot be split says so (the `divide` flag of the mismatch message)."""
    with pytest.raises(einops.EinopsError):
        einops.rearrange(np.zeros(6), "(h w) -> h w", h=4)
    with pytest.raises(RuleError) as info:
        einops_shape("(h w) -> h w", "rearrange", (6,), {"h": 4})
    assert "cannot be split as (h w): it is not divisible by 4" in info.value.message


@pytest.mark.parametrize("ps", [[(3,), (-1,)], [(4,), (-1,)], [(2,), (), (-1,)], [(1,), (), (-1,)], [(-1, 2), (1,)],
                                [(2,), (2,)]])
def test_unpack_with_minus_one_as_einops(ps: list[tuple[int, ...]]) -> None:
    """The size left for -1: none left (a 0 size), too little (refused), pieces of size 1 counted."""
    from shapetorch._rules.einops import unpack_shapes

    try:
        want = [t.shape for t in einops.unpack(np.zeros((2, 3)), ps, "b *")]
    except einops.EinopsError:
        with pytest.raises(RuleError):
            unpack_shapes("b *", (2, 3), ps)
        return
    assert unpack_shapes("b *", (2, 3), ps) == want
