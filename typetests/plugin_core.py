# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
# Typetests for mypy + shapetorch_mypy, with inline error (E) and note (N) expectations.
# Run: python -m shapetorch.typetest typetests/plugin_core.py
from typing import Any, Final, Literal as L, TypeVar, reveal_type

import shapetorch as st
from shapetorch import Dim, Tensor, float32, float64, int64


class Batch(Dim): ...
class Seq(Dim): ...


B = TypeVar("B")
F32 = float32


def matmul(a: Tensor[tuple[L[2], L[3]], F32], b: Tensor[tuple[L[3], L[5]], F32],
           c: Tensor[tuple[L[4], L[5]], F32], v: Tensor[tuple[L[3]], F32]) -> None:
    reveal_type(a @ b)  # N: Tensor[tuple[Literal[2], Literal[5]], shapetorch.float32]
    a @ c  # E: matmul: inner dimensions do not match: (2, 3) @ (4, 5) (3 != 4)  [matmul_error_inner_dimensions_do_not_match]
    a @ c  # type: ignore[matmul_error_inner_dimensions_do_not_match]
    a @ c  # type: ignore[shape-matmul]  # E: use narrower [matmul_error_inner_dimensions_do_not_match] instead of [shape-matmul]  [unused-ignore]
    reveal_type(a @ v)  # N: Tensor[tuple[Literal[2]], shapetorch.float32]
    reveal_type(v @ b)  # N: Tensor[tuple[Literal[5]], shapetorch.float32]
    reveal_type(v @ v)  # N: Tensor[tuple[()], shapetorch.float32]
    reveal_type(st.matmul(a, b))  # N: Tensor[tuple[Literal[2], Literal[5]], shapetorch.float32]
    reveal_type(a.mm(b))  # N: Tensor[tuple[Literal[2], Literal[5]], shapetorch.float32]
    reveal_type(st.mv(a, v))  # N: Tensor[tuple[Literal[2]], shapetorch.float32]
    reveal_type(v.dot(v))  # N: Tensor[tuple[()], shapetorch.float32]
    reveal_type(st.outer(v, v))  # N: Tensor[tuple[Literal[3], Literal[3]], shapetorch.float32]
    a.mm(v)  # E: mm: mat2 must be 2-D, got shape (3,)  [matmul_error_rank_mismatch]
    y = a @ c  # E: inner dimensions do not match  [matmul_error_inner_dimensions_do_not_match]
    reveal_type(y)  # N: Any
    y @ b  # after an error the result is unknown: no cascade
    z = a + 1
    z = z.view(3, 3)  # E: view: shape [3, 3] is invalid for input of shape (2, 3) (6 elements)  [reshape_error_size_mismatch]
    z.permute(1, 0, 2)  # no cascade through the name's redefinition either (it is not the old shape again)


def batched(x: Tensor[tuple[L[7], Batch, L[2], L[3]], F32], w: Tensor[tuple[L[3], L[5]], F32],
            u: Tensor[tuple[Any, ...], F32], p: Tensor[tuple[*tuple[Any, ...], L[2], L[3]], F32],
            q: Tensor[tuple[Batch, L[3], L[4]], F32], r: Tensor[tuple[Seq, L[4], L[5]], F32]) -> None:
    reveal_type(x @ w)  # N: Tensor[tuple[Literal[7], plugin_core.Batch, Literal[2], Literal[5]], shapetorch.float32]
    reveal_type(u @ w)  # N: Tensor[tuple[Any, ...], shapetorch.float32]
    reveal_type(p @ w)  # N: Tensor[tuple[*tuple[Any, ...], Literal[2], Literal[5]], shapetorch.float32]
    q.bmm(r)  # E: batch dimensions do not match: (Batch, 3, 4) and (Seq, 4, 5) (Batch != Seq)  [batch_dimensions_do_not_match_error]


