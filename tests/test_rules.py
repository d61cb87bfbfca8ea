"""The shape rules on their own: symbolic dims, UNKNOWN, gradual behaviour, and what messages name."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from shapetorch._rules import (
    UNKNOWN,
    RuleError,
    Sym,
    bmm_shape,
    broadcast_pair,
    cat_shape,
    expand_shape,
    flatten_shape,
    index_shape,
    matmul_shape,
    mm_shape,
    permute_shape,
    reduce_shape,
    reshape_shape,
    select_shape,
    squeeze_shape,
    stack_shape,
    transpose_shape,
    unsqueeze_shape,
)
from shapetorch._rules.errors import CATALOGUE, VERBATIM

B, N, M = Sym("B"), Sym("N"), Sym("M")


def test_broadcast_symbolic_and_unknown():
    assert broadcast_pair((B, 1, 3), (N, 3)) == (B, N, 3)
    assert broadcast_pair((B, 3), (B, 3)) == (B, 3)
    assert broadcast_pair((UNKNOWN, 3), (4, 3)) == (4, 3)  # unknown never raises
    assert broadcast_pair((UNKNOWN,), (B,)) == (B,)
    assert broadcast_pair((B,), (4,)) == (4,)  # int against a symbol: undecidable, keep the known size
    with pytest.raises(RuleError) as info:
        broadcast_pair((B, 2), (N, 3), op="add")
    assert info.value.code == "broadcast_error_incompatible_dimensions"
    with pytest.raises(RuleError):
        broadcast_pair((2, B), (2, N))  # differing Syms do raise


def test_matmul_symbolic():
    assert matmul_shape((B, N, M), (M, 5)) == (B, N, 5)
    assert matmul_shape((N,), (N,)) == ()
    assert matmul_shape((UNKNOWN, 3), (3, 2)) == (UNKNOWN, 2)
    assert matmul_shape((2, UNKNOWN), (7, 2)) == (2, 2)  # unknown contraction is accepted
    with pytest.raises(RuleError) as info:
        matmul_shape((B, N), (M, 4))
    assert info.value.code == "matmul_error_inner_dimensions_do_not_match"
    assert "N" in info.value.message and "M" in info.value.message
    assert mm_shape((N, UNKNOWN), (UNKNOWN, M)) == (N, M)
    with pytest.raises(RuleError) as info:
        bmm_shape((B, 2, 3), (N, 3, 2))
    assert info.value.code == "batch_dimensions_do_not_match_error"


def test_views_symbolic():
    assert reshape_shape((B, 2, 3), (B, 6)) == (B, 6)
    assert reshape_shape((B, N), (-1,)) == (Sym("B*N"),)
    assert reshape_shape((UNKNOWN, 4), (-1, 2)) == (UNKNOWN, 2)
    with pytest.raises(RuleError):
        reshape_shape((2, 3), (4, 2))
    with pytest.raises(RuleError) as info:
        reshape_shape((B,), (-1, -1))
    assert info.value.code == "reshape_error_multiple_inferred"
    assert permute_shape((B, N, 3), (2, 0, 1)) == (3, B, N)
    assert transpose_shape((B, N), 0, 1) == (N, B)
    assert squeeze_shape((B, 1, UNKNOWN)) == (B, UNKNOWN)  # an unknown might be 1: kept
    assert unsqueeze_shape((B,), -1) == (B, 1)
    assert flatten_shape((B, N, 2), 1) == (B, Sym("N*2"))
    assert expand_shape((1, N), (B, -1, N)) == (B, 1, N)
    assert expand_shape((1, N), (B, N)) == (B, N)
    with pytest.raises(RuleError):
        expand_shape((2, N), (3, N))


def test_reduce_join_index_symbolic():
    assert reduce_shape((B, N, 3), 1) == (B, 3)
    assert reduce_shape((B, N, 3), (0, -1), keepdim=True) == (1, N, 1)
    assert reduce_shape((), 0) == ()  # a 0-d tensor takes dim 0 and -1
    assert cat_shape([(B, 2), (B, 3)], 1) == (B, 5)
    assert cat_shape([(B, N), (B, UNKNOWN)], 1) == (B, UNKNOWN)
    with pytest.raises(RuleError) as info:
        cat_shape([(B, 2), (N, 3)], 1)
    assert info.value.code == "cat_error_size_mismatch"
    assert stack_shape([(B, 2), (B, 2)], 1) == (B, 2, 2)
    assert select_shape((B, 4), 1, 2) == (B,)
    assert select_shape((UNKNOWN, 4), 0, 100) == (4,)  # an unknown size never raises
    assert index_shape((B, N, 4), (0, slice(None), None)) == (N, 1, 4)
    assert index_shape((UNKNOWN, 4), (Ellipsis, 3)) == (UNKNOWN,)


@pytest.mark.parametrize("dim", [3, -4, 10])
def test_dim_out_of_range_message(dim):
    with pytest.raises(RuleError) as info:
        reduce_shape((B, 2, 3), dim, op="sum")
    e = info.value
    assert e.code == "dimension_error_out_of_range"
    assert e.message.startswith("sum:") and "[-3, 2]" in e.message and str(dim) in e.message


def test_messages_name_op_problem_and_values():
    with pytest.raises(RuleError) as info:
        broadcast_pair((2, B), (3, B), op="add")
    m = info.value.message
    assert m.startswith("add:") and "(2, B)" in m and "(3, B)" in m and "2 != 3" in m
    with pytest.raises(RuleError) as info:
        reshape_shape((2, 3), (4, 2), op="view")
    m = info.value.message
    assert m.startswith("view:") and "[4, 2]" in m and "(2, 3)" in m and "6 elements" in m


def test_every_catalogue_entry_formats():
    from shapetorch._errors import _BY_KIND

    for code, entry in CATALOGUE.items():
        assert entry.kind in _BY_KIND, code  # every kind picks an exception class
        assert ("{op}" in entry.template) != (code in VERBATIM), code  # torch's own words, or the op named first


def test_broadcast_and_expand_mutation_survivors():
    """Killers of two mutants tools/mutation.py found alive: the broadcast error's dimension counted from
    the wrong end (`i - n` into `i + n`), and an expand to a different non-singleton size let through
    (`or` into `and`). torch refuses both expands below; the dimension is the one that differs."""
    import torch

    from shapetorch._rules.broadcast import broadcast_shapes, expand_shape
    from shapetorch._rules.errors import RuleError

    with pytest.raises(RuleError) as info:
        broadcast_shapes((2, 3, 4), (5, 4))
    assert info.value.code == "broadcast_error_incompatible_dimensions"
    assert "at dimension -2" in str(info.value)
    for shape, sizes in [((2,), (3,)), ((2, 3), (2, 4)), ((4, 1), (5, 2))]:
        with pytest.raises(RuntimeError):
            torch.empty(shape).expand(sizes)
        with pytest.raises(RuleError) as info:
            expand_shape(shape, sizes)
        assert info.value.code == "expand_error_incompatible"


def test_reshape_products_of_named_dims():
    """Named sizes times literals: a mismatch is reported only where it holds whatever the names are."""
    T, C = Sym("T"), Sym("C")
    with pytest.raises(RuleError) as info:
        reshape_shape((B, 16000), (B, 101, 160))  # Batch*16000 against Batch*16160
    assert info.value.code == "reshape_error_size_mismatch"
    with pytest.raises(RuleError):
        reshape_shape((B, 16000), (B, -1, 161))  # 161 does not divide 16000
    with pytest.raises(RuleError):
        reshape_shape((4000,), (T, 3))  # 3 does not divide 4000, whatever T is
    assert reshape_shape((B, 16000), (T, 161)) == (T, 161)  # B may be 161 * k
    assert reshape_shape((B, 16000), (B, 100, 160)) == (B, 100, 160)
    assert reshape_shape((B, T, C), (B, -1)) == (B, Sym("C*T"))
    assert reshape_shape((B, T, 8), (B, T, 2, 4)) == (B, T, 2, 4)
    assert reshape_shape((B, 16000), (B, T, 160)) == (B, T, 160)  # T may be 100
    assert reshape_shape((B, N), (B, T, C)) == (B, T, C)  # N may be T*C
    assert reshape_shape((B, 16000), (B, -1, 160)) == (B, 100, 160)


_named = hs.sampled_from(["B", "T", "C"])
_factor = hs.one_of(hs.integers(0, 6), _named)


@settings(max_examples=300, deadline=None)
@given(shape=hs.lists(_factor, min_size=1, max_size=3), sizes=hs.lists(hs.one_of(_factor, hs.just(-1)), min_size=1, max_size=3),
       values=hs.fixed_dictionaries({n: hs.integers(1, 6) for n in "BTC"}))
def test_reshape_symbolic_verdict_is_sound(shape: list, sizes: list, values: dict) -> None:
    """Whatever sizes (non-zero, as named dims are taken) the names stand for, a symbolic mismatch is a runtime mismatch too (never a false error),
    and a symbolic result is the runtime's once the names are filled in."""
    def sym(d: object) -> object:
        return Sym(d) if isinstance(d, str) else d

    def concrete(d: object) -> int:
        return values[d] if isinstance(d, str) else d  # type: ignore[index, return-value]

    try:
        symbolic = reshape_shape(tuple(sym(d) for d in shape), [sym(s) for s in sizes])
    except RuleError as err:
        with pytest.raises(RuleError) as rt:
            reshape_shape(tuple(concrete(d) for d in shape), [concrete(s) for s in sizes])
        assert rt.value.code == err.code
        return
    try:
        runtime = reshape_shape(tuple(concrete(d) for d in shape), [concrete(s) for s in sizes])
    except RuleError:
        return  # undecidable statically, decided at run time
    for s, r in zip(symbolic, runtime):
        if isinstance(s, int):
            assert s == r
        elif isinstance(s, Sym):
            n = 1
            for f in s.name.split("*"):
                n *= int(f) if f.isdigit() else values[f]
            assert n == r


