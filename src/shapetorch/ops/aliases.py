"""torch's other names for ops defined elsewhere, and its top-level spellings of in-place methods.

``torch.arccos`` is ``torch.acos``, ``x.greater(y)`` is ``x.gt(y)``, ``torch.exp_(x)`` is ``x.exp_()``:
each name here points at the one definition of its op (so a fix there fixes every spelling, and the
rules, errors and gradients are the same), nothing is computed here. Imported last by ``ops``.
"""

from __future__ import annotations

from typing import Any

from .._tensor import Tensor
from ._common import as_node, make_inplace
from ._registry import CATEGORY, FUNCTIONS, METHODS, _guarded, method, public

# NumPy-style and long names torch accepts beside its own: function, method, and in-place method where the
# op has one
_SAME_OP = {
    "absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh", "arctan": "atan",
    "arctanh": "atanh", "arctan2": "atan2", "negative": "neg", "fix": "trunc", "greater": "gt", "greater_equal": "ge",
    "less": "lt", "less_equal": "le", "not_equal": "ne", "igamma": "special_gammainc", "igammac": "special_gammaincc",
    "trapz": "trapezoid", "unsafe_chunk": "chunk", "unsafe_split": "split", "divide": "div",
}

# the in-place methods torch also spells as functions in its namespace: ``torch.relu_(x)``
_TOP_LEVEL_INPLACE = (
    "abs_", "absolute_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
    "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "cos_",
    "cosh_", "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_",
    "gcd_", "i0_", "index_put_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_",
    "negative_", "rad2deg_", "reciprocal_", "relu_", "resize_as_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_",
    "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "zero_",
)


@public("pointwise")
def clamp_min(input: Tensor, min: Any) -> Tensor:
    """``clamp(input, min=min)``."""
    out: Tensor = input.clamp(min=min)
    return as_node(out, "ClampMinBackward1" if isinstance(min, Tensor) else "ClampMinBackward0", input, min)


@public("pointwise")
def clamp_max(input: Tensor, max: Any) -> Tensor:
    """``clamp(input, max=max)``."""
    out: Tensor = input.clamp(max=max)
    return as_node(out, "ClampMaxBackward1" if isinstance(max, Tensor) else "ClampMaxBackward0", input, max)


def _register() -> None:
    for alias, name in _SAME_OP.items():
        if alias not in FUNCTIONS and name in FUNCTIONS:
            FUNCTIONS[alias] = FUNCTIONS[name]
            CATEGORY[alias] = CATEGORY[name]
        if not hasattr(Tensor, alias):
            method(alias, getattr(Tensor, name, None) or FUNCTIONS[name])
        inplace = getattr(Tensor, name + "_", None)
        if inplace is not None and not hasattr(Tensor, alias + "_"):
            method(alias + "_", inplace)
    for name in ("clamp_min", "clamp_max"):
        method(name + "_", make_inplace(FUNCTIONS[name], name + "_"))
    for name in _TOP_LEVEL_INPLACE:
        fn = METHODS.get(name) or getattr(Tensor, name)
        FUNCTIONS.setdefault(name, _guarded(name, fn, "inplace"))
        CATEGORY.setdefault(name, "inplace")


_register()
