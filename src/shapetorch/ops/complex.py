"""Complex numbers: conj, real/imag (views), complex, polar, angle, conj_physical, view_as_real/view_as_complex."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._engine.backward import SAVES, Node
from .._engine.primitives import PRIMS, Prim
from .._errors import fail
from .._rules.views import view_as_complex_shape
from .._tensor import Tensor, mark_view
from ._common import broadcast2, cast, check, default_float, dtype_name, write_inplace
from ._elementwise import _conj, _unary, _where
from ._jvp import unary
from ._registry import public
from .views import _storage, _view_of

Arr = Any


_CONJ = Prim("conj", np.conj, lambda g, n: (g.conj(),))


@public("pointwise")
def conj(input: Tensor) -> Tensor:
    return _CONJ(input) if input._data.dtype.kind == "c" else input  # (no dtype lookup: every product's vjp conj's)


def _to_complex(g: Tensor, like: Tensor) -> Tensor:
    return g.to(like.dtype)


# Views of the real and imaginary parts (they share storage, as in torch) with gradients back to the
# complex input: d real = g + 0j, d imag = 0 + g j.
_REAL = Prim("real", lambda a: a.real, lambda g, n: (_to_complex(g, n.inputs[0]),))
_IMAG = Prim("imag", lambda a: a.imag, lambda g, n: (_to_complex(g, n.inputs[0]) * 1j,))
# their vjps read the input's dtype, not its values: nothing is saved (as torch's), so a later in-place write into
# the complex tensor (through another real/imag view) does not fail their backward
SAVES["real"] = SAVES["imag"] = ()


@public("pointwise", method=False)
def real(input: Tensor) -> Tensor:
    if not input.is_complex():
        return input
    out = _REAL(input)
    mark_view(out, input)
    return out


@public("pointwise", method=False)
def imag(input: Tensor) -> Tensor:
    if not input.is_complex():
        fail("method_dtype_not_supported_error", op="imag", dtype=input.dtype.name,
             hint=" (imag is only defined for complex tensors)")
    out = _IMAG(input)
    mark_view(out, input)
    return out


Tensor.real = property(real)  # type: ignore[attr-defined]
Tensor.imag = property(imag)  # type: ignore[attr-defined]


# -- complex / polar ---------------------------------------------------------------------------------------

def _complex_kernel(re: Any, im: Any) -> Any:
    re, im = np.broadcast_arrays(re, im)
    out = np.empty(re.shape, np.complex128 if re.dtype == np.float64 else np.complex64)
    out.real, out.imag = re, im
    return out


_REAL_PART: Prim
_IMAG_PART: Prim
_COMPLEX: Prim
_REAL_PART = Prim("real_part", lambda z: z.real.copy(), lambda g, n: (_COMPLEX(g, g * 0),))
_IMAG_PART = Prim("imag_part", lambda z: z.imag.copy(), lambda g, n: (_COMPLEX(g * 0, g),))
_COMPLEX = Prim("complex", _complex_kernel, lambda g, n: (_REAL_PART(g), _IMAG_PART(g)))


def _complex_parts(op: str, a: Tensor, b: Tensor, names: tuple[str, str], allowed: tuple[str, ...]) -> None:
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError(f"{op}(): arguments '{names[0]}' and '{names[1]}' must be Tensors")
    da, db = dtype_name(a), dtype_name(b)
    if da != db:
        fail("dtype_error_mismatch", op=op, what=f"{names[0]} and {names[1]}", a=da, b=db)
    if da not in allowed:
        fail("method_dtype_not_supported_error", op=op, dtype=da,
             hint=f" (expected both inputs to be {' or '.join(allowed)})")
    if a._data.shape != b._data.shape:
        broadcast2(a._data.shape, b._data.shape, op)


@public("pointwise", method=False)
def complex(real: Tensor, imag: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``real + i * imag`` (float16 gives complex64 here: shapetorch has no complex32)."""
    _complex_parts("complex", real, imag, ("real", "imag"), ("float16", "float32", "float64"))
    if dtype_name(real) == "float16":
        real, imag = cast(real, "float32"), cast(imag, "float32")
    r = _COMPLEX(real, imag)
    return r if out is None else write_inplace(out, r, "complex")


