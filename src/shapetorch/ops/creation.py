"""Making tensors: tensor, as_tensor, from_numpy, zeros/ones/full/empty (and *_like, new_*), arange,
linspace, logspace, eye."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._device import backend, to_device
from .._dtype import DType, get_default_dtype, to_dtype
from .._errors import fail
from .._grad_mode import STATE
from .._rules import dtypes as RD
from .._rules.creation import arange_length
from .._tensor import Tensor, forget_view
from ..backends.numpy_backend import DTYPE_OF, NP_DTYPE
from ._common import allocating, check, check_fill_value, int_list, new_sizes
from ._registry import _guarded, method, public


def _on(arr: np.ndarray[Any, Any], dev: Any, requires_grad: bool = False) -> Tensor:
    d = to_device(dev)
    data = arr if d.type == "cpu" else backend(d.type).from_numpy(np.asarray(arr, order="C"))  # keeps 0-d
    t = Tensor._make(data, d)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _infer(arr: np.ndarray[Any, Any], from_python: bool) -> type[DType]:
    """The dtype torch.tensor infers: Python floats take the default dtype; NumPy keeps its own."""
    kind = arr.dtype.kind
    if from_python or kind == "O":
        if kind == "f" or arr.dtype == np.float64:
            return get_default_dtype()
        if kind == "c":
            return to_dtype(RD.to_complex(get_default_dtype().name))
        if kind in "iu":
            return to_dtype("int64")
        if kind == "b":
            return to_dtype("bool")
    if arr.dtype in DTYPE_OF:
        return DTYPE_OF[arr.dtype]
    raise TypeError(f"can't convert np.ndarray of type {arr.dtype}; supported types are bool, integers, floats, complex")


def _contains_tensor_or_numpy(data: Any) -> bool:
    return isinstance(data, (Tensor, np.ndarray, np.generic))


@public("creation", method=False)
def tensor(data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor copying ``data`` (nested lists, numbers, NumPy arrays, tensors)."""
    if isinstance(data, Tensor):
        arr = np.array(data.detach().cpu().numpy(), copy=True)
        from_python = False
    else:
        from_python = not _contains_tensor_or_numpy(data)
        try:
            arr = np.array(data)
        except ValueError as e:
            raise ValueError(f"tensor(): could not make a tensor from ragged or invalid data: {e}") from None
        if arr.dtype.kind == "O":
            raise TypeError(f"tensor(): could not infer a dtype for {type(data).__name__} data")
        if arr.dtype.kind in "US":
            raise TypeError("tensor(): new(): invalid data type 'str'")
    d = to_dtype(dtype) if dtype is not None else _infer(arr, from_python)
    if from_python and arr.size and arr.dtype.kind in "iufc":  # each number converted as torch checks it
        for v in (arr.max(), arr.min()) if arr.dtype.kind != "c" else (arr.reshape(-1)[np.argmax(abs(arr.imag))],):
            check_fill_value(v.item(), d.name, "tensor")
    if d.is_complex is False and arr.dtype.kind == "c":
        arr = arr.real
    with np.errstate(all="ignore"):
        arr = np.array(arr, dtype=NP_DTYPE[d], copy=True)
    return _on(arr, device, requires_grad)


@public("creation", method=False)
def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Like ``tensor`` but shares memory with a tensor or NumPy array when dtype and device allow."""
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype) if dtype is not None or device is not None else data
    if isinstance(data, np.ndarray) and (dtype is None or NP_DTYPE[to_dtype(dtype)] == data.dtype) \
            and to_device(device).type == "cpu" and data.dtype in DTYPE_OF:
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


@public("creation", method=False)
def from_numpy(ndarray: np.ndarray[Any, Any]) -> Tensor:
    """A tensor sharing memory with ``ndarray``: writes to either show in both."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if ndarray.dtype not in DTYPE_OF:
        raise TypeError(f"can't convert np.ndarray of type {ndarray.dtype}")
    return Tensor._make(ndarray)


@public("creation", method=False)
def from_dlpack(ext_tensor: Any) -> Tensor:
    """A tensor sharing memory with any object that implements the DLPack protocol (CPU)."""
    return from_numpy(np.from_dlpack(ext_tensor))


