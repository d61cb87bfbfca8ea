"""The backward engine.

A :class:`Node` is recorded for each primitive call whose inputs require grad (``primitives`` makes
it). It keeps its edges (``next_functions``), the params, and the tensors its vjp reads, each as a
:class:`SavedTensor` that remembers the version of the tensor when it was saved (and runs the
saved-tensor hooks). ``run_backward`` counts dependencies over the nodes reachable from the roots
(only those that lead to ``inputs`` when given), runs ready nodes latest-created first, as torch
does, undoes broadcasting once (``sum_to``) and accumulates into ``.grad`` by the default layout rules.
"""

from __future__ import annotations

import functools
import operator
import re
import sys
import threading
import weakref
from collections.abc import Callable, Sequence, Set
from typing import TYPE_CHECKING, Any, NoReturn, cast

import numpy as np

from .._device import backend
from .._errors import fail
from .._grad_mode import STATE, no_grad
from .._tensor import PLAIN_TYPES, Size, Tensor, refresh_view
from .anomaly import ANOMALY, forward_traceback, report
from .graph import _SEQ, HOOKS, HOOKS_OPEN, saved_attrs
from .graph import Node as GraphNode
from .intercept import INSTALLED as SLOW_PATH
from .intercept import PROFILER

if TYPE_CHECKING:
    from .primitives import Prim

_next_seq = _SEQ.__next__

# Whether the running backward accumulates into every leaf it reaches (``backward`` without ``inputs``).
# The reentrant checkpoint re-runs its function inside backward and calls ``backward`` on the recomputed
# graph, which is only right then (torch's ``autograd._is_checkpoint_valid``).
CHECKPOINT_VALID = [True]


def is_checkpoint_valid() -> bool:
    """False while ``autograd.grad`` or ``backward(inputs=...)`` runs: a reentrant checkpoint cannot serve them."""
    return CHECKPOINT_VALID[0]


def freed() -> NoReturn:
    """A second backward through a node whose saved values are freed (torch's wording, a coded ``AutogradError``)."""
    fail("autograd_error_graph_freed", op="backward")

_LEGACY = {
    "float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor", "bfloat16": "BFloat16Tensor",
    "complex64": "ComplexFloatTensor", "complex128": "ComplexDoubleTensor", "int64": "LongTensor",
    "int32": "IntTensor", "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor",
}


@functools.cache
def _camel(name: str) -> str:
    """``layer_norm`` -> ``LayerNorm`` (cached: ``Node.name()`` asks on every view of a split's piece)."""
    return re.sub(r"(?:^|_)([a-z0-9])", lambda m: m.group(1).upper(), name)


def describe(t: Tensor) -> str:
    """``[shapetorch.FloatTensor [2, 3]]``: how torch names a tensor in autograd errors."""
    return f"[shapetorch.{_LEGACY.get(t.dtype.name, 'Tensor')} {list(t._data.shape)}]"


class SavedTensor:
    """A tensor saved for backward, with the version it had then (``_raw_saved_<name>`` on a node).

    Inputs are kept as they are; an op's own output is kept as its data only (no reference cycle
    through the node), and made a tensor again, with the node as ``grad_fn``, when unpacked.
    """

    __slots__ = ("_cell", "_data", "_device", "_fw", "_meta", "_output_nr", "_packed", "_tensor", "_unpack", "_version")
    _cell: list[int] | None
    _unpack: Callable[[Any], Any] | None
    _tensor: Tensor | None
    _data: Any
    _device: Any
    _meta: Any
    _packed: Any
    _fw: dict[int, Tensor] | None  # an output's forward-mode tangents, by level (set by forward_ad.propagate)

    def __init__(self, t: Tensor, is_output: bool = False, output_nr: int = 0) -> None:
        owner = t._base if t._base is not None else t
        if owner._inference:  # (a view is an inference tensor when its base is: Tensor.is_inference)
            raise RuntimeError(
                "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode "
                "in computation tracked by autograd. To work around you can make a clone to get a normal tensor and "
                "use it in autograd."
            )
        cell = owner._version_cell
        if cell is None:
            cell = owner._version_cell = [0]
        self._cell = cell
        self._version = cell[0]
        self._output_nr = output_nr if is_output else -1
        self._fw = None
        stack = HOOKS.stack if HOOKS_OPEN[0] else None
        if stack:
            if HOOKS.disabled is not None:
                raise RuntimeError(HOOKS.disabled)
            pack, self._unpack = stack[-1]
            self._tensor = None
            self._meta = None if is_output else (t._grad_fn, t._output_nr, t._requires_grad, t._accumulator)
            self._packed = pack(t)
        else:
            self._unpack = None
            if is_output:
                self._tensor = None
                self._data, self._device = t._data, t._device
            else:
                self._tensor = t

    def unpack(self, node: Any = None) -> Tensor:
        """The saved tensor, after checking that no in-place op changed it since it was saved."""

        if self._cell is None:
            freed()
        if self._unpack is not None:
            t = self._unpack(self._packed)
            if not isinstance(t, Tensor):
                raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                                f"{type(t).__name__}")
            if self._output_nr >= 0:
                t = _alias(t, node, self._output_nr, True)
            elif self._meta[0] is not None or self._meta[2]:
                fn, nr, rg, acc = self._meta
                if t._grad_fn is not fn or t._requires_grad != rg:
                    t = _alias(t, fn, nr, rg)
                    t._accumulator = acc
        elif self._tensor is not None:
            t = self._tensor
        else:
            t = _alias(Tensor._make(self._data, self._device), node, self._output_nr, node is not None)
            if self._fw:
                t._fw_grads = self._fw
        if self._cell[0] != self._version:
            fn = node if self._output_nr >= 0 else t._grad_fn
            which = f", which is output {t._output_nr} of {fn.name()}," if fn is not None else ""
            hint = ("Hint: the backtrace further above shows the operation that failed to compute its gradient. The "
                    "variable in question was changed in there or anywhere later. Good luck!") if ANOMALY.enabled else (
                    "Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
                    "torch.autograd.set_detect_anomaly(True).")
            fail("autograd_error_modified_saved", op="backward", detail=f"{describe(t)}{which} is at version {self._cell[0]}; expected "
                 f"version {self._version} instead. {hint}")
        return t

    def release(self) -> None:
        self._cell = None
        self._tensor = self._packed = self._meta = None
        if self._output_nr >= 0 and self._unpack is None:
            self._data = None

    def register_hooks(self, pack_hook: Any, unpack_hook: Any) -> None:
        """Per-tensor hooks (``node._raw_saved_x.register_hooks``): pack now, unpack in backward."""
        if self._unpack is not None:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is forbidden")
        t = self._tensor if self._tensor is not None else None
        if t is None:

            t = Tensor._make(self._data, self._device)
        self._meta = None if self._output_nr >= 0 else (t._grad_fn, t._output_nr, t._requires_grad, t._accumulator)
        self._packed, self._unpack, self._tensor = pack_hook(t), unpack_hook, None


def _alias(t: Tensor, fn: Any, nr: int, requires_grad: bool) -> Tensor:
    """``t``'s data as a tensor with the given place in the graph."""

    a = Tensor._make(t._data, t._device)
    a._base = t._base if t._base is not None else t
    if fn is not None:
        a._grad_fn, a._output_nr = fn, nr
    a._requires_grad = requires_grad
    return a


# -- which inputs each primitive's vjp reads (torch's saved variables) ------------------------------------

_SELF = ((0, "self", -1),)
_NOTHING: tuple[tuple[int, str, int], ...] = ()
SAVES: dict[str, tuple[tuple[int, str, int], ...]] = {}
for _n in ("neg add sub floor_divide to_copy clone to_device index_backward index select slice index_select index_put "
           "cat conj sum reshape view permute expand diagonal diagonal_backward round sgn sign floor ceil trunc "
           "frac exp exp2 expm1 sqrt rsqrt tan tanh sigmoid reciprocal relu as_strided conj_physical cumsum deg2rad "
           "rad2deg flip triangle diagonal_scatter index_add roll constant_pad_nd view_as_real view_as_complex "
           "fft_c2c fft_to_complex pool_grad_guard overwrite").split():
    SAVES[_n] = _NOTHING
for _n in "log log2 log10 log1p sin cos asin acos atan sinh cosh asinh acosh atanh abs erf prod amax amin sgn".split():
    SAVES[_n] = _SELF
