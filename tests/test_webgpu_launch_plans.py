"""Launch plans of whole kernels (``backends/webgpu/launch_plans.py``): a kernel of ``kernels.PLANNED`` is recorded
at the second call of a signature and replayed from the third on. A replay must give what running the kernel gives:
torch's values and gradients for the same op called with other shapes, dtypes, strides, offsets and broadcasts in
between, for views of one buffer at different offsets, after a plan's operand was freed and its buffer handed out
again, after the pool destroyed the buffers its bind groups named, and with its device-side checks still raised.
"""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
import pytest
import torch

import shapetorch as st
from test_webgpu import DEV, F32, data, run, webgpu  # noqa: F401  (the module fixture skips or fails without WebGPU)


def _plans(name: str) -> list[Any]:
    from shapetorch.backends.webgpu import launch_plans as LP

    return [p for p in LP.TABLES.get(name, {}).values() if type(p) is LP.Plan]


def _replays(name: str) -> int:
    """How many times ``name``'s plans were replayed since the counter was read (``replay`` wrapped in a counter)."""
    return _COUNT.pop(name, 0)


_COUNT: dict[str, int] = {}


@pytest.fixture(autouse=True)
def _count_replays(monkeypatch: pytest.MonkeyPatch) -> None:
    from shapetorch.backends.webgpu import launch_plans as LP
    from shapetorch.backends.webgpu.runtime import RT

    real = LP.replay

    def counted(plan: Any, args: Any) -> Any:
        _COUNT[RT.op] = _COUNT.get(RT.op, 0) + 1
        return real(plan, args)

    monkeypatch.setattr(LP, "replay", counted)
    _COUNT.clear()


def _times(n: int, fn: Any, *shapes: Any, seed: int = 0, tol: tuple[float, float] = F32) -> None:
    """``run`` (values and gradients against torch) ``n`` times, fresh values each time: the first two calls run the
    kernels, the others replay them."""
    for i in range(n):
        run(fn, *(data(s, seed=seed + 10 * i + j) if isinstance(s, tuple) else s(i) for j, s in enumerate(shapes)),
            tol=tol)


def test_the_training_kernels_replayed_give_torchs_values_and_gradients():
    """Each planned kernel of the benchmark steps, four times with fresh values: a plan is made and replayed, and
    every call (forward and backward) matches torch."""
    def attention(lib: Any, q: Any, k: Any, v: Any) -> Any:
        return lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

    _times(4, attention, (2, 2, 5, 4), (2, 2, 5, 4), (2, 2, 5, 3))
    assert _replays("scaled_dot_product_attention") >= 2 and _replays("attention_backward") >= 2
    _times(4, lambda lib, x, w, b: lib.nn.functional.layer_norm(x, (6,), w, b, 1e-5), (3, 4, 6), (6,), (6,))
    assert _replays("layer_norm") >= 2 and _replays("layer_norm_backward") >= 2
    assert _replays("layer_norm_weight_grad") >= 2

    def targets(i: int) -> np.ndarray:
        return np.random.default_rng(i).integers(0, 7, 5)

    _times(4, lambda lib, x, t: lib.nn.functional.cross_entropy(x, t), (5, 7), targets)
    assert _replays("cross_entropy_loss") >= 2 and _replays("cross_entropy_backward") >= 2
    _times(4, lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding=1), (2, 3, 6, 6), (4, 3, 3, 3))
    assert _replays("convolution") >= 2 and _replays("convolution_weight_grad") >= 2
    assert _replays("convolution_input_grad") >= 2
    _times(4, lambda lib, x: lib.nn.functional.max_pool2d(x, 2), (2, 3, 6, 6))
    assert _replays("take_along_dim") >= 2 and _replays("put_along_dim_add") >= 2
    _times(4, lambda lib, a, b: (a @ b).sum(0), (5, 4), (4, 3))
    assert _replays("matmul") >= 2 and _replays("sum") >= 2

    def embed(lib: Any, w: Any) -> Any:
        ix = lib.tensor([[1, 3, 3], [0, 5, 1]])
        return lib.nn.functional.embedding(ix.to(w.device), w)

    _times(4, embed, (6, 4))
    assert _replays("scatter_add") + _replays("index_backward") >= 2


