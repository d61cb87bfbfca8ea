"""A differential bad-input fuzzer, driven by the op registry: every public function that torch also has
gets bad and borderline variants of a valid call, runs them through torch and shapetorch, and compares.
That is the top-level functions and those of torch.linalg, torch.fft, torch.special and torch.nn.functional,
each under its OpInfo name (``linalg.cholesky`` is ``shapetorch.linalg.cholesky``, ``nn.functional.conv2d``
is ``shapetorch.nn.functional.conv2d``).

A valid call comes from torch's OpInfo samples (the first float32 sample both libraries accept). Each
*kind* of variant mutates it in one way (a non-tensor input, a dim out of range or of the wrong type,
another dtype, an empty or 0-d input, a non-contiguous or expanded input, an unknown keyword, too many
arguments, ...). For each variant the verdicts must agree:

- both raise: shapetorch's exception is a ``ShapetorchError`` with a code, and an instance of the
  builtin class torch raised (``except TypeError`` written for torch keeps working);
- both accept: the same shape, dtype and values;
- otherwise: a disagreement (``silent`` where only torch rejects, ``refused`` where only torch accepts).

``run()`` returns one :class:`Case` per variant; ``tools/bad_input_report.py`` prints the table.
"""

from __future__ import annotations

import copy
import functools
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

import shapetorch as st
from _opinfo_tables import to_st
from _oracle import assert_same

KINDS = (
    "valid", "non_tensor_input", "none_input", "extra_argument", "unknown_keyword", "duplicate_argument",
    "dim_out_of_range", "dim_float", "dim_bool", "bool_flag_int", "bool_flag_none", "bool_flag_numpy",
    "bool_input", "uint8_input", "int64_input", "complex_input", "empty_input", "zero_dim_input",
    "non_contiguous_input", "expanded_input", "nan_input", "index_out_of_bounds", "index_negative_out_of_bounds",
    "nan_size", "inf_size", "inplace_expanded", "inplace_partial_overlap", "out_partial_overlap", "inplace_leaf",
    "inplace_leaf_view", "huge_size", "uninitialized_input",
)


# results that are random or uninitialised in torch: only their shape and dtype are compared
UNSEEDED = {"empty_like", "rand_like", "randn_like", "randint_like", "bernoulli", "multinomial", "normal", "poisson",
            "dropout", "alpha_dropout", "feature_alpha_dropout", "rrelu", "randperm", "empty", "empty_strided",
            "nn.functional.dropout", "nn.functional.dropout1d", "nn.functional.dropout2d", "nn.functional.dropout3d",
            "nn.functional.alpha_dropout", "nn.functional.feature_alpha_dropout", "nn.functional.rrelu",
            "nn.functional.gumbel_softmax",
            "resize_as_"}  # the elements it adds are uninitialised in torch


# ops whose indices among equal values torch leaves unspecified (its sort is not stable by default):
# the indices are compared by the values they pick, name -> (position of dim, of keepdim) among the args
TIES = {"sort": (0, None), "argsort": (0, None), "topk": (1, None), "kthvalue": (1, 2),
        "mode": (0, 1)}


def _same_up_to_ties(name: str, x: Any, args: tuple[Any, ...], kwargs: dict[str, Any], ours: Any, theirs: Any) -> None:
    """``ours`` and ``theirs`` agree on the values, and ``ours``'s indices pick those values out of ``x``."""
    at_dim, at_keep = TIES[name]
    dim = kwargs.get("dim", args[at_dim] if len(args) > at_dim else -1)
    keep = kwargs.get("keepdim", args[at_keep] if at_keep is not None and len(args) > at_keep else False)
    if name == "argsort":
        idx, values = ours, torch.take_along_dim(x, theirs, dim) if x.dim() else x
    else:
        assert_same(ours[0], theirs[0])
        idx, values = ours[1], theirs[0]
    idx = torch.as_tensor(np.asarray(idx.numpy()))
    assert (tuple(idx.shape), idx.dtype) == (tuple(values.shape), torch.int64), "indices: shape/dtype"
    if x.dim() == 0:
        return
    if name in ("kthvalue", "mode") and not keep:
        idx, values = idx.unsqueeze(dim), values.unsqueeze(dim)
    torch.testing.assert_close(torch.take_along_dim(x, idx, dim), values, equal_nan=True, rtol=0, atol=0)


