"""Shape changes that keep the elements: reshape/view, permute and friends, squeeze, flatten."""

from __future__ import annotations

from collections.abc import Sequence

from .axes import wrap_dim, wrap_dims
from .dims import UNKNOWN, Dim, Shape, differ, dim_div, prod, product_differ, product_indivisible
from .errors import RuleError, invalid_argument


def reshape_shape(shape: Shape, sizes: Sequence[Dim], op: str = "reshape") -> Shape:
    """``x.reshape(*sizes)``: the product must match; one -1 is inferred."""
    sizes = tuple(sizes)
    infer = [i for i, s in enumerate(sizes) if s == -1]
    if len(infer) > 1:
        raise RuleError("reshape_error_multiple_inferred", op=op, sizes=list(sizes))
    for s in sizes:
        if isinstance(s, int) and s < -1:
            raise RuleError("reshape_error_invalid_size", op=op, size=s, sizes=list(sizes))
    numel = prod(shape)
    rest = prod(tuple(s for s in sizes if s != -1))
    if infer:
        i = infer[0]
        if rest == 0:
            # torch: -1 cannot be inferred next to a 0 size ("ambiguous")
            raise RuleError("reshape_error_size_mismatch", op=op, sizes=list(sizes), shape=shape, numel=numel)
        if isinstance(numel, int) and isinstance(rest, int):
            if numel % rest:
                raise RuleError("reshape_error_size_mismatch", op=op, sizes=list(sizes), shape=shape, numel=numel)
            return sizes[:i] + (numel // rest,) + sizes[i + 1 :]
        if product_indivisible(numel, rest):
            raise RuleError("reshape_error_size_mismatch", op=op, sizes=list(sizes), shape=shape, numel=numel)
        return sizes[:i] + (dim_div(numel, rest),) + sizes[i + 1 :]
    if product_differ(numel, rest):
        raise RuleError("reshape_error_size_mismatch", op=op, sizes=list(sizes), shape=shape, numel=numel)
    return sizes


def permute_shape(shape: Shape, dims: Sequence[int], op: str = "permute") -> Shape:
    if len(dims) != len(shape):
        raise RuleError("permute_error_dimension_count_mismatch", op=op, dims=list(dims), rank=len(shape), shape=shape)
    order = wrap_dims(dims, len(shape), op)
    return tuple(shape[d] for d in order)


def transpose_shape(shape: Shape, dim0: int, dim1: int, op: str = "transpose") -> Shape:
    code = "transpose_dims_error_out_of_range"
    a, b = wrap_dim(dim0, len(shape), op, code), wrap_dim(dim1, len(shape), op, code)
    if not shape:
        return shape
    out = list(shape)
    out[a], out[b] = out[b], out[a]
    return tuple(out)


def t_shape(shape: Shape, op: str = "t") -> Shape:
    if len(shape) > 2:
        raise RuleError("transpose_error_requires_2d_tensor", op=op, expected="<= 2", shape=shape)
    return shape[::-1]


def matrix_transpose_shape(shape: Shape, op: str = "mT") -> Shape:
    if len(shape) == 1:  # torch: 0-d is returned as it is, 1-d is an error
        raise RuleError("transpose_error_requires_2d_tensor", op=op, expected=">= 2", shape=shape)
    return shape[:-2] + (shape[-1], shape[-2]) if shape else shape


def movedim_shape(shape: Shape, source: Sequence[int], destination: Sequence[int], op: str = "movedim") -> Shape:
    return tuple(shape[d] for d in movedim_order(len(shape), source, destination, op))


def movedim_order(rank: int, source: Sequence[int], destination: Sequence[int], op: str = "movedim") -> tuple[int, ...]:
    """The permutation that ``movedim(source, destination)`` applies."""
    if len(source) != len(destination):
        raise RuleError(
            "permute_error_dimension_count_mismatch", op=op, dims=f"{list(source)} -> {list(destination)}",
            rank=rank, shape=f"(rank {rank})",
        )
    src, dst = wrap_dims(source, rank, op), wrap_dims(destination, rank, op)
    if rank == 0:  # a 0-d tensor accepts dims 0 and -1 and has nothing to move
        return ()
    order: list[int | None] = [None] * rank
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(rank) if i not in src)
    return tuple(o if o is not None else next(rest) for o in order)


def squeeze_shape(shape: Shape, dim: int | Sequence[int] | None = None, op: str = "squeeze") -> Shape:
    """Drop size-1 dims: all of them, or only those of ``dim`` that have size 1 (others stay)."""
    if dim is None:
        # An unknown size might be 1: the static result is then undecidable, so keep the dim.
        return tuple(d for d in shape if d != 1)
    dims = wrap_dims([dim] if isinstance(dim, int) else dim, len(shape), op)
    return tuple(d for i, d in enumerate(shape) if not (i in dims and d == 1))


