"""``shapetorch.compile`` (torch's ``torch.compile``): eager everywhere, except ``mode="reduce-overhead"`` (and
``"max-autotune"``, or ``options={"triton.cudagraphs": True}``), which replays WebGPU graphs as torch's CUDA-graph
trees replay CUDA graphs.

shapetorch has no graph compiler: the ops run eagerly, one kernel each. What torch's cudagraph modes buy -- the
host's per-kernel cost gone from the steady state -- a WebGPU graph gives (``backends/webgpu/graphs.py``): a replay
re-encodes the recorded dispatches without the op layer or autograd, 11-21 us per dispatch where the eager path
costs ~40 (docs/performance.md). So a compiled callable (a function, a ``Module`` through ``OptimizedModule``, or
an optimizer's ``step``) keeps one entry per input signature, as torch's guards:

* the signature: each tensor argument's shape, dtype, device and ``requires_grad``, the other arguments' values,
  grad mode, autocast, and for a module each submodule's ``training`` flag and its parameters and buffers (by
  identity and ``requires_grad``); for an optimizer step, which parameters have a gradient and the groups'
  hyperparameters (a learning rate a scheduler changes is a new signature, as torch's float guards);
* a signature with no tensor on WebGPU runs eagerly, unchanged (the CPU path);
* its first call runs eagerly (torch's warm-up: pipelines, cached tables and an optimizer's state are made then),
  the second is captured and replayed, the later ones copy their tensor arguments into the graph's static inputs
  and replay;
* when the outputs need gradients the backward is captured too (``make_graphed_callables``'s scheme): the outputs
  come from an autograd ``Function`` whose backward replays it, and the gradients reach the leaves the forward
  read (a module's parameters, a function's closed-over tensors, the arguments);
* what a capture refuses (a read back such as ``.item()``, an upload, a user generator, an input written in place)
  makes that signature eager for good, with a ``UserWarning`` saying why, once (torch logs "skipping cudagraphs
  due to ..."); more than ``recompile_limit`` (8, torch's) signatures: the new ones run eagerly, as torch's.

Each replay's outputs are fresh tensors (copies of the graph's static outputs; torch instead hands out the static
outputs and raises when one overwritten by a later replay is read): nothing a caller holds is overwritten.
"""

from __future__ import annotations

import functools
import warnings
import weakref
from collections.abc import Callable
from typing import Any

from ._autocast import AUTOCAST
from ._errors import fail
from ._grad_mode import is_grad_enabled, no_grad
from ._tensor import Tensor
from .ops._registry import public

# torch's modes (``torch._inductor.list_mode_options``); those that turn its CUDA graphs on replay WebGPU graphs here
MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
GRAPH_MODES = frozenset({"reduce-overhead", "max-autotune"})
RECOMPILE_LIMIT = 8  # torch._dynamo.config.recompile_limit


@public("config", method=False)
def compile(model: Any = None, *, fullgraph: bool = False, dynamic: bool | None = None, backend: Any = "inductor",
            mode: str | None = None, options: dict[str, Any] | None = None, disable: bool = False,
            **kwargs: Any) -> Any:
    """``torch.compile``. Without ``mode="reduce-overhead"``/``"max-autotune"`` (or ``options`` with
    ``"triton.cudagraphs"``), nothing is compiled: a function comes back unchanged; a module comes back wrapped,
    as torch's, in an ``OptimizedModule`` holding it as ``_orig_mod`` (its ``state_dict`` keys carry that prefix, as
    torch's, so checkpoints of compiled models load in both). With those modes, calls on WebGPU tensors replay
    WebGPU graphs (captured on the second call of each input signature; see ``shapetorch._compile``), others run
    eagerly. Without a model, a decorator that does this."""
    if model is None:
        def decorate(m: Any) -> Any:
            if m is None:
                raise RuntimeError("Model can't be None")
            return compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options,
                           disable=disable, **kwargs)
        return decorate
    if not callable(model):
        raise RuntimeError(f"compile(): model must be callable, got {type(model).__name__}")
    if mode is not None and options is not None:
        fail("argument_error_invalid", op="compile",
             problem="Either mode or options can be specified, but both can't be specified at the same time.")
    if mode is not None and mode not in MODES:
        fail("argument_error_invalid", op="compile",
             problem=f"Unrecognized mode={mode}, should be one of: {', '.join(MODES)}")
    # torch's CUDA graphs: the inductor backend in those modes (or with the option), or the "cudagraphs" backend;
    # its other backends ("eager", "aot_eager", ...) use none
    cudagraphs = bool((options or {}).get("triton.cudagraphs", False))
    graphs = backend == "cudagraphs" or (backend in ("inductor", None) and (mode in GRAPH_MODES or cudagraphs))
    limit = int(kwargs.get("recompile_limit") or RECOMPILE_LIMIT)
    from .nn import Module

    if disable:
        return model
    if isinstance(model, Module):
        return _optimized_module()(model, Graphed(model, model, limit) if graphs else None)
    if not graphs:
        return model
    return functools.wraps(model)(Graphed(model, None, limit))


