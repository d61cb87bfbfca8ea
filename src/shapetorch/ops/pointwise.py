"""Elementwise ops: unary math, binary arithmetic with broadcasting and promotion, comparisons, logic.

Each op is one line of the tables below: its name, its NumPy kernel and its vjp. The helpers
``_unary``/``_binary`` make the primitive, the public function, the method and the in-place twin.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._dispatch import VJP, Prim
from .._errors import fail
from .._rules import dtypes as RD
from .._tensor import Tensor
from ..autograd.engine import Node
from ._common import as_operand, broadcast2, cast, default_float, dtype_name, make_inplace, promoted, write_inplace
from ._registry import method, public


def _quiet(f: Callable[..., Any]) -> Callable[..., Any]:
    """Marks kernels where NumPy warns and torch silently gives inf/nan (log(0), 1/0). The warnings are
    filtered once for shapetorch's modules (see ``backends.numpy_backend``): an ``errstate`` per call
    would triple the cost of a tiny op."""
    return f


def _conj(t: Any) -> Any:
    if isinstance(t, Tensor):
        return t.conj() if t.is_complex() else t
    return np.conj(t) if isinstance(t, complex | np.complexfloating) else t  # scalars arrive as NumPy scalars


def _store(result: Tensor, out: Tensor | None, name: str) -> Tensor:
    return result if out is None else write_inplace(out, result, name)


# -- unary ------------------------------------------------------------------------------------------

def _unary(name: str, kernel: Callable[..., Any], vjp: VJP | None, *, kind: str = "float",
           save_output: bool = False, doc: str = "") -> Callable[..., Tensor]:
    """kind: 'float' computes ints in the default float dtype; 'same' keeps the dtype; 'bool' gives bool."""
    prim = Prim(name, kernel, vjp, save_output=save_output)

    def fn(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        if kind == "float":
            if input._data.dtype.kind in "bui":
                input = cast(input, default_float())
        elif kind == "same" and name in _NO_BOOL and dtype_name(input) == "bool":
            fail("method_dtype_not_supported_error", op=name, dtype="bool", hint="")
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


_NO_BOOL = {"neg", "abs", "floor", "ceil", "round", "trunc"}
_NO_COMPLEX_UNARY = {"sign", "floor", "ceil", "trunc"}
_2_SQRT_PI = 2.0 / math.sqrt(math.pi)

neg = _unary("neg", np.negative, lambda g, n: (-g,), kind="same")
exp = _unary("exp", _quiet(np.exp), lambda g, n: (g * _conj(n.out),), save_output=True)
exp2 = _unary("exp2", _quiet(np.exp2), lambda g, n: (g * _conj(n.out) * math.log(2.0),), save_output=True)
expm1 = _unary("expm1", _quiet(np.expm1), lambda g, n: (g * (_conj(n.out) + 1),), save_output=True)
log = _unary("log", _quiet(np.log), lambda g, n: (g / _conj(n.inputs[0]),))
log2 = _unary("log2", _quiet(np.log2), lambda g, n: (g / (_conj(n.inputs[0]) * math.log(2.0)),))
log10 = _unary("log10", _quiet(np.log10), lambda g, n: (g / (_conj(n.inputs[0]) * math.log(10.0)),))
log1p = _unary("log1p", _quiet(np.log1p), lambda g, n: (g / (_conj(n.inputs[0]) + 1),))
sqrt = _unary("sqrt", _quiet(np.sqrt), lambda g, n: (g / (2 * _conj(n.out)),), save_output=True)
rsqrt = _unary(
    "rsqrt", _quiet(lambda a: np.reciprocal(np.sqrt(a))), lambda g, n: (g * -0.5 * _conj(n.out) ** 3,), save_output=True
)
sin = _unary("sin", np.sin, lambda g, n: (g * _conj(n.inputs[0].cos()),))
cos = _unary("cos", np.cos, lambda g, n: (g * -_conj(n.inputs[0].sin()),))
tan = _unary("tan", _quiet(np.tan), lambda g, n: (g * (1 + _conj(n.out) ** 2),), save_output=True)
asin = _unary("asin", _quiet(np.arcsin), lambda g, n: (g * (1 - _conj(n.inputs[0]) ** 2).rsqrt(),))
acos = _unary("acos", _quiet(np.arccos), lambda g, n: (-g * (1 - _conj(n.inputs[0]) ** 2).rsqrt(),))
atan = _unary("atan", np.arctan, lambda g, n: (g / (1 + _conj(n.inputs[0]) ** 2),))
sinh = _unary("sinh", _quiet(np.sinh), lambda g, n: (g * _conj(n.inputs[0].cosh()),))
cosh = _unary("cosh", _quiet(np.cosh), lambda g, n: (g * _conj(n.inputs[0].sinh()),))
tanh = _unary("tanh", np.tanh, lambda g, n: (g * (1 - _conj(n.out) ** 2),), save_output=True)
asinh = _unary("asinh", np.arcsinh, lambda g, n: (g * (_conj(n.inputs[0]) ** 2 + 1).rsqrt(),))
acosh = _unary("acosh", _quiet(np.arccosh), lambda g, n: (g * (_conj(n.inputs[0]) ** 2 - 1).rsqrt(),))
atanh = _unary("atanh", _quiet(np.arctanh), lambda g, n: (g / (1 - _conj(n.inputs[0]) ** 2),))
sigmoid = _unary(
    "sigmoid", _quiet(lambda a: np.reciprocal(1 + np.exp(-a))), lambda g, n: (g * _conj(n.out * (1 - n.out)),),
    save_output=True,
)
reciprocal = _unary("reciprocal", _quiet(np.reciprocal), lambda g, n: (-g * _conj(n.out) ** 2,), save_output=True)
abs = _unary("abs", np.abs, lambda g, n: (g * n.inputs[0].sgn(),), kind="same")
sgn = _unary("sgn", lambda a: a.copy() if a.dtype.kind == "b" else np.sign(a) if a.dtype.kind != "c" else _csgn(a), lambda g, n: (g * 0,), kind="same")
sign = _unary("sign", lambda a: a.copy() if a.dtype.kind == "b" else np.sign(a), lambda g, n: (g * 0,), kind="same")
floor = _unary("floor", lambda a: a.copy() if a.dtype.kind in "biu" else np.floor(a), lambda g, n: (g * 0,), kind="same")
ceil = _unary("ceil", lambda a: a.copy() if a.dtype.kind in "biu" else np.ceil(a), lambda g, n: (g * 0,), kind="same")
trunc = _unary("trunc", lambda a: a.copy() if a.dtype.kind in "biu" else np.trunc(a), lambda g, n: (g * 0,), kind="same")
frac = _unary("frac", lambda a: a - np.trunc(a), lambda g, n: (g,), kind="same")


def _csgn(a: Any) -> Any:
    mag = np.abs(a)
    with np.errstate(all="ignore"):
        return np.where(mag == 0, 0, a / np.where(mag == 0, 1, mag)).astype(a.dtype)


def _round_kernel(a: Any, decimals: int = 0) -> Any:
    if a.dtype.kind in "biu":
        return a.copy()
    return np.round(a, decimals)  # half to even, as torch


_ROUND = Prim("round", _round_kernel, lambda g, n: (g * 0,))


@public("pointwise")
def round(input: Tensor, *, decimals: int = 0, out: Tensor | None = None) -> Tensor:
    """Round to the nearest integer (half to even), or to ``decimals`` decimal places."""
    if dtype_name(input) == "bool" or input.is_complex():
        fail("method_dtype_not_supported_error", op="round", dtype=input.dtype.name, hint="")
    return _store(_ROUND(input, decimals=decimals), out, "round")


method("round_", make_inplace(round, "round_"))


def square(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``input * input``; bool squares to int64 as in torch."""
    if dtype_name(input) == "bool":
        input = cast(input, "int64")
    return _store(mul(input, input), out, "square")


