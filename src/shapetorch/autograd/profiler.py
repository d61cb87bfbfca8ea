"""``shapetorch.autograd.profiler``: time each primitive, each backward node and each
``record_function`` range; summarise by name (``key_averages().table()``) or write a Chrome trace.

Events nest: an event's self time is its time minus that of the events inside it. Times are in
microseconds, as torch's. ``emit_nvtx`` and ``emit_itt`` exist and do nothing (there is no NVTX or
ITT here); ``load_nvprof`` says so.
"""

from __future__ import annotations

import functools
import json
import os
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar

from .._engine import intercept as _intercept
from .._engine.intercept import PROFILER

__all__ = [
    "EventList", "FunctionEvent", "FunctionEventAvg", "emit_itt", "emit_nvtx", "load_nvprof", "profile",
    "record_function",
]

F = TypeVar("F", bound=Callable[..., Any])




class FunctionEvent:
    """One timed range: ``name``, start and end (us), the events inside it, input shapes."""

    def __init__(self, id: int, name: str, thread: int, start_us: float, input_shapes: list[Any] | None) -> None:
        self.id = id
        self.name = self.key = name
        self.thread = thread
        self.start_us = start_us
        self.end_us = start_us
        self.input_shapes = input_shapes or []
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.count = 1

    @property
    def cpu_time_total(self) -> float:
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    cpu_time = cpu_time_total

    def __repr__(self) -> str:
        return f"<FunctionEvent id={self.id} name={self.name} cpu_time={self.cpu_time_total:.3f}us>"


class FunctionEventAvg:
    """Events of one key (name, and input shapes when grouped so), summed; ``cpu_time`` is the mean."""

    def __init__(self, key: str, input_shapes: list[Any] | None = None) -> None:
        self.key = key
        self.input_shapes = input_shapes or []
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0

    def add(self, other: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        return self

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count if self.count else 0.0

    cpu_time_avg = cpu_time

    @property
    def self_cpu_time(self) -> float:
        return self.self_cpu_time_total / self.count if self.count else 0.0

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total:.3f}us "
                f"cpu_time={self.cpu_time_total:.3f}us count={self.count}>")


def _fmt_us(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class EventList(list[Any]):
    """A list of events (or of averages) that prints as torch's table."""

    def __init__(self, *args: Any, group_by_input_shape: bool = False) -> None:
        super().__init__(*args)
        self._group_by_input_shape = group_by_input_shape

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0) -> EventList:
        groups: dict[tuple[str, str], FunctionEventAvg] = {}
        for e in self:
            k = (e.key, str(e.input_shapes) if group_by_input_shape else "")
            if k not in groups:
                groups[k] = FunctionEventAvg(e.key, e.input_shapes if group_by_input_shape else None)
            groups[k].add(e)
        return EventList(groups.values(), group_by_input_shape=group_by_input_shape)

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        return total

    def table(self, sort_by: str | None = None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False) -> str:
        """Name, self CPU (% and time), CPU total (% and time), CPU time avg, number of calls."""
        rows = list(self)
        if top_level_events_only:
            rows = [e for e in rows if getattr(e, "cpu_parent", None) is None]
        if sort_by is not None:
            rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
        rows = rows[:row_limit] if row_limit > 0 else rows
        total_self = self.self_cpu_time_total or 1.0
        name_w = min(max_name_column_width, max([len("Name")] + [len(e.key) for e in rows]) + 4)
        cols = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
        shapes = self._group_by_input_shape
        if shapes:
            cols.append("Input Shapes")
        widths = [name_w] + [15] * 6 + ([max_shapes_column_width] if shapes else [])
        line = "  ".join("-" * w for w in widths)

        def row(values: list[str]) -> str:
            return "  ".join(v[:w].ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(values, widths)))

        out = [line, row(["Name", *cols]), line]
        for e in rows:
            name = e.key if len(e.key) <= name_w else e.key[: name_w - 3] + "..."
            vals = [name, f"{100 * e.self_cpu_time_total / total_self:.2f}%", _fmt_us(e.self_cpu_time_total),
                    f"{100 * e.cpu_time_total / total_self:.2f}%", _fmt_us(e.cpu_time_total),
                    _fmt_us(e.cpu_time_total / max(e.count, 1)), str(e.count)]
            if shapes:
                vals.append(str(e.input_shapes)[:max_shapes_column_width])
            out.append(row(vals))
        out.append(line)
        out.append(f"Self CPU time total: {_fmt_us(self.self_cpu_time_total)}")
        return ("" if header is None else header + "\n") + "\n".join(out) + "\n"

    def export_chrome_trace(self, path: str) -> None:
        pid = os.getpid()
        events = [
            {"ph": "X", "cat": "cpu_op", "name": e.name, "pid": pid, "tid": e.thread, "ts": e.start_us,
             "dur": e.cpu_time_total, "args": {"Input Dims": e.input_shapes} if e.input_shapes else {}}
            for e in self
        ]
        with open(path, "w") as f:
            json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)


