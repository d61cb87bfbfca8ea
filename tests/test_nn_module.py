"""Module machinery against torch: registration, traversal, state_dict keys, load_state_dict, train/eval,
zero_grad, to(dtype), hooks, repr, containers, init distributions."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import shapetorch as st
from shapetorch import nn


def build(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.features = lib.nn.Sequential(lib.nn.Conv2d(1, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.ReLU())
            self.heads = lib.nn.ModuleDict({"a": lib.nn.Linear(4, 2), "b": lib.nn.Linear(4, 3, bias=False)})
            self.blocks = lib.nn.ModuleList([lib.nn.LayerNorm(4), lib.nn.Dropout(0.1)])
            self.register_buffer("scale", lib.ones(1))
            self.register_buffer("tmp", lib.zeros(2), persistent=False)
            self.shared = self.heads["a"]

        def forward(self, x):
            h = self.features(x).mean((2, 3))
            for b in self.blocks:
                h = b(h)
            return self.heads["a"](h) * self.scale

    return Net()


def test_names_and_state_dict_keys_match_torch():
    s, t = build(st), build(torch)
    assert [n for n, _ in s.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in s.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert list(s.state_dict()) == list(t.state_dict())
    assert [n for n, _ in s.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in s.named_children()] == [n for n, _ in t.named_children()]
    assert str(s) == str(t).replace("torch", "shapetorch")
    assert len(list(s.parameters())) == len(list(t.parameters()))


def test_load_state_dict_strict_and_not():
    s, t = build(st), build(torch)
    s.load_state_dict({k: st.from_numpy(v.numpy().copy()) for k, v in t.state_dict().items()})
    for (n, a), (_, b) in zip(s.state_dict().items(), t.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=n)
    sd = s.state_dict()
    del sd["scale"]
    sd["extra"] = st.ones(1)
    with pytest.raises(st.ShapetorchError, match="Missing key"):
        s.load_state_dict(sd)
    res = s.load_state_dict(sd, strict=False)
    assert res.missing_keys == ["scale"] and res.unexpected_keys == ["extra"]


def test_state_dict_is_detached_and_shares_storage():
    m = nn.Linear(2, 2)
    sd = m.state_dict()
    assert not sd["weight"].requires_grad
    with st.no_grad():
        m.weight.fill_(3.0)
    assert sd["weight"].numpy().max() == 3.0


def test_train_eval_zero_grad_and_requires_grad():
    m = build(st)
    m.eval()
    assert all(not x.training for x in m.modules())
    m.train()
    assert all(x.training for x in m.modules())
    m(st.randn(2, 1, 5, 5)).sum().backward()
    assert all(p.grad is not None for p in m.heads["a"].parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    m(st.randn(2, 1, 5, 5)).sum().backward()
    m.zero_grad(set_to_none=False)
    assert all(p.grad is None or not p.grad.numpy().any() for p in m.parameters())
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


def test_to_dtype_keeps_parameter_identity():
    m = nn.Linear(3, 2)
    w = m.weight
    m.double()
    assert m.weight is w and w.dtype is st.float64 and isinstance(w, nn.Parameter)
    assert m(st.randn(1, 3, dtype=st.float64)).dtype is st.float64
    m.to("cpu")
    assert m.weight.device == st.device("cpu")


def test_forward_hooks_and_pre_hooks():
    m = nn.Linear(2, 2)
    seen = []
    h1 = m.register_forward_hook(lambda mod, inp, out: seen.append(tuple(out.shape)))
    h2 = m.register_forward_pre_hook(lambda mod, inp: (inp[0] * 0,))
    y = m(st.ones(3, 2))
    np.testing.assert_allclose(y.detach().numpy(), np.broadcast_to(m.bias.detach().numpy(), (3, 2)))
    assert seen == [(3, 2)]
    h1.remove()
    h2.remove()
    m(st.ones(3, 2))
    assert seen == [(3, 2)]
    m.register_forward_hook(lambda mod, inp, out: out + 1)
    np.testing.assert_allclose(m(st.zeros(1, 2)).detach().numpy(), m.bias.detach().numpy()[None] + 1)


def test_setattr_rules_and_parameter():
    m = nn.Module()
    m.p = nn.Parameter(st.ones(2))
    m.sub = nn.Linear(1, 1)
    m.plain = 3
    assert list(dict(m.named_parameters())) == ["p", "sub.weight", "sub.bias"]
    with pytest.raises(TypeError):
        m.p = st.ones(2)
    p = nn.Parameter(st.ones(2))
    assert p.requires_grad and p.is_leaf and repr(p).startswith("Parameter containing:")
    assert not nn.Parameter(st.ones(1), requires_grad=False).requires_grad
    del m.sub
    assert "sub" not in dict(m.named_children())


def test_containers():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(seq) == 3 and isinstance(seq[1], nn.ReLU) and isinstance(seq[-1], nn.Linear)
    assert len(seq[:2]) == 2
    seq.append(nn.Sigmoid())
    assert tuple(seq(st.ones(4, 2)).shape) == (4, 1)
    ml = nn.ModuleList([nn.Linear(1, 1)])
    ml.append(nn.Linear(1, 1))
    ml += [nn.ReLU()]
    assert len(ml) == 3 and len(list(ml.parameters())) == 4
    md = nn.ModuleDict({"x": nn.ReLU()})
    md["y"] = nn.Tanh()
    assert list(md.keys()) == ["x", "y"] and "y" in md
    from collections import OrderedDict

    named = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.GELU())]))
    assert list(named.state_dict()) == ["fc.weight", "fc.bias"]
    assert named.get_submodule("fc") is named.fc
    assert named.get_parameter("fc.bias") is named.fc.bias


def test_reprs_match_torch():
    cases = [
        ("Conv2d", (3, 8, 3), {"stride": 2, "padding": 1, "bias": False}),
        ("ConvTranspose2d", (3, 8, 3), {"stride": 2, "output_padding": 1}),
        ("MaxPool2d", (2,), {}), ("BatchNorm1d", (4,), {}), ("LayerNorm", (4,), {}), ("Embedding", (10, 3), {}),
        ("Dropout", (0.2,), {}), ("LeakyReLU", (0.1,), {}), ("GELU", (), {}), ("Softmax", (1,), {}),
        ("GroupNorm", (2, 4), {}), ("Flatten", (), {}), ("Bilinear", (2, 3, 4), {}),
        ("MultiheadAttention", (4, 2), {}),
        ("Conv1d", (2, 4, 5), {"dilation": 2, "groups": 2, "padding": "same"}),
        ("Conv2d", (1, 1, 3), {"padding": "valid"}),
        ("LayerNorm", ([4, 4],), {"elementwise_affine": False}), ("LayerNorm", (4,), {"bias": False}),
        ("AvgPool1d", (3,), {"count_include_pad": False}), ("AvgPool1d", (3, 2, 1), {}), ("AvgPool2d", (2,), {}),
        ("ZeroPad2d", ((1, 2, 0, 1),), {}), ("ZeroPad1d", (2,), {}), ("ConstantPad2d", (1, 2.0), {}),
        ("ReflectionPad1d", (2,), {}),
    ]
    for name, args, kw in cases:
        t = repr(getattr(torch.nn, name)(*args, **kw))
        s = repr(getattr(nn, name)(*args, **kw))
        assert s == t, (s, t)


def test_parameter_container_reprs_match_torch() -> None:
    for lib in (torch, st):
        lib.manual_seed(0)
    made = [(lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(3, 4))]),
             lib.nn.ParameterDict({"a": lib.nn.Parameter(lib.ones(2, 3))})) for lib in (torch, st)]
    for theirs, ours in zip(*made):
        assert repr(ours).replace("shapetorch", "torch") == repr(theirs)


def test_default_init_distributions_as_torch():
    st.manual_seed(0)
    lin = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)  # kaiming_uniform(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    w = lin.weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound
    conv = nn.Conv2d(8, 16, 3)
    b = 1 / math.sqrt(8 * 9)
    assert np.abs(conv.weight.detach().numpy()).max() <= b and np.abs(conv.bias.detach().numpy()).max() <= b
    emb = nn.Embedding(1000, 50)
    assert abs(emb.weight.detach().numpy().std() - 1) < 0.02
    t = st.empty(200, 300)
    nn.init.xavier_normal_(t)
    assert abs(t.numpy().std() - math.sqrt(2 / 500)) < 0.003
    nn.init.kaiming_normal_(t, nonlinearity="relu")
    assert abs(t.numpy().std() - math.sqrt(2 / 300)) < 0.003
    nn.init.orthogonal_(t)
    np.testing.assert_allclose(t.numpy() @ t.numpy().T, np.eye(200), atol=1e-5)
    nn.init.trunc_normal_(t, std=1.0, a=-0.5, b=0.5)
    assert np.abs(t.numpy()).max() <= 0.5
    assert nn.init.calculate_gain("leaky_relu", 0.2) == torch.nn.init.calculate_gain("leaky_relu", 0.2)


def test_clip_grad_norm_matches_torch():
    a = np.random.default_rng(0).normal(size=(3, 4))
    b = np.random.default_rng(1).normal(size=(5,))
    ps = [nn.Parameter(st.tensor(a)), nn.Parameter(st.tensor(b))]
    pt = [torch.nn.Parameter(torch.tensor(a)), torch.nn.Parameter(torch.tensor(b))]
    for p, q in zip(ps, pt):
        p.grad = st.tensor(np.asarray(q.detach().numpy()) * 3)
        q.grad = q.detach() * 3
    ns = nn.utils.clip_grad_norm_(ps, 1.0)
    nt = torch.nn.utils.clip_grad_norm_(pt, 1.0)
    np.testing.assert_allclose(ns.item(), nt.item())
    for p, q in zip(ps, pt):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6)
