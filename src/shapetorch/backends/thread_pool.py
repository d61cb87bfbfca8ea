"""The intra-op thread pool of the NumPy backend: large elementwise, reduction and row-wise kernels cut into
contiguous chunks that run on every core, as torch's ``at::parallel_for`` does.

NumPy's ufunc loops, reductions and BLAS calls release the GIL, so chunks run in parallel; NumPy itself runs each
call on one core. A split kernel is one job of chunks that the calling thread and the pool's persistent workers
claim one at a time: a worker the scheduler wakes late (a loaded machine) finds fewer chunks left or none, and the
caller never waits for a worker that has not started. The chunks depend on the size alone, never on the thread
count, so reductions give the same bits with one thread or many. Only kernels above a size threshold are split,
and never from inside a chunk (a kernel called by a chunk runs whole on its thread, so the pool cannot deadlock on
itself). The number of threads is ``st.set_num_threads``/``st.get_num_threads``; by default, as torch, the
``OMP_NUM_THREADS`` (or ``MKL_NUM_THREADS``) environment variable, else the number of physical cores this process
may run on (torch counts the machine's; the difference shows only where the process is pinned to fewer). BLAS (matmul)
keeps its own threads: NumPy's OpenBLAS reads ``OPENBLAS_NUM_THREADS``.
"""

from __future__ import annotations

import itertools
import math
import os
import threading
from collections.abc import Callable, Sequence
from queue import SimpleQueue
from typing import Any, TypeVar

import numpy as np

R = TypeVar("R")

# Elements per chunk: a memory-bound float32 ufunc streams 2^17 elements in about 30 us on one core, ten times
# what claiming a chunk costs, and a chunk's operands (512 KiB each) stay in a core's L2 cache for a kernel's next
# pass (measured on the development machine; see docs/performance.md).
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
    workers = 0  # worker threads started (they never stop; a lower thread count posts fewer copies of a job)
    queue: SimpleQueue[_Job | None] = SimpleQueue()


_STATE = _State()
_LOCAL = threading.local()
_LOCK = threading.Lock()


def num_threads() -> int:
    if not _STATE.threads:
        _STATE.threads = default_num_threads()
    return _STATE.threads


def set_num_threads(n: int) -> None:
    """The number of threads a kernel is split over (the caller's included); the caller checks ``n > 0``."""
    _STATE.threads = n


class _Job:
    """One split kernel: ``k`` chunks that the caller and the woken workers claim one at a time (dynamic scheduling:
    a worker the scheduler wakes late, on a loaded machine, finds fewer chunks or none left, and the caller never
    waits for a worker that has not started). The caller claims from the front and the workers from the back, so
    with two threads each call gives each thread about the same range as the call before, as a static split would:
    the data a chain of elementwise ops passes along can stay in that core's cache."""

    __slots__ = ("bounds", "done", "errors", "finished", "fn", "hi", "k", "lo", "lock", "results")

    def __init__(self, fn: Callable[[int, int], Any], bounds: list[int]) -> None:
        self.fn = fn
        self.bounds = bounds
        self.k = len(bounds) - 1
        self.lo, self.hi = 0, self.k  # the chunks not yet claimed
        self.lock = threading.Lock()
        self.finished = itertools.count(1)  # ``next`` on it is one C call under the GIL: no lock needed
        self.results: list[Any] = [None] * self.k
        self.errors: list[tuple[int, BaseException]] = []
        self.done = threading.Lock()  # held until the last chunk finishes, whoever runs it
        self.done.acquire()

    def _claim(self, from_back: bool) -> int:
        with self.lock:
            if self.lo >= self.hi:
                return -1
            if from_back:
                self.hi -= 1
                return self.hi
            self.lo += 1
            return self.lo - 1

    def work(self, from_back: bool) -> None:
        fn, bounds, k = self.fn, self.bounds, self.k
        while (i := self._claim(from_back)) >= 0:
            try:
                self.results[i] = fn(bounds[i], bounds[i + 1])
            except BaseException as e:  # re-raised on the caller's thread, after every chunk has finished
                self.errors.append((i, e))
            if next(self.finished) == k:
                self.done.release()


def _worker(queue: SimpleQueue[_Job | None]) -> None:
    _LOCAL.busy = True  # a kernel called from a chunk runs whole on this thread
    while (job := queue.get()) is not None:
        job.work(True)


def _wake(n: int) -> SimpleQueue[_Job | None]:
    """The job queue, with at least ``n`` workers waiting on it (started on the first large kernel)."""
    if _STATE.workers < n:
        with _LOCK:
            while _STATE.workers < n:
                threading.Thread(target=_worker, args=(_STATE.queue,), daemon=True,
                                 name=f"shapetorch-intraop-{_STATE.workers}").start()
                _STATE.workers += 1
    return _STATE.queue


