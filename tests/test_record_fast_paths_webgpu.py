"""The op layer's shortcuts for calls that record nothing (NOTE [untracked call], NOTE [untracked view]) on WebGPU
tensors, as ``test_record_fast_paths`` tests them on the CPU: each view, sum and matmul of a tensor that does not
require grad (every transpose, reshape, expand and sum of a first-order backward) calls the device's kernel
directly. The result must be the general path's, field by field (its data's layout, its base, its flags, no node),
torch's in values and view semantics, and a kernel registered for the device must still be the one that runs.
Skipped without a WebGPU adapter unless SHAPETORCH_REQUIRE_WEBGPU=1."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import shapetorch as st
from shapetorch.ops import matmul as M
from shapetorch.ops import reduction as R
from shapetorch.ops import views as V
from test_webgpu import webgpu  # noqa: F401  (the module fixture: skip or fail without an adapter)

DEV = "webgpu"


def _views(x):
    """Every view op with the untracked shortcut, on one 4x4 input."""
    return [x.reshape(2, 8), x.reshape(2, 8).t(), x.mT, x.transpose(0, 1), x.permute(1, 0), x.unsqueeze(1),
            x.unsqueeze(0).squeeze(0), x.reshape(1, 16).squeeze(), x.sum(0, keepdim=True).expand(4, 4)]


def _layout(t):
    d = t._data
    return (tuple(d.shape), tuple(d.stride), d.offset, d.dtype, getattr(d, "st", None))


def _fields(ts):
    """What the next op and the engine read of each result (its node by name: two calls make two nodes)."""
    return [(_layout(t), t._device, t._requires_grad, None if t._grad_fn is None else t._grad_fn.name(), t._version)
            for t in ts]


def _general(monkeypatch):
    """The general ``Prim.__call__`` path for the calls under test: no shortcut kernel is found."""
    for mod in (V, R):
        monkeypatch.setattr(mod, "untracked_kernel", lambda prim, input: None)


@pytest.mark.parametrize("mode", ["plain", "no_grad", "backward"])
def test_untracked_views_make_what_the_general_path_makes(mode, monkeypatch):
    """The same views through the shortcut and through ``Prim.__call__``: the same layout over the same buffer, the
    same base (the tensor they view), flags, version and no node; under no_grad of a tensor that requires grad too."""
    src = np.arange(16.0, dtype=np.float32).reshape(4, 4)
    x = st.tensor(src, device=DEV, requires_grad=mode != "plain")

    def run():
        if mode == "no_grad":
            with st.no_grad():
                vs = _views(x)
        elif mode == "backward":  # inside a first-order backward: the gradient records nothing
            got = []
            y = x * 1.0
            y.register_hook(lambda g: got.extend(_views(g)))
            y.sum().backward()
            x.grad = None
            vs = got
        else:
            vs = _views(x)
        return vs, [None if v._base is None else v._base is x or v._base._data.st is v._data.st for v in vs]

    fast, fast_bases = run()
    with monkeypatch.context() as m:
        _general(m)
        slow, slow_bases = run()
    assert fast_bases == slow_bases and all(b is not None for b in fast_bases)
    for f, s in zip(_fields(fast), _fields(slow), strict=True):
        assert f[1:] == s[1:] and f[0][:4] == s[0][:4], (f, s)
    for f, s in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(f.detach().cpu().numpy(), s.detach().cpu().numpy())


def test_untracked_views_are_views_as_torch():
    """Values, shapes, strides and shared memory: a write through the base shows in each view, as torch's."""
    out = {}
    for lib, dev in ((st, DEV), (torch, "cpu")):
        x = lib.arange(16.0, device=dev).reshape(4, 4)
        vs = _views(x)[:-1]  # (the expand views the sum, not x)
        strides = [v.stride() for v in vs]
        with lib.no_grad():
            x.mul_(2)
        out[lib.__name__] = (strides, [v.requires_grad for v in vs], [v.cpu().numpy().copy() for v in vs])
    o, t = out["shapetorch"], out["torch"]
    assert o[0] == t[0] and o[1] == t[1]
    for a, b in zip(o[2], t[2], strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_registered_webgpu_kernel_is_never_bypassed():
    """A kernel registered for the device runs on the shortcut's inputs too, given its params by keyword as the
    general path gives them (a keyword-only parameter would refuse a positional call)."""
    calls = []
    x = st.rand(4, 4, device=DEV)

    def reshape(a, *, shape):
        calls.append("reshape")
        return before_reshape(a, shape=shape)

    def total(a, *, axis, keepdims):
        calls.append("sum")
        return before_sum(a, axis=axis, keepdims=keepdims)

    before_reshape = V._RESHAPE.kernels[DEV]
    before_sum = R._SUM.kernels[DEV]
    handles = [st.registry.register_forward("reshape", DEV, reshape), st.registry.register_forward("sum", DEV, total)]
    try:
        y = x.reshape(2, 8)
        s = x.sum(1)
    finally:
        for h in handles:
            h.unregister()
    assert calls == ["reshape", "sum"]
    np.testing.assert_allclose(y.cpu().numpy(), x.cpu().numpy().reshape(2, 8))
    np.testing.assert_allclose(s.cpu().numpy(), x.cpu().numpy().sum(1), rtol=1e-6)


@pytest.mark.parametrize("pattern", ["none", "a", "b", "both", "no_grad"])
def test_sum_and_matmul_record_as_torch_whatever_came_before(pattern, monkeypatch):
    """Sums (all dims, given dims) and products with each requires-grad pattern, one after another: the values,
    flags, nodes and gradients are torch's (a shortcut that stuck to an earlier call's verdict would drop a node), and
    the untracked results have the general path's fields."""
    rng = np.random.default_rng(0)
    an, bn = rng.normal(size=(3, 4)).astype(np.float32), rng.normal(size=(4, 2)).astype(np.float32)
    out = {}
    for lib, dev in ((st, DEV), (torch, "cpu")):
        results = []
        for pat in ("none", pattern, "none", pattern):
            a = lib.tensor(an, device=dev, requires_grad=pat in ("a", "both", "no_grad"))
            b = lib.tensor(bn, device=dev, requires_grad=pat in ("b", "both"))
            if pat == "no_grad":
                with lib.no_grad():
                    cs = [a.sum(), a.sum(1, keepdim=True), a @ b, lib.matmul(a, b)]
            else:
                cs = [a.sum(), a.sum(1, keepdim=True), a @ b, lib.matmul(a, b)]
            results += [(c.detach().cpu().numpy(), c.requires_grad, c.grad_fn is not None) for c in cs]
            if cs[2].requires_grad:
                (cs[1].sum() + cs[2].sum() * 2 + cs[3].sum()).backward()
                results.append(tuple(None if t.grad is None else t.grad.cpu().numpy() for t in (a, b)))
            if lib is st and pat != "none" and not cs[0].requires_grad:
                fast = _fields(cs)
                with monkeypatch.context() as m:
                    _general(m)
                    m.setattr(M, "PLAIN_TYPES", ())
                    slow = _fields([a.sum(), a.sum(1, keepdim=True), a @ b, lib.matmul(a, b)]) \
                        if pat != "no_grad" else None
                if slow is not None:
                    assert [f[1:] for f in fast] == [s[1:] for s in slow]
                    assert [f[0][:4] for f in fast] == [s[0][:4] for s in slow]
        out[lib.__name__] = results
    for o, t in zip(out["shapetorch"], out["torch"], strict=True):
        for x, y in zip(o, t, strict=True):
            if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
                np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)
            else:
                assert x == y, (o, t)


def test_broadcast_gradients_are_summed_back_as_torchs():
    """The engine sums a broadcast gradient back to its input's shape with a sum over dims (an untracked call in a
    first-order backward): the gradients of a bias added along rows and of a (1, n) factor are torch's."""
    rng = np.random.default_rng(1)
    xn, bn, wn = (rng.normal(size=s).astype(np.float32) for s in ((5, 3), (3,), (1, 3)))
    grads = {}
    for lib, dev in ((st, DEV), (torch, "cpu")):
        x, b, w = (lib.tensor(v, device=dev, requires_grad=True) for v in (xn, bn, wn))
        ((x * w + b) ** 2).sum().backward()
        grads[lib.__name__] = [t.grad.cpu().numpy() for t in (x, b, w)]
    for o, t in zip(grads["shapetorch"], grads["torch"], strict=True):
        np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-6)
