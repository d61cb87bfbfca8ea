"""Custom differentiable operations: ``autograd.Function`` with ``forward``/``backward`` (and
optionally ``setup_context`` and ``jvp``), used through ``apply``.

The ``ctx`` that ``forward`` receives is the graph node of the call (``y.grad_fn``), as in torch.
``save_for_backward`` follows the rules of its documentation: at most once, only in ``forward``
(or ``setup_context``), only tensors or None; ``saved_tensors`` checks the version counters.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from .._engine.anomaly import ANOMALY, forward_traceback
from .._engine.backward import SavedTensor, freed, gradient_edge, sum_to
from .._engine.graph import Node, next_seq
from .._errors import fail
from .._grad_mode import STATE, no_grad
from .._tensor import forget_view

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["BackwardCFunction", "Function", "FunctionCtx", "InplaceFunction", "NestedIOFunction", "once_differentiable"]

F = TypeVar("F", bound=Callable[..., Any])


def _tensor_type() -> type[Tensor]:
    from .._tensor import Tensor

    return Tensor


class FunctionCtx:
    """The methods ``forward`` may call on ``ctx``; any other attribute may be set on it freely."""

    _in_forward = False
    _saved: list[SavedTensor | None] | None = None
    _saved_called = False
    _released = False
    _materialize = True
    _dirty: tuple[Any, ...] = ()
    _non_diff: tuple[Any, ...] = ()
    to_save: tuple[Any, ...] = ()
    needs_input_grad: tuple[bool, ...] = ()

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Save tensors for ``backward`` (read them there as ``ctx.saved_tensors``)."""
        Tensor = _tensor_type()
        if not self._in_forward:
            raise RuntimeError("save_for_backward can only be called from forward() (or setup_context()), not after "
                               "it has returned or from backward()")
        if self._saved_called:
            raise RuntimeError("save_for_backward must be called at most once per forward() call; pass all the "
                               "tensors to save in one call")
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self._saved_called = True
        self.to_save = tensors

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        """Save tensors for ``jvp`` (read them there as ``ctx.saved_tensors``)."""
        self.saved_for_forward = tensors

    def mark_dirty(self, *args: Tensor) -> None:
        """Declare inputs that ``forward`` modified in place (they must also be returned)."""
        self._dirty = args

    def mark_non_differentiable(self, *args: Tensor) -> None:
        """Declare outputs that have no gradient (indices, masks); they will not require grad."""
        self._non_diff = args

    def set_materialize_grads(self, value: bool) -> None:
        """Whether ``backward`` gets zeros (True, the default) or None for outputs that got no gradient."""
        self._materialize = bool(value)

    def mark_shared_storage(self, *pairs: Any) -> None:  # torch's deprecated no-op
        return None

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        """The tensors given to ``save_for_backward``, checked against in-place changes since."""
        if self._in_forward and not self._saved_called:
            return ()
        if self._released:
            freed()
        fwd = getattr(self, "saved_for_forward", None)
        if not self._saved and fwd is not None:
            return tuple(fwd)
        if self._saved is None:
            return ()
        return tuple(None if s is None else s.unpack(self) for s in self._saved)

    saved_variables = saved_tensors


class BackwardCFunction(Node, FunctionCtx):
    """The graph node (and ctx) of one ``Function.apply`` call; ``name()`` is ``<Class>Backward``."""

    _forward_cls: type[Function]
    _in_meta: tuple[Any, ...]  # per input: (shape, dtype, requires_grad), None for a non-tensor (set by apply)
    _out_meta: tuple[Any, ...]  # per output: (shape, dtype, device), None for a non-tensor

    def name(self) -> str:
        return f"{self._forward_cls.__name__}Backward"

    def _saved_names(self) -> list[str]:
        return []

    def apply(self, grads: list[Any]) -> list[Any]:
        cls = self._forward_cls
        if self._materialize:
            grads = [g if g is not None else _zeros_like_meta(m) for g, m in zip(grads, self._out_meta)]
        backward = cls.backward if cls.backward is not Function.backward else cls.vjp
        result = backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        name = self.name()
        n_in = len(self._in_meta)
        if len(result) != n_in:
            if len(result) > n_in and all(r is None for r in result[n_in:]):
                result = result[:n_in]
            else:
                fail("autograd_gradient_mismatch_error", op=name,
                     problem=f"function {name} returned an incorrect number of gradients (expected {n_in}, got "
                             f"{len(result)})")
        Tensor = _tensor_type()
        out: list[Any] = []
        for i, (g, meta) in enumerate(zip(result, self._in_meta)):
            if meta is None:  # not a tensor input
                if g is not None:
                    fail("autograd_gradient_mismatch_error", op=name,
                         problem=f"function {name} returned a gradient different than None at position {i + 1}, "
                                 "but the corresponding forward input was not a Variable")
                continue
            shape, dtype, differentiable = meta
            if g is None or not differentiable:
                out.append(None)
                continue
            if not isinstance(g, Tensor):
                fail("autograd_gradient_mismatch_error", op=name,
                     problem=f"function {name} returned a gradient of type {type(g).__name__} at position {i + 1}, "
                             "expected a Tensor or None")
            if g._data.shape != shape:
                if not _expandable(shape, g._data.shape):
                    fail("autograd_gradient_mismatch_error", op=name,
                         problem=f"Function {name} returned an invalid gradient at index {i} - got "
                                 f"{list(g._data.shape)} but expected shape compatible with {list(shape)}")
                g = sum_to(g, shape)
            if g.dtype is not dtype:
                g = g.to(dtype)
            out.append(g)
        return out

    def release(self) -> None:
        if self._saved:
            for s in self._saved:
                if s is not None:
                    s.release()
        self._released = True


