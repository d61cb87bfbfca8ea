"""Graph capture and replay on WebGPU (``st.webgpu.Graph``/``graph``, torch.cuda's graph API; issue 19).

Training steps replayed from a graph against the same steps run eagerly on the CPU and on WebGPU (losses and
parameters), static inputs refreshed with ``copy_``, the counters of a replay, every refusal (a coded
``RuntimeError`` that leaves the runtime usable), capture under ``no_grad``, reset and recapture, graph-safe
random draws, and the graph's buffers kept out of the pool.
"""

from __future__ import annotations

import numpy as np
import pytest
from bench.bench_webgpu_steps import GPT

import shapetorch as st
from shapetorch.backends.webgpu import graphs
from test_webgpu import webgpu  # noqa: F401  (the module fixture: skip or fail without an adapter)

F = st.nn.functional
CODE = "device_error_graph_capture"


def _mlp() -> st.nn.Module:
    return st.nn.Sequential(st.nn.Linear(20, 32), st.nn.ReLU(), st.nn.Linear(32, 5))


def _lenet() -> st.nn.Module:
    return st.nn.Sequential(
        st.nn.Conv2d(1, 4, 3, padding=1), st.nn.ReLU(), st.nn.MaxPool2d(2), st.nn.Conv2d(4, 6, 3), st.nn.ReLU(),
        st.nn.MaxPool2d(2), st.nn.Flatten(), st.nn.Linear(6 * 2 * 2, 16), st.nn.ReLU(), st.nn.Linear(16, 5))


def _gpt() -> st.nn.Module:
    return GPT(vocab=16, ctx=8, d=16, heads=2, layers=1)


def _data(name: str, steps: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    if name == "mlp":
        return rng.normal(size=(steps, 8, 20)).astype(np.float32), rng.integers(0, 5, (steps, 8))
    if name == "lenet":
        return rng.normal(size=(steps, 4, 1, 12, 12)).astype(np.float32), rng.integers(0, 5, (steps, 4))
    return rng.integers(0, 16, (steps, 2, 8)), rng.integers(0, 16, (steps, 2, 8))


MODELS = {
    "mlp": (_mlp, lambda p, cap: st.optim.SGD(p, lr=0.1, momentum=0.9)),
    "lenet": (_lenet, lambda p, cap: st.optim.Adam(p, lr=1e-2, capturable=cap)),
    "gpt": (_gpt, lambda p, cap: st.optim.AdamW(p, lr=1e-2, capturable=cap)),
}


def _setup(name: str, device: str, capturable: bool) -> tuple[st.nn.Module, st.optim.Optimizer]:
    st.manual_seed(0)
    make, make_opt = MODELS[name]
    model = make().to(device)
    return model, make_opt(model.parameters(), capturable)


def _loss(model: st.nn.Module, x: st.Tensor, y: st.Tensor) -> st.Tensor:
    out = model(x)
    return F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))


def _eager(name: str, device: str, capturable: bool, xs: np.ndarray, ys: np.ndarray):
    model, opt = _setup(name, device, capturable)
    losses = []
    for x, y in zip(xs, ys):
        opt.zero_grad()
        loss = _loss(model, st.tensor(x, device=device), st.tensor(y, device=device))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().cpu().numpy() for p in model.parameters()]


def _replayed(name: str, xs: np.ndarray, ys: np.ndarray, warmup: int = 2):
    """``warmup`` eager steps, then a captured step replayed for the others, inputs refreshed with copy_."""
    model, opt = _setup(name, "webgpu", True)
    sx, sy = st.tensor(xs[0], device="webgpu"), st.tensor(ys[0], device="webgpu")

    def step() -> st.Tensor:
        loss = _loss(model, sx, sy)
        loss.backward()
        opt.step()
        return loss

    losses = []
    for i in range(warmup):
        sx.copy_(st.tensor(xs[i]))
        sy.copy_(st.tensor(ys[i]))
        opt.zero_grad()
        losses.append(step().item())
    g = st.webgpu.Graph()
    opt.zero_grad(set_to_none=True)  # (the gradients are then the graph's, written, not accumulated, per replay)
    with st.webgpu.graph(g):
        static_loss = step()
    for i in range(warmup, len(xs)):
        sx.copy_(st.tensor(xs[i]))
        sy.copy_(st.tensor(ys[i]))
        g.replay()
        losses.append(static_loss.item())
    return losses, [p.detach().cpu().numpy() for p in model.parameters()], g


