"""nn on the WebGPU backend: functional ops and gradients against torch, and a module + optimizer loop.

Skipped without a WebGPU adapter, unless SHAPETORCH_REQUIRE_WEBGPU=1 (then it fails), as test_webgpu.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import shapetorch as st
from _oracle import assert_same
from test_webgpu import (
    DEV,
    F32,
    data,
    run,
    webgpu,  # noqa: F401  (the module fixture: skip or fail without an adapter)
)

F = st.nn.functional


def fn(name: str, *args, **kwargs):
    return lambda lib, *xs: getattr(F if lib is st else TF, name)(*xs, *args, **kwargs)


@pytest.mark.parametrize("name,args,kwargs,shape", [
    ("relu", (), {}, (3, 5)), ("gelu", (), {}, (3, 5)), ("gelu", (), {"approximate": "tanh"}, (4,)),
    ("silu", (), {}, (3, 5)), ("softmax", (1,), {}, (3, 5)), ("log_softmax", (-1,), {}, (2, 3, 4)),
    ("pad", ((1, 2),), {}, (2, 3)), ("pad", ((1, 0, -1, 2),), {"value": 0.5}, (2, 3, 4)),
    ("layer_norm", ((4,),), {}, (2, 3, 4)),
])
def test_functional(name, args, kwargs, shape):
    run(fn(name, *args, **kwargs), data(shape))


def _lib(lib):
    return F if lib is st else TF


def _idx(lib, values, like):
    """An int64 tensor on ``like``'s device (webgpu for shapetorch, cpu for torch)."""
    return lib.tensor(np.asarray(values, dtype=np.int64), device=like.device)


Y = [1, 0, 4, 2, 4, 3]


@pytest.mark.parametrize("kwargs", [
    {}, {"reduction": "sum"}, {"reduction": "none"}, {"ignore_index": 4}, {"label_smoothing": 0.2},
    {"label_smoothing": 0.1, "ignore_index": 0, "reduction": "mean"},
])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_class_indices(kwargs, weighted):
    w = np.random.default_rng(3).uniform(0.2, 1.5, size=5).astype(np.float32)

    def f(lib, x):
        wt = lib.tensor(w, device=x.device) if weighted else None
        return _lib(lib).cross_entropy(x, _idx(lib, Y, x), weight=wt, **kwargs)

    run(f, data((6, 5)))


def test_cross_entropy_nd_and_unbatched():
    run(lambda lib, x: _lib(lib).cross_entropy(x, _idx(lib, [[0, 2], [1, 1]], x)), data((2, 3, 2)))
    # a 0-d target made by indexing: st.tensor(2, device="webgpu") itself comes out with shape (1,) (np.ascontiguousarray
    # in creation._on drops 0-d), reported to the creation owner
    run(lambda lib, x: _lib(lib).cross_entropy(x, _idx(lib, [2], x)[0]), data((4,)))


@pytest.mark.parametrize("kwargs", [{}, {"label_smoothing": 0.3}, {"reduction": "none"}])
def test_cross_entropy_probabilities(kwargs):
    run(lambda lib, x, t: _lib(lib).cross_entropy(x, t.softmax(1), **kwargs), data((4, 5)), data((4, 5), seed=1))


@pytest.mark.parametrize("kwargs", [{}, {"reduction": "sum"}, {"ignore_index": 1}, {"reduction": "none"}])
def test_nll_loss(kwargs):
    w = np.array([0.5, 1.0, 2.0, 1.5, 0.7], dtype=np.float32)
    run(lambda lib, x: _lib(lib).nll_loss(x.log_softmax(1), _idx(lib, Y, x), **kwargs), data((6, 5)))
    run(lambda lib, x: _lib(lib).nll_loss(x, _idx(lib, Y, x), weight=lib.tensor(w, device=x.device), **kwargs),
        data((6, 5)))


