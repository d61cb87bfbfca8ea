"""The extension API: add kernels, gradients, ops, functions, methods, dtypes and devices, and ask
what exists (``list_*``, ``has_*``, ``get_op_info``, ``coverage_report``).

Everything here reads and writes the same tables the built-in ops use (``PRIMS``, ``FUNCTIONS``,
``METHODS``, ``DTYPES``, the device loaders), so a registered op is a first-class op: it dispatches
by device, records gradients, and runs its shape rule before its kernel.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _device
from ._dtype import DTYPES, DType, to_dtype
from ._engine.primitives import PRIMS, Prim
from ._errors import fail
from ._rules import dtypes as RD
from ._rules.errors import did_you_mean
from ._tensor import Tensor
from .backends import numpy_backend
from .ops._common import check
from .ops._registry import CATEGORY, FUNCTIONS, METHODS, method, public

_BUILTIN_DTYPES = frozenset(DTYPES)
_BUILTIN_DEVICES = frozenset(_device.BACKEND_LOADERS)


@dataclass
class Handle:
    """Returned by each ``register_*``; ``unregister()`` undoes the registration."""

    what: str
    undo: Callable[[], None]

    def unregister(self) -> None:
        self.undo()


def _prim(op: str, caller: str) -> Prim:
    if op not in PRIMS:
        fail("op_not_found_error", op=caller, name=op, hint=did_you_mean(op, PRIMS))
    return PRIMS[op]


def _callable(fn: object, caller: str, what: str) -> None:
    if not callable(fn):
        fail("invalid_config_error", op=caller, problem=f"{what} must be callable, got {type(fn).__name__}")


class _ByDtype:
    """A kernel that serves some dtypes itself and hands the others to the kernel it replaced."""

    def __init__(self, kernel: Callable[..., Any], dtypes: frozenset[str], fallback: Callable[..., Any] | None) -> None:
        self.kernel, self.dtypes, self.fallback = kernel, dtypes, fallback

    def __call__(self, *args: Any, **params: Any) -> Any:
        first = next((a for a in args if hasattr(a, "dtype")), None)
        name = numpy_backend.DTYPE_OF[first.dtype].name if first is not None and first.dtype in numpy_backend.DTYPE_OF \
            else None
        if name in self.dtypes:
            return self.kernel(*args, **params)
        if self.fallback is None:
            fail("kernel_not_registered_error", op="dispatch", device="(registered)", dtype=name, hint="")
        return self.fallback(*args, **params)


def register_forward(op: str, device: str, kernel: Callable[..., Any], *, dtypes: Sequence[Any] | None = None) -> Handle:
    """The kernel of primitive ``op`` on ``device`` (for all dtypes, or only ``dtypes``)."""
    prim = _prim(op, "register_forward")
    _callable(kernel, "register_forward", "kernel")
    if device not in _device.BACKEND_LOADERS:
        fail("device_error_requires", op="register_forward", problem=f"unknown device {device!r}")
    before = prim.kernels.get(device)
    if dtypes is not None:
        kernel = _ByDtype(kernel, frozenset(to_dtype(d).name for d in dtypes), before)
    prim.kernels[device] = kernel
    return Handle(f"kernel {op}@{device}", _restore_kernel(prim, device, before))


def _restore_kernel(prim: Prim, device: str, before: Callable[..., Any] | None) -> Callable[[], None]:
    def undo() -> None:
        if before is None:
            prim.kernels.pop(device, None)
        else:
            prim.kernels[device] = before

    return undo


def register_scalar_forward(op: str, device: str, kernel: Callable[..., Any]) -> Handle:
    """A kernel for the tensor-op-scalar form (``add(t, 2)``); tensor-tensor calls keep the old kernel."""
    prim = _prim(op, "register_scalar_forward")
    _callable(kernel, "register_scalar_forward", "kernel")
    before = prim.kernels.get(device)

    def dispatch(*args: Any, **params: Any) -> Any:
        if len(args) == 2 and not hasattr(args[1], "shape"):
            return kernel(*args, **params)
        if before is None:
            fail("kernel_not_registered_error", op=op, device=device, dtype="tensor operands", hint="")
        return before(*args, **params)

    prim.kernels[device] = dispatch
    return Handle(f"scalar kernel {op}@{device}", _restore_kernel(prim, device, before))


def register_backward(op: str, backward: Callable[..., Any]) -> Handle:
    """``backward(grad, *inputs, output=..., **params) -> one gradient per input`` (None where there is none).

    The engine undoes broadcasting, so a backward returns gradients of the broadcast shape if it likes.
    A wrong number of gradients raises ``autograd_gradient_mismatch_error``.
    """
    prim = _prim(op, "register_backward")
    _callable(backward, "register_backward", "backward")
    before, saved = prim.vjp, prim.save_output

    def vjp(g: Tensor, node: Any) -> tuple[Any, ...]:
        grads = backward(g, *node.inputs, output=node.out, **node.params)
        grads = grads if isinstance(grads, tuple) else (grads,)
        if len(grads) != len(node.inputs):
            fail("autograd_gradient_mismatch_error", op=op,
                 problem=f"backward returned an incorrect number of gradients (expected {len(node.inputs)}, "
                         f"got {len(grads)})")
        return grads

    prim.vjp, prim.save_output = vjp, True

    def undo() -> None:
        prim.vjp, prim.save_output = before, saved

    return Handle(f"backward {op}", undo)


def register_function(name: str, fn: Callable[..., Any], *, override: bool = False, category: str = "custom") -> Handle:
    """``shapetorch.<name>``: a new namespace function."""
    _callable(fn, "register_function", "fn")
    if name in FUNCTIONS and not override:
        fail("function_already_registered_error", op="register_function", name=name)
    before = FUNCTIONS.get(name)
    FUNCTIONS[name] = fn
    CATEGORY.setdefault(name, category)

    def undo() -> None:
        if before is None:
            FUNCTIONS.pop(name, None)
            CATEGORY.pop(name, None)
        else:
            FUNCTIONS[name] = before
        import shapetorch

        shapetorch.__dict__.pop(name, None)

    return Handle(f"function {name}", undo)


def register_method(name: str, fn: Callable[..., Any], *, override: bool = False) -> Handle:
    """``Tensor.<name>``: a new method (the tensor is the first argument)."""
    _callable(fn, "register_method", "fn")
    if (name in METHODS or hasattr(Tensor, name)) and not override:
        fail("method_already_registered_error", op="register_method", name=name)
    before = METHODS.get(name)
    method(name, fn)

    def undo() -> None:
        if before is None:
            METHODS.pop(name, None)
            delattr(Tensor, name)
        else:
            method(name, before)

    return Handle(f"method {name}", undo)


def register_op(
    name: str, *, forward: Callable[..., Any] | dict[str, Callable[..., Any]],
    shape: Callable[..., Any] | None = None, backward: Callable[..., Any] | None = None, method: bool = True,
) -> Callable[..., Tensor]:
    """One call for a whole new op: kernels, the shape rule run before them, and the gradient.

    ``shape(*input_shapes)`` is a rule in the style of ``shapetorch._rules``: it returns the output
    shape or raises ``RuleError``; the op raises the matching user error before any kernel runs.
    """
    if name in PRIMS or name in FUNCTIONS:
        fail("function_already_registered_error", op="register_op", name=name)
    kernels = forward if isinstance(forward, dict) else {"cpu": forward}
    prim = Prim(name, None)
    for device, kernel in kernels.items():
        register_forward(name, device, kernel)
    if backward is not None:
        register_backward(name, backward)

    def op(*inputs: Any, **params: Any) -> Tensor:
        if shape is not None:
            check(shape, *(t._data.shape for t in inputs if isinstance(t, Tensor)))
        return prim(*inputs, **params)

    op.__name__ = op.__qualname__ = name
    return public("custom", method=method)(op)


def register_dtype(name: str, *, storage: str, components: int = 1) -> type[DType]:
    """A new dtype stored as the NumPy dtype ``storage`` (1 component real, 2 complex)."""
    if name in DTYPES:
        fail("dtype_already_registered_error", op="register_dtype", name=name)
    np_dtype = np.dtype(storage)
    if components not in (1, 2) or (components == 2) != (np_dtype.kind == "c"):
        fail("dtype_components_mismatch_error", op="register_dtype",
             problem=f"{components} component(s) do not fit storage {storage!r} (kind {np_dtype.kind!r})")
    kind = {"b": "b", "u": "u", "i": "i", "f": "f", "c": "c"}.get(np_dtype.kind)
    if kind is None:
        fail("invalid_config_error", op="register_dtype", problem=f"unsupported storage {storage!r}")
    RD.DTYPES[name] = RD.DTypeInfo(name, kind, np_dtype.itemsize * 8)
    cls = type(name, (DType,), {"name": name})
    numpy_backend.NP_DTYPE[cls] = np_dtype
    numpy_backend.DTYPE_OF.setdefault(np_dtype, cls)
    return cls


# -- introspection ------------------------------------------------------------------------------------------

def _every_function() -> dict[str, Callable[..., Any]]:
    """The whole table: torch's names for nn functions (``conv2d``, ...) register when nn loads, so load it."""
    import shapetorch.nn.toplevel  # noqa: F401

    return FUNCTIONS


