"""Reading call arguments: literal ints, strings, bools, dim lists and tensors.

A value is read from the expression when it is written literally (``2``, ``-1``, ``(0, 2)``) and
otherwise from its type, which keeps literal values of ``Final`` names (``H: Final = 4``).
Anything else is "not known" (None) and the hooks then stay silent.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass

from mypy.constant_fold import constant_fold_expr
from mypy.nodes import (
    EllipsisExpr,
    Expression,
    IntExpr,
    ListExpr,
    MemberExpr,
    NameExpr,
    OpExpr,
    StrExpr,
    TupleExpr,
    UnaryExpr,
    Var,
)
from mypy.plugin import FunctionContext, MethodContext
from mypy.typeops import try_getting_str_literals
from mypy.types import Instance, LiteralType, NoneType, TupleType, Type, get_proper_type

Ctx = FunctionContext | MethodContext


_INT_OPS: dict[str, Callable[[int, int], int]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv, "%": operator.mod,
}


def fold_int(expr: Expression) -> int | None:
    """An int expression of literals and ``Final`` int names (``2 * D``, ``N + 1``, ``D // H``), else None.

    mypy's own constant folding resolves only names of the module being checked; a size is as often
    written inside a method or from an imported constant, so the names are resolved here."""
    if isinstance(expr, IntExpr):
        return expr.value
    if isinstance(expr, UnaryExpr) and expr.op in "-+":
        v = fold_int(expr.expr)
        return None if v is None else (-v if expr.op == "-" else v)
    if isinstance(expr, (NameExpr, MemberExpr)):
        node = expr.node
        if isinstance(node, Var) and node.is_final and type(node.final_value) is int:
            return node.final_value
        return None
    if isinstance(expr, OpExpr) and expr.op in _INT_OPS:
        left, right = fold_int(expr.left), fold_int(expr.right)
        if left is None or right is None or (expr.op in ("//", "%") and right == 0):
            return None
        return _INT_OPS[expr.op](left, right)
    if isinstance(expr, OpExpr) and expr.op == "**":
        base, exp = fold_int(expr.left), fold_int(expr.right)
        return base**exp if base is not None and exp is not None and 0 <= exp <= 64 else None
    return None


def int_value(expr: Expression | None, typ: Type | None) -> int | None:
    if expr is not None:
        v = fold_int(expr)
        if v is not None:
            return v
    if isinstance(expr, OpExpr):  # anything else mypy folds (names of this module)
        folded = constant_fold_expr(expr, "")
        if type(folded) is int:
            return folded
    if typ is None:
        return None
    p = get_proper_type(typ)
    lit = p.last_known_value if isinstance(p, Instance) else p
    if isinstance(lit, LiteralType) and type(lit.value) is int:
        return lit.value
    return None


def bool_value(expr: Expression | None, typ: Type | None) -> bool | None:
    if isinstance(expr, NameExpr) and expr.fullname in ("builtins.True", "builtins.False"):
        return expr.fullname == "builtins.True"
    if typ is None:
        return None
    p = get_proper_type(typ)
    lit = p.last_known_value if isinstance(p, Instance) else p
    if isinstance(lit, LiteralType) and isinstance(lit.value, bool):
        return lit.value
    return None


def str_value(expr: Expression | None, typ: Type | None) -> str | None:
    if isinstance(expr, StrExpr):
        return expr.value
    if expr is None or typ is None:
        return None
    vals = try_getting_str_literals(expr, typ)
    return vals[0] if vals is not None and len(vals) == 1 else None


def is_none(expr: Expression | None, typ: Type | None) -> bool:
    if isinstance(expr, NameExpr) and expr.fullname == "builtins.None":
        return True
    return typ is not None and isinstance(get_proper_type(typ), NoneType)


def is_ellipsis(expr: Expression | None) -> bool:
    return isinstance(expr, EllipsisExpr)


def int_list(expr: Expression | None, typ: Type | None) -> list[int | None] | None:
    """The items of a literal tuple/list of ints (None for a non-literal item), or None."""
    if isinstance(expr, (TupleExpr, ListExpr)):
        return [int_value(e, None) for e in expr.items]
    if typ is not None:
        p = get_proper_type(typ)
        if isinstance(p, TupleType):
            return [int_value(None, t) for t in p.items]
    return None


@dataclass
class Arg:
    expr: Expression
    typ: Type


def int_or_ints(a: Arg | None) -> int | list[int] | None:
    """A literal int, or a literal list/tuple of ints (split sizes, sections); None when not all known."""
    if a is None:
        return None
    n = int_value(a.expr, a.typ)
    if n is not None:
        return n
    items = int_list(a.expr, a.typ)
    if items is None or any(i is None for i in items):
        return None
    return [i for i in items if i is not None]


class Call:
    """Uniform access to the actual arguments of a hooked call, by formal name."""

    def __init__(self, ctx: Ctx) -> None:
        self.ctx = ctx
        self.by_name: dict[str, list[Arg]] = {}
        self.unnamed: list[list[Arg]] = []  # dunder and positional-only formals have no name
        for i, name in enumerate(ctx.callee_arg_names):
            actual = [Arg(e, t) for e, t in zip(ctx.args[i], ctx.arg_types[i])]
            if name is not None:
                self.by_name[name] = actual
            else:
                self.unnamed.append(actual)

    def get(self, name: str) -> Arg | None:
        found = self.all(name)
        return found[0] if found else None

    def all(self, name: str) -> list[Arg]:
        if name in self.by_name:
            return self.by_name[name]
        if len(self.unnamed) == 1 and not self.by_name:  # `a @ b`, `x[i]`: the one operand
            return self.unnamed[0]
        return []

    def given(self, name: str) -> bool:
        return bool(self.all(name))

    def int_arg(self, name: str) -> int | None:
        a = self.get(name)
        return int_value(a.expr, a.typ) if a else None

    def str_arg(self, name: str) -> str | None:
        a = self.get(name)
        return str_value(a.expr, a.typ) if a else None

    def bool_arg(self, name: str, default: bool) -> bool | None:
        a = self.get(name)
        return bool_value(a.expr, a.typ) if a else default
