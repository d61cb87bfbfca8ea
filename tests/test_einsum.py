"""einsum: the rule and the runtime against torch.einsum (values, gradients, accept/reject)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import shapetorch as st
from shapetorch._errors import ShapetorchError
from shapetorch._rules.dims import UNKNOWN, Sym
from shapetorch._rules.einsum import einsum_shape, parse_equation
from shapetorch._rules.errors import RuleError
from shapetorch.ops import einsum as einsum_module

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def torch_outcome(eq: str, shapes: list[tuple[int, ...]]) -> tuple[int, ...] | None:
    try:
        return tuple(torch.einsum(eq, *[torch.zeros(s) for s in shapes]).shape)
    except (RuntimeError, ValueError, TypeError):
        return None


def rule_outcome(eq: str, shapes: list[tuple[int, ...]]) -> tuple[object, ...] | None:
    try:
        return einsum_shape(eq, *shapes)
    except RuleError as e:
        assert e.code.startswith("einsum_error_")
        return None


# -- equations from hypothesis ----------------------------------------------------------------------


@hs.composite
def valid_case(draw: hs.DrawFn) -> tuple[str, list[tuple[int, ...]]]:
    letters = draw(hs.lists(hs.sampled_from("abcdeXY"), min_size=1, max_size=5, unique=True))
    size = {c: draw(hs.integers(1, 3)) for c in letters}
    ell = draw(hs.lists(hs.integers(1, 3), max_size=2))
    terms, shapes = [], []
    for _ in range(draw(hs.integers(1, 3))):
        term = draw(hs.lists(hs.sampled_from(letters), max_size=4))
        shape = [size[c] if not draw(hs.booleans()) or size[c] != 1 else 1 for c in term]
        shape = [1 if draw(hs.integers(0, 9)) == 0 else s for s in shape]  # torch broadcasts size-1 subscripts
        if draw(hs.booleans()) and len(set(term)) == len(term):
            k = draw(hs.integers(0, len(term)))
            n = draw(hs.integers(0, len(ell)))
            term = term[:k] + ["..."] + term[k:]
            shape = shape[:k] + ell[len(ell) - n :] + shape[k:]
        # a repeated subscript in one operand needs equal sizes there
        for c in set(term):
            idx = [i for i, t in enumerate(term) if t == c]
            if len(idx) > 1:
                for i in idx:
                    shape[_pos(term, shape, i)] = size[c]
        terms.append("".join(term))
        shapes.append(tuple(shape))
    used = sorted({c for t in terms for c in t if c.isalpha()})
    if draw(hs.booleans()):
        out = draw(hs.lists(hs.sampled_from(used), unique=True)) if used else []
        if any("..." in t for t in terms) and draw(hs.booleans()):
            out.insert(draw(hs.integers(0, len(out))), "...")
        eq = ",".join(terms) + "->" + "".join(out)
    else:
        eq = ",".join(terms)
    return eq, shapes


def _pos(term: list[str], shape: list[int], i: int) -> int:
    """The dim index of term[i] in ``shape``, given that '...' covers len(shape) - (len(term) - 1) dims."""
    if "..." not in term:
        return i
    k = term.index("...")
    return i if i < k else i - 1 + len(shape) - (len(term) - 1)


@hs.composite
def any_case(draw: hs.DrawFn) -> tuple[str, list[tuple[int, ...]]]:
    eq, shapes = draw(valid_case())
    mutation = draw(hs.integers(0, 6))
    if mutation == 1:
        shapes = [tuple(draw(hs.integers(0, 3)) for _ in s) for s in shapes]
    elif mutation == 2 and shapes:
        shapes = shapes[:-1] if draw(hs.booleans()) else [*shapes, (2,)]
    elif mutation == 3:
        i = draw(hs.integers(0, len(eq)))
        eq = eq[:i] + draw(hs.sampled_from([".", "-", ">", ",", "1", " ", "->", "a", "Z"])) + eq[i:]
    elif mutation == 4 and shapes:
        j = draw(hs.integers(0, len(shapes) - 1))
        shapes[j] = shapes[j] + (2,) if draw(hs.booleans()) else shapes[j][:-1]
    return eq, shapes


@pytest.fixture(params=["fast", "composite"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Without grads, programs without a matmul run as np.einsum ("fast"); removing the einsum primitive's
    cpu kernel (as on a device without one) makes them run as the composite."""
    if request.param == "composite":
        monkeypatch.delitem(einsum_module._EINSUM.kernels, "cpu")
    return str(request.param)


