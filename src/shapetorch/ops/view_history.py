"""The autograd history of views whose storage is written in place (torch's NOTE [View + Inplace detection]).

An in-place op that writes a view records, for the view's base, the node torch calls ``CopySlices``: the base's new
value is its old one with the view's elements replaced by the written result, so the old values' gradient is cut
there and the result's inputs get theirs. The view itself, and every other view of the same storage the next time
its ``grad_fn`` is read (``_tensor.refresh_view``), then takes the node torch calls ``AsStridedBackward0``: its
elements picked out of its base's current value.

Both nodes are recorded without computing a value (the storage already holds it), from where each element of the
view lies among its base's elements in row-major order, found from their memory addresses: so any layout of the base
(transposed, offset into a larger buffer, an F-ordered result) is handled the same, on the CPU and on WebGPU. A view
of the base's real counterpart (``real``, ``imag``, ``view_as_real`` of a complex base) or complex counterpart
(``view_as_complex``) is addressed by the real and imaginary parts. What no element map can express raises
``autograd_error_view_layout``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._engine.backward import SAVES, gradient_edge, record
from .._engine.primitives import Prim
from .._errors import fail
from .._grad_mode import STATE
from .._tensor import REGENERATE, Tensor, view_base


def _positions(t: Tensor) -> tuple[Any, Any, int, bool]:
    """The storage ``t`` lies in (None for host memory), each element's address in bytes (an int64 array of ``t``'s
    shape), the item size and whether it is laid out row-major."""
    a = t._shareable_data()
    if isinstance(a, np.ndarray):
        key, start, strides, dense = None, a.__array_interface__["data"][0], a.strides, a.flags.c_contiguous
    else:  # a device array: an offset and strides in elements of its storage
        item = a.dtype.itemsize
        key, start, strides, dense = a.st, a.offset * item, tuple(s * item for s in a.stride), a.contiguous
    p = np.asarray(start, dtype=np.int64)
    for n, s in zip(a.shape, strides):
        p = np.add.outer(p, np.arange(n, dtype=np.int64) * s)
    return key, p, a.dtype.itemsize, bool(dense)


def element_map(base: Tensor, view: Tensor, op: str) -> dict[str, Any]:
    """Where each element of ``view`` lies among ``base``'s elements in row-major order, counted in units (the
    element, or the real and imaginary parts where one of the two is complex and the other its real counterpart):
    ``index`` (int64, the view's units in row-major order), ``units`` (the base's), whether each side is split into
    parts (``base_split``, ``view_split``), and whether an element of the base is seen more than once
    (``repeats``: an expanded view)."""
    kb, pb, ib, dense = _positions(base)
    kv, pv, iv, _ = _positions(view)
    if kb is not kv:
        fail("autograd_error_view_layout", op=op, problem="the view does not share its base's storage")
    db, dv = base._data.dtype, view._data.dtype
    base_split = view_split = False
    unit = ib
    if db != dv:
        if db.kind == "c" and dv.kind == "f" and 2 * iv == ib:
            base_split, unit = True, iv
        elif db.kind == "f" and dv.kind == "c" and 2 * ib == iv:
            view_split = True
        else:
            fail("autograd_error_view_layout", op=op, problem=f"a {dv} view of a {db} base")
    if view_split:
        pv = np.stack([pv, pv + unit], axis=-1)
    uv = pv.reshape(-1)
    units = pb.size * (2 if base_split else 1)
    if dense:  # row-major: a unit's index is its distance from the first
        off = uv - int(pb.reshape(-1)[0]) if pb.size else uv
        index = off // unit
        ok = (off % unit == 0) & (index >= 0) & (index < units)
    else:
        ub = (np.stack([pb, pb + unit], axis=-1) if base_split else pb).reshape(-1)
        order = np.argsort(ub, kind="stable")
        ranked = ub[order]
        if units > 1 and bool((ranked[1:] == ranked[:-1]).any()):
            fail("autograd_error_view_layout", op=op, problem="elements of the base share memory")
        j = np.searchsorted(ranked, uv).clip(0, max(units - 1, 0))
        ok = ranked[j] == uv if units else np.zeros(uv.shape, dtype=bool)
        index = order[j] if units else j
    if not bool(ok.all()):
        fail("autograd_error_view_layout", op=op, problem="the view has elements outside its base")
    index = index.astype(np.int64)
    return {"index": index, "units": units, "base_split": base_split, "view_split": view_split,
            "repeats": bool(np.unique(index).size != index.size), "base_shape": tuple(base._data.shape),
            "view_shape": tuple(view._data.shape), "on": {}}


def _index(p: dict[str, Any], like: Tensor) -> Tensor:
    """The element map's index as a tensor on ``like``'s device (made once per device)."""
    dev = like.device
    got: Tensor | None = p["on"].get(dev)
    if got is None:
        from .creation import tensor

        got = p["on"][dev] = tensor(p["index"], device=dev)
    return got


def _units(t: Tensor, split: bool) -> Tensor:
    """``t`` flattened into units: its elements, or their real and imaginary parts."""
    if split:
        from .complex import view_as_real

        return view_as_real(t.contiguous()).reshape(-1)
    return t.reshape(-1)


def _from_units(flat: Tensor, split: bool, shape: tuple[int, ...]) -> Tensor:
    if split:
        from .complex import view_as_complex

        return view_as_complex(flat.reshape(-1, 2)).reshape(shape)
    return flat.reshape(shape)


def _as_strided_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    """A view's elements picked out of its base: the gradient goes back to where they lie (summed where an element
    of the base is seen more than once)."""
    p = n.params
    gu = _units(g, p["view_split"])
    flat = gu.new_zeros((p["units"],)).index_put((_index(p, g),), gu, accumulate=p["repeats"])
    return (_from_units(flat, p["base_split"], p["base_shape"]),)


def _copy_slices_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    """The base with the view's elements replaced by ``src``: ``src`` gets the gradient of those elements, the old
    base the rest."""
    p = n.params
    if p["repeats"]:  # (torch's CopySlices writes the gradient through the view, which it refuses there)
        fail("inplace_error_internal_overlap", op="backward")
    gu = _units(g, p["base_split"])
    idx = _index(p, g)
    g_src = _from_units(gu.index_select(0, idx), p["view_split"], p["view_shape"])
    g_base = _from_units(gu.index_put((idx,), gu.new_zeros(())), p["base_split"], p["base_shape"])
    return g_base, g_src


# record-only primitives (no kernel: their values are already in the storage)
_VIEW_NODE = Prim("view_of_base", None, _as_strided_vjp)
_REBASE_NODE = Prim("copy_slices", None, _copy_slices_vjp)
SAVES["view_of_base"] = SAVES["copy_slices"] = ()


def record_node(prim: Prim, t: Tensor, other: Tensor | None, params: dict[str, Any], label: str) -> Any:
    """A node of ``prim`` whose first input is ``t`` as it stands now in the graph, given on a stand-in tensor of its
    data (the node does not hold ``t`` itself, whose history it becomes)."""
    s = Tensor._make(t._data, t._device)
    s._grad_fn, s._output_nr, s._requires_grad = t._grad_fn, t._output_nr, t._requires_grad
    edge = None
    if t._grad_fn is None and t._requires_grad:  # a leaf: the edge is its own accumulator (held until recorded)
        edge = gradient_edge(t)
        s._accumulator = t._accumulator
    node = record(prim, (s,) if other is None else (s, other), params, None)
    node.label = label
    del edge
    return node


def _set_history(t: Tensor, node: Any) -> None:
    """``t`` made by ``node``; a ``retain_grad`` moves to it (torch's update_tensor_hooks_on_new_gradfn)."""
    old, nr = t._grad_fn, t._output_nr
    t._grad_fn, t._output_nr, t._requires_grad = node, 0, True
    refs = getattr(old, "_retain_refs", None)
    if refs and nr in refs and refs[nr]() is t:
        del refs[nr]
        t.retain_grad()


def view_node(v: Tensor, op: str = "grad_fn") -> Any:
    """``AsStridedBackward0`` of the view ``v`` from its base's current history."""
    base = view_base(v)
    assert base is not None
    return record_node(_VIEW_NODE, base, None, element_map(base, v, op), "AsStridedBackward0")


_MULTI = ("This view is the output of a function that returns multiple views. Such functions do not allow the output "
          "views to be modified inplace. You should replace the inplace operation by an out-of-place one.")
_CUSTOM = ("This view was created inside a custom Function (or because an input was returned as-is) and the autograd "
           "logic to handle view+inplace would override the custom backward associated with the custom Function, "
           "leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the output of the "
           "custom Function.")


def _mode_why(mode: str) -> str:
    block = "no_grad" if mode == "no_grad" else "inference_mode"
    return ("Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
            f"moving both the view and the inplace either both inside the {block} block (if you don't want the "
            "inplace to be tracked) or both outside (if you want the inplace to be tracked).")


def refuse_view_write(v: Tensor, indirect: bool) -> None:
    """torch's handle_view_on_rebase: a view made under no_grad or inference_mode, a piece of a multi-output view op
    or a view a custom Function returned may not take part in a recorded in-place write, written itself
    (``indirect`` False) or through its base or another view (True)."""
    meta, custom = v._view_meta, v._created_in
    if meta is None and custom is None:
        return
    modified = "its base or another view of its base has been" if indirect else "is being"
    fn = v._grad_fn
    if custom is not None or meta[0] == "multi":  # type: ignore[index]
        name, i, several = custom if custom is not None else (meta[1], meta[2], True)  # type: ignore[index]
        why = _MULTI if several else _CUSTOM
        if not indirect:
            fail("autograd_error_custom_view_inplace", i=i, name=name, why=why)
        fail("autograd_error_view_mode_inplace", what=f"Output {i} of {name} is a view and {modified} modified "
             "inplace.", why=why)
    mode = meta[0]  # type: ignore[index]
    prefix = (f"Output {v._output_nr} of {fn.name()} is a view of a view which was created in" if fn is not None
              else "A view was created in")
    what = (f"{prefix} inference mode and {modified} modified inplace in normal mode." if mode == "inference" else
            f"{prefix} no_grad mode and {modified} modified inplace with grad mode enabled.")
    fail("autograd_error_view_mode_inplace", what=what, why=_mode_why(mode))


def regenerate(v: Tensor) -> None:
    """NOTE [view + in-place]: the stale view ``v`` takes ``AsStridedBackward0`` of its base's current history."""
    refuse_view_write(v, True)
    _set_history(v, view_node(v))
    v._view_version = v._view_cell[0]


REGENERATE.append(regenerate)


def rebase(view: Tensor, result: Tensor, op: str) -> Any:
    """The ``CopySlices`` node of writing ``result`` into ``view``, recorded against its base's history before the
    write; None where no gradient is recorded. ``finish_rebase`` installs it once the storage is written."""
    base = view_base(view)
    if base is None or not STATE.enabled or not (result.requires_grad or base._requires_grad):
        return None
    return record_node(_REBASE_NODE, base, result, element_map(base, view, op), "torch::autograd::CopySlices")


def finish_rebase(view: Tensor, node: Any) -> None:
    """After the write: the base is the output of ``node``, and the view is picked out of it."""
    base = view_base(view)
    assert base is not None
    _set_history(base, node)
    _set_history(view, view_node(view))
    view._view_version = view._view_cell[0]
