"""Sorting and searching against torch: OpInfo samples, hypothesis shapes/dims, ties, NaNs, errors, gradients."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as hs
from torch.testing._internal.common_methods_invocations import op_db

import shapetorch as st
from _oracle import assert_same, compare, fast, make, seeds, shapes, tname, values

# -- torch's OpInfo samples as the oracle (shared with test_ops_scan / _statistics) --------------

OPS = {(o.name, o.variant_test_name): o for o in op_db}


def to_st(x: Any, requires_grad: bool = False) -> Any:
    """The same value with torch tensors replaced by shapetorch tensors of the same data and dtype."""
    if isinstance(x, torch.Tensor):
        t = x.detach()
        if t.dtype == torch.bfloat16:
            out = st.tensor(t.float().numpy()).to(st.bfloat16)
        else:
            out = st.tensor(t.resolve_conj().resolve_neg().numpy().copy(),
                            dtype=getattr(st, "bool_" if t.dtype == torch.bool else tname(t.dtype)))
        if requires_grad and x.requires_grad:
            out.requires_grad_(True)
        return out
    if isinstance(x, torch.dtype):
        return getattr(st, "bool_" if x == torch.bool else tname(x))
    if isinstance(x, tuple):
        return tuple(to_st(v, requires_grad) for v in x)
    if isinstance(x, list):
        return [to_st(v, requires_grad) for v in x]
    if isinstance(x, dict):
        return {k: to_st(v, requires_grad) for k, v in x.items()}
    return x


def samples(name: str, dtype: torch.dtype, requires_grad: bool = False, variant: str = "") -> list[Any]:
    return list(OPS[(name, variant)].sample_inputs("cpu", dtype, requires_grad=requires_grad))


def _default(name: str) -> Callable[..., Any]:
    return lambda lib, *args, **kw: getattr(lib, name)(*args, **kw)


def check_samples(name: str, dtypes: Sequence[torch.dtype], fn: Callable[..., Any] | None = None,
                  compare: Callable[[Any, Any, Any], None] | None = None, variant: str = "",
                  skip: Callable[[Any], bool] | None = None) -> int:
    """Every OpInfo sample of ``name`` in each dtype against torch; returns how many were compared.
    Where torch raises, shapetorch must raise a ShapetorchError."""
    fn = fn or _default(name)
    count = 0
    for dtype in dtypes:
        for s in samples(name, dtype, variant=variant):
            if skip is not None and skip(s):
                continue
            args = (s.input, *s.args)
            where = f"{name} {dtype} input {tuple(getattr(s.input, 'shape', ()))} args {s.args} kwargs {s.kwargs}"
            try:
                expected = fn(torch, *args, **s.kwargs)
            except (RuntimeError, IndexError, ValueError, TypeError, NotImplementedError) as e:
                try:
                    fn(st, *to_st(args), **to_st(s.kwargs))
                except st.ShapetorchError:
                    count += 1
                    continue
                raise AssertionError(f"{where}: torch raised {e!r}, shapetorch did not raise a ShapetorchError") from None
            got = fn(st, *to_st(args), **to_st(s.kwargs))
            try:
                if compare is not None:
                    compare(got, expected, s)
                else:
                    assert_same(got, expected)
            except AssertionError as e:
                raise AssertionError(f"{where}: {e}") from None
            count += 1
    return count


def _first(out: Any) -> Any:
    return out[0] if isinstance(out, tuple) else out


def check_sample_grads(name: str, fn: Callable[..., Any] | None = None, variant: str = "",
                       pick: Callable[[Any], Any] = _first, skip: Callable[[Any], bool] | None = None,
                       limit: int = 40) -> int:
    """Gradients of the float64 OpInfo samples against torch (random cotangent on ``pick(output)``)."""
    fn = fn or _default(name)
    count = 0
    rng = np.random.default_rng(0)
    for s in samples(name, torch.float64, requires_grad=True, variant=variant)[:limit]:
        if skip is not None and skip(s):
            continue
        args = (s.input, *s.args)
        theirs = [a for a in _leaves(args) + _leaves(s.kwargs) if isinstance(a, torch.Tensor) and a.requires_grad]
        out_t = pick(fn(torch, *args, **s.kwargs))
        if not out_t.requires_grad or not theirs:
            continue
        ours_args, ours_kw = to_st(args, True), to_st(s.kwargs, True)
        ours = [a for a in _leaves(ours_args) + _leaves(ours_kw) if isinstance(a, st.Tensor) and a.requires_grad]
        out_o = pick(fn(st, *ours_args, **ours_kw))
        cot = rng.normal(size=tuple(out_t.shape))
        g_t = torch.autograd.grad(out_t, theirs, torch.from_numpy(cot.copy()), allow_unused=True)
        g_o = st.autograd.grad(out_o, ours, st.tensor(cot.copy()), allow_unused=True)
        for i, (a, b) in enumerate(zip(g_o, g_t)):
            where = f"{name} grad {i}: input {tuple(s.input.shape)} args {s.args} kwargs {s.kwargs}"
            if b is None:
                assert a is None or not np.any(a.numpy()), where
                continue
            assert a is not None, where
            rtol, atol = (1e-7, 1e-9) if b.dtype == torch.float64 else (1e-4, 1e-5)
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=rtol, atol=atol, err_msg=where)
        count += 1
    return count


def _leaves(x: Any) -> list[Any]:
    if isinstance(x, (tuple, list)):
        return [leaf for v in x for leaf in _leaves(v)]
    if isinstance(x, dict):
        return [leaf for v in x.values() for leaf in _leaves(v)]
    return [x]


def values_and_valid_indices(dim_of: Callable[[Any], int]) -> Callable[[Any, Any, Any], None]:
    """For (values, indices) results whose indices torch leaves unspecified on ties: equal values, and
    indices that point at those values. ``dim_of(sample)`` is the dim the op ran along."""

    def compare(got: Any, expected: Any, s: Any) -> None:
        assert_same(got[0], expected[0])
        assert got[1].dtype.name == "int64" and tuple(got[1].shape) == tuple(expected[1].shape)
        ours_idx = got[1].numpy()
        x = s.input.detach().numpy()
        if x.ndim == 0:
            assert not ours_idx.any()
            return
        dim = dim_of(s) % x.ndim
        vals = expected[0].detach().numpy()
        if ours_idx.ndim < x.ndim:  # reduced without keepdim
            ours_idx, vals = np.expand_dims(ours_idx, dim), np.expand_dims(vals, dim)
        picked = np.take_along_axis(x, ours_idx, axis=dim)
        np.testing.assert_allclose(picked, vals, equal_nan=True)

    return compare


def arg_or_kw(pos: int, name: str, default: Any) -> Callable[[Any], Any]:
    """The value of a sample's argument: positional ``pos`` (after the input) or keyword ``name``."""
    return lambda s: s.kwargs[name] if name in s.kwargs else s.args[pos] if len(s.args) > pos else default


