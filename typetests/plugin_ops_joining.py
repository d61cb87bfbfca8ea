# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
# Joining ops under mypy + shapetorch_mypy (hooks/joining.py): tensor_split.
# Messages equal the runtime's.
from typing import Any, Literal as L, TypeVar, reveal_type
import shapetorch as st
from shapetorch import Tensor, float32, int64

def f(x: Tensor[tuple[L[2], L[3]], float32], i: Tensor[tuple[L[2], L[4]], int64], j: Tensor[tuple[L[3], L[4]], int64],
      v: Tensor[tuple[L[4]], int64], w: Tensor[tuple[L[3]], float32], y: Tensor[tuple[L[2], L[2], L[3]], float32]) -> None:
    reveal_type(x.tensor_split(2, 1))  # N: tuple[shapetorch.Tensor[tuple[Literal[2], Literal[2]], shapetorch.float32], shapetorch.Tensor[tuple[Literal[2], Literal[1]], shapetorch.float32]]
    reveal_type(st.tensor_split(x, [1, 5], 1))  # N: tuple[shapetorch.Tensor[tuple[Literal[2], Literal[1]], shapetorch.float32], shapetorch.Tensor[tuple[Literal[2], Literal[2]], shapetorch.float32], shapetorch.Tensor[tuple[Literal[2], Literal[0]], shapetorch.float32]]
    x.tensor_split(0, 1)  # E: tensor_split: sections must be greater than 0, got 0  [split_error_invalid_chunks]