def test_nll_loss_target_out_of_range_is_an_error_on_webgpu():
    x = st.zeros(2, 3, device=DEV)
    loss = F.nll_loss(x, st.tensor([0, 3], device=DEV))  # checked on the device: raised at the next sync
    with pytest.raises(IndexError):
        loss.item()


@pytest.mark.parametrize("name,kwargs,kind", [
    ("mse_loss", {}, "f"), ("mse_loss", {"reduction": "none"}, "f"), ("l1_loss", {"reduction": "sum"}, "f"),
    ("smooth_l1_loss", {"beta": 0.5}, "f"), ("huber_loss", {"delta": 0.7}, "f"),
    ("binary_cross_entropy", {}, "prob"), ("binary_cross_entropy_with_logits", {}, "f"),
    ("kl_div", {"reduction": "batchmean"}, "logp"), ("kl_div", {"log_target": True, "reduction": "sum"}, "logp"),
])
def test_pointwise_losses(name, kwargs, kind):
    target = np.random.default_rng(5).uniform(0.05, 0.95, size=(4, 5)).astype(np.float32)
    if kwargs.get("log_target"):
        target = np.log(target)

    def f(lib, x):
        inp = x.sigmoid() if kind == "prob" else x.log_softmax(1) if kind == "logp" else x
        return getattr(_lib(lib), name)(inp, lib.tensor(target, device=x.device), **kwargs)

    run(f, data((4, 5)))


def test_bce_with_logits_weights():
    def f(lib, x, w, pw):
        t = lib.tensor(np.random.default_rng(1).uniform(0, 1, (3, 4)).astype(np.float32), device=x.device)
        return _lib(lib).binary_cross_entropy_with_logits(x, t, weight=w.abs().detach(), pos_weight=pw.abs().detach())

    run(f, data((3, 4)), data((3, 4), seed=1), data((4,), seed=2))


