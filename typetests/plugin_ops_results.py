# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
# Results that used to be untyped (issue: "untyped results"): norm, triu/tril, F.one_hot, the functional pools,
# F.interpolate, arange of a non-literal bound, chunk along a named dim or a non-literal dim, factories' dtypes.
# Rules: _rules.reduction, _rules.matrix.triangular_shape, _rules.nn (one_hot_shape, pool_shape,
# interpolate_shape), _rules.joining.chunk_sizes. Messages equal the runtime's.
from typing import Any, Final, Literal as L, TypeVar, reveal_type
import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Dim, Tensor, float32, float64, int64, complex64

class Batch(Dim): ...
B = TypeVar("B")

def norms(x: Tensor[tuple[Batch, L[4], L[8]], float32], c: Tensor[tuple[L[3]], complex64], v: Tensor[tuple[L[5]], float64]) -> None:
    reveal_type(x.norm())  # N: Tensor[tuple[()], shapetorch.float32]
    reveal_type(x.norm(dim=-1))  # N: Tensor[tuple[plugin_ops_results.Batch, Literal[4]], shapetorch.float32]
    reveal_type(x.norm(2, -1, keepdim=True))  # N: Tensor[tuple[plugin_ops_results.Batch, Literal[4], Literal[1]], shapetorch.float32]
    reveal_type(x.norm(p=1, dim=(1, 2)))  # N: Tensor[tuple[plugin_ops_results.Batch], shapetorch.float32]
    reveal_type(st.norm(x, dim=0))  # N: Tensor[tuple[Literal[4], Literal[8]], shapetorch.float32]
    reveal_type(c.norm())  # N: Tensor[tuple[()], shapetorch.float32]
    reveal_type(v.norm(dim=0))  # N: Tensor[tuple[()], shapetorch.float64]
    x.norm(dim=3)  # E: norm: dimension out of range (expected to be in range of [-3, 2], but got 3)  [dimension_error_out_of_range]

def triangles(x: Tensor[tuple[Batch, L[4], L[4]], float32], v: Tensor[tuple[L[5]], float32], u: Tensor[Any, float32]) -> None:
    reveal_type(x.triu())  # N: Tensor[tuple[plugin_ops_results.Batch, Literal[4], Literal[4]], shapetorch.float32]
    reveal_type(st.tril(x, -1))  # N: Tensor[tuple[plugin_ops_results.Batch, Literal[4], Literal[4]], shapetorch.float32]
    reveal_type(st.ones(3, 3).triu(diagonal=1))  # N: Tensor[tuple[Literal[3], Literal[3]], shapetorch.float32]
    v.triu()  # E: triu: expected at least 2 dimensions, got shape (5,)  [linalg_error_requires_at_least_2d]
    st.tril(v)  # E: tril: expected at least 2 dimensions, got shape (5,)  [linalg_error_requires_at_least_2d]
    reveal_type(u.tril())  # N: Tensor[Any, shapetorch.float32]

def one_hot(lab: Tensor[tuple[Batch, L[7]], int64], n: int) -> None:
    reveal_type(F.one_hot(lab, 10))  # N: Tensor[tuple[plugin_ops_results.Batch, Literal[7], Literal[10]], shapetorch.int64]
    reveal_type(F.one_hot(lab, num_classes=3))  # N: Tensor[tuple[plugin_ops_results.Batch, Literal[7], Literal[3]], shapetorch.int64]
    reveal_type(F.one_hot(lab))  # N: Tensor[tuple[plugin_ops_results.Batch, Literal[7], Any], shapetorch.int64]
    reveal_type(F.one_hot(lab, n))  # N: Tensor[tuple[plugin_ops_results.Batch, Literal[7], Any], shapetorch.int64]
    F.one_hot(lab, 10).float() @ st.zeros(3, 4)  # E: matmul: inner dimensions do not match: (Batch, 7, 10) @ (3, 4) (10 != 3)  [matmul_error_inner_dimensions_do_not_match]

def pools(img: Tensor[tuple[Batch, L[3], L[32], L[32]], float32], seq: Tensor[tuple[Batch, L[4], L[9]], float32]) -> None:
    reveal_type(F.max_pool2d(img, 2))  # N: Tensor[tuple[plugin_ops_results.Batch, Literal[3], Literal[16], Literal[16]], shapetorch.float32]
    reveal_type(F.max_pool2d(img, kernel_size=3, stride=2, padding=1))  # N: Tensor[tuple[plugin_ops_results.Batch, Literal[3], Literal[16], Literal[16]], shapetorch.float32]
    reveal_type(F.avg_pool2d(img, (2, 4)))  # N: Tensor[tuple[plugin_ops_results.Batch, Literal[3], Literal[16], Literal[8]], shapetorch.float32]
    reveal_type(F.avg_pool1d(seq, 3))  # N: Tensor[tuple[plugin_ops_results.Batch, Literal[4], Literal[3]], shapetorch.float32]
    F.max_pool2d(img, 2, padding=2)  # E: max_pool2d: pad should be at most half of the kernel size, but got padding=(2, 2) and kernel_size=(2, 2)  [pool_error_invalid_padding]

