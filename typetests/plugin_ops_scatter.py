# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
# Scatter ops under mypy + shapetorch_mypy (hooks/scatter.py): gather, scatter, scatter_add, index_select.
# Messages equal the runtime's.
from typing import Any, Literal as L, TypeVar, reveal_type
import shapetorch as st
from shapetorch import Tensor, float32, int64

def f(x: Tensor[tuple[L[2], L[3]], float32], i: Tensor[tuple[L[2], L[4]], int64], j: Tensor[tuple[L[3], L[4]], int64],
      v: Tensor[tuple[L[4]], int64], w: Tensor[tuple[L[3]], float32], y: Tensor[tuple[L[2], L[2], L[3]], float32]) -> None:
    reveal_type(x.gather(1, i))  # N: shapetorch.Tensor[tuple[Literal[2], Literal[4]], shapetorch.float32]
    x.gather(1, j)  # E: gather: size 3 of index (3, 4) at dimension 0 exceeds size 2 of input (2, 3)  [index_error_size_mismatch]
    reveal_type(st.gather(x, 1, i))  # N: shapetorch.Tensor[tuple[Literal[2], Literal[4]], shapetorch.float32]
    reveal_type(x.scatter(1, i, 1.0))  # N: shapetorch.Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32]
    x.scatter(1, j, 1.0)  # E: scatter: size 3 of index (3, 4) at dimension 0 exceeds size 2 of self (2, 3)  [index_error_size_mismatch]
    x.scatter_add(1, j, x)  # E: scatter_add: size 3 of index (3, 4) at dimension 0 exceeds size 2 of self (2, 3)  [index_error_size_mismatch]
    reveal_type(x.index_select(1, v))  # N: shapetorch.Tensor[tuple[Literal[2], Literal[4]], shapetorch.float32]
    x.index_select(2, v)  # E: index_select: dimension out of range (expected to be in range of [-2, 1], but got 2)  [index_select_error_dim_out_of_range]
