"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode. Thread-local, as in torch."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class _State(threading.local):
    def __init__(self) -> None:
        self.enabled = True
        self.inference = False


STATE = _State()


def is_grad_enabled() -> bool:
    return STATE.enabled


def is_inference_mode_enabled() -> bool:
    return STATE.inference


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
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def clone(self) -> _Mode:
        return self


class no_grad(_Mode):
    def _set(self) -> tuple[bool, bool]:
        return False, STATE.inference

    def clone(self) -> _Mode:
        return no_grad()


class enable_grad(_Mode):
    def _set(self) -> tuple[bool, bool]:
        return True, STATE.inference

    def clone(self) -> _Mode:
        return enable_grad()


class set_grad_enabled(_Mode):
    """Sets the mode when called (as torch does), and restores the old one on exit."""

    def __init__(self, mode: bool) -> None:
        self.mode = mode
        self._before_call = (STATE.enabled, STATE.inference)
        STATE.enabled = mode

    def __enter__(self) -> None:
        self._prev = self._before_call
        STATE.enabled = self.mode

    def _set(self) -> tuple[bool, bool]:
        return self.mode, STATE.inference

    def clone(self) -> _Mode:
        return set_grad_enabled(self.mode)


class inference_mode(_Mode):
    def __init__(self, mode: bool = True) -> None:
        self.mode = mode

    def _set(self) -> tuple[bool, bool]:
        return (False if self.mode else STATE.enabled), self.mode

    def clone(self) -> _Mode:
        return inference_mode(self.mode)
