"""The Tensor: a backend array, its device, and its place in the autograd graph.

Methods and operators are attached by the op modules (``shapetorch.ops``) from the same table that
defines the functions, so ``x.add(y)``, ``x + y`` and ``shapetorch.add(x, y)`` are one op.
"""

from __future__ import annotations

import types
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from ._device import _BACKENDS, CPU, backend, device
from ._grad_mode import STATE as _GRAD_STATE

if TYPE_CHECKING:
    from ._dtype import DType


NOT_A_VIEW: tuple[int] = (0,)  # the version counter of a tensor that is no differentiable view (never moves)


class Tensor:
    """A multi-dimensional array with PyTorch semantics.

    Fields that usually keep their default live on the class, so that making a tensor sets only
    ``_data`` and ``_device``: tiny ops are dominated by this cost.
    """

    _data: Any  # the backend's array (numpy.ndarray on "cpu")
    _device: device
    _requires_grad: bool = False
    _grad: Tensor | None = None
    _grad_fn: Any = None  # the engine's Node that made this tensor (``shapetorch._engine``), None for a leaf
    _output_nr: int = 0  # which output of ``_grad_fn`` this tensor is
    _base: Tensor | None = None  # set on views: the tensor whose storage this one shares
    # NOTE [view + in-place]: a differentiable view (made by a view op; not ``detach()``/``.data``, which share
    # storage but not history) holds its storage's version counter (``_view_cell``, the class's ``NOT_A_VIEW`` on
    # every other tensor) and the version it had when the view's ``grad_fn`` was set (``_view_version``); its history
    # comes from ``_base``, or from ``_view_base`` where the chain of view ops started at a detached alias. How it was
    # made, where that forbids a later regeneration, is ``_view_meta``: None, or ``("no_grad" | "inference" |
    # "multi", name, output_nr)``. When the storage's version has moved since (the base or another view was written
    # in place), the view's ``grad_fn`` is made again from its base's current one the next time it is read
    # (``refresh_view``), as torch's. The engine tests ``_base`` (one read for a tensor that is not a view), then
    # compares the version inline: only a stale view calls anything.
    _view_cell: list[int] | tuple[int] = NOT_A_VIEW
    _view_version: int = 0
    _view_base: Tensor | None = None
    _view_meta: tuple[str, str, int] | None = None
    _version_cell: list[int] | None = None  # shared by a base and its views; made on first write
    _accumulator: Any = None  # weakref to the AccumulateGrad node of a leaf, made on demand
    _hooks: list[Any] | None = None  # a leaf's tensor hooks (a non-leaf's live on its grad_fn)
    _post_accumulate_hooks: list[Any] | None = None
    _fw_grads: dict[int, Tensor] | None = None  # forward-mode tangents by dual level
    _inference: bool = False  # made under inference_mode
    _own_version: bool = False  # detach()/.data of an inference tensor outside inference_mode: a counter of its own
    # (Function name, output number, one of several outputs) on an input a custom Function returned as-is: torch
    # refuses in-place ops on it, whose view rebase would bypass the Function's backward (and a module's hooks)
    _created_in: tuple[str, int, bool] | None = None
    # True on a lazy module's uninitialized parameters and buffers (``nn.parameter``): an op that reaches the
    # engine's general path with one refuses it, as torch's ``__torch_function__`` does
    _uninitialized: bool = False

    __array_priority__ = 1000  # numpy defers `ndarray + Tensor` to Tensor.__radd__

    # `Tensor[tuple[Batch, L[3]], float32]` in annotations evaluated at runtime (the stubs give it meaning)
    def __class_getitem__(cls, params: Any) -> types.GenericAlias:
        return types.GenericAlias(cls, params)

    if TYPE_CHECKING:
        # Methods are attached from the op table (shapetorch.ops); inside the runtime mypy sees them
        # as Any. Users get precise types from the stubs package (shapetorch-stubs).
        def __getattr__(self, name: str) -> Any: ...
        def __add__(self, other: Any) -> Tensor: ...
        def __radd__(self, other: Any) -> Tensor: ...
        def __sub__(self, other: Any) -> Tensor: ...
        def __rsub__(self, other: Any) -> Tensor: ...
        def __mul__(self, other: Any) -> Tensor: ...
        def __rmul__(self, other: Any) -> Tensor: ...
        def __truediv__(self, other: Any) -> Tensor: ...
        def __rtruediv__(self, other: Any) -> Tensor: ...
        def __pow__(self, other: Any) -> Tensor: ...
        def __rpow__(self, other: Any) -> Tensor: ...
        def __matmul__(self, other: Any) -> Tensor: ...
        def __neg__(self) -> Tensor: ...
        def __invert__(self) -> Tensor: ...
        def __lt__(self, other: Any) -> Tensor: ...
        def __le__(self, other: Any) -> Tensor: ...
        def __gt__(self, other: Any) -> Tensor: ...
        def __ge__(self, other: Any) -> Tensor: ...
        def __eq__(self, other: Any) -> Tensor: ...  # type: ignore[override]
        def __ne__(self, other: Any) -> Tensor: ...  # type: ignore[override]
        def __getitem__(self, index: Any) -> Tensor: ...
        def __setitem__(self, index: Any, value: Any) -> None: ...

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass  # ``Tensor(2, 3)``, torch's legacy constructor, is ``__new__``'s (set by ``ops.legacy``)

    @classmethod
    def _make(cls, data: Any, dev: device = CPU) -> Tensor:
        t = object.__new__(cls)
        t._data = data
        t._device = dev
        if _GRAD_STATE.inference:
            t._inference = True
        return t

    # -- metadata -----------------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None) -> Any:
        if dim is None:
            return Size(self._data.shape)
        from ._errors import raise_from_rule
        from ._rules import wrap_dim
        from ._rules.errors import RuleError

        try:
            if not self._data.ndim:  # torch: "Dimension specified as 0 but tensor has no dimensions"
                raise RuleError("dimension_error_zero_dim", op="size")
            return self._data.shape[wrap_dim(dim, self._data.ndim, "size")]
        except RuleError as e:
            raise_from_rule(e)

    @property
    def dtype(self) -> type[DType]:
        # read on most op calls and in every backward node: the loaded backend straight from the registry
        be = _BACKENDS.get(self._device.type) or backend(self._device.type)
        return be.dtype_of(self._data)  # type: ignore[no-any-return]

    @property
    def device(self) -> device:
        return self._device

    @property
    def ndim(self) -> int:
        return self._data.ndim  # type: ignore[no-any-return]

    def dim(self) -> int:
        return self._data.ndim  # type: ignore[no-any-return]

    ndimension = dim

    def numel(self) -> int:
        return self._data.size  # type: ignore[no-any-return]

    nelement = numel

    def element_size(self) -> int:
        return self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.numel() * self.dtype.itemsize

    # -- autograd -----------------------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        """True if gradients need to be computed for this tensor (a view: also when its base does, as torch's)."""
        if self._base is not None and (vb := view_base(self)) is not None:
            return self._requires_grad or vb._requires_grad
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if value:
            if self._data.dtype.kind not in "fc" and not _is_float_like(self):
                if self._grad_fn is not None:  # an op's non-differentiable output (comparison, argmax)
                    self._grad_fn = None
                    return
                from ._errors import fail

                fail("autograd_error_requires_grad_dtype", op="requires_grad")
            # (the attributes, not is_inference(): an uninitialized lazy parameter refuses its methods)
            root = self._base if self._base is not None else self
            if root._inference and not _GRAD_STATE.inference and self._grad_fn is None:
                raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        elif self._grad_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed variable "
                "in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
            )
        self._requires_grad = bool(value)
        if value and self._grad_fn is None:
            # a leaf entering graphs: each op and backward node reads these, and CPython 3.11 reads an instance's own
            # attribute by a cached path but a class-level default by the generic lookup (NOTE [instance fields] in
            # the engine), so the defaults are copied onto the tensor (same values)
            self._grad_fn, self._base, self._inference, self._accumulator = None, self._base, self._inference, \
                self._accumulator
            self._hooks, self._post_accumulate_hooks = self._hooks, self._post_accumulate_hooks

    @property
    def grad(self) -> Tensor | None:
        """None until a backward computes a gradient for this (leaf) tensor; then it accumulates."""
        g = self._grad
        if g is None and self._grad_fn is not None and not self.retains_grad:
            import warnings

            warnings.warn(_NON_LEAF_GRAD, UserWarning, stacklevel=2)
        return g

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError("assigned grad has data of a different type")
            if value._device != self._device:
                raise RuntimeError("assigned grad has data located on a different device")
            if value._data.shape != self._data.shape:
                raise RuntimeError("assigned grad has data of a different size")
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def is_leaf(self) -> bool:
        """Tensors that do not require grad, and those the user made, are leaves."""
        if self._base is not None:
            refresh_view(self, True)
        return self._grad_fn is None

    @property
    def grad_fn(self) -> Any:
        if self._base is not None:
            refresh_view(self, True)
        return self._grad_fn

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def retains_grad(self) -> bool:
        """True for a non-leaf on which ``retain_grad()`` was called."""
        fn = self._grad_fn
        if fn is None:
            return False
        refs = fn._retain_refs
        return refs is not None and self._output_nr in refs and refs[self._output_nr]() is self

    def retain_grad(self) -> None:
        """Populate ``.grad`` of this non-leaf tensor during backward (a no-op on leaves)."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        fn = self._grad_fn
        if fn is None:
            return
        import weakref

        if fn._retain_refs is None:
            fn._retain_refs = {}
        fn._hooked = True  # (the engine's test for any hook on a node)
        fn._retain_refs[self._output_nr] = weakref.ref(self)

    def _shareable_data(self) -> Any:
        """``_data``, made shareable first: a 0-d CPU result may hold a NumPy scalar (cheaper to make
        than a 0-d array, but immutable), which becomes a 0-d array before anything aliases or writes it."""
        import numpy as np  # loaded already: a tensor exists

        data = self._data
        if isinstance(data, np.generic):
            data = self._data = np.array(data)
        return data

    @property
    def data(self) -> Tensor:
        """The same storage, detached from the graph (``var.data``); assigning replaces the values."""
        out = Tensor._make(self._shareable_data(), self._device)
        out._base = self._base if self._base is not None else self
        if out._base._inference and not _GRAD_STATE.inference:
            out._own_version = True
        return out

    @data.setter
    def data(self, value: Tensor) -> None:
        self._data = value._data
        self._device = value._device

    def is_inference(self) -> bool:
        """True for tensors made under ``inference_mode`` and for every view of one (torch's: a view is an
        inference tensor when its base is, wherever it is made; a view of a normal tensor is normal, even when made
        under ``inference_mode``)."""
        base = self._base
        return (base if base is not None else self)._inference

    def _untracked(self) -> bool:
        """Whether this is an inference tensor without a version counter: one made under ``inference_mode``, or a
        view of one, but not what ``detach()``/``.data`` give outside it (torch gives those a counter of their own,
        though they are inference tensors; a view of them has none again)."""
        base = self._base
        return (base if base is not None else self)._inference and not self._own_version

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def is_cpu(self) -> bool:
        return self._device.type == "cpu"

    def is_floating_point(self) -> bool:
        return bool(self.dtype.is_floating_point)

    def is_complex(self) -> bool:
        return bool(self.dtype.is_complex)

    @property
    def _version(self) -> int:
        owner = self._base if self._base is not None else self
        if owner._inference and self._untracked():
            raise RuntimeError("Inference tensors do not track version counter.")
        cell = owner._version_cell
        return cell[0] if cell is not None else 0

    def _bump_version(self) -> None:
        """Record an in-place write; views share the counter with their base, as in torch. An inference tensor has
        none outside ``inference_mode``: as torch's, the write is done, then refused here."""
        owner = self._base if self._base is not None else self
        if owner._inference:  # (one test for the common tensor: every optimizer step bumps each buffer)
            if _GRAD_STATE.inference:
                return  # inference tensors track no version inside inference_mode
            if self._untracked():
                raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not allowed.You can "
                                   "make a clone to get a normal tensor before doing inplace update.See "
                                   "https://github.com/pytorch/rfcs/pull/17 for more details.")
        cell = owner._version_cell
        if cell is None:
            cell = owner._version_cell = [0]
        cell[0] += 1
        self._version_cell = cell

    def __len__(self) -> int:
        if not self._data.ndim:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]  # type: ignore[no-any-return]

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        from ._printing import tensor_repr

        return tensor_repr(self)

    __str__ = __repr__