@pytest.mark.parametrize("name", ["mlp", "lenet", "gpt"])
def test_training_by_replay_matches_eager(name):
    xs, ys = _data(name, 5)
    cpu_losses, cpu_params = _eager(name, "cpu", False, xs, ys)
    gpu_losses, gpu_params = _eager(name, "webgpu", True, xs, ys)
    losses, params, g = _replayed(name, xs, ys)
    assert g.num_dispatches() > 0
    np.testing.assert_allclose(losses, cpu_losses, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(losses, gpu_losses, rtol=1e-5, atol=1e-6)
    names = [n for n, _ in _setup(name, "cpu", False)[0].named_parameters()]
    for n, a, b, c in zip(names, params, cpu_params, gpu_params):
        np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-6)  # the same kernels as the eager WebGPU steps
        if n.endswith("qkv.bias"):
            # the keys' bias has a zero gradient in exact arithmetic (softmax ignores a shift of all scores): Adam
            # turns its rounding noise into steps of about lr, of any sign, on any device (WebGPU's eager steps
            # too), so only the queries' and values' biases are compared with the CPU's
            d = a.shape[0] // 3
            a, b = np.delete(a, np.s_[d:2 * d]), np.delete(b, np.s_[d:2 * d])
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=2e-5)


def test_capturable_adam_without_the_fused_kernel(monkeypatch):
    """The unfused capturable update (device ops on the step count) under a graph, against the fused kernel's eager
    steps. (Not against the CPU's: both compute the bias corrections from the count in float32 on the device, as
    torch's capturable Adam, and lavapipe's pow is a few ulp off: after a step, a max-pool's choice between two
    nearly equal inputs may differ from the CPU's, which changes that channel's gradient.)"""
    from shapetorch.backends.webgpu import backend

    xs, ys = _data("lenet", 4)
    fused_losses, fused_params = _eager("lenet", "webgpu", True, xs, ys)
    monkeypatch.setattr(backend, "fused_step", lambda *a: False)
    losses, params, _ = _replayed("lenet", xs, ys)
    np.testing.assert_allclose(losses, fused_losses, rtol=1e-5, atol=1e-6)
    for a, b in zip(params, fused_params):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_counters_of_a_replay():
    xs, ys = _data("mlp", 3)
    model, opt = _setup("mlp", "webgpu", True)
    sx, sy = st.tensor(xs[0], device="webgpu"), st.tensor(ys[0], device="webgpu")
    for _ in range(2):
        opt.zero_grad()
        _loss(model, sx, sy).backward()
        opt.step()
    g = st.webgpu.Graph()
    opt.zero_grad(set_to_none=True)
    with st.webgpu.graph(g):
        _loss(model, sx, sy).backward()
        opt.step()
    st.synchronize()
    before = st.memory_stats()
    g.replay()
    after = st.memory_stats()
    got = {k: after[k] - before[k] for k in ("num_dispatches", "num_submits", "num_bytes_uploaded", "num_readbacks")}
    assert got == {"num_dispatches": g.num_dispatches(), "num_submits": 1, "num_bytes_uploaded": 0,
                   "num_readbacks": 0}
    assert g.num_dispatches() >= 10
    # a capture records without running: nothing was dispatched or submitted by it
    st.synchronize()
    before = st.memory_stats()
    g2 = st.webgpu.Graph()
    with st.webgpu.graph(g2):
        sx * 2
    after = st.memory_stats()
    assert after["num_dispatches"] == before["num_dispatches"] and after["num_submits"] == before["num_submits"]
    assert g2.num_dispatches() == 1