def symbolic(x: Tensor[tuple[Batch, L[3]], F32], w: Tensor[tuple[L[3], L[8]], F32],
             y: Tensor[tuple[Batch, Seq], F32], z: Tensor[tuple[Seq, L[4]], F32],
             q: Tensor[tuple[Batch, L[4]], F32], g: Tensor[tuple[B, L[3]], F32],
             n: Tensor[tuple[L[2], Seq], F32]) -> Tensor[tuple[B, L[8]], F32]:
    reveal_type(x @ w)  # N: Tensor[tuple[plugin_core.Batch, Literal[8]], shapetorch.float32]
    reveal_type(y @ z)  # N: Tensor[tuple[plugin_core.Batch, Literal[4]], shapetorch.float32]
    y @ q  # E: (Batch, Seq) @ (Batch, 4) (Seq != Batch)  [matmul_error_inner_dimensions_do_not_match]
    reveal_type(n @ w)  # N: Tensor[tuple[Literal[2], Literal[8]], shapetorch.float32]
    reveal_type(g @ w)  # N: Tensor[tuple[B, Literal[8]], shapetorch.float32]
    return g @ w


def dtypes(a: Tensor[tuple[L[2], L[3]], F32], d: Tensor[tuple[L[3], L[5]], float64],
           i: Tensor[tuple[L[2], L[3]], int64], m: Tensor[tuple[L[2], L[3]], st.bool]) -> None:
    a @ d  # E: matmul: expected both arguments to have the same dtype, but got float32 and float64  [dtype_error_mismatch]
    reveal_type(a + i)  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32]
    reveal_type(i + 1)  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.int64]
    reveal_type(i + 1.5)  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32]
    reveal_type(i / 2)  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32]
    reveal_type(m + m)  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.bool_]
    reveal_type(a < 0)  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.bool_]
    reveal_type(i.exp())  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32]
    reveal_type(i.sum())  # N: Tensor[tuple[()], shapetorch.int64]
    reveal_type(m.sum(0))  # N: Tensor[tuple[Literal[3]], shapetorch.int64]
    reveal_type(a.to(float64))  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.float64]
    reveal_type(a.long())  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.int64]
    reveal_type(a.argmax(1))  # N: Tensor[tuple[Literal[2]], shapetorch.int64]


def broadcasting(a: Tensor[tuple[L[2], L[3], L[4]], F32], bias: Tensor[tuple[L[4]], F32],
                 col: Tensor[tuple[L[3], L[1]], F32], bad: Tensor[tuple[L[5]], F32],
                 cond: Tensor[tuple[L[3], L[4]], st.bool], tail: Tensor[tuple[*tuple[Any, ...], L[4]], F32]) -> None:
    reveal_type(a + bias)  # N: Tensor[tuple[Literal[2], Literal[3], Literal[4]], shapetorch.float32]
    reveal_type(a * col)  # N: Tensor[tuple[Literal[2], Literal[3], Literal[4]], shapetorch.float32]
    a + bad  # E: add: shapes (2, 3, 4) and (5,) cannot be broadcast: size 4 != 5 at dimension -1  [broadcast_error_incompatible_dimensions]
    bad - a  # E: sub: shapes (5,) and (2, 3, 4) cannot be broadcast  [broadcast_error_incompatible_dimensions]
    st.add(a, bad)  # E: cannot be broadcast  [broadcast_error_incompatible_dimensions]
    a == bad  # E: eq: shapes (2, 3, 4) and (5,)  [broadcast_error_incompatible_dimensions]
    reveal_type(st.where(cond, a, 0.0))  # N: Tensor[tuple[Literal[2], Literal[3], Literal[4]], shapetorch.float32]
    st.where(cond, bad, 0.0)  # E: cannot be broadcast  [broadcast_error_incompatible_dimensions]
    reveal_type(tail + bias)  # N: Tensor[tuple[*tuple[Any, ...], Literal[4]], shapetorch.float32]
    tail + bad  # E: cannot be broadcast  [broadcast_error_incompatible_dimensions]
    reveal_type(2 * a)  # N: Tensor[tuple[Literal[2], Literal[3], Literal[4]], shapetorch.float32]
    reveal_type(0 == a)  # N: Tensor[tuple[Literal[2], Literal[3], Literal[4]], shapetorch.bool_]
    reveal_type((0.5 != bias).any())  # N: Tensor[tuple[()], shapetorch.bool_]