def bump_versions(tensors: Iterable[Tensor]) -> None:
    """``t._bump_version()`` of each of ``tensors``, in one call (an optimizer's planned step writes a group's
    parameters and states: a call per tensor cost more than the rest of its replay). A counter already made, of a
    tensor that is not an inference tensor, is advanced here; any other takes ``_bump_version``."""
    for t in tensors:
        owner = t._base if t._base is not None else t
        cell = owner._version_cell
        if cell is None or owner._inference or t._version_cell is not cell:
            t._bump_version()
        else:
            cell[0] += 1


def mark_view(out: Tensor, src: Tensor) -> None:
    """Make ``out``, which a view op made of ``src``, a view: it shares the version counter of ``src``'s storage
    (``_base``, its owner) and, as a differentiable view, takes its history from ``src``'s view base (NOTE [view +
    in-place]). A view made under no_grad or inference_mode remembers it (torch's CreationMeta), as does a view of
    one. (Every view op runs this: a root ``src`` takes the first branch, with the fewest reads.)"""
    root = src._base
    if root is None:
        out._base = src
        cell = src._version_cell
        if cell is None:
            cell = src._version_cell = [0]
        out._view_cell = cell
        out._view_version = cell[0]
        # (a recorded view was made with grad mode on: the thread-local mode is read only for the others)
        if not out._requires_grad and not _GRAD_STATE.enabled:
            out._view_meta = ("inference" if _GRAD_STATE.inference else "no_grad", "", 0)
        return
    out._base = root
    if src._view_cell is NOT_A_VIEW:
        out._view_base = src  # (a view of a detached alias: its history is the alias's)
    elif (vb := src._view_base) is not None:
        out._view_base = vb
    cell = root._version_cell
    if cell is None:
        cell = root._version_cell = [0]
    out._view_cell = cell
    out._view_version = cell[0]
    meta = src._view_meta
    if meta is not None:
        out._view_meta = meta
    elif not out._requires_grad and not _GRAD_STATE.enabled:
        out._view_meta = ("inference" if _GRAD_STATE.inference else "no_grad", "", 0)


