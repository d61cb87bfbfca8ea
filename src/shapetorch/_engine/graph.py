"""``shapetorch.autograd.graph``: the graph ``Node`` interface and the saved-tensor hooks.

Every ``grad_fn`` is a :class:`Node`: ``name()``, ``metadata``, ``next_functions``,
``register_hook`` and ``register_prehook``, and the tensors it saved for backward as
``_saved_<name>`` / ``_raw_saved_<name>`` attributes (``b = a.exp(); b.grad_fn._saved_result``).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Any

from .._tensor import Tensor

__all__ = [
    "Node", "RemovableHandle", "disable_saved_tensors_hooks", "save_on_cpu", "saved_tensors_hooks",
]

_SEQ = itertools.count()


class RemovableHandle:
    """What ``register_hook`` returns: ``remove()`` takes the hook out again (also as a context manager)."""

    _ids = itertools.count()

    def __init__(self, hooks: list[Any], hook: Any) -> None:
        self._hooks = hooks
        self._hook = hook
        self.id = next(self._ids)
        hooks.append(hook)

    def remove(self) -> None:
        for i, h in enumerate(self._hooks):
            if h is self._hook:
                del self._hooks[i]
                return

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class Node:
    """A node of the backward graph (``torch.autograd.graph.Node``).

    Subclasses: the engine's primitive node, ``AccumulateGrad`` (a leaf's node) and the node of a
    custom ``autograd.Function``. Hooks and metadata are made on first use.
    """

    _pre_hooks: list[Any] | None = None
    _post_hooks: list[Any] | None = None
    _tensor_pre_hooks: dict[int, list[Any]] | None = None  # hooks of the tensors this node produced
    _retain_refs: dict[int, Any] | None = None  # output_nr -> weakref of a tensor that retains grad
    _metadata: dict[str, Any] | None = None
    # True once any of the four hook fields above was made: the walk tests this one field per node (the engine's
    # nodes hold it as an instance value, NOTE [instance fields] in backward); never reset (a removed hook leaves
    # an empty list, which the general path handles)
    _hooked = True
    _next: tuple[tuple[Any, int], ...] = ()
    _seq: int = 0
    _num_outputs: int = 1

    def name(self) -> str:
        """The node's name, as torch spells it (``MulBackward0``)."""
        return type(self).__name__

    @property
    def metadata(self) -> dict[str, Any]:
        """A dict for the user's data; anomaly mode stores the forward traceback under ``traceback_``."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        """``(node, output_nr)`` per differentiable input; ``(None, 0)`` where an input needs no grad."""
        return self._next

    @property
    def requires_grad(self) -> bool:
        return True

    def register_hook(self, fn: Callable[[tuple[Any, ...], tuple[Any, ...]], Any]) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs) -> tuple | None`` runs after the node; a tuple replaces ``grad_inputs``."""
        if self._post_hooks is None:
            self._post_hooks = []
        self._hooked = True
        return RemovableHandle(self._post_hooks, fn)

    def register_prehook(self, fn: Callable[[tuple[Any, ...]], Any]) -> RemovableHandle:
        """``fn(grad_outputs) -> tuple | None`` runs before the node; a tuple replaces ``grad_outputs``."""
        if self._pre_hooks is None:
            self._pre_hooks = []
        self._hooked = True
        return RemovableHandle(self._pre_hooks, fn)

    def _register_hook_dict(self, tensor: Tensor) -> None:  # torch's name; kept for dir() parity
        return None

    # -- what the engine calls -------------------------------------------------------------------------
    def apply(self, grads: list[Any]) -> list[Any]:
        """Gradients w.r.t. this node's inputs (one per ``next_functions`` entry), given ``grads`` per output."""
        raise NotImplementedError(f"{self.name()} cannot be differentiated")

    def release(self) -> None:
        """Free what was saved for backward (after a backward without ``retain_graph``)."""

    def _saved_names(self) -> list[str]:
        return []

    def _get_saved(self, name: str, raw: bool) -> Any:
        raise AttributeError(name)

    def __call__(self, *grads: Any) -> Any:
        out = self.apply(list(grads))
        return out[0] if len(out) == 1 else tuple(out)

    # NOTE [no __getattr__]: ``_saved_<name>`` and ``_raw_saved_<name>`` are descriptors on the class (``saved_attrs``),
    # not a ``__getattr__``: a class with ``__getattr__`` makes CPython 3.11 take its slow generic path for every
    # attribute read on its instances (several times the cost), and the backward reads a node's fields many times.

    def __dir__(self) -> list[str]:
        saved = self._saved_names()
        names = {n for n in super().__dir__() if not n.startswith(("_saved_", "_raw_saved_"))}
        for s in saved:
            names |= {f"_saved_{s}", f"_raw_saved_{s}"}
        return sorted(names)

    def __repr__(self) -> str:
        # torch's repr shows the class name without its C++ namespace (``name()`` keeps it).
        return f"<{self.name().rsplit('::', 1)[-1]} object at {id(self):#x}>"


