"""Recording a node (``_engine/backward.py``, NOTE [compiled record]): the path compiled per primitive and arity for
calls of one or two tensors makes the node ``record`` makes, and what it decided once per primitive never goes
stale when the same op meets other dtypes, shapes, ``requires_grad`` patterns, grad modes, hooks or anomaly mode.
Gradients, saved-tensor names and errors against torch running the same program."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import shapetorch as st
from shapetorch._engine.backward import record, record_number, record_tensors
from shapetorch._engine.primitives import PRIMS

st.ones(1)  # (the op table, which fills PRIMS, loads on the first op)


def arr(t):
    return np.asarray(t.detach().numpy())


def _fields(node):
    """Everything ``record`` sets on a node, with tensors and cells by identity (NOTE [plain saves]: the saved
    inputs as the ``SavedTensor``s they stand for)."""
    node._materialize()
    assert node._plain == ()
    return (
        type(node), node.prim, node.params, node._hooked, node._holds, node._freed,
        tuple((id(n) if n is not None else None, nr) for n, nr in node._next),
        tuple(id(x) if isinstance(x, st.Tensor) else x for x in node._inputs),
        tuple((slot, attr, id(s._cell), s._version, s._output_nr, s._unpack, id(s._tensor) if s._tensor is not None
               else None) for slot, attr, s in node._saved),
    )


# (primitive, inputs as requires_grad flags or numbers, params): unary and binary calls, ones that save their result,
# ones whose saves depend on the other input's requires_grad, ones whose spec is the default (every tensor input)
CALLS = [
    ("mul", (True, True), {}), ("mul", (True, False), {}), ("mul", (False, True), {}),
    ("add", (True, True), {}), ("sub", (False, True), {}), ("true_divide", (True, True), {}),
    ("true_divide", (False, True), {}), ("matmul", (True, False), {}), ("pow", (True, True), {}),
    ("atan2", (True, False), {}), ("maximum", (True, True), {}), ("exp", (True,), {}), ("tanh", (True,), {}),
    ("sin", (True,), {}), ("neg", (True,), {}), ("sqrt", (True,), {}), ("logaddexp", (True, True), {}),
    ("xlogy", (False, True), {}), ("hypot", (True, False), {}), ("copysign", (True, True), {}),
    ("sum", (True,), {"axis": (0,), "keepdims": False}),
    # a tensor and a number (record_number)
    ("mul", (True, 2.0), {}), ("mul", (3.0, True), {}), ("true_divide", (True, 4.0), {}),
    ("true_divide", (2.0, True), {}), ("pow", (True, 2.0), {}), ("pow", (2.0, True), {}), ("sub", (1.0, True), {}),
    ("add", (True, 1), {}), ("atan2", (True, 0.5), {}), ("maximum", (0.5, True), {}), ("xlogy", (2.0, True), {}),
    # three tensors: default saves, a spec that saves one of them, ones that do not require grad
    ("matmul_bias", (True, True, True), {}), ("matmul_bias", (False, True, False), {}),
    ("matmul_bias", (True, False, True), {}), ("where", (False, True, True), {}), ("where", (False, False, True), {}),
]


@pytest.mark.parametrize("name,flags,params", CALLS, ids=[f"{c[0]}-{c[1]}" for c in CALLS])
@pytest.mark.parametrize("inputs", ["leaves", "nonleaf", "view"])
def test_compiled_record_makes_the_node_record_makes(name, flags, params, inputs):
    prim = PRIMS[name]
    rng = np.random.default_rng(0)
    args: list = []
    for rg in flags:
        if not isinstance(rg, bool):
            args.append(np.float32(rg) if isinstance(rg, float) else rg)
            continue
        t = st.tensor(rng.uniform(0.5, 2.0, (3, 3)).astype(np.float32), requires_grad=rg)
        if inputs == "nonleaf" and rg:
            t = t * 1.5
        elif inputs == "view":
            t = t.t()
        args.append(t)
    tensors = [x for x in args if isinstance(x, st.Tensor)]
    save = prim.save_output
    out1, out2 = (st.Tensor._make(prim.kernels["cpu"](*(x._data if isinstance(x, st.Tensor) else x for x in args),
                                                      **params), tensors[0]._device) for _ in range(2))
    for o in (out1, out2):
        o._output_nr, o._base, o._inference = 0, None, False
    keep = save is True or (save is not False and save(tuple(args)))
    if len(tensors) == len(args):
        fast = record_tensors(prim, tuple(args), params, out1 if keep else None)
    else:
        slot = 0 if isinstance(args[0], st.Tensor) else 1
        fast = record_number(prim, tuple(args), args[slot], slot, params, out1 if keep else None)
    slow = record(prim, tuple(args), params, out2 if keep else None)
    f, s = _fields(fast), _fields(slow)
    assert f[:8] == s[:8]
    # the result is saved as its own cell and data, one per output tensor: compare all but the identities
    assert [x[:2] + x[3:6] for x in f[8]] == [x[:2] + x[3:6] for x in s[8]]
    assert [x[2] for x in f[8] if x[0] >= 0] == [x[2] for x in s[8] if x[0] >= 0]
    assert [x[6] for x in f[8] if x[0] >= 0] == [x[6] for x in s[8] if x[0] >= 0]


def _saved_names(lib, x_rg, y_rg, op):
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=x_rg)
    y = lib.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=y_rg)
    z = op(x, y)
    return sorted(n for n in dir(z.grad_fn) if n.startswith("_saved_") and getattr(z.grad_fn, n) is not None)


@pytest.mark.parametrize("op", [lambda x, y: x * y, lambda x, y: x / y, lambda x, y: x @ y, lambda x, y: x ** y])
def test_what_is_saved_follows_each_calls_requires_grad(op):
    """The compiled layout is per primitive and arity, the condition per call: the same op with each pattern
    saves what torch's node saves (mul saves ``self`` only when ``other`` requires grad, and so on)."""
    for x_rg, y_rg in ((True, True), (True, False), (False, True), (True, True), (False, True)):
        ours = _saved_names(st, x_rg, y_rg, op)
        theirs = [{"_saved_mat2": "_saved_other"}.get(n, n) for n in _saved_names(torch, x_rg, y_rg, op)]
        for n in ("_saved_self", "_saved_other", "_saved_exponent", "_saved_result"):
            assert (n in ours) == (n in theirs), (n, x_rg, y_rg, ours, theirs)