@public("pointwise", method=False)
def polar(abs: Tensor, angle: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``abs * (cos(angle) + i sin(angle))``."""
    _complex_parts("polar", abs, angle, ("abs", "angle"), ("float32", "float64"))
    r = _COMPLEX(abs * angle.cos(), abs * angle.sin())
    return r if out is None else write_inplace(out, r, "polar")


def _complex_jvp(ts: tuple[Any, ...], n: Any) -> Any:
    re, im = (t if t is not None else x * 0 for t, x in zip(ts, n.inputs))
    return _COMPLEX(re, im)
PRIMS["complex"].jvp = _complex_jvp
PRIMS["real_part"].jvp = unary(lambda t, n: _REAL_PART(t))
PRIMS["imag_part"].jvp = unary(lambda t, n: _IMAG_PART(t))


# -- angle, conj_physical --------------------------------------------------------------------------------

def _angle_kernel(a: Any) -> Any:
    if a.dtype.kind == "c":
        return np.angle(a).astype(a.real.dtype)
    return np.where(np.isnan(a), a, np.where(a < 0, a.dtype.type(math.pi), a.dtype.type(0))).astype(a.dtype)


def _angle_vjp(g: Tensor, n: Node) -> tuple[Any, ...]:
    z = n.inputs[0]
    if not z.is_complex():
        return (g * 0,)
    mag2 = z.abs() ** 2
    safe = _where(mag2 == 0, mag2 + 1, mag2)
    grad = g.to(z.dtype) * z / safe * 1j
    return (_where(z == 0, grad * 0, grad),)


_ANGLE = Prim("angle", _angle_kernel, _angle_vjp)


@public("pointwise")
def angle(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The argument of each element (0 or pi for real numbers, nan kept)."""
    if input._data.dtype.kind in "biu":
        input = cast(input, default_float())
    r = _ANGLE(input)
    return r if out is None else write_inplace(out, r, "angle")


conj_physical = _unary("conj_physical", lambda a: np.conj(a) if a.dtype.kind == "c" else a.copy(),
                       lambda g, n: (_conj(g),), kind="same")


def _angle_jvp(t: Tensor, n: Any) -> Any:
    z = n.inputs[0]
    if not z.is_complex():
        return t * 0
    mag2 = z.abs() ** 2
    return (t * z.conj()).imag / _where(mag2 == 0, mag2 + 1, mag2)


# -- complex views ---------------------------------------------------------------------------------------------------

_COMPLEX_OF = {"float32": np.complex64, "float64": np.complex128}


def _vac_kernel(a: Arr) -> Arr:
    return a.view(_COMPLEX_OF[a.dtype.name])[..., 0]


def _var_kernel(a: Arr) -> Arr:
    return a[..., None].view(a.real.dtype)


def _vac_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    return (_VIEW_AS_REAL(g.contiguous()),)


def _var_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    return (_VIEW_AS_COMPLEX(g.contiguous()),)


_VIEW_AS_COMPLEX = Prim("view_as_complex", _vac_kernel, _vac_vjp)
_VIEW_AS_REAL = Prim("view_as_real", _var_kernel, _var_vjp)
_VIEW_AS_COMPLEX.jvp = lambda ts, n: None if ts[0] is None else _VIEW_AS_COMPLEX(ts[0].contiguous())
_VIEW_AS_REAL.jvp = lambda ts, n: None if ts[0] is None else _VIEW_AS_REAL(ts[0])


@public("shape", method=False)
def view_as_complex(input: Tensor) -> Tensor:
    """A complex view of a float tensor whose last dim (size 2, stride 1) holds real and imaginary parts."""
    name = dtype_name(input)
    if name not in _COMPLEX_OF:
        fail("method_dtype_not_supported_error", op="view_as_complex", dtype=name,
             hint=" (only float32 and float64 tensors; shapetorch has no complex32)")
    check(view_as_complex_shape, input._data.shape, op="view_as_complex")
    a = input._data
    item = a.dtype.itemsize
    if a.size == 0:  # NumPy gives an empty array zero strides; torch's are the contiguous ones, which pass
        return _view_of(_VIEW_AS_COMPLEX(input), input)
    if a.strides[-1] != item:
        fail("argument_error_invalid", op="view_as_complex", problem="tensor must have a last dimension with stride 1")
    # the offset in the storage, in bytes (a device array keeps it in elements)
    off = (a.__array_interface__["data"][0] - _storage(input)[0].__array_interface__["data"][0]
           if isinstance(a, np.ndarray) else a.offset * item)
    if any(s % (2 * item) for s in a.strides[:-1]) or off % (2 * item):
        fail("argument_error_invalid", op="view_as_complex",
             problem="tensor must have a stride divisible by 2 for all but last dimension")
    return _view_of(_VIEW_AS_COMPLEX(input), input)


@public("shape", method=False)
def view_as_real(input: Tensor) -> Tensor:
    """A float view of a complex tensor with a new last dim of size 2 (real, imaginary)."""
    if not input.is_complex():
        fail("method_dtype_not_supported_error", op="view_as_real", dtype=dtype_name(input),
             hint=" (view_as_real is only supported for complex tensors)")
    return _view_of(_VIEW_AS_REAL(input), input)


# -- forward-mode rules ----------------------------------------------------------------------------------

for _name, _rule in (("angle", _angle_jvp), ("conj_physical", lambda t, n: t.conj())):
    PRIMS[_name].jvp = unary(_rule)