def _filled(size: Any, value: Any, dtype: Any, dev: Any, requires_grad: bool, op: str) -> Tensor:
    if not size:
        raise TypeError(f'{op}() missing 1 required positional argument: "size"')
    shape = new_sizes(size, op)
    d = to_dtype(dtype) if dtype is not None else _value_dtype(value)
    value = check_fill_value(value, d.name, op)
    where = to_device(dev)
    if where.type != "cpu":  # filled by a kernel: nothing is uploaded
        fill = 0 if value is None else NP_DTYPE[d].type(value) if d.name != "bool" else bool(value)
        t = Tensor._make(backend(where.type).full(tuple(shape), fill, NP_DTYPE[d]), where)
        return t.requires_grad_(True) if requires_grad else t
    with allocating(op):
        arr = np.full(shape, value, dtype=NP_DTYPE[d]) if value is not None else np.empty(shape, dtype=NP_DTYPE[d])
    return _on(arr, dev, requires_grad)


def _value_dtype(value: Any) -> type[DType]:
    if value is None or isinstance(value, float):
        return get_default_dtype()
    return to_dtype(RD.scalar_dtype(value, get_default_dtype().name))


@public("creation", method=False)
def zeros(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False, out: Any = None) -> Tensor:
    return _filled(size, 0, dtype or get_default_dtype(), device, requires_grad, "zeros")


@public("creation", method=False)
def ones(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False, out: Any = None) -> Tensor:
    return _filled(size, 1, dtype or get_default_dtype(), device, requires_grad, "ones")


@public("creation", method=False)
def empty(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False, out: Any = None) -> Tensor:
    """Uninitialised in torch; zeros here (NumPy's empty memory is not worth the nondeterminism)."""
    return _filled(size, 0, dtype or get_default_dtype(), device, requires_grad, "empty")


