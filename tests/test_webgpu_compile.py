"""``st.compile(..., mode="reduce-overhead")`` on WebGPU (``shapetorch._compile``; issue 19): per input signature
a warm-up call, a captured one, then replays, as torch's CUDA-graph trees.

Compiled training steps (the model and ``opt.step`` compiled) against the same steps run eagerly on the CPU and
on WebGPU, a dropout GPT's masks those of the eager WebGPU steps; a new signature (shape, train/eval, no_grad)
gets its own graphs; what a capture refuses falls back to eager with one warning and the eager values; a replay's
outputs are fresh (an earlier call's are not overwritten); an input written in place, a non-capturable Adam and the
recompile limit run eagerly; a function's closed-over tensors get their gradients.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from bench.bench_webgpu_steps import GPT

import shapetorch as st
from test_webgpu import webgpu  # noqa: F401  (the module fixture: skip or fail without an adapter)
from test_webgpu_graphs import _data, _loss, _setup

F = st.nn.functional
SKIP = "skipping WebGPU graphs"


def _entries(compiled: Any) -> list[Any]:
    graphed = getattr(compiled, "_graphed", compiled)
    return list(graphed.entries.values())


def _replaying(compiled: Any) -> list[bool]:
    return [e.run is not None for e in _entries(compiled)]


def _train(name: str, device: str, steps_x: np.ndarray, steps_y: np.ndarray, compiled: bool):
    model, opt = _setup(name, device, device == "webgpu")
    run = st.compile(model, mode="reduce-overhead") if compiled else model
    step = st.compile(opt.step, mode="reduce-overhead") if compiled else opt.step
    losses = []
    for x, y in zip(steps_x, steps_y):
        opt.zero_grad()
        loss = _loss(run, st.tensor(x, device=device), st.tensor(y, device=device))
        loss.backward()
        step()
        losses.append(loss.item())
    return losses, [p.detach().cpu().numpy() for p in model.parameters()], run, step


@pytest.mark.parametrize("name", ["mlp", "lenet", "gpt"])
def test_compiled_training_matches_eager(name):
    xs, ys = _data(name, 5)
    cpu_losses, cpu_params, _, _ = _train(name, "cpu", xs, ys, False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (nothing falls back)
        losses, params, run, step = _train(name, "webgpu", xs, ys, True)
    assert _replaying(run) == [True] and _replaying(step) == [True]  # steps 3-5 replayed
    np.testing.assert_allclose(losses, cpu_losses, rtol=1e-4, atol=1e-5)
    names = [n for n, _ in _setup(name, "cpu", False)[0].named_parameters()]
    for n, a, b in zip(names, params, cpu_params):
        if n.endswith("qkv.bias"):  # (Adam's steps of a zero gradient's rounding noise: see test_webgpu_graphs)
            d = a.shape[0] // 3
            a, b = np.delete(a, np.s_[d:2 * d]), np.delete(b, np.s_[d:2 * d])
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=2e-5)


class DropoutGPT(st.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gpt = GPT(vocab=16, ctx=8, d=16, heads=2, layers=1)
        self.drop = st.nn.Dropout(0.3)

    def forward(self, idx: Any) -> Any:
        g = self.gpt
        pos = st.arange(idx.shape[1], device=idx.device)
        h = self.drop(g.tok(idx) + g.pos(pos))
        return g.head(g.ln(self.drop(g.blocks(h))))


def test_dropout_masks_of_the_replays_are_the_eager_steps():
    xs, ys = _data("gpt", 5)
    res = {}
    for compiled in (False, True):
        st.manual_seed(0)
        model = DropoutGPT().to("webgpu")
        opt = st.optim.AdamW(model.parameters(), lr=1e-2, capturable=True)
        run = st.compile(model, mode="reduce-overhead") if compiled else model
        step = st.compile(opt.step, mode="reduce-overhead") if compiled else opt.step
        losses = []
        for x, y in zip(xs, ys):
            opt.zero_grad()
            loss = _loss(run, st.tensor(x, device="webgpu"), st.tensor(y, device="webgpu"))
            loss.backward()
            step()
            losses.append(loss.item())
        res[compiled] = losses, [p.detach().numpy() for p in model.parameters()]
        if compiled:
            assert _replaying(run) == [True]
    assert len(set(res[True][0])) == 5  # (fresh masks: no two steps alike)
    np.testing.assert_allclose(res[True][0], res[False][0], rtol=1e-5, atol=1e-6)
    for a, b in zip(res[True][1], res[False][1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _mlp() -> st.nn.Module:
    st.manual_seed(0)
    return st.nn.Sequential(st.nn.Linear(6, 8), st.nn.Tanh(), st.nn.Dropout(0.25), st.nn.Linear(8, 3)).to("webgpu")


def _x(*shape: int, seed: int = 0) -> st.Tensor:
    return st.tensor(np.random.default_rng(seed).normal(size=shape).astype(np.float32), device="webgpu")


def test_new_signatures_get_their_own_graphs_and_outputs_are_not_overwritten():
    model = _mlp().eval()
    compiled = st.compile(model, mode="reduce-overhead")
    outs = []
    with st.no_grad():
        for i in range(4):
            for n in (5, 2):
                x = _x(n, 6, seed=10 * i + n)
                outs.append((compiled(x), model(x)))
    assert _replaying(compiled) == [True, True]
    for got, want in outs:  # each output keeps its own call's values after the later replays
        assert not got.requires_grad
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


def test_train_eval_switch_and_no_grad_inference():
    model = _mlp()
    twin = _mlp()
    compiled = st.compile(model, mode="reduce-overhead")
    for i in range(3):
        st.manual_seed(i)
        got = compiled(_x(4, 6, seed=i))
        got.sum().backward()
        st.manual_seed(i)
        want = twin(_x(4, 6, seed=i))
        want.sum().backward()
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6, atol=1e-6)
        compiled.eval()
        twin.eval()
        with st.no_grad():
            got, want = compiled(_x(4, 6, seed=9)), twin(_x(4, 6, seed=9))
            assert not got.requires_grad
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
        got, want = compiled(_x(4, 6, seed=8)), twin(_x(4, 6, seed=8))  # (eval with grad: no dropout either)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6, atol=1e-6)
        compiled.train()
        twin.train()
    for a, b in zip(model.parameters(), twin.parameters()):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert _replaying(compiled) == [True, True, True]  # training, eval under no_grad, eval with grad
    assert compiled.state_dict().keys() == {f"_orig_mod.{k}" for k in model.state_dict()}


class ReadsBack(st.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = st.nn.Linear(6, 3)

    def forward(self, x: Any) -> Any:
        y = self.lin(x)
        return y * 2 if y.sum().item() > 0 else y - 1


def test_a_read_back_in_forward_falls_back_to_eager_with_one_warning():
    st.manual_seed(0)
    model = ReadsBack().to("webgpu")
    compiled = st.compile(model, mode="reduce-overhead")
    with pytest.warns(UserWarning, match=SKIP) as caught:
        for i in range(4):
            x = _x(4, 6, seed=i)
            got = compiled(x)
            got.sum().backward()
            want = model(x)
            np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6, atol=1e-6)
    assert len([w for w in caught if SKIP in str(w.message)]) == 1
    assert "read" in str(caught[0].message)
    assert [e.eager for e in _entries(compiled)] == [True]


def test_a_function_replays_and_its_closed_over_tensors_get_gradients():
    w = _x(6, 3, seed=5).requires_grad_()
    w_cpu = st.tensor(w.detach().numpy(), requires_grad=True)

    @st.compile(mode="reduce-overhead")
    def f(a, b):
        return ((a @ w) * b).tanh()

    for i in range(4):
        an, bn = np.random.default_rng(i).normal(size=(2, 6)), np.random.default_rng(i + 9).normal(size=(2, 3))
        a = st.tensor(an.astype(np.float32), device="webgpu", requires_grad=True)
        b = st.tensor(bn.astype(np.float32), device="webgpu")
        f(a, b).sum().backward()
        ac = st.tensor(an.astype(np.float32), requires_grad=True)
        ((ac @ w_cpu) * st.tensor(bn.astype(np.float32))).tanh().sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), ac.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), w_cpu.grad.numpy(), rtol=1e-5, atol=1e-5)
    assert _replaying(f) == [True]


def test_an_input_written_in_place_runs_eagerly():
    @st.compile(mode="reduce-overhead")
    def bump(x):
        x.add_(1)
        return x * 2

    x = _x(3)
    start = x.numpy().copy()
    with pytest.warns(UserWarning, match="in place"):
        for _ in range(3):
            bump(x)
    np.testing.assert_allclose(x.numpy(), start + 3, rtol=1e-6)  # each call wrote the caller's tensor


def test_a_host_step_optimizer_runs_eagerly_and_sgd_replays():
    res = {}
    for compiled in (False, True):
        st.manual_seed(0)
        model = st.nn.Linear(6, 3).to("webgpu")
        adam = st.optim.Adam([model.weight], lr=0.1)  # capturable=False: its step count lives on the host
        sgd = st.optim.SGD([model.bias], lr=0.1, momentum=0.9)
        steps = [st.compile(o.step, mode="reduce-overhead") if compiled else o.step for o in (adam, sgd)]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for i in range(4):
                model(_x(4, 6, seed=i)).square().sum().backward()
                for s in steps:
                    s()
                adam.zero_grad()
                sgd.zero_grad()
        res[compiled] = [p.detach().numpy() for p in model.parameters()]
        if compiled:
            assert [e.eager for e in _entries(steps[0])] == [True]
            assert _replaying(steps[1]) == [True]
            assert sum("capturable" in str(w.message) for w in caught) == 1
    for a, b in zip(res[True], res[False]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_past_the_recompile_limit_new_signatures_run_eagerly():
    f = st.compile(lambda x: x * 3, mode="reduce-overhead", recompile_limit=2)
    with pytest.warns(UserWarning, match="recompile limit"):
        for n in (1, 2, 3, 3, 3):
            np.testing.assert_allclose(f(_x(n)).numpy(), 3 * _x(n).numpy(), rtol=1e-6)
    assert len(_entries(f)) == 2


def test_gradients_accumulate_over_calls_and_autograd_grad_leaves_grad_alone():
    model, twin = _mlp().eval(), _mlp().eval()  # (eval: no dropout, so the two agree call by call)
    compiled = st.compile(model, mode="reduce-overhead")
    for i in range(6):  # zero_grad for 3 calls (.grad then is the graph's buffer), then none: each backward adds
        if i < 3:
            model.zero_grad()
            twin.zero_grad()
        compiled(_x(4, 6, seed=i)).square().sum().backward()
        twin(_x(4, 6, seed=i)).square().sum().backward()
    for a, b in zip(model.parameters(), twin.parameters()):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-5)
    model.zero_grad()
    twin.zero_grad()
    for i in range(3):  # set_to_none, then autograd.grad: .grad stays None, the gradients are returned
        got = st.autograd.grad(compiled(_x(4, 6, seed=i)).square().sum(), list(model.parameters()))
        want = st.autograd.grad(twin(_x(4, 6, seed=i)).square().sum(), list(twin.parameters()))
        assert all(p.grad is None for p in model.parameters())
        for a, b in zip(got, want):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-5)
    assert _replaying(compiled) == [True]


def test_a_strided_input_and_a_view_output():
    f = st.compile(lambda x: (x * 2).t(), mode="reduce-overhead")
    for i in range(4):
        a = np.random.default_rng(i).normal(size=(3, 5)).astype(np.float32)
        y = f(st.tensor(a, device="webgpu").t())  # (the argument a transposed view, the output one)
        assert y.shape == (3, 5)
        np.testing.assert_allclose(y.numpy(), 2 * a, rtol=1e-6)
    assert _replaying(f) == [True]


def test_a_call_before_the_last_backward_runs_eagerly():
    """The forward graph's saved activations belong to the backward still due: a second call before it runs
    eagerly, so both backwards get their own call's activations."""
    model, twin = _mlp().eval(), _mlp().eval()
    compiled = st.compile(model, mode="reduce-overhead")
    for i in range(4):
        model.zero_grad()
        twin.zero_grad()
        a, b = _x(4, 6, seed=i), _x(4, 6, seed=i + 10)
        (compiled(a).square().sum() + compiled(b).tanh().sum()).backward()
        (twin(a).square().sum() + twin(b).tanh().sum()).backward()
        for p, q in zip(model.parameters(), twin.parameters()):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-5)
    assert _replaying(compiled) == [True]


