# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
# Tiling ops under mypy + shapetorch_mypy (hooks/tiling.py): repeat (the Tensor method), tile, roll, flip.
# Messages equal the runtime's.
from typing import Any, Literal as L, TypeVar, reveal_type
import shapetorch as st
from shapetorch import Tensor, float32, int64

def f(x: Tensor[tuple[L[2], L[3]], float32], i: Tensor[tuple[L[2], L[4]], int64], j: Tensor[tuple[L[3], L[4]], int64],
      v: Tensor[tuple[L[4]], int64], w: Tensor[tuple[L[3]], float32], y: Tensor[tuple[L[2], L[2], L[3]], float32]) -> None:
    reveal_type(x.repeat(2, 1, 2))  # N: shapetorch.Tensor[tuple[Literal[2], Literal[2], Literal[6]], shapetorch.float32]
    x.repeat(2)  # E: repeat: number of dimensions of repeat dims (1) can not be smaller than the number of dimensions of the tensor (2)  [argument_error_invalid]
    reveal_type(x.tile((2,)))  # N: shapetorch.Tensor[tuple[Literal[2], Literal[6]], shapetorch.float32]
    reveal_type(x.tile(2, 3))  # N: shapetorch.Tensor[tuple[Literal[4], Literal[9]], shapetorch.float32]
    reveal_type(st.tile(x, [2, 3]))  # N: shapetorch.Tensor[tuple[Literal[4], Literal[9]], shapetorch.float32]
    reveal_type(x.roll(1, 0))  # N: shapetorch.Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32]
    x.roll(1, 5)  # E: roll: dimension out of range (expected to be in range of [-2, 1], but got 5)  [dimension_error_out_of_range]
    reveal_type(x.flip(0))  # N: shapetorch.Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32]
    x.flip(5)  # E: flip: dimension out of range (expected to be in range of [-2, 1], but got 5)  [flip_error_dim_out_of_range]
    x.flip((0, 0))  # E: flip: dim 0 appears multiple times in the list of dims [0, 0]  [dim_error_repeated]