@functools.cache
def _optimized_module() -> type:
    from .nn import Module

    class OptimizedModule(Module):
        """A module returned by ``compile``: calls and attribute reads go to ``_orig_mod``, as torch's."""

        def __init__(self, mod: Any, graphed: Graphed | None = None) -> None:
            super().__init__()
            self._orig_mod = mod
            object.__setattr__(self, "_graphed", graphed)  # (not a submodule: no state_dict keys of its own)

        def forward(self, *args: Any, **kwargs: Any) -> Any:
            graphed = self.__dict__.get("_graphed")
            if graphed is not None:
                return graphed(*args, **kwargs)
            return self._orig_mod(*args, **kwargs)

        def __getattr__(self, name: str) -> Any:
            modules = self.__dict__.get("_modules")
            if name == "_orig_mod" or modules is None or "_orig_mod" not in modules:
                return super().__getattr__(name)
            return getattr(modules["_orig_mod"], name)

    OptimizedModule.__module__ = "shapetorch.config"  # (where torch users' pickles and reprs expect it)
    return OptimizedModule


# -- the compiled callable ----------------------------------------------------------------------------------------

class Graphed:
    """A callable replaying WebGPU graphs per input signature (see the module's docstring)."""

    def __init__(self, fn: Any, module: Any, limit: int = RECOMPILE_LIMIT) -> None:
        from .optim import Optimizer

        self.fn = fn
        self.module = module
        owner = getattr(fn, "__self__", None)
        self.optimizer = owner if isinstance(owner, Optimizer) and getattr(fn, "__name__", "") == "step" else None
        self.limit = limit
        self.entries: dict[Any, _Entry] = {}
        self.warned: set[str] = set()
        self._modules: list[Any] | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        key = self.signature(args, kwargs)
        if key is None:
            return self.fn(*args, **kwargs)
        entry = self.entries.get(key)
        if entry is None:
            if len(self.entries) >= self.limit:
                self.skip(f"the recompile limit ({self.limit} input signatures) was reached")
                return self.fn(*args, **kwargs)
            entry = self.entries[key] = _Entry(self)
        return entry(args, kwargs)

    def skip(self, why: str) -> None:
        """Say once why a call runs eagerly (torch's "skipping cudagraphs due to ...")."""
        if why not in self.warned:
            self.warned.add(why)
            name = getattr(self.fn, "__qualname__", type(self.fn).__name__)
            warnings.warn(f"compile(mode='reduce-overhead'): skipping WebGPU graphs of {name} due to {why}; "
                          "those calls run eagerly", UserWarning, stacklevel=4)

    def signature(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The guards of a call (hashable), or None when it runs eagerly (no tensor on WebGPU, an unhashable
        argument). It runs at every call, so it is one flat tuple built in one pass (no nested frames per tensor
        but :func:`_guard`'s, the modules' parameter dicts listed once)."""
        parts: list[Any] = []
        on_gpu = _guard(args, parts)
        if kwargs:
            on_gpu = _guard(kwargs, parts) or on_gpu
        if self.module is not None:
            held = self._modules
            if held is None:
                held = self._modules = [(m, m._parameters, m._buffers) for m in self.module.modules()]
            for m, params, buffers in held:
                parts.append(m.training)
                for d in (params, buffers):
                    for t in d.values():
                        if t is not None:
                            on_gpu = on_gpu or t._device.type == "webgpu"
                            parts.append(id(t))
                            parts.append(t.requires_grad)
        opt = self.optimizer
        if opt is not None:
            for group in opt.param_groups:
                for k, v in group.items():
                    if k != "params":
                        parts.append((k, id(v) if isinstance(v, Tensor) else v))
                for p in group["params"]:
                    on_gpu = on_gpu or p._device.type == "webgpu"
                    parts.append(id(p))
                    parts.append(p.grad is None)
        if not on_gpu:
            return None
        parts.append(is_grad_enabled())
        parts.append(tuple(AUTOCAST.enabled.items()))
        key = tuple(parts)
        try:
            hash(key)
        except TypeError:
            self.skip("an unhashable argument")
            return None
        return key


def _guard(a: Any, parts: list[Any]) -> bool:
    """Append the guards of the argument ``a`` (a tensor's shape, dtype, device and ``requires_grad``; a nest's
    type and length, then its items'; another value itself) to ``parts``; whether a tensor on WebGPU is among them."""
    if isinstance(a, Tensor):
        d = a._device
        parts.append((Tensor, a._data.shape, a.dtype, d, a.requires_grad))
        return bool(d.type == "webgpu")
    on_gpu = False
    if isinstance(a, (tuple, list)):
        parts.append((type(a), len(a)))
        for b in a:
            on_gpu = _guard(b, parts) or on_gpu
    elif isinstance(a, dict):
        parts.append((dict, tuple(a)))
        for b in a.values():
            on_gpu = _guard(b, parts) or on_gpu
    else:
        parts.append(a)
    return on_gpu


def _tensors(obj: Any) -> list[Any]:
    """The tensors of a nest of tuples, lists and dicts, in order."""
    out: list[Any] = []

    def visit(a: Any) -> None:
        if isinstance(a, Tensor):
            out.append(a)
        elif isinstance(a, (tuple, list)):
            for b in a:
                visit(b)
        elif isinstance(a, dict):
            for b in a.values():
                visit(b)

    visit(obj)
    return out


def _rebuild(obj: Any, it: Any) -> Any:
    """``obj`` with its tensors replaced, in order, by those of the iterator ``it``."""
    if isinstance(obj, Tensor):
        return next(it)
    if isinstance(obj, (tuple, list)):
        items = [_rebuild(b, it) for b in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items)
    if isinstance(obj, dict):
        return type(obj)((k, _rebuild(v, it)) for k, v in obj.items())
    return obj


def _leaves(outputs: list[Any]) -> list[Any]:
    """The leaf tensors requiring grad that the outputs' autograd graph reaches, in a fixed order."""
    seen: set[int] = set()
    found: dict[int, Any] = {}
    stack = [o.grad_fn for o in outputs if o.grad_fn is not None]
    for o in outputs:
        if o.grad_fn is None and o.requires_grad:
            found[id(o)] = o
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        v = getattr(fn, "variable", None)
        if v is not None:
            found.setdefault(id(v), v)
            continue
        for nxt, _ in getattr(fn, "next_functions", ()):
            stack.append(nxt)
    return list(found.values())


_EAGER = object()  # what a replay returns for a call that must run eagerly instead


class _Refused(Exception):
    """A capture that cannot stand for the eager call (the reason is the message)."""


class _Entry:
    """One input signature of a ``Graphed``: its calls, then its graphs."""

    def __init__(self, owner: Graphed) -> None:
        self.owner = owner
        self.calls = 0
        self.eager = False
        self.run: Callable[[tuple[Any, ...], dict[str, Any]], Any] | None = None

    def __call__(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        fn = self.owner.fn
        if self.run is not None:
            out = self.run(args, kwargs)
            return fn(*args, **kwargs) if out is _EAGER else out
        if self.eager:
            return fn(*args, **kwargs)
        self.calls += 1
        if self.calls == 1:  # the warm-up
            return fn(*args, **kwargs)
        try:
            self.run = self.capture(args, kwargs)
        except _Refused as e:
            self.eager = True
            self.owner.skip(str(e))
            return fn(*args, **kwargs)
        return self.run(args, kwargs)

    def capture(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Callable[..., Any]:
        """Capture the call (and its backward where the outputs need one) and return what replays it."""
        from .autograd import grad
        from .ops.random import _device_generator
        from .webgpu import Graph, graph

        user_in = _tensors((args, kwargs))
        with no_grad():
            static_in = [t.detach().clone() for t in user_in]
        for s, t in zip(static_in, user_in):
            if t.requires_grad:
                s.requires_grad_(True)
        versions = [s._version for s in static_in]
        s_args, s_kwargs = _rebuild((args, kwargs), iter(static_in))
        gen = _device_generator(_webgpu())
        offset = gen._offset
        opt = self.owner.optimizer
        static_grads = [p.grad for g in opt.param_groups for p in g["params"]] if opt is not None else []
        fwd, bwd = Graph(), Graph()
        try:
            with graph(fwd):
                out = self.owner.fn(*s_args, **s_kwargs)
        except Exception as e:
            gen._offset = offset  # (the draws recorded before the refusal ran nowhere)
            fwd.reset()
            raise _Refused(_reason(e)) from None
        if [s._version for s in static_in] != versions:
            fwd.reset()
            raise _Refused("an input written in place (the graph would write its own copy)")
        static_out = _tensors(out)
        diff = [o for o in static_out if o.requires_grad]
        surface: list[Any] = []
        static_grad_out: list[Any] = []
        static_grad_in: tuple[Any, ...] = ()
        backward_error: Exception | None = None
        if diff:
            leaves = _leaves(diff)
            # the arguments first (their gradients go to the caller's tensors), then the other leaves (parameters)
            arg_ids = {id(s) for s in static_in}
            others = [t for t in leaves if id(t) not in arg_ids]
            surface = [s for s in static_in if s.requires_grad] + others
            with no_grad():
                static_grad_out = [o.detach().clone().zero_() for o in diff]
            if surface:
                try:
                    with graph(bwd):
                        static_grad_in = tuple(grad(diff, surface, grad_outputs=static_grad_out, allow_unused=True))
                except Exception as e:
                    bwd.reset()
                    if getattr(e, "code", None) == "device_error_graph_capture":
                        fwd.reset()
                        raise _Refused(_reason(e)) from None
                    backward_error = e  # (the eager backward raises it too: a graph freed inside the call, say)
        del diff
        run = _Replay(self, fwd, bwd, out, static_in, static_out, surface, static_grad_out, static_grad_in,
                      backward_error, static_grads)
        return run


def _webgpu() -> Any:
    from ._device import device

    return device("webgpu")


def _reason(e: Exception) -> str:
    msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    if getattr(e, "code", None) == "device_error_graph_capture":
        return msg.split(": ", 1)[-1]
    return f"{type(e).__name__} under capture: {msg}"


def _copy_in(static: Any, t: Any) -> None:
    """``static.copy_(t)`` for a graph's private input: through the runtime's copy kernel where both are WebGPU
    tensors of one dtype and shape (the signature's guards make them so; the op layer's in-place checks and version
    counter have nothing to guard on a tensor only the graph holds), else ``copy_``."""
    if (t._device.type == "webgpu" and static._device.type == "webgpu" and t.dtype == static.dtype
            and t.shape == static.shape and t.numel()):
        from .backends.webgpu import kernels

        kernels.assign(static._data, t._data)
    else:
        with no_grad():
            static.copy_(t)


class _Replay:
    """What replays one captured signature: copies the arguments in, replays, hands out fresh outputs, and (when
    they need gradients) an autograd ``Function`` whose backward replays the backward graph."""

    def __init__(self, entry: _Entry, fwd: Any, bwd: Any, out: Any, static_in: list[Any], static_out: list[Any],
                 surface: list[Any], static_grad_out: list[Any], static_grad_in: tuple[Any, ...],
                 backward_error: Exception | None, static_grads: list[Any]) -> None:
        from ._engine.backward import _WALKS
        from .autograd import Function, once_differentiable

        self.fwd, self.bwd, self.out = fwd, bwd, out
        self.static_in, self.static_out = static_in, static_out
        self.grads_out = static_grad_out
        self.backward_error = backward_error
        self.pending: Any = None  # a weak reference to the autograd node of the last replay whose backward is due
        self.opt = entry.owner.optimizer
        self.static_grads = static_grads
        diff_pos = [i for i, o in enumerate(static_out) if o.requires_grad]
        self.diff_pos = diff_pos
        n_args = sum(1 for s in static_in if s.requires_grad)
        self.arg_pos = [i for i, s in enumerate(static_in) if s.requires_grad]
        self.params = surface[n_args:]
        replay = self

        class CompiledGraph(Function):
            @staticmethod
            def forward(ctx: Any, *inputs: Any) -> Any:
                replay.fwd.replay()
                return tuple(replay.fresh(replay.static_out[i]) for i in diff_pos)

            @staticmethod
            @once_differentiable
            def backward(ctx: Any, *grads: Any) -> Any:
                if backward_error is not None:
                    raise backward_error
                replay.pending = None
                for static, g in zip(replay.grads_out, grads):
                    if g is None:
                        static.zero_()
                    elif g.data_ptr() != static.data_ptr():
                        _copy_in(static, g)
                # a leaf whose .grad is the graph's own buffer (the engine took the returned gradient as it is)
                # gets a copy before the replay overwrites it (an accumulation keeps the old value)
                for p, g in zip(replay.params, static_grad_in[n_args:]):
                    held = p.grad
                    if held is not None and g is not None and held.data_ptr() == g.data_ptr():
                        p.grad = held.clone()
                if replay.bwd.num_dispatches():
                    replay.bwd.replay()
                grads_in = [None if g is None else g.detach() for g in static_grad_in]
                # a plain backward() (every edge, no create_graph) would accumulate into a leaf whose .grad is None
                # a clone of the gradient returned (its buffer is the graph's): the leaf takes the graph's buffer
                # instead, so its .grad is the same memory at each step, and a compiled opt.step reads it without
                # a copy (the copy before the next replay, above, keeps an accumulation right)
                walks = _WALKS.needed
                if walks and walks[-1] is None and not is_grad_enabled():
                    for i in range(n_args, len(grads_in)):
                        p, g = replay.params[i - n_args], grads_in[i]
                        if (g is not None and p.grad is None and p._hooks is None
                                and p._post_accumulate_hooks is None):
                            p.grad = g
                            grads_in[i] = None
                return tuple(grads_in)

        self.function = CompiledGraph if diff_pos else None

    @staticmethod
    def fresh(t: Any) -> Any:
        """A copy of a static output, made by the runtime's copy kernel (the op layer's ``clone`` costs 2-3 times
        as much host time, for a tensor no autograd or view needs: the graph's outputs are contiguous and private)."""
        from .backends.webgpu import kernels

        if t._device.type != "webgpu" or not t.numel():
            return t.detach().clone()
        return Tensor._make(kernels.contiguous_copy(t._data), t._device)

    def __call__(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        pending = self.pending
        if pending is not None and pending() is not None:
            # the backward of an earlier call is still to run, and it reads the activations the forward graph saved:
            # a replay now would overwrite them, so this call runs eagerly (torch's cudagraph trees do not replay
            # over pending backwards either)
            return _EAGER
        user_in = _tensors((args, kwargs))
        for s, t in zip(self.static_in, user_in):
            if s._data is not t._data and s.data_ptr() != t.data_ptr():
                _copy_in(s, t)
        if self.opt is not None:  # the gradients the step reads: the captured tensors, refreshed if replaced
            ps = [p for g in self.opt.param_groups for p in g["params"]]
            for p, s in zip(ps, self.static_grads):
                g = p.grad
                if g is not None and s is not None and g._data is not s._data and g.data_ptr() != s.data_ptr():
                    _copy_in(s, g)
        function = self.function
        if function is None:
            self.fwd.replay()
            with no_grad():
                fresh = [self.fresh(o) for o in self.static_out]
            return _rebuild(self.out, iter(fresh))
        inputs = [user_in[i] for i in self.arg_pos] + self.params
        diff = function.apply(*inputs)
        diff = diff if isinstance(diff, tuple) else (diff,)
        if self.backward_error is None:  # (a backward that only raises reads nothing)
            self.pending = weakref.ref(diff[0].grad_fn) if diff[0].grad_fn is not None else None
        with no_grad():
            fresh = [None if o.requires_grad else self.fresh(o) for o in self.static_out]
        for i, d in zip(self.diff_pos, diff):
            fresh[i] = d
        return _rebuild(self.out, iter(fresh))


__all__ = ["GRAPH_MODES", "MODES", "RECOMPILE_LIMIT", "Graphed", "compile"]
