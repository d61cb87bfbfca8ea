"""The WebGPU kernels of the primitives (``PRIMS[name].kernels["webgpu"]``), with the CPU kernels'
signatures. Views (reshape when possible, permute, expand, slices, select, diagonal) are new strides
over the same buffer; everything else records dispatches of the shaders from :mod:`.codegen`.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any

import numpy as np

from ..._engine.primitives import PRIMS
from ..._errors import fail
from . import attention as fused_attention
from . import chunks, index_offsets, launch_plans
from . import codegen as G
from . import layer_norm as layer_norm_grads
from . import loss as fused_loss
from .runtime import I32_MAX, I32_MIN, RT, WG, WArray, contiguous_strides, f32_bits, to_host, view_of

Operand = WArray | Any  # a WArray or a scalar
PRIM_CPU: dict[str, Callable[..., Any]] = {}  # the CPU kernels, for the float16 fallbacks


def _st(dt: np.dtype[Any]) -> str:
    return RT.check_dtype(dt)[0]


def _kind(dt: np.dtype[Any]) -> str:
    return RT.check_dtype(dt)[1][0]


def _grid(n: int, wg: int = WG) -> tuple[int, int, int]:
    """Workgroups for ``n`` threads in groups of ``wg``, folded into (x, y, 1) under the per-dimension limit
    (shaders number their threads ``gid.x + gid.y * nwg.x * wg`` and skip those past ``n``)."""
    groups = -(-n // wg)
    x = min(groups, RT.max_groups)
    return (x, -(-groups // x) if x else 0, 1)


def _scalar_dtype(x: Any, like: np.dtype[Any] | None) -> np.dtype[Any]:
    if like is not None:
        return like
    dt = np.asarray(x).dtype
    return np.dtype(np.float32) if dt.kind == "f" else np.dtype(np.int64) if dt.kind in "iu" else dt


def _word(x: Any, dt: np.dtype[Any]) -> int:
    """A scalar's bits in compute type of ``dt``."""
    k = _kind(dt)
    if k == "f":
        return f32_bits(float(x))
    if k == "i":
        v = int(x)
        if v < I32_MIN or v > I32_MAX:
            fail("method_dtype_not_supported_error", op="webgpu", dtype=f"shapetorch.{dt.name}",
                 hint=f" with the value {v} (outside int32; WebGPU stores integers as int32)")
        return v & 0xFFFFFFFF
    return int(bool(x))


def _bstrides(a: WArray, shape: tuple[int, ...]) -> list[int]:
    """a's strides broadcast to ``shape`` (0 where a is broadcast)."""
    if a.shape == shape:
        return list(a.stride)
    lead = len(shape) - a.ndim
    out = [0] * lead
    for s, st, n in zip(a.shape, a.stride, shape[lead:]):
        out.append(0 if s == 1 and n != 1 else st)
    return out


def _complex_words(x: Any) -> list[int]:
    """A complex scalar's two words: its real and imaginary parts' float32 bits."""
    c = complex(np.asarray(x).item())
    z = np.array([c.real, c.imag], dtype=np.float32).view(np.uint32)
    return [int(z[0]), int(z[1])]


# An elementwise launch without a check into a fresh output (or into a given one laid out as a fresh one: contiguous,
# at offset 0, sharing no buffer with an operand -- the same shader and words), by the expression, the dtypes, the
# shape and each operand's shape and strides (or a scalar's dtype), and the limits: (shader, parameter block up to
# the scalars' words, grid, each operand's offset word or -1 for a scalar). A step computes the same shapes step
# after step; a plan found again only places the operands' offsets and scalars.
_EW_PLANS: dict[tuple[Any, ...], tuple[Any, ...]] = {}


def elementwise(expr: str, out_dtype: np.dtype[Any], operands: Sequence[tuple[str, Operand, np.dtype[Any]]],
                shape: tuple[int, ...], out: WArray | None = None, extra: Sequence[float] = (),
                check: str = "", helpers: str = "") -> WArray:
    """``out = expr`` over ``shape``; operands (name, WArray or scalar, compute dtype of a scalar). ``check``:
    a condition on the operands and the result ``r`` that makes an int64 result inexact (raised at the next
    sync as the DTypeError an int64 value outside int32 gets on upload).

    A fresh output's dispatch carries its recipe, so that an in-place op can redirect it into the tensor it
    writes (:func:`redirect`). An operand that is ``out`` itself (the same elements, same dtype) reads the
    element it is about to overwrite ('o' mode); an operand elsewhere in ``out``'s buffer is read from a copy."""
    key: tuple[Any, ...] | None = None
    into = out is not None and _fresh_layout(out, shape, out_dtype, operands)
    if (out is None or into) and not check:
        key = (expr, out_dtype, shape, helpers, len(extra), RT.max_groups, RT.max_binding,
               *[(nm, x.shape, x.stride, x.dtype) if type(x) is WArray else (nm, sdt) for nm, x, sdt in operands])
        plan = _EW_PLANS.get(key)
        if plan is not None and not any(type(x) is WArray and chunks.large(x) for _, x, _ in operands):
            if out is None:
                out = RT.empty(shape, out_dtype)
                recipe: Any = (out, expr, operands, shape, extra, check, helpers)
            else:
                recipe = None  # (an in-place write is no fresh output an in-place op could redirect)
            assert out.st is not None
            pbufs = [out.st.buf]
            pmeta = plan[1].copy()
            for (_, x, sdt), pos in zip(operands, plan[3]):
                if pos >= 0:
                    pmeta[pos] = x.offset
                    pbufs.append(x.st.buf)  # type: ignore[union-attr]  # (has elements, as the output has)
                elif pos == -2:
                    pmeta += _complex_words(x)
                else:
                    pmeta.append(_word(x, sdt))
            if extra:
                pmeta += [f32_bits(v) for v in extra]
            RT.dispatch(plan[0], pbufs, pmeta, plan[2], recipe)
            return out
    fresh = out is None
    if out is None:
        out = RT.empty(shape, out_dtype)
    st = out.st
    n = math.prod(shape)
    if n == 0 or st is None:
        return out
    if (chunks.large(out) or any(isinstance(x, WArray) and chunks.large(x) for _, x, _ in operands)
            or n > WG * RT.max_groups ** 2):  # (the last: more threads than the grid's two folded dims hold)
        _elementwise_chunks(expr, out, operands, shape, extra, check, helpers)
        return out
    same = out.shape == shape
    out_c = same and out.contiguous
    ostride = list(out.stride) if same else _bstrides(out, shape)
    meta: list[int] = [n, len(shape), *shape, out.offset, *ostride]
    spec = []
    bufs = [st.buf]
    words = []
    slots = []  # each operand's offset word (-1: a scalar, -2: a complex scalar's two words), for the plan
    for name, x, sdt in operands:
        if type(x) is WArray:
            if x.st is st:
                if x.offset == out.offset and x.dtype == out.dtype and _bstrides(x, shape) == ostride:
                    spec.append((name, _st(x.dtype), "o"))
                    continue
                # WebGPU refuses one buffer bound for writing and reading in a dispatch (``c[i] = c[i - 1]`` on
                # views of one tensor): read a copy
                x = contiguous_copy(x)
            xst = x.st
            assert xst is not None
            slots.append(len(meta))
            if x.shape == shape:
                mode = "c" if x.contiguous else "s"
                meta.append(x.offset)
                meta += x.stride
            else:
                mode = "s"
                meta.append(x.offset)
                meta += _bstrides(x, shape)
            spec.append((name, _st(x.dtype), mode))
            bufs.append(xst.buf)
        elif _kind(sdt) == "v":  # a complex scalar: its real and imaginary parts' float32 bits
            slots.append(-2)
            spec.append((name, _st(sdt), "k"))
            words += _complex_words(x)
        else:
            slots.append(-1)
            spec.append((name, _st(sdt), "k"))
            words.append(_word(x, sdt))
    head = len(meta)
    meta += words
    if extra:
        meta += [f32_bits(v) for v in extra]
    if check:
        meta.append(RT.add_check("method_dtype_not_supported_error", RT.op, dtype="shapetorch.int64",
                                 hint=" with a result outside int32 (WebGPU stores int64 as int32; compute on the CPU)"))
        bufs.append(RT.flag)
    wgsl = G.elementwise(expr, _st(out.dtype), "c" if out_c else "s", tuple(spec), len(extra), check, helpers)
    recipe = (out, expr, operands, shape, extra, check, helpers) if fresh else None
    grid = _grid(n)
    RT.dispatch(wgsl, bufs, meta, grid, recipe)
    if key is not None:
        if len(_EW_PLANS) >= 4096:
            _EW_PLANS.clear()
        _EW_PLANS[key] = (wgsl, meta[:head], grid, slots)
    return out


def _fresh_layout(out: WArray, shape: tuple[int, ...], dtype: np.dtype[Any],
                  operands: Sequence[tuple[str, Operand, np.dtype[Any]]]) -> bool:
    """Whether ``out`` is laid out as a fresh output of ``shape`` and ``dtype`` would be (so a fresh output's plan
    writes it as it is): contiguous from offset 0, over the binding limit not, and no operand in its buffer."""
    st = out.st
    return (st is not None and out.offset == 0 and out.shape == shape and out.dtype == dtype
            and out.stride == contiguous_strides(shape) and not chunks.large(out)
            and not any(type(x) is WArray and x.st is st for _, x, _ in operands))


def _elementwise_chunks(expr: str, out: WArray, operands: Sequence[tuple[str, Operand, np.dtype[Any]]],
                        shape: tuple[int, ...], extra: Sequence[float], check: str, helpers: str) -> None:
    """:func:`elementwise` over a tensor larger than one binding: one dispatch per chunk (``chunks``)."""
    if re.search(r"\bi\b", expr):  # the thread index would restart at 0 in every chunk (``arange`` chunks itself)
        RT._too_large(out.size * out.itemsize)
    # an operand sharing the output's buffer is read from a copy, as in one dispatch (a buffer may not be bound for
    # writing and reading at once, whatever the ranges)
    ops = [(nm, contiguous_copy(x) if isinstance(x, WArray) and x.st is out.st else x, dt) for nm, x, dt in operands]
    arrays = [i for i, (_, x, _) in enumerate(ops) if isinstance(x, WArray)]
    views = [_view(out, shape, _bstrides(out, shape))]
    views += [_view(ops[i][1], shape, _bstrides(ops[i][1], shape)) for i in arrays]

    def run(part: tuple[int, ...], vs: list[WArray]) -> None:
        now = list(ops)
        for i, v in zip(arrays, vs[1:]):
            now[i] = (now[i][0], v, now[i][2])
        elementwise(expr, out.dtype, now, part, out=vs[0], extra=extra, check=check, helpers=helpers)

    chunks.chunked(shape, views, run, most=WG * RT.max_groups ** 2)


def redirect(dst: WArray, src: WArray) -> bool:
    """Write the result ``src`` of the dispatch just recorded into ``dst`` instead, when that dispatch is an
    elementwise kernel with ``src`` as its fresh output and ``dst`` has its shape and dtype: the in-place op then
    costs its own kernel, not that kernel and a copy. ``src`` becomes a view of ``dst``'s elements (what a copy
    would have given it). False, with nothing changed, otherwise; the caller copies."""
    held = RT.held
    recipe = held[4] if held is not None else None
    if recipe is None or recipe[0] is not src or src.shape != dst.shape or src.dtype != dst.dtype:
        return False
    if recipe[1] is _GEMM or recipe[1] is _GEMM_ACT:  # (a product's, not an elementwise kernel's)
        return _gemm_activation_into(dst, src)
    if dst.st is None or any(s == 0 and n > 1 for s, n in zip(dst.stride, dst.shape)):
        return False  # an expanded dst: its threads would read elements others have written (the copy does not)
    RT.take_held(src)
    _, expr, operands, shape, extra, check, helpers = recipe
    elementwise(expr, dst.dtype, operands, shape, out=dst, extra=extra, check=check, helpers=helpers)
    src.st, src.stride, src.offset = dst.st, dst.stride, dst.offset
    return True


def contiguous_copy(a: WArray) -> WArray:
    return elementwise("a", a.dtype, [("a", a, a.dtype)], a.shape)


def assign(dst: WArray, value: Operand) -> None:
    """dst[...] = value (broadcast, cast to dst's dtype), in place."""
    if isinstance(value, np.ndarray):
        value = RT.upload(value)
    if isinstance(value, WArray):
        if value.dtype != dst.dtype:
            value = cast(value, dst.dtype)
        elementwise("a", dst.dtype, [("a", value, value.dtype)], dst.shape, out=dst)
    else:
        elementwise("a", dst.dtype, [("a", value, dst.dtype)], dst.shape, out=dst)


def cast(a: WArray, dtype: np.dtype[Any]) -> WArray:
    RT.check_dtype(dtype, "to")
    # a float outside int32 would saturate in int64's i32 storage: refused at the next sync instead
    check = "a >= 2147483648.0 || a < -2147483648.0" if dtype == np.int64 and _kind(a.dtype) == "f" else ""
    return elementwise(G.cast_expr(_kind(a.dtype), _kind(dtype), "a"), dtype, [("a", a, a.dtype)], a.shape,
                       check=check)


def full(shape: tuple[int, ...], value: Any, dtype: np.dtype[Any]) -> WArray:
    return elementwise("a", dtype, [("a", value, dtype)], shape)


def arange(start: int, step: int, n: int, dtype: np.dtype[Any]) -> WArray:
    """``start + i * step`` (integers; the last value is range-checked against int32 like an upload)."""
    if _kind(dtype) == "i" and n:
        _word(start + (n - 1) * step, dtype)
    out = RT.empty((n,), dtype)
    if not chunks.large(out):
        return elementwise("a + i32(i) * b", dtype, [("a", start, dtype), ("b", step, dtype)], (n,), out=out)
    # in chunks, each from its own first value (the shader's ``i`` counts from 0 in every chunk)
    rows = chunks.rows(out, 0)
    for s in range(0, n, rows):
        e = min(s + rows, n)
        elementwise("a + i32(i) * b", dtype, [("a", start + s * step, dtype), ("b", step, dtype)], (e - s,),
                    out=chunks.windowed(chunks.narrow(out, 0, s, e)))
    return out


def eye(n: int, m: int, dtype: np.dtype[Any]) -> WArray:
    """The (n, m) identity made by a kernel (nothing uploaded)."""
    out = RT.empty((n, m), dtype)
    if out.st is not None:
        RT.dispatch(G.eye_kernel(_st(dtype)), [out.st.buf], [out.size, m], _grid(out.size))
    return out


def _cpu_kernel(prim: str) -> Callable[..., Any]:
    """The CPU kernel of a primitive (registered by the op modules, which sit above the backends)."""
    return PRIMS[prim].kernels["cpu"]


def _host(fn: Callable[..., Any], *args: Any, **params: Any) -> WArray:
    """Fallback for rare cases (0-d scatter, float16 atomics): the CPU kernel on read-back arrays."""
    host = [to_host(a) if isinstance(a, WArray) else a for a in args]
    return RT.upload(np.asarray(fn(*host, **params)))


# -- pointwise -----------------------------------------------------------------------------------------
def _no_kernel(op: str, dt: np.dtype[Any]) -> Any:
    fail("method_dtype_not_supported_error", op=op, dtype=f"shapetorch.{dt.name}", hint=" on WebGPU")


def unary(name: str) -> Callable[..., WArray]:
    table = G.UNARY[name]

    def kernel(a: WArray) -> WArray:
        kind = _kind(a.dtype)
        if kind == "v" and name in G.UNARY_COMPLEX_REAL:  # |z| and arg z are float32
            return elementwise(G.UNARY_COMPLEX_REAL[name], np.dtype(np.float32), [("a", a, a.dtype)], a.shape)
        expr = table.get(kind) or _no_kernel(name, a.dtype)
        check = G.I32_OVERFLOW.get(name, "") if a.dtype == np.int64 else ""
        return elementwise(expr, a.dtype, [("a", a, a.dtype)], a.shape, check=check)

    return kernel