@pytest.mark.parametrize("name,shape,kwargs", [
    ("max_pool1d", (2, 3, 9), {"kernel_size": 3, "stride": 2, "padding": 1}),
    ("max_pool1d", (3, 8), {"kernel_size": 2}),
    ("max_pool2d", (2, 3, 7, 6), {"kernel_size": 3, "stride": 2, "padding": 1}),
    ("max_pool2d", (2, 2, 7, 6), {"kernel_size": (2, 3), "stride": (1, 2), "dilation": 2, "ceil_mode": True}),
    ("avg_pool1d", (2, 3, 9), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ("avg_pool2d", (2, 3, 7, 6), {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False}),
    ("avg_pool2d", (3, 5, 4), {"kernel_size": 2, "divisor_override": 3}),
    ("adaptive_avg_pool1d", (2, 3, 7), {"output_size": 3}),
    ("adaptive_avg_pool2d", (2, 3, 7, 5), {"output_size": (3, 2)}),
    ("adaptive_max_pool1d", (2, 3, 7), {"output_size": 3}),
    ("adaptive_max_pool2d", (2, 3, 7, 5), {"output_size": (3, 2)}),
    ("interpolate", (1, 2, 4, 5), {"scale_factor": 2, "mode": "bilinear"}),
    ("interpolate", (1, 2, 4, 5), {"size": (3, 7), "mode": "nearest"}),
    ("interpolate", (1, 2, 6, 5), {"size": (4, 7), "mode": "bicubic", "align_corners": True}),
    ("interpolate", (1, 2, 9, 8), {"size": (4, 11), "mode": "bicubic", "antialias": True}),
    ("interpolate", (1, 2, 9, 8), {"size": (5, 3), "mode": "lanczos", "antialias": True}),
    ("interpolate", (1, 2, 9, 8), {"size": (5, 3), "mode": "bilinear", "antialias": True}),
    ("interpolate", (1, 2, 9, 8), {"size": (4, 3), "mode": "area"}),
    ("pad", (1, 2, 4, 5), {"pad": (1, 2, 2, 1), "mode": "reflect"}),
])
def test_pooling(name, shape, kwargs):
    run(lambda lib, x: getattr(_lib(lib), name)(x, **kwargs), data(shape))


def test_max_pool_indices():
    def f(lib, x):
        return _lib(lib).max_pool2d(x, 3, 2, 1, return_indices=True)

    got = run(f, data((2, 3, 7, 6)), grad=False)
    assert got[1].device == st.device(DEV) and got[1].dtype == st.int64
    run(lambda lib, x: _lib(lib).max_pool2d(x, 3, 2, 1, return_indices=True)[0], data((2, 3, 7, 6)))


@pytest.mark.parametrize("name", ["layer_norm", "group_norm", "batch_norm", "instance_norm", "rms_norm"])
def test_normalization(name):
    x = data((4, 6, 3))

    def f(lib, x, w, b):
        G = _lib(lib)
        if name == "layer_norm":
            return G.layer_norm(x, (6, 3), w.reshape(6, 1).expand(6, 3), b.reshape(6, 1).expand(6, 3))
        if name == "group_norm":
            return G.group_norm(x, 3, w, b)
        if name == "instance_norm":
            return G.instance_norm(x, weight=w, bias=b)
        if name == "rms_norm":
            return G.rms_norm(x, (3,), eps=1e-6) * w.reshape(6, 1)
        rm, rv = lib.zeros(6, device=x.device), lib.ones(6, device=x.device)
        out = G.batch_norm(x, rm, rv, w, b, training=True)
        stats[lib.__name__] = (rm, rv)
        return out

    stats: dict[str, tuple[object, object]] = {}
    run(f, x, data((6,), seed=1), data((6,), seed=2))
    if name == "batch_norm":  # the running statistics, updated in place on the device, are torch's
        for ours, theirs in zip(stats["shapetorch"], stats["torch"]):
            assert ours.device == st.device(DEV)
            assert_same(ours, theirs, F32)


def test_batch_norm_module_running_stats():
    def f(lib, x):
        bn = lib.nn.BatchNorm1d(6).to(x.device)
        out = bn(x)
        bn.eval()
        return out + bn(x), bn.running_mean, bn.running_var

    got = run(f, data((4, 6, 3)), grad=False)
    assert all(t.device == st.device(DEV) for t in got)


def test_embedding():
    run(lambda lib, w: _lib(lib).embedding(_idx(lib, [[1, 4], [4, 0]], w), w, padding_idx=4), data((6, 3)))
    run(lambda lib, w: _lib(lib).embedding_bag(_idx(lib, [[1, 4], [4, 0]], w), w, mode="sum"), data((6, 3)))
    run(lambda lib, w: _lib(lib).one_hot(_idx(lib, [0, 3, 1], w), 4), data((1,)), grad=False)


@pytest.mark.parametrize("name", ["dropout", "dropout1d", "dropout2d"])
def test_dropout_matches_torch_given_the_mask(name):
    """torch's formula (kept elements scaled by 1/(1-p), whole channels for dropout1d/2d) in values and
    gradients, for the mask drawn on the device (test_webgpu_random.py checks the device's own draws)."""
    a, p = data((3, 4, 5)), 0.4
    st.manual_seed(3)
    x = st.tensor(a, device=DEV, requires_grad=True)
    y = getattr(F, name)(x, p)
    assert y.device == st.device(DEV)
    w = data((3, 4, 5), seed=1)
    (y * st.tensor(w, device=DEV)).sum().backward()
    mask = y.detach().cpu().numpy() != 0  # the data has no zeros: a zero output is a dropped element
    if name != "dropout":  # a channel is kept or dropped whole
        assert (mask == mask[..., :1]).all()
    t = torch.tensor(a, requires_grad=True)
    want = t * torch.tensor(mask) / (1 - p)
    (want * torch.tensor(w)).sum().backward()
    assert_same(y, want, F32)
    assert_same(x.grad, t.grad, F32, path="grad")


@pytest.mark.parametrize("kwargs", [{}, {"is_causal": True}, {"mask": "bool"}, {"mask": "float"}, {"scale": 0.3}])
def test_scaled_dot_product_attention(kwargs):
    kw = dict(kwargs)
    mask = kw.pop("mask", None)

    def f(lib, q, k, v):
        m = None
        if mask == "bool":
            m = lib.tensor(np.random.default_rng(2).random((3, 4)) < 0.7, device=q.device)
            m[:, 0] = True
        elif mask == "float":
            m = lib.tensor(data((3, 4), seed=4), device=q.device)
        return _lib(lib).scaled_dot_product_attention(q, k, v, attn_mask=m, **kw)

    run(f, data((2, 3, 8)), data((2, 4 if not kw.get("is_causal") else 3, 8), seed=1)[:, :3 if kw.get("is_causal")
        else 4], data((2, 4 if not kw.get("is_causal") else 3, 8), seed=2)[:, :3 if kw.get("is_causal") else 4])


@pytest.mark.parametrize("kwargs", [{}, {"is_causal": True}, {"key_padding_mask": True}])
def test_multihead_attention_matches_torch(kwargs):
    e, h = 8, 2
    rng = np.random.default_rng(0)
    params = {"in_proj_weight": rng.normal(size=(3 * e, e)) * 0.3, "in_proj_bias": rng.normal(size=3 * e) * 0.1,
              "out_proj.weight": rng.normal(size=(e, e)) * 0.3, "out_proj.bias": rng.normal(size=e) * 0.1}

    def f(lib, q, k, v):
        mha = lib.nn.MultiheadAttention(e, h, batch_first=True)
        with lib.no_grad():
            for name, p in mha.named_parameters():
                p.copy_(lib.tensor(params[name].astype(np.float32)))
        mha = mha.to(q.device)
        kw = {}
        if kwargs.get("is_causal"):
            kw = {"is_causal": True, "attn_mask": lib.ones(3, 3, dtype=lib.bool, device=q.device).triu(1)}
        if kwargs.get("key_padding_mask"):
            kw = {"key_padding_mask": lib.tensor([[False, False, True], [False, True, False]], device=q.device)}
        out, w = mha(q, k, v, **kw)
        return out

    run(f, data((2, 3, e)), data((2, 3, e), seed=1), data((2, 3, e), seed=2))


def _copy_into_torch(ours: st.nn.Module, theirs: torch.nn.Module) -> None:
    """torch's module gets shapetorch's initial parameters (the two libraries draw different ones)."""
    with torch.no_grad():
        for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
            q.copy_(torch.tensor(p.detach().cpu().numpy()))


def test_layers_train_on_webgpu():
    """A small conv-free network with pooling, norm, dropout and cross-entropy: one step on the device, as torch's.

    Dropout draws different masks in the two libraries, so torch's Dropout applies the mask shapetorch drew."""
    rng = np.random.default_rng(0)
    xs, ys = rng.normal(size=(4, 2, 6, 6)).astype(np.float32), rng.integers(0, 3, size=4)

    def net(lib):
        nn = lib.nn
        return nn.Sequential(nn.MaxPool2d(2), nn.AvgPool2d(kernel_size=2, stride=1, padding=1), nn.BatchNorm2d(2),
                             nn.Flatten(), nn.Dropout(0.2), nn.Linear(32, 8), nn.LayerNorm(8), nn.GELU(), nn.Linear(8, 3))

    st.manual_seed(0)
    ours = net(st).to(DEV)
    theirs = net(torch)
    _copy_into_torch(ours, theirs)
    drawn = {}

    def keep_mask(module, inp, out):  # returns None: the output stays
        drawn["mask"] = out.detach().cpu().numpy() != 0

    ours[4].register_forward_hook(keep_mask)
    theirs[4].register_forward_hook(lambda m, inp, out: inp[0] * torch.tensor(drawn["mask"]) / 0.8)

    loss = F.cross_entropy(ours(st.tensor(xs, device=DEV)), st.tensor(ys, device=DEV), label_smoothing=0.1)
    want = TF.cross_entropy(theirs(torch.tensor(xs)), torch.tensor(ys), label_smoothing=0.1)
    loss.backward()
    want.backward()
    assert_same(loss, want.detach(), (1e-5, 1e-6))
    assert_same(ours[2].running_var, theirs[2].running_var, (1e-5, 1e-6), path="running_var")
    assert_same(ours[2].running_mean, theirs[2].running_mean, (1e-5, 1e-6), path="running_mean")
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters(), strict=True):
        assert p.grad is not None and p.grad.device == st.device(DEV)
        assert_same(p.grad, q.grad, (1e-4, 1e-5), path=f"{name}.grad")


