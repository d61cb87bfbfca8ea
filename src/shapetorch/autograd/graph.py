"""``shapetorch.autograd.graph``: the graph ``Node`` interface and the saved-tensor hooks.

They live in the engine (``shapetorch._engine.graph``), below the ops that record nodes; this is their
public module, as ``torch.autograd.graph``.
"""

from .._engine.graph import Node, RemovableHandle, disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks

__all__ = ["Node", "RemovableHandle", "disable_saved_tensors_hooks", "save_on_cpu", "saved_tensors_hooks"]
