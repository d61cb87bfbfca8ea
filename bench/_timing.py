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


def compare_rounds(fns: dict[str, Callable[[], Any]], min_time: float = 0.2,
                   rounds: int = 21) -> dict[str, dict[str, list[float]]]:
    """Seconds per call of each function in each of ``rounds`` interleaved rounds, by two clocks at once:
    ``wall`` (``time.perf_counter``) and ``cpu`` (``time.process_time``, the process's CPU time over all its
    threads). With several threads neither alone is fair on a shared machine: the wall clock charges a library
    for the time the scheduler gave other jobs, and CPU time charges torch for its OpenMP threads spinning at
    a barrier (and charges nothing for a thread left waiting). Rounds are short and adjacent, so a ratio
    taken round by round (:func:`round_ratios`) compares the libraries under the same load."""
    loops = {name: loop_count(fn, min_time) for name, fn in fns.items()}
    got: dict[str, dict[str, list[float]]] = {name: {"wall": [], "cpu": []} for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            n = loops[name]
            w0, c0 = time.perf_counter(), time.process_time()
            for _ in range(n):
                fn()
            c1, w1 = time.process_time(), time.perf_counter()
            got[name]["wall"].append((w1 - w0) / n)
            got[name]["cpu"].append((c1 - c0) / n)
    return got


def round_ratios(ours: list[float], theirs: list[float]) -> list[float]:
    """``ours[i] / theirs[i]`` for each round, sorted: their median is the ratio a table reports, and the
    quartiles how much it moved."""
    return sorted(a / b for a, b in zip(ours, theirs, strict=True))


def quartiles(xs: list[float]) -> tuple[float, float, float]:
    """The lower quartile, the median and the upper quartile of ``xs``."""
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[0], q[1], q[2]
