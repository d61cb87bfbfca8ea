"""User-facing errors: for a representative error of each code the foundation ops use, the exception class,
``.code``, and a message that names the op and the values (shapes as tuples)."""

from __future__ import annotations

import pytest

import shapetorch as st


def x(*shape, dtype=None):
    return st.zeros(*shape, dtype=dtype) if shape else st.zeros((), dtype=dtype)


CASES = [
    # (code, exception class, expression, parts the message must contain)
    ("broadcast_error_incompatible_dimensions", st.ShapeError, lambda: x(2, 3) + x(4), ["add", "(2, 3)", "(4,)"]),
    ("expand_error_incompatible", st.ShapeError, lambda: x(2, 3).expand(4, 3), ["expand", "(2, 3)", "(4, 3)"]),
    ("matmul_error_inner_dimensions_do_not_match", st.ShapeError, lambda: x(2, 3) @ x(4, 5),
     ["matmul", "(2, 3)", "(4, 5)", "3 != 4"]),
    ("matmul_error_requires_at_least_1d", st.ShapeError, lambda: x() @ x(3), ["matmul", "()", "(3,)"]),
    ("matmul_error_rank_mismatch", st.ShapeError, lambda: st.mm(x(2, 3), x(3)), ["mm", "(3,)"]),
    ("batch_dimensions_do_not_match_error", st.ShapeError, lambda: st.bmm(x(2, 3, 4), x(3, 4, 5)),
     ["bmm", "(2, 3, 4)", "(3, 4, 5)"]),
    ("reshape_error_size_mismatch", st.ShapeError, lambda: x(2, 3).reshape(4, 2), ["reshape", "(2, 3)", "[4, 2]"]),
    ("reshape_error_multiple_inferred", st.ShapeError, lambda: x(6).view(-1, -1), ["view", "[-1, -1]"]),
    ("reshape_error_invalid_size", st.ShapeError, lambda: x(6).reshape(-2, -3), ["reshape", "-2"]),
    ("view_error_incompatible_strides", st.ShapeError, lambda: x(2, 3).t().view(6), ["view", "(3, 2)"]),
    ("unflatten_error_size_mismatch", st.ShapeError, lambda: x(2, 6).unflatten(1, (4, 2)),
     ["unflatten", "[4, 2]", "(2, 6)"]),
    ("permute_error_dimension_count_mismatch", st.ShapeError, lambda: x(2, 3).permute(0, 1, 2),
     ["permute", "[0, 1, 2]", "(2, 3)"]),
    ("transpose_error_requires_2d_tensor", st.ShapeError, lambda: x(2, 3, 4).t(), ["t", "(2, 3, 4)"]),
    ("dimension_error_zero_dim", st.DimensionError, lambda: x().unbind(0), ["unbind", "0-d"]),
    ("flatten_error_start_after_end", st.ShapeError, lambda: x(2, 3, 4).flatten(2, 1), ["flatten", "(2, 3, 4)"]),
    ("dim_error_repeated", st.ShapeError, lambda: x(2, 3).sum((0, 0)), ["sum", "0"]),
    ("cat_error_empty", st.ShapeError, lambda: st.cat([]), ["cat"]),
    ("cat_error_rank_mismatch", st.ShapeError, lambda: st.cat([x(2, 3), x(2, 3, 1)]), ["cat", "(2, 3)", "(2, 3, 1)"]),
    ("cat_error_size_mismatch", st.ShapeError, lambda: st.cat([x(2, 3), x(2, 4)]), ["cat", "(2, 3)", "(2, 4)"]),
    ("stack_error_shape_mismatch", st.ShapeError, lambda: st.stack([x(2, 3), x(3, 2)]), ["stack", "(2, 3)", "(3, 2)"]),
    ("split_error_invalid_sizes", st.ShapeError, lambda: x(5).split([2, 2]), ["split", "[2, 2]", "5"]),
    ("split_error_invalid_chunks", st.ShapeError, lambda: x(5).chunk(0), ["chunk", "0"]),
    ("dimension_error_out_of_range", st.DimensionError, lambda: x(2, 3).sum(2), ["sum", "[-2, 1]", "2"]),
    ("transpose_dims_error_out_of_range", st.DimensionError, lambda: x(2, 3).transpose(0, 5), ["transpose", "5"]),
    ("gather_error_dim_out_of_range", st.DimensionError, lambda: x(2, 3).gather(3, st.zeros(2, 3, dtype=st.int64)),
     ["gather", "3"]),
    ("unbind_error_dim_out_of_range", st.DimensionError, lambda: x(2, 3).unbind(-3), ["unbind", "-3"]),
    ("at_error_index_out_of_bounds", st.DimensionError, lambda: x(2, 3)[5], ["index", "5", "size 2"]),
    ("select_error_index_out_of_bounds", st.DimensionError, lambda: x(2, 3).select(1, 3), ["select", "3", "(2, 3)"]),
    ("narrow_error_start_out_of_bounds", st.DimensionError, lambda: x(2, 3).narrow(1, 5, 1), ["narrow", "5"]),
    ("narrow_error_length_exceeds_bounds", st.ShapeError, lambda: x(2, 3).narrow(1, 2, 2), ["narrow", "2", "3"]),
    ("slice_error_out_of_bounds", st.DimensionError, lambda: x(4)[::-1], ["index", "-1"]),
    ("index_error_too_many_indices", st.DimensionError, lambda: x(2, 3)[0, 0, 0], ["index", "(2, 3)"]),
    ("index_error_mask_shape", st.DimensionError, lambda: x(2, 3)[st.ones(3, 2, dtype=st.bool)],
     ["index", "(3, 2)", "(2, 3)"]),
    ("index_error_invalid_index", st.DimensionError, lambda: x(2, 3)[1.5], ["index", "1.5"]),
    ("index_error_broadcast", st.DimensionError, lambda: x(4, 4)[[0, 1], [0, 1, 2]], ["index", "(2,)", "(3,)"]),
    ("setitem_error_shape_mismatch", st.ShapeError, lambda: x(2, 3).__setitem__(0, x(2)), ["(2,)", "(3,)"]),
    ("index_error_rank_mismatch", st.ShapeError, lambda: x(2, 3).gather(1, st.zeros(2, dtype=st.int64)),
     ["gather", "(2,)", "(2, 3)"]),
    ("index_error_size_mismatch", st.ShapeError, lambda: x(2, 3).gather(1, st.zeros(3, 1, dtype=st.int64)),
     ["gather", "(3, 1)", "(2, 3)"]),
    ("item_error_not_scalar", st.ShapeError, lambda: x(2, 3).item(), ["item", "6", "(2, 3)"]),
    ("method_dtype_not_supported_error", st.DTypeNotSupportedError, lambda: x(2, dtype=st.float32) & x(2), ["bitwise_and",
                                                                                                  "float32"]),
    ("dtype_error_cannot_cast", st.DTypeError, lambda: st.tensor([1, 2]).add_(1.5), ["add_", "float32", "int64"]),
    ("dtype_error_mismatch", st.DTypeError, lambda: x(2, 2) @ x(2, 2, dtype=st.float64), ["matmul", "float32",
                                                                                          "float64"]),
    ("dtype_not_found_error", st.ArgumentError, lambda: st.zeros(2, dtype="flaot32"), ["flaot32", "float32"]),
]


