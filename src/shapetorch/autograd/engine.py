"""The backward engine: a topological walk over graph nodes, as small as micrograd's.

A :class:`Node` is made for each primitive whose inputs require grad. ``backward`` orders the
nodes reachable from the roots, feeds each its summed output gradient, calls its ``vjp``, undoes
broadcasting once (``sum_to``) and passes the gradients on; leaves accumulate into ``.grad``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .grad_mode import STATE, enable_grad, no_grad

if TYPE_CHECKING:
    from .._dispatch import Prim
    from .._tensor import Tensor


def _camel(name: str) -> str:
    return re.sub(r"(?:^|_)([a-z0-9])", lambda m: m.group(1).upper(), name)


class Node:
    """A recorded call of a primitive: ``name()`` is torch's (``AddBackward0``)."""

    __slots__ = ("__weakref__", "inputs", "metadata", "next_functions", "out", "params", "prim", "released")

    def __init__(self, prim: Prim, inputs: tuple[Any, ...], params: dict[str, Any], out: Tensor | None) -> None:
        from .._tensor import Tensor

        self.prim = prim
        self.inputs = inputs
        self.params = params
        self.released = False
        self.metadata: dict[str, Any] = {}
        if out is not None:  # saved for the vjp: an alias of the output that remembers this node
            saved = Tensor._make(out._data, out._device)
            saved._grad_fn, saved.requires_grad = self, True
            out = saved
        self.out: Any = out
        self.next_functions = tuple(_edge(a) for a in inputs if isinstance(a, Tensor))

    def name(self) -> str:
        return f"{_camel(self.prim.name)}Backward0"

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    def apply(self, grad: Tensor) -> list[Tensor | None]:
        from .._errors import fail
        from .._tensor import Tensor

        if self.released:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved tensors after they "
                "have already been freed). Saved intermediate values of the graph are freed when you call "
                ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
                "graph a second time or if you need to access saved tensors after calling backward."
            )
        vjp = self.prim.vjp
        tensors = [a for a in self.inputs if isinstance(a, Tensor)]
        if vjp is None:
            fail("autograd_not_registered_error", op=self.prim.name, i=0)
        grads = vjp(grad, self)
        # vjps return one entry per input; keep those of tensor inputs, in order
        out = [g for a, g in zip(self.inputs, grads) if isinstance(a, Tensor)]
        return [None if g is None else sum_to(g, t._data.shape) for g, t in zip(out, tensors)]

    def release(self) -> None:
        self.inputs = tuple(None if _is_tensor(a) else a for a in self.inputs)
        self.out = None
        self.released = True


class AccumulateGrad:
    """The node of a leaf that requires grad: gradients arriving here go into ``leaf.grad``."""

    __slots__ = ("__weakref__", "metadata", "next_functions", "variable")

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable
        self.next_functions: tuple[Any, ...] = ()
        self.metadata: dict[str, Any] = {}

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"


def _is_tensor(a: object) -> bool:
    from .._tensor import Tensor

    return isinstance(a, Tensor)


def _edge(t: Tensor) -> tuple[Any, int]:
    if t._grad_fn is not None:
        return (t._grad_fn, 0)
    if t.requires_grad:
        if t._accumulator is None:
            t._accumulator = AccumulateGrad(t)
        return (t._accumulator, 0)
    return (None, 0)


def sum_to(g: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Undo broadcasting: sum ``g`` down to ``shape`` (leading dims, and dims where ``shape`` has 1)."""
    gshape = g._data.shape
    if gshape == tuple(shape):
        return g
    lead = len(gshape) - len(shape)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape) if s == 1 and gshape[lead + i] != 1]
    if dims:
        g = g.sum(dim=dims, keepdim=True)
    return g.reshape(shape) if g._data.shape != tuple(shape) else g


def _topo(roots: Sequence[Any]) -> list[Any]:
    order: list[Any] = []
    seen: set[int] = set()
    for root in roots:
        stack: list[tuple[Any, bool]] = [(root, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            for nxt, _ in node.next_functions:
                if nxt is not None and id(nxt) not in seen:
                    stack.append((nxt, False))
    order.reverse()
    return order


def run_backward(
    roots: Sequence[Tensor], grads: Sequence[Tensor], retain_graph: bool, create_graph: bool,
    inputs: Sequence[Tensor] | None = None, accumulate: bool = True,
) -> dict[int, Tensor]:
    """Propagate ``grads`` from ``roots``. Returns the gradients that reached ``inputs`` (by id)."""
    nodes = [_edge(r)[0] for r in roots]
    pending: dict[int, Any] = {}
    for node, g in zip(nodes, grads):
        if node is not None:
            pending[id(node)] = pending[id(node)] + g if id(node) in pending else g
    wanted = {id(_edge(t)[0]): t for t in inputs} if inputs is not None else None
    captured: dict[int, Tensor] = {}
    mode = enable_grad() if create_graph else no_grad()
    with mode:
        for node in _topo([n for n in nodes if n is not None]):
            g = pending.pop(id(node), None)
            if g is None:
                continue
            if wanted is not None and id(node) in wanted:
                captured[id(wanted[id(node)])] = g
                if not accumulate or isinstance(node, AccumulateGrad):
                    continue
            if isinstance(node, AccumulateGrad):
                if accumulate:
                    _accumulate(node.variable, g, create_graph)
                continue
            for (nxt, _), gi in zip(node.next_functions, node.apply(g)):
                if nxt is None or gi is None:
                    continue
                pending[id(nxt)] = pending[id(nxt)] + gi if id(nxt) in pending else gi
            if not retain_graph:
                node.release()
    return captured


def _accumulate(leaf: Tensor, g: Tensor, create_graph: bool) -> None:
    if not create_graph:
        g = g.detach()
    if leaf.grad is None:
        leaf.grad = g if create_graph or g._base is None else g.clone()
    else:
        leaf.grad = leaf.grad + g


def backward(
    tensors: Tensor | Sequence[Tensor], grad_tensors: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None, create_graph: bool = False, inputs: Sequence[Tensor] | None = None,
) -> None:
    roots, grads = _roots(tensors, grad_tensors)
    keep = create_graph if retain_graph is None else retain_graph
    run_backward(roots, grads, keep, create_graph, inputs)


def grad(
    outputs: Tensor | Sequence[Tensor], inputs: Tensor | Sequence[Tensor],
    grad_outputs: Tensor | Sequence[Tensor | None] | None = None, retain_graph: bool | None = None,
    create_graph: bool = False, allow_unused: bool | None = None,
) -> tuple[Tensor | None, ...]:
    from .._tensor import Tensor

    ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    roots, grads = _roots(outputs, grad_outputs)
    keep = create_graph if retain_graph is None else retain_graph
    got = run_backward(roots, grads, keep, create_graph, ins, accumulate=False)
    result = tuple(got.get(id(t)) for t in ins)
    if not allow_unused and any(r is None for r in result):
        raise RuntimeError(
            "One of the differentiated Tensors appears to not have been used in the graph. "
            "Set allow_unused=True if this is the desired behavior."
        )
    return result


def _roots(tensors: Any, grads: Any) -> tuple[list[Tensor], list[Tensor]]:
    from .._tensor import Tensor

    roots = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    gl: list[Any] = [grads] if grads is None or isinstance(grads, Tensor) else list(grads)
    if len(gl) == 1 and len(roots) > 1 and gl[0] is None:
        gl = [None] * len(roots)
    out = []
    for r, g in zip(roots, gl):
        if not r.requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if r.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = r.new_ones(r._data.shape) if hasattr(r, "new_ones") else None
        out.append(g)
    _ = STATE
    return roots, out
