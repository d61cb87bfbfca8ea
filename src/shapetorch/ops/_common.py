"""What the op modules share: rule calls with user-facing errors, operands, dtype resolution, in-place."""

from __future__ import annotations

import contextlib
import functools
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from .._autocast import AUTOCAST, autocast_target
from .._device import CPU, backend, device
from .._dtype import DType, get_default_dtype, to_dtype
from .._engine.backward import SAVES, dense_array
from .._engine.primitives import Prim
from .._errors import fail, raise_from_rule
from .._grad_mode import STATE, no_grad
from .._rules import dtypes as RD
from .._rules.broadcast import broadcast_pair
from .._rules.creation import new_shape
from .._rules.errors import RuleError
from .._rules.inplace import inplace_shape
from .._tensor import Tensor, refresh_view, view_base
from ..backends.numpy_backend import DTYPE_OF, NP_DTYPE
from .view_history import finish_rebase, rebase, record_node, refuse_view_write

Number = bool | int | float | complex


def autocast_inputs(op: str, *args: Any) -> tuple[Any, ...]:
    """``args`` as ``op`` runs them under autocast: floating tensors (never float64) cast to the dtype torch's
    policy gives ``op`` (``_autocast``); everything else, and every argument outside autocast, as given."""
    if not AUTOCAST.enabled:
        return args
    first = next((a for a in args if isinstance(a, Tensor)), None)
    target = None if first is None else autocast_target(op, first._device.type)
    if target is None:
        return args
    return tuple(a.to(target) if isinstance(a, Tensor) and a.dtype.is_floating_point and a.dtype.name != "float64"
                 and a.dtype is not target else a for a in args)