def view_base(t: Tensor) -> Tensor | None:
    """The tensor the history of the differentiable view ``t`` comes from; None when ``t`` is no such view."""
    if t._base is None or t._view_cell is NOT_A_VIEW:
        return None
    vb = t._view_base
    return vb if vb is not None else t._base


def forget_view(t: Tensor) -> None:
    """``t`` owns its storage from now on (a view op's result given a storage of its own)."""
    t._base = None
    for name in ("_view_cell", "_view_version", "_view_base", "_view_meta"):
        t.__dict__.pop(name, None)


# ops.views's regeneration of a stale view's grad_fn (it records a node, which needs the op layer), set on import
REGENERATE: list[Any] = []


def refresh_view(v: Tensor, always: bool = False) -> None:
    """NOTE [view + in-place]: give the view ``v`` (``v._base`` is set) a new ``grad_fn`` when its storage was
    written in place since its ``grad_fn`` was set (torch's VariableHooks::grad_fn). The engine calls it for a view
    whose version moved, an op's input while grad mode is on (``always``: also outside it, for the ``grad_fn``
    property, as torch's)."""
    cell = v._view_cell
    if cell[0] == v._view_version or not (always or _GRAD_STATE.enabled):
        return
    if v._grad_fn is None and not view_base(v)._requires_grad:  # type: ignore[union-attr]
        return  # (the version is not taken: the view regenerates once its base requires grad)
    REGENERATE[0](v)


