"""Anomaly detection: record forward tracebacks on graph nodes, report them when backward fails,
and (with ``check_nan``) fail when a backward function returns NaN."""

from __future__ import annotations

import os
import traceback
import warnings
from types import TracebackType

__all__ = ["detect_anomaly", "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "set_detect_anomaly"]


class _Anomaly:
    enabled = False
    check_nan = True


ANOMALY = _Anomaly()  # process-wide, as torch's

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def is_anomaly_enabled() -> bool:
    return ANOMALY.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return ANOMALY.check_nan


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """``torch.set_anomaly_enabled``: switch anomaly detection on or off (no context manager)."""
    ANOMALY.enabled, ANOMALY.check_nan = bool(enabled), bool(check_nan)


def forward_traceback() -> list[str]:
    """The current stack as ``traceback.format_list`` lines, without shapetorch's own frames."""
    frames = [f for f in traceback.extract_stack()[:-1] if not os.path.abspath(f.filename).startswith(_PKG)]
    return traceback.format_list(frames)


def report(node_name: str, trace: list[str] | None) -> None:
    """What torch prints (as a warning) before re-raising an error from a backward function."""
    if trace:
        warnings.warn(
            f"Error detected in {node_name}. Traceback of forward call that caused the error:\n" + "".join(trace),
            UserWarning, stacklevel=3,
        )


class detect_anomaly:
    """Context manager (or decorator) that enables anomaly detection; see the module docstring."""

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = ANOMALY.enabled
        self.check_nan = check_nan
        self.prev_check_nan = ANOMALY.check_nan
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should only be enabled "
            "for debugging.", UserWarning, stacklevel=2,
        )

    def __enter__(self) -> None:
        ANOMALY.enabled, ANOMALY.check_nan = True, self.check_nan

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        ANOMALY.enabled, ANOMALY.check_nan = self.prev, self.prev_check_nan

    def __call__(self, fn: object) -> object:
        import functools

        assert callable(fn)

        @functools.wraps(fn)
        def wrapper(*args: object, **kwargs: object) -> object:
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)

        return wrapper


class set_detect_anomaly:
    """Turns anomaly detection on or off when called; as a context manager, restores it on exit."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev, self.prev_check_nan = ANOMALY.enabled, ANOMALY.check_nan
        ANOMALY.enabled, ANOMALY.check_nan = bool(mode), bool(check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        ANOMALY.enabled, ANOMALY.check_nan = self.prev, self.prev_check_nan