def test_a_plan_is_kept_per_layout_dtype_offset_broadcast_and_parameter():
    """layer_norm's and matmul's plans with calls of other signatures between their replays: another shape, a
    transposed (strided) input, views at other offsets of one buffer, a broadcast operand, another eps, another
    dtype. A plan that kept any of these from the call that made it would give another result than torch."""
    big = data((9, 8))
    B = st.tensor(big, device=DEV)
    Tb = torch.from_numpy(big)
    for rnd in range(3):
        for off in (0, 1, 3):  # one layout at three offsets of one buffer: one plan each, replayed every round
            got = st.nn.functional.layer_norm(B[off:off + 5], (8,), eps=1e-5)
            want = torch.nn.functional.layer_norm(Tb[off:off + 5], (8,), eps=1e-5)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)
        got = st.nn.functional.layer_norm(B[:5], (8,), eps=0.5)  # the same layout, another eps
        np.testing.assert_allclose(got.numpy(), torch.nn.functional.layer_norm(Tb[:5], (8,), eps=0.5).numpy(),
                                   rtol=1e-4, atol=1e-5)
        got = st.nn.functional.layer_norm(B[:, :5].t(), (9,))  # transposed: strided rows
        np.testing.assert_allclose(got.numpy(), torch.nn.functional.layer_norm(Tb[:, :5].t(), (9,)).numpy(),
                                   rtol=1e-4, atol=1e-5)
        got = st.nn.functional.layer_norm(B[2:3].expand(4, 8), (8,))  # broadcast rows (stride 0)
        np.testing.assert_allclose(got.numpy(), torch.nn.functional.layer_norm(Tb[2:3].expand(4, 8), (8,)).numpy(),
                                   rtol=1e-4, atol=1e-5)
        got = B[rnd:rnd + 3, :4] @ B[4:8, rnd:rnd + 2]  # offsets that move every round
        np.testing.assert_allclose(got.numpy(), (Tb[rnd:rnd + 3, :4] @ Tb[4:8, rnd:rnd + 2]).numpy(), rtol=1e-5,
                                   atol=1e-5)
        got = B[:3, :4] @ B[4:8, :2].t().contiguous().t()  # the same shapes, a column-major right operand
        np.testing.assert_allclose(got.numpy(), (Tb[:3, :4] @ Tb[4:8, :2]).numpy(), rtol=1e-5, atol=1e-5)
        ints = np.arange(36, dtype=np.int32).reshape(9, 4)  # another dtype, the same shapes and offsets
        got = st.tensor(ints, device=DEV)[:3, :4] @ st.tensor(ints, device=DEV)[4:8, :2]
        np.testing.assert_array_equal(got.numpy(), ints[:3, :4] @ ints[4:8, :2])
    assert len(_plans("layer_norm")) >= 6 and _replays("layer_norm") >= 6
    assert _replays("matmul") >= 2


def test_attention_over_views_of_one_buffer_and_over_separate_buffers():
    """q, k and v as views at three offsets of one buffer (a fused qkv projection's split), as three buffers, and
    with k the very array q is, in the layouts of the three buffers: which operands share a buffer is part of a
    plan's signature (a plan made with k bound as q would read q for another call's k), and every view is read at
    its own offset (values and gradients as torch's)."""
    def split(lib: Any, qkv: Any) -> Any:
        q, k, v = qkv.split(4, dim=-1)
        return lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

    def attention(lib: Any, q: Any, k: Any, v: Any) -> Any:
        return lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

    def same_qk(lib: Any, q: Any, v: Any) -> Any:
        return lib.nn.functional.scaled_dot_product_attention(q, q, v, is_causal=True)

    for i in range(3):
        for j in range(2):  # (twice: a signature's second call is the one recorded)
            run(same_qk, data((2, 6, 4), seed=i + j), data((2, 6, 4), seed=i + 5))
        run(attention, *(data((2, 6, 4), seed=i + 10 * j) for j in range(3)))
        run(split, data((2, 6, 12), seed=i))
    assert _replays("scaled_dot_product_attention") >= 3 and _replays("attention_backward") >= 3


