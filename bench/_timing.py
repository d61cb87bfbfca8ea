"""Timing helpers shared by the benchmarks: best-of-N medians, so a busy machine skews less."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any


def per_call(fn: Callable[[], Any], min_time: float = 0.2, repeat: int = 5) -> float:
    """Seconds per call: the median of ``repeat`` runs, each at least ``min_time`` long."""
    fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - t0 >= min_time / 10 or n >= 1 << 20:
            break
        n *= 2
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        runs.append((time.perf_counter() - t0) / n)
    return statistics.median(runs)


def fmt_time(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:8.2f} us"
    return f"{s * 1e3:8.2f} ms"
