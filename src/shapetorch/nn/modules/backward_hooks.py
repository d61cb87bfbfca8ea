"""A module call's full backward hooks (``register_full_backward_pre_hook`` / ``register_full_backward_hook``).

As in torch, the call's positional tensor inputs and its tensor outputs each pass through one identity
``Function``: the gradient reaching the outputs' node is ``grad_output`` (the pre-hooks may replace it), the
gradient leaving the inputs' node is ``grad_input`` (the hooks may replace it). The inputs' node runs once every
gradient of the module's inside has arrived, so a hook sees the finished ``grad_input``. The outputs are views
made by a custom Function, so an in-place op on them is refused, as torch refuses it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from ..._errors import fail
from ..._grad_mode import is_grad_enabled
from ..._tensor import Tensor
from ...autograd.function import Function


class BackwardHookFunction(Function):
    """Identity over its tensor arguments; its backward hands the gradients to ``on_grads`` (named as torch's)."""

    @staticmethod
    def forward(ctx: Any, on_grads: Callable[[tuple[Any, ...]], tuple[Any, ...] | None], materialize: bool,
                *args: Tensor) -> Any:
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        # as in torch, grad_output has None for an output without a gradient, grad_input zeros for an input
        ctx.set_materialize_grads(materialize)
        ctx.on_grads = on_grads
        return args

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        res = ctx.on_grads(grads)
        return (None, None, *(grads if res is None else res))


class BackwardHook:
    """The state of one module call with full backward hooks: what ``grad_output`` was, until ``grad_input`` is known."""

    def __init__(self, module: Any, hooks: Sequence[Callable[..., Any]], pre_hooks: Sequence[Callable[..., Any]]) -> None:
        self.module = module
        self.hooks = list(hooks)
        self.pre_hooks = list(pre_hooks)
        self.grad_outputs: tuple[Any, ...] | None = None
        self.n_inputs = 0
        self.n_outputs = 0
        self.input_index: list[int] | None = None
        self.output_index: list[int] | None = None

    @staticmethod
    def _pack(index: Sequence[int], values: Sequence[Any], n: int) -> tuple[Any, ...]:
        out: list[Any] = [None] * n
        for i, v in zip(index, values):
            out[i] = v
        return tuple(out)

    @staticmethod
    def _through(args: tuple[Any, ...], on_grads: Callable[..., Any],
                 materialize: bool) -> tuple[tuple[Any, ...], list[int] | None]:
        index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not (is_grad_enabled() and any(args[i].requires_grad for i in index)):
            return args, None
        new = BackwardHookFunction.apply(on_grads, materialize, *(args[i] for i in index))
        out = list(args)
        for i, t in zip(index, new):
            out[i] = t
        return tuple(out), index

    def setup_input_hook(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        res, self.input_index = self._through(args, self._on_input_grads, True)
        self.n_inputs = len(args)
        return res

    def setup_output_hook(self, result: Any) -> Any:
        is_tuple = isinstance(result, tuple)
        outs = result if is_tuple else (result,)
        res, self.output_index = self._through(outs, self._on_output_grads, False)
        self.n_outputs = len(outs)
        return res if is_tuple else res[0]

    def _on_output_grads(self, grads: tuple[Any, ...]) -> tuple[Any, ...] | None:
        assert self.output_index is not None
        self.grad_outputs = self._pack(self.output_index, grads, self.n_outputs)
        replaced = None
        if self.pre_hooks:
            expected = len(self.grad_outputs)
            for hook in self.pre_hooks:
                res = hook(self.module, self.grad_outputs)
                if res is None:
                    continue
                if len(res) != expected:
                    fail("module_hook_error_result", problem=f"Backward pre hook returned an invalid number of "
                                                             f"grad_output, got {len(res)}, but expected {expected}")
                self.grad_outputs = res
            replaced = self.grad_outputs
        if self.input_index is None:  # no input takes a gradient: the hooks run now, with grad_input all None
            grad_inputs = self._pack([], [], self.n_inputs)
            if self.hooks:
                warnings.warn("Full backward hook is firing when gradients are computed with respect to module "
                              "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/main/"
                              "generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more "
                              "details.", UserWarning, stacklevel=2)
            for hook in self.hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                    fail("module_hook_error_result", problem="Backward hook for Modules where no input requires "
                                                             "gradient should always return None or None for all "
                                                             "gradients.")
            self.grad_outputs = None
        if replaced is not None:
            return tuple(replaced[i] for i in self.output_index)
        return None

    def _on_input_grads(self, grads: tuple[Any, ...]) -> tuple[Any, ...] | None:
        if self.grad_outputs is None:  # the gradient reached the inputs without passing the outputs
            return None
        assert self.input_index is not None
        res = self._pack(self.input_index, grads, self.n_inputs)
        for hook in self.hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                fail("module_hook_error_result", problem=f"Backward hook returned an invalid number of grad_input, "
                                                         f"got {len(out)}, but expected {len(res)}")
            res = out
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_index)