def _expandable(shape: tuple[int, ...], to: tuple[int, ...]) -> bool:
    """Whether ``shape`` broadcasts to ``to`` (a gradient of the broadcast shape is summed back)."""
    if len(shape) > len(to):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(to)))


def _zeros_like_meta(meta: Any) -> Any:
    from ..ops.creation import zeros

    shape, dtype, device = meta
    return zeros(shape, dtype=dtype, device=device)


class _FunctionMeta(type):
    """Gives each Function subclass its node class (``y.grad_fn`` is an instance of it)."""

    def __init__(cls, name: str, bases: tuple[type, ...], attrs: dict[str, Any]) -> None:
        backward_fn = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        cls._backward_cls = backward_fn
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=_FunctionMeta):
    """Base class of custom autograd operations (``torch.autograd.Function``).

    Subclass it with static ``forward(ctx, *args)`` and ``backward(ctx, *grad_outputs)`` (or
    ``forward(*args)`` plus ``setup_context(ctx, inputs, output)``), then call ``Cls.apply(*args)``.
    """

    _backward_cls: type[BackwardCFunction]
    generate_vmap_rule = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        import warnings

        warnings.warn(
            f"{type(self)} should not be instantiated. Methods on autograd functions are all static, so you should "
            "invoke them on the class itself. Instantiating an autograd function will raise an error in a future "
            "version of PyTorch.", DeprecationWarning, stacklevel=2,
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use new-style autograd "
            "function with static forward method. (Example: https://pytorch.org/docs/stable/autograd.html"
            "#torch.autograd.Function)"
        )

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        """Compute the outputs; override it."""
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        """Optional: fill ``ctx`` from the inputs and output (then ``forward`` takes no ctx)."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        """One gradient per ``forward`` input (None for non-tensors and inputs without one); override it."""
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @staticmethod
    def vjp(ctx: Any, *grad_outputs: Any) -> Any:
        """Alias of ``backward``."""
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        """One tangent per output, given one tangent per input (forward-mode AD); override it to use forward AD."""
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")

    @staticmethod
    def vmap(info: Any, in_dims: Any, *args: Any) -> Any:
        raise NotImplementedError("shapetorch has no vmap; autograd.Function.vmap is not supported")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` and, when an input requires grad, record the node of this call."""
        return _apply(cls, args, kwargs)


