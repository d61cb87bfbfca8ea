# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
# pyright (no plugin): assert_type pins what the stubs alone infer; every `# pyright: ignore[...]`
# marks an error that MUST happen (reportUnnecessaryTypeIgnoreComment = error in pyrightconfig.json).
from typing import Any, Literal as L, TypeVar, assert_type

import shapetorch as st
from shapetorch import Dim, Tensor, bool_, float32, float64, int64


class Batch(Dim): ...
class Seq(Dim): ...


B = TypeVar("B")


def matmul(a: Tensor[tuple[L[2], L[3]], float32], b: Tensor[tuple[L[3], L[5]], float32],
           c: Tensor[tuple[L[4], L[5]], float32], v: Tensor[tuple[L[3]], float32]) -> None:
    assert_type(a @ b, Tensor[tuple[L[2], L[5]], float32])
    assert_type(a @ v, Tensor[tuple[L[2]], float32])
    assert_type(v @ b, Tensor[tuple[L[5]], float32])
    assert_type(v @ v, Tensor[tuple[()], float32])
    assert_type(st.matmul(a, b), Tensor[tuple[L[2], L[5]], float32])
    assert_type(a.mm(b), Tensor[tuple[L[2], L[5]], float32])
    a @ c  # pyright: ignore[reportOperatorIssue]
    a.mm(c)  # pyright: ignore[reportArgumentType]


def symbolic(x: Tensor[tuple[Batch, Seq], float32], y: Tensor[tuple[Seq, L[4]], float32],
             q: Tensor[tuple[Batch, L[4]], float32], g: Tensor[tuple[B, L[3]], float32],
             w: Tensor[tuple[L[3], L[8]], float32]) -> Tensor[tuple[B, L[8]], float32]:
    assert_type(x @ y, Tensor[tuple[Batch, L[4]], float32])
    x @ q  # pyright: ignore[reportOperatorIssue]
    return g @ w


def batched(x: Tensor[tuple[L[7], Batch, L[2], L[3]], float32], w: Tensor[tuple[L[3], L[5]], float32],
            v: Tensor[tuple[L[3]], float32], u: Tensor[tuple[Any, ...], float32]) -> None:
    assert_type(x @ w, Tensor[tuple[L[7], Batch, L[2], L[5]], float32])
    assert_type(x @ v, Tensor[tuple[L[7], Batch, L[2]], float32])
    u @ w  # unknown rank: no error


def dtypes(a: Tensor[tuple[L[2], L[3]], float32], b: Tensor[tuple[L[3], L[5]], float64],
           i: Tensor[tuple[L[2], L[3]], int64]) -> None:
    a @ b  # pyright: ignore[reportOperatorIssue]
    assert_type(a + 1, Tensor[tuple[L[2], L[3]], float32])
    assert_type(i + 1, Tensor[tuple[L[2], L[3]], int64])
    assert_type(i + 1.5, Tensor[tuple[L[2], L[3]], Any])  # int tensor + float: promotion needs the plugin
    assert_type(a.exp(), Tensor[tuple[L[2], L[3]], float32])
    assert_type(i.exp(), Tensor[tuple[L[2], L[3]], Any])
    assert_type(a < 0, Tensor[tuple[L[2], L[3]], bool_])
    assert_type(a.to(float64), Tensor[tuple[L[2], L[3]], float64])
    assert_type(a.long(), Tensor[tuple[L[2], L[3]], int64])


def elementwise(a: Tensor[tuple[L[2], L[3], L[4]], float32], bias: Tensor[tuple[L[4]], float32],
                bad: Tensor[tuple[L[5]], float32]) -> None:
    assert_type(a + bias, Tensor[tuple[L[2], L[3], L[4]], float32])
    assert_type(a * a, Tensor[tuple[L[2], L[3], L[4]], float32])
    a + bad  # pyright: ignore[reportOperatorIssue]  -- (2, 3, 4) + (5,): broadcasting is checked per dim
    assert_type(a.sum(-1), Tensor[tuple[L[2], L[3]], float32])
    assert_type(a.sum(-1, keepdim=True), Tensor[tuple[L[2], L[3], L[1]], float32])
    assert_type(a.sum(), Tensor[tuple[()], float32])
    assert_type(a.sum(1), Tensor[tuple[L[2], L[4]], float32])
    assert_type(a.unsqueeze(0), Tensor[tuple[L[1], L[2], L[3], L[4]], float32])
    assert_type(a.mT, Tensor[tuple[L[2], L[4], L[3]], float32])
    assert_type(a[0], Tensor[tuple[L[3], L[4]], float32])
    assert_type(a.reshape(-1, 4), Tensor[tuple[Any, L[4]], float32])  # a literal size is kept, -1 is unknown
    assert_type(st.einsum("ij,jk->ik", a, a), Tensor[tuple[Any, ...], float32])
    x = st.zeros(2, 3, dtype=float32)
    assert_type(x, Tensor[tuple[L[2], L[3]], float32])  # literal sizes (of LITERAL_SIZES) are kept
    want_2x3(x)
    want_2x3(st.zeros(len(x), 3))  # a size known only as an int gives Any sizes, which fit


def want_2x3(x: Tensor[tuple[L[2], L[3]], float32]) -> None: ...
def accepts_any_rank(x: Tensor[tuple[Any, ...], float32]) -> None: ...
def accepts_int_dims(x: Tensor[tuple[int, int], float32]) -> None: ...


