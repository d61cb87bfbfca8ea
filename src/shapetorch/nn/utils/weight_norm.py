"""``nn.utils.weight_norm`` / ``remove_weight_norm``: torch's older, hook-based weight normalisation.

The weight becomes two parameters, ``<name>_g`` (magnitude) and ``<name>_v`` (direction), and a forward pre-hook
recomputes ``<name> = g * v / ||v||`` before each forward. The math is ``parametrizations.weight_norm``'s."""

from __future__ import annotations

import warnings
from typing import Any

from ..._grad_mode import no_grad
from ..._tensor import Tensor
from ..modules.module import Module
from ..parameter import Parameter, UninitializedParameter
from .parametrizations import _norm_except_dim, _WeightNorm

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and ``<name>_v``."""

    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Tensor:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _WeightNorm(self.dim)(g, v)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, -1 if dim is None else dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized parameters. Make sure to "
                             "run the dummy forward before applying weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (the norm over every dim but ``dim``; over all of
    them for ``dim=None``), with ``<name>_g`` and ``<name>_v`` as the parameters. Deprecated in torch in favour
    of ``parametrizations.weight_norm``, and warns as it does."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo ``weight_norm``: ``<name>`` is a parameter again, holding the current ``g * v / ||v||``."""
    return remove_reparametrization(module, WeightNorm, name, "weight_norm")


def remove_reparametrization(module: Module, hook_class: type, name: str, what: str) -> Module:
    """Undo a hook-based reparametrization (``weight_norm``, ``spectral_norm``) of ``module.<name>``: its hook
    writes the current weight back as a parameter and is taken off the module."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, hook_class) and getattr(hook, "name", None) == name:
            hook.remove(module)  # type: ignore[attr-defined]  # hook_class's instances have remove
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"{what} of '{name}' not found in {module}")