def _refusals():
    x = st.ones(4, device="webgpu")
    return {
        "item": lambda: x.sum().item(),
        "numpy": lambda: (x + 1).numpy(),  # noqa: PLW0108  (the op must run inside the capture)
        "print": lambda: print(x + 1),
        "bool": lambda: bool((x > 0).all()),
        "nonzero": lambda: (x > 0).nonzero(),  # noqa: PLW0108
        "masked_select": lambda: x.masked_select(x > 0),
        "cpu operand": lambda: x + st.tensor([1.0, 2.0, 3.0, 4.0]).to("webgpu"),
        "tensor from host": lambda: st.tensor([1.0, 2.0], device="webgpu"),
        "synchronize": st.synchronize,
    }


REFUSED = ["item", "numpy", "print", "bool", "nonzero", "masked_select", "cpu operand", "tensor from host",
           "synchronize"]


def test_the_refusals_are_all_listed():
    assert sorted(_refusals()) == sorted(REFUSED)


@pytest.mark.parametrize("what", REFUSED)  # (names: making the tensors at collection needs an adapter)
def test_refusals_raise_and_leave_the_runtime_usable(what):
    fn = _refusals()[what]
    g = st.webgpu.Graph()
    with pytest.raises(RuntimeError) as info, st.webgpu.graph(g):
        fn()
    assert getattr(info.value, "code", None) == CODE, info.value
    assert "cannot be captured" in str(info.value)
    _usable_after(g)


def _usable_after(g):
    assert not st.webgpu.is_current_stream_capturing()
    with pytest.raises(RuntimeError, match="without a preceding successful capture") as info:
        g.replay()
    assert info.value.code == CODE
    y = st.arange(5, dtype=st.float32, device="webgpu") * 3
    np.testing.assert_array_equal(y.numpy(), np.arange(5, dtype=np.float32) * 3)
    h = st.webgpu.Graph()  # and a new capture works
    x = st.ones(3, device="webgpu")
    with st.webgpu.graph(h):
        z = x + 1
    h.replay()
    np.testing.assert_array_equal(z.numpy(), [2.0, 2.0, 2.0])


@pytest.mark.parametrize("opt", ["adam_not_capturable", "adamw_not_capturable", "rmsprop_capturable"])
def test_optimizer_with_a_host_step_count_is_refused(opt):
    model = _mlp().to("webgpu")
    make = {"adam_not_capturable": st.optim.Adam,
            "adamw_not_capturable": lambda p: st.optim.AdamW(p, capturable=False),
            "rmsprop_capturable": lambda p: st.optim.RMSprop(p, capturable=True)}[opt]
    o = make(model.parameters())
    x = st.ones(2, 20, device="webgpu")
    model(x).sum().backward()
    o.step()  # (warm: the state exists)
    g = st.webgpu.Graph()
    with pytest.raises(RuntimeError, match="capturable|step count") as info, st.webgpu.graph(g):
        model(x).sum().backward()
        o.step()
    assert info.value.code == CODE
    _usable_after(g)


def test_random_draws_are_fresh_per_replay_and_those_of_the_eager_steps():
    x = st.ones(64, device="webgpu")
    st.manual_seed(7)
    eager = []
    for _ in range(3):
        eager.append(F.dropout(x, 0.5).numpy())
        st.rand(8, device="webgpu")
    st.manual_seed(7)
    g = st.webgpu.Graph()
    with st.webgpu.graph(g):
        y = F.dropout(x, 0.5)
        r = st.rand(8, device="webgpu")
    got = []
    for _ in range(3):
        g.replay()
        got.append(y.numpy())
    for a, b in zip(got, eager):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(got[0], got[1])
    # the generator advanced as the eager draws would have: the next eager draw is the fourth
    st.manual_seed(7)
    for _ in range(3):
        F.dropout(x, 0.5), st.rand(8, device="webgpu")
    want = st.rand(8, device="webgpu").numpy()
    st.manual_seed(7)
    for _ in range(3):
        g.replay()
    np.testing.assert_array_equal(st.rand(8, device="webgpu").numpy(), want)
    assert r.shape == (8,)