def test_normalize_and_tril_run_on_webgpu():
    run(lambda lib, x: _lib(lib).normalize(x, dim=1), data((3, 4)))
    run(lambda lib, x, y: _lib(lib).cosine_similarity(x, y), data((3, 4)), data((3, 4), seed=1))
    run(lambda lib, x: x.tril(-1) + x.triu(2), data((2, 4, 5)))


def test_losses():
    run(lambda lib, x, y: (F if lib is st else TF).mse_loss(x, y), data((3, 4)), data((3, 4), seed=1))
    w = data((10, 3))
    run(lambda lib, w: (F if lib is st else TF).embedding(lib.tensor([[1, 4], [4, 9]], device=w.device), w), w)


def test_module_and_optimizer_loop_matches_torch():
    rng = np.random.default_rng(0)
    xs, ys = rng.normal(size=(32, 6)).astype(np.float32), rng.integers(0, 3, size=32)

    def train(lib, dev):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(6, 16), lib.nn.ReLU(), lib.nn.Linear(16, 3))
        with lib.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(lib.tensor(np.random.default_rng(i).normal(size=tuple(p.shape)).astype(np.float32) * 0.3))
        model = model.to(dev)
        opt = lib.optim.Adam(model.parameters(), lr=0.05)
        x, y = lib.tensor(xs, device=dev), lib.tensor(ys, device=dev)
        losses = []
        for _ in range(4):
            opt.zero_grad()
            logits = model(x)
            loss = -(logits - logits.logsumexp(1, keepdim=True)).gather(1, y.unsqueeze(1)).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, [p.detach().cpu().numpy() for p in model.parameters()]

    ours, pw = train(st, DEV)
    theirs, tw = train(torch, "cpu")
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)
    for p, q in zip(pw, tw):
        np.testing.assert_allclose(p, q, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name,xs,ws,kwargs", [
    ("conv2d", (2, 4, 7, 6), (6, 2, 3, 2), {"stride": (2, 1), "padding": 1, "dilation": (1, 2), "groups": 2}),
    ("conv2d", (3, 5, 5), (4, 3, 3, 3), {}),
    ("conv2d", (2, 3, 6, 7), (5, 3, 2, 3), {"stride": (3, 2), "padding": (2, 0), "dilation": (2, 1)}),
    ("conv2d", (1, 4, 5, 5), (4, 1, 3, 3), {"padding": 2, "groups": 4}),  # depthwise, windows wholly in padding
    ("conv2d", (2, 2, 5, 4), (2, 2, 4, 4), {"stride": 3, "padding": 1}),  # stride past the kernel: rows never read
    ("conv1d", (2, 3, 9), (4, 3, 3), {"padding": "same"}),
    ("conv1d", (2, 6, 11), (4, 3, 3), {"stride": 2, "padding": 3, "dilation": 3, "groups": 2}),
    ("conv3d", (1, 2, 4, 4, 4), (3, 2, 2, 2, 2), {"padding": 1}),
    ("conv3d", (2, 2, 3, 5, 4), (2, 1, 2, 3, 2), {"stride": (1, 2, 1), "dilation": (2, 1, 1), "groups": 2}),
    ("conv_transpose2d", (2, 4, 4, 5), (4, 3, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1}),
    ("conv_transpose1d", (2, 4, 6), (4, 2, 3), {"stride": 2, "groups": 2}),
])
def test_convolution(name, xs, ws, kwargs):
    """im2col with the window gather in the shader, batched matmuls; the input gradient (and the transposed
    convolutions) gather the columns back per input element (col2im)."""
    run(lambda lib, x, w, b: getattr(_lib(lib), name)(x, w, b, **kwargs), data(xs), data(ws, seed=1),
        data((ws[1] * kwargs.get("groups", 1) if "transpose" in name else ws[0],), seed=2), tol=(1e-4, 1e-4))