# Disagreements kept on purpose, where torch is silently wrong and shapetorch refuses (each listed with its reason in
# docs/compatibility.md, "Bad input torch lets through"): counted as "deliberate", not as disagreements.
DELIBERATE = {
    **dict.fromkeys(("nn.functional.multi_head_attention_forward:zero_dim_input",
                     "nn.functional.multi_head_attention_forward:nan_size",
                     "nn.functional.multi_head_attention_forward:inf_size",
                     "nn.functional.multi_head_attention_forward:huge_size"),
                    "torch checks the shapes with assert statements (an AssertionError, none under python -O); "
                    "ours is a coded ShapeError"),
    "nn.functional.multi_head_attention_forward:nan_input": "torch's CPU flash-attention path gives finite values "
                                                            "for a query row holding NaN; ours NaN, as its math "
                                                            "path (need_weights=True) does",
    "take_along_dim:index_out_of_bounds": "torch reads outside the tensor and returns what it finds there",
    "take_along_dim:index_negative_out_of_bounds": "torch reads outside the tensor and returns what it finds there",
    "masked_fill:inplace_expanded": "torch writes into an expanded tensor; which element wins depends on the order",
    "index_put:inplace_expanded": "torch writes into an expanded tensor; which element wins depends on the order",
    "tril:inplace_expanded": "torch writes into an expanded tensor; which element wins depends on the order",
    "triu:inplace_expanded": "torch writes into an expanded tensor; which element wins depends on the order",
    "as_strided:empty_input": "torch reads outside the (empty) storage and returns what it finds there",
    "as_strided_scatter:empty_input": "torch writes outside the (empty) storage",
    "as_strided_copy:empty_input": "torch reads outside the (empty) storage and returns what it finds there",
    "mode:nan_input": "torch's mode of a row with NaN depends on where the NaN is ([nan, 1, 2] gives nan, [1, 2, nan] "
                      "gives 1): its sort does not order NaN; ours counts NaN as one value, sorted last",
    "mv:zero_dim_input": "torch's check reads dim 0 of the 0-d matrix first (an IndexError); ours is the "
                         "RuntimeError torch gives for every other wrong rank",
    "pinverse:expanded_input": "the default rcond=1e-15 is below float32's resolution: for this rank-1 matrix both "
                               "libraries invert rounding noise, and the noise differs",
    "addmv:inplace_expanded": "torch writes into an expanded tensor; which element wins depends on the order",
    "baddbmm:inplace_expanded": "torch writes into an expanded tensor; which element wins depends on the order",
    "qr:expanded_input": "a rank-deficient matrix's Q is not unique past its rank",
    "geqrf:expanded_input": "a rank-deficient matrix's reflectors are not unique past its rank: LAPACK's rounding "
                            "(torch's MKL, shapetorch's OpenBLAS through scipy) picks them",
    "geqrf:nan_input": "which entries a NaN reaches is each LAPACK's own: torch's MKL keeps the first column's norm "
                       "finite, OpenBLAS's geqrf makes it NaN",
    "lu:expanded_input": "a pivot that is zero up to rounding: whether infos counts it depends on the rounding",
    "qr:nan_input": "NaN spreads further through NumPy's factorization than through LAPACK's",
    "lu:nan_input": "NaN spreads further through NumPy's factorization than through LAPACK's",
    "triangular_solve:nan_input": "NaN spreads further through a solve than through LAPACK's triangular solve",
    "kron:non_contiguous_input": "torch refuses a valid input: its kernel calls view() on a non-contiguous tensor",
    # torch's Python-level functions leak an AttributeError (``'str' object has no attribute 'dim'``) or a ValueError
    # from int(); shapetorch raises the TypeError that torch's argument parser gives for its other ops
    "norm:non_tensor_input": "torch leaks an AttributeError from its Python code; ours is a TypeError",
    "norm:none_input": "torch leaks an AttributeError from its Python code; ours is a TypeError",
    "split:none_input": "torch leaks an AttributeError from its Python code; ours is a TypeError",
    "stft:non_tensor_input": "torch leaks an AttributeError from its Python code; ours is a TypeError",
    "stft:none_input": "torch leaks an AttributeError from its Python code; ours is a TypeError",
    "tensordot:non_tensor_input": "torch leaks an AttributeError from its Python code; ours is a TypeError",
    "tensordot:none_input": "torch leaks an AttributeError from its Python code; ours is a TypeError",
    "stft:nan_size": "torch leaks a ValueError from int() in its Python code; ours is a TypeError",
    "stft:inf_size": "torch leaks an OverflowError-turned-ValueError from int() in its Python code; ours is a TypeError",
    "nn.functional.unfold:huge_size": "torch returns a tensor of a negative size for a kernel larger than the input; "
                                      "ours refuses it with the error torch gives for other kernels too large",
    # linalg of a matrix holding NaN: where the NaN spreads depends on the factorization's order of operations
    **dict.fromkeys(("linalg.inv:nan_input", "linalg.inv_ex:nan_input", "linalg.ldl_factor_ex:nan_input", "linalg.lu:nan_input", "linalg.lu_factor:nan_input",
                     "linalg.lu_factor_ex:nan_input", "linalg.qr:nan_input", "linalg.solve:nan_input", "linalg.solve_ex:nan_input",
                     "linalg.tensorinv:nan_input", "linalg.tensorsolve:nan_input"),
                    "NaN spreads further through NumPy's factorization than through LAPACK's"),
    "linalg.cholesky_ex:nan_input": "a NaN pivot stops the factorization (info as torch's); the L past it is unspecified",
    "linalg.cholesky_ex:expanded_input": "a matrix that is not positive-definite: the L past the failing minor is "
                                         "unspecified (LAPACK leaves a partial factorization)",
    "linalg.eigh:expanded_input": "the eigenvectors of a repeated eigenvalue are not unique",
    "linalg.qr:expanded_input": "a rank-deficient matrix's Q is not unique past its rank",
    "linalg.eigvals:expanded_input": "a rank-1 matrix's eigenvalues come in LAPACK's order, which its rounding of the "
                                     "zero ones decides",
    "linalg.lu_factor:expanded_input": "a pivot that is zero up to rounding: whether it is exactly zero (torch's "
                                       "error) depends on the rounding",
    # a 0-d input where torch's check reads a dim of it first and raises IndexError: ours is the rank error torch
    # gives for every other wrong rank
    **dict.fromkeys(("nn.functional.avg_pool2d:zero_dim_input", "nn.functional.grid_sample:zero_dim_input",
                     "nn.functional.max_unpool1d:zero_dim_input", "nn.functional.max_unpool2d:zero_dim_input",
                     "nn.functional.max_unpool3d:zero_dim_input", "nn.functional.ctc_loss:zero_dim_input",
                     "nn.functional.batch_norm:zero_dim_input"),
                    "torch's rank check reads a dim of the 0-d input first (an IndexError); ours is the error torch "
                    "gives for every other wrong rank"),
    "nn.functional.instance_norm:empty_input": "torch's kernel fails on an empty batch (an IndexError from select); "
                                               "ours returns the empty result, as batch_norm does in torch",
    # the special polynomials of a NaN input: torch returns an uninitialised value (a different one each call)
    **dict.fromkeys((f"special.{n}:nan_input" for n in (
        "chebyshev_polynomial_u", "chebyshev_polynomial_w", "laguerre_polynomial_l", "legendre_polynomial_p",
        "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_w")),
                    "torch returns an uninitialised value for a NaN input (another each call); ours is NaN"),
}
# deliberate differences that come from rounding (a rank-1 matrix's noise, a pivot that is zero up to rounding):
# on some CPUs the two libraries' kernels round alike and agree, so these may agree without leaving the list
ROUNDING = {"pinverse:expanded_input", "lu:expanded_input", "linalg.lu_factor:expanded_input", "geqrf:expanded_input",
            "linalg.eigvals:expanded_input"}


