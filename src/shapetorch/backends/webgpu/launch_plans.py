"""Launch plans of whole kernels: what a kernel call recorded, kept by its call signature and replayed.

A training step calls the same kernels with the same layouts step after step; only the buffers change. For the
kernels in :data:`kernels.PLANNED` (functions of their operands' layouts and their parameters alone), the second
call of a signature is *recorded*: the buffers it allocated, and each dispatch's shader, parameter block, grid and
buffers, every buffer named by where it came from (an operand of the call, an allocation of the call, the runtime's
check flag). A later call of that signature *replays* it: it allocates the same sizes, records the same dispatches
binding this call's buffers, registers the same device-side checks (their ids placed in the parameter blocks) and
returns views of the same layouts, without running the kernel's Python (its shape work, its temporary views, its
calls into other kernels): one frame per dispatch instead of ten to a hundred.

The signature (:func:`signature`) holds what such a kernel can read besides the operands' values: each operand's
shape, strides, offset and dtype, which operands share a buffer, every other argument and parameter, and the
adapter limits the kernels consult (binding size, grid size, workgroup memory and invocations). A call with an
operand larger than a binding (a chunked launch) or a float argument is neither recorded nor replayed. A recording
is discarded (the signature is then never planned) when the kernel did anything a replay would not repeat: uploaded
or read back, bound a buffer other than its operands', its allocations' and the check flag (a table cached by the
kernel, which a replay could not keep alive), bound a window of a buffer, withdrew the dispatch held before it (an
in-place redirect), or left a dispatch held with a recipe that names an array other than the call's operands and
results. (A recipe, what an in-place op needs to redirect the held dispatch into its own output, is replayed with
this call's arrays in place of the recorded call's.)
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

import numpy as np

from .runtime import RT, BufferRange, Storage, WArray

# Check ids handed out while recording, from here up: distinctive enough that the one word of a parameter block
# holding each can be found (a recording in which a check's id is not exactly one word is discarded). Below 2^31:
# the flag is read back as int32.
_CHECK_BASE = 0x5EC00000
_MAX_PLANS = 1024  # plans per primitive (the table is emptied when full)
_SEEN = object()  # a signature met once (recorded at its second call: a first call may compile, upload a table)
_NEVER = object()  # a signature whose recording was discarded
_PATCHED = ("alloc", "dispatch", "add_check", "take_held")
_FLOATS = (float, np.floating)
_new = object.__new__  # (a replay's results are made as runtime.view_of makes a view: every slot set here)

# Each planned primitive's plans, by signature (a Plan, or _SEEN / _NEVER)
TABLES: dict[str, dict[tuple[Any, ...], Any]] = {}

_recording = False  # a recording is under way (a kernel called inside it runs as it is: one recorder at a time)


class Plan:
    """One recorded call: ``allocs`` (bytes of each buffer allocated, in order), ``launches`` (per dispatch: shader,
    buffer sources, parameter block, grid, the (word, check) pairs to place, and whether it is the last),
    ``checks`` (code, op, kwargs of each device-side check), ``outs`` (per output: its storage's source, shape,
    dtype, strides, offset) and ``recipe`` (a function making the last dispatch's recipe for a call's arguments and
    results, or None)."""

    __slots__ = ("allocs", "checks", "launches", "outs", "recipe", "single")

    def __init__(self, allocs: tuple[int, ...], launches: tuple[tuple[Any, ...], ...],
                 checks: tuple[tuple[str, str, dict[str, Any]], ...], outs: tuple[tuple[Any, ...], ...],
                 single: bool, recipe: Any) -> None:
        self.allocs = allocs
        self.launches = launches
        self.checks = checks
        self.outs = outs
        self.single = single  # the kernel returned one array (else a tuple of them)
        self.recipe = recipe


class _Ref:
    """In a plan's recipe: the call's ``index``-th argument, or (``result``) its ``index``-th result."""

    __slots__ = ("index", "result")

    def __init__(self, index: int, result: bool) -> None:
        self.index = index
        self.result = result


class _Foreign(Exception):
    """A recipe names an array that is neither an operand nor a result of the call."""


def _template(x: Any, args: tuple[Any, ...], results: tuple[Any, ...]) -> Any:
    """``x`` (a recipe, or a part of one) with each array replaced by its :class:`_Ref`."""
    if type(x) is WArray:
        for j, r in enumerate(results):
            if x is r:
                return _Ref(j, True)
        for i, a in enumerate(args):
            if x is a:
                return _Ref(i, False)
        raise _Foreign
    if type(x) is tuple:
        return tuple(_template(v, args, results) for v in x)
    if type(x) is list:
        return [_template(v, args, results) for v in x]
    return x


def _filler(template: Any) -> Any:
    """``fill(args, results)``: the recipe of ``template`` for a call's arguments and results, as one Python
    expression compiled once per plan (a recursive walk of the template costs about ten calls per replay, more than
    the rest of an elementwise replay). The expression names the template's other values as constants ``K[i]``
    (passed in, never written as source text) and its references as ``A[i]`` / ``R[i]``."""
    consts: list[Any] = []

    def source(t: Any) -> str:
        if type(t) is _Ref:
            return f"{'R' if t.result else 'A'}[{t.index}]"
        if type(t) in (tuple, list) and _has_ref(t):
            inner = ", ".join(source(v) for v in t)
            return f"({inner},)" if type(t) is tuple else f"[{inner}]"
        consts.append(t)
        return f"K[{len(consts) - 1}]"

    fill: Any = eval(f"lambda A, R: {source(template)}", {"K": consts})  # (the source is built above)
    return fill


def _has_ref(t: Any) -> bool:
    if type(t) is _Ref:
        return True
    return type(t) in (tuple, list) and any(_has_ref(v) for v in t)


def signature(args: tuple[Any, ...], params: dict[str, Any]) -> tuple[Any, ...] | None:
    """The key of a call (see the module's docstring), or None when it must run as it is (an operand larger than a
    binding). Unhashable arguments make a key that raises TypeError when looked up: the caller runs the kernel."""
    parts: list[Any] = []
    sts: list[Storage | None] = []
    limit = RT.max_binding
    for a in args:
        if type(a) is WArray:
            st = a.st
            if st is not None and st.nbytes > limit:
                return None
            parts.append((a.shape, a.stride, a.offset, a.dtype))
            sts.append(st)
        elif isinstance(a, _FLOATS):  # (a tuple: isinstance of a ``float | np.floating`` union costs twice as much)
            return None  # a number that may change every call (a learning rate): a plan per value would not serve
        else:
            parts.append(a)
    if len(sts) > 1:
        parts.append(tuple(map(sts.index, sts)))  # which operands share a buffer (the first of each)
    if params:
        parts.append(tuple(params.items()))
    # (the limits a kernel's launch follows: chunks, grids, the matmul's tiles; read per call, a test may set them)
    parts.append((limit, RT.max_groups, RT.max_wg_storage, RT.max_invocations))
    return tuple(parts)


class _FlagStore:
    """Where a plan's buffer sources point for the runtime's check flag (the flag is made once, with the device)."""

    __slots__ = ()

    @property
    def buf(self) -> Any:
        return RT.flag


_FLAG_STORE = _FlagStore()
_BUF = attrgetter("buf")


def replay(plan: Plan, args: tuple[Any, ...]) -> Any:
    """Record ``plan`` for this call's operands (``args``, laid out as the recorded call's). A buffer source is an
    index into the call's storages: its operands', then its allocations', then the check flag's. (Loops and ``map``
    in this one frame: a comprehension is a frame of its own, and this runs for a step's every planned call.)"""
    stores: list[Any] = []
    for a in args:  # (a loop, not a comprehension: one frame less for the usual one to three operands)
        if type(a) is WArray:
            stores.append(a.st)
    if plan.allocs:
        alloc = RT.alloc
        for n in plan.allocs:
            stores.append(alloc(n))
    stores.append(_FLAG_STORE)
    outs = []
    for s, shape, dtype, stride, offset in plan.outs:  # (runtime.view_of's work, inline: a frame per result less)
        out = _new(WArray)
        out.st = None if s is None else stores[s]
        out.shape = shape
        out.ndim = len(shape)
        out.dtype = dtype
        out.stride = stride
        out.offset = offset
        outs.append(out)
    dispatch = RT.dispatch
    at = stores.__getitem__
    for wgsl, srcs, meta, grid, places, last in plan.launches:
        if places:
            meta = meta.copy()
            for word, c in places:
                code, op, kwargs = plan.checks[c]
                meta[word] = RT.add_check(code, op, **kwargs)
        if last and plan.recipe is not None:
            dispatch(wgsl, list(map(_BUF, map(at, srcs))), meta, grid, plan.recipe(args, outs))
        else:
            dispatch(wgsl, list(map(_BUF, map(at, srcs))), meta, grid)
    return outs[0] if plan.single else tuple(outs)


class _Recorder:
    """Stands in for the runtime's ``alloc``, ``dispatch``, ``add_check`` and ``take_held`` while one kernel call
    runs (as attributes of :data:`RT`, so that every path of the kernel goes through it), passing each call on."""

    def __init__(self) -> None:
        self.allocs: list[tuple[int, Storage]] = []  # (bytes asked, the storage: held until the recording ends)
        self.launches: list[tuple[str, list[Any], list[int], tuple[int, int, int], Any]] = []
        self.checks: list[tuple[str, str, dict[str, Any]]] = []
        self.bad = False
        self.saved: dict[str, Any] = {}  # what each patched name was (the call passed on)
        self.own: dict[str, Any] = {}  # what RT itself held under each name, if anything (a counting bench's)
        self.counters = (0, 0, 0)

    def alloc(self, nbytes: int, upload: bool = False) -> Storage:
        st = self.saved["alloc"](nbytes, upload)
        self.bad |= upload
        self.allocs.append((nbytes, st))
        return st

    def dispatch(self, wgsl: str, buffers: Any, meta: Any, grid: tuple[int, int, int], recipe: Any = None) -> None:
        self.launches.append((wgsl, list(buffers), list(meta), grid, recipe))
        self.saved["dispatch"](wgsl, buffers, meta, grid, recipe)

    def add_check(self, code: str, op: str, **kwargs: Any) -> int:
        cid = _CHECK_BASE + len(self.checks)
        self.checks.append((code, op, kwargs))
        RT.checks[cid] = (code, op, kwargs)
        return cid

    def take_held(self, out: Any) -> Any:
        self.bad = True
        return self.saved["take_held"](out)

    def __enter__(self) -> _Recorder:
        global _recording
        # the optimizer's held-back updates are recorded now, as the kernel's first dispatch would: not into the plan
        RT.record_deferred()
        _recording = True
        for name in _PATCHED:
            self.saved[name] = getattr(RT, name)
            if name in vars(RT):
                self.own[name] = vars(RT)[name]
            setattr(RT, name, getattr(self, name))
        self.counters = (RT.n_upload_bytes, RT.n_readback, RT.n_flag_reads)
        return self

    def __exit__(self, *exc: Any) -> None:
        global _recording
        _recording = False
        for name in _PATCHED:
            if name in self.own:
                setattr(RT, name, self.own[name])
            else:
                delattr(RT, name)
        self.bad |= self.counters != (RT.n_upload_bytes, RT.n_readback, RT.n_flag_reads)

    def plan(self, args: tuple[Any, ...], result: Any) -> Plan | None:
        """The plan of the recorded call, or None when a replay would not do what the call did."""
        if self.bad:
            return None
        operands = [a.st for a in args if type(a) is WArray]
        source: dict[int, int] = {}  # buffer id -> its index among the call's storages (see replay)
        for i, st in enumerate(operands):
            if st is not None:
                source.setdefault(id(st.buf), i)
        for j, (_, st) in enumerate(self.allocs):
            if id(st.buf) in source:  # (cannot be: an operand's buffer is live)
                return None
            source[id(st.buf)] = len(operands) + j
        if RT.flag is not None:
            source[id(RT.flag)] = len(operands) + len(self.allocs)
        launches = []
        found = [0] * len(self.checks)
        for n, (wgsl, bufs, meta, grid, _) in enumerate(self.launches):
            srcs = []
            for b in bufs:
                s = source.get(id(b)) if type(b) is not BufferRange else None
                if s is None:
                    return None  # a window, or a buffer the kernel holds itself
                srcs.append(s)
            places = []
            for w, word in enumerate(meta):
                c = word - _CHECK_BASE
                if 0 <= c < len(self.checks):
                    places.append((w, c))
                    found[c] += 1
            launches.append((wgsl, tuple(srcs), meta, grid, tuple(places), n == len(self.launches) - 1))
        if any(n != 1 for n in found):
            return None
        single = type(result) is WArray
        results = (result,) if single else result
        if type(results) is not tuple or not all(type(r) is WArray for r in results):
            return None
        recipe = self.launches[-1][4] if self.launches else None
        if recipe is not None:  # (the last dispatch, held: an in-place op may still redirect it with its recipe)
            try:
                recipe = _filler(_template(recipe, args, results))
            except _Foreign:
                return None
        by_storage = {id(st): i for i, st in enumerate(operands) if st is not None}
        by_storage.update({id(st): len(operands) + j for j, (_, st) in enumerate(self.allocs)})
        outs = []
        for r in results:
            s = None if r.st is None else by_storage.get(id(r.st))
            if r.st is not None and s is None:
                return None
            outs.append((s, r.shape, r.dtype, r.stride, r.offset))
        return Plan(tuple(n for n, _ in self.allocs), tuple(launches), tuple(self.checks), tuple(outs), single,
                    recipe)


def table(name: str) -> dict[tuple[Any, ...], Any]:
    """The plans of primitive ``name`` (made empty on the first ask)."""
    return TABLES.setdefault(name, {})


def call(plans: dict[tuple[Any, ...], Any], kernel: Any, args: tuple[Any, ...], params: dict[str, Any]) -> Any:
    """``kernel(*args, **params)`` through its plans (see the module's docstring)."""
    key = None if _recording else signature(args, params)
    if key is None:
        return kernel(*args, **params)
    try:
        plan = plans.get(key)
    except TypeError:  # an unhashable argument (a host array, a list): run as it is
        return kernel(*args, **params)
    if type(plan) is Plan:
        return replay(plan, args)
    if plan is None:
        if len(plans) >= _MAX_PLANS:
            plans.clear()
        plans[key] = _SEEN
        return kernel(*args, **params)
    if plan is _NEVER:
        return kernel(*args, **params)
    rec = _Recorder()
    with rec:
        result = kernel(*args, **params)
    made = rec.plan(args, result)
    plans[key] = _NEVER if made is None else made
    return result
