"""dtype and device conversion, copies, detach, where, clamp, and the bridges to Python and NumPy."""

from __future__ import annotations

import builtins
import numbers
from collections.abc import Iterator
from typing import Any

import numpy as np

from .. import _layout as L
from .._device import backend, device, to_device
from .._dtype import to_dtype
from .._engine.backward import backward as _run_backward
from .._engine.primitives import Prim
from .._errors import fail
from .._grad_mode import STATE
from .._rules import dtypes as RD
from .._rules.broadcast import broadcast_shapes
from .._tensor import Tensor, refresh_view
from ..backends.numpy_backend import NP_DTYPE
from ._common import as_node, cast, check, dtype_name, promoted
from ._registry import _guarded, method, public


def _cast_kernel(a: Any, dtype: Any) -> Any:
    if dtype.kind == "b" and a.dtype.kind == "c":  # true where either part is nonzero, as torch
        return a != 0
    if dtype.kind in "iu" and a.dtype.kind == "c":
        a = a.real
    with np.errstate(all="ignore"):
        if dtype == np.float16 and a.dtype == np.float64:
            # torch makes a half from a float: a float64 rounds to float32 first (twice rounded, which differs
            # from one rounding for a few values; an integer past float32's exact range overflows float16 anyway)
            a = a.astype(np.float32)
        return a.astype(dtype)


def _cast_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    src = n.inputs[0].dtype
    if not (src.is_floating_point or src.is_complex):
        return (None,)
    if g.is_complex() and not src.is_complex:
        g = g.real
    return (g.to(src),)


_CAST = Prim("to_copy", _cast_kernel, _cast_vjp)
_CLONE = Prim("clone", lambda a: a.copy(), lambda g, n: (g,))
_TO_DEVICE = Prim("to_device", None, lambda g, n: (g.to(n.inputs[0].device),))