@SETTINGS
@given(case=valid_case())
def test_valid_equations_match_torch(path: str, case: tuple[str, list[tuple[int, ...]]]) -> None:
    eq, shapes = case
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    expected = torch_outcome(eq, shapes)
    assert rule_outcome(eq, shapes) == expected
    if expected is None:
        with pytest.raises(ShapetorchError) as info:
            st.einsum(eq, *[st.tensor(a) for a in arrays])
        assert info.value.code.startswith("einsum_error_")
        return
    want = torch.einsum(eq, *[torch.tensor(a) for a in arrays]).numpy()
    got = st.einsum(eq, *[st.tensor(a) for a in arrays]).numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


@SETTINGS
@given(any_case())
def test_accept_reject_matches_torch(case: tuple[str, list[tuple[int, ...]]]) -> None:
    eq, shapes = case
    expected = torch_outcome(eq, shapes)
    assert rule_outcome(eq, shapes) == expected
    try:
        got = tuple(st.einsum(eq, *[st.zeros(s) for s in shapes]).shape)
    except ShapetorchError as e:
        assert expected is None and e.code.startswith("einsum_error_")
    else:
        assert got == expected


@settings(max_examples=25, deadline=None)
@given(valid_case())
def test_gradients_match_torch(case: tuple[str, list[tuple[int, ...]]]) -> None:
    eq, shapes = case
    if torch_outcome(eq, shapes) is None:
        return
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s) for s in shapes]
    tt = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = torch.einsum(eq, *tt)
    weight = rng.standard_normal(tuple(out.shape))
    (out * torch.tensor(weight)).sum().backward()
    ss = [st.tensor(a, requires_grad=True) for a in arrays]
    (st.einsum(eq, *ss) * st.tensor(weight)).sum().backward()
    for s, t in zip(ss, tt):
        np.testing.assert_allclose(s.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-10)


# -- specific behaviour ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("eq", "shapes", "code"),
    [
        ("i1", [(2,)], "einsum_error_invalid_equation"),
        ("i...j...", [(2, 3)], "einsum_error_invalid_equation"),
        ("ij->i.", [(2, 3)], "einsum_error_invalid_equation"),
        ("ij,jk", [(2, 3)], "einsum_error_operand_count_mismatch"),
        ("ij", [(2, 3), (3,)], "einsum_error_operand_count_mismatch"),
        ("ij,jk,k1->il", [(2, 3), (3, 4)], "einsum_error_operand_count_mismatch"),  # torch: the comma first
        ("ij", [(2, 3, 4)], "einsum_error_subscript_rank_mismatch"),
        ("ij->k", [(2, 3, 4)], "einsum_error_subscript_rank_mismatch"),  # rank before output
        ("ii->i", [(3, 4)], "einsum_error_dimension_mismatch"),
        ("ii", [(1, 3)], "einsum_error_dimension_mismatch"),  # no broadcasting inside one operand
        ("ij,jk", [(2, 3), (4, 5)], "einsum_error_dimension_mismatch"),
        ("...,...", [(2, 3), (4,)], "einsum_error_dimension_mismatch"),
        ("ij->ii", [(2, 3)], "einsum_error_unknown_output_index"),
        ("ij->k", [(2, 3)], "einsum_error_unknown_output_index"),
    ],
)
def test_error_codes(eq: str, shapes: list[tuple[int, ...]], code: str) -> None:
    assert torch_outcome(eq, shapes) is None
    with pytest.raises(ShapetorchError) as info:
        st.einsum(eq, *[st.zeros(s) for s in shapes])
    assert info.value.code == code
    assert repr(eq) in str(info.value) and "operand shapes" in str(info.value)