def predicate(name: str) -> Callable[..., WArray]:
    table = G.PREDICATE[name]

    def kernel(a: WArray) -> WArray:
        expr = table.get(_kind(a.dtype)) or _no_kernel(name, a.dtype)
        return elementwise(expr, np.dtype(bool), [("a", a, a.dtype)], a.shape)

    return kernel


def round_kernel(a: WArray, decimals: int = 0) -> WArray:
    if decimals == 0 or _kind(a.dtype) != "f":
        return unary("round")(a)
    return elementwise(G.UNARY["round_dec"]["f"], a.dtype, [("a", a, a.dtype)], a.shape, extra=[10.0**decimals])


def _broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    first = shapes[0]
    if all(s == first for s in shapes):  # the common case, without NumPy's general (and slower) routine
        return first
    if len(shapes) == 2:  # (a matmul's batch dims, a bias): NumPy's routine costs ten times this
        x, y = shapes
        if len(x) < len(y):
            x, y = y, x
        lead = len(x) - len(y)
        out = list(x)
        for i, n in enumerate(y):
            m = x[lead + i]
            if m != n:
                if m == 1:
                    out[lead + i] = n
                elif n != 1:
                    break
        else:
            return tuple(out)
    return tuple(np.broadcast_shapes(*shapes))


def binary(name: str) -> Callable[..., WArray]:
    table = G.BINARY[name]

    def kernel(a: Operand, b: Operand) -> WArray:
        arrays = [x for x in (a, b) if isinstance(x, WArray)]
        dt = arrays[0].dtype
        if isinstance(a, WArray) and isinstance(b, WArray) and a.dtype != b.dtype:
            b = cast(b, a.dtype)
        expr = table.get(_kind(dt)) or _no_kernel(name, dt)
        out_dt = np.dtype(bool) if name in G.BOOL_RESULT else dt
        shape = _broadcast(*(x.shape for x in arrays))
        check = G.I32_OVERFLOW.get(name, "") if dt == np.int64 else ""
        return elementwise(expr, out_dt, [("a", a, dt), ("b", b, dt)], shape, check=check)

    return kernel


def parametrized(name: str) -> Callable[..., WArray]:
    """A ``codegen.PARAMETRIZED`` primitive: its number params go to the shader as s0, s1, ..."""
    expr, names = G.PARAMETRIZED[name]

    def kernel(*arrays: WArray, **params: float) -> WArray:
        dt = arrays[0].dtype
        if _kind(dt) != "f":
            _no_kernel(name, dt)
        ops = [(nm, x, dt) for nm, x in zip("ab", arrays)]
        return elementwise(expr, dt, ops, _broadcast(*(x.shape for x in arrays)),
                           extra=[float(params[n]) for n in names])

    return kernel


def loss(name: str) -> tuple[Callable[..., WArray], Callable[..., WArray]]:
    """A ``codegen.LOSSES`` primitive and its gradient: the elementwise loss (then the sum kernel, and a division
    for 'mean'), and the gradient in the input (one kernel; the output gradient broadcast)."""
    fwd, bwd, names = G.LOSSES[name]

    def forward(x: WArray, t: WArray, reduction: str, **params: float) -> WArray:
        if _kind(x.dtype) != "f":
            _no_kernel(name, x.dtype)
        elem = elementwise(fwd, x.dtype, [("a", x, x.dtype), ("b", t, x.dtype)], x.shape,
                           extra=[float(params[n]) for n in names])
        if reduction == "none":
            return elem
        total = reduce("sum")(elem, tuple(range(len(x.shape))), False)
        if reduction == "sum":
            return total
        return elementwise("a / s0", x.dtype, [("a", total, x.dtype)], total.shape, extra=[float(x.size)])

    def backward(g: WArray, x: WArray, t: WArray, reduction: str, **params: float) -> WArray:
        if _kind(x.dtype) != "f":
            _no_kernel(f"{name}_backward", x.dtype)
        factor = 2.0 if name == "mse_loss" else 1.0
        norm = factor / x.size if reduction == "mean" and x.size else factor
        shape = _broadcast(g.shape, x.shape)
        return elementwise(bwd, x.dtype, [("a", g, x.dtype), ("b", x, x.dtype), ("c", t, x.dtype)], shape,
                           extra=[norm, *(float(params[n]) for n in names)])

    return forward, backward


def where_kernel(c: Operand, a: Operand, b: Operand) -> WArray:
    arrays = [x for x in (c, a, b) if isinstance(x, WArray)]
    vals = [x for x in (a, b) if isinstance(x, WArray)]
    dt = vals[0].dtype if vals else np.result_type(a, b)
    if isinstance(a, WArray) and isinstance(b, WArray) and a.dtype != b.dtype:
        b = cast(b, a.dtype)
    shape = _broadcast(*(x.shape for x in arrays))
    if not isinstance(c, WArray):
        c = full((), bool(c), np.dtype(bool))
    return elementwise("select(b, a, c != 0u)", dt, [("c", c, c.dtype), ("a", a, dt), ("b", b, dt)], shape)


def cast_kernel(a: WArray, dtype: Any) -> WArray:
    return cast(a, np.dtype(dtype))


# -- views ---------------------------------------------------------------------------------------------
_VIEW_STRIDES: dict[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]], tuple[int, ...] | None] = {}


def view_strides(old: tuple[int, ...], stride: tuple[int, ...], new: tuple[int, ...]) -> tuple[int, ...] | None:
    """Strides that show ``old`` (with ``stride``) as ``new`` without a copy, or None (torch's computeStride). Kept
    per (old, stride, new): a training step reshapes the same few layouts every step (two per dispatch or so)."""
    key = (old, stride, new)
    got = _VIEW_STRIDES.get(key, False)
    if got is not False:
        return got  # type: ignore[return-value]
    got = _view_strides(old, stride, new)
    if len(_VIEW_STRIDES) >= 4096:
        _VIEW_STRIDES.clear()
    _VIEW_STRIDES[key] = got
    return got


def _view_strides(old: tuple[int, ...], stride: tuple[int, ...], new: tuple[int, ...]) -> tuple[int, ...] | None:
    if math.prod(old) == 0 or not old:
        return contiguous_strides(new)
    out = [0] * len(new)
    view_d = len(new) - 1
    base = stride[-1]
    t_numel = v_numel = 1
    for d in range(len(old) - 1, -1, -1):
        t_numel *= old[d]
        if d == 0 or (old[d - 1] != 1 and stride[d - 1] != t_numel * base):
            while view_d >= 0 and (v_numel < t_numel or new[view_d] == 1):
                out[view_d] = v_numel * base
                v_numel *= new[view_d]
                view_d -= 1
            if v_numel != t_numel:
                return None
            if d > 0:
                base = stride[d - 1]
                t_numel = v_numel = 1
    if view_d != -1:
        return None
    return tuple(out)


def _view(a: WArray, shape: tuple[int, ...], stride: Sequence[int], offset: int | None = None) -> WArray:
    return WArray(a.st, tuple(shape), a.dtype, tuple(stride), a.offset if offset is None else offset)


# (shape, strides, axes) -> the permuted shape and strides: attention heads and transposed weights are permuted
# in the same layouts every step
_PERMUTED: dict[tuple[tuple[int, ...], tuple[int, ...], Any], tuple[tuple[int, ...], tuple[int, ...]]] = {}


def view_kernel(a: WArray, shape: tuple[int, ...]) -> WArray:
    shape = tuple(map(int, shape))
    s = view_strides(a.shape, a.stride, shape)
    if s is None:
        raise ValueError("view: the strides of the input do not allow this shape without a copy")
    return view_of(a.st, shape, a.dtype, s, a.offset)


def reshape_kernel(a: WArray, shape: tuple[int, ...]) -> WArray:
    shape = tuple(map(int, shape))
    key = (a.shape, a.stride, shape)
    # (view_strides' cache, read here: a frame less per reshape)
    s = _VIEW_STRIDES[key] if key in _VIEW_STRIDES else view_strides(a.shape, a.stride, shape)
    if s is None:  # a copy: the runtime's errors name the op (a view, the usual case, skips _named's frame: UNNAMED)
        outer, RT.op = RT.op, "reshape"
        try:
            a = contiguous_copy(a)
        finally:
            RT.op = outer
        s = contiguous_strides(shape)
    return view_of(a.st, shape, a.dtype, s, a.offset)


def permute_kernel(a: WArray, axes: Sequence[int] | None = None) -> WArray:
    key = (a.shape, a.stride, axes if type(axes) is tuple else None if axes is None else tuple(axes))
    got = _PERMUTED.get(key)
    if got is None:
        order = tuple(range(a.ndim - 1, -1, -1)) if key[2] is None else key[2]
        got = (tuple(a.shape[i] for i in order), tuple(a.stride[i] for i in order))
        if len(_PERMUTED) >= 4096:
            _PERMUTED.clear()
        _PERMUTED[key] = got
    return view_of(a.st, got[0], a.dtype, got[1], a.offset)


def unfold_kernel(a: WArray, axis: int, size: int, step: int, shape: tuple[int, ...]) -> WArray:
    """``Tensor.unfold``: the windows as a view, the window's elements along a new last axis."""
    if a.ndim == 0:
        return _view(a, shape, ())
    stride = (*a.stride[:axis], a.stride[axis] * step, *a.stride[axis + 1:], a.stride[axis])
    return _view(a, shape, stride)


def unfold_backward_kernel(g: WArray, in_shape: tuple[int, ...], axis: int, size: int, step: int) -> WArray:
    """The windows' gradients summed back (overlapping windows add up); on the host, a rare op in training."""
    return _host(_cpu_kernel("unfold_backward"), g, in_shape=in_shape, axis=axis, size=size, step=step)


def expand_kernel(a: WArray, shape: tuple[int, ...]) -> WArray:
    return _view(a, tuple(shape), _bstrides(a, tuple(shape)))


def diagonal_kernel(a: WArray, offset: int = 0, axis1: int = 0, axis2: int = 1) -> WArray:
    rest = [d for d in range(a.ndim) if d not in (axis1, axis2)]
    n1, n2 = a.shape[axis1], a.shape[axis2]
    length = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    start = a.offset
    if length:
        start += max(-offset, 0) * a.stride[axis1] + max(offset, 0) * a.stride[axis2]
    shape = [a.shape[d] for d in rest] + [length]
    stride = [a.stride[d] for d in rest] + [a.stride[axis1] + a.stride[axis2]]
    return _view(a, tuple(shape), stride, start)


def diagonal_backward_kernel(g: WArray, shape: tuple[int, ...], offset: int, axis1: int, axis2: int) -> WArray:
    out = full(tuple(shape), 0, g.dtype)
    assign(diagonal_kernel(out, offset, axis1, axis2), g)
    return out


# -- indexing ------------------------------------------------------------------------------------------
def _is_basic(index: tuple[Any, ...]) -> bool:
    return all(it is None or it is Ellipsis or (isinstance(it, (slice, int, np.integer)) and not isinstance(it, bool))
               for it in index)


# (shape, strides, index) -> the view's shape, strides and offset from the indexed array's: a step indexes the same
# layouts the same way every step (the attention's split, a sequence's last position)
_BASIC: dict[tuple[Any, ...], tuple[tuple[int, ...], tuple[int, ...], int]] = {}


def basic_index(a: WArray, index: tuple[Any, ...]) -> WArray:
    """NumPy basic indexing (ints, slices with step > 0, None, Ellipsis) as a view."""
    key = (a.shape, a.stride, _index_key(index))
    try:
        got = _BASIC.get(key)
    except TypeError:  # (an unhashable bound in a slice: worked out, not kept)
        got = _basic_layout(a.shape, a.stride, index)
    if got is None:
        got = _basic_layout(a.shape, a.stride, index)
        if len(_BASIC) >= 4096:
            _BASIC.clear()
        _BASIC[key] = got
    return view_of(a.st, got[0], a.dtype, got[1], a.offset + got[2])


def _basic_layout(a_shape: tuple[int, ...], a_stride: tuple[int, ...], index: tuple[Any, ...]
                  ) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """The shape, strides and offset (from the array's) of ``basic_index``'s view."""
    ndim = len(a_shape)
    consumed = sum(1 for it in index if it is not None and it is not Ellipsis)
    items: list[Any] = []
    for it in index:
        if it is Ellipsis:
            items += [slice(None)] * (ndim - consumed)
            consumed = ndim
        else:
            items.append(it)
    items += [slice(None)] * (ndim - sum(1 for it in items if it is not None))
    shape: list[int] = []
    stride: list[int] = []
    off = 0
    d = 0
    for it in items:
        if it is None:
            shape.append(1)
            stride.append(0)
            continue
        size, st = a_shape[d], a_stride[d]
        if isinstance(it, slice):
            start, stop, step = it.indices(size)
            if step <= 0:
                raise ValueError("webgpu: negative slice steps are not supported")
            n = len(range(start, stop, step))
            if n:
                off += start * st
            shape.append(n)
            stride.append(st * step)
        else:
            i = int(it)
            off += (i + size if i < 0 else i) * st
        d += 1
    return tuple(shape), tuple(stride), off


def adv_offsets(a: WArray, index: tuple[Any, ...]) -> np.ndarray[Any, Any]:
    """Element offsets into a's buffer of ``a[index]`` for any NumPy index (NumPy applies it to coordinate grids)."""
    total = np.full((), a.offset, dtype=np.int64)
    for d in range(a.ndim):
        grid = np.broadcast_to(np.arange(a.shape[d], dtype=np.int64).reshape(
            [-1 if k == d else 1 for k in range(a.ndim)]), a.shape)
        total = total + grid[index] * a.stride[d]
    if a.ndim == 0:
        total = np.broadcast_to(total, np.empty(())[index].shape)
    return np.ascontiguousarray(total)


def _offsets_buffer(offs: np.ndarray[Any, Any] | WArray) -> WArray:
    return offs if isinstance(offs, WArray) else RT.upload(offs.astype(np.int32))


def _adv(a: WArray, index: tuple[Any, ...]) -> np.ndarray[Any, Any] | WArray:
    """The element offsets of ``a[index]``: computed on the device when the index holds device index tensors
    (``index_offsets``), else on the host from NumPy arrays (then uploaded by the kernel that uses them)."""
    if index_offsets.usable(a, index):
        offs = index_offsets.offsets(a, index)
        if offs is not None:
            return offs
    return adv_offsets(a, tuple(to_host(it) if isinstance(it, WArray) else it for it in index))


def take(a: WArray, offs: np.ndarray[Any, Any] | WArray) -> WArray:
    out = RT.empty(offs.shape, a.dtype)
    if out.st is None or a.st is None:
        return out
    ob = _offsets_buffer(offs)
    if ob.st is None:
        return out
    assert ob.contiguous
    wgsl = G.take_kernel(_st(a.dtype))
    n, osz = offs.size, chunks.item(out)
    # the result and the offsets by runs of elements; the source over windows of its span (the offsets reach it
    # anywhere), one dispatch per window and run
    step = min(chunks.flat_budget(osz), chunks.flat_budget(4))
    sources = chunks.windows(a)
    for e0 in range(0, n, step):
        e1 = min(n, e0 + step)
        outb, o0 = chunks.flat_window(out.st, osz, e0, e1)
        offb, f0 = chunks.flat_window(ob.st, 4, ob.offset + e0, ob.offset + e1)
        for src, length in sources:
            assert src.st is not None
            base = (a.offset - src.offset) & 0xFFFFFFFF  # the window's first element (offsets are absolute)
            RT.dispatch(wgsl, [outb, src.st.buf, offb], [e1 - e0, e0 - o0, ob.offset + e0 - f0, base, length],
                        _grid(e1 - e0))
    return out


