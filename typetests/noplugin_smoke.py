# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
# mypy WITHOUT the plugin: the precise stub branch (overloads, TypeVarTuple). Degraded, never wrong.
import math
from typing import Any, Literal as L, TypeVar, reveal_type

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
    reveal_type(a + bad)  # N: Tensor[Any, Any]
    reveal_type(a.sum(-1))  # N: Tensor[tuple[Literal[2]], shapetorch.float32]
    reveal_type(a.sum())  # N: Tensor[tuple[()], shapetorch.float32]
    reveal_type(a.exp())  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32]
    reveal_type(a.unsqueeze(0))  # N: Tensor[tuple[Literal[1], Literal[2], Literal[3]], shapetorch.float32]
    reveal_type(a.t())  # N: Tensor[Any, shapetorch.float32]
    reveal_type(a.mT)  # N: Tensor[tuple[Literal[3], Literal[2]], shapetorch.float32]
    reveal_type(a[st.randint(0, 2, (1,))])  # N: Tensor[Any, shapetorch.float32]
    reveal_type(a.data)  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32]
    reveal_type(a[0])  # N: Tensor[tuple[Literal[3]], shapetorch.float32]
    reveal_type(a.reshape(6))  # N: Tensor[tuple[Any], shapetorch.float32]
    reveal_type(a.to(float64))  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.float64]
    reveal_type(st.zeros(2, 3, dtype=float32))  # N: Tensor[tuple[Any, Any], shapetorch.float32]
    reveal_type(st.einsum("ij,jk->ik", a, b))  # N: Tensor[Any, shapetorch.float32]
    reveal_type(a < 1)  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.bool_]
    u @ b  # unknown rank: accepted
    reveal_type(u.mm(b))  # N: Tensor[Any, shapetorch.float32]
    reveal_type(u.transpose(0, 1))  # N: Tensor[Any, shapetorch.float32]
    reveal_type(st.mm(u, b))  # N: Tensor[Any, shapetorch.float32]
    want_2x3(st.zeros(2, 3, dtype=float32))  # Any sizes fit the literal annotation


def want_2x3(x: Tensor[tuple[L[2], L[3]], float32]) -> None: ...


def nn_layers(x: Tensor[tuple[L[32], L[784]], float32], bad: Tensor[tuple[L[32], L[100]], float32],
              img: Tensor[tuple[L[8], L[3], L[32], L[32]], float32], u: Tensor[tuple[Any, ...], float32]) -> None:
    from shapetorch import int64, nn
    import shapetorch.nn.functional as F

    fc = nn.Linear(784, 256)
    # literal sizes of the table LITERAL_SIZES (stubs/nn_stubs.py) are kept by the constructors, without the plugin too
    reveal_type(fc)  # N: shapetorch.nn.Linear[Literal[784], Literal[256]]
    reveal_type(fc(x))  # N: Tensor[tuple[Literal[32], Literal[256]], shapetorch.float32]
    fc(bad)  # E: Argument 1 to "__call__" of "Linear" has incompatible type  [arg-type]
    reveal_type(fc(u))  # N: Tensor[tuple[*tuple[Any, ...], Literal[256]], shapetorch.float32]
    reveal_type(nn.Linear(5001, 10))  # N: shapetorch.nn.Linear[Any, Any]
    nn.Linear(5001, 10)(bad)  # a size outside the table: Any, never an error
    reveal_type(nn.Linear(len(str(x)), 10))  # N: shapetorch.nn.Linear[Any, Any]
    reveal_type(nn.Embedding(10, 4).weight)  # N: shapetorch.nn.Parameter[tuple[Literal[10], Literal[4]], Any]
    reveal_type(nn.Conv2d(3, 16, 3)(img))  # N: Tensor[tuple[Any, ...], shapetorch.float32]
    reveal_type(nn.ReLU()(x))  # N: Tensor[tuple[Literal[32], Literal[784]], shapetorch.float32]
    reveal_type(nn.LayerNorm(784)(x))  # N: Tensor[tuple[Literal[32], Literal[784]], shapetorch.float32]
    reveal_type(nn.Sequential(fc, nn.ReLU())(x))  # N: Any
    reveal_type(F.relu(x))  # N: Tensor[tuple[Literal[32], Literal[784]], shapetorch.float32]
    reveal_type(F.linear(x, st.zeros(256, 784, dtype=float32)))  # N: Tensor[tuple[Any, ...], shapetorch.float32]
    lin: nn.Linear[L[784], L[256]] = nn.Linear(784, 256)
    reveal_type(lin(x))  # N: Tensor[tuple[Literal[32], Literal[256]], shapetorch.float32]
    lin(bad)  # E: Argument 1 to "__call__" of "Linear" has incompatible type  [arg-type]
    reveal_type(x.max(1).values)  # N: Tensor[tuple[Any, ...], shapetorch.float32]
    reveal_type(x.sort(1).indices)  # N: Tensor[tuple[Literal[32], Literal[784]], shapetorch.int64]
    reveal_type(x.gather(1, st.zeros(32, 5, dtype=int64)))  # N: Tensor[tuple[Any, Any], shapetorch.float32]
    reveal_type(x.flip(0))  # N: Tensor[tuple[Literal[32], Literal[784]], shapetorch.float32]
    x[0] = bad  # no shape check without the plugin
    x += bad


