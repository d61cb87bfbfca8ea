# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
# mypy WITHOUT the plugin: the precise stub branch (overloads, TypeVarTuple). Degraded, never wrong.
from typing import Any, Literal as L, reveal_type

import shapetorch as st
from shapetorch import Dim, Tensor, float32, float64


class Batch(Dim): ...


def f(a: Tensor[tuple[L[2], L[3]], float32], b: Tensor[tuple[L[3], L[5]], float32],
      c: Tensor[tuple[L[4], L[5]], float32], x: Tensor[tuple[L[7], Batch, L[2], L[3]], float32],
      bias: Tensor[tuple[L[3]], float32], bad: Tensor[tuple[L[5]], float32],
      d: Tensor[tuple[L[3], L[5]], float64], u: Tensor[tuple[Any, ...], float32]) -> None:
    reveal_type(a @ b)  # N: Tensor[tuple[Literal[2], Literal[5]], shapetorch.float32]
    a @ c  # E: Unsupported operand types for @  [operator]
    a @ d  # E: Unsupported operand types for @  [operator]
    reveal_type(x @ b)  # N: Tensor[tuple[Literal[7], noplugin_smoke.Batch, Literal[2], Literal[5]], shapetorch.float32]
    reveal_type(a @ bias)  # N: Tensor[tuple[Literal[2]], shapetorch.float32]
    reveal_type(a + bias)  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32]
    reveal_type(a + 1)  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32]
    reveal_type(a + bad)  # N: Tensor[tuple[Any, ...], Any]
    reveal_type(a.sum(-1))  # N: Tensor[tuple[Literal[2]], shapetorch.float32]
    reveal_type(a.sum())  # N: Tensor[tuple[()], shapetorch.float32]
    reveal_type(a.exp())  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32]
    reveal_type(a.unsqueeze(0))  # N: Tensor[tuple[Literal[1], Literal[2], Literal[3]], shapetorch.float32]
    reveal_type(a.t())  # N: Tensor[tuple[Any, ...], shapetorch.float32]
    reveal_type(a.mT)  # N: Tensor[tuple[Literal[3], Literal[2]], shapetorch.float32]
    reveal_type(a[0])  # N: Tensor[tuple[Literal[3]], shapetorch.float32]
    reveal_type(a.reshape(6))  # N: Tensor[tuple[Any], shapetorch.float32]
    reveal_type(a.to(float64))  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.float64]
    reveal_type(st.zeros(2, 3, dtype=float32))  # N: Tensor[tuple[Any, Any], shapetorch.float32]
    reveal_type(st.einsum("ij,jk->ik", a, b))  # N: Tensor[tuple[Any, ...], shapetorch.float32]
    reveal_type(a < 1)  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.bool_]
    u @ b  # unknown rank: accepted
    reveal_type(u.mm(b))  # N: Tensor[tuple[Any, ...], shapetorch.float32]
    reveal_type(u.transpose(0, 1))  # N: Tensor[tuple[Any, ...], shapetorch.float32]
    reveal_type(st.mm(u, b))  # N: Tensor[tuple[Any, ...], shapetorch.float32]
    want_2x3(st.zeros(2, 3, dtype=float32))  # Any sizes fit the literal annotation


def want_2x3(x: Tensor[tuple[L[2], L[3]], float32]) -> None: ...
