"""Autocast state, read by the matmul family on every call; kept apart so ops can import it cheaply
(``shapetorch.config`` holds the public switches)."""

from __future__ import annotations

import threading

from ._dtype import DType, bfloat16, float16


class _AutocastState(threading.local):
    def __init__(self) -> None:
        self.enabled: dict[str, bool] = {}
        self.dtype: dict[str, type[DType]] = {"cpu": bfloat16, "webgpu": float16, "cuda": float16, "xla": bfloat16,
                                               "ipu": float16}
        self.cache_enabled = True
        self.nesting = 0


AUTOCAST = _AutocastState()


def autocast_dtype_for(device_type: str) -> type[DType] | None:
    """The dtype matmul-family ops cast to on ``device_type`` right now, or None outside autocast."""
    return AUTOCAST.dtype[device_type] if AUTOCAST.enabled.get(device_type) else None


