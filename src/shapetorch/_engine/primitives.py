"""Primitive ops: one kernel per device type, and the gradient rules the engine needs.

Every public op is a primitive or is written in other public ops (a composite). Composites
need no kernels and no gradients of their own, so they run on every backend and differentiate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np

from .._device import device
from .._errors import fail
from .._grad_mode import STATE
from .._tensor import PLAIN_TYPES as PLAIN
from .._tensor import Tensor, refresh_view
from .anomaly import ANOMALY
from .backward import Node, record, record_number, record_tensors
from .graph import HOOKS_OPEN
from .intercept import AFTER_CALL, PROFILER
from .intercept import INSTALLED as SLOW_PATH

Kernel = Callable[..., Any]
VJP = Callable[[Tensor, Node], tuple[Any, ...]]

PRIMS: dict[str, Prim] = {}


class Prim:
    """A primitive: ``kernels[device_type](*arrays, **params)`` computes it; ``vjp`` differentiates it.

    ``vjp(grad, node)`` returns one gradient per input (``None`` for inputs without one), written in
    shapetorch ops so that it can itself be differentiated (double backward). It reads the inputs,
    params and (when ``save_output``) the output from the node. Broadcasting is undone by the
    engine, never by a vjp.
    """

    __slots__ = ("add_into", "jvp", "kernels", "name", "node_plan", "save_output", "small", "vjp")

    def __init__(
        self, name: str, cpu: Kernel | None = None, vjp: VJP | None = None, jvp: Callable[..., Any] | None = None,
        save_output: bool | Callable[[tuple[Any, ...]], bool] = False,
    ) -> None:
        self.name = name
        self.kernels: dict[str, Kernel] = {"cpu": cpu} if cpu is not None else {}
        self.vjp = vjp
        self.jvp = jvp
        self.save_output = save_output
        self.node_plan: Any = None  # the engine's per-primitive data for its nodes, made on the first one
        # NOTE [small ufunc]: (the CPU kernel, the ufunc it wraps, the size from which it splits over the threads)
        # for an elementwise kernel that is a thread-pool wrapper of a NumPy ufunc (``_elementwise``): a call whose
        # arrays are all below that size runs the ufunc itself, one Python frame fewer on every tiny op. Only while
        # the CPU kernel is still that wrapper (``registry.register_forward`` may replace it).
        self.small: tuple[Kernel, Kernel, int] | None = None
        # NOTE [accumulation buffer] in the engine: for a view of one input (a slice, a select), what its vjp computes
        # written into a gradient buffer the engine already holds for that input, in place: ``add_into(buffer, grad,
        # params)`` adds ``grad`` where the view lies and returns True, or returns False (nothing written) where it
        # cannot give the vjp's bits. Set by the op module next to the vjp it stands for.
        self.add_into: Callable[[Any, Any, dict[str, Any]], bool] | None = None
        PRIMS[name] = self

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"

    def __call__(self, *args: Any, **params: Any) -> Tensor:
        # NOTE [tiny-op fast path]: most calls have one or two tensors on one device; they skip the
        # general loop. Every branch does the same three things: find the kernel, wrap, record.
        # A tensor and a number (``x * 2``, ``1 - x``, what a vjp computes with a saved number) are as common.
        a = args[0]
        n = len(args)
        arrays: tuple[Any, ...]
        # which of them this call is, found once for the kernel and the record: 1 one tensor, 2 two tensors on one
        # device, 3 a tensor and a number, 4 a number and a tensor, 5 more plain tensors (``_unpack``'s), 0 any
        # other call (NOTE [plain tensor types]:
        # a Parameter is a tensor here, a user's subclass takes the general path)
        # (a view whose storage was written since its grad_fn was set takes a new one first: NOTE [view + in-place]
        # in the tensor module; for any other tensor the test is one read of ``_base``, for a view an inline compare)
        form = 0
        if type(a) in PLAIN and n <= 2:
            if a._base is not None and a._view_cell[0] != a._view_version:
                refresh_view(a)
            if n == 1:
                dev, grad, arrays, form = a._device, a._requires_grad, (a._data,), 1
            elif type(b := args[1]) in PLAIN and b._device is a._device:
                if b._base is not None and b._view_cell[0] != b._view_version:
                    refresh_view(b)
                dev, grad, arrays, form = a._device, a._requires_grad or b._requires_grad, (a._data, b._data), 2
            elif not isinstance(b, Tensor):
                dev, grad, arrays, form = a._device, a._requires_grad, (a._data, b), 3
            else:
                dev, grad, arrays, form = self._unpack(args)
        elif n == 2 and type(b := args[1]) in PLAIN and not isinstance(a, Tensor):
            if b._base is not None and b._view_cell[0] != b._view_version:
                refresh_view(b)
            dev, grad, arrays, form = b._device, b._requires_grad, (a, b._data), 4
        else:
            dev, grad, arrays, form = self._unpack(args)
        kernel = self.kernels.get(dev.type) or _no_kernel(self.name, dev, args)
        out = _new(Tensor)
        small = self.small
        if small is not None and kernel is small[0] and not params and (
                type(x := arrays[0]) is not _NDARRAY or x.size < small[2]) and (
                n == 1 or type(y := arrays[1]) is not _NDARRAY or y.size < small[2]):
            out._data = small[1](*arrays)  # (NOTE [small ufunc]: what the wrapper would call)
        elif params:
            out._data = kernel(*arrays, **params)
        else:  # (``**params`` of an empty dict costs a third of a tiny op's call into its kernel)
            out._data = kernel(*arrays)
        out._device = dev
        if grad and STATE.enabled:
            # (the fields the next op and the engine read, as instance values: NOTE [instance fields] in backward)
            out._output_nr, out._base, out._inference = 0, None, False
            save = self.save_output  # True, False, or a predicate of the arguments (pow saves for a tensor exponent)
            o = out if save is True or (save is not False and save(args)) else None
            # (one or two tensors, or a tensor and a number, while no hooks or anomaly mode need record's general
            # path: NOTE [compiled record] in backward)
            if HOOKS_OPEN[0] or ANOMALY.enabled or not form:
                out._grad_fn = record(self, args, params, o)
            elif form < 3 or form == 5:
                out._grad_fn = record_tensors(self, args, params, o)
            else:
                out._grad_fn = record_number(self, args, args[form - 3], form - 3, params, o)
            if out._data.dtype.kind in "fc":
                out._requires_grad = True
            else:  # the setter's rules: an integral or bool result (argmax, a comparison) leaves the graph
                out.requires_grad = True
        else:
            out._requires_grad = False  # (read by the next op it enters: NOTE [instance fields] in backward)
        return out

    def call2(self, a: Tensor, b: Tensor) -> Tensor:
        """``self(a, b)`` for two plain tensors (the caller tests ``type(x) in PLAIN_TYPES``: NOTE [plain tensor types])
        and no params.

        NOTE [two-tensor call]: the binary ops' tiny path (``a * b``, and every product and sum in a vjp) knows its
        operands are two tensors, so the tests ``__call__`` makes to find that out are skipped: the same kernel,
        result and node. Tensors on two devices, and any call while the engine's slow path is installed (the
        profiler, forward-mode AD and inference mode see every primitive call through ``__call__``), go to
        ``__call__``."""
        dev = a._device
        if b._device is not dev or SLOW_PATH[0]:
            return self(a, b)
        if a._base is not None and a._view_cell[0] != a._view_version:
            refresh_view(a)
        if b._base is not None and b._view_cell[0] != b._view_version:
            refresh_view(b)
        kernel = self.kernels.get(dev.type) or _no_kernel(self.name, dev, (a, b))
        x, y = a._data, b._data
        out = _new(Tensor)
        small = self.small
        if small is not None and kernel is small[0] and (type(x) is not _NDARRAY or x.size < small[2]) and (
                type(y) is not _NDARRAY or y.size < small[2]):
            out._data = small[1](x, y)  # (NOTE [small ufunc])
        else:
            out._data = kernel(x, y)
        out._device = dev
        if (a._requires_grad or b._requires_grad) and STATE.enabled:
            self._track(out, (a, b), a, -1)
        else:
            out._requires_grad = False
        return out

    def call1(self, a: Tensor) -> Tensor:
        """``self(a)`` for one plain tensor and no params: the unary ops' tiny path (``a.exp()``, a vjp's ``-g``),
        as ``call2`` (NOTE [two-tensor call])."""
        if SLOW_PATH[0]:
            return self(a)
        if a._base is not None and a._view_cell[0] != a._view_version:
            refresh_view(a)
        dev = a._device
        kernel = self.kernels.get(dev.type) or _no_kernel(self.name, dev, (a,))
        x = a._data
        out = _new(Tensor)
        small = self.small
        if small is not None and kernel is small[0] and (type(x) is not _NDARRAY or x.size < small[2]):
            out._data = small[1](x)  # (NOTE [small ufunc])
        else:
            out._data = kernel(x)
        out._device = dev
        if a._requires_grad and STATE.enabled:
            self._track(out, (a,), a, -1)
        else:
            out._requires_grad = False
        return out

    def call_number(self, t: Tensor, number: Any, slot: int) -> Tensor:
        """``self(t, number)`` (``slot`` 0) or ``self(number, t)`` (``slot`` 1) for one plain tensor and a number of
        its dtype, no params: the binary ops' scalar path (``x * 0.5``, ``1 - y``, a vjp's ``g * 2``), as ``call2``
        (NOTE [two-tensor call])."""
        args = (t, number) if slot == 0 else (number, t)
        if SLOW_PATH[0]:
            return self(*args)
        if t._base is not None and t._view_cell[0] != t._view_version:
            refresh_view(t)
        dev = t._device
        kernel = self.kernels.get(dev.type) or _no_kernel(self.name, dev, args)
        x = t._data
        out = _new(Tensor)
        small = self.small
        arrays = (x, number) if slot == 0 else (number, x)
        if small is not None and kernel is small[0] and (type(x) is not _NDARRAY or x.size < small[2]):
            out._data = small[1](*arrays)  # (NOTE [small ufunc])
        else:
            out._data = kernel(*arrays)
        out._device = dev
        if t._requires_grad and STATE.enabled:
            self._track(out, args, t, slot)
        else:
            out._requires_grad = False
        return out

    def _track(self, out: Tensor, args: tuple[Any, ...], a: Tensor, slot: int) -> None:
        """The direct calls' recording: ``out``'s node, made by ``record_tensors`` (``slot`` -1: ``args`` are the
        tensors) or, for ``a`` at ``slot`` >= 0 beside a number, ``record_number``; by the general ``record``
        while saved-tensor hooks or anomaly mode are on, as ``__call__``'s."""
        out._output_nr, out._base, out._inference = 0, None, False
        save = self.save_output
        o = out if save is True or (save is not False and save(args)) else None
        if HOOKS_OPEN[0] or ANOMALY.enabled:
            out._grad_fn = record(self, args, {}, o)
        elif slot < 0:
            out._grad_fn = record_tensors(self, args, {}, o)
        else:
            out._grad_fn = record_number(self, args, a, slot, {}, o)
        if out._data.dtype.kind in "fc":
            out._requires_grad = True
        else:
            out.requires_grad = True

    def _unpack(self, args: tuple[Any, ...]) -> tuple[device, bool, tuple[Any, ...], int]:
        """The call's device, whether it records, its arrays, and its form: 5 (``record_tensors``') for plain tensors
        only, else 0."""
        dev: device | None = None
        grad = False
        arrays = []
        form = 5
        for a in args:
            if type(a) not in PLAIN:
                form = 0
            if isinstance(a, Tensor):
                if a._uninitialized:  # (only the general path sees one: it is no plain tensor type)
                    raise a._use_error(self.name)
                if a._base is not None and a._view_cell[0] != a._view_version:
                    refresh_view(a)
                if dev is None:
                    dev = a._device
                elif a._device is not dev and a._device != dev:
                    _mixed(self.name, dev, a._device)
                grad = grad or (a._requires_grad if type(a) in PLAIN else a.requires_grad)
                arrays.append(a._data)
            else:
                arrays.append(a)
        assert dev is not None, f"{self.name}: a primitive needs at least one tensor input"
        return dev, grad, tuple(arrays), form


