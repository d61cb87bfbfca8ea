"""Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d (torch's parameters, init and repr)."""

from __future__ import annotations

import math
from typing import Any

from ..._tensor import Tensor
from ...ops import convolution as N
from ...ops.creation import empty
from .. import init
from ..parameter import Parameter
from .module import Module


class _ConvNd(Module):
    _nd = 2
    weight: Parameter
    bias: Parameter | None
    transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None, output_padding: Any = 0) -> None:
        super().__init__()
        nd = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"padding_mode must be one of zeros, reflect, replicate or circular, got {padding_mode!r}")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = N.ntuple(kernel_size, nd)
        self.stride = N.ntuple(stride, nd)
        self.padding: Any = padding if isinstance(padding, str) else N.ntuple(padding, nd)
        self.dilation = N.ntuple(dilation, nd)
        self.output_padding = N.ntuple(output_padding, nd)
        self.groups = groups
        self.padding_mode = padding_mode
        kw = {"device": device, "dtype": dtype}
        if self.transposed:
            shape = (in_channels, out_channels // groups, *self.kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *self.kernel_size)
        self.weight = Parameter(empty(shape, **kw))
        if bias:
            self.bias = Parameter(empty(out_channels, **kw))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self._nd:
            s += f", padding={self.padding}"  # a string too, unquoted: torch prints padding=same
        if self.dilation != (1,) * self._nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        op = f"conv{self._nd}d"
        if self.padding_mode != "zeros":
            pads: list[int] = []
            if isinstance(self.padding, str):
                if self.padding == "valid":
                    pads = [0] * (2 * self._nd)
                else:
                    for i in reversed(range(self._nd)):
                        total = self.dilation[i] * (self.kernel_size[i] - 1)
                        pads += [total // 2, total - total // 2]
            else:
                for p in reversed(self.padding):
                    pads += [p, p]
            input = N.pad(input, pads, mode=self.padding_mode)
            return N.conv(input, weight, bias, self.stride, 0, self.dilation, self.groups, op=op)
        return N.conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups, op=op)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_ConvNd):
    _nd = 1


class Conv2d(_ConvNd):
    _nd = 2


class Conv3d(_ConvNd):
    _nd = 3


class _ConvTransposeNd(_ConvNd):
    transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype, output_padding)

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        op_ = self.output_padding
        if output_size is not None:
            nd = self._nd
            want = tuple(output_size)[-nd:]
            sp = tuple(input.shape)[-nd:]
            op_ = tuple(want[i] - ((sp[i] - 1) * self.stride[i] - 2 * self.padding[i]
                                   + self.dilation[i] * (self.kernel_size[i] - 1) + 1) for i in range(nd))
        return N.conv_transpose(input, self.weight, self.bias, self.stride, self.padding, op_, self.groups,
                                self.dilation, op=f"conv_transpose{self._nd}d")


class ConvTranspose1d(_ConvTransposeNd):
    _nd = 1


class ConvTranspose3d(_ConvTransposeNd):
    _nd = 3


class ConvTranspose2d(_ConvTransposeNd):
    _nd = 2
