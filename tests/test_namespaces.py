"""shapetorch.special, .func, .distributions, .testing, .amp and the entry points against torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import shapetorch as st

X = np.linspace(0.05, 3.0, 17)


def _args(name):
    if name in ("xlogy", "xlog1py", "zeta", "gammainc", "gammaincc"):
        return (X, X + 1)
    if "polynomial" in name:
        return (X / 3, np.arange(17) % 6)
    return {"polygamma": (2, X), "multigammaln": (X + 2, 3), "softmax": (X, 0), "log_softmax": (X, 0),
            "logsumexp": (X, 0)}.get(name, (X,))


def _lib(args, lib):
    return [lib.tensor(a) if isinstance(a, np.ndarray) else a for a in args]


@pytest.mark.parametrize("name", [n for n in dir(torch.special) if not n.startswith("_") and callable(getattr(
    torch.special, n)) and n not in ("Tensor",)])
def test_special_values_and_grads(name):
    args = _args(name)
    t = getattr(torch.special, name)(*_lib(args, torch))
    s = getattr(st.special, name)(*_lib(args, st))
    assert s.dtype.name == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(s.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)
    ta, sa = _lib(args, torch), _lib(args, st)
    k = 1 if name in ("gammainc", "gammaincc") else 0  # torch differentiates these in `other` only
    x_t = [a for a in ta if isinstance(a, torch.Tensor)][k].requires_grad_(True)
    x_s = [a for a in sa if isinstance(a, st.Tensor)][k].requires_grad_(True)
    out_t = getattr(torch.special, name)(*ta)
    out_s = getattr(st.special, name)(*sa)
    assert out_s.requires_grad == out_t.requires_grad, name
    if out_t.requires_grad and name != "zeta":
        (g_t,) = torch.autograd.grad(out_t.sum(), x_t, allow_unused=True)
        (g_s,) = st.autograd.grad(out_s.sum(), x_s, allow_unused=True)
        if g_t is not None:
            np.testing.assert_allclose(g_s.numpy(), g_t.numpy(), rtol=1e-8, atol=1e-10)


def test_func_transforms():
    a = np.array([0.3, -1.2, 2.0])
    w = np.random.default_rng(0).standard_normal((3, 3))

    def f(lib):
        return lambda x: (lib.sin(x) * x).sum() * x.sum()

    def g(lib):
        return lambda x: lib.tanh(x @ lib.tensor(w))

    for name, fn in [("grad", f), ("hessian", f), ("jacrev", g), ("jacfwd", g)]:
        t = getattr(torch.func, name)(fn(torch))(torch.tensor(a))
        s = getattr(st.func, name)(fn(st))(st.tensor(a))
        np.testing.assert_allclose(s.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)
    t = torch.func.grad(torch.func.grad(torch.sin))(torch.tensor(1.0, dtype=torch.float64))
    s = st.func.grad(st.func.grad(st.sin))(st.tensor(1.0, dtype=st.float64))
    assert float(s) == pytest.approx(float(t))
    _, fn_t = torch.func.vjp(torch.sin, torch.tensor(a))
    _, fn_s = st.func.vjp(st.sin, st.tensor(a))
    np.testing.assert_allclose(fn_s(st.ones(3, dtype=st.float64))[0].numpy(),
                               fn_t(torch.ones(3, dtype=torch.float64))[0].numpy())
    np.testing.assert_allclose(st.func.jvp(st.sin, (st.tensor(a),), (st.tensor(a),))[1].numpy(),
                               torch.func.jvp(torch.sin, (torch.tensor(a),), (torch.tensor(a),))[1].numpy())
    with pytest.raises(RuntimeError):
        st.func.grad(lambda x: x * 2)(st.tensor(a))


@pytest.mark.parametrize("act", ["exp", "tanh", "sigmoid", "sin", "relu", "silu", "gelu", "softplus", "log_softmax"])
def test_forward_over_reverse_as_torchs(act):
    """jvp of grad, jacfwd of grad and of jacrev (forward over reverse: Hessian-vector products): the gradient's
    own ops are differentiated in forward mode, including a saved output (exp's, tanh's) whose tangent must come
    with it. These gave zeros, then half the exp term, before the tangents went with the saved outputs."""
    a = np.array([0.5, -1.0, 2.0, 0.1])
    w = np.random.default_rng(1).standard_normal((4, 4))

    def f(lib):
        fn = getattr(lib.nn.functional, act, None) if act in ("silu", "gelu", "softplus") else None

        def loss(x):
            h = x @ lib.tensor(w)
            y = fn(h) if fn is not None else h.log_softmax(-1) if act == "log_softmax" else getattr(h, act)()
            return (y * y).sum() + (y * x).sum()
        return loss

    x_t, x_s, v = torch.tensor(a), st.tensor(a), np.array([1.0, 2.0, -1.0, 0.5])
    out_t = torch.func.jvp(torch.func.grad(f(torch)), (x_t,), (torch.tensor(v),))
    out_s = st.func.jvp(st.func.grad(f(st)), (x_s,), (st.tensor(v),))
    for s, t in zip(out_s, out_t):
        assert not s.requires_grad  # (the inner gradient's graph is not the caller's, as in torch)
        np.testing.assert_allclose(s.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)
    for outer, inner in (("jacfwd", "grad"), ("jacfwd", "jacrev"), ("jacrev", "jacrev")):
        t = getattr(torch.func, outer)(getattr(torch.func, inner)(f(torch)))(x_t)
        s = getattr(st.func, outer)(getattr(st.func, inner)(f(st)))(x_s)
        np.testing.assert_allclose(s.numpy(), t.numpy(), rtol=1e-10, atol=1e-12, err_msg=f"{outer}({inner})")
    assert not st.func.grad(f(st))(x_s).requires_grad


def test_functional_call_and_stack_module_state():
    m = st.nn.Linear(3, 2)
    zeros = {k: v.detach() * 0 for k, v in m.named_parameters()}
    assert not st.func.functional_call(m, zeros, (st.ones(3),)).any()
    assert m.weight.abs().sum().item() > 0  # its own parameters are back
    params, _ = st.func.stack_module_state([st.nn.Linear(3, 2) for _ in range(4)])
    assert tuple(params["weight"].shape) == (4, 2, 3) and params["weight"].requires_grad


@pytest.mark.parametrize("case", [
    ("Normal", (0.5, 1.5), [0.3, -1.2, 2.0]), ("Laplace", (0.5, 1.5), [0.3, -1.2, 2.0]),
    ("Exponential", (1.5,), [0.3, 1.2, 2.0]), ("Uniform", (-2.0, 3.0), [0.3, -1.2, 2.0]),
    ("Bernoulli", (0.3,), [0.0, 1.0, 1.0]), ("Categorical", (np.array([0.2, 0.5, 0.3]),), [0.0, 2.0, 1.0])])
def test_distributions(case):
    name, args, value = case
    p_t = getattr(torch.distributions, name)(*_lib(args, torch))
    p_s = getattr(st.distributions, name)(*_lib(args, st))
    v = np.array(value)
    np.testing.assert_allclose(p_s.log_prob(st.tensor(v)).numpy(), p_t.log_prob(torch.tensor(v)).numpy(), rtol=1e-6)
    np.testing.assert_allclose(p_s.entropy().numpy(), p_t.entropy().numpy(), rtol=1e-6)
    assert tuple(p_s.sample((4,)).shape) == tuple(p_t.sample((4,)).shape)
    assert float(st.distributions.kl_divergence(p_s, p_s).sum()) == pytest.approx(0.0, abs=1e-6)


def test_rsample_is_differentiable_and_validation():
    loc = st.tensor(0.5, requires_grad=True)
    st.distributions.Normal(loc, 2.0).rsample((5,)).sum().backward()
    assert loc.grad.item() == 5.0
    with pytest.raises(ValueError):
        st.distributions.Normal(0.0, -1.0)
    with pytest.raises(ValueError):
        st.distributions.Bernoulli(probs=0.3, logits=0.1)


def test_multivariate_normal_and_kl():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 3))
    cov, mu, v = a @ a.T + np.eye(3), rng.standard_normal(3), rng.standard_normal((5, 3))
    for kw, m in (("covariance_matrix", cov), ("precision_matrix", cov), ("scale_tril", np.linalg.cholesky(cov))):
        p_t = torch.distributions.MultivariateNormal(torch.tensor(mu), **{kw: torch.tensor(m)})
        p_s = st.distributions.MultivariateNormal(st.tensor(mu), **{kw: st.tensor(m)})
        np.testing.assert_allclose(p_s.log_prob(st.tensor(v)).numpy(), p_t.log_prob(torch.tensor(v)).numpy())
    q_t = torch.distributions.MultivariateNormal(torch.zeros(3, dtype=torch.float64), torch.tensor(2 * cov))
    q_s = st.distributions.MultivariateNormal(st.zeros(3, dtype=st.float64), st.tensor(2 * cov))
    assert float(st.distributions.kl_divergence(p_s, q_s)) == pytest.approx(
        float(torch.distributions.kl_divergence(p_t, q_t)))


@pytest.mark.parametrize("case", [([1.0, 2.0, 3.0], [1.0, 2.5, 3.0], "float32"), ([1, 2, 3], [1, 2, 4], "int64"),
                                  ([True, False], [True, True], "bool"), ([0.0], [1e-3], "float16")])
def test_assert_close_message(case):
    a, b, dtype = case
    msgs = []
    for lib in (torch, st):
        with pytest.raises(AssertionError) as e:
            lib.testing.assert_close(lib.tensor(a, dtype=getattr(lib, dtype)), lib.tensor(b, dtype=getattr(lib, dtype)))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    st.testing.assert_close(st.tensor(a, dtype=getattr(st, dtype)), st.tensor(a, dtype=getattr(st, dtype)))


@pytest.fixture
def _torch_validation_restored():
    """torch.compile's first call turns torch.distributions' argument validation off for the whole process (its
    dynamo import does); a later test in this worker would then compare against a torch that validates nothing."""
    before = torch.distributions.Distribution._validate_args
    yield
    torch.distributions.Distribution.set_default_validate_args(before)


def test_entry_points(_torch_validation_restored):
    m = st.nn.Linear(2, 2)
    for lib, mod in ((torch, torch.nn.Linear(2, 2)), (st, m)):  # a module comes back wrapped, as torch's does
        c = lib.compile(mod, backend="eager") if lib is torch else lib.compile(mod)
        assert type(c).__name__ == "OptimizedModule" and c._orig_mod is mod and c.weight is mod.weight
        assert list(c.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
        c.eval()
        assert not mod.training
    assert st.compile(m, disable=True) is m
    f = st.compile(lambda x: x + 1)
    assert f(1) == 2 and st.compile()(f) is f
    assert not st.backends.cudnn.is_available() and not st.backends.mps.is_available()
    st.backends.cudnn.benchmark = True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        off = st.amp.GradScaler()
    assert not off.is_enabled() and off.scale(st.tensor(2.0)).item() == 2.0 and off.get_scale() == 1.0
    p = st.nn.Parameter(st.tensor([1.0, 2.0]))
    opt = st.optim.SGD([p], lr=0.1)
    scaler = st.amp.GradScaler("cpu", init_scale=4.0)
    scaler.scale((p * 3).sum()).backward()
    scaler.step(opt)
    scaler.update()
    np.testing.assert_allclose(p.detach().numpy(), [0.7, 1.7], rtol=1e-6)  # the unscaled gradient, 3
    with st.amp.autocast(device_type="cpu"):
        assert (st.ones(2, 2) @ st.ones(2, 2)).dtype is st.bfloat16
