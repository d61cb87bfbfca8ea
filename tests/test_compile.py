"""``st.compile`` off WebGPU (``shapetorch._compile``): torch's signature and errors, the ``OptimizedModule``
wrapper, and the graph modes leaving CPU calls eager and unchanged. The WebGPU replays are
``tests/test_webgpu_compile.py``'s."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import shapetorch as st


def test_modes_and_options_are_checked_as_torch():
    f = lambda x: x + 1  # noqa: E731
    for lib in (torch, st):
        with pytest.raises(RuntimeError, match="Unrecognized mode=fast"):
            lib.compile(f, mode="fast")
        with pytest.raises(RuntimeError, match="Either mode or options"):
            lib.compile(f, mode="reduce-overhead", options={"triton.cudagraphs": True})
    with pytest.raises(st.ShapeError) as e:
        st.compile(f, mode="fast")
    assert e.value.code == "argument_error_invalid"


def test_default_mode_changes_nothing():
    f = lambda x: x * 2  # noqa: E731
    assert st.compile(f) is f and st.compile(mode="max-autotune-no-cudagraphs")(f) is f
    assert st.compile(f, mode="reduce-overhead", backend="eager") is f  # (torch's eager backend: no CUDA graphs)


@pytest.mark.parametrize("mode", ["reduce-overhead", "max-autotune"])
def test_graph_modes_on_the_cpu_run_eagerly(mode):
    st.manual_seed(0)
    model = st.nn.Sequential(st.nn.Linear(4, 3), st.nn.Dropout(0.5), st.nn.Linear(3, 2))
    twin = st.nn.Sequential(st.nn.Linear(4, 3), st.nn.Dropout(0.5), st.nn.Linear(3, 2))
    twin.load_state_dict(model.state_dict())
    compiled = st.compile(model, mode=mode)
    assert type(compiled).__name__ == "OptimizedModule" and compiled._orig_mod is model
    assert list(compiled.state_dict()) == [f"_orig_mod.{k}" for k in model.state_dict()]

    @st.compile(mode=mode)
    def double(x):
        return x * 2

    assert double.__name__ == "double"
    x = st.tensor(np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32))
    for _ in range(4):  # (past the warm-up and the capture a WebGPU call would take)
        st.manual_seed(1)
        got = compiled(x)
        got.sum().backward()
        st.manual_seed(1)
        want = twin(x)
        want.sum().backward()
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
        np.testing.assert_array_equal(double(x).numpy(), (x * 2).numpy())
    for a, b in zip(model.parameters(), twin.parameters()):
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
    assert not compiled._graphed.entries and not double.entries  # nothing captured on the CPU


def test_compiled_optimizer_step_on_the_cpu_is_the_eager_step():
    p = st.nn.Parameter(st.tensor([1.0, -2.0]))
    q = st.nn.Parameter(st.tensor([1.0, -2.0]))
    opt, ref = st.optim.Adam([p], lr=0.1), st.optim.Adam([q], lr=0.1)
    step = st.compile(opt.step, mode="reduce-overhead")
    for _ in range(3):
        for t, o in ((p, step), (q, ref.step)):
            (t * t).sum().backward()
            o()
    np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