def test_a_user_generator_is_refused():
    gen = st.Generator("webgpu").manual_seed(3)
    g = st.webgpu.Graph()
    with pytest.raises(RuntimeError, match="generator other than") as info, st.webgpu.graph(g):
        st.rand(4, device="webgpu", generator=gen)
    assert info.value.code == CODE
    _usable_after(g)


def test_capture_under_no_grad():
    model = _mlp().to("webgpu")
    sx = st.zeros(8, 20, device="webgpu")
    model(sx)
    g = st.webgpu.Graph()
    with st.no_grad(), st.webgpu.graph(g):
        out = model(sx)
    assert not out.requires_grad
    cpu = _mlp()
    cpu.load_state_dict({k: v.cpu() for k, v in model.state_dict().items()})
    for seed in range(2):
        x = np.random.default_rng(seed).normal(size=(8, 20)).astype(np.float32)
        sx.copy_(st.tensor(x))
        g.replay()
        with st.no_grad():
            np.testing.assert_allclose(out.numpy(), cpu(st.tensor(x)).numpy(), rtol=1e-5, atol=1e-6)


def test_reset_and_recapture():
    x = st.tensor([1.0, 2.0, 3.0], device="webgpu")
    g = st.webgpu.Graph()
    with st.webgpu.graph(g):
        y = (x * 2).exp().log()  # (intermediates freed inside the capture)
    g.replay()
    np.testing.assert_allclose(y.numpy(), [2.0, 4.0, 6.0], rtol=1e-6)
    with pytest.raises(RuntimeError, match="already holds") as info:
        g.capture_begin()
    assert info.value.code == CODE
    g.reset()
    with st.webgpu.graph(g):
        z = x * 3
    x.copy_(st.tensor([1.0, 1.0, 1.0]))
    g.replay()
    np.testing.assert_array_equal(z.numpy(), [3.0, 3.0, 3.0])
    np.testing.assert_allclose(y.numpy(), [2.0, 4.0, 6.0], rtol=1e-6)  # the reset graph no longer runs
    with pytest.raises(RuntimeError, match="no capture is underway"):
        g.capture_end()


def test_graph_buffers_stay_out_of_the_pool():
    """Buffers the graph writes (its intermediates, freed inside the capture, and its outputs, freed after it) are
    not handed to eager tensors while the graph lives: a replay would overwrite them."""
    x = st.full((256,), 2.0, device="webgpu")
    g = st.webgpu.Graph()
    with st.webgpu.graph(g):
        a = x * 3
        b = a + 1
        del a
        c = b * b
        del b
    del c
    st.synchronize()
    keep = [st.full((256,), float(i), device="webgpu") + 0 for i in range(6)]
    st.synchronize()
    g.replay()
    for i, t in enumerate(keep):
        np.testing.assert_array_equal(t.numpy(), np.full(256, float(i), np.float32))
    held = st.memory_stats()["allocated_bytes"]
    g.reset()  # then they return to the pool (the three intermediates and outputs: 1 KiB each)
    assert held - st.memory_stats()["allocated_bytes"] >= 3 * 1024
    before = st.memory_stats()["num_buffers_created"]
    more = [st.empty(256, device="webgpu") + 0 for _ in range(3)]
    assert st.memory_stats()["num_buffers_created"] - before < 3 * 2
    assert len(more) == 3


def test_cuda_graph_names():
    assert st.webgpu.CUDAGraph is st.webgpu.Graph
    a, b = st.webgpu.graph_pool_handle(), st.webgpu.graph_pool_handle()
    assert a != b
    assert not st.webgpu.is_current_stream_capturing()


