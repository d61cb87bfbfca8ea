"""A per-thread pool of reusable NumPy arrays for the CPU kernels' large outputs and scratch.

Why: a fresh array of a megabyte or two costs its page faults again on every training step once glibc has handed
the memory back (it trims the top of its heap when a step frees its activations): about 2 us a page on a small VM,
5% of the benchmark's LSTM forward and backward, about 0.5 ms of the GPT step's two GELU derivatives. An array
kept here is handed out again only when nothing but the pool references it (its refcount: a tensor, a view or a
graph holding it keeps it out), so reuse never changes a value anyone can see. That needs CPython's reference
counts to be the ones measured below, the same condition as the engine's gradient stealing (``_COUNTS_KNOWN``);
elsewhere every call allocates, as before.

Limits (documented in docs/compatibility.md, "Memory"): arrays under ``MIN_BYTES`` come from the heap without
faults and are never kept; a thread keeps at most ``MAX_ARRAYS`` arrays and ``MAX_BYTES`` in all, the least
recently used dropped first, so what a thread holds once training is over stays small; an array larger than
``MAX_BYTES`` on its own is never kept.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import numpy as np

from .._engine.backward import _COUNTS_KNOWN

MIN_BYTES = 1 << 16
# A 2-layer bidirectional LSTM or GRU keeps four arrays until its backward and a GRU layer's backward takes seven
# more; a GPT keeps one GELU derivative per block until its backward. The benchmark's LSTM keeps about 10 MB.
MAX_ARRAYS = 16
MAX_BYTES = 32 << 20

_LOCAL = threading.local()


def _refs(pool: list[Any], j: int) -> int:
    """``sys.getrefcount`` of ``pool[j]``: the one place the pool reads a count, so that the count of an array
    that only the pool holds is measured (``_FREE_REFS``) the way every lookup reads it."""
    return sys.getrefcount(pool[j])


def _free_refs() -> int:
    probe = [np.empty(0)]
    return _refs(probe, 0)


_FREE_REFS = _free_refs()


def _arrays() -> list[Any]:
    pool: list[Any] | None = getattr(_LOCAL, "arrays", None)
    if pool is None:
        pool = _LOCAL.arrays = []
    return pool


def empty(shape: tuple[int, ...], dtype: Any) -> Any:
    """An uninitialised C-contiguous array of ``shape`` and ``dtype``: a view of one of this thread's kept flat
    arrays of that size and dtype that nothing else references any more, else a new one, kept for later calls
    when the limits allow."""
    dtype = np.dtype(dtype)
    n = 1
    for d in shape:
        n *= d
    nbytes = n * dtype.itemsize
    if not _COUNTS_KNOWN or nbytes < MIN_BYTES or nbytes > MAX_BYTES:
        return np.empty(shape, dtype)
    pool = _arrays()
    for j in range(len(pool) - 1, -1, -1):  # (an index loop: an iterator's tuple would hold a reference)
        a = pool[j]
        if a.size == n and a.dtype == dtype and _refs(pool, j) == _FREE_REFS + 1:  # (+1: the local ``a``)
            del pool[j]
            pool.append(a)  # the most recently used last: the oldest is dropped first
            return a.reshape(shape)
    a = np.empty(n, dtype)
    pool.append(a)
    total = sum(x.nbytes for x in pool)
    while len(pool) > MAX_ARRAYS or total > MAX_BYTES:
        total -= pool[0].nbytes
        del pool[0]  # (an array still in use stays valid: only the pool forgets it)
    return a.reshape(shape)


def kept() -> list[Any]:
    """The arrays this thread's pool keeps, least recently used first (a copy of the list, for tests and
    memory accounting)."""
    return list(_arrays())