def check(rule: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run a rule; a RuleError becomes the user-facing exception (NumPy never sees bad shapes)."""
    try:
        return rule(*args, **kwargs)
    except RuleError as e:
        raise_from_rule(e)


@functools.lru_cache(maxsize=4096)
def broadcast2(a: tuple[int, ...], b: tuple[int, ...], op: str) -> tuple[int, ...]:
    return check(broadcast_pair, a, b, op)


def dtype_name(t: Tensor) -> str:
    return DTYPE_OF[t._data.dtype].name


def np_dtype(d: type[DType]) -> Any:
    return NP_DTYPE[d]


def default_float() -> str:
    return get_default_dtype().name


def as_operand(x: Any, like: Tensor, op: str) -> Any:
    """A Tensor stays; a Python number stays (promoted as a scalar); anything else is an error."""
    if isinstance(x, (Tensor, bool, int, float, complex)):
        return x
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(f"{op}(): argument 'other' must be a Tensor or a number, not {type(x).__name__}")


def promoted(*xs: Any) -> str:
    """torch.result_type over tensors and Python scalars, by dtype name."""
    df = default_float()
    ops = []
    for x in xs:
        if isinstance(x, Tensor):
            ops.append((dtype_name(x), RD.TENSOR if x._data.ndim else RD.ZERO_DIM))
        else:
            ops.append((RD.scalar_dtype(x, df), RD.SCALAR))
    return RD.result_type(ops)


def cast(x: Any, name: str) -> Any:
    """``x`` in dtype ``name``: tensors through the differentiable ``to``; scalars as NumPy scalars."""
    if isinstance(x, Tensor):
        return x if dtype_name(x) == name else x.to(to_dtype(name))
    dt = NP_DTYPE[to_dtype(name)]
    if type(x) is int and dt.kind in "iu" and not np.can_cast(np.min_scalar_type(x), dt):
        return np.array(x, dtype=np.int64).astype(dt)[()]  # torch wraps an out-of-range int scalar
    return dt.type(x)


def new_tensor(data: Any, dev: device = CPU) -> Tensor:
    """A tensor of ``data`` (a backend array; a host NumPy array is moved to ``dev``'s backend)."""
    if dev.type != "cpu" and isinstance(data, np.ndarray):
        data = backend(dev.type).from_numpy(np.asarray(data, order="C"))
    return Tensor._make(data, dev)


def device_of(*xs: Any) -> device:
    for x in xs:
        if isinstance(x, Tensor):
            return x._device
    return CPU


def be(t: Tensor) -> Any:
    return backend(t._device.type)


def can_cast(src: str, dst: str) -> bool:
    """torch's canCast: no float -> integral, no complex -> non-complex, nothing non-bool -> bool."""
    cs, cd = RD.category(src), RD.category(dst)
    return not ((cs >= 2 and cd < cs) or (cs == 3 and cd != 3) or (cd == 0 and cs != 0))


def writable(self: Tensor, op: str) -> Any:
    """``self``'s NumPy storage to write into. An expanded view is read-only in NumPy; torch writes into it
    unless elements overlap, and even then for fill_ and zero_ (every element gets one value)."""
    dst = self._shareable_data()
    if isinstance(dst, np.ndarray) and not dst.flags.writeable:
        # conj_physical_ of a real tensor writes each element's own value back: torch lets it through too
        unchanged = op == "conj_physical_" and dst.dtype.kind != "c"
        if op not in ("fill_", "zero_") and not unchanged and any(s == 0 and n > 1 for s, n in zip(dst.strides, dst.shape)):
            fail("inplace_error_internal_overlap", op=op)
        root = dst
        while isinstance(root.base, np.ndarray):
            root = root.base
        if not root.flags.writeable and self._base is not None and isinstance(self._base._data, np.ndarray):
            root = self._base._data  # (a view of an expanded view, a diagonal of it: NumPy's chain ends read-only)
        if root.flags.writeable:  # the same memory, through an array NumPy lets us write
            iface = dict(dst.__array_interface__, data=(dst.__array_interface__["data"][0], False))
            dst = np.asarray(_Memory(iface, root))
    return dst


class _Memory:
    """An array interface over memory owned by ``base`` (kept alive by the array made from it)."""

    def __init__(self, iface: dict[str, Any], base: Any) -> None:
        self.__array_interface__, self.base = iface, base


# in-place ops torch declares not differentiable: they may write into a leaf that requires grad (or a view of one)
_NOT_DIFFERENTIABLE_INPLACE = frozenset({"logical_and_", "logical_or_", "logical_xor_", "logical_not_"})


def check_leaf_inplace(self: Tensor, op: str) -> None:
    """torch's check_inplace: with grad mode on, an in-place op may not write into a leaf that requires grad, nor
    into a view of one (its gradient would be lost), unless torch declares the op not differentiable."""
    if self._base is not None:
        refresh_view(self)  # (a view whose storage was written: its grad_fn as of now, NOTE [view + in-place])
    if STATE.enabled and self.requires_grad and op not in _NOT_DIFFERENTIABLE_INPLACE:
        base = view_base(self)
        if base is not None:
            refuse_view_write(self, False)  # (a view made under no_grad, a piece of split/unbind: torch's order)
            if base._grad_fn is None and base._requires_grad:
                fail("autograd_error_leaf_view_inplace", op=op)
        if self._grad_fn is None:
            fail("autograd_error_leaf_inplace", op=op, tense="is being")


# the primitive keeps torch's name for factorizations' constant outputs; its WebGPU kernel is registered under it
_CONSTANT = Prim("linalg_constant", lambda a, value: value, lambda g, n: (n.inputs[0].new_zeros(n.inputs[0]._data.shape),))
_CONSTANT.jvp = lambda ts, n: None if ts[0] is None else ts[0].new_zeros(n.params["value"].shape)

# An in-place write whose value does not depend on the tensor it overwrites: the new value with gradient zero for
# the old one, saving nothing (the old values are gone), named as torch's node
_OVERWRITE = Prim("overwrite", lambda a, value: value, lambda g, n: (g.new_zeros(g._data.shape),))
_OVERWRITE.jvp = lambda ts, n: None if ts[0] is None else ts[0].new_zeros(n.params["value"].shape)
_OVERWRITE_NODES = {"fill_": "FillBackward2", "zero_": "ZeroBackward0", "copy_": "CopyBackwards"}
# ``self.copy_(src)`` where ``self`` and ``src`` both require grad: the old values get gradient zero and ``src`` the
# rest, as torch's CopyBackwards (recorded only: the values are written by the copy itself)
_COPY_OVER = Prim("copy_over", None, lambda g, n: (g.new_zeros(g._data.shape), g))
SAVES["copy_over"] = ()
_COPY_OVER_NODES = {"copy_": "CopyBackwards"}


# NOTE [formal input of a gradient]: torch computes some gradients with a native backward op that takes the
# forward's input (``avg_pool2d_backward(grad, self, ...)``, ``max_pool2d_with_indices_backward``): with
# create_graph the gradient then requires grad even where its values do not depend on the input's, and
# differentiating it gives the input zeros (the double-backward formula ``zeros_like(self)``), not None. Ours are
# composites over the cotangent and constant tables; ``tie_gradient`` puts an identity node at the forward's output
# whose vjp, only while a graph is built (create_graph), passes the gradient through ``_FORMAL``: the gradient
# unchanged with the input as a formal second input of gradient zero. Without create_graph it is the identity.
_FORMAL = Prim("formal_input", lambda g, x: g,
               lambda gg, n: (gg, n.inputs[1].new_zeros(n.inputs[1]._data.shape)))
_FORMAL.jvp = lambda ts, n: ts[0]


def formal_input(g: Tensor, x: Tensor) -> Tensor:
    """``g`` with ``x`` as a formal input of gradient zero while a graph is built (NOTE [formal input of a
    gradient]); ``g`` itself otherwise."""
    if STATE.enabled and x._requires_grad and x._device.type in _FORMAL.kernels:
        return _FORMAL(g, x)
    return g


_TIE = Prim("gradient_tie", lambda out, x: out, lambda g, n: (formal_input(g, n.inputs[1]), None))
_TIE.jvp = lambda ts, n: ts[0]


def tie_gradient(out: Tensor, input: Tensor) -> Tensor:
    """``out`` (made from ``input``) whose gradient has ``input`` as a formal input under create_graph (NOTE
    [formal input of a gradient]); the node keeps ``out``'s name."""
    if not (STATE.enabled and out._requires_grad and input._requires_grad) or input._device.type not in _TIE.kernels:
        return out
    label = out._grad_fn.name() if out._grad_fn is not None else None
    tied = _TIE(out, input)
    if label is not None and tied._grad_fn is not None:
        tied._grad_fn.label = label
    return tied


def zero_grad(a: Tensor, value: Tensor) -> Tensor:
    """``value`` as a function of ``a`` with gradient zero: a result that does not depend on ``a``'s values but is
    still in its graph."""
    return _CONSTANT(a, value=value._data) if a.requires_grad else value


def write_inplace(self: Tensor, result: Tensor, op: str, *, temporary: bool = False) -> Tensor:
    """Finish an in-place op: ``result`` (computed out of place) is written into ``self``'s storage.
    ``temporary``: no one else holds ``result`` (the caller made it for this write), so a device backend may have
    the kernel that made it write ``self`` directly, with no copy; not when its node saved it for backward, where it
    must keep its own values."""
    src, dst = dtype_name(result), dtype_name(self)
    if not can_cast(src, dst):
        fail("dtype_error_cannot_cast", op=op, result=src, out=dst)
    if result._data.shape != self._data.shape:
        check(inplace_shape, tuple(self._data.shape), tuple(result._data.shape), op)
    if self._created_in is not None and STATE.enabled:  # (before the leaf test: torch's order, for a leaf's split)
        _refuse_custom_view(self._created_in)
    check_leaf_inplace(self, op)
    vbase = view_base(self)  # (None unless ``self`` is a differentiable view: NOTE [view + in-place])
    if vbase is not None and STATE.enabled and result.requires_grad:
        refuse_view_write(self, False)  # (check_leaf_inplace tested ``self``'s own requires_grad only)
    if self._fw_grads is not None or result._fw_grads is not None:
        _inplace_tangent(self, result, op)
    over = None
    if self.requires_grad and not result.requires_grad and STATE.enabled and vbase is None:
        # the old values are overwritten: a node that stops their gradient, or it would reach the old graph
        result = _OVERWRITE(self, value=result._data)
        if result._grad_fn is not None:
            result._grad_fn.label = _OVERWRITE_NODES.get(op, "CopyBackwards")
    elif op in _COPY_OVER_NODES and vbase is None and STATE.enabled and self.requires_grad:
        over = record_node(_COPY_OVER, self, result, {}, _COPY_OVER_NODES[op])
    # NOTE [in-place write into a view]: the base's CopySlices node, recorded before the write (it needs the base's
    # history as it was), installed after it (view_history)
    rebased = rebase(self, result, op) if vbase is not None else None
    if isinstance(self._data, (np.ndarray, np.generic)):
        np.copyto(writable(self, op), result._data, casting="unsafe")
    else:  # a device array (webgpu): its backend writes into the tensor's storage
        if op not in ("fill_", "zero_") and any(s == 0 and n > 1 for s, n in zip(self._data.strides, self._data.shape)):
            fail("inplace_error_internal_overlap", op=op)  # as ``writable`` refuses on the CPU
        node = result._grad_fn
        be(self).copyto(self._data, result._data,
                        temporary and (node is None or not getattr(getattr(node, "prim", None), "save_output", True)))
    self._bump_version()
    if rebased is not None:
        finish_rebase(self, rebased)
    elif over is not None:
        self._grad_fn, self._output_nr = over, 0
    elif vbase is not None:
        pass  # nothing recorded: the view keeps its history, the version tells its other views
    elif result.requires_grad and STATE.enabled:
        self._grad_fn, self.requires_grad = result._grad_fn, True
        for slot, _, saved in getattr(result._grad_fn, "_saved", ()):
            if slot < 0:  # the op saved its output, which is ``self`` now: a later write to ``self`` must be
                # caught at backward, as torch's ``x.exp_(); x.mul_(2)`` is (the saved copy would hide it)
                owner = self._base if self._base is not None else self
                saved._cell, saved._version = owner._version_cell, owner._version_cell[0]  # type: ignore[index]
    return self


def inherit_custom_view(out: Tensor, base: Tensor) -> None:
    """A view of an output a custom Function returned as-is is refused in-place ops too, as in torch, whose
    message then names the view op (``Output 0 of Select ...``)."""
    if base._created_in is not None and out._base is not None:
        node = out._grad_fn
        name = _op_of(node.name()) if node is not None else base._created_in[0]
        out._created_in = (name, 0, base._created_in[2])


@functools.cache
def _op_of(node_name: str) -> str:
    """``SelectBackward0`` -> ``Select`` (cached: every view of a split's pieces asks)."""
    return re.sub(r"Backward\d*$", "", node_name)


def _refuse_custom_view(created_in: tuple[str, int, bool]) -> None:
    name, i, several = created_in
    why = ("This view is the output of a function that returns multiple views. Such functions do not allow the "
           "output views to be modified inplace. You should replace the inplace operation by an out-of-place one."
           if several else
           "This view was created inside a custom Function (or because an input was returned as-is) and the "
           "autograd logic to handle view+inplace would override the custom backward associated with the custom "
           "Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the "
           "output of the custom Function.")
    fail("autograd_error_custom_view_inplace", i=i, name=name, why=why)


def _inplace_tangent(self: Tensor, result: Tensor, op: str) -> None:
    """Forward-mode AD: ``self`` takes the tangent that the out-of-place ``result`` carries. The tangent
    dict is shared, not copied, so leaving the dual level (which clears ``result``'s) clears ``self``'s."""
    if self._base is not None:
        fail("autograd_forward_inplace_view_error", op=op)
    if result._fw_grads is None:
        # a value that does not depend on self's (fill_, zero_, copy_ of a constant, a sampler): its tangent is zero,
        # as torch's; the overwrite primitive's jvp rule makes it (and registers it with the level, which clears it)
        with no_grad():
            result = _OVERWRITE(self, value=result._data)
    self._fw_grads = result._fw_grads


def snapshot_for_inplace(self: Tensor, others: Iterable[Any] = ()) -> Tensor:
    """The value ``self`` had before an in-place op, kept for the op's gradient when one is recorded: when
    ``self`` requires grad, or when one of the ``others`` operands does (``x.mul_(w)`` saves the old ``x`` for
    ``w``'s gradient; writing ``x`` afterwards must not change what was saved, as torch's clone of the
    original self ensures)."""
    if STATE.enabled:
        if self._base is not None:
            refresh_view(self)  # (NOTE [view + in-place]: the history the old value has now)
        if self.requires_grad:
            old = Tensor._make(self._data.copy(), self._device)
            old._grad_fn, old.requires_grad = self._grad_fn, True
            old._accumulator = self._accumulator
            return old
        if any(isinstance(o, Tensor) and o.requires_grad for o in others):
            return Tensor._make(self._data.copy(), self._device)
    return self


def _bounds(a: np.ndarray) -> tuple[int, int]:
    """The first byte ``a`` reads and the one past its last (NumPy's byte_bounds, which moved in NumPy 2)."""
    lo = hi = a.__array_interface__["data"][0]
    for stride, n in zip(a.strides, a.shape):
        if stride < 0:
            lo += stride * (n - 1)
        else:
            hi += stride * (n - 1)
    return lo, hi + a.itemsize


def check_no_partial_overlap(out: Tensor, inputs: Iterable[Any], op: str) -> None:
    """torch's ``assert_no_partial_overlap`` for the tensor an op writes (``self`` of an in-place op, ``out=``):
    an input may be that very tensor (the same memory, sizes and strides) or share no memory with it; sharing
    some of it (``x.add_(x.t())``) is refused, since the result would depend on the order of the writes. As in
    torch, layouts that are not non-overlapping and dense are too hard to tell and pass (an expanded ``out``
    is refused by ``writable``)."""
    dst = out._data
    if not isinstance(dst, np.ndarray) or dst.size == 0:
        return
    lo, hi = _bounds(dst)
    for t in inputs:
        if not isinstance(t, Tensor) or t is out:
            continue
        src = t._data
        if not isinstance(src, np.ndarray) or src.size == 0:
            continue
        slo, shi = _bounds(src)
        if slo >= hi or lo >= shi:
            continue
        if slo == lo and src.shape == dst.shape and src.strides == dst.strides:
            continue  # full overlap: the same elements, each read before it is written
        if dense_array(src) and dense_array(dst):
            fail("inplace_error_partial_overlap", op=op)


def make_inplace(fn: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    def inplace(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if args or kwargs:
            check_no_partial_overlap(self, (*args, *kwargs.values()), name)
        r = fn(snapshot_for_inplace(self, (*args, *kwargs.values())), *args, **kwargs)
        return write_inplace(self, r, name, temporary=r is not self and all(r is not a for a in (*args,
                                                                                            *kwargs.values())))

    inplace.__name__ = inplace.__qualname__ = name
    inplace.__doc__ = f"In-place version of :func:`{fn.__name__}`."
    return inplace


def as_node(result: Tensor, label: str, *inputs: Any) -> Tensor:
    """Give ``result``'s backward node torch's name for the composite op that made it (``x.mean()``'s last
    primitive is a division, but its ``grad_fn.name()`` is ``MeanBackward0``); an input's node is never renamed."""
    fn = result._grad_fn
    if fn is not None:
        for x in inputs:  # (a loop, not all() of a generator: every matmul and transpose names its node)
            if isinstance(x, Tensor) and x._grad_fn is fn:
                return result
        fn.label = label
    return result


def int_list(sizes: Sequence[Any], op: str) -> tuple[int, ...]:
    """``reshape(2, 3)``, ``reshape((2, 3))`` and ``reshape([2, 3])`` all mean (2, 3)."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = sizes[0]
    # the common case, plain ints (a bool is no int here: its type is bool): one type test each (every reshape, permute
    # and expand asks; for their two to four sizes a loop costs half the set of their types)
    for s in sizes:
        if type(s) is not int:
            break
    else:
        return sizes if type(sizes) is tuple else tuple(sizes)
    out = []
    for i, s in enumerate(sizes):
        if isinstance(s, Tensor):
            s = s.item()
        # torch's parser takes a bool as an int in a list of ints, but not first (it tells a list from a number by
        # its first element): ``reshape(-1, True)`` and ``zeros((2, True))`` are taken, ``zeros((True, 2))`` is not
        if not isinstance(s, (int, np.integer)) or (isinstance(s, bool) and i == 0):
            fail("argument_error_refused", op=op, problem=f"sizes must be ints, got {s!r}")
        out.append(int(s))
    return tuple(out)


def need_floating(t: Tensor, op: str, *, complex_: bool = False, hint: str = " (floating point only)") -> None:
    """torch has only floating-point kernels for some ops (softmax, bernoulli, normal, dropout, mean, histc):
    any other dtype is a ``NotImplementedError``, never a silent cast. ``complex_``: complex kernels exist too."""
    d = t.dtype
    if not (d.is_floating_point or (complex_ and d.is_complex)):
        fail("method_dtype_not_supported_error", op=op, dtype=dtype_name(t), hint=hint)


_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38}


def check_fill_value(value: Any, dst: str, op: str) -> Any:
    """torch's checked conversion of a fill value (full, fill_, masked_fill, index_fill, new_full): a value the
    dtype cannot hold is an error, not a wrapped or saturated fill. A negative int may wrap into an unsigned
    dtype (down to -max), an infinity or NaN fits a floating dtype, and anything fits bool. Returns the value
    to fill with (a negative int wrapped into an unsigned dtype)."""
    if dst == "bool" or isinstance(value, bool) or not isinstance(value, (int, float, complex)):
        return value
    if isinstance(value, complex):
        if dst.startswith("complex"):
            return value
        if value.imag != 0:
            fail("dtype_error_value_overflow", op=op, value=value, dtype=dst)
        value = value.real
    if dst in _FLOAT_MAX:
        if math.isfinite(value) and abs(value) > _FLOAT_MAX[dst]:
            fail("dtype_error_value_overflow", op=op, value=value, dtype=dst)
        return value
    if dst.startswith(("int", "uint")):
        info = np.iinfo(dst)
        if isinstance(value, int):
            bad = value > info.max or value < (-int(info.max) if info.min == 0 else info.min)
        else:
            bad = not math.isfinite(value) or value < info.min or value > info.max
        if bad:
            fail("dtype_error_value_overflow", op=op, value=value, dtype=dst)
        if isinstance(value, int) and value < 0 and info.min == 0:
            return value + int(info.max) + 1
    return value


def new_sizes(sizes: Sequence[Any], op: str) -> tuple[int, ...]:
    """The sizes of a new tensor (``zeros(2, 3)``, ``rand((2, 3))``): ints, none negative."""
    shape = int_list(sizes, op)
    check(new_shape, shape, op)
    return shape


@contextlib.contextmanager
def allocating(op: str) -> Iterator[None]:
    """An allocation the machine cannot hold is a coded ``AllocationError`` (a ``RuntimeError``, as torch's, and a
    ``MemoryError``), not NumPy's ``_ArrayMemoryError``."""
    try:
        yield
    except MemoryError as e:
        fail("memory_error_allocation", op=op, problem=str(e))
    except ValueError as e:  # NumPy's refusal of a byte count past its index type: no allocation was tried
        if not str(e).startswith("array is too big"):
            raise
        fail("memory_error_allocation", op=op, problem=str(e))


def refuse(t: Tensor, op: str, *, bool_: bool = False, complex_: bool = False) -> None:
    """torch refuses some dtypes outright for some ops (median of bool, unique_consecutive of complex)."""
    kind = t._data.dtype.kind
    if (bool_ and kind == "b") or (complex_ and kind == "c"):
        fail("method_dtype_not_supported_error", op=op, dtype=dtype_name(t), hint="")


@functools.lru_cache(maxsize=256)
def device_table(make: Callable[..., Any], args: tuple[Any, ...], where: Any) -> Tensor:
    """``make(*args)``, a NumPy table that depends on shapes alone (pooling's band matrices and divisors,
    interpolation's and padding's source indices), as a tensor on ``where``, made once per geometry and device and
    kept: a training step then uploads nothing for it. Nothing writes into it (the ops only read it). Made outside
    inference mode, so that a first call under ``inference_mode`` does not keep an inference tensor that a later
    training step could not save."""
    from .._grad_mode import inference_mode
    from .creation import tensor

    with inference_mode(False):
        return tensor(make(*args), device=where)