def list_ops() -> list[str]:
    return sorted(_every_function())


def list_functions() -> list[str]:
    return sorted(_every_function())


def list_methods() -> list[str]:
    return sorted(METHODS)


def list_primitives() -> list[str]:
    return sorted(PRIMS)


def list_kernels(op: str | None = None, device: str | None = None) -> list[tuple[str, str]]:
    return sorted((p.name, d) for p in PRIMS.values() for d in p.kernels
                  if (op is None or p.name == op) and (device is None or d == device))


def list_dtypes() -> list[type[DType]]:
    return list(DTYPES.values())


def list_custom_dtypes() -> list[type[DType]]:
    return [d for n, d in DTYPES.items() if n not in _BUILTIN_DTYPES]


def list_custom_devices() -> list[str]:
    return [d for d in _device.BACKEND_LOADERS if d not in _BUILTIN_DEVICES]


def has_kernel(op: str, device: str = "cpu") -> bool:
    return op in PRIMS and device in PRIMS[op].kernels


def has_autograd(op: str) -> bool:
    return op in PRIMS and PRIMS[op].vjp is not None


def has_dtype(name: str) -> bool:
    return name in DTYPES


def has_device(name: str) -> bool:
    return name in _device.BACKEND_LOADERS


def has_function(name: str) -> bool:
    return name in FUNCTIONS