def views(a: Tensor[tuple[L[2], L[3], L[4]], F32], x: Tensor[tuple[Batch, Seq, L[8]], F32]) -> None:
    reveal_type(a.reshape(-1, 4))  # N: Tensor[tuple[Literal[6], Literal[4]], shapetorch.float32]
    reveal_type(a.reshape((6, 4)))  # N: Tensor[tuple[Literal[6], Literal[4]], shapetorch.float32]
    reveal_type(a.view(24))  # N: Tensor[tuple[Literal[24]], shapetorch.float32]
    a.reshape(5, -1)  # E: reshape: shape [5, -1] is invalid for input of shape (2, 3, 4) (24 elements)  [reshape_error_size_mismatch]
    a.view(-1, -1)  # E: only one dimension can be inferred  [reshape_error_multiple_inferred]
    reveal_type(a.flatten())  # N: Tensor[tuple[Literal[24]], shapetorch.float32]
    reveal_type(a.flatten(1))  # N: Tensor[tuple[Literal[2], Literal[12]], shapetorch.float32]
    reveal_type(a.unflatten(2, (2, 2)))  # N: Tensor[tuple[Literal[2], Literal[3], Literal[2], Literal[2]], shapetorch.float32]
    reveal_type(a.transpose(0, 2))  # N: Tensor[tuple[Literal[4], Literal[3], Literal[2]], shapetorch.float32]
    a.transpose(0, 3)  # E: transpose: dimension out of range (expected to be in range of [-3, 2], but got 3)  [transpose_dims_error_out_of_range]
    reveal_type(a.permute(2, 0, 1))  # N: Tensor[tuple[Literal[4], Literal[2], Literal[3]], shapetorch.float32]
    reveal_type(st.permute(a, (2, 0, 1)))  # N: Tensor[tuple[Literal[4], Literal[2], Literal[3]], shapetorch.float32]
    a.permute(0, 1)  # E: permute: dims [0, 1] is not a permutation  [permute_error_dimension_count_mismatch]
    reveal_type(a.movedim(0, -1))  # N: Tensor[tuple[Literal[3], Literal[4], Literal[2]], shapetorch.float32]
    reveal_type(a.mT)  # N: Tensor[tuple[Literal[2], Literal[4], Literal[3]], shapetorch.float32]
    a.t()  # E: t: expects a tensor with <= 2 dimensions, but got shape (2, 3, 4)  [transpose_error_requires_2d_tensor]
    reveal_type(a.unsqueeze(1))  # N: Tensor[tuple[Literal[2], Literal[1], Literal[3], Literal[4]], shapetorch.float32]
    reveal_type(a.unsqueeze(1).squeeze())  # N: Tensor[tuple[Literal[2], Literal[3], Literal[4]], shapetorch.float32]
    reveal_type(a[:, :1].squeeze(1))  # N: Tensor[tuple[Literal[2], Literal[4]], shapetorch.float32]
    a.unsqueeze(5)  # E: unsqueeze: dimension out of range  [dimension_error_out_of_range]
    reveal_type(a[:1].expand(5, 3, 4))  # N: Tensor[tuple[Literal[5], Literal[3], Literal[4]], shapetorch.float32]
    a.expand(5, 3, 4)  # E: expand: cannot expand shape (2, 3, 4) to (5, 3, 4)  [expand_error_incompatible]
    reveal_type(x.transpose(0, 1))  # N: Tensor[tuple[plugin_core.Seq, plugin_core.Batch, Literal[8]], shapetorch.float32]
    b, s, d = x.shape
    reveal_type(x.reshape(b * s, d))  # N: Tensor[tuple[Any, Literal[8]], shapetorch.float32]
    reveal_type(x.reshape(b, s, 2, 4))  # N: Tensor[tuple[plugin_core.Batch, plugin_core.Seq, Literal[2], Literal[4]], shapetorch.float32]
    reveal_type(x.flatten(0, 1))  # N: Tensor[tuple[Any, Literal[8]], shapetorch.float32]


