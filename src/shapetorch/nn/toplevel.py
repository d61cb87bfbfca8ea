"""The nn functions torch also has in its own namespace (``torch.conv2d``, ``torch.layer_norm``,
``torch.embedding``, ``torch.lstm_cell``, ...), with torch's signatures for them there.

They are ``nn.functional``'s functions: most take the same arguments; the others differ as torch's do
(``torch.embedding(weight, indices)`` takes its arguments in the other order, ``torch.batch_norm`` takes
every argument positionally, losses take the reduction as ATen's number: 0 none, 1 mean, 2 sum).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._tensor import Tensor
from ..ops._common import autocast_inputs
from ..ops._registry import public
from . import functional as F

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(reduction: Any) -> str:
    return _REDUCTIONS.get(reduction, str(reduction)) if isinstance(reduction, int) else reduction


def _register(*fns: Any) -> None:
    for fn in fns:
        public("nn", method=False)(fn)


# the functions whose signature in torch's namespace is nn.functional's
_register(F.conv1d, F.conv2d, F.conv3d, F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d, F.avg_pool1d,
          F.adaptive_avg_pool1d, F.pixel_shuffle, F.pixel_unshuffle, F.channel_shuffle, F.pdist, F.cosine_similarity,
          F.pairwise_distance, F.bilinear, F.rms_norm, F.native_channel_shuffle, F.conv_tbc)


@public("nn", method=False)
def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Sequence[int], padding: Sequence[int],
                dilation: Sequence[int], transposed: bool, output_padding: Sequence[int], groups: int) -> Tensor:
    """ATen's one convolution: ``transposed`` picks conv_transpose, the weight's rank the 1-D, 2-D or 3-D one."""
    nd = weight.dim() - 2
    if transposed:
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
        out: Tensor = fn(input, weight, bias, tuple(stride), tuple(padding), tuple(output_padding), groups,
                         tuple(dilation))
        return out
    out = (F.conv1d, F.conv2d, F.conv3d)[nd - 1](input, weight, bias, tuple(stride), tuple(padding), tuple(dilation),
                                                 groups)
    return out


@public("nn", method=False)
def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    return F.embedding(indices, weight, padding_idx if padding_idx >= 0 else None,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


@public("nn", method=False)
def layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5, cudnn_enable: bool = True) -> Tensor:
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


@public("nn", method=False)
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5, cudnn_enabled: bool = True) -> Tensor:
    return F.group_norm(input, num_groups, weight, bias, eps)


@public("nn", method=False)
def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
               running_var: Tensor | None, training: bool, momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


@public("nn", method=False)
def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
                  running_var: Tensor | None, use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def _pool(fn: Any, name: str) -> Any:
    def pool(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0, dilation: Any = 1,
             ceil_mode: bool = False) -> Any:
        return fn(input, kernel_size, stride if stride != () else None, padding, dilation, ceil_mode=ceil_mode)

    pool.__name__ = pool.__qualname__ = name
    return pool


_register(_pool(F.max_pool1d, "max_pool1d"), _pool(F.max_pool2d, "max_pool2d"), _pool(F.max_pool3d, "max_pool3d"),
          _pool(F.max_pool1d_with_indices, "max_pool1d_with_indices"))


@public("nn", method=False)
def adaptive_max_pool1d(input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:
    out: tuple[Tensor, Tensor] = F.adaptive_max_pool1d(input, output_size, return_indices=True)
    return out


@public("nn", method=False)
def constant_pad_nd(input: Tensor, pad: Sequence[int], value: float = 0) -> Tensor:
    return F.pad(input, tuple(pad), "constant", value)


def _dropout_family(fn: Any, name: str, inplace: bool) -> Any:
    def dropout(input: Tensor, p: float, train: bool) -> Tensor:
        out: Tensor = fn(input, p, train, inplace)
        return out

    dropout.__name__ = dropout.__qualname__ = name
    return dropout


_register(_dropout_family(F.dropout, "dropout_", True), _dropout_family(F.alpha_dropout, "alpha_dropout", False),
          _dropout_family(F.alpha_dropout, "alpha_dropout_", True),
          _dropout_family(F.feature_alpha_dropout, "feature_alpha_dropout", False),
          _dropout_family(F.feature_alpha_dropout, "feature_alpha_dropout_", True),
          _dropout_family(F.dropout2d, "feature_dropout", False), _dropout_family(F.dropout2d, "feature_dropout_", True))


@public("nn", method=False)
def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return F.celu(input, alpha, inplace=True)


@public("nn", method=False)
def selu_(input: Tensor) -> Tensor:
    return F.selu(input, inplace=True)


# -- losses: the reduction as a number ----------------------------------------------------------------------------

@public("nn", method=False)
def kl_div(input: Tensor, target: Tensor, reduction: Any = 1, *, log_target: bool = False) -> Tensor:
    # ATen's kl_div with "mean" is the mean over every element (F.kl_div's "mean", not its "batchmean")
    return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


@public("nn", method=False)
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     pos_weight: Tensor | None = None, reduction: Any = 1) -> Tensor:
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                                              pos_weight=pos_weight)


@public("nn", method=False)
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: Any = 1) -> Tensor:
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


@public("nn", method=False)
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, reduction: Any = 1) -> Tensor:
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


@public("nn", method=False)
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: Any = 1) -> Tensor:
    """ATen's margin ranking loss: the operands broadcast (nn.functional's checks that they have one shape)."""
    input1, input2, target = autocast_inputs("margin_ranking_loss", input1, input2, target)
    loss = (-target * (input1 - input2) + margin).clamp_min(0)
    red = _reduction(reduction)
    return loss.mean() if red == "mean" else loss.sum() if red == "sum" else loss


@public("nn", method=False)
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: Any) -> Tensor:
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


@public("nn", method=False)
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, reduction: Any = 1) -> Tensor:
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=_reduction(reduction))


@public("nn", method=False)
def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: Any = 1, zero_infinity: bool = False) -> Tensor:
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _reduction(reduction), zero_infinity)


# -- recurrent cells -------------------------------------------------------------------------------------------------

def _affine(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    return F.linear(x, w, b)


@public("nn", method=False)
def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
                  b_hh: Tensor | None = None) -> Tensor:
    out: Tensor = (_affine(input, w_ih, b_ih) + _affine(hx, w_hh, b_hh)).tanh()
    return out


@public("nn", method=False)
def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
                  b_hh: Tensor | None = None) -> Tensor:
    out: Tensor = (_affine(input, w_ih, b_ih) + _affine(hx, w_hh, b_hh)).relu()
    return out


@public("nn", method=False)
def lstm_cell(input: Tensor, hx: Sequence[Tensor], w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
              b_hh: Tensor | None = None) -> tuple[Tensor, Tensor]:
    h, c = hx
    i, f, g, o = (_affine(input, w_ih, b_ih) + _affine(h, w_hh, b_hh)).chunk(4, -1)
    c_new = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c_new.tanh(), c_new


@public("nn", method=False)
def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
             b_hh: Tensor | None = None) -> Tensor:
    ir, iz, in_ = _affine(input, w_ih, b_ih).chunk(3, -1)
    hr, hz, hn = _affine(hx, w_hh, b_hh).chunk(3, -1)
    r, z = (ir + hr).sigmoid(), (iz + hz).sigmoid()
    n = (in_ + r * hn).tanh()
    out: Tensor = (1 - z) * n + z * hx
    return out


# -- grid sampling with ATen's numbered modes ----------------------------------------------------------------------

@public("nn", method=False)
def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    return F.grid_sample(input, grid, ("bilinear", "nearest", "bicubic")[interpolation_mode],
                         ("zeros", "border", "reflection")[padding_mode], align_corners)


@public("nn", method=False)
def affine_grid_generator(theta: Tensor, size: Sequence[int], align_corners: bool) -> Tensor:
    return F.affine_grid(theta, size, align_corners)
