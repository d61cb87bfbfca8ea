"""``einsum``: a composite of diagonal/reshape/sum/permute/mul/matmul, so gradients and backends come free.

The rule (``_rules.einsum``) checks the equation against the shapes; :func:`_program` then turns
(equation, shapes) into a short list of steps and caches it, so a repeated call pays only for the
ops. Operands are contracted pairwise in a greedy order (cheapest intermediate first, like
opt_einsum's greedy strategy), each contraction one batched ``matmul``. The rule has checked every
shape, so when the operands share one floating or complex dtype (and autocast is off) the steps call
the primitives directly; otherwise they go through the public ops, which promote, refuse and cast.

No-grad fast path: a program without a ``matmul`` (single-operand traces, diagonals, sums and
permutes; products such as outer products) is one ``np.einsum`` call, the cpu kernel of the
``einsum`` primitive, when no operand needs a gradient or carries a forward-mode tangent, the dtypes
are one of float32/64 or complex64/128, autocast is off and the device has an ``einsum`` kernel.
That primitive has no vjp: gradients always come from the composite.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._autocast import AUTOCAST
from .._engine.primitives import PRIMS, Prim
from .._errors import fail, raise_from_rule
from .._grad_mode import STATE
from .._rules.einsum import N_LABELS, bind_einsum, letter, parse_equation, sublist_equation
from .._rules.errors import RuleError
from .._tensor import Tensor
from . import arithmetic  # noqa: F401  (registers the mul primitive)
from ._registry import public
from .matmul import _MATMUL
from .reduction import _SUM
from .views import _DIAGONAL, _view_of, permute_known, reshape_known

Step = tuple[str, int, Any]  # (kind, slot, argument): the argument is a shape, dims or the other slot
_MUL = PRIMS["mul"]
_FAST_DTYPES = frozenset(np.dtype(d) for d in ("float32", "float64", "complex64", "complex128"))


def _np_einsum(*arrays: Any, equation: str) -> Any:
    return np.einsum(equation, *arrays)


_EINSUM = Prim("einsum", _np_einsum)  # no vjp: only the no-grad fast path calls it
_VIEWS = ("reshape", "permute", "diag")


@public("einsum", method=False)
def clear_einsum_cache() -> None:
    """Forget parsed equations and compiled contraction programs."""
    parse_equation.cache_clear()
    _program.cache_clear()


@public("einsum", method=False)
def get_einsum_cache_size() -> int:
    """How many equations and (equation, shapes) programs are cached."""
    return parse_equation.cache_info().currsize + _program.cache_info().currsize


def _name(label: int) -> str:
    return letter(label) if label < N_LABELS else f"...{label - N_LABELS}"


class _Plan:
    """Builds the program while tracking each slot's labels and shape."""

    def __init__(self, operands: Sequence[tuple[int, ...]], shapes: Sequence[tuple[int, ...]],
                 sizes: dict[int, int], output: tuple[int, ...]) -> None:
        self.labels = [list(lb) for lb in operands]
        self.shapes = [list(s) for s in shapes]
        self.sizes = sizes
        self.output = output
        self.steps: list[Step] = []

    def reshape(self, slot: int, labels: list[int], shape: list[int]) -> None:
        if shape != self.shapes[slot]:
            self.steps.append(("reshape", slot, tuple(shape)))
        self.labels[slot], self.shapes[slot] = labels, shape

    def permute(self, slot: int, order: list[int]) -> None:
        if order != list(range(len(order))):
            self.steps.append(("permute", slot, tuple(order)))
            self.labels[slot] = [self.labels[slot][i] for i in order]
            self.shapes[slot] = [self.shapes[slot][i] for i in order]

    def sum_out(self, slot: int, keep: set[int]) -> None:
        drop = [i for i, lb in enumerate(self.labels[slot]) if lb not in keep]
        if drop:
            self.steps.append(("sum", slot, tuple(drop)))
            self.labels[slot] = [lb for i, lb in enumerate(self.labels[slot]) if i not in drop]
            self.shapes[slot] = [s for i, s in enumerate(self.shapes[slot]) if i not in drop]

    def prepare(self, slot: int) -> None:
        """Diagonals for repeated labels, then drop size-1 dims that broadcast against a larger size."""
        labels = self.labels[slot]
        while len(set(labels)) < len(labels):
            q = next(i for i, lb in enumerate(labels) if lb in labels[:i])
            p = labels.index(labels[q])
            self.steps.append(("diag", slot, (p, q)))
            lb, size = labels[p], self.shapes[slot][p]
            labels = [x for i, x in enumerate(labels) if i not in (p, q)] + [lb]
            self.shapes[slot] = [x for i, x in enumerate(self.shapes[slot]) if i not in (p, q)] + [size]
            self.labels[slot] = labels
        keep = [i for i, (lb, s) in enumerate(zip(labels, self.shapes[slot], strict=True)) if s != 1 or self.sizes[lb] == 1]
        if len(keep) < len(labels):  # a broadcast size-1 dim is constant along its label: forget the label
            self.reshape(slot, [labels[i] for i in keep], [self.shapes[slot][i] for i in keep])

    def needed(self, live: list[int], but: tuple[int, ...]) -> set[int]:
        need = set(self.output)
        for s in live:
            if s not in but:
                need.update(self.labels[s])
        return need

    def contract(self, a: int, b: int, keep: set[int]) -> None:
        """Contract slot b into slot a."""
        self.sum_out(a, keep | set(self.labels[b]))
        self.sum_out(b, keep | set(self.labels[a]))
        la, lb = self.labels[a], self.labels[b]
        batch = [x for x in la if x in lb and x in keep]
        inner = [x for x in la if x in lb and x not in keep]
        fa = [x for x in la if x not in lb]
        fb = [x for x in lb if x not in la]
        size = self.sizes
        self.permute(a, [la.index(x) for x in batch + fa + inner])
        self.permute(b, [lb.index(x) for x in batch + inner + fb])
        bshape = [size[x] for x in batch]
        if not inner:  # no summed label: a broadcast product is cheaper than a matmul with k = 1
            self.reshape(a, batch + fa, bshape + [size[x] for x in fa] + [1] * len(fb))
            self.reshape(b, batch + fb, bshape + [1] * len(fa) + [size[x] for x in fb])
            self.steps.append(("mul", a, b))
        else:
            na, nk, nb = (math.prod(size[x] for x in xs) for xs in (fa, inner, fb))
            self.reshape(a, la, bshape + [na, nk])
            self.reshape(b, lb, bshape + [nk, nb])
            self.steps.append(("matmul", a, b))
        self.labels[a] = batch + fa + fb
        self.shapes[a] = bshape + [size[x] for x in fa + fb]
        if inner and (len(fa) != 1 or len(fb) != 1):
            self.steps.append(("reshape", a, tuple(self.shapes[a])))


