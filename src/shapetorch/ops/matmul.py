"""The matmul family: matmul (``@``), mm, bmm, mv, dot, vdot, inner, outer, addmm, baddbmm, addmv, addbmm, addr,
chain_matmul, tensordot, kron."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from .._autocast import AUTOCAST
from .._engine.intercept import INSTALLED as SLOW_PATH
from .._engine.primitives import Prim, untracked_pair, untracked_result
from .._errors import fail
from .._grad_mode import STATE
from .._rules import matmul as RM
from .._rules.matmul import addbmm_shape, addr_shape, kron_shape, tensordot_dims
from .._rules.matrix import (
    trace_shape,
)
from .._tensor import PLAIN_TYPES, Tensor
from ..backends import thread_pool
from ._common import as_node, autocast_inputs, cast, check, dtype_name, make_inplace, promoted
from ._elementwise import _conj
from ._registry import method, public
from .views import _PERMUTE, _RESHAPE, _permute_kernel, _reshape_kernel, _untracked


def _matmul_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    a, b = n.inputs
    if not STATE.enabled and (grads := _linear_vjp_arrays(g, a, b)) is not None:
        return grads
    if a._data.ndim == 1 and b._data.ndim == 1:
        return g * _conj(b), g * _conj(a)
    if b._data.ndim == 1:
        return g.unsqueeze(-1) @ _conj(b).unsqueeze(0), (_conj(a).mT @ g.unsqueeze(-1)).squeeze(-1)
    if a._data.ndim == 1:
        return (g.unsqueeze(-2) @ _conj(b).mT).squeeze(-2), _conj(a).unsqueeze(-1) @ g.unsqueeze(-2)
    if b._data.ndim == 2 and a._data.ndim > 2:
        # a stack against one matrix (a linear layer): the matrix's gradient is one GEMM over the flattened
        # rows, not a stack of products summed afterwards; for a transposed weight (``x @ W.T``) it is computed
        # as (g^T a)^T, so it comes out in W's layout and becomes W.grad without a copy
        k, m = a._data.shape[-1], g._data.shape[-1]
        gb = None
        if STATE.enabled or b._requires_grad:
            rows, grows = _conj(a).reshape(-1, k), g.reshape(-1, m)
            st = b._data.strides
            gb = (grows.mT @ rows).mT if st[0] < st[1] else rows.mT @ grows
        # a first-order backward skips the gradient of an input that does not require grad (a network's input:
        # a quarter of an MLP's GEMM work); with grad mode on (create_graph, forward mode) every one is made
        ga = g @ _conj(b).mT if STATE.enabled or a._requires_grad else None
        return ga, gb
    ga = g @ _conj(b).mT if STATE.enabled or a._requires_grad else None
    gb = None
    if STATE.enabled or b._requires_grad:
        st = b._data.strides
        # a transposed weight (``x @ W.T``, 2-d): (g^T a)^T comes out in W's layout and becomes W.grad uncopied
        gb = (g.mT @ _conj(a)).mT if a._data.ndim == 2 and b._data.ndim == 2 and st[0] < st[1] else _conj(a).mT @ g
    return ga, gb  # batch dims are summed back by the engine


_T2 = (1, 0)


def _linear_vjp_arrays(g: Tensor, a: Tensor, b: Tensor) -> tuple[Any, Any] | None:
    """NOTE [array vjp]: ``_matmul_vjp`` of a matrix or a stack of rows times a matrix (every linear layer's
    gradient) in a first-order backward, computed on the arrays by the device's own kernels: the products, reshapes
    and transposes ``_matmul_vjp`` makes through the ops, without the tensors, guards and view bookkeeping of the
    intermediates nobody sees (each op would take its untracked shortcut: NOTE [untracked call]). The same kernels
    on the same arrays, so the same bits and, on a GPU, the same dispatches; the results are the tensors the ops
    would return (a transposed-back weight gradient a view of its product, so that it becomes ``.grad`` uncopied).
    None (the ops' path) for anything else: the engine's slow path, autocast, a tensor subclass, two devices, a
    complex or mixed dtype, an empty operand, a gradient of another shape or dtype (the ops raise for those)."""
    x, w, gd = a._data, b._data, g._data
    dev = g._device
    if (SLOW_PATH[0] or AUTOCAST.enabled or w.ndim != 2 or x.ndim < 2 or type(a) not in PLAIN_TYPES
            or type(b) not in PLAIN_TYPES or type(g) not in PLAIN_TYPES or a._device is not dev
            or b._device is not dev or x.dtype.kind != "f" or not (x.dtype == w.dtype == gd.dtype)
            or not x.size or not gd.size or gd.shape != (*x.shape[:-1], w.shape[1])):
        return None
    kind = dev.type
    mm, perm, reshape = _MATMUL.kernels.get(kind), _PERMUTE.kernels.get(kind), _RESHAPE.kernels.get(kind)
    if mm is None or perm is None or reshape is None:
        return None
    # (the CPU's view kernels are one NumPy method each, called directly as the views' own shortcut does)
    cpu = perm is _permute_kernel and reshape is _reshape_kernel and type(x) is type(w) is type(gd) is np.ndarray
    gb = None
    if b._requires_grad:
        if x.ndim > 2:  # (a stack: the weight's gradient is one product over the flattened rows)
            rows_shape = (x.size // x.shape[-1], x.shape[-1])
            rows = x.reshape(rows_shape) if cpu else reshape(x, shape=rows_shape)
            grows = gd.reshape(rows_shape[0], gd.shape[-1]) if cpu else reshape(gd, shape=(rows_shape[0], gd.shape[-1]))
        else:
            rows, grows = x, gd
        if w.strides[0] < w.strides[1]:  # (a transposed weight: (g^T a)^T, in its layout)
            prod = untracked_result(g, mm(grows.T if cpu else perm(grows, axes=_T2), rows))
            gb = _untracked(prod, prod._data.T if cpu else perm(prod._data, axes=_T2))
        else:
            gb = untracked_result(g, mm(rows.T if cpu else perm(rows, axes=_T2), grows))
    ga = untracked_result(g, mm(gd, w.T if cpu else perm(w, axes=_T2))) if a._requires_grad else None
    return ga, gb


def _rows_times(a: Any, b: Any) -> Any:
    """A stack times one matrix as one GEMM over the stack's rows. NumPy multiplies a stack by one matrix
    matrix by matrix (1.5x slower with one thread on (8, 64, 512) @ (512, 128), up to 20x with two, where
    the small products do not split over the threads); a stack that is a strided view is copied once."""
    rows = math.prod(a.shape[:-1])
    return np.matmul(a.reshape(rows, a.shape[-1]), b).reshape(*a.shape[:-1], b.shape[-1])


def _matmul_kernel(a: Any, b: Any) -> Any:
    if a.ndim == 2 and b.ndim == 2:  # (first: the common case, and every tiny one)
        out = np.matmul(a, b)
    elif b.ndim == 2 and a.ndim > 2 and type(a) is np.ndarray:
        out = _rows_times(a, b)
    elif a.ndim > 2 and b.ndim > 2:
        out = thread_pool.matmul(a, b)  # a stack of products over the intra-op threads when large
    else:
        out = np.matmul(a, b)
    # ml_dtypes' bfloat16 matmul gives float32; (NumPy's own dtypes are singletons: ``is`` answers the rest)
    return out if out.dtype is a.dtype or out.dtype == a.dtype else out.astype(a.dtype)


_MATMUL = Prim("matmul", _matmul_kernel, _matmul_vjp)


def _matmul_bias_kernel(a: Any, b: Any, bias: Any) -> Any:
    out = _rows_times(a, b) if a.ndim > 2 and type(a) is np.ndarray else np.matmul(a, b)
    out += bias
    return out if out.dtype == a.dtype else out.astype(a.dtype)


class _Pair:
    __slots__ = ("inputs",)

    def __init__(self, inputs: tuple[Any, ...]) -> None:
        self.inputs = inputs


def _matmul_bias_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    return (*_matmul_vjp(g, _Pair(n.inputs[:2])), g)  # the engine sums g back to the bias's shape


_MATMUL_BIAS = Prim("matmul_bias", _matmul_bias_kernel, _matmul_bias_vjp)


def matmul_bias(input: Tensor, other: Tensor, bias: Tensor) -> Tensor | None:
    """``input @ other + bias`` as one primitive (one kernel on a GPU: the bias is the matmul's epilogue) for a
    batch of rows times a matrix plus a bias over its columns, all of one floating dtype; None where the caller
    must take the plain path (autocast, other shapes or dtypes, which then give their own errors)."""
    a, b, c = input._data, other._data, bias._data
    if (AUTOCAST.enabled or a.ndim < 2 or b.ndim != 2 or c.ndim != 1 or a.shape[-1] != b.shape[0]
            or c.shape[0] != b.shape[1] or a.dtype.kind != "f" or not (a.dtype == b.dtype == c.dtype)
            or not ((input._device is other._device or input._device == other._device)
                    and (bias._device is other._device or bias._device == other._device))):
        return None
    return _MATMUL_BIAS(input, other, bias)


@functools.lru_cache(maxsize=4096)
def _matmul_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return check(RM.matmul_shape, a, b, op="matmul")


def _same_dtype(op: str, a: Tensor, b: Tensor) -> None:
    """torch's matmul family does not promote: both operands must have one dtype (bmm looks at bool first)."""
    if op == "bmm" and a._data.dtype.kind == "b":
        fail("method_dtype_not_supported_error", op=op, dtype="bool", hint="")
    if a._data.dtype is not b._data.dtype and a._data.dtype != b._data.dtype:
        fail("dtype_error_mismatch", op=op, what="both arguments", a=a.dtype.name, b=b.dtype.name)
    if a._data.dtype.kind == "b":
        fail("method_dtype_not_supported_error", op=op, dtype="bool", hint="")


@public("linalg")
def matmul(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.matmul: vector/matrix products with broadcast batch dims."""
    sa, sb = input._data.shape, other._data.shape
    if len(sa) != 2 or len(sb) != 2 or sa[1] != sb[0]:  # (two matrices whose sizes meet pass the rule: no lookup)
        _matmul_shape(sa, sb)
    if AUTOCAST.enabled:
        input, other = autocast_inputs("matmul", input, other)
    if input._data.dtype is not other._data.dtype or input._data.dtype.kind == "b":  # (the common case: no call)
        _same_dtype("matmul", input, other)
    if out is None and (xy := untracked_pair(_MATMUL, input, other, _matmul_kernel)) is not None:
        return untracked_result(input, _matmul_kernel(*xy))  # (NOTE [untracked call])
    # (two plain tensors, the common case, on every device: the direct call, NOTE [two-tensor call])
    result = _MATMUL.call2(input, other) if type(input) in PLAIN_TYPES and type(other) in PLAIN_TYPES \
        else _MATMUL(input, other)
    if result._grad_fn is not None:
        as_node(result, _matmul_label(len(sa), len(sb)), input, other)
    return result if out is None else out.copy_(result)


def _matmul_label(ra: int, rb: int) -> str:
    """The name torch's matmul gives its last node, which depends on how it dispatched: a product of vectors
    and matrices is dot/mv/mm itself, a vector times a matrix squeezes a 1-row mm, a matrix times a batch clones
    the transposed result, anything batched reshapes the folded product (``UnsafeViewBackward0``)."""
    if rb == 1:
        return "DotBackward0" if ra == 1 else "MvBackward0" if ra == 2 else "UnsafeViewBackward0"
    if rb == 2:
        return "SqueezeBackward4" if ra == 1 else "MmBackward0" if ra == 2 else "UnsafeViewBackward0"
    return "CloneBackward0" if ra == 2 else "UnsafeViewBackward0"


def _matmul_operator(self: Tensor, other: Any) -> Any:
    """``a @ b``: an operand that is no tensor is Python's TypeError (``unsupported operand type(s) for @``), as
    torch's, not matmul's argument error."""
    return matmul(self, other) if isinstance(other, Tensor) else NotImplemented


def _rmatmul_operator(self: Tensor, other: Any) -> Any:
    return matmul(other, self) if isinstance(other, Tensor) else NotImplemented


def _strict(rule: Any, name: str) -> Any:
    def fn(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
        check(rule, input._data.shape, other._data.shape, op=name)
        if AUTOCAST.enabled:  # mm and bmm are cast (torch's CPU policy leaves mv and dot)
            input, other = autocast_inputs(name, input, other)
        _same_dtype(name, input, other)
        result = as_node(_MATMUL(input, other), label, input, other)
        return result if out is None else out.copy_(result)

    label = f"{name.capitalize()}Backward0"  # MmBackward0, BmmBackward0, MvBackward0, DotBackward0
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}``: the strict-rank matrix product (no broadcasting)."
    return public("linalg")(fn)


mm = _strict(RM.mm_shape, "mm")
bmm = _strict(RM.bmm_shape, "bmm")
mv = _strict(RM.mv_shape, "mv")
dot = _strict(RM.dot_shape, "dot")


@public("linalg")
def vdot(input: Tensor, other: Tensor) -> Tensor:
    return dot(input.conj(), other)


@public("linalg", aliases=("ger",))
def outer(input: Tensor, vec2: Tensor) -> Tensor:
    check(RM.outer_shape, input._data.shape, vec2._data.shape, op="outer")

    common = promoted(input, vec2)
    return input.to(common).unsqueeze(-1) * vec2.to(common).unsqueeze(0)


@public("linalg")
def inner(input: Tensor, other: Tensor) -> Tensor:
    if input._data.ndim == 0 or other._data.ndim == 0:
        return input * other
    return matmul(input, other.unsqueeze(-1) if other._data.ndim == 1 else other.mT).squeeze(-1) \
        if other._data.ndim == 1 else matmul(input, other.mT)


@public("linalg")
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    input, mat1, mat2 = autocast_inputs("addmm", input, mat1, mat2)
    _same_dtype("addmm", input, mat1)  # torch does not promote input to the product's dtype
    prod = mm(mat1, mat2)
    return as_node((input if beta == 1 else input * beta) + (prod if alpha == 1 else prod * alpha), "AddmmBackward0",
                   input, mat1, mat2)


@public("linalg")
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    input, batch1, batch2 = autocast_inputs("baddbmm", input, batch1, batch2)
    _same_dtype("baddbmm", input, batch1)  # torch does not promote input to the product's dtype
    prod = bmm(batch1, batch2)
    return as_node((input if beta == 1 else input * beta) + (prod if alpha == 1 else prod * alpha),
                   "BaddbmmBackward0", input, batch1, batch2)


@public("linalg")
def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    _same_dtype("addmv", input, mat)  # torch does not promote input to the product's dtype
    prod = mv(mat, vec)
    return as_node((input if beta == 1 else input * beta) + (prod if alpha == 1 else prod * alpha), "AddmvBackward0",
                   input, mat, vec)

method("__matmul__", _matmul_operator)
method("__rmatmul__", _rmatmul_operator)


# -- kron -----------------------------------------------------------------------------------------------------------


@public("linalg")
def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: ranks padded to one, ``out[i*b + j] = a[i] * b[j]`` per dim."""
    shape = check(kron_shape, input._data.shape, other._data.shape, op="kron")
    n = len(shape)
    sa = (1,) * (n - input._data.ndim) + tuple(input._data.shape)
    sb = (1,) * (n - other._data.ndim) + tuple(other._data.shape)
    a = input.reshape(tuple(x for s in sa for x in (s, 1)))
    b = other.reshape(tuple(x for s in sb for x in (1, s)))
    out: Tensor = (a * b).reshape(shape)
    return out


# -- the matmul family ------------------------------------------------------------------------------------------------


def _scaled_sum(op: str, input: Tensor, prod: Tensor, beta: Any, alpha: Any) -> Tensor:
    if dtype_name(input) != dtype_name(prod):
        fail("dtype_error_mismatch", op=op, what="input and the product", a=input.dtype.name, b=prod.dtype.name)
    if dtype_name(prod) == "bool":
        term = prod if alpha else prod.new_zeros(prod._data.shape)
        out: Tensor = term | input.expand(prod._data.shape) if beta else term
        return out
    if not prod.dtype.is_floating_point and not prod.is_complex() and (isinstance(alpha, float) or isinstance(beta, float)):
        if op == "addr":
            fail("argument_error_invalid", op=op, problem="for integral input tensors, alpha and beta must not be floats")
        alpha, beta = int(alpha), int(beta)  # addbmm truncates them to the integer type, as torch
    scaled = prod if alpha == 1 else prod * alpha
    if beta == 0:
        return scaled + input.new_zeros(()).expand(prod._data.shape)
    result: Tensor = (input if beta == 1 else input * beta) + scaled
    return result


@public("linalg")
def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]`` (input broadcasts to the (n, p) result)."""
    check(addbmm_shape, input._data.shape, batch1._data.shape, batch2._data.shape, op="addbmm")
    input, batch1, batch2 = autocast_inputs("addbmm", input, batch1, batch2)
    prod: Tensor = bmm(batch1, batch2).sum(0)
    return as_node(_scaled_sum("addbmm", input, prod, beta, alpha), "AddbmmBackward0", input, batch1, batch2)


@public("linalg")
def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``."""
    check(addr_shape, input._data.shape, vec1._data.shape, vec2._data.shape, op="addr")
    if dtype_name(vec1) != dtype_name(vec2):
        fail("dtype_error_mismatch", op="addr", what="vec1 and vec2", a=vec1.dtype.name, b=vec2.dtype.name)
    prod = vec1.unsqueeze(-1) & vec2.unsqueeze(0) if dtype_name(vec1) == "bool" else vec1.unsqueeze(-1) * vec2.unsqueeze(0)
    common = promoted(input, prod)  # unlike addmm, addr promotes input and the product
    return as_node(_scaled_sum("addr", cast(input, common), cast(prod, common), beta, alpha), "AddrBackward0",
                   input, vec1, vec2)


for _fn in (addmm, baddbmm, addmv, addbmm, addr):
    method(_fn.__name__ + "_", make_inplace(_fn, _fn.__name__ + "_"))


@public("linalg", method=False)
def chain_matmul(*matrices: Tensor) -> Tensor:
    """The product of 2-D matrices, left to right (deprecated in torch for ``linalg.multi_dot``)."""
    if not matrices:
        fail("argument_error_invalid", op="chain_matmul", problem="expected one or more matrices")
    if len(matrices) == 1:
        check(trace_shape, matrices[0]._data.shape, op="chain_matmul")
        out: Tensor = matrices[0].clone()
        return out
    out = matrices[0]
    for m in matrices[1:]:
        out = mm(out, m)
    return out


def _dims_arg(dims: Any) -> int | tuple[list[int], list[int]]:
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)):
        return int(dims)
    if not isinstance(dims, (tuple, list)) or len(dims) != 2:  # torch's tensordot checks this itself (a RuntimeError)
        fail("argument_error_invalid", op="tensordot", problem="tensordot expects dims to be int or Tuple[List[int], "
             f"List[int]] or List[List[int]] containing two lists, but got dims={dims}")
    a, b = dims
    return ([int(a)] if isinstance(a, (int, np.integer)) else [int(v) for v in a],
            [int(b)] if isinstance(b, (int, np.integer)) else [int(v) for v in b])


