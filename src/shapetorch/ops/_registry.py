"""The table of public ops. A function registered here is also the Tensor method of the same name.

``FUNCTIONS`` feeds ``list_ops``/``get_op_info`` and the exhaustiveness tests; the Tensor methods
and dunders are set from it, so no op is written twice.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from .._errors import ShapetorchError, fail
from .._tensor import Tensor
from ._rule_results import ENABLED as CHECK_RULES
from ._rule_results import checked

F = TypeVar("F", bound=Callable[..., Any])

FUNCTIONS: dict[str, Callable[..., Any]] = {}
METHODS: dict[str, Callable[..., Any]] = {}
CATEGORY: dict[str, str] = {}


def public(category: str, *, method: bool | str = True, function: bool = True, aliases: tuple[str, ...] = ()) -> Callable[[F], F]:
    """Register ``fn`` as ``shapetorch.<name>`` (if ``function``) and ``Tensor.<name>`` (if ``method``)."""

    def register(fn: F) -> F:
        name = fn.__name__.rstrip("_") if fn.__name__.endswith("__") else fn.__name__
        op = _guarded(name, fn)
        if CHECK_RULES:  # the test suite's mode: the result's shape and dtype must be what the rules say
            op = checked(name, op)
        for n in (name, *aliases):
            CATEGORY[n] = category
            if function:
                FUNCTIONS[n] = op
            if method:
                mname = method if isinstance(method, str) else n
                METHODS[mname] = op
                setattr(Tensor, mname, op)
        return op  # type: ignore[return-value]

    return register


_MISSING: Any = object()  # the default of a required parameter in a guard, so a missing one is seen

# parameters annotated as ints (a count, a size, k): torch's parser refuses a bool or a float there, where Python
# would take True for 1. Dims are left to wrap_dim, which refuses them too.
_INT_ANNOTATIONS = frozenset({"int", "int | None", "int | Sequence[int]", "Sequence[int] | int", "int | tuple[int, ...]",
                              "int | list[int]", "int | Sequence[int] | None"})
_NOT_INT = frozenset({bool, float})


def _int_param(q: inspect.Parameter) -> bool:
    return q.annotation in _INT_ANNOTATIONS and "dim" not in q.name and q.kind not in (q.VAR_POSITIONAL, q.VAR_KEYWORD)


def _guarded(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` behind torch's argument check: a call torch's parser would refuse (an unknown keyword, too many
    or too few arguments, a non-tensor where a tensor is required) raises a coded ``TypeError`` instead of
    the Python error it would hit inside the op.

    The guard is generated with ``fn``'s own parameters (plus a ``*more``/``**extra`` catch-all and a
    sentinel default for required ones), so a good call costs one plain call and one test, not the packing
    of ``*args, **kwargs``; the types are looked at only when the call fails."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # no Python signature: nothing to guard
        return fn
    kinds = inspect.Parameter
    env: dict[str, Any] = {"fn": fn, "_M": _MISSING, "_refuse": refuse_arguments, "_SE": ShapetorchError,
                           "_name": name, "_NI": _NOT_INT}
    head: list[str] = []
    call: list[str] = []
    required: list[str] = []
    star = any(q.kind is kinds.VAR_POSITIONAL for q in params)
    for i, q in enumerate(params):
        if q.kind is kinds.VAR_POSITIONAL:
            head.append(f"*{q.name}")
            call.append(f"*{q.name}")
            continue
        if q.kind is kinds.VAR_KEYWORD:
            continue
        if q.kind is kinds.KEYWORD_ONLY and not star:
            head.append("*__more")
            star = True
        if q.default is q.empty:
            default = "_M"
            required.append(q.name)
        else:
            default = f"_d{i}"
            env[default] = q.default
        head.append(f"{q.name}={default}")
        call.append(q.name if q.kind is not kinds.KEYWORD_ONLY else f"{q.name}={q.name}")
        if i + 1 < len(params) and q.kind is kinds.POSITIONAL_ONLY and params[i + 1].kind is not kinds.POSITIONAL_ONLY:
            head.append("/")
    if not star:
        head.append("*__more")
    keywords = next((q.name for q in params if q.kind is kinds.VAR_KEYWORD), None)
    head.append(f"**{keywords or '__extra'}")
    if keywords:
        call.append(f"**{keywords}")
    bad = [f"{r} is _M" for r in required] + (["__more"] if "*__more" in head else []) + \
        ([] if keywords else ["__extra"]) + [f"{q.name}.__class__ in _NI" for q in params if _int_param(q)]
    everything = "dict(locals())"
    source = (
        f"def guard({', '.join(head)}):\n"
        f"    if {' or '.join(bad) or 'False'}:\n"
        f"        _refuse(_name, fn, {everything})\n"
        f"    try:\n"
        f"        return fn({', '.join(call)})\n"
        f"    except _SE:\n"
        f"        raise\n"
        f"    except (TypeError, AttributeError, AssertionError) as __error:\n"
        f"        _refuse(_name, fn, {everything}, __error)\n"
        f"        raise\n"
    )
    exec(_compiled(source), env)
    guard: Callable[..., Any] = env["guard"]
    return functools.update_wrapper(guard, fn)


@functools.cache
def _compiled(source: str) -> Any:
    """Ops with the same parameters share a guard's code (each runs it in its own namespace): compiling one
    per op cost a third of the first op's time."""
    return compile(source, "<argument guard>", "exec")


def refuse_arguments(name: str, fn: Callable[..., Any], given: dict[str, Any], error: Exception | None = None) -> None:
    """Raise the coded error torch's parser gives for the call a guard received (its ``locals()``), if it
    refuses it. ``error``: what the op raised with these arguments, when it got that far; a ``TypeError``
    keeps its message under a code, and an internal ``AttributeError``/``AssertionError`` (an argument of a
    type the op does not take) becomes one naming the types."""
    given.pop("__error", None)
    sig = inspect.signature(fn)
    args: list[Any] = []
    kwargs: dict[str, Any] = dict(given.get("__extra", {}))
    for q in sig.parameters.values():
        value = given.get(q.name, _MISSING)
        if q.kind is q.VAR_POSITIONAL:
            args.extend(value)
        elif q.kind is q.VAR_KEYWORD:
            kwargs.update(value)
        elif value is _MISSING:
            continue
        elif q.kind is q.KEYWORD_ONLY:
            kwargs[q.name] = value
        else:
            args.append(value)
    args.extend(given.get("__more", ()))
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        fail("argument_error_signature", op=name, problem=str(e))
    for position, (param, value) in enumerate(bound.arguments.items(), 1):
        if sig.parameters[param].annotation in ("Tensor", Tensor) and not isinstance(value, Tensor):
            fail("argument_error_type", op=name, name=param, position=f" (position {position})", expected="Tensor",
                 got=type(value).__name__)
        if type(value) in _NOT_INT and _int_param(sig.parameters[param]):
            fail("argument_error_type", op=name, name=param, position=f" (position {position})", expected="int",
                 got=type(value).__name__)
    if isinstance(error, TypeError):
        fail("argument_error_refused", op=name, problem=str(error).removeprefix(f"{name}(): "))
    if error is not None:
        types = ", ".join(type(v).__name__ for v in bound.arguments.values())
        fail("argument_error_refused", op=name, problem=f"arguments of types ({types}) are not supported")


def method(name: str, fn: Callable[..., Any]) -> None:
    """A Tensor-only method or dunder (``__add__``, ``add_``, ``view``)."""
    METHODS[name] = fn
    setattr(Tensor, name, fn)
