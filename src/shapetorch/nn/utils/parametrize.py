"""``nn.utils.parametrize``: a module's tensor computed from other parameters on every read, as torch's.

``register_parametrization(module, "weight", p)`` moves ``module.weight`` to
``module.parametrizations.weight.original`` (or ``original0``, ``original1``, ... when ``p.right_inverse``
splits it, as weight norm does) and makes ``module.weight`` a property that returns ``p(original)``: the
module's class becomes a subclass named ``Parametrized<Class>`` that carries the property, so the state dict
keys, ``named_parameters`` and the repr are torch's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from ..._tensor import Tensor
from ...autograd import no_grad
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization", "remove_parametrizations"]


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and the tensor's original value(s)."""

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        super().__init__(modules)
        self.unsafe = unsafe
        value: Any = original
        with no_grad():
            for m in reversed(list(self)):
                if hasattr(m, "right_inverse"):
                    try:
                        value = m.right_inverse(value)
                    except NotImplementedError:  # (torch's: a link that cannot invert keeps the value as it is)
                        pass
        self.is_tensor = isinstance(value, Tensor)
        self.ntensors = 1 if self.is_tensor else len(value)
        grad = original.requires_grad
        if self.is_tensor:
            self.original = Parameter(value.detach().clone(), requires_grad=grad)
        else:
            for i, v in enumerate(value):
                setattr(self, f"original{i}", Parameter(v.detach().clone(), requires_grad=grad))
        if not unsafe:
            # torch's consistency check, a call of the chain (so a spectral norm's power iteration runs once more)
            _same_kind(self(), original, "Registering a parametrization may not change the {what} of the tensor, "
                       "unless the `unsafe` flag is enabled.\nunparametrized {what}: {want}\nparametrized {what}: {got}")

    def right_inverse(self, value: Tensor) -> None:
        """Set the original(s) so that the parametrized tensor reads ``value``."""
        with no_grad():
            for m in reversed(list(self)):
                if hasattr(m, "right_inverse"):
                    try:
                        value = m.right_inverse(value)
                    except NotImplementedError:  # (torch's: a link that cannot invert keeps the value as it is)
                        pass
            if self.is_tensor:
                self.original.copy_(value)
            else:
                for i, v in enumerate(value):
                    getattr(self, f"original{i}").copy_(v)

    def forward(self) -> Tensor:
        mods = list(self)
        if self.is_tensor:
            x = mods[0](self.original)
        else:
            x = mods[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for m in mods[1:]:
            x = m(x)
        return x


def _same_kind(value: Any, like: Tensor, message: str) -> None:
    if not isinstance(value, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(value).__name__}.")
    for what, got, want in (("dtype", value.dtype, like.dtype), ("shape", value.shape, like.shape)):
        if got != want:
            raise ValueError(message.format(what=what, got=got, want=want))


def _inject(module: Module) -> None:
    """Give ``module`` a class of its own (``Parametrized<Class>``), so properties can be added to it alone."""
    cls = module.__class__
    new = type(f"Parametrized{cls.__name__}", (cls,), {"__module__": cls.__module__})
    module.__class__ = new
    object.__setattr__(module, "_parametrized_base", cls)


def _add_property(module: Module, name: str) -> None:
    def get(self: Module) -> Tensor:
        if _cache_depth:
            key = (id(self), name)
            hit = _cache.get(key)
            if hit is None:
                hit = _cache[key] = self.parametrizations[name]()
            return hit
        result: Tensor = self.parametrizations[name]()
        return result

    def set_(self: Module, value: Tensor) -> None:
        self.parametrizations[name].right_inverse(value)

    setattr(module.__class__, name, property(get, set_))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Parametrize ``module.<tensor_name>`` by ``parametrization`` (a second call appends to the chain)."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:  # torch's checks: the new link keeps the tensor's dtype and shape
            current = getattr(module, tensor_name)
            _same_kind(parametrization(current), current, "Registering a parametrization may not change the "
                       "{what} of the tensor, unless the `unsafe` flag is enabled.\nmodule." + tensor_name +
                       ".{what}: {want}\nparametrization(module." + tensor_name + ").{what}: {got}")
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= unsafe
        return module
    original = getattr(module, tensor_name)
    if not isinstance(original, Tensor):
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")
    plist = ParametrizationList([parametrization], original, unsafe=unsafe)
    for store in (module._parameters, module._buffers):
        store.pop(tensor_name, None)
    if not is_parametrized(module):
        _inject(module)
        module.parametrizations = ModuleDict()
    module.parametrizations[tensor_name] = plist
    _add_property(module, tensor_name)
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` (or its ``tensor_name``) has a parametrization."""
    plists = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(plists, ModuleDict):
        return False
    return tensor_name is None or tensor_name in plists._modules


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """Undo ``register_parametrization``: ``tensor_name`` becomes a plain parameter again, holding its
    parametrized value (``leave_parametrized``) or its original."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    with no_grad():
        if leave_parametrized:
            value = getattr(module, tensor_name)
        elif plist.is_tensor:
            value = plist.original
        else:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                             "parametrized in terms of a sequence of tensors.")
    delattr(module.__class__, tensor_name)
    del module.parametrizations._modules[tensor_name]
    module.register_parameter(tensor_name, Parameter(value.detach().clone(), requires_grad=True))
    if not module.parametrizations._modules:
        del module._modules["parametrizations"]
        module.__class__ = module.__dict__.pop("_parametrized_base")
    return module


_cache_depth = 0
_cache: dict[tuple[int, str], Tensor] = {}


@contextlib.contextmanager
def cached() -> Iterator[None]:
    """Inside this block each parametrized tensor is computed once, at its first read, and that tensor (one
    graph node) is returned by every later read, as torch's; the cache empties when the outermost block ends."""
    global _cache_depth
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if not _cache_depth:
            _cache.clear()