F64, F32, I64 = torch.float64, torch.float32, torch.int64
CODES = ("dimension_error_out_of_range", "argument_error_invalid", "method_dtype_not_supported_error",
         "reduction_error_empty_input", "dtype_error_mismatch")


@pytest.mark.parametrize("name", ["msort", "searchsorted", "bucketize", "unique", "unique_consecutive"])
def test_opinfo_samples(name):
    dtypes = [F64, F32, I64, torch.bool] if name.startswith("unique") else [F64, F32, I64]
    assert check_samples(name, dtypes) > 0


def _sorted_alike(got, expected, s):
    """sort/argsort: exact where the sample asks for a stable sort; else (torch's tie order is
    unspecified) the same values, and indices that pick them."""
    dim = arg_or_kw(0, "dim", -1)(s)
    if s.kwargs.get("stable"):
        assert_same(got, expected)
        return
    if isinstance(expected, tuple):
        values_and_valid_indices(lambda _: dim)(got, expected, s)
        return
    x = s.input.detach().numpy()
    assert got.dtype.name == "int64" and tuple(got.shape) == tuple(expected.shape)
    if x.ndim:
        np.testing.assert_array_equal(np.take_along_axis(x, got.numpy(), dim % x.ndim),
                                      np.take_along_axis(x, expected.numpy(), dim % x.ndim))