def _forget_pool() -> None:
    """A forked child has the pool's state but not its threads: it starts its own on first use."""
    _STATE.workers = 0
    _STATE.queue = SimpleQueue()


os.register_at_fork(after_in_child=_forget_pool)


def parts(n: int, grain: int = GRAIN) -> int:
    """Into how many chunks ``n`` units of work are cut: about one per ``grain`` (at least two grains to cut at all),
    whatever the thread count, so that the partial results a caller combines (sums) are the same with one thread
    or many; 1 inside a chunk."""
    if n < 2 * grain or getattr(_LOCAL, "busy", False):
        return 1
    return min(n // grain, _MAX_CHUNKS)


# more chunks only add Python calls (a few microseconds each); 256 keep every thread busy to the end
_MAX_CHUNKS = 256


def threads_for(k: int) -> int:
    """How many threads ``k`` chunks run on (the caller's included)."""
    if k <= 1:
        return 1
    return min(_STATE.threads or num_threads(), k)


def map_ranges(fn: Callable[[int, int], R], n: int, k: int) -> list[R]:
    """``[fn(lo, hi) for each of k contiguous ranges covering range(n)]``, the ranges run in parallel over the
    threads (the calling thread takes its share); an exception of any chunk (the first, in chunk order) is raised
    after every chunk has finished. The ranges depend on ``n`` and ``k`` alone, not on the thread count."""
    if k <= 1:
        return [fn(0, n)]
    bounds = [n * i // k for i in range(k + 1)]
    t = threads_for(k)
    if t <= 1 or getattr(_LOCAL, "busy", False):
        return [fn(bounds[i], bounds[i + 1]) for i in range(k)]
    job = _Job(fn, bounds)
    queue = _wake(t - 1)
    for _ in range(t - 1):
        queue.put(job)
    _LOCAL.busy = True
    try:
        job.work(False)
    finally:
        _LOCAL.busy = False
    job.done.acquire()  # the chunks a worker still runs write into buffers the caller owns
    if job.errors:
        raise min(job.errors, key=lambda e: e[0])[1]
    return job.results


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


def _chunks(size: int) -> int:
    """Chunks of an elementwise kernel: 1 with one thread, where cutting only adds calls (each element is the
    same however it is cut)."""
    k = parts(size)
    return k if threads_for(k) > 1 else 1


def flat_ranges(fn: Callable[[int, int], Any], n: int, cost: float = 1.0) -> None:
    """``fn(lo, hi)`` over contiguous ranges covering ``range(n)``, for an elementwise kernel of ``cost`` passes per
    element that writes its results itself (several of them: GELU's value and derivative), split over the threads
    as :func:`flat` splits; one call for the whole range where that would not split."""
    k = min(_chunks(int(n * cost)), n // 1024) if n * cost >= 2 * GRAIN else 1
    if k <= 1:
        fn(0, n)
    else:
        map_ranges(fn, n, k)


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
    k = _chunks(size)
    if k <= 1 or (not same and shape[0] < 2):
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
                                    out=out[lo:hi]), shape[0], min(k, shape[0]))
    return out


def reduce(f: Any, a: Any, axis: tuple[int, ...], keepdims: bool) -> Any:
    """``f.reduce(a, axis, keepdims=keepdims)`` over the threads when ``a`` is large: cut along the first axis (a
    full reduction: along the flattened run), each chunk reduced on its own; where that axis is reduced too, the
    chunks' partial results are combined with ``f.reduce``. The chunks depend on the size alone, so one thread or
    many give the same result; the order of the additions differs from NumPy's pairwise order, as torch's does.
    ``f`` is typed ``Any``: NumPy's stubs have no overload for ``reduce``'s positional form, the cheapest call."""
    if a.size < (DOT_MIN if f is np.add else _SPLIT) or a.ndim == 0 or not axis or not _splittable((a,)):
        return f.reduce(a, axis, None, None, keepdims)
    if len(axis) == a.ndim:  # everything: one flat run
        run = a.reshape(-1)
        if f is np.add and run.dtype in _DOT_DTYPES:
            total = _sum_run(run)
        else:  # partial results of the chunks; a max, a min or an integer sum is exact, whatever the cut
            k = _chunks(run.size) if f is not np.add or run.dtype.kind in "biu" else parts(run.size)
            if k <= 1:
                total = f.reduce(run, 0, None, None, False)
            else:
                partial = map_ranges(lambda lo, hi: f.reduce(run[lo:hi], 0, None, None, False), run.size, k)
                total = f.reduce(np.array(partial), 0, None, None, False)
        return total.reshape((1,) * a.ndim) if keepdims else total
    if f is np.add and a.dtype in _DOT_DTYPES and axis == tuple(range(len(axis))) \
            and 1 < (n_lead := math.prod(a.shape[:len(axis)])) <= DOT_MAX:  # column sums (a bias's gradient)
        total = _sum_leading(a.reshape(n_lead, -1))
        return total.reshape((1,) * len(axis) + a.shape[len(axis):] if keepdims else a.shape[len(axis):])
    if f is np.add and axis == (a.ndim - 1,) and a.dtype in _DOT_DTYPES:  # row sums, by rows
        rows2 = a.reshape(-1, a.shape[-1])
        out = np.empty(rows2.shape[0], a.dtype)
        map_ranges(lambda lo, hi: sum_last(rows2[lo:hi], out[lo:hi]), rows2.shape[0],
                   min(_chunks(a.size), rows2.shape[0]))  # each row's sum is the same however the rows are cut
        return out.reshape(a.shape[:-1] + ((1,) if keepdims else ()))
    n = a.shape[0]
    inexact = 0 in axis and f is np.add and a.dtype.kind not in "biu"  # float partial sums: cut by size alone
    k = min(parts(a.size) if inexact else _chunks(a.size), n)
    if k <= 1:
        return f.reduce(a, axis, None, None, keepdims)
    if 0 in axis:  # partial results, combined in chunk order
        partial = map_ranges(lambda lo, hi: f.reduce(a[lo:hi], axis, None, None, True), n, k)
        return f.reduce(np.concatenate(partial, 0), axis, None, None, keepdims)
    first = f.reduce(a[:1], axis, None, None, keepdims)  # the result's dtype, and its first row
    out = np.empty((n, *first.shape[1:]), first.dtype)
    out[:1] = first
    map_ranges(lambda lo, hi: f.reduce(a[lo + 1:hi + 1], axis, None, out[lo + 1:hi + 1], keepdims), n - 1, k)
    return out


def _sum_run(x: Any) -> Any:
    """The sum of a large float32/float64 run: the sums of its rows of ``_LANES`` elements (:func:`sum_last`, the
    rows over the threads), then those added pairwise, then the leftover elements. The rows are the same however
    the work is cut, so the result is too."""
    whole = x.size - x.size % _LANES
    rows = x[:whole].reshape(-1, _LANES)
    sums = np.empty(rows.shape[0], x.dtype)
    map_ranges(lambda lo, hi: sum_last(rows[lo:hi], sums[lo:hi]), rows.shape[0],
               min(_chunks(x.size), rows.shape[0]))
    total = np.add.reduce(sums, 0)
    return total + np.add.reduce(x[whole:], 0) if whole < x.size else total


def _sum_leading(rows: Any) -> Any:
    """The column sums of a C-contiguous float32/float64 matrix of at most ``DOT_MAX`` rows: ones times it, BLAS's
    matrix-vector product (a product by one is exact, so each result is a sum of its column's elements, as accurate
    as NumPy's), 2-6x faster than NumPy's reduction along the first axis, which calls its loop once per row (7.6
    against 18.7 us on (256, 512) float32,
    17.5 against 113 us on (4096, 64), one thread; torch's 8.8 and 21). Large ones are cut into blocks of
    columns by the size alone (strided views BLAS reads in place), so any thread count gives the same bits."""
    n, m = rows.shape
    ones = _ONES.get(rows.dtype)
    if ones is None:
        ones = _ONES[rows.dtype] = np.ones(DOT_MAX, rows.dtype)
    # the cut by the size alone, inside a chunk too (where the blocks then run on its thread): BLAS's kernels may
    # add a column's elements in another order in a block's body and in its tail, so a column is always in the
    # same place of the same block
    k = min(rows.size // GRAIN if rows.size >= 2 * GRAIN else 1, _MAX_CHUNKS, m // _MIN_COLUMNS)
    if k <= 1:
        return np.matmul(ones[:n], rows)
    out = np.empty(m, rows.dtype)
    map_ranges(lambda lo, hi: np.matmul(ones[:n], rows[:, lo:hi], out=out[lo:hi]), m, k)
    return out


_MIN_COLUMNS = 512  # BLAS reads a block of columns in place, at the speed of whole rows
_LANES = 4096
DOT_MIN = 4 * _LANES  # a float sum this large takes the dot products, split or not


def sum_last(a: Any, out: Any = None) -> Any:
    """``np.add.reduce(a, -1)`` (into ``out``, of the result's shape, when given). For float32/float64 rows of
    contiguous elements, at most ``DOT_MAX`` long, each row's sum is its dot product with ones (``np.vecdot``,
    BLAS's dot: about twice as fast as NumPy's pairwise loop, and as accurate for such rows, its many SIMD
    accumulators each adding a few hundred elements at most; a product by one is exact). Longer rows would make
    OpenBLAS start its own threads (over 10000 elements), so they take NumPy's loop."""
    n = a.shape[-1]
    if a.dtype in _DOT_DTYPES and 0 < n <= DOT_MAX and a.strides[-1] == a.itemsize and type(a) is np.ndarray:
        ones = _ONES.get(a.dtype)
        if ones is None:
            ones = _ONES[a.dtype] = np.ones(DOT_MAX, a.dtype)
        return np.vecdot(a, ones[:n]) if out is None else np.vecdot(a, ones[:n], out=out)
    return np.add.reduce(a, -1, None, out)


_DOT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
DOT_MAX = 8192
_ONES: dict[np.dtype[Any], Any] = {}  # DOT_MAX ones per dtype, sliced to each row's length


def rows(fn: Callable[..., R], arrays: Sequence[Any], out: Any, axis: int, cost: float = 1.0) -> list[R]:
    """``fn(*arrays, out=out)`` for a kernel that works on each slice along ``axis`` alone (softmax, layer norm, ...)
    and writes a result of ``out``'s shape, split over the threads along another axis when the work is large;
    ``cost`` scales the work per element (a kernel of many passes splits sooner). Returns what ``fn`` returned for
    each chunk, in the chunks' order (partial sums the caller adds up in a fixed order: where ``axis`` is not the
    first, the chunks depend on the size alone)."""
    size = out.size * cost
    if size < 2 * GRAIN or out.ndim < 2 or not _splittable((*arrays, out)) \
            or any(a.shape != out.shape for a in arrays):
        return [fn(*arrays, out=out)]
    lead = 1 if axis % out.ndim == 0 else 0
    n = out.shape[lead]
    if lead:  # blocks of columns, strided views: NumPy pays per run, so as few and as wide as the threads allow
        k = min(_chunks(int(size)), threads_for(n), max(1, out.size // out.shape[0] // _MIN_RUN))
    else:  # blocks of at least GRAIN elements (they stay in L2 from one pass to the next), at least two
        k = min(parts(int(size)), n, max(2, out.size // GRAIN))
    if k <= 1:
        return [fn(*arrays, out=out)]

    def chunk(lo: int, hi: int) -> R:
        sl = (slice(None),) * lead + (slice(lo, hi),)
        return fn(*(a[sl] for a in arrays), out=out[sl])

    return map_ranges(chunk, n, k)


# Columns a block must have: NumPy runs an elementwise pass over a block of columns as one inner loop per row, and
# each call costs: softmax over dim 0 of 4M float32 elements cut into two blocks took 2.0x the CPU time of the
# whole with blocks of 512 columns (no faster on two threads than on one), 1.75x with 1024, 1.3x with 2048, 1.14x
# with 4096 (one thread, CPU time).
_MIN_RUN = 4096


def flat(fn: Callable[..., Any], arrays: Sequence[Any], cost: float = 1.0) -> Any:
    """``fn(*arrays)`` for an elementwise kernel (a result of the first array's shape and dtype, each element
    from the same elements of the inputs: GELU, its gradient), split over the threads into contiguous runs of the
    flattened arrays when the work is large; ``cost`` is its work per element in ufunc passes."""
    a0 = arrays[0]
    if a0.size * cost < 2 * GRAIN or not _splittable(arrays) or any(a.shape != a0.shape for a in arrays):
        return fn(*arrays)
    k = min(_chunks(int(a0.size * cost)), a0.size // 1024)  # a run of at least a few SIMD blocks
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
    if threads_for(k) <= 1:  # one thread: one call (each product is the same however the stack is cut)
        return np.matmul(a, b)
    a3, b3 = a.reshape(batch, m, kk), b.reshape(batch, kk, n)  # views for the usual layouts, else one copy
    out = np.empty((batch, m, n), a.dtype)
    map_ranges(lambda lo, hi: np.matmul(a3[lo:hi], b3[lo:hi], out=out[lo:hi]), batch, k)
    return out.reshape(*a.shape[:-2], m, n)


# multiply-adds per chunk: about 100 us of a small single-threaded GEMM
_MATMUL_GRAIN = 1 << 21