@pytest.mark.parametrize("code,cls,expr,parts", CASES, ids=[c[0] for c in CASES])
def test_error(code, cls, expr, parts):
    with pytest.raises(st.ShapetorchError) as info:
        expr()
    err = info.value
    assert err.code == code, f"{err.code}: {err}"
    assert isinstance(err, cls), type(err)
    msg = str(err)
    for p in parts:
        assert p in msg, f"{p!r} not in {msg!r}"


def test_class_hierarchy():
    assert issubclass(st.ShapeError, RuntimeError) and issubclass(st.DimensionError, IndexError)
    assert issubclass(st.DimensionError, st.ShapeError) and issubclass(st.DTypeError, RuntimeError)
    assert issubclass(st.DTypeNotSupportedError, NotImplementedError) and issubclass(st.ArgumentError, TypeError)
    assert issubclass(st.DeviceError, RuntimeError) and issubclass(st.RegistryError, RuntimeError)
    for cls in (st.ShapeError, st.DimensionError, st.DTypeError, st.DTypeNotSupportedError, st.DeviceError,
                st.ArgumentError):
        assert issubclass(cls, st.ShapetorchError)


def test_no_numpy_traceback_for_bad_shapes():
    """The rule fails before the kernel: the error is raised from shapetorch, not from NumPy."""
    with pytest.raises(st.ShapeError) as info:
        x(2, 3) * x(3, 2)
    assert info.value.__cause__ is None and info.value.__suppress_context__