@pytest.mark.parametrize("name", ["sort", "argsort"])
def test_opinfo_samples_sort(name):
    assert check_samples(name, [F64, F32, I64, torch.bool], compare=_sorted_alike) > 0


@pytest.mark.parametrize("name,dim_of", [
    ("topk", arg_or_kw(1, "dim", -1)),
    ("kthvalue", arg_or_kw(1, "dim", -1)),
])
def test_opinfo_samples_values_and_indices(name, dim_of):
    # torch leaves the order of tied indices unspecified: values must match, indices must point at them
    assert check_samples(name, [F64, F32, I64], compare=values_and_valid_indices(dim_of)) > 0


@pytest.mark.parametrize("name", ["sort", "msort", "topk", "kthvalue"])
def test_opinfo_grads(name):
    assert check_sample_grads(name) > 0


@fast(40)
@given(shape=shapes(0, 3, max_side=4), descending=hs.booleans(), seed=seeds, data=hs.data())
def test_sort_stable_with_ties_and_nans(shape, descending, seed, data):
    dim = data.draw(hs.integers(-max(len(shape), 1) - 1, max(len(shape), 1)))
    arr = np.random.default_rng(seed).integers(0, 3, size=shape).astype(np.float64)
    if arr.size and data.draw(hs.booleans()):
        arr.reshape(-1)[0] = np.nan
    dtype = data.draw(hs.sampled_from(["float64", "int64", "bool", "float16", "bfloat16", "uint8"]))
    if dtype != "float64":
        arr = np.nan_to_num(arr, nan=1.0)
    x = (arr.astype(np.float32) if dtype == "bfloat16" else arr.astype(dtype), dtype)
    compare(lambda lib, a: lib.sort(a, dim=dim, descending=descending, stable=True), x, codes=CODES)
    compare(lambda lib, a: a.argsort(dim=dim, descending=descending, stable=True), x, codes=CODES)


def test_sort_rejects_complex_and_keeps_namedtuple():
    x, tx = make(values((3,), "complex64"), "complex64")
    compare(lambda lib, a: lib.sort(a), (x, tx), codes="method_dtype_not_supported_error")
    y = st.tensor([3.0, 1.0, 2.0])
    out = y.sort(descending=True)
    assert out.values.tolist() == [3.0, 2.0, 1.0] and out.indices.tolist() == [0, 2, 1]


@fast(40)
@given(shape=shapes(0, 3, max_side=4), seed=seeds, data=hs.data())
def test_topk_kthvalue_shapes_and_errors(shape, seed, data):
    n = max(len(shape), 1)
    dim = data.draw(hs.integers(-n - 1, n))
    k = data.draw(hs.integers(-1, 5))
    arr = np.random.default_rng(seed).permutation(max(int(np.prod(shape)), 1))[: int(np.prod(shape))].reshape(shape)
    x = (arr.astype(np.float64), "float64")  # distinct values: the indices are determined
    largest = data.draw(hs.booleans())
    keepdim = data.draw(hs.booleans())
    compare(lambda lib, a: lib.topk(a, k, dim, largest=largest), x, codes=CODES)
    compare(lambda lib, a: a.kthvalue(k, dim, keepdim), x, codes=CODES)


def test_topk_nan_is_largest_and_unsorted_flag():
    x = (np.array([1.0, np.nan, 3.0, 2.0]), "float64")
    compare(lambda lib, a: lib.topk(a, 2), x)
    compare(lambda lib, a: lib.topk(a, 2, largest=False), x)
    compare(lambda lib, a: lib.topk(a, 2, sorted=False).values.sort().values, x)


