"""``shapetorch.nn.functional``: torch.nn.functional over shapetorch ops.

Everything here is a composite of registered ops (or of the nn primitives in ``ops.convolution`` and
``ops.pooling``), so it differentiates and runs on every backend that has those ops. Shapes are checked
by the shared rules (``_rules.matmul`` for ``linear``, ``_rules.nn`` for conv, pooling, attention,
normalisation, losses).
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._autocast import autocast_suspended
from .._dtype import bool_, int64, uint8
from .._dtype import float64 as float64_
from .._errors import fail
from .._grad_mode import is_grad_enabled, no_grad
from .._rules import dtypes as RD
from .._rules import nn as RN
from .._rules.broadcast import broadcast_pair
from .._tensor import Tensor
from ..ops import activation as A
from ..ops import convolution as C
from ..ops import pooling as P
from ..ops._common import (
    as_node,
    autocast_inputs,
    be,
    cast,
    check,
    check_fill_value,
    make_inplace,
    promoted,
    refuse,
    tie_gradient,
)
from ..ops.activation import (
    apply_dropout,
    check_dropout_p,
    gelu,
    glu,
    hardshrink,
    layer_norm_prim,
    logsigmoid,
    prelu,
    softplus,
    softshrink,
    softsign,
    tanhshrink,
)
from ..ops.attention import attention, attention_fusable, safe_softmax
from ..ops.conversion import where as _where
from ..ops.convolution import pad
from ..ops.creation import arange, triu_indices
from ..ops.einsum import einsum
from ..ops.joining import cat as cat_
from ..ops.joining import stack
from ..ops.loss import cross_entropy_fusable, cross_entropy_rows, pointwise_loss, pointwise_loss_fusable
from ..ops.matmul import matmul_bias
from ..ops.normalization import batch_norm_fusable, batch_norm_train, update_running_stats
from ..ops.pooling import interpolate
from ..ops.random import dropout_mask
from ..ops.sampling import affine_grid, grid_sample
from ..ops.scatter import take_along
from .fractional_pool import (
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
)

__all__ = [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool3d", "affine_grid", "alpha_dropout", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "batch_norm", "bilinear", "binary_cross_entropy", "binary_cross_entropy_with_logits", "celu", "celu_",
    "channel_shuffle", "conv_tbc", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "cosine_embedding_loss", "cosine_similarity", "cross_entropy", "ctc_loss", "dropout", "dropout1d", "dropout2d", "dropout3d",
    "elu", "elu_", "embedding", "embedding_bag", "feature_alpha_dropout", "fold", "gaussian_nll_loss", "gelu", "glu",
    "grid_sample", "group_norm", "gumbel_softmax", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "hardtanh_",
    "hinge_embedding_loss", "huber_loss", "instance_norm", "interpolate", "kl_div", "l1_loss", "layer_norm",
    "leaky_relu", "leaky_relu_", "linear", "linear_cross_entropy", "local_response_norm", "log_softmax", "logsigmoid", "lp_pool1d",
    "lp_pool2d", "margin_ranking_loss", "max_pool1d", "max_pool1d_with_indices", "max_pool2d",
    "max_pool2d_with_indices", "max_pool3d", "max_pool3d_with_indices", "max_unpool1d", "max_unpool2d",
    "max_unpool3d", "mish", "mse_loss", "multi_head_attention_forward", "multi_margin_loss",
    "multilabel_margin_loss", "multilabel_soft_margin_loss", "native_channel_shuffle", "nll_loss", "normalize", "one_hot", "pad",
    "pairwise_distance", "pdist", "poisson_nll_loss", "prelu", "relu", "relu6", "relu_", "rms_norm", "rrelu",
    "rrelu_", "scaled_dot_product_attention", "selu", "selu_", "sigmoid", "silu", "smooth_l1_loss",
    "soft_margin_loss", "softmax", "softmin", "softplus", "softshrink", "softsign", "tanh", "tanhshrink",
    "threshold", "threshold_", "triplet_margin_loss", "triplet_margin_with_distance_loss", "unfold", "upsample",
    "upsample_bilinear", "upsample_nearest", "lp_pool3d", "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices", "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices", "fractional_max_pool3d", "fractional_max_pool3d_with_indices",
]


# -- activations with torch.nn.functional's ``inplace`` flag ------------------------------------------------
# ``inplace=True`` writes the result into ``input`` as ``x.relu_()`` does: a version bump, and autograd's
# refusals for a leaf that requires grad or a tensor a backward still needs, as in torch.

def _activation(fn: Any, input: Tensor, inplace: bool, *args: Any) -> Tensor:
    if not isinstance(input, Tensor):  # dropout's eval mode returns its input untouched: torch checks it first
        raise TypeError("input must be a Tensor")  # coded by the argument guard, which names the types
    if inplace:
        out: Tensor = make_inplace(fn, fn.__name__ + "_")(input, *args)
        return out
    result: Tensor = fn(input, *args)
    return result


def _legacy_dim(name: str, input: Tensor) -> int:
    """torch's choice for a softmax-family call without ``dim`` (deprecated, with its warning, which names the
    caller's line: past this, the function, the dtype check and the argument guard)."""
    import warnings

    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                  "as an argument.", UserWarning, stacklevel=5)
    return 0 if input.dim() in (0, 1, 3) else 1


# torch.nn.functional's signatures: ``_stacklevel`` is taken and ignored (torch reads it for the legacy-dim
# warning only), so F.softmax(x, 1, 3) is a stacklevel, not a dtype, as in torch

