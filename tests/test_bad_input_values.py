"""Bad values the issue lists one by one (silent answers and leaks), each against torch: both accept with the
same result, or both raise, ours a coded ``ShapetorchError`` of torch's builtin class."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import shapetorch as st
from _bad_input import assert_torch_verdict


def _cases(lib: Any) -> dict[str, Callable[[], Any]]:
    x = lib.arange(6.).reshape(2, 3)
    leaf = lib.ones(2, requires_grad=True)
    return {
        "full_none": lambda: lib.full((2,), None),
        "full_like_extra_argument": lambda: lib.full_like(x, 1, 2),
        "full_like_overflow": lambda: lib.full_like(x.to(lib.uint8), 300),
        "full_like_negative_wraps": lambda: lib.full_like(x.to(lib.uint8), -1),
        "full_half_overflow": lambda: lib.full((2,), 1e6, dtype=lib.float16),
        "full_complex_into_float": lambda: lib.full((2,), 1j, dtype=lib.float32),
        "fill_nan_into_int": lambda: x.long().fill_(float("nan")),
        "masked_fill_overflow": lambda: x.to(lib.uint8).masked_fill(x > 1, 256),
        "tensor_overflow": lambda: lib.tensor([300], dtype=lib.uint8),
        "tensor_nan_to_int": lambda: lib.tensor([float("nan")], dtype=lib.int64),
        "tensor_inf_to_int": lambda: lib.tensor([float("inf")], dtype=lib.int32),
        "tensor_negative_uint8": lambda: lib.tensor([-1, 3], dtype=lib.uint8),
        "nested_list_index": lambda: x[[[0, 1], [1, 0]]],
        "list_of_0d_tensors_index": lambda: x[[lib.tensor(0), lib.tensor(1)]],
        "list_with_slice_index": lambda: x[[slice(None), 1]],
        "uint8_mask_index": lambda: x[lib.tensor([1, 0], dtype=lib.uint8)],
        "gather_negative_index": lambda: lib.gather(x, 1, lib.tensor([[-1], [0]])),
        "scatter_negative_index": lambda: lib.scatter(x, 1, lib.tensor([[-1], [0]]), x),
        "scatter_src_dtype": lambda: lib.scatter(x, 1, lib.tensor([[1], [0]]), x.long()),
        "one_hot_too_large": lambda: lib.nn.functional.one_hot(lib.tensor([3]), 3),
        "one_hot_negative": lambda: lib.nn.functional.one_hot(lib.tensor([-1]), 3),
        "complex_to_bool": lambda: lib.tensor([1j, 0j, 2 + 0j]).to(lib.bool),
        "setitem_none": lambda: x.clone().__setitem__(Ellipsis, None),
        "size_of_0d": lambda: lib.tensor(1.).size(0),
        "to_two_dtypes": lambda: x.to(lib.float64, lib.int64),
        "rand_negative_size": lambda: lib.rand(-1),
        "randn_negative_size": lambda: lib.randn(2, -3),
        "arange_nan": lambda: lib.arange(0, float("nan")),
        "arange_inf": lambda: lib.arange(0, float("inf")),
        "huge_allocation": lambda: lib.empty(2**50, dtype=lib.float64),
        "hsplit_uneven": lambda: lib.hsplit(lib.zeros(6), 4),
        "vsplit_uneven": lambda: lib.vsplit(lib.zeros(6, 4), 4),
        "chunk_bool": lambda: lib.chunk(x, True),
        "topk_float_k": lambda: lib.topk(x, 1.0),
        "diff_bool_n": lambda: lib.diff(x, True),
        "softmax_int": lambda: lib.softmax(x.long(), 0),
        "softmax_int_with_dtype": lambda: lib.softmax(x.long(), 0, dtype=lib.float32),
        "bernoulli_out_of_range": lambda: lib.bernoulli(x),
        "randn_int_dtype": lambda: lib.randn(2, dtype=lib.int64),
        "randint_out_of_dtype": lambda: lib.randint(0, 300, (2,), dtype=lib.uint8),
        "addmm_mixed_dtypes": lambda: lib.addmm(x[:, :2].long(), x[:, :2], x[:, :2]),
        "addr_promotes": lambda: lib.addr(x.long(), lib.ones(2), lib.ones(3)),
        "logical_and_number": lambda: lib.logical_and(x, 2),
        "masked_fill_broadcasts_input": lambda: lib.masked_fill(lib.tensor(1.), lib.ones(2, 2).bool(), 5.),
        "unflatten_0d": lambda: lib.unflatten(lib.tensor(1.), 0, (1,)),
        "leaf_inplace": lambda: lib.ones(3, requires_grad=True).add_(1),
        "int_requires_grad": lambda: lib.ones(3, dtype=lib.int64).requires_grad_(),
        "non_scalar_backward": lambda: (leaf * 2).backward(),  # noqa: PLW0108 (built when called)
        "unused_input_to_grad": lambda: lib.autograd.grad((leaf * 2).sum(), [lib.ones(2, requires_grad=True)]),
        "modified_saved_tensor": lambda: _modify_saved(leaf.exp()),
        # Python's call binding, which the argument guard codes (an ArgumentError is a TypeError)
        "input_given_twice": lambda: lib.add(x, input=x),
        "other_given_twice": lambda: lib.add(x, x, other=x),
        "method_argument_twice": lambda: x.sum(0, dim=1),
        "method_argument_twice_varargs": lambda: x.permute(1, 0, dims=(1, 0)),
        "unexpected_keyword": lambda: lib.add(x, x, bogus=1),
        "missing_required": lambda: lib.add(x),
        "missing_required_method": lambda: x.topk(),  # noqa: PLW0108 (built when called)
        "too_many_positionals": lambda: lib.add(x, x, 1, 2),
        # bool flags: torch's parser takes a Python bool only
        "keepdim_str": lambda: x.sum(1, keepdim="yes"),
        "keepdim_int": lambda: x.sum(1, keepdim=1),
        "keepdim_int_positional": lambda: lib.mean(x, 1, 0),
        "keepdim_none": lambda: x.amax(1, keepdim=None),
        "keepdim_numpy_bool": lambda: x.sum(1, keepdim=np.bool_(True)),
        "keepdim_tensor": lambda: x.sum(1, keepdim=lib.tensor(True)),
        "largest_int": lambda: x.topk(1, largest=0),
        "sorted_none": lambda: x.topk(1, sorted=None),
        "descending_int": lambda: lib.argsort(x, descending=1),
        "requires_grad_int": lambda: lib.zeros(2, requires_grad=1),
        "equal_nan_str": lambda: lib.isclose(x, x, equal_nan="no"),
        # in-place ops and out= that alias an input, leaves and views of leaves
        "inplace_partial_overlap": lambda: (y := lib.arange(4.).reshape(2, 2)).add_(y.t()),
        "inplace_full_overlap_ok": lambda: (y := x.clone()).mul_(y),
        "inplace_disjoint_ok": lambda: (y := x.clone())[0].add_(y[1]),
        "copy_partial_overlap": lambda: (y := lib.arange(4.).reshape(2, 2)).copy_(y.t()),
        "out_partial_overlap": lambda: lib.add((y := x.clone().reshape(-1))[:5], 1, out=y[1:]),
        "out_same_tensor_ok": lambda: lib.add((y := x.clone()), 1, out=y),
        # accepted by both; torch's values are its BLAS kernel's (an AVX-512 CPU's reads what it already wrote)
        "out_overlap_matmul_ok": lambda: lib.mm((y := lib.ones(2, 4))[:, :2], y[:, 2:], out=y[:, 1:3]).shape,
        "leaf_view_inplace": lambda: lib.ones(3, requires_grad=True)[:2].mul_(2),
        "leaf_view_method_inplace": lambda: lib.ones(3, requires_grad=True).view(3).sin_(),
        "leaf_logical_inplace_ok": lambda: lib.ones(3, requires_grad=True).logical_not_(),
        "leaf_as_strided_inplace": lambda: lib.ones(4, requires_grad=True).as_strided_((2,), (1,)),
        "normal_tensor_mean": lambda: x.clone().normal_(x, x),
        "repeat_interleave_nan": lambda: lib.repeat_interleave(x, float("nan")),
        "repeat_interleave_float": lambda: lib.repeat_interleave(x, 2.0),
        "repeat_huge": lambda: x.repeat_interleave(2**40),
        "conj_physical_expanded_real_ok": lambda: lib.ones(1, 2).expand(2, 2).conj_physical_(),
        # the fuzzer's findings fixed one by one
        "float_power_none": lambda: lib.float_power(None, x),
        "float_power_str": lambda: lib.float_power("a", x),
        "float_power_two_numbers": lambda: lib.float_power(2, 3),
        "where_method_extra_argument": lambda: x.where(x > 0, x, 1),
        "where_method_unknown_keyword": lambda: x.where(x > 0, x, bogus=1),
        "cross_bool": lambda: lib.cross(lib.ones(2, 3).bool(), lib.ones(2, 3), dim=1),
        "searchsorted_bool_sequence_float_values": lambda: lib.searchsorted(lib.tensor([False, True]), lib.tensor([.5, 0.])),
        "searchsorted_bool_both": lambda: lib.searchsorted(lib.tensor([False, True]), lib.tensor([True])),
        "searchsorted_complex_empty_values": lambda: lib.searchsorted(lib.tensor([1j]), lib.tensor([], dtype=lib.complex64)),
        "flip_dims_twice": lambda: lib.flip(x, 0, dims=(1,)),
        "normal_tensor_with_size": lambda: lib.normal(x, x, (2, 3)),
        "normal_broadcast_mismatch": lambda: lib.normal(lib.ones(0), lib.ones(3)),
        "svd_nan": lambda: lib.linalg.svdvals(lib.tensor([[float("nan"), 1.], [1., 1.]])),
        "svdvals_inf": lambda: lib.linalg.svdvals(lib.tensor([[float("inf"), 1.], [1., 1.]])),
        "tensordot_nan_dims": lambda: lib.tensordot(x, x.t(), float("nan")),
        "cdist_p0_nan": lambda: lib.cdist(lib.tensor([[float("nan"), 1.], [0., 1.]]), lib.ones(3, 2), p=0.),
        "index_fill_empty_out_of_bounds": lambda: lib.index_fill(lib.ones(0), 0, lib.tensor([0]), 1.),
        "index_fill_empty_other_dim_ok": lambda: lib.index_fill(lib.ones(0, 3), 1, lib.tensor([1]), 1.),
        "keepdim_true_ok": lambda: x.sum(1, keepdim=True),
        "keepdim_false_positional_ok": lambda: lib.sum(x, 1, False),
        # a size-like star parameter needs at least one value in torch's parser (not an empty shape)
        "reshape_no_sizes": x.reshape,
        "view_no_sizes": x.view,
        "expand_no_sizes": x.expand,
        "permute_no_dims": x.permute,
        "repeat_no_repeats": x.repeat,
        "rand_no_size": lib.rand,
        "randn_no_size_with_dtype": lambda: lib.randn(dtype=lib.float64),
        "view_empty_tuple_ok": lambda: x[:1, :1].view(()),
        "repeat_tuple_ok": lambda: x.repeat((2, 1)),
        "rand_empty_tuple_ok": lambda: lib.rand(()).shape,
    }


def _modify_saved(b: Any) -> None:
    """``b`` (an exp, which saves its result) changed in place before backward."""
    b.mul_(2)
    b.sum().backward()




@pytest.mark.parametrize("name", sorted(_cases(torch)))
def test_bad_value_as_torch(name: str) -> None:
    assert_torch_verdict(_cases(st)[name], _cases(torch)[name])


def test_allocation_error_is_a_memory_error_too() -> None:
    with pytest.raises(MemoryError) as info:
        st.zeros(2**50, dtype=st.float64)
    assert isinstance(info.value, RuntimeError) and info.value.code == "memory_error_allocation"  # type: ignore[attr-defined]


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.conv2d(lib.zeros(1, 3, 4, 4), lib.zeros(3, 3, 3, 3), padding=2**40),
    lambda lib: lib.nn.functional.conv1d(lib.zeros(1, 3, 4), lib.zeros(3, 3, 3), padding=2**50),
    lambda lib: lib.nn.functional.conv_transpose2d(lib.zeros(1, 3, 4, 4), lib.zeros(3, 3, 3, 3), dilation=2**40),
])
def test_a_convolution_past_numpys_index_type_is_an_allocation_error(call: Any) -> None:
    """torch's allocator refuses the byte count (a RuntimeError); NumPy refuses it before allocating, with a
    ValueError ("array is too big") that must not reach the user uncoded."""
    with pytest.raises(RuntimeError):
        call(torch)
    with pytest.raises(RuntimeError) as info:
        call(st)
    assert info.value.code == "memory_error_allocation"  # type: ignore[attr-defined]
    assert isinstance(info.value, MemoryError)


def test_grad_fn_names_of_composites_are_torchs() -> None:
    """A public op made of several primitives names its node as torch does (x.mean() is MeanBackward0, not the
    division it ends with)."""
    names = []
    for lib in (torch, st):
        x, v = lib.ones(2, 2, requires_grad=True), lib.ones(2, requires_grad=True)
        results = (x.mean(), x.mean(0), x.mm(x), x.t(), x.var(), x.mv(v), v.dot(v), x[None].bmm(x[None]), x.exp())
        names.append([r.grad_fn.name() for r in results])
    assert names[1] == names[0]


@pytest.mark.parametrize("nd", [1, 2])
def test_conv_transpose_with_no_input_channels_is_refused_as_torch(nd: int) -> None:
    """torch refuses a transposed convolution's weight of 0 input channels before anything else (it reached
    NumPy's reshape, a raw ValueError); the shared rule refuses it, so the plugin does too."""
    def call(lib: Any) -> Any:
        f = getattr(lib.nn.functional, f"conv_transpose{nd}d")
        return f(lib.zeros(1, 0, *(3,) * nd), lib.zeros(0, 2, *(3,) * nd))

    with pytest.raises(RuntimeError) as want:
        call(torch)
    with pytest.raises(RuntimeError) as got:
        call(st)
    assert got.value.code == "conv_error_invalid_argument"  # type: ignore[attr-defined]
    assert str(want.value) in str(got.value)
