"""The NumPy backend: tensors hold ``numpy.ndarray``s; kernels are NumPy calls (see ``shapetorch.ops``)."""

from __future__ import annotations

import warnings
from typing import Any

import ml_dtypes
import numpy as np

from .._dtype import DTYPES, DType

NAME = "cpu"

# torch gives inf/nan silently where NumPy warns (exp overflow, log(0), 0/0). Kernels live in
# shapetorch's modules, so this filter hides those warnings from our calls only, at no per-call cost.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"shapetorch\.")

NP_DTYPE: dict[type[DType], np.dtype[Any]] = {
    d: np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype("bool" if name == "bool" else name)
    for name, d in DTYPES.items()
}
DTYPE_OF: dict[np.dtype[Any], type[DType]] = {v: k for k, v in NP_DTYPE.items()}
DTYPE_OF_TYPE: dict[type, type[DType]] = {v.type: k for k, v in NP_DTYPE.items()}


def dtype_of(a: np.ndarray[Any, Any]) -> type[DType]:
    return DTYPE_OF[a.dtype]


def asarray(data: Any, dtype: type[DType]) -> np.ndarray[Any, Any]:
    return np.asarray(data, dtype=NP_DTYPE[dtype])


def to_numpy(a: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return a


def from_numpy(a: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return a