def softmax(input: Tensor, dim: int | None = None, _stacklevel: Any = 3, dtype: Any = None) -> Tensor:
    return A.softmax(input, _legacy_dim("softmax", input) if dim is None else dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: Any = 3, dtype: Any = None) -> Tensor:
    return A.log_softmax(input, _legacy_dim("log_softmax", input) if dim is None else dim, dtype)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: Any = 3, dtype: Any = None) -> Tensor:
    """``softmax(-input)`` along ``dim``."""
    return A.softmin(input, _legacy_dim("softmin", input) if dim is None else dim, dtype)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return _activation(A.relu, input, inplace)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return _activation(A.relu6, input, inplace)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _activation(A.elu, input, inplace, alpha)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _activation(A.celu, input, inplace, alpha)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    return _activation(A.selu, input, inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    return _activation(A.leaky_relu, input, inplace, negative_slope)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    return _activation(A.hardtanh, input, inplace, min_val, max_val)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    return _activation(A.threshold, input, inplace, threshold, value)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    return _activation(A.silu, input, inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    return _activation(A.mish, input, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    return _activation(A.hardswish, input, inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    return _activation(A.hardsigmoid, input, inplace)


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


# -- linear ---------------------------------------------------------------------------------------------

def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``; a wrong in_features is ``matmul_error_inner_dimensions_do_not_match``."""
    input, weight, bias = autocast_inputs("linear", input, weight, bias)
    if bias is not None and weight._data.ndim == 2:
        fused = matmul_bias(input, weight.t(), bias)
        if fused is not None:
            return fused if fused._grad_fn is None else as_node(fused, _linear_node(input), input, weight, bias)
    out = input.matmul(weight.t() if weight._data.ndim == 2 else weight)
    if bias is None:
        return out
    out = out + bias
    return out if out._grad_fn is None or weight._data.ndim != 2 else as_node(out, _linear_node(input), input, weight, bias)


def _linear_node(input: Tensor) -> str:
    """torch's name for a linear layer's node with a bias: its addmm on a matrix; on a vector, or a contiguous
    batch flattened to one, the view of addmm's result back to the input's shape; else its matmul plus bias."""
    nd = input._data.ndim
    return "AddmmBackward0" if nd == 2 else "ViewBackward0" if nd == 1 or input.is_contiguous() else "AddBackward0"


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *, linear_bias: Tensor | None = None,
                         weight: Tensor | None = None, reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: Any = None) -> Tensor:
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``, as torch 2.13's. ``linear_weight``
    is (C, d_1, ..., d_K, in_features): the logits of a batched input are then (N, C, d_1, ..., d_K), a K-dimensional
    loss. ``options`` picks torch's chunked kernel, which saves memory but computes the same loss: it is accepted
    and the loss is computed whole (see docs/compatibility.md)."""
    op = "linear_cross_entropy"
    if input.dim() < 1 or input.dim() > 2:
        fail("argument_error_invalid", op=op, problem=f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        fail("argument_error_invalid", op=op, problem="expected linear_weight with dimensionality at least 2, got "
                                                      f"{linear_weight.dim()}")
    batch, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        fail("argument_error_invalid", op=op, problem="expected equal input and linear_weight last dimensions "
             f"(in_features), got {in_features} and {linear_weight.shape[-1]}, respectively")
    classes, extra = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *extra):
        fail("argument_error_invalid", op=op, problem=f"expected linear_bias shape {(classes, *extra)}, got "
                                                      f"{tuple(linear_bias.shape)}")
    if extra and not batch:
        fail("argument_error_invalid", op=op, problem=f"K-dimensional loss defined by linear_weight shape "
             f"{tuple(linear_weight.shape)} requires batched input, (N, {in_features}), got unbatched input with "
             f"shape {tuple(input.shape)}")
    logits_shape = (*batch, classes, *extra)
    if tuple(target.shape) == logits_shape and ignore_index is not None:  # class probabilities
        fail("argument_error_invalid", op=op, problem="ignore_index cannot be specified when target contains "
                                                      "probabilities")
    flat_w = linear_weight.reshape(-1, in_features) if extra else linear_weight
    flat_b = linear_bias.reshape(-1) if extra and linear_bias is not None else linear_bias
    logits = linear(input, flat_w, flat_b)
    if extra:
        logits = logits.reshape(logits_shape)
    return cross_entropy(logits, target, weight, ignore_index=-100 if ignore_index is None else ignore_index,
                         reduction=reduction, label_smoothing=label_smoothing)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y_k = x1 W_k x2 + b_k`` with weight (out, in1, in2)."""

    with autocast_suspended():  # torch's is one kernel autocast does not list: no cast inside
        out = einsum("...i,kij,...j->...k", input1, weight, input2)
    return out if bias is None else out + bias


# -- convolution and pooling ----------------------------------------------------------------------------

def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """A 1-D convolution over (time, batch, channels) with a (kernel width, in, out) weight, as torch's conv_tbc:
    ``conv1d`` on the permuted operands; a negative ``pad`` trims that many steps from each end, as torch's."""
    op = "conv_tbc"
    if input.dim() != 3:
        fail("argument_error_invalid", op=op, problem="Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        fail("argument_error_invalid", op=op, problem="Weight tensor must have 3 dims: kernel_width, in_channels, "
                                                      "out_channels.")
    if bias.dim() != 1:
        fail("argument_error_invalid", op=op, problem="Bias must have 1 dim: out_channels")
    if input.shape[2] != weight.shape[1]:
        fail("argument_error_invalid", op=op, problem="Input dim 2 (input channels) is not == dim 1 in the weight "
                                                      "tensor")
    if weight.shape[2] != bias.shape[0]:
        fail("argument_error_invalid", op=op, problem="Bias size must equal dim 2 in the weight tensor (output "
                                                      "channels).")
    x = input.permute(1, 2, 0)
    if pad < 0:
        x = x.narrow(2, -pad, max(x.shape[2] + 2 * pad, 0))
    out: Tensor = conv1d(x, weight.permute(2, 1, 0), bias, padding=max(pad, 0))
    return out.permute(2, 0, 1)


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Tensor:
    return C.conv(input, weight, bias, stride, padding, dilation, groups, op="conv1d")


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Tensor:
    return C.conv(input, weight, bias, stride, padding, dilation, groups, op="conv2d")


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Tensor:
    return C.conv(input, weight, bias, stride, padding, dilation, groups, op="conv3d")


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    return C.conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation,
                            op="conv_transpose1d")


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    return C.conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation,
                            op="conv_transpose2d")


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    return C.conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation,
                            op="conv_transpose3d")


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    refuse(input, "max_pool1d", bool_=True, complex_=True)  # torch has no bool or complex kernel
    return P.max_pool(input, 1, kernel_size, stride, padding, dilation, ceil_mode, return_indices, op="max_pool1d")


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    refuse(input, "max_pool2d", bool_=True, complex_=True)  # torch has no bool or complex kernel
    return P.max_pool(input, 2, kernel_size, stride, padding, dilation, ceil_mode, return_indices, op="max_pool2d")


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    refuse(input, "max_pool3d", bool_=True, complex_=True)  # torch has no bool or complex kernel
    return P.max_pool(input, 3, kernel_size, stride, padding, dilation, ceil_mode, return_indices, op="max_pool3d")


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                            ceil_mode: bool = False, return_indices: bool = True) -> Any:
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                            ceil_mode: bool = False, return_indices: bool = True) -> Any:
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                            ceil_mode: bool = False, return_indices: bool = True) -> Any:
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def _max_unpool(input: Tensor, indices: Tensor, nd: int, kernel_size: Any, stride: Any, padding: Any,
                output_size: Any, op: str) -> Tensor:
    """Scatter each value to its index in a zero plane of the pooled-from size, per (batch, channel)."""
    input = autocast_inputs(op, input)[0]  # max_unpool2d/3d are on autocast's float32 list
    def tup(v: Any) -> tuple[Any, ...]:  # torch's _pair / _triple: no type check (output_size's comes first)
        return tuple(v) if isinstance(v, (tuple, list)) else (v,) * nd

    k = tup(kernel_size)
    st_ = tup(stride if stride is not None else kernel_size)
    pd = tup(padding)
    if tuple(indices._data.shape) != tuple(input._data.shape):
        fail("argument_error_invalid", op=op, problem=(
            f"Expected shape of indices to be same as that of the input tensor ({tuple(input._data.shape)}) but got "
            f"indices tensor with shape: {tuple(indices._data.shape)}"))
    spatial_in = tuple(input._data.shape[-nd:])
    default = tuple((spatial_in[i] - 1) * st_[i] - 2 * pd[i] + k[i] for i in range(nd))
    out_sp = default
    if output_size is not None:  # torch's Python checks it against the default size, within a stride either way
        given = tuple(output_size)
        given = given[2:] if len(given) == nd + 2 else given
        if len(given) != nd:
            _value_error(op, f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has a "
                             f"length of '{len(given)}'")
        for i in range(nd):
            if not default[i] - st_[i] < given[i] < default[i] + st_[i]:
                _value_error(op, f'invalid output_size "{tuple(output_size)}" (dim {i} must be between '
                                 f"{default[i] - st_[i]} and {default[i] + st_[i]})")
        out_sp = tuple(int(v) for v in given)
    for name, v in (("kernel_size", k), ("stride", st_), ("padding", pd)):  # then torch's parser: ints only
        _int_pair(v, name, op)
    lead = tuple(input._data.shape[:-nd])
    flat = input.reshape(*lead, -1)
    idx = indices.reshape(*lead, -1)
    size = math.prod(out_sp)
    if idx.numel() and (int(idx.max()) >= size or int(idx.min()) < 0):
        bad = int(idx.max()) if int(idx.max()) >= size else int(idx.min())
        fail("argument_error_invalid", op=op, problem=(
            f"Found an invalid max index: {bad} (output volumes are of size {'x'.join(map(str, out_sp))})"))
    out = flat.new_zeros((*lead, size)).scatter(-1, idx, flat)
    return out.reshape(*lead, *out_sp)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 output_size: Any = None) -> Tensor:
    return _max_unpool(input, indices, 1, kernel_size, stride, padding, output_size, "max_unpool1d")


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 output_size: Any = None) -> Tensor:
    return _max_unpool(input, indices, 2, kernel_size, stride, padding, output_size, "max_unpool2d")


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 output_size: Any = None) -> Tensor:
    return _max_unpool(input, indices, 3, kernel_size, stride, padding, output_size, "max_unpool3d")


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    return P.avg_pool(input, 1, kernel_size, stride, padding, ceil_mode, count_include_pad, op="avg_pool1d")


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    return P.avg_pool(input, 2, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                      op="avg_pool2d")


def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    return P.avg_pool(input, 3, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                      op="avg_pool3d")


def _output_size_fits(input: Tensor, output_size: Any, op: str) -> None:
    """torch's 2-D and 3-D adaptive pools fill a sequence ``output_size``'s Nones from the input's trailing
    dims before anything else: an input of too few dims for it is a ``ValueError`` there."""
    if isinstance(output_size, (tuple, list)) and isinstance(input, Tensor) and input.dim() <= len(output_size):
        fail("pool_error_input_rank_too_low", op=op, need=len(output_size) + 1, shape=tuple(input.shape))


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    _output_size_fits(input, output_size, "adaptive_avg_pool3d")
    return P.adaptive_avg_pool(input, 3, output_size, op="adaptive_avg_pool3d")


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    _output_size_fits(input, output_size, "adaptive_max_pool3d")
    return _adaptive_max(input, 3, output_size, return_indices)


