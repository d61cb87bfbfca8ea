"""The engine, the Tensor autograd API, grad modes, in-place checks, the graph API and saved-tensor hooks,
each against the PyTorch 2.0 reference and torch itself (the same program run on both)."""

from __future__ import annotations

import gc
import threading
import tracemalloc
import weakref

import numpy as np
import pytest
import torch

import shapetorch as st
from shapetorch import autograd
from test_webgpu import need_webgpu


def both(fn):
    """Run ``fn(lib)`` on shapetorch and torch; return both results."""
    return fn(st), fn(torch)


def arr(t):
    return np.asarray(t.detach().numpy())


# -- engine ------------------------------------------------------------------------------------------

def test_leaves_grad_fn_and_requires_grad():
    x = st.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    assert x.is_leaf and x.grad_fn is None and x.requires_grad
    assert not y.is_leaf and y.grad_fn.name() == "MulBackward0" and y.requires_grad
    z = st.tensor([1.0])
    assert z.is_leaf and not z.requires_grad
    assert not (x > 1).requires_grad and (x > 1).grad_fn is None  # comparisons are not differentiable
    with pytest.raises(RuntimeError, match="only Tensors of floating point and complex dtype can require gradients"):
        st.tensor([1, 2]).requires_grad = True
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad = False


def test_backward_gradient_retain_graph_and_second_backward_error():
    x = st.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.exp()
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        y.backward()
    y.backward(st.tensor([1.0, 0.0, 2.0]), retain_graph=True)
    np.testing.assert_allclose(arr(x.grad), np.exp([1.0, 2.0, 3.0]) * [1, 0, 2])
    y.sum().backward(retain_graph=True)  # retained: runs again, and accumulates
    np.testing.assert_allclose(arr(x.grad), np.exp([1.0, 2.0, 3.0]) * [2, 1, 3])
    s = y.sum()
    s.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        s.backward()
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        st.tensor([1.0]).sum().backward()


def test_second_backward_through_nodes_without_saved_tensors_works_as_in_torch():
    def prog(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x + 1).sum()
        y.backward()
        y.backward()  # AddBackward0 and SumBackward0 saved nothing
        return x.grad.tolist()

    s, t = both(prog)
    assert s == t == [2.0, 2.0]


def test_higher_order_gradients_with_create_graph():
    x = st.tensor(2.0, requires_grad=True)
    y = x ** 3
    (g,) = autograd.grad(y, x, create_graph=True)
    assert g.requires_grad and g.item() == 12.0
    (g2,) = autograd.grad(g, x, create_graph=True)
    assert g2.item() == 12.0
    (g3,) = autograd.grad(g2, x)
    assert g3.item() == 6.0
    z = st.tensor([1.0, 2.0], requires_grad=True)
    (z ** 2).sum().backward(create_graph=True)
    assert z.grad.requires_grad and z.grad.grad_fn is not None
    z.grad.sum().backward()
    assert z.grad.tolist() == [2 * 1.0 + 2, 2 * 2.0 + 2]