def resize(img: Tensor[tuple[Batch, L[3], L[32], L[32]], float32], seq: Tensor[tuple[Batch, L[4], L[9]], float32],
           flat: Tensor[tuple[L[4], L[9]], float32], s: int) -> None:
    reveal_type(F.interpolate(img, size=(64, 48)))  # N: Tensor[tuple[plugin_ops_results.Batch, Literal[3], Literal[64], Literal[48]], shapetorch.float32]
    reveal_type(F.interpolate(img, size=20, mode="bilinear"))  # N: Tensor[tuple[plugin_ops_results.Batch, Literal[3], Literal[20], Literal[20]], shapetorch.float32]
    reveal_type(F.interpolate(img, scale_factor=2))  # N: Tensor[tuple[plugin_ops_results.Batch, Literal[3], Literal[64], Literal[64]], shapetorch.float32]
    reveal_type(F.interpolate(img, scale_factor=(0.5, 1.5)))  # N: Tensor[tuple[plugin_ops_results.Batch, Literal[3], Literal[16], Literal[48]], shapetorch.float32]
    reveal_type(F.interpolate(seq, scale_factor=1.5, mode="linear"))  # N: Tensor[tuple[plugin_ops_results.Batch, Literal[4], Literal[13]], shapetorch.float32]
    reveal_type(F.interpolate(img, size=s))  # N: Tensor[tuple[Any, ...], Any]
    F.interpolate(flat, size=3)  # E: interpolate: expected 3-D or 4-D or 5-D input (N, C, *spatial) for mode 'nearest', but got input of shape (4, 9)  [upsample_error_input_rank]

def factories(x: Tensor[tuple[Batch, L[4], L[8]], float32], n: int, f: float) -> None:
    reveal_type(st.arange(n))  # N: Tensor[tuple[Any], shapetorch.int64]
    reveal_type(st.arange(1, n, 2))  # N: Tensor[tuple[Any], shapetorch.int64]
    reveal_type(st.arange(f))  # N: Tensor[tuple[Any], shapetorch.float32]
    reveal_type(st.arange(0, 1, 0.25))  # N: Tensor[tuple[Any], shapetorch.float32]
    reveal_type(st.arange(n, dtype=float64))  # N: Tensor[tuple[Any], shapetorch.float64]
    reveal_type(st.arange(10))  # N: Tensor[tuple[Literal[10]], shapetorch.int64]
    st.arange(n) + st.zeros(2, 3)  # unknown length against 3: not an error
    b = x.shape[0]
    reveal_type(st.arange(b))  # N: Tensor[tuple[plugin_ops_results.Batch], shapetorch.int64]
    reveal_type(st.arange(0, b, dtype=float64))  # N: Tensor[tuple[plugin_ops_results.Batch], shapetorch.float64]
    reveal_type(st.arange(1, b))  # N: Tensor[Any, Any]
    reveal_type(st.zeros(3, 4))  # N: Tensor[tuple[Literal[3], Literal[4]], shapetorch.float32]
    reveal_type(st.randn(2))  # N: Tensor[tuple[Literal[2]], shapetorch.float32]
    reveal_type(st.full((2, 3), 1.0))  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32]
    reveal_type(st.full((2, 3), 7))  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.int64]
    reveal_type(st.full((2,), True))  # N: Tensor[tuple[Literal[2]], shapetorch.bool_]
    reveal_type(st.full((2,), 7, dtype=float64))  # N: Tensor[tuple[Literal[2]], shapetorch.float64]

def arange_of_a_typevar(img: Tensor[tuple[B, L[6]], float32], txt: Tensor[tuple[B, L[6]], float32]) -> Tensor[tuple[B, B], float32]:
    labels = st.arange(img.shape[0])  # a size read from .shape: the stubs take it, the plugin makes it (B,)
    reveal_type(labels)  # N: Tensor[tuple[B], shapetorch.int64]
    return img @ txt.T + labels

