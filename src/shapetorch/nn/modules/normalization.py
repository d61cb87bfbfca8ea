"""BatchNorm1d/2d, LayerNorm, GroupNorm, InstanceNorm1d/2d, RMSNorm."""

from __future__ import annotations

import warnings
from typing import Any

from ..._dtype import int64
from ..._errors import fail
from ..._rules import nn as RN
from ..._tensor import Tensor
from ...autograd.function import Function
from ...ops._common import check
from ...ops.creation import ones, tensor, zeros
from ...ops.joining import cat
from ...ops.normalization import count_batch
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


def _norm_state(m: Module, n: int, bias: bool, affine: bool, track: bool, device: Any, dtype: Any) -> None:
    """The parameters and buffers of a batch or instance norm layer, in torch's order: weight (ones) and bias
    (zeros) when affine, running mean (zeros), variance (ones) and batch count when tracking."""
    kw = {"device": device, "dtype": dtype}
    m.register_parameter("weight", Parameter(ones(n, **kw)) if affine else None)
    m.register_parameter("bias", Parameter(zeros(n, **kw)) if bias else None)
    m.register_buffer("running_mean", zeros(n, **kw) if track else None)
    m.register_buffer("running_var", ones(n, **kw) if track else None)
    m.register_buffer("num_batches_tracked", tensor(0, dtype=int64, device=device) if track else None)


class _NormBase(Module):
    """What batch and instance norm share: resetting the running statistics and the affine parameters."""

    affine: bool
    track_running_stats: bool

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def extra_repr(self) -> str:
        # torch 2.13 shows whether there is a bias parameter, affine or not
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    _fixed_rank = True  # BatchNorm1d/2d/3d take given ranks; SyncBatchNorm any of 2 or more

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats, self._bias = affine, track_running_stats, bias
        _norm_state(self, num_features, affine and bias, affine, track_running_stats, device, dtype)
        self.reset_parameters()  # as torch: what a buffer registration hook returned is reset in place

    def forward(self, input: Tensor) -> Tensor:
        if self._fixed_rank:
            check(RN.batch_norm_rank_check, tuple(input.shape), op=type(self).__name__)
        check(RN.channels_check, tuple(input.shape), self.num_features, op=type(self).__name__)
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            count_batch(self.num_batches_tracked)
            if self.momentum is None:
                momentum = 1.0 / float(self.num_batches_tracked.item())
        use_batch = self.training or self.running_mean is None
        return F.batch_norm(input, self.running_mean if not self.training or self.track_running_stats else None,
                            self.running_var if not self.training or self.track_running_stats else None,
                            self.weight, self.bias, use_batch, momentum, self.eps)



class BatchNorm1d(_BatchNorm):
    pass


class BatchNorm2d(_BatchNorm):
    pass


class BatchNorm3d(_BatchNorm):
    pass


class SyncBatchNorm(_BatchNorm):
    """``BatchNorm`` whose batch statistics are shared across processes in torch's distributed training. shapetorch
    has no process groups, so this is torch's single-process path: a batch norm over the local batch, taking any
    input of two or more dims."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group: Any = None, device: Any = None, dtype: Any = None,
                 *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    _fixed_rank = False

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """``module`` with every batch norm layer in it (itself included) replaced by a SyncBatchNorm that holds
        the same parameters and buffers."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                module.track_running_stats, process_group)
            if module.affine:
                out.weight, out.bias = module.weight, module.bias
            out.running_mean, out.running_var = module.running_mean, module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


