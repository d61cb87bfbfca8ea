"""The backend module for ``device="webgpu"`` (the interface of ``numpy_backend``), and kernel registration."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._dtype import DType
from ..._engine.primitives import PRIMS
from ..numpy_backend import DTYPE_OF, NP_DTYPE
from . import (
    complex_kernels,
    composed_kernels,
    factorizations,
    int64_checks,
    kernels,
    linalg_kernels,
    permutation,
    special_kernels,
)
from .runtime import RT, WArray, to_host

NAME = "webgpu"

RT.require()
# The CPU's fused fast paths: their ops call them only where the primitive has a kernel, and elsewhere (on
# WebGPU) take the composite path of primitives that have kernels, so they need none and never raise
CPU_FAST_PATHS = ("attention_probs", "batch_norm", "batch_norm_stats", "convolution_bias", "einsum", "gelu_tanh",
                  "gelu_tanh_backward", "gru_cell_gates",
                  "gru_layer", "lstm_cell_gates", "lstm_layer", "lstm_layer_steps", "max_pool", "max_pool_backward",
                  "max_pool_indices", "max_pool_select", "pool_grad_guard")
# primitives without a WebGPU kernel (they raise kernel_not_registered_error; to_device moves through the host). The
# primitives that only name a node (no kernel on any device: the view histories of ``ops.view_history``, ``copy_over``,
# recorded after the storage already holds the value) are not among them.
MISSING = [n for n in kernels.register({**special_kernels.table(), **composed_kernels.table(), **linalg_kernels.table(),
                                        **factorizations.table(), **complex_kernels.table()})
           if n not in CPU_FAST_PATHS and (n == "to_device" or PRIMS[n].kernels.get("cpu") is not None)]
complex_kernels.install()  # complex matmul and angle, beside the real kernels
int64_checks.install()  # int64 sums, products, scans and matmuls: exact or refused, never wrapped


def dtype_of(a: WArray) -> type[DType]:
    return DTYPE_OF[a.dtype]


def asarray(data: Any, dtype: type[DType]) -> WArray:
    return RT.upload(np.asarray(data, dtype=NP_DTYPE[dtype]))


def to_numpy(a: WArray) -> np.ndarray[Any, Any]:
    return to_host(a)


def from_numpy(a: np.ndarray[Any, Any]) -> WArray:
    return RT.upload(a)


def copyto(dst: WArray, src: WArray, temporary: bool = False) -> None:
    """``dst[...] = src`` in place (an in-place op's result written into the tensor's storage). ``temporary``: the
    caller drops ``src`` after this (it is no tensor the program holds), so the elementwise kernel that has just
    made it may write ``dst`` itself instead (``kernels.redirect``), and no copy is recorded."""
    if not (temporary and kernels.redirect(dst, src)):
        kernels.assign(dst, src)


def check_range(a: WArray, lo: int, hi: int, code: str, op: str, skip: int | None = None, **kwargs: Any) -> None:
    """Recorded as a device-side check: a failure raises ``code`` at the next sync (a read, ``synchronize``)."""
    kernels.check_range(a, lo, hi, code, op, skip, **kwargs)


def nonzero(a: WArray) -> WArray:
    """The ``(count, ndim)`` coordinates of the nonzero elements, made on the device (the count is read back)."""
    from . import compaction  # (a function import keeps this module's import line as it was: less to merge)

    return compaction.nonzero(a)


def mask_columns(a: WArray) -> list[WArray]:
    """A boolean mask index as its coordinate columns (device index tensors; the count is read back)."""
    from . import compaction

    return compaction.mask_columns(a)


def full(shape: tuple[int, ...], value: Any, dtype: np.dtype[Any]) -> WArray:
    """A tensor filled by a kernel (nothing uploaded)."""
    return kernels.full(shape, value, dtype)


def arange(start: int, step: int, n: int, dtype: np.dtype[Any]) -> WArray:
    """``start + i * step`` for integer dtypes, made by a kernel."""
    return kernels.arange(start, step, n, dtype)


def eye(n: int, m: int, dtype: np.dtype[Any]) -> WArray:
    """The identity, made by a kernel."""
    return kernels.eye(n, m, dtype)


# An optimizer's update of one parameter in one kernel (see ``kernels.fused_step``); False to decline. The kernel's
# function itself, not a wrapper of it: an optimizer calls it for each parameter of each step
fused_step = kernels.fused_step
# A parameter group's fused updates recorded as one replayable plan (see ``kernels.step_plan``; ``optim.Optimizer``)
step_plan = kernels.step_plan
# What such a plan binds of the arrays it updates, its key among a group's plans (see ``kernels.step_signature``)
step_signature = kernels.step_signature


def factor(kind: str, a: WArray, **params: Any) -> Any:
    """The outputs of a matrix factorization computed on the device (see ``factorizations.factor``)."""
    return factorizations.factor(kind, a, **params)


def unique(a: WArray, consecutive: bool) -> tuple[WArray, WArray, WArray]:
    """(values, inverse, counts) of the flattened array, sorted on the device (see ``composed_kernels.unique``)."""
    return composed_kernels.unique(a, consecutive)


def random(dist: str, shape: tuple[int, ...], dtype: np.dtype[Any], seed: int, offset: int, a: float = 0.0,
           b: float = 0.0, p: WArray | None = None, op: str = "bernoulli") -> WArray:
    """Counter-based random numbers made on the device (see ``kernels.random``)."""
    return kernels.random(dist, shape, dtype, seed, offset, a, b, p, op)


def randperm(n: int, dtype: np.dtype[Any], seed: int, offset: int) -> WArray:
    """A random permutation drawn and sorted on the device (see ``permutation``)."""
    return permutation.randperm(n, dtype, seed, offset)