# Variants that crash torch's process: not run through torch, whose verdict is taken to be the error here (the one
# torch raises for the same input elsewhere)
CRASHES = {
    # MKL's SGEBAL refuses the NaN and torch segfaults; torch.linalg.eig checks first and raises this
    "linalg.eigvals:nan_input": RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs."),
    # torch reads outside the log-probs for a target out of bounds (an answer from memory it should not read, or a
    # segfault); the IndexError is gather's, which torch raises for the same index elsewhere
    "nn.functional.ctc_loss:index_out_of_bounds": IndexError("index 1000000 is out of bounds"),
    "nn.functional.ctc_loss:index_negative_out_of_bounds": IndexError("index -1000000 is out of bounds"),
}


# torch's functions written in Python (most of torch.nn.functional) leak an AttributeError for an argument of the wrong
# type (``'str' object has no attribute 'dim'``); shapetorch's is the TypeError torch's argument parser gives for its
# other ops. Counted as deliberate wherever it happens (docs/compatibility.md), the entries above apart.
LEAK = "torch leaks an AttributeError from its Python code; ours is a TypeError"


@dataclass(frozen=True)
class Case:
    name: str  # the public function
    kind: str
    verdict: str  # "agree", "deliberate", "silent", "refused", "raw" (not a ShapetorchError), "class", "values"
    detail: str = ""

    @property
    def key(self) -> str:
        return f"{self.name}:{self.kind}"


@functools.cache
def _opinfos() -> dict[str, Any]:
    from torch.testing._internal.common_methods_invocations import op_db

    out: dict[str, Any] = {}
    for op in op_db:
        if op.variant_test_name == "" and op.name not in out:
            out[op.name] = op
    return out


