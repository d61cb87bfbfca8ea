"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, overload

from ..parameter import Parameter
from .module import Module


class Container(Module):
    """Deprecated (as in torch): a Module whose keyword arguments become its children."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now implemented in `nn.Module`. "
                      "Subclass that instead.", FutureWarning, stacklevel=2)
        for key, value in kwargs.items():
            self.add_module(key, value)


class Sequential(Module):
    """Modules called in order; ``Sequential(a, b)`` or ``Sequential(OrderedDict(name=a, ...))``."""

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], (OrderedDict, dict)):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    @overload
    def __getitem__(self, idx: slice) -> Sequential: ...
    @overload
    def __getitem__(self, idx: int) -> Module: ...
    def __getitem__(self, idx: int | slice) -> Any:
        items = list(self._modules.items())
        if isinstance(idx, slice):
            return Sequential(OrderedDict(items[idx]))
        if not -len(items) <= idx < len(items):
            raise IndexError(f"index {idx} is out of range")
        return items[idx][1]

    def __setitem__(self, idx: int, module: Module) -> None:
        key = list(self._modules)[idx]
        self.add_module(key, module)

    def __delitem__(self, idx: int | slice) -> None:
        keys = list(self._modules)
        for k in keys[idx] if isinstance(idx, slice) else [keys[idx]]:
            del self._modules[k]
        self.__dict__["_modules"] = {str(i): m for i, m in enumerate(self._modules.values())} \
            if all(k.isdigit() for k in keys) else self._modules

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(m for m in self._modules.values() if m is not None)

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> Sequential:
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        mods = list(self._modules.values())
        mods.insert(index, module)
        self.__dict__["_modules"] = {str(i): m for i, m in enumerate(mods)}
        return self

    def forward(self, input: Any) -> Any:
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    """A list of modules, registered as children (indexable, iterable)."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx: int | slice) -> Any:
        mods = list(self._modules.values())
        if isinstance(idx, slice):
            return ModuleList(mods[idx])  # type: ignore[arg-type]
        if not -len(mods) <= idx < len(mods):
            raise IndexError(f"index {idx} is out of range")
        return mods[idx]

    def __setitem__(self, idx: int, module: Module) -> None:
        self.add_module(str(idx % len(self)), module)

    def __delitem__(self, idx: int | slice) -> None:
        mods = list(self._modules.values())
        del mods[idx]
        self.__dict__["_modules"] = {str(i): m for i, m in enumerate(mods)}

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(m for m in self._modules.values() if m is not None)

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        mods = list(self._modules.values())
        mods.insert(index, module)
        self.__dict__["_modules"] = {str(i): m for i, m in enumerate(mods)}


class ModuleDict(Module):
    """A dict of modules, registered as children in insertion order."""

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        m = self._modules[key]
        assert m is not None
        return m

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def keys(self) -> Iterable[str]:
        return self._modules.keys()

    def items(self) -> Iterable[tuple[str, Module | None]]:
        return self._modules.items()

    def values(self) -> Iterable[Module | None]:
        return self._modules.values()

    def pop(self, key: str) -> Module:
        m = self[key]
        del self._modules[key]
        return m

    def clear(self) -> None:
        self._modules.clear()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        pairs = modules.items() if isinstance(modules, Mapping) else modules
        for k, m in pairs:
            self[k] = m


class ParameterList(Module):
    def __init__(self, values: Iterable[Parameter] | None = None) -> None:
        super().__init__()
        for v in values or ():
            self.append(v)

    def append(self, value: Parameter) -> ParameterList:
        self.register_parameter(str(len(self._parameters)), value if isinstance(value, Parameter) else Parameter(value))
        return self

    def __getitem__(self, idx: int) -> Parameter:
        return list(self._parameters.values())[idx]  # type: ignore[return-value]

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(p for p in self._parameters.values() if p is not None)

    def extra_repr(self) -> str:
        # torch lists the parameters (they are not submodules, so the default repr shows nothing)
        return "\n".join(f"  ({k}): {_parameter_line(p, p.dtype)}" for k, p in enumerate(self))


def _parameter_line(p: Parameter, what: Any) -> str:
    """torch's one line for a parameter of a ParameterList/ParameterDict: ``what`` is its dtype (the list) or
    its legacy tensor type (the dict, as torch prints it)."""
    device = f" ({p.device})" if p.device.type != "cpu" else ""
    return f"Parameter containing: [{what} of size {'x'.join(str(s) for s in p.shape)}{device}]"


class ParameterDict(Module):
    def __init__(self, parameters: Mapping[str, Parameter] | None = None) -> None:
        super().__init__()
        for k, v in (parameters or {}).items():
            self[k] = v

    def __setitem__(self, key: str, value: Parameter) -> None:
        self.register_parameter(key, value if isinstance(value, Parameter) else Parameter(value))

    def __getitem__(self, key: str) -> Parameter:
        p = self._parameters[key]
        assert p is not None
        return p

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[str]:
        return iter(self._parameters)

    def keys(self) -> Iterable[str]:
        return self._parameters.keys()

    def extra_repr(self) -> str:
        return "\n".join(f"  ({k}): {_parameter_line(p, p.type())}" for k, p in self._parameters.items()
                         if p is not None)
