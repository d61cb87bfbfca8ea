"""``assert_close``: torch.testing's comparison of tensors, numbers and their nests.

Defaults by dtype, as torch's: float16 (rtol 1e-3, atol 1e-5), bfloat16 (1.6e-2, 1e-5), float32 and complex64
(1.3e-6, 1e-5), float64 and complex128 (1e-7, 1e-7), exact for integers and bool. Two values are close when
``|actual - expected| <= atol + rtol * |expected|``. The message counts the mismatched elements and names the
greatest absolute and relative difference, with its index, as torch's does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .._tensor import Tensor

_TOL = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
        "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False,
                 msg: str | Callable[[str], str] | None = None) -> None:
    """Raise ``AssertionError`` unless ``actual`` and ``expected`` are close (tensors, numbers, or sequences
    and mappings of them, compared item by item)."""
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {'rtol' if rtol is None else 'atol'}.")
    _compare(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, msg, ())


# the tolerances of the deprecated assert_allclose (not assert_close's), by dtype; other dtypes compare exactly
_ALLCLOSE_PRECISIONS = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None, atol: float | None = None,
                    equal_nan: bool = True, msg: str = "") -> None:
    """Deprecated (warns, as torch): ``assert_close`` with the older default tolerances, NaNs equal by default,
    the dtypes not compared, and ``expected`` made a tensor of ``actual``'s dtype when it is not one."""
    import warnings

    from ..ops.creation import tensor

    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future "
                  "release. Please use `torch.testing.assert_close()` instead. You can find detailed upgrade "
                  "instructions in https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        pairs = [_ALLCLOSE_PRECISIONS.get(str(t.dtype).split(".")[-1], (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(r for r, _ in pairs), max(a for _, a in pairs)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 check_stride=False, msg=msg or None)


def _fail(message: str, msg: str | Callable[[str], str] | None, path: tuple[Any, ...]) -> None:
    if path:
        message += "\n\nThe failure occurred for item " + "".join(f"[{p!r}]" for p in path)
    if callable(msg):
        message = msg(message)
    elif msg is not None:
        message = msg
    raise AssertionError(message)


def _compare(actual: Any, expected: Any, rtol: float | None, atol: float | None, equal_nan: bool,
             check_device: bool, check_dtype: bool, msg: Any, path: tuple[Any, ...]) -> None:
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        if set(actual) != set(expected):
            _fail(f"The keys of the mappings do not match:\n{sorted(map(str, actual))} != "
                  f"{sorted(map(str, expected))}", msg, path)
        for k in expected:
            _compare(actual[k], expected[k], rtol, atol, equal_nan, check_device, check_dtype, msg, (*path, k))
        return
    seq = (list, tuple)
    if isinstance(expected, seq) and isinstance(actual, seq):
        if len(actual) != len(expected):
            _fail(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", msg, path)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, rtol, atol, equal_nan, check_device, check_dtype, msg, (*path, i))
        return
    if isinstance(actual, Tensor) != isinstance(expected, Tensor):
        raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.")
    if isinstance(expected, Tensor):
        _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, msg, path)
        return
    if not isinstance(expected, (bool, int, float, complex, np.generic)):
        if actual != expected:
            _fail(f"Objects are not equal!\n\nExpected {expected!r} but got {actual!r}.", msg, path)
        return
    if type(actual) is not type(expected) and check_dtype:
        _fail(f"The values for attribute 'type' do not match: {type(actual)} != {type(expected)}.", msg, path)
    kind = "complex128" if isinstance(expected, complex) else "float64" if isinstance(expected, float) else "int64"
    r, a = (rtol, atol) if rtol is not None and atol is not None else _TOL.get(kind, (0.0, 0.0))
    if not _close_scalar(actual, expected, r, a, equal_nan):
        diff = abs(complex(actual) - complex(expected))
        rel = diff / abs(complex(expected)) if expected != 0 else math.inf
        kind_word = "Booleans" if isinstance(expected, bool) else "Scalars"
        _fail(f"{kind_word} are not close!\n\nExpected {expected} but got {actual}.\n"
              f"Absolute difference: {diff} (up to {a} allowed)\nRelative difference: {rel} (up to {r} allowed)",
              msg, path)