def test_bind_dims_per_call():
    """A dim name takes one size a call: two literals or two named dims that differ conflict; a literal against
    a named dim is undecided (accepted); the message names both parameters and shapes."""
    from shapetorch._rules.binding import bind_dims

    Batch, Seq = Sym("Batch"), Sym("Seq")
    sig = ["B", "P", None]
    assert bind_dims([("q", sig, (Batch, 4, 8)), ("k", sig, (Batch, 4, 9))]) == ({"B": Batch, "P": 4}, set())
    assert bind_dims([("q", sig, (Batch, 4, 8)), ("k", sig, (Batch, Seq, 8))])[1] == {"P"}
    assert bind_dims([("q", sig, (UNKNOWN, 4, 8)), ("k", sig, (Batch, UNKNOWN, 8))])[0] == {"B": Batch, "P": 4}
    with pytest.raises(RuleError) as info:
        bind_dims([("q", sig, (Batch, 4, 8)), ("k", sig, (Batch, 5, 8))], "attend")
    assert info.value.code == "call_error_dim_conflict"
    assert info.value.message == "attend: dim P is 4 in q (Batch, 4, 8) but 5 in k (Batch, 5, 8)"
    with pytest.raises(RuleError):
        bind_dims([("q", sig, (Batch, Seq, 8)), ("k", sig, (Seq, Batch, 8))])