@fast(40)
@given(seq_shape=shapes(1, 3, min_side=1, max_side=4), seed=seeds, right=hs.booleans(), data=hs.data())
def test_searchsorted_shapes(seq_shape, seed, right, data):
    rng = np.random.default_rng(seed)
    seq = np.sort(rng.integers(0, 5, size=seq_shape), axis=-1).astype(np.float64)
    if len(seq_shape) == 1 or data.draw(hs.booleans()):
        vshape = data.draw(shapes(0, 3, max_side=3)) if len(seq_shape) == 1 else (*seq_shape[:-1],
                                                                                    data.draw(hs.integers(0, 3)))
    else:
        vshape = data.draw(shapes(0, 3, max_side=3))  # usually mismatched leading dims: rejected by both
    vals = rng.integers(-1, 6, size=vshape).astype(np.float64)
    int32 = data.draw(hs.booleans())
    compare(lambda lib, s, v: lib.searchsorted(s, v, right=right, out_int32=int32), (seq, "float64"),
            (vals, "float64"), codes=CODES)
    if len(seq_shape) == 1:
        compare(lambda lib, v, b: lib.bucketize(v, b, right=right), (vals, "float64"), (seq, "float64"), codes=CODES)


def test_searchsorted_side_sorter_scalar_and_errors():
    seq = (np.array([3.0, 1.0, 2.0, 2.0]), "float64")
    sorter = (np.array([1, 2, 3, 0]), "int64")
    vals = (np.array([2.0, 0.5, 4.0]), "float64")
    compare(lambda lib, s, v, o: lib.searchsorted(s, v, sorter=o), seq, vals, sorter)
    compare(lambda lib, s, v, o: lib.searchsorted(s, v, side="right", sorter=o), seq, vals, sorter)
    sorted_seq = (np.array([1.0, 2.0, 2.0, 3.0]), "float64")
    compare(lambda lib, s: lib.searchsorted(s, 2), sorted_seq)
    compare(lambda lib, s: lib.searchsorted(s, 2.0, right=True), sorted_seq)
    compare(lambda lib, s, v: lib.searchsorted(s, v, side="left", right=True), sorted_seq, vals, codes=CODES)
    compare(lambda lib, s: lib.bucketize(2, s), sorted_seq)
    compare(lambda lib, s, v: lib.searchsorted(s, v), (np.array([1, 2, 3]), "int64"), vals)  # promotes
    compare(lambda lib, b: lib.bucketize(lib.tensor([1.0]), b), (np.ones((2, 2)), "float64"), codes=CODES)


@fast(40)
@given(shape=shapes(0, 3, max_side=4), seed=seeds, inverse=hs.booleans(), counts=hs.booleans(), data=hs.data())
def test_unique_and_consecutive(shape, seed, inverse, counts, data):
    arr = np.random.default_rng(seed).integers(0, 3, size=shape)
    dtype = data.draw(hs.sampled_from(["int64", "float32", "bool"]))
    dim = data.draw(hs.none() | hs.integers(-max(len(shape), 1) - 1, max(len(shape), 1)))
    x = (arr.astype(dtype), dtype)
    compare(lambda lib, a: lib.unique(a, return_inverse=inverse, return_counts=counts, dim=dim), x, codes=CODES)
    compare(lambda lib, a: a.unique_consecutive(return_inverse=inverse, return_counts=counts, dim=dim), x,
            codes=CODES)


def test_unique_nans_are_distinct_and_not_differentiable():
    x = (np.array([np.nan, 1.0, np.nan, 1.0]), "float64")
    compare(lambda lib, a: lib.unique(a, return_counts=True, return_inverse=True), x)
    y = st.tensor([1.0, 2.0, 1.0], requires_grad=True)
    u = st.unique(y)
    assert u.requires_grad  # as torch: recorded in the graph ...
    with pytest.raises(st.ShapetorchError) as info:  # ... but backward is not implemented
        u.sum().backward()
    assert info.value.code == "autograd_not_registered_error"