def names() -> list[str]:
    """Public shapetorch functions that torch has under the same name and that an OpInfo samples."""
    import shapetorch.nn.toplevel  # noqa: F401  (torch.conv2d, torch.layer_norm, ...: registered with nn)
    from shapetorch.ops._registry import FUNCTIONS

    ops = _opinfos()
    top = [n for n in FUNCTIONS if hasattr(torch, n) and n in ops]
    spaced = [n for n in ops if n.startswith(NAMESPACES) and _public(torch, n) is not None
              and _public(st, n) is not None]
    return sorted([*top, *spaced])


# the namespaces whose functions are fuzzed besides the top level, as OpInfo prefixes their names
NAMESPACES = ("linalg.", "fft.", "special.", "nn.functional.")


def _public(lib: Any, name: str) -> Any | None:
    """``lib``'s public function of that (dotted) name, or None."""
    import shapetorch.nn.functional  # noqa: F401  (st.nn.functional, loaded on demand)

    try:
        return functools.reduce(getattr, name.split("."), lib)
    except AttributeError:
        return None


def family(name: str) -> str:
    """The registry's category of a top-level function, the namespace of another (``linalg``, ``nn.functional``)."""
    from shapetorch.ops._registry import CATEGORY

    name = name.removeprefix("Tensor.")
    if "." in name:
        return name.rsplit(".", 1)[0]
    return CATEGORY.get(name, "other")


def builtin_class(e: BaseException) -> type[BaseException]:
    return next(c for c in type(e).__mro__ if c.__module__ == "builtins")


def outcome(fn: Callable[[], Any]) -> tuple[Any, BaseException | None]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(), None
    except Exception as e:  # the verdict is what is compared
        return None, e


def assert_torch_verdict(ours_call: Callable[[], Any], theirs_call: Callable[[], Any]) -> None:
    """One hand-written case judged as the fuzzer judges: torch's verdict, its builtin class and a code on a
    refusal; torch's answer (shape, dtype, values) on acceptance."""
    from _oracle import assert_same

    theirs, te = outcome(theirs_call)
    ours, oe = outcome(ours_call)
    if te is not None:
        assert oe is not None, f"torch raises {type(te).__name__}: {te}; shapetorch accepts"
        assert isinstance(oe, st.ShapetorchError) and oe.code, f"uncoded {type(oe).__name__}: {oe}"
        assert isinstance(oe, builtin_class(te)), f"torch {builtin_class(te).__name__}, ours {type(oe).__mro__}"
        return
    assert oe is None, f"torch accepts, shapetorch raises {type(oe).__name__}: {oe}"
    if isinstance(theirs, (bool, int, float, complex, str, type(None))):
        assert ours == theirs
    else:
        assert_same(ours, theirs)


