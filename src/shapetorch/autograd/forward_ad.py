"""Forward-mode AD (``shapetorch.autograd.forward_ad``): dual tensors carry a tangent, and each
primitive's ``jvp`` rule (``autograd/jvp_rules.py``) pushes tangents from its inputs to its output.

One level at a time, as in torch: entering a second ``dual_level`` raises; leaving a level drops
the tangents made in it.
"""

from __future__ import annotations

import functools
import itertools
import weakref
from types import TracebackType
from typing import TYPE_CHECKING, Any, NamedTuple

from .._engine import intercept as _intercept

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual"]


class _Fwd:
    def __init__(self) -> None:
        self.level: int | None = None
        self.paused = 0
        self.made: list[weakref.ref[Any]] = []


FWD = _Fwd()
_LEVELS = itertools.count()


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the ``primal`` (a view of the dual tensor) and its ``tangent``."""

    primal: Tensor
    tangent: Tensor | None


def enter_dual_level() -> int:
    """Start a forward AD level; returns its index. Prefer the ``dual_level`` context manager."""
    if FWD.level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    from . import jvp_rules  # noqa: F401  (sets the primitives' jvp)

    FWD.level = next(_LEVELS)
    FWD.made = []
    _intercept.acquire()
    return FWD.level


def exit_dual_level(*, level: int | None = None) -> None:
    """End the current level: tangents made in it are dropped."""
    if FWD.level is None or (level is not None and level != FWD.level):
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is "
                           "not supported.")
    lvl = FWD.level
    for ref in FWD.made:
        t = ref()
        if t is not None and t._fw_grads is not None:
            t._fw_grads.pop(lvl, None)
            if not t._fw_grads:
                t._fw_grads = None
    FWD.made = []
    FWD.level = None
    _intercept.release()


class dual_level:
    """Context manager for forward AD: ``with dual_level(): x = make_dual(p, t); y = f(x); unpack_dual(y)``."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        exit_dual_level()


def _level(level: int | None, what: str) -> int | None:
    if level is None:
        return FWD.level
    return level


def set_tangent(t: Tensor, tangent: Tensor, level: int) -> None:
    if t._fw_grads is None:
        t._fw_grads = {}
    t._fw_grads[level] = tangent
    FWD.made.append(weakref.ref(t))


def detach_keeping_tangents(x: Tensor, requires_grad: bool = False) -> Tensor:
    """``x.detach()`` (made a fresh leaf that requires grad when asked) that keeps x's tangents: a reverse-mode
    transform inside a forward-mode one (jvp of grad, jacfwd of jacrev) starts from such leaves and hands back
    such results, so its gradient is differentiated in forward mode (``detach`` alone drops the tangents)."""
    d = x.detach()
    if requires_grad:
        d.requires_grad_(True)
    for level, tangent in (x._fw_grads or {}).items():
        # a result's tangent was computed from the tracked leaves, so it is in their graph too: detached likewise
        set_tangent(d, tangent if requires_grad else tangent.detach(), level)
    return d


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` that carries ``tangent`` as its forward gradient."""
    lvl = _level(level, "make_dual")
    if lvl is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if not (tensor.dtype.is_floating_point or tensor.dtype.is_complex):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.dtype.is_floating_point or tangent.dtype.is_complex):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if tangent._data.shape != tensor._data.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original Tensor, this is not "
            f"supported. Tensor is of size {list(tensor._data.shape)} while the given forward gradient is of size "
            f"{list(tangent._data.shape)}."
        )
    FWD.paused += 1
    try:
        dual = tensor.view_as(tensor)
    finally:
        FWD.paused -= 1
    set_tangent(dual, tangent, lvl)
    return dual


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)``; the tangent is None when ``tensor`` has none at this level."""
    lvl = _level(level, "unpack_dual")
    tangent = tensor._fw_grads.get(lvl) if tensor._fw_grads is not None and lvl is not None else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    FWD.paused += 1
    try:
        primal = tensor.view_as(tensor)
    finally:
        FWD.paused -= 1
    return UnpackedDualTensor(primal, tangent)


class _View:
    __slots__ = ("inputs", "out", "params")

    def __init__(self, inputs: tuple[Any, ...], params: dict[str, Any], out: Any) -> None:
        self.inputs, self.params, self.out = inputs, params, out


def propagate(prim: Any, args: tuple[Any, ...], params: dict[str, Any], out: Tensor) -> None:
    """After a primitive ran: give ``out`` the tangent its jvp rule computes from the inputs' tangents."""
    from .._tensor import Tensor

    lvl = FWD.level
    assert lvl is not None
    tangents = tuple(a._fw_grads.get(lvl) if isinstance(a, Tensor) and a._fw_grads is not None else None
                     for a in args)
    if all(t is None for t in tangents):
        return
    if out._data.dtype.kind not in "fc" and not (out.dtype.is_floating_point or out.dtype.is_complex):
        return
    rule = prim.jvp
    if rule is None:
        from .jvp_rules import RULES

        rule = prim.jvp = RULES.get(prim.name)
    if rule is None and prim.vjp is not None:
        rule = functools.partial(_jvp_by_vjp, prim)
    if rule is None:
        raise NotImplementedError(f"Trying to use forward AD with {prim.name} that does not support it because it "
                                  "has not been implemented yet.")
    FWD.paused += 1
    try:
        t = rule(tangents, _View(args, params, out))
        if t is None:
            return
        if t._data.shape != out._data.shape:
            t = t.expand(out._data.shape).clone()
        if t._data.dtype != out._data.dtype:
            t = t.to(out.dtype)
    finally:
        FWD.paused -= 1
    set_tangent(out, t, lvl)
    # A node that saved this output keeps its data only; its tangents go with it, so a backward differentiated in
    # forward mode (jvp of grad) sees the output as the dual tensor it was.
    for slot, _, saved in getattr(out._grad_fn, "_saved", ()):
        if slot == -1:
            saved._fw = out._fw_grads


def _jvp_by_vjp(prim: Any, tangents: tuple[Any, ...], n: Any) -> Any:
    """A primitive without a jvp rule: ``J t`` by the double-vjp trick, since its vjp is linear in the
    cotangent ``u`` and written in shapetorch ops: ``J t = d/du <vjp(u), t>``."""
    from .._engine.backward import grad, sum_to
    from .._grad_mode import enable_grad
    from .._tensor import Tensor

    out = n.out
    with enable_grad():
        u = Tensor._make(out._data * 0, out._device).requires_grad_(True)
        total = None
        for a, g, t in zip(n.inputs, prim.vjp(u, n), tangents):
            if t is None or g is None:
                continue
            if g._data.shape != a._data.shape:
                g = sum_to(g, a._data.shape)
            term = (g * t).sum()
            total = term if total is None else total + term
        if total is None or not total.requires_grad:
            return out.new_zeros(out._data.shape)
        (jt,) = grad(total, u, allow_unused=True, materialize_grads=True)
    return jt


def _after_call(prim: Any, args: tuple[Any, ...], params: dict[str, Any], out: Tensor) -> None:
    if FWD.level is not None and not FWD.paused:
        propagate(prim, args, params, out)


_intercept.AFTER_CALL.append(_after_call)  # the engine's slow path calls it after every primitive
