"""The ``Tensor`` class body: the members common to every branch, the precise ones, the permissive ones.
"""

from __future__ import annotations

from .render_dim_literals import gather, getitem_slices, permute, squeeze, transpose, unsqueeze, values_indices
from .render_dunders import dunders_common, dunders_permissive, dunders_precise
from .render_overloads import (
    binary_permissive,
    binary_precise,
    matmul_precise,
    reduction_permissive,
    reduction_precise,
    selection_ops,
    sized,
    triangle_and_norm,
    unary_float,
)
from .render_pyright import getitem_columns, literal_sized, mypy_only, pyright_only
from .tables import ALONG_DIM, BINARY, CASTS, KEEP, REDUCTIONS, UNARY_BOOL, UNARY_FLOAT, UNARY_SAME


def tensor_common() -> list[str]:
    out = [
        "@property",
        "def shape(self) -> S: ...",
        "@property",
        "def dtype(self) -> type[D]: ...",
        "@property",
        "def device(self) -> Incomplete: ...",
        "@property",
        "def ndim(self) -> _int: ...",
        "requires_grad: _bool",
        "grad: Tensor[S, D] | None",
        "data: Tensor[S, D]",
        "@property",
        "def is_leaf(self) -> _bool: ...",
        "@property",
        "def grad_fn(self) -> Incomplete: ...",
        "def __init__(self, *args: Any, **kwargs: Any) -> None: ...",
        "def dim(self) -> _int: ...",
        "def numel(self) -> _int: ...",
        "def element_size(self) -> _int: ...",
        "@overload",
        "def size(self, dim: None = None) -> S: ...",
        "@overload",
        "def size(self, dim: _int) -> _int: ...",
        "def stride(self, dim: _int | None = None) -> Any: ...",
        "def is_contiguous(self, memory_format: Incomplete = None) -> _bool: ...",
        "def is_floating_point(self) -> _bool: ...",
        "def is_complex(self) -> _bool: ...",
        "def item(self) -> Any: ...",
        "def tolist(self) -> Any: ...",
        "def numpy(self, *, force: _bool = False) -> Incomplete: ...",
        "def __array__(self, dtype: Incomplete = None, copy: Incomplete = None) -> Incomplete: ...",
        "def __dlpack__(self, *args: Any, **kwargs: Any) -> Incomplete: ...",
        "def __dlpack_device__(self) -> Incomplete: ...",
        "def backward(self, gradient: Tensor[Any, Any] | None = None, retain_graph: _bool | None = None, "
        "create_graph: _bool = False, inputs: Incomplete = None) -> None: ...",
        "def requires_grad_(self, requires_grad: _bool = True) -> Self: ...",
        "def retain_grad(self) -> None: ...",
        "def register_hook(self, hook: Callable[[Tensor[S, D]], Tensor[Any, Any] | None]) -> Incomplete: ...",
        "def detach_(self) -> Self: ...",
        "def zero_(self) -> Self: ...",
        "def fill_(self, value: _complex | Tensor[Any, Any]) -> Self: ...",
        "def copy_(self, src: Tensor[Any, Any], non_blocking: _bool = False) -> Self: ...",
    ]
    out += dunders_common()
    for name, dt in CASTS.items():
        out.append(f"def {name}(self) -> Tensor[S, {dt}]: ...")
    out += [
        "@overload",
        "def to(self, dtype: type[_D2], /, *, non_blocking: _bool = False, copy: _bool = False) -> Tensor[S, _D2]: ...",
        "@overload",
        "def to(self, device: Incomplete, dtype: type[_D2], /, *, non_blocking: _bool = False, copy: _bool = False) "
        "-> Tensor[S, _D2]: ...",
        "@overload",
        "def to(self, *args: Any, **kwargs: Any) -> Tensor[S, Any]: ...",
        "@overload",
        "def type(self, dtype: None = None) -> str: ...",
        "@overload",
        "def type(self, dtype: type[_D2]) -> Tensor[S, _D2]: ...",
    ]
    for n in UNARY_SAME + KEEP:
        out.append(f"def {n}(self) -> Tensor[S, D]: ...")
        if n not in KEEP:
            out.append(f"def {n}_(self) -> Self: ...")
    out.append("def clamp(self, min: Incomplete = None, max: Incomplete = None) -> Tensor[S, D]: ...")
    out.append("def clip(self, min: Incomplete = None, max: Incomplete = None) -> Tensor[S, D]: ...")
    out.append("def nan_to_num(self, nan: _float = 0.0, posinf: _float | None = None, neginf: _float | None = None) "
               "-> Tensor[S, D]: ...")
    for n in UNARY_FLOAT:
        out += unary_float(n, True)
        out.append(f"def {n}_(self) -> Self: ...")
    for n in UNARY_BOOL:
        out.append(f"def {n}(self) -> Tensor[S, bool_]: ...")
    for n, rule in ALONG_DIM.items():
        if rule == "float":
            out += ["@overload", f"def {n}(self: Tensor[_S2, _FT], dim: _int, dtype: None = None) -> Tensor[_S2, _FT]: ...",
                    "@overload", f"def {n}(self: Tensor[_S2, Any], dim: _int, dtype: Incomplete = None) -> Tensor[_S2, Any]: ..."]
        else:
            out.append(f"def {n}(self, dim: _int, *, dtype: Incomplete = None) -> Tensor[S, Any]: ...")
    out += triangle_and_norm(True)
    out += selection_ops(True)
    out += [
        "def where(self, condition: Tensor[Any, Any], other: Tensor[Any, Any] | _complex) -> Tensor[AnyShape, Any]: ...",
        "def masked_fill(self, mask: Tensor[Any, Any], value: _complex | Tensor[Any, Any]) -> Tensor[S, D]: ...",
    ]
    return out