@public("linalg", method=False)
def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Tensor | None = None) -> Tensor:
    """Contract ``dims`` (the last n of a with the first n of b, or two lists of dims); free dims of a then b."""
    if dtype_name(a) != dtype_name(b):
        fail("dtype_error_mismatch", op="tensordot", what="both inputs", a=a.dtype.name, b=b.dtype.name)
    da, db, shape = check(tensordot_dims, a._data.shape, b._data.shape, _dims_arg(dims), op="tensordot")
    for x, y in zip(da, db):  # a size-1 side is summed away first, as torch broadcasts it
        if a._data.shape[x] == 1 and b._data.shape[y] != 1:
            b = b.sum(y, keepdim=True)
        elif b._data.shape[y] == 1 and a._data.shape[x] != 1:
            a = a.sum(x, keepdim=True)
    free_a = [i for i in range(a._data.ndim) if i not in da]
    free_b = [i for i in range(b._data.ndim) if i not in db]
    k = math.prod(a._data.shape[i] for i in da)
    left = a.permute(free_a + list(da)).reshape(math.prod(a._data.shape[i] for i in free_a), k)
    right = b.permute(list(db) + free_b).reshape(k, math.prod(b._data.shape[i] for i in free_b))
    result: Tensor = mm(left, right).reshape(shape)
    return result if out is None else out.copy_(result)
