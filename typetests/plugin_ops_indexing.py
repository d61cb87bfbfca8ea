# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
# Indexing ops under mypy + shapetorch_mypy (hooks/indexing.py): x[i] = v: the value must broadcast to x[i].
# Messages equal the runtime's.
from typing import Any, Literal as L, TypeVar, reveal_type
import shapetorch as st
from shapetorch import Tensor, float32, int64

def f(x: Tensor[tuple[L[2], L[3]], float32], i: Tensor[tuple[L[2], L[4]], int64], j: Tensor[tuple[L[3], L[4]], int64],
      v: Tensor[tuple[L[4]], int64], w: Tensor[tuple[L[3]], float32], y: Tensor[tuple[L[2], L[2], L[3]], float32]) -> None:
    x[0] = w
    x[0] = v  # E: x[index] = value: value of shape (4,) cannot be broadcast to indexing result of shape (3,)  [setitem_error_shape_mismatch]
    x[:, 0] = st.zeros(2, dtype=float32)
    x[:, 0] = st.zeros(3, dtype=float32)  # E: x[index] = value: value of shape (3,) cannot be broadcast to indexing result of shape (2,)  [setitem_error_shape_mismatch]
    for t in range(x.shape[1]):
        x[:, t] = st.zeros(2, dtype=float32)
        x[t - 1, t] = st.zeros(1, dtype=float32)
        x[:, t] = st.zeros(3, dtype=float32)  # E: x[index] = value: value of shape (3,) cannot be broadcast to indexing result of shape (2,)  [setitem_error_shape_mismatch]
        y[t, :, t] = st.zeros(2, dtype=float32)
        y[t, i] = st.zeros(3, dtype=float32)
