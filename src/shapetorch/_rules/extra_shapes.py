"""Shape rules of the tiling, flipping, diagonal, triangular, linear-algebra, tensordot and FFT ops.

Pure functions over shapes (ints, :class:`Sym`, :data:`UNKNOWN`), standard library only, as every
rule: the runtime and the mypy plugin both call them. Each raises :class:`RuleError` with a
catalogue code on a real contradiction and stays gradual on unknown sizes.
"""

from __future__ import annotations

from collections.abc import Sequence

from .axes import wrap_dim, wrap_dims
from .broadcast import broadcast_pair, broadcast_shapes, expand_shape
from .dims import UNKNOWN, Dim, Shape, differ, dim_mul, prod
from .errors import RuleError


def _bad(op: str, problem: str) -> RuleError:
    return RuleError("argument_error_invalid", op=op, problem=problem)


def _add(a: Dim, b: int) -> Dim:
    return a + b if isinstance(a, int) else UNKNOWN


# -- tiling, flipping, rolling -----------------------------------------------------------------------


def tile_shape(shape: Shape, reps: Sequence[int], op: str = "tile") -> Shape:
    """``tile``: shape or reps left-padded with 1s, then multiplied elementwise."""
    n = max(len(shape), len(reps))
    s = (1,) * (n - len(shape)) + tuple(shape)
    r = (1,) * (n - len(reps)) + tuple(reps)
    out = tuple(dim_mul(a, b) for a, b in zip(s, r))
    for d in out:
        if isinstance(d, int) and d < 0:
            raise _bad(op, f"trying to create a tensor with negative dimension {d}: {list(out)}")
    return out


def repeat_shape(shape: Shape, sizes: Sequence[int], op: str = "repeat") -> Shape:
    """``Tensor.repeat``: as :func:`tile` but ``sizes`` may not be shorter than the rank."""
    if len(sizes) < len(shape):
        raise _bad(op, f"number of dimensions of repeat dims ({len(sizes)}) can not be smaller than the number "
                       f"of dimensions of the tensor ({len(shape)})")
    return tile_shape(shape, sizes, op)


def flip_dims(shape: Shape, dims: Sequence[int], op: str = "flip") -> tuple[int, ...]:
    """``flip``: each dim in range (a 0-d tensor takes 0 and -1), none repeated."""
    return wrap_dims(dims, len(shape), op, "flip_error_dim_out_of_range")


def roll_dims(shape: Shape, shifts: Sequence[int], dims: Sequence[int], op: str = "roll") -> tuple[int, ...]:
    """``roll``: one shift per dim (without dims: a single shift of the flattened tensor)."""
    if not shifts:
        raise _bad(op, "`shifts` required")
    if len(shifts) != len(dims) and not (not dims and len(shifts) == 1):
        raise _bad(op, f"shifts and dimensions must align. shifts: {len(shifts)}, dims: {len(dims)}")
    if any(s == 0 for s in shape):  # torch returns an empty tensor before it looks at dims
        return ()
    if dims and not shape:
        raise RuleError("dimension_error_zero_dim", op=op)
    return tuple(wrap_dim(d, len(shape), op) for d in dims)