def _close_scalar(actual: Any, expected: Any, rtol: float, atol: float, equal_nan: bool) -> bool:
    if actual == expected:
        return True
    if equal_nan and _isnan(actual) and _isnan(expected):
        return True
    return bool(abs(actual - expected) <= atol + rtol * abs(expected))


def _isnan(x: Any) -> bool:
    return bool(np.isnan(x)) if isinstance(x, (float, complex, np.floating, np.complexfloating)) else False


def _compare_tensors(actual: Tensor, expected: Tensor, rtol: float | None, atol: float | None, equal_nan: bool,
                     check_device: bool, check_dtype: bool, msg: Any, path: tuple[Any, ...]) -> None:
    def attr(name: str, a: Any, e: Any) -> None:
        _fail(f"The values for attribute '{name}' do not match: {a} != {e}.", msg, path)

    if tuple(actual.shape) != tuple(expected.shape):
        attr("shape", f"shapetorch.Size({list(actual.shape)})", f"shapetorch.Size({list(expected.shape)})")
    if check_device and actual.device != expected.device:
        attr("device", actual.device, expected.device)
    if check_dtype and actual.dtype is not expected.dtype:
        attr("dtype", f"shapetorch.{actual.dtype.name}", f"shapetorch.{expected.dtype.name}")
    name = expected.dtype.name if check_dtype else _wider(actual.dtype.name, expected.dtype.name)
    r, a = (rtol, atol) if rtol is not None and atol is not None else _TOL.get(name, (0.0, 0.0))
    x, y = _values(actual), _values(expected)
    if x.dtype.kind == "b" and y.dtype.kind == "b":
        bad = x != y
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(x - y)
            bad = ~(diff <= a + r * np.abs(y))
        bad &= x != y  # equal infinities are close
        if equal_nan:
            bad &= ~(np.isnan(x) & np.isnan(y))
    if not bad.any():
        return
    _fail(_mismatch_message(x, y, bad, r, a, "Tensor-likes"), msg, path)


def _values(t: Tensor) -> Any:
    v = np.asarray(t.detach().cpu().numpy())
    if (v.dtype.kind == "f" and v.dtype.itemsize < 4) or v.dtype.name == "bfloat16":
        return v.astype(np.float64)
    return v


def _wider(a: str, b: str) -> str:
    order = ["bool", "uint8", "int8", "int16", "int32", "int64", "bfloat16", "float16", "float32", "float64",
             "complex64", "complex128"]
    return a if order.index(a) >= order.index(b) else b


def _index(flat: int, shape: Sequence[int]) -> str:
    idx = np.unravel_index(flat, shape) if shape else ()
    return "(" + ", ".join(str(int(i)) for i in idx) + ("," if len(idx) == 1 else "") + ")"


def _mismatch_message(x: Any, y: Any, bad: Any, rtol: float, atol: float, what: str) -> str:
    total, n = bad.size, int(bad.sum())
    if x.dtype.kind == "b" or y.dtype.kind == "b":
        x, y = x.astype(np.int64), y.astype(np.int64)
    # torch takes the differences in the inputs' floating dtype (integers in float64)
    common = np.result_type(x, y)
    wide = common if common.kind in "fc" else np.float64
    xw, yw = x.astype(wide), y.astype(wide)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        abs_diff = np.abs(xw - yw)
        rel_diff = abs_diff / np.abs(yw)
    abs_diff = np.where(bad, abs_diff, 0)
    rel_diff = np.where(bad, np.nan_to_num(rel_diff, nan=0.0, posinf=np.inf), 0)
    ia, ir = int(np.argmax(abs_diff)), int(np.argmax(rel_diff))
    integral = x.dtype.kind in "biu" and y.dtype.kind in "biu"

    def fmt(v: float) -> str:
        return str(int(v)) if integral else str(float(v))

    lines = [f"{what} are not {'equal' if rtol == 0 and atol == 0 else 'close'}!", "",
             f"Mismatched elements: {n} / {total} ({100 * n / total:.1f}%)",
             f"Greatest absolute difference: {fmt(abs_diff.reshape(-1)[ia])} at index {_index(ia, x.shape)}"
             + (f" (up to {atol} allowed)" if not integral or atol else ""),
             f"Greatest relative difference: {float(rel_diff.reshape(-1)[ir])} at index {_index(ir, x.shape)}"
             + (f" (up to {rtol} allowed)" if not integral or rtol else "")]
    return "\n".join(lines)
