"""NOTE [array vjp]: a first-order backward computes a linear layer's gradients (``_matmul_vjp`` of a matrix or a
stack of rows times a matrix) on the arrays, by the device's kernels. The gradients must be the ops' path's bit for
bit, torch's in value, in the layout the ops' path gives (a transposed weight's gradient a view of its product,
which then becomes ``.grad`` uncopied), and every case the shortcut refuses (create_graph, autocast, a gradient of
another dtype, an empty operand) must take the ops' path, with its nodes and errors. The same for the engine's sum
of a bias's gradient by the sum kernel. On WebGPU too, where it runs (``DEVICES``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import shapetorch as st
from shapetorch.ops import matmul as M
from test_webgpu import need_webgpu

SHAPES = [(5, 4), (2, 3, 4), (2, 1, 3, 4)]


DEVICES = ["cpu", "webgpu"]


def _need(dev: str) -> None:
    if dev == "webgpu":
        need_webgpu()


def _grads(shape, transposed, bias, dev, needs=(True, True)):
    """x @ W^T (+ b) on ``dev``: the loss's gradients of x, W (and b) as NumPy arrays, and W.grad's strides."""
    rng = np.random.default_rng(0)
    x = st.tensor(rng.normal(size=shape).astype(np.float32), device=dev, requires_grad=needs[0])
    w0 = rng.normal(size=(6, 4)).astype(np.float32)
    w = st.tensor(w0 if transposed else w0.T.copy(), device=dev, requires_grad=needs[1])
    b = st.tensor(rng.normal(size=6).astype(np.float32), device=dev, requires_grad=True)
    weight = w.t() if transposed else w
    out = (st.nn.functional.linear(x, w, b) if transposed else x @ weight + b) if bias else x @ weight
    (out * st.tensor(rng.normal(size=out.shape).astype(np.float32), device=dev)).sum().backward()
    g = [t.grad.cpu().numpy() if t.grad is not None else None for t in (x, w, b)]
    return g, (w.grad._data.strides if dev == "cpu" and w.grad is not None else None)


def _torch_grads(shape, transposed, bias, needs=(True, True)):
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.normal(size=shape).astype(np.float32), requires_grad=needs[0])
    w0 = rng.normal(size=(6, 4)).astype(np.float32)
    w = torch.tensor(w0 if transposed else w0.T.copy(), requires_grad=needs[1])
    b = torch.tensor(rng.normal(size=6).astype(np.float32), requires_grad=True)
    weight = w.t() if transposed else w
    out = x @ weight + b if bias else x @ weight
    (out * torch.tensor(rng.normal(size=tuple(out.shape)).astype(np.float32))).sum().backward()
    return [t.grad.numpy() if t.grad is not None else None for t in (x, w, b)]


def _ops_path(monkeypatch):
    monkeypatch.setattr(M, "_linear_vjp_arrays", lambda g, a, b: None)


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("needs", [(True, True), (False, True), (True, False)])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("transposed", [True, False])
@pytest.mark.parametrize("shape", SHAPES)
def test_linear_gradients_are_the_ops_path_bit_for_bit_and_torch(shape, transposed, bias, needs, dev, monkeypatch):
    _need(dev)
    calls = []
    fast = M._linear_vjp_arrays
    monkeypatch.setattr(M, "_linear_vjp_arrays", lambda g, a, b: calls.append(1) or fast(g, a, b))
    ours, strides = _grads(shape, transposed, bias, dev, needs)
    assert calls  # the shortcut was asked (and it serves these: the bits below are its own)
    monkeypatch.undo()
    _ops_path(monkeypatch)
    general, general_strides = _grads(shape, transposed, bias, dev, needs)
    theirs = _torch_grads(shape, transposed, bias, needs)
    for o, g, t in zip(ours, general, theirs):
        assert (o is None) == (g is None) == (t is None)
        if o is not None:
            np.testing.assert_array_equal(o, g)
            np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-5)
    assert strides == general_strides  # W.grad in the layout the ops' path gives it (the weight's own)


def test_a_transposed_weight_gradient_becomes_grad_uncopied():
    """The weight's gradient, (g^T a)^T, is a view of its product, which nothing else holds: it is stolen as
    ``.grad`` (NOTE [gradient stealing]), in the weight's layout, as on the ops' path."""
    lin = st.nn.Linear(4, 6)
    x = st.randn(3, 5, 4)
    lin(x).sum().backward()
    g = lin.weight.grad._data
    assert g.strides == lin.weight._data.strides
    assert g.base is not None and g.base.shape == (6, 4)  # (a view of the product, not _fresh_grad's copy)


def test_create_graph_takes_the_ops_path_with_its_nodes():
    x = st.randn(3, 4, requires_grad=True)
    w = st.randn(6, 4, requires_grad=True)
    (gx,) = st.autograd.grad((x @ w.t()).pow(2).sum(), (x,), create_graph=True)
    assert gx.grad_fn is not None
    tx, tw = torch.tensor(x.detach().numpy(), requires_grad=True), torch.tensor(w.detach().numpy())
    (tgx,) = torch.autograd.grad((tx @ tw.t()).pow(2).sum(), (tx,), create_graph=True)
    np.testing.assert_allclose(gx.detach().numpy(), tgx.detach().numpy(), rtol=1e-5)
    gx.sum().backward()
    assert x.grad is not None


@pytest.mark.parametrize("case", ["float64 gradient", "empty rows", "complex", "autocast"])
def test_refused_cases_take_the_ops_path(case, monkeypatch):
    seen = []
    fast = M._linear_vjp_arrays
    monkeypatch.setattr(M, "_linear_vjp_arrays", lambda g, a, b: seen.append(r := fast(g, a, b)) or r)
    dtype = st.complex64 if case == "complex" else st.float32
    x = st.randn(0 if case == "empty rows" else 3, 4, dtype=dtype, requires_grad=True)
    w = st.randn(4, 6, dtype=dtype, requires_grad=True)
    if case == "autocast":
        out = x @ w
        with st.autocast("cpu", dtype=st.bfloat16):
            out.backward(st.ones(3, 6))
    elif case == "float64 gradient":  # (a hook's is refused before any vjp, as torch's: called directly here)
        M._linear_vjp_arrays(st.ones(3, 6, dtype=st.float64), x, w)
    else:
        (x @ w).sum().abs().backward() if case == "complex" else (x @ w).sum().backward()
    assert seen and all(r is None for r in seen), case


class _NoKernels:
    kernels: dict = {}


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("shape", [(5, 6), (2, 3, 6), (4, 1, 6)])
def test_bias_gradient_summed_by_the_sum_kernel_as_the_sum_op(shape, dev, monkeypatch):
    """``sum_to`` of a first-order backward sums a gradient over its leading dims (a bias's) by the sum primitive's
    kernel, where the op would take its untracked shortcut: the op's result, bit for bit, and torch's."""
    _need(dev)
    from shapetorch._engine import backward as B

    def bias_grad():
        rng = np.random.default_rng(1)
        x = st.tensor(rng.normal(size=shape).astype(np.float32), device=dev)
        b = st.tensor(rng.normal(size=6).astype(np.float32), device=dev, requires_grad=True)
        ((x + b) * st.tensor(rng.normal(size=shape).astype(np.float32), device=dev)).sum().backward()
        return b.grad

    ours = bias_grad()
    assert not ours.requires_grad and ours.grad_fn is None and ours.shape == (6,)
    monkeypatch.setattr(B, "_prim", lambda name: _NoKernels)  # (no kernel: the op's path)
    general = bias_grad()
    np.testing.assert_array_equal(ours.cpu().numpy(), general.cpu().numpy())
    rng = np.random.default_rng(1)
    x = torch.tensor(rng.normal(size=shape).astype(np.float32))
    b = torch.tensor(rng.normal(size=6).astype(np.float32), requires_grad=True)
    ((x + b) * torch.tensor(rng.normal(size=shape).astype(np.float32))).sum().backward()
    np.testing.assert_allclose(ours.cpu().numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6)