SAVES["mul"] = SAVES["matmul"] = ((0, "self", 1), (1, "other", 0))
SAVES["true_divide"] = ((0, "self", 1), (1, "other", -1))
SAVES["remainder"] = SAVES["fmod"] = ((0, "self", 1), (1, "other", 1))
SAVES["pow"] = ((0, "self", -1), (1, "exponent", -1))
SAVES["atan2"] = SAVES["maximum"] = SAVES["minimum"] = ((0, "self", -1), (1, "other", -1))
SAVES["where"] = ((0, "condition", -1),)
SAVES["gather"] = SAVES["scatter_add"] = ((1, "index", -1),)

# What torch's node keeps that is not one of our SavedTensors, so that a second backward through it raises as
# in torch: the indices of an advanced index (kept here in params), and a Python number operand of mul and div
# (torch wraps it in a 0-d tensor and saves that). Graphs whose nodes saved nothing may run backward twice.
# A slice (``idx2`` None) saves no indices.
HOLDS_INDICES = frozenset({"index", "index_put"})
HOLDS_NUMBER = frozenset({"mul", "true_divide"})

# torch's node names of the overloads that take a number at the first or the second place (``xlogy(2, x)`` is
# xlogy.Scalar_Self, ``xlogy(x, 2)`` xlogy.Scalar_Other); a freed tensor input reads None, a number never does
_NUMBER_NAMES = {"xlogy": ("XlogyBackward1", "XlogyBackward2"), "copysign": (None, "CopysignBackward1")}
_NAMES = {"true_divide": "Div", "to_copy": "ToCopy", "reshape": "View", "index_put": "IndexPut",
          "batch_norm": "NativeBatchNorm", "cross_entropy_loss": "NllLoss", "convolution_bias": "Convolution"}


def _default_saves(inputs: tuple[Any, ...], numbers: bool) -> tuple[tuple[int, str, int], ...]:
    """What a node of a primitive without a ``SAVES`` entry saves: every tensor input, under torch's names. It depends
    on where the tensors are only, so it is made once per layout (``numbers``: some input is no tensor)."""
    return _saves_at(tuple([i for i, a in enumerate(inputs) if isinstance(a, Tensor)]) if numbers
                     else tuple(range(len(inputs))))


@functools.cache
def _saves_at(slots: tuple[int, ...]) -> tuple[tuple[int, str, int], ...]:
    names = ["self", "other"]
    n = slots[-1] + 1 if slots else 0
    if n > _INPUT_ATTRS[0]:  # (NOTE [no __getattr__]: the attributes of more inputs than seen so far)
        saved_attrs(Node, (f"input{i}" for i in range(_INPUT_ATTRS[0], n)))
        _INPUT_ATTRS[0] = n
    return tuple([(i, names[i] if i < 2 else f"input{i}", -1) for i in slots])


class _View:
    """What a vjp sees: the unpacked inputs, the params and the output. One is made for every node a backward
    runs, so it has slots and is filled by ``_view_of_node`` without an ``__init__`` frame (a keyword-built
    ``SimpleNamespace`` cost two to three times as much)."""

    __slots__ = ("inputs", "node", "out", "params")
    inputs: tuple[Any, ...]
    params: dict[str, Any]
    out: Any
    node: Any  # the node whose vjp runs (``should_compute_output`` reads its edges); set by ``Node.apply`` only

    def __repr__(self) -> str:
        return f"_View(inputs={self.inputs!r}, params={self.params!r}, out={self.out!r})"


def _view_of_node(inputs: tuple[Any, ...], params: dict[str, Any], out: Any) -> _View:
    v = _new(_View)
    v.inputs, v.params, v.out = inputs, params, out
    return v


_CLASSES: dict[str, type[Node]] = {}


Plan = tuple[type["Node"], tuple[tuple[int, str, int], ...] | None, bool, bool, dict[int, Any], tuple[Any, Any]]


def _plan(prim: Prim) -> Plan:
    """What a node of ``prim`` needs that depends on the primitive only (NOTE [node cost]): its class (made
    once per name), what its vjp reads (``SAVES``), whether torch's node holds indices or a number, what
    ``record_tensors`` saves for a call of n tensors (NOTE [compiled record]: by arity, each made on its first call)
    and what ``record_number`` saves."""
    name = prim.name
    sub = _CLASSES.get(name)
    if sub is None:
        sub = _CLASSES[name] = type(f"{_NAMES.get(name) or _camel(name)}Backward0", (Node,), {})
        sub.__module__ = "shapetorch.autograd.graph"
    spec = SAVES.get(name)
    plan: Plan = (sub, spec, name in HOLDS_INDICES, name in HOLDS_NUMBER, {},
                  (_with_number(spec, 0), _with_number(spec, 1)))
    prim.node_plan = plan
    _ENGINE_NODES.add(sub)
    if prim.add_into is not None:
        _ADD_INTO[sub] = prim.add_into
    else:
        _PLAIN_NODES.add(sub)
    return plan


def _compiled(spec: tuple[tuple[int, str, int], ...] | None, n: int) -> Any:
    """What ``record`` would save from a call of ``n`` tensors (NOTE [compiled record]): per input, None (never) or
    ``(torch's name, cond)``, cond -1 (always) or the input whose ``requires_grad`` decides; False where the spec
    reads an input such a call does not have (``record`` decides those)."""
    if spec is None:  # (_default_saves of n tensors)
        spec = _saves_at(tuple(range(n)))
    per: list[tuple[str, int] | None] = [None] * n
    if list(spec) != sorted(spec):  # (record saves in the spec's order; the compiled form in the inputs')
        return False
    for slot, attr, cond in spec:
        if cond >= n:
            return False
        if slot < n:
            per[slot] = (attr, cond)
    return tuple(per)


def _with_number(spec: tuple[tuple[int, str, int], ...] | None, slot: int) -> str | bool | None:
    """What ``record`` would save from a call of a tensor at ``slot`` and a number at the other place (NOTE [compiled
    record]): the tensor's name, or None (nothing saved); False where ``record`` decides. The tensor requires grad (it
    is the call's only one), and a condition on the number is never met."""
    if spec is None:
        return ("self", "other")[slot]
    if list(spec) != sorted(spec) or any(cond >= 2 for _, _, cond in spec):
        return False
    for i, attr, cond in spec:
        if i == slot and cond != 1 - slot:
            return attr
    return None


# the node classes of primitives with an ``add_into`` (NOTE [accumulation buffer]), looked up by the walk per node
_ADD_INTO: dict[type[Node], Callable[[Any, Any, dict[str, Any]], bool]] = {}
# the node classes of primitives (NOTE [inline walk]); those without an ``add_into``
_ENGINE_NODES: set[type[Node]] = set()
_PLAIN_NODES: set[type[Node]] = set()


_new = object.__new__
_NO_EDGE = (None, 0)
_NO_SAVES: list[Any] = []  # (shared, never written: a node's ``_saved`` list is only read after record)
_NO_PLAIN: tuple[Any, ...] = ()
_NOTHING_SET: frozenset[Any] = frozenset()
_weak = weakref.ref


def record(prim: Prim, inputs: tuple[Any, ...], params: dict[str, Any], out: Tensor | None) -> Node:
    """The node of a primitive call whose inputs require grad: its edges, params and saved tensors.

    NOTE [node cost]: made on every op whose inputs require grad, so what depends on the primitive only (the
    class, what its vjp reads, whether torch's node holds more) is looked up once, in its plan, and the node is
    filled here in one frame (``Node(...)`` would run ``__new__`` and ``__init__``)."""
    cls, spec, holds_indices, holds_number, _, _ = prim.node_plan or _plan(prim)
    self: Node = _new(cls)
    self.prim = prim
    self.params = params
    self._seq = _next_seq()
    self._hooked = False  # (read by the walk on every node, so an instance value: NOTE [instance fields])
    nxt = []
    numbers = False
    for a in inputs:
        if type(a) is Tensor or isinstance(a, Tensor):
            fn = a._grad_fn
            if fn is not None:
                nxt.append((fn, a._output_nr))
            elif a._requires_grad:
                ref = a._accumulator  # (_leaf_edge, inlined for a leaf whose AccumulateGrad is alive)
                acc = ref() if ref is not None else None
                nxt.append((acc, 0) if acc is not None else _leaf_edge(a))
            else:
                nxt.append(_NO_EDGE)
        else:
            numbers = True
    self._next = tuple(nxt)
    if spec is None:
        spec = _default_saves(inputs, numbers)
    if spec or out is not None:
        saved: list[tuple[int, str, SavedTensor]] = []
        hooked = HOOKS_OPEN[0] > 0 and bool(HOOKS.stack)
        raw = list(inputs) if hooked else None
        n = len(inputs)
        for slot, attr, cond in spec:
            a = inputs[slot] if slot < n else None
            if (type(a) is Tensor or isinstance(a, Tensor)) and (cond < 0 or (type(c := inputs[cond]) is Tensor and c._requires_grad)
                                          or getattr(c, "_requires_grad", False)):
                if hooked or a._inference or (a._base is not None and a._base._inference):
                    st = SavedTensor(a)
                else:  # SavedTensor(a) for an input without saved-tensor hooks, inlined
                    owner = a._base if a._base is not None else a
                    cell = owner._version_cell
                    if cell is None:
                        cell = owner._version_cell = [0]
                    st = _new(SavedTensor)
                    st._cell, st._version, st._output_nr, st._unpack, st._tensor = cell, cell[0], -1, None, a
                saved.append((slot, attr, st))
                if raw is not None:
                    raw[slot] = None
        if out is not None:
            out._grad_fn, out._requires_grad = self, True  # as torch's pack hook sees it
            saved.append((-1, "result", SavedTensor(out, True)))
        self._inputs = tuple(raw) if raw is not None else inputs
        self._saved = saved
    else:
        self._inputs = inputs
        self._saved = _NO_SAVES
    self._plain = _NO_PLAIN
    self._holds = (holds_number and numbers) or (holds_indices and params.get("idx2") is not None)
    self._freed = False
    if ANOMALY.enabled:
        self.metadata["traceback_"] = forward_traceback()
    return self


