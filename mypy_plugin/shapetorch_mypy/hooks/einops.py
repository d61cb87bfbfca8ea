"""einops patterns: ``rearrange``, ``reduce``, ``repeat`` (the module functions).

Rules: ``shapetorch._rules.einops``, imported on the first call (it is not needed to start mypy).
"""

from __future__ import annotations

from mypy.types import Type

from shapetorch._rules.dims import Dim

from ._common import Handler, Op, Unknown, exact


def _axes(op: Op) -> dict[str, Dim]:
    sizes: dict[str, Dim] = {}
    for name, args in op.call.by_name.items():
        if name != "axes_lengths":
            continue
        for a, kw in zip(args, _kw_names(op, name)):
            if kw is not None:
                sizes[kw] = op.size(a.expr, a.typ)
    return sizes


def _kw_names(op: Op, formal: str) -> list[str | None]:
    i = op.ctx.callee_arg_names.index(formal)
    return list(op.ctx.arg_names[i])


def einops(kind: str) -> Handler:
    def h(op: Op) -> Type:
        from shapetorch._rules.einops import einops_shape

        pattern = op.call.str_arg("pattern")
        if pattern is None:
            raise Unknown
        x = exact(op, "tensor")
        operation = kind
        if kind == "reduce":  # einops names the operation of reduce by its reduction
            operation = op.call.str_arg("reduction") or "sum"
        return op.like(x, tuple(einops_shape(pattern, operation, x.shape or (), _axes(op))))

    return h
