"""Work that stays on the WebGPU device: device-side index checks raised at the next sync, fills and integer
aranges made by kernels, fused optimizer steps; results against torch on the CPU.

Skipped without a WebGPU adapter, unless SHAPETORCH_REQUIRE_WEBGPU=1 (then it fails), as test_webgpu.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import shapetorch as st
from test_webgpu import (
    DEV,
    webgpu,  # noqa: F401  (the module fixture: skip or fail without an adapter)
)

F = st.nn.functional


def _counts() -> tuple[int, int]:
    s = st.memory_stats()
    return s["num_bytes_uploaded"], s["num_readbacks"]


@pytest.mark.parametrize("make", [
    lambda lib, dev: lib.zeros(2, 3, device=dev), lambda lib, dev: lib.ones(4, dtype=lib.int64, device=dev),
    lambda lib, dev: lib.full((2, 2), -1.5, device=dev), lambda lib, dev: lib.full((3,), True, device=dev),
    lambda lib, dev: lib.arange(7, device=dev), lambda lib, dev: lib.arange(-3, 10, 4, dtype=lib.int32, device=dev),
    lambda lib, dev: lib.zeros(3, device=dev).fill_(2.25), lambda lib, dev: lib.ones(3, device=dev).zero_(),
    lambda lib, dev: lib.arange(4, device=dev).fill_(1.7),
    lambda lib, dev: lib.eye(3, device=dev), lambda lib, dev: lib.eye(2, 5, dtype=lib.int64, device=dev),
    lambda lib, dev: lib.eye(4, 1, dtype=lib.bool, device=dev), lambda lib, dev: lib.eye(0, 3, device=dev),
])
def test_fills_and_arange_are_kernels(make):
    before = _counts()
    x = make(st, DEV)
    assert _counts() == before  # nothing uploaded, nothing read
    want = make(torch, "cpu")
    np.testing.assert_array_equal(x.cpu().numpy(), want.numpy())
    assert str(x.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]


def test_fill_with_a_device_scalar_reads_nothing():
    x = st.zeros(2, 2, device=DEV)
    v = st.tensor(3.5, device=DEV)
    before = _counts()
    x.fill_(v)
    assert _counts() == before
    np.testing.assert_array_equal(x.cpu().numpy(), torch.zeros(2, 2).fill_(torch.tensor(3.5)).numpy())


def test_index_select_reads_the_index_on_the_device():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(5, 4)).astype(np.float32)
    idx = np.array([3, 0, 0, 2])
    x = st.tensor(a, device=DEV, requires_grad=True)
    i = st.tensor(idx, device=DEV)
    before = _counts()
    out = x.index_select(1, i[:3]) * 2
    out.sum().backward()
    assert _counts() == before
    tx = torch.tensor(a, requires_grad=True)
    tout = tx.index_select(1, torch.tensor(idx[:3])) * 2
    tout.sum().backward()
    np.testing.assert_allclose(out.detach().cpu().numpy(), tout.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("op", ["nll_loss", "index_select", "gather", "embedding"])
def test_bad_index_raises_at_the_next_sync(op):
    x = st.zeros(3, 4, device=DEV)
    bad = st.tensor([0, 9], device=DEV)
    run = {"nll_loss": lambda: F.nll_loss(x[:2], bad), "index_select": lambda: x.index_select(1, bad),
           "gather": lambda: x.gather(1, bad.reshape(2, 1)), "embedding": lambda: F.embedding(bad, x)}[op]
    before = _counts()
    out = run()  # recorded; the device checks without waiting
    assert _counts() == before
    with pytest.raises(IndexError) as e:  # torch: IndexError on the CPU, a device-side assert on CUDA
        out.sum().item()
    assert e.value.code == "at_error_index_out_of_bounds"
    assert "9" in str(e.value)
    # the runtime goes on: the flag was cleared
    assert F.nll_loss(x[:2], st.tensor([1, 3], device=DEV)).item() == 0.0
    with pytest.raises(IndexError):  # the CPU raises at once
        {"nll_loss": lambda: F.nll_loss(st.zeros(2, 4), st.tensor([0, 9])),
         "index_select": lambda: st.zeros(3, 4).index_select(1, st.tensor([0, 9])),
         "gather": lambda: st.zeros(3, 4).gather(1, st.tensor([[0], [9]])),
         "embedding": lambda: F.embedding(st.tensor([0, 9]), st.zeros(3, 4))}[op]()


def test_synchronize_raises_a_failed_check():
    F.nll_loss(st.zeros(2, 3, device=DEV), st.tensor([0, 5], device=DEV))
    with pytest.raises(IndexError):
        st.synchronize()
    st.synchronize()  # cleared


OPTIMIZERS = [
    ("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True}), ("SGD", {"lr": 0.1, "momentum": 0.5, "dampening": 0.3}),
    ("Adam", {"lr": 0.01}), ("Adam", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}),
    ("AdamW", {"lr": 0.01, "betas": (0.8, 0.99)}), ("Adam", {"lr": 0.01, "maximize": True}),
]


@pytest.mark.parametrize("name,kwargs", OPTIMIZERS)
def test_fused_optimizer_steps_match_torch(name, kwargs):
    rng = np.random.default_rng(1)
    w0, grads = rng.normal(size=(3, 5)).astype(np.float32), rng.normal(size=(3, 3, 5)).astype(np.float32)
    p = st.tensor(w0, device=DEV, requires_grad=True)
    tp = torch.tensor(w0, requires_grad=True)
    opt, topt = getattr(st.optim, name)([p], **kwargs), getattr(torch.optim, name)([tp], **kwargs)
    for k, g in enumerate(grads):
        p.grad, tp.grad = st.tensor(g, device=DEV), torch.tensor(g)
        version = p._version
        before = st.memory_stats()["num_dispatches"]
        opt.step()
        topt.step()
        if k > 0:  # the first step makes the state (Adam: zeros; SGD: a clone of the gradient)
            assert st.memory_stats()["num_dispatches"] - before <= 2  # one kernel (and -grad when maximizing)
        assert p._version > version
        np.testing.assert_allclose(p.detach().cpu().numpy(), tp.detach().numpy(), rtol=2e-6, atol=2e-7)
    for key, value in topt.state[tp].items():
        if key != "step":
            np.testing.assert_allclose(opt.state[p][key].cpu().numpy(), value.numpy(), rtol=2e-6, atol=2e-7)


@pytest.mark.parametrize("name,kwargs", OPTIMIZERS)
def test_one_fused_dispatch_per_parameter_group(name, kwargs):
    """A group's parameters (odd sizes, more of them than one dispatch can bind) are updated by as few kernels as
    the adapter's storage-buffer limit allows, each parameter as torch updates it; an in-place op after the step
    sees the updated values (the held-back updates are recorded first)."""
    from shapetorch.backends.webgpu.runtime import RT

    rng = np.random.default_rng(2)
    shapes = [(3, 5), (7,), (1,), (13, 2), (4, 1, 3), (9,), (2, 2), (5,), (11,), (6, 3), (1, 1)]
    w0 = [rng.normal(size=s).astype(np.float32) for s in shapes]
    ps = [st.tensor(w, device=DEV, requires_grad=True) for w in w0]
    tps = [torch.tensor(w, requires_grad=True) for w in w0]
    opt, topt = getattr(st.optim, name)(ps, **kwargs), getattr(torch.optim, name)(tps, **kwargs)
    nbuf = 2 + {"SGD": int(kwargs.get("momentum", 0) != 0), "Adam": 2 + int(kwargs.get("amsgrad", False)),
                "AdamW": 2}[name]
    per = max(1, min(16, (RT.max_storage_buffers - 1) // nbuf))
    for k in range(3):
        for p, tp in zip(ps, tps):
            g = rng.normal(size=p.shape).astype(np.float32)
            p.grad, tp.grad = st.tensor(g, device=DEV), torch.tensor(g)
        st.synchronize()
        before = st.memory_stats()["num_dispatches"]
        opt.step()
        topt.step()
        if k > 0 and not kwargs.get("maximize"):
            assert st.memory_stats()["num_dispatches"] - before == -(-len(ps) // per)
        with st.no_grad(), torch.no_grad():
            ps[3].add_(1.0)
            tps[3].add_(1.0)
        for p, tp in zip(ps, tps):
            np.testing.assert_allclose(p.detach().cpu().numpy(), tp.detach().numpy(), rtol=2e-6, atol=2e-7)


@pytest.mark.parametrize("shape", [(4, 5), (2, 3, 3), (1, 7, 2), (3, 0)])
@pytest.mark.parametrize("k", [-9, -1, 0, 2, 10**12])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_tril_triu_upload_nothing(shape, k, dtype):
    """tril/triu compute their mask from the index in one kernel (nothing uploaded), on transposed input too."""
    x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    a = st.tensor(x, device=DEV).to(getattr(st, dtype)).transpose(-1, -2)
    t = torch.tensor(x).to(getattr(torch, dtype)).transpose(-1, -2)
    for fn in ("tril", "triu"):
        up, reads = _counts()
        got = getattr(a, fn)(k)
        assert _counts()[0] == up
        np.testing.assert_array_equal(got.cpu().numpy(), getattr(t, fn)(k).numpy())


@pytest.mark.parametrize("layout", ["transposed", "size-1 axis"])
def test_fused_optimizer_step_with_a_strided_gradient(layout):
    """A gradient that is not laid out row-major (a transposed view: the fused kernel declines it, the ops' path
    runs) or that is row-major with any stride on a size-1 axis (the fused kernel takes it): each step as torch's."""
    rng = np.random.default_rng(4)
    shape = (3, 5) if layout == "transposed" else (3, 1, 5)
    w0 = rng.normal(size=shape).astype(np.float32)
    p, tp = st.tensor(w0, device=DEV, requires_grad=True), torch.tensor(w0, requires_grad=True)
    opt, topt = st.optim.Adam([p], lr=0.1), torch.optim.Adam([tp], lr=0.1)
    for _ in range(3):
        if layout == "transposed":
            g = rng.normal(size=(5, 3)).astype(np.float32)
            p.grad, tp.grad = st.tensor(g, device=DEV).t(), torch.tensor(g).t()
        else:
            g = rng.normal(size=(3, 5, 1)).astype(np.float32)  # (3, 5, 1) permuted to (3, 1, 5): strides (5, 1, 1)
            p.grad, tp.grad = st.tensor(g, device=DEV).permute(0, 2, 1), torch.tensor(g).permute(0, 2, 1)
            assert p.grad.stride() != (5, 5, 1) and p.grad.is_contiguous()
        opt.step()
        topt.step()
        np.testing.assert_allclose(p.detach().cpu().numpy(), tp.detach().numpy(), rtol=2e-6, atol=2e-7)