_new = object.__new__
_NDARRAY = np.ndarray


def call_outputs(prim: Prim, a: Tensor, **params: Any) -> tuple[Tensor, ...]:
    """A primitive of one tensor with several outputs (split, unbind), whose kernel returns a tuple of arrays: one
    node for all of them (``backward.multi_output``), output ``i`` its ``output_nr``. What the slow path does for a
    one-output call (NOTE [untracked call]) is done here for each output: the profiler's event, inference tensors,
    and forward-mode AD's tangents (the jvp rule sees the output's number as the param ``output_nr``)."""
    if a._base is not None and a._view_cell[0] != a._view_version:
        refresh_view(a)
    dev = a._device
    kernel = prim.kernels.get(dev.type) or _no_kernel(prim.name, dev, (a,))
    prof = PROFILER.active if SLOW_PATH[0] else None
    if prof is not None:
        with prof.record("aten::" + prim.name, [list(a._data.shape)] if prof.record_shapes else None):
            arrays = kernel(a._data, **params)
    else:
        arrays = kernel(a._data, **params)
    outs = []
    for data in arrays:
        o = _new(Tensor)
        o._data, o._device = data, dev
        outs.append(o)
    if a._requires_grad and STATE.enabled:
        node = record(prim, (a,), params, None)
        node._num_outputs = len(outs)
        for i, o in enumerate(outs):
            o._output_nr, o._base, o._inference, o._grad_fn, o._requires_grad = i, None, False, node, True
    else:
        for o in outs:
            o._requires_grad = False
    if SLOW_PATH[0]:
        for i, o in enumerate(outs):
            if STATE.inference:
                o._inference = True
            for after in AFTER_CALL:
                after(prim, (a,), {**params, "output_nr": i}, o)
    return tuple(outs)