def test_typo_in_output_suggests_a_letter() -> None:
    with pytest.raises(ShapetorchError, match="did you mean 'j'"):
        st.einsum("ij->J", st.zeros(2, 3))


@given(eq=hs.sampled_from(["ij,jk->iz", "ij,jk->z", "bhqd,bhkd->bhqz", "i->j", "ij->iJ", "ab,bc->ac"]))
@settings(max_examples=20, deadline=None)
def test_unknown_output_letter_names_the_left_out_letters(eq: str) -> None:
    """torch refuses the equation too; the hint is the other case of the letter, else the input letters the
    output leaves out."""
    lhs, out = eq.split("->")
    ops = [np.ones([2] * len(t)) for t in lhs.split(",")]
    unknown = [c for c in out if c not in lhs]
    if not unknown:
        assert tuple(st.einsum(eq, *[st.tensor(o) for o in ops]).shape) == tuple(torch.einsum(eq, *map(torch.tensor, ops)).shape)
        return
    with pytest.raises(RuntimeError):
        torch.einsum(eq, *map(torch.tensor, ops))
    with pytest.raises(ShapetorchError) as info:
        st.einsum(eq, *[st.tensor(o) for o in ops])
    wrong = unknown[0]
    left_out = sorted(set(lhs.replace(",", "")) - set(out))
    if wrong.swapcase() in lhs:
        assert f"did you mean {wrong.swapcase()!r}?" in str(info.value)
    elif len(left_out) == 1:
        assert f"did you mean {left_out[0]!r}?" in str(info.value)
    else:
        assert "did you mean one of " + ", ".join(map(repr, left_out)) + " (" in str(info.value)


def test_sublist_and_list_forms() -> None:
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    want = a @ b
    assert np.allclose(st.einsum(st.tensor(a), [0, 1], st.tensor(b), [1, 2], [0, 2]).numpy(), want)
    assert np.allclose(st.einsum(st.tensor(a), [0, 1], st.tensor(b), [1, 2]).numpy(), want)
    assert np.allclose(st.einsum("ij,jk", [st.tensor(a), st.tensor(b)]).numpy(), want)
    assert np.allclose(st.einsum(st.tensor(a), [Ellipsis, 1], [1]).numpy(), a.sum(0))
    with pytest.raises(ShapetorchError) as info:
        st.einsum(st.tensor(a), [0, 52])
    assert info.value.code == "einsum_error_index_out_of_range"
    with pytest.raises(TypeError) as info2:
        st.einsum(st.tensor(a), [0, "a"])
    assert getattr(info2.value, "code", "") == "einsum_error_invalid_sublist_element"


def test_implicit_output_puts_upper_case_first() -> None:
    assert einsum_shape("bA", (2, 3)) == (3, 2)
    assert einsum_shape("i...,j...", (2, 3), (4, 3)) == (3, 2, 4)


def test_symbolic_shapes() -> None:
    b, n = Sym("B"), Sym("N")
    assert einsum_shape("bij,bjk->bik", (b, n, 3), (b, 3, 5)) == (b, n, 5)
    assert einsum_shape("ij,jk->ik", (UNKNOWN, UNKNOWN), (4, 5)) == (UNKNOWN, 5)
    assert einsum_shape("ij,jk->ik", (2, n), (3, 4)) == (2, 4)  # N may be 3 (or 1): undecidable, no error
    assert einsum_shape("...ij->...", (b, 2, 3)) == (b,)
    with pytest.raises(RuleError):
        einsum_shape("ij,jk", (2, Sym("K")), (Sym("M"), 4))  # two different symbols are different sizes
    with pytest.raises(RuleError):
        einsum_shape("ij,jk", (2, 3), (4, 4))


def test_parse_is_cached_and_clearable() -> None:
    st.clear_einsum_cache()
    assert st.get_einsum_cache_size() == 0
    st.einsum("ij,jk->ik", st.zeros(2, 3), st.zeros(3, 4))
    assert st.get_einsum_cache_size() >= 1
    assert parse_equation("ij,jk->ik") is parse_equation("ij,jk->ik")
    st.clear_einsum_cache()
    assert st.get_einsum_cache_size() == 0