class _SavedAttr:
    """``node._saved_<name>`` (the unpacked tensor) or ``node._raw_saved_<name>`` (the ``SavedTensor``); an
    ``AttributeError`` on a node that saved no tensor of that name."""

    __slots__ = ("name", "raw")

    def __init__(self, name: str, raw: bool) -> None:
        self.name, self.raw = name, raw

    def __get__(self, node: Any, owner: Any = None) -> Any:
        if node is None:
            return self
        if self.name not in node._saved_names():
            raise AttributeError(f"'{type(node).__name__}' object has no attribute "
                                 f"'{'_raw_saved_' if self.raw else '_saved_'}{self.name}'")
        return node._get_saved(self.name, self.raw)


def saved_attrs(cls: type, names: Any) -> None:
    """Give ``cls`` the ``_saved_<name>`` and ``_raw_saved_<name>`` attributes of each of ``names``."""
    for n in names:
        if f"_saved_{n}" not in cls.__dict__:
            setattr(cls, f"_saved_{n}", _SavedAttr(n, False))
            setattr(cls, f"_raw_saved_{n}", _SavedAttr(n, True))


# -- saved-tensor hooks -----------------------------------------------------------------------------------

class _HookState(threading.local):
    def __init__(self) -> None:
        self.stack: list[tuple[Callable[[Any], Any], Callable[[Any], Any]]] = []
        self.disabled: str | None = None


HOOKS = _HookState()
# How many saved_tensors_hooks contexts are open, in all threads: while none is, an op saving a tensor skips the
# thread-local read of its own thread's stack (a threading.local attribute costs ten plain ones). Counted under
# a lock: an undercount would skip a thread's hooks.
HOOKS_OPEN = [0]
_OPEN_LOCK = threading.Lock()


def current_hooks() -> tuple[Callable[[Any], Any], Callable[[Any], Any]] | None:
    """The innermost (pack, unpack) pair, or None."""
    stack = HOOKS.stack
    return stack[-1] if stack else None


class saved_tensors_hooks:
    """Context manager: ``pack_hook(tensor) -> Any`` runs each time an op saves a tensor for backward,
    ``unpack_hook(packed) -> Tensor`` each time backward reads it. Only the innermost pair applies."""

    def __init__(self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> saved_tensors_hooks:
        if HOOKS.disabled is not None:
            raise RuntimeError(HOOKS.disabled)
        with _OPEN_LOCK:
            HOOKS_OPEN[0] += 1
        HOOKS.stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        HOOKS.stack.pop()
        with _OPEN_LOCK:
            HOOKS_OPEN[0] -= 1


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are moved to the CPU in forward and back to their device for backward (no copy
    when they are on the CPU already). ``pin_memory`` is accepted; the CPU has no pinned memory here."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(t: Tensor) -> tuple[Any, Tensor]:
            return (t.device, t if t.device.type == "cpu" else t.detach().to("cpu"))

        def unpack(packed: tuple[Any, Tensor]) -> Tensor:
            dev, t = packed
            return t if t.device == dev else t.to(dev)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Inside, using saved-tensor hooks raises ``RuntimeError(error_message)``."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        self._prev = HOOKS.disabled
        HOOKS.disabled = self.error_message

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        HOOKS.disabled = self._prev


def next_seq() -> int:
    return next(_SEQ)


# -- tensor hooks: Tensor methods that hand out a RemovableHandle, attached here (the tensor is below the graph) --

def _register_hook(self: Tensor, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
    """``hook(grad) -> Tensor | None`` runs each time the gradient w.r.t. this tensor is computed; a
    returned tensor replaces the gradient. Returns a handle with ``remove()``."""
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self._grad_fn is not None:
        fn = self._grad_fn
        if fn._tensor_pre_hooks is None:
            fn._tensor_pre_hooks = {}
        fn._hooked = True
        return RemovableHandle(fn._tensor_pre_hooks.setdefault(self._output_nr, []), hook)
    if self._hooks is None:
        self._hooks = []
    return RemovableHandle(self._hooks, hook)

def _register_post_accumulate_grad_hook(self: Tensor, hook: Callable[[Tensor], None]) -> RemovableHandle:
    """``hook(tensor)`` runs after a gradient is accumulated into this leaf's ``.grad``."""
    if self._grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if self._post_accumulate_hooks is None:
        self._post_accumulate_hooks = []
    return RemovableHandle(self._post_accumulate_hooks, hook)


Tensor.register_hook = _register_hook  # type: ignore[attr-defined]
Tensor.register_post_accumulate_grad_hook = _register_post_accumulate_grad_hook  # type: ignore[attr-defined]