def put(dst: WArray, offs: np.ndarray[Any, Any] | WArray, value: Operand, accumulate: bool = False) -> None:
    """dst's buffer at ``offs`` = value (or += value), value broadcast to offs.shape."""
    if offs.size == 0 or dst.st is None:
        return
    if isinstance(value, np.ndarray):
        value = RT.upload(value)
    elif not isinstance(value, WArray) and dst.dtype.kind == "c":  # (a number is one parameter word, not two)
        value = RT.upload(np.asarray(value, dst.dtype))
    st = _st(dst.dtype)
    shape = tuple(offs.shape)
    ob = _offsets_buffer(offs)
    if ob.st is None:
        return
    meta: list[int] = [offs.size, len(shape), *shape]
    if isinstance(value, WArray):
        if value.dtype != dst.dtype:
            value = cast(value, dst.dtype)
        if value.st is None:
            return
        if value.st is dst.st:  # the buffer written is not also bound for reading (see ``elementwise``)
            value = contiguous_copy(value)
        if chunks.large(value):  # read by runs of elements below: made contiguous in the index space's order
            value = contiguous_copy(expand_kernel(value, shape))
        assert value.st is not None
        meta += [value.offset, *_bstrides(value, shape), 0]
        vbuf = [value.st.buf]  # bound whole (read at the index space's coordinates) unless large
        mode = "s"
    else:
        meta += [0, *([0] * len(shape)), _word(value, dst.dtype)]
        vbuf = []
        mode = "k"
    assert ob.contiguous and ob.st is not None
    wgsl = G.put_kernel(st, mode, accumulate)
    n = offs.size
    # the offsets by runs of elements; dst over windows of its span (the offsets reach it anywhere)
    targets = chunks.windows(dst)
    for e0 in range(0, n, chunks.flat_budget(4)):
        e1 = min(n, e0 + chunks.flat_budget(4))
        offb, f0 = chunks.flat_window(ob.st, 4, ob.offset + e0, ob.offset + e1)
        run_meta = [e1 - e0, *meta[1:], e0, ob.offset + e0 - f0]
        run_v = vbuf
        if isinstance(value, WArray) and chunks.large(value):
            assert value.st is not None
            vb, v0 = chunks.flat_window(value.st, chunks.item(value), value.offset + e0, value.offset + e1)
            run_v = [vb]
            run_meta[2 + len(shape)] = (value.offset - v0) & 0xFFFFFFFF
        for t, length in targets:
            assert t.st is not None
            base = (dst.offset - t.offset) & 0xFFFFFFFF
            RT.dispatch(wgsl, [t.st.buf, offb, *run_v], [*run_meta, base, length], _grid(e1 - e0))


def getitem(a: WArray, index: Any) -> WArray:
    index = index if isinstance(index, tuple) else (index,)
    if _is_basic(index):
        return basic_index(a, index)
    return take(a, _adv(a, index))


def setitem(a: WArray, index: Any, value: Any) -> None:
    index = index if isinstance(index, tuple) else (index,)
    if _is_basic(index):
        assign(basic_index(a, index), value)
    else:
        put(a, _adv(a, index), value)


def get_kernel(a: WArray, idx1: tuple[Any, ...], idx2: tuple[Any, ...] | None) -> WArray:
    out = basic_index(a, idx1)
    return out if idx2 is None else take(out, _adv(out, idx2))


def views_kernel(a: WArray, axis: int, index: tuple[tuple[Any, ...], ...]) -> tuple[WArray, ...]:
    """The pieces of split and unbind: a view of ``a`` per basic index, no dispatch."""
    return tuple(basic_index(a, i) for i in index)


