"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode. Thread-local, as in torch.

Each is a context manager and a decorator (of functions and of generator functions, whose every
step then runs in the mode). ``no_grad``, ``enable_grad`` and ``inference_mode`` also decorate
without parentheses (``@no_grad``), as in torch 2.

The state sits below the tensor (which marks tensors made in inference mode) and the engine. Inference
mode also marks every primitive's output, through the engine's slow path; the engine is above this
module, so it registers that path here (:data:`SLOW_PATH`) when it is imported.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable, Generator
from types import TracebackType
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

__all__ = [
    "enable_grad", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled", "no_grad", "set_grad_enabled",
]


class _State(threading.local):
    def __init__(self) -> None:
        self.enabled = True
        self.inference = False


STATE = _State()


class _SlowPath:
    """``acquire()``/``release()`` of the primitives' slow path; set by ``shapetorch._engine.intercept``."""

    def __init__(self) -> None:
        # no primitive can run before the engine is imported, so there is nothing to intercept until then
        self.acquire: Callable[[], None] = _nothing
        self.release: Callable[[], None] = _nothing


def _nothing() -> None:
    pass


SLOW_PATH = _SlowPath()


def is_grad_enabled() -> bool:
    """Whether ops record the graph in this thread."""
    return STATE.enabled


def is_inference_mode_enabled() -> bool:
    """Whether this thread is inside ``inference_mode``."""
    return STATE.inference


def _wrap(mode: Callable[[], _Mode], fn: F) -> F:
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def gen_wrapper(*args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
            with mode():
                gen = fn(*args, **kwargs)
                request = None
                try:
                    request = gen.send(None)
                except StopIteration as stop:
                    return stop.value
            while True:
                try:
                    response = yield request
                except GeneratorExit:
                    with mode():
                        gen.close()
                    raise
                except BaseException as e:
                    with mode():
                        try:
                            request = gen.throw(e)
                        except StopIteration as stop:
                            return stop.value
                    continue
                with mode():
                    try:
                        request = gen.send(response)
                    except StopIteration as stop:
                        return stop.value

        return gen_wrapper  # type: ignore[return-value]

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with mode():
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


class _Mode:
    """A context manager that is also a decorator; subclasses say what to set."""

    def _set(self) -> tuple[bool, bool]:
        raise NotImplementedError  # abstract: every concrete mode below overrides it

    def __enter__(self) -> None:
        self._prev = (STATE.enabled, STATE.inference)
        STATE.enabled, STATE.inference = self._set()

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        STATE.enabled, STATE.inference = self._prev

    def __call__(self, fn: F) -> F:
        return _wrap(self.clone, fn)

    def clone(self) -> _Mode:
        return type(self)()


class _NoParam(_Mode):
    """``@no_grad`` as well as ``@no_grad()``."""

    def __new__(cls, orig_func: Callable[..., Any] | None = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParam):
    """Ops inside do not record the graph (their results do not require grad)."""

    def __init__(self, orig_func: Callable[..., Any] | None = None) -> None:
        pass

    def _set(self) -> tuple[bool, bool]:
        return False, STATE.inference


class enable_grad(_NoParam):
    """Ops inside record the graph again (inside ``no_grad``)."""

    def __init__(self, orig_func: Callable[..., Any] | None = None) -> None:
        pass

    def _set(self) -> tuple[bool, bool]:
        return True, STATE.inference


class set_grad_enabled(_Mode):
    """Sets the mode when called (as torch does), and restores the old one on exit. As a decorator,
    the mode applies inside the decorated function only."""

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self._before_call = (STATE.enabled, STATE.inference)
        STATE.enabled = self.mode

    def __enter__(self) -> None:
        self._prev = self._before_call
        STATE.enabled = self.mode

    def _set(self) -> tuple[bool, bool]:
        return self.mode, STATE.inference

    def __call__(self, fn: F) -> F:
        STATE.enabled = self._before_call[0]  # decorating does not change the mode
        return _wrap(self.clone, fn)

    def clone(self) -> _Mode:
        prev = STATE.enabled
        m = set_grad_enabled(self.mode)
        m._before_call = (prev, STATE.inference)
        STATE.enabled = prev
        return m


class inference_mode(_Mode):
    """Like no_grad, and tensors made inside are inference tensors (``is_inference()``), which cannot be
    saved for backward later. ``inference_mode(False)`` turns it off inside."""

    def __new__(cls, mode: Any = True) -> Any:
        if callable(mode) and not isinstance(mode, bool):
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def _set(self) -> tuple[bool, bool]:
        return (False if self.mode else STATE.enabled), self.mode

    def __enter__(self) -> None:
        super().__enter__()
        if self.mode:
            SLOW_PATH.acquire()

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        super().__exit__(t, e, tb)
        if self.mode:
            SLOW_PATH.release()

    def clone(self) -> _Mode:
        return inference_mode(self.mode)