def joins(a: Tensor[tuple[L[2], L[3]], F32], b: Tensor[tuple[L[4], L[3]], F32]) -> None:
    reveal_type(st.cat([a, b]))  # N: Tensor[tuple[Literal[6], Literal[3]], shapetorch.float32]
    reveal_type(st.cat((a, a), dim=1))  # N: Tensor[tuple[Literal[2], Literal[6]], shapetorch.float32]
    st.cat([a, b], dim=1)  # E: cat: sizes of tensors must match except in dimension 1  [cat_error_size_mismatch]
    reveal_type(st.stack([a, a]))  # N: Tensor[tuple[Literal[2], Literal[2], Literal[3]], shapetorch.float32]
    st.stack([a, b])  # E: stack expects each tensor to be equal size  [stack_error_shape_mismatch]
    reveal_type(b.split(3))  # N: tuple[shapetorch.Tensor[tuple[Literal[3], Literal[3]], shapetorch.float32], shapetorch.Tensor[tuple[Literal[1], Literal[3]], shapetorch.float32]]
    reveal_type(b.chunk(2))  # N: tuple[shapetorch.Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32], shapetorch.Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32]]
    b.split([1, 2])  # E: split sizes [1, 2] must be non-negative and sum to 4  [split_error_invalid_sizes]
    top, bottom = b.chunk(2)
    reveal_type(top)  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32]


def reductions(a: Tensor[tuple[L[2], L[3], L[4]], F32], x: Tensor[tuple[Batch, Seq, L[8]], F32]) -> None:
    reveal_type(a.sum())  # N: Tensor[tuple[()], shapetorch.float32]
    reveal_type(a.sum(dim=1, keepdim=True))  # N: Tensor[tuple[Literal[2], Literal[1], Literal[4]], shapetorch.float32]
    reveal_type(a.mean((0, 2)))  # N: Tensor[tuple[Literal[3]], shapetorch.float32]
    reveal_type(st.amax(a, -1))  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32]
    reveal_type(a.all(0))  # N: Tensor[tuple[Literal[3], Literal[4]], shapetorch.bool_]
    a.sum(3)  # E: sum: dimension out of range (expected to be in range of [-3, 2], but got 3)  [dimension_error_out_of_range]
    a.sum((0, 0))  # E: sum: dim 0 appears multiple times  [dim_error_repeated]
    reveal_type(x.mean(1))  # N: Tensor[tuple[plugin_core.Batch, Literal[8]], shapetorch.float32]
    reveal_type(a.softmax(-1))  # N: Tensor[tuple[Literal[2], Literal[3], Literal[4]], shapetorch.float32]
    a.softmax(3)  # E: softmax: dimension out of range  [softmax_error_dim_out_of_range]


def indexing(a: Tensor[tuple[L[2], L[3], L[4]], F32], idx: Tensor[tuple[L[5]], int64],
             mask: Tensor[tuple[L[2], L[3]], st.bool], i: int) -> None:
    reveal_type(a[0])  # N: Tensor[tuple[Literal[3], Literal[4]], shapetorch.float32]
    reveal_type(a[:, 1:3])  # N: Tensor[tuple[Literal[2], Literal[2], Literal[4]], shapetorch.float32]
    reveal_type(a[..., None, -1])  # N: Tensor[tuple[Literal[2], Literal[3], Literal[1]], shapetorch.float32]
    reveal_type(a[::2, None])  # N: Tensor[tuple[Literal[1], Literal[1], Literal[3], Literal[4]], shapetorch.float32]
    reveal_type(a[idx])  # N: Tensor[tuple[Literal[5], Literal[3], Literal[4]], shapetorch.float32]
    reveal_type(a[i])  # N: Tensor[tuple[Literal[3], Literal[4]], shapetorch.float32]
    reveal_type(a[mask])  # N: Tensor[tuple[Any, Literal[4]], shapetorch.float32]
    reveal_type(a[:i])  # N: Tensor[tuple[Any, Literal[3], Literal[4]], shapetorch.float32]
    a[2]  # E: index 2 is out of bounds for dimension 0 with size 2  [at_error_index_out_of_bounds]
    a[0, 0, 0, 0]  # E: too many indices for tensor of dimension 3  [index_error_too_many_indices]
    a[..., ...]  # E: an index can only have a single ellipsis  [index_error_multiple_ellipsis]