def test_a_replay_after_its_operands_were_freed_and_the_pool_destroyed_their_buffers():
    """A plan's operands and results freed (their buffers back in the pool, handed to other tensors in other
    roles), then the pool emptied (the buffers destroyed, their bind groups forgotten): the replays that follow bind
    the new buffers and give torch's values."""
    def step(lib: Any, x: Any, w: Any, b: Any) -> Any:
        return lib.nn.functional.layer_norm(x, (6,), w, b)

    for i in range(6):
        run(step, data((4, 6), seed=i), data((6,), seed=i + 1), data((6,), seed=i + 2))
        if i == 3:
            # other tensors of the same sizes take the freed buffers, in other roles, and hold them
            hold = [st.tensor(data((6,), seed=50 + j), device=DEV) * 1 for j in range(4)]
            hold += [st.tensor(data((4, 6), seed=60 + j), device=DEV) * 1 for j in range(4)]
            gc.collect()
        if i == 4:
            del hold
            gc.collect()
            st.empty_cache()
    assert _replays("layer_norm") >= 3


def test_a_replayed_kernel_registers_its_device_checks_anew():
    """A plan's device-side check (here: a float cast to int64, refused outside int32) is registered again at each
    replay, its id placed in the parameter block: an out-of-range value in a replayed call raises the coded error at
    the next sync, and the calls after it are correct."""
    from shapetorch.backends.webgpu import kernels as K
    from shapetorch.backends.webgpu import launch_plans as LP
    from shapetorch.backends.webgpu.runtime import to_host

    def kernel(x: Any, index: Any) -> Any:  # a check in the first dispatch, none in the last (no recipe is held)
        return K.gather_kernel(K.cast(x, np.dtype(np.int64)), index, 0)

    plans: dict[Any, Any] = {}
    index = st.tensor([2, 0, 1], device=DEV)._data
    for i in range(4):
        x = st.tensor(np.array([1.0, 2.0, 3.0 + i], np.float32), device=DEV)._data
        np.testing.assert_array_equal(to_host(LP.call(plans, kernel, (x, index), {})), [3 + i, 1, 2])
    assert any(type(p) is LP.Plan and p.checks for p in plans.values())
    bad = st.tensor(np.array([1.0, 3e9, 3.0], np.float32), device=DEV)._data
    LP.call(plans, kernel, (bad, index), {})
    with pytest.raises(st.DTypeError) as e:
        st.synchronize()
    assert e.value.code == "method_dtype_not_supported_error" and "int64" in str(e.value)
    x = st.tensor(np.array([4.0, 5.0, 6.0], np.float32), device=DEV)._data
    np.testing.assert_array_equal(to_host(LP.call(plans, kernel, (x, index), {})), [6, 4, 5])


def test_a_recording_is_discarded_when_a_replay_would_not_repeat_the_call():
    """A kernel that uploads, one that binds a buffer it keeps itself, and one whose last dispatch is held with a
    recipe naming an array of its own (an in-place op could redirect it, reading that array) are never replayed: each
    call runs the kernel (and is right)."""
    from shapetorch.backends.webgpu import kernels as K
    from shapetorch.backends.webgpu import launch_plans as LP
    from shapetorch.backends.webgpu.runtime import RT, to_host

    kept = RT.upload(np.array([10.0, 20.0, 30.0], np.float32))

    def uploads(x: Any) -> Any:
        return K.gather_kernel(RT.upload(np.array([5.0, 6.0, 7.0], np.float32)), x, 0)

    def own_buffer(x: Any) -> Any:
        return K.gather_kernel(kept, x, 0)

    def held(x: Any) -> Any:  # the held dispatch's recipe names the copy, an array of the call's own
        return K.elementwise("a + 1", x.dtype, [("a", K.contiguous_copy(x), x.dtype)], x.shape)

    index = st.tensor([2, 0], device=DEV)._data
    for kernel, want in ((uploads, [7.0, 5.0]), (own_buffer, [30.0, 10.0]), (held, [3, 1])):
        plans: dict[Any, Any] = {}
        for _ in range(4):
            np.testing.assert_array_equal(to_host(LP.call(plans, kernel, (index,), {})), want)
        assert not any(type(p) is LP.Plan for p in plans.values()), kernel.__name__