def _cost(plan: _Plan, a: int, b: int, keep: set[int]) -> tuple[bool, int]:
    la, lb = set(plan.labels[a]), set(plan.labels[b])
    out = (la | lb) & keep
    size = plan.sizes
    grow = math.prod(size[x] for x in out) - math.prod(size[x] for x in la) - math.prod(size[x] for x in lb)
    return (not (la & lb), grow)  # pairs that share a label first, then the smallest growth


@functools.lru_cache(maxsize=512)
def _program(equation: str, shapes: tuple[tuple[int, ...], ...]) -> tuple[tuple[Step, ...], int, str | None]:
    """The steps, the slot that holds the result, and the equation for the fast path (None: no fast path)."""
    binding = bind_einsum(equation, shapes)
    sizes = {k: v for k, v in binding.sizes.items() if isinstance(v, int)}  # all ints at runtime
    plan = _Plan(binding.operands, shapes, sizes, binding.output)
    live = list(range(len(shapes)))
    for s in live:
        plan.prepare(s)
    for s in live:
        plan.sum_out(s, plan.needed(live, (s,)))
    while len(live) > 1:
        pairs = [(a, b) for i, a in enumerate(live) for b in live[i + 1 :]]
        a, b = min(pairs, key=lambda p: _cost(plan, p[0], p[1], plan.needed(live, p)))
        plan.contract(a, b, plan.needed(live, (a, b)))
        live.remove(b)
    (last,) = live
    plan.sum_out(last, set(binding.output))
    plan.permute(last, [plan.labels[last].index(x) for x in binding.output])
    kinds = {step[0] for step in plan.steps}
    # np.einsum loops over every label at once: as cheap as the steps only when nothing is summed after
    # a product (one operand), or nothing is summed at all (each label is an output label).
    fast = "matmul" not in kinds and (len(shapes) == 1 or "sum" not in kinds)
    return tuple(plan.steps), last, _numpy_equation(binding.operands, binding.output) if fast else None