def variance(a: Tensor[tuple[L[2], L[3]], float32]) -> None:
    accepts_any_rank(a)
    accepts_int_dims(a)  # pyright: ignore[reportArgumentType]  -- invariant shape: spell unknown sizes Any


def nn_layers(name: str, x: Tensor[tuple[L[32], L[784]], float32], bad: Tensor[tuple[L[32], L[100]], float32],
              img: Tensor[tuple[L[8], L[3], L[32], L[32]], float32], tok: Tensor[tuple[L[8], L[12]], int64]) -> None:
    from shapetorch import nn
    import shapetorch.nn.functional as F

    fc = nn.Linear(784, 256)
    # literal sizes (of the table LITERAL_SIZES in stubs/nn_stubs.py) are kept by the constructors
    assert_type(fc, nn.Linear[L[784], L[256]])
    assert_type(fc(x), Tensor[tuple[L[32], L[256]], float32])
    fc(bad)  # pyright: ignore[reportArgumentType, reportCallIssue]
    assert_type(nn.Linear(5001, 10), nn.Linear[Any, Any])  # 5001 is not in the table: Any, never an error
    nn.Linear(5001, 10)(bad)
    assert_type(nn.Linear(len(name), 10), nn.Linear[Any, Any])
    nn.LayerNorm(100)(x)  # pyright: ignore[reportCallIssue, reportArgumentType]
    nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))(x)
    assert_type(nn.Conv2d(3, 16, 3)(img), Tensor[tuple[L[8], L[16], Any, Any], float32])  # the kernel's arithmetic: plugin
    assert_type(nn.Embedding(10, 4)(tok), Tensor[tuple[L[8], L[12], L[4]], float32])
    assert_type(nn.Embedding(10, 4).weight, nn.Parameter[tuple[L[10], L[4]], Any])
    assert_type(nn.ReLU()(x), Tensor[tuple[L[32], L[784]], float32])
    assert_type(nn.LayerNorm(784)(x), Tensor[tuple[L[32], L[784]], float32])
    assert_type(F.relu(x), Tensor[tuple[L[32], L[784]], float32])
    assert_type(F.linear(x, st.zeros(256, 784, dtype=float32)), Tensor[tuple[L[32], L[256]], float32])
    lin: nn.Linear[L[784], L[256]] = nn.Linear(784, 256)
    assert_type(lin(x), Tensor[tuple[L[32], L[256]], float32])
    lin(bad)  # pyright: ignore[reportArgumentType, reportCallIssue]
    conv: nn.Conv2d[L[3], L[16]] = nn.Conv2d(3, 16, 3)
    assert_type(conv(img), Tensor[tuple[L[8], L[16], Any, Any], float32])
    assert_type(x.max(1).values, Tensor[tuple[L[32]], float32])
    assert_type(x.sort(1).indices, Tensor[tuple[L[32], L[784]], int64])
    assert_type(x.gather(1, st.zeros(32, 5, dtype=int64)), Tensor[tuple[L[32], L[5]], float32])
    assert_type(x.flip(0), Tensor[tuple[L[32], L[784]], float32])
    x[0] = bad  # no shape check without the plugin
    x += bad


class Net(st.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = st.nn.Linear(784, 10)

    def forward(self, x: Tensor[tuple[Any, L[784]], float32]) -> Tensor[tuple[Any, L[10]], float32]:
        return self.fc(x)  # a typed forward checks clean: the layer sizes are Any here


def triangles_and_norms(x: Tensor[tuple[Batch, L[4], L[4]], float32], u: Tensor[Any, float32]) -> None:
    assert_type(x.triu(), Tensor[tuple[Batch, L[4], L[4]], float32])
    assert_type(st.tril(x, -1), Tensor[tuple[Batch, L[4], L[4]], float32])
    assert_type(u.triu(1), Tensor[Any, float32])
    assert_type(x.norm(), Tensor[tuple[()], float32])
    assert_type(st.norm(x, dim=-1).dtype, type[float32])
    assert_type(st.reveal_shape(x), Tensor[tuple[Batch, L[4], L[4]], float32])


S = TypeVar("S")


def any_times_batched(u: Tensor[Any, Any], x: Tensor[tuple[L[2], L[4], L[8], L[16]], float32]) -> Tensor[tuple[L[2], L[4], L[8], L[16]], float32]:
    return u @ x  # an Any-shaped operand against a 4-D one: no error


def broadcast_batches(q: Tensor[tuple[B, L[4], S, L[16]], float32], w: Tensor[tuple[L[4], L[16], L[8]], float32],
                      bad: Tensor[tuple[L[4], L[15], L[8]], float32]) -> Tensor[tuple[B, L[4], S, L[8]], float32]:
    assert_type(q @ w, Tensor[tuple[*tuple[Any, ...], S, L[8]], float32])  # batch dims broadcast: unknown to a stub
    q @ bad  # pyright: ignore[reportOperatorIssue]  -- the inner sizes are still checked
    return q @ w


def masks_to_a_precise_return(s: Tensor[tuple[B, L[4], S, S], float32], m: Tensor[tuple[S, S], bool_]) -> Tensor[tuple[B, L[4], S, S], float32]:
    s = s.masked_fill(m, float("-inf"))
    return st.where(m, s, st.zeros_like(s))


def numbers_where_a_tensor_is_required(x: Tensor[tuple[L[2], L[3]], float32]) -> None:
    x.maximum(x)
    st.maximum(x, 2.0)  # pyright: ignore[reportCallIssue, reportArgumentType]
    st.eq(x, 2.0)