def _program(lib, dtype, shape, pattern):
    rng = np.random.default_rng(sum(shape) + len(pattern))
    x = lib.tensor(rng.uniform(0.5, 2.0, shape), dtype=dtype, requires_grad=pattern[0])
    y = lib.tensor(rng.uniform(0.5, 2.0, shape), dtype=dtype, requires_grad=pattern[1])
    z = (x * y).exp() / (y + 1) - x.tanh() + (1 - x * 0.5) ** 2 / 3
    if not z.requires_grad:
        return [arr(z)]
    z.sum().backward()
    return [arr(z)] + [arr(t.grad) for t in (x, y) if t.requires_grad]


def test_the_same_ops_with_other_dtypes_shapes_and_patterns():
    """One process runs the same ops over dtypes, shapes and ``requires_grad`` patterns in turn (a decision kept from
    an earlier call would show as a wrong value or gradient)."""
    for dtype in ("float32", "float64", "float32"):
        for shape in ((2, 3), (4,), (2, 3), ()):
            for pattern in ((True, True), (True, False), (False, True), (False, False), (True, True)):
                ours = _program(st, getattr(st, dtype), shape, pattern)
                theirs = _program(torch, getattr(torch, dtype), shape, pattern)
                assert len(ours) == len(theirs)
                for o, t in zip(ours, theirs):
                    assert o.dtype == t.dtype
                    np.testing.assert_allclose(o, t, rtol=1e-6 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode", "enable_grad", "set_grad_enabled"])
def test_grad_modes_after_recorded_calls(mode):
    for lib in (st, torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        first = a * b
        assert first.grad_fn is not None
        with getattr(lib, mode)(*((False,) if mode == "set_grad_enabled" else ())):
            inner = a * b
            nested = None
            if mode == "no_grad":
                with lib.enable_grad():
                    nested = a * b
        assert (inner.grad_fn is None) == (mode != "enable_grad"), (lib.__name__, mode)
        assert inner.requires_grad == (mode == "enable_grad")
        if nested is not None:
            assert nested.grad_fn is not None and nested.requires_grad
        after = a * b
        assert after.grad_fn is not None


def test_saved_tensor_hooks_opened_after_the_first_call_see_the_saves():
    for lib in (st, torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        (a * b).exp().sum().backward()  # the compiled path has run for mul and exp
        packed: list[tuple[int, ...]] = []
        unpacked: list[int] = []

        def pack(t, packed=packed):
            packed.append(tuple(t.shape))
            return t

        def unpack(t, unpacked=unpacked):
            unpacked.append(1)
            return t

        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = (a * b).exp()
        assert len(packed) == 3, lib.__name__  # a, b and exp's result
        y.sum().backward()
        assert len(unpacked) == 3, lib.__name__
        np.testing.assert_allclose(arr(a.grad), arr(a.grad))
        packed.clear()
        y = (a * b).exp()
        assert packed == []


def test_anomaly_mode_turned_on_after_the_first_call_keeps_the_traceback():
    a = st.tensor([1.0, 2.0], requires_grad=True)
    b = st.tensor([3.0, 4.0], requires_grad=True)
    assert "traceback_" not in (a * b).grad_fn.metadata
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with st.autograd.detect_anomaly():
            y = a * b
            z = y.exp()
    assert "traceback_" in y.grad_fn.metadata and "traceback_" in z.grad_fn.metadata
    assert "traceback_" not in (a * b).grad_fn.metadata


def test_node_hooks_registered_after_the_first_graph_run():
    for lib in (st, torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        (a * b).sum().backward()
        y = a * b
        seen = []
        y.grad_fn.register_prehook(lambda g, seen=seen: seen.append("pre"))
        y.grad_fn.register_hook(lambda gi, go, seen=seen: seen.append("post"))
        y.register_hook(lambda g: g * 2)
        y.sum().backward()
        assert seen == ["pre", "post"], lib.__name__
        np.testing.assert_array_equal(arr(a.grad), [3.0 + 6.0, 4.0 + 8.0])


def test_an_in_place_change_after_the_save_is_refused_as_torchs():
    errors = {}
    for lib in (st, torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        x = a * 1
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        (x * b).sum().backward()  # a first graph through the compiled path, unchanged inputs
        y = x * b
        b.data.add_(1) if lib is torch else None
        x.add_(1)
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        errors[lib.__name__] = str(info.value)
    assert "modified by an inplace operation" in errors["shapetorch"]
    assert "is at version 1; expected version 0" in errors["shapetorch"]
    assert "is at version 1; expected version 0" in errors["torch"]


def test_retain_graph_and_a_second_graph_of_the_same_structure():
    """Graphs of one structure built one after the other, one of them run twice with ``retain_graph``: each run gets
    its own values."""
    for lib in (st, torch):
        grads = []
        for scale in (1.0, 2.0, -3.0):
            a = lib.tensor([1.0, 2.0], requires_grad=True)
            b = lib.tensor([3.0, scale], requires_grad=True)
            y = (a * b).exp()
            y.sum().backward(retain_graph=True)
            y.sum().backward()
            grads.append((arr(a.grad), arr(b.grad)))
        if lib is st:
            ours = grads
    for (oa, ob), (ta, tb) in zip(ours, grads):
        np.testing.assert_allclose(oa, ta, rtol=1e-6)
        np.testing.assert_allclose(ob, tb, rtol=1e-6)


def test_saving_an_inference_tensor_raises_as_torchs():
    for lib in (st, torch):
        with lib.inference_mode():
            t = lib.tensor([1.0, 2.0])
        a = lib.tensor([3.0, 4.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
            a * t
        with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
            t * a
        assert (t + a).grad_fn is not None  # add saves nothing


def test_plain_saves_behave_as_saved_tensors():
    """NOTE [plain saves]: the saved inputs of a compiled node, read through torch's attributes before and after a
    backward, with per-tensor hooks registered on one, and a second backward: as torch's."""
    for lib in (st, torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        y = a * b
        assert y.grad_fn._saved_self is a or np.array_equal(arr(y.grad_fn._saved_self), arr(a))
        assert np.array_equal(arr(y.grad_fn._saved_other), arr(b))
        z = b * a
        seen = []
        z.grad_fn._raw_saved_self.register_hooks(lambda t: (seen.append("pack"), t)[1],
                                                  lambda t: (seen.append("unpack"), t * 2)[1])
        z.sum().backward()
        assert seen == ["pack", "unpack"], lib.__name__
        np.testing.assert_array_equal(arr(a.grad), [6.0, 8.0])  # b's saved copy doubled by the unpack hook
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.sum().backward()
        with pytest.raises(RuntimeError, match="after they have already been freed"):
            y.grad_fn._saved_self  # noqa: B018
        w = a * 2.0
        w.sum().backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            w.sum().backward()


def test_the_two_tensor_call_leaves_the_slow_paths_users_their_calls():
    """NOTE [two-tensor call]: ``a * b``, ``a + b``, ``a.exp()`` and ``1 - a * 2.0`` skip ``Prim.__call__``'s dispatch, but not while the profiler,
    forward-mode AD or inference mode need to see every call."""
    from shapetorch import autograd

    a = st.tensor([1.0, 2.0], requires_grad=True)
    b = st.tensor([3.0, 4.0])
    with autograd.profiler.profile() as prof:
        (a * b + b).exp().sum()
    names = [r.key for r in prof.key_averages()]
    assert "aten::mul" in names and "aten::add" in names and "aten::exp" in names, names
    with autograd.profiler.profile() as prof:
        1 - a * 2.0
    names = [r.key for r in prof.key_averages()]
    assert names.count("aten::mul") == 1 and "aten::sub" in names, names
    for lib in (st, torch):
        with lib.inference_mode():
            x, y = lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])
            assert (x * y).is_inference() and (x + y).is_inference() and x.exp().is_inference()
            assert (x * 2.0).is_inference() and (1 - x).is_inference()
        fwd = lib.autograd.forward_ad
        with fwd.dual_level():
            d = fwd.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([0.5, -1.0]))
            e = lib.tensor([3.0, 4.0])
            tangent = fwd.unpack_dual(d * e + d).tangent
            tangent_exp = fwd.unpack_dual(d.exp()).tangent
            tangent_num = fwd.unpack_dual(1 - d * 3.0).tangent
        np.testing.assert_array_equal(arr(tangent), [0.5 * 3.0 + 0.5, -1.0 * 4.0 - 1.0])
        np.testing.assert_allclose(arr(tangent_exp), [0.5 * np.exp(1.0), -1.0 * np.exp(2.0)], rtol=1e-6)
        np.testing.assert_array_equal(arr(tangent_num), [-1.5, 3.0])


def test_numbers_with_tensors_record_and_differentiate_as_torchs():
    """A tensor and a number (``call_number``, ``record_number``), either order, first and second order."""
    out = {}
    for lib in (st, torch):
        x = lib.tensor([0.5, -1.5, 2.0], requires_grad=True)
        y = (1 - x * 0.5) ** 2 / 3 + 2 * x - x / 4
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), x)
        names = [y.grad_fn.name(), g.grad_fn.name()]
        out[lib.__name__] = (arr(y), arr(g), arr(h), names)
    for o, t in zip(out["shapetorch"][:3], out["torch"][:3]):
        np.testing.assert_allclose(o, t, rtol=1e-6)
    assert out["shapetorch"][3] == out["torch"][3]


@pytest.mark.parametrize("call", ["two tensors", "tensor and number", "one tensor"])
def test_a_backward_frees_the_plain_saves_as_torchs(call):
    """NOTE [plain saves]: a backward without ``retain_graph`` lets go of the tensors a compiled node saved, as
    torch's frees its SavedVariables: an intermediate that only the graph still holds is gone after it (a node
    that kept its inputs would keep every activation of a training step alive until the loss is dropped)."""
    import gc
    import weakref

    for lib in (st, torch):
        c = lib.tensor([0.5, -1.5, 2.0], requires_grad=True)
        a = lib.tensor([3.0, 4.0, 5.0], requires_grad=True)
        b = c * 2.0  # (its own node saves nothing of c: the number does not require grad)
        y = a * b if call == "two tensors" else b**2.0 if call == "tensor and number" else b.sin()
        ref = weakref.ref(b)
        del b
        gc.collect()
        assert ref() is not None, lib.__name__  # saved by y's node
        y.sum().backward()
        gc.collect()
        assert ref() is None, (lib.__name__, call)


def test_compiled_calls_never_fall_back_to_record(monkeypatch):
    """NOTE [compiled record]: a call of one tensor, two, more, or a tensor and a number, of a primitive whose saves compile
    (every one in ``CALLS``), is recorded without ``record``'s general loops (a plan that read the wrong entry
    would still make the same node through ``record``, and only the time would show it)."""
    import shapetorch._engine.backward as B

    general = []
    real = B.record

    def logged(prim, *args):
        general.append(prim.name)
        return real(prim, *args)

    monkeypatch.setattr(B, "record", logged)
    x = st.tensor([0.5, 1.5], requires_grad=True)
    w = st.tensor([2.0, -1.0], requires_grad=True)
    m = st.tensor([[1.0, 0.5], [0.25, 2.0]], requires_grad=True)
    for y in (x.exp(), x.tanh(), x.sin(), -x, x * w, x + w, x / w, x**w, x * 2.0, 1.0 - x, x**2.0, 2.0 / x,
              st.nn.functional.linear(x.unsqueeze(0), m, w), st.nn.functional.layer_norm(x, (2,), w, x)):
        assert y.grad_fn is not None
    assert general == []


def test_default_saves_name_each_tensor_input_by_its_place():
    """A primitive without a ``SAVES`` entry saves every tensor input under torch's name for its place (``self``,
    ``other``, ``input2``...), numbers skipped: the layout is made once per pattern of tensors and numbers, so the
    same primitive called with other patterns must get its own."""
    prim = st._engine.primitives.Prim("test_default_saves", lambda *a: a[0] + 0, lambda g, n: (g,) * len(n.inputs))
    del PRIMS[prim.name]  # (a test's primitive: kept out of the table the exhaustiveness tests read)
    t = [st.rand(2, requires_grad=True) for _ in range(3)]
    for args, names in [((t[0], t[1], t[2]), ["self", "other", "input2"]), ((t[0], 2.0, t[2]), ["self", "input2"]),
                        ((1.0, t[1], t[2]), ["other", "input2"]), ((t[0], 2.0, 3.0, t[1]), ["self", "input3"]),
                        ((t[0], t[1]), ["self", "other"])]:
        node = record(prim, args, {}, None)
        assert node._saved_names() == names
        for slot, name in zip([i for i, a in enumerate(args) if isinstance(a, st.Tensor)], names):
            assert getattr(node, f"_saved_{name}") is args[slot]
