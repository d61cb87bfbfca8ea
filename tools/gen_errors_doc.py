"""Generate docs/errors.md from the error catalogue: each code with its meaning, an example that
triggers it, the message it produces (the runtime's; the mypy plugin reports the same text), and its fix.

Run ``python tools/gen_errors_doc.py`` after changing the catalogue; tests/test_generated_docs.py fails
when the page is stale.
"""

from __future__ import annotations

from pathlib import Path

import shapetorch as st
from shapetorch._rules.errors import CATALOGUE

PAGE = Path(__file__).resolve().parents[1] / "docs" / "errors.md"

# code -> (example that triggers it, how to fix it). Examples run with `st` = shapetorch.
EXAMPLES: dict[str, tuple[str, str]] = {
    "broadcast_error_incompatible_dimensions": ("st.ones(2, 3) + st.ones(4)", "Make trailing sizes equal or 1."),
    "inplace_error_shape_change": ("st.ones(6, 1).add_(st.ones(6, 8))",
                                   "Start from the full shape (st.zeros(6, 8)) or reduce the operand first."),
    "expand_error_incompatible": ("st.ones(2, 3).expand(2, 4)", "Only size-1 dims can be expanded."),
    "matmul_error_inner_dimensions_do_not_match": ("st.ones(2, 3) @ st.ones(4, 5)",
                                                   "The last dim of a must equal the second-to-last of b."),
    "matmul_error_requires_at_least_1d": ("st.matmul(st.tensor(1.0), st.ones(2))", "Use `*` for scalars."),
    "matmul_error_rank_mismatch": ("st.mm(st.ones(2, 3, 4), st.ones(4, 5))", "mm is 2-D only; use matmul or bmm."),
    "batch_dimensions_do_not_match_error": ("st.bmm(st.ones(2, 3, 4), st.ones(3, 4, 5))",
                                            "bmm does not broadcast: give both the same batch size."),
    "reshape_error_size_mismatch": ("st.ones(2, 3).reshape(4, 2)", "The sizes must multiply to numel."),
    "reshape_error_multiple_inferred": ("st.ones(6).reshape(-1, -1)", "Give all sizes but one."),
    "reshape_error_invalid_size": ("st.ones(6).reshape(-2, 3)", "Sizes are >= 0, or -1 once."),
    "view_error_incompatible_strides": ("st.ones(2, 3).t().view(6)", "Use reshape(), or contiguous() first."),
    "unflatten_error_size_mismatch": ("st.ones(2, 6).unflatten(1, (4, 2))", "The sizes must multiply to the dim."),
    "permute_error_dimension_count_mismatch": ("st.ones(2, 3, 4).permute(0, 1)", "Name every dim once."),
    "transpose_error_requires_2d_tensor": ("st.ones(2, 3, 4).t()", "Use transpose(d0, d1) or mT."),
    "dimension_error_zero_dim": ("st.tensor(1.0).select(0, 0)", "The op needs at least one dim."),
    "flatten_error_start_after_end": ("st.ones(2, 3, 4).flatten(2, 1)", "start_dim must come first."),
    "dim_error_repeated": ("st.ones(2, 3).sum(dim=(0, 0))", "Name each dim once."),
    "cat_error_empty": ("st.cat([])", "Pass at least one tensor."),
    "cat_error_rank_mismatch": ("st.cat([st.ones(2, 3), st.ones(3)])", "Give all tensors the same rank."),
    "cat_error_size_mismatch": ("st.cat([st.ones(2, 3), st.ones(2, 4)], dim=0)",
                                "Sizes must match except along dim."),
    "stack_error_shape_mismatch": ("st.stack([st.ones(2), st.ones(3)])", "stack needs equal shapes."),
    "split_error_invalid_sizes": ("st.ones(5).split([2, 2])", "The sizes must sum to the dim's size."),
    "split_error_invalid_chunks": ("st.ones(5).chunk(0)", "Ask for at least one chunk."),
    "dimension_error_out_of_range": ("st.ones(2, 3).sum(dim=2)", "dim lies in [-rank, rank)."),
    "chunk_error_dim_out_of_range": ("st.ones(2, 3).chunk(2, dim=2)", "dim lies in [-rank, rank)."),
    "gather_error_dim_out_of_range": ("st.ones(2, 3).gather(2, st.zeros(2, 3, dtype=st.long))",
                                      "dim lies in [-rank, rank)."),
    "index_select_error_dim_out_of_range": ("st.ones(2, 3).index_select(2, st.tensor([0]))",
                                            "dim lies in [-rank, rank)."),
    "scatter_error_dim_out_of_range": ("st.ones(2, 3).scatter(2, st.zeros(2, 3, dtype=st.long), st.ones(2, 3))",
                                       "dim lies in [-rank, rank)."),
    "split_error_dim_out_of_range": ("st.ones(2, 3).split(1, dim=2)", "dim lies in [-rank, rank)."),
    "transpose_dims_error_out_of_range": ("st.ones(2, 3).transpose(0, 2)", "dims lie in [-rank, rank)."),
    "unbind_error_dim_out_of_range": ("st.ones(2, 3).unbind(2)", "dim lies in [-rank, rank)."),
    "at_error_index_out_of_bounds": ("st.ones(3)[5]", "Indices lie in [-size, size)."),
    "select_error_index_out_of_bounds": ("st.ones(3, 4).select(0, 5)", "index lies in [-size, size)."),
    "narrow_error_start_out_of_bounds": ("st.ones(4).narrow(0, 5, 1)", "start lies in [-size, size]."),
    "narrow_error_length_exceeds_bounds": ("st.ones(4).narrow(0, 2, 3)", "start + length <= size."),
    "slice_error_out_of_bounds": ("st.ones(4)[::-1]", "torch has no negative steps: use flip()."),
    "index_error_too_many_indices": ("st.ones(2, 3)[0, 0, 0]", "One index per dim at most."),
    "index_error_mask_shape": ("st.ones(2, 3)[st.ones(3, dtype=st.bool)]", "A mask has the shape of the dims it indexes."),
    "index_error_invalid_index": ("st.ones(3)[st.ones(1)]", "Index with ints, slices, None, ... or int/bool tensors."),
    "index_error_multiple_ellipsis": ("st.ones(2, 3)[..., ...]", "Use one Ellipsis."),
    "index_error_broadcast": ("st.ones(4, 4)[st.tensor([0, 1]), st.tensor([0, 1, 2])]",
                              "Index tensors must broadcast together."),
    "setitem_error_shape_mismatch": ("st.ones(2, 3).__setitem__(0, st.ones(2))",
                                     "The value must broadcast to the indexed shape."),
    "index_error_rank_mismatch": ("st.ones(2, 3).gather(1, st.zeros(2, dtype=st.long))",
                                  "The index has the input's rank."),
    "index_error_size_mismatch": ("st.ones(2, 3).gather(1, st.zeros(3, 1, dtype=st.long))",
                                  "The index may not be larger than the input outside dim."),
    "item_error_not_scalar": ("st.ones(2).item()", "item() needs exactly one element."),
    "einsum_error_invalid_equation": ("st.einsum('i1,i->', st.ones(2), st.ones(2))", "Subscripts are letters."),
    "einsum_error_operand_count_mismatch": ("st.einsum('i,i->', st.ones(2))", "One term per operand."),
    "einsum_error_subscript_rank_mismatch": ("st.einsum('ij->i', st.ones(2))", "One subscript per dim (or ...)."),
    "einsum_error_dimension_mismatch": ("st.einsum('i,i->', st.ones(2), st.ones(3))",
                                        "A letter has one size everywhere (or 1)."),
    "einsum_error_unknown_output_index": ("st.einsum('i->j', st.ones(2))", "Output letters come from the inputs."),
    "einsum_error_index_out_of_range": ("st.einsum(st.ones(2), [60])", "Sublist subscripts lie in [0, 52)."),
    "einsum_error_invalid_sublist_element": ("st.einsum(st.ones(2), ['i'])", "Sublists hold ints or Ellipsis."),
    "einops_error_invalid_pattern": ("st.rearrange(st.ones(2, 3), 'a b -> (a b')", "Balance the parentheses."),
    "einops_error_undefined_axis": ("st.rearrange(st.ones(2, 3), 'a b -> a c')", "Use the same axes on both sides."),
    "einops_error_dimension_mismatch": ("st.rearrange(st.ones(2, 3), 'a b c -> a b c')",
                                        "One name per input dim (or ...)."),
    "einops_error_ambiguous_decomposition": ("st.rearrange(st.ones(6), '(a b) -> a b')",
                                             "Give all sizes but one: a=2."),
    "einops_error_anonymous_in_output": ("st.rearrange(st.ones(2), 'a -> a 3')", "Use repeat() to add axes."),
    "einops_error_reduce_undefined_output": ("st.reduce(st.ones(2, 3), 'a b -> a c', 'sum')",
                                             "reduce's output names input axes only."),
    "einops_error_repeat_missing_size": ("st.repeat(st.ones(2), 'a -> a k')", "Give new axes a size: k=3."),
    "method_dtype_not_supported_error": ("st.ones(2).bitwise_and(st.ones(2))", "Use an integer or bool dtype."),
    "dtype_error_cannot_cast": ("st.ones(2, dtype=st.long).add_(1.5)", "Use an out-of-place op or a float tensor."),
    "dtype_error_mismatch": ("st.ones(2, 2) @ st.ones(2, 2, dtype=st.float64)", "Cast one operand first."),
    "dtype_not_found_error": ("st.zeros(2, dtype='float33')", "Use a dtype that exists."),
    "device_error_requires": ("st.device('tpu')", "Use a registered device."),
    "op_not_found_error": ("st.get_op_info('matmull')", "Use an op that exists (see list_ops())."),
    "function_already_registered_error": ("st.register_function('add', lambda x: x)", "Pick a new name, or override=True."),
    "method_already_registered_error": ("st.register_method('sum', lambda x: x)", "Pick a new name, or override=True."),
    "dtype_already_registered_error": ("st.register_dtype('float32', storage='f4')", "Pick a new name."),
    "dtype_components_mismatch_error": ("st.register_dtype('c_demo', storage='f4', components=2)",
                                        "Complex dtypes need complex storage."),
    "invalid_config_error": ("st.register_backward('exp', 3)", "Pass a callable."),
    "reduction_error_empty_input": ("st.zeros(0).amax()", "Give a dim, or reduce a non-empty tensor."),
    "argument_error_invalid": ("st.ones(2).clamp()", "Give min, max or both."),
    "div_error_integer_division_by_zero": ("st.tensor([1, 2]) // 0", "Divide floats (inf), or mask the zeros."),
    "conv_error_input_rank": ("st.nn.functional.conv2d(st.ones(3, 8), st.ones(4, 3, 3, 3))",
                              "conv2d takes (N, C, H, W) or (C, H, W)."),
    "conv_error_channels_mismatch": ("st.nn.functional.conv2d(st.ones(1, 2, 8, 8), st.ones(4, 3, 3, 3))",
                                     "Input channels must equal weight.shape[1] * groups."),
    "conv_error_kernel_too_large": ("st.nn.functional.conv2d(st.ones(1, 3, 2, 2), st.ones(4, 3, 3, 3))",
                                    "Pad the input or use a smaller kernel."),
    "pad_error_invalid_padding": ("st.nn.functional.pad(st.ones(2, 3), (1, 1, 1))", "Give two pads per padded dim."),
    "layer_norm_error_shape_mismatch": ("st.nn.functional.layer_norm(st.ones(2, 3), (4,))",
                                        "normalized_shape must be the input's trailing shape."),
    "load_state_dict_error_mismatch": ("st.nn.Linear(2, 3).load_state_dict({'weight': st.ones(3, 2)})",
                                       "Give every parameter, or strict=False."),
}


