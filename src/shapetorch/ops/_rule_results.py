"""What the shape and dtype rules say an op returns, for the checking mode.

With ``SHAPETORCH_CHECK_RULES=1`` in the environment when shapetorch is imported (the test suite sets
it), every public op listed here compares its result's shape and dtype with what the rules compute from
its arguments, and raises ``RuleResultMismatch`` on a difference. The runtime otherwise calls the rules
only for their verdicts (accept or refuse); this mode makes every runtime test a test of the result
shapes the mypy plugin reports from the same rules. Off, it costs nothing: ``public`` registers the
plain functions.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Mapping
from typing import Any

from .._autocast import autocast_dtype_for
from .._rules import dtypes as RD
from .._rules import einsum as RS
from .._rules import joining as RJ
from .._rules import matmul as RM
from .._rules import matrix as RX
from .._rules import views as RV
from .._rules.broadcast import broadcast_shapes
from .._rules.reduction import reduce_shape
from .._tensor import Tensor

ENABLED = os.environ.get("SHAPETORCH_CHECK_RULES") == "1"

Shape = tuple[Any, ...]
Expected = tuple[Shape, "str | None"]  # the shape, and the dtype name (None: the rules do not say)
Rule = Callable[[Mapping[str, Any]], "Expected | None"]  # None: this call is not checked (e.g. ``out=``)


class RuleResultMismatch(AssertionError):
    """An op returned a shape or dtype other than its rules compute: the rules or the op are wrong."""


def _shape(x: Any) -> Shape:
    return tuple(x._data.shape) if isinstance(x, Tensor) else ()


def _dt(x: Tensor) -> str:
    return x.dtype.name


def _default_float() -> str:
    from ._common import default_float  # (_common imports the registry, which imports this module)

    return default_float()


def _promoted(*xs: Any) -> str:
    ops = []
    for x in xs:
        if isinstance(x, Tensor):
            ops.append((_dt(x), RD.TENSOR if x._data.ndim else RD.ZERO_DIM))
        else:
            ops.append((RD.scalar_dtype(x, _default_float()), RD.SCALAR))
    return RD.result_type(ops)


def _ints(sizes: Any) -> tuple[Any, ...]:
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        return tuple(sizes[0])
    return tuple(sizes)


# -- elementwise ---------------------------------------------------------------------------------------

BINARY_KIND = {
    **dict.fromkeys("add sub subtract mul multiply maximum minimum fmax fmin remainder fmod floor_divide".split(),
                    "promote"),
    **dict.fromkeys("div divide true_divide atan2 hypot copysign xlogy logaddexp".split(), "float"),
    **dict.fromkeys("eq ne lt le gt ge greater less greater_equal less_equal not_equal logical_and logical_or "
                    "logical_xor".split(), "bool"),
}
UNARY_KIND = {
    **dict.fromkeys("exp exp2 expm1 log log2 log10 log1p sin cos tan asin acos atan sinh cosh tanh asinh acosh "
                    "atanh sigmoid sqrt rsqrt reciprocal erf erfc lgamma digamma".split(), "float"),
    **dict.fromkeys("neg negative floor ceil trunc sign".split(), "same"),
    "abs": "real",
    **dict.fromkeys("isnan isinf isfinite logical_not signbit".split(), "bool"),
}


def _binary(kind: str) -> Rule:
    def rule(a: Mapping[str, Any]) -> Expected | None:
        x, y = a["input"], a["other"]
        if a.get("out") is not None:
            return None
        shape = broadcast_shapes(_shape(x), _shape(y))
        common = _promoted(x, y)
        float_result = kind == "float" and a.get("rounding_mode") is None  # div(rounding_mode=...) keeps the type
        dtype = "bool" if kind == "bool" else RD.float_result(common, _default_float()) if float_result else common
        return shape, dtype

    return rule


def _unary(kind: str) -> Rule:
    def rule(a: Mapping[str, Any]) -> Expected | None:
        x = a["input"]
        if a.get("out") is not None:
            return None
        dtype = {"bool": "bool", "float": RD.float_result(_dt(x), _default_float()),
                 "real": RD.to_real(_dt(x))}.get(kind, _dt(x))
        return _shape(x), dtype

    return rule


# -- the rest, one line an op ---------------------------------------------------------------------------

def _reduction(int_to: str | None) -> Rule:
    def rule(a: Mapping[str, Any]) -> Expected | None:
        x = a["input"]
        dim = a.get("dim")
        if a.get("dtype") is not None or isinstance(dim, Tensor):
            return None
        if isinstance(dim, (tuple, list)) and not dim:  # torch: no dims listed means every dim
            dim = None
        dtype = _dt(x)
        if int_to is not None and RD.is_integral(dtype, include_bool=True):
            dtype = int_to
        return reduce_shape(_shape(x), dim, a.get("keepdim", False)), dtype

    return rule


def _norm(a: Mapping[str, Any]) -> Expected | None:
    """norm reduces as sum does, to the real dtype of its (floating or complex) input."""
    r = _reduction(None)(a)
    return None if r is None or r[1] is None else (r[0], RD.to_real(r[1]))


def _einsum(a: Mapping[str, Any]) -> Expected | None:
    args = a["args"]
    if not args or not isinstance(args[0], str):
        return None  # the sublist form
    operands = args[1] if len(args) == 2 and isinstance(args[1], (list, tuple)) else args[1:]
    # the dtype is left out: torch sums integers in int64 when the equation sums over a letter
    return RS.einsum_shape(args[0], *(_shape(t) for t in operands)), None


def _pair(rule_name: str, first: str = "input", second: str = "other") -> Rule:
    # the rule is looked up on each call, so a test may swap it (a planted bug must be seen here)
    return lambda a: (getattr(RM, rule_name)(_shape(a[first]), _shape(a[second])), _promoted(a[first], a[second]))


def _same_dtype(shape_of: Callable[[Mapping[str, Any]], Shape], arg: str = "input") -> Rule:
    return lambda a: (shape_of(a), _dt(a[arg]))


RULES: dict[str, Rule] = {
    **{name: _binary(kind) for name, kind in BINARY_KIND.items()},
    **{name: _unary(kind) for name, kind in UNARY_KIND.items()},
    "matmul": _pair("matmul_shape"),
    "mm": _pair("mm_shape"),
    "bmm": _pair("bmm_shape"),
    "mv": _pair("mv_shape"),
    "dot": _pair("dot_shape"),
    "outer": _pair("outer_shape", second="vec2"),
    "kron": lambda a: (RM.kron_shape(_shape(a["input"]), _shape(a["other"])),
                       RD.promote_types(_dt(a["input"]), _dt(a["other"]))),  # no 0-d demotion: not elementwise
    "sum": _reduction("int64"),
    "prod": _reduction("int64"),
    "mean": _reduction(None),
    "amax": _reduction(None),
    "amin": _reduction(None),
    "norm": _norm,
    "triu": _same_dtype(lambda a: RX.triangular_shape(_shape(a["input"]), "triu")),
    "tril": _same_dtype(lambda a: RX.triangular_shape(_shape(a["input"]), "tril")),
    "reshape": _same_dtype(lambda a: RV.reshape_shape(_shape(a["input"]), _ints(a["shape"]))),
    "permute": _same_dtype(lambda a: RV.permute_shape(_shape(a["input"]), _ints(a["dims"]))),
    "transpose": _same_dtype(lambda a: RV.transpose_shape(_shape(a["input"]), a["dim0"], a["dim1"])),
    "t": _same_dtype(lambda a: RV.t_shape(_shape(a["input"]))),
    "unsqueeze": _same_dtype(lambda a: RV.unsqueeze_shape(_shape(a["input"]), a["dim"])),
    "squeeze": _same_dtype(lambda a: RV.squeeze_shape(_shape(a["input"]), a.get("dim"))),
    "flatten": _same_dtype(lambda a: RV.flatten_shape(_shape(a["input"]), a.get("start_dim", 0), a.get("end_dim", -1))),
    "unflatten": _same_dtype(lambda a: RV.unflatten_shape(_shape(a["input"]), a["dim"], tuple(a["sizes"]))),
    "diagonal": _same_dtype(lambda a: RV.diagonal_shape(_shape(a["input"]), a.get("offset", 0), a.get("dim1", 0),
                                                        a.get("dim2", 1))),
    "narrow": _same_dtype(lambda a: RJ.narrow_shape(_shape(a["input"]), a["dim"], int(a["start"]), a["length"])),
    "select": _same_dtype(lambda a: RJ.select_shape(_shape(a["input"]), a["dim"], a["index"])),
    "cat": lambda a: (RJ.cat_shape([_shape(t) for t in a["tensors"]], a.get("dim", 0)), _promoted(*a["tensors"])),
    "stack": lambda a: (RJ.stack_shape([_shape(t) for t in a["tensors"]], a.get("dim", 0)),
                        _promoted(*a["tensors"])),
    "einsum": _einsum,
}


def checked(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, comparing each result with what ``RULES[name]`` computes from the same arguments."""
    rule = RULES.get(name)
    if rule is None:
        return fn
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return fn

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        out = fn(*args, **kwargs)
        if not isinstance(out, Tensor):
            return out
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError:
            return out
        arguments = dict(bound.arguments)
        for p, v in list(arguments.items()):  # ``**axes_lengths`` and ``*sizes`` under their own names
            kind = sig.parameters[p].kind
            if kind is inspect.Parameter.VAR_KEYWORD:
                arguments[p] = dict(v)
        expected = rule(arguments)
        if expected is None:
            return out
        shape, dtype = expected
        if autocast_dtype_for(out._device.type) is not None:
            dtype = None  # autocast casts the matmul family's inputs; the dtype rules see the uncast ones
        if tuple(out._data.shape) != tuple(shape) or (dtype is not None and out.dtype.name != dtype):
            raise RuleResultMismatch(
                f"{name}: the result is {tuple(out._data.shape)} {out.dtype.name}, but the rules say {tuple(shape)} "
                f"{dtype or '(any dtype)'}")
        return out

    return run