def test_backward_inputs_accumulate_only_there():
    def prog(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        h = a * b
        h.sum().backward(inputs=[a])
        out = [a.grad.tolist(), b.grad]
        m = a * 2
        (m * b).sum().backward(inputs=[m])  # a non-leaf input gets .grad
        return out + [m.grad.tolist(), a.grad.tolist()]

    s, t = both(prog)
    assert s == t
    with pytest.raises(RuntimeError, match="'inputs' argument to backward\\(\\) cannot be empty."):
        x = st.tensor([1.0], requires_grad=True)
        (x * 2).sum().backward(inputs=[])


def test_autograd_backward_function_with_several_roots():
    def prog(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y, z = x * 2, x.sin()
        lib.autograd.backward([y.sum(), z], [None, lib.tensor([1.0, -1.0])])
        return x.grad.tolist()

    s, t = both(prog)
    np.testing.assert_allclose(s, t)


def test_grad_allow_unused_materialize_and_no_accumulation():
    x = st.tensor([1.0, 2.0], requires_grad=True)
    w = st.tensor([3.0], requires_grad=True)
    y = (x * x).sum()
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        autograd.grad(y, [x, w], retain_graph=True)
    gx, gw = autograd.grad(y, [x, w], allow_unused=True, retain_graph=True)
    assert gw is None and gx.tolist() == [2.0, 4.0]
    gx, gw = autograd.grad(y, [x, w], materialize_grads=True, retain_graph=True)
    assert gw.tolist() == [0.0]
    assert x.grad is None  # grad() returns, it does not accumulate
    with pytest.raises(RuntimeError, match="does not require grad"):
        autograd.grad(y, st.tensor([1.0]))
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of"):
        autograd.grad(x * 2, x, st.ones(3))


def test_grad_is_grads_batched():
    def prog(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x ** 2
        (g,) = lib.autograd.grad(y, x, lib.eye(3), is_grads_batched=True)
        return g.tolist()

    s, t = both(prog)
    assert s == t


def test_gradients_are_unbroadcast_once():
    a = st.ones((3, 1), requires_grad=True)
    b = st.ones(4, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.shape == (3, 1) and a.grad.tolist() == [[4.0]] * 3
    assert b.grad.shape == (4,) and b.grad.tolist() == [3.0] * 4


# -- default gradient layouts -----------------------------------------------------------------------------

def test_layout_rule_1_grad_takes_the_strides_of_a_dense_param():
    p = st.zeros((3, 4)).t().requires_grad_()  # dense, column-major
    (p * 1).sum().backward()
    assert p.grad.stride() == p.stride() == (1, 4)


def test_layout_rule_2_non_dense_param_gets_row_major_grad():
    base = st.zeros((4, 6))
    p = base[:, ::2].detach().requires_grad_()  # overlapping-free but not dense
    (p * 1).sum().backward()
    assert p.grad.is_contiguous()


def test_layout_rules_3_and_4_accumulation():
    p = st.zeros((3, 4)).t().requires_grad_()
    (p * 1).sum().backward()
    g = p.grad
    (p * 2).sum().backward()
    assert p.grad is g and g.stride() == (1, 4) and g.tolist()[0] == [3.0, 3.0, 3.0]  # rule 3: in place
    (p * 2).sum().backward(create_graph=True)
    assert p.grad is not g and p.grad.tolist()[0] == [5.0, 5.0, 5.0]  # rule 4: .grad + new grad
    manual = st.zeros((4, 3)).t()
    q = st.ones((3, 4), requires_grad=True)
    q.grad = manual
    (q * 1).sum().backward()
    assert q.grad is manual and q.grad.stride() == (1, 3)  # manual layout kept


def test_assigning_a_grad_of_the_wrong_size_raises():
    p = st.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="assigned grad has data of a different size"):
        p.grad = st.ones(2)
    p.grad = None


def test_assigning_a_grad_of_another_type_dtype_or_device_raises_as_torch():
    """The ``.grad`` setter's checks, each against torch's (its "meta" device stands for a second device here: one
    registered with the NumPy backend)."""
    from shapetorch._device import register_device, unregister_device
    from shapetorch.backends import numpy_backend

    register_device("fakedev", lambda: numpy_backend)
    try:
        for lib, other in ((st, "fakedev"), (torch, "meta")):
            p = lib.ones(3, requires_grad=True)
            with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None"):
                p.grad = [1.0, 2.0, 3.0]
            # (torch 2.13's messages speak of grad_dtype and device types, shapetorch's are the older ones)
            with pytest.raises(RuntimeError, match="assigned grad has data of a different type|grad_dtype 'Float'"):
                p.grad = lib.ones(3, dtype=lib.float64)
            with pytest.raises(RuntimeError, match="assigned grad has data located on a different device|same device"):
                p.grad = lib.ones(3).to(other)
            p.grad = lib.full((3,), 2.0)
            assert p.grad.tolist() == [2.0, 2.0, 2.0], lib.__name__
    finally:
        unregister_device("fakedev")


# -- non-leaf .grad, retain_grad, hooks ------------------------------------------------------------------

def test_non_leaf_grad_is_none_with_torchs_warning_unless_retained():
    x = st.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = x * 3
    z.retain_grad()
    (y * z).sum().backward()
    with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
        assert y.grad is None
    assert z.retains_grad and not y.retains_grad and not x.retains_grad
    assert z.grad.tolist() == [2.0, 4.0]
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        st.ones(2).retain_grad()


def test_tensor_hooks_run_in_torchs_order_and_can_replace_the_gradient():
    def prog(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: log.append(("y1", g.tolist())))
        h = y.register_hook(lambda g: g * 10)
        y.retain_grad()
        x.register_hook(lambda g: log.append(("x", g.tolist())))
        y.grad_fn.register_prehook(lambda gos: log.append(("pre", gos[0].tolist())))
        y.grad_fn.register_hook(lambda gis, gos: log.append(("post", gis[0].tolist(), gos[0].tolist())))
        y.sum().backward(retain_graph=True)
        h.remove()
        x.grad = None
        y.sum().backward()
        return log, y.grad.tolist(), x.grad.tolist()

    s, t = both(prog)
    assert s == t
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        st.ones(1).register_hook(lambda g: g)


@pytest.mark.parametrize("leaf", [False, True])
@pytest.mark.parametrize("change", ["dtype", "half", "size", "number", "same"])
def test_a_tensor_hook_may_not_change_the_gradients_type_or_size(change, leaf):
    """A hook's replacement must be like the gradient it replaces (dtype, device and size), as torch checks: another
    dtype or size is a RuntimeError naming the hook, a number a TypeError; a like one replaces it."""
    def prog(lib):
        def hook(g):
            return {"dtype": g.double(), "half": g.to(lib.float16), "size": g[:1], "number": 3.0,
                    "same": g * 3}[change]
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        (x if leaf else y).register_hook(hook)
        try:
            y.sum().backward()
        except (RuntimeError, TypeError) as e:
            return "RuntimeError" if isinstance(e, RuntimeError) else "TypeError", str(e)
        return "ok", x.grad.tolist()

    s, t = both(prog)
    if t[0] == "ok":
        assert s == t
    elif change == "number":  # (torch's TypeError names no hook: "expected Variable, but hook returned 'float'")
        assert s == (t[0], "expected Tensor, but hook 'hook' returned 'float'")
    else:  # torch's class and message, with our tensor type names
        assert (s[0], s[1].replace("shapetorch.", "torch.")) == t


def test_node_hooks_can_replace_gradients():
    def prog(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        y.grad_fn.register_prehook(lambda gos: (gos[0] * 0 + 1,))
        y.grad_fn.register_hook(lambda gis, gos: (gis[0] * 2,))
        (y * 5).sum().backward()
        return x.grad.tolist()

    s, t = both(prog)
    np.testing.assert_allclose(s, t)


@pytest.mark.parametrize("kind", ["post", "pre", "tensor", "retain", "leaf_node_post"])
def test_each_hook_alone_runs(kind):
    """Each kind of hook registered alone on a node (the engine's plain walk skips a node's hooks unless one was
    registered: every registration must mark the node), on the first backward and on a second one."""
    def prog(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        if kind == "post":
            y.grad_fn.register_hook(lambda gis, gos: (gis[0] * 2,))
        elif kind == "pre":
            y.grad_fn.register_prehook(lambda gos: (gos[0] * 3,))
        elif kind == "tensor":
            y.register_hook(lambda g: g * 4)
        elif kind == "retain":
            y.retain_grad()
        else:
            (y * 1).grad_fn.next_functions[0][0].next_functions[0][0].register_hook(
                lambda gis, gos: log.append([g.tolist() for g in gos]))
        for _ in range(2):
            x.grad = None
            (y * 5).sum().backward(retain_graph=True)
        return x.grad.tolist(), (y.grad.tolist() if kind == "retain" else None), log

    s, t = both(prog)
    np.testing.assert_allclose(s[0], t[0], rtol=1e-6)
    assert s[1] == t[1] if s[1] is None else np.allclose(s[1], t[1])
    assert len(s[2]) == len(t[2])


def test_post_accumulate_grad_hook():
    seen = []
    p = st.ones(2, requires_grad=True)
    p.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    (p * 3).sum().backward()
    assert seen == [[3.0, 3.0]]


# -- grad modes --------------------------------------------------------------------------------------------

def test_grad_modes_and_decorators():
    x = st.ones(2, requires_grad=True)
    with st.no_grad():
        assert not (x * 2).requires_grad
        with st.enable_grad():
            assert (x * 2).requires_grad

    @st.no_grad()
    def f():
        return x * 2

    @st.no_grad
    def g():
        return x * 2

    @st.no_grad()
    def gen():
        yield x * 2
        yield x * 3

    assert not f().requires_grad and not g().requires_grad and st.is_grad_enabled()
    assert all(not t.requires_grad for t in gen())
    st.set_grad_enabled(False)
    assert not st.is_grad_enabled()
    st.set_grad_enabled(True)
    with st.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert st.is_grad_enabled()

    @st.set_grad_enabled(False)
    def h():
        return x * 2

    assert st.is_grad_enabled() and not h().requires_grad and st.is_grad_enabled()


def test_grad_mode_is_thread_local():
    seen = {}

    def worker():
        seen["other"] = st.is_grad_enabled()
        with st.no_grad():
            seen["inside"] = st.is_grad_enabled()

    with st.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert not st.is_grad_enabled()
    assert seen == {"other": True, "inside": False}


def test_inference_mode_makes_inference_tensors():
    x = st.ones(2, requires_grad=True)
    with st.inference_mode():
        assert st.is_inference_mode_enabled() and not st.is_grad_enabled()
        y = x * 2
        z = st.zeros(2)
        with st.inference_mode(False):
            assert not st.is_inference_mode_enabled()
    assert not st.is_inference_mode_enabled()
    assert y.is_inference() and z.is_inference() and not y.requires_grad and not x.is_inference()
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        x * y

    @st.inference_mode()
    def f():
        return x + 1

    assert f().is_inference()


# -- Tensor API -------------------------------------------------------------------------------------------

def test_detach_detach_and_variable():
    x = st.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.is_leaf and d._version == y._version
    d.add_(1)
    assert y.tolist() == [3.0, 5.0] and y._version == 1  # shares storage and version counter
    y.detach_()
    assert y.is_leaf and not y.requires_grad
    v = autograd.Variable(st.ones(2), requires_grad=True)
    assert isinstance(v, st.Tensor) and v.requires_grad and isinstance(v, autograd.Variable)
    assert v.data.tolist() == [1.0, 1.0] and not v.data.requires_grad


# -- in-place correctness -----------------------------------------------------------------------------------

def test_version_counter_and_views_share_it():
    x = st.zeros(4)
    v = x[1:3]
    assert x._version == 0
    x.add_(1)
    assert x._version == 1 and v._version == 1
    v.mul_(2)
    assert x._version == 2


def test_modified_saved_tensor_raises_torchs_error_with_versions():
    def prog(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x.exp()
        y.add_(1)
        try:
            y.sum().backward()
        except RuntimeError as e:
            return str(e)
        return None

    s, t = both(prog)
    assert s is not None and t is not None
    want = ("one of the variables needed for gradient computation has been modified by an inplace operation: "
            "[shapetorch.FloatTensor [3]], which is output 0 of ExpBackward0, is at version 1; expected version 0 "
            "instead.")
    assert s.startswith(want)
    assert t.startswith(want.replace("shapetorch", "torch").replace("ExpBackward0", "AddBackward0")) or \
        "is at version 1; expected version 0 instead" in t


def test_modified_input_saved_by_mul_raises_but_unsaved_one_does_not():
    def prog(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = a * 1
        c = b + 1  # add saves nothing
        b.mul_(3)
        c.sum().backward()
        d = a * 1
        e = d * a  # saves d (a requires grad)
        d.add_(1)
        try:
            e.sum().backward()
        except RuntimeError as err:
            return a.grad.tolist(), "is at version 1; expected version 0" in str(err)
        return a.grad.tolist(), False

    s, t = both(prog)
    assert s == t == ([1.0, 1.0], True)


def test_leaf_in_place_raises():
    x = st.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        x.add_(1)
    with st.no_grad():
        x.add_(1)  # allowed under no_grad, as in torch
    assert x.tolist() == [2.0, 2.0]


# -- graph ---------------------------------------------------------------------------------------------

def test_graph_node_api_reference_example():
    a = st.tensor([0.0, 0.0, 0.0], requires_grad=True)
    b = a.exp()
    assert isinstance(b.grad_fn, autograd.graph.Node)
    names = dir(b.grad_fn)
    for want in ("_raw_saved_result", "_saved_result", "metadata", "name", "next_functions", "register_hook",
                 "register_prehook", "requires_grad"):
        assert want in names
    assert np.allclose(arr(b.grad_fn._saved_result), arr(b))
    assert b.grad_fn._saved_result.grad_fn is b.grad_fn
    b.grad_fn.metadata["k"] = 1
    assert b.grad_fn.metadata == {"k": 1}
    (acc, nr), = b.grad_fn.next_functions
    assert acc.name() == "torch::autograd::AccumulateGrad" and acc.variable is a and nr == 0


def test_saved_attribute_names_match_torch():
    def prog(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0, 4.0], requires_grad=True)
        y = x * w
        z = x.sin()
        return (y.grad_fn.name(), y.grad_fn._saved_self.tolist(), y.grad_fn._saved_other.tolist(), z.grad_fn.name(),
                z.grad_fn._saved_self.tolist(), [type(n).__name__ for n, _ in (y * 2).grad_fn.next_functions][:1])

    s, t = both(prog)
    assert s == t


def test_next_functions_of_constants_are_none():
    def prog(lib):
        x = lib.tensor([1.0], requires_grad=True)
        y = x * lib.tensor([2.0])
        return [(None if n is None else n.name(), i) for n, i in y.grad_fn.next_functions]

    s, t = both(prog)
    assert s == t


def test_node_repr_as_torch():
    def prog(lib):
        x = lib.tensor([1.0], requires_grad=True)
        y = (x * 2).sum()
        nodes = [y.grad_fn, y.grad_fn.next_functions[0][0], y.grad_fn.next_functions[0][0].next_functions[0][0]]
        return [repr(n).split(" object at ")[0] for n in nodes]

    s, t = both(prog)
    assert s == t


# -- saved-tensor hooks ----------------------------------------------------------------------------------

def test_saved_tensors_hooks_reference_printout(capsys):
    def pack_hook(x):
        print("Packing", x)
        return x

    def unpack_hook(x):
        print("Unpacking", x)
        return x

    a = st.ones(5, requires_grad=True)
    b = st.ones(5, requires_grad=True) * 2
    with autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        y = a * b
    y.sum().backward()
    assert capsys.readouterr().out == (
        "Packing tensor([1., 1., 1., 1., 1.], requires_grad=True)\n"
        "Packing tensor([2., 2., 2., 2., 2.], grad_fn=<MulBackward0>)\n"
        "Unpacking tensor([1., 1., 1., 1., 1.], requires_grad=True)\n"
        "Unpacking tensor([2., 2., 2., 2., 2.], grad_fn=<MulBackward0>)\n"
    )


def test_saved_tensors_hooks_innermost_pair_and_counts_match_torch():
    def prog(lib):
        log = []
        outer = lib.autograd.graph.saved_tensors_hooks(lambda t: log.append("outer") or t, lambda t: t)
        inner = lib.autograd.graph.saved_tensors_hooks(lambda t: log.append("pack") or t,
                                                       lambda t: log.append("unpack") or t)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with outer, inner:
            y = (x.exp() * x).sin() + x  # exp saves its result, mul both, sin its input, add nothing
        y.sum().backward()
        return log, x.grad.tolist()

    s, t = both(prog)
    assert s[0] == t[0]
    np.testing.assert_allclose(s[1], t[1], rtol=1e-5)


def test_save_on_cpu_and_disable_saved_tensors_hooks():
    x = st.tensor([1.0, 2.0], requires_grad=True)
    with autograd.graph.save_on_cpu():
        y = (x * x).sum()
    y.backward()
    assert x.grad.tolist() == [2.0, 4.0]
    message = "saved tensors default hooks are disabled"
    with autograd.graph.disable_saved_tensors_hooks(message):
        with pytest.raises(RuntimeError, match=message):
            with autograd.graph.save_on_cpu():
                pass


# -- memory ---------------------------------------------------------------------------------------------

def test_saved_tensor_is_freed_after_backward():
    x = st.ones(10, requires_grad=True)
    h = x.exp()
    y = (h * h).sum()  # MulBackward0 saves h
    ref = weakref.ref(h)
    del h
    assert ref() is not None
    y.backward()
    assert ref() is None  # freed with the graph's buffers, y still alive


def test_training_steps_keep_memory_flat():
    rng = np.random.default_rng(0)
    w1 = st.tensor(rng.standard_normal((8, 16)), requires_grad=True)
    w2 = st.tensor(rng.standard_normal((16, 1)), requires_grad=True)
    x = st.tensor(rng.standard_normal((4, 8)))

    def step():
        loss = ((x @ w1).tanh() @ w2).pow(2).mean()
        loss.backward()
        with st.no_grad():
            for p in (w1, w2):
                p.sub_(p.grad * 1e-3)
                p.grad = None

    gc.collect()
    tracemalloc.start()
    try:
        for _ in range(1500):  # warm-up: allocator free lists and caches fill, then stay
            step()
        first, _ = tracemalloc.get_traced_memory()
        for _ in range(1000):
            step()
        second, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert second - first < 24 * 1024, (first, second)  # one leaked tensor per step would be > 100 KiB


def test_grad_from_two_outputs_of_one_node():
    """Two roots that are outputs of one node: the node is counted once, so the inputs are reached."""

    def run(lib):
        x = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
        v, _ = x.sort()  # sort: one node with two outputs (values, indices) ...
        g = lib.autograd.grad((v, (v * v).sum()), x, (lib.ones(3, dtype=lib.float64), None))
        u, w = (x * 2).split(2)  # ... and split: several outputs of one node, both roots
        h = lib.autograd.grad((u, w), x, (lib.ones(2, dtype=lib.float64), lib.ones(1, dtype=lib.float64)))
        return g[0].tolist(), h[0].tolist()

    assert run(st) == run(torch)

    class Pair(autograd.Function):  # a custom Function with two outputs, both roots of one grad call
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2, x * x

        @staticmethod
        def backward(ctx, g0, g1):
            (x,) = ctx.saved_tensors
            return g0 * 2 + g1 * 2 * x

    x = st.tensor([1.0, 3.0], dtype=st.float64, requires_grad=True)
    a, b = Pair.apply(x)
    (gx,) = st.autograd.grad((a, b), x, (st.ones(2, dtype=st.float64), st.ones(2, dtype=st.float64)))
    assert gx.tolist() == [4.0, 8.0]


def test_grad_fn_names_of_sum_and_pow_as_torch():
    """torch names a node by the overload that made it: sum over every dim (SumBackward0) or over given
    dims/keepdim (SumBackward1, also when the given dims are all of them); pow with a scalar exponent
    (PowBackward0), a tensor one (PowBackward1), or a Python base (PowBackward2)."""

    def names(lib):
        p = lib.ones(3, requires_grad=True)
        m = lib.ones(2, 3, requires_grad=True)
        return [p.sum().grad_fn.name(), m.sum().grad_fn.name(), m.sum(1).grad_fn.name(),
                m.sum((0, 1), keepdim=True).grad_fn.name(), p.sum(0, keepdim=True).grad_fn.name(),
                p.sum(0).grad_fn.name(), m.sum((0, 1)).grad_fn.name(), m.sum((-1, 0)).grad_fn.name(),
                lib.pow(p, 2.0).grad_fn.name(), (p ** 1).grad_fn.name(), lib.pow(p, p).grad_fn.name(),
                lib.pow(p.detach(), p).grad_fn.name(), lib.pow(2.0, p).grad_fn.name(), (3 ** p).grad_fn.name()]

    ours, theirs = both(names)
    assert ours == theirs


def test_grad_fn_names_of_rsub_as_torch():
    """A reflected subtraction is torch's rsub: RsubBackward1 with a number (``1 - x``, ``x.__rsub__(2)``,
    ``rsub(x, 2)``), RsubBackward0 with a tensor (``rsub(x, y)``); ``x - y`` and ``sub`` stay SubBackward0."""

    def names(lib):
        x = lib.ones(2, requires_grad=True)
        y = lib.ones(2, requires_grad=True)
        made = [1.0 - x, 2 - x, np.float64(2.0) - x, 1j - x, x.__rsub__(2), x.__rsub__(y), lib.rsub(x, 2),
                lib.rsub(x, 2, alpha=3), lib.rsub(x, y), lib.rsub(x, lib.tensor(2.0)), lib.tensor(2.0) - x, x - y,
                lib.sub(2, x), lib.rsub(x, y, alpha=2)]
        made[-1].sum().backward()
        return [r.grad_fn.name() for r in made], x.grad.tolist(), y.grad.tolist()

    ours, theirs = both(names)
    assert ours == theirs


def test_grad_fn_names_of_masked_fill_as_torch():
    """masked_fill is computed as a ``where`` but named as torch's: MaskedFillBackward0 with a number,
    MaskedFillBackward1 with a tensor value, in and out of place; the value's gradient is the masked sum."""

    def names(lib):
        x = lib.ones(2, 3, requires_grad=True)
        v = lib.tensor(2.0, requires_grad=True)
        m = lib.tensor([[True, False, True], [False, False, True]])
        made = [x.masked_fill(m, v), x.masked_fill(m, 2.0), lib.ones(2, 3).masked_fill(m, v),
                x.clone().masked_fill_(m, 2.0), x.clone().masked_fill_(m, v), lib.masked_fill(x, m, lib.tensor(3.0))]
        made[0].sum().backward()
        return [r.grad_fn.name() for r in made], x.grad.tolist(), v.grad.item()

    ours, theirs = both(names)
    assert ours == theirs


def test_grad_fn_names_of_view_ops_as_torch():
    """The view ops name their nodes as torch's do (a graph printer or a hook that dispatches on the name sees the
    same graph): transpose/swapaxes/mT are TransposeBackward0, not the permute they are made of."""

    def names(lib):
        x = lib.ones(2, 3, requires_grad=True)
        return [f.name() for f in (
            x.transpose(0, 1).grad_fn, x.t().grad_fn, x.T.grad_fn, x.mT.grad_fn, x.permute(1, 0).grad_fn,
            x.swapaxes(0, 1).grad_fn, x.movedim(0, 1).grad_fn, x.unsqueeze(0).grad_fn, x.squeeze().grad_fn,
            x.squeeze(0).grad_fn, x.squeeze((0, 1)).grad_fn, x.split(1)[0].grad_fn, x.split([1, 1])[1].grad_fn,
            x.chunk(2, 1)[0].grad_fn, x.unbind(0)[1].grad_fn, x.view(6).grad_fn, x.expand(2, 2, 3).grad_fn,
            x.narrow(1, 0, 2).grad_fn, x.diagonal().grad_fn)]

    ours, theirs = both(names)
    assert ours == theirs


def test_unpacked_saved_leaf_keeps_requires_grad_as_torch():
    """A Function that saves a leaf it was not given (so the leaf has no AccumulateGrad yet), under a pack
    hook that detaches: the unpacked tensor gets the saved requires_grad back, as torch's does (reading
    the accumulator's slot of the saved metadata instead of requires_grad lost it)."""

    def seen(lib):
        w = lib.tensor([2.0, 3.0], requires_grad=True)
        out = []

        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(w)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                (sw,) = ctx.saved_tensors
                out.append((sw.requires_grad, sw.is_leaf, sw.tolist()))
                return g * 2

        x = lib.tensor([1.0, 1.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
            y = F.apply(x)
        y.sum().backward()
        return out, x.grad.tolist()

    ours, theirs = both(seen)
    assert ours == theirs


def test_saved_result_unpacks_attached_for_double_backward():
    """An op that saves its own output (exp, tanh, sigmoid) unpacks it attached to the node, requiring
    grad, so a second backward goes through it: the second derivatives are torch's."""

    def run(lib):
        x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = x.exp() + x.tanh() + x.sigmoid()
        saved = y.grad_fn.next_functions[0][0].next_functions[0][0]._saved_result  # exp's output
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (g2,) = lib.autograd.grad(g.sum(), x)
        return saved.requires_grad, [round(v, 5) for v in g.tolist()], [round(v, 5) for v in g2.tolist()]

    ours, theirs = both(run)
    assert ours == theirs


@pytest.mark.parametrize("anomaly", [False, True])
def test_modified_saved_tensor_hint_follows_anomaly_mode(anomaly):
    """The version-mismatch error ends with torch's hint for the mode: enable anomaly detection, or (with it
    on) look at the backtrace above."""
    hints = {False: "Hint: enable anomaly detection to find the operation that failed to compute its gradient",
             True: "Hint: the backtrace further above shows the operation that failed to compute its gradient."}

    def message(lib):
        x = lib.ones(3, requires_grad=True)
        with lib.autograd.set_detect_anomaly(anomaly):
            y = x.exp()
            y.add_(1)
            with pytest.raises(RuntimeError) as info:
                y.sum().backward()
        return str(info.value)

    for text in both(message):
        assert "is at version 1; expected version 0 instead." in text
        assert hints[anomaly] in text and hints[not anomaly] not in text


def test_where_saves_its_condition_whichever_branch_requires_grad():
    """where saves its condition whenever it records a node (not only when `input` requires grad): a
    condition changed in place before backward is an error in torch, not a silently wrong gradient."""

    def run(lib):
        c, a, b = lib.tensor([True, False, True]), lib.zeros(3), lib.ones(3, requires_grad=True)
        z = lib.where(c, a, b)
        c.logical_not_()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()
        return b.grad

    assert both(run) == (None, None)


def test_grad_layout_of_a_non_dense_leaf_as_torch():
    """.grad takes a dense leaf's strides and is row-major for a leaf that is not dense (every other row of
    a transpose): the density test must look at every dim of size above 1."""

    def strides(lib):
        sparse = lib.zeros(4, 6).t()[::2].detach().requires_grad_()
        dense = lib.zeros(2, 3).t().detach().requires_grad_()
        ((sparse * 2).sum() + (dense * 2).sum()).backward()
        return sparse.stride(), sparse.grad.stride(), dense.grad.stride()

    ours, theirs = both(strides)
    assert ours == theirs


def test_anomaly_mode_warns_where_a_backward_fails():
    """In anomaly mode an error raised by a backward function is re-raised after torch's warning that names
    the node and shows the forward traceback; outside anomaly mode only the error comes."""
    import warnings

    def run(lib, anomaly):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                raise ValueError("boom")

        x = lib.ones(2, requires_grad=True)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            with lib.autograd.set_detect_anomaly(anomaly):
                y = F.apply(x).sum()
                with pytest.raises(ValueError, match="boom"):
                    y.backward()
        return [str(w.message).split(".")[0] for w in seen if "Error detected" in str(w.message)]

    for anomaly in (False, True):
        ours, theirs = run(st, anomaly), run(torch, anomaly)
        assert ours == theirs == (["Error detected in FBackward"] if anomaly else [])


def test_calling_a_node_returns_its_input_gradients_as_torch():
    """`grad_fn(g)` runs the node: one gradient for a node with one input edge, a tuple for several. (A
    product with a Python scalar differs: torch keeps an edge for the scalar and returns a pair, shapetorch
    records one edge.)"""

    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0, 4.0], requires_grad=True)
        one = x.exp().grad_fn(lib.ones(2))
        two = (x * w).grad_fn(lib.tensor([1.0, -1.0]))
        return isinstance(one, tuple), [round(v, 5) for v in one.tolist()], [t.tolist() for t in two]

    ours, theirs = both(run)
    assert ours == theirs


def test_every_primitive_refuses_tensors_on_two_devices():
    """The primitive call is the one place that compares the devices of an op's tensors (the ops do not):
    a slip there let `cpu * webgpu` through with a wrong answer. torch refuses mixed devices with a
    RuntimeError. Needs a WebGPU adapter."""
    need_webgpu()
    a, b = st.ones(2), st.ones(2, device="webgpu")
    for call in (lambda: a + b, lambda: st.mul(a, b), lambda: st.where(a > 0, a, b), lambda: a.exp() * b.exp()):
        with pytest.raises(RuntimeError, match="expected all tensors to be on the same device") as info:
            call()
        assert info.value.code == "device_error_requires"


def test_the_slow_path_is_removed_when_its_last_user_leaves():
    """Inference mode (like the profiler and forward AD) routes primitive calls through the slow path while
    it is on; leaving it restores the direct call (a counter that never came down kept every later call
    on the slow path)."""
    from shapetorch._engine.primitives import Prim

    direct = Prim.__dict__["__call__"]
    with st.inference_mode():
        assert Prim.__dict__["__call__"] is not direct
        with st.inference_mode():
            (st.ones(2) + 1).sum()
        assert Prim.__dict__["__call__"] is not direct
    assert Prim.__dict__["__call__"] is direct


def test_a_device_gradient_nothing_else_holds_becomes_grad_without_a_copy():
    """NOTE [gradient stealing] in the engine: on WebGPU a leaf's gradient that nothing else can reach
    becomes `.grad` as it is (one dispatch fewer than a copy), and one that the user holds (here through a
    hook) is copied, so that `.grad` never shares its buffer with the user's tensor. Needs a WebGPU adapter."""
    need_webgpu()

    def backward(hold):
        x = st.ones(1024, device="webgpu", requires_grad=True)
        held = []
        if hold:
            x.register_hook(held.append)
        y = (x * 3.0).sum()
        before = st.memory_stats()["num_dispatches"]
        y.backward()
        dispatches = st.memory_stats()["num_dispatches"] - before
        assert x.grad.cpu().tolist() == [3.0] * 1024
        if hold:
            assert held[0]._data.st is not x.grad._data.st
        return dispatches

    backward(False)  # the kernels compiled once
    assert backward(False) == backward(True) - 1


# -- in-place ops on a tensor that does not require grad, with an operand that does -------------------------

_INPLACE_WITH_GRAD_OPERAND = {
    # x (no grad) written in place with w (requires grad), then written again: what torch saved must hold
    "mul_ twice": lambda lib, x, w: (x.mul_(w), x.mul_(2), x)[-1],
    "itruediv then add_": lambda lib, x, w: (x.__itruediv__(w), x.add_(1), x)[-1],
    "addcmul_": lambda lib, x, w: (x.addcmul_(w, w), x.mul_(3), x)[-1],
    "lerp_": lambda lib, x, w: (x.lerp_(w, 0.3), x.mul_(3), x)[-1],
    "clamp_ with a tensor min": lambda lib, x, w: (x.clamp_(min=w), x.mul_(3), x)[-1],
    "atan2_": lambda lib, x, w: (x.atan2_(w), x.mul_(3), x)[-1],
    "fmod_": lambda lib, x, w: (x.fmod_(w), x.mul_(3), x)[-1],
    "index_add_ twice": lambda lib, x, w: (x.index_add_(0, lib.tensor([0, 1]), w[:2] * 2),
                                           x.index_add_(0, lib.tensor([1, 2]), w[1:] * 3), x)[-1],
    "copy_ of a leaf": lambda lib, x, w: (x.copy_(w), x * 3)[-1],
    "copy_ then written": lambda lib, x, w: (x.copy_(w), x.mul_(x), x)[-1],
    "exp_ then written": lambda lib, x, w: (x.mul_(w), x.exp_(), x.mul_(2), x)[-1],
    "setitem then written": lambda lib, x, w: (x.__setitem__(slice(0, 2), w[:2] * 2), x.mul_(x), x)[-1],
    "scatter_add_ then written": lambda lib, x, w: (x.scatter_add_(0, lib.tensor([0, 1]), w[:2]), x.mul_(x), x)[-1],
    # hypot saves its result (torch's backward is grad * input / result): a second hypot_ writes it again
    "hypot_ twice": lambda lib, x, w: (x.hypot_(w), x.hypot_(w), x)[-1],
    "hypot_ then written": lambda lib, x, w: (x.hypot_(w), x.add_(1), x)[-1],
    "pow_ twice": lambda lib, x, w: (x.mul_(w), x.pow_(2), x.pow_(3), x)[-1],
    "pow_ of a saved input": lambda lib, x, w: (x.mul_(w), x * x, x.pow_(2))[1],
    "pow_ tensor exponent twice": lambda lib, x, w: (x.pow_(w), x.pow_(w), x)[-1],
}


@pytest.mark.parametrize("case", sorted(_INPLACE_WITH_GRAD_OPERAND))
def test_inplace_on_plain_tensor_with_grad_operand_matches_torch(case):
    """Found by a mixture-of-experts program: ``out = zeros(); out.index_add_(..., expert(x))`` twice raised
    a modified-saved-tensor error (the first node saved ``out`` itself), and ``x.copy_(w)`` made ``x`` a leaf,
    cutting ``w`` off from its gradient."""

    def run(lib):
        w = lib.tensor([1.5, -2.0, 0.5], requires_grad=True)
        x = lib.tensor([1.0, 2.0, 3.0])
        try:
            _INPLACE_WITH_GRAD_OPERAND[case](lib, x, w).sum().backward()
        except RuntimeError as e:
            return "raised", "modified by an inplace operation" in str(e)
        return np.asarray(w.grad.detach().numpy()), x.grad_fn is not None

    ours, theirs = both(run)
    if isinstance(theirs[0], str):
        assert ours == theirs
    else:
        assert not isinstance(ours[0], str), ours
        np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
        assert ours[1] == theirs[1]
