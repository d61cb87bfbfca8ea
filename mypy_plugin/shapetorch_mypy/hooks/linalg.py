"""``shapetorch.linalg``: ``solve`` and ``lu_solve`` (their batch dims broadcast, B a matrix or a batch of vectors),
``inv``/``det``/``cholesky``/``matrix_exp`` (square matrices), ``tensorinv``/``tensorsolve``, and the named tuples
of ``svd`` (U, S, Vh), ``qr`` (Q, R), ``eigh`` (eigenvalues, eigenvectors), ``slogdet`` (sign, logabsdet), ``lu``
(P, L, U) and ``lu_factor`` (LU, pivots).

Rules: ``shapetorch._rules.matrix`` (the functions the runtime runs before each of these ops).
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.expandtype import expand_type_by_instance
from mypy.types import Instance, TupleType, Type, get_proper_type

from shapetorch._rules import dtypes as DT
from shapetorch._rules.errors import RuleError
from shapetorch._rules.matrix import (
    eigh_shapes,
    inverse_shape,
    lu_shapes,
    lu_solve_shape,
    qr_shapes,
    solve_shape,
    svd_shapes,
    tensorinv_shape,
    tensorsolve_shape,
    triangular_shape,
)

from ..args import str_value
from ..convert import MODULE, TensorInfo
from ._common import Handler, Op, Unknown, exact

LINALG = f"{MODULE}.linalg"


def _real(op: Op, x: TensorInfo) -> Type:
    return op.conv.dtype_type(DT.to_real(x.dtype)) if x.dtype else op.conv.any()


def _named(op: Op, cls: str, args: list[Type]) -> Type:
    """``shapetorch.linalg.<cls>[args]`` as the named tuple mypy knows (so it unpacks and indexes)."""
    inst = op.ctx.api.named_generic_type(f"{LINALG}.{cls}", args)
    info = inst.type
    if info.tuple_type is None:
        return inst
    items = expand_type_by_instance(info.tuple_type, inst)
    return items.copy_modified(fallback=inst) if isinstance(items, TupleType) else inst


def _keeps_tuple(handler: Handler) -> Handler:
    """After a reported error a named-tuple op still returns its named tuple (of unknown shapes)."""

    def h(op: Op) -> Type:
        try:
            return handler(op)
        except RuleError as err:
            op.fail(err)
            p = get_proper_type(op.ctx.default_return_type)
            return p if isinstance(p, (Instance, TupleType)) else op.conv.unknown_tensor()

    return h


def square(op: Op) -> Type:
    """inv, matrix_exp, matrix_power, cholesky: (..., n, n) -> the same shape."""
    x = exact(op, "input" if op.name == "linalg.matrix_power" else "A")
    return op.like(x, inverse_shape(x.shape or (), op.name))


def det(op: Op) -> Type:
    x = exact(op, "A")
    return op.like(x, (inverse_shape(x.shape or (), op.name))[:-2])


def solve(op: Op) -> Type:
    a, b = op.input("A"), op.tensor_arg("B")
    if not (a.exact and b.exact):
        raise Unknown
    out = solve_shape(a.shape or (), b.shape or (), op.bool_arg("left", True), op.name)
    return op.like(a, out)


def _svd(op: Op) -> Type:
    x = exact(op, "A")
    u, s, vh = svd_shapes(x.shape or (), op.bool_arg("full_matrices", True), op.name)
    return _named(op, "SVD", [op.conv.shape_type(u), op.conv.shape_type(s), op.conv.shape_type(vh), x.dtype_type,
                              _real(op, x)])


def svdvals(op: Op) -> Type:
    x = exact(op, "A")
    return op.result(svd_shapes(x.shape or (), False, op.name)[1], _real(op, x))


def _qr(op: Op) -> Type:
    x = exact(op, "A")
    a = op.call.get("mode")
    mode = "reduced" if a is None else str_value(a.expr, a.typ)
    if mode is None:
        raise Unknown
    q, r = qr_shapes(x.shape or (), mode, op.name)
    return _named(op, "QR", [op.conv.shape_type(q), op.conv.shape_type(r), x.dtype_type])


def _eigh(op: Op) -> Type:
    x = exact(op, "A")
    w, v = eigh_shapes(x.shape or (), op.name)
    return _named(op, "Eigh", [op.conv.shape_type(w), op.conv.shape_type(v), x.dtype_type, _real(op, x)])


def eigvalsh(op: Op) -> Type:
    x = exact(op, "A")
    return op.result(eigh_shapes(x.shape or (), op.name)[0], _real(op, x))


def _slogdet(op: Op) -> Type:
    x = exact(op, "A")
    batch = inverse_shape(x.shape or (), op.name)[:-2]
    return _named(op, "SlogDet", [op.conv.shape_type(batch), x.dtype_type, _real(op, x)])


def _lu(op: Op) -> Type:
    x = exact(op, "A")
    p, low, up = lu_shapes(x.shape or (), op.name)
    return _named(op, "PLU", [op.conv.shape_type(p), op.conv.shape_type(low), op.conv.shape_type(up), x.dtype_type])


def _lu_factor(op: Op) -> Type:
    """LU has A's shape; the pivots are (..., min(m, n))."""
    x = exact(op, "A")
    _, low, _ = lu_shapes(x.shape or (), op.name)
    return _named(op, "LUFactor", [op.conv.shape_type(x.shape or ()), op.conv.shape_type(low[:-2] + low[-1:]),
                                   x.dtype_type])


