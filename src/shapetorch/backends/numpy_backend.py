"""The NumPy backend: tensors hold ``numpy.ndarray``s; kernels are NumPy calls (see ``shapetorch.ops``)."""

from __future__ import annotations

import warnings
from typing import Any

import ml_dtypes
import numpy as np

from .._dtype import DTYPES, DType
from .._errors import fail

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


def check_range(a: np.ndarray[Any, Any], lo: int, hi: int, code: str, op: str, **kwargs: Any) -> None:
    """Raise ``code`` unless every element of ``a`` is in ``[lo, hi)``; a None in ``kwargs`` becomes the value
    found (the largest when one is too large, else the smallest). A device backend checks without waiting and
    raises at the next sync."""
    if a.size == 0:
        return
    top, bottom = int(a.max()), int(a.min())
    if top >= hi or bottom < lo:
        bad = top if top >= hi else bottom
        fail(code, op=op, **{k: (bad if v is None else v) for k, v in kwargs.items()})


def full(shape: tuple[int, ...], value: Any, dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    return np.full(shape, value, dtype=dtype)


def arange(start: int, step: int, n: int, dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    return (start + np.arange(n, dtype=np.int64) * step).astype(dtype)
