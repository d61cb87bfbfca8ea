"""The intra-op thread pool of the NumPy backend: large elementwise, reduction and row-wise kernels split into
contiguous chunks, one per thread, as torch's ``at::parallel_for`` does.

NumPy's ufunc loops and reductions release the GIL, so chunks run on every core; NumPy itself runs each call on
one. Only kernels above a size threshold are split (a chunk handed to a thread costs some tens of microseconds),
and never from inside a chunk (a kernel called by a chunk runs on its own thread, so the pool cannot deadlock on
itself). The number of threads is ``st.set_num_threads``/``st.get_num_threads``; by default, as torch, the
``OMP_NUM_THREADS`` (or ``MKL_NUM_THREADS``) environment variable, else the number of physical cores this process
may run on (torch counts the machine's; the difference shows only where the process is pinned to fewer). BLAS (matmul)
keeps its own threads: NumPy's OpenBLAS reads ``OPENBLAS_NUM_THREADS``.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

R = TypeVar("R")

# Elements per chunk below which splitting does not pay: a memory-bound float32 ufunc streams 2^17 elements in
# about 30 us on one core, about what handing a chunk to a worker and waiting for it costs (measured on the
# development machine; see docs/performance.md).
GRAIN = 1 << 17


def _physical_cores() -> int:
    """Physical cores among the CPUs this process may run on (torch's default); the CPU count where Linux's
    topology files are not there."""
    try:
        cpus = os.sched_getaffinity(0)
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
    cores = set()
    for cpu in cpus:
        base = f"/sys/devices/system/cpu/cpu{cpu}/topology/"
        try:
            with open(base + "physical_package_id") as f1, open(base + "core_id") as f2:
                cores.add((f1.read().strip(), f2.read().strip()))
        except OSError:
            return len(cpus) or 1
    return len(cores) or 1


def default_num_threads() -> int:
    """torch's default: ``OMP_NUM_THREADS``, else ``MKL_NUM_THREADS``, else the physical cores."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env = os.environ.get(var, "").strip()
        if env.isdigit() and int(env) > 0:
            return int(env)
    return _physical_cores()


class _State:
    threads = 0  # 0 until first asked: reading the topology costs a few file reads, not worth it at import
    pool: ThreadPoolExecutor | None = None


_STATE = _State()
_LOCAL = threading.local()
_LOCK = threading.Lock()


def num_threads() -> int:
    if not _STATE.threads:
        _STATE.threads = default_num_threads()
    return _STATE.threads


def set_num_threads(n: int) -> None:
    """The number of threads a kernel is split over (the caller's included); the caller checks ``n > 0``."""
    with _LOCK:
        if n != _STATE.threads and _STATE.pool is not None:
            _STATE.pool.shutdown(wait=False)
            _STATE.pool = None
        _STATE.threads = n


def _pool() -> ThreadPoolExecutor:
    pool = _STATE.pool
    if pool is None:
        from concurrent.futures import ThreadPoolExecutor  # on the first large kernel: the import costs 5-10 ms

        with _LOCK:
            if _STATE.pool is None:
                _STATE.pool = ThreadPoolExecutor(max(1, num_threads() - 1), thread_name_prefix="shapetorch-intraop")
            pool = _STATE.pool
    return pool


def _forget_pool() -> None:
    """A forked child has the pool object but not its threads: it makes a new one on first use."""
    _STATE.pool = None


os.register_at_fork(after_in_child=_forget_pool)


def parts(n: int, grain: int = GRAIN) -> int:
    """Into how many chunks ``n`` units of work are split: 1 (run inline) below two grains, with one thread, or
    inside a chunk."""
    if n < 2 * grain:
        return 1
    t = _STATE.threads or num_threads()
    if t <= 1 or getattr(_LOCAL, "busy", False):
        return 1
    return min(t, n // grain)


def _chunk(fn: Callable[[int, int], R], lo: int, hi: int) -> R:
    _LOCAL.busy = True
    try:
        return fn(lo, hi)
    finally:
        _LOCAL.busy = False


def map_ranges(fn: Callable[[int, int], R], n: int, k: int) -> list[R]:
    """``[fn(lo, hi) for each of k contiguous ranges covering range(n)]``, the ranges run in parallel (the first
    on the calling thread); an exception of any chunk is raised after every chunk has finished."""
    if k <= 1:
        return [fn(0, n)]
    bounds = [n * i // k for i in range(k + 1)]
    pool = _pool()
    futures: list[Future[R]] = [pool.submit(_chunk, fn, bounds[i], bounds[i + 1]) for i in range(1, k)]
    try:
        first = _chunk(fn, bounds[0], bounds[1])
    finally:
        for f in futures:
            f.exception()  # wait: the chunks write into buffers the caller owns
    return [first, *(f.result() for f in futures)]


# -- kernels ------------------------------------------------------------------------------------------------------

def _splittable(arrays: Sequence[Any]) -> bool:
    """Operands whose chunks along the output's first axis are plain slices: C-contiguous ndarrays (so NumPy's
    own result would be C-contiguous too, and ours has its layout) of NumPy's own numeric dtypes (object arrays hold
    the GIL; ml_dtypes' bfloat16 is left to NumPy)."""
    for a in arrays:
        if type(a) is not np.ndarray or not a.flags.c_contiguous or a.dtype.kind not in "biufc":
            return False
    return True


def threaded(f: Any) -> Any:
    """A ufunc as a kernel that splits over the threads when its result is large (see :func:`ufunc`); any other
    kernel as it is. The size test is all a small call pays."""
    if not isinstance(f, np.ufunc) or f.nout != 1:
        return f
    if f.nin == 1:
        def unary(a: Any) -> Any:
            return ufunc(f, a) if type(a) is np.ndarray and a.size >= _SPLIT else f(a)
        return unary

    def binary(a: Any, b: Any) -> Any:
        if (type(a) is np.ndarray and a.size >= _SPLIT) or (type(b) is np.ndarray and b.size >= _SPLIT):
            return ufunc(f, a, b)
        return f(a, b)
    return binary


_SPLIT = 2 * GRAIN


def ufunc(f: np.ufunc, *operands: Any) -> Any:
    """``f(*operands)``, split over the threads when the result is large; each element is NumPy's exactly.
    NumPy scalars (a tensor times a Python number) go whole to every chunk."""
    arrays = [a for a in operands if not isinstance(a, np.generic)]
    if not arrays or not _splittable(arrays):
        return f(*operands)
    a0 = arrays[0]
    same = all(a.shape == a0.shape for a in arrays)
    shape = a0.shape if same else np.broadcast_shapes(*(a.shape for a in arrays))
    size = math.prod(shape)
    k = parts(size)
    if k <= 1 or (not same and shape[0] < k):
        return f(*operands)
    out = np.empty(shape, f.resolve_dtypes(tuple(a.dtype for a in operands) + (None,))[-1])
    scalar = [isinstance(a, np.generic) for a in operands]
    if same:  # one flat run, cut into k pieces
        flat = [a if s else a.reshape(-1) for a, s in zip(operands, scalar, strict=True)]
        out_flat = out.reshape(-1)
        map_ranges(lambda lo, hi: f(*(a if s else a[lo:hi] for a, s in zip(flat, scalar, strict=True)),
                                    out=out_flat[lo:hi]), size, k)
    else:  # broadcasting: chunks along the result's first axis, each operand broadcast to it (views, no copies)
        full = [a if s else np.broadcast_to(a, shape) for a, s in zip(operands, scalar, strict=True)]
        map_ranges(lambda lo, hi: f(*(a if s else a[lo:hi] for a, s in zip(full, scalar, strict=True)),
                                    out=out[lo:hi]), shape[0], k)
    return out


def reduce(f: Any, a: Any, axis: tuple[int, ...], keepdims: bool) -> Any:
    """``f.reduce(a, axis, keepdims=keepdims)`` over the threads when ``a`` is large: split along the first axis,
    each chunk reduced on its own thread; where that axis is reduced too, the chunks' partial results are combined
    with ``f`` (the order of the additions differs from NumPy's pairwise order, as torch's does). ``f`` is typed
    ``Any``: NumPy's stubs have no overload for ``reduce``'s positional form, the cheapest call."""
    if a.size < 2 * GRAIN or a.ndim == 0 or not axis or not _splittable((a,)):
        return f.reduce(a, axis, None, None, keepdims)
    if len(axis) == a.ndim and a.ndim > 1:  # everything: one flat run
        flat = f.reduce(a.reshape(-1), 0, None, None, False) if parts(a.size) <= 1 else \
            _reduce_split(f, a.reshape(-1), (0,), False)
        return flat.reshape((1,) * a.ndim) if keepdims else flat
    return _reduce_split(f, a, axis, keepdims)


def _reduce_split(f: Any, a: Any, axis: tuple[int, ...], keepdims: bool) -> Any:
    n = a.shape[0]
    k = min(parts(a.size), n)
    if k <= 1:
        return f.reduce(a, axis, None, None, keepdims)
    if 0 in axis:  # partial results, combined in chunk order
        partial = map_ranges(lambda lo, hi: f.reduce(a[lo:hi], axis, None, None, keepdims), n, k)
        out = partial[0]
        for p in partial[1:]:
            out = f(out, p)
        return out
    first = f.reduce(a[:1], axis, None, None, keepdims)  # the result's dtype, and its first row
    out = np.empty((n, *first.shape[1:]), first.dtype)
    out[:1] = first
    map_ranges(lambda lo, hi: f.reduce(a[lo + 1:hi + 1], axis, None, out[lo + 1:hi + 1], keepdims), n - 1, k)
    return out


def rows(fn: Callable[..., R], arrays: Sequence[Any], out: Any, axis: int, cost: float = 1.0) -> list[R]:
    """``fn(*arrays, out=out)`` for a kernel that works on each slice along ``axis`` alone (softmax, layer norm, ...)
    and writes a result of ``out``'s shape, split over the threads along another axis when the work is large;
    ``cost`` scales the work per element (a kernel of many passes splits sooner). Returns what ``fn`` returned for
    each chunk, in the chunks' order (partial sums the caller adds up in a fixed order)."""
    size = out.size * cost
    if size < 2 * GRAIN or out.ndim < 2 or not _splittable((*arrays, out)) \
            or any(a.shape != out.shape for a in arrays):
        return [fn(*arrays, out=out)]
    lead = 1 if axis % out.ndim == 0 else 0
    n = out.shape[lead]
    k = min(parts(int(size)), n)
    if k <= 1:
        return [fn(*arrays, out=out)]

    def chunk(lo: int, hi: int) -> R:
        sl = (slice(None),) * lead + (slice(lo, hi),)
        return fn(*(a[sl] for a in arrays), out=out[sl])

    return map_ranges(chunk, n, k)


def flat(fn: Callable[..., Any], arrays: Sequence[Any], cost: float = 1.0) -> Any:
    """``fn(*arrays)`` for an elementwise kernel (a result of the first array's shape and dtype, each element
    from the same elements of the inputs: GELU, its gradient), split over the threads into contiguous runs of the
    flattened arrays when the work is large; ``cost`` is its work per element in ufunc passes."""
    a0 = arrays[0]
    if a0.size * cost < 2 * GRAIN or not _splittable(arrays) or any(a.shape != a0.shape for a in arrays):
        return fn(*arrays)
    k = parts(int(a0.size * cost))
    k = min(k, a0.size // 1024)  # a run of at least a few SIMD blocks
    if k <= 1:
        return fn(*arrays)
    out = np.empty(a0.shape, a0.dtype)
    runs = [a.reshape(-1) for a in arrays]
    out_flat = out.reshape(-1)

    def chunk(lo: int, hi: int) -> None:
        out_flat[lo:hi] = fn(*(a[lo:hi] for a in runs))

    map_ranges(chunk, a0.size, k)
    return out


def matmul(a: Any, b: Any) -> Any:
    """``np.matmul(a, b)`` for stacks of one batch shape (attention's heads), the stack split over the threads when
    the products are many and large enough: each is a small GEMM that BLAS runs on one thread."""
    if a.ndim < 3 or a.shape[:-2] != b.shape[:-2] or a.dtype != b.dtype or a.dtype.kind != "f" \
            or type(a) is not np.ndarray or type(b) is not np.ndarray:
        return np.matmul(a, b)
    batch = math.prod(a.shape[:-2])
    m, kk, n = a.shape[-2], a.shape[-1], b.shape[-1]
    k = min(parts(batch * m * kk * n, _MATMUL_GRAIN), batch)
    if k <= 1:
        return np.matmul(a, b)
    a3, b3 = a.reshape(batch, m, kk), b.reshape(batch, kk, n)  # views for the usual layouts, else one copy
    out = np.empty((batch, m, n), a.dtype)
    map_ranges(lambda lo, hi: np.matmul(a3[lo:hi], b3[lo:hi], out=out[lo:hi]), batch, k)
    return out.reshape(*a.shape[:-2], m, n)


# multiply-adds per chunk: about 100 us of a small single-threaded GEMM
_MATMUL_GRAIN = 1 << 21
