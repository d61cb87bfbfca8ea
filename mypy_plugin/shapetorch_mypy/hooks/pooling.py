"""Pooling in ``nn.functional``: ``max_pool1d/2d``, ``avg_pool1d/2d``, the adaptive pools, ``interpolate``, and
the sliding blocks of ``unfold``/``fold`` (im2col and col2im).

Each reads its literal kernel, stride, padding and dilation and runs the runtime's rule
(``pool_shape``, ``adaptive_pool_shape``); a stride left out is the kernel, as at run time.
"""

from __future__ import annotations

from mypy.nodes import FloatExpr, IntExpr, ListExpr, TupleExpr
from mypy.types import Type

from shapetorch._rules import nn as RN

from ..args import fold_int
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
        if not x.exact or size is None or op.bool_arg("return_indices", False):  # (values, indices): not typed
            raise Unknown
        return op.like(x, RN.adaptive_pool_shape(x.shape or (), size, op.name, nonempty="max" in op.name))

    return h


def _scales(op: Op) -> float | tuple[float, ...] | None:
    """A literal ``scale_factor``: one number (int or float) for every spatial dim, or a tuple, one per dim."""
    a = op.call.get("scale_factor")
    if a is None:
        return None
    items = a.expr.items if isinstance(a.expr, (TupleExpr, ListExpr)) else [a.expr]
    out: list[float] = []
    for e in items:
        v = float(e.value) if isinstance(e, (IntExpr, FloatExpr)) else fold_int(e)
        if v is None:
            raise Unknown
        out.append(float(v))
    return tuple(out) if isinstance(a.expr, (TupleExpr, ListExpr)) else out[0]


def interpolate(op: Op) -> Type:
    """``size=`` or ``scale_factor=`` (floor of size * factor), both read as literals."""
    x = op.input()
    if not x.exact or x.shape is None:
        raise Unknown
    # an int size or a single scale stands for every spatial dim, as the rule takes them (so that an input of
    # the wrong rank gets the rank error, not a count mismatch)
    size: int | tuple[int, ...] | None = None
    if op.call.given("size"):
        size = op.call.int_arg("size")
        if size is None:
            size = _ntuple(op, "size", max(len(x.shape) - 2, 1), None)
    scales = _scales(op)
    if (size is None) == (scales is None):
        raise Unknown  # not a literal, or both or neither given (the op's ValueError)
    mode = op.call.str_arg("mode") if op.call.given("mode") else "nearest"
    if mode is None:
        raise Unknown
    # an option that is not a literal is taken as absent: its check is left to the runtime, never a false error
    align_corners = op.call.bool_arg("align_corners", False) if op.call.given("align_corners") else None
    antialias = op.call.bool_arg("antialias", False)
    if antialias is None and mode == "lanczos":  # (lanczos needs it: an unknown one cannot be checked)
        raise Unknown
    return op.like(x, RN.interpolate_shape(x.shape, size, scales, mode, op.name, align_corners=align_corners,
                                           antialias=bool(antialias)))


Ints = tuple[int, ...]


def _block_args(op: Op) -> tuple[Ints, Ints, Ints, Ints]:
    """unfold's and fold's kernel_size, dilation, padding and stride: literal ints, one for both dims or a pair."""
    kernel, dilation = _ntuple(op, "kernel_size", 2, None), _ntuple(op, "dilation", 2, 1)
    padding, stride = _ntuple(op, "padding", 2, 0), _ntuple(op, "stride", 2, 1)
    if kernel is None or dilation is None or padding is None or stride is None:
        raise Unknown
    return kernel, dilation, padding, stride


def unfold(op: Op) -> Type:
    """(N, C, H, W) to (N, C * kh * kw, L), L the number of blocks (``_rules.nn.unfold_shape``)."""
    x = op.input()
    if not x.exact:
        raise Unknown
    return op.like(x, RN.unfold_shape(x.shape or (), *_block_args(op), op=op.name))


def fold(op: Op) -> Type:
    """(N, C * kh * kw, L) to (N, C, *output_size), the blocks summed (``_rules.nn.fold_shape``)."""
    x = op.input()
    size = _ntuple(op, "output_size", 2, None)
    if not x.exact or size is None:
        raise Unknown
    return op.like(x, RN.fold_shape(x.shape or (), size, *_block_args(op), op=op.name))


FUNCTIONAL: dict[str, Handler] = {
    "interpolate": interpolate, "unfold": unfold, "fold": fold,
    "max_pool1d": pool(1, True), "max_pool2d": pool(2, True),
    "avg_pool1d": pool(1, False), "avg_pool2d": pool(2, False),
    "adaptive_avg_pool1d": adaptive(1), "adaptive_avg_pool2d": adaptive(2),
    "adaptive_max_pool1d": adaptive(1), "adaptive_max_pool2d": adaptive(2),
}