# NOTE [plain tensor types]: the classes whose instances the engine's fast paths take as plain tensors
# (``Prim.call1``/``call2``/``call_number``, the compiled record, the elementwise ops' tiny paths), tested as
# ``type(x) in PLAIN_TYPES``. Tensor, and the subclasses registered with ``plain_tensor_type``: ``nn.Parameter`` and
# ``nn.Buffer``, which override nothing the engine reads (torch's Parameter, too, disables ``__torch_function__`` for
# itself: its ops' results are plain tensors). Any other subclass (a user's, an uninitialized parameter, whose attribute reads refuse) keeps the general
# path, which reads the public properties. A mutable set, filled as each class is defined: a class's instances
# cannot exist before it is, and the hot paths hold this very object.
PLAIN_TYPES: set[type] = {Tensor}

# what the engine and the fast paths read or call on a tensor: a subclass that defines any of them is not plain
_ENGINE_READS = frozenset({
    "_data", "_device", "_requires_grad", "_grad", "_grad_fn", "_output_nr", "_base", "_version_cell", "_accumulator",
    "_hooks", "_post_accumulate_hooks", "_fw_grads", "_inference", "_created_in", "_uninitialized", "_view_base",
    "_view_version", "_view_meta", "_view_cell", "requires_grad", "grad", "grad_fn",
    "dtype", "_shareable_data", "_bump_version", "__getattribute__", "__getattr__", "__setattr__",
})


_T = TypeVar("_T", bound=type[Tensor])


def plain_tensor_type(cls: _T) -> _T:
    """Register ``cls`` (a direct subclass of Tensor) as one the fast paths take as a plain tensor (NOTE [plain
    tensor types]); refused for a class that defines what the engine reads."""
    overridden = _ENGINE_READS.intersection(cls.__dict__)
    if cls.__bases__ != (Tensor,) or overridden:
        raise TypeError(f"{cls.__name__} cannot take the engine's fast paths: it overrides {sorted(overridden)}"
                        if overridden else f"{cls.__name__} is not a direct subclass of Tensor")
    PLAIN_TYPES.add(cls)
    return cls


_NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf Tensor, "
    "use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you access "
    "the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more informations."
)


def _is_float_like(t: Tensor) -> bool:
    """bfloat16 and other extension dtypes are floats that NumPy does not call kind 'f'."""
    dt = t.dtype
    return bool(dt.is_floating_point or dt.is_complex)


class Size(tuple[int, ...]):
    """``torch.Size``: a tuple of ints that prints as ``shapetorch.Size([2, 3])``."""

    def __repr__(self) -> str:
        return f"shapetorch.Size({list(self)})"

    __str__ = __repr__

    def __getitem__(self, index: Any) -> Any:
        out = super().__getitem__(index)
        return Size(out) if isinstance(index, slice) else out

    def __add__(self, other: Any) -> Size:
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other: Any) -> Size:
        return Size(tuple(other) + tuple(self))

    def numel(self) -> int:
        n = 1
        for d in self:
            n *= d
        return n