def test_recording_keeps_an_attribute_set_on_the_runtime():
    """The recorder stands in for the runtime's methods while a kernel runs; a stand-in already set on the runtime
    (the bench's dispatch counter) is called through and put back."""
    from shapetorch.backends.webgpu.runtime import RT

    seen = []
    real = RT.dispatch

    def counting(*args: Any, **kwargs: Any) -> Any:
        seen.append(RT.op)
        return real(*args, **kwargs)

    RT.dispatch = counting  # type: ignore[method-assign]
    try:
        for i in range(4):
            run(lambda lib, x: lib.nn.functional.layer_norm(x, (5,)), data((3, 5), seed=i), grad=False)
        assert RT.dispatch is counting and seen.count("layer_norm") == 4
    finally:
        del RT.dispatch
    assert "dispatch" not in vars(RT)


def test_an_elementwise_replay_keeps_its_recipe_for_an_in_place_op():
    """An elementwise kernel's replay hands the runtime this call's recipe (its operands and its result): an in-place
    op right after it redirects the replayed dispatch into its own tensor (one dispatch, no copy), reading this call's
    operands (a recipe kept from the recorded call would write that call's sum). Activations and their gradients
    replayed give torch's values and gradients."""
    from shapetorch.backends.webgpu.runtime import RT

    for i in range(5):
        xa, ya = data((4, 3), seed=i), data((4, 3), seed=i + 20)
        x, y = st.tensor(xa, device=DEV), st.tensor(ya, device=DEV)
        st.synchronize()
        before = RT.n_dispatch
        x.add_(y)
        st.memory_stats()
        assert RT.n_dispatch - before == 1  # the replayed add, redirected into x: no copy
        np.testing.assert_array_equal(x.numpy(), xa + ya)
    assert _replays("add") >= 2
    _times(4, lambda lib, a: lib.nn.functional.gelu(a) * lib.relu(a) - lib.sigmoid(a), (3, 5))
    assert _replays("gelu") >= 2 and _replays("gelu_backward") >= 2 and _replays("relu_backward") >= 2


def test_a_plan_is_kept_per_adapter_limit(monkeypatch: pytest.MonkeyPatch):
    """The grid and binding limits the kernels fold their grids and split their operands by are part of a plan's
    signature: a plan made under the adapter's limits is not replayed once they are lowered (a grid of 40 workgroups
    is refused under a limit of 8; a 1,280-byte operand is bound in windows under a 512-byte binding limit)."""
    from shapetorch.backends.webgpu.runtime import RT

    def check(seed: int) -> None:
        x = data((40, 8), seed=seed)
        got = st.nn.functional.layer_norm(st.tensor(x, device=DEV), (8,))
        want = torch.nn.functional.layer_norm(torch.from_numpy(x), (8,))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)

    for i in range(3):
        check(i)
    monkeypatch.setattr(RT, "max_groups", 8)
    for i in range(3):
        check(10 + i)
    monkeypatch.setattr(RT, "max_binding", 512)
    for i in range(3):
        check(20 + i)
    assert _replays("layer_norm") >= 2


def test_a_plan_is_kept_per_buffer_sharing_and_integer_argument():
    """An elementwise plan made for ``a + a`` (one buffer bound twice) is not replayed for ``a + b`` of the same
    layouts, nor the other way round; a reduction's plan is kept per axis (an integer parameter). Each call, in
    alternation after both signatures have plans, gives torch's values."""
    x, y = data((4, 6), seed=1), data((4, 6), seed=2)
    X, Y = st.tensor(x, device=DEV), st.tensor(y, device=DEV)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    for _ in range(4):
        for _ in range(2):  # (twice: the plan of this layout is recorded from a call whose operands share a buffer)
            np.testing.assert_allclose((X * X).numpy(), (tx * tx).numpy(), rtol=1e-6)
        np.testing.assert_allclose((X * Y).numpy(), (tx * ty).numpy(), rtol=1e-6)
        np.testing.assert_allclose((Y * X).numpy(), (ty * tx).numpy(), rtol=1e-6)
        for dim in (0, 1):
            np.testing.assert_allclose(X.sum(dim).numpy(), tx.sum(dim).numpy(), rtol=1e-5, atol=1e-6)
    assert _replays("mul") >= 4 and _replays("sum") >= 2