def test_double_backward() -> None:
    x = np.random.default_rng(2).standard_normal((3, 3))
    tx = torch.tensor(x, requires_grad=True)
    (gt,) = torch.autograd.grad(torch.einsum("ij,jk,ki->", tx, tx, tx), tx, create_graph=True)
    (ggt,) = torch.autograd.grad(gt.sum(), tx)
    sx = st.tensor(x, requires_grad=True)
    (gs,) = st.autograd.grad(st.einsum("ij,jk,ki->", sx, sx, sx), sx, create_graph=True)
    (ggs,) = st.autograd.grad(gs.sum(), sx)
    np.testing.assert_allclose(gs.detach().numpy(), gt.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(ggs.numpy(), ggt.numpy(), rtol=1e-10)


def test_integer_einsum_keeps_dtype() -> None:
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    got = st.einsum("ij->i", st.tensor(a))
    want = torch.einsum("ij->i", torch.tensor(a))
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert got.tolist() == want.tolist()


# -- the two paths: composite (primitives called directly or public ops) and the no-grad np.einsum ------


@pytest.fixture
def fast_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The equations the np.einsum kernel ran."""
    calls: list[str] = []
    kernel = einsum_module._EINSUM.kernels["cpu"]

    def spy(*arrays: object, equation: str) -> object:
        calls.append(equation)
        return kernel(*arrays, equation=equation)

    monkeypatch.setitem(einsum_module._EINSUM.kernels, "cpu", spy)
    return calls


BENCH_LIKE = [
    ("ii->", [(5, 5)]), ("ii->i", [(5, 5)]), ("i,j->ij", [(4,), (3,)]), ("ij->ji", [(2, 3)]), ("bii->bi", [(2, 3, 3)]),
    ("...ii->...i", [(2, 3, 3)]), ("i,j,k->ijk", [(2,), (3,), (4,)]), ("ij->", [(2, 3)]), ("i,i->i", [(1,), (3,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]), ("ij,kl->", [(2, 3), (4, 5)]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
@pytest.mark.parametrize(("eq", "shapes"), BENCH_LIKE)
def test_both_paths_match_torch(eq: str, shapes: list[tuple[int, ...]], dtype: str, fast_calls: list[str]) -> None:
    rng = np.random.default_rng(3)
    arrays = [(rng.standard_normal(s) + (1j * rng.standard_normal(s) if dtype.startswith("complex") else 0)).astype(dtype)
              for s in shapes]
    want = torch.einsum(eq, *[torch.tensor(a) for a in arrays])
    got = st.einsum(eq, *[st.tensor(a) for a in arrays])
    fast = eq.count(",") == 0 or "matmul" not in {s[0] for s in einsum_module._program(eq, tuple(shapes))[0]}
    assert len(fast_calls) == (fast and eq != "ij,kl->")  # summing after a product stays composite
    assert got.dtype is getattr(st, str(want.dtype).split(".")[-1])
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol, atol=tol)
    # with grads the composite runs (never the kernel) and the gradients are torch's
    fast_calls.clear()
    tt = [torch.tensor(a, requires_grad=True) for a in arrays]
    ss = [st.tensor(a, requires_grad=True) for a in arrays]
    torch.einsum(eq, *tt).abs().sum().backward()
    st.einsum(eq, *ss).abs().sum().backward()
    assert fast_calls == []
    for s, t in zip(ss, tt):
        np.testing.assert_allclose(s.grad.numpy(), t.grad.numpy(), rtol=tol, atol=tol)


def test_fast_path_equation_and_conditions(fast_calls: list[str]) -> None:
    a = st.ones(3, 3)
    st.einsum("ii->", a)
    st.einsum("XX->X", a)  # labels are renamed for NumPy
    st.einsum("...ii->...", st.ones(2, 3, 3))
    assert fast_calls == ["aa->", "aa->a", "baa->b"]  # letters in label order: "..." dims last
    fast_calls.clear()
    with st.no_grad():
        st.einsum("ii->", st.ones(3, 3, requires_grad=True))  # no graph is recorded: fast
    assert fast_calls == ["aa->"]
    fast_calls.clear()
    st.einsum("ii->", st.ones(3, 3, dtype=st.float16))  # float16 accumulates as torch does in the composite
    st.einsum("i,j->ij", st.ones(3), st.ones(3, dtype=st.float64))  # mixed dtypes promote through public mul
    st.einsum("ii->", st.ones(3, 3, dtype=st.int32))
    assert fast_calls == []


def test_mixed_dtypes_as_torch() -> None:
    a, b = np.arange(3.0, dtype=np.float32), np.arange(4.0)
    got = st.einsum("i,j->ij", st.tensor(a), st.tensor(b))
    want = torch.einsum("i,j->ij", torch.tensor(a), torch.tensor(b))
    assert got.dtype is st.float64 and np.allclose(got.numpy(), want.numpy())
    with pytest.raises(ShapetorchError):
        st.einsum("ij,j->i", st.ones(2, 3), st.ones(3, dtype=st.float64))  # torch: expected scalar type Float


@pytest.mark.parametrize("kernel", [True, False])
def test_view_results_write_through(kernel: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not kernel:
        monkeypatch.delitem(einsum_module._EINSUM.kernels, "cpu")
    a = st.zeros(3, 3)
    d = st.einsum("ii->i", a)
    d.add_(1.0)
    assert a.numpy().tolist() == np.eye(3).tolist()
    assert a._version == d._version  # views share the version counter
    t = st.einsum("ij->ji", a)
    assert t._base is a and st.einsum("ii->", a)._base is None


def test_forward_ad_uses_the_composite() -> None:
    import torch.autograd.forward_ad as tfwad

    import shapetorch.autograd.forward_ad as fwad

    x, dx = np.random.default_rng(4).standard_normal((2, 3, 3)), np.random.default_rng(5).standard_normal((2, 3, 3))
    with fwad.dual_level():
        out = st.einsum("bii->b", fwad.make_dual(st.tensor(x), st.tensor(dx)))
        got = fwad.unpack_dual(out).tangent.numpy()
    with tfwad.dual_level():
        want = tfwad.unpack_dual(torch.einsum("bii->b", tfwad.make_dual(torch.tensor(x), torch.tensor(dx)))).tangent
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-12)


@pytest.mark.parametrize("eq", ["i#,j->ij", "ij,j#->i", "ij,jk,k%->i", "ij->i#"])
def test_bad_subscript_index_as_torch(eq: str) -> None:
    """The index of a bad subscript counts from the start of the equation, as torch's message does (the
    running offset of the terms: `start = 0` into 1 shifted every index)."""
    import re

    shapes = [(2, 2)] * (eq.split("->", maxsplit=1)[0].count(",") + 1)
    with pytest.raises(RuntimeError) as want:
        torch.einsum(eq, *[torch.zeros(s) for s in shapes])
    with pytest.raises(RuleError) as got:
        einsum_shape(eq, *shapes)
    assert got.value.code == "einsum_error_invalid_equation"
    index = re.search(r"at index (\d+)", str(want.value))
    assert index is not None and f"at index {index.group(1)};" in got.value.message


@pytest.mark.parametrize(("eq", "terms"), [("ij,j#->i", "at least 2"), ("ij,jk->ik", "2")])
def test_too_few_operands_counts_the_terms(eq: str, terms: str) -> None:
    """Fewer operands than terms: torch refuses both. Where parsing stopped at a bad term beyond the given
    operands the count is a lower bound, and the message says so ("at least")."""
    with pytest.raises(RuntimeError, match="fewer operands"):
        torch.einsum(eq, torch.zeros(2, 2))
    with pytest.raises(RuleError) as info:
        einsum_shape(eq, (2, 2))
    assert info.value.code == "einsum_error_operand_count_mismatch"
    assert f"has {terms} input terms but 1 operands" in info.value.message