def lu_solve(op: Op) -> Type:
    lu, b = op.input("LU"), op.tensor_arg("B")
    if not (lu.exact and b.exact):
        raise Unknown
    return op.like(b, lu_solve_shape(lu.shape or (), b.shape or (), op.bool_arg("left", True), op.name))


def tensorinv(op: Op) -> Type:
    x = exact(op, "A")
    return op.like(x, tensorinv_shape(x.shape or (), op.int_arg("ind", 2), op.name))


def tensorsolve(op: Op) -> Type:
    a, b = op.input("A"), op.tensor_arg("B")
    if not (a.exact and b.exact) or op.call.given("dims"):
        raise Unknown  # dims moves A's dims first: left to the runtime
    return op.like(a, tensorsolve_shape(a.shape or (), b.shape or (), op.name))


svd, qr, eigh, slogdet, lu, lu_factor = (_keeps_tuple(h) for h in (_svd, _qr, _eigh, _slogdet, _lu, _lu_factor))

# the plugin's function table entries: "linalg.<name>" -> (handler, the op name messages use)
def triangular(op: Op) -> Type:
    """``triu``/``tril``: the shape is kept; an input of fewer than 2 dims is the rule's error."""
    x = op.input()
    if x.shape is None:
        raise Unknown
    if x.exact:
        triangular_shape(x.shape, op.name)
    return op.like(x, x.shape, x.variadic)


FUNCTIONS: dict[str, tuple[Callable[[Op], Type], str]] = {
    "linalg.solve": (solve, "linalg.solve"),
    "linalg.inv": (square, "inverse"),
    "linalg.matrix_exp": (square, "linalg.matrix_exp"),
    "linalg.matrix_power": (square, "linalg.matrix_power"),
    "linalg.cholesky": (square, "linalg.cholesky"),
    "linalg.det": (det, "linalg.det"),
    "linalg.svd": (svd, "linalg.svd"),
    "linalg.svdvals": (svdvals, "linalg.svd"),
    "linalg.qr": (qr, "linalg.qr"),
    "linalg.eigh": (eigh, "linalg.eigh"),
    "linalg.eigvalsh": (eigvalsh, "linalg.eigvalsh"),
    "linalg.slogdet": (slogdet, "linalg.slogdet"),
    "linalg.lu": (lu, "linalg.lu"),
    "linalg.lu_factor": (lu_factor, "linalg.lu_factor"),
    "linalg.lu_solve": (lu_solve, "linalg.lu_solve"),
    "linalg.tensorinv": (tensorinv, "linalg.tensorinv"),
    "linalg.tensorsolve": (tensorsolve, "linalg.tensorsolve"),
}