def record_tensors(prim: Prim, inputs: tuple[Any, ...], params: dict[str, Any], out: Tensor | None) -> Node:
    """``record`` of a call whose inputs are all plain tensors (``x.exp()``, ``a * b``, a linear layer's input,
    weight and bias), while no saved-tensor hooks are open and anomaly mode is off (the caller tests both).

    NOTE [compiled record]: most recorded calls are of plain tensors only, and what ``record`` decides for them in
    its two loops (each input's edge; which inputs are saved, under which names, on which condition) depends only on
    the primitive, the number of inputs and their ``requires_grad``, so the saved layout is compiled once per
    primitive and arity (``_compiled``, in its plan) and one loop here writes the edges and saves: the node
    ``record`` makes, its saved inputs as plain entries (NOTE [plain saves]) that stand for the same
    ``SavedTensor``s (``tests/test_engine_record.py`` compares them field by field)."""
    plan = prim.node_plan or _plan(prim)
    n = len(inputs)
    saves = plan[4].get(n)
    if saves is None:
        saves = plan[4][n] = _compiled(plan[1], n)
    if saves is False:
        return record(prim, inputs, params, out)
    self: Node = _new(plan[0])
    self.prim = prim
    self.params = params
    self._seq = _next_seq()
    self._hooked = False
    edges = []
    plain = []
    for a, sa in zip(inputs, saves):
        fn = a._grad_fn
        if fn is not None:
            edges.append((fn, a._output_nr))
        elif a._requires_grad:
            ref = a._accumulator
            acc = ref() if ref is not None else None
            edges.append((acc, 0) if acc is not None else _leaf_edge(a))
        else:
            edges.append(_NO_EDGE)
        if sa is not None and (sa[1] < 0 or inputs[sa[1]]._requires_grad):
            owner = a._base if a._base is not None else a
            if owner._inference:  # (a view of an inference tensor is one)
                SavedTensor(a)  # (raises, as record's)
            cell = owner._version_cell
            if cell is None:
                cell = owner._version_cell = [0]
            plain.append((len(edges) - 1, sa[0], cell, cell[0]))
    self._next = tuple(edges)
    self._plain = tuple(plain) if plain else _NO_PLAIN
    if out is not None:
        out._grad_fn, out._requires_grad = self, True
        self._saved = [(-1, "result", SavedTensor(out, True))]
    else:
        self._saved = _NO_SAVES
    self._inputs = inputs
    self._holds = plan[2] and params.get("idx2") is not None
    self._freed = False
    return self


def record_number(prim: Prim, inputs: tuple[Any, ...], t: Tensor, slot: int, params: dict[str, Any],
                  out: Tensor | None) -> Node:
    """``record`` of a call of the tensor ``t`` at ``slot`` (0 or 1) and a number at the other place (``x * 2``,
    ``1 - x``, a vjp's ``g * n`` under ``create_graph``), under ``record_tensors``' conditions (NOTE [compiled
    record])."""
    plan = prim.node_plan or _plan(prim)
    attr = plan[5][slot]
    if attr is False:
        return record(prim, inputs, params, out)
    self: Node = _new(plan[0])
    self.prim = prim
    self.params = params
    self._seq = _next_seq()
    self._hooked = False
    fn = t._grad_fn
    if fn is not None:
        self._next = ((fn, t._output_nr),)
    else:  # (it requires grad: a leaf's edge)
        ref = t._accumulator
        acc = ref() if ref is not None else None
        self._next = ((acc, 0) if acc is not None else _leaf_edge(t),)
    if attr is not None:
        owner = t._base if t._base is not None else t
        if owner._inference:  # (a view of an inference tensor is one)
            SavedTensor(t)  # (raises, as record's)
        cell = owner._version_cell
        if cell is None:
            cell = owner._version_cell = [0]
        self._plain = ((slot, attr, cell, cell[0]),)  # (NOTE [plain saves])
    else:
        self._plain = _NO_PLAIN
    if out is not None:
        out._grad_fn, out._requires_grad = self, True
        self._saved = [(-1, "result", SavedTensor(out, True))]
    else:
        self._saved = _NO_SAVES
    self._inputs = inputs
    self._holds = plan[3] or (plan[2] and params.get("idx2") is not None)
    self._freed = False
    return self


