"""``nn.utils.prune``: masking a module's parameter to zero, torch's way.

Pruning ``module.<name>`` moves the parameter to ``<name>_orig``, registers a ``<name>_mask`` buffer and a forward
pre-hook (the pruning method itself) that recomputes ``module.<name> = <name>_orig * <name>_mask`` before each
forward, so the optimizer keeps training ``<name>_orig`` while the pruned entries stay zero in the forward.
Pruning the same tensor again combines the methods in a ``PruningContainer``: each later method only chooses among
the entries still unpruned. ``remove`` makes the pruning permanent (``<name>`` is a plain parameter again)."""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from typing import Any

from ..._errors import fail
from ..._tensor import Tensor
from ...ops.creation import ones_like, zeros_like
from ...ops.random import rand, rand_like
from ...ops.reduction import norm as _norm
from ...ops.sorting import kthvalue, topk
from ..modules.module import Module
from .convert_parameters import parameters_to_vector

__all__ = ["BasePruningMethod", "CustomFromMask", "Identity", "L1Unstructured", "LnStructured", "PruningContainer",
           "RandomStructured", "RandomUnstructured", "custom_from_mask", "global_unstructured", "identity",
           "is_pruned", "l1_unstructured", "ln_structured", "random_structured", "random_unstructured", "remove"]


class BasePruningMethod:
    """A pruning method: ``compute_mask`` says which entries to keep; the instance is also the forward pre-hook
    that applies the mask."""

    PRUNING_TYPE: str = "unstructured"
    _tensor_name: str

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        raise NotImplementedError

    def apply_mask(self, module: Module) -> Tensor:
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return orig * mask

    @classmethod
    def apply(cls, module: Module, name: str, *args: Any, importance_scores: Tensor | None = None,
              **kwargs: Any) -> BasePruningMethod:
        method = _composite_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            if tuple(importance_scores.shape) != tuple(orig.shape):
                fail("argument_error_invalid_value", op="prune",
                     problem=f"importance_scores should have the same shape as parameter {name} of {module}")
        else:
            importance_scores = orig
        first = not isinstance(method, PruningContainer)
        if first:
            # the parameter the optimizer holds becomes <name>_orig; <name> is recomputed from it
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:  # leave the module as it was
                module.register_parameter(name, module._parameters.pop(name + "_orig"))
            raise
        return method

    def prune(self, t: Tensor, default_mask: Tensor | None = None,
              importance_scores: Tensor | None = None) -> Tensor:
        """``t`` with this method's mask applied (the mask computed from ``importance_scores`` when given)."""
        scores = t if importance_scores is None else importance_scores
        mask = self.compute_mask(scores, default_mask=ones_like(t) if default_mask is None else default_mask)
        return t * mask

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: ``<name>`` becomes a parameter holding ``<name>_orig * <name>_mask``."""
        name = self._tensor_name
        weight = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters[name + "_orig"]
        assert orig is not None
        orig.data = weight.data
        del module._parameters[name + "_orig"]
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


def _composite_method(cls: type[BasePruningMethod], module: Module, name: str, *args: Any,
                      **kwargs: Any) -> BasePruningMethod:
    """The new method, or the tensor's earlier one(s) and the new one in a container; the earlier hook is taken
    off the module (the returned method is registered in its place)."""
    old: BasePruningMethod | None = None
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            old = hook
            del module._forward_pre_hooks[key]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if old is None:
        return method
    container = old if isinstance(old, PruningContainer) else PruningContainer(old)
    container.add_pruning_method(method)
    return container


class PruningContainer(BasePruningMethod):
    """Several pruning methods applied in turn to one tensor, each choosing among what the earlier left."""

    def __init__(self, *args: Any) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        if len(args) == 1 and not isinstance(args[0], BasePruningMethod) and isinstance(args[0], Iterable):
            args = tuple(args[0])
        if len(args) == 1 and isinstance(args[0], BasePruningMethod):
            self._tensor_name = args[0]._tensor_name
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method: Any) -> None:
        if not isinstance(method, BasePruningMethod):
            fail("argument_error_refused", op="add_pruning_method",
                 problem=f"{type(method)} is not a BasePruningMethod subclass")
        if self._tensor_name != method._tensor_name:
            fail("argument_error_invalid_value", op="add_pruning_method",
                 problem=f"Can only add pruning methods acting on the parameter named '{self._tensor_name}' to "
                         f"PruningContainer. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Any:
        return iter(self._pruning_methods)

    def __getitem__(self, idx: int) -> BasePruningMethod:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        method = self._pruning_methods[-1]
        mask = default_mask.to(dtype=t.dtype)
        slc: Any
        if method.PRUNING_TYPE == "unstructured":
            slc = mask == 1  # only the entries still kept
        elif method.PRUNING_TYPE == "structured":
            dim = getattr(method, "dim", -1)
            dim = dim + t.dim() if dim < 0 else dim
            others = [d for d in range(t.dim()) if d != dim]
            keep_channel = mask.sum(dim=others) != 0 if others else mask != 0
            slc = tuple(keep_channel if d == dim else slice(None) for d in range(t.dim()))
        elif method.PRUNING_TYPE == "global":
            slc = tuple(slice(None) for _ in range(t.dim()))
        else:
            fail("argument_error_invalid_value", op="PruningContainer",
                 problem=f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
        partial = method.compute_mask(t[slc], default_mask=mask[slc])
        mask[slc] = partial.to(dtype=mask.dtype)
        return mask


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str, *args: Any, importance_scores: Tensor | None = None,
              **kwargs: Any) -> BasePruningMethod:
        return super().apply(module, name)


def _zero_ranked(default_mask: Tensor, scores: Tensor, amount: int | float, *, largest: bool) -> Tensor:
    """``default_mask`` with the ``amount`` entries of the largest (or smallest) ``scores`` set to 0."""
    k = _count_to_prune(amount, scores.numel())
    mask = default_mask.clone()
    if k:
        flat = mask.reshape(-1).clone()
        flat[topk(scores.reshape(-1), k, largest=largest).indices] = 0
        mask = flat.view_as(mask)
    return mask


class RandomUnstructured(BasePruningMethod):
    """Prunes ``amount`` entries (a count, or a fraction of the tensor) chosen at random."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: int | float) -> None:
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return _zero_ranked(default_mask, rand_like(t), self.amount, largest=True)

    @classmethod
    def apply(cls, module: Module, name: str, *args: Any, importance_scores: Tensor | None = None,
              **kwargs: Any) -> BasePruningMethod:
        return super().apply(module, name, *args, **kwargs)