# NOTE [untracked call]: a call that records nothing (no input requires grad, or grad mode is off: a plain tensor, or
# any tensor inside a first-order backward or ``no_grad``) can make its result as ``Prim.__call__`` would (the same
# kernel, the same fields: no node, not requiring grad) without the call's general dispatch, whose keyword parameters
# alone cost a third of a tiny op. Only while the engine's slow path is not installed (the profiler, forward-mode AD
# and inference mode see every primitive call there). An op that takes the shortcut on any device asks
# ``untracked_kernel`` for the device's kernel and calls it with the params by keyword, as the general call does; on
# the CPU alone, where it calls its own kernel positionally, it asks ``untracked_array`` (``untracked_pair`` for two
# tensors) for its input's array, which is None once ``register_forward`` has replaced that kernel (it is then never
# bypassed). Either way it wraps the kernel's result with ``untracked_result``.
def untracked_array(prim: Prim, input: Tensor, kernel: Kernel) -> Any:
    """The NumPy array of ``input`` when ``prim``'s call on it may take the shortcut (NOTE [untracked call]), else
    None."""
    if input._base is not None and input._view_cell[0] != input._view_version:
        refresh_view(input)
    src = input._data
    if (input._requires_grad and STATE.enabled) or type(src) is not _NDARRAY or input._device.type != "cpu" \
            or SLOW_PATH[0] or prim.kernels["cpu"] is not kernel or input._uninitialized:
        return None
    return src