def _adaptive_max(input: Tensor, nd: int, output_size: Any, return_indices: bool) -> Any:
    """Adaptive max pooling; with ``return_indices``, also each bin's maximum as a flat index into its input
    plane (the first maximum, or the last NaN of a bin that has one, as torch's), found on the host."""
    out = P.adaptive_max_pool(input, nd, output_size, op=f"adaptive_max_pool{nd}d")
    if not return_indices:
        return out
    a = input.detach().cpu().numpy()
    sizes = tuple(out._data.shape[-nd:])
    spatial = a.shape[-nd:]
    lead = a.shape[:-nd]
    plane = np.arange(math.prod(spatial)).reshape(spatial)
    idx = np.zeros((*lead, *sizes), np.int64)
    for pos in np.ndindex(*sizes):
        box = tuple(slice((p * n) // o, -(-((p + 1) * n) // o)) for p, n, o in zip(pos, spatial, sizes, strict=True))
        win = a[(..., *box)].reshape(*lead, math.prod(a[(..., *box)].shape[len(lead):]))  # (-1: ambiguous if empty)
        nan = np.isnan(win) if win.dtype.kind == "f" else np.zeros(win.shape, bool)
        k = np.where(nan.any(-1), nan.shape[-1] - 1 - nan[..., ::-1].argmax(-1), win.argmax(-1))
        idx[(..., *pos)] = plane[box].reshape(-1)[k]
    return out, Tensor._make(idx).to(input.device)


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    return P.adaptive_avg_pool(input, 1, output_size, op="adaptive_avg_pool1d")


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    _output_size_fits(input, output_size, "adaptive_avg_pool2d")
    return P.adaptive_avg_pool(input, 2, output_size, op="adaptive_avg_pool2d")


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    return _adaptive_max(input, 1, output_size, return_indices)


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    _output_size_fits(input, output_size, "adaptive_max_pool2d")
    return _adaptive_max(input, 2, output_size, return_indices)


# -- normalisation --------------------------------------------------------------------------------------

def _channel_view(t: Tensor, ndim: int) -> Tensor:
    return t.reshape((1, -1) + (1,) * (ndim - 2))


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise over (N, *S) per channel. In training, batch statistics are used and the running ones updated
    (unbiased variance) in place; in eval, the running statistics are used."""

    c = running_mean._data.shape[0] if running_mean is not None else (weight._data.shape[0] if weight is not None else None)
    if c is not None:
        check(RN.channels_check, tuple(input._data.shape), c, op="batch_norm")
    nd = input._data.ndim
    dims = [0, *range(2, nd)]
    if training and input.numel() == max(input._data.shape[1], 1):  # (torch's check: exactly one; empty passes)
        fail("argument_error_invalid_value", op="batch_norm",
             problem=f"Expected more than 1 value per channel when training, got input size {input.shape}")
    if not input._data.size:  # as torch: nothing to normalise, the running statistics untouched
        empty = input.clone()
        empty = empty if weight is None else empty * weight.reshape(-1)[:1].sum()
        return empty if bias is None else empty + bias.reshape(-1)[:1].sum()
    if training:
        count = input.numel() // max(input._data.shape[1], 1)
        if batch_norm_fusable(input, weight, bias):
            out, bmean, bvar = batch_norm_train(input, weight, bias, eps)
            if running_mean is not None and running_var is not None \
                    and not update_running_stats(running_mean, running_var, bmean, bvar, momentum, count):
                with no_grad():
                    running_mean.mul_(1 - momentum).add_(bmean * momentum)
                    running_var.mul_(1 - momentum).add_(bvar * (momentum * count / (count - 1)))
            return out
        mean = input.mean(dims, keepdim=True)
        var = input.var(dims, keepdim=True, correction=0)
        if running_mean is not None and running_var is not None:
            with no_grad():
                running_mean.mul_(1 - momentum).add_(mean.detach().reshape(-1) * momentum)
                running_var.mul_(1 - momentum).add_(var.detach().reshape(-1) * (momentum * count / (count - 1)))
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("batch_norm in eval mode needs running_mean and running_var")
        mean, var = _channel_view(running_mean, nd), _channel_view(running_var, nd)
    out = (input - mean) * (var + eps).rsqrt()
    if weight is not None:
        out = out * _channel_view(weight, nd)
    if bias is not None:
        out = out + _channel_view(bias, nd)
    return out


def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each (instance, channel) over its spatial dims. With ``use_input_stats=False`` the running
    statistics normalise instead; given running statistics and the input's, they are updated with the
    instances' statistics averaged over the batch (unbiased variance), as torch's."""
    nd = input._data.ndim
    if use_input_stats and math.prod(input._data.shape[2:]) == 1:
        _value_error("instance_norm", f"Expected more than 1 spatial element when training, got input size "
                                      f"{tuple(input._data.shape)}")
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    dims = list(range(2, nd))
    mean = input.mean(dims, keepdim=True)
    var = input.var(dims, keepdim=True, correction=0)
    if running_mean is not None and running_var is not None:
        n = input.numel() // max(input._data.shape[0] * input._data.shape[1], 1)
        with no_grad():
            running_mean.mul_(1 - momentum).add_(mean.detach().reshape(input._data.shape[:2]).mean(0) * momentum)
            unbiased = var.detach().reshape(input._data.shape[:2]).mean(0) * (n / max(n - 1, 1))
            running_var.mul_(1 - momentum).add_(unbiased * momentum)
    out = (input - mean) * (var + eps).rsqrt()
    if weight is not None:
        out = out * _channel_view(weight, nd)
    if bias is not None:
        out = out + _channel_view(bias, nd)
    return out


def layer_norm(input: Tensor, normalized_shape: Sequence[int] | int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    check(RN.normalized_shape_check, tuple(input._data.shape), shape, op="layer_norm")
    dims = list(range(input._data.ndim - len(shape), input._data.ndim))
    dt = input._data.dtype
    if dt.kind == "f" and all(t is None or (t._data.dtype == dt and tuple(t._data.shape) == shape)
                              for t in (weight, bias)) and len(shape) and input._data.ndim > len(shape):
        return as_node(layer_norm_prim(input, len(shape), eps, weight, bias), "NativeLayerNormBackward0", input,
                       weight, bias)
    mean = input.mean(dims, keepdim=True)
    var = input.var(dims, keepdim=True, correction=0)
    out = (input - mean) * (var + eps).rsqrt()
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return as_node(out, "NativeLayerNormBackward0", input, weight, bias)


def rms_norm(input: Tensor, normalized_shape: Sequence[int] | int, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if input._data.ndim < len(shape):  # torch's rms_norm: a ValueError (layer_norm's is a RuntimeError)
        _value_error("rms_norm", f"Input tensor must have at least {len(shape)} dimensions, but got "
                                 f"{input._data.ndim}")
    check(RN.normalized_shape_check, tuple(input._data.shape), shape, op="rms_norm")
    dims = list(range(input._data.ndim - len(shape), input._data.ndim))
    e = eps if eps is not None else float(__import__("numpy").finfo(input._data.dtype).eps)
    out = input * ((input * input).mean(dims, keepdim=True) + e).rsqrt()
    return out if weight is None else out * weight


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    if input._data.ndim < 2 or input._data.shape[1] % num_groups:
        fail("norm_error_channels_mismatch", op="group_norm", shape=tuple(input._data.shape),
             expected=f"a multiple of num_groups={num_groups}", dim=1)
    n = input._data.shape[0]
    x = input.reshape(n, num_groups, math.prod(input._data.shape[1:]) // num_groups)  # (-1 is ambiguous for N = 0)
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True, correction=0)
    out = ((x - mean) * (var + eps).rsqrt()).reshape(input.shape)
    nd = input._data.ndim
    if weight is not None:
        out = out * _channel_view(weight, nd)
    if bias is not None:
        out = out + _channel_view(bias, nd)
    return as_node(out, "NativeGroupNormBackward0", input, weight, bias)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    return input / input.norm(p, dim, keepdim=True).clamp(min=eps).expand_as(input)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    check(RN.distance_shape, tuple(x1.shape), tuple(x2.shape), dim, op="cosine_similarity")
    # As torch, the inputs broadcast first (so ``dim`` counts the broadcast shape's dims).
    both = check(broadcast_pair, tuple(x1.shape), tuple(x2.shape), "cosine_similarity")
    x1, x2 = _in_common_dtype(x1, x2)  # (an integer x1 with a float x2 is a float similarity, as torch)
    x1, x2 = x1.expand(both), x2.expand(both)
    num = (x1 * x2).sum(dim)
    # torch's node: its composite ends in a sum over dim of the normalised products
    return as_node(num / (x1.norm(2, dim) * x2.norm(2, dim)).clamp(min=eps), "SumBackward1", x1, x2)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """``||x1 - x2 + eps||_p`` over the last dim, as torch's (eps added to the difference)."""
    check(RN.distance_shape, tuple(x1.shape), tuple(x2.shape), -1, keepdim, op="pairwise_distance")
    return (x1 - x2 + eps).norm(p, -1, keepdim=keepdim)


def _int_pair(value: Any, name: str, op: str) -> tuple[int, ...]:
    """An int (for both dims) or a sequence of ints, as torch's ``_pair`` then the ``int[2]`` parser."""
    items = tuple(value) if isinstance(value, (tuple, list)) else (value, value)
    for i, v in enumerate(items):
        if isinstance(v, bool) or not isinstance(v, int):
            fail("argument_error_refused", op=op, problem=f"argument '{name}' must be tuple of ints, but found "
                                                          f"element of type {type(v).__name__} at pos {i}")
    return items


def _sliding_blocks(x: Tensor, kernel: tuple[int, ...], dilation: tuple[int, ...], stride: tuple[int, ...],
                    blocks: tuple[int, ...]) -> list[Tensor]:
    """For each kernel offset (row-major), the (N, C, bh, bw) elements of the (padded) x it meets in every block."""
    (kh, kw), (dh, dw), (sh, sw), (bh, bw) = kernel, dilation, stride, blocks
    return [x[:, :, i * dh: i * dh + sh * (bh - 1) + 1: sh, j * dw: j * dw + sw * (bw - 1) + 1: sw]
            for i in range(kh) for j in range(kw)]


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Tensor:
    """``F.unfold`` (im2col): the sliding blocks of (N, C, H, W) as columns, (N, C * kh * kw, L). A composite of
    strided slices, so it differentiates (and runs on WebGPU) through the slice ops."""
    k, d, p, st = (_int_pair(v, n, "unfold") for v, n in ((kernel_size, "kernel_size"), (dilation, "dilation"),
                                                            (padding, "padding"), (stride, "stride")))
    shape = check(RN.unfold_shape, tuple(input.shape), k, d, p, st, op="unfold")
    if not (input.dtype.is_floating_point or input.dtype.is_complex or input.dtype is bool_):
        fail("method_dtype_not_supported_error", op="unfold", dtype=input.dtype, hint="")
    x = input if input.dim() == 4 else input.unsqueeze(0)
    if any(p):
        x = pad(x, (p[1], p[1], p[0], p[0]))
    blocks = tuple(((x.shape[2 + i] - (d[i] * (k[i] - 1) + 1)) // st[i] + 1) for i in range(2))
    n, c = x.shape[0], x.shape[1]
    out = stack(_sliding_blocks(x, k, d, st, blocks), 2).reshape(n, c * k[0] * k[1], blocks[0] * blocks[1])
    return out if input.dim() == 4 else out.reshape(shape)


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
         stride: Any = 1) -> Tensor:
    """``F.fold`` (col2im): columns (N, C * kh * kw, L) summed back into (N, C, *output_size), the adjoint of
    :func:`unfold`. Each kernel offset's values are spread ``stride`` apart and shifted into place by padding
    (negative padding crops), so the sum is a composite of differentiable ops."""
    o, k, d, p, st = (_int_pair(v, n, "fold") for v, n in ((output_size, "output_size"), (kernel_size, "kernel_size"),
                                                             (dilation, "dilation"), (padding, "padding"),
                                                             (stride, "stride")))
    shape = check(RN.fold_shape, tuple(input.shape), o, k, d, p, st, op="fold")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        fail("method_dtype_not_supported_error", op="fold", dtype=input.dtype, hint="")
    x = input if input.dim() == 3 else input.unsqueeze(0)
    n, c = x.shape[0], x.shape[1] // (k[0] * k[1])
    hp, wp = o[0] + 2 * p[0], o[1] + 2 * p[1]
    bh, bw = ((hp - (d[0] * (k[0] - 1) + 1)) // st[0] + 1), ((wp - (d[1] * (k[1] - 1) + 1)) // st[1] + 1)
    cols = x.reshape(n, c, k[0], k[1], bh, bw)
    out: Tensor | None = None
    for i in range(k[0]):
        for j in range(k[1]):
            spread = pad(cols[:, :, i, j].reshape(n, c, bh, 1, bw, 1), (0, st[1] - 1, 0, 0, 0, st[0] - 1))
            spread = spread.reshape(n, c, bh * st[0], bw * st[1])
            top, left = i * d[0], j * d[1]
            placed = pad(spread, (left, wp - left - bw * st[1], top, hp - top - bh * st[0]))
            out = placed if out is None else out + placed
    assert out is not None
    out = out[:, :, p[0]: p[0] + o[0], p[1]: p[1] + o[1]]
    return out if input.dim() == 3 else out.reshape(shape)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """``(*, C r^2, H, W) -> (*, C, H r, W r)``."""
    r = int(upscale_factor)
    if r * r > 2**63 - 1:  # torch's product of the factors overflows int64 first
        _value_error("pixel_shuffle", f"upscale factor is too large, (upscale_factor)^2 overflowed: "
                                      f"upscale_factor={r}")
    check(RN.pixel_shuffle_shape, tuple(input.shape), r, op="pixel_shuffle")
    *batch, c, h, w = input.shape
    n = len(batch)
    x = input.reshape(*batch, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """``(*, C, H r, W r) -> (*, C r^2, H, W)``."""
    r = int(downscale_factor)
    check(RN.pixel_shuffle_shape, tuple(input.shape), r, op="pixel_unshuffle")
    *batch, c, h, w = input.shape
    n = len(batch)
    x = input.reshape(*batch, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*batch, c * r * r, h // r, w // r)


# -- embeddings -----------------------------------------------------------------------------------------

def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by ``input``; no gradient flows to row ``padding_idx``."""
    if padding_idx is not None and not isinstance(padding_idx, int):  # torch compares it with 0 first: a TypeError
        fail("argument_error_type", op="embedding", name="padding_idx", position=" (position 3)", expected="int",
             got=type(padding_idx).__name__)
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    out = weight.index_select(0, input.reshape(-1)).reshape(tuple(input._data.shape) + (weight._data.shape[1],))
    if padding_idx is not None and weight.requires_grad:
        if padding_idx < 0:
            padding_idx += weight._data.shape[0]
        keep = (input != padding_idx).unsqueeze(-1)
        out = _where(keep, out, out.detach())
    return as_node(out, "EmbeddingBackward0", weight)


def _embedding_renorm_(weight: Tensor, input: Tensor, max_norm: float, norm_type: float) -> None:
    """torch's embedding_renorm_: each row ``input`` picks whose norm exceeds ``max_norm`` is scaled down in
    place (to max_norm / (norm + 1e-7)), outside autograd, before the lookup."""
    with no_grad():
        rows = input.reshape(-1).unique()
        norms = weight.index_select(0, rows).norm(p=norm_type, dim=1, keepdim=True)
        scale = _where(norms > max_norm, max_norm / (norms + 1e-7), norms.new_ones(norms.shape))
        weight[rows] = weight.index_select(0, rows) * scale


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm: float | None = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Sum / mean / max of the embeddings of each bag: (B, L) input, or 1-D input with bag ``offsets``."""

    # torch's Python checks (ValueErrors), then its kernel's refusal of a bool or complex index (NotImplementedError)
    if input._data.ndim == 2:
        if offsets is not None:
            fail("argument_error_invalid_value", op="embedding_bag",
                 problem="if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed "
                         "length sequences.")
        b, length = input._data.shape
        bounds = [(i * length, (i + 1) * length) for i in range(b)]
        flat = input.reshape(-1)
    elif input._data.ndim == 1:
        if offsets is None:
            fail("argument_error_invalid_value", op="embedding_bag", problem="offsets has to be a 1D Tensor but got None")
        offs = [int(v) for v in offsets.tolist()]
        ends = offs[1:] + ([] if include_last_offset else [input._data.shape[0]])
        if include_last_offset:
            offs = offs[:-1]
        bounds = list(zip(offs, ends))
        flat = input
    else:
        fail("argument_error_invalid_value", op="embedding_bag", problem=f"input has to be 1D or 2D Tensor, but got "
                                                                         f"Tensor of dimension {input._data.ndim}")
    if input.dtype.is_complex or input.dtype.name == "bool":
        fail("method_dtype_not_supported_error", op="embedding_bag", dtype=input.dtype.name, hint="")
    rows = embedding(flat, weight, max_norm=max_norm, norm_type=norm_type)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1)
    keep = (flat != padding_idx) if padding_idx is not None else None
    outs = []
    for lo, hi in bounds:
        part = rows[lo:hi]
        if keep is not None:
            mask = keep[lo:hi]
            part = part[mask]
        if part._data.shape[0] == 0:
            outs.append(weight.new_zeros((weight._data.shape[1],)))
        elif mode == "sum":
            outs.append(part.sum(0))
        elif mode == "mean":
            outs.append(part.mean(0))
        elif mode == "max":
            outs.append(part.amax(0))
        else:
            raise ValueError(f"mode has to be one of sum, mean or max, got {mode!r}")
    return as_node(stack(outs), "EmbeddingBagBackward0", weight) if outs else weight.new_zeros((0, weight._data.shape[1]))


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:

    if tensor.dtype is not int64:
        fail("argument_error_invalid", op="one_hot", problem="one_hot is only applicable to index tensor of type "
                                                             "LongTensor.")
    if tensor.numel() and int(tensor.min().item()) < 0:
        fail("argument_error_invalid", op="one_hot", problem="Class values must be non-negative.")
    if num_classes < 0:
        if not tensor.numel():
            fail("argument_error_invalid", op="one_hot", problem="Can not infer total number of classes from empty "
                                                                 "tensor.")
        num_classes = int(tensor.max().item()) + 1
    elif tensor.numel() and int(tensor.max().item()) >= num_classes:
        fail("argument_error_invalid", op="one_hot", problem="Class values must be smaller than num_classes.")
    return (tensor.unsqueeze(-1) == arange(num_classes, device=tensor.device)).to(int64)


# -- dropout --------------------------------------------------------------------------------------------

def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)`` (training only)."""
    return _activation(A.dropout, input, True, p, training) if inplace and training else _activation(
        apply_dropout, input, False, p, training)


def _feature_dropout(input: Tensor, p: float, training: bool, keep_dims: int) -> Tensor:

    check_dropout_p(p)
    if not training or p == 0.0:
        return input
    shape = tuple(input._data.shape[: input._data.ndim - keep_dims]) + (1,) * keep_dims
    mask = dropout_mask(shape, p, input.dtype, input.device) if p < 1 else input.new_zeros(shape)
    return input * mask


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    return _activation(_feature_dropout, input, inplace and training, p, training, 1)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    return _activation(_feature_dropout, input, inplace and training, p, training, 2)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    return _activation(_feature_dropout, input, inplace and training, p, training, 3)


# -- attention ------------------------------------------------------------------------------------------

def _causal(length: int, s: int, like: Tensor) -> Tensor:
    """The (L, S) bool mask ``j <= i`` (torch's ``ones(L, S).tril()``), on ``like``'s device."""
    return arange(length, device=like.device).unsqueeze(-1) >= arange(s, device=like.device).unsqueeze(0)


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(q k^T * scale + mask) v``; a bool mask marks the positions that take part (True)."""
    query, key, value, attn_mask = autocast_inputs("scaled_dot_product_attention", query, key, value, attn_mask)
    check(RN.attention_shape, tuple(query._data.shape), tuple(key._data.shape), tuple(value._data.shape),
          None if attn_mask is None else tuple(attn_mask._data.shape))
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    length, s = query._data.shape[-2], key._data.shape[-2]
    sc = scale if scale is not None else 1.0 / math.sqrt(query._data.shape[-1])
    if dropout_p == 0.0 and not enable_gqa and attention_fusable(query, key, value, attn_mask):
        return attention(query, key, value, attn_mask, sc, is_causal)
    scores = query.matmul(key.transpose(-2, -1)) * sc
    if is_causal:
        attn_mask = _causal(length, s, query)
    if attn_mask is not None:
        if attn_mask.dtype is bool_:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask
    weights = safe_softmax(scores)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return weights.matmul(value)


def multi_head_attention_forward(
    query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
    in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None, bias_v: Tensor | None,
    add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor, out_proj_bias: Tensor | None,
    training: bool = True, key_padding_mask: Tensor | None = None, need_weights: bool = True,
    attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False, q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None, v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
    static_v: Tensor | None = None, average_attn_weights: bool = True, is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """torch's functional multi-head attention, in torch's signature: inputs (L, N, E) or unbatched (L, E); a
    learned key/value bias row (``bias_k``/``bias_v``, (1, 1, E)) and a zero row (``add_zero_attn``) appended to
    the keys and values, with the masks widened to match; ``static_k``/``static_v`` ((N * H, S, E / H)) in place
    of the projected keys and values."""
    if isinstance(embed_dim_to_check, float) and query._data.ndim:  # torch compares it with ==: 4.0 passes, NaN not
        if embed_dim_to_check != query._data.shape[-1]:
            fail("attention_error_shape_mismatch", op="multi_head_attention_forward", q=tuple(query._data.shape),
                 k=tuple(key._data.shape), v=tuple(value._data.shape), problem=f"was expecting embedding dimension "
                 f"of {embed_dim_to_check}, but got {query._data.shape[-1]}")
        embed_dim_to_check = int(embed_dim_to_check)
    return _mha(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, out_proj_weight,
               out_proj_bias, dropout_p, training, key_padding_mask, need_weights, attn_mask, use_separate_proj_weight,
               q_proj_weight, k_proj_weight, v_proj_weight, average_attn_weights, is_causal,
               bias_k=bias_k, bias_v=bias_v, add_zero_attn=add_zero_attn, static_k=static_k, static_v=static_v)


def _mha(
    query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
    in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, out_proj_weight: Tensor, out_proj_bias: Tensor | None,
    dropout_p: float = 0.0, training: bool = True, key_padding_mask: Tensor | None = None, need_weights: bool = True,
    attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False, q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None, v_proj_weight: Tensor | None = None, average_attn_weights: bool = True,
    is_causal: bool = False, batch_first: bool = False, *, bias_k: Tensor | None = None,
    bias_v: Tensor | None = None, add_zero_attn: bool = False, static_k: Tensor | None = None,
    static_v: Tensor | None = None,
) -> tuple[Tensor, Tensor | None]:
    """The body of ``nn.MultiheadAttention`` and of ``multi_head_attention_forward``. Inputs are (L, N, E) (or
    (N, L, E) when ``batch_first``)."""
    # The rule the mypy plugin runs on nn.MultiheadAttention and the Transformer layers: ranks, sizes, batches.
    kdim = k_proj_weight._data.shape[1] if use_separate_proj_weight and k_proj_weight is not None else None
    vdim = v_proj_weight._data.shape[1] if use_separate_proj_weight and v_proj_weight is not None else None
    check(RN.mha_shape, tuple(query._data.shape), tuple(key._data.shape), tuple(value._data.shape),
          embed_dim_to_check, kdim, vdim, batch_first, need_weights, average_attn_weights, num_heads)
    unbatched = query._data.ndim == 2
    if unbatched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    elif batch_first:
        query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
    tgt, bsz, e = query._data.shape
    hd = e // num_heads
    if use_separate_proj_weight:
        assert q_proj_weight is not None and k_proj_weight is not None and v_proj_weight is not None
        bq = bk = bv = None
        if in_proj_bias is not None:
            bq, bk, bv = in_proj_bias.chunk(3)
        q, k, v = linear(query, q_proj_weight, bq), linear(key, k_proj_weight, bk), linear(value, v_proj_weight, bv)
    else:
        assert in_proj_weight is not None
        wq, wk, wv = in_proj_weight.chunk(3)
        bq = bk = bv = None
        if in_proj_bias is not None:
            bq, bk, bv = in_proj_bias.chunk(3)
        q, k, v = linear(query, wq, bq), linear(key, wk, bk), linear(value, wv, bv)
    from ..ops.joining import cat

    def widen(m: Tensor | None) -> Tensor | None:  # a mask over one more key: that key kept
        return None if m is None else pad(m, (0, 1))

    if bias_k is not None and bias_v is not None:  # (torch: both or neither)
        k = cat([k, bias_k.expand(1, bsz, e)])
        v = cat([v, bias_v.expand(1, bsz, e)])
        attn_mask, key_padding_mask = widen(attn_mask), widen(key_padding_mask)
    src = k._data.shape[0]
    # (L, N, E) -> (N, H, L, hd)
    q = q.reshape(tgt, bsz, num_heads, hd).permute(1, 2, 0, 3)
    k = k.reshape(src, bsz, num_heads, hd).permute(1, 2, 0, 3) if static_k is None else \
        static_k.reshape(bsz, num_heads, -1, hd)
    v = v.reshape(src, bsz, num_heads, hd).permute(1, 2, 0, 3) if static_v is None else \
        static_v.reshape(bsz, num_heads, -1, hd)
    if add_zero_attn:
        k = cat([k, k.new_zeros((bsz, num_heads, 1, hd))], 2)
        v = cat([v, v.new_zeros((bsz, num_heads, 1, hd))], 2)
        attn_mask, key_padding_mask = widen(attn_mask), widen(key_padding_mask)
    src = k._data.shape[2]
    mask = None
    if attn_mask is not None:
        mask = attn_mask if attn_mask.dtype is not bool_ else q.new_zeros(tuple(attn_mask.shape)).masked_fill(
            attn_mask, float("-inf"))
        if mask._data.ndim == 3:
            mask = mask.reshape(bsz, num_heads, tgt, src)
    elif is_causal:
        mask = q.new_zeros((tgt, src)).masked_fill(~_causal(tgt, src, q), float("-inf"))
    if key_padding_mask is not None:
        kpm = key_padding_mask if key_padding_mask.dtype is not bool_ else q.new_zeros(
            tuple(key_padding_mask.shape)).masked_fill(key_padding_mask, float("-inf"))
        kpm = kpm.reshape(bsz, 1, 1, src)
        mask = kpm if mask is None else mask + kpm
    scores = q.matmul(k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
    if mask is not None:
        scores = scores + mask
    weights = softmax(scores, -1)
    if dropout_p > 0.0 and training:
        weights = dropout(weights, dropout_p, True)
    out = weights.matmul(v)  # (N, H, L, hd)
    out = out.permute(2, 0, 1, 3).reshape(tgt, bsz, e)
    out = linear(out, out_proj_weight, out_proj_bias)
    if batch_first and not unbatched:
        out = out.transpose(0, 1)
    if unbatched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    w = weights.mean(1) if average_attn_weights else weights
    return out, (w.squeeze(0) if unbatched else w)


# -- losses ---------------------------------------------------------------------------------------------

def legacy_reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    """torch's reading of the deprecated ``size_average``/``reduce`` flags: either given overrides
    ``reduction`` (each defaults to True), with torch's warning."""
    if size_average is None and reduce is None:
        return reduction
    import warnings

    warnings.warn("size_average and reduce args will be deprecated, please use reduction='sum' instead.",
                  stacklevel=3)
    if reduce is not None and not reduce:
        return "none"
    return "mean" if size_average is None or size_average else "sum"


def _value_error(op: str, problem: str) -> Any:
    fail("argument_error_invalid_value", op=op, problem=problem)


def _check_reduction(reduction: str, op: str) -> None:
    if reduction not in ("none", "mean", "sum"):
        _value_error(op, f"{reduction} is not a valid value for reduction")


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    _check_reduction(reduction, "loss")
    return loss


def _same_shape(input: Tensor, target: Tensor, op: str) -> None:
    from .._rules.broadcast import broadcast_pair

    check(broadcast_pair, tuple(input._data.shape), tuple(target._data.shape), op)


def _in_common_dtype(input: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
    """Both in their promoted dtype, where the kernel runs (a bool input with a float target is a float
    difference, not a bool subtraction)."""
    if input._data.dtype is target._data.dtype:
        return input, target
    common = promoted(input, target)
    return cast(input, common), cast(target, common)


def mse_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target, weight = autocast_inputs("mse_loss", input, target, weight)
    _same_shape(input, target, "mse_loss")
    input, target = _in_common_dtype(input, target)
    if weight is not None:  # torch's Python formula: the weighted squares, summed or over the weights' sum
        if tuple(weight._data.shape) != tuple(input._data.shape):
            fail("loss_error_target_shape_mismatch", op="mse_loss (weight)", input=tuple(input._data.shape),
                 target=tuple(weight._data.shape), expected=tuple(input._data.shape))
        d = input - target
        weighted = d * d * weight
        if reduction == "mean":
            return weighted.sum() / weight.sum()
        return _reduce(weighted, reduction)
    if reduction in ("mean", "sum", "none") and pointwise_loss_fusable(input, target, "mse_loss"):
        return pointwise_loss(input, target, "mse_loss", reduction)  # NOTE [fused pointwise losses]
    d = input - target
    return _reduce(d * d, reduction)


def l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
            reduction: str = "mean") -> Tensor:
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target = autocast_inputs("l1_loss", input, target)
    _same_shape(input, target, "l1_loss")
    return _reduce((input - target).abs(), reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target = autocast_inputs("smooth_l1_loss", input, target)
    _same_shape(input, target, "smooth_l1_loss")
    if beta < 0:  # torch's check (the composite answered a silent wrong loss)
        fail("argument_error_invalid", op="smooth_l1_loss", problem="smooth_l1_loss does not support negative values "
             "for beta.")
    input, target = _in_common_dtype(input, target)
    if beta > 0.0 and reduction in ("mean", "sum", "none") and pointwise_loss_fusable(input, target, "smooth_l1_loss"):
        return pointwise_loss(input, target, "smooth_l1_loss", reduction, beta=float(beta))
    d = (input - target).abs()
    if beta == 0.0:
        return _reduce(d, reduction)
    return _reduce(_where((d < beta), d * d * (0.5 / beta), d - 0.5 * beta), reduction)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0) -> Tensor:
    input, target = autocast_inputs("huber_loss", input, target)
    _same_shape(input, target, "huber_loss")
    if not delta > 0:  # torch's check (the composite answered a silent wrong loss)
        fail("argument_error_invalid", op="huber_loss", problem="huber_loss does not support non-positive values for "
             "delta.")
    if reduction in ("mean", "sum", "none") and pointwise_loss_fusable(input, target, "huber_loss"):
        return pointwise_loss(input, target, "huber_loss", reduction, delta=float(delta))
    d = (input - target).abs()
    return _reduce(_where((d < delta), d * d * 0.5, (d - 0.5 * delta) * delta), reduction)


def _class_dim_last(t: Tensor) -> Tensor:
    """(N, C, *d) -> (N * prod(d), C); (C,) -> (1, C)."""
    if t._data.ndim == 1:
        return t.unsqueeze(0)
    if t._data.ndim == 2:
        return t
    return t.movedim(1, -1).reshape(-1, t._data.shape[1])


def _lengths(lengths: Any) -> list[int]:
    values = lengths.tolist() if isinstance(lengths, Tensor) else lengths
    return [int(v) for v in values] if isinstance(values, (list, tuple)) else [int(values)]


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """Connectionist temporal classification: -log of the total probability of every alignment of each target
    to its input frames. ``log_probs`` (T, N, C) or (T, C) (log-softmaxed), ``targets`` (N, S) padded or the
    targets concatenated (1-D); lengths as tensors or lists. The forward (alpha) recursion is written in
    differentiable ops over the batch, so its gradient is the exact one torch's kernel computes."""
    op = "ctc_loss"
    _check_reduction(reduction, op)
    if isinstance(log_probs, Tensor) and log_probs.dim() and not log_probs._data.size:
        fail("argument_error_invalid", op=op, problem="log_probs tensor must not be empty")
    unbatched = log_probs.dim() == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    if lp.dim() != 3:
        _value_error(op, f"log_probs must be 2-D or 3-D, got {log_probs.dim()}-D")
    T, N, C = lp._data.shape
    in_len, tg_len = _lengths(input_lengths), _lengths(target_lengths)
    if len(in_len) != N or len(tg_len) != N:
        _value_error(op, f"input_lengths must be of size batch_size ({N}) and target_lengths too")
    if not 0 <= blank < C:
        _value_error(op, "blank must be in label range")
    flat = targets.reshape(-1).tolist() if targets.dim() <= 1 or unbatched else None
    rows, start = [], 0
    for b in range(N):
        if any(n > T for n in in_len) or in_len[b] < 0:
            _value_error(op, f"Expected input_lengths to have value at most {T}, but got value {in_len[b]}")
        if flat is not None:
            rows.append([int(v) for v in flat[start:start + tg_len[b]]])
            start += tg_len[b]
        else:
            if tg_len[b] > targets._data.shape[1]:
                _value_error(op, f"Expected tensor to have size at least {tg_len[b]} at dimension 1, but got size "
                                 f"{targets._data.shape[1]} for argument #2 'targets'")
            rows.append([int(v) for v in targets[b, : tg_len[b]].tolist()])
    S = 2 * max(tg_len, default=0) + 1
    ext = np.full((N, S), blank, np.int64)  # each target with a blank before, between and after its labels
    skip = np.zeros((N, S), bool)  # s may be reached from s - 2: a label that differs from the one before it
    for b, row in enumerate(rows):
        ext[b, 1 : 2 * len(row) : 2] = row
        for i in range(1, len(row)):
            skip[b, 2 * i + 1] = row[i] != row[i - 1]
    neg = -1e30 if lp.dtype is not float64_ else -1e300  # a finite -inf: logsumexp of it stays NaN-free
    ext_t = lp.new_tensor(ext, dtype=int64)
    emit = lp.gather(2, ext_t.unsqueeze(0).expand(T, N, S))  # (T, N, S): log p of each extended label
    pad = lp.new_full((N, 1), neg)
    pad2 = lp.new_full((N, 2), neg)
    skip_t = lp.new_tensor(skip, dtype=bool_)
    first = np.full((N, S), neg)
    first[:, 0] = 0.0
    first[[b for b in range(N) if tg_len[b] > 0], 1] = 0.0
    alpha = lp.new_tensor(first) + emit[0]
    for t in range(1, T):
        prev1 = stack([alpha, cat_([pad, alpha[:, :-1]], 1)], 0)
        prev2 = _where(skip_t, cat_([pad2, alpha[:, :-2]], 1), neg)
        new = stack([prev1[0], prev1[1], prev2], 0).logsumexp(0) + emit[t]
        active = lp.new_tensor([[t < n] for n in in_len], dtype=bool_)
        alpha = _where(active, new, alpha)
    ends = lp.new_tensor([[2 * n, max(2 * n - 1, 0)] for n in tg_len], dtype=int64)
    final = alpha.gather(1, ends)
    both = lp.new_tensor([[True, n > 0] for n in tg_len], dtype=bool_)
    loss = -_where(both, final, neg).logsumexp(1)
    # torch's kernel returns its gradient with respect to the logits before log_softmax (so exp(log_probs) more than
    # the derivative in log_probs, on each sample's frames); through log_softmax the extra term cancels. A term of
    # value 0 with that gradient gives log_probs.grad as torch's.
    frames = lp.new_tensor([[[t < n] for n in in_len] for t in range(T)], dtype=bool_)
    extra = (lp.exp() * frames).sum((0, 2))
    loss = loss + (extra - extra.detach())
    loss = _where(loss >= -neg / 2, float("inf"), loss)  # no alignment: torch's inf
    if zero_infinity:
        loss = _where(loss == float("inf"), 0.0, loss)
    if reduction == "mean":
        return (loss / lp.new_tensor([float(max(n, 1)) for n in tg_len])).mean()
    out = loss.sum() if reduction == "sum" else loss
    return out.squeeze(0) if unbatched and reduction == "none" else out


def _check_class_target_dtype(target: Tensor, op: str) -> None:
    """torch's class-index losses take int64 or uint8 targets only: int32 labels (``torch.from_numpy`` of a
    NumPy int32 array) are refused there, not converted, so here too."""
    if target.dtype not in (int64, uint8) and not target.is_floating_point():
        name = target.dtype.name
        fail("loss_error_target_dtype", op=op, dtype=RD.SCALAR_TYPE_NAMES.get(name, name))


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: Any = None,
             ignore_index: int = -100, reduce: Any = None, reduction: str = "mean") -> Tensor:
    """``-w[t] * input[t]`` per element; 'mean' divides by the summed weights of the non-ignored targets."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target, weight = autocast_inputs("nll_loss", input, target, weight)
    _check_class_target_dtype(target, "nll_loss")

    shape = check(RN.class_target_shape, tuple(input._data.shape), tuple(target._data.shape), op="nll_loss")
    c = input._data.shape[1] if input._data.ndim >= 2 else input._data.shape[0]
    logp = _class_dim_last(input)
    t = target.reshape(-1)
    valid = t != ignore_index
    safe = _where(valid, t, t.new_zeros(()))
    # checked on the device without waiting: a bad target raises at the next sync (as torch on CUDA)
    be(safe).check_range(safe._data, 0, c, "at_error_index_out_of_bounds", "nll_loss", index=None, dim=1, size=c)
    picked = take_along(logp, safe.unsqueeze(1), 1).squeeze(1)
    w = valid.to(input.dtype) if weight is None else weight.index_select(0, safe) * valid.to(input.dtype)
    loss = -picked * w
    if reduction == "none":
        loss = loss.reshape(shape)
    elif reduction == "sum":
        loss = loss.sum()
    elif reduction == "mean":
        loss = loss.sum() / w.sum()
    else:
        _check_reduction(reduction, "nll_loss")
    # torch's gradient is its native NllLossBackward of (grad, self, ...): under create_graph it requires grad
    # even though nll_loss is linear in the input (NOTE [formal input of a gradient])
    return tie_gradient(as_node(loss, _nll_node(input, reduction), input, target), input)


def _nll_node(input: Tensor, reduction: str) -> str:
    """torch's node of a class-index loss: nll_loss on (N, C) or (C,), nll_loss2d on (N, C, H, W) and on other
    shapes flattened to it, whose unreduced loss is viewed back to the target's shape."""
    nd = input._data.ndim
    return "NllLossBackward0" if nd <= 2 else "NllLoss2DBackward0" if nd == 4 or reduction != "none" else "ViewBackward0"


def _cross_entropy_fused(input: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int, reduction: str,
                         label_smoothing: float) -> Tensor:
    """Class-index targets as one primitive (``ops.loss``): the same checks and errors as the composite."""
    _check_class_target_dtype(target, "nll_loss")
    shape = check(RN.class_target_shape, tuple(input._data.shape), tuple(target._data.shape), op="nll_loss")
    _check_reduction(reduction, "cross_entropy")
    c = input._data.shape[1]
    t = target.reshape(-1)
    be(t).check_range(t._data, 0, c, "at_error_index_out_of_bounds", "nll_loss", skip=ignore_index, index=None,
                      dim=1, size=c)
    loss = cross_entropy_rows(_class_dim_last(input), t, weight, ignore_index, reduction, label_smoothing)
    loss = loss.reshape(shape) if reduction == "none" else loss
    # torch's last node: nll_loss's, or with label smoothing the sum of its two terms
    return as_node(loss, "AddBackward0" if label_smoothing > 0 else _nll_node(input, reduction), input, target)


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: Any = None,
                  ignore_index: int = -100, reduce: Any = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """log_softmax over the class dim (1, or 0 for unbatched input) then nll_loss; class-probability targets
    (same shape as the input) and label smoothing as in torch."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target, weight = autocast_inputs("cross_entropy", input, target, weight)
    if not target.is_floating_point() and cross_entropy_fusable(input, target, weight):
        return _cross_entropy_fused(input, target, weight, ignore_index, reduction, label_smoothing)
    if input._data.ndim == 0:  # no class dim (torch reads dim 1 of the 0-d input: an IndexError)
        fail("dimension_error_out_of_range", op="cross_entropy", lo=-1, hi=0, dim=1)
    cdim = 1 if input._data.ndim >= 2 else 0
    logp = log_softmax(input, cdim)
    c = input._data.shape[cdim]
    if target.is_floating_point():
        if tuple(target._data.shape) != tuple(input._data.shape):
            fail("loss_error_target_shape_mismatch", op="cross_entropy", input=tuple(input._data.shape),
                 target=tuple(target._data.shape), expected=tuple(input._data.shape))
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / c
        prod = logp * target
        if weight is not None:
            prod = prod * weight.reshape((-1,) + (1,) * (input._data.ndim - cdim - 1))
        loss = -prod.sum(cdim)
        if reduction == "mean":
            return loss.sum() / max(input.numel() // c, 1) if input.numel() else loss.sum() * float("nan")
        return _reduce(loss, reduction)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0:
        return nll
    ignore = target == ignore_index
    wv = weight.reshape((-1,) + (1,) * (input._data.ndim - cdim - 1)) if weight is not None else None
    smooth = -(logp * wv).sum(cdim) if wv is not None else -logp.sum(cdim)
    smooth = smooth.masked_fill(ignore, 0.0)
    if reduction == "mean":
        if weight is not None:
            kept = target.masked_select(~ignore).reshape(-1)
            smooth_r = smooth.sum() / weight.index_select(0, kept).sum()
        else:
            smooth_r = smooth.sum() / (~ignore).sum().to(input.dtype)
    elif reduction == "sum":
        smooth_r = smooth.sum()
    else:
        smooth_r = smooth
    return nll * (1 - label_smoothing) + smooth_r * (label_smoothing / c)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: Any = None,
                         reduce: Any = None, reduction: str = "mean") -> Tensor:
    """``-(t log x + (1 - t) log(1 - x))`` with the logs clamped at -100, as torch."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target, weight = autocast_inputs("binary_cross_entropy", input, target, weight)
    if tuple(input._data.shape) != tuple(target._data.shape):
        fail("loss_error_target_shape_mismatch", op="binary_cross_entropy", input=tuple(input._data.shape),
             target=tuple(target._data.shape), expected=tuple(input._data.shape))
    if input._data.dtype is not target._data.dtype:  # torch's kernel does not promote
        fail("dtype_error_mismatch", op="binary_cross_entropy", what="input and target", a=input.dtype.name,
             b=target.dtype.name)
    if input._data.size and not bool((input >= 0).logical_and(input <= 1).all()):  # (NaN is outside too)
        fail("argument_error_invalid", op="binary_cross_entropy",
             problem="all elements of input should be between 0 and 1")
    if (weight is None and reduction in ("mean", "sum", "none")
            and pointwise_loss_fusable(input, target, "binary_cross_entropy")):
        return pointwise_loss(input, target, "binary_cross_entropy", reduction)
    loss = -(target * input.log().clamp(min=-100.0) + (1 - target) * (1 - input).log().clamp(min=-100.0))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Stable ``BCE(sigmoid(x), t)``: ``(1 - t) x + (1 + (p - 1) t) * softplus(-x)``."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target, weight, pos_weight = autocast_inputs("binary_cross_entropy_with_logits", input, target, weight, pos_weight)
    if tuple(input._data.shape) != tuple(target._data.shape):
        fail("loss_error_target_shape_mismatch", op="binary_cross_entropy_with_logits", input=tuple(input._data.shape),
             target=tuple(target._data.shape), expected=tuple(input._data.shape))
    if (weight is None and pos_weight is None and reduction in ("mean", "sum", "none")
            and pointwise_loss_fusable(input, target, "binary_cross_entropy_with_logits")):
        return pointwise_loss(input, target, "binary_cross_entropy_with_logits", reduction)
    sp = softplus(-input)
    if pos_weight is not None:
        loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * sp
    else:
        loss = (1 - target) * input + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def kl_div(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """Pointwise ``target * (log target - input)`` (input holds log-probabilities)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target = autocast_inputs("kl_div", input, target)
    _same_shape(input, target, "kl_div")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _where((target > 0), target * (target.clamp(min=1e-45).log() - input), target * 0)
    if reduction == "batchmean":
        return loss.sum() / input._data.shape[0] if input._data.ndim else loss.sum()
    return _reduce(loss, reduction)


def _no_derivative(t: Tensor | None, name: str, op: str) -> None:
    """torch's kernels for some losses define no derivative for an argument, and refuse one that requires grad."""
    if t is not None and t.requires_grad and is_grad_enabled():
        fail("autograd_error_not_differentiable", op=op, problem=(
            f"The function '{op}' is not differentiable with respect to argument '{name}'. This input cannot have "
            "requires_grad True."))


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """``0.5 (log var + (input - target)^2 / var)`` (+ ``0.5 log 2 pi`` when ``full``); ``var`` may lack the last
    dim or have size 1 in one dim (one variance shared), and is clamped at ``eps`` without a gradient there."""
    op = "gaussian_nll_loss"
    if not isinstance(var, Tensor):
        if var < 0:
            _value_error(op, "var has negative entry/entries")
        v = input.new_full(tuple(input._data.shape), float(var))
    elif bool((var < 0).any()):
        _value_error(op, "var has negative entry/entries")
    else:
        v = var
    i_shape, v_shape = tuple(input._data.shape), tuple(v._data.shape)
    if v_shape != i_shape:
        if i_shape[:-1] == v_shape:
            v = v.unsqueeze(-1)
        elif not (len(i_shape) == len(v_shape) and sum(y for x, y in zip(i_shape, v_shape, strict=True) if x != y) == 1):
            _value_error(op, f"var is of incorrect size (var {v_shape} for input {i_shape})")
    _check_reduction(reduction, op)
    with no_grad():
        floor = v.clamp(min=eps) - v  # the clamp moves the value only; the gradient stays var's, as torch's
    v = v + floor
    loss = 0.5 * (v.log() + (input - target) ** 2 / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: Any = None, eps: float = 1e-8, reduce: Any = None, reduction: str = "mean") -> Tensor:
    """``exp(input) - target * input`` (``log_input``) or ``input - target * log(input + eps)``; ``full`` adds
    Stirling's approximation of ``log(target!)`` where ``target > 1``."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target = autocast_inputs("poisson_nll_loss", input, target)
    _check_reduction(reduction, "poisson_nll_loss")
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0, size_average: Any = None,
                        reduce: Any = None, reduction: str = "mean") -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    input1, input2, target = autocast_inputs("margin_ranking_loss", input1, input2, target)
    if not input1.dim() == input2.dim() == target.dim():
        fail("loss_error_target_shape_mismatch", op="margin_ranking_loss", input=tuple(input1._data.shape),
             target=tuple(target._data.shape), expected=f"{input1.dim()}-D, as input2 {tuple(input2._data.shape)}")
    return _reduce((-target * (input1 - input2) + margin).clamp(min=0), reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average: Any = None,
                         reduce: Any = None, reduction: str = "mean") -> Tensor:
    """``input`` where ``target`` is 1, ``max(0, margin - input)`` where it is -1 (both terms, as torch, for
    other target values)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target = autocast_inputs("hinge_embedding_loss", input, target)
    if input._data.dtype.kind in "iu":  # torch converts the margin to the integer dtype (checked, truncated)
        margin = int(check_fill_value(margin, input.dtype.name, "hinge_embedding_loss"))
    zeros = input.new_zeros(())
    loss = _where(target != 1, (margin - input).clamp(min=0), zeros) + _where(target != -1, input, zeros)
    return _reduce(loss, reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
                     reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-target * input))``."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target = autocast_inputs("soft_margin_loss", input, target)
    _same_shape(input, target, "soft_margin_loss")
    both = broadcast_pair(tuple(input._data.shape), tuple(target._data.shape), "soft_margin_loss")
    if both != tuple(input._data.shape):  # torch's kernel writes the loss into a tensor of the input's shape
        fail("inplace_error_shape_change", op="soft_margin_loss", shape=tuple(input._data.shape), result=both)
    _no_derivative(target, "target", "soft_margin_loss")
    return _reduce((1 + (-input * target).exp()).log(), reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: Any = None,
                                reduce: Any = None, reduction: str = "mean") -> Tensor:
    """Binary cross-entropy with logits per class, averaged over the classes (the last dim)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if input._data.ndim == 0:  # no class dim (torch: an IndexError, as here)
        fail("dimension_error_out_of_range", op="multilabel_soft_margin_loss", lo=-1, hi=0, dim=-1)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(dim=input.dim() - 1) / input._data.shape[-1]
    _check_reduction(reduction, "multilabel_soft_margin_loss")
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0, size_average: Any = None,
                          reduce: Any = None, reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` where ``target`` is 1, ``max(0, cos(x1, x2) - margin)`` where it is -1; rows of 1-D or
    2-D inputs, one target each."""
    op = "cosine_embedding_loss"
    input1, input2, target = autocast_inputs("cosine_embedding_loss", input1, input2, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    if target.dim() not in (0, 1) or input1.dim() != target.dim() + 1:
        fail("loss_error_target_shape_mismatch", op=op, input=tuple(input1._data.shape),
             target=tuple(target._data.shape), expected=tuple(input1._data.shape[:1]) if input1.dim() == 2 else ())
    if tuple(input1._data.shape) != tuple(input2._data.shape):
        fail("loss_error_target_shape_mismatch", op=op, input=tuple(input1._data.shape),
             target=f"input2 {tuple(input2._data.shape)}", expected=tuple(input1._data.shape))
    d = input1.dim() - 1
    eps = 1e-12  # torch's: keeps a zero row's cosine finite
    cos = (input1 * input2).sum(d) / (((input1 * input1).sum(d) + eps) * ((input2 * input2).sum(d) + eps)).sqrt()
    zeros = cos.new_zeros(())
    loss = _where(target == 1, 1 - cos, zeros) + _where(target == -1, (cos - margin).clamp(min=0), zeros)
    return _reduce(loss, reduction)


def _triplet(anchor: Tensor, positive: Tensor, negative: Tensor, distance: Any, margin: float, swap: bool,
             reduction: str, op: str) -> Tensor:
    if not anchor.dim() == positive.dim() == negative.dim():
        fail("argument_error_invalid", op=op, problem=(
            f"The anchor, positive, and negative tensors are expected to have the same number of dimensions, but "
            f"got: anchor {anchor.dim()}D, positive {positive.dim()}D, and negative {negative.dim()}D inputs"))
    d_pos, d_neg = distance(anchor, positive), distance(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(distance(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp(min=0), reduction)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, margin + d(a, p) - d(a, n))`` with ``d`` the p-norm ``pairwise_distance``."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    anchor, positive, negative = autocast_inputs("triplet_margin_loss", anchor, positive, negative)
    if margin <= 0:
        _value_error("triplet_margin_loss", f"margin must be greater than 0, got {margin}")
    return _triplet(anchor, positive, negative, lambda a, b: pairwise_distance(a, b, p, eps), margin, swap,
                    reduction, "triplet_margin_loss")


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Any = None, margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    """``triplet_margin_loss`` with any distance (``pairwise_distance`` by default)."""
    op = "triplet_margin_with_distance_loss"
    _check_reduction(reduction, op)
    if margin <= 0:
        _value_error(op, f"margin must be greater than 0, got {margin}")
    return _triplet(anchor, positive, negative, distance_function or pairwise_distance, margin, swap, reduction, op)


def _class_targets(input: Tensor, target: Tensor, op: str) -> None:
    if input.dim() not in (1, 2) or target.dim() > 1 or (input.dim() == 2 and target.dim() == 1
                                                           and target._data.shape[0] != input._data.shape[0]):
        fail("loss_error_target_shape_mismatch", op=op, input=tuple(input._data.shape),
             target=tuple(target._data.shape), expected=tuple(input._data.shape[:1]) if input.dim() == 2 else ())


def multi_margin_loss(input: Tensor, target: Tensor, p: float = 1, margin: float = 1.0, weight: Tensor | None = None,
                      size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> Tensor:
    """Per row: ``sum over classes j != y of max(0, margin - x[y] + x[j])^p``, times ``weight[y]``, over C.
    ``p`` is 1 or 2, compared as torch's Python does (so 2.0 is taken, and NaN is the ValueError)."""
    op = "multi_margin_loss"
    input, target, weight = autocast_inputs("multi_margin_loss", input, target, weight)
    reduction = legacy_reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        _value_error(op, "only p == 1 and p == 2 supported")
    _class_targets(input, target, op)
    _no_derivative(weight, "weight", op)
    x = input.unsqueeze(0) if input.dim() == 1 else input
    y = target.reshape(-1, 1)
    c = x._data.shape[-1]
    if c == 0:
        fail("argument_error_invalid", op=op, problem=f"Expected non-empty vector or matrix with optional 0-dim "
                                                      f"batch size, but got: {list(input._data.shape)}")
    if y._data.size and not bool((y >= 0).logical_and(y < c).all()):
        fail("argument_error_invalid", op=op, problem="target out of range")
    z = margin - take_along(x, y, 1) + x
    margins = _where(z > 0, z, z.new_zeros(()))  # torch's kernel adds a term only where it is > 0 (a NaN one too)
    if p == 2:
        margins = margins * margins
    if weight is not None:
        margins = margins * weight[y]
    own = arange(c, device=x.device) == y  # the target's own class adds nothing
    loss = margins.masked_fill(own, 0).sum(1) / c
    return _reduce(loss.reshape(target._data.shape), reduction)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
                           reduction: str = "mean") -> Tensor:
    """Per row: the target classes are ``target``'s entries up to its first -1; ``sum over targets j and other
    classes i of max(0, 1 - (x[j] - x[i]))``, over C."""
    op = "multilabel_margin_loss"
    input, target = autocast_inputs("multilabel_margin_loss", input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    if tuple(input._data.shape) != tuple(target._data.shape) or input.dim() not in (1, 2):
        fail("loss_error_target_shape_mismatch", op=op, input=tuple(input._data.shape),
             target=tuple(target._data.shape), expected=tuple(input._data.shape))
    x = input.unsqueeze(0) if input.dim() == 1 else input
    t = target.unsqueeze(0) if target.dim() == 1 else target
    c = x._data.shape[-1]
    if t._data.size and not bool((t >= -1).logical_and(t < c).all()):
        fail("argument_error_invalid", op=op, problem="argument #2 'target' is out of range")
    valid = (t >= 0).to(int64).cumprod(1).to(bool_)  # entries before the first -1
    idx = t.clamp(min=0)
    onehot = (idx.unsqueeze(-1) == arange(c, device=x.device)) & valid.unsqueeze(-1)  # (N, K, C)
    is_target = onehot.any(1)  # (N, C)
    xt = take_along(x, idx, 1)  # (N, K): the target classes' scores
    z = 1 - (xt.unsqueeze(-1) - x.unsqueeze(1))  # (N, K, C)
    hinge = _where(z > 0, z, z.new_zeros(()))  # as torch's kernel, a term only where it is > 0 (a NaN one: none)
    keep = valid.unsqueeze(-1) & ~is_target.unsqueeze(1)
    loss = hinge.masked_fill(~keep, 0).sum((1, 2)) / c
    return _reduce(loss if input.dim() == 2 else loss.squeeze(0), reduction)


# -- more of torch.nn.functional --------------------------------------------------------------------------

def relu_(input: Tensor) -> Tensor:
    return relu(input, inplace=True)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, inplace=True)


def selu_(input: Tensor) -> Tensor:
    return selu(input, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, inplace=True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return _activation(A.threshold, input, True, threshold, value)


def _rrelu(input: Tensor, lower: float, upper: float, training: bool) -> Tensor:
    if training:
        with no_grad():
            slope = input.new_empty(tuple(input._data.shape)).uniform_(lower, upper)
        return _where(input >= 0, input, input * slope)
    return A.leaky_relu(input, (lower + upper) / 2)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Leaky ReLU with a slope drawn from U(lower, upper) per element in training, ``(lower + upper) / 2`` else."""
    return _activation(_rrelu, input, inplace, lower, upper, training)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    return rrelu(input, lower, upper, training, inplace=True)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distances between the rows of an (N, M) input, the upper triangle row by row: N(N-1)/2 values."""
    if input.dim() != 2:
        fail("argument_error_invalid", op="pdist", problem=f"pdist only supports 2D tensors, got: {input.dim()}D")
    n = input._data.shape[0]
    i, j = triu_indices(n, n, 1, device=input.device).unbind(0)
    return as_node((input.index_select(0, i) - input.index_select(0, j)).norm(p, -1), "PdistBackward0", input)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """Samples from the Gumbel-softmax distribution; ``hard`` returns one-hot samples whose gradient is the soft
    sample's (the straight-through estimator)."""
    with no_grad():
        gumbels = -logits.new_empty(tuple(logits._data.shape)).exponential_().log()
    y = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y
    index = y.argmax(dim, keepdim=True)
    y_hard = logits.new_zeros(tuple(logits._data.shape)).scatter_(dim, index, 1.0)
    return y_hard - y.detach() + y


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropout that keeps SELU's zero mean and unit variance: dropped units take SELU's negative saturation
    value, then an affine map restores the statistics."""
    return _activation(_alpha_dropout, input, inplace and training, p, training, False)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """``alpha_dropout`` of whole channels (every dim after the first two shares one draw)."""
    return _activation(_alpha_dropout, input, inplace and training, p, training, True)


def _alpha_dropout(input: Tensor, p: float, training: bool, feature: bool) -> Tensor:
    check_dropout_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0
    alpha = -1.7580993408473766  # -selu's scale * alpha: the value a unit saturates to
    a = ((1 - p) * (1 + p * alpha * alpha)) ** -0.5
    shape = tuple(input._data.shape)
    if feature:
        shape = shape[:2] + (1,) * (len(shape) - 2)
    keep = dropout_mask(shape, p, input.dtype, input.device) * (1 - p)  # 1 kept, 0 dropped
    return input * keep * a + (1 - keep) * (alpha * a) + (-a * alpha * p)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """``x / (k + alpha * mean of x^2 over ``size`` neighbouring channels)^beta``, the window centred (padded
    with zeros) as torch's."""
    if input.dim() < 3:
        _value_error("local_response_norm", f"Expected 3D or higher dimensionality input (got {input.dim()} dimensions)")
    if input._data.size == 0:
        return input
    sq = (input * input).unsqueeze(1)  # (N, 1, C, *)
    n, c = input._data.shape[:2]
    flat = sq.reshape(n, 1, c, -1)
    flat = pad(flat, (0, 0, size // 2, (size - 1) // 2))
    div = avg_pool2d(flat, (size, 1), stride=1).reshape(input._data.shape)
    return input / (div * alpha + k) ** beta


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Split the channels into ``groups`` and interleave them: (N, g * c, *) -> view (N, g, c, *) -> (N, c, g, *)."""
    if input._data.ndim <= 2:
        fail("argument_error_invalid", op="channel_shuffle", problem=f"channel_shuffle expects input with > 2 dims, "
             f"but got input with sizes {list(input._data.shape)}")
    n, ch = input._data.shape[:2]
    if groups <= 0 or ch % groups:
        fail("argument_error_invalid", op="channel_shuffle", problem=(
            f"Number of channels must be divisible by groups. Got {ch} channels and {groups} groups."
            if groups > 0 else f"Number of groups to divide channels in must be positive. Value of groups:{groups}"))
    rest = tuple(input._data.shape[2:])
    return input.reshape(n, groups, ch // groups, *rest).transpose(1, 2).reshape(n, ch, *rest)


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """torch's kernel-level ``channel_shuffle``: the same op (one definition), under torch's other name."""
    return channel_shuffle(input, groups)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride: Any = None, ceil_mode: bool = False) -> Tensor:
    """``(sum over the window of x^p)^(1/p)``: an average pool of ``x^p`` times the window size."""
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * relu(out.abs())).mul(kernel_size).pow(1.0 / norm_type)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False) -> Tensor:
    """The 2-D ``lp_pool1d``."""
    kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * relu(out.abs())).mul(kh * kw).pow(1.0 / norm_type)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False) -> Tensor:
    """The 3-D ``lp_pool1d``."""
    kd, kh, kw = (kernel_size,) * 3 if isinstance(kernel_size, int) else kernel_size
    out = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * relu(out.abs())).mul(kd * kh * kw).pow(1.0 / norm_type)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """``adaptive_max_pool1d`` that always returns ``(output, indices)`` (``return_indices`` is ignored, as torch)."""
    return _adaptive_max(input, 1, output_size, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """``adaptive_max_pool2d`` that always returns ``(output, indices)``."""
    return _adaptive_max(input, 2, output_size, True)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """``adaptive_max_pool3d`` that always returns ``(output, indices)``."""
    return _adaptive_max(input, 3, output_size, True)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated alias of ``interpolate(mode='nearest')``."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated alias of ``interpolate(mode='bilinear', align_corners=True)``."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """Deprecated alias of ``interpolate``."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def _dtype_kind_checked(name: str, fn: Any) -> Any:
    """``fn`` behind its dtype kind (``_rules.dtypes.DTYPE_KINDS``, the table the plugin reads too): an input
    of a dtype torch has no kernel for is refused with a code before any work, never computed in another
    dtype. The kind is the input's, or for a ``promoted_...`` kind the promoted dtype of the first two
    tensor arguments (``mse_loss`` of an int input and a float target runs in float, as in torch)."""
    kind = RD.DTYPE_KINDS[name]
    first, second = (list(inspect.signature(fn).parameters) + [""])[:2]
    promoted = kind in RD.PROMOTED_KINDS
    passed: set[Any] = set()  # the array dtypes (pairs, for a promoted kind) seen to pass: each checked once

    def checked(*args: Any, **kwargs: Any) -> Any:
        x = args[0] if args else kwargs.get(first)
        if isinstance(x, Tensor):
            y = (args[1] if len(args) > 1 else kwargs.get(second)) if promoted else None
            key = (x._data.dtype, y._data.dtype) if isinstance(y, Tensor) else x._data.dtype
            if key not in passed:
                dtype = x.dtype.name
                if isinstance(y, Tensor):
                    dtype = RD.promote_types(dtype, y.dtype.name)
                check(RD.check_kind, name, dtype, empty=not x._data.size)
                if x._data.size:  # (an empty input passes some kinds whatever its dtype: not remembered)
                    passed.add(key)
        return fn(*args, **kwargs)

    return functools.update_wrapper(checked, fn)


def _guard_arguments() -> None:
    """Every public function here behind the registry's argument guard, as the registered ops are: a call torch
    would refuse (an unknown keyword, an argument given twice, one too many, a non-tensor input, a non-bool
    flag) is a coded ``TypeError``, not the Python error it would hit inside the function. Those taken from the
    op table already have their guard (``__wrapped__``). An op with a dtype kind checks it inside the guard
    (torch's argument parser refuses a bad call before any kernel looks at the dtype)."""
    from ..ops._registry import _guarded

    space = globals()
    for name in [*__all__, *(n for n, v in space.items() if inspect.isfunction(v) and v.__module__ == __name__
                             and not n.startswith("_") and n not in __all__)]:
        fn = space[name]
        if not inspect.isfunction(fn):
            continue
        if name in RD.DTYPE_KINDS:
            space[name] = _guarded(name, _dtype_kind_checked(name, inspect.unwrap(fn)), "nn.functional")
        elif not hasattr(fn, "__wrapped__"):
            space[name] = _guarded(name, fn, "nn.functional")


_guard_arguments()