# Killers of mutants that tools/mutation.py found alive (docs/architecture.md, "Mutation testing"). Each
# names the slip it catches; each was checked by planting the slip back and seeing the test fail.


def test_wrap_dim_refuses_bool_and_float_dims_like_torch():
    """`type(dim) is not int` into `is int` let a bool or a float dim through the rule (the plugin calls it
    on literal dims) and returned a NumPy integer dim unconverted."""
    import numpy as np
    import torch

    from shapetorch._errors import from_rule
    from shapetorch._rules.axes import wrap_dim

    for bad in (True, 1.0):
        with pytest.raises(TypeError):
            torch.zeros(2, 3).unsqueeze(bad)
        with pytest.raises(RuleError) as info:
            wrap_dim(bad, 2, "unsqueeze")
        assert info.value.code == "argument_error_type"
        assert isinstance(from_rule(info.value), TypeError)
    got = wrap_dim(np.int64(-1), 2, "unsqueeze")
    assert got == 1 and type(got) is int


def test_symbolic_size_arithmetic():
    """The size arithmetic the plugin does on named sizes (a flatten of (B, 2) is B*2; a split of B*2 by 2
    is B). Slips caught: `a == 1` into `a == 0` or `a == 2` in dim_mul (2*B became B, 0*B became B), and
    the divisibility test of dim_div negated (an exact int quotient became unknown)."""
    from shapetorch._rules.dims import dim_add, dim_div, dim_mul, prod

    assert dim_mul(1, B) == B and dim_mul(B, 1) == B
    assert dim_mul(2, B) == Sym("B*2") == dim_mul(B, 2) == prod((2, B)) == prod((B, 1, 2))
    assert dim_mul(0, B) == 0 == dim_mul(B, 0) == prod((B, 0, N))
    assert dim_mul(B, N) == Sym("B*N") == dim_mul(N, B)
    assert dim_mul(UNKNOWN, B) is UNKNOWN and dim_mul(1, UNKNOWN) is UNKNOWN
    assert dim_mul(3, 4) == 12 and prod(()) == 1
    assert dim_div(12, 4) == 3 and dim_div(12, 5) is UNKNOWN and dim_div(3, 0) is UNKNOWN
    assert dim_div(Sym("B*2"), 2) == B and dim_div(Sym("B*N"), N) == B and dim_div(B, B) == 1
    assert dim_div(Sym("B*6"), 4) is UNKNOWN and dim_div(B, N) is UNKNOWN and dim_div(B, 1) == B
    assert dim_add(2, 3) == 5 and dim_add(0, B) == B and dim_add(B, 0) == B and dim_add(B, 1) is UNKNOWN