def untracked_kernel(prim: Prim, input: Tensor) -> Kernel | None:
    """The kernel ``prim``'s call on ``input`` (and no other tensor) runs, when that call records nothing and may take
    the shortcut (NOTE [untracked call]) on any device, else None (a missing kernel too: the general call raises its
    error). The caller passes the params by keyword, as ``Prim.__call__`` does, so a kernel that ``register_forward``
    installed is called as the general path would call it. The shortcut of a view or a reduction on a device
    without NumPy arrays (every transpose, reshape and expand of a first-order backward on WebGPU)."""
    if input._base is not None and input._view_cell[0] != input._view_version:
        refresh_view(input)
    if (input._requires_grad and STATE.enabled) or SLOW_PATH[0] or input._uninitialized:
        return None
    return prim.kernels.get(input._device.type)


def untracked_pair(prim: Prim, a: Tensor, b: Tensor, kernel: Kernel) -> tuple[Any, Any] | None:
    """``untracked_array`` of two tensor inputs in one test (a binary op's shortcut), or None."""
    if a._base is not None and a._view_cell[0] != a._view_version:
        refresh_view(a)
    if b._base is not None and b._view_cell[0] != b._view_version:
        refresh_view(b)
    x, y = a._data, b._data
    if ((a._requires_grad or b._requires_grad) and STATE.enabled) or type(x) is not _NDARRAY \
            or type(y) is not _NDARRAY or a._device.type != "cpu" or b._device.type != "cpu" or SLOW_PATH[0] \
            or prim.kernels["cpu"] is not kernel or a._uninitialized or b._uninitialized:
        return None
    return x, y


def untracked_result(input: Tensor, data: Any) -> Tensor:
    """What ``Prim.__call__`` returns for an input that records nothing: ``data`` on ``input``'s device."""
    out = _new(Tensor)
    out._data, out._device, out._requires_grad = data, input._device, False
    return out


def _mixed(op: str, a: device, b: device) -> NoReturn:
    fail("device_error_requires", op=op, problem=f"expected all tensors to be on the same device, but found {a} and {b}")


def _no_kernel(op: str, dev: device, args: tuple[Any, ...]) -> NoReturn:
    dtypes = ", ".join(a.dtype.name for a in args if isinstance(a, Tensor))
    fail("kernel_not_registered_error", op=op, device=dev, dtype=dtypes, hint="")