def test_sort_forward_mode_and_gradcheck():
    import shapetorch.autograd.forward_ad as fwAD

    x = st.tensor([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]], dtype=st.float64)
    t = st.tensor(np.arange(6.0).reshape(2, 3))
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t)
        out = st.sort(dual, 1, descending=True).values
        tangent = fwAD.unpack_dual(out).tangent
    assert tangent.tolist() == [[0.0, 2.0, 1.0], [4.0, 3.0, 5.0]]
    y = st.tensor([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]], dtype=st.float64, requires_grad=True)
    assert st.autograd.gradcheck(lambda a: st.topk(a, 2).values, (y,))


# -- out= and the static rules ------------------------------------------------------------------------------

OUT_CASES = {
    # name: (fn(lib, x, out), out factory(lib))
    "sort": (lambda lib, x, o: lib.sort(x, 1, out=o), lambda lib: (lib.empty(0, dtype=lib.float64),
                                                                  lib.empty(0, dtype=lib.int64))),
    "topk": (lambda lib, x, o: lib.topk(x, 2, out=o), lambda lib: (lib.zeros(2, 2, dtype=lib.float64),
                                                                  lib.zeros(2, 2, dtype=lib.int64))),
    "kthvalue": (lambda lib, x, o: lib.kthvalue(x, 2, 0, out=o), lambda lib: (lib.empty(0, dtype=lib.float64),
                                                                             lib.empty(0, dtype=lib.int64))),
    "msort": (lambda lib, x, o: lib.msort(x, out=o), lambda lib: lib.empty(0, dtype=lib.float64)),
    "cumsum": (lambda lib, x, o: lib.cumsum(x, 0, out=o), lambda lib: lib.zeros(3, 4, dtype=lib.float64)),
    "cummax": (lambda lib, x, o: lib.cummax(x, 1, out=o), lambda lib: (lib.empty(0, dtype=lib.float64),
                                                                      lib.empty(0, dtype=lib.int64))),
    "median": (lambda lib, x, o: lib.median(x, 1, out=o), lambda lib: (lib.empty(0, dtype=lib.float64),
                                                                      lib.empty(0, dtype=lib.int64))),
    "quantile": (lambda lib, x, o: lib.quantile(x, 0.5, 0, out=o), lambda lib: lib.empty(0, dtype=lib.float64)),
    "histc": (lambda lib, x, o: lib.histc(x, 4, out=o), lambda lib: lib.empty(0, dtype=lib.float64)),
    "cumsum_in_out_dtype": (lambda lib, x, o: lib.cumsum(x, 0, out=o), lambda lib: lib.zeros(3, 4, dtype=lib.int64)),
    "wrong_dtype": (lambda lib, x, o: lib.sort(x, out=o), lambda lib: (lib.empty(0), lib.empty(0, dtype=lib.int64))),
    "nanmean_casts": (lambda lib, x, o: lib.nanmean(x, 1, out=o), lambda lib: lib.empty(0, dtype=lib.float32)),
}


@pytest.mark.parametrize("name", sorted(OUT_CASES))
def test_out_arguments(name):
    fn, make_out = OUT_CASES[name]
    arr = np.random.default_rng(1).permutation(12).reshape(3, 4).astype(np.float64)

    def run(lib, x):
        out = make_out(lib)
        res = fn(lib, x, out)
        assert res is out or all(a is b for a, b in zip(res, out))  # the out tensors are returned
        return out

    compare(run, (arr, "float64"), codes="dtype_error_mismatch")


