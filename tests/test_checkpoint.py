"""``utils.checkpoint`` against torch: the same values and gradients as without checkpointing, the
function run again in backward, the random state replayed, and torch's errors and warnings."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tcp

import shapetorch as st
import shapetorch.utils.checkpoint as scp


def _block(lib: Any) -> Any:
    return lib.nn.Sequential(lib.nn.Linear(6, 8), lib.nn.GELU(), lib.nn.Linear(8, 8), lib.nn.Tanh(), lib.nn.Linear(8, 3))


def _pair() -> tuple[Any, Any]:
    torch.manual_seed(0)
    t = _block(torch).double()
    s = _block(st).double()
    s.load_state_dict({k: st.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return s, t


X = np.random.default_rng(1).standard_normal((5, 6))


@pytest.mark.parametrize("reentrant", [False, True])
def test_gradients_match_torch(reentrant: bool) -> None:
    s, t = _pair()
    calls = {"n": 0}

    def counted(m: Any) -> Any:
        def f(x: Any) -> Any:
            calls["n"] += 1
            return m(x) * 2
        return f

    xs = st.tensor(X, requires_grad=True)
    xt = torch.tensor(X, requires_grad=True)
    ys = scp.checkpoint(counted(s), xs, use_reentrant=reentrant)
    yt = tcp.checkpoint(lambda x: t(x) * 2, xt, use_reentrant=reentrant)
    np.testing.assert_allclose(ys.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
    assert calls["n"] == 1
    (ys ** 2).sum().backward()
    (yt ** 2).sum().backward()
    assert calls["n"] == 2  # run again in backward
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=1e-10)
    for (n, ps), pt in zip(s.named_parameters(), t.parameters(), strict=True):
        np.testing.assert_allclose(ps.grad.numpy(), pt.grad.numpy(), rtol=1e-10, err_msg=n)


def test_keeps_fewer_tensors_for_backward() -> None:
    s, _ = _pair()
    xs = st.tensor(X, requires_grad=True)
    kept: list[Any] = []

    def count(fn: Any) -> int:
        kept.clear()
        with st.autograd.graph.saved_tensors_hooks(lambda v: kept.append(v) or v, lambda v: v):
            fn()
        return len(kept)

    plain = count(lambda: s(xs).sum())
    checkpointed = count(lambda: scp.checkpoint(s, xs, use_reentrant=False).sum())
    assert plain > 4
    assert checkpointed == 0  # the checkpoint's own hook is innermost: nothing reaches the outer one


def test_non_reentrant_serves_autograd_grad() -> None:
    s, t = _pair()
    xs = st.tensor(X, requires_grad=True)
    xt = torch.tensor(X, requires_grad=True)
    (gs,) = st.autograd.grad(scp.checkpoint(s, xs, use_reentrant=False).sum(), xs)
    (gt,) = torch.autograd.grad(tcp.checkpoint(t, xt, use_reentrant=False).sum(), xt)
    np.testing.assert_allclose(gs.numpy(), gt.numpy(), rtol=1e-10)


def test_reentrant_refuses_autograd_grad_as_torch() -> None:
    s, t = _pair()
    xt = torch.tensor(X, requires_grad=True)
    with pytest.raises(RuntimeError) as et:
        torch.autograd.grad(tcp.checkpoint(t, xt, use_reentrant=True).sum(), xt)
    xs = st.tensor(X, requires_grad=True)
    with pytest.raises(RuntimeError) as es:
        st.autograd.grad(scp.checkpoint(s, xs, use_reentrant=True).sum(), xs)
    assert str(es.value) == str(et.value)
    # backward(inputs=...) is refused too; a plain backward afterwards is fine (the flag is restored)
    with pytest.raises(RuntimeError, match="incompatible with .grad"):
        scp.checkpoint(s, xs, use_reentrant=True).sum().backward(inputs=[xs])
    scp.checkpoint(s, xs, use_reentrant=True).sum().backward()
    assert xs.grad is not None


def test_reentrant_without_grad_inputs_warns_and_detaches_as_torch() -> None:
    s, t = _pair()
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        yt = tcp.checkpoint(t, torch.tensor(X), use_reentrant=True)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        ys = scp.checkpoint(s, st.tensor(X), use_reentrant=True)
    assert ys.requires_grad == yt.requires_grad is False
    # non-reentrant connects the parameters even so
    assert scp.checkpoint(s, st.tensor(X), use_reentrant=False).requires_grad


@pytest.mark.parametrize("reentrant", [False, True])
def test_dropout_mask_replayed(reentrant: bool) -> None:
    drop = st.nn.Dropout(0.5)
    x = st.randn(64, 32, requires_grad=True)

    st.manual_seed(3)
    plain = drop(x * 3)
    plain.sum().backward()
    g_plain = x.grad.clone()
    x.grad = None
    st.manual_seed(3)
    ck = scp.checkpoint(lambda v: drop(v * 3), x, use_reentrant=reentrant)
    after_forward = st.rand(1)  # draws between forward and backward must not shift the replayed mask
    ck.sum().backward()
    np.testing.assert_array_equal(ck.detach().numpy(), plain.detach().numpy())
    np.testing.assert_array_equal(x.grad.numpy(), g_plain.numpy())
    st.manual_seed(3)
    drop(x * 3)
    np.testing.assert_array_equal(st.rand(1).numpy(), after_forward.numpy())  # the outer stream is untouched


def test_checkpoint_sequential_matches_torch() -> None:
    s, t = _pair()
    xs = st.tensor(X, requires_grad=True)
    xt = torch.tensor(X, requires_grad=True)
    ys = scp.checkpoint_sequential(s, 2, xs, use_reentrant=False)
    yt = tcp.checkpoint_sequential(t, 2, xt, use_reentrant=False)
    np.testing.assert_allclose(ys.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
    ys.pow(2).sum().backward()
    yt.pow(2).sum().backward()
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(s[0].weight.grad.numpy(), t[0].weight.grad.numpy(), rtol=1e-10)


def test_arguments_as_torch() -> None:
    s, t = _pair()
    xs, xt = st.tensor(X), torch.tensor(X)
    for lib, mod, m, x in ((torch, tcp, t, xt), (st, scp, s, xs)):
        with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
            mod.checkpoint(lambda v, scale=1: m(v) * scale, x, use_reentrant=True, scale=2)
        with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
            mod.checkpoint(m, x, use_reentrant=True, debug=True)
        with pytest.raises(ValueError, match="determinism_check"):
            mod.checkpoint(m, x, use_reentrant=False, determinism_check="strict")
        with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
            mod.checkpoint(m, x.requires_grad_())
        x.requires_grad_(False)
        # keyword arguments reach the function in the non-reentrant variant
        y = mod.checkpoint(lambda v, scale=1: m(v) * scale, x, use_reentrant=False, scale=2)
        assert y.shape == (5, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scp.checkpoint(s, xs, use_reentrant=False)  # no warning when the variant is chosen


def test_recomputation_that_saves_less_is_an_error() -> None:
    state = {"first": True}
    w = st.randn(4, 4, requires_grad=True)

    def f(v: Any) -> Any:
        out = (v @ w).tanh()
        if state["first"]:
            out = out.exp()
        state["first"] = False
        return out

    y = scp.checkpoint(f, st.randn(3, 4), use_reentrant=False)
    with pytest.raises(RuntimeError, match="must run the same ops"):
        y.sum().backward()
