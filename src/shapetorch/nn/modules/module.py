"""``nn.Module``: the base of every layer. Parameters, buffers and submodules are registered when
assigned as attributes, as in torch; state_dict / load_state_dict, train / eval, hooks and repr follow torch."""

from __future__ import annotations

import itertools
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

from ..._device import device as Device
from ..._dtype import float16, float32, float64
from ..._errors import fail
from ..._grad_mode import no_grad
from ..._tensor import Tensor
from ..parameter import Buffer, Parameter, is_lazy
from .backward_hooks import BackwardHook


class _IncompatibleKeys(NamedTuple):
    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self.missing_keys}, unexpected_keys={self.unexpected_keys})"


class RemovableHandle:
    """What register_*_hook returns: ``handle.remove()`` unregisters the hook."""

    _next_id = itertools.count()

    def __init__(self, hooks: dict[int, Any], extra: tuple[set[int] | dict[int, Any], ...] = ()) -> None:
        self.hooks = hooks
        self.extra = extra  # the sets that flag this hook (with_kwargs, always_call), cleared with it
        self.id = next(RemovableHandle._next_id)

    def remove(self) -> None:
        self.hooks.pop(self.id, None)
        for flags in self.extra:
            if isinstance(flags, set):
                flags.discard(self.id)
            else:
                flags.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *args: object) -> None:
        self.remove()


def _ordered(hooks: dict[int, Any], handle: RemovableHandle, hook: Any, prepend: bool) -> None:
    """Add ``hook`` under ``handle``'s id, first when ``prepend`` (dicts keep insertion order)."""
    hooks[handle.id] = hook
    if prepend:
        rest = [(k, v) for k, v in hooks.items() if k != handle.id]
        hooks.clear()
        hooks[handle.id] = hook
        hooks.update(rest)


class _GlobalHooks:
    """The hooks of ``nn.modules.module.register_module_*_hook``: run for every module, before its own."""

    def __init__(self) -> None:
        self.forward_pre: dict[int, Callable[..., Any]] = {}
        self.forward: dict[int, Callable[..., Any]] = {}
        self.backward: dict[int, Callable[..., Any]] = {}
        self.backward_pre: dict[int, Callable[..., Any]] = {}
        self.with_kwargs: set[int] = set()
        self.always_called: set[int] = set()
        self.buffer_registration: dict[int, Callable[..., Any]] = {}
        self.parameter_registration: dict[int, Callable[..., Any]] = {}
        self.module_registration: dict[int, Callable[..., Any]] = {}

    @staticmethod
    def registered(hooks: dict[int, Callable[..., Any]], module: Any, name: str, value: Any) -> Any:
        """``value`` after each registration hook (a hook returning None keeps it)."""
        for hook in list(hooks.values()):
            out = hook(module, name, value)
            if out is not None:
                value = out
        return value

    def any(self) -> bool:
        return bool(self.forward_pre or self.forward or self.backward or self.backward_pre)


_GLOBAL = _GlobalHooks()


def _add(table: dict[int, Any], hook: Callable[..., Any],
         extra: tuple[set[int] | dict[int, Any], ...] = ()) -> RemovableHandle:
    """Put ``hook`` in one of the global tables; the handle removes it (and its flags in ``extra``)."""
    handle = RemovableHandle(table, extra=extra)
    table[handle.id] = hook
    return handle


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, args)`` before every module's forward (and before the module's own pre-hooks)."""
    return _add(_GLOBAL.forward_pre, hook)


def register_module_forward_hook(hook: Callable[..., Any], *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """``hook(module, args, output)`` after every module's forward (before the module's own hooks)."""
    handle = _add(_GLOBAL.forward, hook, extra=(_GLOBAL.with_kwargs, _GLOBAL.always_called))
    if with_kwargs:
        _GLOBAL.with_kwargs.add(handle.id)
    if always_call:
        _GLOBAL.always_called.add(handle.id)
    return handle


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, grad_output)`` for every module, before the module's own backward pre-hooks."""
    return _add(_GLOBAL.backward_pre, hook)


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, grad_input, grad_output)`` for every module, before the module's own backward hooks."""
    return _add(_GLOBAL.backward, hook)


