"""Elementwise ops and broadcasting: unary ops, binary ops and their dunders, ``where``, ``expand``.

Rules: ``shapetorch._rules.broadcast`` (``broadcast_shapes``, ``expand_shape``) and the dtype
promotion of ``shapetorch._rules.dtypes``.
"""

from __future__ import annotations

from collections.abc import Sequence

from mypy.plugin import MethodContext
from mypy.types import Instance, LiteralType, Type, get_proper_type

from shapetorch._rules import dtypes as DT
from shapetorch._rules.broadcast import broadcast_shapes, expand_shape
from shapetorch._rules.dims import Shape

from ..args import Arg
from ..convert import TensorInfo
from ._common import Handler, Op, Unknown, anything_variadic, dtype_of, exact


def unary(dtype: str) -> Handler:
    def h(op: Op) -> Type:
        x = op.input()
        if x.dtype:
            DT.check_kind(op.name, x.dtype)
        return op.result(x.shape, dtype_of(op, x, dtype), x.variadic)

    return h


_SCALARS = {"builtins.bool": "bool", "builtins.int": "int64", "builtins.float": "float32", "builtins.complex": "complex64"}


def _operand(op: Op, a: Arg | None) -> tuple[TensorInfo, int]:
    """A tensor or Python scalar operand and its promotion priority."""
    if a is None:
        raise Unknown
    info = op.conv.tensor(a.typ)
    if info is not None:
        prio = DT.TENSOR if (info.variadic is None and info.shape) else DT.ZERO_DIM
        if info.shape is None or (info.variadic is not None and not info.shape):
            prio = -1  # rank unknown: the priority is unknown too
        return info, prio
    p = get_proper_type(a.typ)
    if isinstance(p, LiteralType):
        p = p.fallback
    if isinstance(p, Instance) and p.type.fullname in _SCALARS:
        return TensorInfo((), _SCALARS[p.type.fullname], p), DT.SCALAR
    raise Unknown


def _number(operand: tuple[TensorInfo, int]) -> str | None:
    """The Python type name of a scalar operand (``float``), None for a tensor."""
    info, prio = operand
    p = get_proper_type(info.dtype_type)
    return p.type.name if prio == DT.SCALAR and isinstance(p, Instance) else None


def _promote(op: Op, operands: Sequence[tuple[TensorInfo, int]]) -> str | None:
    if any(prio < 0 or info.dtype is None for info, prio in operands):
        return None
    return DT.result_type((info.dtype, prio) for info, prio in operands if info.dtype is not None)


def broadcast_infos(op: Op, infos: Sequence[TensorInfo]) -> tuple[Shape | None, Type | None]:
    """Broadcast several shapes; unknown leading dims are kept where the known suffix decides."""
    if any(i.shape is None for i in infos):
        return None, None
    exact = [i for i in infos if i.variadic is None]
    var = [i for i in infos if i.variadic is not None]
    if not var:
        return broadcast_shapes(*(i.shape for i in exact if i.shape is not None), op=op.name), None
    k = min(len(i.shape) for i in var if i.shape is not None)
    suffix_shapes = [i.shape[len(i.shape) - k :] for i in var if i.shape is not None]
    out = broadcast_shapes(*suffix_shapes, *(i.shape for i in exact if i.shape is not None), op=op.name)
    if len(var) == 1 and all(len(i.shape or ()) <= k for i in exact) and var[0].shape is not None:
        v = var[0].shape
        return v[: len(v) - k] + out, var[0].variadic
    if len(out) > k:
        return None, None
    return out, anything_variadic(op)


def binary(dtype: str, reverse: bool = False, other: str = "other") -> Handler:
    def h(op: Op) -> Type:
        if op.method:
            assert isinstance(op.ctx, MethodContext)
            info = op.conv.tensor(op.ctx.type)
            if info is None:
                raise Unknown
            first: tuple[TensorInfo, int] = (info, DT.TENSOR if info.exact and info.shape else -1)
            if info.exact and not info.shape:
                first = (info, DT.ZERO_DIM)
        else:
            first = _operand(op, op.call.get("input"))
        second = _operand(op, op.call.get(other))
        if not reverse:  # a Python number where torch's schema wants a Tensor (maximum(x, 2.0)): as at run time
            DT.check_tensor_operands(op.name, _number(first), _number(second))
        pair = [second, first] if reverse else [first, second]
        common = _promote(op, pair)
        if common is not None:  # the kernels of the promoted dtype exist (the bitwise ops take no floats, ...)
            DT.check_kind(op.name, common, any(info.dtype == "bool" for info, _ in pair),
                          scalar_exponent=pair[1][1] == DT.SCALAR)
        shape, variadic = broadcast_infos(op, [p[0] for p in pair])
        return op.result(shape, _binary_dtype(op, dtype, pair), variadic)

    return h


def _binary_dtype(op: Op, rule: str, pair: Sequence[tuple[TensorInfo, int]]) -> Type:
    if rule == "bool":
        return op.conv.dtype_type("bool")
    name = _promote(op, pair)
    if name is None:
        types = {str(info.dtype_type) for info, prio in pair if prio != DT.SCALAR}
        if rule == "promote" and len(types) == 1 and all(p != DT.SCALAR for _, p in pair):
            return pair[0][0].dtype_type  # the same (generic) dtype on both sides
        return op.default_dtype()
    if rule == "float":
        name = DT.float_result(name)
    return op.conv.dtype_type(name)


def where(op: Op) -> Type:
    cond = op.tensor_arg("condition")
    if op.method:
        x: tuple[TensorInfo, int] = (op.input(), DT.TENSOR)
        y = _operand(op, op.call.get("other"))
    else:
        if not op.call.given("input"):
            raise Unknown
        x = _operand(op, op.call.get("input"))
        y = _operand(op, op.call.get("other"))
    if op.method and not (x[0].exact and x[0].shape):
        x = (x[0], -1)
    shape, variadic = broadcast_infos(op, [cond, x[0], y[0]])
    return op.result(shape, _binary_dtype(op, "promote", [x, y]), variadic)


# ---------------------------------------------------------------------------------------- expand
def expand(op: Op) -> Type:
    x = exact(op)
    return op.like(x, expand_shape(x.shape or (), op.sizes("size", required="sizes"), op.name))


def expand_as(op: Op) -> Type:
    x, other = exact(op), op.tensor_arg("other")
    if not other.exact:
        raise Unknown
    return op.like(x, expand_shape(x.shape or (), other.shape or (), op.name))


def broadcast_to(op: Op) -> Type:
    x = exact(op)
    return op.like(x, expand_shape(x.shape or (), op.sizes("size"), op.name))