def test_a_whole_training_step_compiled_as_one_function():
    """``loss.backward()`` and ``opt.step()`` inside the compiled function: one graph replays the whole step; the
    returned loss, whose graph the step freed, raises on a second backward as eagerly."""
    xs, ys = _data("mlp", 5)
    res = {}
    for compiled in (False, True):
        model, opt = _setup("mlp", "webgpu", True)
        opt.zero_grad(set_to_none=False)

        def step(x: Any, y: Any) -> Any:
            opt.zero_grad(set_to_none=False)
            loss = _loss(model, x, y)
            loss.backward()
            opt.step()
            return loss

        run = st.compile(step, mode="reduce-overhead") if compiled else step
        losses = []
        for x, y in zip(xs, ys):
            loss = run(st.tensor(x, device="webgpu"), st.tensor(y, device="webgpu"))
            losses.append(loss.item())
        with pytest.raises(RuntimeError):
            loss.backward()
        res[compiled] = losses, [p.detach().numpy() for p in model.parameters()]
        if compiled:
            assert _replaying(run) == [True] and len(_entries(run)[0].run.fwd._captured) > 5
    np.testing.assert_allclose(res[True][0], res[False][0], rtol=1e-5, atol=1e-6)
    for a, b in zip(res[True][1], res[False][1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
