"""Timing helpers shared by the benchmarks: best-of-N medians, so a busy machine skews less."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from typing import Any

# BENCH_CLOCK=cpu times with the calling thread's CPU time: on a machine shared with other work, time spent
# descheduled then counts for nobody. Only meaningful where each library computes on this one thread
# (``--threads 1``, OPENBLAS_NUM_THREADS=1); the default is the wall clock.
_clock = time.thread_time if os.environ.get("BENCH_CLOCK") == "cpu" else time.perf_counter


def loop_count(fn: Callable[[], Any], min_time: float) -> int:
    """How many calls make one timed run last about ``min_time / 10`` (after a warm-up call)."""
    fn()
    n = 1
    while True:
        t0 = _clock()
        for _ in range(n):
            fn()
        if _clock() - t0 >= min_time / 10 or n >= 1 << 20:
            break
        n *= 2
    return n


def per_call(fn: Callable[[], Any], min_time: float = 0.2, repeat: int = 5) -> float:
    """Seconds per call: the median of ``repeat`` runs, each at least ``min_time`` long."""
    n = loop_count(fn, min_time)
    runs = []
    for _ in range(repeat):
        t0 = _clock()
        for _ in range(n):
            fn()
        runs.append((_clock() - t0) / n)
    return statistics.median(runs)


def fmt_time(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:8.2f} us"
    return f"{s * 1e3:8.2f} ms"


def compare(fns: dict[str, Callable[[], Any]], min_time: float = 0.2, repeat: int = 5,
            clock: Callable[[], float] | None = None) -> dict[str, float]:
    """Seconds per call of each function, measured in interleaved rounds (one run of each per round) and
    taking each one's best round, so that load from other processes hits every library alike. ``clock`` may be
    ``time.process_time`` (the process's CPU time, all its threads): on a machine shared with other jobs the
    wall clock counts the time the scheduler gave to them, which CPU time does not. By default, the clock
    ``BENCH_CLOCK`` chooses."""
    clock = clock or _clock
    loops = {name: loop_count(fn, min_time) for name, fn in fns.items()}
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, fn in fns.items():
            n = loops[name]
            t0 = clock()
            for _ in range(n):
                fn()
            best[name] = min(best[name], (clock() - t0) / n)
    return best