def _apply(cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    Tensor = _tensor_type()
    ctx: Any = object.__new__(cls._backward_cls)
    ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
    record = STATE.enabled and any(ctx.needs_input_grad)
    custom_setup = "setup_context" in _defining(cls) and cls.setup_context is not Function.setup_context
    ctx._in_forward = True
    try:
        with no_grad():
            if custom_setup:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
    finally:
        ctx._in_forward = False
    is_tuple = isinstance(output, tuple)
    outs = list(output) if is_tuple else [output]
    dirty_ids = {id(t) for t in ctx._dirty}
    non_diff_ids = {id(t) for t in ctx._non_diff}
    input_ids = {id(a) for a in args if isinstance(a, Tensor)}
    for t in ctx._dirty:
        if t._grad_fn is None and t._requires_grad and record:
            fail("autograd_error_leaf_inplace", op="Function.apply", tense="has been")
    # outputs that are inputs, not marked dirty, become views of them (torch's rule)
    for i, o in enumerate(outs):
        if isinstance(o, Tensor) and id(o) in input_ids and id(o) not in dirty_ids:
            with no_grad():
                alias = o.view_as(o)
            if id(o) in non_diff_ids:
                non_diff_ids.add(id(alias))
            if record:
                alias._created_in = (cls.__name__, i, len(outs) > 1)
            else:  # (torch's is no differentiable view then: it does not take its input's requires_grad)
                forget_view(alias)
            outs[i] = alias
    if record:
        ctx._seq = next_seq()
        ctx._next = tuple(gradient_edge(a) if isinstance(a, Tensor) else (None, 0) for a in args if isinstance(a, Tensor))
        ctx._in_meta = tuple((a._data.shape, a.dtype, a._requires_grad) if isinstance(a, Tensor) else None
                             for a in args)
        ctx._out_meta = tuple((o._data.shape, o.dtype, o.device) if isinstance(o, Tensor) else None for o in outs)
        ctx._num_outputs = len(outs)
        if ANOMALY.enabled:
            ctx.metadata["traceback_"] = forward_traceback()
        for i, o in enumerate(outs):
            if not isinstance(o, Tensor):
                continue
            if id(o) in non_diff_ids or not (o.dtype.is_floating_point or o.dtype.is_complex):
                o._requires_grad = False
                continue
            o._grad_fn, o._output_nr, o._requires_grad = ctx, i, True
            if id(o) in dirty_ids:
                o._bump_version()  # as torch: a dirty output's version moves once more
            # a view: its grad_fn is this node's as of this version, not one to make again from its base's (NOTE
            # [view + in-place] in the tensor module)
            o._view_version = o._view_cell[0]
        if ctx.to_save:
            out_ids = {id(o): i for i, o in enumerate(outs) if isinstance(o, Tensor)}
            ctx._saved = [None if t is None else SavedTensor(t, id(t) in out_ids, out_ids.get(id(t), 0))
                          for t in ctx.to_save]
        else:
            ctx._saved = []
        ctx.to_save = ()
    else:
        ctx._saved = [None if t is None else SavedTensor(t) for t in ctx.to_save] if ctx.to_save else []
        for o in outs:
            if isinstance(o, Tensor) and id(o) in non_diff_ids:
                o._requires_grad = False
    _forward_ad(cls, ctx, args, outs)
    return tuple(outs) if is_tuple else outs[0]


def _defining(cls: type) -> set[str]:
    names: set[str] = set()
    for c in cls.__mro__:
        if c is Function:
            break
        names |= set(vars(c))
    return names


def _forward_ad(cls: type[Function], ctx: Any, args: tuple[Any, ...], outs: list[Any]) -> None:
    from .forward_ad import FWD, set_tangent

    lvl = FWD.level
    if lvl is None:
        return
    Tensor = _tensor_type()
    tangents = [a._fw_grads.get(lvl) if isinstance(a, Tensor) and a._fw_grads is not None else None for a in args]
    if all(t is None for t in tangents):
        return
    if ctx._materialize:
        tangents = [t if t is not None or not isinstance(a, Tensor) else a.new_zeros(a._data.shape)
                    for t, a in zip(tangents, args)]
    FWD.paused += 1
    try:
        with no_grad():
            res = cls.jvp(ctx, *tangents)
    finally:
        FWD.paused -= 1
    res_list = list(res) if isinstance(res, tuple) else [res]
    if len(res_list) != len(outs):
        fail("autograd_gradient_mismatch_error", op=f"{cls.__name__}.jvp",
             problem=f"jvp returned {len(res_list)} tangents for {len(outs)} outputs")
    for o, t in zip(outs, res_list):
        if isinstance(o, Tensor) and t is not None:
            if t._data.shape != o._data.shape:
                fail("autograd_gradient_mismatch_error", op=f"{cls.__name__}.jvp",
                     problem=f"jvp returned a tangent of shape {list(t._data.shape)} for an output of shape "
                             f"{list(o._data.shape)}")
            set_tangent(o, t, lvl)


class InplaceFunction(Function):
    def __init__(self, inplace: bool = False) -> None:
        self.inplace = inplace


class NestedIOFunction(Function):
    pass


class _DelayedError(Node):
    """The node behind the gradients of a ``once_differentiable`` backward: differentiating it fails."""

    def __init__(self, msg: str, inputs: tuple[Any, ...]) -> None:
        self._msg = msg
        self._seq = next_seq()
        self._next = tuple(gradient_edge(t) for t in inputs)

    def name(self) -> str:
        return "DelayedError"

    def apply(self, grads: list[Any]) -> list[Any]:
        raise RuntimeError(self._msg)


def once_differentiable(fn: F) -> F:
    """Decorate a ``backward`` that is not itself differentiable: double backward through it raises."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            outputs = fn(ctx, *args)
        if not STATE.enabled:
            return outputs
        Tensor = _tensor_type()
        requiring = tuple(a for a in args if isinstance(a, Tensor) and a._requires_grad)
        if not requiring:
            return outputs
        tup = outputs if isinstance(outputs, tuple) else (outputs,)
        err = _DelayedError("trying to differentiate twice a function that was marked with @once_differentiable",
                            requiring)
        wrapped = []
        for o in tup:
            if isinstance(o, Tensor) and (o.dtype.is_floating_point or o.dtype.is_complex):
                o = o.detach()
                o._grad_fn, o._requires_grad = err, True
            wrapped.append(o)
        return tuple(wrapped) if isinstance(outputs, tuple) else wrapped[0]

    return wrapper  # type: ignore[return-value]
