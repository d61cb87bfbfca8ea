"""Fused kernels and fewer copies (issue 19): single-kernel softmax/log_softmax/layer_norm and their gradients,
the fused gelu gradient, Linear as one matmul with a bias epilogue, and gradients that become ``.grad`` without
a copy. Values and gradients against torch's CPU results, on webgpu and on the CPU (the primitives are new on
both); double backward and forward mode go through the differentiable formulas.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import shapetorch as st
from test_webgpu import (
    DEV,
    data,
    run,
    webgpu,  # noqa: F401  (the module fixture: skip or fail without an adapter)
)

F = st.nn.functional


def _f(lib):
    return F if lib is st else TF


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape,dim", [((3, 70), 1), ((2, 3, 4), 0), ((2, 3, 4), 1), ((5,), 0), ((2, 0, 3), 2)])
def test_softmax_family(name, shape, dim):
    run(lambda lib, x: getattr(_f(lib), name)(x, dim), data(shape))


def test_softmax_non_contiguous_and_extremes():
    x = data((4, 6))
    x[0, :] = -np.inf
    x[1, 2] = np.inf
    x[2, :] = 80.0
    run(lambda lib, a: _f(lib).softmax(a.t(), 0), x, grad=False)
    run(lambda lib, a: _f(lib).log_softmax(a[:, ::2], 1), data((4, 6)))


@pytest.mark.parametrize("shape,norm,affine", [
    ((2, 3, 8), (8,), (True, True)), ((4, 70), (70,), (True, False)), ((3, 5), (5,), (False, True)),
    ((2, 3, 4), (3, 4), (True, True)), ((2, 3), (3,), (False, False)),
])
def test_layer_norm(shape, norm, affine):
    arrays = [data(shape, seed=1) * 3 + 1]
    if affine[0]:
        arrays.append(data(norm, seed=2))
    if affine[1]:
        arrays.append(data(norm, seed=3))

    def fn(lib, x, *wb):
        it = iter(wb)
        w = next(it) if affine[0] else None
        b = next(it) if affine[1] else None
        return _f(lib).layer_norm(x, norm, w, b, eps=1e-4)

    run(fn, *arrays)


def test_gelu_and_linear():
    run(lambda lib, x: _f(lib).gelu(x * 3), data((3, 7)))
    run(lambda lib, x, w, b: _f(lib).linear(x, w, b), data((2, 5, 9)), data((70, 9), seed=1), data((70,), seed=2))
    run(lambda lib, x, w, b: _f(lib).linear(x, w, b), data((6, 9)), data((4, 9), seed=1), data((4,), seed=2))
    run(lambda lib, x, w, b: _f(lib).linear(x, w, b), data((9,)), data((4, 9), seed=1), data((4,), seed=2))


@pytest.mark.parametrize("device", ["cpu", DEV])
def test_double_backward_and_forward_mode(device):
    """create_graph takes the differentiable formulas; forward mode has rules for the new primitives."""
    x, w, b = data((3, 6)), data((6,), seed=1), data((6,), seed=2)
    lin_w = data((4, 6), seed=3)

    def f(lib, x, w, b):
        h = _f(lib).layer_norm(x, (6,), w, b)
        h = _f(lib).gelu(_f(lib).linear(h, lin_w_of(lib), b[:4]))
        return _f(lib).log_softmax(h, 1).sum() + _f(lib).softmax(h, 0).pow(2).sum()

    def lin_w_of(lib):
        return st.tensor(lin_w, device=device) if lib is st else torch.tensor(lin_w)

    ours = [st.tensor(a, device=device, requires_grad=True) for a in (x, w, b)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    g1 = st.autograd.grad(f(st, *ours), ours, create_graph=True)
    t1 = torch.autograd.grad(f(torch, *theirs), theirs, create_graph=True)
    for a, t in zip(g1, t1):
        np.testing.assert_allclose(a.detach().cpu().numpy(), t.detach().numpy(), rtol=1e-4, atol=1e-5)
    g2 = st.autograd.grad(sum((a * a).sum() for a in g1), ours)
    t2 = torch.autograd.grad(sum((a * a).sum() for a in t1), theirs)
    for a, t in zip(g2, t2):
        np.testing.assert_allclose(a.cpu().numpy(), t.numpy(), rtol=1e-3, atol=1e-4)

    tangents = [data(a.shape, seed=9 + i) for i, a in enumerate((x, w, b))]
    _, jo = st.func.jvp(lambda *a: f(st, *a), tuple(st.tensor(a, device=device) for a in (x, w, b)),
                        tuple(st.tensor(t, device=device) for t in tangents))
    _, jt = torch.func.jvp(lambda *a: f(torch, *a), tuple(torch.tensor(a) for a in (x, w, b)),
                           tuple(torch.tensor(t) for t in tangents))
    np.testing.assert_allclose(jo.cpu().numpy(), jt.numpy(), rtol=1e-3, atol=1e-4)


def test_gradient_stolen_only_when_unshared():
    """A fresh device gradient becomes .grad without a copy; one that the user, a hook, a retained grad or a
    second leaf can reach is copied (writing into .grad never changes them), as torch's AccumulateGrad."""
    a = st.tensor(data((3, 4)), device=DEV, requires_grad=True)
    b = st.tensor(data((3, 4), seed=1), device=DEV, requires_grad=True)
    (a.exp() * b).sum().backward()
    assert a.grad is not None and b.grad is not None
    np.testing.assert_allclose(a.grad.cpu().numpy(), np.exp(data((3, 4))) * data((3, 4), seed=1), rtol=1e-5)

    a.grad = b.grad = None
    (a + b).sum().backward()  # both gradients are views of one buffer
    assert a.grad is not None and b.grad is not None
    a.grad.add_(1.0)
    np.testing.assert_array_equal(b.grad.cpu().numpy(), np.ones((3, 4), np.float32))

    a.grad = None
    user = st.ones(3, 4, device=DEV)
    a.backward(user)
    assert a.grad is not None
    a.grad.mul_(5.0)
    np.testing.assert_array_equal(user.cpu().numpy(), np.ones((3, 4), np.float32))

    a.grad = None
    seen = []
    h = a.register_hook(seen.append)
    (a * 2).sum().backward()
    h.remove()
    assert a.grad is not None
    a.grad.zero_()
    np.testing.assert_array_equal(seen[0].cpu().numpy(), np.full((3, 4), 2, np.float32))

    a.grad = None
    y = a * 3
    y.retain_grad()
    (y * 1).sum().backward()
    assert a.grad is not None and y.grad is not None
    a.grad.zero_()
    np.testing.assert_array_equal(y.grad.cpu().numpy(), np.ones((3, 4), np.float32))


def test_linear_weight_gradient_is_contiguous_and_accumulates():
    """x @ W.T's weight gradient is made in W's layout (stolen, no copy); a second backward accumulates."""
    lin = st.nn.Linear(5, 3).to(DEV)
    ref = torch.nn.Linear(5, 3)
    with torch.no_grad():
        ref.weight.copy_(torch.tensor(lin.weight.detach().cpu().numpy()))
        ref.bias.copy_(torch.tensor(lin.bias.detach().cpu().numpy()))
    x = data((2, 4, 5))
    for _ in range(2):
        lin(st.tensor(x, device=DEV)).pow(2).sum().backward()
        ref(torch.tensor(x)).pow(2).sum().backward()
    assert lin.weight.grad is not None and lin.weight.grad._data.contiguous
    np.testing.assert_allclose(lin.weight.grad.cpu().numpy(), ref.weight.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(lin.bias.grad.cpu().numpy(), ref.bias.grad.numpy(), rtol=1e-4, atol=1e-5)