class _Range:
    """One open event (the profiler's ``record``): a cheap context manager."""

    __slots__ = ("event", "prof")

    def __init__(self, prof: profile, name: str, shapes: list[Any] | None) -> None:
        self.prof = prof
        self.event = prof._open(name, shapes)

    def __enter__(self) -> FunctionEvent:
        return self.event

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.prof._close(self.event)


class profile:
    """Context manager that records op events of this thread and holds their summary (``torch.autograd.profiler.profile``)."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device: str | None = None,
                 record_shapes: bool = False, with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False, use_kineto: bool = False, use_cpu: bool = True,
                 experimental_config: Any = None, acc_events: bool = False,
                 custom_trace_id_callback: Any = None) -> None:
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.with_flops, self.profile_memory, self.with_stack = with_flops, profile_memory, with_stack
        self.use_cuda = use_cuda
        self.entered = False
        self.function_events: EventList | None = None
        self._events: list[FunctionEvent] = []
        self._stack: list[FunctionEvent] = []
        self._t0 = 0
        self._prev: profile | None = None

    def __enter__(self) -> profile:
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._prev, PROFILER.active = PROFILER.active, self
        self._t0 = time.perf_counter_ns()
        _intercept.acquire()
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        if not self.enabled:
            return
        _intercept.release()
        PROFILER.active = self._prev
        self.function_events = EventList(self._events)

    # -- recording -----------------------------------------------------------------------------------------
    def _now(self) -> float:
        return (time.perf_counter_ns() - self._t0) / 1e3

    def _open(self, name: str, shapes: list[Any] | None) -> FunctionEvent:
        ev = FunctionEvent(len(self._events), name, threading.get_ident(), self._now(), shapes)
        if self._stack:
            ev.cpu_parent = self._stack[-1]
            self._stack[-1].cpu_children.append(ev)
        self._stack.append(ev)
        self._events.append(ev)
        return ev

    def _close(self, ev: FunctionEvent) -> None:
        ev.end_us = self._now()
        if self._stack and self._stack[-1] is ev:
            self._stack.pop()

    def record(self, name: str, shapes: list[Any] | None = None) -> _Range:
        return _Range(self, name, shapes if self.record_shapes else None)

    # -- results -------------------------------------------------------------------------------------------
    def _check_finish(self) -> EventList:
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def events(self) -> EventList:
        return self._check_finish()

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0) -> EventList:
        """Events averaged by name (and by input shapes when ``group_by_input_shape``)."""
        return self._check_finish().key_averages(group_by_input_shape, group_by_stack_n)

    def table(self, sort_by: str | None = None, row_limit: int = 100, **kwargs: Any) -> str:
        return self._check_finish().table(sort_by=sort_by, row_limit=row_limit, **kwargs)

    def total_average(self) -> FunctionEventAvg:
        """All events averaged into one (key ``Total``)."""
        return self._check_finish().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        """The sum of the self CPU times of all events, in microseconds."""
        return self._check_finish().self_cpu_time_total

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome tracing JSON file (``chrome://tracing``, Perfetto)."""
        self._check_finish().export_chrome_trace(path)

    def __str__(self) -> str:
        return self.key_averages().table()


class record_function:
    """Context manager (or decorator) that adds a named range to the profile, when one is running."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self._range: _Range | None = None

    def __enter__(self) -> record_function:
        prof = PROFILER.active
        if prof is not None:
            self._range = prof.record(self.name)
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        if self._range is not None:
            self._range.__exit__(t, e, tb)
            self._range = None

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class emit_nvtx:
    """Documented no-op: there is no NVTX without CUDA. Accepts torch's arguments."""

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled = enabled
        self.record_shapes = record_shapes

    def __enter__(self) -> emit_nvtx:
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        return None


class emit_itt(emit_nvtx):
    """Documented no-op: there is no ITT (VTune) instrumentation here. Accepts torch's arguments."""


def load_nvprof(path: str) -> EventList:
    """nvprof traces come from CUDA runs, which shapetorch has none of."""
    raise RuntimeError("load_nvprof: shapetorch has no CUDA, so there are no nvprof traces to load")