def factories() -> None:
    reveal_type(st.zeros(2, 3))  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32]
    reveal_type(st.ones((2, 3), dtype=float64))  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.float64]
    n: Final = 5
    reveal_type(st.randn(n, 4, dtype=float32))  # N: Tensor[tuple[Literal[5], Literal[4]], shapetorch.float32]
    k = 5
    reveal_type(st.rand(k, dtype=float32))  # N: Tensor[tuple[Any], shapetorch.float32]
    reveal_type(st.eye(3, dtype=float32))  # N: Tensor[tuple[Literal[3], Literal[3]], shapetorch.float32]
    reveal_type(st.arange(10))  # N: Tensor[tuple[Literal[10]], shapetorch.int64]
    reveal_type(st.arange(2, 10, 3))  # N: Tensor[tuple[Literal[3]], shapetorch.int64]
    x = st.zeros(2, 3, dtype=float32)
    reveal_type(st.zeros_like(x))  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32]
    st.reveal_shape(x @ st.ones(3, 7, dtype=float32))  # N: Shape: (2, 7)  dtype: float32


def gradual(u: Tensor[tuple[Any, ...], F32], a: Tensor[tuple[Any, L[3]], F32], h: int,
            w: Tensor[tuple[L[4], L[5]], F32], k: Tensor[Any, Any], w3: Tensor[tuple[L[3], L[5]], F32]) -> None:
    u @ w  # unknown rank: never an error
    reveal_type(a @ w3)  # N: Tensor[tuple[Any, Literal[5]], shapetorch.float32]
    a @ w  # E: (3 != 4)  [matmul_error_inner_dimensions_do_not_match]
    a.reshape(h, -1)  # a non-literal size is unknown: no error
    a.reshape(-1, 5)  # the first dim is unknown: 3 * ? may well be a multiple of 5
    u.sum(7)  # unknown rank: no error
    k + w
    reveal_type(u.reshape(2, -1))  # N: Tensor[tuple[Literal[2], Any], shapetorch.float32]


def takes_batch(x: Tensor[tuple[Batch, L[3]], F32]) -> None: ...
def takes_two(x: Tensor[tuple[L[2], L[3]], F32]) -> None: ...
def takes_generic(x: Tensor[tuple[B, L[3]], F32]) -> Tensor[tuple[B, L[3]], F32]:
    return x


class Model:
    def forward(self, x: Tensor[tuple[Batch, L[3]], F32]) -> Tensor[tuple[Batch, L[8]], F32]:
        raise NotImplementedError


def call_sites(lit: Tensor[tuple[L[2], L[3]], F32], named: Tensor[tuple[Batch, L[3]], F32],
               seq: Tensor[tuple[Seq, L[3]], F32], four: Tensor[tuple[L[4], L[3]], F32]) -> None:
    takes_batch(lit)  # a literal where a named dim is expected: undecidable, accepted
    takes_two(named)  # and the reverse
    Model().forward(lit)
    reveal_type(takes_generic(lit))  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32]
    takes_batch(seq)  # E: Argument 1 to "takes_batch" has incompatible type  [arg-type]
    takes_two(four)  # E: Argument 1 to "takes_two" has incompatible type  [arg-type]


def numbers_where_a_tensor_is_required(x: Tensor[tuple[L[2], L[3]], F32]) -> None:
    x.maximum(x)
    st.maximum(x, 2.0)  # E: maximum(): argument 'other' (position 2) must be Tensor, not float  [argument_error_type]
    x.atan2(1)  # E: atan2(): argument 'other' (position 2) must be Tensor, not int  [argument_error_type]
    st.eq(x, 2.0)  # a number is the second operand of a comparison: accepted
