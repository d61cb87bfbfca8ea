"""Tensor printing: ``repr(tensor)`` laid out exactly as torch lays it out.

The rules (which notation a float tensor uses, how wide a column is, where lines wrap, when a
tensor is summarised with ``...`` and which suffixes follow the values) follow torch's printer,
so that a shapetorch tensor and the same torch tensor print alike. The only differences are the
names: ``dtype=shapetorch.float64`` where torch writes ``dtype=torch.float64``, and shapetorch's
own device names.

Values are formatted from Python floats (every float16/bfloat16/float32 value is exactly a
double), so the digits are those of Python's ``format``, as they are in torch.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["get_printoptions", "printoptions", "set_printoptions", "tensor_repr"]

_Array = np.ndarray[Any, Any]


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


_OPTS = _PrintOptions()

_PROFILES: dict[str, tuple[int, float, int, int]] = {
    # name: (precision, threshold, edgeitems, linewidth)
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set how tensors print, as ``torch.set_printoptions`` does.

    precision: digits after the point (default 4). threshold: more elements than this and the
    tensor is summarised (default 1000). edgeitems: items kept at each end of a summarised
    dimension (default 3). linewidth: characters per line before wrapping (default 80).
    profile: ``"default"``, ``"short"`` or ``"full"`` resets the four options above first.
    sci_mode: ``True``/``False`` forces scientific notation on or off; ``None`` (the default,
    and what every call without it sets) lets the printer choose.
    """
    if profile is not None and profile in _PROFILES:
        _OPTS.precision, _OPTS.threshold, _OPTS.edgeitems, _OPTS.linewidth = _PROFILES[profile]
    if precision is not None:
        _OPTS.precision = precision
    if threshold is not None:
        _OPTS.threshold = threshold
    if edgeitems is not None:
        _OPTS.edgeitems = edgeitems
    if linewidth is not None:
        _OPTS.linewidth = linewidth
    _OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current print options, as keyword arguments for :func:`set_printoptions`."""
    return dataclasses.asdict(_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Change the print options inside a ``with`` block only."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# -- element formatting ---------------------------------------------------------------------------


class _Formatter:
    """Chooses one layout (width, notation) for all the elements of a tensor."""

    def __init__(self, values: _Array, floating: bool) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if not floating:
            for v in values.reshape(-1).tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        flat = values.reshape(-1)
        nz = flat[np.isfinite(flat) & (flat != 0)]
        if nz.size == 0:
            return  # nothing but zeros and non-finite values: the defaults stand
        mag = np.abs(nz)
        lo, hi = float(mag.min()), float(mag.max())
        self.int_mode = bool(np.all(nz == np.ceil(nz)))
        if _OPTS.sci_mode is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = bool(_OPTS.sci_mode)
        p = _OPTS.precision
        items: list[float] = nz.tolist()
        if self.sci_mode:
            width = max(len(f"{v:.{p}e}") for v in items)
        elif self.int_mode:
            width = max(len(f"{v:.0f}") for v in items) + 1  # room for the trailing "."
        else:
            width = max(len(f"{v:.{p}f}") for v in items)
        self.max_width = max(self.max_width, width)

    def format(self, value: Any) -> str:
        if self.floating:
            p = _OPTS.precision
            if self.sci_mode:
                s = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                s = f"{value:.0f}"
                if math.isfinite(value):
                    s += "."
            else:
                s = f"{value:.{p}f}"
        else:
            s = str(value)
        return s.rjust(self.max_width)


class _Layout:
    """The formatter(s) of one tensor: one, or one each for the real and imaginary parts."""

    def __init__(self, real: _Formatter, imag: _Formatter | None) -> None:
        self.real = real
        self.imag = imag

    def element_width(self) -> int:
        # the element, plus ", " between elements; a complex element adds its imaginary part and "j"
        n = self.real.max_width + 2
        if self.imag is not None:
            n += self.imag.max_width + 1
        return n

    def format(self, value: Any) -> str:
        if self.imag is None:
            return self.real.format(value)
        re = self.real.format(value.real)
        im = (self.imag.format(value.imag) + "j").lstrip()
        return re + im if im[0] in "+-" else re + "+" + im


# -- layout ---------------------------------------------------------------------------------------


def _summarized(a: _Array) -> _Array:
    """The elements a summarised print shows (those the formatter measures)."""
    e = _OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        # as in torch, a[-0:] is the whole vector, so edgeitems=0 keeps every element here
        return np.concatenate((a[:e], a[-e:])) if a.shape[0] > 2 * e else a
    if not e:
        return a[(slice(0, 0),) * a.ndim]
    for axis, n in enumerate(a.shape):
        if n > 2 * e:
            a = np.take(a, [*range(e), *range(n - e, n)], axis=axis)
    return a


def _vector_str(a: _Array, indent: int, summarize: bool, layout: _Layout) -> str:
    e = _OPTS.edgeitems
    per_line = max(1, math.floor((_OPTS.linewidth - indent) / layout.element_width()))
    if summarize and not e:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        data = [layout.format(v) for v in a[:e].tolist()] + [" ..."] + [layout.format(v) for v in a[-e:].tolist()]
    else:
        data = [layout.format(v) for v in a.tolist()]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(a: _Array, indent: int, summarize: bool, layout: _Layout) -> str:
    if a.ndim == 0:
        return layout.format(a.item())
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, layout)
    e = _OPTS.edgeitems
    n = a.shape[0]
    if summarize and n > 2 * e:
        slices = (
            [_nested_str(a[i], indent + 1, summarize, layout) for i in range(e)]
            + ["..."]
            + [_nested_str(a[i], indent + 1, summarize, layout) for i in range(n - e, n)]
        )
    else:
        slices = [_nested_str(a[i], indent + 1, summarize, layout) for i in range(n)]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _python_values(a: _Array, floating: bool, is_complex: bool) -> _Array:
    """The array in a dtype whose ``tolist`` gives exact Python floats/complexes/ints/bools."""
    if is_complex:
        return a.astype(np.complex128)
    if floating:
        return a.astype(np.float64)  # exact for float16, bfloat16 and float32
    return a


def _values_str(a: _Array, indent: int, floating: bool, is_complex: bool) -> str:
    if a.size == 0:
        return "[]"
    summarize = a.size > _OPTS.threshold
    v = _python_values(a, floating, is_complex)
    shown = _summarized(v) if summarize else v
    if is_complex:
        layout = _Layout(_Formatter(shown.real, True), _Formatter(shown.imag, True))
    else:
        layout = _Layout(_Formatter(shown, floating), None)
    return _nested_str(v, indent, summarize, layout)


def _torch_len(suffix: str) -> int:
    """The length the suffix has in torch's repr (``dtype=torch.x`` is 5 shorter than ``dtype=shapetorch.x``).

    Line breaks between suffixes are decided on this length, so that the layout is exactly torch's.
    """
    return len(suffix) - 5 if suffix.startswith("dtype=shapetorch.") else len(suffix)


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        n = _torch_len(suffix)
        if last_line_len + n + 2 > _OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + n
        else:
            parts.append(", " + suffix)
            last_line_len += n + 2
    parts.append(")")
    return "".join(parts)


def _grad_fn_name(grad_fn: Any) -> str:
    name = getattr(grad_fn, "name", None)
    if callable(name):
        return str(name()).rsplit("::", 1)[-1]
    return type(grad_fn).__name__


def tensor_repr(t: Any) -> str:
    """``repr(t)`` for a shapetorch tensor, in torch's layout."""
    from ._device import backend
    from ._dtype import get_default_dtype

    prefix = "tensor("
    indent = len(prefix)
    suffixes: list[str] = []

    dev = t.device
    if dev.type != "cpu":
        suffixes.append(f"device='{dev}'")

    a: _Array = np.asarray(backend(dev.type).to_numpy(t._data))
    dtype = t.dtype
    default = get_default_dtype()
    default_complex = "complex128" if default.name == "float64" else "complex64"
    has_default_dtype = dtype.name in (default.name, default_complex, "int64", "bool")

    if a.size == 0:
        if a.ndim != 1:
            suffixes.append(f"size={tuple(a.shape)}")
        # an empty tensor has no values to tell its dtype by, so any dtype but the default is shown
        if dtype.name != default.name:
            suffixes.append(f"dtype={dtype}")
        body = "[]"
    else:
        if not _OPTS.edgeitems:
            suffixes.append(f"size={tuple(a.shape)}")
        if not has_default_dtype:
            suffixes.append(f"dtype={dtype}")
        body = _values_str(a, indent, bool(dtype.is_floating_point), bool(dtype.is_complex))

    grad_fn = t.grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{_grad_fn_name(grad_fn)}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")

    return _add_suffixes(prefix + body, suffixes, indent)