def _counted_replays(monkeypatch: Any) -> list[bool]:
    """What each group plan's replay returns, in order, from now on (cleared by the caller as it likes)."""
    from shapetorch.optim import optimizer as O

    replays: list[bool] = []
    real = O._GroupPlan.replay

    def counted(plan: Any, opt: Any) -> bool:
        replays.append(real(plan, opt))
        return replays[-1]

    monkeypatch.setattr(O._GroupPlan, "replay", counted)
    return replays


@pytest.mark.parametrize("name,kwargs", [*OPTIMIZERS, ("Adam", {"lr": 0.01, "capturable": True}),
                                         ("AdamW", {"lr": 0.01, "capturable": True, "amsgrad": True})])
def test_a_groups_step_replays_its_plan_and_changes_take_the_ops_again(name, kwargs, monkeypatch):
    """From the step after a group's fused step was recorded, an eager ``opt.step()`` replays that group's plan
    (one Python pass per group, not per parameter) while its parameters, gradients' buffers and state stay; each
    step as torch's: with a scheduler changing the learning rate every step, a weight decay turned off (another
    kernel), a gradient that is a new tensor, a ``load_state_dict``, a parameter without a gradient for a step (Adam's
    step counts on the host differ then: no plan), and a parameter group added."""
    replays = _counted_replays(monkeypatch)
    rng = np.random.default_rng(5)
    shapes = [(3, 5), (7,), (2, 2, 3)]
    w0 = [rng.normal(size=s).astype(np.float32) for s in shapes]
    ps = [st.tensor(w, device=DEV, requires_grad=True) for w in w0]
    tps = [torch.tensor(w, requires_grad=True) for w in w0]
    tkw = {k: v for k, v in kwargs.items() if k != "capturable"}  # (torch's capturable wants CUDA tensors)
    # (capturable: the bias corrections are float32 on the device, as torch's capturable; torch's here are float64)
    rtol, atol = (5e-5, 2e-6) if kwargs.get("capturable") else (3e-6, 3e-7)
    opt, topt = getattr(st.optim, name)(ps, **kwargs), getattr(torch.optim, name)(tps, **tkw)
    sched = st.optim.lr_scheduler.ExponentialLR(opt, 0.9)
    tsched = torch.optim.lr_scheduler.ExponentialLR(topt, 0.9)
    grads = [st.zeros(s, device=DEV) for s in shapes]
    dispatches: list[int] = []

    def step(k: int) -> None:
        for i, (p, tp, g) in enumerate(zip(ps, tps, grads)):
            v = rng.normal(size=p.shape).astype(np.float32)
            if k == 11 and i == 1:  # no gradient this step
                p.grad = tp.grad = None
                continue
            if k == 5 and i == 0:  # a new tensor (another buffer)
                p.grad = st.tensor(v, device=DEV)
            else:
                g.copy_(st.tensor(v, device=DEV))  # (the same buffer every step)
                p.grad = g
            tp.grad = torch.tensor(v)
        if k == 7:
            for group, tgroup in zip(opt.param_groups, topt.param_groups):
                group["weight_decay"] = tgroup["weight_decay"] = 0.0
        if k == 9:
            opt.load_state_dict(opt.state_dict())
        st.synchronize()
        before = st.memory_stats()["num_dispatches"]
        opt.step()
        dispatches.append(st.memory_stats()["num_dispatches"] - before)
        topt.step()
        sched.step()
        tsched.step()
        for p, tp in zip(ps, tps):
            np.testing.assert_allclose(p.detach().cpu().numpy(), tp.detach().numpy(), rtol=rtol, atol=atol,
                                       err_msg=f"step {k}")

    decayed = kwargs.get("weight_decay", 0.01 if name == "AdamW" else 0.0) != 0  # (turned off at step 7)
    stateful = name != "SGD" or kwargs.get("momentum", 0) != 0  # (new state tensors at step 9)
    # step counts on the host differ between the parameters after step 11: no one set of scalars, no plan
    host_counts = name != "SGD" and not kwargs.get("capturable")
    for k in range(13):
        version = ps[2]._version
        replays.clear()
        step(k)
        assert ps[2]._version > version
        if kwargs.get("maximize"):
            assert replays == [], k  # (a maximizing step negates its gradients: no plan)
        elif k in (5, 11) or (k == 7 and decayed) or (k == 9 and stateful) or (k == 12 and host_counts):
            assert replays == [False], k
        elif k >= 3:
            assert replays == [True], k
            # one dispatch for the group (and the counts' increment), as an uninterrupted step's: not the first
            # step's, whose updates were recorded between the fills of the state it made (after the load, Adam's
            # host counts are on the device, each advanced by an op, as load_state_dict put them there)
            if k < 9 or not host_counts:
                assert dispatches[-1] == 1 + int(bool(kwargs.get("capturable"))), k
    for p, tp in zip(ps, tps):
        for key, value in topt.state[tp].items():
            if key != "step":
                np.testing.assert_allclose(opt.state[p][key].cpu().numpy(), value.numpy(), rtol=rtol, atol=atol)
            else:
                assert float(opt.state[p][key].cpu()) == float(value)
    # a group added: the first group keeps its plan, the second makes its own
    extra = st.tensor(rng.normal(size=(4,)).astype(np.float32), device=DEV, requires_grad=True)
    textra = torch.tensor(extra.detach().cpu().numpy(), requires_grad=True)
    opt.add_param_group({"params": [extra]})
    topt.add_param_group({"params": [textra]})
    ps.append(extra)
    tps.append(textra)
    grads.append(st.zeros(4, device=DEV))
    for k in range(13, 16):
        step(k)