def _judge(name: str, kind: str, call: Callable[[Any, Any, tuple[Any, ...], dict[str, Any]], Any],
           x: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Case:
    layout = LAYOUTS.get(kind)
    call = _laid_out(kind, call)
    # converted before torch's call, which may write into x (inplace=True), and from a copy: x.numpy() would make
    # the storage of torch's x one it refuses to resize
    mine = to_st(copy.deepcopy(x)), to_st(copy.deepcopy(args)), to_st(copy.deepcopy(kwargs))
    theirs, te = (None, CRASHES[f"{name}:{kind}"]) if f"{name}:{kind}" in CRASHES else outcome(
        lambda: call(torch, x, args, kwargs))
    ours, oe = outcome(lambda: call(st, *mine))
    if te is not None and oe is not None:
        if not isinstance(oe, st.ShapetorchError):
            return Case(name, kind, "raw", f"{type(oe).__name__}: {str(oe)[:120]}")
        if (isinstance(te, AttributeError) and isinstance(oe, TypeError)
                and f"{name.removeprefix('Tensor.')}:{kind}" not in DELIBERATE):
            return Case(name, kind, "deliberate", LEAK)
        if not isinstance(oe, builtin_class(te)):
            return _kept(Case(name, kind, "class", f"torch {builtin_class(te).__name__}, ours {type(oe).__mro__[1].__name__}"
                        f" [{oe.code}]"))
        return Case(name, kind, "agree")
    if te is not None:
        return _kept(Case(name, kind, "silent", f"torch {type(te).__name__}: {str(te)[:120]}"))
    if oe is not None:
        verdict = "refused" if isinstance(oe, st.ShapetorchError) else "raw"
        return _kept(Case(name, kind, verdict, f"{type(oe).__name__}: {str(oe)[:120]}"))
    try:
        base = name.removeprefix("Tensor.")
        if base in TIES:
            _same_up_to_ties(base, layout(x) if layout is not None else x, args, kwargs, ours, theirs)
        elif base in UNSEEDED:
            assert (tuple(ours.shape), ours.dtype.name) == (tuple(theirs.shape), str(theirs.dtype)[6:]), "shape/dtype"
        else:
            assert_same(ours, theirs)
    except Exception as e:
        return _kept(Case(name, kind, "values", str(e)[:160]))
    return Case(name, kind, "agree")


def _kept(case: Case) -> Case:
    """A listed deliberate difference (a coded refusal, another builtin class, an answer where torch wrongly
    refuses, or another answer where torch's depends on what it should not) is counted as such; a raw error never
    is."""
    if case.verdict != "raw" and f"{case.name.removeprefix('Tensor.')}:{case.kind}" in DELIBERATE:
        return Case(case.name, case.kind, "deliberate", case.detail)
    return case


def _call(fn_name: str) -> Callable[[Any, Any, tuple[Any, ...], dict[str, Any]], Any]:
    if "." in fn_name:
        return lambda lib, x, args, kwargs: _public(lib, fn_name)(x, *args, **kwargs)
    return lambda lib, x, args, kwargs: getattr(lib, fn_name)(x, *args, **kwargs)


# The dtypes a sample is drawn in, the first the op supports: float32, else an integer-only op's (bitwise, gcd,
# bincount, one_hot) int64, else a complex-only op's (imag, view_as_real, istft) complex64.
SAMPLE_DTYPES = (torch.float32, torch.int64, torch.complex64)

# Public names whose OpInfo samples this fuzzer cannot use, each with the reason: its first argument is no tensor
# (a factory's sizes, a list of tensors, an equation), or OpInfo calls the op through a wrapper of its own (its
# samples' arguments are not the function's) and ``SAMPLERS`` has none. ``test_every_name_has_a_sample`` holds
# every other name to a sample, so that a new public op without one fails.
NO_TENSOR_INPUT = frozenset({
    "arange", "empty", "empty_permuted", "empty_strided", "eye", "full", "linspace", "logspace", "ones", "randint",
    "randn", "scalar_tensor", "tril_indices", "triu_indices", "zeros",  # factories: sizes, numbers
    "cat", "column_stack", "dstack", "hstack", "stack", "vstack", "linalg.multi_dot",  # a list of tensors
    "einsum",  # an equation first
})


def _sampler_embedding_bag() -> Any:
    g = torch.Generator().manual_seed(0)
    return torch.tensor([[0, 2, 1], [3, 3, 0]]), (torch.randn(5, 4, generator=g),), {"mode": "mean"}


def _sampler_multi_head_attention_forward() -> Any:
    g = torch.Generator().manual_seed(0)
    e, h = 4, 2
    q = torch.randn(3, 2, e, generator=g)  # (L, N, E)
    w = torch.randn(3 * e, e, generator=g)
    return q, (q.clone(), q.clone(), e, h, w, torch.zeros(3 * e), None, None, False, 0.0,
               torch.randn(e, e, generator=g), torch.zeros(e)), {"training": False, "need_weights": False}


def _sampler_triplet_margin_with_distance_loss() -> Any:
    g = torch.Generator().manual_seed(0)
    a = torch.randn(3, 4, generator=g)
    return a, (torch.randn(3, 4, generator=g), torch.randn(3, 4, generator=g)), {"margin": 0.5}


# Samples of our own where OpInfo's call the op through a wrapper (their arguments are not the function's):
# name -> () -> (input, args, kwargs), torch tensors.
SAMPLERS: dict[str, Callable[[], tuple[Any, tuple[Any, ...], dict[str, Any]]]] = {
    "nn.functional.embedding_bag": _sampler_embedding_bag,
    "nn.functional.multi_head_attention_forward": _sampler_multi_head_attention_forward,
    "nn.functional.triplet_margin_with_distance_loss": _sampler_triplet_margin_with_distance_loss,
}


@dataclass
class _Sample:
    input: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


def _valid_sample(name: str) -> Any | None:
    call = _call(name)
    if name in SAMPLERS:
        s = _Sample(*SAMPLERS[name]())
        return s if _judge(name, "valid", call, s.input, s.args, s.kwargs).verdict == "agree" else None
    op = _opinfos()[name]
    supported = op.supported_dtypes("cpu")
    for dtype in (d for d in SAMPLE_DTYPES if d in supported):
        for s in op.sample_inputs("cpu", dtype, requires_grad=False):
            if not isinstance(s.input, torch.Tensor) or s.input.dim() == 0:
                continue
            if _judge(name, "valid", call, s.input, tuple(s.args), dict(s.kwargs)).verdict == "agree":
                return s
        return None  # (the first supported dtype only: its samples are the op's ordinary ones)
    return None


UNSAMPLED: set[str] = set()  # the names the last ``run`` drew no sample for


def _variants(x: torch.Tensor, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Iterator[tuple[str, Any, tuple[Any, ...],
                                                                                               dict[str, Any]]]:
    yield "non_tensor_input", "a", args, kwargs
    yield "none_input", None, args, kwargs
    yield "extra_argument", x, (*args, object()), kwargs
    yield "unknown_keyword", x, args, {**kwargs, "bogus_argument": 1}
    if isinstance(kwargs.get("dim"), int) or (args and isinstance(args[0], int) and not isinstance(args[0], bool)):
        def with_dim(d: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
            if isinstance(kwargs.get("dim"), int):
                return args, {**kwargs, "dim": d}
            return (d, *args[1:]), kwargs

        yield "dim_out_of_range", x, *with_dim(x.dim() + 3)
        yield "dim_float", x, *with_dim(1.5)
        yield "dim_bool", x, *with_dim(True)
    yield "bool_input", x.to(torch.bool), args, kwargs
    yield "uint8_input", (x.abs() * 3).to(torch.uint8), args, kwargs
    yield "int64_input", (x * 3).to(torch.int64), args, kwargs
    yield "complex_input", x.to(torch.complex64), args, kwargs
    yield "empty_input", x.reshape(-1)[:0].reshape((0, *x.shape[1:])) if x.dim() else x.reshape(0), args, kwargs
    yield "zero_dim_input", x.reshape(-1)[0].clone() if x.numel() else torch.tensor(1.0), args, kwargs
    if x.dim() >= 2:
        yield "non_contiguous_input", x, args, kwargs  # laid out by the call (LAYOUTS)
    yield "expanded_input", x, args, kwargs
    yield "uninitialized_input", x, args, kwargs  # (made by the call, in each library: LAYOUTS)
    if x.is_floating_point() or x.is_complex():  # (an integer sample has no NaN to hold)
        nan = x.clone()
        if nan.numel():
            nan.reshape(-1)[0] = float("nan")
        yield "nan_input", nan, args, kwargs


# the kinds whose input differs from the sample in its layout only: made inside the call, in each library, since
# the input reaches shapetorch as a copy of its values (to_st), which would be contiguous again
LAYOUTS: dict[str, Callable[[Any], Any]] = {
    "non_contiguous_input": lambda x: x.transpose(0, 1).contiguous().transpose(0, 1),
    "expanded_input": lambda x: x.reshape(-1)[:1].reshape((1,) * x.dim()).expand(x.shape) if x.numel() else x,
    # a lazy module's parameter before its first forward, of the sample's dtype
    "uninitialized_input": lambda x: (torch if isinstance(x, torch.Tensor) else st).nn.parameter.UninitializedParameter(
        dtype=x.dtype),
}


def _laid_out(kind: str, call: Callable[[Any, Any, tuple[Any, ...], dict[str, Any]], Any]
              ) -> Callable[[Any, Any, tuple[Any, ...], dict[str, Any]], Any]:
    layout = LAYOUTS.get(kind)
    if layout is None:
        return call
    return lambda lib, x, args, kwargs: call(lib, layout(x), args, kwargs)


def _method(name: str) -> Callable[[Any, Any, tuple[Any, ...], dict[str, Any]], Any]:
    return lambda lib, x, args, kwargs: getattr(x, name)(*args, **kwargs)


# variants that only a function sees: a method's self is always a tensor, and has no keyword
_FUNCTION_ONLY = {"non_tensor_input", "none_input", "duplicate_argument", "out_partial_overlap"}

Call = Callable[[Any, Any, tuple[Any, ...], dict[str, Any]], Any]
BIG = 10**6  # an index far out of bounds of any sample


def _signature(name: str) -> dict[str, Any]:
    """Our function's parameters (the public names are torch's), by name."""
    import inspect

    from shapetorch.ops._registry import FUNCTIONS

    try:
        return dict(inspect.signature(inspect.unwrap(FUNCTIONS[name] if "." not in name else _public(st, name)))
                    .parameters)
    except (TypeError, ValueError):
        return {}


def _replace_first(seq: tuple[Any, ...], kwargs: dict[str, Any], test: Callable[[Any], bool],
                   new: Callable[[Any], Any]) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
    """``args, kwargs`` with the first value that passes ``test`` (positional first) replaced by ``new(value)``."""
    for i, v in enumerate(seq):
        if test(v):
            return (*seq[:i], new(v), *seq[i + 1:]), kwargs
    for k, v in kwargs.items():
        if test(v):
            return seq, {**kwargs, k: new(v)}
    return None


def _is_index(v: Any) -> bool:
    return isinstance(v, torch.Tensor) and v.dtype == torch.int64 and v.numel() > 0


def _is_size(v: Any) -> bool:
    return type(v) is int and v > 0


def _with_first_element(v: torch.Tensor, value: int) -> torch.Tensor:
    out = v.clone()
    out.reshape(-1)[0] = value
    return out


def _shifted_views(lib: Any, x: Any) -> tuple[Any, Any]:
    """Two same-shaped dense views of one storage, one row apart: they share all but a row of memory."""
    base = lib.cat([x, x[:1]])
    return base[:-1], base[1:]


def _extra_variants(name: str, x: torch.Tensor, args: tuple[Any, ...],
                    kwargs: dict[str, Any]) -> Iterator[tuple[str, Call, Any, tuple[Any, ...], dict[str, Any]]]:
    """The kinds that need their own call: duplicate arguments, bool flags, out-of-bounds indices, NaN and inf
    sizes, in-place ops that alias their target or write into a leaf (and a view of one)."""
    fn = _call(name)
    sig = _signature(name)
    yield "duplicate_argument", lambda lib, x, a, k: _public(lib, name)(x, *a, input=x, **k), x, args, kwargs
    flag = next((p for p, q in sig.items() if q.annotation == "bool" and q.kind is not q.VAR_KEYWORD), None)
    if flag is not None:
        yield "bool_flag_int", fn, x, args, {**kwargs, flag: 1}
        yield "bool_flag_none", fn, x, args, {**kwargs, flag: None}
        yield "bool_flag_numpy", fn, x, args, {**kwargs, flag: np.bool_(True)}
    if (r := _replace_first(args, kwargs, _is_index, lambda v: _with_first_element(v, BIG))) is not None:
        yield "index_out_of_bounds", fn, x, *r
    if (r := _replace_first(args, kwargs, _is_index, lambda v: _with_first_element(v, -BIG))) is not None:
        yield "index_negative_out_of_bounds", fn, x, *r
    if (r := _replace_first(args, kwargs, _is_size, lambda v: float("nan"))) is not None:
        yield "nan_size", fn, x, *r
    if (r := _replace_first(args, kwargs, _is_size, lambda v: float("inf"))) is not None:
        yield "inf_size", fn, x, *r
    inplace = name + "_"
    if hasattr(torch.Tensor, inplace) and hasattr(st.Tensor, inplace) and x.dim() and x.is_floating_point():
        # each on a copy: torch's call gets the sample's own tensor
        yield ("inplace_expanded", lambda lib, x, a, k: getattr(x.clone().reshape(-1)[:1].reshape(
            (1,) * x.dim()).expand(x.shape), inplace)(*a, **k), x, args, kwargs)
        yield ("inplace_leaf", lambda lib, x, a, k: getattr(x.clone().requires_grad_(), inplace)(*a, **k),
               x, args, kwargs)
        yield ("inplace_leaf_view", lambda lib, x, a, k: getattr(x.clone().requires_grad_()[:], inplace)(*a, **k),
               x, args, kwargs)
        if args and isinstance(args[0], torch.Tensor) and args[0].shape == x.shape:
            def overlapping(lib: Any, x: Any, a: tuple[Any, ...], k: dict[str, Any]) -> Any:
                dst, src = _shifted_views(lib, x)
                return getattr(dst, inplace)(src, *a[1:], **k)

            yield "inplace_partial_overlap", overlapping, x, args, kwargs
    theirs, _ = outcome(lambda: fn(torch, x, args, kwargs))
    if ("out" in sig and x.dim() and not kwargs.get("out") and isinstance(theirs, torch.Tensor)
            and theirs.shape == x.shape and theirs.dtype == x.dtype):  # an out= torch need not resize nor cast
        def out_overlapping(lib: Any, x: Any, a: tuple[Any, ...], k: dict[str, Any]) -> Any:
            src, dst = _shifted_views(lib, x)
            return _public(lib, name)(src, *a, out=dst, **k)

        yield "out_partial_overlap", out_overlapping, x, args, kwargs


def _huge_variants(x: torch.Tensor, args: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> Iterator[tuple[str, Any, tuple[Any, ...], dict[str, Any]]]:
    """Every positive int argument (a size, a count, a repeat) made 2**40 in turn."""
    for i, v in enumerate(args):
        if _is_size(v):
            yield "huge_size", x, (*args[:i], 2**40, *args[i + 1:]), kwargs
            return
    for k, v in kwargs.items():
        if _is_size(v):
            yield "huge_size", x, args, {**kwargs, k: 2**40}
            return


HUGE_LIMIT = 2 << 30  # bytes of address space the huge-size subprocess may add to what it holds after its imports


def _limit_memory() -> None:
    """Cap this process's address space a little above what it holds now, so a huge allocation fails at once."""
    import resource

    with open("/proc/self/status") as f:
        held = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (held + HUGE_LIMIT, resource.RLIM_INFINITY))


def run_huge(only: list[str] | None = None) -> list[Case]:
    """The ``huge_size`` cases, in a subprocess under a memory limit (an allocation that the checks let through
    fails there, not on the machine that runs the tests). Linux only (the limit is RLIMIT_AS over /proc)."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    if not sys.platform.startswith("linux"):
        return []
    here = Path(__file__).parent
    code = ("import sys, json; sys.path.insert(0, sys.argv[1]); import _bad_input as f; f._limit_memory(); "
            "print(json.dumps([c.__dict__ for c in f._huge_cases(json.loads(sys.argv[2]))]))")
    done = subprocess.run([sys.executable, "-c", code, str(here), json.dumps(only)], capture_output=True, text=True,
                          timeout=600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the huge-size subprocess failed:\n{done.stderr[-2000:]}")
    return [Case(**c) for c in json.loads(done.stdout.splitlines()[-1])]


def _huge_cases(only: list[str] | None) -> list[Case]:
    from shapetorch.ops._registry import METHODS

    np.seterr(all="ignore")
    cases = []
    UNSAMPLED.clear()
    for name in only or names():
        sample = _valid_sample(name)
        if sample is None:
            UNSAMPLED.add(name)
            continue
        x0, args0, kwargs0 = sample.input, tuple(sample.args), dict(sample.kwargs)
        for kind, x, args, kwargs in _huge_variants(x0, args0, kwargs0):
            cases.append(_judge(name, kind, _call(name), x, args, kwargs))
            if name in METHODS and hasattr(torch.Tensor, name):  # a dotted name is no method
                cases.append(_judge(f"Tensor.{name}", kind, _method(name), x, args, kwargs))
    return cases


def run(only: list[str] | None = None, huge: bool = True) -> list[Case]:
    """Every variant of every sampled public function, and of the Tensor method of the same name (as
    ``Tensor.<name>``, where both libraries have it and it agrees on the valid sample); ``only`` limits the names."""
    from shapetorch.ops._registry import METHODS

    np.seterr(all="ignore")
    cases: list[Case] = []
    huge_names: list[str] = []  # the subprocess samples only the names that have a huge-size variant
    UNSAMPLED.clear()
    for name in only or names():
        sample = _valid_sample(name)
        if sample is None:
            UNSAMPLED.add(name)
            continue
        x0, args0, kwargs0 = sample.input, tuple(sample.args), dict(sample.kwargs)
        if any(True for _ in _huge_variants(x0, args0, kwargs0)):
            huge_names.append(name)
        cases.append(Case(name, "valid", "agree"))
        for kind, x, args, kwargs in _variants(x0, args0, kwargs0):
            cases.append(_judge(name, kind, _call(name), x, args, kwargs))
        for kind, call, x, args, kwargs in _extra_variants(name, x0, args0, kwargs0):
            cases.append(_judge(name, kind, call, x, args, kwargs))
        if name not in METHODS or not hasattr(torch.Tensor, name):
            continue
        method, mname = _method(name), f"Tensor.{name}"
        if _judge(mname, "valid", method, x0, args0, kwargs0).verdict != "agree":
            continue
        cases.append(Case(mname, "valid", "agree"))
        for kind, x, args, kwargs in _variants(x0, args0, kwargs0):
            if kind not in _FUNCTION_ONLY:
                cases.append(_judge(mname, kind, method, x, args, kwargs))
        for kind, call, x, args, kwargs in _extra_variants(name, x0, args0, kwargs0):
            if kind not in _FUNCTION_ONLY and not kind.startswith("inplace_"):  # the in-place kinds are methods
                cases.append(_judge(mname, kind, method, x, args, kwargs))
    if huge and huge_names:
        cases += run_huge(huge_names)
    return cases


def table(cases: list[Case], by: str = "kind") -> str:
    """Agreement by kind of bad input (``by="kind"``) or by family of op (``by="family"``, the registry's
    category): cases, agree, and each kind of disagreement."""
    def group(c: Case) -> str:
        return c.kind if by == "kind" else family(c.name)

    verdicts = ("agree", "deliberate", "silent", "refused", "raw", "class", "values")
    rows = [f"| {by} | cases | {' | '.join(verdicts)} |", "|---|---" + "|---" * len(verdicts) + "|"]
    groups = KINDS if by == "kind" else sorted({group(c) for c in cases})
    for g in (*groups, "all"):
        sel = [c for c in cases if g == "all" or group(c) == g]
        if sel:
            counts = [sum(c.verdict == v for c in sel) for v in verdicts]
            rows.append(f"| {g} | {len(sel)} | {' | '.join(map(str, counts))} |")
    return "\n".join(rows)


__all__ = ["CRASHES", "DELIBERATE", "KINDS", "LEAK", "Case", "builtin_class", "names", "outcome", "run", "table"]