@fast(60)
@given(shape=shapes(0, 3, max_side=4), k=hs.integers(-1, 5), n=hs.integers(-1, 3), data=hs.data())
def test_rules_agree_with_runtime(shape, k, n, data):
    """The rules the static checker runs give the runtime's shape, or reject where the runtime raises."""
    from shapetorch._rules.dims import UNKNOWN, Sym
    from shapetorch._rules.errors import RuleError
    from shapetorch._rules.scan import cum_shape, diff_shape, trapezoid_shape
    from shapetorch._rules.sorting import kthvalue_shape, select_reduce_shape, topk_shape, unique_shapes
    from shapetorch._rules.statistics import quantile_shape
    from shapetorch._rules.tiling import cartesian_prod_shape

    dim = data.draw(hs.integers(-max(len(shape), 1) - 1, max(len(shape), 1)))
    keepdim = data.draw(hs.booleans())
    arr = np.random.default_rng(0).permutation(max(int(np.prod(shape)), 1))[: int(np.prod(shape))]
    arr = arr.reshape(shape).astype(np.float64)
    inputs = {st: st.tensor(arr), torch: torch.from_numpy(arr.copy())}
    cases = [
        (lambda: topk_shape(shape, k, dim), lambda lib, x: lib.topk(x, k, dim).values),
        (lambda: kthvalue_shape(shape, k, dim, keepdim), lambda lib, x: lib.kthvalue(x, k, dim, keepdim).values),
        (lambda: cum_shape(shape, dim), lambda lib, x: lib.cumsum(x, dim)),
        (lambda: diff_shape(shape, n, dim), lambda lib, x: lib.diff(x, n, dim)),
        (lambda: select_reduce_shape(shape, dim, keepdim), lambda lib, x: lib.median(x, dim, keepdim).values),
        (lambda: quantile_shape(shape, (2,), dim, keepdim),
         lambda lib, x: lib.quantile(x, lib.tensor([0.2, 0.8], dtype=lib.float64), dim, keepdim)),
        (lambda: trapezoid_shape(shape, None, dim), lambda lib, x: lib.trapezoid(x, dim=dim)),
        (lambda: trapezoid_shape(shape, None, dim, cumulative=True),
         lambda lib, x: lib.cumulative_trapezoid(x, dim=dim)),
    ]
    for rule, run in cases:
        try:
            expected = rule()
        except RuleError:
            with pytest.raises(st.ShapetorchError):
                run(st, inputs[st])
            continue
        try:
            got = tuple(run(st, inputs[st]).shape)
        except st.ShapetorchError as e:
            # A check on the values the rule cannot see (an empty quantile): torch must refuse it too,
            # or the rule and the runtime disagree and the test fails.
            with pytest.raises(Exception):  # noqa: B017, PT011 - torch's class is the bad-input tests' concern
                run(torch, inputs[torch])
            assert e.code, e
            continue
        assert got == expected, (rule, got, expected)
    # statically unknown and named sizes never raise
    sym = (Sym("B"), UNKNOWN, *shape)
    topk_shape(sym, 3, 1)
    kthvalue_shape(sym, 3, 0)
    assert diff_shape(sym, 1, 0) == (UNKNOWN, *sym[1:])
    assert unique_shapes(sym, 0)[0][0] is UNKNOWN
    assert cartesian_prod_shape([(Sym("N"),), (3,)]) == (Sym("N*3"), 2)


def test_unique_rule_shapes_with_dim_match_torch():
    """unique's rule with `dim` (its result sizes are data-dependent, so unknown at `dim`): every other
    size, the inverse's shape and the counts' rank are torch's. (A 0-d input with dim=0 differs: torch
    raises IndexError, the rule accepts it.)"""
    import torch

    from shapetorch._rules.dims import UNKNOWN
    from shapetorch._rules.sorting import unique_shapes

    for shape, d in [((3, 4), 0), ((3, 4), 1), ((2, 3, 4), -1), ((5,), 0)]:
        out, inverse, counts = torch.unique(torch.zeros(shape), dim=d, return_inverse=True, return_counts=True)
        r_out, r_inverse, r_counts = unique_shapes(shape, d)
        assert r_out == tuple(UNKNOWN if i == d % len(shape) else s for i, s in enumerate(out.shape))
        assert r_inverse == tuple(inverse.shape) and len(r_counts) == counts.dim() == 1
