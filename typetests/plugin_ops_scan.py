# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
# Scan ops under mypy + shapetorch_mypy (hooks/scan.py): cummax (values, indices) and cumsum's dim.
# Messages equal the runtime's.
from typing import Any, Literal as L, TypeVar, reveal_type
import shapetorch as st
from shapetorch import Tensor, float32, int64

def f(x: Tensor[tuple[L[2], L[3]], float32], i: Tensor[tuple[L[2], L[4]], int64], j: Tensor[tuple[L[3], L[4]], int64],
      v: Tensor[tuple[L[4]], int64], w: Tensor[tuple[L[3]], float32], y: Tensor[tuple[L[2], L[2], L[3]], float32]) -> None:
    reveal_type(x.cummax(1))  # N: tuple[shapetorch.Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32], shapetorch.Tensor[tuple[Literal[2], Literal[3]], shapetorch.int64], fallback=shapetorch._ValuesIndices[tuple[Literal[2], Literal[3]], shapetorch.float32]]
    x.cumsum(5)  # E: cumsum: dimension out of range (expected to be in range of [-2, 1], but got 5)  [dimension_error_out_of_range]
