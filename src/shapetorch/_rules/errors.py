"""The error catalogue: every code shapetorch reports, with its meaning and message template.

One place, so the runtime, the mypy plugin and the docs can never disagree about a message
(mypy keeps its messages the same way, in ``message_registry``). Codes follow the original
library's ``<op>_error_<condition>`` form. A rule raises :class:`RuleError` and nothing else;
the runtime turns it into a ``ShapetorchError`` subclass chosen by the entry's ``kind``, and
the plugin turns it into a mypy error whose code is the entry's code, under its ``family``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from .dims import Sym, _Unknown, fmt_shape


class Entry(NamedTuple):
    kind: str  # shape | shape_unsupported | shape_value | linalg | index | dtype | dtype_unsupported | device | value | autograd | autograd_unsupported | registry | argument | memory
    family: str  # the mypy parent code: shape-matmul, shape-broadcast, ...
    meaning: str
    template: str


_DIM_RANGE = "{op}: dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})"


def _dim(op: str) -> Entry:
    return Entry("index", "shape-dim", f"A dim argument of {op} is outside [-rank, rank).", _DIM_RANGE)


# Codes whose message is torch's, word for word, without the "{op}: " prefix the others have: autograd misuse that
# user code and tests match on ("a leaf Variable that requires grad ...", "one of the variables needed ...").
VERBATIM = frozenset({"autograd_error_leaf_inplace", "autograd_error_requires_grad_dtype", "autograd_error_implicit_grad",
                      "autograd_error_unused_input", "autograd_error_modified_saved", "autograd_error_hook_result",
                      "autograd_error_hook_not_tensor", "autograd_error_custom_view_inplace",
                      "module_hook_error_result", "data_error_invalid_value", "data_error_invalid_type",
                      "autograd_error_graph_freed", "autograd_error_leaf_view_inplace",
                      "autograd_derivative_not_implemented", "autograd_error_view_mode_inplace"})

CATALOGUE: dict[str, Entry] = {
    # -- broadcasting and expansion ---------------------------------------------------------
    "broadcast_error_incompatible_dimensions": Entry(
        "shape", "shape-broadcast", "Right-aligned dims differ and neither is 1.",
        "{op}: shapes {a} and {b} cannot be broadcast: size {da} != {db} at dimension {dim}",
    ),
    "expand_error_incompatible": Entry(
        "shape", "shape-broadcast",
        "Target size differs from a non-1 existing size, or has fewer dims than the tensor.",
        "{op}: cannot expand shape {shape} to {sizes}: {problem}",
    ),
    "inplace_error_shape_change": Entry(
        "shape", "shape-broadcast", "An in-place op whose broadcast result is larger than self.",
        "{op}: output with shape {shape} doesn't match the broadcast shape {result}",
    ),
    "inplace_error_internal_overlap": Entry(
        "shape", "shape-broadcast",
        "An in-place write into a tensor whose elements share memory (an expanded view).",
        "{op}: unsupported operation: more than one element of the written-to tensor refers to a single "
        "memory location. Please clone() the tensor before performing the operation.",
    ),
    "inplace_error_partial_overlap": Entry(
        "shape", "shape-broadcast",
        "An in-place op or `out=` whose written-to tensor shares some, not all, of its memory with an input "
        "(`x.add_(x.t())`, `add(x[:2], 1, out=x[1:])`).",
        "{op}: unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
        "memory location. Please clone() the tensor before performing the operation.",
    ),
    # -- matmul family ----------------------------------------------------------------------
    "matmul_error_inner_dimensions_do_not_match": Entry(
        "shape", "shape-matmul", "Contraction dims differ: a.shape[-1] != b.shape[-2] (or b.shape[0] for 1-D).",
        "{op}: inner dimensions do not match: {a} @ {b} ({ka} != {kb}){mats}",
    ),
    "matmul_error_requires_at_least_1d": Entry(
        "shape", "shape-matmul", "An operand of matmul is 0-D.",
        "{op}: both arguments need at least 1 dimension, got {a} and {b}",
    ),
    "matmul_error_rank_mismatch": Entry(
        "shape", "shape-matmul", "An operand of mm/bmm/mv/dot/outer has the wrong number of dims.",
        "{op}: {arg} must be {expected}-D, got shape {shape}",
    ),
    "batch_dimensions_do_not_match_error": Entry(
        "shape", "shape-matmul", "Batch sizes of bmm/baddbmm operands differ (these do not broadcast).",
        "{op}: batch dimensions do not match: {a} and {b} ({ba} != {bb})",
    ),
    "linalg_error_requires_2d": Entry(
        "shape", "shape-linalg", "Input is not exactly 2-D.", "{op}: expected a 2-D matrix, got shape {shape}"
    ),
    "linalg_error_requires_at_least_2d": Entry(
        "shape", "shape-linalg", "Input rank < 2.", "{op}: expected at least 2 dimensions, got shape {shape}"
    ),
    "linalg_error_not_square_matrix": Entry(
        "shape", "shape-linalg", "Last two dims differ.",
        "{op}: expected batches of square matrices, got {m} by {n} matrices (shape {shape})",
    ),
    "linalg_error_singular": Entry(
        "linalg", "shape-linalg", "A matrix to invert or solve with is singular (a zero pivot of its LU factorization).",
        "{op}: {cause} because the input matrix is singular.",
    ),
    "linalg_error_not_converged": Entry(
        "linalg", "shape-linalg", "An SVD (svd, svdvals, pinv, matrix_rank) of a matrix with NaN entries.",
        "{op}: The algorithm failed to converge because the input matrix contained non-finite values.",
    ),
    "linalg_error_not_positive_definite": Entry(
        "linalg", "shape-linalg", "cholesky of a matrix that is not (Hermitian) positive-definite.",
        "{op}: The factorization could not be completed because the input is not positive-definite (the leading "
        "minor of order {order} is not positive-definite).",
    ),
    "linalg_error_not_full_rank": Entry(
        "linalg", "shape-linalg", "lstsq with driver='gels' of a matrix that is not of full rank (a diagonal element "
        "of its triangular factor that is zero up to rounding).",
        "{op}: {batch}The least squares solution could not be computed because the input matrix does not have full "
        "rank (error code: {index}).",
    ),
    "linalg_error_lu_zero_pivot": Entry(
        "linalg", "shape-linalg", "lu_factor of a singular matrix: U has a zero on its diagonal (lu_factor_ex reports it).",
        "{op}: {batch}U[{i},{i}] is zero and using it on lu_solve would result in a division by zero. If you still "
        "want to perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)",
    ),
    "linalg_error_lu_without_pivoting": Entry(
        "linalg", "shape-linalg", "LU without pivoting (pivot=False), which torch has only on CUDA.",
        "{op}: LU without pivoting is not implemented on the CPU",
    ),
    "linalg_error_tensorinv_ind": Entry(
        "shape", "shape-linalg", "tensorinv's ind is not a positive integer.",
        "{op}: Expected a strictly positive integer for 'ind', but got {ind}",
    ),
    "linalg_error_tensor_sizes": Entry(
        "shape", "shape-linalg", "tensorinv/tensorsolve: the leading and trailing dims hold different numbers of "
        "elements, so they do not make a square matrix.",
        "{op}: Expected self to satisfy the requirement prod(self.shape[{trailing}]) == prod(self.shape[{leading}]), "
        "but got {a} != {b}",
    ),
    "linalg_error_solve_incompatible": Entry(
        "shape", "shape-linalg", "The right-hand side of a solve does not have as many rows as the matrix.",
        "{op}: Incompatible shapes of A and B for the equation {equation} ({a} and {b})",
    ),
    # -- views and shape changes --------------------------------------------------------------
    "reshape_error_size_mismatch": Entry(
        "shape", "shape-reshape", "The product of the new sizes differs from the number of elements.",
        "{op}: shape {sizes} is invalid for input of shape {shape} ({numel} elements)",
    ),
    "reshape_error_multiple_inferred": Entry(
        "shape", "shape-reshape", "More than one -1 in the new shape.",
        "{op}: only one dimension can be inferred, got {sizes}",
    ),
    "reshape_error_invalid_size": Entry(
        "shape", "shape-reshape", "A size below -1 in the new shape.", "{op}: invalid shape dimension {size} in {sizes}"
    ),
    "view_error_incompatible_strides": Entry(
        "shape", "shape-reshape",
        "view() of a tensor whose memory layout cannot express the new shape without a copy.",
        "{op}: view size {sizes} is not compatible with the size and stride of the input {shape}; "
        "at least one dimension spans two contiguous subspaces. Use .reshape(...) instead",
    ),
    "unflatten_error_size_mismatch": Entry(
        "shape", "shape-reshape", "unflatten's sizes do not multiply to the size of the dim.",
        "{op}: sizes {sizes} don't multiply up to the size {size} of dim {dim} of {shape}",
    ),
    "permute_error_dimension_count_mismatch": Entry(
        "shape", "shape-permute", "dims is not a permutation of range(rank).",
        "{op}: dims {dims} is not a permutation of the {rank} dimensions of shape {shape}",
    ),
    "transpose_error_requires_2d_tensor": Entry(
        "shape", "shape-permute", "t() on a tensor with rank > 2, or mT on rank < 2.",
        "{op}: expects a tensor with {expected} dimensions, but got shape {shape}",
    ),
    "dimension_error_zero_dim": Entry(
        "index", "shape-dim", "The op needs at least one dimension but got a 0-d tensor.",
        "{op}: cannot be applied to a 0-d tensor",
    ),
    "flatten_error_start_after_end": Entry(
        "shape", "shape-reshape", "flatten's start_dim comes after its end_dim.",
        "{op}: start_dim ({start_dim}) cannot come after end_dim ({end_dim}) for shape {shape}",
    ),
    "dim_error_repeated": Entry(
        "shape", "shape-dim", "A dim appears twice in a list of dims.",
        "{op}: dim {dim} appears multiple times in the list of dims {dims}",
    ),
    # -- joining and splitting ----------------------------------------------------------------
    "cat_error_empty": Entry("shape", "shape-cat", "No tensors were given.", "{op}: expected a non-empty list of tensors"),
    "cat_error_rank_mismatch": Entry(
        "shape", "shape-cat", "Tensors to cat have different ranks.",
        "{op}: tensors must have the same number of dimensions: got {a} and {b} (tensor {i})",
    ),
    "cat_error_size_mismatch": Entry(
        "shape", "shape-cat", "Tensors to cat differ in a dim other than the cat dim.",
        "{op}: sizes of tensors must match except in dimension {dim}: expected size {da} but got size {db} "
        "for tensor {i} at dimension {at} (shapes {a} and {b})",
    ),
    "stack_error_shape_mismatch": Entry(
        "shape", "shape-cat", "Tensors to stack differ in shape.",
        "{op}: stack expects each tensor to be equal size, but got {a} at entry 0 and {b} at entry {i}",
    ),
    "split_error_invalid_sizes": Entry(
        "shape", "shape-cat", "split sizes do not sum to the size of the dim, or a size is negative.",
        "{op}: split sizes {sizes} must be non-negative and sum to {size} (dim {dim} of shape {shape})",
    ),
    "split_error_invalid_chunks": Entry(
        "shape", "shape-cat", "chunk/split/tensor_split got a non-positive number of sections.",
        "{op}: {arg} must be {expected}, got {value}",
    ),
    # -- dims out of range ----------------------------------------------------------------------
    "dimension_error_out_of_range": _dim("any op taking dim"),
    "chunk_error_dim_out_of_range": _dim("chunk"),
    "flip_error_dim_out_of_range": _dim("flip"),
    "gather_error_dim_out_of_range": _dim("gather"),
    "index_select_error_dim_out_of_range": _dim("index_select"),
    "scatter_error_dim_out_of_range": _dim("scatter"),
    "softmax_error_dim_out_of_range": _dim("softmax"),
    "split_error_dim_out_of_range": _dim("split"),
    "transpose_dims_error_out_of_range": _dim("transpose"),
    "unbind_error_dim_out_of_range": _dim("unbind"),
    # -- indexing ---------------------------------------------------------------------------------
    "at_error_index_out_of_bounds": Entry(
        "index", "shape-index", "An integer index is outside [-size, size) of the indexed dim.",
        "{op}: index {index} is out of bounds for dimension {dim} with size {size}",
    ),
    "select_error_index_out_of_bounds": Entry(
        "index", "shape-index", "select(dim, index) with index outside [-size, size).",
        "{op}: index {index} out of range for tensor of shape {shape} at dimension {dim}",
    ),
    "narrow_error_start_out_of_bounds": Entry(
        "index", "shape-index", "narrow start outside [-size, size].",
        "{op}: start out of range (expected to be in range of [{lo}, {hi}], but got {start})",
    ),
    "narrow_error_length_exceeds_bounds": Entry(
        "shape", "shape-index", "narrow start + length > size, or length < 0.",
        "{op}: start ({start}) + length ({length}) exceeds dimension size ({size})",
    ),
    "slice_error_out_of_bounds": Entry(
        "index", "shape-index", "A slice has step <= 0 (torch does not support negative steps).",
        "{op}: slice step must be greater than zero, got {step}",
    ),
    "index_error_too_many_indices": Entry(
        "index", "shape-index", "More indices than the tensor has dims.",
        "{op}: too many indices for tensor of dimension {rank} (shape {shape}, index {index})",
    ),
    "index_error_mask_shape": Entry(
        "index", "shape-index", "A boolean mask's shape differs from the dims it indexes.",
        "{op}: the shape of the mask {mask} at index {i} does not match the shape of the indexed tensor {shape}",
    ),
    "index_error_invalid_index": Entry(
        "index", "shape-index", "An index of a type that cannot index a tensor (float tensor, string, ...).",
        "{op}: {index!s} cannot be used as an index; use ints, slices, None, Ellipsis, "
        "or integer/bool tensors",
    ),
    "index_error_multiple_ellipsis": Entry(
        "index", "shape-index", "An index holds more than one Ellipsis.",
        "{op}: an index can only have a single ellipsis ('...'), got {index}",
    ),
    "index_error_broadcast": Entry(
        "index", "shape-index", "The index tensors of one indexing expression do not broadcast together.",
        "{op}: indexing tensors could not be broadcast together with shapes {shapes}",
    ),
    "setitem_error_shape_mismatch": Entry(
        "shape", "shape-index", "The value assigned through an index does not broadcast to the indexed shape.",
        "{op}: value of shape {value} cannot be broadcast to indexing result of shape {shape}",
    ),
    "index_error_rank_mismatch": Entry(
        "shape", "shape-index", "gather/scatter/index_select index has the wrong number of dims.",
        "{op}: index {index} must have {expected} dimensions (input shape {shape})",
    ),
    "index_error_size_mismatch": Entry(
        "shape", "shape-index", "gather/scatter index is larger than the input in a dim other than dim.",
        "{op}: size {ia} of index {index} at dimension {at} exceeds size {sa} of {arg} {shape}",
    ),
    "reduction_error_empty_input": Entry(
        "index", "shape-reduce", "A reduction with no identity (amax, argmax, max, ...) over an empty tensor without dim.",
        "{op}: expected a reduction dim to be given for an input with 0 elements (shape {shape})",
    ),
    "argument_error_signature": Entry(
        "argument", "shape-args", "A call with an unknown keyword, or too many or too few arguments.",
        "{op}() {problem}",
    ),
    "argument_error_type": Entry(
        "argument", "shape-args",
        "An argument of the wrong type: a non-tensor where a tensor is required, a float or bool where an int is.",
        "{op}(): argument '{name}'{position} must be {expected}, not {got}",
    ),
    "argument_error_refused": Entry(
        "argument", "shape-args", "Arguments of types or values the op's parser refuses (torch raises TypeError).",
        "{op}(): {problem}",
    ),
    "argument_error_invalid": Entry(
        "shape", "shape-args", "An argument has a value the op cannot accept (clamp without bounds, arange's step).",
        "{op}: {problem}",
    ),
    "argument_error_uninitialized": Entry(
        "value", "shape-args",
        "A lazy module's uninitialized parameter or buffer given to an op (its shape comes with the first forward).",
        "Attempted to use an uninitialized parameter in {op}. This error happens when you are using a `LazyModule` or "
        "explicitly manipulating `nn.parameter.UninitializedParameter` objects. When using LazyModules Call "
        "`forward` with a dummy batch to initialize the parameters before calling functions",
    ),
    "argument_error_invalid_value": Entry(
        "value", "shape-args", "An argument value torch refuses with a ValueError (a negative size of unravel_index).",
        "{op}: {problem}",
    ),
    "div_error_integer_division_by_zero": Entry(
        "shape", "shape-args", "Integer division or remainder by zero (floats give inf or nan instead).",
        "{op}: integer division by zero",
    ),
    "item_error_not_scalar": Entry(
        "shape", "shape-item", "item() on a tensor whose numel != 1.",
        "{op}: a tensor with {numel} elements cannot be converted to a Python scalar (shape {shape})",
    ),
    "scalar_error_not_one_element": Entry(
        "value", "shape-item", "int(), float() or complex() of a tensor whose numel != 1 (a ValueError, as torch).",
        "{op}: only one element tensors can be converted to Python scalars (got {numel} elements, shape {shape})",
    ),
    "contains_error_unsupported_element": Entry(
        "shape", "shape-args", "`x in tensor` with something that is neither a tensor nor a number.",
        "{op}: Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type}.",
    ),
    "embedding_bag_error_requires_2d_input": Entry(
        "shape", "shape-nn", "embedding_bag input is not 2-D when offsets is None.",
        "{op}: input has to be 1-D or 2-D, got shape {shape}",
    ),
    # -- neural-network ops (conv, pool, attention, normalisation, losses) -----------------------------
    "conv_error_input_rank": Entry(
        "shape", "shape-conv", "A conv/pool input is neither batched (N, C, *S) nor unbatched (C, *S).",
        "{op}: expected {unbatched}-D (unbatched) or {batched}-D (batched) input, but got input of shape {shape}",
    ),
    "pool_error_input_rank_too_low": Entry(
        "shape_value", "shape-conv", "An adaptive pool's input has no more dims than its output size (torch: "
        "ValueError for a sequence output size, RuntimeError for an int; the error is both).",
        "{op}: Input dimension should be at least {need}, but got input of shape {shape}",
    ),
    "conv_error_channels_mismatch": Entry(
        "shape", "shape-conv", "Input channels differ from weight.shape[1] * groups, or out_channels % groups.",
        "{op}: given groups={groups} and weight of shape {weight}, expected input {shape} to have {expected}, "
        "but got {got} channels instead",
    ),
    "conv_error_kernel_too_large": Entry(
        "shape", "shape-conv", "The (dilated) kernel is larger than the padded input, so the output is empty.",
        "{op}: padded input size per channel {padded} is smaller than the kernel {kernel} (input shape {shape})",
    ),
    "conv_error_invalid_argument": Entry(
        "shape", "shape-conv", "A non-positive stride/dilation/kernel, negative padding, or too large output padding.",
        "{op}: {problem}",
    ),
    "pool_error_empty_input": Entry(
        "shape", "shape-conv", "A pooling input has an empty channel or spatial dim (only the batch may be empty).",
        "{op}: expected {unbatched}-D (unbatched) or {batched}-D (batched) input with an optional empty batch and no "
        "other empty dim, but got input of shape {shape}",
    ),
    "pool_error_invalid_padding": Entry(
        "shape", "shape-conv", "Pooling padding is negative or more than half the kernel size.",
        "{op}: pad should be at most half of the kernel size, but got padding={padding} and "
        "kernel_size={kernel}",
    ),
    "pad_error_invalid_padding": Entry(
        "shape", "shape-conv", "pad() got an odd-length pad, more pairs than dims, or a mode it cannot apply.",
        "{op}: {problem} (input shape {shape}, pad {pad})",
    ),
    "attention_error_shape_mismatch": Entry(
        "shape", "shape-attention", "Query/key/value (or the mask, or the embedding size) do not fit together.",
        "{op}: {problem} (query {q}, key {k}, value {v})",
    ),
    "layer_norm_error_shape_mismatch": Entry(
        "shape", "shape-nn", "The trailing dims of the input differ from normalized_shape.",
        "{op}: expected input with shape (*, {normalized}) but got input of shape {shape}",
    ),
    "call_error_dim_conflict": Entry(
        "shape", "shape-call", "A dim name of a function's signature is bound to two different sizes in one call.",
        "{op}: dim {name} is {a} in {param_a} {shape_a} but {b} in {param_b} {shape_b}",
    ),
    "norm_error_input_rank": Entry(
        "value", "shape-nn", "A BatchNorm layer got an input of a rank it does not take (torch: ValueError).",
        "{op}: expected {expected} input (got {got}D input)",
    ),
    "norm_error_channels_mismatch": Entry(
        "shape", "shape-nn", "The channel dim of a batch/group/instance-norm input differs from num_features.",
        "{op}: expected input {shape} to have {expected} channels at dimension {dim}",
    ),
    "loss_error_target_shape_mismatch": Entry(
        "shape_value", "shape-nn", "A loss target has the wrong shape for its input (torch: ValueError).",
        "{op}: expected target of shape {expected} for input of shape {input}, but got target of shape {target}",
    ),
    "rnn_error_input_rank": Entry(
        "value", "shape-nn", "A recurrent layer's input is not 2-D/3-D (a cell's not 1-D/2-D); torch raises ValueError.",
        "{op}: Expected input to be {expected}, got {rank}D instead",
    ),
    "rnn_error_empty_sequence": Entry(
        "shape", "shape-nn", "A recurrent layer's input has no time steps (an empty batch is fine).",
        "{op}: Expected sequence length to be larger than 0 in RNN",
    ),
    "rnn_error_input_size": Entry(
        "shape", "shape-nn", "The last dim of an RNN/LSTM/GRU input differs from the layer's input_size.",
        "{op}: input.size(-1) must be equal to input_size. Expected {expected}, got {got}",
    ),
    "rnn_error_input_dtype": Entry(
        "value", "shape-dtype", "A recurrent layer's input dtype is not its weights' (torch: ValueError; not checked "
        "under autocast).",
        "{op}: RNN input dtype ({dtype}) does not match weight dtype ({weight}). Convert input: input.to({weight}), "
        "or convert model: model.to({dtype})",
    ),
    "rnn_cell_error_input_size": Entry(
        "shape", "shape-nn", "The last dim of an RNNCell/LSTMCell/GRUCell input differs from the cell's input_size.",
        "{op}: input has inconsistent input_size: got {got} expected {expected}",
    ),
    "rnn_error_hidden_shape": Entry(
        "shape", "shape-nn", "An initial hidden (or cell) state whose shape is not the one the layer and input need.",
        "{op}: {problem}",
    ),
    "pad_error_input_rank": Entry(
        "shape_unsupported", "shape-conv",
        "reflect/replicate/circular padding of n dims needs an (n+1)-D or (n+2)-D input (torch: NotImplementedError).",
        "{op}: {mode} padding of {n} dim(s) needs a {lo}-D or {hi}-D input, but got input of shape {shape}",
    ),
    "pad_error_circular_rank": Entry(
        "value", "shape-conv", "CircularPadNd of an input that is not (n+1)-D or (n+2)-D (torch raises ValueError).",
        "{op}: expected {expected} input (got {rank}D input)",
    ),
    "glu_error_halving_dimension": Entry(
        "shape", "shape-nn", "glu of a 0-D input, or along a dim of odd size (it halves the dim).",
        "{op}: {problem}",
    ),
    "pixel_shuffle_error_shape": Entry(
        "shape", "shape-nn", "pixel_shuffle/pixel_unshuffle input of fewer than 3 dims, or sizes not divisible by the factor.",
        "{op}: {problem} (input shape {shape})",
    ),
    "upsample_error_size": Entry(
        "value", "shape-nn", "Upsample/interpolate: neither or both of size and scale_factor, or one of another spatial rank.",
        "{op}: {problem}",
    ),
    "upsample_error_option": Entry(
        "value", "shape-nn", "interpolate: an option its mode does not take (align_corners with nearest, area or "
        "nearest-exact; antialias outside bilinear, bicubic and lanczos of a 4-D input; lanczos without antialias "
        "or with align_corners).",
        "{op}: {problem}",
    ),
    "upsample_error_mode": Entry(
        "shape_unsupported", "shape-nn", "interpolate with a mode it does not have (torch: NotImplementedError).",
        "{op}: mode {mode!r} is not one of nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
        "nearest-exact",
    ),
    "upsample_error_input_rank": Entry(
        "shape_unsupported", "shape-nn",
        "Upsample of an input that is not 3-D, 4-D or 5-D, or of a rank its mode cannot take (torch: NotImplementedError).",
        "{op}: expected {expected} input (N, C, *spatial) for mode {mode!r}, but got input of shape {shape}",
    ),
    "upsample_error_empty_output": Entry(
        "shape", "shape-nn", "Upsample/interpolate to an output (or from an input) with a spatial size of 0.",
        "{op}: Input and output sizes should be greater than 0, but got input {input} and output {output}",
    ),
    "transformer_error_shape_mismatch": Entry(
        "shape", "shape-attention", "nn.Transformer's src and tgt: batches that differ, or a feature size not d_model.",
        "{op}: {problem} (got {shapes})",
    ),
    "load_state_dict_error_mismatch": Entry(
        "shape", "shape-nn", "load_state_dict: missing or unexpected keys (strict), or a tensor of another shape.",
        "Error(s) in loading state_dict for {op}:\n\t{problem}",
    ),
    # -- serialization ---------------------------------------------------------------------------------
    "serialization_error_malformed_file": Entry(
        "shape", "serialization", "A safetensors file is truncated, oversized, or its header is malformed.",
        "{op}: {problem}",
    ),
    "serialization_error_too_large": Entry(
        "shape", "serialization",
        "A valid safetensors file holds a tensor shapetorch cannot: over 64 dims, or more bytes than can be addressed.",
        "{op}: {problem}",
    ),
    "serialization_error_unsupported_object": Entry(
        "argument", "serialization", "save() got an object it cannot store as safetensors, or a dtype it lacks.",
        "{op}: {problem}",
    ),
    # -- einsum ------------------------------------------------------------------------------------
    "einsum_error_invalid_equation": Entry(
        "shape", "shape-einsum", "Equation syntax: subscripts outside [a-zA-Z], misplaced '.', several '->'.",
        "{op}: invalid equation {equation!r}: {problem}",
    ),
    "einsum_error_operand_count_mismatch": Entry(
        "shape", "shape-einsum", "The number of input terms differs from the number of operands.",
        "{op}: equation {equation!r} has {terms} input terms but {operands} operands were given",
    ),
    "einsum_error_subscript_rank_mismatch": Entry(
        "shape", "shape-einsum", "A term's subscript count differs from its operand's rank and it has no ellipsis.",
        "{op}: term {term!r} of {equation!r} has {subscripts} subscripts but operand {i} has shape {shape}{hint}",
    ),
    "einsum_error_dimension_mismatch": Entry(
        "shape", "shape-einsum", "The same subscript is bound to different sizes.",
        "{op}: {subject} of {equation!r} {problem}",
    ),
    "einsum_error_unknown_output_index": Entry(
        "shape", "shape-einsum", "An output subscript is absent from every input term, or repeated.",
        "{op}: output subscript {letter!r} of {equation!r} {problem}",
    ),
    "einsum_error_index_out_of_range": Entry(
        "shape", "shape-einsum", "A sublist subscript is outside [0, 52).",
        "{op}: subscript {index} in a sublist is not within the valid range [0, 52)",
    ),
    "einsum_error_invalid_sublist_element": Entry(
        "argument", "shape-einsum", "A sublist element is neither an int nor Ellipsis.",
        "{op}: sublist element {element!r} is neither an int nor Ellipsis",
    ),
    # -- einops --------------------------------------------------------------------------------------
    "einops_error_invalid_pattern": Entry(
        "shape", "shape-einops",
        "Pattern syntax: missing '->', unbalanced parentheses, duplicate or bad names, unknown reduction.",
        "{op}: invalid pattern {pattern!r}: {problem}",
    ),
    "einops_error_undefined_axis": Entry(
        "shape", "shape-einops",
        "An axis on only one side of rearrange, on the left only of repeat, or a keyword size for an unused axis.",
        "{op}: {problem} in pattern {pattern!r}{hint}",
    ),
    "einops_error_dimension_mismatch": Entry(
        "shape", "shape-einops", "Input rank != pattern rank, or an axis size does not divide or match.",
        "{op}: {problem} (pattern {pattern!r}, input shape {shape})",
    ),
    "einops_error_ambiguous_decomposition": Entry(
        "shape", "shape-einops", "A composite input axis like (h w) has more than one unknown size (or unpack "
        "got several -1).",
        "{op}: could not infer sizes for {axes} in pattern {pattern!r}; give all but one as keywords",
    ),
    "einops_error_anonymous_in_output": Entry(
        "shape", "shape-einops", "A non-unit anonymous (numeric) axis in rearrange, or in the output of reduce.",
        "{op}: anonymous axis {axis} in the {side} of pattern {pattern!r}; only unit axes (1 or ()) can be "
        "anonymous there, name the axis instead",
    ),
    "einops_error_reduce_undefined_output": Entry(
        "shape", "shape-einops", "The output of reduce names an axis absent from the input.",
        "{op}: axes {axes} on the right side of pattern {pattern!r} are not on the left; "
        "a {operation!s} reduction can only remove axes{hint}",
    ),
    "einops_error_repeat_missing_size": Entry(
        "shape", "shape-einops", "A new output axis of repeat has no size.",
        "{op}: specify sizes for new axes {axes} of pattern {pattern!r}, e.g. {example}",
    ),
    # -- dtypes ----------------------------------------------------------------------------------------
    "method_dtype_not_supported_error": Entry(
        "dtype_unsupported", "shape-dtype", "No kernel for the operand dtype (bitwise on float, float64 on WebGPU, ...).",
        "{op}: not implemented for dtype {dtype}{hint}",
    ),
    "sub_error_bool": Entry(
        "dtype", "shape-dtype", "Subtraction with a bool operand (tensor or Python bool), a RuntimeError in torch.",
        "{op}: Subtraction, the `-` operator, with {operands}",
    ),
    "alpha_error_type": Entry(
        "dtype", "shape-dtype", "add/sub's alpha of a kind the operands' result dtype cannot hold (a RuntimeError in torch).",
        "{op}: {problem}",
    ),
    "dtype_error_cannot_cast": Entry(
        "dtype", "shape-dtype", "An in-place or out= result type cannot hold the promoted type.",
        "{op}: result type {result} can't be cast to the desired output type {out}",
    ),
    "memory_error_allocation": Entry(
        "memory", "shape-memory", "A tensor too large for the machine's memory (torch's \"DefaultCPUAllocator: can't "
        "allocate memory\").",
        "{op}: cannot allocate memory: {problem}",
    ),
    "dtype_error_value_overflow": Entry(
        "dtype", "shape-dtype", "A fill value the tensor's dtype cannot hold (300 for uint8, NaN or inf for an integer dtype).",
        "{op}: value {value} cannot be converted to type {dtype} without overflow",
    ),
    "dtype_error_mismatch": Entry(
        "dtype", "shape-dtype", "Operands of an op that does not promote (mm, index_put, ...) differ in dtype.",
        "{op}: expected {what} to have the same dtype, but got {a} and {b}",
    ),
    "loss_error_target_dtype": Entry(
        "dtype", "shape-nn", "A class-index loss target (nll_loss, cross_entropy) of an integer dtype other than "
        "int64 or uint8 (torch: RuntimeError).",
        "{op}: expected target dtype to be Long or Byte, but got {dtype}",
    ),
    "dtype_not_found_error": Entry(
        "argument", "registry", "Unknown dtype name.", "{op}: unknown dtype {name!r}{hint}"
    ),
    # -- devices ---------------------------------------------------------------------------------------
    "device_error_requires": Entry(
        "device", "device", "An op needs a particular device, or all operands on one device.", "{op}: {problem}"
    ),
    "device_error_limit": Entry(
        "device", "device",
        "A kernel would exceed a limit of the device (workgroups per grid dimension, bytes per binding or buffer).",
        "{op}: {problem}",
    ),
    "device_error_out_of_memory": Entry(
        "device", "device", "The device could not allocate a buffer, even after its free buffers were released.",
        "{op}: out of memory on {device}: {problem}",
    ),
    "device_error_failed": Entry(
        "device", "device", "The device rejected recorded work; the work was dropped and the device stays usable.",
        "{op}: {problem}",
    ),
    "device_error_graph_capture": Entry(
        "device", "device",
        "Work a WebGPU graph capture cannot record (a read back to the host, an upload, a host-side optimizer step "
        "count, a random draw of a user generator), or a graph replayed before it was captured (torch: RuntimeError).",
        "{op}: {problem}",
    ),
    "device_error_cuda_unavailable": Entry(
        "device", "device", "Something that needs a CUDA device (`.cuda()`, `cuda.current_device()`): shapetorch has none.",
        "{op}: shapetorch has no CUDA device (torch.cuda.is_available() is False); use 'cpu' or 'webgpu'",
    ),
    # -- autograd --------------------------------------------------------------------------------------
    "autograd_error_leaf_inplace": Entry(
        "autograd", "shape-autograd", "An in-place op on a leaf that requires grad (outside no_grad).",
        "a leaf Variable that requires grad {tense} used in an in-place operation.",
    ),
    "autograd_error_leaf_view_inplace": Entry(
        "autograd", "shape-autograd", "An in-place op on a view of a leaf that requires grad (outside no_grad).",
        "a view of a leaf Variable that requires grad is being used in an in-place operation.",
    ),
    "autograd_error_dtype_not_supported": Entry(
        "autograd", "shape-autograd",
        "An out-of-place op whose result of an integer or bool dtype would join the graph (fill with a value that "
        "requires grad).",
        "{op}: Autograd not support dtype: {dtype}",
    ),
    "autograd_error_requires_grad_dtype": Entry(
        "autograd", "shape-autograd", "requires_grad on a tensor that is neither floating point nor complex.",
        "only Tensors of floating point and complex dtype can require gradients",
    ),
    "autograd_error_implicit_grad": Entry(
        "autograd", "shape-autograd", "backward() without a gradient on an output that is not a real scalar.",
        "grad can be implicitly created only for {what}",
    ),
    "autograd_error_unused_input": Entry(
        "autograd", "shape-autograd", "autograd.grad with an input the outputs do not depend on (allow_unused=False).",
        "One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True if this "
        "is the desired behavior.",
    ),
    "autograd_error_modified_saved": Entry(
        "autograd", "shape-autograd", "A tensor saved for backward was modified in place before backward ran.",
        "one of the variables needed for gradient computation has been modified by an inplace operation: {detail}",
    ),
    "autograd_error_hook_result": Entry(
        "autograd", "shape-autograd",
        "A tensor hook (register_hook) returned a gradient of another dtype, device or size than the one it replaces.",
        "hook '{name}' has changed the {what} of value{detail}",
    ),
    "autograd_error_hook_not_tensor": Entry(
        "argument", "shape-autograd", "A tensor hook (register_hook) returned something other than a tensor or None.",
        "expected Tensor, but hook '{name}' returned '{type}'",
    ),
    "data_error_invalid_value": Entry(
        "value", "data", "A sampler, dataset or DataLoader argument of a value torch refuses (a batch_size that is "
        "not positive, shuffle with an IterableDataset, ...): torch's ValueError and message.", "{problem}",
    ),
    "data_error_invalid_type": Entry(
        "argument", "data", "A sampler argument of a type torch refuses (replacement that is not a bool): torch's "
        "TypeError and message.", "{problem}",
    ),
    "autograd_error_custom_view_inplace": Entry(
        "autograd", "shape-autograd",
        "An in-place op, under grad mode, on an output a custom Function returned as-is (a module output under full "
        "backward hooks) or on a piece of split, chunk or unbind (one node for several views), or on a view of one.",
        "Output {i} of {name} is a view and is being modified inplace. {why}",
    ),
    "autograd_error_view_mode_inplace": Entry(
        "autograd", "shape-autograd",
        "A view made under no_grad or inference_mode, or a piece of split, chunk or unbind, or a view a custom Function "
        "returned, whose base (or another view of its base) was modified in place while gradients were recorded, "
        "then used; or such a no_grad view modified in place under grad mode (torch's check on view + in-place).",
        "{what} {why}",
    ),
    "autograd_error_view_layout": Entry(
        "autograd_unsupported", "shape-autograd",
        "The gradient of an in-place write through a view, or of a view whose storage was written, cannot be "
        "expressed: the view's elements are not elements of its base (a view of another dtype than its base's real "
        "or complex counterpart, a base whose elements overlap).",
        "{op}: the gradient through an in-place write into a view cannot be recorded: {problem}",
    ),
    "module_hook_error_result": Entry(
        "autograd", "autograd", "A module hook returned a value torch refuses (a wrong count of gradients, a bad "
        "forward pre-hook result).", "{problem}",
    ),
    "autograd_error_graph_freed": Entry(
        "autograd", "shape-autograd",
        "A second backward through a node whose saved values the first (without retain_graph) freed, or reading "
        "`grad_fn._saved_*` after that.",
        "Trying to backward through the graph a second time (or directly access saved tensors after they have already "
        "been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). "
        "Specify retain_graph=True if you need to backward through the graph a second time or if you need to access "
        "saved tensors after calling backward.",
    ),
    "autograd_gradient_mismatch_error": Entry(
        "autograd", "autograd", "A backward returned the wrong number of gradients or a wrongly shaped one.",
        "{op}: {problem}",
    ),
    "autograd_not_registered_error": Entry(
        "autograd", "autograd", "backward() reached an op with no registered gradient.",
        "{op}: the derivative for input {i} is not implemented",
    ),
    "autograd_derivative_not_implemented": Entry(
        "autograd_unsupported", "autograd", "backward() needs a derivative torch does not implement (igamma's input).",
        "the derivative for '{what}' is not implemented.",
    ),
    "autograd_error_not_differentiable": Entry(
        "autograd", "autograd", "backward() through an output whose derivative torch does not define (qr's mode='r').",
        "{op}: {problem}",
    ),
    "autograd_forward_inplace_view_error": Entry(
        "autograd", "autograd", "An in-place op on a view would change a dual tensor's tangent (forward-mode AD).",
        "{op}: forward-mode AD through an in-place op on a view is not supported; apply the op out of place "
        "(or in place on the base tensor)",
    ),
    # -- the registry ----------------------------------------------------------------------------------
    "dtype_already_registered_error": Entry(
        "registry", "registry", "A dtype with that name exists.", "{op}: dtype {name!r} is already registered"
    ),
    "dtype_components_mismatch_error": Entry(
        "registry", "registry", "A registered dtype's components are inconsistent with its storage.",
        "{op}: {problem}",
    ),
    "function_already_registered_error": Entry(
        "registry", "registry", "A function with that name exists.", "{op}: function {name!r} is already registered"
    ),
    "method_already_registered_error": Entry(
        "registry", "registry", "A Tensor method with that name exists.", "{op}: method {name!r} is already registered"
    ),
    "invalid_config_error": Entry(
        "registry", "registry", "A register_* call got missing or invalid fields.", "{op}: {problem}"
    ),
    "kernel_not_registered_error": Entry(
        "registry", "registry", "No kernel for (op, device, dtype).",
        "{op}: no kernel for device {device!s} and dtype {dtype}{hint}",
    ),
    "kernel_signature_mismatch_error": Entry(
        "registry", "registry", "A kernel's arity does not match the op.", "{op}: {problem}"
    ),
    "op_kind_mismatch_error": Entry(
        "registry", "registry", "A kernel of the wrong kind for the op (binary kernel for a unary op).", "{op}: {problem}"
    ),
    "op_not_found_error": Entry("registry", "registry", "Unknown op name.", "{op}: unknown op {name!r}{hint}"),
    "registration_failed_error": Entry(
        "registry", "registry", "A registration raised; the cause is attached.", "{op}: {problem}"
    ),
}


def _show(value: object) -> object:
    """Shapes print as ``(2, B)``; everything else as itself."""
    if isinstance(value, tuple) and all(isinstance(d, (int, Sym, _Unknown)) for d in value):
        return fmt_shape(value)
    return value


# How an op that the user wrote as syntax is named in a message (``x += y``, not ``__iadd__``).
_SYNTAX = {f"__i{name}__": f"x {sym}= y" for name, sym in (
    ("add", "+"), ("sub", "-"), ("mul", "*"), ("truediv", "/"), ("floordiv", "//"), ("mod", "%"), ("pow", "**"),
    ("matmul", "@"), ("and", "&"), ("or", "|"), ("xor", "^"), ("lshift", "<<"), ("rshift", ">>"))}
_SYNTAX["index_put"] = "x[index] = value"


class RuleError(Exception):
    """What a rule raises: a catalogue code and the formatted message. Nothing else is raised."""

    def __init__(self, code: str, **values: object) -> None:
        entry = CATALOGUE[code]
        self.code = code
        self.kind = entry.kind
        self.values = values
        shown = {k: _show(v) for k, v in values.items()}
        if isinstance(shown.get("op"), str):
            shown["op"] = _SYNTAX.get(str(shown["op"]), shown["op"])
        self.message = entry.template.format(**shown)
        super().__init__(self.message)


def did_you_mean(name: str, candidates: Iterable[object]) -> str:
    """`` (did you mean 'h'?)`` for the closest candidate by edit distance, or ``''``."""
    best, best_d = "", 3
    for c in candidates:
        d = edit_distance(name, str(c))
        if d < best_d or (d == best_d and best and len(str(c)) < len(best)):
            best, best_d = str(c), d
    return f"; did you mean {best!r}?" if best and best_d <= max(1, len(name) // 2) else ""


def edit_distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def invalid_argument(op: str, problem: str) -> RuleError:
    """``argument_error_invalid``: an argument outside what torch accepts (``k`` of topk, a negative size, ...)."""
    return RuleError("argument_error_invalid", op=op, problem=problem)


def invalid_value(op: str, problem: str) -> RuleError:
    """``argument_error_invalid_value``: the same where torch's check is Python's and raises ``ValueError``."""
    return RuleError("argument_error_invalid_value", op=op, problem=problem)