def tensor_precise() -> list[str]:
    out = dunders_precise()
    for n, rule in BINARY.items():
        out += binary_precise(n, rule, True)
    out += binary_precise("pow", "promote", True, other="exponent")
    out += matmul_precise("__matmul__", "self", "other")
    out += matmul_precise("matmul", "self", "other")
    out += [
        "def mm(self: Tensor[tuple[_M, _K], D], mat2: Tensor[tuple[_K, _N], D]) -> Tensor[tuple[_M, _N], D]: ...",
        "def bmm(self: Tensor[tuple[_B, _M, _K], D], mat2: Tensor[tuple[_B, _K, _N], D]) -> Tensor[tuple[_B, _M, _N], D]: ...",
        "def mv(self: Tensor[tuple[_M, _K], D], vec: Tensor[tuple[_K], D]) -> Tensor[tuple[_M], D]: ...",
        "def dot(self: Tensor[tuple[_K], D], other: Tensor[tuple[_K], D]) -> Tensor[tuple[()], D]: ...",
        "def inner(self, other: Tensor[Any, D]) -> Tensor[AnyShape, D]: ...",
        "def outer(self: Tensor[tuple[_M], D], vec2: Tensor[tuple[_N], D]) -> Tensor[tuple[_M, _N], D]: ...",
        "def ger(self: Tensor[tuple[_M], D], vec2: Tensor[tuple[_N], D]) -> Tensor[tuple[_M, _N], D]: ...",
    ]
    for n, rule in REDUCTIONS.items():
        out += reduction_precise(n, rule, True)
    out += literal_sized("reshape", "self, ", "D")
    out += sized("reshape", "self, ", "D")
    # view(dtype) first: a size (_Size) accepts anything, a dtype class included
    out += ["@overload", "def view(self, dtype: type[_D2], /) -> Tensor[AnyShape, _D2]: ..."]
    out += literal_sized("view", "self, ", "D")
    out += sized("view", "self, ", "D")
    out += sized("expand", "self, ", "D")
    out += [
        "def broadcast_to(self, size: Sequence[_int]) -> Tensor[AnyShape, D]: ...",
        "def expand_as(self, other: Tensor[_S2, Any]) -> Tensor[_S2, D]: ...",
        "def flatten(self, start_dim: _int = 0, end_dim: _int = -1) -> Tensor[AnyShape, D]: ...",
        "def unflatten(self, dim: _int, sizes: Sequence[_int]) -> Tensor[AnyShape, D]: ...",
        *transpose(),
        "@overload",
        "def transpose(self: Tensor[tuple[_M, _N], D], dim0: _L[0, -2], dim1: _L[1, -1]) -> Tensor[tuple[_N, _M], D]: ...",
        "@overload",
        "def transpose(self, dim0: _int, dim1: _int) -> Tensor[AnyShape, D]: ...",
        "def swapdims(self, dim0: _int, dim1: _int) -> Tensor[AnyShape, D]: ...",
        "def swapaxes(self, axis0: _int, axis1: _int) -> Tensor[AnyShape, D]: ...",
        *permute(),
        "@overload",
        "def permute(self, *dims: _int | Sequence[_int]) -> Tensor[AnyShape, D]: ...",
        "def movedim(self, source: _int | Sequence[_int], destination: _int | Sequence[_int]) -> Tensor[AnyShape, D]: ...",
        "def moveaxis(self, source: _int | Sequence[_int], destination: _int | Sequence[_int]) -> Tensor[AnyShape, D]: ...",
        "@overload",
        "def t(self: Tensor[tuple[_M, _N], D]) -> Tensor[tuple[_N, _M], D]: ...",
        "@overload",
        "def t(self: Tensor[tuple[_M], D]) -> Tensor[tuple[_M], D]: ...",
        "@overload",
        "def t(self: Tensor[tuple[()], D]) -> Tensor[tuple[()], D]: ...",
        "@property",
        "def mT(self: Tensor[tuple[Unpack[_Bs], _M, _N], D]) -> Tensor[tuple[Unpack[_Bs], _N, _M], D]: ...",
        *mypy_only(["@property", "def T(self) -> Tensor[AnyShape, D]: ..."]),
        *pyright_only(["T: _Reversed"]),
        *squeeze(),
        "@overload",
        "def squeeze(self, dim: _int | Sequence[_int] | None = None) -> Tensor[AnyShape, D]: ...",
        *unsqueeze(),
        "@overload",
        "def unsqueeze(self: Tensor[tuple[Unpack[_Ts]], D], dim: _L[0]) -> Tensor[tuple[_L[1], Unpack[_Ts]], D]: ...",
        "@overload",
        "def unsqueeze(self: Tensor[tuple[Unpack[_Ts]], D], dim: _L[-1]) -> Tensor[tuple[Unpack[_Ts], _L[1]], D]: ...",
        "@overload",
        "def unsqueeze(self, dim: _int) -> Tensor[AnyShape, D]: ...",
        "def select(self, dim: _int, index: _int) -> Tensor[AnyShape, D]: ...",
        "def narrow(self, dim: _int, start: _int, length: _int) -> Tensor[AnyShape, D]: ...",
        "def split(self, split_size_or_sections: _int | Sequence[_int], dim: _int = 0) -> tuple[Tensor[AnyShape, D], ...]: ...",
        "def chunk(self, chunks: _int, dim: _int = 0) -> tuple[Tensor[AnyShape, D], ...]: ...",
        "def unbind(self, dim: _int = 0) -> tuple[Tensor[AnyShape, D], ...]: ...",
        "@overload",
        "def __getitem__(self: Tensor[tuple[Any, Unpack[_Ts]], D], index: _int, /) -> Tensor[tuple[Unpack[_Ts]], D]: ...",
        *getitem_columns(),
        *getitem_slices(),
        "@overload",
        "def __getitem__(self, index: Any, /) -> Tensor[AnyShape, D]: ...",
    ]
    common = selection_ops(True)
    for name in ("max", "min"):
        own = [ln for i, ln in enumerate(common) if ln.startswith(f"def {name}(")
               or (ln == "@overload" and common[i + 1].startswith(f"def {name}("))]
        out += values_indices(name, "self", "D", own)
    out += gather("self", "D")
    return out


