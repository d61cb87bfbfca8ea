"""The shapetorch mypy plugin: ``[mypy] plugins = shapetorch_mypy``.

It evaluates the same shape rules as the runtime (``shapetorch._rules``) over ``Tensor[Shape,
DType]`` types and reports a broken rule with its catalogue code. It imports nothing of the
runtime but the rules, so loading it never imports NumPy or wgpu.
"""

from __future__ import annotations

from .plugin import ShapetorchPlugin, plugin

__all__ = ["ShapetorchPlugin", "plugin"]