class Node(GraphNode):
    """A recorded call of a primitive: ``name()`` is torch's (``MulBackward0``), and so is the class name."""

    def __new__(cls, prim: Prim, inputs: tuple[Any, ...], params: dict[str, Any], out: Tensor | None) -> Node:
        return record(prim, inputs, params, out)  # (no __init__: the node is whole when record returns it)

    prim: Prim
    params: dict[str, Any]
    _inputs: tuple[Any, ...]  # what the vjp reads, None where a saved tensor stands in (or was freed)
    _saved: list[tuple[int, str, SavedTensor]]  # (input slot or -1 for the output, torch's name, saved)
    # NOTE [plain saves]: an input saved with no saved-tensor hooks is, to the vjp, the input itself (``_inputs`` holds
    # it) once its version is checked, so the compiled record keeps ``(slot, torch's name, version cell, version)``
    # for it instead of a ``SavedTensor`` (an object per saved input, a third of recording ``a * b``). ``apply``
    # checks the versions; ``release`` drops the inputs and marks the node freed; whatever asks for the
    # ``SavedTensor`` objects themselves (``_raw_saved_self``, its hooks, ``_saved_self``, ``_saved_names``) first
    # turns these into the ``SavedTensor``s ``record`` would have made (``_materialize``), in record's order.
    _plain: tuple[tuple[int, str, list[int], int], ...] = ()
    # NOTE [instance fields]: CPython 3.11 reads an instance's own attributes by a specialized, cached path but a
    # class-level default by the generic lookup (several times dearer), so ``record`` sets the fields the walk reads
    # on every node (the hook lists, ``_holds``, ``_freed``) on the node itself; the defaults below serve the nodes
    # made elsewhere.
    label: str | None = None  # torch's name for a public op made of several primitives (mean: MeanBackward0)
    _holds = False  # torch's node saved something besides ``_saved`` (HOLDS_INDICES, HOLDS_NUMBER)
    _freed = False  # a backward without retain_graph ran through it, and it holds something

    def name(self) -> str:
        if self.label is not None:
            return self.label
        p = self.prim.name
        if p == "sum":
            return "SumBackward0" if not self.params.get("keepdims") and len(self.params.get("axis", ())) == len(
                self._inputs[0]._data.shape if self._inputs[0] is not None else ()) else "SumBackward1"
        if p == "max_pool":  # torch's node of max_pool{1,2,3}d (1-D runs as 2-D there)
            return f"MaxPool{max(len(self.params['kernel']), 2)}DWithIndicesBackward0"
        if p == "pow":
            self._materialize()
            # torch's three: tensor ** number (0), tensor ** tensor (1), number ** tensor (2)
            base = _is_tensor(self._inputs[0]) or any(s[0] == 0 for s in self._saved)
            exponent = _is_tensor(self._inputs[1]) or any(s[0] == 1 for s in self._saved)
            return "PowBackward0" if not exponent else "PowBackward1" if base else "PowBackward2"
        numbered = _NUMBER_NAMES.get(p)
        if numbered is not None:  # torch's overload of a number operand at that place has a node of its own
            for x, label in zip(self._inputs, numbered):
                if label is not None and x is not None and not _is_tensor(x):
                    return label
        return f"{_NAMES.get(p) or _camel(p)}Backward0"

    def _materialize(self) -> None:
        """NOTE [plain saves]: the plain saved inputs as the ``SavedTensor``s ``record`` makes (freed ones after a
        release), ahead of the rest (the result): from here on, the node is as ``record`` would have made it."""
        plain = self._plain
        if not plain:
            return
        made = []
        for slot, attr, cell, version in plain:
            t = self._inputs[slot]
            st = _new(SavedTensor)
            st._cell, st._version, st._output_nr, st._unpack, st._tensor = (
                cell if t is not None else None), version, -1, None, t
            made.append((slot, attr, st))
        self._saved = made + self._saved
        self._plain = _NO_PLAIN

    def _saved_names(self) -> list[str]:
        self._materialize()
        return [name for _, name, _ in self._saved]

    def _get_saved(self, name: str, raw: bool) -> Any:
        self._materialize()
        for _, n, s in self._saved:
            if n == name:
                return s if raw else s.unpack(self)
        raise AttributeError(name)

    @property
    def inputs(self) -> tuple[Any, ...]:
        return self._view().inputs

    @property
    def out(self) -> Any:
        return self._view().out

    def _view(self) -> _View:
        self._materialize()
        inputs = self._inputs
        out = None
        if self._saved:
            lst = list(inputs)
            for slot, _, s in self._saved:
                if slot < 0:
                    out = s.unpack(self)
                else:
                    lst[slot] = s.unpack(self)
            inputs = tuple(lst)
        return _view_of_node(inputs, self.params, out)

    def apply(self, grads: list[Any]) -> list[Any]:

        if self._freed:
            freed()
        vjp = self.prim.vjp
        if vjp is None:
            fail("autograd_not_registered_error", op=self.prim.name, i=0)
        for e in self._plain:  # (NOTE [plain saves]: a changed version takes the SavedTensor's check, which raises)
            if e[2][0] != e[3]:
                self._materialize()
                break
        inputs = self._inputs
        result = None
        if self._saved:  # (``_view``, inlined: an input saved without hooks and unchanged is read directly)
            lst = list(inputs)
            for slot, _, s in self._saved:
                if slot >= 0 and s._unpack is None and (t := s._tensor) is not None and s._cell[0] == s._version:  # type: ignore[index]  # (None only once freed, when _tensor is None too)
                    lst[slot] = t
                elif slot < 0:
                    result = s.unpack(self)
                else:
                    lst[slot] = s.unpack(self)
            inputs = tuple(lst)
        view = _new(_View)  # (_view_of_node, inlined)
        view.inputs, view.params, view.out, view.node = inputs, self.params, result, self
        res = vjp(grads[0], view)  # type: ignore[arg-type]  # a vjp reads inputs/params/out only
        out: list[Any] = []
        for a, g in zip(inputs, res):
            if type(a) is Tensor or isinstance(a, Tensor):
                if g is not None:
                    ga, aa = g._data, a._data
                    if ga.shape != aa.shape:
                        g = sum_to(g, aa.shape)
                    if ga.dtype != aa.dtype:
                        g = _cast_grad(g, a)
                out.append(g)
        return out

    def release(self) -> None:
        if self._holds and self.label is None:  # a composite's node (as_node) is torch's, which saves no number
            self._freed = True
        if self._plain:  # (NOTE [plain saves]: a later apply raises as the freed SavedTensors' unpack would)
            inputs = list(self._inputs)
            for e in self._plain:
                inputs[e[0]] = None
            self._inputs = tuple(inputs)
            self._freed = True
        if self._saved:
            inputs = list(self._inputs)
            for slot, _, s in self._saved:
                if slot >= 0 and s._unpack is None:  # (SavedTensor.release of a plain input, inlined)
                    s._cell = s._tensor = None
                    inputs[slot] = None
                else:
                    s.release()
                    if slot >= 0:
                        inputs[slot] = None
            self._inputs = tuple(inputs)


class MultiOutputNode(Node):
    """The one node of a primitive with several outputs (torch's ``SplitBackward0`` for all of a split's pieces):
    output ``i`` of the call is ``(node, i)``, and the vjp takes the list of the outputs' gradients (None for an
    output no gradient reached) where a one-output primitive's takes its gradient. ``Node.apply`` hands its vjp
    ``grads[0]``, so this node hands it the whole list as that first entry."""

    def apply(self, grads: list[Any]) -> list[Any]:
        return Node.apply(self, [grads])


def multi_output(prim: Prim) -> None:
    """Make ``prim``'s nodes :class:`MultiOutputNode` s (before its first node; ``primitives.call_outputs`` records
    them). Its vjp reads the input's shape and the params only, as torch's split and unbind save no tensor, so an
    in-place write into the input after the call does not fail its backward."""
    name = prim.name
    sub = _CLASSES[name] = type(f"{_NAMES.get(name) or _camel(name)}Backward0", (MultiOutputNode,), {})
    sub.__module__ = "shapetorch.autograd.graph"
    SAVES[name] = _NOTHING


# every name a primitive's node saves a tensor under (SAVES, _default_saves, the output): NOTE [no __getattr__]
_INPUT_ATTRS = [16]
saved_attrs(Node, ("self", "other", "result", *(f"input{i}" for i in range(2, _INPUT_ATTRS[0])),
                   *(attr for spec in SAVES.values() for _, attr, _ in spec)))


def _cast_grad(g: Tensor, a: Tensor) -> Tensor:
    if g.is_complex() and not a.is_complex():
        g = g.real
    return g.to(a.dtype)


def _is_tensor(a: object) -> bool:
    return isinstance(a, Tensor)


class AccumulateGrad(GraphNode):
    """The node of a leaf that requires grad: gradients arriving here go into ``leaf.grad``."""

    _seq = 1 << 62  # leaves run as soon as they are ready, as in torch

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def apply(self, grads: list[Any]) -> list[Any]:
        g = grads[0]
        if g is not None:
            accumulate(self.variable, g, STATE.enabled)
        return []


def _leaf_edge(t: Tensor) -> tuple[Any, int]:
    ref = t._accumulator
    acc = ref() if ref is not None else None
    if acc is None:  # (made on every forward whose graph died, as torch's: the tensor holds it weakly)
        acc = _new(AccumulateGrad)
        acc.variable = t
        acc._hooked = False  # (NOTE [instance fields]: read by every walk that reaches it)
        t._accumulator = _weak(acc)
    return (acc, 0)


def gradient_edge(t: Tensor) -> tuple[Any, int]:
    """``(node, output_nr)`` where the gradient w.r.t. ``t`` arrives."""
    if t._base is not None and t._view_cell[0] != t._view_version:
        refresh_view(t)
    if t._grad_fn is not None:
        return (t._grad_fn, t._output_nr)
    if t._requires_grad:
        return _leaf_edge(t)
    return (None, 0)


_edge = gradient_edge


@functools.cache
def _prim(name: str) -> Prim:
    """A primitive by name (the registry lives in ``primitives``, which imports this module; cached: no frame)."""
    from .primitives import PRIMS

    return PRIMS[name]


