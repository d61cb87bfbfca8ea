"""The elementwise machinery shared by the unary, arithmetic, comparison, special and complex families.

Each elementwise op is one line of a table in its family's module: its name, its NumPy kernel and its vjp.
A kernel that is a NumPy ufunc splits over the intra-op threads when its result is large (``backends.thread_pool``).
``_unary``/``_binary`` here make the primitive, the public function, the method and the in-place twin;
``_binary`` also does the broadcast check, type promotion and Python scalars, and the dunders.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._engine.primitives import VJP, Prim
from .._errors import fail
from .._rules import dtypes as RD
from .._tensor import PLAIN_TYPES, Tensor
from ..backends.thread_pool import _SPLIT, threaded
from ._common import (
    as_operand,
    broadcast2,
    cast,
    check,
    default_float,
    dtype_name,
    make_inplace,
    promoted,
    write_inplace,
)
from ._registry import method, public


def _quiet(f: Callable[..., Any]) -> Callable[..., Any]:
    """Marks kernels where NumPy warns and torch silently gives inf/nan (log(0), 1/0). The warnings are
    filtered once for shapetorch's modules (see ``backends.numpy_backend``): an ``errstate`` per call
    would triple the cost of a tiny op."""
    return f


def _conj(t: Any) -> Any:
    if isinstance(t, Tensor):
        # (in every vjp of a product: no method call on the way, nor the dtype property)
        return t.conj() if t._data.dtype.kind == "c" else t
    return np.conj(t) if isinstance(t, complex | np.complexfloating) else t  # scalars arrive as NumPy scalars


def _small(prim: Prim, kernel: Callable[..., Any]) -> Prim:
    """NOTE [small ufunc] in ``_engine.primitives``: a ufunc kernel's tiny calls skip the thread-pool wrapper
    (which splits only from ``_SPLIT`` elements: the same test, made in the primitive call)."""
    if isinstance(kernel, np.ufunc) and kernel.nout == 1 and prim.kernels["cpu"] is not kernel:
        prim.small = (prim.kernels["cpu"], kernel, _SPLIT)
    return prim


def _store(result: Tensor, out: Tensor | None, name: str) -> Tensor:
    return result if out is None else write_inplace(out, result, name)


# -- unary ------------------------------------------------------------------------------------------

def _unary(name: str, kernel: Callable[..., Any], vjp: VJP | None, *, kind: str = "float",
           save_output: bool = False, doc: str = "") -> Callable[..., Tensor]:
    """kind: 'float' computes ints in the default float dtype; 'same' keeps the dtype; 'bool' gives bool."""
    prim = _small(Prim(name, threaded(kernel), vjp, save_output=save_output), kernel)
    # a floating input passes every check below as it is: for 'float', and for 'same' unless the op takes integers only
    fast = kind == "float" or (kind == "same" and RD.DTYPE_KINDS.get(name) != "integral")

    def fn(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        if out is None and fast and input._data.dtype.kind == "f":  # tiny-op path: nothing below applies
            # (NOTE [two-tensor call] in the engine's primitives: one plain tensor, NOTE [plain tensor types])
            return prim.call1(input) if type(input) in PLAIN_TYPES else prim(input)
        if kind == "float":
            if input._data.dtype.kind in "bui":
                input = cast(input, default_float())
        elif kind == "same":
            check(RD.check_kind, name, dtype_name(input))
        if name in _NO_COMPLEX_UNARY and input._data.dtype.kind == "c":
            fail("method_dtype_not_supported_error", op=name, dtype=input.dtype.name, hint=" (use sgn for complex)"
                 if name == "sign" else "")
        if name == "frac" and not input.dtype.is_floating_point:  # torch: floating dtypes only
            fail("method_dtype_not_supported_error", op=name, dtype=input.dtype.name, hint=" (floating point only)")
        return _store(prim(input), out, name)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc or f"Elementwise ``{name}``, as ``torch.{name}``."
    public("pointwise")(fn)
    method(name + "_", make_inplace(fn, name + "_"))
    return fn


_NO_COMPLEX_UNARY = {"sign", "floor", "ceil", "trunc"}
_2_SQRT_PI = 2.0 / math.sqrt(math.pi)


# -- binary -----------------------------------------------------------------------------------------

def _binary(name: str, kernel: Callable[..., Any], vjp: VJP | None, *, kind: str = "promote",
            register: bool = True, dunder: str | None = None, rdunder: str | None = None,
            save_output: bool | Callable[[tuple[Any, ...]], bool] = False) -> Callable[..., Tensor]:
    """kind: 'promote' (mul), 'float' (true division), 'no_bool' (sub), 'integral' (bitwise ops).
    save_output: the vjp reads the result (``n.out``), saved as torch saves it (an in-place op on it is refused);
    a predicate of the primitive's arguments where torch saves it for some overloads only (pow's tensor exponent)."""
    prim = _small(Prim(name, threaded(kernel), vjp, save_output=save_output), kernel)
    refuses_numbers = name in RD.TENSOR_OPERANDS or name in RD.TENSOR_FIRST

    def fn(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
        if type(input) in PLAIN_TYPES and type(other) in PLAIN_TYPES:  # (NOTE [plain tensor types])
            a, b = input._data, other._data
            if a.shape != b.shape:
                broadcast2(a.shape, b.shape, name)
            if a.dtype is b.dtype and (kind == "promote" or (kind == "float" and a.dtype.kind in "fc")) \
                    and (a.dtype.kind not in "bc" or (name not in _NO_COMPLEX and name != "pow")):
                # tiny-op path (NOTE [two-tensor call] in the engine's primitives)
                return prim.call2(input, other) if out is None else _store(prim.call2(input, other), out, name)
        else:
            if refuses_numbers and not (isinstance(input, Tensor) and isinstance(other, Tensor)):
                check(RD.check_tensor_operands, name, None if isinstance(input, Tensor) else type(input).__name__,
                      None if isinstance(other, Tensor) else type(other).__name__)
            if type(input) in PLAIN_TYPES and input._data.dtype.kind == "f" and kind != "integral" and (
                    type(other) in _PY_REAL or type(other) is input._data.dtype.type):
                # a floating tensor and a Python int or float (``g * 2`` in a vjp, ``x / n``), or a NumPy scalar of
                # its own dtype (the number a vjp reads back from the node: ``x ** 2``'s 2.0 as float32): torch's
                # scalar rule keeps the tensor's dtype, so the number is cast to it as ``cast`` would, with no
                # promotion table
                r = prim.call_number(input, input._data.dtype.type(other), 0)  # (NOTE [two-tensor call])
                return r if out is None else _store(r, out, name)
            if type(other) in PLAIN_TYPES and other._data.dtype.kind == "f" and kind != "integral" and (
                    type(input) in _PY_REAL or type(input) is other._data.dtype.type):
                r = prim.call_number(other, other._data.dtype.type(input), 1)  # the same, number first (1 - x)
                return r if out is None else _store(r, out, name)
            if not isinstance(input, Tensor):  # scalar op tensor, from __rsub__ and friends
                input = as_operand(input, other, name)
            else:
                other = as_operand(other, input, name)
                if isinstance(other, Tensor) and input._data.shape != other._data.shape:
                    broadcast2(input._data.shape, other._data.shape, name)
        common = promoted(input, other)
        if kind == "float":
            common = RD.float_result(common, default_float())
        elif kind in ("integral", "no_bool"):  # the op's entry in the rules' DTYPE_KINDS
            check(RD.check_kind, name, common, _any_bool(input, other))
        if RD.is_complex(common) and name in _NO_COMPLEX:
            fail("method_dtype_not_supported_error", op=name, dtype=common, hint="")
        if name == "pow":
            check(RD.check_kind, name, common, False, not isinstance(other, Tensor))
            if common == "bool":  # a bool tensor to a Python bool power, the one bool pow the rule allows
                other = as_operand(int(other), input, name)
                return _store(prim(cast(input, "int64"), other).to(common), out, name)
            _check_pow(common, other)
        return _store(prim(cast(input, common), cast(other, common)), out, name)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}`` with broadcasting and type promotion, as ``torch.{name}``."
    if register:
        public("pointwise")(fn)
        method(name + "_", make_inplace(fn, name + "_"))
    if dunder:
        method(dunder, fn)
        idunder = dunder.replace("__", "__i", 1)
        method(idunder, make_inplace(fn, idunder))
    if rdunder:
        method(rdunder, lambda self, other: fn(as_operand(other, self, name), self))
    return fn


_PY_REAL = (int, float)  # exact types: a bool is refused or promoted by the general path
_NO_COMPLEX = {"floor_divide", "remainder", "fmod", "atan2", "maximum", "minimum", "lt", "le", "gt", "ge"}


def _any_bool(*xs: Any) -> bool:
    """torch's sub rejects a bool operand (tensor or Python bool), whatever the other one is."""
    return any(isinstance(x, bool) or (isinstance(x, Tensor) and dtype_name(x) == "bool") for x in xs)


def _check_pow(common: str, exponent: Any) -> None:
    if RD.is_integral(common) and not isinstance(exponent, (bool, Tensor)) and isinstance(exponent, int) and exponent < 0:
        fail("method_dtype_not_supported_error", op="pow", dtype=common,
             hint=" (integers to negative integer powers are not allowed)")


def _where(c: Any, a: Any, b: Any) -> Tensor:
    from .conversion import where

    out: Tensor = where(c, a, b)
    return out
