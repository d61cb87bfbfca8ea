"""Comparisons and predicates: eq/ne/lt/le/gt/ge, logical_*, isfinite/isinf/isnan/isposinf/isneginf/isreal/
signbit, isclose, allclose, equal, isin, is_complex/is_floating_point/is_nonzero. None has a gradient."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._engine.primitives import Prim
from .._errors import ShapetorchError, fail
from .._tensor import Tensor
from ._common import broadcast2, dtype_name, make_inplace, promoted, write_inplace
from ._elementwise import _binary, _store
from ._registry import method, public
from .arithmetic import bitwise_and, bitwise_or, bitwise_xor

eq = _binary("eq", np.equal, None, dunder="__eq__")
ne = _binary("ne", np.not_equal, None, dunder="__ne__")
lt = _binary("lt", np.less, None, dunder="__lt__")
le = _binary("le", np.less_equal, None, dunder="__le__")
gt = _binary("gt", np.greater, None, dunder="__gt__")
ge = _binary("ge", np.greater_equal, None, dunder="__ge__")


def _dunder(fn: Callable[..., Tensor]) -> Callable[..., Any]:
    """``x == None`` is False and ``x < "a"`` a TypeError from Python, as in torch: an operand that is not
    a tensor or a number gives NotImplemented, so Python falls back to identity or raises."""

    def dunder(self: Tensor, other: Any) -> Any:
        try:
            return fn(self, other)
        except TypeError as e:
            if isinstance(e, ShapetorchError):
                raise
            return NotImplemented

    dunder.__name__ = dunder.__qualname__ = f"__{fn.__name__}__"
    return dunder


for _fn in (eq, ne, lt, le, gt, ge):
    method(f"__{_fn.__name__}__", _dunder(_fn))


# -- logic ------------------------------------------------------------------------------------------

def _to_bool(x: Any) -> Any:
    return x if isinstance(x, Tensor) and dtype_name(x) == "bool" else (x != 0)


def _logical(fn: Any, input: Any, other: Any) -> Tensor:
    """Both operands must be tensors, as in torch (a TypeError here is the guard's coded ArgumentError)."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        raise TypeError("logical ops take tensors")
    result: Tensor = fn(_to_bool(input), _to_bool(other))
    return result


@public("logical")
def logical_not(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _store(eq(input, 0), out, "logical_not")


@public("logical")
def logical_and(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _store(_logical(bitwise_and, input, other), out, "logical_and")


@public("logical")
def logical_or(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _store(_logical(bitwise_or, input, other), out, "logical_or")


@public("logical")
def logical_xor(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _store(_logical(bitwise_xor, input, other), out, "logical_xor")


for _name, _fn in (("logical_not_", logical_not), ("logical_and_", logical_and), ("logical_or_", logical_or),
                   ("logical_xor_", logical_xor)):
    method(_name, make_inplace(_fn, _name))


def _predicate(name: str, kernel: Callable[[Any], Any], *, complex_ok: bool = True, doc: str = "") -> Callable[..., Tensor]:
    prim = Prim(name, kernel, None)

    def fn(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
        if not complex_ok and input.is_complex():
            fail("method_dtype_not_supported_error", op=name, dtype=input.dtype.name, hint="")
        r = prim(input)
        return r if out is None else write_inplace(out, r, name)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc or f"Elementwise ``{name}`` (a bool tensor), as ``torch.{name}``."
    public("logical")(fn)
    return fn


def _floaty(a: Any) -> bool:
    return a.dtype.kind in "fc" or a.dtype.kind == "V"  # "V": ml_dtypes' bfloat16


def _falses(a: Any) -> Any:
    return np.zeros(a.shape, dtype=bool)


isfinite = _predicate("isfinite", lambda a: np.isfinite(a) if _floaty(a) else np.ones(a.shape, dtype=bool))
isinf = _predicate("isinf", lambda a: np.isinf(a) if _floaty(a) else _falses(a))
isnan = _predicate("isnan", lambda a: np.isnan(a) if _floaty(a) else _falses(a))
isposinf = _predicate("isposinf", lambda a: np.isposinf(a) if _floaty(a) else _falses(a), complex_ok=False)
isneginf = _predicate("isneginf", lambda a: np.isneginf(a) if _floaty(a) else _falses(a), complex_ok=False)
isreal = _predicate("isreal", lambda a: a.imag == 0 if a.dtype.kind == "c" else np.ones(a.shape, dtype=bool))
signbit = _predicate("signbit", lambda a: np.signbit(a) if a.dtype.kind != "b" else _falses(a), complex_ok=False)


def _check_tol(op: str, rtol: float, atol: float) -> None:
    if rtol < 0:
        fail("argument_error_invalid", op=op, problem=f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        fail("argument_error_invalid", op=op, problem=f"atol must be greater than or equal to zero, but got {atol}")


@public("logical")
def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """``|input - other| <= atol + rtol * |other|`` elementwise, equal infinities close, NaNs by ``equal_nan``."""
    if not isinstance(other, Tensor):
        raise TypeError(f"isclose(): argument 'other' must be Tensor, not {type(other).__name__}")
    if dtype_name(input) != dtype_name(other):
        fail("dtype_error_mismatch", op="isclose", what="input and other", a=input.dtype.name, b=other.dtype.name)
    _check_tol("isclose", rtol, atol)
    if input._data.shape != other._data.shape:
        broadcast2(input._data.shape, other._data.shape, "isclose")
    a, b = input.detach(), other.detach()
    close = a == b
    if equal_nan and (a.is_floating_point() or a.is_complex()):
        close = bitwise_or(close, bitwise_and(isnan(a), isnan(b)))
    if rtol == 0 and atol == 0:
        return close
    if dtype_name(a) == "bool":
        from .._dtype import get_default_dtype

        a, b = a.to(get_default_dtype()), b.to(get_default_dtype())
    allowed = (b * rtol).abs() + atol
    actual = (a - b).abs()
    return bitwise_or(close, bitwise_and(isfinite(actual), actual <= allowed))


@public("logical")
def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """Whether ``isclose`` holds everywhere (a Python bool)."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


@public("logical")
def equal(input: Tensor, other: Tensor) -> bool:
    """True when both have the same shape and the same values (NaN is never equal)."""
    if not isinstance(other, Tensor):
        raise TypeError(f"equal(): argument 'other' must be Tensor, not {type(other).__name__}")
    if tuple(input._data.shape) != tuple(other._data.shape):
        return False
    common = promoted(input, other)
    a, b = np.asarray(input.detach().cpu().numpy()), np.asarray(other.detach().cpu().numpy())
    if common != dtype_name(input) or common != dtype_name(other):
        return bool((input.detach() == other.detach()).all().item())
    return bool(np.array_equal(a, b))


_ISIN = Prim("isin", lambda a, b, invert: np.isin(a, b, invert=invert), None)


@public("logical")
def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """Whether each of ``elements`` occurs in ``test_elements`` (either may be a number)."""
    from .creation import tensor

    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin(): at least one of 'elements' and 'test_elements' must be a Tensor")
    common = promoted(elements, test_elements)
    for x in (elements, test_elements, common):
        d = x if isinstance(x, str) else dtype_name(x) if isinstance(x, Tensor) else ""
        if d == "bool" or d.startswith("complex"):
            fail("method_dtype_not_supported_error", op="isin", dtype=d, hint="")
    if not isinstance(elements, Tensor):
        elements = tensor(elements, device=test_elements.device)
    if not isinstance(test_elements, Tensor):
        test_elements = tensor(test_elements, device=elements.device)
    a, b = elements.detach().to(common), test_elements.detach().to(common)
    return _ISIN(a, b.reshape(-1), invert=invert)


# -- dtype predicates -----------------------------------------------------------------------------------

@public("misc", method=False)
def is_complex(input: Tensor) -> bool:
    """True for complex dtypes."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_complex(): argument 'input' must be Tensor, not {type(input).__name__}")
    return bool(input.dtype.is_complex)


@public("misc", method=False)
def is_floating_point(input: Tensor) -> bool:
    """True for floating-point dtypes (not complex)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_floating_point(): argument 'input' must be Tensor, not {type(input).__name__}")
    return bool(input.dtype.is_floating_point)


@public("misc")
def is_nonzero(input: Tensor) -> bool:
    """Whether a one-element tensor is non-zero; more or fewer elements are ambiguous (an error)."""
    if input._data.size != 1:
        fail("item_error_not_scalar", op="is_nonzero", numel=int(input._data.size), shape=tuple(input._data.shape))
    return bool(input._data.reshape(-1)[0] != 0)
