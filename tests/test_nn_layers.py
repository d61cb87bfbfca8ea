"""Every layer against torch: torch's weights copied in, float64 data, outputs and all gradients compared."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import shapetorch as st
from _nn_oracle import compare_module
from shapetorch import nn


def data(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=shape)


def pair(name: str, *args, **kwargs):
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(*args, **kwargs).double()
    sm = getattr(nn, name)(*args, **kwargs).double()
    return sm, tm


LAYERS = [
    ("Linear", (5, 3), {}, [(4, 5)]),
    ("Linear", (5, 3), {"bias": False}, [(2, 7, 5)]),
    ("Bilinear", (4, 3, 2), {}, [(5, 4), (5, 3)]),
    ("Conv1d", (3, 4, 3), {"stride": 2, "padding": 1}, [(2, 3, 9)]),
    ("Conv2d", (3, 4, 3), {"padding": 1}, [(2, 3, 6, 7)]),
    ("Conv2d", (4, 6, 3), {"stride": 2, "dilation": 2, "groups": 2, "padding": 2}, [(2, 4, 9, 8)]),
    ("Conv2d", (2, 3, 4), {"padding": "same"}, [(1, 2, 6, 6)]),
    ("Conv2d", (2, 3, 3), {"padding": 1, "padding_mode": "reflect"}, [(2, 2, 5, 5)]),
    ("Conv2d", (2, 3, 3), {"padding": 1, "padding_mode": "circular", "bias": False}, [(2, 2, 5, 5)]),
    ("Conv2d", (2, 3, 3), {"padding": 1, "padding_mode": "replicate"}, [(2, 5, 5)]),
    ("Conv3d", (2, 3, 2), {}, [(1, 2, 3, 4, 3)]),
    ("ConvTranspose1d", (3, 2, 3), {"stride": 2}, [(2, 3, 5)]),
    ("ConvTranspose2d", (4, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1}, [(2, 4, 4, 5)]),
    ("ConvTranspose2d", (4, 6, 3), {"stride": 2, "groups": 2, "dilation": 2}, [(1, 4, 3, 3)]),
    ("MaxPool1d", (3,), {"stride": 2, "padding": 1}, [(2, 3, 9)]),
    ("MaxPool2d", (2,), {}, [(2, 3, 6, 6)]),
    ("MaxPool2d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True}, [(2, 2, 8, 7)]),
    ("MaxPool2d", (2,), {"dilation": 2}, [(1, 2, 7, 7)]),
    ("AvgPool1d", (3, 2, 1), {}, [(2, 3, 8)]),
    ("AvgPool2d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False}, [(2, 2, 7, 6)]),
    ("AvgPool2d", (3,), {"stride": 2, "ceil_mode": True}, [(1, 2, 8, 8)]),
    ("AvgPool2d", (2,), {"divisor_override": 3}, [(1, 2, 4, 4)]),
    ("AdaptiveAvgPool1d", (3,), {}, [(2, 3, 7)]),
    ("AdaptiveAvgPool2d", ((3, 2),), {}, [(2, 3, 7, 5)]),
    ("AdaptiveMaxPool2d", (2,), {}, [(2, 3, 5, 5)]),
    ("BatchNorm1d", (4,), {}, [(6, 4)]),
    ("BatchNorm1d", (4,), {"momentum": None}, [(3, 4, 5)]),
    ("BatchNorm2d", (3,), {}, [(4, 3, 2, 2)]),
    ("BatchNorm2d", (3,), {"affine": False}, [(4, 3, 2, 2)]),
    ("LayerNorm", ((4, 5),), {}, [(3, 4, 5)]),
    ("LayerNorm", (5,), {"elementwise_affine": False}, [(3, 5)]),
    ("GroupNorm", (2, 4), {}, [(3, 4, 5)]),
    ("InstanceNorm2d", (3,), {"affine": True}, [(2, 3, 4, 4)]),
    ("RMSNorm", (5,), {}, [(3, 5)]),
    ("Flatten", (), {}, [(2, 3, 4)]),
    ("Unflatten", (1, (2, 3)), {}, [(4, 6)]),
    ("PReLU", (3,), {}, [(2, 3, 4)]),
    ("GLU", (), {}, [(3, 6)]),
]


@pytest.mark.parametrize("name,args,kwargs,shapes", LAYERS, ids=[f"{n}-{i}" for i, (n, *_) in enumerate(LAYERS)])
def test_layer_matches_torch(name, args, kwargs, shapes):
    sm, tm = pair(name, *args, **kwargs)
    compare_module(sm, tm, [data(*s, seed=i) for i, s in enumerate(shapes)])


def test_batchnorm_eval_uses_running_stats():
    sm, tm = pair("BatchNorm2d", 3)
    x = data(4, 3, 2, 2)
    compare_module(sm, tm, [x])  # one training step updates the running stats
    sm.eval()
    tm.eval()
    compare_module(sm, tm, [data(2, 3, 2, 2, seed=5)])


ACTIVATIONS = [
    ("ReLU", ()), ("GELU", ()), ("GELU", ("tanh",)), ("SiLU", ()), ("Tanh", ()), ("Sigmoid", ()),
    ("Softmax", (1,)), ("LogSoftmax", (1,)), ("Softmin", (0,)), ("LeakyReLU", (0.2,)), ("ELU", (0.7,)), ("SELU", ()),
    ("CELU", (1.3,)), ("Softplus", (2.0, 1.0)), ("Hardtanh", (-0.5, 0.8)), ("ReLU6", ()), ("Hardsigmoid", ()),
    ("Hardswish", ()), ("Mish", ()), ("LogSigmoid", ()), ("Softsign", ()), ("Tanhshrink", ()),
    ("Hardshrink", (0.3,)), ("Softshrink", (0.3,)), ("Threshold", (0.1, -2.0)),
]


@pytest.mark.parametrize("name,args", ACTIVATIONS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(ACTIVATIONS)])
def test_activation_matches_torch(name, args):
    sm, tm = pair(name, *args)
    x = data(3, 4) * 4
    compare_module(sm, tm, [x], atol=1e-7)


def test_embedding_and_padding_idx():
    sm, tm = pair("Embedding", 10, 4, padding_idx=1)
    idx = np.array([[1, 2, 3], [1, 9, 0]])
    compare_module(sm, tm, [idx])
    assert not sm.weight.grad.numpy()[1].any()


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(mode):
    sm, tm = pair("EmbeddingBag", 10, 3, mode=mode)
    compare_module(sm, tm, [np.array([[1, 2, 4], [4, 3, 9]])])
    sm2, tm2 = pair("EmbeddingBag", 10, 3, mode=mode)
    from _nn_oracle import copy_state

    copy_state(sm2, tm2)
    inp, offs = np.array([1, 2, 4, 5, 4, 3, 2, 9]), np.array([0, 3, 3, 6])
    ys = sm2(st.tensor(inp), st.tensor(offs))
    yt = tm2(torch.tensor(inp), torch.tensor(offs))
    np.testing.assert_allclose(ys.detach().numpy(), yt.detach().numpy(), atol=1e-10)


@pytest.mark.parametrize("cls", ["Embedding", "EmbeddingBag"])
def test_from_pretrained_shares_storage_and_freezes(cls):
    """from_pretrained (both classes, torch's keywords): the weight is the given tensor's storage, frozen by
    default, and the repr lists the options as torch's does."""
    w = data(6, 3)
    kwargs = {"max_norm": 1.5, "norm_type": 3.0, "padding_idx": -1}
    sm = getattr(nn, cls).from_pretrained(ws := st.tensor(w), **kwargs)
    tm = getattr(torch.nn, cls).from_pretrained(wt := torch.tensor(w), **kwargs)
    assert repr(sm) == repr(tm)
    assert sm.weight.requires_grad is tm.weight.requires_grad is False
    assert sm.padding_idx == tm.padding_idx == 5
    with st.no_grad():
        sm.weight.add_(1.0)
    with torch.no_grad():
        tm.weight.add_(1.0)
    np.testing.assert_allclose(ws.numpy(), wt.numpy())
    thawed = getattr(nn, cls).from_pretrained(st.tensor(w), freeze=False)
    assert thawed.weight.requires_grad
    with pytest.raises(AssertionError, match="2-dimensional"):
        getattr(nn, cls).from_pretrained(st.tensor(w[0]))


@pytest.mark.parametrize("norm_type", [2.0, 1.0])
def test_embedding_max_norm_renormalises_the_rows_it_reads(norm_type):
    """max_norm scales each looked-up row whose norm exceeds it, in place and outside autograd; rows not
    looked up stay as they were; gradients flow as for a plain lookup (torch's embedding_renorm_)."""
    w = data(7, 4) * 3
    idx = np.array([[0, 2, 2], [5, 0, 1]])
    ws, wt = st.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    ys = st.nn.functional.embedding(st.tensor(idx), ws, max_norm=1.0, norm_type=norm_type)
    yt = torch.nn.functional.embedding(torch.tensor(idx), wt, max_norm=1.0, norm_type=norm_type)
    np.testing.assert_allclose(ys.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ws.detach().numpy(), wt.detach().numpy(), rtol=1e-12)
    (ys * st.tensor(data(2, 3, 4, seed=1))).sum().backward()
    (yt * torch.tensor(data(2, 3, 4, seed=1))).sum().backward()
    np.testing.assert_allclose(ws.grad.numpy(), wt.grad.numpy(), rtol=1e-12)
    bs, bt = nn.EmbeddingBag(7, 4, max_norm=1.0, mode="sum").double(), torch.nn.EmbeddingBag(7, 4, max_norm=1.0,
                                                                                              mode="sum").double()
    bs.load_state_dict({"weight": st.tensor(w)})
    bt.load_state_dict({"weight": torch.tensor(w)})
    np.testing.assert_allclose(bs(st.tensor(idx)).detach().numpy(), bt(torch.tensor(idx)).detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(bs.weight.detach().numpy(), bt.weight.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("kwargs,masks", [
    ({}, {}),
    ({"batch_first": True}, {"key_padding_mask": True}),
    ({"kdim": 3, "vdim": 5}, {}),
    ({}, {"attn_mask": True}),
])
def test_multihead_attention(kwargs, masks):
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(8, 2, **kwargs).double()
    sm = nn.MultiheadAttention(8, 2, **kwargs).double()
    from _nn_oracle import close, copy_state

    copy_state(sm, tm)
    bf = kwargs.get("batch_first", False)
    L, S, N = 4, 5, 3
    q = data(N, L, 8) if bf else data(L, N, 8)
    k = data(*((N, S) if bf else (S, N)), kwargs.get("kdim", 8), seed=1)
    v = data(*((N, S) if bf else (S, N)), kwargs.get("vdim", 8), seed=2)
    extra_s, extra_t = {}, {}
    if masks.get("key_padding_mask"):
        kpm = np.zeros((N, S), bool)
        kpm[0, -2:] = True
        extra_s["key_padding_mask"], extra_t["key_padding_mask"] = st.tensor(kpm), torch.tensor(kpm)
    if masks.get("attn_mask"):
        am = np.triu(np.ones((L, S), bool), 1)
        extra_s["attn_mask"], extra_t["attn_mask"] = st.tensor(am), torch.tensor(am)
    qs, ks, vs = (st.tensor(a, requires_grad=True) for a in (q, k, v))
    qt, kt, vt = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
    os_, ws = sm(qs, ks, vs, **extra_s)
    ot, wt = tm(qt, kt, vt, **extra_t)
    close(os_, ot, 1e-9, what="output")
    close(ws, wt, 1e-9, what="weights")
    (os_.sum() + (ws * ws).sum()).backward()
    (ot.sum() + (wt * wt).sum()).backward()
    for a, b in ((qs, qt), (ks, kt), (vs, vt)):
        close(a.grad, b.grad, 1e-9)
    tp = dict(tm.named_parameters())
    for name, p in sm.named_parameters():
        close(p.grad, tp[name].grad, 1e-9, what=name)


def test_dropout_train_and_eval():
    d = nn.Dropout(0.25)
    x = st.ones(20000)
    y = d(x)
    kept = (y != 0).to(st.float32).mean().item()
    assert 0.72 < kept < 0.78
    np.testing.assert_allclose(y.numpy()[y.numpy() != 0], 1 / 0.75, rtol=1e-6)
    d.eval()
    assert d(x) is x
    with pytest.raises(ValueError):
        nn.Dropout(1.5)


def test_float32_layers_keep_float32():
    m = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.LazyLinear(2)
                      if hasattr(nn, "LazyLinear") else nn.Linear(3 * 2 * 2, 2))
    y = m(st.randn(2, 2, 6, 6))
    assert y.dtype is st.float32 and tuple(y.shape) == (2, 2)


@pytest.mark.parametrize("name", ["BatchNorm1d", "BatchNorm2d"])
@pytest.mark.parametrize("rank", [1, 2, 3, 4, 5])
def test_batchnorm_rank_verdict_matches_torch(name: str, rank: int) -> None:
    """A wrong input rank: torch's ValueError and words ("expected 4D input (got 3D input)"), after the layer's name."""
    sm, tm = pair(name, 3)
    shape = (2, 3, 4, 4, 2)[:rank] if rank > 1 else (3,)
    try:
        tm(torch.zeros(shape, dtype=torch.float64))
    except ValueError as e:
        with pytest.raises(ValueError) as ours:
            sm(st.zeros(*shape, dtype=st.float64))
        assert str(ours.value) == f"{name}: {e}"
        assert ours.value.code == "norm_error_input_rank"
    else:
        assert tuple(sm(st.zeros(*shape, dtype=st.float64)).shape) == shape