def test_convolution_of_a_strided_view():
    """im2col reads its input through the view's strides (a transposed input is not copied first)."""
    run(lambda lib, x, w: _lib(lib).conv2d(x.transpose(2, 3), w, stride=(1, 2), padding=1), data((2, 3, 6, 5)),
        data((4, 3, 3, 2), seed=1), tol=(1e-4, 1e-4))


def test_convolution_uploads_nothing():
    """Forward and both gradients are computed from the geometry in the shader: no offset table is uploaded."""
    x = st.tensor(data((2, 4, 9, 8)), device=DEV, requires_grad=True)
    w = st.tensor(data((6, 2, 3, 3), seed=1), device=DEV, requires_grad=True)
    st.synchronize()
    before = st.memory_stats()["num_bytes_uploaded"]
    F.conv2d(x, w, stride=2, padding=1, dilation=(1, 2), groups=2).sum().backward()
    F.conv_transpose1d(x.reshape(2, 4, 72), w[:4, :, 0], stride=2).sum().backward()
    st.synchronize()
    assert st.memory_stats()["num_bytes_uploaded"] == before


def test_convolution_makes_no_column_matrix():
    """The forward and the weight gradient are implicit GEMMs: the 49 x 3364 column matrix (660 kB) is never
    allocated."""
    x = st.tensor(data((1, 1, 64, 64)), device=DEV)
    w = st.tensor(data((2, 1, 7, 7), seed=1), device=DEV, requires_grad=True)
    gy = st.tensor(data((1, 2, 58, 58), seed=2), device=DEV)
    st.synchronize()
    st.reset_peak_memory_stats("webgpu")
    base = st.memory_allocated("webgpu")
    y = F.conv2d(x, w)
    y.backward(gy)
    st.synchronize()
    assert st.max_memory_allocated("webgpu") - base < 100_000  # the output (27 kB) and the gradient (0.4 kB)
    tw = torch.tensor(data((2, 1, 7, 7), seed=1), requires_grad=True)
    ty = TF.conv2d(torch.tensor(data((1, 1, 64, 64))), tw)
    ty.backward(torch.tensor(data((1, 2, 58, 58), seed=2)))
    np.testing.assert_allclose(y.detach().cpu().numpy(), ty.detach().numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(w.grad.cpu().numpy(), tw.grad.numpy(), rtol=1e-4, atol=1e-3)


def test_convolution_float16():
    """The input gradient gathers in f32 and stores float16 (no atomics, so no host fallback)."""
    from shapetorch.backends.webgpu.runtime import RT

    if not RT.has_f16:
        pytest.skip("this adapter has no shader-f16")
    xs, ws = data((2, 2, 6, 5)).astype(np.float16), data((3, 2, 3, 3), seed=1).astype(np.float16)
    x = st.tensor(xs, device=DEV, requires_grad=True)
    w = st.tensor(ws, device=DEV, requires_grad=True)
    F.conv2d(x, w, padding=1, stride=(2, 1)).sum().backward()
    tx, tw = (torch.tensor(a.astype(np.float32), requires_grad=True) for a in (xs, ws))
    TF.conv2d(tx, tw, padding=1, stride=(2, 1)).sum().backward()
    assert x.grad.dtype == st.float16 and w.grad.dtype == st.float16
    np.testing.assert_allclose(x.grad.cpu().numpy().astype(np.float32), tx.grad.numpy(), rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(w.grad.cpu().numpy().astype(np.float32), tw.grad.numpy(), rtol=1e-2, atol=5e-2)


def test_max_pool_window_index_kept_across_steps_and_modes():
    """The window offsets are made once per geometry and device; one first made under inference_mode still
    serves a training step (it is not an inference tensor)."""
    from shapetorch.ops._common import device_table
    from shapetorch.ops.pooling import _window_index

    xs = data((2, 3, 6, 6))
    with st.inference_mode():
        F.max_pool2d(st.tensor(xs, device=DEV), 2)
    assert not device_table(_window_index, ((6, 6), (3, 3), (2, 2), (2, 2), (1, 1)), st.device(DEV)).is_inference()
    run(lambda lib, x: _lib(lib).max_pool2d(x, 2), xs)
    st.synchronize()
    before = st.memory_stats()["num_bytes_uploaded"]
    F.max_pool2d(st.tensor(xs, device=DEV, requires_grad=True) * 1, 2)
    st.synchronize()
    assert st.memory_stats()["num_bytes_uploaded"] == before + xs.nbytes


def test_conv_net_step_matches_torch():
    rng = np.random.default_rng(0)
    xs, ys = rng.normal(size=(2, 1, 8, 8)).astype(np.float32), rng.integers(0, 3, size=2)

    def net(lib):
        nn = lib.nn
        return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64, 3))

    st.manual_seed(0)
    ours = net(st).to(DEV)
    theirs = net(torch)
    _copy_into_torch(ours, theirs)
    loss = F.cross_entropy(ours(st.tensor(xs, device=DEV)), st.tensor(ys, device=DEV))
    want = TF.cross_entropy(theirs(torch.tensor(xs)), torch.tensor(ys))
    loss.backward()
    want.backward()
    assert_same(loss, want.detach(), (1e-5, 1e-6))
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters(), strict=True):
        assert p.grad is not None and p.grad.device == st.device(DEV)
        assert_same(p.grad, q.grad, (1e-4, 1e-5), path=f"{name}.grad")


