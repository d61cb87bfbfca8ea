"""The table of public ops. A function registered here is also the Tensor method of the same name.

``FUNCTIONS`` feeds ``list_ops``/``get_op_info`` and the exhaustiveness tests; the Tensor methods
and dunders are set from it, so no op is written twice.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from types import FunctionType
from typing import Any, TypeVar

from .._errors import ShapetorchError, fail
from .._tensor import Tensor
from ._common import check_no_partial_overlap
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
        op = _guarded(name, fn, category)
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


def register_uninitialized(cls: type) -> None:
    """Have every op refuse tensors of ``cls`` (NOTE [uninitialized tensors])."""
    UNINITIALIZED.add(cls)
    _SLOW.add(cls)

# NOTE [uninitialized tensors]: a lazy module's UninitializedParameter or UninitializedBuffer has no values yet.
# torch refuses one given to any function but a few (its ``__torch_function__``: the metadata, the conversions,
# ``copy_``), with a ValueError; here every guard does. Its fast test already asks whether each required argument
# is missing (the sentinel ``_MISSING``, a plain ``object``): it asks instead whether the argument's class is one
# of ``_SLOW`` (``object`` and the uninitialized classes), which costs no more, and the slow path, ``_keyword_call``,
# looks at every argument. An optional argument reaches the engine, whose general path refuses one too (as it
# does in a list of tensors). nn.parameter registers the classes (``register_uninitialized``).
UNINITIALIZED: set[type] = set()
_SLOW: set[type] = {object}
TAKES_UNINITIALIZED = frozenset({
    "size", "copy_", "is_complex", "is_floating_point", "half", "float", "double", "bfloat16", "char", "short",
    "int", "long", "cuda", "cpu", "to", "detach", "share_memory_", "requires_grad_",
})

# parameters annotated as ints (a count, a size, k): torch's parser refuses a bool or a float there, where Python
# would take True for 1. Dims are left to wrap_dim, which refuses them too.
_INT_ANNOTATIONS = frozenset({"int", "int | None", "int | Sequence[int]", "Sequence[int] | int", "int | tuple[int, ...]",
                              "int | list[int]", "int | Sequence[int] | None"})
_NOT_INT = frozenset({bool, float})
_OVERLAP: frozenset[type] = frozenset()  # the check of out= (see check_no_partial_overlap)
# the categories (and ops) whose out= torch refuses when it shares part of an input's memory: its elementwise,
# scan and sorting kernels check; matrix products, reductions, joining and histograms write through a temporary
_OUT_CHECKED = frozenset({"pointwise", "logical", "scan", "sorting", "cross", "linalg_cross"})
# pointwise ops that torch writes as composites (the result computed, then copied into out=): no overlap check
_OUT_COMPOSITE = frozenset({"special_ndtr"})


def _int_param(q: inspect.Parameter) -> bool:
    return q.annotation in _INT_ANNOTATIONS and "dim" not in q.name and q.kind not in (q.VAR_POSITIONAL, q.VAR_KEYWORD)


# the classes torch's parser takes for a bool flag: a Python bool only (not 1, not numpy.bool_, not a 0-d tensor);
# for an optional one (``bool | None``) None as well
_BOOL: frozenset[type] = frozenset({bool})
_OPTIONAL_BOOL: frozenset[type] = frozenset({bool, type(None)})
# flags torch does not parse: stft's ``center`` is read by Python code (``if center:``; istft's is parsed), as are
# torch.nn.functional's ``inplace`` flags (``_PYTHON_PARAMS``, in every function there), gaussian_nll_loss's ``full``,
# triplet_margin_with_distance_loss's ``swap`` (Python throughout) and the fractional max pools' ``return_indices``
# (torch's boolean_dispatch picks the function by ``if flag:``)
_PYTHON_FLAGS = frozenset({("stft", "center"), ("gaussian_nll_loss", "full"), ("triplet_margin_with_distance_loss", "swap"),
                           ("fractional_max_pool2d", "return_indices"), ("fractional_max_pool3d", "return_indices")})
_PYTHON_PARAMS = frozenset({"inplace"})


def _bool_classes(name: str, q: inspect.Parameter) -> frozenset[type] | None:
    """The classes a bool parameter takes, or None when it is no bool parameter or torch takes anything there.
    A factory's ``requires_grad`` is an optional bool in torch's schemas (None is the default), but for ``tensor``."""
    if q.kind in (q.VAR_POSITIONAL, q.VAR_KEYWORD) or (name, q.name) in _PYTHON_FLAGS or q.name in _PYTHON_PARAMS:
        return None
    if q.annotation == "bool":
        return _OPTIONAL_BOOL if q.name == "requires_grad" and name != "tensor" else _BOOL
    if q.annotation == "bool | None":
        return _OPTIONAL_BOOL
    return None


# The star parameters torch's parser requires at least one value for: ``x.reshape()``, ``x.permute()``,
# ``rand()`` are TypeErrors there ("missing 1 required positional arguments"), not an empty shape.
_REQUIRED_STARS = frozenset({"shape", "size", "sizes", "dims", "repeats"})
# torch's parser also takes them by keyword, as one list (``zeros(size=(2, 3))``, ``x.permute(dims=(1, 0))``), under
# the star's name but where torch's is another
_STAR_KEYWORDS = {"view": "size", "expand": "size"}


def _guarded(name: str, fn: Callable[..., Any], category: str = "") -> Callable[..., Any]:
    """``fn`` behind torch's argument check: a call torch's parser would refuse (an unknown keyword, too many
    or too few arguments, the same argument given twice, a non-tensor where a tensor is required, a non-bool
    for a bool flag) raises a coded ``TypeError`` instead of the Python error it would hit inside the op.

    The guard is generated with ``fn``'s own parameters, positional-only and defaulting to a sentinel, plus
    a ``*more``/``**extra`` catch-all: so Python binds every call (``add(x, input=x)`` included, which would
    otherwise fail in the caller's frame before any guard runs), and a positional call costs one plain call
    and one test, not the packing of ``*args, **kwargs``. A call with keywords goes through ``_keyword_call``;
    the types are looked at only when the call fails.

    Generating a guard (reading the signature, writing and compiling its code) cost about a fifth of the
    first op's time when done for all ~580 ops at import, so a plain function gets a placeholder now: the
    function object that is registered, bound as the Tensor method and returned to the op's module, whose
    code is swapped for the generated guard's on its first call (``_install_guard``). Later calls run the
    guard's code directly, with nothing in between."""
    if not isinstance(fn, FunctionType):  # a builtin or a callable object: it may have no signature to read
        built = _generated(name, fn, category, {})
        return fn if built is None else functools.update_wrapper(built, fn)
    env: dict[str, Any] = {"fn": fn, "_name": name, "_category": category, "_install": _install_guard}
    guard = FunctionType(_PLACEHOLDER, env, fn.__name__)
    env["_self"] = guard
    return functools.update_wrapper(guard, fn)


# The placeholder's code: install the real guard into this very function object, then make the call through it.
_PLACEHOLDER = compile("def guard(*args, **kwargs):\n    return _install(_self)(*args, **kwargs)\n",
                       "<argument guard>", "exec").co_consts[0]


def _install_guard(guard: Callable[..., Any]) -> Callable[..., Any]:
    """Give a placeholder from ``_guarded`` its generated code (once; two threads racing here install the same)."""
    env = guard.__globals__  # the generated code runs in the placeholder's namespace: its names go there
    built = _generated(env["_name"], env["fn"], env["_category"], env)
    if built is None:  # no signature after all: pass the call through unchecked, as an unguarded op
        built = _PASS_THROUGH
    guard.__code__, guard.__defaults__, guard.__kwdefaults__ = built.__code__, built.__defaults__, built.__kwdefaults__
    return guard


_PASS_THROUGH: Any = FunctionType(compile("def guard(*args, **kwargs):\n    return fn(*args, **kwargs)\n",
                                          "<argument guard>", "exec").co_consts[0], {})


def _generated(name: str, fn: Callable[..., Any], category: str, env: dict[str, Any]) -> Any:
    """The guard function generated for ``fn`` in the namespace ``env``, or None when ``fn`` has no Python
    signature (nothing to guard)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    kinds = inspect.Parameter
    env.update({"fn": fn, "_M": _MISSING, "_refuse": refuse_arguments, "_SE": ShapetorchError,
                "_name": name, "_NI": _NOT_INT, "_kw": _keyword_call, "_U": UNINITIALIZED, "_S": _SLOW})
    head: list[str] = []
    call: list[str] = []
    names: list[str] = []
    required: list[str] = []
    star: str | None = None
    for i, q in enumerate(params):
        if q.kind is kinds.VAR_POSITIONAL:
            star = q.name
            break
        if q.kind in (kinds.KEYWORD_ONLY, kinds.VAR_KEYWORD):
            break
        names.append(q.name)
        head.append(f"{q.name}=_M")
        if q.default is q.empty:
            required.append(q.name)
            call.append(q.name)
        else:
            env[f"_d{i}"] = q.default
            call.append(f"_d{i} if {q.name} is _M else {q.name}")
    if head:
        head.append("/")
    head.append(f"*{star or '__more'}")
    if star:
        call.append(f"*{star}")
    head.append("**__extra")
    env["_names"] = tuple(names)
    positional = set(names)
    checks: dict[str, tuple[bool, frozenset[type]]] = {}  # name -> (allowed, classes): refused or the only ones taken
    missing = "{} is _M" if name in TAKES_UNINITIALIZED else "{}.__class__ in _S"  # (NOTE [uninitialized tensors])
    bad = ["__extra"] + [missing.format(r) for r in required] + ([] if star else ["__more"])
    if names and names[0] not in required and name not in TAKES_UNINITIALIZED:  # (an optional input: normal's mean)
        bad.append(f"{names[0]}.__class__ in _U")
    env["_rs"] = star if star in _REQUIRED_STARS else None
    if star in _REQUIRED_STARS:
        bad.append(f"not {star}")
    for i, q in enumerate(params):
        if _int_param(q):
            checks[q.name] = (False, _NOT_INT)
            if q.name in positional:
                bad.append(f"{q.name}.__class__ in _NI")
        elif (classes := _bool_classes(name, q)) is not None:
            checks[q.name] = (True, classes)
            if q.name in positional:
                env[f"_b{i}"] = classes
                bad.append(f"({q.name} is not _M and {q.name}.__class__ not in _b{i})")
    if star and star not in _REQUIRED_STARS and name not in TAKES_UNINITIALIZED:  # (tensors, not sizes)
        bad.append(f"not _U.isdisjoint(map(type, {star}))")
    if "out" in {q.name for q in params} and (category in _OUT_CHECKED or name in _OUT_CHECKED) \
            and name not in _OUT_COMPOSITE:
        checks["out"] = (True, _OVERLAP)
    env["_checks"] = checks
    args = f"({', '.join(names)}{',' if len(names) == 1 else ''})"
    source = (
        f"def guard({', '.join(head)}):\n"
        f"    if {' or '.join(bad)}:\n"
        f"        return _kw(_name, fn, _names, {args}, {star or '__more'}, __extra, _checks, _rs)\n"
        f"    try:\n"
        f"        return fn({', '.join(call)})\n"
        f"    except _SE:\n"
        f"        raise\n"
        f"    except (TypeError, AttributeError, AssertionError, MemoryError) as __error:\n"
        f"        _refuse(_name, fn, _kw_given(_names, {args}, {star or '__more'}, __extra), __error)\n"
        f"        raise\n"
    )
    env["_kw_given"] = _given
    exec(_compiled(source), env)
    return env["guard"]


def _given(names: tuple[str, ...], values: tuple[Any, ...], more: tuple[Any, ...], extra: dict[str, Any]) -> dict[str, Any]:
    """What a guard received, as ``refuse_arguments`` reads it: the positional values by name, the rest apart."""
    given: dict[str, Any] = {n: v for n, v in zip(names, values) if v is not _MISSING}
    given["__more"], given["__extra"] = more, extra
    return given


def _keyword_call(name: str, fn: Callable[..., Any], names: tuple[str, ...], values: tuple[Any, ...],
                  more: tuple[Any, ...], extra: dict[str, Any], checks: dict[str, Any],
                  required_star: str | None = None) -> Any:
    """A guarded call with keywords, or one its fast test did not pass: check the int and bool parameters
    given by keyword too, then let Python bind the call to ``fn`` (so the same argument given twice, an
    unknown keyword or a missing argument is Python's TypeError, coded by ``refuse_arguments``)."""
    if required_star is not None and not more:
        key = _STAR_KEYWORDS.get(name, required_star)
        if key not in extra:
            fail("argument_error_signature", op=name, problem=f'missing 1 required positional arguments: "{required_star}"')
        extra = dict(extra)
        more = (extra.pop(key),)
        if not isinstance(more[0], (tuple, list)):
            fail("argument_error_type", op=name, name=key, position="", expected="tuple of ints",
                 got=type(more[0]).__name__)
    n = 0
    for v in values:  # positional arguments fill from the left: the first sentinel ends them
        if v is _MISSING:
            break
        n += 1
    given = dict(zip(names, values[:n]))
    for k, v in (*given.items(), *extra.items()):
        check = checks.get(k)
        if check is not None and k != "out" and (v.__class__ in check[1]) != check[0]:
            refuse_arguments(name, fn, _given(names, values, more, extra))
    if name not in TAKES_UNINITIALIZED and not UNINITIALIZED.isdisjoint(map(type, (*values[:n], *more, *extra.values()))):
        try:  # (NOTE [uninitialized tensors]) after the checks of torch's parser, which come first
            inspect.signature(fn).bind(*values[:n], *more, **extra)
        except TypeError:
            pass  # (the call below raises Python's binding error, coded)
        else:
            fail("argument_error_uninitialized", op=name)
    out = extra.get("out")
    if "out" in checks and isinstance(out, Tensor):
        check_no_partial_overlap(out, (*values[:n], *more, *(v for k, v in extra.items() if k != "out")), name)
    try:
        return fn(*values[:n], *more, **extra)
    except ShapetorchError:
        raise
    except (TypeError, AttributeError, AssertionError, MemoryError) as error:
        refuse_arguments(name, fn, _given(names, values, more, extra), error)
        raise


@functools.cache
def _compiled(source: str) -> Any:
    """Ops with the same parameters share a guard's code (each runs it in its own namespace): compiling one
    per op cost a third of the first op's time."""
    return compile(source, "<argument guard>", "exec")


def _type_name(value: Any) -> str:
    """How torch's parser names a type in its messages: ``numpy.bool``, ``NoneType``, ``Tensor``."""
    t = type(value)
    return t.__name__ if t.__module__ in ("builtins", "shapetorch") else f"{t.__module__.split('.')[0]}.{t.__name__}"


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
            args.extend(() if value is _MISSING else value)  # a guard gives it as "__more"
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
        classes = _bool_classes(name, sig.parameters[param])
        if classes is not None and type(value) not in classes:
            fail("argument_error_type", op=name, name=param, position=f" (position {position})", expected="bool",
                 got=_type_name(value))
    if isinstance(error, MemoryError):  # NumPy could not allocate what the arguments ask for (a huge size)
        fail("memory_error_allocation", op=name, problem=str(error) or "out of memory")
    if isinstance(error, TypeError):
        fail("argument_error_refused", op=name, problem=str(error).removeprefix(f"{name}(): "))
    if error is not None:
        types = ", ".join(type(v).__name__ for v in bound.arguments.values())
        try:
            fail("argument_error_refused", op=name, problem=f"arguments of types ({types}) are not supported")
        except ShapetorchError as refused:
            # the op's own error stays attached (``__cause__``): arguments that look valid and are refused here
            # point at a path of the op that does not take them (a device array where NumPy was expected)
            raise refused from error


def method(name: str, fn: Callable[..., Any]) -> None:
    """A Tensor-only method or dunder (``__add__``, ``add_``, ``view``)."""
    METHODS[name] = fn
    setattr(Tensor, name, fn)