def _levenshtein(a: str, b: str) -> int:
    """An independent reference: the textbook recursion, memoized."""
    from functools import cache

    @cache
    def d(i: int, j: int) -> int:
        if not i or not j:
            return i + j
        return min(d(i - 1, j) + 1, d(i, j - 1) + 1, d(i - 1, j - 1) + (a[i - 1] != b[j - 1]))

    return d(len(a), len(b))


def test_edit_distance_behind_did_you_mean():
    """The distance behind the "did you mean" hints of the einops/einsum messages, against the textbook
    recursion on every pair of short words (a slip in the dynamic programme's indices or costs changes
    some of them)."""
    import itertools

    from shapetorch._rules.errors import did_you_mean, edit_distance

    words = ["".join(w) for n in range(4) for w in itertools.product("ab", repeat=n)] + ["kitten", "sitting"]
    for a, b in itertools.product(words, repeat=2):
        assert edit_distance(a, b) == _levenshtein(a, b), (a, b)
    assert did_you_mean("hieght", ["width", "height"]) == "; did you mean 'height'?"
    assert did_you_mean("zzz", ["height"]) == ""


def test_pack_mismatch_names_the_axis_after_the_star():
    """A pack whose tensors differ on an axis after `*` names that axis, not `*` (`j < before` into
    `j <= before` picked the pattern's word one place early)."""
    from shapetorch._rules.einops import pack_shape

    for shapes, axis in [([(2, 3, 4), (2, 5)], "c"), ([(2, 3, 4), (3, 5, 4)], "b")]:
        with pytest.raises(RuleError) as info:
            pack_shape("b * c", shapes)
        assert info.value.code == "einops_error_dimension_mismatch"
        assert f"(axis {axis!r})" in info.value.message


def test_unravel_index_rule_as_torch():
    """One index tensor per dim of `shape`, each of the indices' shape; a negative size refused (the
    refusal's condition negated refused every call), with torch's ValueError (argument_error_invalid_value)."""
    import torch

    from shapetorch._rules.indexing import unravel_index_shape

    for index, shape in [((2,), (2, 3)), ((), (4,)), ((2, 2), (2, 3, 4))]:
        want = torch.unravel_index(torch.zeros(index, dtype=torch.int64), shape)
        assert unravel_index_shape(index, shape) == tuple(tuple(t.shape) for t in want)
    with pytest.raises(ValueError, match="cannot have negative values"):
        torch.unravel_index(torch.tensor([1]), (2, -3))
    with pytest.raises(RuleError) as info:
        unravel_index_shape((1,), (2, -3))
    assert info.value.code == "argument_error_invalid_value" and "cannot have negative values" in info.value.message


def test_unfold_diagonal_and_cartesian_prod_rules_as_torch():
    """Rule results the checking mode does not see: unfold's window count and its refusal of step 0,
    cartesian_prod of two vectors (a pair per row), and diagonal of a named size (unknown length: the
    length is computed only when both sizes are ints)."""
    import torch

    from shapetorch._rules.tiling import cartesian_prod_shape
    from shapetorch._rules.views import diagonal_shape, unfold_shape

    for shape, dim, size, step in [((7,), 0, 2, 1), ((3, 8), 1, 3, 2), ((5, 4), 0, 5, 3), ((4,), 0, 0, 1), ((6,), 0, 2, 0)]:
        try:
            want = tuple(torch.zeros(shape).unfold(dim, size, step).shape)
        except RuntimeError:
            with pytest.raises(RuleError):
                unfold_shape(shape, dim, size, step)
            continue
        assert unfold_shape(shape, dim, size, step) == want
    for shapes in [[(3,)], [(3,), (4,)], [(2,), (3,), (4,)]]:
        assert cartesian_prod_shape(shapes) == tuple(torch.cartesian_prod(*[torch.zeros(s) for s in shapes]).shape)
    assert diagonal_shape((3, B)) == (UNKNOWN,) and diagonal_shape((B, 3)) == (UNKNOWN,)
    assert diagonal_shape((3, 5), offset=1) == (3,) == tuple(torch.zeros(3, 5).diagonal(1).shape)