class _InstanceNorm(_NormBase):
    _nd = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum, self.affine = num_features, eps, momentum, affine
        self.track_running_stats = track_running_stats
        _norm_state(self, num_features, affine, affine, track_running_stats, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        name = type(self).__name__
        check(RN.batch_norm_rank_check, tuple(input.shape), op=name)
        unbatched = input.dim() == self._nd + 1
        feature_dim = 0 if unbatched else 1
        if input._data.shape[feature_dim] != self.num_features:
            if self.affine:
                fail("argument_error_invalid_value", op=name, problem=(
                    f"expected input's size at dim={feature_dim} to match num_features ({self.num_features}), but "
                    f"got: {input._data.shape[feature_dim]}."))
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        x = input.unsqueeze(0) if unbatched else input
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats,
                              self.momentum if self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if unbatched else out



class InstanceNorm1d(_InstanceNorm):
    _nd = 1


class InstanceNorm2d(_InstanceNorm):
    _nd = 2


class InstanceNorm3d(_InstanceNorm):
    _nd = 3


class LayerNorm(Module):
    def __init__(self, normalized_shape: Any, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps, self.elementwise_affine, self._bias = eps, elementwise_affine, bias
        if elementwise_affine:
            self.weight = Parameter(ones(self.normalized_shape, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(zeros(self.normalized_shape, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        # bias=False whenever there is no bias parameter (elementwise_affine=False makes none), as torch prints
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    def __init__(self, normalized_shape: Any, eps: float | None = None, elementwise_affine: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def forward(self, input: Tensor) -> Tensor:
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class GroupNorm(Module):
    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        self._bias = bias
        if affine:
            self.weight = Parameter(ones(num_channels, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(zeros(num_channels, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input: Tensor) -> Tensor:
        check(RN.channels_check, tuple(input.shape), self.num_channels, op="GroupNorm")
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        bias = f", bias={self._bias}" if self.affine else ""
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}{bias}"


class LocalResponseNorm(Module):
    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _window_sum(t: Tensor, lo: int, hi: int) -> Tensor:
    """For each channel c of ``t`` (N, C, H, W), the sum of channels ``c + lo .. c + hi`` that exist."""
    c = t._data.shape[1]
    before, after = max(0, -lo), max(0, hi)
    padded = F.pad(t, (0, 0, 0, 0, before, after))
    total = padded[:, before + lo:before + lo + c]
    for i in range(lo + 1, hi + 1):
        total = total + padded[:, before + i:before + i + c]
    return total


class _CrossMapLRN2dFunction(Function):
    """torch's legacy cross-map LRN with its own backward. Both passes are kept as torch computes them, neither
    being the other's exact derivative: the forward sums channels ``c-p+1 .. c+p-1`` (``p = (size-1)//2 + 1``) and
    never drops channel 0 once ``c > p``; the backward sums its ratios over ``c - q .. c + size - 1 - q`` with
    ``q = int(size - (size-1)/2)``."""

    @staticmethod
    def forward(ctx: Any, input: Tensor, size: int, alpha: float, beta: float, k: float) -> Tensor:
        p = int((size - 1) / 2 + 1)
        c = input._data.shape[1]
        sq = input * input
        total = _window_sum(sq, -(p - 1), p - 1)
        if c > p:
            total = cat([total[:, :p], total[:, p:] + sq[:, 0:1]], 1)
        scale = total * (alpha / size) + k
        output = scale.pow(-beta) * input
        ctx.save_for_backward(input, output, scale)
        ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
        return output

    @staticmethod
    def backward(ctx: Any, grad_output: Tensor) -> tuple[Tensor | None, ...]:
        input, output, scale = ctx.saved_tensors
        size = ctx.size
        q = int(size - (size - 1) / 2)
        ratio = grad_output * output / scale
        accum = _window_sum(ratio, -q, size - 1 - q)
        grad = scale.pow(-ctx.beta) * grad_output - input * accum * (2 * ctx.alpha * ctx.beta / size)
        return grad, None, None, None, None


class CrossMapLRN2d(Module):
    """torch's legacy cross-channel LRN on 4-D input: ``x * (k + alpha/size * sum of x^2)^-beta`` over
    neighbouring channels, values and gradients as torch's (``_CrossMapLRN2dFunction`` says where they differ
    from ``LocalResponseNorm``)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        out: Tensor = _CrossMapLRN2dFunction.apply(input, self.size, self.alpha, self.beta, self.k)
        return out

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
