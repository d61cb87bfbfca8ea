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


ATTENTION = [  # (batch, L, S, D, Dv, causal, mask kind)
    ((2, 3), 5, 7, 4, 6, False, None), ((2,), 16, 16, 16, 16, True, None), ((), 70, 130, 3, 300, False, None),
    ((2,), 5, 7, 4, 6, False, "bool"), ((2,), 5, 7, 4, 6, False, "float"), ((1, 2), 9, 3, 1, 1, True, None),
    ((3,), 1, 1, 5, 2, False, None), ((2,), 65, 66, 8, 5, False, "bool"),
]


@pytest.mark.parametrize("batch,L,S,D,Dv,causal,mask", ATTENTION)
@pytest.mark.parametrize("device", [DEV, "cpu"])
def test_fused_attention(batch, L, S, D, Dv, causal, mask, device):
    """scaled_dot_product_attention as one kernel and its gradient as two (webgpu), odd sizes, rows longer than a
    workgroup, heads wider than one pass, causal, bool and broadcast float masks: values and gradients as torch."""
    rng = np.random.default_rng(3)
    arrays = [rng.normal(size=(*batch, n, d)).astype(np.float32) for n, d in ((L, D), (S, D), (S, Dv))]
    if mask == "bool":
        m = rng.random((L, S)) > 0.3
        m[:, 0] = True  # no row fully masked (torch gives NaN there; see the next test)
    elif mask == "float":
        m = rng.normal(size=(*batch[:1], 1, S)).astype(np.float32)
    g = rng.normal(size=(*batch, L, Dv)).astype(np.float32)
    ours = [st.tensor(a, device=device, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    om = None if mask is None else st.tensor(m, device=device)
    tm = None if mask is None else torch.tensor(m)
    before = st.memory_stats()["num_dispatches"]
    out = F.scaled_dot_product_attention(*ours, attn_mask=om, is_causal=causal)
    if device == DEV:
        assert st.memory_stats()["num_dispatches"] - before == 1
    want = TF.scaled_dot_product_attention(*theirs, attn_mask=tm, is_causal=causal)
    np.testing.assert_allclose(out.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-4, atol=1e-5)
    grads = st.autograd.grad(out, ours, st.tensor(g, device=device))
    twant = torch.autograd.grad(want, theirs, torch.tensor(g))
    for a, b in zip(grads, twant):
        assert a.shape == tuple(b.shape)
        np.testing.assert_allclose(a.cpu().numpy(), b.numpy(), rtol=1e-4, atol=1e-5)


def test_fused_attention_head_views_and_masked_rows():
    """q, k, v as the transposed head views of one projection (read in place); the output and the gradients take
    their inputs' layout, so the transpose and reshape back are views; a fully masked row gives 0 as torch's."""
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, 6, 3 * 8)).astype(np.float32)
    g = rng.normal(size=(2, 6, 8)).astype(np.float32)
    m = np.ones((6, 6), bool)
    m[2] = False

    def fn(lib, t, mask):
        q, k, v = (z.reshape(2, 6, 2, 4).transpose(1, 2) for z in t.split(8, dim=2))
        a = _f(lib).scaled_dot_product_attention(q, k, v, attn_mask=mask).transpose(1, 2)
        if lib is st and a.device.type == DEV:
            assert a.is_contiguous()  # the output took q's (batch, length, heads, dim) layout
        return a.reshape(2, 6, 8)

    for device in (DEV, "cpu"):
        ox, tx = st.tensor(x, device=device, requires_grad=True), torch.tensor(x, requires_grad=True)
        got, want = fn(st, ox, st.tensor(m, device=device)), fn(torch, tx, torch.tensor(m))
        np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-4, atol=1e-5)
        assert (got.detach().cpu().numpy()[:, 2] == 0).all()
        got.backward(st.tensor(g, device=device))
        want.backward(torch.tensor(g))
        np.testing.assert_allclose(ox.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_attention_masked_rows_in_every_path():
    """A fully masked row (bool or -inf float mask) is 0 in the fused primitive, its double-backward formula and the
    composite (dropout), as torch."""
    rng = np.random.default_rng(5)
    q = rng.normal(size=(1, 4, 3)).astype(np.float32)
    bm = np.ones((4, 4), bool)
    bm[1] = False
    fm = np.where(bm, 0.0, -np.inf).astype(np.float32)
    for mask in (bm, fm):
        for device in (DEV, "cpu"):
            x = st.tensor(q, device=device, requires_grad=True)
            out = F.scaled_dot_product_attention(x, x, x, attn_mask=st.tensor(mask, device=device))
            tx = torch.tensor(q, requires_grad=True)
            want = TF.scaled_dot_product_attention(tx, tx, tx, attn_mask=torch.tensor(mask))
            np.testing.assert_allclose(out.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-4, atol=1e-5)
            (gx,) = st.autograd.grad(out.sum(), [x], create_graph=True)
            (tgx,) = torch.autograd.grad(want.sum(), [tx], create_graph=True)
            np.testing.assert_allclose(gx.detach().cpu().numpy(), tgx.detach().numpy(), rtol=1e-4, atol=1e-5)
            drop = F.scaled_dot_product_attention(x, x, x, attn_mask=st.tensor(mask, device=device), dropout_p=0.5)
            assert (drop.detach().cpu().numpy()[:, 1] == 0).all()


CROSS_ENTROPY = [  # (input shape, reduction, label smoothing, weight, ignore_index)
    ((6, 5), "mean", 0.0, False, -100), ((7, 70), "sum", 0.1, True, 2), ((5, 3), "none", 0.2, True, -100),
    ((65, 64), "mean", 0.0, False, -100), ((9, 130), "mean", 0.3, True, 1), ((1, 1), "mean", 0.0, False, -100),
    ((3, 4, 5), "mean", 0.1, False, 0), ((2, 3, 2, 2), "none", 0.0, True, -100), ((0, 3), "mean", 0.0, False, -100),
    ((0, 3), "sum", 0.0, False, -100),
]


@pytest.mark.parametrize("shape,reduction,smoothing,weighted,ignore", CROSS_ENTROPY)
@pytest.mark.parametrize("device", [DEV, "cpu"])
def test_fused_cross_entropy(shape, reduction, smoothing, weighted, ignore, device):
    """cross_entropy with class targets as one row kernel and a reduction, its gradient one kernel (and the 'mean'
    divisor): values, gradients and double backward as torch, odd sizes, weights, smoothing, ignore_index."""
    rng = np.random.default_rng(6)
    c = shape[1]
    x = rng.normal(size=shape).astype(np.float32)
    t = rng.integers(0, c, (shape[0], *shape[2:]))
    if t.size and ignore >= 0:
        t.reshape(-1)[0] = ignore
    w = (rng.random(c) + 0.1).astype(np.float32)
    ox, tx = st.tensor(x, device=device, requires_grad=True), torch.tensor(x, requires_grad=True)
    kw = {"reduction": reduction, "label_smoothing": smoothing, "ignore_index": ignore}
    got = F.cross_entropy(ox, st.tensor(t, device=device), st.tensor(w, device=device) if weighted else None, **kw)
    want = TF.cross_entropy(tx, torch.tensor(t), torch.tensor(w) if weighted else None, **kw)
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = rng.normal(size=tuple(want.shape)).astype(np.float32)
    (gx,) = st.autograd.grad(got, [ox], st.tensor(g, device=device), create_graph=True)
    (tgx,) = torch.autograd.grad(want, [tx], torch.tensor(g), create_graph=True)
    np.testing.assert_allclose(gx.detach().cpu().numpy(), tgx.detach().numpy(), rtol=1e-5, atol=1e-6)
    if x.size:  # double backward through the differentiable formula
        (ggx,) = st.autograd.grad((gx * gx).sum(), [ox])
        (tggx,) = torch.autograd.grad((tgx * tgx).sum(), [tx])
        np.testing.assert_allclose(ggx.cpu().numpy(), tggx.numpy(), rtol=1e-4, atol=1e-5)
    ox.grad = None
    before = st.memory_stats()["num_dispatches"]
    F.cross_entropy(ox, st.tensor(t, device=device), st.tensor(w, device=device) if weighted else None,
                    **kw).backward(st.tensor(g, device=device))
    if device == DEV and len(shape) == 2 and x.size:
        # the range check of the targets, the loss (and its reduction), the gradient (and the divisor), no copies
        want_n = 1 + (1 if reduction == "none" else 2) + (2 if reduction == "mean" else 1)
        assert st.memory_stats()["num_dispatches"] - before == want_n
    np.testing.assert_allclose(ox.grad.cpu().numpy(), tgx.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape,nd", [((300, 7), 1), ((3, 5, 4), 2), ((2, 1, 257), 1), ((1, 3), 1)])
def test_layer_norm_weight_gradient(shape, nd):
    """layer_norm's weight gradient as one primitive (row statistics, then a sum per column), on a non-contiguous
    input too: as torch; the whole layer_norm backward is four kernels (dx, the statistics, the column sums, the
    bias's sum); on the CPU the primitive's NumPy kernel."""
    norm = shape[-nd:]
    x = data(shape, seed=8)
    run(lambda lib, a, w, b: _f(lib).layer_norm(a.transpose(0, -1).contiguous().transpose(0, -1), norm, w, b,
                                                eps=1e-3),
        x * 2 + 1, data(norm, seed=9), data(norm, seed=10))
    for device in (DEV, "cpu"):
        xs = st.tensor(x, device=device, requires_grad=True)
        ln = st.nn.LayerNorm(norm).to(device)
        y = ln(xs)
        g = st.tensor(data(shape, seed=11), device=device)
        before = st.memory_stats()["num_dispatches"]
        y.backward(g)
        if device == DEV:
            assert st.memory_stats()["num_dispatches"] - before == 4
        tx = torch.tensor(x, requires_grad=True)
        tln = torch.nn.LayerNorm(norm)
        tln(tx).backward(torch.tensor(data(shape, seed=11)))
        np.testing.assert_allclose(ln.weight.grad.cpu().numpy(), tln.weight.grad.numpy(), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(xs.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("index", [
    (slice(1, 3), 2), (Ellipsis, slice(0, 6, 4)), (None, 1, slice(None), None, slice(1, None, 2)), (-1,),
    (slice(2, 2),), (slice(None), slice(3, 5), slice(None, None, 3)),
])
def test_basic_slice_gradient_is_one_kernel(index):
    """The gradient of a basic index (ints, slices with steps, None, Ellipsis; an empty slice) is the output
    gradient placed into zeros by one kernel (not a fill and a copy), as torch."""
    x = data((4, 5, 6), seed=12)
    run(lambda lib, a: a[index] * 1.0, x)
    a = st.tensor(x, device=DEV, requires_grad=True)
    y = a[index]
    g = st.ones(y.shape, device=DEV)
    before = st.memory_stats()["num_dispatches"]
    (ga,) = st.autograd.grad(y, [a], g)
    assert st.memory_stats()["num_dispatches"] - before == 1


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16"])
@pytest.mark.parametrize("pads", [(1, 2), (1, -1, 0, 2), (-2, 3, 1, 1, 0, 0), (0, 0)])
def test_constant_pad_is_one_kernel(pads, dtype):
    x = data((3, 4, 5), seed=13) * 3
    value = {"float32": 2.5, "int64": -7, "bool": True, "float16": -1.5}[dtype]
    ours = st.tensor(x, device=DEV).to(getattr(st, dtype))
    theirs = torch.tensor(x).to(getattr(torch, dtype))
    before = st.memory_stats()["num_dispatches"]
    got = F.pad(ours, pads, value=value)
    assert st.memory_stats()["num_dispatches"] - before == 1
    want = TF.pad(theirs, pads, value=value)
    assert got.dtype == getattr(st, dtype)
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


@pytest.mark.parametrize("name", ["tanh", "sigmoid", "silu", "relu", "leaky_relu", "hardtanh"])
def test_pointwise_gradient_is_one_kernel(name):
    """relu, tanh, sigmoid, silu, leaky_relu and hardtanh's gradients (torch's threshold_backward, tanh_backward,
    sigmoid_backward, silu_backward, leaky_relu_backward, hardtanh_backward) are one fused elementwise kernel each on
    the device, with torch's values (the kinks at 0 and at the bounds; NaN); every forward is one kernel too."""
    kw = {"leaky_relu": {"negative_slope": 0.2}, "hardtanh": {"min_val": -1.5, "max_val": 0.5}}.get(name, {})

    def fn(lib, a):
        return getattr(_f(lib), name)(a, **kw)

    x = data((6, 9), seed=14) * 4
    x[0, :6] = [np.inf, -np.inf, 0.0, np.nan, -1.5, 0.5]
    run(fn, x)
    a = st.tensor(x, device=DEV, requires_grad=True)
    before = st.memory_stats()["num_dispatches"]
    y = fn(st, a)
    assert st.memory_stats()["num_dispatches"] - before == 1
    g = st.ones(y.shape, device=DEV)
    before = st.memory_stats()["num_dispatches"]
    st.autograd.grad(y, [a], g)
    assert st.memory_stats()["num_dispatches"] - before == 1


_FUSED_ACTIVATIONS = {"elu": {"alpha": 0.7}, "selu": {}, "celu": {"alpha": 1.3}, "softplus": {"beta": 2.0, "threshold": 3.0},
                      "mish": {}, "hardswish": {}, "hardsigmoid": {}, "logsigmoid": {}}


@pytest.mark.parametrize("name", list(_FUSED_ACTIVATIONS))
def test_activation_and_its_gradient_are_one_kernel_each(name):
    """elu (selu, celu), softplus, mish, hardswish, hardsigmoid and logsigmoid: one kernel forward and one for the
    fused gradient (elu_backward, softplus_backward, mish_backward, hardswish_backward, hardsigmoid_backward,
    log_sigmoid_backward) on the device, with torch's values at the kinks (-3, 3, 0, softplus's threshold), at
    +-inf and NaN."""
    kw = _FUSED_ACTIVATIONS[name]

    def fn(lib, a):
        return getattr(_f(lib), name)(a, **kw)

    x = data((6, 9), seed=15) * 4
    x[0, :9] = [np.inf, -np.inf, 0.0, np.nan, -3.0, 3.0, 1.5, 25.0, -30.0]
    run(fn, x)
    a = st.tensor(x, device=DEV, requires_grad=True)
    before = st.memory_stats()["num_dispatches"]
    y = fn(st, a)
    assert st.memory_stats()["num_dispatches"] - before == 1
    g = st.ones(y.shape, device=DEV)
    before = st.memory_stats()["num_dispatches"]
    st.autograd.grad(y, [a], g)
    assert st.memory_stats()["num_dispatches"] - before == 1


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name,kw", [("mse_loss", {}), ("smooth_l1_loss", {"beta": 0.5}), ("huber_loss", {"delta": 0.5}),
                                     ("binary_cross_entropy_with_logits", {}), ("binary_cross_entropy", {})])
def test_pointwise_loss_kernels(name, kw, reduction):
    """mse_loss, smooth_l1_loss, huber_loss, binary_cross_entropy(_with_logits) as one primitive each on the device (the elementwise loss, then the
    sum kernel), their gradients one kernel each for the input and the target; torch's values at the kinks
    (|x - t| exactly beta / delta)."""
    x, t = data((5, 8), seed=16) * 2, data((5, 8), seed=17)
    x[0, :4] = t[0, :4] + np.array([0.5, -0.5, 0.25, -0.25], np.float32)
    if name == "binary_cross_entropy":  # probabilities, 0 and 1 among them (the logs clamped at -100)
        x, t = 1 / (1 + np.exp(-x)), 1 / (1 + np.exp(-t))
        x[1, :2], t[1, :2] = [0.0, 1.0], [0.0, 1.0]

    def fn(lib, a, b):
        return getattr(_f(lib), name)(a, b, reduction=reduction, **kw)

    run(fn, x, t)
    a = st.tensor(x, device=DEV, requires_grad=True)
    b = st.tensor(t, device=DEV)
    y = fn(st, a, b)
    before = st.memory_stats()["num_dispatches"]
    st.autograd.grad(y, [a], st.ones(y.shape, device=DEV))
    assert st.memory_stats()["num_dispatches"] - before <= 2  # the gradient (and a fill of its 0-d seed, if any)