public("pointwise")(square)
method("square_", make_inplace(square, "square_"))


# -- binary -----------------------------------------------------------------------------------------

def _binary(name: str, kernel: Callable[..., Any], vjp: VJP | None, *, kind: str = "promote",
            register: bool = True, dunder: str | None = None, rdunder: str | None = None) -> Callable[..., Tensor]:
    """kind: 'promote' (mul), 'float' (true division), 'no_bool' (sub), 'integral' (bitwise ops)."""
    prim = Prim(name, kernel, vjp)

    def fn(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
        if type(input) is Tensor and type(other) is Tensor:
            a, b = input._data, other._data
            if a.shape != b.shape:
                broadcast2(a.shape, b.shape, name)
            if a.dtype is b.dtype and (kind == "promote" or (kind == "float" and a.dtype.kind in "fc")) \
                    and (a.dtype.kind not in "bc" or (name not in _NO_COMPLEX and name != "pow")):
                return prim(input, other) if out is None else _store(prim(input, other), out, name)  # tiny-op path
        elif not isinstance(input, Tensor):  # scalar op tensor, from __rsub__ and friends
            input = as_operand(input, other, name)
        else:
            other = as_operand(other, input, name)
            if isinstance(other, Tensor) and input._data.shape != other._data.shape:
                broadcast2(input._data.shape, other._data.shape, name)
        common = promoted(input, other)
        if kind == "float":
            common = RD.float_result(common, default_float())
        elif kind == "integral" and not RD.is_integral(common, include_bool=True):
            fail("method_dtype_not_supported_error", op=name, dtype=common, hint=" (integral and bool only)")
        elif kind == "no_bool" and (common == "bool" or (name == "sub" and _any_bool(input, other))):
            fail("method_dtype_not_supported_error", op=name, dtype="bool", hint="")
        if RD.is_complex(common) and name in _NO_COMPLEX:
            fail("method_dtype_not_supported_error", op=name, dtype=common, hint="")
        if name == "pow":
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


_NO_COMPLEX = {"floor_divide", "remainder", "fmod", "atan2", "maximum", "minimum", "lt", "le", "gt", "ge"}


def _any_bool(*xs: Any) -> bool:
    """torch's sub rejects a bool operand (tensor or Python bool), whatever the other one is."""
    return any(isinstance(x, bool) or (isinstance(x, Tensor) and dtype_name(x) == "bool") for x in xs)


def _check_pow(common: str, exponent: Any) -> None:
    if common == "bool":
        fail("method_dtype_not_supported_error", op="pow", dtype="bool", hint="")
    if RD.is_integral(common) and not isinstance(exponent, (bool, Tensor)) and isinstance(exponent, int) and exponent < 0:
        fail("method_dtype_not_supported_error", op="pow", dtype=common,
             hint=" (integers to negative integer powers are not allowed)")


def _pow_kernel(a: Any, b: Any) -> Any:
    """NumPy raises for integers to negative powers; torch gives 1 for base 1, +-1 for base -1, else 0."""
    if np.asarray(a).dtype.kind in "iu" and np.asarray(b).dtype.kind in "iu" and np.any(np.asarray(b) < 0):
        neg = np.asarray(b) < 0
        safe = np.power(a, np.where(neg, 0, b))
        small = np.where(a == 1, 1, np.where(a == -1, np.where(np.asarray(b) % 2 == 0, 1, -1), 0)).astype(safe.dtype)
        return np.where(neg, small, safe)
    return np.power(a, b)


def _one(n: Node, i: int) -> Any:
    return _conj(n.inputs[i])


_add = _binary("add", np.add, lambda g, n: (g, g), register=False, dunder="__add__", rdunder="__radd__")
_sub = _binary("sub", np.subtract, lambda g, n: (g, -g), kind="no_bool", register=False, dunder="__sub__",
               rdunder="__rsub__")
mul = _binary("mul", np.multiply, lambda g, n: (g * _one(n, 1), g * _one(n, 0)), dunder="__mul__", rdunder="__rmul__")
true_divide = _binary(
    "true_divide", _quiet(np.true_divide), lambda g, n: (g / _one(n, 1), -g * _one(n, 0) / _one(n, 1) ** 2),
    kind="float", dunder="__truediv__", rdunder="__rtruediv__",
)
def _int_div(name: str, f: Callable[..., Any]) -> Callable[..., Any]:
    """Integer division by zero is an error in torch; NumPy would quietly give 0."""

    def kernel(a: Any, b: Any) -> Any:
        if getattr(a, "dtype", np.dtype(float)).kind in "iu" and not np.all(b):
            fail("div_error_integer_division_by_zero", op=name)
        return f(a, b)

    return kernel


floor_divide = _binary("floor_divide", _int_div("floor_divide", np.floor_divide), None, kind="no_bool",  # no derivative
                       dunder="__floordiv__", rdunder="__rfloordiv__")
# div(rounding_mode="floor") has a zero gradient in torch, while floor_divide has none at all.
_div_floor = _binary("div_floor", _int_div("div", np.floor_divide), lambda g, n: (g * 0, g * 0), kind="no_bool",
                     register=False)
remainder = _binary(
    "remainder", _int_div("remainder", np.remainder), lambda g, n: (g, -g * (n.inputs[0] / n.inputs[1]).floor()),
    kind="no_bool", dunder="__mod__", rdunder="__rmod__",
)
fmod = _binary("fmod", _int_div("fmod", np.fmod), lambda g, n: (g, -g * (n.inputs[0] / n.inputs[1]).trunc()), kind="no_bool")
pow = _binary(
    "pow", _quiet(_pow_kernel),
    lambda g, n: (
        g * n.inputs[1] * _one(n, 0) ** (n.inputs[1] - 1),
        g * _conj(n.inputs[0] ** n.inputs[1] * (n.inputs[0].log() if isinstance(n.inputs[0], Tensor)
                                                else np.log(n.inputs[0]))) if isinstance(n.inputs[1], Tensor) else None,
    ),
    dunder="__pow__", rdunder="__rpow__",
)
atan2 = _binary(
    "atan2", np.arctan2,
    lambda g, n: (g * n.inputs[1] / (n.inputs[0] ** 2 + n.inputs[1] ** 2),
                  -g * n.inputs[0] / (n.inputs[0] ** 2 + n.inputs[1] ** 2)),
    kind="float",
)


def _share(n: Node, first_wins: Tensor) -> tuple[Tensor, Tensor]:
    """Gradient routing of maximum/minimum: to the winner, split evenly on ties (as torch)."""
    a, b = n.inputs
    w = first_wins.to(a.dtype) + (a == b).to(a.dtype) * 0.5
    return w, 1 - w


maximum = _binary("maximum", np.maximum, lambda g, n: tuple(g * w for w in _share(n, n.inputs[0] > n.inputs[1])))
minimum = _binary("minimum", np.minimum, lambda g, n: tuple(g * w for w in _share(n, n.inputs[0] < n.inputs[1])))

eq = _binary("eq", np.equal, None, dunder="__eq__")
ne = _binary("ne", np.not_equal, None, dunder="__ne__")
lt = _binary("lt", np.less, None, dunder="__lt__")
le = _binary("le", np.less_equal, None, dunder="__le__")
gt = _binary("gt", np.greater, None, dunder="__gt__")
ge = _binary("ge", np.greater_equal, None, dunder="__ge__")
bitwise_and = _binary("bitwise_and", np.bitwise_and, None, kind="integral", dunder="__and__", rdunder="__rand__")
bitwise_or = _binary("bitwise_or", np.bitwise_or, None, kind="integral", dunder="__or__", rdunder="__ror__")
bitwise_xor = _binary("bitwise_xor", np.bitwise_xor, None, kind="integral", dunder="__xor__", rdunder="__rxor__")


def _scaled(other: Any, alpha: Any) -> Any:
    return mul(other, alpha) if isinstance(other, Tensor) else other * alpha


@public("pointwise")
def add(input: Any, other: Any, *, alpha: Any = 1, out: Tensor | None = None) -> Tensor:
    """``input + alpha * other``, with broadcasting and type promotion."""
    return _add(input, other if alpha == 1 else _scaled(other, alpha), out=out)


@public("pointwise", aliases=("subtract",))
def sub(input: Any, other: Any, *, alpha: Any = 1, out: Tensor | None = None) -> Tensor:
    """``input - alpha * other``."""
    return _sub(input, other if alpha == 1 else _scaled(other, alpha), out=out)


@public("pointwise", aliases=("divide",))
def div(input: Any, other: Any, *, rounding_mode: str | None = None, out: Tensor | None = None) -> Tensor:
    """True division (``rounding_mode=None``), or rounded toward zero (``'trunc'``) or down (``'floor'``)."""
    if rounding_mode is None:
        return true_divide(input, other, out=out)
    if rounding_mode == "floor":
        return _div_floor(input, other, out=out)
    if rounding_mode == "trunc":
        q = true_divide(input, other)
        common = promoted(input, other)
        return _store(q.trunc().to(q.dtype if RD.DTYPES[common].kind in "fc" else common), out, "div")
    raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found {rounding_mode!r}")


public("pointwise", aliases=("multiply",))(mul)
for _name, _fn in (("add_", add), ("sub_", sub), ("div_", div), ("subtract_", sub), ("multiply_", mul)):
    method(_name, make_inplace(_fn, _name))


# -- logic ------------------------------------------------------------------------------------------

def _to_bool(x: Any) -> Any:
    return x if isinstance(x, Tensor) and dtype_name(x) == "bool" else (x != 0)


@public("logical")
def logical_not(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _store(eq(input, 0), out, "logical_not")


@public("logical")
def logical_and(input: Tensor, other: Any, *, out: Tensor | None = None) -> Tensor:
    return _store(bitwise_and(_to_bool(input), _to_bool(other)), out, "logical_and")


@public("logical")
def logical_or(input: Tensor, other: Any, *, out: Tensor | None = None) -> Tensor:
    return _store(bitwise_or(_to_bool(input), _to_bool(other)), out, "logical_or")


@public("logical")
def logical_xor(input: Tensor, other: Any, *, out: Tensor | None = None) -> Tensor:
    return _store(bitwise_xor(_to_bool(input), _to_bool(other)), out, "logical_xor")


_INVERT = Prim("bitwise_not", lambda a: np.logical_not(a) if a.dtype.kind == "b" else np.invert(a))


@public("logical")
def bitwise_not(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    if not RD.is_integral(dtype_name(input), include_bool=True):
        fail("method_dtype_not_supported_error", op="bitwise_not", dtype=input.dtype.name, hint=" (integral and bool only)")
    return _store(_INVERT(input), out, "bitwise_not")


for _name, _fn in (("logical_not_", logical_not), ("logical_and_", logical_and), ("logical_or_", logical_or),
                   ("logical_xor_", logical_xor), ("bitwise_not_", bitwise_not)):
    method(_name, make_inplace(_fn, _name))


def _neg_dunder(self: Tensor) -> Tensor:
    if dtype_name(self) == "bool":
        fail("method_dtype_not_supported_error", op="neg", dtype="bool",
             hint=" (use ~ or logical_not() to invert a bool tensor)")
    return neg(self)


method("__neg__", _neg_dunder)
method("__pos__", lambda self: self)
method("__abs__", abs)
method("__invert__", bitwise_not)
method("__matmul__", lambda self, other: self.matmul(other))  # replaced by linalg.matmul itself
method("__rmatmul__", lambda self, other: other.matmul(self))
