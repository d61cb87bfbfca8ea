"""The slow path of a primitive call, installed only while something needs it.

The profiler (op events), forward-mode AD (tangents) and inference mode (marking inference
tensors) each need to see every primitive call. Rather than testing for them on every call, the
primitive's ``__call__`` is swapped for :func:`_call` while at least one of them is active; with
none active, calls take the plain fast path of :mod:`.primitives`.

The parts that need the slow path sit above the engine, so they register with it: the profiler sets
:data:`PROFILER`'s ``active`` profile, forward-mode AD appends its tangent rule to :data:`AFTER_CALL`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from .._grad_mode import SLOW_PATH, STATE

_LOCK = threading.Lock()
_USERS = 0
_ORIG: Any = None
# whether the slow path is installed: a shortcut past ``Prim.__call__`` (NOTE [untracked view] in ``ops/views``) is
# taken only while it is not, so the profiler, forward-mode AD and inference mode see every primitive call
INSTALLED = [False]



class _Profiling(threading.local):
    def __init__(self) -> None:
        self.active: Any = None  # the running ``autograd.profiler.profile`` of this thread, if any


PROFILER = _Profiling()  # thread-local, as torch's profiler

# ``fn(prim, args, params, out)`` after every primitive call on the slow path (forward-mode AD's tangents)
AFTER_CALL: list[Callable[[Any, tuple[Any, ...], dict[str, Any], Any], None]] = []

_ATEN = {"true_divide": "div", "to_copy": "_to_copy", "index": "index", "matmul": "mm", "conj": "conj_physical"}


def acquire() -> None:
    """One more user of the slow path (install it on the first)."""
    global _USERS, _ORIG
    from .primitives import Prim  # (primitives imports this module)

    with _LOCK:
        _USERS += 1
        if _USERS == 1:
            _ORIG = Prim.__dict__["__call__"]
            Prim.__call__ = _call  # type: ignore[method-assign]
            INSTALLED[0] = True


def release() -> None:
    global _USERS
    from .primitives import Prim  # (primitives imports this module)

    with _LOCK:
        _USERS -= 1
        if _USERS == 0:
            Prim.__call__ = _ORIG  # type: ignore[method-assign]
            INSTALLED[0] = False


def _call(self: Any, *args: Any, **params: Any) -> Any:
    prof = PROFILER.active
    if prof is not None:
        shapes = [list(a._data.shape) if hasattr(a, "_data") else [] for a in args] if prof.record_shapes else None
        with prof.record("aten::" + _ATEN.get(self.name, self.name), shapes):
            out = _ORIG(self, *args, **params)
    else:
        out = _ORIG(self, *args, **params)
    if STATE.inference:
        out._inference = True
    for after in AFTER_CALL:
        after(self, args, params, out)
    return out


SLOW_PATH.acquire, SLOW_PATH.release = acquire, release  # inference mode's marking