def unsqueeze_shape(shape: Shape, dim: int, op: str = "unsqueeze") -> Shape:
    d = wrap_dim(dim, len(shape) + 1, op)
    return shape[:d] + (1,) + shape[d:]


def flatten_shape(shape: Shape, start_dim: int = 0, end_dim: int = -1, op: str = "flatten") -> Shape:
    if not shape:
        wrap_dim(start_dim, 0, op)
        wrap_dim(end_dim, 0, op)
        return (1,)
    s, e = wrap_dim(start_dim, len(shape), op), wrap_dim(end_dim, len(shape), op)
    if s > e:
        raise RuleError("flatten_error_start_after_end", op=op, start_dim=start_dim, end_dim=end_dim, shape=shape)
    return shape[:s] + (prod(shape[s : e + 1]),) + shape[e + 1 :]


def unflatten_shape(shape: Shape, dim: int, sizes: Sequence[Dim], op: str = "unflatten") -> Shape:
    if not shape:
        raise RuleError("dimension_error_zero_dim", op=op)
    d = wrap_dim(dim, len(shape), op)
    if not sizes:
        raise RuleError("unflatten_error_size_mismatch", op=op, sizes=list(sizes), size=shape[d], dim=dim, shape=shape)
    try:
        new = reshape_shape((shape[d],), sizes, op)
    except RuleError:
        raise RuleError(
            "unflatten_error_size_mismatch", op=op, sizes=list(sizes), size=shape[d], dim=dim, shape=shape
        ) from None
    return shape[:d] + new + shape[d + 1 :]


def unfold_shape(shape: Shape, dim: int, size: int, step: int, op: str = "unfold") -> Shape:
    """``Tensor.unfold``: windows of ``size`` every ``step`` along ``dim``, the window as a new last dim."""
    d = wrap_dim(dim, max(len(shape), 1), op)
    if step <= 0:
        raise invalid_argument(op, f"step is {step} but must be > 0")
    if size < 0:
        raise invalid_argument(op, f"size is {size} but must be >= 0")
    if not shape:
        if size > 1:
            raise invalid_argument(op, f"maximum size for tensor at dimension {d} is 1 but size is {size}")
        return (size,)
    n = shape[d]
    if isinstance(n, int) and size > n:
        raise invalid_argument(op, f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    windows: Dim = (n - size) // step + 1 if isinstance(n, int) else UNKNOWN
    return (*shape[:d], windows, *shape[d + 1 :], size)


def as_strided_check(size: Sequence[int], stride: Sequence[int], offset: int, storage: int, op: str = "as_strided") -> int:
    """The storage span a strided view needs; it must fit ``storage`` elements. Returns the span."""
    if len(size) != len(stride):
        raise invalid_argument(op, "mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise invalid_argument(op, f"negative strides are not supported at the moment, got strides: {list(stride)}")
    if any(s < 0 for s in size):
        raise invalid_argument(op, f"negative sizes are not supported, got sizes: {list(size)}")
    if offset < 0:
        raise invalid_argument(op, f"storage offset must be non-negative, got {offset}")
    need = 0 if any(s == 0 for s in size) else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if need > storage:
        raise invalid_argument(op, f"sizes {list(size)}, strides {list(stride)} and storage offset {offset} need a storage of "
                       f"{need} elements, but the storage has {storage}")
    return need


def view_as_complex_shape(shape: Shape, op: str = "view_as_complex") -> Shape:
    if not shape:
        raise invalid_argument(op, "input tensor must have one or more dimensions")
    if differ(shape[-1], 2):
        raise invalid_argument(op, f"tensor must have a last dimension of size 2, got shape {tuple(shape)}")
    return tuple(shape[:-1])


def view_as_real_shape(shape: Shape) -> Shape:
    return tuple(shape) + (2,)


def diagonal_shape(shape: Shape, offset: int = 0, dim1: int = 0, dim2: int = 1, op: str = "diagonal") -> Shape:
    """The shape of ``diagonal``: the two dims removed, the diagonal's length appended."""
    a, b = wrap_dim(dim1, len(shape), op), wrap_dim(dim2, len(shape), op)
    if a == b:
        raise RuleError("dim_error_repeated", op=op, dim=dim1, dims=[dim1, dim2])
    n1, n2 = shape[a], shape[b]
    length: Dim = UNKNOWN
    if isinstance(n1, int) and isinstance(n2, int):
        length = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    return tuple(s for i, s in enumerate(shape) if i not in (a, b)) + (length,)