def sum_to(g: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Undo broadcasting: sum ``g`` down to ``shape`` (leading dims, and dims where ``shape`` has 1)."""
    gshape = g._data.shape
    if gshape == tuple(shape):
        return g
    lead = len(gshape) - len(shape)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape) if s == 1 and gshape[lead + i] != 1]
    if dims:
        if len(dims) == lead and not STATE.enabled:
            # leading dims only (a bias's gradient), and no graph to match torch's (its sum keeps the dims, then
            # views): the same sum without them, and no reshape after it; by the sum's kernel where its call would
            # take the untracked shortcut (NOTE [untracked call]: a plain floating tensor, no slow path), which
            # is what it would return
            if type(g) in PLAIN_TYPES and not SLOW_PATH[0] and g._data.dtype.kind in "fc" and not g._uninitialized \
                    and (k := _prim("sum").kernels.get(g._device.type)) is not None:
                out = _new(Tensor)  # (untracked_result)
                out._data, out._device, out._requires_grad = k(g._data, axis=tuple(dims), keepdims=False), g._device, False
                return out
            return g.sum(dims, False)
        g = g.sum(dims, True)  # (positional: the argument guard's fast test, not its keyword call)
    return g.reshape(shape) if g._data.shape != tuple(shape) else g


# -- accumulation into .grad ------------------------------------------------------------------------------

def dense_array(a: Any) -> bool:
    """A NumPy array that is non-overlapping and dense: its strides, sorted by size, are those of a contiguous
    array of some permutation of its dims (a flipped one too)."""
    if not isinstance(a, np.ndarray):
        return False
    if a.flags.c_contiguous or a.flags.f_contiguous:
        return True
    expect = a.itemsize
    for stride, size in sorted((abs(st), n) for st, n in zip(a.strides, a.shape)):
        if size == 1:
            continue
        if stride != expect:
            return False
        expect *= size
    return True


def _fresh_grad(leaf: Tensor, g: Tensor) -> Tensor:
    """Rule 1/2 of the default layouts: strides of the param when it is dense, else row-major."""

    src = g._data
    if isinstance(src, np.ndarray) and isinstance(lf := leaf._data, np.ndarray):
        dense = lf.flags.c_contiguous or dense_array(lf)  # (a row-major parameter, the common one: no call)
        if not _stealable_array(leaf, g, dense):
            src = np.empty_like(lf, order="K") if dense else np.empty(lf.shape, lf.dtype)
            np.copyto(src, g._data, casting="unsafe")
    elif not _stealable(leaf, g):
        return g.detach().clone()
    out = _new(Tensor)  # (Tensor._make, inlined: every fresh .grad)
    out._data, out._device = src, leaf._device
    if STATE.inference:
        out._inference = True
    return out


# NOTE [gradient stealing]: as torch's AccumulateGrad, a device gradient that nothing else can reach becomes
# ``leaf.grad`` without a copy. The counts are those of the engine's own references when the gradient is
# unique (a vjp's fresh result on its way to this leaf): any other holder (the user, a second leaf, a
# retained grad, a view of the same buffer) raises one of them, and the gradient is copied instead.
_GRAD_REFS = 6  # the walk's buffer, AccumulateGrad.apply's local, the arguments of accumulate, _fresh_grad and
# _stealable, getrefcount's
_DATA_REFS = 4  # g._data, the locals of _fresh_grad and _stealable, getrefcount's argument
_STORAGE_REFS = 3  # the array's .st, _stealable's local, getrefcount's argument
_BASE_REFS = 3  # g._base, _stealable's local, getrefcount's argument
_BASE_DATA_REFS = 2  # base._data, getrefcount's argument
# the counts above are those of CPython 3.11-3.13 with the GIL (3.14 borrows references on the frame stack,
# a free-threaded build counts differently): elsewhere the gradient is always copied
_COUNTS_KNOWN = (sys.implementation.name == "cpython" and (3, 11) <= sys.version_info[:2] <= (3, 13)
                 and getattr(sys, "_is_gil_enabled", lambda: True)())


def _stealable(leaf: Tensor, g: Tensor) -> bool:
    src = g._data
    st = getattr(src, "st", None)
    if (not _COUNTS_KNOWN or st is None or g._requires_grad or src.dtype != leaf._data.dtype
            or src.shape != leaf._data.shape or src.offset != 0 or not src.contiguous or sys.getrefcount(g) > _GRAD_REFS
            # (a gradient made by the last dispatch is also held by that dispatch's recipe, for a redirect)
            or sys.getrefcount(src) > _DATA_REFS + src.held_refs()):
        return False
    base = g._base
    if base is None:
        return sys.getrefcount(st) <= _STORAGE_REFS
    # a whole-buffer view (a reshape or transpose back) of a temporary nothing else holds
    return (base._base is None and getattr(base._data, "st", None) is st and sys.getrefcount(base) <= _BASE_REFS
            and sys.getrefcount(base._data) <= _BASE_DATA_REFS and sys.getrefcount(st) <= _STORAGE_REFS + 1)


def _stealable_array(leaf: Tensor, g: Tensor, dense: bool) -> bool:
    """NOTE [gradient stealing] for the CPU: a fresh, writable NumPy gradient in the layout the leaf's ``.grad``
    takes (the leaf's strides when it is dense, else row-major) that nothing else holds: an array that owns
    its memory, or a whole-array view (a transpose back) of one that only the gradient's base tensor holds."""
    src, lf = g._data, leaf._data
    # (``g.requires_grad``, whose property only a view needs)
    if (not _COUNTS_KNOWN or g._requires_grad or (g._base is not None and g.requires_grad) or src.dtype != lf.dtype
            or src.shape != lf.shape or not src.flags.writeable or src.strides != (lf.strides if dense else _row_major(lf))
            or sys.getrefcount(g) > _GRAD_REFS or sys.getrefcount(src) > _DATA_REFS):
        return False
    base = g._base
    if base is None:
        return src.base is None
    mem = base._data
    return (base._base is None and src.base is mem and isinstance(mem, np.ndarray) and mem.base is None
            and mem.size == src.size and sys.getrefcount(base) <= _BASE_REFS
            and sys.getrefcount(mem) <= _BASE_DATA_REFS + 2)  # (+2: the view's .base, the local ``mem``)


def _row_major(a: Any) -> tuple[int, ...]:
    strides, step = [], a.itemsize
    for n in reversed(a.shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def accumulate(leaf: Tensor, g: Tensor, create_graph: bool) -> None:
    """Add ``g`` into ``leaf.grad`` (the default gradient layout rules 1-4)."""
    if g._data.dtype != leaf._data.dtype:
        g = _cast_grad(g, leaf)
    if g._data.shape != leaf._data.shape:
        g = sum_to(g, leaf._data.shape) if g._data.ndim >= leaf._data.ndim else g.expand(leaf._data.shape)
    old = leaf._grad
    if old is None:
        if create_graph:
            leaf._grad = g if g._base is None and g is not leaf else g.clone()
        else:
            leaf._grad = _fresh_grad(leaf, g)
    elif create_graph:
        leaf._grad = old + g
    elif isinstance(od := old._data, np.ndarray) and isinstance(gd := g._data, np.ndarray) and od.flags.writeable:
        if od.dtype == gd.dtype:
            np.add(od, gd, od)  # in place, as torch (rule 3); (positional out: keywords cost a third more)
        else:  # (a .grad the user set in another dtype)
            np.add(od, gd, out=od, casting="unsafe")
        cell = old._version_cell  # (old._bump_version(), inlined: a .grad made here is no view, its cell is its own)
        if cell is None or old._base is not None:
            old._bump_version()
        else:
            cell[0] += 1
    else:
        with no_grad():
            leaf._grad = old + g.detach()
    hooks = leaf._post_accumulate_hooks
    if hooks:
        for h in list(hooks):
            h(leaf)


def _retain(t: Tensor, g: Tensor, create_graph: bool) -> None:
    old = t._grad
    if old is None:
        t._grad = g.clone() if create_graph else _detached_copy(g)
    else:
        t._grad = old + (g if create_graph else g.detach())


def _detached_copy(g: Tensor) -> Tensor:

    d = g._data
    return Tensor._make(d.copy() if isinstance(d, np.ndarray) else g.detach().clone()._data, g._device)


# -- the walk ---------------------------------------------------------------------------------------------

def _add(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _tensor_pre_hooks(node: Any, buf: list[Any]) -> None:
    """Tensor hooks (in order), then retain_grad, for each output of ``node``."""
    if isinstance(node, AccumulateGrad):
        hooks = node.variable._hooks
        if hooks and buf[0] is not None:
            for h in list(hooks):
                r = h(buf[0])
                if r is not None:
                    buf[0] = _hook_result(h, buf[0], r)
        return
    if node._tensor_pre_hooks:
        for nr, hooks in node._tensor_pre_hooks.items():
            if buf[nr] is None:
                continue
            for h in list(hooks):
                r = h(buf[nr])
                if r is not None:
                    buf[nr] = _hook_result(h, buf[nr], r)


def _hook_result(hook: Any, old: Tensor, new: Any) -> Tensor:
    """A tensor hook's replacement gradient, refused as torch refuses it when its type (dtype or device) or its size
    differs from the gradient it replaces: the rest of the walk assumes the gradient of a tensor is like it."""
    name = getattr(hook, "__name__", type(hook).__name__)
    if not _is_tensor(new):
        fail("autograd_error_hook_not_tensor", op="backward", name=name, type=type(new).__name__)
    if new.dtype != old.dtype or new.device != old.device:
        fail("autograd_error_hook_result", op="backward", name=name, what="type",
             detail=f" (was {old.type()} got {new.type()})")
    if new.shape != old.shape:
        fail("autograd_error_hook_result", op="backward", name=name, what="size", detail="")
    return cast(Tensor, new)


def _retain_hooks(node: Any, buf: list[Any], create_graph: bool) -> None:
    if node._retain_refs:
        for nr, ref in list(node._retain_refs.items()):
            t = ref()
            if t is not None and buf[nr] is not None and t._grad_fn is node:
                _retain(t, buf[nr], create_graph)


def run_backward(
    roots: Sequence[Tensor], grads: Sequence[Tensor | None], retain_graph: bool, create_graph: bool,
    inputs: Sequence[Tensor] | None = None, accumulate: bool = True,
) -> dict[int, Tensor]:
    """Propagate ``grads`` from ``roots``. Returns the gradients that reached ``inputs`` (by id of the input).

    ``accumulate``: leaves' ``AccumulateGrad`` runs (backward); else the inputs' gradients are only
    captured (autograd.grad) and no ``.grad`` changes.

    NOTE [walk order]: every node is made after the nodes of its inputs, so its sequence number is larger
    than theirs: descending sequence numbers are a topological order, and they are the order in which
    torch's ready queue (the ready node with the largest number first) runs the nodes. So the walk sorts the
    graph once and runs it as a list, with no queue. A leaf's ``AccumulateGrad`` runs as soon as its last
    consumer has run, as in torch. Nodes are keyed by identity (``Node`` has no ``__eq__``).
    """
    root_edges = [gradient_edge(r) for r in roots]
    # discover the graph and count each node's incoming edges in one pass
    deps: dict[Any, int] = {}  # every node reached (its keys are the nodes seen)
    inner: list[Any] = []  # every node but the leaves' AccumulateGrad, run in descending sequence number
    stack: list[Any] = []  # (a leaf has no edges to follow)
    for n, _ in root_edges:
        if n is not None and n not in deps:
            deps[n] = 0
            if type(n) is not AccumulateGrad:
                stack.append(n)
                inner.append(n)
    seen = deps.get
    while stack:
        for nxt, _ in stack.pop()._next:
            if nxt is not None:
                d = seen(nxt)
                if d is None:
                    deps[nxt] = 1
                    if type(nxt) is not AccumulateGrad:
                        stack.append(nxt)
                        inner.append(nxt)
                else:
                    deps[nxt] = d + 1
    inner.sort(key=_by_seq, reverse=True)
    captures: dict[tuple[Any, int], list[Tensor]] | None = None
    needed: set[Any] | None = None
    input_nodes: Set[Any] = _NOTHING_SET  # (read only)
    if inputs is not None:
        captures, needed, input_nodes, deps = _narrow(inputs, inner, deps)
    buffers: dict[Any, list[Any]] = {}
    for (node, nr), g in zip(root_edges, grads):
        if node is not None and (needed is None or node in needed):
            buf = buffers.get(node)
            if buf is None:
                buf = buffers[node] = [None] * node._num_outputs
            buf[nr] = _add(buf[nr], g)
    walk = _Walk(deps, buffers, needed, captures, input_nodes, retain_graph, create_graph, accumulate)
    prev = STATE.enabled
    STATE.enabled = create_graph  # the vjps build a graph only for create_graph
    _WALKS.needed.append(needed)
    try:
        for node, _ in root_edges:  # a leaf given as a root, reached from no other root, runs first
            if type(node) is AccumulateGrad and node in buffers and not deps[node]:
                walk.step(node)
        if needed is None:
            walk.run(inner)
        else:
            for node in inner:
                if node not in needed:
                    continue
                if deps[node]:
                    _order_broken(node)
                walk.step(node)
    finally:
        STATE.enabled = prev
        _WALKS.needed.pop()
    return walk.captured


class _Walks(threading.local):
    """The ``needed`` set of each walk in progress on this thread (None: every edge), innermost last: a vjp may
    run a backward of its own (a checkpoint, ``autograd.grad`` in a custom Function), which pushes its own; each
    thread has its own, as the grad mode."""

    def __init__(self) -> None:
        self.needed: list[set[Any] | None] = []


_WALKS = _Walks()


def should_compute_output(n: Any, i: int) -> bool:
    """Whether the walk running the vjp of ``n`` (its ``_View``) hands a gradient for input ``i`` on: the input
    has an edge (it requires grad) and, under ``autograd.grad`` or ``backward(inputs=...)``, the edge leads to
    one of the inputs asked for (torch's ``task_should_compute_output``). A vjp whose derivative for some input is
    refused (not implemented in torch) asks this, so that a backward that does not need that input runs. Outside
    a walk (a node called directly), every edge counts."""
    node = getattr(n, "node", None)
    a = n.inputs[i]
    if node is None or not isinstance(a, Tensor):
        return isinstance(a, Tensor) and a.requires_grad
    slot = sum(1 for x in n.inputs[:i] if isinstance(x, Tensor))  # the edges skip the number inputs
    nxt = node._next[slot][0]
    walks = _WALKS.needed
    needed = walks[-1] if walks else None
    return nxt is not None and (needed is None or nxt in needed)


_by_seq = operator.attrgetter("_seq")


def _order_broken(node: Any) -> NoReturn:
    # a node whose number is not above its inputs' (see NOTE [walk order]); every node type takes next_seq()
    raise RuntimeError(f"autograd engine: {node.name()} was created before one of its inputs' nodes "
                       "(its sequence number is out of order); please report this")


def _narrow(inputs: Sequence[Tensor], inner: list[Any], seen: dict[Any, int],
            ) -> tuple[dict[tuple[Any, int], list[Tensor]], set[Any], set[Any], dict[Any, int]]:
    """With ``inputs``: where each input's gradient arrives, the nodes that lead to an input (only those
    run), the inputs' own nodes, and the dependency counts over the nodes that run."""
    captures: dict[tuple[Any, int], list[Tensor]] = {}
    needed: set[Any] = set()
    for t in inputs:
        node, nr = gradient_edge(t)
        if node is not None:
            captures.setdefault((node, nr), []).append(t)
            if node in seen:
                needed.add(node)
    input_nodes = set(needed)
    for n in reversed(inner):  # ascending numbers: a node's inputs' nodes are decided before it
        if n not in needed:
            for x, _ in n._next:  # (a loop, not any() over a generator: this runs for every node of the graph)
                if x is not None and x in needed:
                    needed.add(n)
                    break
    deps: dict[Any, int] = dict.fromkeys(needed, 0)
    for n in inner:
        if n in needed:
            for x, _ in n._next:
                if x is not None and x in needed:
                    deps[x] += 1
    return captures, needed, input_nodes, deps


class _Walk:
    """The state of one backward walk, and the step that runs one node and hands its gradients on."""

    __slots__ = ("accumulate", "bare", "buffers", "captured", "captured_at", "captures", "create_graph", "deps",
                 "input_nodes", "needed", "owned", "plain", "prof", "retain_graph")

    def __init__(self, deps: dict[Any, int], buffers: dict[Any, list[Any]], needed: set[Any] | None,
                 captures: dict[tuple[Any, int], list[Tensor]] | None, input_nodes: Set[Any], retain_graph: bool,
                 create_graph: bool, accumulate: bool) -> None:
        self.deps, self.buffers, self.needed, self.captures = deps, buffers, needed, captures
        self.input_nodes = input_nodes
        self.retain_graph, self.create_graph, self.accumulate = retain_graph, create_graph, accumulate
        self.prof = PROFILER.active
        # NOTE [plain walk]: no profiler, no anomaly mode and no captured inputs (a plain ``backward()``): then a
        # node without hooks of its own runs its vjp straight away and a leaf's gradient goes straight into
        # ``.grad``, with none of the tests the general step makes per node
        self.plain = captures is None and self.prof is None and not ANOMALY.enabled
        # the same for the inner nodes of an ``autograd.grad`` walk (captured inputs): a node where no captured
        # gradient arrives (not in ``captured_at``) does nothing the general step adds, so it runs bare too; only the
        # leaves and the nodes whose gradients are captured take the general step there
        self.bare = self.prof is None and not ANOMALY.enabled
        self.captured_at: frozenset[Any] = _NOTHING_SET if captures is None else frozenset(n for n, _ in captures)
        # NOTE [accumulation buffer]: the gradient slots ``(node, output_nr)`` of ``buffers`` whose tensor this walk
        # made itself (a sum of two arriving gradients, a view's zero-filled vjp result) and nothing else holds: a
        # later gradient for the slot is added into it in place. torch's SplitBackward makes one buffer for all the
        # pieces; here each piece has its own node, whose vjp would fill a new full-size buffer with zeros, and the
        # pieces' gradients would then be summed pairwise. Only in a walk that builds no graph (an in-place add into a
        # graph's tensor would change what its backward reads), and on NumPy arrays. No hook sees such a tensor before
        # its last gradient is in: the hooks that read a slot run when its node runs, which pops it.
        self.owned: set[tuple[Any, int]] | None = None if create_graph else set()
        self.captured: dict[int, Tensor] = {}

    def step(self, node: Any) -> None:
        buf = self.buffers.pop(node, None)
        if type(node) is AccumulateGrad:  # a leaf: nothing to hand on
            if buf is not None and buf[0] is not None:
                if self.plain and not (node._hooked or node.variable._hooks):
                    g = buf[0]  # (a local, as in AccumulateGrad.apply: NOTE [gradient stealing] counts it)
                    accumulate(node.variable, g, self.create_graph)
                else:
                    self._run(node, buf, True)
            return
        outs: Sequence[Any] = ()
        if buf is not None and (buf[0] is not None or any(g is not None for g in buf)):
            if not node._hooked:  # (no hook was ever registered on it: one test instead of four)
                if self.bare and node not in self.captured_at:
                    into = _ADD_INTO.get(node.__class__) if self.owned is not None else None
                    outs = node.apply(buf) if into is None else self._into(node, buf, into)
                    if not self.retain_graph:
                        node.release()
                else:
                    outs = self._run(node, buf, False)
            else:
                if node._tensor_pre_hooks:
                    _tensor_pre_hooks(node, buf)
                if node._retain_refs:
                    _retain_hooks(node, buf, self.create_graph)
                if self.bare and node not in self.captured_at and not (node._pre_hooks or node._post_hooks):
                    outs = node.apply(buf)
                    if not self.retain_graph:
                        node.release()
                else:
                    outs = self._run(node, buf, False)
        deps, buffers, needed = self.deps, self.buffers, self.needed
        ready: list[Any] | None = None
        i = 0
        n_outs = len(outs)
        for nxt, nr in node._next:
            if nxt is not None and (needed is None or nxt in needed):
                if i < n_outs and outs[i] is not None:
                    b = buffers.get(nxt)
                    if b is None:
                        b = buffers[nxt] = [None] * nxt._num_outputs
                    b[nr] = outs[i] if b[nr] is None else self._sum(nxt, nr, b[nr], outs[i])
                d = deps[nxt] - 1
                deps[nxt] = d
                if d == 0 and type(nxt) is AccumulateGrad:  # a leaf runs as soon as it is ready
                    if ready is None:
                        ready = []
                    ready.append(nxt)
            i += 1
        if ready is not None:
            del outs, buf  # the gradients now live in the buffers only (NOTE [gradient stealing])
            for leaf in ready:
                self.step(leaf)

    def run(self, inner: list[Any]) -> None:
        """Run every node of ``inner`` in order (a walk without ``inputs``, so every edge counts).

        NOTE [inline walk]: ``step`` and ``release`` written out for the common node: a primitive's node (one of
        ``_ENGINE_NODES``) with no hooks, no captured gradient and, where this walk owns buffers, no ``add_into``, in a
        walk without profiler or anomaly mode. That saves two frames and the walk's attribute reads per node; every
        other node, and every leaf, takes ``step``. What it does, and in which order, is ``step``'s."""
        deps, buffers = self.deps, self.buffers
        pop, get = buffers.pop, buffers.get
        captured_at = self.captured_at
        retain, create_graph, plain = self.retain_graph, self.create_graph, self.plain
        common = (_PLAIN_NODES if self.owned is not None else _ENGINE_NODES) if self.bare else _NOTHING_SET
        for node in inner:
            if deps[node]:
                _order_broken(node)
            if node._hooked or node.__class__ not in common or node in captured_at:
                self.step(node)
                continue
            buf = pop(node, None)
            if buf is not None and (buf[0] is not None or any(g is not None for g in buf)):
                outs = node.apply(buf)
                if not retain and (node._saved or node._plain or node._holds):  # (release does nothing else)
                    node.release()
            else:
                outs = ()
            ready: list[Any] | None = None
            i = 0
            n_outs = len(outs)
            for nxt, nr in node._next:
                if nxt is not None:
                    if i < n_outs and outs[i] is not None:
                        b = get(nxt)
                        if b is None:
                            b = buffers[nxt] = [None] * nxt._num_outputs
                        b[nr] = outs[i] if b[nr] is None else self._sum(nxt, nr, b[nr], outs[i])
                    d = deps[nxt] - 1
                    deps[nxt] = d
                    if d == 0 and type(nxt) is AccumulateGrad:  # a leaf runs as soon as it is ready
                        if ready is None:
                            ready = []
                        ready.append(nxt)
                i += 1
            if ready is not None:
                del outs, buf  # the gradients now live in the buffers only (NOTE [gradient stealing])
                for leaf in ready:
                    if plain and not (leaf._hooked or leaf.variable._hooks):
                        # (``step``'s plain leaf, written out: its buffer and its local ``g`` are the walk's two
                        # references that NOTE [gradient stealing] counts, dropped before the next leaf)
                        buf = pop(leaf, None)
                        if buf is not None and (g := buf[0]) is not None:
                            accumulate(leaf.variable, g, create_graph)
                            del g
                        del buf
                    else:
                        self.step(leaf)

    def _sum(self, node: Any, nr: int, old: Tensor, new: Tensor) -> Tensor:
        """Two gradients for output ``nr`` of ``node``: into ``old`` in place when this walk owns it (NOTE
        [accumulation buffer]; ``old + new`` either way, the same bits), else a new sum, which it then owns."""
        owned = self.owned
        if owned is None:
            return old + new
        key = (node, nr)
        od, nd = old._data, new._data
        if key in owned and type(od) is np.ndarray and type(nd) is np.ndarray and od.shape == nd.shape \
                and od.dtype == nd.dtype and od.flags.writeable:
            np.add(od, nd, od)
            return old
        total = old + new
        if type(total._data) is np.ndarray:
            owned.add(key)
        return total

    def _into(self, node: Any, buf: list[Any], into: Callable[[Any, Any, dict[str, Any]], bool]) -> Sequence[Any]:
        """A view's node (NOTE [accumulation buffer]): its gradient added into the buffer this walk owns for its
        input, where there is one; else its vjp, whose result (a new zero-filled buffer) the walk then owns."""
        edges, g = node._next, buf[0]
        if len(edges) != 1 or g is None or node._freed:
            return node.apply(buf)
        nxt, nr = edges[0]
        if nxt is None or (self.needed is not None and nxt not in self.needed):
            return node.apply(buf)
        b = self.buffers.get(nxt)
        old = b[nr] if b is not None else None
        owned = self.owned
        assert owned is not None
        if old is not None and (nxt, nr) in owned and into(old._data, g._data, node.params):
            return ()  # (nothing to hand on: the input's gradient holds this one already)
        outs = node.apply(buf)
        if outs and (o := outs[0]) is not None and old is None and type(o._data) is np.ndarray:
            if b is None:
                b = self.buffers[nxt] = [None] * nxt._num_outputs
            b[nr] = o
            owned.add((nxt, nr))
            return ()
        return outs

    def _run(self, node: Any, buf: list[Any], leaf: bool) -> Sequence[Any]:
        """A node on the general path: tensor hooks of a leaf, captured inputs, node hooks, profiler, anomaly."""
        if leaf and node.variable._hooks:
            _tensor_pre_hooks(node, buf)
        if self.captures is not None and not self._capture(node, buf, leaf):
            return ()
        outs: Sequence[Any]
        if node._pre_hooks or node._post_hooks or self.prof is not None or ANOMALY.enabled:
            outs = _evaluate(node, buf, self.prof, self.create_graph)
        elif not leaf and self.owned is not None and (into := _ADD_INTO.get(node.__class__)) is not None:
            outs = self._into(node, buf, into)
        else:
            outs = node.apply(buf)
        if not self.retain_graph:
            node.release()
        return outs

    def _capture(self, node: Any, buf: list[Any], leaf: bool) -> bool:
        """autograd.grad's inputs: keep the gradients arriving at ``node``; whether ``node`` still runs."""
        assert self.captures is not None
        for nr in range(len(buf)):
            for t in self.captures.get((node, nr), ()):
                if buf[nr] is not None:
                    self.captured[id(t)] = buf[nr]
                    if self.accumulate and t._grad_fn is not None and not t.retains_grad:
                        _retain(t, buf[nr], self.create_graph)
        if node in self.input_nodes and (not self.accumulate or not leaf):
            # captured; run the node only if other inputs lie beyond it
            needed = self.needed
            return not leaf and any(x is not None and (needed is None or x in needed) for x, _ in node._next)
        return True


def _evaluate(node: Any, buf: list[Any], prof: Any, create_graph: bool) -> list[Any]:
    grads = buf
    if node._pre_hooks:
        for h in list(node._pre_hooks):
            r = h(tuple(grads))
            if r is not None:
                grads = list(r)
    try:
        if prof is not None:
            with prof.record(node.name()):
                outs = node.apply(grads)
        else:
            outs = node.apply(grads)
        if ANOMALY.enabled and ANOMALY.check_nan:
            for i, g in enumerate(outs):
                if g is not None and g._data.dtype.kind in "fc" and _has_nan(g):
                    raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
    except Exception:
        if ANOMALY.enabled and node._metadata is not None:
            report(node.name(), node._metadata.get("traceback_"))
        raise
    if node._post_hooks:
        for h in list(node._post_hooks):
            r = h(tuple(outs), tuple(grads))
            if r is not None:
                outs = list(r)
    return outs


def _has_nan(g: Tensor) -> bool:

    return bool(np.isnan(backend(g._device.type).to_numpy(g._data)).any())


# -- the public entry points ------------------------------------------------------------------------------

def _as_list(x: Any) -> list[Any]:
    if x is None:
        return []
    if _is_tensor(x):
        return [x]
    return list(x)


def _make_grads(outputs: list[Tensor], grads: Any, is_grads_batched: bool = False) -> list[Tensor | None]:

    gl: list[Any] = [grads] if grads is None or _is_tensor(grads) else list(grads)
    if grads is None:
        gl = [None] * len(outputs)
    if len(gl) != len(outputs):
        raise RuntimeError(f"Mismatch in number of gradients: got {len(gl)} but expected {len(outputs)}")
    out: list[Tensor | None] = []
    for i, (r, g) in enumerate(zip(outputs, gl)):
        if g is None:
            if r._requires_grad:
                if r.numel() != 1:
                    fail("autograd_error_implicit_grad", op="backward", what="scalar outputs")
                if not r.dtype.is_floating_point:
                    fail("autograd_error_implicit_grad", op="backward", what=f"real scalar outputs but got {r.dtype}")
                g = _seed(r)
        else:
            if not _is_tensor(g):
                raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
            shape = g._data.shape[1:] if is_grads_batched else g._data.shape
            if shape != r._data.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {Size(shape)!r} and output[{i}] has a shape "
                    f"of {Size(r._data.shape)!r}."
                )
            if g.is_complex() != r.is_complex():
                raise RuntimeError(
                    f"For complex Tensors, both grad_output and output are required to have the same dtype. Mismatch "
                    f"in dtype: grad_output[{i}] has a dtype of {g.dtype} and output[{i}] has a dtype of {r.dtype}."
                )
        out.append(g)
    return out


_ONES: dict[Any, Any] = {}  # NumPy dtype -> a 0-d one, copied for each seed


def _seed(r: Tensor) -> Tensor:
    """The gradient of a scalar loss w.r.t. itself: made directly (no creation op) on the CPU, a copy of a kept
    0-d one (``np.ones`` costs five times a copy), since the seed may become a leaf's ``.grad``."""
    d = r._data
    if not isinstance(d, (np.ndarray, np.generic)):
        return r.new_ones(d.shape)
    one = _ONES.get(d.dtype)
    if one is None:
        one = _ONES[d.dtype] = np.ones((), d.dtype)
    return Tensor._make(one.copy() if not d.shape else np.ones(d.shape, d.dtype), r._device)


def _check_roots(outputs: list[Tensor]) -> None:
    for i, r in enumerate(outputs):
        if not r._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")


def _refresh_views(roots: Any, inputs: Any) -> None:
    """The roots and inputs of a backward that are views written through since their grad_fn was set take a new
    one first (NOTE [view + in-place] in the tensor module), as each reads its grad_fn in torch. (A loss that is no
    view costs one read.)"""
    if type(roots) is Tensor and inputs is None:
        if roots._base is not None and roots._view_cell[0] != roots._view_version:
            refresh_view(roots, True)
        return
    for group in (roots, inputs):
        for t in (group,) if isinstance(group, Tensor) else group if isinstance(group, (list, tuple)) else ():
            if isinstance(t, Tensor) and t._base is not None and t._view_cell[0] != t._view_version:
                refresh_view(t, True)


def backward(
    tensors: Tensor | Sequence[Tensor], grad_tensors: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None, create_graph: bool = False, inputs: Tensor | Sequence[Tensor] | None = None,
    *, grad_variables: Any = None,
) -> None:
    """Sum the gradients of ``tensors`` w.r.t. the graph leaves into their ``.grad`` (``torch.autograd.backward``).

    ``grad_variables`` (torch's deprecated alias of ``grad_tensors``) is keyword-only here, so that
    ``Tensor.backward(gradient, retain_graph, create_graph, inputs)`` can pass ``inputs`` fifth.
    """
    if grad_variables is not None:
        grad_tensors = grad_variables
    _refresh_views(tensors, inputs)
    if grad_tensors is None and inputs is None and type(tensors) is Tensor and tensors._requires_grad \
            and tensors._data.dtype.kind == "f" and tensors._data.size == 1:
        # a scalar loss's ``loss.backward()``: what the general path below checks holds, so the seed goes
        # straight to the walk
        roots: list[Tensor] = [tensors]
        grads: list[Tensor | None] = [_seed(tensors)]
        if CHECKPOINT_VALID[0]:
            run_backward(roots, grads, create_graph if retain_graph is None else retain_graph, create_graph)
            return
    else:
        roots = _as_list(tensors)
        grads = _make_grads(roots, grad_tensors)
        _check_roots(roots)
    ins = None
    if inputs is not None:
        ins = _as_list(inputs)
        if not ins:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        for t in ins:
            if not t._requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
    keep = create_graph if retain_graph is None else retain_graph
    prev, CHECKPOINT_VALID[0] = CHECKPOINT_VALID[0], ins is None
    try:
        run_backward(roots, grads, keep, create_graph, ins, accumulate=True)
    finally:
        CHECKPOINT_VALID[0] = prev


def grad(
    outputs: Tensor | Sequence[Tensor], inputs: Tensor | Sequence[Tensor],
    grad_outputs: Tensor | Sequence[Tensor | None] | None = None, retain_graph: bool | None = None,
    create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
    is_grads_batched: bool = False, materialize_grads: bool = False,
) -> tuple[Tensor | None, ...]:
    """The gradients of ``outputs`` w.r.t. ``inputs``, returned rather than accumulated (``torch.autograd.grad``)."""
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got "
                         "allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    _refresh_views(outputs, inputs)
    ins = _as_list(inputs)
    if grad_outputs is None and type(outputs) is Tensor and outputs._requires_grad \
            and outputs._data.dtype.kind == "f" and outputs._data.size == 1:
        # one scalar loss (``grad(loss, params)``): what ``_make_grads`` and ``_check_roots`` test holds, so the seed
        # is made straight away, as ``backward`` does for ``loss.backward()``
        outs: list[Tensor] = [outputs]
        grads: list[Tensor | None] = [_seed(outputs)]
    else:
        outs = _as_list(outputs)
        grads = _make_grads(outs, grad_outputs, is_grads_batched)
        _check_roots(outs)
    for t in ins:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    keep = create_graph if retain_graph is None else retain_graph
    if is_grads_batched:
        from .primitives import PRIMS  # (primitives imports this module)

        # the op table is above the engine; the primitive registry is not: stack as a cat of unsqueezed rows
        cat = PRIMS["cat"]
        n = next(g._data.shape[0] for g in grads if g is not None)
        per = []
        for i in range(n):
            gi: list[Any] = [None if g is None else g[i] for g in grads]
            per.append(grad(outs, ins, gi, True if i < n - 1 else keep, create_graph, allow_unused=allow_unused,
                            materialize_grads=materialize_grads))
        return tuple(None if per[0][j] is None else cat(*[q.unsqueeze(0) for p in per if (q := p[j]) is not None], axis=0)
                     for j in range(len(ins)))
    prev, CHECKPOINT_VALID[0] = CHECKPOINT_VALID[0], False
    try:
        got = run_backward(outs, grads, keep, create_graph, ins, accumulate=False)
    finally:
        CHECKPOINT_VALID[0] = prev
    result = []
    for t in ins:
        g = got.get(id(t))
        if g is None:
            if not allow_unused:
                fail("autograd_error_unused_input", op="grad")
            if materialize_grads:
                g = t.new_zeros(t._data.shape)
        elif not create_graph and g._requires_grad:
            g = g.detach()
        result.append(g)
    return tuple(result)