def _message(code: str, example: str) -> str:
    try:
        eval(example, {"st": st})
    except st.ShapetorchError as e:
        if e.code != code:
            raise AssertionError(f"example for {code} raised {e.code}: {e}") from None
        return str(e).splitlines()[0]
    raise AssertionError(f"example for {code} raised nothing: {example}")


def render() -> str:
    lines = [
        "# Errors",
        "",
        "<!-- generated by tools/gen_errors_doc.py from shapetorch._rules.errors.CATALOGUE; do not edit -->",
        "",
        "Every error shapetorch reports carries one of these codes (`err.code` at runtime; the mypy plugin",
        "reports the same code and the same message, under its family code such as `shape-matmul`).",
        "The exception class follows the kind: `ShapeError` (a `RuntimeError`) for shapes, `DimensionError`",
        "(also an `IndexError`) for dims and indices, `DTypeError` (a `TypeError`), `ArgumentError`",
        "(a `ValueError`), `DeviceError`,",
        "`AutogradError` and `RegistryError`.",
        "",
        f"{len(CATALOGUE)} codes, {sum(c in EXAMPLES for c in CATALOGUE)} with a runnable example.",
        "",
    ]
    for code, entry in CATALOGUE.items():
        lines += [f"## `{code}`", "", f"*{entry.kind}, family `{entry.family}`* — {entry.meaning}", ""]
        if code in EXAMPLES:
            example, fix = EXAMPLES[code]
            lines += ["```python raises", "import shapetorch as st", "", example, "```", "",
                      f"> {_message(code, example)}", "", f"**Fix:** {fix}", ""]
        else:
            lines += [f"Message template: `{entry.template}`", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    from _page import write_or_check  # run as a script: tools/ is on the path

    write_or_check(PAGE, render())