def register_module_buffer_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, name, buffer)`` whenever any module registers a buffer; a result replaces the buffer."""
    return _add(_GLOBAL.buffer_registration, hook)


def register_module_parameter_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, name, param)`` whenever any module registers a parameter; a result replaces it."""
    return _add(_GLOBAL.parameter_registration, hook)


def register_module_module_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, name, submodule)`` whenever any module registers a submodule; a result replaces it."""
    return _add(_GLOBAL.module_registration, hook)


def _addindent(s: str, n: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * n + line for line in lines[1:])


class Module:
    """Base class for all neural network modules (``torch.nn.Module``)."""

    training: bool
    _parameters: dict[str, Parameter | None]
    _buffers: dict[str, Tensor | None]
    _non_persistent_buffers_set: set[str]
    _modules: dict[str, Module | None]
    _forward_hooks: dict[int, Callable[..., Any]]
    _forward_pre_hooks: dict[int, Callable[..., Any]]
    _hooks_with_kwargs: set[int]
    _forward_hooks_always_called: set[int]
    _backward_hooks: dict[int, Callable[..., Any]]
    _backward_pre_hooks: dict[int, Callable[..., Any]]
    _state_dict_pre_hooks: dict[int, Callable[..., Any]]
    _state_dict_hooks: dict[int, Callable[..., Any]]
    _load_state_dict_pre_hooks: dict[int, Callable[..., Any]]
    _load_state_dict_post_hooks: dict[int, Callable[..., Any]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        d["_forward_hooks"] = {}
        d["_forward_pre_hooks"] = {}
        d["_hooks_with_kwargs"] = set()
        d["_forward_hooks_always_called"] = set()
        for name in ("_backward_hooks", "_backward_pre_hooks", "_state_dict_pre_hooks", "_state_dict_hooks",
                     "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks"):
            d[name] = {}

    forward: Callable[..., Any]

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        g = _GLOBAL  # (its any(), inlined: every module call asks)
        if not (self._forward_hooks or self._forward_pre_hooks or self._backward_hooks or self._backward_pre_hooks
                or g.forward_pre or g.forward or g.backward or g.backward_pre):
            return self.forward(*args, **kwargs)
        # torch's order: global then own forward pre-hooks; the inputs' backward hook; forward; global then own
        # forward hooks; the outputs' backward hook
        for hid, hook in [*_GLOBAL.forward_pre.items(), *self._forward_pre_hooks.items()]:
            if hid in self._hooks_with_kwargs:
                res = hook(self, args, kwargs)
                if res is not None:
                    if not (isinstance(res, tuple) and len(res) == 2):
                        fail("module_hook_error_result", problem="forward pre-hook must return None or a tuple of "
                                                                 f"(new_args, new_kwargs), but got {res}.")
                    args, kwargs = res
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
        backward_hooks = [*_GLOBAL.backward.values(), *self._backward_hooks.values()]
        backward_pre_hooks = [*_GLOBAL.backward_pre.values(), *self._backward_pre_hooks.values()]
        bw_hook = None
        if backward_hooks or backward_pre_hooks:
            bw_hook = BackwardHook(self, backward_hooks, backward_pre_hooks)
            args = bw_hook.setup_input_hook(args)
        forward_hooks = [*_GLOBAL.forward.items(), *self._forward_hooks.items()]
        called: set[int] = set()
        out = None
        try:
            out = self.forward(*args, **kwargs)
            for hid, hook in forward_hooks:
                called.add(hid)
                with_kwargs = hid in self._hooks_with_kwargs or hid in _GLOBAL.with_kwargs
                res = hook(self, args, kwargs, out) if with_kwargs else hook(self, args, out)
                if res is not None:
                    out = res
        except Exception:
            # hooks registered with always_call run even when forward (or an earlier hook) raised; their own
            # errors are turned into warnings so that the first error is the one raised
            for hid, hook in forward_hooks:
                if hid in called or not (hid in self._forward_hooks_always_called or hid in _GLOBAL.always_called):
                    continue
                try:
                    with_kwargs = hid in self._hooks_with_kwargs or hid in _GLOBAL.with_kwargs
                    res = hook(self, args, kwargs, out) if with_kwargs else hook(self, args, out)
                    if res is not None:
                        out = res
                except Exception as e:
                    warnings.warn("forward hook with ``always_call=True`` raised an exception that was silenced as "
                                  f"another error was raised in forward: {e}", stacklevel=2)
            raise
        if bw_hook is not None:
            if not isinstance(out, (Tensor, tuple)):
                warnings.warn("For backward hooks to be called, module output should be a Tensor or a tuple of "
                              f"Tensors but received {type(out)}", stacklevel=2)
            out = bw_hook.setup_output_hook(out)
        return out

    __call__ = _call_impl

    # -- registration -------------------------------------------------------------------------------
    def _check_init(self) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign before Module.__init__() call")

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        self._check_init()
        if "." in name or name == "":
            raise KeyError(f'parameter name can\'t contain "." or be empty, got {name!r}')
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            "(shapetorch.nn.Parameter or None required)")
        self._parameters[name] = _GLOBAL.registered(_GLOBAL.parameter_registration, self, name, param)

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        self._check_init()
        if "." in name or name == "":
            raise KeyError(f'buffer name can\'t contain "." or be empty, got {name!r}')
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' (Tensor or None required)")
        if isinstance(tensor, Buffer):
            tensor = Tensor._make(tensor._data, tensor._device)
        self._buffers[name] = _GLOBAL.registered(_GLOBAL.buffer_registration, self, name, tensor)
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if "." in name or name == "":
            raise KeyError(f'module name can\'t contain "." or be empty, got {name!r}')
        self._check_init()
        self._modules[name] = _GLOBAL.registered(_GLOBAL.module_registration, self, name, module)

    register_module = add_module

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_from(name, d, self._buffers, self._modules)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(shapetorch.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._remove_from(name, d, self._parameters, self._buffers)
            self._modules[name] = _GLOBAL.registered(_GLOBAL.module_registration, self, name, value)
        elif params is not None and name in d["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}'")
            d["_modules"][name] = None
        elif isinstance(value, Buffer) or (params is not None and name in d["_buffers"]):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' (Tensor or None expected)")
            persistent = value.persistent if isinstance(value, Buffer) else name not in self._non_persistent_buffers_set
            self._remove_from(name, d, self._parameters, self._modules)
            self.register_buffer(name, value, persistent)
        else:
            object.__setattr__(self, name, value)

    @staticmethod
    def _remove_from(name: str, *dicts: dict[str, Any]) -> None:
        for dd in dicts:
            dd.pop(name, None)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for key in ("_parameters", "_buffers", "_modules"):
            store = d.get(key)
            if store is not None and name in store:
                return store[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        return sorted(set(object.__dir__(self)) | set(self._parameters) | set(self._buffers) | set(self._modules))

    # -- traversal ----------------------------------------------------------------------------------
    def named_modules(self, memo: set[int] | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen: set[int] = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def _named_members(self, get: Callable[[Module], Any], prefix: str, recurse: bool,
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mprefix, m in mods:
            for k, v in get(m).items():
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(v))
                yield mprefix + ("." if mprefix else "") + k, v

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        return self._named_members(lambda m: m._parameters, prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        return self._named_members(lambda m: m._buffers, prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target: str) -> Module:
        mod: Module = self
        if not target:
            return mod
        for item in target.split("."):
            nxt = mod._modules.get(item)
            if nxt is None:
                raise AttributeError(f"{type(mod).__name__} has no attribute `{item}`")
            mod = nxt
        return mod

    def get_parameter(self, target: str) -> Parameter:
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        p = mod._parameters.get(name)
        if p is None:
            raise AttributeError(f"{type(mod).__name__} has no parameter `{name}`")
        return p

    def get_buffer(self, target: str) -> Tensor:
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        b = mod._buffers.get(name)
        if b is None:
            raise AttributeError(f"{type(mod).__name__} has no buffer `{name}`")
        return b

    # -- modes and parameters -----------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            m.__dict__["training"] = mode
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    p.grad = p.grad.detach() * 0

    def apply(self, fn: Callable[[Module], None]) -> Module:
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn: Callable[[Tensor], Tensor], floating_only: bool = False) -> Module:
        """Convert every parameter and buffer in place, keeping the Parameter objects (as torch does)."""
        for m in self.modules():
            for p in m._parameters.values():
                if p is None or (floating_only and not p.is_floating_point()):
                    continue
                new = fn(p.detach())
                p._data, p._device = new._data, new._device
                if p.grad is not None:
                    g = fn(p.grad)
                    p.grad = Tensor._make(g._data, g._device)
            for k, b in m._buffers.items():
                if b is None or (floating_only and not b.is_floating_point()):
                    continue
                if is_lazy(b):  # an uninitialized buffer keeps its class (its dtype and device change)
                    new = fn(b.detach())
                    b._data, b._device = new._data, new._device
                    continue
                m._buffers[k] = fn(b)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)``; dtypes change floating tensors only."""
        dtype = kwargs.pop("dtype", None)
        device = kwargs.pop("device", None)
        for a in args:
            if isinstance(a, (str, Device)):
                device = a
            elif isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            else:
                dtype = a
        if device is not None:
            self._apply(lambda t: t.to(device))
        if dtype is not None:
            self._apply(lambda t: t.to(dtype), floating_only=True)
        return self

    def cpu(self) -> Module:
        return self.to("cpu")

    def cuda(self, device: Any = None) -> Module:
        from ..._errors import fail

        fail("device_error_cuda_unavailable", op="Module.cuda")

    def float(self) -> Module:
        return self.to(float32)

    def double(self) -> Module:
        return self.to(float64)

    def half(self) -> Module:
        return self.to(float16)

    def type(self, dst_type: Any) -> Module:
        return self.to(dst_type)

    # -- state dicts --------------------------------------------------------------------------------
    def _save_to_state_dict(self, destination: dict[str, Any], prefix: str, keep_vars: bool) -> None:
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()

    def state_dict(self, *args: Any, destination: dict[str, Any] | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Any]:
        """An ordered mapping from dotted names to parameters and persistent buffers (detached)."""
        if destination is None:
            destination = OrderedDict()
        for hook in list(self._state_dict_pre_hooks.values()):
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in list(self._state_dict_hooks.values()):
            if hook(self, destination, prefix, {"version": 1}) is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _load_from_state_dict(self, state_dict: dict[str, Any], prefix: str, local_metadata: dict[str, Any],
                              strict: bool, missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str], assign: bool = False) -> None:
        """Load this module's own parameters and persistent buffers from ``state_dict`` (torch's per-module
        step: its load pre-hooks first; entries of a wrong type or shape are reported, the rest copied)."""
        for hook in list(self._load_state_dict_pre_hooks.values()):
            hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        local = {**{k: p for k, p in self._parameters.items() if p is not None},
                 **{k: b for k, b in self._buffers.items() if b is not None and k not in self._non_persistent_buffers_set}}
        for name, t in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            v = state_dict[key]
            if not isinstance(v, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                                  f"object from checkpoint but received {type(v)}")
                continue
            if is_lazy(t):  # uninitialized (the entry is too, or the lazy load hook had materialized it)
                continue
            if tuple(v.shape) != tuple(t.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {v.shape} from "
                                  f"checkpoint, the shape in current model is {t.shape}.")
                continue
            with no_grad():
                if assign:
                    t._data = v.to(t.device)._data.copy()
                else:
                    t.copy_(v)
        if strict:
            for key in state_dict:
                if not key.startswith(prefix):
                    continue
                head, *rest = key[len(prefix):].split(".", 1)
                if (rest and head not in self._modules) or (not rest and head not in local):
                    unexpected_keys.append(key)

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True, assign: bool = False) -> _IncompatibleKeys:
        """Copy values into the parameters and buffers; shapes must match. ``strict``: keys must match too.
        As torch: each module loads its own entries (after its load pre-hooks), then its children; its load
        post-hooks run after its children; the errors are raised at the end, what matched is loaded by then."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        state_dict = OrderedDict(state_dict)

        def load(module: Module, local_state: dict[str, Any], prefix: str = "") -> None:
            # strict is always True here, as in torch: the keys are collected and strict decides at the end
            module._load_from_state_dict(local_state, prefix, {"version": 1}, True, missing, unexpected, errors,
                                         assign)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local_state.items() if k.startswith(child_prefix)}, child_prefix)
            incompatible = _IncompatibleKeys(missing, unexpected)
            for hook in list(module._load_state_dict_post_hooks.values()):
                if hook(module, incompatible) is not None:
                    raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                         "expected to return new values, if incompatible_keys need to be modified, "
                                         "it should be done inplace.")

        load(self, state_dict)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            fail("load_state_dict_error_mismatch", op=type(self).__name__, problem="\n\t".join(errors))
        return _IncompatibleKeys(missing, unexpected)

    # -- hooks --------------------------------------------------------------------------------------
    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                              with_kwargs: bool = False, always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` (``hook(module, args, kwargs, output)`` with ``with_kwargs``) after
        forward; a result that is not None replaces the output. ``always_call``: run it even when forward raised."""
        handle = RemovableHandle(self._forward_hooks, extra=(self._hooks_with_kwargs, self._forward_hooks_always_called))
        _ordered(self._forward_hooks, handle, hook, prepend)
        if with_kwargs:
            self._hooks_with_kwargs.add(handle.id)
        if always_call:
            self._forward_hooks_always_called.add(handle.id)
        return handle

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` (``hook(module, args, kwargs)`` with ``with_kwargs``) before forward; a result
        that is not None replaces the arguments (``(args, kwargs)`` with ``with_kwargs``)."""
        handle = RemovableHandle(self._forward_pre_hooks, extra=(self._hooks_with_kwargs,))
        _ordered(self._forward_pre_hooks, handle, hook, prepend)
        if with_kwargs:
            self._hooks_with_kwargs.add(handle.id)
        return handle

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output)`` when the gradient of the outputs is known; a tuple returned replaces it."""
        handle = RemovableHandle(self._backward_pre_hooks)
        _ordered(self._backward_pre_hooks, handle, hook, prepend)
        return handle

    def register_full_backward_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` once the gradient of the positional inputs is known; a tuple
        returned replaces ``grad_input``."""
        handle = RemovableHandle(self._backward_hooks)
        _ordered(self._backward_hooks, handle, hook, prepend)
        return handle

    def register_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(module, prefix, keep_vars)`` before ``state_dict`` saves this module."""
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` after ``state_dict`` saved this module and its
        children; it changes ``state_dict`` in place and returns None."""
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)``
        before this module loads its own entries (it may rename or change them)."""
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(module, incompatible_keys)`` after this module and its children loaded; it may empty the key
        lists in place (a strict load then does not fail on them) and returns None."""
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    # -- repr ---------------------------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        for key, m in self._modules.items():
            lines.append(f"({key}): " + _addindent(repr(m), 2))
        main = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"