def tensor_permissive() -> list[str]:
    out = dunders_permissive()
    for n, rule in BINARY.items():
        out += binary_permissive(n, rule, True)
    out += binary_permissive("pow", "promote", True, other="exponent")
    out += [
        "def __matmul__(self, other: Tensor[Any, Any]) -> Tensor[Any, D]: ...",
        "def matmul(self, other: Tensor[Any, Any]) -> Tensor[Any, D]: ...",
        "def mm(self, mat2: Tensor[Any, Any]) -> Tensor[Any, D]: ...",
        "def bmm(self, mat2: Tensor[Any, Any]) -> Tensor[Any, D]: ...",
        "def mv(self, vec: Tensor[Any, Any]) -> Tensor[Any, D]: ...",
        "def dot(self, other: Tensor[Any, Any]) -> Tensor[Any, D]: ...",
        "def inner(self, other: Tensor[Any, Any]) -> Tensor[Any, D]: ...",
        "def outer(self, vec2: Tensor[Any, Any]) -> Tensor[Any, D]: ...",
        "def ger(self, vec2: Tensor[Any, Any]) -> Tensor[Any, D]: ...",
    ]
    for n, rule in REDUCTIONS.items():
        out += reduction_permissive(n, rule, True)
    out += [
        "def reshape(self, *shape: _Size | Sequence[_Size]) -> Tensor[Any, D]: ...",
        "def view(self, *shape: _Size | Sequence[_Size] | type[DType]) -> Tensor[Any, Any]: ...",
        "def expand(self, *size: _Size | Sequence[_Size]) -> Tensor[Any, D]: ...",
        "def broadcast_to(self, size: Sequence[_int]) -> Tensor[Any, D]: ...",
        "def expand_as(self, other: Tensor[Any, Any]) -> Tensor[Any, D]: ...",
        "def flatten(self, start_dim: _int = 0, end_dim: _int = -1) -> Tensor[Any, D]: ...",
        "def unflatten(self, dim: _int, sizes: Sequence[_int]) -> Tensor[Any, D]: ...",
        "def transpose(self, dim0: _int, dim1: _int) -> Tensor[Any, D]: ...",
        "def swapdims(self, dim0: _int, dim1: _int) -> Tensor[Any, D]: ...",
        "def swapaxes(self, axis0: _int, axis1: _int) -> Tensor[Any, D]: ...",
        "def permute(self, *dims: _int | Sequence[_int]) -> Tensor[Any, D]: ...",
        "def movedim(self, source: _int | Sequence[_int], destination: _int | Sequence[_int]) -> Tensor[Any, D]: ...",
        "def moveaxis(self, source: _int | Sequence[_int], destination: _int | Sequence[_int]) -> Tensor[Any, D]: ...",
        "def t(self) -> Tensor[Any, D]: ...",
        "@property",
        "def mT(self) -> Tensor[Any, D]: ...",
        "@property",
        "def T(self) -> Tensor[Any, D]: ...",
        "def squeeze(self, dim: _int | Sequence[_int] | None = None) -> Tensor[Any, D]: ...",
        "def unsqueeze(self, dim: _int) -> Tensor[Any, D]: ...",
        "def select(self, dim: _int, index: _int) -> Tensor[Any, D]: ...",
        "def narrow(self, dim: _int, start: _int, length: _int) -> Tensor[Any, D]: ...",
        "def split(self, split_size_or_sections: _int | Sequence[_int], dim: _int = 0) -> tuple[Tensor[Any, D], ...]: ...",
        "def chunk(self, chunks: _int, dim: _int = 0) -> tuple[Tensor[Any, D], ...]: ...",
        "def unbind(self, dim: _int = 0) -> tuple[Tensor[Any, D], ...]: ...",
        "def __getitem__(self, index: Any, /) -> Tensor[Any, D]: ...",
    ]
    return out
