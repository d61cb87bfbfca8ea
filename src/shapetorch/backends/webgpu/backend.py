"""The backend module for ``device="webgpu"`` (the interface of ``numpy_backend``), and kernel registration."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._dtype import DType
from ..numpy_backend import DTYPE_OF, NP_DTYPE
from . import kernels
from .runtime import RT, WArray, to_host

NAME = "webgpu"

RT.require()
MISSING = kernels.register()  # primitives without a WebGPU kernel (to_device moves through the host)


def dtype_of(a: WArray) -> type[DType]:
    return DTYPE_OF[a.dtype]


def asarray(data: Any, dtype: type[DType]) -> WArray:
    return RT.upload(np.asarray(data, dtype=NP_DTYPE[dtype]))


def to_numpy(a: WArray) -> np.ndarray[Any, Any]:
    return to_host(a)


def from_numpy(a: np.ndarray[Any, Any]) -> WArray:
    return RT.upload(a)


def copyto(dst: WArray, src: WArray) -> None:
    """``dst[...] = src`` in place (an in-place op's result written into the tensor's storage)."""
    kernels.assign(dst, src)
