"""``shapetorch.webgpu``: graph capture and replay for ``device="webgpu"``, with torch.cuda's graph API.

A training step recorded once replays without the op layer or autograd in Python: each replay re-encodes the
recorded dispatches into one command encoder and submits it (``backends/webgpu/graphs.py``). The names and the
semantics are torch's CUDA graphs' (``torch.cuda.CUDAGraph``, ``torch.cuda.graph``, ``graph_pool_handle``,
``is_current_stream_capturing``)::

    g = st.webgpu.Graph()
    opt.zero_grad(set_to_none=True)
    with st.webgpu.graph(g):
        static_loss = loss_fn(model(static_x), static_y)
        static_loss.backward()
        opt.step()
    for x, y in data:
        static_x.copy_(x); static_y.copy_(y)
        g.replay()                     # static_loss, the parameters and their gradients hold the new step

- A capture records, it does not run: the tensors it makes hold their values only after a replay, and N replays
  are N steps (torch's capture is the same). Warm up first (a few eager steps): an optimizer's state, cached
  tables and pipelines are made then, and a capture refuses what would need the host.
- Refused with a ``DeviceError`` (a ``RuntimeError``, code ``device_error_graph_capture``), which ends the capture
  and leaves the runtime usable: reads back (``.item()``, ``.numpy()``, printing, ``bool(x)``, ``nonzero``,
  ``masked_select``), ``synchronize()``, copies from the host (a CPU tensor or a list used on the device), an
  optimizer whose step count lives on the host (Adam/AdamW need ``capturable=True``, as torch; SGD needs
  nothing; the other optimizers are refused under a capture), a random draw from a user ``Generator``.
- Random draws from the device's default generator are graph-safe, as torch's: a replay draws with the
  generator's seed and offset at that moment and advances it, so dropout gets a fresh mask per replay, the mask
  the same eager step would have drawn.
- Every buffer a graph reads or writes stays reserved for it until ``reset()`` (its private pool): a tensor
  freed after the capture does not hand its buffer to other work. ``pool=`` is accepted and shares nothing.

``shapetorch.cuda`` stays torch's namespace on a machine without CUDA (``is_available()`` False): a program ported
from CUDA graphs names ``st.webgpu.Graph`` (``CUDAGraph`` is an alias) and ``st.webgpu.graph``.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

from ._device import device
from ._errors import fail
from .autograd import Function, grad, once_differentiable
from .backends.webgpu.api import capturing

__all__ = ["CUDAGraph", "Graph", "graph", "graph_pool_handle", "is_current_stream_capturing", "make_graphed_callables"]

_POOLS = [0]  # the last pool handle given out


def graph_pool_handle() -> tuple[int, int]:
    """An opaque token naming a memory pool (torch's); accepted by ``graph(pool=...)``."""
    _POOLS[0] += 1
    return (0, _POOLS[0])


def is_current_stream_capturing() -> bool:
    """True while a WebGPU graph capture is underway."""
    return capturing()


class Graph:
    """A WebGPU graph: ``capture_begin``/``capture_end`` (or the ``graph`` context manager), ``replay``,
    ``reset``. torch's ``torch.cuda.CUDAGraph``."""

    def __init__(self, keep_graph: bool = False) -> None:
        self._captured: Any = None  # backends.webgpu.graphs.Captured
        self._pool = graph_pool_handle()
        self._generator: Any = None
        self._seed = 0
        self._offset = 0  # the generator's offset when the capture began
        self._consumed = 0  # offsets one replay draws

    def capture_begin(self, pool: Any = None, capture_error_mode: str = "global") -> None:
        if self._captured is not None:
            fail("device_error_graph_capture", op="webgpu.Graph.capture_begin",
                 problem="this Graph already holds a captured graph; reset() it, or make a new Graph")
        if capture_error_mode not in ("global", "thread_local", "relaxed"):
            raise ValueError(f"Unknown capture error mode. Expected 'global', 'thread_local', or 'relaxed', "
                             f"got {capture_error_mode!r}")
        from .backends.webgpu import graphs
        from .ops.random import _device_generator

        if pool is not None:
            self._pool = pool
        gen = self._generator = _device_generator(device("webgpu"))
        self._seed, self._offset = gen._seed, gen._offset
        graphs.begin_capture()

    def capture_end(self) -> None:
        from .backends.webgpu import graphs

        rec = graphs.end_capture()
        if rec is None:
            fail("device_error_graph_capture", op="webgpu.Graph.capture_end", problem="no capture is underway")
        gen = self._generator
        # the capture's draws ran nowhere: the generator goes back to where it was, and each replay advances it
        self._consumed = gen._offset - self._offset
        gen._offset = self._offset
        captured = graphs.Captured(rec)
        for _, seed, offset in captured.random:
            if seed != self._seed or not self._offset <= offset < self._offset + self._consumed:
                captured.release()
                fail("device_error_graph_capture", op="webgpu.Graph.capture_end",
                     problem="a random draw from a generator other than the WebGPU default one cannot be captured "
                             "(its state is not advanced by a replay); use the default generator")
        self._captured = captured

    def replay(self) -> None:
        if self._captured is None:
            fail("device_error_graph_capture", op="webgpu.Graph.replay",
                 problem="replay() without a preceding successful capture")
        if capturing():
            fail("device_error_graph_capture", op="webgpu.Graph.replay",
                 problem="a graph cannot be replayed while another is being captured")
        gen = self._generator
        shift = gen._offset - self._offset
        gen._offset += self._consumed
        self._captured.replay(gen._seed, shift)

    def reset(self) -> None:
        """Forget the captured graph and give its buffers back to the pool."""
        captured, self._captured = self._captured, None
        if captured is not None:
            captured.release()

    def pool(self) -> tuple[int, int]:
        return self._pool

    def instantiate(self) -> None:
        """torch's (for ``keep_graph=True``): a WebGPU graph is ready to replay from ``capture_end`` on, so this does
        nothing."""

    def num_dispatches(self) -> int:
        """The dispatches one replay submits (0 before a capture)."""
        return 0 if self._captured is None else len(self._captured)

    def __del__(self) -> None:
        try:
            self.reset()
        except Exception:  # interpreter shutdown
            pass


CUDAGraph = Graph


class graph:
    """``with st.webgpu.graph(g):`` captures the block into ``g`` (torch's ``torch.cuda.graph``): the recorded work
    is waited for and the free buffers released first, then ``g.capture_begin(pool)``; ``g.capture_end()`` at the
    end. An exception inside the block ends the capture (``g`` stays empty) and propagates."""

    default_capture_stream = None

    def __init__(self, cuda_graph: Graph, pool: Any = None, stream: Any = None,
                 capture_error_mode: str = "global") -> None:
        self.cuda_graph = cuda_graph
        self.pool = pool
        self.capture_error_mode = capture_error_mode

    def __enter__(self) -> None:
        import gc

        from .backends.webgpu import api

        api.synchronize()
        gc.collect()  # (torch's: tensors in cycles give their buffers back before the capture takes buffers)
        api.empty_cache()
        self.cuda_graph.capture_begin(self.pool, capture_error_mode=self.capture_error_mode)

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        if kind is None:
            self.cuda_graph.capture_end()
            return
        from .backends.webgpu import graphs

        graphs.end_capture()  # (dropped; a refusal has ended it already)


def make_graphed_callables(callables: Any, sample_args: Any, num_warmup_iters: int = 3,
                           allow_unused_input: bool = False, pool: Any = None) -> Any:
    """torch's ``make_graphed_callables`` for WebGPU: each callable (a function or a ``Module``) and its backward
    captured in two graphs, returned as a callable that copies its inputs into the static ones, replays the
    forward graph and returns its outputs as the outputs of an autograd ``Function``, whose backward copies the
    incoming gradients into static ones and replays the backward graph (a module's parameters get their gradients
    through it, accumulated as usual). As torch's beta API: the arguments are tensors only, and a module is graphed
    for its training mode at the call (the other mode runs its own forward)."""
    from .nn import Module
    from .ops.creation import empty_like

    just_one = not isinstance(callables, tuple)
    if just_one:
        callables, sample_args = (callables,), (sample_args,)
    results = []
    for func, args in zip(callables, sample_args):
        args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
        if not all(hasattr(a, "requires_grad") for a in args):
            raise TypeError("In the beta API, sample_args for each callable must contain only Tensors. Other types "
                            "are not allowed.")
        if isinstance(func, Module) and (func._forward_hooks or func._forward_pre_hooks or func._backward_hooks):
            raise RuntimeError("Modules must not have hooks registered at the time they are passed. However, "
                               "registering hooks on modules after passing them through make_graphed_callables "
                               "is allowed.")
        params = tuple(func.parameters()) if isinstance(func, Module) else ()
        surface = args + params  # the graphs' static inputs: the arguments, then the module's parameters
        needs_grad = [t for t in surface if t.requires_grad]

        def outputs_of(out: Any) -> tuple[Any, ...]:
            return tuple(out) if isinstance(out, (tuple, list)) else (out,)

        for _ in range(num_warmup_iters):  # (pipelines, cached tables and the autograd path made before capture)
            outs = outputs_of(func(*args))
            diff = [o for o in outs if o.requires_grad]
            if diff and needs_grad:
                grad(diff, needs_grad, grad_outputs=[empty_like(o).fill_(1) for o in diff],
                     allow_unused=allow_unused_input)
        del outs, diff
        fwd, bwd = Graph(), Graph()
        with graph(fwd, pool=pool):
            static_out = outputs_of(func(*args))
        static_grad_out = tuple(empty_like(o) if o.requires_grad else None for o in static_out)
        grads: tuple[Any, ...] = ()
        diff = [o for o in static_out if o.requires_grad]
        if diff and needs_grad:
            with graph(bwd, pool=pool):
                grads = tuple(grad(diff, needs_grad, grad_outputs=[g for g in static_grad_out if g is not None],
                                   allow_unused=allow_unused_input))
        it = iter(grads)
        static_grad_in = tuple(next(it) if t.requires_grad else None for t in surface)
        results.append(_graphed(func, fwd, bwd, surface, len(args), static_out, static_grad_out, static_grad_in))
    return results[0] if just_one else tuple(results)


def _graphed(func: Any, fwd: Graph, bwd: Graph, surface: tuple[Any, ...], n_args: int, static_out: tuple[Any, ...],
             static_grad_out: tuple[Any, ...], static_grad_in: tuple[Any, ...]) -> Any:
    """The graphed callable of one captured callable (see ``make_graphed_callables``)."""
    from .nn import Module

    class Graphed(Function):
        @staticmethod
        def forward(ctx: Any, *inputs: Any) -> Any:
            for static, x in zip(surface[:n_args], inputs[:n_args]):
                if static is not x:
                    static.copy_(x)
            fwd.replay()
            ctx.set_materialize_grads(False)  # (an output no gradient reached: its static one is zeroed below)
            return tuple(o.detach() for o in static_out)

        @staticmethod
        @once_differentiable
        def backward(ctx: Any, *grads: Any) -> Any:
            for static, g in zip(static_grad_out, grads):
                if static is None:
                    continue
                if g is None:  # a zero gradient (torch materializes it), never the previous call's values
                    static.zero_()
                elif static is not g:
                    static.copy_(g)
            if bwd.num_dispatches():
                bwd.replay()
            return tuple(None if g is None else g.detach() for g in static_grad_in)

    params = surface[n_args:]

    def graphed(*user_args: Any) -> Any:
        out = Graphed.apply(*user_args, *params)
        return out[0] if len(static_out) == 1 else out

    if isinstance(func, Module):
        training, forward = func.training, func.forward

        def new_forward(*user_args: Any) -> Any:
            return graphed(*user_args) if func.training == training else forward(*user_args)

        func.forward = new_forward
        return func
    return graphed
