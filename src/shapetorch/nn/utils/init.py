"""``nn.utils.skip_init``: a module whose parameters and buffers are left uninitialized."""

from __future__ import annotations

import inspect
from typing import Any

from ..._grad_mode import no_grad
from ...ops.creation import empty_like
from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls: Any, *args: Any, **kwargs: Any) -> Any:
    """``module_cls(*args, **kwargs)`` with uninitialized parameters and buffers, on ``device``.

    torch builds the module on the meta device and allocates afterwards, so no initialisation runs; shapetorch
    has no meta device, so the module is built (its init runs) and then every tensor gets fresh storage, which
    gives the same result: values that must be set before use."""
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    module = module_cls(*args, **kwargs)
    with no_grad():
        for m in module.modules():
            for p in m._parameters.values():
                if p is not None:
                    p.data = empty_like(p)
            for k, b in m._buffers.items():
                if b is not None:
                    m._buffers[k] = empty_like(b)
    return module