def rot90_dims(shape: Shape, dims: Sequence[int], op: str = "rot90") -> tuple[int, int]:
    if len(dims) != 2:
        raise _bad(op, f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if len(shape) < 2:
        raise _bad(op, f"expected total dims >= 2, but got total dims = {len(shape)}")
    a, b = wrap_dim(dims[0], len(shape), op), wrap_dim(dims[1], len(shape), op)
    if a == b:
        raise _bad(op, f"expected rotation dims to be different, but got dim0 = {a} and dim1 = {b}")
    return a, b


def flip_lr_check(shape: Shape, rank: int, op: str) -> Shape:
    """``fliplr`` needs 2 dims, ``flipud`` one."""
    if len(shape) < rank:
        raise _bad(op, f"input must be >= {rank}-d, got shape {tuple(shape)}")
    return shape


def atleast_shape(shape: Shape, rank: int) -> Shape:
    """``atleast_1d/2d/3d``: 0-d -> (1,)*rank; 1-d (n) -> (1, n) / (1, n, 1); 2-d (m, n) -> (m, n, 1)."""
    if len(shape) >= rank:
        return shape
    if not shape:
        return (1,) * rank
    if rank == 2 or len(shape) == 2:
        return ((1,) + tuple(shape)) if len(shape) == 1 else tuple(shape) + (1,)
    return (1, shape[0], 1)


def repeat_interleave_shape(shape: Shape, repeats: int | Shape, dim: int | None, total: Dim = UNKNOWN,
                            op: str = "repeat_interleave") -> Shape:
    """Int ``repeats`` scale the dim; a tensor of repeats (0-d or one per element) gives ``total``."""
    if dim is not None and not shape:
        raise RuleError("dimension_error_zero_dim", op=op)
    if dim is None:
        size: Dim = prod(shape)
        out: Shape = (size,)
        d = 0
    else:
        d = wrap_dim(dim, len(shape), op)
        size = shape[d] if shape else 1
        out = tuple(shape) if shape else (1,)
    if isinstance(repeats, int):
        if repeats < 0:
            raise _bad(op, "repeats must be non-negative")
        new: Dim = dim_mul(size, repeats)
    else:
        if len(repeats) > 1:
            raise _bad(op, "repeats must be a 0-dim or 1-dim tensor")
        if repeats and repeats[0] != 1 and differ(repeats[0], size):
            raise _bad(op, f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{repeats[0]!r} and input.size({d}) = {size!r}")
        new = total
    return out[:d] + (new,) + out[d + 1 :]


def meshgrid_shape(shapes: Sequence[Shape], indexing: str = "ij", op: str = "meshgrid") -> Shape:
    """Every input 0-d or 1-d; the output shape lists their sizes (first two swapped for 'xy')."""
    if not shapes:
        raise _bad(op, "expects a non-empty list of tensors")
    if indexing not in ("ij", "xy"):
        raise _bad(op, f'indexing must be one of "xy" or "ij", but received: {indexing}')
    sizes: list[Dim] = []
    for s in shapes:
        if len(s) > 1:
            raise _bad(op, f"expected 0-d or 1-d tensors in the tensor list but got shape {tuple(s)}")
        sizes.append(s[0] if s else 1)
    if indexing == "xy" and len(sizes) >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    return tuple(sizes)


def dsplit_check(shape: Shape, sections: int | None, op: str = "dsplit") -> Shape:
    if len(shape) < 3:
        raise _bad(op, f"requires a tensor with at least 3 dimensions, but got a tensor with {len(shape)} dimensions")
    if sections is not None and isinstance(shape[2], int) and (sections == 0 or shape[2] % sections):
        raise _bad(op, f"attempted to split along dimension 2, but the size of the dimension {shape[2]} is not "
                       f"divisible by the split_size {sections}")
    return shape


# -- views of the storage ---------------------------------------------------------------------------


def as_strided_check(size: Sequence[int], stride: Sequence[int], offset: int, storage: int, op: str = "as_strided") -> int:
    """The storage span a strided view needs; it must fit ``storage`` elements. Returns the span."""
    if len(size) != len(stride):
        raise _bad(op, "mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise _bad(op, f"negative strides are not supported at the moment, got strides: {list(stride)}")
    if any(s < 0 for s in size):
        raise _bad(op, f"negative sizes are not supported, got sizes: {list(size)}")
    if offset < 0:
        raise _bad(op, f"storage offset must be non-negative, got {offset}")
    need = 0 if any(s == 0 for s in size) else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if need > storage:
        raise _bad(op, f"sizes {list(size)}, strides {list(stride)} and storage offset {offset} need a storage of "
                       f"{need} elements, but the storage has {storage}")
    return need


def view_as_complex_shape(shape: Shape, op: str = "view_as_complex") -> Shape:
    if not shape:
        raise _bad(op, "input tensor must have one or more dimensions")
    if differ(shape[-1], 2):
        raise _bad(op, f"tensor must have a last dimension of size 2, got shape {tuple(shape)}")
    return tuple(shape[:-1])


def view_as_real_shape(shape: Shape) -> Shape:
    return tuple(shape) + (2,)


# -- diagonals and triangles ------------------------------------------------------------------------


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


def diag_embed_shape(shape: Shape, offset: int = 0, dim1: int = -2, dim2: int = -1, op: str = "diag_embed") -> Shape:
    """The last dim (n) becomes an (n+|offset|)-square plane at dims (dim1, dim2) of a rank+1 tensor."""
    rank = len(shape) + 1
    a, b = wrap_dim(dim1, rank, op), wrap_dim(dim2, rank, op)
    if a == b:
        raise _bad(op, f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    side = _add(shape[-1], abs(offset)) if shape else 1 + abs(offset)
    rest = list(shape[:-1])
    out: list[Dim] = []
    for i in range(rank):
        out.append(side if i in (a, b) else rest.pop(0))
    return tuple(out)


def diag_shape(shape: Shape, diagonal: int = 0, op: str = "diag") -> Shape:
    """1-D (n) -> (n+|k|, n+|k|); 2-D -> the k-th diagonal's length."""
    if len(shape) == 1:
        side = _add(shape[0], abs(diagonal))
        return (side, side)
    if len(shape) == 2:
        return diagonal_shape(shape, diagonal, 0, 1, op)
    raise _bad(op, f"supports 1-D or 2-D tensors, got {len(shape)}-D (shape {tuple(shape)})")


def diagflat_shape(shape: Shape, offset: int = 0, op: str = "diagflat") -> Shape:
    side = _add(prod(shape), abs(offset))
    return (side, side)


def triangular_shape(shape: Shape, op: str = "tril") -> Shape:
    if len(shape) < 2:
        raise RuleError("linalg_error_requires_at_least_2d", op=op, shape=shape)
    return shape


# -- linear algebra ---------------------------------------------------------------------------------


def inverse_shape(shape: Shape, op: str = "inverse") -> Shape:
    """(..., n, n) -> (..., n, n)."""
    if len(shape) < 2:
        raise RuleError("linalg_error_requires_at_least_2d", op=op, shape=shape)
    if differ(shape[-1], shape[-2]):
        raise RuleError("linalg_error_not_square_matrix", op=op, m=shape[-2], n=shape[-1], shape=shape)
    return shape


def trace_shape(shape: Shape, op: str = "trace") -> Shape:
    """(m, n) -> (); 2-D only."""
    if len(shape) != 2:
        raise RuleError("linalg_error_requires_2d", op=op, shape=shape)
    return ()


def kron_shape(a: Shape, b: Shape, op: str = "kron") -> Shape:
    """Both shapes left-padded with 1s to one rank, then multiplied elementwise."""
    n = max(len(a), len(b))
    pa = (1,) * (n - len(a)) + tuple(a)
    pb = (1,) * (n - len(b)) + tuple(b)
    return tuple(dim_mul(x, y) for x, y in zip(pa, pb))


def block_diag_shape(shapes: Sequence[Shape], op: str = "block_diag") -> Shape:
    """Each input 0-d (1, 1), 1-d (1, n) or 2-d; the rows and the columns add up."""
    rows: Dim = 0
    cols: Dim = 0
    for i, s in enumerate(shapes):
        if len(s) > 2:
            raise _bad(op, f"input tensors must have 2 or fewer dimensions. Input {i} has {len(s)} dimensions")
        r, c = (1, 1) if not s else (1, s[0]) if len(s) == 1 else (s[0], s[1])
        rows = rows + r if isinstance(rows, int) and isinstance(r, int) else UNKNOWN
        cols = cols + c if isinstance(cols, int) and isinstance(c, int) else UNKNOWN
    return (rows, cols) if shapes else (1, 0)


def cdist_shape(a: Shape, b: Shape, op: str = "cdist") -> Shape:
    """(B..., P, M), (B..., R, M) -> (broadcast B..., P, R)."""
    for s in (a, b):
        if len(s) < 2:
            raise RuleError("linalg_error_requires_at_least_2d", op=op, shape=s)
    if differ(a[-1], b[-1]):
        raise RuleError("matmul_error_inner_dimensions_do_not_match", op=op, a=a, b=b, ka=a[-1], kb=b[-1])
    return broadcast_pair(a[:-2], b[:-2], op) + (a[-2], b[-2])


def tensordot_dims(a: Shape, b: Shape, dims: int | tuple[Sequence[int], Sequence[int]],
                   op: str = "tensordot") -> tuple[tuple[int, ...], tuple[int, ...], Shape]:
    """The contracted dims of each operand and the output shape (free dims of a, then of b).

    A contracted pair must have equal sizes, or one of them 1 (that side is summed first), as torch.
    """
    if isinstance(dims, int):
        if dims < 0:
            raise _bad(op, f"expects dims >= 0, but got dims={dims}")
        if dims > len(a) or dims > len(b):
            raise _bad(op, f"expects dims <= the rank of both operands, got dims={dims} for shapes {tuple(a)} "
                           f"and {tuple(b)}")
        da: tuple[int, ...] = tuple(range(len(a) - dims, len(a)))
        db: tuple[int, ...] = tuple(range(dims))
    else:
        la, lb = list(dims[0]), list(dims[1])
        if len(la) != len(lb):
            raise _bad(op, f"both dimension lists should have same length, got {la} and {lb}")
        if (la and not a) or (lb and not b):
            raise RuleError("dimension_error_zero_dim", op=op)
        da = wrap_dims(la, len(a), op)
        db = wrap_dims(lb, len(b), op)
    for x, y in zip(da, db):
        if a[x] != 1 and b[y] != 1 and differ(a[x], b[y]):
            raise RuleError("matmul_error_inner_dimensions_do_not_match", op=op, a=a, b=b, ka=a[x], kb=b[y])
    out = tuple(s for i, s in enumerate(a) if i not in da) + tuple(s for i, s in enumerate(b) if i not in db)
    return da, db, out


def addbmm_shape(input: Shape, b1: Shape, b2: Shape, op: str = "addbmm") -> Shape:
    """sum_b batch1[b] @ batch2[b] is (n, p); ``input`` broadcasts to it."""
    for arg, s in (("batch1", b1), ("batch2", b2)):
        if len(s) != 3:
            raise RuleError("matmul_error_rank_mismatch", op=op, arg=arg, expected=3, shape=s)
    if differ(b1[0], b2[0]):
        raise RuleError("batch_dimensions_do_not_match_error", op=op, a=b1, b=b2, ba=b1[0], bb=b2[0])
    if differ(b1[2], b2[1]):
        raise RuleError("matmul_error_inner_dimensions_do_not_match", op=op, a=b1, b=b2, ka=b1[2], kb=b2[1])
    out = (b1[1], b2[2])
    expand_shape(input, out, op)
    return out


def addr_shape(input: Shape, v1: Shape, v2: Shape, op: str = "addr") -> Shape:
    for arg, s in (("vec1", v1), ("vec2", v2)):
        if len(s) != 1:
            raise RuleError("matmul_error_rank_mismatch", op=op, arg=arg, expected=1, shape=s)
    out = (v1[0], v2[0])
    expand_shape(input, out, op)
    return out


# -- indexing into slices ---------------------------------------------------------------------------


def src_matches(src: Shape, expected: Shape, op: str) -> Shape:
    """select/slice/diagonal_scatter: ``src`` must have exactly the shape of the slice it fills."""
    if len(src) != len(expected) or any(differ(x, y) for x, y in zip(src, expected)):
        raise RuleError("setitem_error_shape_mismatch", op=op, value=src, shape=expected)
    return expected


def index_add_check(shape: Shape, dim: int, index: Shape, source: Shape, op: str = "index_add") -> int:
    """index_add/index_copy/index_reduce: a 0-d or 1-d index; ``source`` is ``self`` with dim sized len(index).

    A 0-d self takes a 0-d source and one index (index_copy also a source of one entry per index)."""
    d = wrap_dim(dim, len(shape), op)
    if len(index) > 1:
        raise RuleError("index_error_rank_mismatch", op=op, index=index, expected="0 or 1", shape=shape)
    n: Dim = index[0] if index else 1
    if not shape:
        one_each = op == "index_copy" and len(source) == 1 and not differ(source[0], n)
        if not one_each and (source or differ(n, 1)):
            raise RuleError("setitem_error_shape_mismatch", op=op, value=source, shape=(n,) if source else ())
        return d
    expected = tuple(shape[:d]) + (n,) + tuple(shape[d + 1 :])
    if len(source) != len(expected) or any(differ(x, y) for x, y in zip(source, expected)):
        raise RuleError("setitem_error_shape_mismatch", op=op, value=source, shape=expected)
    return d


def take_along_dim_shape(shape: Shape, index: Shape, dim: int | None, op: str = "take_along_dim") -> Shape:
    """Without dim: the flattened index's length (into the flattened input). With dim: the ranks must be equal; the
    other dims broadcast and ``dim`` takes the index's size."""
    if dim is None:
        return (prod(index),)
    if not shape:
        raise RuleError("dimension_error_zero_dim", op=op)
    d = wrap_dim(dim, len(shape), op)
    if len(index) != len(shape):
        raise RuleError("index_error_rank_mismatch", op=op, index=index, expected=len(shape), shape=shape)
    if not shape:
        return ()
    rest = broadcast_shapes(tuple(shape[:d]) + (1,) + tuple(shape[d + 1 :]),
                            tuple(index[:d]) + (1,) + tuple(index[d + 1 :]), op=op)
    return tuple(rest[:d]) + (index[d],) + tuple(rest[d + 1 :])


def unravel_index_shape(index: Shape, shape: Sequence[int], op: str = "unravel_index") -> tuple[Shape, ...]:
    if any(s < 0 for s in shape):
        raise _bad(op, f"'shape' cannot have negative values, but got {tuple(shape)}")
    return tuple(tuple(index) for _ in shape)


# -- FFT ----------------------------------------------------------------------------------------------

NORMS = (None, "backward", "forward", "ortho")


def fft_shape(shape: Shape, n: int | None, dim: int, kind: str = "c2c", op: str = "fft") -> tuple[int, Dim, Shape]:
    """(dim, signal length, output shape): c2c keeps n; r2c (rfft) gives n//2+1; c2r (irfft) gives
    n, by default 2*(size-1)."""
    if not shape:
        raise RuleError("dimension_error_zero_dim", op=op)
    d = wrap_dim(dim, len(shape), op)
    size = shape[d]
    length: Dim
    if n is not None:
        length = n
    elif kind == "c2r":
        length = 2 * (size - 1) if isinstance(size, int) else UNKNOWN
    else:
        length = size
    if isinstance(length, int) and length < 1:
        raise _bad(op, f"invalid number of data points ({length}) specified")
    out: Dim = length
    if kind == "r2c":
        out = length // 2 + 1 if isinstance(length, int) else UNKNOWN
    return d, length, tuple(shape[:d]) + (out,) + tuple(shape[d + 1 :])


def check_norm(norm: str | None, op: str = "fft") -> str:
    if norm not in NORMS:
        raise _bad(op, f'invalid normalization mode: "{norm}"')
    return norm or "backward"


def stft_shape(shape: Shape, n_fft: int, hop: int, win_length: int, window: Shape | None, center: bool,
               onesided: bool, op: str = "stft") -> Shape:
    """(B?, L) -> (B?, n_fft//2+1 (onesided) or n_fft, 1 + (L' - n_fft)//hop), L' = L + 2*(n_fft//2) if center."""
    if len(shape) not in (1, 2):
        raise _bad(op, f"expected a 1D or 2D tensor, got shape {tuple(shape)}")
    length = shape[-1]
    if center and isinstance(length, int):
        length += 2 * (n_fft // 2)
    if n_fft <= 0 or (isinstance(length, int) and n_fft > length):
        raise _bad(op, f"expected 0 < n_fft <= {length!r}, but got n_fft={n_fft}")
    if hop <= 0:
        raise _bad(op, f"expected hop_length > 0, but got hop_length={hop}")
    if win_length <= 0 or win_length > n_fft:
        raise _bad(op, f"expected 0 < win_length <= n_fft, but got win_length={win_length}")
    if window is not None and (len(window) != 1 or differ(window[0], win_length)):
        raise _bad(op, f"expected a 1D window tensor of size equal to win_length={win_length}, but got window "
                       f"with size {tuple(window)}")
    frames: Dim = 1 + (length - n_fft) // hop if isinstance(length, int) else UNKNOWN
    freq = n_fft // 2 + 1 if onesided else n_fft
    return tuple(shape[:-1]) + (freq, frames)
