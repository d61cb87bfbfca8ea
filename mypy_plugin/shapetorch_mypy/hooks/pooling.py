"""Pooling in ``nn.functional``: ``max_pool1d/2d``, ``avg_pool1d/2d`` and the adaptive pools.

Each reads its literal kernel, stride, padding and dilation and runs the runtime's rule
(``pool_shape``, ``adaptive_pool_shape``); a stride left out is the kernel, as at run time.
"""

from __future__ import annotations

from mypy.types import Type

from shapetorch._rules import nn as RN

from ._common import Handler, Op, Unknown
from .nn import _ntuple


def pool(nd: int, dilated: bool) -> Handler:
    def h(op: Op) -> Type:
        x = op.input()
        if not x.exact or op.bool_arg("return_indices", False):
            raise Unknown  # (values, indices) stays the stub's
        kernel = _ntuple(op, "kernel_size", nd, None)
        stride = _ntuple(op, "stride", nd, None) if op.call.given("stride") else kernel
        padding = _ntuple(op, "padding", nd, 0)
        dilation = _ntuple(op, "dilation", nd, 1) if dilated else (1,) * nd
        if kernel is None or stride is None or padding is None or dilation is None:
            raise Unknown
        shape = RN.pool_shape(x.shape or (), kernel, stride, padding, dilation, op.bool_arg("ceil_mode", False), op.name)
        return op.like(x, shape)

    return h


def adaptive(nd: int) -> Handler:
    def h(op: Op) -> Type:
        x = op.input()
        size = _ntuple(op, "output_size", nd, None)
        if not x.exact or size is None:
            raise Unknown
        return op.like(x, RN.adaptive_pool_shape(x.shape or (), size, op.name, nonempty="max" in op.name))

    return h


FUNCTIONAL: dict[str, Handler] = {
    "max_pool1d": pool(1, True), "max_pool2d": pool(2, True),
    "avg_pool1d": pool(1, False), "avg_pool2d": pool(2, False),
    "adaptive_avg_pool1d": adaptive(1), "adaptive_avg_pool2d": adaptive(2),
    "adaptive_max_pool1d": adaptive(1), "adaptive_max_pool2d": adaptive(2),
}