def _embed(src: WArray, shape: tuple[int, ...], windows: Sequence[tuple[int, int, int]], fill: Any,
           plan_key: tuple[Any, ...] | None = None) -> WArray:
    """A fresh contiguous array of ``shape``: ``fill``, with ``src`` on the window ``(start, step, count)`` of each
    dim, in one dispatch (``G.embed_kernel``), or one per chunk of the output when it or ``src`` is larger than a
    binding. ``src`` has one dim per window of count >= 0, in order; a window of count -1 is an int index (one
    position, no dim of ``src``). With ``plan_key``, a launch of one dispatch is kept in :data:`_EMBED_PLANS`."""
    out = RT.empty(shape, src.dtype)
    if out.st is None:
        return out
    if src.st is None:  # an empty window: all fill
        return full(shape, fill, src.dtype)
    wgsl = G.embed_kernel(_st(src.dtype))
    # ``at`` has no buffer (so it always "fits" and is never windowed) and out's strides: narrowed with each chunk,
    # its offset is the chunk's first element, whose index in out is the chunk's origin (a chunk of a contiguous
    # array is a box whose dims before the one split have one index and whose later dims are whole)
    at = WArray(None, shape, src.dtype, contiguous_strides(shape), 0)
    # ``reach`` sizes the chunks for src: src seen over out's index space, each dim's stride src's over the window's
    # step (rounded up), so that a chunk's span of it bounds the span of the part of src the chunk's windows take
    it = iter(src.stride)
    steps = [0 if count < 0 else -(-abs(next(it)) // step) for _, step, count in windows]
    reach = WArray(src.st, shape, src.dtype, tuple(steps), src.offset)

    def place(part: tuple[int, ...], views: list[WArray]) -> None:
        o, a, _ = views
        assert o.st is not None
        origin = np.unravel_index(a.offset, shape) if shape else ()
        piece, meta = src, [o.size, len(part), *part, 0]
        sd = 0  # the dim of src of the next window with count >= 0
        for d, (start, step, count) in enumerate(windows):
            s0, n = int(origin[d]), part[d]
            if count < 0:  # an int index: one position, in this chunk or not
                meta += [max(start - s0, 0), 1, int(s0 <= start < s0 + n), 0]
                continue
            k0 = min(count, max(0, -(-(s0 - start) // step)))
            k1 = min(count, max(0, -(-(s0 + n - start) // step)))
            # (an empty run still binds one element of src: a binding cannot be empty)
            piece = chunks.narrow(piece, sd, min(k0, count - 1), max(k1, min(k0, count - 1) + 1))
            meta += [start + k0 * step - s0, step, k1 - k0, src.stride[sd]]
            sd += 1
        piece = chunks.windowed(piece)
        assert piece.st is not None
        meta[2 + len(part)] = piece.offset
        meta += [_word(fill, src.dtype), o.offset]
        grid = _grid(o.size)
        RT.dispatch(wgsl, [o.st.buf, piece.st.buf], meta, grid)
        if plan_key is not None and o is out and piece.st is src.st and part == shape:  # the whole launch, unwindowed
            if len(_EMBED_PLANS) >= 1024:
                _EMBED_PLANS.clear()
            pos = 2 + len(part)
            template = meta.copy()
            template[pos] -= src.offset  # (src shares g's offset: src is a view of g with g's offset)
            _EMBED_PLANS[plan_key] = (wgsl, template, grid, pos)

    chunks.chunked(shape, [out, at, reach], place)
    return out


def _basic_windows(shape: tuple[int, ...], index: tuple[Any, ...]) -> list[tuple[int, int, int]] | None:
    """The windows of a basic index (ints, slices with step > 0, None, Ellipsis) into ``shape``; an int's count is
    -1 (one position, no dim of the result); None where the index is not of that kind."""
    consumed = sum(1 for it in index if it is not None and it is not Ellipsis)
    items: list[Any] = []
    for it in index:
        if it is Ellipsis:
            items += [slice(None)] * (len(shape) - consumed)
            consumed = len(shape)
        elif it is not None:
            items.append(it)
    items += [slice(None)] * (len(shape) - len(items))
    out = []
    for it, size in zip(items, shape):
        if isinstance(it, slice):
            start, stop, step = it.indices(size)
            if step <= 0:
                return None
            out.append((start, step, len(range(start, stop, step))))
        else:
            i = int(it)
            out.append((i + size if i < 0 else i, 1, -1))
    return out


# A basic index's gradient launch (one embed dispatch), by g's layout and dtype, the output shape, the index and the
# limits: (shader, parameter block, grid, the word of g's offset). The slices of a step (``split``, ``x[:, -1]``) take
# the same gradients every step; a plan found again records the dispatch with g's offset placed, skipping the
# windows, the reshape and the chunking (most of this kernel's host time).
_EMBED_PLANS: dict[tuple[Any, ...], tuple[str, list[int], tuple[int, int, int], int]] = {}


def _index_key(index: tuple[Any, ...]) -> tuple[Any, ...]:
    """A basic index as a dict key (a slice is not hashable before Python 3.12)."""
    return tuple([("s", it.start, it.stop, it.step) if type(it) is slice else it for it in index])  # (a list: one frame)


def index_backward_kernel(g: WArray, shape: tuple[int, ...], idx1: tuple[Any, ...],
                          idx2: tuple[Any, ...] | None) -> WArray:
    if idx2 is None:  # a basic index: the gradient placed into zeros in one pass
        key = (g.shape, g.stride, g.dtype, tuple(shape), _index_key(idx1), RT.max_binding, RT.max_groups)
        plan = _EMBED_PLANS.get(key)
        if plan is not None and g.st is not None and not chunks.large(g):
            out = RT.empty(key[3], g.dtype)
            assert out.st is not None  # (the plan was made for a non-empty output of this shape)
            meta = plan[1].copy()
            meta[plan[3]] += g.offset
            RT.dispatch(plan[0], [out.st.buf, g.st.buf], meta, plan[2])
            return out
        windows = _basic_windows(tuple(shape), idx1)
        if windows is not None:  # g without the size-1 dims of None items (a view)
            src = reshape_kernel(g, tuple(c for _, _, c in windows if c >= 0))
            return _embed(src, tuple(shape), windows, 0, key if src.st is g.st else None)
    out = full(tuple(shape), 0, g.dtype)
    target = basic_index(out, idx1)
    if idx2 is None:
        assign(target, g)
    else:
        put(target, _adv(target, idx2), g, accumulate=True)
    return out


def index_put_kernel(a: WArray, v: Operand, idx1: tuple[Any, ...], idx2: tuple[Any, ...] | None) -> WArray:
    out = contiguous_copy(a)
    target = basic_index(out, idx1)
    if idx2 is None:
        assign(target, v)
    else:
        put(target, _adv(target, idx2), v)
    return out


def check_range(a: WArray, lo: int, hi: int, code: str, op: str, skip: int | None = None, **kwargs: Any) -> None:
    """Check on the device that every element of the integer array ``a`` (other than ``skip``) is in ``[lo, hi)``,
    without waiting:
    a failure raises ``code`` (with ``kwargs``; :data:`runtime.BAD` stands for the value found) at the next
    sync. Kernels reading such an index clamp nothing: WebGPU's robust buffer access keeps reads in bounds."""
    if a.size == 0 or a.st is None:
        return
    from .runtime import BAD

    cid = RT.add_check(code, op, **{k: (BAD if v is None else v) for k, v in kwargs.items()})

    def check(shape: tuple[int, ...], views: list[WArray]) -> None:
        x = views[0]
        assert x.st is not None
        meta = [x.size, x.ndim, *x.shape, x.offset, *x.stride, lo & 0xFFFFFFFF, hi & 0xFFFFFFFF, cid,
                int(skip is not None), (skip or 0) & 0xFFFFFFFF]
        RT.dispatch(G.range_check_kernel(), [RT.flag, x.st.buf], meta, _grid(x.size))

    chunks.chunked(a.shape, [a], check)


def _gather_meta(index: WArray, t: WArray, src: WArray | None, axis: int) -> list[int]:
    shape = index.shape
    meta: list[int] = [index.size, len(shape), *shape, index.offset, *index.stride, t.offset, *t.stride]
    meta += [src.offset, *src.stride] if src is not None else [0] * (len(shape) + 1)
    meta += [axis, t.shape[axis]]
    return meta


def _along(t: WArray, index: WArray, axis: int) -> WArray:
    """``t`` with every dim but ``axis`` cut to the index's extent (gather and scatter reach no further there), so
    that the chunks of the index space (:func:`chunks.chunked`) bind only the part of ``t`` they reach."""
    shape = tuple(t.shape[d] if d == axis else n for d, n in enumerate(index.shape))
    return _view(t, shape, t.stride, t.offset)


# A gather's launch (one dispatch), by the layouts and dtypes of the input and the index, the axis and the limits:
# (shader, parameter block, grid, the words of the index's and the input's offsets). ``take_along_dim`` (max
# pooling's indices, cross entropy's targets) gathers the same layouts every step.
_GATHER_PLANS: dict[tuple[Any, ...], tuple[str, list[int], tuple[int, int, int], int, int]] = {}


def gather_kernel(a: WArray, index: WArray, axis: int) -> WArray:
    if a.ndim == 0:
        return contiguous_copy(expand_kernel(a, index.shape))
    key = (a.shape, a.stride, a.dtype, index.shape, index.stride, index.dtype, axis, RT.max_groups, RT.max_binding)
    plan = _GATHER_PLANS.get(key)
    if plan is not None and a.st is not None and index.st is not None and not (chunks.large(a) or chunks.large(index)):
        out = RT.empty(index.shape, a.dtype)
        assert out.st is not None  # (the plan was made for this non-empty index shape)
        wgsl, meta, grid, at_ix, at_t = plan
        meta = meta.copy()
        meta[at_ix], meta[at_t] = index.offset, a.offset
        RT.dispatch(wgsl, [out.st.buf, index.st.buf, a.st.buf], meta, grid)
        return out
    out = RT.empty(index.shape, a.dtype)
    if out.st is None or a.st is None or index.st is None:
        return out
    wgsl = G.gather_kernel(_st(a.dtype), "s", "gather")
    calls: list[tuple[Any, ...]] = []

    def gather(shape: tuple[int, ...], views: list[WArray]) -> None:
        o, ix, whole = views
        assert o.st is not None and ix.st is not None
        for t, n in chunks.windows(whole):
            assert t.st is not None
            meta = [*_gather_meta(ix, t, None, axis), o.offset, n]
            grid = _grid(ix.size)
            RT.dispatch(wgsl, [o.st.buf, ix.st.buf, t.st.buf], meta, grid)
            calls.append((o, ix, t, meta, grid))

    chunks.chunked(index.shape, [out, index, _along(a, index, axis)], gather, keep=[None, None, axis])
    if len(calls) == 1 and calls[0][0] is out and calls[0][1] is index and calls[0][2].st is a.st:  # unchunked
        meta, grid = calls[0][3], calls[0][4]
        if len(_GATHER_PLANS) >= 1024:
            _GATHER_PLANS.clear()
        nd = index.ndim
        # the words of _gather_meta: [size, nd, *shape, index offset, *index strides, t offset, ...]
        _GATHER_PLANS[key] = (wgsl, meta, grid, 2 + nd, 3 + 2 * nd)
    return out


def _scatter(op: str, a: WArray, index: WArray, src: Operand, axis: int, fresh: bool = False) -> WArray:
    """``op`` of ``src`` into a copy of ``a`` along ``axis``; into ``a`` itself when ``fresh`` (a contiguous array the
    caller has just made for it)."""
    if a.ndim == 0:
        return _host(_cpu_kernel(op), a, index, src, axis=axis)
    out = a if fresh else contiguous_copy(a)
    if index.size == 0 or out.st is None or index.st is None:
        return out
    views = [index, _along(out, index, axis)]
    scalar: list[int] = []
    if isinstance(src, WArray):
        if src.dtype != a.dtype:
            src = cast(src, a.dtype)
        assert src.st is not None
        views.append(_view(src, index.shape, src.stride, src.offset))
        mode = "s"
    else:
        scalar = [_word(src, a.dtype)]
        mode = "k"
    wgsl = G.gather_kernel(_st(a.dtype), mode, op)

    def scatter(shape: tuple[int, ...], vs: list[WArray]) -> None:
        ix, whole = vs[0], vs[1]
        s = vs[2] if len(vs) > 2 else None
        assert ix.st is not None
        for t, n in chunks.windows(whole):
            assert t.st is not None
            bufs = [t.st.buf, ix.st.buf] + ([s.st.buf] if s is not None and s.st is not None else [])
            RT.dispatch(wgsl, bufs, [*_gather_meta(ix, t, s, axis), *(scalar or [0]), n], _grid(ix.size))

    chunks.chunked(index.shape, views, scatter, keep=[None, axis, None])
    return out


def scatter_kernel(a: WArray, index: WArray, src: Operand, axis: int) -> WArray:
    return _scatter("scatter", a, index, src, axis)


def scatter_add_kernel(a: WArray, index: WArray, src: Operand, axis: int) -> WArray:
    return _scatter("scatter_add", a, index, src, axis)


def cat_kernel(*arrays: WArray, axis: int) -> WArray:
    shape = list(arrays[0].shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    out = RT.empty(tuple(shape), arrays[0].dtype)
    start = 0
    for a in arrays:
        n = a.shape[axis]
        if n:
            idx = (slice(None),) * axis + (slice(start, start + n),)
            assign(basic_index(out, idx), a)
        start += n
    return out


# -- reductions ----------------------------------------------------------------------------------------
CHUNK = 4096
_IDENTITY = {"sum": 0, "prod": 1, "all": True, "any": False}


# A one-pass reduction's launch, by the op, the input's shape, strides and dtype, the axes and keepdims (and the limits
# the grid and the chunking follow): (result shape, result dtype, outputs, shader, parameter block, grid); only the
# input's offset (word 5 + ndim) changes when a step reduces the same shapes again.
_REDUCE_PLANS: dict[tuple[Any, ...], tuple[Any, ...]] = {}


def reduce(op: str) -> Callable[..., WArray]:
    def kernel(a: WArray, axis: tuple[int, ...] | int, keepdims: bool = False) -> WArray:
        key = (op, a.shape, a.stride, a.dtype, axis if isinstance(axis, int) else tuple(axis), keepdims, RT.max_groups,
               RT.max_binding)
        plan = _REDUCE_PLANS.get(key)
        if plan is not None and not chunks.large(a):
            out_shape, out_dt, n_work, wgsl, meta, grid = plan
            out = RT.empty((n_work,), out_dt)
            assert out.st is not None and a.st is not None
            meta = meta.copy()
            meta[5 + a.ndim] = a.offset
            RT.dispatch(wgsl, [out.st.buf, a.st.buf], meta, grid)
            return _view(out, out_shape, contiguous_strides(out_shape), 0)
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        axes = tuple(d % a.ndim for d in axes) if a.ndim else ()
        kept = [d for d in range(a.ndim) if d not in axes]
        out_shape = tuple(1 if d in axes else a.shape[d] for d in range(a.ndim)) if keepdims else \
            tuple(a.shape[d] for d in kept)
        arg = op in ("argmax", "argmin")
        out_dt = np.dtype(np.int64) if arg else np.dtype(bool) if op in ("all", "any") else a.dtype
        n_out = math.prod(a.shape[d] for d in kept)
        inner = math.prod(a.shape[d] for d in axes)
        if n_out == 0:
            return RT.empty(out_shape, out_dt)
        if inner == 0:
            return full(out_shape, _IDENTITY[op], out_dt)
        if chunks.large(a):
            # split along a kept dim where there is one (its chunks' results are the result's chunks), else along a
            # reduced one (the chunks' results reduced again; argmax/argmin's as (value, index) pairs, the index
            # counted from the chunk's start in the row)
            split = next((d for d in kept if a.shape[d] > 1), -1)
            if not chunks.fits(a):
                if split >= 0:
                    return _reduce_chunks(kernel, a, axes, out_shape, split)
                if arg:
                    pairs: list[WArray] = []
                    _arg_pairs(op, permute_kernel(a, kept + list(axes)), 0, pairs)
                    res = _arg_pick(op, cat_kernel(*pairs, axis=0) if len(pairs) > 1 else pairs[0], a.dtype, 1)
                    return _view(res, out_shape, contiguous_strides(out_shape), 0)
                split = next(d for d, n in enumerate(a.shape) if n > 1)
                return _reduce_chunks(kernel, a, axes, out_shape, split)
            a = chunks.windowed(a)
        v = permute_kernel(a, kept + list(axes))
        nchunks = 1 if inner <= CHUNK else -(-inner // CHUNK)
        if arg and nchunks > 1:  # a long row: the best of each chunk, then the best of those
            res = _arg_pick(op, _reduce_pass(op, v, n_out, inner, nchunks, np.dtype(np.int32), pairs="out"), a.dtype,
                            n_out)
            return _view(res, out_shape, contiguous_strides(out_shape), 0)
        launch: list[Any] = []
        res = _reduce_pass(op, v, n_out, inner, nchunks, out_dt, launch)
        if nchunks == 1 and v.st is a.st and v.offset == a.offset:  # (not a window of a large input)
            if len(_REDUCE_PLANS) >= 1024:
                _REDUCE_PLANS.clear()
            _REDUCE_PLANS[key] = (out_shape, out_dt, n_out, *launch)
        if nchunks > 1:
            res = _reduce_pass(op, _view(res, (n_out, nchunks), (nchunks, 1)), n_out, nchunks, 1, out_dt)
        return _view(res, out_shape, contiguous_strides(out_shape), 0)

    return kernel


def _reduce_chunks(kernel: Callable[..., WArray], a: WArray, axes: tuple[int, ...], out_shape: tuple[int, ...],
                   dim: int) -> WArray:
    """A reduction of a tensor larger than one binding: reduced in chunks along ``dim``, the chunks' results
    joined along that dim and, when it is reduced, reduced again (sum, prod, amax, amin, all and any combine their
    partial results with themselves)."""
    step = chunks.rows(a, dim)
    parts = [kernel(chunks.narrow(a, dim, s, min(s + step, a.shape[dim])), axes, True)
             for s in range(0, a.shape[dim], step)]
    res = cat_kernel(*parts, axis=dim)
    if dim in axes:
        res = kernel(res, (dim,), True)
    return _view(res, out_shape, contiguous_strides(out_shape), 0)


def _arg_pairs(op: str, v: WArray, base: int, pairs: list[WArray]) -> None:
    """argmax/argmin over all of ``v`` (its kept dims, first, all of size 1), a view larger than one binding: the
    (value, index) pairs of its chunks, appended to ``pairs`` in the order of their indices. ``v`` is split along
    its first dim longer than 1 into pieces that each fit a binding (a piece of one index that is still too large
    is split again along the next dim); ``base`` is the index of ``v``'s first element in the row."""
    if chunks.fits(v):
        inner = v.size
        pairs.append(_reduce_pass(op, chunks.windowed(v), 1, inner, -(-inner // CHUNK), np.dtype(np.int32),
                                  pairs="out", base=base))
        return
    dim = next(d for d, n in enumerate(v.shape) if n > 1)
    step, after = chunks.rows(v, dim), math.prod(v.shape[dim + 1:])
    for s in range(0, v.shape[dim], step):
        _arg_pairs(op, chunks.narrow(v, dim, s, min(s + step, v.shape[dim])), base + s * after, pairs)


def _arg_pick(op: str, pairs: WArray, dtype: np.dtype[Any], n_out: int) -> WArray:
    """The index of the best of each output's chunk pairs (``pairs``: n_out x chunks x 2 int32 words, the values'
    bits and their indices): the first best, as one pass over the whole row would pick."""
    nchunks = pairs.size // (2 * n_out)
    v = WArray(pairs.st, (n_out, nchunks), dtype, (2 * nchunks, 2), pairs.offset)
    return _reduce_pass(op, v, n_out, nchunks, 1, np.dtype(np.int64), pairs="in")


def _reduce_pass(op: str, v: WArray, n_out: int, inner: int, nchunks: int, out_dt: np.dtype[Any],
                 launch: list[Any] | None = None, pairs: str = "", base: int = 0) -> WArray:
    """One reduction dispatch; ``launch`` receives its (shader, parameter block, grid). ``pairs``, ``base``:
    argmax/argmin in chunks (``codegen.reduce_kernel``): the output is two words per work item."""
    n_work = n_out * nchunks
    out = RT.empty((2 * n_work if pairs == "out" else n_work,), out_dt)
    assert out.st is not None and v.st is not None
    chunk = -(-inner // nchunks)
    assert (nchunks - 1) * chunk < inner  # no empty chunk: each one has a best element
    meta = [n_work, nchunks, inner, chunk, v.ndim, *v.shape, v.offset, *v.stride, base]
    wgsl = G.reduce_kernel(op, _st(v.dtype), _st(out_dt), pairs)
    grid = _grid(n_work, 1)
    RT.dispatch(wgsl, [out.st.buf, v.st.buf], meta, grid)
    if launch is not None:
        launch += (wgsl, meta.copy(), grid)
    return out


# -- matmul --------------------------------------------------------------------------------------------
# Every product runs through :func:`_gemm` (the one tiled GEMM template, ``codegen.matmul_kernel``).
MM_MAX_SLICE = 16384  # K per workgroup at most: lavapipe miscomputes longer reductions in one workgroup (K ~ 55,000)
MM_SPLIT_MIN_K = 2048  # a split K slice keeps at least this much work
MM_TARGET_WORKGROUPS = 128  # K is split while the output tiles alone would give fewer workgroups than this


def _mm_tiles(st: str, M: int, N: int) -> tuple[int, int, int, int, int]:
    """(BM, BN, BK, TM, TN): 8 x 8 outputs per thread; 128 x 128 tiles (256 invocations) when both M and N fill
    one, else 64 x 64 (64 invocations, so a small product still spreads over workgroups); and the deepest K step
    whose two double-buffered tiles fit the adapter's workgroup memory (f16 tiles are half the bytes). On
    lavapipe the 128-wide tiles ran 1.5x the 64-wide ones' GFLOP/s at 1024^3."""
    item = 2 if st == "f16" else 4
    big = M >= 128 and N >= 128 and RT.max_invocations >= 256
    for edge in ((128, 64) if big else (64,)):
        for bk in (32, 16, 8):
            if 2 * 2 * bk * (edge // 4 + 1) * 4 * item <= RT.max_wg_storage:
                return (edge, edge, bk, 8, 8)
    return (64, 64, 4, 8, 8)


def _aligned(off: int, strides: Sequence[int]) -> bool:
    return off % 4 == 0 and all(s % 4 == 0 for s in strides)


def _a_mode(M: int, K: int, geo: Sequence[int]) -> str:
    """How A (M x K) is loaded: vec4 along k or m where the view allows it, else scalars along the shorter stride.
    ``geo``: (offset, row stride, column stride, *batch strides)."""
    off, rs, cs, bstr = geo[0], geo[1], geo[2], geo[3:]
    if cs == 1 and K % 4 == 0 and _aligned(off, [*bstr, rs if M > 1 else 0]):
        return "vk"
    if rs == 1 and M % 4 == 0 and _aligned(off, [*bstr, cs if K > 1 else 0]):
        return "vm"
    return "sk" if abs(cs) <= abs(rs) else "sm"


def _b_mode(K: int, N: int, geo: Sequence[int]) -> str:
    """How B (K x N) is loaded: vec4 along n (a row-major B) or k (``W.T``), else scalars."""
    off, rs, cs, bstr = geo[0], geo[1], geo[2], geo[3:]
    if cs == 1 and N % 4 == 0 and _aligned(off, [*bstr, rs if K > 1 else 0]):
        return "vn"
    if rs == 1 and K % 4 == 0 and _aligned(off, [*bstr, cs if N > 1 else 0]):
        return "vk"
    return "sn" if abs(cs) <= abs(rs) else "sk"


def _mm_split(K: int, tiles: int, outputs: int, bk: int) -> tuple[int, int]:
    """(number of K slices, K per slice, a multiple of the K step). Long reductions over few output tiles are
    split so that more workgroups run (and no workgroup loops past :data:`MM_MAX_SLICE`); the partial sums (4
    bytes each) must fit one binding."""
    s = -(-K // MM_MAX_SLICE)
    if K >= 2 * MM_SPLIT_MIN_K and tiles < MM_TARGET_WORKGROUPS:
        s = max(s, min(K // MM_SPLIT_MIN_K, -(-MM_TARGET_WORKGROUPS // tiles)))
    s = max(1, min(s, RT.max_binding // (4 * max(outputs, 1))))
    per = -(-K // s)
    kslice = -(-per // bk) * bk
    return -(-K // kslice), kslice


def _fold_grid(n: int) -> tuple[int, int, int]:
    """``n`` workgroups folded into three grid dimensions under the per-dimension limit (the shader numbers them
    linearly and skips those past ``n``)."""
    x = min(n, RT.max_groups)
    rest = -(-n // x)
    y = min(rest, RT.max_groups)
    return (x, y, -(-rest // y))


def _gemm(out: WArray, M: int, N: int, K: int, batch: Sequence[int], a: WArray, a_geo: Sequence[int],
          b: WArray, b_geo: Sequence[int], modes: tuple[str, str], bias: WArray | None = None, act: str = "",
          conv: str = "", conv_meta: Sequence[int] = (), ksize: tuple[int, ...] = (),
          cstride: tuple[int, ...] = (), fuse: tuple[WArray, ...] = ()
          ) -> tuple[str, list[int], tuple[int, int, int], Callable[..., str]] | None:
    """Record ``out`` (batch..., M, N), contiguous, = epilogue(A @ B) with one dispatch, or two with split K;
    returns the one dispatch's (shader, parameter block, grid, its shader's maker for another epilogue), None for
    two. ``fuse``: the arrays the dispatch binds after ``out`` (A, B and the bias, as the caller has them), given
    to one dispatch as its recipe, so that an activation of ``out`` can join it (:func:`_gemm_activation`).

    ``a_geo``: (offset, row stride, column stride, *batch strides) of A, ``b_geo`` likewise; ``modes``: the
    load modes of A and B (``_a_mode``/``_b_mode``; scalar ones for the convolution's gathers); ``conv``: which
    convolution gather, with its geometry ``conv_meta`` and the kernel size and stride the shader is made for."""
    assert out.st is not None and a.st is not None and b.st is not None
    st = _st(out.dtype)
    tiles = _mm_tiles(st, M, N)
    bm, bn, bk = tiles[:3]
    ntn, ntm, nb = -(-N // bn), -(-M // bm), math.prod(batch)
    split, kslice = _mm_split(K, ntn * ntm * nb, nb * M * N, bk)
    nwg = ntn * ntm * nb * split
    meta = [M, N, K, len(batch), a_geo[0], b_geo[0], a_geo[1], a_geo[2], b_geo[1], b_geo[2], ntn, ntm, nb, split,
            kslice, nwg, *batch, *a_geo[3:], *b_geo[3:]]
    bias_meta = [] if bias is None else [bias.offset, _bstrides(bias, (N,))[0]]
    if split == 1:
        bufs = [out.st.buf, a.st.buf, b.st.buf]
        if bias is not None and bias.st is not None:
            bufs.append(bias.st.buf)
        make = functools.partial(G.matmul_kernel, st, tiles, *modes, bias is not None, conv=conv, ksize=ksize,
                                 cstride=cstride)
        launch = (make(act=act), meta + bias_meta + list(conv_meta), _fold_grid(nwg), make)
        RT.dispatch(launch[0], bufs, launch[1], launch[2],
                    (out, _GEMM, make, fuse, launch[1], launch[2]) if fuse else None)
        return launch
    part = RT.empty((split * nb * M * N,), np.dtype(np.float32 if st in ("f16", "f32") else np.int32))
    assert part.st is not None
    RT.dispatch(G.matmul_kernel(st, tiles, *modes, False, "", conv, True, ksize, cstride), [part.st.buf, a.st.buf, b.st.buf],
                meta + list(conv_meta), _fold_grid(nwg))
    bufs = [out.st.buf, part.st.buf]
    if bias is not None and bias.st is not None:
        bufs.append(bias.st.buf)
    RT.dispatch(G.matmul_split_reduce(st, bias is not None, act), bufs, [nb * M * N, split, N, *bias_meta],
                _grid(nb * M * N))
    return None


def matmul_bias_kernel(a: WArray, b: WArray, bias: WArray, act: str = "") -> WArray:
    """``act(a @ b + bias)`` (bias 1-D over the columns) in one dispatch: the bias and the activation are the
    matmul's epilogue."""
    if a.ndim < 2 or b.ndim != 2 or bias.ndim != 1 or a.shape[-1] == 0 or bias.dtype != a.dtype:
        y = binary("add")(matmul_kernel(a, b), bias)
        return y if not act else unary(act)(y)
    return matmul_kernel(a, b, bias, act)


# A product's launch, by the operands' shapes, strides and dtypes (and the limits the grid and the chunking follow):
# (output shape, result shape and strides, shader, parameter block, grid, bias offset's word or -1, the shader's
# maker where an activation may join the dispatch, else None). A training step multiplies the same shapes step after
# step; a plan found again skips the tiling, the load modes and the views, and only the operands' offsets change in
# its parameter block (words 4 and 5, and the bias's).
_MM_PLANS: dict[tuple[Any, ...], tuple[Any, ...]] = {}
_GEMM = "gemm"  # a recipe's tag: the held dispatch is a product, whose activation may join it (_gemm_activation)
_GEMM_ACT = "gemm+act"  # the product and its activation as two outputs (an in-place activation may drop the first)
_FLOATS = frozenset({np.dtype(np.float32), np.dtype(np.float16)})


def matmul_kernel(a: WArray, b: WArray, bias: WArray | None = None, act: str = "") -> WArray:
    key = (a.shape, a.stride, a.dtype, b.shape, b.stride, b.dtype, act, RT.max_groups, RT.max_binding,
           RT.max_wg_storage, RT.max_invocations,
           None if bias is None else (bias.shape, bias.stride, bias.dtype, bias.st is None))
    plan = _MM_PLANS.get(key)
    if plan is not None and not (chunks.large(a) or chunks.large(b)):
        full_shape, out_shape, out_stride, wgsl, meta, grid, bias_word, make = plan
        out = RT.empty(full_shape, a.dtype)
        meta = meta.copy()
        meta[4], meta[5] = a.offset, b.offset
        assert out.st is not None and a.st is not None and b.st is not None
        bufs = [out.st.buf, a.st.buf, b.st.buf]
        if bias_word >= 0:
            assert bias is not None and bias.st is not None
            meta[bias_word] = bias.offset
            bufs.append(bias.st.buf)
            fuse: tuple[WArray, ...] = (a, b, bias)
        else:
            fuse = (a, b)
        RT.dispatch(wgsl, bufs, meta, grid, None if make is None else (out, _GEMM, make, fuse, meta, grid))
        return out if out_stride is None else _view(out, out_shape, out_stride, 0)
    if a.dtype != b.dtype:
        b = cast(b, a.dtype)
    va = a if a.ndim > 1 else _view(a, (1, a.shape[0]), (0, a.stride[0]))
    vb = b if b.ndim > 1 else _view(b, (b.shape[0], 1), (b.stride[0], 0))
    M, K = va.shape[-2:]
    N = vb.shape[-1]
    batch = _broadcast(va.shape[:-2], vb.shape[:-2])
    full_shape = (*batch, M, N)
    out_shape = list(full_shape)
    if a.ndim == 1:
        del out_shape[-2]
    if b.ndim == 1:
        del out_shape[-1]
    if K == 0:
        return full(tuple(out_shape), 0, a.dtype)
    out = RT.empty(full_shape, a.dtype)
    if out.st is None:
        return _view(out, tuple(out_shape), contiguous_strides(out_shape), 0)
    ab = _bstrides(_view(va, va.shape[:-2], va.stride[:-2]), batch)
    bb = _bstrides(_view(vb, vb.shape[:-2], vb.stride[:-2]), batch)
    if chunks.large(va) or chunks.large(vb) or chunks.large(out):
        if batch:
            _matmul_batches(out, _view(va, (*batch, M, K), (*ab, *va.stride[-2:])),
                            _view(vb, (*batch, K, N), (*bb, *vb.stride[-2:])), bias, act)
        else:
            _matmul_rows(out, va, vb, bias, act)
        return _view(out, tuple(out_shape), contiguous_strides(out_shape), 0)
    a_geo = [va.offset, va.stride[-2], va.stride[-1], *ab]
    b_geo = [vb.offset, vb.stride[-2], vb.stride[-1], *bb]
    modes = (_a_mode(M, K, a_geo), _b_mode(K, N, b_geo))
    res = tuple(out_shape)
    # an activation may join the product where its result is ``out`` itself, a float one of the operands as given
    fusable = not act and res == full_shape and a.dtype in _FLOATS and key[2] == key[5]
    fuse = () if not fusable else (a, b) if bias is None or bias.st is None else (a, b, bias)
    launch = _gemm(out, M, N, K, batch, va, a_geo, vb, b_geo, modes, bias, act, fuse=fuse)
    if launch is not None and key[2] == key[5]:  # (else b was cast: another buffer than the plan would bind)
        if len(_MM_PLANS) >= 1024:
            _MM_PLANS.clear()
        bias_word = -1 if bias is None or bias.st is None else len(launch[1]) - 2  # [.., bias offset, bias stride]
        _MM_PLANS[key] = (full_shape, res, None if res == full_shape else contiguous_strides(res), launch[0],
                          launch[1], launch[2], bias_word, launch[3] if fuse else None)
    return out if res == full_shape else _view(out, res, contiguous_strides(res), 0)


def _gemm_activation(name: str) -> Callable[[WArray], WArray | None]:
    """The unary kernel ``name`` of the product just recorded, joined to it: where the held dispatch is a product
    (its recipe tagged :data:`_GEMM`) whose output is the operand ``x``, that dispatch is recorded again storing
    both ``x`` and ``name(x)`` (a dual-output epilogue: ``x`` may still be read, or saved for a gradient), and
    ``name(x)`` is returned; None where it is not (the kernel runs as it is). One dispatch for ``linear`` and its
    activation, not two."""
    exprs = G.UNARY[name]

    def join(x: WArray) -> WArray | None:
        held = RT.held
        recipe = held[4] if held is not None else None
        if recipe is None or recipe[0] is not x or recipe[1] is not _GEMM or _kind(x.dtype) not in exprs:
            return None
        _, _, make, arrays, meta, grid = recipe
        RT.take_held(x)
        y = RT.empty(x.shape, x.dtype)
        assert x.st is not None and y.st is not None
        RT.dispatch(make(act=name, dual=True), [x.st.buf, *map(_BUF, arrays), y.st.buf], meta, grid,
                    (y, _GEMM_ACT, make, arrays, meta, grid, x, name))
        return y

    return join


def _gemm_activation_into(dst: WArray, src: WArray) -> bool:
    """:func:`redirect` of a product joined with its activation (:func:`_gemm_activation`) into the product's own
    output (``relu_``, ``ReLU(inplace=True)`` after ``linear``): the product recorded again with the activation as
    its epilogue, one output."""
    held = RT.held
    recipe = held[4] if held is not None else None
    if recipe is None or recipe[0] is not src or recipe[1] is not _GEMM_ACT or recipe[6] is not dst:
        return False
    _, _, make, arrays, meta, grid, _, name = recipe
    RT.take_held(src)
    assert dst.st is not None
    RT.dispatch(make(act=name), [dst.st.buf, *map(_BUF, arrays)], meta, grid)
    src.st, src.stride, src.offset = dst.st, dst.stride, dst.offset
    return True


def _matmul_batches(out: WArray, a: WArray, b: WArray, bias: WArray | None, act: str) -> None:
    """``out = a @ b`` (a and b broadcast to out's batch dims) with a tensor larger than one binding: in chunks of the
    first batch dim, each product bound as windows; a single batch entry that is still too large is one product
    of one fewer batch dim (and so, at last, :func:`_matmul_rows`)."""
    step = min(chunks.rows(x, 0) for x in (a, b, out))
    for s in range(0, out.shape[0], step):
        e = min(s + step, out.shape[0])
        pa, pb, po = (chunks.narrow(x, 0, s, e) for x in (a, b, out))
        if e - s == 1:  # without the batch dim
            pa, pb, po = (_view(x, x.shape[1:], x.stride[1:]) for x in (pa, pb, po))
        else:
            pa, pb = chunks.windowed(pa), chunks.windowed(pb)
        assign(po, matmul_kernel(pa, pb, bias, act))


def _matmul_rows(out: WArray, a: WArray, b: WArray, bias: WArray | None, act: str) -> None:
    """``out = a @ b`` (2-D) with ``a`` or ``out`` larger than one binding: one GEMM per chunk of rows. The GEMM
    writes its output from the binding's start, so a chunk starts at a row whose byte offset in ``out`` is a
    multiple of the binding alignment (``b`` and the bias are bound whole: a larger ``b`` is refused)."""
    (M, K), N = a.shape, b.shape[1]
    item = chunks.item(out)
    unit = RT.align // math.gcd(N * item, RT.align)  # rows per aligned step
    step = min(chunks.rows(a, 0), chunks.rows(out, 0))
    step = max(unit, step - step % unit)
    vb = chunks.windowed(b)
    b_geo = [vb.offset, vb.stride[0], vb.stride[1]]
    for s in range(0, M, step):
        e = min(s + step, M)
        ca, co = chunks.windowed(chunks.narrow(a, 0, s, e)), chunks.windowed(chunks.narrow(out, 0, s, e), True)
        assert co.offset == 0
        a_geo = [ca.offset, ca.stride[0], ca.stride[1]]
        _gemm(co, e - s, N, K, (), ca, a_geo, vb, b_geo, (_a_mode(e - s, K, a_geo), _b_mode(K, N, b_geo)), bias,
              act)


def flip_kernel(a: WArray, axes: Sequence[int]) -> WArray:
    """A copy through a view with negated strides (the shaders' u32 offset arithmetic wraps, as it must)."""
    off = a.offset
    stride = list(a.stride)
    for d in axes:
        if a.shape[d] > 1:
            off += (a.shape[d] - 1) * stride[d]
            stride[d] = -stride[d]
    return contiguous_copy(_view(a, a.shape, stride, off))


def roll_kernel(a: WArray, shifts: tuple[int, ...], axes: tuple[int, ...] | None) -> WArray:
    if axes is None:
        flat = reshape_kernel(a, (a.size,))
        return reshape_kernel(roll_kernel(flat, shifts[:1], (0,)), a.shape)
    out = a
    for s, d in zip(shifts, axes):
        n = a.shape[d]
        k = s % n if n else 0
        src, out = out, RT.empty(a.shape, a.dtype)
        head = (slice(None),) * d
        assign(basic_index(out, (*head, slice(k, n))), basic_index(src, (*head, slice(0, n - k))))
        if k:
            assign(basic_index(out, (*head, slice(0, k))), basic_index(src, (*head, slice(n - k, n))))
    return out if out is not a else contiguous_copy(a)


def scan(op: str) -> Callable[..., WArray]:
    def kernel(a: WArray, axis: int) -> WArray:
        from . import scans  # it builds on this module

        return scans.scan(op, a, axis)

    return kernel


def argsort_kernel(a: WArray, axis: int, descending: bool) -> WArray:
    from . import merge_sort  # it builds on this module

    return merge_sort.argsort(a, axis, descending)


def _index_along(out: WArray, index: Any, axis: int) -> np.ndarray[Any, Any] | WArray:
    return _adv(out, (slice(None),) * axis + (index if isinstance(index, WArray) else np.asarray(index),))


def index_add_kernel(a: WArray, src: WArray, index: Any, axis: int) -> WArray:
    out = contiguous_copy(a)
    put(out, _index_along(out, index, axis), src, accumulate=True)
    return out


def index_copy_kernel(a: WArray, src: WArray, index: Any, axis: int) -> WArray:
    out = contiguous_copy(a)
    put(out, _index_along(out, index, axis), src)
    return out


# -- nn primitives written in the kernels above ---------------------------------------------------------
# A row kernel's launch (softmax, layer norm and their gradients), by the op, the axis, eps and the inputs' shapes,
# strides and dtypes (and the limits): (output shape, shader, parameter block less the offsets, grid, the
# permutation back, which inputs bind in which order). Made only where no input was copied first, so that on a
# hit the inputs bind as they are, each at its own offset.
_ROW_PLANS: dict[tuple[Any, ...], tuple[Any, ...]] = {}


def _row_op(op: str, rows_in: Sequence[WArray | None], axis: int, eps: float = 0.0,
            vecs: Sequence[WArray | None] = ()) -> WArray:
    """One dispatch of ``G.row_kernel``: ``rows_in`` (one shape) reduced and mapped along ``axis``; ``vecs``
    (w, b: one value per element of a row, None where absent) follow ``rows_in`` in ``G.ROW_INPUTS`` order."""
    key = (op, axis, eps, RT.max_groups, RT.max_binding,
           *(None if a is None else (a.shape, a.stride, a.dtype) for a in (*rows_in, *vecs)))
    plan = _ROW_PLANS.get(key)
    if plan is not None:
        shape, wgsl, meta, grid, back, pick = plan
        srcs = (*rows_in, *vecs)
        bound = [x for i in pick if (x := srcs[i]) is not None and x.st is not None]
        if len(bound) == len(pick) and not any(chunks.large(x) for x in bound):
            out = RT.empty(shape, next(a for a in rows_in if a is not None).dtype)
            assert out.st is not None
            RT.dispatch(wgsl, [out.st.buf, *(x.st.buf for x in bound if x.st is not None)],
                        [*meta, *(x.offset for x in bound)], grid)
            return permute_kernel(out, back)
    first = next(a for a in rows_in if a is not None)
    nd = first.ndim
    axis %= max(nd, 1)
    order = [d for d in range(nd) if d != axis] + [axis]
    back = [order.index(d) for d in range(nd)]
    L = first.shape[axis] if nd else 1
    rows = first.size // L if L else 0
    out = RT.empty(tuple(first.shape[d] for d in order), first.dtype)
    if out.st is None or rows == 0:
        return permute_kernel(out, back)
    ins: list[WArray | None] = []
    for a in rows_in:
        v = permute_kernel(a, order) if a is not None else None
        ins.append(contiguous_copy(v) if v is not None and not v.contiguous else v)
    ins += [None if v is None else contiguous_copy(v) if not v.contiguous else v for v in vecs]
    copied = any(v is not None and a is not None and v.st is not a.st for v, a in zip(ins, (*rows_in, *vecs)))
    names = G.ROW_INPUTS[op]
    idx_in = [[n for n in names if n in ("x", "y", "g")].index(n) if n in ("x", "y", "g")
              else len(rows_in) + [n for n in names if n in ("w", "b")].index(n) for n in names]
    order_in = [ins[i] for i in idx_in]
    present = tuple(a is not None for a in order_in)
    wgsl = G.row_kernel(op, _st(first.dtype), present)
    eps_word = f32_bits(eps)
    rowed = [n in ("x", "y", "g") for n in names]
    if chunks.large(out) or any(a is not None and chunks.large(a) for a in order_in):
        # one dispatch per chunk of rows; the kernel writes rows from its binding's start, so a chunk starts at an
        # aligned row, and the per-column vectors (w, b) are bound whole
        flat = [_view(a, (rows, L), (L, 1)) if a is not None and r else a for a, r in zip(order_in, rowed)]
        o2 = _view(out, (rows, L), (L, 1))
        unit = RT.align // math.gcd(L * chunks.item(out), RT.align)
        step = min(chunks.rows(v, 0) for v in [o2, *(a for a, r in zip(flat, rowed) if a is not None and r)])
        step = max(unit, step - step % unit)
        for s in range(0, rows, step):
            e = min(s + step, rows)
            now = [chunks.windowed(chunks.narrow(a, 0, s, e)) if a is not None and r else
                   (chunks.windowed(a) if a is not None else None) for a, r in zip(flat, rowed)]
            co = chunks.windowed(chunks.narrow(o2, 0, s, e), True)
            assert co.st is not None
            bufs = [co.st.buf] + [a.st.buf for a in now if a is not None and a.st is not None]
            RT.dispatch(wgsl, bufs, [e - s, L, eps_word] + [a.offset for a in now if a is not None], _grid(e - s, 1))
        return permute_kernel(out, back)
    bufs = [out.st.buf] + [a.st.buf for a in order_in if a is not None and a.st is not None]
    meta = [rows, L, eps_word] + [a.offset for a in order_in if a is not None]
    grid = _grid(rows, 1)
    RT.dispatch(wgsl, bufs, meta, grid)
    if not copied and all(a is None or a.st is not None for a in order_in):
        if len(_ROW_PLANS) >= 1024:
            _ROW_PLANS.clear()
        _ROW_PLANS[key] = (out.shape, wgsl, [rows, L, eps_word], grid, back, [i for i in idx_in if ins[i] is not None])
    return permute_kernel(out, back)


def softmax_kernel(a: WArray, axis: int) -> WArray:
    return _row_op("softmax", [a], axis)


def log_softmax_kernel(a: WArray, axis: int) -> WArray:
    return _row_op("log_softmax", [a], axis)


def softmax_backward_kernel(y: WArray, g: WArray, axis: int) -> WArray:
    return _row_op("softmax_backward", [y, g], axis)


def log_softmax_backward_kernel(y: WArray, g: WArray, axis: int) -> WArray:
    return _row_op("log_softmax_backward", [y, g], axis)


def _flat_rows(x: WArray, nd: int) -> WArray:
    lead = x.shape[:x.ndim - nd]
    return reshape_kernel(x, (*lead, math.prod(x.shape[x.ndim - nd:])))


def layer_norm_kernel(x: WArray, *wb: WArray, nd: int, eps: float, has_w: bool, has_b: bool) -> WArray:
    it = iter(wb)
    w = next(it) if has_w else None
    b = next(it) if has_b else None
    vecs = [None if v is None else reshape_kernel(v, (v.size,)) for v in (w, b)]
    out = _row_op("layer_norm", [_flat_rows(x, nd)], -1, eps, vecs)
    return reshape_kernel(out, x.shape)


def layer_norm_backward_kernel(x: WArray, g: WArray, *w: WArray, nd: int, eps: float) -> WArray:
    vec = reshape_kernel(w[0], (w[0].size,)) if w else None
    out = _row_op("layer_norm_backward", [_flat_rows(x, nd), _flat_rows(g, nd)], -1, eps, [vec])
    return reshape_kernel(out, x.shape)


def pad_kernel(a: WArray, pads: tuple[tuple[int, int], ...], value: Any) -> WArray:
    """A negative pad crops (a view), a positive one places the input into ``value`` (one dispatch)."""
    crop = tuple(slice(max(-lo, 0), a.shape[i] - max(-hi, 0)) for i, (lo, hi) in enumerate(pads))
    a = basic_index(a, crop)
    shape = tuple(s + max(lo, 0) + max(hi, 0) for s, (lo, hi) in zip(a.shape, pads))
    return _embed(a, shape, [(max(lo, 0), 1, s) for s, (lo, _) in zip(a.shape, pads)], value)


def take_along_kernel(a: WArray, index: WArray, axis: int) -> WArray:
    """NumPy's take_along_axis: index and a broadcast against each other outside ``axis``."""
    shape = list(_broadcast(tuple(1 if d == axis else s for d, s in enumerate(a.shape)), index.shape))
    idx = expand_kernel(index, tuple(shape))
    shape[axis] = a.shape[axis]
    return gather_kernel(expand_kernel(a, tuple(shape)), idx, axis)


def put_along_add_kernel(g: WArray, index: WArray, shape: tuple[int, ...], axis: int) -> WArray:
    # (into the zeros themselves: a copy of them would be one more dispatch)
    return _scatter("scatter_add", full(tuple(shape), 0, g.dtype), expand_kernel(index, g.shape), g, axis, fresh=True)


def norm_kernel(a: WArray, axis: tuple[int, ...], keepdims: bool) -> WArray:
    """The 2-norm: ``sqrt(sum(a * a))`` (real dtypes; complex64 is refused, ``complex_kernels.COMPLEX_OK``)."""
    return unary("sqrt")(reduce("sum")(binary("mul")(a, a), axis, keepdims))


def triangle_kernel(a: WArray, k: int, upper: bool) -> WArray:
    """tril/triu: one kernel, the mask computed from each element's index (``G.triangle_kernel``)."""
    out = RT.empty(a.shape, a.dtype)
    if out.st is None or a.st is None:
        return out
    r, c = a.shape[-2:]
    k = max(min(k, c), -r)  # beyond the matrix every element is kept or dropped alike (and it fits in i32)
    if chunks.large(out) or chunks.large(a):
        # over a binding: an elementwise select against each element's row and column index, read from two small
        # aranges broadcast over the matrix (bound whole in every chunk of the elementwise kernel's runs)
        i32 = np.dtype(np.int32)
        lead = (0,) * (a.ndim - 2)
        row = _view(arange(0, 1, r, i32), a.shape, (*lead, 1, 0), 0)
        col = _view(arange(0, 1, c, i32), a.shape, (*lead, 0, 1), 0)
        keep = "col - row >= k" if upper else "col - row <= k"
        return elementwise(f"select(z, a, {keep})", a.dtype, [("a", a, a.dtype), ("row", row, i32), ("col", col, i32),
                                                            ("k", k, i32), ("z", 0, a.dtype)], a.shape, out=out)
    meta = [out.size, r, c, k & 0xFFFFFFFF, int(upper), a.ndim, *a.shape, a.offset, *a.stride]
    RT.dispatch(G.triangle_kernel(_st(a.dtype)), [out.st.buf, a.st.buf], meta, _grid(out.size))
    return out


# -- convolution: implicit GEMMs (forward, weight gradient, input gradient) ---------------------------------
def _conv_out(size: Sequence[int], ksize: Sequence[int], stride: Sequence[int], padding: Sequence[int],
              dilation: Sequence[int]) -> tuple[int, ...]:
    return tuple((size[i] + 2 * padding[i] - dilation[i] * (ksize[i] - 1) - 1) // stride[i] + 1
                 for i in range(len(ksize)))


def conv_kernel(x: WArray, w: WArray, stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int],
                groups: int) -> WArray:
    """An implicit GEMM: the matmul kernel with its B tile gathered from ``x`` through the window geometry, per
    (sample, group) W_g (Og, Cg K) @ cols (Cg K, prod(out)); the column matrix is never made."""
    ksize = tuple(w.shape[2:])
    out = _conv_out(x.shape[2:], ksize, stride, padding, dilation)
    n, o = x.shape[0], w.shape[0]
    cg, og, kk = x.shape[1] // groups, o // groups, math.prod(ksize)
    shape = (n, o, *out)
    if x.st is None or cg == 0:  # no input elements: every window lies in the padding (or is empty)
        return full(shape, 0, x.dtype)
    if not _rows_fit(shape, x.shape, ksize, stride, dilation, chunks.item(x)) or not chunks.fits(w):
        return _conv_by_channels(shape, x, w, groups, min(dilation[0] * (ksize[0] - 1) + 1, x.shape[2]),
                                 lambda xc, wc: conv_kernel(xc, wc, stride, padding, dilation, 1))
    res = RT.empty(shape, x.dtype)
    wg = reshape_kernel(w if w.dtype == x.dtype else cast(w, x.dtype), (groups, og, cg * kk))
    if res.st is None or wg.st is None:
        return res
    a_geo = [wg.offset, wg.stride[1], wg.stride[2], 0, wg.stride[0]]

    def run(res: WArray, x: WArray, pad: Sequence[int] = padding) -> None:
        geo = [len(ksize), kk, *x.shape[2:], *ksize, *res.shape[2:], *stride, *pad, *dilation, x.stride[1],
               *x.stride[2:]]
        _gemm(res, og, math.prod(res.shape[2:]), cg * kk, (res.shape[0], groups), wg, a_geo, x,
              [x.offset, 0, 0, x.stride[0], cg * x.stride[1]], (_a_mode(og, cg * kk, a_geo), "sn"), conv="fwd",
              conv_meta=geo, ksize=ksize)

    def rows(res: WArray, x: WArray) -> None:  # one sample over a binding: pieces of its output rows
        for r0, r1, xs, pad in _conv_row_pieces(res, x, ksize, stride, padding, dilation):
            piece = chunks.narrow(res, 2, r0, r1)
            if xs is None:  # every window of these rows lies in the padding
                assign(piece, 0)
                continue
            tmp = RT.empty(piece.shape, piece.dtype)
            run(tmp, xs, pad)
            assign(piece, tmp)

    _by_samples(res, x, run, rows)
    return res


def _rows_fit(out: Sequence[int], x: Sequence[int], ksize: Sequence[int], stride: Sequence[int],
              dilation: Sequence[int], size: int, reach: int = 0) -> bool:
    """Whether one result row of a sample (all its channels; the first spatial dim of ``out``) and the rows of
    ``x`` it reads (the forward's window, or ``reach`` rows) each fit a binding (else :func:`_conv_by_channels`)."""
    if len(out) < 3 or out[2] == 0 or x[2] == 0:
        return True
    room = RT.max_binding - RT.align
    per_out = math.prod(out[1:]) // out[2] * size
    per_in = math.prod(x[1:]) // x[2] * size
    return per_out <= room and per_in * (reach or min(dilation[0] * (ksize[0] - 1) + 1, x[2])) <= room


def _channel_blocks(count: int, per_channel: int, most: int) -> list[tuple[int, int]]:
    """``[0, count)`` in blocks of at most ``most`` channels whose rows (``per_channel`` bytes each) fit a binding;
    one channel too wide is refused."""
    room = RT.max_binding - RT.align
    if per_channel > room:
        RT._too_large(per_channel)
    step = max(1, min(room // max(per_channel, 1), most))
    return [(a, min(a + step, count)) for a in range(0, count, step)]


def _conv_by_channels(shape: tuple[int, ...], x: WArray, w: WArray, groups: int, in_rows: int,
                      conv: Callable[[WArray, WArray], WArray], res_axis: int = 0) -> WArray:
    """A convolution or its input gradient (``conv(x, w)``, groups 1; the result's channels are the weight's dim
    ``res_axis``, ``x``'s channels its other one) whose result row or the rows of ``x`` that one result row reads
    (``in_rows`` of them, all channels) pass a binding: each group apart, then its result channels in blocks
    (slices of the weight, copied into their channels) and ``x``'s channels in blocks (the partial results added
    up), each block small enough for the row pieces of one sample, and each block of the weight for a binding."""
    res = RT.empty(shape, x.dtype)
    cx, cr, wo = x.shape[1] // groups, shape[1] // groups, w.shape[0] // groups
    size = chunks.item(x)
    per_w = math.prod(w.shape[2:]) * size  # a (result, x) channel pair's weights
    room = RT.max_binding - RT.align
    for gi in range(groups):
        xg, wg = chunks.narrow(x, 1, gi * cx, (gi + 1) * cx), chunks.narrow(w, 0, gi * wo, (gi + 1) * wo)
        for r0, r1 in _channel_blocks(cr, math.prod(shape[3:]) * size, room // per_w):
            wr = chunks.narrow(wg, res_axis, r0, r1)
            total: WArray | None = None
            for c0, c1 in _channel_blocks(cx, math.prod(x.shape[3:]) * size * in_rows, room // (per_w * (r1 - r0))):
                part = conv(chunks.narrow(xg, 1, c0, c1), contiguous_copy(chunks.narrow(wr, 1 - res_axis, c0, c1)))
                total = part if total is None else binary("add")(total, part)
            assert total is not None
            assign(chunks.narrow(res, 1, gi * cr + r0, gi * cr + r1), total)
    return res


def _conv_row_pieces(out: WArray, x: WArray, ksize: Sequence[int], stride: Sequence[int], padding: Sequence[int],
                     dilation: Sequence[int]) -> list[tuple[int, int, WArray | None, tuple[int, ...]]]:
    """One sample of a convolution (``out`` of its output, ``x`` of its input) larger than a binding, in pieces of
    the output's first spatial dim ``[r0, r1)``: each with a contiguous copy of the input rows its windows read
    (``None`` when they all lie in the padding) and the padding that maps the piece's windows onto that copy (the
    copy starts at input row ``a``: row ``r * stride - padding`` of the whole is row ``(r - r0) * stride - (padding
    + a - r0 * stride)`` of the copy, and ``a`` is 0 or ``r0 * stride - padding``, so that padding is never
    negative; rows past the copy's end are padding or never read). Refused (naming the op) when one output row or
    the input rows of one output row do not fit a binding."""
    H, OH = x.shape[2], out.shape[2]
    s, p, d, k = stride[0], padding[0], dilation[0], ksize[0]
    size = chunks.item(out)
    room = RT.max_binding - RT.align
    per_out = math.prod(out.shape[1:]) // max(OH, 1) * size  # bytes of one output row (all channels)
    per_in = math.prod(x.shape[1:]) // max(H, 1) * size
    step = min(room // max(per_out, 1), (room // max(per_in, 1) - d * (k - 1) - 1) // s + 1)
    if step < 1:
        RT._too_large(max(per_out, per_in * (d * (k - 1) + 1)))
    pieces: list[tuple[int, int, WArray | None, tuple[int, ...]]] = []
    for r0 in range(0, OH, step):
        r1 = min(OH, r0 + step)
        a, b = max(0, r0 * s - p), min(H, (r1 - 1) * s - p + d * (k - 1) + 1)
        xs = contiguous_copy(chunks.narrow(x, 2, a, b)) if b > a else None
        pieces.append((r0, r1, xs, (p + a - r0 * s, *padding[1:])))
    return pieces


def _by_samples(out: WArray, x: WArray, run: Callable[[WArray, WArray], None],
                rows: Callable[[WArray, WArray], None] | None = None) -> None:
    """``run(out, x)``: a convolution whose ``out`` and ``x`` (the input, or the output gradient) have the samples
    as dim 0 and are bound whole, or, when either is larger than one binding, by runs of samples bound as windows
    (one GEMM each; the weight is bound whole). The GEMM writes its output from its binding's start, so a run
    starts at a sample whose byte offset in ``out`` is a multiple of the binding alignment; where a run of that
    many samples would not fit, each run is computed into a temporary and copied. A single sample larger than a
    binding goes to ``rows`` (the kernel's pieces of that sample's first spatial dim), or, without it, is refused
    (``device_error_limit`` naming the primitive)."""
    if not (chunks.large(out) or chunks.large(x)):
        run(out, x)
        return
    n = out.shape[0]
    if rows is not None and not (chunks.fits(chunks.narrow(out, 0, 0, 1)) and chunks.fits(chunks.narrow(x, 0, 0, 1))):
        for s in range(n):
            rows(chunks.narrow(out, 0, s, s + 1), chunks.narrow(x, 0, s, s + 1))
        return
    step = min(chunks.rows(out, 0), chunks.rows(x, 0))
    unit = RT.align // math.gcd(math.prod(out.shape[1:]) * chunks.item(out), RT.align)  # samples per aligned step
    direct = step >= unit
    if direct:
        step -= step % unit
    for s in range(0, n, step):
        e = min(s + step, n)
        xs, os = chunks.windowed(chunks.narrow(x, 0, s, e)), chunks.narrow(out, 0, s, e)
        if direct:
            os = chunks.windowed(os, True)
            assert os.offset == 0
            run(os, xs)
        else:
            tmp = RT.empty(os.shape, os.dtype)
            run(tmp, xs)
            assign(os, tmp)


def conv_input_grad_kernel(g: WArray, w: WArray, input_size: Sequence[int], stride: Sequence[int],
                           padding: Sequence[int], dilation: Sequence[int], groups: int) -> WArray:
    """The adjoint in the input, an implicit GEMM per (sample, group): dX_g (Cg, S) = W_g^T (Cg, Og K) @ G (Og K, S),
    where G's element (o, k; s) is the output gradient at the output position whose window covers input position
    s at kernel offset k (zero where none does). Neither the column matrix nor a col2im pass is made, and no
    atomics are needed (float16 stays on the device; the sum's order is fixed)."""
    ksize = tuple(w.shape[2:])
    n, c = g.shape[0], w.shape[1] * groups
    og, cg, kk = w.shape[0] // groups, w.shape[1], math.prod(ksize)
    shape = (n, c, *input_size)
    if g.st is None or og * kk == 0:  # no output elements (or no weights): nothing flows back
        return full(shape, 0, g.dtype)
    if w.dtype != g.dtype:
        w = cast(w, g.dtype)
    if not w.contiguous:  # the shader reads a weight's (channel, kernel position) block as one run
        w = contiguous_copy(w)
    reach = (1 + dilation[0] * (ksize[0] - 1)) // stride[0] + 2  # gradient rows whose windows reach one dx row
    if not chunks.fits(w) or not _rows_fit(shape, g.shape, ksize, (1,), (1,), chunks.item(g), reach):
        # one dx row, or the gradient rows that reach it (all channels), or the weight, over a binding
        return _conv_by_channels(shape, g, w, groups, reach, lambda gc, wc: conv_input_grad_kernel(
            gc, wc, input_size, stride, padding, dilation, 1), res_axis=1)
    dx = RT.empty(shape, g.dtype)
    if dx.st is None or w.st is None:
        return dx
    nd = len(ksize)

    def run(dx: WArray, g: WArray, pad: Sequence[int] = padding) -> None:
        geo = [nd, kk, *dx.shape[2:], *ksize, *g.shape[2:], *stride, *pad, *dilation, 0, *([0] * nd),
               g.stride[1], *g.stride[2:], w.stride[0]]
        _gemm(dx, cg, math.prod(dx.shape[2:]), og * kk, (dx.shape[0], groups), w,
              [w.offset, 0, 0, 0, og * w.stride[0]], g, [g.offset, 0, 0, g.stride[0], og * g.stride[1]],
              ("sk", "sn"), conv="igrad", conv_meta=geo, ksize=ksize, cstride=tuple(stride))

    def rows(dx: WArray, g: WArray) -> None:
        """One sample over a binding: pieces of dx's first spatial dim ``[a, b)``, each from a contiguous copy of
        the output gradient rows ``[r0, r1)`` whose windows reach it, with the padding that maps them onto the
        piece (``padding + a - r0 * stride``: r0 is lowered until it is not negative; a row more is harmless)."""
        H, OH = dx.shape[2], g.shape[2]
        s, p, d, k = stride[0], padding[0], dilation[0], ksize[0]
        size, room = chunks.item(dx), RT.max_binding - RT.align
        per_in = math.prod(dx.shape[1:]) // max(H, 1) * size
        per_out = math.prod(g.shape[1:]) // max(OH, 1) * size
        q = room // max(per_in, 1)
        while q >= 1 and ((q + d * (k - 1)) // s + 2) * per_out > room:
            q //= 2
        if q < 1:
            RT._too_large(max(per_in, per_out * ((d * (k - 1)) // s + 2)))
        for a in range(0, H, q):
            b = min(H, a + q)
            piece = chunks.narrow(dx, 2, a, b)
            r0 = max(0, min(-(-(a + p - d * (k - 1)) // s), (a + p) // s))
            r1 = min(OH, (b - 1 + p) // s + 1)
            if r1 <= r0:  # no window reaches these rows
                assign(piece, 0)
                continue
            tmp = RT.empty(piece.shape, piece.dtype)
            run(tmp, contiguous_copy(chunks.narrow(g, 2, r0, r1)), (p + a - r0 * s, *padding[1:]))
            assign(piece, tmp)

    _by_samples(dx, g, run, rows)
    return dx


def conv_weight_grad_kernel(x: WArray, g: WArray, weight_size: Sequence[int], stride: Sequence[int],
                            padding: Sequence[int], dilation: Sequence[int], groups: int) -> WArray:
    """An implicit GEMM per group, summing over samples and output positions in its reduction:
    dW_g (Og, Cg K) = g_g (Og, N M) @ cols (N M, Cg K), both read in place (no column matrix, no sum pass)."""
    n, m = g.shape[0], math.prod(g.shape[2:])
    if x.st is None or g.st is None or n * m == 0:  # an empty sum
        return full(tuple(weight_size), 0, g.dtype)
    if x.dtype != g.dtype:
        x = cast(x, g.dtype)
    gc = g if g.contiguous else contiguous_copy(g)
    if gc.st is None:
        return full(tuple(weight_size), 0, g.dtype)
    wide = math.prod(weight_size) * chunks.item(gc) > RT.max_binding - RT.align  # the result over a binding
    if not (chunks.large(x) or chunks.large(gc) or wide):
        return _conv_wgrad(x, gc, weight_size, stride, padding, dilation, groups)
    ksize = tuple(weight_size[2:])
    if wide or not _rows_fit(gc.shape, x.shape, ksize, stride, dilation, chunks.item(x)):
        # one output row or the input rows it reads (all channels), or the weight, over a binding: the weight's
        # blocks of output and input channels apart (per group), each from those channels of the gradient and input
        res = RT.empty(tuple(weight_size), g.dtype)
        og, cg = weight_size[0] // groups, weight_size[1]
        rows_in = min(dilation[0] * (ksize[0] - 1) + 1, x.shape[2])
        room, per_w = RT.max_binding - RT.align, math.prod(ksize) * chunks.item(gc)  # (the weight's blocks fit too)
        for grp in range(groups):
            for o0, o1 in _channel_blocks(og, math.prod(gc.shape[3:]) * chunks.item(gc), room // per_w):
                for c0, c1 in _channel_blocks(cg, math.prod(x.shape[3:]) * chunks.item(x) * rows_in,
                                              room // (per_w * (o1 - o0))):
                    part = conv_weight_grad_kernel(chunks.narrow(x, 1, grp * cg + c0, grp * cg + c1),
                                                   chunks.narrow(gc, 1, grp * og + o0, grp * og + o1),
                                                   (o1 - o0, c1 - c0, *ksize), stride, padding, dilation, 1)
                    assign(chunks.narrow(chunks.narrow(res, 0, grp * og + o0, grp * og + o1), 1, c0, c1), part)
        return res
    # larger than one binding: the sum over the samples by runs of samples bound as windows, their sums added
    # (float16's partial sums are rounded once per run); a sample larger than a binding by pieces of its output rows
    # (the forward's), each with a copy of its input rows and output gradient rows
    if not (chunks.fits(chunks.narrow(x, 0, 0, 1)) and chunks.fits(chunks.narrow(gc, 0, 0, 1))):
        acc: WArray | None = None
        for i in range(n):
            xi, gi = chunks.narrow(x, 0, i, i + 1), chunks.narrow(gc, 0, i, i + 1)
            for r0, r1, xs, pad in _conv_row_pieces(gi, xi, ksize, stride, padding, dilation):
                if xs is None:
                    continue
                part = _conv_wgrad(xs, contiguous_copy(chunks.narrow(gi, 2, r0, r1)), weight_size, stride, pad,
                                   dilation, groups)
                acc = part if acc is None else binary("add")(acc, part)
        return acc if acc is not None else full(tuple(weight_size), 0, g.dtype)
    step = min(chunks.rows(x, 0), chunks.rows(gc, 0))
    total: WArray | None = None
    for s in range(0, n, step):
        e = min(s + step, n)
        part = _conv_wgrad(chunks.windowed(chunks.narrow(x, 0, s, e)), chunks.windowed(chunks.narrow(gc, 0, s, e)),
                           weight_size, stride, padding, dilation, groups)
        total = part if total is None else binary("add")(total, part)
    assert total is not None
    return total


def _conv_wgrad(x: WArray, gc: WArray, weight_size: Sequence[int], stride: Sequence[int], padding: Sequence[int],
                dilation: Sequence[int], groups: int) -> WArray:
    """The weight gradient's GEMM over the samples of ``x`` and of the contiguous output gradient ``gc``."""
    ksize = tuple(weight_size[2:])
    out = tuple(gc.shape[2:])
    n, o = gc.shape[0], gc.shape[1]
    cg, og, kk, m = x.shape[1] // groups, o // groups, math.prod(ksize), math.prod(out)
    res = RT.empty(tuple(weight_size), gc.dtype)
    if res.st is None:
        return res
    geo = [len(ksize), kk, *x.shape[2:], *ksize, *out, *stride, *padding, *dilation, x.stride[1], *x.stride[2:],
           m, o * m, x.stride[0]]
    _gemm(res, og, cg * kk, n * m, (groups,), gc, [gc.offset, 0, 0, og * m], x, [x.offset, 0, 0, cg * x.stride[1]],
          ("sk", "sk"), conv="wgrad", conv_meta=geo, ksize=ksize)
    return res


# -- searching ------------------------------------------------------------------------------------------
def searchsorted_kernel(seq: WArray, values: WArray, right: bool, sorter: WArray | None) -> WArray:
    """Insertion points of ``values`` in the last dim of ``seq`` (1-D: one sequence for all values)."""
    if sorter is not None:
        seq = take_along_kernel(seq, sorter, seq.ndim - 1)
    if values.dtype != seq.dtype:
        values = cast(values, seq.dtype)
    out = RT.empty(values.shape, np.dtype(np.int64))
    if out.st is None:
        return out
    s = seq if seq.contiguous else contiguous_copy(seq)
    v = values if values.contiguous else contiguous_copy(values)
    L = s.shape[-1] if s.ndim else 1
    if s.st is None or L == 0:
        return full(values.shape, 0, np.dtype(np.int64))
    per_row = 0 if s.ndim <= 1 else values.shape[-1]
    s = _view(s, (s.size,), (1,))  # bind at offset: the kernel indexes from the start of the buffer
    assert s.st is not None and v.st is not None
    if s.offset or v.offset:
        s, v = contiguous_copy(s) if s.offset else s, contiguous_copy(v) if v.offset else v
    assert s.st is not None and v.st is not None
    RT.dispatch(G.searchsorted_kernel(_st(s.dtype), right), [out.st.buf, s.st.buf, v.st.buf],
                [values.size, L, per_row], _grid(values.size))
    return out


# -- random numbers ---------------------------------------------------------------------------------------
def random(dist: str, shape: tuple[int, ...], dtype: np.dtype[Any], seed: int, offset: int, a: float = 0.0,
           b: float = 0.0, p: WArray | None = None, op: str = "bernoulli") -> WArray:
    """A fresh contiguous tensor drawn by ``codegen.random_kernel`` from (seed, offset, element index); nothing
    is uploaded. ``p``: a probability tensor of ``shape`` (bernoulli), range-checked on the device."""
    out = RT.empty(shape, dtype)
    if out.st is None:
        return out
    if dist in G.INT_RANDOM:  # [a, b): the low bound and the range as integer words; int64 must stay in int32
        word_dt = dtype if _kind(dtype) == "i" else np.dtype(np.int64)
        _word(int(b) - 1, word_dt)  # raises for a bound outside int32, as an upload of such a value
        words = [_word(int(a), word_dt), (int(b) - int(a)) & 0xFFFFFFFF]
    else:
        words = [_word(a, np.dtype(np.float32)), _word(b, np.dtype(np.float32))]
    meta = [out.size, seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF, offset & 0xFFFFFFFF, (offset >> 32) & 0xFFFFFFFF,
            *words]
    bufs = [out.st.buf]
    if p is not None:
        if _kind(p.dtype) != "f":  # a probability tensor is floating (the op checks); an int self's is cast
            p = cast(p, np.dtype(np.float32))
        if p.st is None:
            return out
        meta += [p.ndim, *p.shape, p.offset, *_bstrides(p, shape)]
        meta.append(RT.add_check("argument_error_invalid", op,
                                 problem="expected every probability p to satisfy 0 <= p <= 1"))
        bufs += [p.st.buf, RT.flag]
    if RT.recorder is not None:  # (a captured graph draws fresh numbers at each replay)
        RT.recorder.random(1)
    RT.dispatch(G.random_kernel(dist, _st(dtype), "" if p is None else _st(p.dtype)), bufs, meta, _grid(out.size))
    return out


# -- registration --------------------------------------------------------------------------------------
_C64 = np.dtype(np.complex64)
_I64 = np.dtype(np.int64)


def _named(name: str, kernel: Callable[..., Any], refuse_complex: bool = False,
           complex_kernel: Callable[..., Any] | None = None, shadow: Callable[..., None] | None = None
           ) -> Callable[..., Any]:
    """The kernel, with the runtime told which primitive runs (its limit and device errors name it); with
    ``refuse_complex``, complex64 arguments are refused with a coded error naming the primitive (a shader written
    for real numbers would not compile, or would treat (re, im) as two unrelated numbers), or, with
    ``complex_kernel``, given to that instead (matmul's and a basic index gradient's complex paths); for the
    primitives of :data:`PLANNED`, through their launch plans; with ``shadow``, an int64 result is checked by
    ``shadow(run, out, args, params)`` (``int64_checks``). All in one frame: every WebGPU kernel call passes through
    it, and a frame per wrapper cost a GPT step's matmuls and sums two more frames each."""
    plans = launch_plans.table(name) if name in PLANNED else None
    complex_args = refuse_complex or complex_kernel is not None
    # a unary kernel of the product just recorded joins its dispatch (before any plan: whether it can depends on
    # the held dispatch, which no signature holds)
    join = _gemm_activation(name) if name in G.UNARY else None

    def run(*args: Any, **params: Any) -> Any:
        if complex_args:
            for a in args:
                if type(a) is WArray and a.dtype == _C64:
                    if complex_kernel is not None:
                        return complex_kernel(*args, **params)
                    _no_kernel(name, _C64)
        outer = RT.op
        RT.op = name
        try:
            if join is not None and not params and (out := join(*args)) is not None:
                return out
            out = kernel(*args, **params) if plans is None else launch_plans.call(plans, kernel, args, params)
            if shadow is not None and type(out) is WArray and out.dtype == _I64 and out.size:
                shadow(run, out, args, params)
            return out
        finally:
            RT.op = outer

    run.__name__ = run.__qualname__ = getattr(kernel, "__name__", name)
    # what rewrap makes it again from (complex_kernels and int64_checks add to it: one frame per call, not three)
    run.named = (name, kernel, refuse_complex, complex_kernel, shadow)  # type: ignore[attr-defined]
    return run


def rewrap(k: Callable[..., Any], **changes: Any) -> Callable[..., Any]:
    """The :func:`_named` wrapper ``k`` (``is_named``) made again with ``changes`` to its arguments
    (``refuse_complex``, ``complex_kernel``, ``shadow``)."""
    name, kernel, refuse_complex, complex_kernel, shadow = k.named  # type: ignore[attr-defined]
    args = {"refuse_complex": refuse_complex, "complex_kernel": complex_kernel, "shadow": shadow, **changes}
    return _named(name, kernel, **args)


def is_named(k: Callable[..., Any]) -> bool:
    return hasattr(k, "named")


# Kernels replayed from launch plans (``launch_plans``): each is a function of its operands' layouts, its parameters
# and its number arguments alone (it reads no tensor's values on the host, keeps no buffer of its own between calls,
# draws no random numbers). The training steps' attention, layer norm, cross entropy, embedding gradient, convolution
# and pooling kernels (their Python -- shapes, views, temporaries, calls into the elementwise and row kernels -- costs
# 50-200 us per call on lavapipe's host, a replay about 10), the kernels with plans of their own (a replay skips the
# wrappers, the key of their plan and the output's allocation as well), and the elementwise primitives (a float
# operand, such as a learning rate, is not planned: launch_plans.signature).
PLANNED = frozenset({
    "scaled_dot_product_attention", "attention_backward", "layer_norm", "layer_norm_backward",
    "layer_norm_weight_grad", "cross_entropy_loss", "cross_entropy_backward", "scatter_add", "convolution",
    "convolution_input_grad", "convolution_weight_grad", "take_along_dim", "put_along_dim_add",
    "matmul", "matmul_bias", "sum", "index_backward", "gather", "argmax",
    *G.UNARY, *G.BINARY, *G.PREDICATE, *G.PARAMETRIZED,
})

# Kernels that only make new strides over the same buffer: they record nothing and raise no runtime error, so they
# skip _named's frame (a GPT step permutes, reshapes and expands 130 times); reshape names itself where it copies
UNNAMED = frozenset({"permute", "expand", "view", "reshape"})


def register(more: dict[str, Callable[..., Any]] | None = None) -> list[str]:
    """Install the kernels (with ``more``: those of the other kernel modules, which build on this one); returns
    the primitives left without one (they raise a clear error)."""
    table: dict[str, Callable[..., Any]] = {
        **(more or {}),
        **{name: unary(name) for name in G.UNARY if name in PRIMS and name != "round"},
        **{name: binary(name) for name in G.BINARY if name in PRIMS},
        **{name: predicate(name) for name in G.PREDICATE if name in PRIMS},
        **{name: parametrized(name) for name in G.PARAMETRIZED if name in PRIMS},
        **{name: loss(name)[0] for name in G.LOSSES if name in PRIMS},
        **{f"{name}_backward": loss(name)[1] for name in G.LOSSES if f"{name}_backward" in PRIMS},
        **{op: scan(op) for op in G.SCAN if op in PRIMS},
        "flip": flip_kernel,
        "argsort": argsort_kernel,
        "roll": roll_kernel,
        "index_add": index_add_kernel,
        "index_copy": index_copy_kernel,
        "round": round_kernel,
        "softmax": softmax_kernel,
        "log_softmax": log_softmax_kernel,
        "softmax_backward": softmax_backward_kernel,
        "log_softmax_backward": log_softmax_backward_kernel,
        "layer_norm": layer_norm_kernel,
        "layer_norm_backward": layer_norm_backward_kernel,
        "constant_pad_nd": pad_kernel,
        "take_along_dim": take_along_kernel,
        "put_along_dim_add": put_along_add_kernel,
        "where": where_kernel,
        "to_copy": cast_kernel,
        "clone": contiguous_copy,
        "reshape": reshape_kernel,
        "view": view_kernel,
        "permute": permute_kernel,
        "expand": expand_kernel,
        "unfold": unfold_kernel,
        "unfold_backward": unfold_backward_kernel,
        "diagonal": diagonal_kernel,
        "diagonal_backward": diagonal_backward_kernel,
        "index": get_kernel, "select": get_kernel, "slice": get_kernel, "index_select": get_kernel,
        "split_with_sizes": views_kernel, "unbind": views_kernel,
        # a gradient's formal input and its tie at the forward's output are identities (NOTE [formal input of a
        # gradient] in ops/_common.py): the first operand itself, no dispatch, as the CPU's
        "formal_input": lambda g, x: g, "gradient_tie": lambda out, x: out,
        "index_backward": index_backward_kernel,
        "index_put": index_put_kernel,
        "gather": gather_kernel,
        "scatter": scatter_kernel,
        "scatter_add": scatter_add_kernel,
        "cat": cat_kernel,
        "matmul": matmul_kernel,
        "matmul_bias": matmul_bias_kernel,
        "norm": norm_kernel,
        "convolution": conv_kernel,
        "convolution_input_grad": conv_input_grad_kernel,
        "convolution_weight_grad": conv_weight_grad_kernel,
        "triangle": triangle_kernel,
        "searchsorted": searchsorted_kernel,
        **{op: reduce(op) for op in ("sum", "prod", "amax", "amin", "all", "any", "argmax", "argmin")},
        **fused_attention.KERNELS,
        **fused_loss.KERNELS,
        **layer_norm_grads.KERNELS,
    }
    PRIM_CPU.update({name: p.kernels["cpu"] for name, p in PRIMS.items() if "cpu" in p.kernels})
    for name, k in table.items():
        if name in PRIMS:
            PRIMS[name].kernels["webgpu"] = k if name in UNNAMED else _named(name, k)
    return sorted(n for n, p in PRIMS.items() if "webgpu" not in p.kernels)



# -- fused optimizer steps -------------------------------------------------------------------------------
STEP_SUBMIT_MIN = 32  # the fewest recorded dispatches submitted early when an optimizer step starts


class _StepGroup:
    """Parameter updates of one kind held back by :func:`fused_step` and recorded as one dispatch (an optimizer's
    step over a parameter group is one kernel rather than one per parameter). The runtime records the group before
    any other dispatch and at every submit (``RT.deferred``), so nothing can read a parameter before its update."""

    def __init__(self) -> None:
        self.key: tuple[str, tuple[str, ...]] | None = None
        self.items: list[tuple[tuple[WArray, ...], list[int]]] = []
        self.bufs: set[int] = set()
        self.recorded_at = -1  # RT.n_dispatch after the last group was recorded
        # while a StepPlan is made (:func:`step_plan`): the updates held, as ``add`` got them
        self.planned: list[tuple[tuple[str, tuple[str, ...]], tuple[WArray, ...], list[int], set[int]]] | None = None

    def starting(self) -> None:
        """An optimizer step's first update is coming: after other work (the end of a backward pass), the forward
        and backward are submitted now, so the device runs them while the host records the updates and the next
        step's forward (the earlier submit that a sync would otherwise wait for). Not for a short batch (a small
        model's step, the state a first step makes between its updates): a submit costs the host 0.4-0.6 ms on
        lavapipe, 3-4 dispatches' worth, which a short batch does not win back."""
        if RT.n_dispatch != self.recorded_at and RT.batch_count >= STEP_SUBMIT_MIN and RT.submit_at_step:
            RT.flush()

    def add(self, key: tuple[str, tuple[str, ...]], arrays: tuple[WArray, ...], scalars: list[int],
            ids: set[int]) -> None:
        """Hold the update of ``arrays`` (whose storages' ids are ``ids``) back, to be recorded with its group."""
        if not self.items:
            self.starting()
        if self.planned is not None:
            self.planned.append((key, arrays, scalars, ids))
        if self.items and (key != self.key or ids & self.bufs or _full(len(self.items), len(arrays))):
            RT.record_deferred()  # a buffer bound twice in one dispatch cannot be written: a new group
        if not self.items:
            self.key = key
        self.items.append((arrays, scalars))
        self.bufs |= ids
        RT.deferred = self.record

    def record(self) -> None:
        items, key = self.items, self.key
        self.items, self.bufs, self.key = [], set(), None
        if not items or key is None:
            return
        for wgsl, bufs, meta, grid, _ in _launches(key, items):
            RT.dispatch(wgsl, bufs, meta, grid)
        self.recorded_at = RT.n_dispatch


def _full(n: int, narrays: int) -> bool:
    """Whether ``n`` held updates of ``narrays`` arrays each fill a dispatch: the adapter's storage buffers per shader
    stage, less the parameter block, over the buffers of one parameter (at most 16 parameters)."""
    return n >= max(1, min(16, (RT.max_storage_buffers - 1) // narrays))


def _launches(key: tuple[str, tuple[str, ...]], items: list[tuple[tuple[WArray, ...], list[int]]]
              ) -> list[tuple[str, list[Any], list[int], tuple[int, int, int], list[int]]]:
    """The dispatches of one group of updates (shader, buffers, parameter words, grid, where each item's scalars are
    in the words)."""
    meta = [0]
    bufs: list[Any] = []
    slots = []  # where each item's scalars are (a StepPlan rewrites them)
    total = 0
    for arrays, scalars in items:  # (attrgetters, not comprehensions: no frame per parameter)
        total += math.prod(arrays[0].shape)
        meta.append(total)
        meta += map(_OFFSET, arrays)
        slots.append(len(meta))
        meta += scalars
        bufs += map(_BUF, arrays)  # (fused_step took arrays with storages only)
    meta[0] = total
    launches: list[tuple[str, list[Any], list[int], tuple[int, int, int], list[int]]] = []
    if "capturable" in key[1]:  # the counts (each item's last array) first, as torch's step += 1
        steps = [arrays[-1] for arrays, _ in items]
        launches.append((G.step_increment_kernel(len(steps)), [a.st.buf for a in steps if a.st is not None],
                         [a.offset for a in steps], (1, 1, 1), []))
    launches.append((G.optimizer_kernel(key[0], key[1], len(items)), bufs, meta, _grid(total), slots))
    return launches


class StepPlan:
    """One parameter group's fused step as it was recorded (:func:`step_plan`): its launches, replayed with the
    scalar words of a later step's hyperparameters. What it binds is the caller's to vouch for: the same buffers at
    the same offsets and layouts (``optim.Optimizer``'s plan checks them before each replay)."""

    def __init__(self, kind: str, nstate: int, flags: tuple[str, ...],
                 launches: list[tuple[str, list[Any], list[int], tuple[int, int, int], list[int]]]) -> None:
        self.kind, self.nstate, self.flags, self.launches = kind, nstate, flags, launches
        self.count = sum(len(slots) for *_, slots in launches)  # the parameters it updates

    def words(self, hyper: dict[str, Any]) -> list[int] | None:
        """The scalar words of ``hyper``; None where they need another kernel (its flags changed: a weight decay
        set to 0, say)."""
        key = (self.kind, self.nstate, *hyper.items())
        got = _STEP_WORDS.get(key) or _step_words(self.kind, self.nstate, hyper)
        return got[1] if got[0] == self.flags else None

    def run(self, words: list[int]) -> None:
        """Record the step's launches with ``words`` in each item's scalars (after the updates held back)."""
        _STEPS.starting()
        RT.record_deferred()
        n = len(words)
        for wgsl, bufs, meta, grid, slots in self.launches:
            if slots:
                meta = meta.copy()
                for at in slots:
                    meta[at:at + n] = words
            RT.dispatch(wgsl, bufs, meta, grid)
        _STEPS.recorded_at = RT.n_dispatch


def step_plan(update: Callable[[], Any]) -> StepPlan | None:
    """Run ``update`` (one parameter group's step) with its fused updates recorded apart from the work before and
    after them, and return them as a :class:`StepPlan`, or None where they were no single kind of fused update
    (some parameter took the optimizer's ops, or none was updated)."""
    RT.record_deferred()
    planned: list[tuple[tuple[str, tuple[str, ...]], tuple[WArray, ...], list[int], set[int]]] = []
    _STEPS.planned = planned
    try:
        update()
        RT.record_deferred()
    finally:
        _STEPS.planned = None
    kinds = {(key, len(arrays) - 2) for key, arrays, _, _ in planned}
    if len(kinds) != 1:
        return None
    # the updates grouped into dispatches as ``_StepGroup.add`` groups an uninterrupted run of them (a first step
    # records its updates between the fills of the state it makes: in more, smaller dispatches)
    groups: list[list[tuple[tuple[WArray, ...], list[int]]]] = []
    bufs: set[int] = set()
    for _, arrays, scalars, ids in planned:
        if not groups or ids & bufs or _full(len(groups[-1]), len(arrays)):
            groups.append([])
            bufs = set()
        groups[-1].append((arrays, scalars))
        bufs |= ids
    ((kind, flags), nstate), = kinds
    return StepPlan(kind, nstate, flags, [launch for items in groups for launch in _launches((kind, flags), items)])


_STEPS = _StepGroup()
_OFFSET = attrgetter("offset")
_BUF = attrgetter("st.buf")
_ST = attrgetter("st")
_BINDS = attrgetter("st.buf", "offset", "stride", "shape", "dtype")


def step_signature(arrays: Sequence[WArray]) -> tuple[Any, ...] | None:
    """What a :class:`StepPlan` binds of ``arrays`` (the buffers, offsets and layouts of a group's parameters,
    gradients and state): the plan of one signature stands for a later step of the same one. None where an array
    has no buffer (an empty one)."""
    try:
        return tuple(map(_BINDS, arrays))
    except AttributeError:
        return None


_F32 = np.dtype(np.float32)
# (kind, hyperparameters) -> (flags, scalar words): the parameters of a group share them within a step
_STEP_WORDS: dict[tuple[Any, ...], tuple[tuple[str, ...], list[int]]] = {}


def fused_step(kind: str, p: WArray, g: WArray, state: Sequence[WArray], hyper: dict[str, float]) -> bool:
    """The update of a float32 parameter and its state in place (``kind`` 'adam' or 'sgd'), recorded with the
    updates of the parameters after it as one dispatch (:class:`_StepGroup`); False (and nothing recorded) when
    the arrays are not contiguous float32 arrays of one shape, for the caller's path."""
    arrays = (p, g, *state)
    shape = p.shape
    capturable = bool(hyper.get("capturable"))  # Adam's: the last state array is its step count (0-d, float32)
    if capturable and (kind != "adam" or state[-1].dtype != _F32 or state[-1].shape != () or state[-1].st is None):
        return False
    # (the contiguity test reads the row-major strides once for all: WArray.contiguous is a frame per array)
    want = contiguous_strides(shape)
    for a in arrays[:-1] if capturable else arrays:
        if a.dtype != _F32 or a.shape != shape or a.st is None or (a.stride != want and not a.contiguous):
            return False
    ids = set(map(id, map(_ST, arrays)))
    if len(ids) != len(arrays):  # one buffer bound twice, written: not allowed
        return False
    if kind not in ("adam", "sgd"):
        return False
    key = (kind, len(state), *hyper.items())
    got = _STEP_WORDS.get(key)
    if got is None:
        got = _step_words(kind, len(state), hyper)
        if all(type(v) in (float, int, bool) for v in hyper.values()):  # (a tensor's value may change in place)
            if len(_STEP_WORDS) >= 64:  # a new step count each step: keep only the recent ones
                _STEP_WORDS.clear()
            _STEP_WORDS[key] = got
    if 0 in shape:
        return True
    _STEPS.add((kind, got[0]), arrays, got[1], ids)
    return True


def _step_words(kind: str, nstate: int, h: dict[str, float]) -> tuple[tuple[str, ...], list[int]]:
    """The kernel's flags and its scalars' float32 words for one step's hyperparameters."""
    if kind == "adam":
        capturable = bool(h.get("capturable"))  # (then the state's last array is the step count)
        flags = tuple(f for f, on in (("decoupled", h["decoupled"] and h["weight_decay"] != 0),
                                      ("wd", h["weight_decay"] != 0), ("amsgrad", nstate - capturable == 3),
                                      ("capturable", capturable)) if on)
        if capturable:  # the bias corrections are the kernel's, from the count on the device
            scalars = [1 - h["lr"] * h["weight_decay"], h["weight_decay"], 1 - h["beta1"], h["beta2"], 1 - h["beta2"],
                       h["beta1"], h["eps"], h["lr"]]
        else:
            bc1 = 1 - h["beta1"] ** h["step"]
            scalars = [1 - h["lr"] * h["weight_decay"], h["weight_decay"], 1 - h["beta1"], h["beta2"],
                       1 - h["beta2"], math.sqrt(1 - h["beta2"] ** h["step"]), h["eps"], -(h["lr"] / bc1)]
    else:
        flags = tuple(f for f, on in (("wd", h["weight_decay"] != 0), ("momentum", bool(nstate)),
                                      ("nesterov", bool(nstate) and bool(h["nesterov"]))) if on)
        scalars = [h["weight_decay"], h["momentum"], 1 - h["dampening"], -h["lr"], 0.0, 0.0, 0.0, 0.0]
    return flags, [f32_bits(v) for v in scalars]