@pytest.mark.parametrize("device", ["cpu", DEV])
@pytest.mark.parametrize("name,kwargs", [("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9}),
                                         ("Adam", {"lr": 0.01}), ("Adam", {"lr": 0.01, "amsgrad": True})])
def test_a_step_bumps_each_parameters_version_once_and_a_saved_parameter_is_refused(device, name, kwargs, monkeypatch):
    """Each step (the ops, the fused update, a plan's replay) advances a parameter's version counter by one, as
    torch's (whose SGD and Adam write a parameter once per step); a graph that saved the parameter before the step
    then refuses its backward with torch's error."""
    replays = _counted_replays(monkeypatch)
    w = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
    ps = [st.tensor(w, device=device, requires_grad=True), st.tensor(w[0], device=device, requires_grad=True)]
    tps = [torch.tensor(w, requires_grad=True), torch.tensor(w[0], requires_grad=True)]
    opt, topt = getattr(st.optim, name)(ps, **kwargs), getattr(torch.optim, name)(tps, **kwargs)
    for k in range(6):
        for lib, group in ((st, ps), (torch, tps)):
            for p in group:
                p.grad = lib.full(tuple(p.shape), 0.5 + k, device=device if lib is st else "cpu")
        before, tbefore = [p._version for p in ps], [p._version for p in tps]
        opt.step()
        topt.step()
        assert [p._version - v for p, v in zip(ps, before)] == [p._version - v for p, v in zip(tps, tbefore)] == [1, 1]
    if device == DEV:
        assert True in replays  # (the replay's batch bump was among the steps)
    for lib, p, o in ((st, ps[0], opt), (torch, tps[0], topt)):
        loss = (p * p).sum()  # (mul saves p)
        p.grad = lib.ones_like(p)
        o.step()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            loss.backward()