def test_make_graphed_callables_module_trains_as_the_cpu(monkeypatch):
    xs, ys = _data("mlp", 4)
    res = {}
    for dev in ("cpu", "webgpu"):
        model, opt = _setup("mlp", dev, False)
        if dev == "webgpu":
            model = st.webgpu.make_graphed_callables(model, (st.zeros(8, 20, device=dev),))
        losses = []
        for x, y in zip(xs, ys):
            opt.zero_grad()
            loss = _loss(model, st.tensor(x, device=dev), st.tensor(y, device=dev))
            loss.backward()
            opt.step()
            losses.append(loss.item())
        res[dev] = losses, [p.detach().cpu().numpy() for p in model.parameters()]
    np.testing.assert_allclose(res["webgpu"][0], res["cpu"][0], rtol=1e-5, atol=1e-6)
    for a, b in zip(res["webgpu"][1], res["cpu"][1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    # the graphed module replays: its forward and its backward each replay a graph
    replays = []
    replay = graphs.Captured.replay
    monkeypatch.setattr(graphs.Captured, "replay", lambda self, *a: (replays.append(len(self)), replay(self, *a)))
    out = model(st.ones(8, 20, device="webgpu"))
    assert len(replays) == 1
    out.sum().backward()
    assert len(replays) == 2 and min(replays) > 0
    monkeypatch.undo()
    model.eval()  # the other mode runs the module's own forward
    with st.no_grad():
        assert model(st.ones(3, 20, device="webgpu")).shape == (3, 5)


def test_make_graphed_callables_function_gradients():
    rng = np.random.default_rng(2)
    w = st.tensor(rng.normal(size=(4, 3)).astype(np.float32), device="webgpu")
    f, g = st.webgpu.make_graphed_callables(
        (lambda a, b: ((a @ w) * b).tanh(), lambda a: a.exp()),
        ((st.zeros(2, 4, device="webgpu", requires_grad=True), st.zeros(2, 3, device="webgpu", requires_grad=True)),
         (st.zeros(5, device="webgpu", requires_grad=True),)))
    for seed in range(2):
        r = np.random.default_rng(seed)
        an, bn, cn = (r.normal(size=s).astype(np.float32) for s in ((2, 4), (2, 3), (5,)))
        a, b, c = (st.tensor(v, device="webgpu", requires_grad=True) for v in (an, bn, cn))
        (f(a, b).sum() + g(c).sum()).backward()
        ac, bc, cc = (st.tensor(v, requires_grad=True) for v in (an, bn, cn))
        want = ((ac @ w.cpu()) * bc).tanh()
        (want.sum() + cc.exp().sum()).backward()
        np.testing.assert_allclose(f(a, b).detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
        for x, y in ((a, ac), (b, bc), (c, cc)):
            np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="only Tensors"):
        st.webgpu.make_graphed_callables(lambda a, n: a * n, (st.zeros(2, device="webgpu"), 3))


def test_make_graphed_callables_output_without_gradient():
    """A backward in which no gradient reaches one of the outputs is a zero gradient for it (torch materializes
    it), not the previous call's: the calls alternate between a loss of both outputs and of the first only, and
    the input's and the weight's gradients are the CPU's."""
    rng = np.random.default_rng(3)
    wn = rng.normal(size=(4, 3)).astype(np.float32)
    w = st.tensor(wn, device="webgpu", requires_grad=True)
    f = st.webgpu.make_graphed_callables(lambda a, w: ((a @ w).tanh(), (a * w.sum()).sum(1)),
                                         (st.zeros(2, 4, device="webgpu", requires_grad=True), w))
    wc = st.tensor(wn, requires_grad=True)
    for step, both in enumerate((True, False, False, True, False)):
        an = rng.normal(size=(2, 4)).astype(np.float32)
        a, ac = st.tensor(an, device="webgpu", requires_grad=True), st.tensor(an, requires_grad=True)
        for x, ww in ((a, w), (ac, wc)):
            o1, o2 = f(x, ww) if x is a else ((x @ ww).tanh(), (x * ww.sum()).sum(1))
            (o1.sum() + (o2 * 3).sum() if both else o1.sum()).backward()
        np.testing.assert_allclose(a.grad.numpy(), ac.grad.numpy(), rtol=1e-5, atol=1e-5, err_msg=f"step {step}")
        np.testing.assert_allclose(w.grad.numpy(), wc.grad.numpy(), rtol=1e-5, atol=1e-5, err_msg=f"step {step}")


def test_device_side_checks_of_a_replay_raise_at_the_next_read():
    """A graph's range checks run at every replay; a failure raises the eager op's error at the next read."""
    logits = st.tensor(np.random.default_rng(0).normal(size=(4, 5)).astype(np.float32), device="webgpu")
    y = st.tensor([0, 1, 2, 3], device="webgpu")
    F.cross_entropy(logits, y).item()
    g = st.webgpu.Graph()
    with st.webgpu.graph(g):
        loss = F.cross_entropy(logits, y)
    want = F.cross_entropy(logits.cpu(), y.cpu()).item()
    g.replay()
    assert loss.item() == pytest.approx(want, rel=1e-6)
    y.copy_(st.tensor([0, 1, 7, 3]))
    g.replay()
    with pytest.raises(IndexError, match="index 7 is out of bounds"):
        loss.item()
    y.copy_(st.tensor([0, 1, 2, 3]))
    g.replay()
    assert loss.item() == pytest.approx(want, rel=1e-6)


def test_a_refused_capture_leaves_no_held_optimizer_step_behind():
    """A capture refused after an optimizer step recorded its (held-back) fused update: the update is dropped with
    the capture, so the eager steps after it are the CPU's."""
    xs, ys = _data("mlp", 3)
    _, cpu_params = _eager("mlp", "cpu", False, xs, ys)
    model, opt = _setup("mlp", "webgpu", False)

    def step(i: int) -> st.Tensor:
        opt.zero_grad()
        loss = _loss(model, st.tensor(xs[i], device="webgpu"), st.tensor(ys[i], device="webgpu"))
        loss.backward()
        opt.step()
        return loss

    step(0)
    x, y = st.tensor(xs[1], device="webgpu"), st.tensor(ys[1], device="webgpu")
    g = st.webgpu.Graph()
    with pytest.raises(RuntimeError, match="cannot be captured"), st.webgpu.graph(g):
        opt.zero_grad()
        loss = _loss(model, x, y)
        loss.backward()
        opt.step()
        loss.item()  # (refused while the step's fused update is still held back)
    step(1)
    step(2)
    for a, b in zip(model.parameters(), cpu_params):
        np.testing.assert_allclose(a.detach().numpy(), b, rtol=1e-5, atol=1e-6)


def test_graphs_replayed_alternately_with_draws_eager_work_and_a_new_seed_between():
    """Two graphs with random draws (apart, with other work between them) replayed alternately, eager draws and
    pool churn between the replays, then a new seed: each replay rewrites its draws' seed and offset words and
    draws what the same eager sequence draws."""
    x = st.ones(64, device="webgpu")

    def first() -> tuple[st.Tensor, st.Tensor]:
        y = F.dropout(x, 0.5) * 3 + 1
        return y, (y * x).sum() + st.rand(8, device="webgpu")

    def second() -> st.Tensor:
        return st.randn(16, device="webgpu") * 2

    def churn() -> None:  # eager tensors made and freed: the pool's buffers change hands
        for k in range(4):
            (st.full((64,), float(k), device="webgpu") + k).sum().item()

    def sequence(run1, run2, seed: int) -> list[np.ndarray]:
        st.manual_seed(seed)
        out = []
        for _ in range(3):
            out.extend(t.numpy() for t in run1())
            out.append(run2().numpy())
            out.append(st.rand(5, device="webgpu").numpy())
            churn()
        return out

    for _ in range(2):  # (pipelines made before the captures)
        first(), second()
    st.manual_seed(1)
    g1, g2 = st.webgpu.Graph(), st.webgpu.Graph()
    with st.webgpu.graph(g1):
        y, s = first()
    with st.webgpu.graph(g2):
        r = second()

    def replay1() -> tuple[st.Tensor, st.Tensor]:
        g1.replay()
        return y, s

    def replay2() -> st.Tensor:
        g2.replay()
        return r

    for seed in (5, 6):
        want = sequence(first, second, seed)
        got = sequence(replay1, replay2, seed)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-6)
        assert not np.array_equal(got[0], got[4])  # (a fresh dropout mask per replay)


def test_a_replay_whose_write_the_device_rejects_raises_the_coded_error_and_submits_nothing():
    """What wgpu-native reports while a replay calls it directly (here the write of the random draws' words, planted
    past the graph's parameter buffer) raises the coded error, not a raw GPUValidationError or only a log line;
    nothing is submitted, and the next replays and eager ops run. (wgpu-native 0.31 validates a pass's commands at
    submit, where a failure aborts the process: the runtime checks grids and bindings when an op is recorded.)"""
    x = st.ones(8, device="webgpu")
    g = st.webgpu.Graph()
    with st.webgpu.graph(g):
        z = F.dropout(x, 0.5)
    native = g._captured.native
    if native is None:
        pytest.skip("this wgpu is driven through its public methods (SHAPETORCH_WEBGPU_PUBLIC_CALLS=1)")
    g.replay()
    before = z.numpy()
    x.copy_(st.full((8,), 5.0))
    good = native.span
    native.span = (4 * len(g._captured.words), *good[1:])
    with pytest.raises(RuntimeError, match="rejected the graph.*overrunning") as info:
        g.replay()
    assert info.value.code == "device_error_failed"
    np.testing.assert_array_equal(z.numpy(), before)  # (the graph did not run)
    x.copy_(st.ones(8))
    native.span = good
    g.replay()
    assert set(np.unique(z.numpy())) <= {0.0, 2.0}
    np.testing.assert_array_equal((st.arange(3, dtype=st.float32, device="webgpu") * 2).numpy(), [0.0, 2.0, 4.0])


def test_the_public_method_replay_matches_the_native_one():
    """A replay through wgpu-py's methods (a wgpu whose internals differ from those the native replay calls) draws
    and computes what the native replay does, replay by replay."""
    x = st.ones(64, device="webgpu")
    (F.dropout(x, 0.5) * 2 + st.rand(64, device="webgpu")).sum().item()
    g = st.webgpu.Graph()
    with st.webgpu.graph(g):
        y = F.dropout(x, 0.5) * 2 + st.rand(64, device="webgpu")
    captured = g._captured
    native = captured.native
    got = {}
    for way in ("native", "public"):
        captured.native = native if way == "native" else None
        st.manual_seed(3)
        got[way] = []
        for _ in range(2):
            g.replay()
            got[way].append(y.numpy())
    captured.native = native
    for a, b in zip(got["public"], got["native"], strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(got["public"][0], got["public"][1])


def test_a_replay_joins_the_open_eager_batch():
    """With eager work recorded and unsubmitted, a replay's commands join its compute pass (no submit of its own);
    a second replay of a graph with random draws in the same batch submits the first (both read the graph's seed
    words), so each draws the mask of the eager step."""
    x = st.ones(64, device="webgpu")
    plain, drawn = st.webgpu.Graph(), st.webgpu.Graph()
    for _ in range(2):
        (x * 3 + 1).sum().item()
        (F.dropout(x, 0.5) * 2).sum().item()
    with st.webgpu.graph(plain):
        p = x * 3 + 1
    with st.webgpu.graph(drawn):
        d = F.dropout(x, 0.5) * 2
    st.manual_seed(7)
    want = [F.dropout(x, 0.5).numpy() * 2 for _ in range(2)]
    st.synchronize()
    before = st.memory_stats()["num_submits"]
    x.add_(0)  # (eager work: the batch is open)
    plain.replay()
    q = p.clone()
    assert st.memory_stats()["num_submits"] == before
    np.testing.assert_allclose(q.numpy(), 4.0)
    st.manual_seed(7)
    x.add_(0)
    drawn.replay()
    first = d.clone()
    drawn.replay()
    second = d.clone()
    np.testing.assert_array_equal(first.numpy(), want[0])
    np.testing.assert_array_equal(second.numpy(), want[1])
