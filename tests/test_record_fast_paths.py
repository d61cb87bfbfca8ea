"""The per-call shortcuts of the op layer and the engine (issue 17's per-op and per-node round): ``autograd.grad``'s
walk running uncaptured nodes bare, its scalar seed, and the verdicts cached per call signature (matmul's shapes,
the views' rules). Each shortcut must give what the general path gives: the same values, the same graph, the same
errors, however the calls before it went (a stale verdict would show as a wrong answer or a missing error on a
later call with other shapes, dtypes, grad requirements or grad mode). Each against torch running the same code."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import shapetorch as st
from shapetorch._rules import matmul as RM
from shapetorch.ops._common import check


def arr(t):
    return np.asarray(t.detach().numpy())


def _same(ours, theirs, rtol=1e-6):
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert (o is None) == (t is None)
        if o is not None:
            assert o.dtype.name.removeprefix("shapetorch.") == str(t.dtype).removeprefix("torch."), (o.dtype, t.dtype)
            np.testing.assert_allclose(arr(o), arr(t), rtol=rtol)


# -- autograd.grad: captured and uncaptured nodes ----------------------------------------------------------------------

def _grad_of_intermediates(lib):
    """grad w.r.t. a leaf, an intermediate whose node also leads further to the leaf, and an intermediate made of
    number-only ops: the captured nodes take the general step, the others run bare."""
    a = lib.tensor([[0.5, -1.5], [2.0, 0.25]], requires_grad=True)
    b = lib.tensor([[1.0, 2.0], [3.0, -4.0]], requires_grad=True)
    c = a * b            # captured (an input below), and its node leads on to a and b
    d = c.exp() * 2.0    # not captured
    e = (d @ b).tanh()   # not captured
    loss = (e * c).sum()
    return lib.autograd.grad(loss, [c, a, d], retain_graph=True)


def test_grad_captures_intermediates_and_runs_the_rest():
    _same(_grad_of_intermediates(st), _grad_of_intermediates(torch))


def _grad_with_hooks(lib):
    log = []
    a = lib.tensor([0.5, 1.5, -2.0], requires_grad=True)
    b = a.sin()
    c = b * a
    d = c.exp()
    b.grad_fn.register_prehook(lambda g: log.append("b pre"))
    d.grad_fn.register_hook(lambda gi, go: log.append("d post"))
    c.register_hook(lambda g: g * 3)  # a tensor hook on an uncaptured node's output
    (g,) = lib.autograd.grad(d.sum(), a)
    return log, g


def test_grad_runs_node_and_tensor_hooks_of_uncaptured_nodes():
    (log, g), (tlog, tg) = _grad_with_hooks(st), _grad_with_hooks(torch)
    assert log == tlog
    _same([g], [tg])


def test_grad_of_a_scalar_loss_as_the_general_path():
    """The scalar seed: float16 and float64 losses, a 1-element non-0-d one, create_graph, and the errors of the
    roots the shortcut must not take (an integer root, a root that does not require grad)."""
    for lib_pair in ((st, torch),):
        out = []
        for lib in lib_pair:
            res = []
            for dt in ("float16", "float64"):
                a = lib.tensor([[0.5, 2.0]], dtype=getattr(lib, dt), requires_grad=True)
                loss = (a * a).sum().reshape(1, 1)  # one element, 2-d
                res += list(lib.autograd.grad(loss, a, create_graph=True))
                assert res[-1].requires_grad
            out.append(res)
        _same(out[0], out[1])
    a = st.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="does not require grad"):
        st.autograd.grad(st.tensor(1.0), a)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        st.autograd.grad(a * 2, a)


# -- views of tensors that record nothing (NOTE [untracked view]) ------------------------------------------------------

def _views(lib, x):
    """Every view op with the untracked shortcut, on one input."""
    return [x.reshape(2, 8), x.reshape(2, 8).t(), x.mT, x.transpose(0, 1), x.permute(1, 0), x.unsqueeze(1),
            x.unsqueeze(0).squeeze(0), x.reshape(1, 16).squeeze()]


def test_untracked_views_are_views_as_torch():
    """Values, shapes, strides and shared memory (a write through the base shows in each view), for an input that
    does not require grad, one that does (the general path, with its nodes' names), and one under no_grad."""
    for requires_grad, no_grad in ((False, False), (True, False), (True, True)):
        out = {}
        for lib in (st, torch):
            x = lib.arange(16.0).reshape(4, 4)
            if requires_grad:
                x.requires_grad_()
            if no_grad:
                with lib.no_grad():
                    vs = _views(lib, x)
            else:
                vs = _views(lib, x)
            names = [v.grad_fn.name() if v.grad_fn is not None else None for v in vs]
            flags = [v.requires_grad for v in vs]
            strides = [v.stride() for v in vs]
            with lib.no_grad():
                x.mul_(2)  # through the base: every view sees it
            out[lib.__name__] = (names, flags, strides, [arr(v).copy() for v in vs], [v._version for v in vs])
        o, t = out["shapetorch"], out["torch"]
        assert o[0] == t[0] and o[1] == t[1] and o[2] == t[2] and o[4] == t[4], (requires_grad, no_grad, o[:3], t[:3])
        for a, b in zip(o[3], t[3]):
            np.testing.assert_array_equal(a, b)


def test_untracked_view_of_a_copy_is_no_view():
    """reshape of a transposed tensor copies: the result shares no memory and has no base, as on the general path."""
    x = st.arange(6.0).reshape(2, 3).t()
    y = x.reshape(6)
    assert y._base is None
    with st.no_grad():
        x.add_(1)
    np.testing.assert_array_equal(arr(y), [0.0, 3.0, 1.0, 4.0, 2.0, 5.0])


def test_views_under_the_slow_path():
    """The profiler, forward-mode AD and inference mode see every primitive call: a view made under them takes the
    primitive (its event, its tangent, its inference mark), as torch's."""
    x = st.rand(4, 4)
    with st.autograd.profiler.profile() as prof:
        x.reshape(2, 8).t()
        x.mT.unsqueeze(0)
    names = [e.name for e in prof.function_events]
    assert sum("reshape" in n or "view" in n for n in names) >= 1 and any("transpose" in n or "permute" in n
                                                                            or n == "aten::t" for n in names), names
    fwAD = st.autograd.forward_ad
    tx = torch.rand(4, 4)
    tt = torch.rand(4, 4)
    with fwAD.dual_level():
        dual = fwAD.make_dual(st.tensor(tx.numpy()), st.tensor(tt.numpy()))
        tangent = fwAD.unpack_dual(dual.reshape(2, 8).t()).tangent
    with torch.autograd.forward_ad.dual_level():
        tdual = torch.autograd.forward_ad.make_dual(tx, tt)
        ttangent = torch.autograd.forward_ad.unpack_dual(tdual.reshape(2, 8).t()).tangent
    np.testing.assert_array_equal(arr(tangent), arr(ttangent))
    for lib in (st, torch):
        with lib.inference_mode():
            y = lib.rand(4, 4)
            v = y.reshape(2, 8).t()
        assert v.is_inference(), lib.__name__


def test_a_registered_view_kernel_is_never_bypassed():
    """A kernel registered for the view primitives runs on the shortcut's inputs too."""
    calls = []
    x = st.rand(4, 4)
    handles = [st.registry.register_forward(name, "cpu", lambda a, **p: calls.append(1) or (
        a.reshape(p["shape"]) if "shape" in p else a.transpose(p["axes"]))) for name in ("reshape", "permute")]
    try:
        x.reshape(2, 8).t()
        x.mT
        x.unsqueeze(0)
    finally:
        for h in handles:
            h.unregister()
    assert len(calls) == 4
    x.reshape(2, 8).t()
    assert len(calls) == 4  # (removed: the op's own kernel again)


# -- matmul's verdict for two matrices -----------------------------------------------------------------------------

@pytest.mark.parametrize("shapes", [((4, 3), (3, 5)), ((4, 3), (4, 3)), ((3,), (3, 2)), ((2, 3), (3,)),
                                    ((2, 4, 3), (3, 5)), ((2, 4, 3), (4, 5)), ((0, 3), (3, 0)), ((4, 3), (2, 3, 5))])
def test_matmul_after_a_valid_call_checks_each_call(shapes):
    """Two matrices whose sizes meet skip the rule's cache; every other pair still gets the rule's verdict, torch's
    exception class and message, whatever was called before (the valid 2-D call runs first)."""
    (sa, sb) = shapes
    results = []
    for lib in (st, torch):
        lib.ones(4, 3) @ lib.ones(3, 5)
        a, b = lib.ones(*sa), lib.ones(*sb)
        try:
            results.append(("ok", arr(a @ b), arr(lib.matmul(a, b))))
        except Exception as e:  # noqa: BLE001  (the class is compared with torch's)
            results.append((type(e).__mro__, str(e)))
    ours, theirs = results
    if ours[0] == "ok" or theirs[0] == "ok":
        assert ours[0] == theirs[0] == "ok", (ours, theirs)
        np.testing.assert_array_equal(ours[1], theirs[1])
        np.testing.assert_array_equal(ours[2], theirs[2])
    else:
        assert issubclass(ours[0][0], theirs[0][0]), (ours, theirs)
        with pytest.raises(Exception) as rule:  # noqa: PT011  (the rule's own error, whichever it is)
            check(RM.matmul_shape, sa, sb, op="matmul")
        assert ours[1] == str(rule.value)


# -- sum and matmul of tensors that record nothing (NOTE [untracked call]) -------------------------------------------

def _calls(lib, a, b):
    return [a.sum(), a @ b, lib.matmul(a, b), a.sum(keepdim=True) if lib is st else a.sum((0, 1), keepdim=True)]


@pytest.mark.parametrize("pattern", ["none", "a", "b", "both", "no_grad", "float64", "int"])
def test_sum_and_matmul_record_as_torch_whatever_came_before(pattern):
    """The same calls with each requires-grad pattern, in grad mode and under no_grad, in float32, float64 and
    integers, one after another in one process: the results, dtypes, nodes and gradients are torch's (a shortcut
    that stuck to the first call's verdict would drop a node or keep a wrong dtype)."""
    out = {}
    for lib in (st, torch):
        results = []
        for pat in ("none", pattern, "none", pattern):
            dt = {"float64": lib.float64, "int": lib.int64}.get(pat, lib.float32)
            a = lib.arange(12, dtype=dt).reshape(3, 4) - 5
            b = lib.arange(8, dtype=dt).reshape(4, 2) * 2
            if pat in ("a", "both", "no_grad"):
                a.requires_grad_()
            if pat in ("b", "both"):
                b.requires_grad_()
            if pat == "no_grad":
                with lib.no_grad():
                    cs = _calls(lib, a, b)
            else:
                cs = _calls(lib, a, b)
            for c in cs:
                results.append((arr(c), str(c.dtype).split(".")[-1], c.requires_grad,
                                c.grad_fn is not None))
            if cs[1].requires_grad:
                (cs[0] + cs[1].sum() + cs[2].sum()).backward() if cs[0].requires_grad else cs[1].sum().backward()
                results.append(tuple(None if t.grad is None else arr(t.grad) for t in (a, b)))
        out[lib.__name__] = results
    for o, t in zip(out["shapetorch"], out["torch"], strict=True):
        for x, y in zip(o, t, strict=True):
            if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
                np.testing.assert_array_equal(x, y)
            else:
                assert x == y, (o, t)


def test_sum_and_matmul_under_the_slow_path_and_registered_kernels():
    a, b = st.rand(3, 4), st.rand(4, 2)
    with st.autograd.profiler.profile() as prof:
        a.sum()
        a @ b
    names = [e.name for e in prof.function_events]
    assert any("sum" in n for n in names) and any("mm" in n or "matmul" in n for n in names), names
    with st.inference_mode():
        x, y = st.rand(3, 4), st.rand(4, 2)
        assert x.sum().is_inference() and (x @ y).is_inference()
    fwAD = st.autograd.forward_ad
    with fwAD.dual_level():
        d = fwAD.make_dual(a, st.ones(3, 4))
        assert fwAD.unpack_dual(d.sum()).tangent.item() == 12.0
        np.testing.assert_allclose(arr(fwAD.unpack_dual(d @ b).tangent), arr(st.ones(3, 4) @ b), rtol=1e-6)
    calls = []
    handles = [st.registry.register_forward("sum", "cpu", lambda x, axis, keepdims: calls.append("sum") or
                                            np.add.reduce(x, axis, None, None, keepdims)),
               st.registry.register_forward("matmul", "cpu", lambda x, y: calls.append("mm") or np.matmul(x, y))]
    try:
        a.sum()
        a @ b
    finally:
        for h in handles:
            h.unregister()
    assert calls == ["sum", "mm"]


# -- the permute and reduction dims verdicts cached per signature -----------------------------------------------------

_DIM_CALLS = [
    lambda x: x.sum(1), lambda x: x.sum(True), lambda x: x.sum([1]), lambda x: x.sum((1,)), lambda x: x.sum(-1),
    lambda x: x.sum((0, 0)), lambda x: x.sum([0, -2]), lambda x: x.sum(5), lambda x: x.sum((1, 3)),
    lambda x: x.mean((0, 1)), lambda x: x.amax([1], keepdim=True), lambda x: x.sum(()),
    lambda x: x.permute(1, 0), lambda x: x.permute((1, 0)), lambda x: x.permute([-1, 0]), lambda x: x.permute(0, 0),
    lambda x: x.permute(2, 0), lambda x: x.permute(1, 0, 2), lambda x: x.permute(True, 0),
    lambda x: x.reshape(-1), lambda x: x.reshape([1, -1]), lambda x: x.reshape(True, -1), lambda x: x.reshape(1.0, -1),
]


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (3, 4), ()])
def test_cached_dims_verdicts_follow_each_call(shape):
    """The same dims on tensors of another rank, a bool among ints, repeated and out-of-range dims, one call after
    another: each result or exception class is torch's (a verdict cached for an earlier call, or 1's for True,
    would give a wrong shape or a missing error)."""
    results = {}
    for lib in (st, torch):
        x = lib.arange(float(np.prod(shape))).reshape(shape)
        out = []
        for f in _DIM_CALLS:
            try:
                out.append(arr(f(x)))
            except Exception as e:  # noqa: BLE001  (the class is compared with torch's)
                out.append(type(e))
        results[lib.__name__] = out
    for i, (o, t) in enumerate(zip(results["shapetorch"], results["torch"], strict=True)):
        if isinstance(o, np.ndarray) or isinstance(t, np.ndarray):
            assert isinstance(o, np.ndarray) and isinstance(t, np.ndarray), (i, o, t)
            np.testing.assert_array_equal(o, t)
        else:
            assert issubclass(o, t), (i, o, t)