class Net(st.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = st.nn.Linear(784, 10)

    def forward(self, x: Tensor[tuple[Any, L[784]], float32]) -> Tensor[tuple[Any, L[10]], float32]:
        return self.fc(x)  # a typed forward checks clean: the layer sizes are Any here


def unknown_rank_operands(q: Tensor[tuple[L[1], L[4], L[1], L[16]], float32],
                          k: Tensor[tuple[L[1], L[4], Any, L[16]], float32]) -> None:
    scores = q @ k.transpose(-2, -1) / math.sqrt(16)  # no "Need type annotation": an unknown rank is Any, not Never
    reveal_type(scores)  # N: Tensor[Any, Any]


def triangles_and_norms(x: Tensor[tuple[Batch, L[4], L[4]], float32], u: Tensor[Any, float32]) -> None:
    reveal_type(x.triu())  # N: Tensor[tuple[noplugin_smoke.Batch, Literal[4], Literal[4]], shapetorch.float32]
    reveal_type(st.tril(x, -1))  # N: Tensor[tuple[noplugin_smoke.Batch, Literal[4], Literal[4]], shapetorch.float32]
    reveal_type(u.triu(1))  # N: Tensor[Any, shapetorch.float32]
    reveal_type(x.norm())  # N: Tensor[tuple[()], shapetorch.float32]
    reveal_type(x.norm(dim=-1))  # N: Tensor[tuple[Any, ...], shapetorch.float32]
    reveal_type(st.reveal_shape(x))  # N: Tensor[tuple[noplugin_smoke.Batch, Literal[4], Literal[4]], shapetorch.float32]


B = TypeVar("B")


def arange_of_a_size_from_shape(img: Tensor[tuple[B, L[6]], float32]) -> None:
    labels = st.arange(img.shape[0])  # a TypeVar size read from .shape is a valid bound: no arg-type error
    reveal_type(labels)  # N: Tensor[tuple[Any], Any]


def cat_of_different_shapes(a: Tensor[tuple[L[2], L[3]], float32], b: Tensor[tuple[L[4], L[3]], float32]) -> Tensor[tuple[Any, L[3]], float32]:
    both = st.cat([a, b])  # the list's items differ in shape: no "List item has incompatible type"
    reveal_type(both)  # N: Tensor[Any, Any]
    return st.cat([a, b], dim=0)


def numbers_where_a_tensor_is_required(x: Tensor[tuple[L[2], L[3]], float32]) -> None:
    x.maximum(x)
    st.maximum(x, 2.0)  # type: ignore[call-overload]  # refused (an unneeded ignore would be an error)
    st.eq(x, 2.0)