@public("creation", method=False)
def full(size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return _filled((size,), _number(fill_value, "full"), dtype, device, requires_grad, "full")


def _number(value: Any, op: str, name: str = "fill_value", position: int = 2) -> Any:
    """A fill value as torch's parser takes it: a number or a 0-d tensor's value (a None would make an
    uninitialised tensor: that is ``empty``; a tensor of more dims is no Number either)."""
    if isinstance(value, Tensor) and value._data.ndim == 0:
        value = value.item()
    if not isinstance(value, (bool, int, float, complex, np.number)):
        fail("argument_error_type", op=op, name=name, position=f" (position {position})", expected="Number",
             got=type(value).__name__)
    return value


def _like(maker: str, value: Any) -> Any:
    def fn(input: Tensor, *args: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
           memory_format: Any = None) -> Tensor:
        if len(args) > (1 if value is None else 0):
            fail("argument_error_signature", op=maker, problem=f"takes {2 if value is None else 1} positional arguments "
                                                                 f"but {1 + len(args)} were given")
        fill = args[0] if args else value
        if value is None:  # full_like: the fill value is required, and a number
            if not args:
                fail("argument_error_signature", op=maker, problem="missing 1 required positional argument: 'fill_value'")
            fill = _number(fill, maker)
        d = dtype if dtype is not None else input.dtype
        return _filled((input._data.shape,), fill, d, device if device is not None else input.device, requires_grad,
                       maker)

    fn.__name__ = fn.__qualname__ = maker
    fn.__doc__ = f"``{maker}``: a new tensor with the shape (and by default dtype and device) of ``input``."
    return public("creation", method=False)(fn)


zeros_like = _like("zeros_like", 0)
ones_like = _like("ones_like", 1)
empty_like = _like("empty_like", 0)
full_like = _like("full_like", None)


def _new(maker: str, value: Any) -> None:
    names = ("size", "fill_value") if maker == "new_full" else ("size",)

    def fn(self: Tensor, *args: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
           **named: Any) -> Tensor:
        for name in names[len(args):]:  # torch's keywords for what is not given by position (``new_zeros(size=...)``)
            if name in named:
                args = (*args, named.pop(name))
        if named:
            fail("argument_error_signature", op=maker, problem=f"got an unexpected keyword argument '{next(iter(named))}'")
        if maker == "new_full":
            if len(args) != 2:
                fail("argument_error_signature", op=maker,
                     problem=f'missing 1 required positional arguments: "{names[len(args)]}"' if len(args) < 2
                     else f"takes 2 positional arguments but {len(args)} were given")
            size, fill = args[0], _number(args[1], maker)
        else:
            size, fill = args, value
        return _filled((size,) if maker == "new_full" else size, fill, dtype if dtype is not None else self.dtype,
                       device if device is not None else self.device, requires_grad, maker)

    fn.__name__ = fn.__qualname__ = maker
    method(maker, fn)


for _m, _v in (("new_zeros", 0), ("new_ones", 1), ("new_empty", 0), ("new_full", None)):
    _new(_m, _v)


def _new_tensor(self: Tensor, data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return tensor(data, dtype=dtype if dtype is not None else self.dtype, device=device or self.device,
                  requires_grad=requires_grad)


# behind their argument guards: torch's new_* take the options by keyword only (x.new_tensor(data, torch.int64)
# is a TypeError), and a wrong call names the method, not this module's function
method("new_tensor", _guarded("new_tensor", _new_tensor))


@public("creation", method=False)
def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """``[start, end)`` in steps; integer arguments give int64, floats the default dtype."""
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    n = check(arange_length, vals[0], vals[1], vals[2], op="arange")
    is_float = any(isinstance(v, float) for v in vals)
    d = to_dtype(dtype) if dtype is not None else (get_default_dtype() if is_float else to_dtype("int64"))
    where = to_device(device)
    if where.type != "cpu" and not is_float and d.name in ("int32", "int64"):  # integers made by a kernel
        t = Tensor._make(backend(where.type).arange(int(vals[0]), int(vals[2]), n, NP_DTYPE[d]), where)
        return t.requires_grad_(True) if requires_grad else t
    arr = (vals[0] + np.arange(n, dtype=np.float64 if is_float else np.int64) * vals[2]).astype(NP_DTYPE[d])
    return _on(arr, device, requires_grad)


@public("creation", method=False)
def linspace(start: Any, end: Any, steps: int, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    if steps < 0:
        raise RuntimeError("linspace(): number of steps must be non-negative")
    d = to_dtype(dtype) if dtype is not None else get_default_dtype()
    s, e = (v.item() if isinstance(v, Tensor) else v for v in (start, end))
    return _on(linspace_values(s, e, steps, NP_DTYPE[d]), device, requires_grad)


def _fma64(a: Any, b: Any, c: Any) -> Any:
    """``a * b + c`` rounded once, in float64 without a hardware fma: the product split exactly into
    ``p + err`` (Dekker's two-product), then the sum of ``p`` and ``c`` with its rounding error recovered."""
    p = a * b
    split = 134217729.0  # 2**27 + 1
    ah = split * a - (split * a - a)
    bh = split * b - (split * b - b)
    err = ((ah * bh - p) + ah * (b - bh) + (a - ah) * bh) + (a - ah) * (b - bh)
    s = p + c
    back = s - p
    return s + (((p - (s - back)) + (c - back)) + err)


def linspace_values(start: Any, end: Any, steps: int, dtype: Any) -> Any:
    """``steps`` evenly spaced values as torch's CPU kernel makes them, bit for bit in float32 and float64:
    the first half counted up from ``start`` and the second half down from ``end`` (for symmetry), with the
    step in the output dtype and each value ``start + step * i`` rounded once (a fused multiply-add, which a
    float32 product and sum carried in float64 reproduces). Integer dtypes step in float64, also fused
    (``44 + (-84/9) * 3`` is 15.999… there, so 15, where a rounded product gives 16), and truncate."""
    dt = np.dtype(dtype)
    if steps == 1:
        return np.array([start]).astype(dt)
    i = np.arange(steps, dtype=np.float64)
    up, down = i < steps // 2, steps - 1 - i
    if dt == np.float64:
        s, e = np.float64(start), np.float64(end)
        step = (e - s) / (steps - 1)
        arr = np.where(up, _fma64(step, i, s), _fma64(-step, down, e))
    elif dt == np.float32:  # a float32 product is exact in float64, so one rounding of the sum is the fma's
        s32, e32 = np.float32(start), np.float32(end)
        step = np.float64((e32 - s32) / np.float32(steps - 1))
        arr = np.where(up, np.float64(s32) + step * i, np.float64(e32) - step * down)
    else:  # integers: the ends are truncated first (a C cast), then stepped in float64
        lo, hi = (float(int(v)) if dt.kind in "iu" else v for v in (start, end))
        step_f = (hi - lo) / (steps - 1)
        arr = np.where(up, _fma64(step_f, i, lo), _fma64(-step_f, down, hi))
    if dt.kind in "iub":
        arr = np.trunc(arr)
    return arr.astype(dt)


@public("creation", method=False)
def logspace(start: Any, end: Any, steps: int, base: float = 10.0, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    exps = linspace(start, end, steps, dtype="float64")._data
    d = to_dtype(dtype) if dtype is not None else get_default_dtype()
    return _on(np.power(base, exps).astype(NP_DTYPE[d]), device, requires_grad)


@public("creation", method=False)
def eye(n: int, m: int | None = None, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    if n < 0 or (m is not None and m < 0):
        raise RuntimeError(f"eye(): n must be greater or equal to 0, got {n if n < 0 else m}")
    d = to_dtype(dtype) if dtype is not None else get_default_dtype()
    where = to_device(device)
    made = getattr(backend(where.type), "eye", None) if where.type != "cpu" else None
    if made is not None:  # a device that makes it with a kernel (nothing uploaded)
        t = Tensor._make(made(n, n if m is None else m, np.dtype(NP_DTYPE[d])), where)
        return t.requires_grad_(True) if requires_grad else t
    return _on(np.eye(n, m, dtype=NP_DTYPE[d]), device, requires_grad)


@public("creation", method=False)
def frombuffer(buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0, requires_grad: bool = False) -> Tensor:
    """A 1-D tensor over the memory of a Python buffer (bytes, bytearray, array, memoryview): no copy.

    Writable buffers are shared both ways, as in torch; a read-only buffer gives a read-only array."""
    d = to_dtype(dtype)
    np_dt = np.dtype(NP_DTYPE[d])
    view = memoryview(buffer)
    length, size = view.nbytes, np_dt.itemsize
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length ({length} "
                         "bytes) minus 1")
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a multiple "
                             f"of element size ({size})")
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset ({offset} bytes) must not be "
                         f"greater than actual buffer length ({length} bytes)")
    return _on(np.frombuffer(view.cast("B"), dtype=np_dt, count=count, offset=offset), None, requires_grad)


def _tri_indices(op: str, row: int, col: int, offset: int, dtype: Any, device: Any, lower: bool) -> Tensor:
    if row < 0:
        raise RuntimeError(f"{op}: row must be non-negative, got {row}")
    if col < 0:
        raise RuntimeError(f"{op}: col must be non-negative, got {col}")
    d = to_dtype(dtype) if dtype is not None else to_dtype("int64")
    if d.name not in ("int32", "int64"):
        fail("method_dtype_not_supported_error", op=op, dtype=d.name, hint=" (int32 or int64 only)")
    r, c = np.tril_indices(row, offset, col) if lower else np.triu_indices(row, offset, col)
    return _on(np.stack([r, c]).astype(NP_DTYPE[d]).reshape(2, -1), device)


@public("creation", method=False)
def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:
    """The (2, N) coordinates of the lower triangle of a row x col matrix, row by row."""
    return _tri_indices("tril_indices", row, col, offset, dtype, device, True)


@public("creation", method=False)
def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:
    """The (2, N) coordinates of the upper triangle of a row x col matrix, row by row."""
    return _tri_indices("triu_indices", row, col, offset, dtype, device, False)




def _strided(size: Any, stride: Any, dtype: Any, device: Any, requires_grad: bool, op: str) -> Tensor:
    """A zero-filled tensor with the given sizes and strides (in elements), over storage just large enough."""
    sz, st_ = new_sizes((size,), op), int_list((stride,), op)
    if len(sz) != len(st_):
        fail("argument_error_invalid", op=op, problem=f"dimensionality of sizes ({len(sz)}) must match "
                                                      f"dimensionality of strides ({len(st_)})")
    if any(s < 0 for s in st_):
        fail("argument_error_invalid", op=op, problem=f"as_strided: Negative strides are not supported at the moment, "
                                                      f"got strides: {list(st_)}")
    n = 0 if 0 in sz else 1 + sum((s - 1) * t for s, t in zip(sz, st_))
    storage = _filled(((n,),), 0, dtype if dtype is not None else get_default_dtype(), device, False, op)
    out: Tensor = storage.as_strided(sz, st_, 0)
    forget_view(out)  # the storage is the result's own, as torch's
    return out.requires_grad_(True) if requires_grad else out


@public("creation", method=False)
def empty_strided(size: Any, stride: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Uninitialised in torch, zeros here (as ``empty``), laid out with the given strides."""
    return _strided(size, stride, dtype, device, requires_grad, "empty_strided")


def _new_empty_strided(self: Tensor, size: Any, stride: Any, *, dtype: Any = None, device: Any = None,
                       requires_grad: bool = False) -> Tensor:
    return _strided(size, stride, dtype if dtype is not None else self.dtype,
                    device if device is not None else self.device, requires_grad, "new_empty_strided")


method("new_empty_strided", _guarded("new_empty_strided", _new_empty_strided))


@public("creation", method=False)
def empty_permuted(size: Any, physical_layout: Any, *, dtype: Any = None, device: Any = None,
                   requires_grad: bool = False) -> Tensor:
    """A tensor of ``size`` whose dims lie in memory in the order ``physical_layout`` (outermost first)."""
    sz, order = new_sizes((size,), "empty_permuted"), int_list((physical_layout,), "empty_permuted")
    if len(sz) != len(order):
        fail("argument_error_invalid", op="empty_permuted", problem="Number of dimensions in size does not match the "
                                                                    "length of the physical_layout")
    if sorted(order) != list(range(len(sz))):
        fail("argument_error_invalid", op="empty_permuted", problem=f"Dimension {sorted(order)} is not a permutation "
                                                                    f"of 0..{len(sz) - 1}")
    physical = _filled((tuple(sz[d] for d in order),), 0, dtype if dtype is not None else get_default_dtype(), device,
                       False, "empty_permuted")
    inverse = [order.index(i) for i in range(len(order))]
    out: Tensor = physical.permute(inverse)
    forget_view(out)
    return out.requires_grad_(True) if requires_grad else out


@public("creation", method=False)
def scalar_tensor(s: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A 0-d tensor of ``s``, of the default dtype unless ``dtype`` is given (even for an int or a bool)."""
    return _filled(((),), _number(s, "scalar_tensor", "s", 1), dtype if dtype is not None else get_default_dtype(), device, requires_grad,
                   "scalar_tensor")


@public("creation", method=False)
def asarray(obj: Any, *, dtype: Any = None, device: Any = None, copy: bool | None = None,
            requires_grad: bool = False) -> Tensor:
    """``obj`` as a tensor, sharing memory with a tensor or NumPy array where dtype and device allow
    (``copy=None``), always copying (``copy=True``) or refusing to copy (``copy=False``)."""
    shares = isinstance(obj, Tensor) or (isinstance(obj, np.ndarray) and obj.dtype in DTYPE_OF)
    if copy is True or not shares:
        if copy is False:
            fail("argument_error_invalid_value", op="asarray", problem="can't alias a Python sequence or scalar "
                                                                       "without copying (copy=False)")
        out = (obj.detach().clone() if isinstance(obj, Tensor) else tensor(obj, dtype=dtype, device=device))
        if isinstance(obj, Tensor) and (dtype is not None or device is not None):
            out = out.to(device=device, dtype=dtype)
    else:
        out = as_tensor(obj, dtype=dtype, device=device)
        source = obj if isinstance(obj, Tensor) else None
        if copy is False and source is not None and out is not source:
            fail("argument_error_invalid_value", op="asarray", problem="can't alias the tensor: a copy is needed to "
                                                                       "change its dtype or device (copy=False)")
        if isinstance(obj, np.ndarray) and copy is False and not np.shares_memory(out._data, obj):
            fail("argument_error_invalid_value", op="asarray", problem="can't alias the array without copying "
                                                                       "(copy=False)")
    return out.requires_grad_(True) if requires_grad else out


@public("creation", method=False)
def fill(input: Tensor, value: Any) -> Tensor:
    """A new tensor of ``input``'s shape and dtype filled with ``value`` (out of place ``fill_``). In the graph
    when ``input`` requires grad, with a zero gradient for it, or when a 0-d tensor ``value`` does (torch's
    ``FillBackward0``, ``FillBackward1`` for a tensor value)."""
    from ._common import as_node
    from .conversion import where

    if isinstance(value, Tensor) and not value._data.ndim and (
            (STATE.enabled and value.requires_grad) or value._fw_grads is not None):
        # a 0-d value in a graph, or a dual one: its gradient is the sum of the result's, its tangent spreads
        if not (input.is_floating_point() or input.is_complex()):  # a result of ints in the graph: torch refuses
            fail("autograd_error_dtype_not_supported", op="fill",
                 dtype=RD.SCALAR_TYPE_NAMES.get(input.dtype.name, input.dtype.name))
        filled = value.to(input._device, input.dtype).expand(*input._data.shape).clone()
    else:
        filled = input.detach().clone().fill_(value)
    if input.requires_grad:
        filled = where(zeros_like(input, dtype="bool"), input, filled)
    return as_node(filled, "FillBackward1" if isinstance(value, Tensor) else "FillBackward0", input, value)