def has_method(name: str) -> bool:
    return name in METHODS


def get_op_info(name: str) -> dict[str, Any]:
    """What is known about a public op or primitive: category, devices with kernels, autograd, docs."""
    if name not in _every_function() and name not in PRIMS:
        fail("op_not_found_error", op="get_op_info", name=name, hint=did_you_mean(name, [*FUNCTIONS, *PRIMS]))
    prim = PRIMS.get(name)
    fn = FUNCTIONS.get(name)
    return {
        "name": name,
        "category": CATEGORY.get(name, "primitive"),
        "primitive": prim is not None,
        "devices": sorted(prim.kernels) if prim else sorted(_device.BACKEND_LOADERS),
        "has_autograd": prim.vjp is not None if prim else None,
        "method": name in METHODS,
        "doc": (fn.__doc__ if fn else "") or "",
    }


def get_dtype_info(dtype: Any) -> dict[str, Any]:
    """bits, min, max, eps (floats), and the kind predicates: torch.finfo / iinfo in one place."""
    d = to_dtype(dtype)
    np_dtype = numpy_backend.NP_DTYPE[d]
    info: dict[str, Any] = {"name": d.name, "bits": np_dtype.itemsize * 8, "is_floating_point": d.is_floating_point,
                            "is_complex": d.is_complex, "is_signed": d.is_signed}
    if np_dtype.kind in "iu":
        ii = np.iinfo(np_dtype)
        info.update(min=int(ii.min), max=int(ii.max))
    elif np_dtype.kind == "b":
        info.update(min=False, max=True)
    else:
        real = np_dtype if np_dtype.kind == "f" else np.dtype(f"f{np_dtype.itemsize // 2}")
        fi = np.finfo(real) if real.kind == "f" or np_dtype.kind == "c" else np.finfo(np.float32)
        info.update(min=float(fi.min), max=float(fi.max), eps=float(fi.eps), tiny=float(fi.tiny))
    return info