def _to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``; copies only when something changes."""
    dtype = kwargs.pop("dtype", None)
    dev = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    for a in args:
        if isinstance(a, Tensor):
            dtype, dev = a.dtype, a.device
        elif isinstance(a, (device, str)) and not (isinstance(a, str) and _is_dtype_name(a)):
            dev = a
        else:
            if dtype is not None:
                fail("argument_error_refused", op="to", problem="received an invalid combination of arguments: "
                     f"two dtypes ({dtype}, {a})")
            dtype = a
    out = self
    if dev is not None and to_device(dev) != self._device:
        out = _move(out, to_device(dev))
    if dtype is not None and to_dtype(dtype) is not out.dtype:
        out = _CAST(out, dtype=NP_DTYPE[to_dtype(dtype)])
    if copy and out is self:
        out = _CLONE(self)
    return out


def _is_dtype_name(s: str) -> bool:
    try:
        to_dtype(s)
        return True
    except Exception:
        return False


def _move(t: Tensor, dev: device) -> Tensor:
    """Copy to another device, through host memory; differentiable."""
    src, dst = backend(t._device.type), backend(dev.type)
    host = src.to_numpy(t._data)
    out = Tensor._make(dst.from_numpy(np.asarray(host, order="C")), dev)  # ascontiguousarray would make 0-d 1-d
    from .._engine.backward import Node
    from .._grad_mode import STATE

    if t.requires_grad and STATE.enabled:
        if t._base is not None:
            refresh_view(t)  # (the node reads its grad_fn directly: NOTE [view + in-place])
        out._grad_fn, out.requires_grad = Node(_TO_DEVICE, (t,), {}, None), True
    return out


method("to", _to)
for _name, _dt in (("float", "float32"), ("double", "float64"), ("half", "float16"), ("bfloat16", "bfloat16"),
                   ("int", "int32"), ("long", "int64"), ("short", "int16"), ("char", "int8"), ("byte", "uint8"),
                   ("bool", "bool"), ("cfloat", "complex64"), ("cdouble", "complex128")):
    method(_name, lambda self, _d=_dt: _to(self, _d))
method("cpu", lambda self: _to(self, "cpu"))


def _cuda(self: Tensor, device: Any = None, non_blocking: bool = False, memory_format: Any = None) -> Tensor:
    fail("device_error_cuda_unavailable", op="cuda")


method("cuda", _cuda)
method("type_as", lambda self, other: _to(self, other.dtype))




@public("misc")
def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    """A copy that does not share storage; gradients flow back to ``input``."""
    return _CLONE(input)


@public("misc")
def detach(input: Tensor) -> Tensor:
    """The same storage without the graph: a view that does not require grad."""
    out = Tensor._make(input._shareable_data(), input._device)
    out._base = input._base if input._base is not None else input
    if out._base._inference and not STATE.inference:
        out._own_version = True  # (torch's: the in-place writes into it are allowed: Tensor._untracked)
    return out


def _detach_(self: Tensor) -> Tensor:
    self._grad_fn, self.requires_grad = None, False
    return self


method("detach_", _detach_)


def _order(memory_format: Any, ndim: int, op: str) -> tuple[int, ...] | None:
    """The dims outermost to innermost that ``memory_format`` asks for, None for row-major."""
    if memory_format is None or not isinstance(memory_format, L.memory_format):
        if memory_format is not None:
            raise TypeError(f"{op}(): argument 'memory_format' must be torch.memory_format, not {type(memory_format).__name__}")
        return None
    order = memory_format.order
    if order is not None and len(order) != ndim:
        fail("argument_error_invalid", op=op, problem=(
            f"required rank {len(order)} tensor to use {memory_format.name} format"))
    return order


def _in_order(a: Any, order: tuple[int, ...]) -> bool:
    return bool(np.transpose(a, order).flags.c_contiguous)


@public("misc")
def contiguous(input: Tensor, memory_format: Any = L.contiguous_format) -> Tensor:
    """``input`` itself when its strides already follow ``memory_format``, else a copy whose do: row-major, or
    channels innermost for ``channels_last`` (the values and gradients are the same either way)."""
    order = _order(memory_format, input._data.ndim, "contiguous")
    if order is None:
        return input if input._data.flags.c_contiguous else _CLONE(input)
    if _in_order(input._data, order):
        return input
    out = _CLONE(input)
    inverse = tuple(int(i) for i in np.argsort(order))
    out._data = np.ascontiguousarray(np.transpose(out._data, order)).transpose(inverse)
    return out


def _is_contiguous(self: Tensor, memory_format: Any = L.contiguous_format) -> bool:
    order = _order(memory_format, self._data.ndim, "is_contiguous")
    return bool(self._data.flags.c_contiguous) if order is None else _in_order(self._data, order)


method("is_contiguous", _is_contiguous)


def _stride(self: Tensor, dim: int | None = None) -> Any:
    item = self._data.itemsize
    strides = tuple(s // item for s in self._data.strides)
    return strides if dim is None else strides[dim]


method("stride", _stride)


def _resize_(self: Tensor, *sizes: Any, memory_format: Any = None) -> Tensor:
    """Give ``self`` a new shape in place: the first elements of its storage in row-major order, zeros past
    the end where it grows (torch leaves those uninitialised). As torch, refused on a tensor that requires grad."""
    from ._common import int_list

    shape = int_list(sizes, "resize_")
    if self.requires_grad:
        fail("argument_error_invalid", op="resize_", problem="cannot resize variables that require grad")
    if any(n < 0 for n in shape):
        fail("argument_error_invalid", op="resize_", problem=f"Trying to create tensor with negative dimension "
             f"{min(shape)}: {list(shape)}")
    flat = backend(self._device.type).to_numpy(self._data).reshape(-1)
    n = int(np.prod(shape, dtype=np.int64))
    if n > flat.size:
        flat = np.concatenate([flat, np.zeros(n - flat.size, flat.dtype)])
    self._data = backend(self._device.type).from_numpy(np.ascontiguousarray(flat[:n]).reshape(shape))
    self._bump_version()
    return self


method("resize_", _resize_)
def resize_as_(input: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    return _resize_(input, tuple(the_template.shape))


method("resize_as_", _guarded("resize_as_", resize_as_))


def _resize(self: Tensor, *sizes: Any) -> Tensor:
    """torch's deprecated out-of-place ``resize``: autograd's reshape to as many elements (it warns, as torch's)."""
    import math
    import warnings

    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    shape = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes
    n = self.numel()
    if any(type(s) is not int for s in shape) or math.prod(shape) != n:
        shown = "x".join(str(s) for s in shape)
        total = math.prod(shape) if all(type(s) is int for s in shape) else shape
        have = "x".join(str(s) for s in self.shape)
        fail("argument_error_invalid", op="resize", problem=f"requested resize to {shown} ({total} elements in total), "
             f"but the given tensor has a size of {have} ({n} elements). autograd's resize can only change the "
             "shape of a given tensor, while preserving the number of elements.")
    out: Tensor = self.reshape(shape)
    return out


def _resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    """torch's deprecated out-of-place ``resize_as``: ``resize`` to ``tensor``'s shape."""
    import warnings

    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return _resize(self, *tensor.shape)


method("resize", _resize)
method("resize_as", _resize_as)

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _where_kernel(cond: Any, a: Any, b: Any) -> Any:
    """``np.where(cond, a, b)``, for two arrays of one dtype of 1 to 8 bytes as bit operations: ``b ^ ((a ^ b) & m)``
    with ``m`` all ones where ``cond``, or ``(b & ~m) | (a & m)`` when ``a`` is one element (masked_fill), the mask's
    products made at the mask's own (often broadcast, smaller) shape. np.where picks each element with a branch:
    0.88 against 0.14 ms on a random (8, 4, 64, 64) float32 mask, 0.14 against 0.09 on a causal one (one thread).
    The same bits as np.where (a -0.0, a NaN's payload), and an inf or NaN of the side not taken stays out."""
    if not (type(a) is np.ndarray and type(b) is np.ndarray and type(cond) is np.ndarray and a.dtype == b.dtype
            and a.dtype.itemsize in _UINT and cond.dtype == np.bool_ and a.dtype.kind in "fciub"
            and (cond.ndim or a.ndim or b.ndim)):  # (0-d operands give NumPy scalars, not arrays)
        return np.where(cond, a, b)
    u = _UINT[a.dtype.itemsize]
    m = cond.astype(u)
    np.negative(m, out=m)  # 0 -> 0, 1 -> every bit set
    ab, bb = a.view(u), b.view(u)
    if a.ndim == 0:
        am = np.bitwise_and(m, ab)
        np.invert(m, out=m)
        out = np.bitwise_and(bb, m)
        out |= am
    elif b.ndim == 0:
        bm = np.bitwise_and(np.invert(m), bb)
        out = np.bitwise_and(ab, m)
        out |= bm
    else:
        x = np.bitwise_xor(ab, bb)
        out = np.bitwise_and(x, m, out=x if x.shape == np.broadcast_shapes(x.shape, m.shape) else None)
        out ^= bb
    return out.view(a.dtype)


def _where_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    """The gradient where each side was taken and 0 elsewhere, as a select (``g * cond`` would give NaN for an
    infinite gradient where the side was not taken); a side that needs none (masked_fill's value) gets none."""
    cond, a, b = n.inputs
    zero = g.new_zeros(())
    ga = _WHERE(cond, g, zero) if isinstance(a, Tensor) and (STATE.enabled or a._requires_grad) else None
    gb = _WHERE(cond, zero, g) if isinstance(b, Tensor) and (STATE.enabled or b._requires_grad) else None
    return None, ga, gb


_WHERE = Prim("where", _where_kernel, _where_vjp)


@public("pointwise")
def where(condition: Tensor, input: Any = None, other: Any = None, *, out: Tensor | None = None) -> Any:
    """Elements of ``input`` where ``condition`` else of ``other``; ``where(cond)`` is ``nonzero(as_tuple=True)``."""
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    if dtype_name(condition) == "uint8":  # torch still takes a uint8 condition (deprecated), as nonzero
        condition = condition != 0
    elif dtype_name(condition) != "bool":
        fail("dtype_error_mismatch", op="where", what="condition", a=condition.dtype.name, b="bool")
    shapes = [t._data.shape for t in (condition, input, other) if isinstance(t, Tensor)]
    check(broadcast_shapes, *shapes, op="where")
    common = promoted(*(x for x in (input, other)))
    result = _WHERE(condition, cast(input, common), cast(other, common))
    if result._data.shape != check(broadcast_shapes, *shapes, op="where"):  # scalars broadcast too
        result = result.expand(check(broadcast_shapes, *shapes, op="where"))
    return result if out is None else out.copy_(result)


def _where_method(self: Tensor, condition: Tensor, other: Any) -> Tensor:
    return where(condition, self, other)


method("where", _guarded("where", _where_method))  # the argument guard of a public op: this one is a method only


# -- the bridges --------------------------------------------------------------------------------------------

def _numpy(self: Tensor, *, force: bool = False) -> np.ndarray[Any, Any]:
    if self.requires_grad and not force:
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
    if isinstance(self._data, np.generic):  # a 0-d result held as a NumPy scalar becomes a 0-d array that the
        self._data = np.array(self._data)  # tensor and the caller share, as torch's numpy() shares memory
    return backend(self._device.type).to_numpy(self._data)


def _array(self: Tensor, dtype: Any = None, copy: Any = None) -> np.ndarray[Any, Any]:
    a = backend(self._device.type).to_numpy(self._data)
    if type(a) is not np.ndarray:  # a 0-d result held as a NumPy scalar: NumPy's protocol wants an array
        a = np.asarray(a)
    return a if dtype is None else a.astype(dtype)


def _item(self: Tensor) -> Any:
    if self._data.size != 1:
        fail("item_error_not_scalar", op="item", numel=self._data.size, shape=tuple(self._data.shape))
    v = backend(self._device.type).to_numpy(self._data).reshape(()).item()
    return float(v) if RD.is_floating(dtype_name(self)) else v


def _tolist(self: Tensor) -> Any:
    a = backend(self._device.type).to_numpy(self._data)
    if dtype_name(self) == "bfloat16":
        a = a.astype(np.float32)
    return a.tolist()


def _scalar(kind: type) -> Any:
    def convert(self: Tensor) -> Any:
        if self._data.size != 1:  # a ValueError here, where item() raises a RuntimeError: torch's choice
            fail("scalar_error_not_one_element", op=kind.__name__, numel=self._data.size, shape=tuple(self._data.shape))
        return kind(_item(self))

    return convert


def _format(self: Tensor, spec: str) -> str:
    """A 0-d tensor formats as its Python number (``f"{loss:.4f}"``); others only with an empty spec."""
    if self._data.ndim == 0:
        return format(_item(self), spec)
    return object.__format__(self, spec)


def _contains(self: Tensor, element: Any) -> bool:
    if not isinstance(element, (Tensor, numbers.Number, np.generic)):
        fail("contains_error_unsupported_element", op="__contains__", type=type(element))
    return bool((self == element).any().item())


def _iter(self: Tensor) -> Iterator[Tensor]:
    if self._data.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(self.unbind(0))


def _reversed(self: Tensor) -> Tensor:
    return self if self._data.ndim == 0 else self.flip(0)


def _rebuild_tensor(data: np.ndarray[Any, Any], dev: str, requires_grad: bool) -> Tensor:
    """Unpickle a tensor (pickle, ``copy``, multiprocessing): its values on its device, a leaf."""
    out = Tensor._make(backend(dev.split(":", maxsplit=1)[0]).from_numpy(data), to_device(dev))  # (NOTE [one device object])
    out.requires_grad = requires_grad
    return out


def _reduce_ex(self: Tensor, protocol: Any) -> Any:
    host = np.array(backend(self._device.type).to_numpy(self._data))  # a copy: the pickle owns its values
    return _rebuild_tensor, (host, str(self._device), self.requires_grad)


def _deepcopy(self: Tensor, memo: dict[int, Any]) -> Tensor:
    if self._grad_fn is not None:
        raise RuntimeError(
            "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment."
        )
    cls: Any = type(self)  # a subclass (Parameter) is made by its own constructor
    data = Tensor._make(self._data.copy(), self._device)
    out = data if cls is Tensor else cls.__new__(cls, data, self.requires_grad)
    out.requires_grad = self.requires_grad
    memo[id(self)] = out
    if self._grad is not None:
        out._grad = _deepcopy(self._grad, memo)
    return out


def _bool(self: Tensor) -> bool:
    if self._data.size != 1:
        raise RuntimeError(f"Boolean value of Tensor with {self._data.size} values is ambiguous")
    return bool(_item(self))


def _index(self: Tensor) -> int:
    if not RD.is_integral(dtype_name(self), include_bool=True) or self._data.size != 1:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return int(_item(self))


def _dlpack(self: Tensor, *args: Any, **kwargs: Any) -> Any:
    return _array(self).__dlpack__(*args, **kwargs)


def _dlpack_device(self: Tensor) -> Any:
    return _array(self).__dlpack_device__()


def _copy_(self: Tensor, src: Any, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` into ``self`` (broadcast, any dtype), as ``torch.Tensor.copy_``."""
    from ._common import check_no_partial_overlap, write_inplace

    if not isinstance(src, Tensor):
        from .creation import tensor

        src = tensor(src)
    check_no_partial_overlap(self, (src,), "copy_")
    value = src.to(self.device)
    if value._data.shape != self._data.shape:
        value = value.expand(self._data.shape)
    if value.dtype is not self.dtype:
        value = Tensor._make(_cast_kernel(value._data, self._data.dtype), self._device) if not value.requires_grad \
            else value.to(self.dtype)
    fresh = value is not src or value._base is not None  # a cast or a clone made here, which no one else holds
    if value._base is not None or (value is src and value.requires_grad and STATE.enabled):
        # ``self`` gets a node of its own (torch's CopyBackwards): taking ``src``'s node, or none for a leaf
        # ``src``, would make ``self`` a leaf or another output of that node, and cut ``src`` off from its gradient
        value = as_node(clone(value), "CopyBackwards", value)
        fresh = True
    return write_inplace(self, value, "copy_", temporary=fresh)


for _name, _fn in (
    ("numpy", _numpy), ("__array__", _array), ("item", _item), ("tolist", _tolist), ("__bool__", _bool),
    ("__float__", _scalar(float)), ("__int__", _scalar(int)), ("__complex__", _scalar(complex)),
    ("__index__", _index), ("__dlpack__", _dlpack), ("__dlpack_device__", _dlpack_device), ("copy_", _copy_),
    ("__format__", _format), ("__contains__", _contains), ("__iter__", _iter), ("__reversed__", _reversed),
    ("__reduce_ex__", _reduce_ex), ("__deepcopy__", _deepcopy),
):
    method(_name, _fn)


def _requires_grad_(self: Tensor, requires_grad: bool = True) -> Tensor:
    if self._grad_fn is not None and not requires_grad:
        raise RuntimeError("you can only change requires_grad flags of leaf variables.")
    if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
        fail("autograd_error_requires_grad_dtype", op="requires_grad_")
    self.requires_grad = requires_grad
    return self


method("requires_grad_", _requires_grad_)


def _backward(self: Tensor, gradient: Tensor | None = None, retain_graph: bool | None = None,
              create_graph: bool = False, inputs: Any = None) -> None:
    _run_backward(self, gradient, retain_graph, create_graph, inputs=inputs)


method("backward", _backward)


# -- SymInt helpers ---------------------------------------------------------------------------------------

@public("misc", method=False)
def sym_float(a: Any) -> float:
    """``float(a)``: symbolic sizes do not exist here, so this is the plain conversion torch falls back to."""
    if hasattr(a, "__sym_float__"):
        return builtins.float(a.__sym_float__())
    return builtins.float(a)


@public("misc", method=False)
def sym_int(a: Any) -> int:
    """``int(a)`` (truncating a float), as torch.sym_int does for plain values."""
    return builtins.int(a)


@public("misc", method=False)
def sym_not(a: Any) -> Any:
    """``not a`` (an object with ``__sym_not__`` negates itself)."""
    if hasattr(a, "__sym_not__"):
        return a.__sym_not__()
    return not a


@public("misc", method=False)
def get_device(input: Tensor) -> int:
    """``input.get_device()``: -1 on the CPU, the device's index elsewhere."""
    index: int = input.get_device()
    return index


@public("misc", method=False)
def is_inference(input: Tensor) -> bool:
    """``input.is_inference()``: whether it was made under ``inference_mode``."""
    return input.is_inference()


@public("misc", method=False)
def typename(obj: Any) -> str:
    """A tensor's type string (``shapetorch.FloatTensor``), else the object's module-qualified class name
    (without ``builtins.``), as ``torch.typename``."""
    if isinstance(obj, Tensor):
        return str(obj.type())
    # a class or function names itself; any other object is named by its class
    named = obj if hasattr(obj, "__qualname__") or hasattr(obj, "__name__") else type(obj)
    module = str(getattr(named, "__module__", "") or "")
    qualname = str(getattr(named, "__qualname__", None) or getattr(named, "__name__", ""))
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"