def _numpy_equation(operands: Sequence[tuple[int, ...]], output: tuple[int, ...]) -> str | None:
    """The bound equation in letters NumPy reads ('...' dims get letters of their own); None past 52 labels."""
    labels = sorted({x for term in operands for x in term})
    if len(labels) > len(_LETTERS):
        return None
    name = dict(zip(labels, _LETTERS, strict=False))
    return ",".join("".join(name[x] for x in term) for term in operands) + "->" + "".join(name[x] for x in output)


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _run(steps: tuple[Step, ...], result: int, operands: list[Tensor], direct: bool) -> Tensor:
    """Run the steps; ``direct`` calls the primitives (the rule has checked the shapes, the dtypes agree)."""
    slots = list(operands)
    for kind, s, arg in steps:
        t = slots[s]
        if kind == "matmul":
            slots[s] = _MATMUL(t, slots[arg]) if direct else t @ slots[arg]
        elif kind == "mul":
            slots[s] = _MUL(t, slots[arg]) if direct else t * slots[arg]
        elif kind == "sum":  # integer and bool sums go through the public sum (its accumulation dtype)
            slots[s] = _SUM(t, axis=arg, keepdims=False) if direct else t.sum(arg, dtype=t.dtype)
        elif kind == "reshape":
            slots[s] = reshape_known(t, arg) if direct else t.reshape(arg)
        elif kind == "permute":
            slots[s] = permute_known(t, arg) if direct else t.permute(arg)
        else:  # diag
            slots[s] = _view_of(_DIAGONAL(t, offset=0, axis1=arg[0], axis2=arg[1]), t) if direct else t.diagonal(0, *arg)
    return slots[result]


def _operands(args: tuple[Any, ...]) -> tuple[str, list[Any]]:
    if not args:
        fail("einsum_error_operand_count_mismatch", op="einsum", equation="", terms="an equation and", operands=0)
    if isinstance(args[0], str):
        ops = list(args[1:])
        if len(ops) == 1 and isinstance(ops[0], (list, tuple)):  # einsum(eq, [a, b]): the old list form
            ops = list(ops[0])
        return args[0], ops
    try:
        equation, n = sublist_equation(args)
    except RuleError as e:
        raise_from_rule(e)
    return equation, list(args[::2][:n])


@public("einsum", method=False)
def einsum(*args: Any) -> Tensor:
    """torch.einsum: ``einsum('ij,jk->ik', a, b)``, ``einsum('ij,jk', [a, b])`` or ``einsum(a, [0, 1], b, [1, 2])``."""
    equation, ops = _operands(args)
    for i, t in enumerate(ops):
        if not isinstance(t, Tensor):
            raise TypeError(f"einsum(): operand {i} must be a Tensor, not {type(t).__name__}")
    shapes = tuple(tuple(t._data.shape) for t in ops)
    try:
        steps, result, fast = _program(equation, shapes)
    except RuleError as e:
        raise_from_rule(e, f"  operand shapes: {', '.join(str(s) for s in shapes) or 'none'}")
    if not steps and len(ops) == 1:
        return ops[0].view(shapes[0])  # torch returns a view (never the operand itself) for 'ij->ij'
    dtype, direct, grad, tangent = ops[0]._data.dtype, not AUTOCAST.enabled, False, False
    for t in ops:
        direct = direct and t._data.dtype == dtype
        grad, tangent = grad or t.requires_grad, tangent or t._fw_grads is not None
    if fast and direct and dtype in _FAST_DTYPES and not (grad and STATE.enabled) and not tangent \
            and ops[0]._device.type in _EINSUM.kernels:
        out = _EINSUM(*ops, equation=fast)
        return _view_of(out, ops[0]) if steps[-1][0] in _VIEWS else out  # 'ii->i', 'ij->ji': views, as in torch
    return _run(steps, result, ops, direct and (ops[0].dtype.is_floating_point or ops[0].dtype.is_complex))