def get_real_dtype(dtype: Any) -> type[DType]:
    return to_dtype(dtype).to_real()


def is_complex_dtype(dtype: Any) -> bool:
    return bool(to_dtype(dtype).is_complex)


def is_floating_point_dtype(dtype: Any) -> bool:
    return bool(to_dtype(dtype).is_floating_point)


# -- coverage -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CoverageEntry:
    op: str
    device: str
    dtype: str
    forward: bool
    backward: bool


def _sample(dtype: type[DType], device: str) -> Tensor:
    from .ops.creation import tensor

    values = [[1, 0], [2, 1]] if dtype.name == "bool" else [[0.5, 1.5], [2.0, 3.0]] if dtype.is_floating_point \
        or dtype.is_complex else [[1, 2], [3, 1]]
    return tensor(values, dtype=dtype, device=device)


def _try_forward(fn: Callable[..., Any], x: Tensor) -> Tensor | None:
    for args in ((x,), (x, x)):
        try:
            out = fn(*args)
        except Exception:  # coverage probes every op blindly; any refusal means "not supported"
            continue
        return out if isinstance(out, Tensor) else None
    return None


def coverage_report(ops: Sequence[str] | None = None, devices: Sequence[str] | None = None) -> list[CoverageEntry]:
    """Probe each tensor-in, tensor-out op on a small sample of each dtype and device.

    An entry says whether the forward ran, and whether a gradient flowed back to the input. Ops that
    need more than one or two tensor arguments of one shape are probed as such and may show False.
    """
    from ._grad_mode import enable_grad

    _every_function()
    names = sorted(ops if ops is not None else (n for n, c in CATEGORY.items() if c not in _NOT_PROBED))
    devs = list(devices) if devices is not None else ["cpu"]
    rows = []
    for name in names:
        fn = FUNCTIONS[name]
        for device in devs:
            for d in DTYPES.values():
                if d.name not in _BUILTIN_DTYPES:
                    continue
                out = _try_forward(fn, _sample(d, device))
                backward = False
                if out is not None and (d.is_floating_point or d.is_complex) and d.name in ("float32", "float64"):
                    x = _sample(d, device).requires_grad_(True)
                    with enable_grad():
                        y = _try_forward(fn, x)
                        if y is not None and y.requires_grad and math.prod(y._data.shape) > 0:
                            try:
                                y.sum().backward()
                                backward = x.grad is not None
                            except Exception:  # a primitive without a gradient rule
                                backward = False
                rows.append(CoverageEntry(name, device, d.name, out is not None, backward))
    return rows


# Ops that do not take tensors of one shape as their leading arguments are not probed.
# not probed with one or two same-shaped tensors: factories, configuration, joins; the top-level spellings of
# in-place methods and of nn functions (their dtypes are those of the method and of nn.functional's function)
_NOT_PROBED = {"creation", "random", "config", "memory", "device", "serialization", "einsum", "einops", "joining",
               "inplace", "nn"}

__all__ = [
    "CoverageEntry", "Handle", "coverage_report", "get_dtype_info", "get_op_info", "get_real_dtype", "has_autograd",
    "has_device", "has_dtype", "has_function", "has_kernel", "has_method", "is_complex_dtype",
    "is_floating_point_dtype", "list_custom_devices", "list_custom_dtypes", "list_dtypes", "list_functions",
    "list_kernels", "list_methods", "list_ops", "list_primitives", "register_backward", "register_dtype",
    "register_forward", "register_function", "register_method", "register_op", "register_scalar_forward",
]