def arithmetic_on_a_size_from_shape(x: Tensor[tuple[B, L[8], L[16]], float32]) -> Tensor[tuple[B, L[128]], float32]:
    b = x.shape[0]  # an int at run time: with the plugin, arithmetic on it is int arithmetic, not "object * int"
    reveal_type(b * 4)  # N: int
    reveal_type(x.reshape(b * 2, 4, 16))  # N: Tensor[tuple[Any, Literal[4], Literal[16]], shapetorch.float32]
    return x.reshape(b, 128)

H: Final = 4

def scaled_scores(s: Tensor[tuple[L[2], L[3]], float32], i: Tensor[tuple[L[2]], int64], d: int) -> None:
    # a power of numbers is Any to mypy (a negative base to a fractional power is complex); of a non-negative
    # constant it is a float, so the scaled tensor keeps its shape
    reveal_type((H // 2) ** -0.5)  # N: float
    reveal_type(s * (H // 2) ** -0.5)  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.float32]
    reveal_type(i / 16 ** 0.5)  # N: Tensor[tuple[Literal[2]], shapetorch.float32]
    s * (H // 2) ** -0.5 + st.zeros(3, 3)  # E: add: shapes (2, 3) and (3, 3) cannot be broadcast  [broadcast_error_incompatible_dimensions]
    reveal_type(s * d ** -0.5)  # N: Any
    reveal_type(s * (-H) ** 0.5)  # N: Tensor[tuple[Literal[2], Literal[3]], shapetorch.complex64]

def glu(x: Tensor[tuple[Batch, L[32], L[40]], float32], odd: Tensor[tuple[Batch, L[5]], float32]) -> None:
    reveal_type(F.glu(x, dim=1))  # N: Tensor[tuple[plugin_ops_results.Batch, Literal[16], Literal[40]], shapetorch.float32]
    reveal_type(F.glu(x))  # N: Tensor[tuple[plugin_ops_results.Batch, Literal[32], Literal[20]], shapetorch.float32]
    F.glu(odd)  # E: glu: Halving dimension must be even, but dimension 1 is size 5  [glu_error_halving_dimension]
    F.glu(x, 3)  # E: glu: dimension out of range (expected to be in range of [-3, 2], but got 3)  [dimension_error_out_of_range]

def chunks(x: Tensor[tuple[Batch, L[4], L[8]], float32], d: int) -> None:
    reveal_type(x.chunk(2, dim=-1))  # N: tuple[shapetorch.Tensor[tuple[plugin_ops_results.Batch, Literal[4], Literal[4]], shapetorch.float32], shapetorch.Tensor[tuple[plugin_ops_results.Batch, Literal[4], Literal[4]], shapetorch.float32]]
    reveal_type(x.chunk(2))  # N: tuple[shapetorch.Tensor[tuple[Any, Literal[4], Literal[8]], shapetorch.float32], ...]
    a, b = x.chunk(2)
    a @ st.zeros(8, 5)
    a @ st.zeros(4, 5)  # E: matmul: inner dimensions do not match: (?, 4, 8) @ (4, 5) (8 != 4)  [matmul_error_inner_dimensions_do_not_match]
    reveal_type(x.chunk(3, dim=d))  # N: tuple[shapetorch.Tensor[tuple[Any, Any, Any], shapetorch.float32], ...]
    reveal_type(st.chunk(x, 2, d))  # N: tuple[shapetorch.Tensor[tuple[Any, Any, Any], shapetorch.float32], ...]
    x.chunk(0)  # E: chunk: chunks must be greater than 0, got 0  [split_error_invalid_chunks]

S = TypeVar("S", bound=tuple[Any, ...])

def keep(t: Tensor[S, float32]) -> Tensor[S, float32]:
    return t

def reveal(x: Tensor[tuple[Batch, L[3]], float32], a: Any) -> None:
    st.reveal_shape(x)  # N: Shape: (Batch, 3)  dtype: float32
    st.reveal_shape(keep(x))  # N: Shape: (Batch, 3)  dtype: float32
    st.reveal_shape(keep(keep(x)))  # N: Shape: (Batch, 3)  dtype: float32
    st.reveal_shape(F.relu(x) + 1)  # N: Shape: (Batch, 3)  dtype: float32
    st.reveal_shape(a)  # N: Shape: unknown (the argument is Any, not a typed Tensor)  dtype: unknown
    y = st.reveal_shape(x @ st.zeros(3, 2))  # N: Shape: (Batch, 2)  dtype: float32
    reveal_type(y)  # N: Tensor[tuple[plugin_ops_results.Batch, Literal[2]], shapetorch.float32]
