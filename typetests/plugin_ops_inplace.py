# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
# Inplace ops under mypy + shapetorch_mypy (hooks/inplace.py): x += y, x.add_(y): an in-place result must keep x's shape.
# Messages equal the runtime's.
from typing import Any, Literal as L, TypeVar, reveal_type
import shapetorch as st
from shapetorch import Tensor, float32, int64

def f(x: Tensor[tuple[L[2], L[3]], float32], i: Tensor[tuple[L[2], L[4]], int64], j: Tensor[tuple[L[3], L[4]], int64],
      v: Tensor[tuple[L[4]], int64], w: Tensor[tuple[L[3]], float32], y: Tensor[tuple[L[2], L[2], L[3]], float32]) -> None:
    x += w
    x += y  # E: x += y: output with shape (2, 3) doesn't match the broadcast shape (2, 2, 3)  [inplace_error_shape_change]
    x.add_(y)  # E: add_: output with shape (2, 3) doesn't match the broadcast shape (2, 2, 3)  [inplace_error_shape_change]
    x += st.zeros(4, dtype=float32)  # E: add: shapes (2, 3) and (4,) cannot be broadcast: size 3 != 4 at dimension -1  [broadcast_error_incompatible_dimensions]
    x *= 2
    x *= 2  # a scalar keeps the shape
