"""Activation checkpointing (``torch.utils.checkpoint``): trade compute for memory by keeping only a
function's inputs in the forward and running the function again in the backward.

Two variants, as in torch:

- ``use_reentrant=False`` (recommended): the forward runs with grad mode on and a saved-tensor hook
  that drops every tensor the ops inside save for backward, keeping only its position. The first
  backward read of one of them runs the function again (same inputs, same random state) under a hook
  that collects what that run saves, and hands out the tensor at that position. Gradients flow to
  everything the function used, its parameters included, and ``autograd.grad`` works.
- ``use_reentrant=True`` (torch's default when the argument is left out, with its warning): the
  function runs under ``no_grad`` inside a custom ``autograd.Function``; its backward runs the
  function again with grad and calls ``autograd.backward`` on that graph. Only tensor arguments that
  require grad connect the result to the graph, ``**kwargs`` are refused, and it cannot serve
  ``autograd.grad`` or ``backward(inputs=...)`` (torch's errors).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from .._engine.backward import is_checkpoint_valid as _is_checkpoint_valid
from .._engine.graph import saved_tensors_hooks
from .._grad_mode import enable_grad
from .._tensor import Tensor
from ..autograd import backward
from ..autograd.function import Function
from ..nn.modules import Sequential
from ..ops.random import _snapshot

__all__ = ["checkpoint", "checkpoint_sequential", "noop_context_fn"]


def noop_context_fn() -> tuple[AbstractContextManager[Any], AbstractContextManager[Any]]:
    """The default ``context_fn``: no context around the forward run nor the recomputation."""
    return nullcontext(), nullcontext()


def _reentrant_default(where: str) -> bool:
    warnings.warn(
        f"{where}: the use_reentrant parameter should be passed explicitly. use_reentrant=False is recommended, "
        "but if you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs "
        "for more details on the differences between the two variants.", stacklevel=3)
    return True


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable[[], tuple[AbstractContextManager[Any], AbstractContextManager[Any]]]
               = noop_context_fn, determinism_check: str = "default", debug: bool = False, early_stop: bool = True,
               **kwargs: Any) -> Any:
    """``function(*args, **kwargs)``, keeping only the inputs for backward and recomputing the rest there.

    ``preserve_rng_state=True`` (a keyword, as in torch) replays the random state of the forward in the
    recomputation, so dropout inside ``function`` draws the same mask twice.
    """
    if use_reentrant is None:
        use_reentrant = _reentrant_default("shapetorch.utils.checkpoint")
    preserve = bool(kwargs.pop("preserve_rng_state", True))
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    if use_reentrant:
        if context_fn is not noop_context_fn or debug:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return _Reentrant.apply(function, preserve, *args)
    return _recomputed(function, args, kwargs, preserve, context_fn)


def checkpoint_sequential(functions: Sequential | Sequence[Callable[[Any], Any]], segments: int, input: Any,
                          use_reentrant: bool | None = None, **kwargs: Any) -> Any:
    """Run ``functions`` in order over ``input``, in ``segments`` chunks: every chunk but the last is checkpointed."""
    if use_reentrant is None:
        use_reentrant = _reentrant_default("shapetorch.utils.checkpoint.checkpoint_sequential")
    preserve = bool(kwargs.pop("preserve_rng_state", True))
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    fns = list(functions.children()) if isinstance(functions, Sequential) else list(functions)

    def run(start: int, end: int) -> Callable[[Any], Any]:
        def forward(x: Any) -> Any:
            for f in fns[start:end + 1]:
                x = f(x)
            return x
        return forward

    size = len(fns) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run(end + 1, len(fns) - 1)(input)


class _Frame:
    """One checkpointed call: how many tensors its forward saved, and (once recomputed) those tensors."""

    def __init__(self, rerun: Callable[[], None]) -> None:
        self.count = 0
        self.rerun = rerun
        self.values: list[Tensor] | None = None


def _recomputed(function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], preserve: bool,
                context_fn: Callable[[], tuple[AbstractContextManager[Any], AbstractContextManager[Any]]]) -> Any:
    forward_rng = _snapshot() if preserve else None
    forward_ctx, recompute_ctx = context_fn()

    def rerun() -> None:
        values: list[Tensor] = []
        outer_rng = _snapshot() if forward_rng is not None else None
        if forward_rng is not None:
            forward_rng()
        try:
            # the saves of this run are collected in order, so position i is the i-th save of the forward
            with saved_tensors_hooks(values.append, _unreachable), enable_grad(), recompute_ctx:
                function(*args, **kwargs)
        finally:
            if outer_rng is not None:
                outer_rng()
        if len(values) < frame.count:
            raise RuntimeError(
                f"shapetorch.utils.checkpoint: the recomputation saved {len(values)} tensors for backward where the "
                f"forward saved {frame.count}; the checkpointed function must run the same ops each time it is "
                "called (no data-dependent branches on state that changed since the forward)")
        frame.values = values

    frame = _Frame(rerun)

    def pack(t: Tensor) -> tuple[_Frame, int]:
        i = frame.count
        frame.count += 1
        return frame, i

    with saved_tensors_hooks(pack, _unpack), forward_ctx:
        return function(*args, **kwargs)


def _unpack(packed: tuple[_Frame, int]) -> Tensor:
    frame, i = packed
    if frame.values is None:
        frame.rerun()
    assert frame.values is not None
    return frame.values[i]


def _unreachable(packed: Any) -> Tensor:
    raise RuntimeError("shapetorch.utils.checkpoint: a tensor saved during recomputation was read back; the "
                       "recomputed graph is only used for its saved values")


class _Reentrant(Function):
    @staticmethod
    def forward(ctx: Any, run_function: Callable[..., Any], preserve: bool, *args: Any) -> Any:
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
        ctx.run_function = run_function
        ctx.rng = _snapshot() if preserve else None
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]  # the tensors go through save_for_backward
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        return run_function(*args)  # Function.forward runs under no_grad

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        if not _is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an `inputs` "
                "parameter to .backward(). To resolve this error, you can either set use_reentrant=False, or call "
                ".backward() without passing the `inputs` argument.")
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors, strict=True):
            inputs[i] = t
        detached = [_detach_like(a) for a in inputs]
        outer_rng = _snapshot() if ctx.rng is not None else None
        if ctx.rng is not None:
            ctx.rng()
        try:
            with enable_grad():
                outputs = ctx.run_function(*detached)
        finally:
            if outer_rng is not None:
                outer_rng()
        outs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
        pairs = [(o, g) for o, g in zip(outs, grads, strict=False) if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, *(a.grad if isinstance(a, Tensor) else None for a in detached))


def _detach_like(a: Any) -> Any:
    if not isinstance(a, Tensor):
        return a
    d = a.detach()
    return d.requires_grad_() if a.requires_grad else d
