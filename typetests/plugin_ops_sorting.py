# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
# Sorting ops under mypy + shapetorch_mypy (hooks/sorting.py): max/min with a dim, sort, argsort, topk, kthvalue, median: (values, indices) named tuples.
# Messages equal the runtime's.
from typing import Any, Literal as L, TypeVar, reveal_type
import shapetorch as st
from shapetorch import Tensor, float32, int64

def f(x: Tensor[tuple[L[2], L[3]], float32], i: Tensor[tuple[L[2], L[4]], int64], j: Tensor[tuple[L[3], L[4]], int64],
      v: Tensor[tuple[L[4]], int64], w: Tensor[tuple[L[3]], float32], y: Tensor[tuple[L[2], L[2], L[3]], float32]) -> None:
    reveal_type(x.max(1))  # N: tuple[shapetorch.Tensor[tuple[Literal[2]], shapetorch.float32], shapetorch.Tensor[tuple[Literal[2]], shapetorch.int64], fallback=shapetorch._ValuesIndices[tuple[Literal[2]], shapetorch.float32]]
    reveal_type(x.max(1).values)  # N: shapetorch.Tensor[tuple[Literal[2]], shapetorch.float32]
    vals, idx = x.min(0, keepdim=True)
    reveal_type(idx)  # N: shapetorch.Tensor[tuple[Literal[1], Literal[3]], shapetorch.int64]
    x.max(5)  # E: max: dimension out of range (expected to be in range of [-2, 1], but got 5)  [dimension_error_out_of_range]
    reveal_type(x.max(5).values)  # E: max: dimension out of range  [dimension_error_out_of_range]  # N: Tensor[tuple[Any, ...], shapetorch.float32]
    reveal_type(x.max())  # N: shapetorch.Tensor[tuple[()], shapetorch.float32]
    reveal_type(x.max(w))  # N: shapetorch.Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32]
    reveal_type(st.max(x, dim=1))  # N: tuple[shapetorch.Tensor[tuple[Literal[2]], shapetorch.float32], shapetorch.Tensor[tuple[Literal[2]], shapetorch.int64], fallback=shapetorch._ValuesIndices[tuple[Literal[2]], shapetorch.float32]]
    reveal_type(x.sort(1).indices)  # N: shapetorch.Tensor[tuple[Literal[2], Literal[3]], shapetorch.int64]
    x.sort(5)  # E: sort: dimension out of range (expected to be in range of [-2, 1], but got 5)  [dimension_error_out_of_range]
    reveal_type(x.argsort())  # N: shapetorch.Tensor[tuple[Literal[2], Literal[3]], shapetorch.int64]
    reveal_type(x.topk(2, dim=1))  # N: tuple[shapetorch.Tensor[tuple[Literal[2], Literal[2]], shapetorch.float32], shapetorch.Tensor[tuple[Literal[2], Literal[2]], shapetorch.int64], fallback=shapetorch._ValuesIndices[tuple[Literal[2], Literal[2]], shapetorch.float32]]
    x.topk(5)  # E: topk: selected index k out of range (k=5, size 3 at dimension 1)  [argument_error_invalid]
    reveal_type(x.kthvalue(2, 1))  # N: tuple[shapetorch.Tensor[tuple[Literal[2]], shapetorch.float32], shapetorch.Tensor[tuple[Literal[2]], shapetorch.int64], fallback=shapetorch._ValuesIndices[tuple[Literal[2]], shapetorch.float32]]
    x.kthvalue(4, 1)  # E: kthvalue: selected number k out of range for dimension 1 (k=4, size 3)  [argument_error_invalid]
    reveal_type(x.median(0))  # N: tuple[shapetorch.Tensor[tuple[Literal[3]], shapetorch.float32], shapetorch.Tensor[tuple[Literal[3]], shapetorch.int64], fallback=shapetorch._ValuesIndices[tuple[Literal[3]], shapetorch.float32]]