def test_basic_index_layouts_are_kept_per_layout_and_index():
    """A basic index's view (its shape, strides and offset, kept per (shape, strides, index)) for the same index of a
    transposed layout and of views at moving offsets, and other indexes of the same layout: each as torch's."""
    a = data((8, 8), seed=3)  # (square: the array and its transpose have one shape, other strides)
    A, ta = st.tensor(a, device=DEV), torch.from_numpy(a)
    for rnd in range(3):
        for got, want in ((A[1:4, ::2], ta[1:4, ::2]), (A.t()[1:4, ::2], ta.t()[1:4, ::2]),
                          (A[rnd:rnd + 3][1:3, rnd], ta[rnd:rnd + 3][1:3, rnd]),
                          (A[rnd:][None, ..., -1], ta[rnd:][None, ..., -1]),
                          (A[..., rnd:rnd + 2], ta[..., rnd:rnd + 2])):
            assert tuple(got.shape) == tuple(want.shape)
            np.testing.assert_array_equal(got.numpy(), want.numpy())



def test_an_elementwise_write_into_a_tensor_laid_out_as_a_fresh_output_takes_its_plan(monkeypatch: pytest.MonkeyPatch):
    """``kernels.assign`` (a compiled call's copy into its static input) into a contiguous tensor at offset 0 takes
    the fresh output's elementwise plan (the same shader and words: no shader built), with no recipe (a write in
    place is no fresh output to redirect); into a strided view or a view at an offset it builds its launch; an operand
    in the output's own buffer reads it in place. Each gives torch's values."""
    from shapetorch.backends.webgpu import codegen as G
    from shapetorch.backends.webgpu import kernels as K
    from shapetorch.backends.webgpu.runtime import RT

    recipes: list[Any] = []
    built: list[str] = []
    dispatch, build = RT.dispatch, G.elementwise

    def spy(wgsl: str, buffers: Any, meta: Any, grid: Any, recipe: Any = None) -> None:
        recipes.append(recipe)
        dispatch(wgsl, buffers, meta, grid, recipe)

    def counted(*args: Any) -> str:
        built.append(args[0])
        return build(*args)

    src = np.arange(24, dtype=np.float32).reshape(4, 6)
    for _ in range(2):  # (the first call makes the plan)
        K.contiguous_copy(st.tensor(src, device=DEV)._data)
    cases = {
        "whole": (np.zeros((4, 6), np.float32), lambda d: d, True),
        "strided": (np.zeros((6, 4), np.float32), lambda d: d.t(), False),
        "offset": (np.zeros((5, 6), np.float32), lambda d: d[1:], False),
    }
    for name, (init, view, planned) in cases.items():
        dst, ref, x = st.tensor(init, device=DEV), torch.tensor(init), st.tensor(src, device=DEV)
        recipes.clear()
        built.clear()
        monkeypatch.setattr(RT, "dispatch", spy)
        monkeypatch.setattr(G, "elementwise", counted)
        K.assign(view(dst)._data, x._data)
        monkeypatch.undo()
        view(ref).copy_(torch.tensor(src))
        np.testing.assert_array_equal(dst.cpu().numpy(), ref.numpy(), err_msg=name)
        assert recipes == [None], name
        assert (built == []) == planned, name
    a = st.tensor(src, device=DEV)
    K.assign(a._data, (a * 2)._data)
    K.assign(a._data, a._data)  # (the operand is the output: read in place)
    np.testing.assert_array_equal(a.cpu().numpy(), 2 * src)
