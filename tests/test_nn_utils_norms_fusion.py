"""nn.utils against torch: hook-based spectral_norm and weight_norm (state dict names, power iteration, values
and gradients over several steps, removal), batch norm fusion, get_total_norm / clip_grads_with_norm_ /
clip_grad_norm, skip_init and the conv weight memory format conversion."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from tests._nn_oracle import close, to_st

import shapetorch as st


def _copy_into(sm, tm):
    sm.load_state_dict({k: to_st(v) for k, v in tm.state_dict().items()})


SN_CASES = [
    ("Linear", (5, 4), (3, 5), {}),
    ("Conv2d", (2, 3, 3), (2, 2, 5, 5), {"n_power_iterations": 3}),
    ("ConvTranspose2d", (3, 2, 3), (1, 3, 4, 4), {}),  # dim 1 by default
    ("Linear", (4, 6), (2, 4), {"dim": 1, "eps": 1e-6}),
]


@pytest.mark.parametrize(("cls", "args", "shape", "kw"), SN_CASES)
def test_spectral_norm_as_torch(cls, args, shape, kw):
    tm = torch.nn.utils.spectral_norm(getattr(torch.nn, cls)(*args).double(), **kw)
    sm = st.nn.utils.spectral_norm(getattr(st.nn, cls)(*args).double(), **kw)
    assert list(sm.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in sm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    _copy_into(sm, tm)  # the same weight and starting u, v
    rng = np.random.default_rng(0)
    for step in range(3):  # training: each forward runs the power iteration on the buffers
        x = rng.normal(size=shape)
        xt, xs = torch.tensor(x, requires_grad=True), st.tensor(x, requires_grad=True)
        yt, ys = tm(xt), sm(xs)
        close(ys, yt, 1e-10, what=f"output {step}")
        for k in ("weight_u", "weight_v"):
            close(getattr(sm, k), getattr(tm, k), 1e-10, what=k)
        close(sm.weight, tm.weight, 1e-10, what="weight")
        yt.square().sum().backward()
        ys.square().sum().backward()
        close(sm.weight_orig.grad, tm.weight_orig.grad, 1e-9, what="grad of weight_orig")
        close(xs.grad, xt.grad, 1e-9, what="grad of input")
    tm.eval()
    sm.eval()
    u = sm.weight_u.clone()
    x = rng.normal(size=shape)
    close(sm(st.tensor(x)), tm(torch.tensor(x)), 1e-10, what="eval output")
    np.testing.assert_array_equal(sm.weight_u.numpy(), u.numpy())  # no power iteration in eval
    torch.nn.utils.remove_spectral_norm(tm)
    st.nn.utils.remove_spectral_norm(sm)
    assert list(sm.state_dict()) == list(tm.state_dict())
    close(sm.weight, tm.weight, 1e-10, what="weight after removal")
    assert isinstance(sm.weight, st.nn.Parameter)


def test_spectral_norm_refusals_as_torch():
    for lib in (st, torch):
        m = lib.nn.utils.spectral_norm(lib.nn.Linear(3, 2))
        with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
            lib.nn.utils.spectral_norm(m)
        with pytest.raises(ValueError, match="spectral_norm of 'bias' not found"):
            lib.nn.utils.remove_spectral_norm(m, "bias")
        with pytest.raises(ValueError, match="n_power_iterations to be positive"):
            lib.nn.utils.spectral_norm(lib.nn.Linear(3, 2), n_power_iterations=0)
        with pytest.raises(ValueError, match="uninitialized parameters"):
            lib.nn.utils.spectral_norm(lib.nn.LazyLinear(2))


@pytest.mark.parametrize(("cls", "args", "shape", "dim"), [
    ("Linear", (5, 4), (3, 5), 0), ("Conv1d", (2, 3, 3), (2, 2, 6), 1), ("Linear", (4, 3), (2, 4), None),
])
def test_weight_norm_as_torch(cls, args, shape, dim):
    with pytest.warns(FutureWarning, match="deprecated"):
        sm = st.nn.utils.weight_norm(getattr(st.nn, cls)(*args).double(), dim=dim)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        tm = torch.nn.utils.weight_norm(getattr(torch.nn, cls)(*args).double(), dim=dim)
    assert list(sm.state_dict()) == list(tm.state_dict())
    assert tuple(sm.weight_g.shape) == tuple(tm.weight_g.shape)  # ||v|| over all dims but the kept one
    _copy_into(sm, tm)
    x = np.random.default_rng(1).normal(size=shape)
    xt, xs = torch.tensor(x), st.tensor(x)
    yt, ys = tm(xt), sm(xs)
    close(ys, yt, 1e-10, what="output")
    yt.sum().backward()
    ys.sum().backward()
    for k in ("weight_g", "weight_v"):
        close(getattr(sm, k).grad, getattr(tm, k).grad, 1e-9, what=f"grad of {k}")
    torch.nn.utils.remove_weight_norm(tm)
    st.nn.utils.remove_weight_norm(sm)
    assert list(sm.state_dict()) == list(tm.state_dict())
    close(sm.weight, tm.weight, 1e-10)


def test_weight_norm_g_is_the_norm_of_the_weight():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        tm = torch.nn.Linear(4, 3)
        sm = st.nn.Linear(4, 3)
        _copy_into(sm, tm)
        torch.nn.utils.weight_norm(tm)
        st.nn.utils.weight_norm(sm)
        close(sm.weight_g, tm.weight_g, 1e-6)
        close(sm.weight_v, tm.weight_v, 0)
        for lib, m in ((st, sm), (torch, tm)):
            with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
                lib.nn.utils.weight_norm(m)
            with pytest.raises(ValueError, match="weight_norm of 'bias' not found"):
                lib.nn.utils.remove_weight_norm(m, "bias")


def _bn(lib, n, seed):
    bn = lib.nn.BatchNorm2d(n).double() if lib is torch else lib.nn.BatchNorm2d(n).double()
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        bn.running_mean.copy_(lib.tensor(rng.normal(size=n)))
        bn.running_var.copy_(lib.tensor(rng.uniform(0.5, 2, size=n)))
        bn.weight.copy_(lib.tensor(rng.normal(size=n)))
        bn.bias.copy_(lib.tensor(rng.normal(size=n)))
    return bn.eval()


@pytest.mark.parametrize(("cls", "args", "transpose", "bias"), [
    ("Conv2d", (3, 4, 3), False, True), ("Conv2d", (3, 4, 3), False, False), ("ConvTranspose2d", (3, 4, 3), True, True),
])
def test_fuse_conv_bn_eval_as_torch(cls, args, transpose, bias):
    tc = getattr(torch.nn, cls)(*args, bias=bias).double().eval()
    sc = getattr(st.nn, cls)(*args, bias=bias).double().eval()
    _copy_into(sc, tc)
    tb, sb = _bn(torch, 4, 0), _bn(st, 4, 0)
    tf = torch.nn.utils.fuse_conv_bn_eval(tc, tb, transpose)
    sf = st.nn.utils.fuse_conv_bn_eval(sc, sb, transpose)
    close(sf.weight, tf.weight, 1e-12)
    close(sf.bias, tf.bias, 1e-12)
    assert sc.weight is not sf.weight  # a copy: the original is untouched
    x = st.tensor(np.random.default_rng(2).normal(size=(2, 3, 5, 5)))
    close(sf(x), sb(sc(x)).detach().numpy(), 1e-10)  # the fused layer is the pair's composition
    sc.train()
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        st.nn.utils.fuse_conv_bn_eval(sc, sb)


def test_fuse_linear_bn_eval_as_torch():
    tl, sl = torch.nn.Linear(3, 4).double().eval(), st.nn.Linear(3, 4).double().eval()
    _copy_into(sl, tl)
    tb, sb = _bn(torch, 4, 1), _bn(st, 4, 1)
    tf, sf = torch.nn.utils.fuse_linear_bn_eval(tl, tb), st.nn.utils.fuse_linear_bn_eval(sl, sb)
    close(sf.weight, tf.weight, 1e-12)
    close(sf.bias, tf.bias, 1e-12)
    w, b = st.nn.utils.fuse_linear_bn_weights(sl.weight, None, sb.running_mean, sb.running_var, sb.eps, sb.weight,
                                               sb.bias)
    tw, tb_ = torch.nn.utils.fuse_linear_bn_weights(tl.weight, None, tb.running_mean, tb.running_var, tb.eps,
                                                    tb.weight, tb.bias)
    close(w, tw, 1e-12)
    close(b, tb_, 1e-12)
    assert isinstance(w, st.nn.Parameter) and w.requires_grad == tw.requires_grad
    assert b.requires_grad == tb_.requires_grad
    for lib, lin in ((st, sl), (torch, tl)):
        with pytest.raises(AssertionError, match="linear.out_features == bn.num_features"):
            lib.nn.utils.fuse_linear_bn_eval(lin, _bn(lib, 3, 0))


def _grads(lib, scale):
    rng = np.random.default_rng(3)
    ps = [lib.nn.Parameter(lib.tensor(rng.normal(size=s))) for s in ((2, 3), (4,))]
    for p in ps:
        p.grad = lib.tensor(rng.normal(size=tuple(p.shape)) * scale)
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf"), 3.5])
@pytest.mark.parametrize("scale", [0.05, 5.0])
def test_total_norm_and_clipping_as_torch(norm_type, scale):
    sp, tp = _grads(st, scale), _grads(torch, scale)
    sn = st.nn.utils.get_total_norm([p.grad for p in sp], norm_type)
    tn = torch.nn.utils.get_total_norm([p.grad for p in tp], norm_type)
    close(sn, tn, 1e-12)
    st.nn.utils.clip_grads_with_norm_(sp, 1.0, sn)
    torch.nn.utils.clip_grads_with_norm_(tp, 1.0, tn)
    for a, b in zip(sp, tp):
        close(a.grad, b.grad, 1e-12)
    sp, tp = _grads(st, scale), _grads(torch, scale)
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        sn = st.nn.utils.clip_grad_norm(sp, 0.7, norm_type)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        tn = torch.nn.utils.clip_grad_norm(tp, 0.7, norm_type)
    close(sn, tn, 1e-12)
    for a, b in zip(sp, tp):
        close(a.grad, b.grad, 1e-12)


def test_total_norm_refuses_nonfinite_when_asked():
    for lib in (st, torch):
        g = lib.tensor([1.0, float("inf")])
        assert lib.nn.utils.get_total_norm([g]).item() == float("inf")
        with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
            lib.nn.utils.get_total_norm([g], error_if_nonfinite=True)
        assert lib.nn.utils.get_total_norm([]).item() == 0.0


def test_skip_init_as_torch():
    for lib in (st, torch):
        m = lib.nn.utils.skip_init(lib.nn.Linear, 5, 3, bias=True)
        assert isinstance(m, lib.nn.Linear) and tuple(m.weight.shape) == (3, 5) and m.weight.requires_grad
        assert str(m.weight.device) == "cpu"
        with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
            lib.nn.utils.skip_init(lib.nn.ReLU)
        with pytest.raises(RuntimeError, match="Expected a Module"):
            lib.nn.utils.skip_init(int)


def test_conv_weight_memory_format_as_torch():
    tm = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Sequential(torch.nn.ConvTranspose2d(4, 2, 2)),
                             torch.nn.Conv1d(2, 2, 1))
    sm = st.nn.Sequential(st.nn.Conv2d(3, 4, 3), st.nn.ReLU(), st.nn.Sequential(st.nn.ConvTranspose2d(4, 2, 2)),
                          st.nn.Conv1d(2, 2, 1))
    _copy_into(sm, tm)
    assert torch.nn.utils.convert_conv2d_weight_memory_format(tm, torch.channels_last) is tm
    assert st.nn.utils.convert_conv2d_weight_memory_format(sm, st.channels_last) is sm
    for (k, a), (_, b) in zip(sm.named_parameters(), tm.named_parameters()):
        assert a.stride() == b.stride(), k
        close(a, b, 0, what=k)
    t3 = torch.nn.Conv3d(2, 3, 2)
    s3 = st.nn.Conv3d(2, 3, 2)
    torch.nn.utils.convert_conv3d_weight_memory_format(t3, torch.channels_last_3d)
    st.nn.utils.convert_conv3d_weight_memory_format(s3, st.channels_last_3d)
    assert s3.weight.stride() == t3.weight.stride()