class L1Unstructured(BasePruningMethod):
    """Prunes the ``amount`` entries (a count, or a fraction of the tensor) of smallest absolute value."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: int | float) -> None:
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return _zero_ranked(default_mask, t.abs(), self.amount, largest=False)


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` whole slices along ``dim`` (channels of a conv weight), chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _check_structured(t, self.dim)
        size = t.shape[self.dim]
        k = _count_to_prune(self.amount, size)
        if k == 0:
            return default_mask
        prob = rand(size)
        keep = prob > kthvalue(prob, k).values
        return _slices_mask(t, self.dim, keep) * default_mask.to(dtype=t.dtype)


class LnStructured(BasePruningMethod):
    """Prunes the ``amount`` slices along ``dim`` of smallest L``n`` norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, n: Any, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _check_structured(t, self.dim)
        size = t.shape[self.dim]
        k = _count_to_prune(self.amount, size)
        if k == 0:
            return default_mask
        dim = self.dim + t.dim() if self.dim < 0 else self.dim
        norms = _norm(t, p=self.n, dim=[d for d in range(t.dim()) if d != dim])
        keep = topk(norms, size - k, largest=True).indices
        return _slices_mask(t, self.dim, keep) * default_mask.to(dtype=t.dtype)


class CustomFromMask(BasePruningMethod):
    """Prunes where the given ``mask`` is zero."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if tuple(default_mask.shape) != tuple(self.mask.shape):
            fail("argument_error_invalid_value", op="custom_from_mask",
                 problem=f"mask of shape {tuple(self.mask.shape)} does not match the tensor's "
                         f"{tuple(default_mask.shape)}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, *args: Any, importance_scores: Tensor | None = None,
              **kwargs: Any) -> BasePruningMethod:
        return super().apply(module, name, *args, **kwargs)


def identity(module: Module, name: str) -> Module:
    """Prune nothing, but put the ``<name>_orig`` / ``<name>_mask`` reparametrisation in place."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount: int | float) -> Module:
    """Zero ``amount`` entries of ``module.<name>`` chosen at random."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount: int | float,
                    importance_scores: Tensor | None = None) -> Module:
    """Zero the ``amount`` entries of ``module.<name>`` (or of ``importance_scores``) of smallest magnitude."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount: int | float, dim: int) -> Module:
    """Zero ``amount`` whole slices of ``module.<name>`` along ``dim``, chosen at random."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount: int | float, n: Any, dim: int,
                  importance_scores: Tensor | None = None) -> Module:
    """Zero the ``amount`` slices of ``module.<name>`` along ``dim`` of smallest L``n`` norm."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    """Zero ``module.<name>`` where ``mask`` is zero."""
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters: Iterable[tuple[Module, str]], pruning_method: type[BasePruningMethod],
                        importance_scores: dict[tuple[Module, str], Tensor] | None = None,
                        **kwargs: Any) -> None:
    """Prune across several tensors at once: the method sees them as one vector (so ``amount`` counts across
    all of them), and each tensor gets its part of the resulting mask."""
    if not isinstance(parameters, Iterable):
        fail("argument_error_refused", op="global_unstructured", problem="parameters is not an Iterable")
    parameters = list(parameters)
    scores = importance_scores or {}
    flat_scores = parameters_to_vector([scores.get((m, n), getattr(m, n)) for m, n in parameters])
    default_mask = parameters_to_vector([getattr(m, n + "_mask") if hasattr(m, n + "_mask")
                                         else ones_like(getattr(m, n)) for m, n in parameters])
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        fail("argument_error_refused", op="global_unstructured",
             problem=f'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                     f"{pruning_method} of type {method.PRUNING_TYPE}")
    container = PruningContainer(method)
    final_mask = container.compute_mask(flat_scores, default_mask)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        custom_from_mask(module, name, mask=final_mask[start:start + param.numel()].view_as(param))
        start += param.numel()


def remove(module: Module, name: str) -> Module:
    """Make the pruning of ``module.<name>`` permanent and take the reparametrisation off."""
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    fail("argument_error_invalid_value", op="remove", problem=f"Parameter '{name}' of module {module} has to be "
                                                              "pruned before pruning can be removed")


def is_pruned(module: Module) -> bool:
    """Whether any submodule of ``module`` has a pruning hook."""
    return any(isinstance(hook, BasePruningMethod)
               for m in module.modules() for hook in m._forward_pre_hooks.values())


def _check_amount(amount: Any) -> None:
    if not isinstance(amount, numbers.Real):  # numbers.Real: an int, a float or a NumPy scalar, as torch takes
        fail("argument_error_refused", op="prune", problem=f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and int(amount) < 0) or (
            not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0):
        fail("argument_error_invalid_value", op="prune",
             problem=f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _count_to_prune(amount: Any, size: int) -> int:
    if isinstance(amount, numbers.Integral):
        if int(amount) > size:
            fail("argument_error_invalid_value", op="prune",
                 problem=f"amount={amount} should be smaller than the number of parameters to prune={size}")
        return int(amount)
    return round(amount * size)


def _check_structured(t: Tensor, dim: int) -> None:
    if t.dim() <= 1:
        fail("argument_error_invalid_value", op="prune",
             problem=f"Structured pruning can only be applied to multidimensional tensors. Found tensor of shape "
                     f"{t.shape} with {t.dim()} dims")
    if dim >= t.dim():  # torch refuses only a dim past the end here (IndexError); a too-negative one fails later
        fail("dimension_error_out_of_range", op="prune", lo=-t.dim(), hi=t.dim() - 1, dim=dim)


def _slices_mask(t: Tensor, dim: int, index: Tensor) -> Tensor:
    """Ones on the slices of ``t`` along ``dim`` that ``index`` selects (indices or a boolean mask), zeros
    elsewhere."""
    mask = zeros_like(t)
    mask[tuple(index if d == (dim % t.dim()) else slice(None) for d in range(t.dim()))] = 1
    return mask
