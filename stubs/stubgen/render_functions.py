"""The module functions: the ones common to every branch, the precise ones, the permissive ones.
"""

from __future__ import annotations

from .render_dim_literals import gather
from .render_overloads import (
    binary_permissive,
    binary_precise,
    factories_rest,
    matmul_precise,
    method_as_function,
    reduction_permissive,
    reduction_precise,
    selection_ops,
    sized,
    triangle_and_norm,
    unary_float,
)
from .render_pyright import cat_by_dim, literal_factory
from .tables import (
    ALONG_DIM,
    BINARY,
    FACTORIES,
    FACTORY_KW,
    FACTORY_KW_D,
    KEEP,
    REDUCTIONS,
    UNARY_BOOL,
    UNARY_FLOAT,
    UNARY_SAME,
)


def functions_common() -> list[str]:
    out: list[str] = []
    for n in UNARY_SAME + KEEP:
        out.append(f"def {n}(input: Tensor[_S2, _D2]) -> Tensor[_S2, _D2]: ...")
    out.append("def clamp(input: Tensor[_S2, _D2], min: Incomplete = None, max: Incomplete = None) -> Tensor[_S2, _D2]: ...")
    out.append("def clip(input: Tensor[_S2, _D2], min: Incomplete = None, max: Incomplete = None) -> Tensor[_S2, _D2]: ...")
    for n in UNARY_FLOAT:
        out += unary_float(n, False)
    for n in UNARY_BOOL:
        out.append(f"def {n}(input: Tensor[_S2, Any]) -> Tensor[_S2, bool_]: ...")
    for n, rule in ALONG_DIM.items():
        if rule == "float":
            out += ["@overload", f"def {n}(input: Tensor[_S2, _FT], dim: _int, dtype: None = None) -> Tensor[_S2, _FT]: ...",
                    "@overload", f"def {n}(input: Tensor[_S2, Any], dim: _int, dtype: Incomplete = None) -> Tensor[_S2, Any]: ..."]
        else:
            out.append(f"def {n}(input: Tensor[_S2, Any], dim: _int, *, dtype: Incomplete = None) -> Tensor[_S2, Any]: ...")
    out += triangle_and_norm(False)
    out += selection_ops(False)
    out += [
        "def is_tensor(obj: object) -> TypeIs[Tensor[Any, Any]]: ...",
        "def numel(input: Tensor[Any, Any]) -> _int: ...",
        "def promote_types(type1: type[DType], type2: type[DType]) -> type[DType]: ...",
        "def result_type(tensor1: Any, tensor2: Any) -> type[DType]: ...",
        "def can_cast(from_: type[DType], to: type[DType]) -> _bool: ...",
        "def broadcast_shapes(*shapes: Any) -> Size: ...",
        "def broadcast_tensors(*tensors: Tensor[Any, _D2]) -> tuple[Tensor[AnyShape, _D2], ...]: ...",
        "def get_default_dtype() -> type[DType]: ...",
        "def set_default_dtype(d: type[DType]) -> None: ...",
        "def list_ops() -> list[str]: ...",
        "def get_op_info(name: str) -> dict[str, Any]: ...",
        "def manual_seed(seed: _int) -> Incomplete: ...",
        "def tensor(data: Any, *, dtype: Incomplete = None, device: Incomplete = None, requires_grad: _bool = False) "
        "-> Tensor[AnyShape, Any]: ...",
        "def as_tensor(data: Any, dtype: Incomplete = None, device: Incomplete = None) -> Tensor[AnyShape, Any]: ...",
        "def from_numpy(ndarray: Any) -> Tensor[AnyShape, Any]: ...",
        "def reveal_shape(tensor: _TensorT) -> _TensorT:",
        '    """mypy+plugin: a note with the shape and dtype of ``tensor``. At runtime: prints them; returns ``tensor``."""',
    ]
    return out