@pytest.mark.parametrize("fn", [
    lambda lib, x: _lib(lib).avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    lambda lib, x: _lib(lib).adaptive_avg_pool2d(x, (4, 3)),
    lambda lib, x: _lib(lib).interpolate(x, size=(9, 4), mode="nearest"),
    lambda lib, x: _lib(lib).interpolate(x, scale_factor=1.5, mode="nearest-exact"),
    lambda lib, x: _lib(lib).interpolate(x, size=(8, 3), mode="bilinear", align_corners=False),
    lambda lib, x: _lib(lib).pad(x, (2, 1, 1, 3), mode="reflect"),
    lambda lib, x: _lib(lib).pad(x, (2, -1, 0, 3), mode="replicate"),
    lambda lib, x: _lib(lib).pad(x, (1, 2, 2, 0), mode="circular"),
    lambda lib, x: _lib(lib).max_pool2d(x, 2, return_indices=True)[1].float() + _lib(lib).max_pool2d(x, 2),
])
def test_pooling_interpolation_and_padding_tables_are_kept(fn):
    """The band matrices and divisors of average pooling, the interpolation and padding indices and max_pool's
    return_indices table are made once per geometry and device: a second step uploads only its input. Values and
    gradients as torch."""
    xs = data((2, 3, 6, 5), seed=14)
    run(fn, xs)
    st.synchronize()
    before = st.memory_stats()["num_bytes_uploaded"]
    fn(st, st.tensor(xs, device=DEV, requires_grad=True)).sum().backward()
    st.synchronize()
    assert st.memory_stats()["num_bytes_uploaded"] == before + xs.nbytes
