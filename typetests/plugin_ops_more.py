# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
# More ops under mypy + shapetorch_mypy: (values, indices) selections, sorts, scans, gather/scatter,
# tile/repeat/roll/flip, tensor_split, x[i] = v and in-place operators. Messages equal the runtime's.
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
    reveal_type(x.cummax(1))  # N: tuple[shapetorch.Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32], shapetorch.Tensor[tuple[Literal[2], Literal[3]], shapetorch.int64], fallback=shapetorch._ValuesIndices[tuple[Literal[2], Literal[3]], shapetorch.float32]]
    x.cumsum(5)  # E: cumsum: dimension out of range (expected to be in range of [-2, 1], but got 5)  [dimension_error_out_of_range]
    reveal_type(x.gather(1, i))  # N: shapetorch.Tensor[tuple[Literal[2], Literal[4]], shapetorch.float32]
    x.gather(1, j)  # E: gather: size 3 of index (3, 4) at dimension 0 exceeds size 2 of input (2, 3)  [index_error_size_mismatch]
    reveal_type(st.gather(x, 1, i))  # N: shapetorch.Tensor[tuple[Literal[2], Literal[4]], shapetorch.float32]
    reveal_type(x.scatter(1, i, 1.0))  # N: shapetorch.Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32]
    x.scatter(1, j, 1.0)  # E: scatter: size 3 of index (3, 4) at dimension 0 exceeds size 2 of self (2, 3)  [index_error_size_mismatch]
    x.scatter_add(1, j, x)  # E: scatter_add: size 3 of index (3, 4) at dimension 0 exceeds size 2 of self (2, 3)  [index_error_size_mismatch]
    reveal_type(x.index_select(1, v))  # N: shapetorch.Tensor[tuple[Literal[2], Literal[4]], shapetorch.float32]
    x.index_select(2, v)  # E: index_select: dimension out of range (expected to be in range of [-2, 1], but got 2)  [index_select_error_dim_out_of_range]
    reveal_type(x.repeat(2, 1, 2))  # N: shapetorch.Tensor[tuple[Literal[2], Literal[2], Literal[6]], shapetorch.float32]
    x.repeat(2)  # E: repeat: number of dimensions of repeat dims (1) can not be smaller than the number of dimensions of the tensor (2)  [argument_error_invalid]
    reveal_type(x.tile((2,)))  # N: shapetorch.Tensor[tuple[Literal[2], Literal[6]], shapetorch.float32]
    reveal_type(x.roll(1, 0))  # N: shapetorch.Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32]
    x.roll(1, 5)  # E: roll: dimension out of range (expected to be in range of [-2, 1], but got 5)  [dimension_error_out_of_range]
    reveal_type(x.flip(0))  # N: shapetorch.Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32]
    x.flip(5)  # E: flip: dimension out of range (expected to be in range of [-2, 1], but got 5)  [flip_error_dim_out_of_range]
    x.flip((0, 0))  # E: flip: dim 0 appears multiple times in the list of dims [0, 0]  [dim_error_repeated]
    reveal_type(x.tensor_split(2, 1))  # N: tuple[shapetorch.Tensor[tuple[Literal[2], Literal[2]], shapetorch.float32], shapetorch.Tensor[tuple[Literal[2], Literal[1]], shapetorch.float32]]
    reveal_type(st.tensor_split(x, [1, 5], 1))  # N: tuple[shapetorch.Tensor[tuple[Literal[2], Literal[1]], shapetorch.float32], shapetorch.Tensor[tuple[Literal[2], Literal[2]], shapetorch.float32], shapetorch.Tensor[tuple[Literal[2], Literal[0]], shapetorch.float32]]
    x.tensor_split(0, 1)  # E: tensor_split: sections must be greater than 0, got 0  [split_error_invalid_chunks]
    x[0] = w
    x[0] = v  # E: index_put: value of shape (4,) cannot be broadcast to indexing result of shape (3,)  [setitem_error_shape_mismatch]
    x[:, 0] = st.zeros(2, dtype=float32)
    x[:, 0] = st.zeros(3, dtype=float32)  # E: index_put: value of shape (3,) cannot be broadcast to indexing result of shape (2,)  [setitem_error_shape_mismatch]
    x += w
    x += y  # E: __iadd__: shapes (2, 3) and (2, 2, 3) cannot be broadcast: size output != broadcast at dimension (an in-place result must keep the shape of self)  [broadcast_error_incompatible_dimensions]
    x.add_(y)  # E: add_: shapes (2, 3) and (2, 2, 3) cannot be broadcast: size output != broadcast at dimension (an in-place result must keep the shape of self)  [broadcast_error_incompatible_dimensions]
    x += st.zeros(4, dtype=float32)  # E: add: shapes (2, 3) and (4,) cannot be broadcast: size 3 != 4 at dimension -1  [broadcast_error_incompatible_dimensions]
    x *= 2
    x *= 2  # a scalar keeps the shape