def functions_precise() -> list[str]:
    out: list[str] = []
    for n, rule in BINARY.items():
        out += binary_precise(n, rule, False)
    out += binary_precise("pow", "promote", False, other="exponent")
    out += matmul_precise("matmul", "input", "other")
    out += [
        "def mm(input: Tensor[tuple[_M, _K], _D2], mat2: Tensor[tuple[_K, _N], _D2]) -> Tensor[tuple[_M, _N], _D2]: ...",
        "def bmm(input: Tensor[tuple[_B, _M, _K], _D2], mat2: Tensor[tuple[_B, _K, _N], _D2]) "
        "-> Tensor[tuple[_B, _M, _N], _D2]: ...",
        "def mv(input: Tensor[tuple[_M, _K], _D2], vec: Tensor[tuple[_K], _D2]) -> Tensor[tuple[_M], _D2]: ...",
        "def dot(input: Tensor[tuple[_K], _D2], other: Tensor[tuple[_K], _D2]) -> Tensor[tuple[()], _D2]: ...",
        "def outer(input: Tensor[tuple[_M], _D2], vec2: Tensor[tuple[_N], _D2]) -> Tensor[tuple[_M, _N], _D2]: ...",
    ]
    for n, rule in REDUCTIONS.items():
        out += [ln.replace(", dim", ", dim").replace("(input: Tensor[Any, D]", "(input: Tensor[Any, D]")
                for ln in reduction_precise(n, rule, False)]
    for n in ("cat", "concat", "concatenate", "stack"):
        # mypy joins a list of differently shaped tensors to list[object] against Sequence[Tensor[Any, _D2]] (S is
        # invariant), a false error on st.cat([a, b]); the second overload takes such a list, keeping no dtype.
        # pyright reads cat's literal-dim overloads first
        by_dim = cat_by_dim(n) if n != "stack" else []
        out += [*by_dim, "@overload", f"def {n}(tensors: Sequence[Tensor[Any, _D2]], dim: _int = 0) -> Tensor[AnyShape, _D2]: ...",
                "@overload", f"def {n}(tensors: Sequence[Tensor[Any, Any]], dim: _int = 0) -> Tensor[AnyShape, Any]: ..."]
    out += [
        "def where(condition: Tensor[Any, Any], input: Tensor[Any, Any] | _complex, other: Tensor[Any, Any] | _complex) "
        "-> Tensor[AnyShape, Any]: ...",
        "def einsum(equation: str, /, *operands: Tensor[Any, _D2] | Sequence[Tensor[Any, _D2]]) -> Tensor[AnyShape, _D2]: ...",
        "def rearrange(tensor: Tensor[Any, _D2], pattern: str, /, **axes_lengths: _int) -> Tensor[AnyShape, _D2]: ...",
        "def reduce(tensor: Tensor[Any, _D2], pattern: str, reduction: str, /, **axes_lengths: _int) "
        "-> Tensor[AnyShape, _D2]: ...",
        "def repeat(tensor: Tensor[Any, _D2], pattern: str, /, **axes_lengths: _int) -> Tensor[AnyShape, _D2]: ...",
    ]
    for n in ("reshape", "flatten", "unflatten", "transpose", "permute", "movedim", "squeeze", "unsqueeze", "t",
              "select", "narrow", "split", "chunk", "unbind", "broadcast_to", "swapaxes", "swapdims", "moveaxis"):
        out += method_as_function(n, "AnyShape")
    for n in FACTORIES:
        out += literal_factory(n, "", "float32", FACTORY_KW)  # pyright: zeros(2, 3) keeps its literal sizes
        out += sized(n, "", "float32", FACTORY_KW)  # without dtype=: the default dtype
        out += literal_factory(n, "", "_D2", FACTORY_KW_D)
        out += sized(n, "", "_D2", FACTORY_KW_D)
    out += factories_rest(precise=True)
    out += gather("input", "_D2")
    return out


def functions_permissive() -> list[str]:
    out: list[str] = []
    for n, rule in BINARY.items():
        out += binary_permissive(n, rule, False)
    out += binary_permissive("pow", "promote", False, other="exponent")
    for n, other in (("matmul", "other"), ("mm", "mat2"), ("bmm", "mat2"), ("mv", "vec"), ("dot", "other"),
                     ("outer", "vec2")):
        out.append(f"def {n}(input: Tensor[Any, _D2], {other}: Tensor[Any, Any]) -> Tensor[Any, _D2]: ...")
    for n, rule in REDUCTIONS.items():
        out += reduction_permissive(n, rule, False)
    out += [  # lists of differently shaped tensors join to object under an invariant S: take Tensor[Any, Any]
        "def cat(tensors: Sequence[Tensor[Any, Any]], dim: _int = 0) -> Tensor[Any, Any]: ...",
        "def concat(tensors: Sequence[Tensor[Any, Any]], dim: _int = 0) -> Tensor[Any, Any]: ...",
        "def concatenate(tensors: Sequence[Tensor[Any, Any]], dim: _int = 0) -> Tensor[Any, Any]: ...",
        "def stack(tensors: Sequence[Tensor[Any, Any]], dim: _int = 0) -> Tensor[Any, Any]: ...",
        "def where(condition: Tensor[Any, Any], input: Tensor[Any, Any] | _complex, other: Tensor[Any, Any] | _complex) "
        "-> Tensor[Any, Any]: ...",
        "def einsum(equation: str, /, *operands: Tensor[Any, Any] | Sequence[Tensor[Any, Any]]) -> Tensor[Any, Any]: ...",
        "def rearrange(tensor: Tensor[Any, _D2], pattern: str, /, **axes_lengths: _int) -> Tensor[Any, _D2]: ...",
        "def reduce(tensor: Tensor[Any, _D2], pattern: str, reduction: str, /, **axes_lengths: _int) -> Tensor[Any, _D2]: ...",
        "def repeat(tensor: Tensor[Any, _D2], pattern: str, /, **axes_lengths: _int) -> Tensor[Any, _D2]: ...",
    ]
    for n in ("reshape", "flatten", "unflatten", "transpose", "permute", "movedim", "squeeze", "unsqueeze", "t",
              "select", "narrow", "split", "chunk", "unbind", "broadcast_to", "swapaxes", "swapdims", "moveaxis"):
        out += method_as_function(n, "Any")
    for n in FACTORIES:
        out += [
            "@overload",
            f"def {n}(*size: _Size | Sequence[_Size], {FACTORY_KW}) -> Tensor[Any, float32]: ...",
            "@overload",
            f"def {n}(*size: _Size | Sequence[_Size], {FACTORY_KW_D}) -> Tensor[Any, _D2]: ...",
        ]
    out += factories_rest(precise=False)
    return out
