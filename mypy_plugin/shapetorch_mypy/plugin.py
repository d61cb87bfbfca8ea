"""The plugin class: which hook serves which name, and the stub-branch switch."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mypy.nodes import Expression, FloatExpr, MemberExpr, NameExpr, OpExpr, TypeInfo, Var
from mypy.options import Options
from mypy.plugin import (
    AttributeContext,
    FunctionContext,
    FunctionSigContext,
    MethodContext,
    MethodSigContext,
    Plugin,
    ReportConfigContext,
)
from mypy.types import AnyType, FunctionLike, Instance, LiteralType, Type, get_proper_type

from .args import fold_int
from .codes import register_all
from .convert import MODULE, TENSOR, Converter
from .hooks import conversion, layers, pooling
from .hooks import nn as NN
from .hooks._common import kind_checked, run
from .relax import relax
from .table import ATTRIBUTES, FUNCTIONAL_COMMON, FUNCTIONS, METHODS

# nn.functional ops whose hooks live with their family (pooling and resizing; one_hot with the conversions).
NN_FUNCTIONAL = {**pooling.FUNCTIONAL, **conversion.FUNCTIONAL}

# The stubs put their precise (plugin-free) signatures under `if _PRECISE_STUBS:`; marking the
# name always-false makes mypy read the permissive `elif MYPY:` branch, whose results we compute.
PRECISE_FLAG = "_PRECISE_STUBS"


def rules_version() -> str:
    """A hash of the rules and of this plugin: a change invalidates mypy's cache."""
    import shapetorch._rules as rules

    h = hashlib.sha256()
    for folder in (Path(rules.__file__).parent, Path(__file__).parent):
        for f in sorted(folder.rglob("*.py")):  # the plugin's hooks are a package
            h.update(f.relative_to(folder).as_posix().encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def allow_redefinition(options: Options) -> None:
    """Let a name take a tensor of a new shape: ``x = x.reshape(b, h, s, d)`` is how tensor code is written.

    With exact shapes, every such line would otherwise be an "incompatible types in assignment" error
    on correct code. mypy 2 calls this ``allow_redefinition`` (mypy 1 had it as
    ``allow_redefinition_new``, which also needs ``local_partial_types``; there it is left to the user)."""
    if hasattr(options, "allow_redefinition") and hasattr(options, "allow_redefinition_old"):
        options.allow_redefinition = True


# ``0 == x`` runs the tensor's ``__eq__`` at run time (int's answers NotImplemented), but mypy types it by
# ``int.__eq__`` as a plain bool, a false error on ``(0 == x).any()``. A tensor operand makes it the tensor's
# elementwise comparison: a bool tensor of the tensor's shape (a Python number broadcasts to anything).
_SCALAR_COMPARISONS = {f"builtins.{c}.{m}" for c in ("int", "float", "bool", "complex") for m in ("__eq__", "__ne__")}


def _scalar_compared_with_tensor(ctx: MethodContext) -> Type:
    conv = Converter(ctx.api)
    info = conv.tensor(ctx.arg_types[0][0]) if ctx.arg_types and ctx.arg_types[0] else None
    if info is None:
        return ctx.default_return_type
    return conv.tensor_type(info.shape, conv.dtype_type("bool"), info.variadic)


# ``HEAD_DIM ** -0.5`` is ``Any`` to mypy (typeshed's ``float.__rpow__``: a negative base to a fractional
# power is complex), and a tensor times ``Any`` is ``Any``: the scaled attention scores of nearly every
# attention block lost their shape. A non-negative constant base gives a float.
_SCALAR_POWERS = {"builtins.float.__pow__", "builtins.float.__rpow__"}


def _constant_number(expr: Expression) -> float | None:
    v = fold_int(expr)
    if v is not None:
        return v
    if isinstance(expr, FloatExpr):
        return expr.value
    if isinstance(expr, (NameExpr, MemberExpr)) and isinstance(expr.node, Var) and expr.node.is_final:
        return expr.node.final_value if type(expr.node.final_value) is float else None
    return None


def _power_of_constant(ctx: MethodContext) -> Type:
    p = get_proper_type(ctx.default_return_type)
    e = ctx.context
    if isinstance(p, AnyType) and isinstance(e, OpExpr) and e.op == "**":
        base, exponent = _constant_number(e.left), get_proper_type(ctx.api.get_expression_type(e.right))
        if isinstance(exponent, LiteralType):
            exponent = exponent.fallback
        number = isinstance(exponent, Instance) and exponent.type.fullname in ("builtins.int", "builtins.float")
        if base is not None and base >= 0 and number:
            return ctx.api.named_generic_type("builtins.float", [])
    return ctx.default_return_type


class ShapetorchPlugin(Plugin):
    def __init__(self, options: Options) -> None:
        if PRECISE_FLAG not in options.always_false:
            options.always_false.append(PRECISE_FLAG)
        allow_redefinition(options)
        super().__init__(options)
        register_all()
        self._version = rules_version()
        self._method_hooks: dict[str, Callable[[MethodContext], Type]] = {}
        self._function_hooks: dict[str, Callable[[FunctionContext], Type]] = {}

    def report_config_data(self, ctx: ReportConfigContext) -> Any:
        return {"shapetorch_rules": self._version}

    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        if fullname.endswith((".__call__", ".forward")):
            return self._layer_hook(fullname.rsplit(".", 1)[0])
        if fullname in _SCALAR_COMPARISONS:
            return _scalar_compared_with_tensor
        if fullname in _SCALAR_POWERS:
            return _power_of_constant
        cls, _, name = fullname.rpartition(".")
        if cls != TENSOR and not self._is_tensor_subclass(cls):
            return None
        found = self._method_hooks.get(name)
        if found is None and name in METHODS:
            handler, op = METHODS[name]
            found = self._method_hooks[name] = run(handler, op, method=True)
        return found

    def _is_tensor_subclass(self, cls: str) -> bool:
        """``nn.Parameter``, ``nn.Buffer`` (or a user's subclass): their methods are the Tensor's, so are their hooks.

        mypy names a method hook by the receiver's class, and ``x + param`` calls ``param.__radd__``
        first because the right operand's class is a subclass."""
        if not cls.startswith(NN.NN + ".") and "." not in cls:
            return False
        sym = self.lookup_fully_qualified(cls)
        return sym is not None and isinstance(sym.node, TypeInfo) and sym.node.has_base(TENSOR)

    def _layer_hook(self, cls: str) -> Callable[[MethodContext], Type] | None:
        """``layer(x)`` / ``layer.forward(x)`` of a shapetorch.nn layer (or a subclass keeping its forward)."""
        if not cls.startswith(NN.NN + "."):
            sym = self.lookup_fully_qualified(cls)
            if sym is None or not isinstance(sym.node, TypeInfo) or NN.known_layer(sym.node) is None:
                return None
        elif cls.count(".") != 2:
            return None
        found = self._method_hooks.get(cls)
        if found is None:
            found = self._method_hooks[cls] = run(NN.layer_call, "layer", method=True)
        return found

    def get_function_hook(self, fullname: str) -> Callable[[FunctionContext], Type] | None:
        if fullname.startswith(NN.NN + "."):
            return self._nn_function_hook(fullname)
        if not fullname.startswith(MODULE + "."):
            return None
        name = fullname[len(MODULE) + 1 :]
        found = self._function_hooks.get(name)
        if found is None and name in FUNCTIONS:
            handler, op = FUNCTIONS[name]
            found = self._function_hooks[name] = run(handler, op, method=False)
        return found

    def _nn_function_hook(self, fullname: str) -> Callable[[FunctionContext], Type] | None:
        found = self._function_hooks.get(fullname)
        if found is not None:
            return found
        rest = fullname[len(NN.NN) + 1 :]
        if rest in NN.CONSTRUCTORS:
            found = run(NN.CONSTRUCTORS[rest], rest, method=False)
        elif rest in layers.CONSTRUCTORS:
            found = run(layers.CONSTRUCTORS[rest], rest, method=False)
        elif rest.startswith("functional.") and rest[len("functional.") :] in NN.FUNCTIONAL:
            name = rest[len("functional.") :]
            found = run(kind_checked(NN.FUNCTIONAL[name]), name, method=False)
        elif rest.startswith("functional.") and rest[len("functional.") :] in NN_FUNCTIONAL:
            name = rest[len("functional.") :]
            found = run(kind_checked(NN_FUNCTIONAL[name]), name, method=False)
        elif rest.startswith("functional.") and rest[len("functional.") :] in FUNCTIONAL_COMMON:
            handler, op = FUNCTIONAL_COMMON[rest[len("functional.") :]]
            found = run(handler, op, method=False)
        if found is not None:
            self._function_hooks[fullname] = found
        return found

    def get_function_signature_hook(self, fullname: str) -> Callable[[FunctionSigContext], FunctionLike] | None:
        return None if fullname.startswith(MODULE + ".") else relax

    def get_method_signature_hook(self, fullname: str) -> Callable[[MethodSigContext], FunctionLike] | None:
        if fullname.startswith(MODULE + "."):
            return None
        if fullname.endswith(".__call__"):
            return _module_call
        return relax

    def get_attribute_hook(self, fullname: str) -> Callable[[AttributeContext], Type] | None:
        if fullname.startswith(TENSOR + "."):
            return ATTRIBUTES.get(fullname[len(TENSOR) + 1 :])
        return None


def _module_call(ctx: MethodSigContext) -> FunctionLike:
    """``model(x)`` of a user Module is its typed ``forward(x)``; then relaxed as every call."""
    sig = NN.forward_signature(ctx.type)
    if sig is None:
        return relax(ctx)
    return relax(ctx._replace(default_signature=sig))


def plugin(version: str) -> type[Plugin]:
    return ShapetorchPlugin