def test_the_shortcuts_are_the_cpus_only(monkeypatch):
    """A device other than the CPU whose tensors hold NumPy arrays (one registered with the NumPy backend) takes the
    general call: an op without a kernel for it raises the registry's error, as on any device, and a kernel
    registered for it is the one that runs, never the CPU's kernel through the untracked shortcut."""
    from shapetorch._device import register_device, unregister_device
    from shapetorch.backends import numpy_backend

    register_device("fakedev", lambda: numpy_backend)
    try:
        a, b = st.arange(12.0).reshape(3, 4).to("fakedev"), st.ones(4, 2).to("fakedev")
        assert type(a._data) is np.ndarray and a.device.type == "fakedev"
        for call in (a.sum, lambda: a @ b, lambda: a.reshape(4, 3), lambda: a.permute(1, 0)):
            with pytest.raises(st.RegistryError, match="no kernel for device fakedev"):
                call()
        for x, y in ((a, b.to("cpu")), (a.to("cpu"), b)):  # (torch: RuntimeError, expected the same device)
            with pytest.raises(st.DeviceError, match="same device"):
                x @ y
        calls = []
        handles = [st.registry.register_forward("sum", "fakedev", lambda x, axis, keepdims: calls.append("sum") or
                                                np.add.reduce(x, axis, None, None, keepdims)),
                   st.registry.register_forward("matmul", "fakedev", lambda x, y: calls.append("mm") or x @ y)]
        try:
            s, m = a.sum(), a @ b
        finally:
            for h in handles:
                h.unregister()
        assert calls == ["sum", "mm"] and s.device.type == m.device.type == "fakedev"
        assert s.item() == 66.0 and m.to("cpu").tolist() == [[6.0, 6.0], [22.0, 22.0], [38.0, 38.0]]
    finally:
        unregister_device("fakedev")


def test_untracked_sum_and_matmul_take_the_shortcut(monkeypatch):
    """NOTE [untracked call]: on the CPU, with nothing to record, sum and matmul never enter ``Prim.__call__`` (a
    shortcut whose test always failed would give the same values through the general call, and only the time
    would show it)."""
    import shapetorch._engine.primitives as P

    seen = []
    call = P.Prim.__call__

    def logged(self, *args, **params):
        seen.append(self.name)
        return call(self, *args, **params)

    monkeypatch.setattr(P.Prim, "__call__", logged)
    a, b = st.rand(3, 4), st.rand(4, 2)
    s, m = a.sum(), a @ b
    assert seen == [] and s.grad_fn is None and m.grad_fn is None
    a.requires_grad_()
    s, m = a.sum(), a @ b
    # with a node to record, neither takes the shortcut: sum enters the general call, and matmul the two-tensor
    # direct call (``Prim.call2``, which records as the general call does)
    assert seen == ["sum"] and s.grad_fn is not None and m.grad_fn is not None
