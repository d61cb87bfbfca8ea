"""The WebGPU runtime cannot wedge: each failure it guards against is provoked here, and after each one the
device keeps working. Results are checked against torch (CPU). Limits are lowered with monkeypatch where the
real ones would need tensors too large for a software adapter.
"""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
import pytest
import torch

import shapetorch as st
from test_webgpu import DEV, data, run, webgpu  # noqa: F401  (the module fixture skips or fails without WebGPU)


@pytest.fixture
def rt():
    from shapetorch.backends.webgpu.runtime import RT

    st.synchronize()
    return RT


@pytest.fixture
def settled_pool():
    """A pool whose order a test can predict: tensors other tests left in reference cycles are collected now and the
    free buffers emptied, and the collector is held off until the test ends (run mid-test, it would bring back
    older buffers of a size, which the pool hands out first)."""
    gc.collect()
    st.synchronize()
    st.empty_cache()
    gc.disable()
    yield
    gc.enable()


def still_works() -> None:
    """A fresh op after a failure: recorded, submitted and read back correctly."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose((st.tensor(a, device=DEV) * 2 + 1).numpy(), a * 2 + 1)


def test_batches_and_elementwise_past_a_lowered_grid_limit(rt, monkeypatch):
    """The grid folding of matmul tiles and elementwise threads, under a limit of 4 workgroups per dimension
    (the real limit, 65,535, needs a (4.2M, k) matmul: over ten seconds on lavapipe)."""
    monkeypatch.setattr(rt, "max_groups", 4)
    run(lambda lib, a, b: a @ b, data((5, 70, 3)), data((3, 2), seed=1))  # 10 (batch, row) tiles on a 4x3 grid
    run(lambda lib, a: (a * 2).exp().sum(1), data((5, 700)))  # 14 elementwise workgroups of 256


def test_a_grid_that_cannot_fold_is_a_coded_error_naming_the_op(rt, monkeypatch):
    # 10 column tiles of 64: more than a 2 x 2 x 2 grid folds
    a, b = st.ones(2, 3, device=DEV), st.ones(3, 600, device=DEV)
    monkeypatch.setattr(rt, "max_groups", 2)
    with pytest.raises(st.DeviceError) as e:
        a @ b
    assert e.value.code == "device_error_limit" and str(e.value).startswith("matmul:")
    assert "max-compute-workgroups-per-dimension" in str(e.value)
    monkeypatch.undo()
    still_works()


def test_a_tensor_over_the_binding_limit_runs_in_chunks_or_is_a_coded_error(rt, monkeypatch):
    """(tests/test_webgpu_large.py covers the chunked kernels.)"""
    monkeypatch.setattr(rt, "max_binding", 1 << 20)
    x = st.ones(100, device=DEV)
    y = x.expand(3000, 100).contiguous()  # 1.2 MB: copied in chunks
    assert y.sum().item() == 300_000
    assert y.cumsum(0)[-1].sum().item() == 300_000  # a scan runs in chunks too
    assert y.cummax(0)[1][-1].sum().item() == 2999 * 100  # and cummax's index scan (the last of equal values)
    assert y.argmax(0).sum().item() == 0  # an argmax over a dim in windowed pieces (the first of equal values)
    index, src = st.zeros(2, 100, dtype=st.int64, device=DEV), st.full((2, 100), 2.0, device=DEV)
    # a scatter_reduce into an input over a binding along dim 0: by pieces of the input's rows
    assert y.scatter_reduce(0, index, src, "amax").sum().item() == 300_100
    with pytest.raises(st.DeviceError) as e:  # one row of a convolution's output over a binding is refused
        st.nn.functional.conv2d(st.ones(1, 1, 2, 300_000, device=DEV), st.ones(1, 1, 1, 1, device=DEV))
    assert e.value.code == "device_error_limit" and "max-storage-buffer-binding-size" in str(e.value)
    assert str(e.value).startswith("convolution:")
    monkeypatch.undo()
    still_works()


def test_a_batch_the_device_rejects_is_dropped_with_a_coded_error(rt, monkeypatch):
    """An over-limit grid that slips past the checks fails at submit; the runtime opens a fresh batch after it."""
    from shapetorch.backends.webgpu import codegen

    monkeypatch.setattr(rt, "max_groups", 1 << 20)
    x = st.ones(4, device=DEV)
    st.synchronize()  # ones is a kernel: submitted before the bad batch, whose results are lost
    wgsl = codegen.elementwise("a", "f32", "c", (("a", "f32", "k"),), 0)
    out = rt.empty((4,), np.dtype(np.float32))
    rt.dispatch(wgsl, [out.st.buf], [4, 1, 4, 0, 1, 0], (70_000, 1, 1))
    with pytest.raises(st.DeviceError) as e:
        rt.flush()
    assert e.value.code == "device_error_failed"
    monkeypatch.undo()
    still_works()
    np.testing.assert_allclose((x + 1).numpy(), [2, 2, 2, 2])


def test_allocation_is_retried_after_the_pool_is_released(rt, monkeypatch, settled_pool):
    keep = st.ones(1 << 18, device=DEV) * 1  # a pooled buffer after `del` (1 MiB)
    del keep
    st.synchronize()
    assert rt.pooled_bytes > 0
    real = rt._create_buffer
    calls = []

    def flaky(size, usage):
        calls.append(size)
        if len(calls) == 1:
            raise RuntimeError("Out of memory")
        return real(size, usage)

    monkeypatch.setattr(rt, "_create_buffer", flaky)
    y = st.tensor(np.arange(3 << 18, dtype=np.float32), device=DEV)  # 3 MiB: no pooled buffer fits
    assert len(calls) == 2 and rt.pooled_bytes == 0  # released, then retried
    np.testing.assert_allclose(y[-3:].numpy(), [786429, 786430, 786431])

    def broken(size, usage):
        raise RuntimeError("Out of memory")

    monkeypatch.setattr(rt, "_create_buffer", broken)
    with pytest.raises(st.DeviceError) as e:
        st.tensor(np.zeros(5 << 18, np.float32), device=DEV)
    assert e.value.code == "device_error_out_of_memory" and "out of memory on webgpu" in str(e.value)
    monkeypatch.undo()
    still_works()


def test_the_pool_reuses_larger_buffers_and_stays_under_its_limit(rt, monkeypatch, settled_pool):
    x = st.zeros(3 << 18, device=DEV) + 0  # 3 MiB
    del x
    st.synchronize()
    made = st.memory_stats()["num_buffers_created"]
    y = st.zeros(2 << 18, device=DEV) + 0  # 2 MiB: served by the free 3 MiB buffers
    assert st.memory_stats()["num_buffers_created"] == made
    del y
    monkeypatch.setattr(rt, "pool_limit", 8 << 20)
    for i in range(30):  # 30 distinct sizes, one live at a time
        z = st.ones(((i + 1) << 18) + 7 * i, device=DEV) * 2
        assert float(z[-1].item()) == 2.0
        del z
    st.synchronize()
    assert st.memory_stats()["pooled_bytes"] <= 8 << 20
    st.empty_cache()


def test_the_pool_hands_out_the_first_made_free_buffer_and_uploads_only_submitted_ones(rt, settled_pool):
    """Of the free buffers of a size, a request gets the first made, whether it was freed before or after the last
    submit (so a loop gets the same buffers every step); an upload, written from the host, gets only one that no
    unsubmitted command names."""
    nbytes = 3 << 20
    first, second, third, fourth = (rt.alloc(nbytes) for _ in range(4))
    made = [s.buf for s in (first, second, third, fourth)]
    del third, first  # freed with no batch open: into the pool
    got = rt.alloc(nbytes)
    assert got.buf is made[0]
    pending = st.ones(4, device=DEV) + 1  # a batch is open now
    del second, got  # freed while it is open: reused only as kernel outputs until the submit
    out = rt.alloc(nbytes)  # the pool holds the third, the batch's freed the first and second
    assert out.buf is made[0], "the first made of the pool's and the batch's freed buffers"
    up = rt.alloc(nbytes, upload=True)
    assert up.buf is made[2], "an upload takes no buffer an unsubmitted command names"
    again = rt.alloc(nbytes)
    assert again.buf is made[1]
    del out, up, again, fourth
    np.testing.assert_allclose(pending.numpy(), [2, 2, 2, 2])  # the submit: all of them are in the pool now
    held = [rt.alloc(nbytes) for _ in range(4)]
    assert [h.buf for h in held] == made
    del held
    st.empty_cache()


def test_training_steps_reuse_bind_groups(settled_pool):
    """In a loop of identical training steps the pool hands out the same buffers at the same places (the first-made
    free buffer of a size), so every dispatch finds its bind group made by an earlier step: no bind group is made
    once the loop is warm, and the results are those of the CPU."""
    import shapetorch.nn.functional as F
    from shapetorch.backends.webgpu.runtime import RT

    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(16, 12)).astype(np.float32), rng.integers(0, 5, 16)
    losses = {}
    for dev in ("webgpu", "cpu"):
        st.manual_seed(0)
        model = st.nn.Sequential(st.nn.Linear(12, 9), st.nn.GELU(), st.nn.LayerNorm(9), st.nn.Linear(9, 5)).to(dev)
        opt = st.optim.AdamW(model.parameters(), lr=1e-2)
        xs, ys = st.tensor(x, device=dev), st.tensor(y, device=dev)
        made = []
        for _ in range(6):
            before = len(RT.groups)
            opt.zero_grad()
            loss = F.cross_entropy(model(xs), ys)
            loss.backward()
            opt.step()
            st.memory_stats()  # records the held-back optimizer step
            made.append(len(RT.groups) - before)
        losses[dev] = loss.item()
        if dev == "webgpu":
            assert made[-2:] == [0, 0], made
    assert abs(losses["webgpu"] - losses["cpu"]) < 1e-4


def test_dispatches_go_through_wgpu_natives_entry_points_or_the_public_calls(rt, monkeypatch):
    """With wgpu's native backend the runtime records set_pipeline, set_bind_group and dispatch_workgroups through
    its C functions (wgpu-py's wrappers cost three times as much host time); without them, through wgpu-py's
    methods. Both record the same work: each batch's values and gradients equal torch's. The parameter blocks of
    many dispatches share one arena, each at its own dynamic offset: a wrong offset would give wrong values."""
    assert rt.raw is not None  # wgpu_native: the fast path is the one in use
    for raw in (rt.raw, None):
        st.synchronize()
        monkeypatch.setattr(rt, "raw", raw)
        run(lambda lib, a, b: ((a * 2).exp() @ b.T).sum(1) - a.mean(), data((5, 7)), data((3, 7), seed=1))
        run(lambda lib, a: [a + i for i in range(40)][-1] * a, data((4, 9)))  # 40 blocks in one batch
    st.synchronize()


def test_the_native_calls_are_taken_only_with_the_declarations_they_were_written_for(rt, monkeypatch):
    """``SHAPETORCH_WEBGPU_PUBLIC_CALLS=1`` takes wgpu-py's methods; so does a wgpu whose cffi declares any of the three
    C functions otherwise (another wgpu version: calling it with this ABI could crash the process)."""
    from shapetorch.backends.webgpu import runtime as R

    assert R._pass_calls() is not None
    monkeypatch.setenv("SHAPETORCH_WEBGPU_PUBLIC_CALLS", "1")
    assert R._pass_calls() is None
    monkeypatch.delenv("SHAPETORCH_WEBGPU_PUBLIC_CALLS")
    for name, decl in R.NATIVE_SIGNATURES.items():
        changed = dict(R.NATIVE_SIGNATURES, **{name: decl.replace("uint32_t", "uint64_t", 1).replace("Impl *)", "*)")})
        monkeypatch.setattr(R, "NATIVE_SIGNATURES", changed)
        assert R._pass_calls() is None, name
    monkeypatch.setattr(R, "NATIVE_SIGNATURES", {**R.NATIVE_SIGNATURES, "wgpuNoSuchFunction": "void(*)(void)"})
    assert R._pass_calls() is None


def test_handles_of_another_type_switch_to_the_public_calls_without_losing_a_dispatch(rt, monkeypatch):
    """Should wgpu's objects hold handles the C calls do not take (cffi checks each argument's type), the dispatch
    being recorded goes through the public methods, as does every later one; values and gradients stay torch's.
    (That is a batch opened through wgpu-py; one opened through wgpu-native's own calls: the next test.)"""
    st.synchronize()
    monkeypatch.setattr(rt, "native", None)
    set_pipeline, set_bind_group, dispatch, offsets = rt.raw
    calls = []

    def wrong_handle(pid, index, group, n, offs):  # noqa: ANN001, ANN202
        calls.append(index)
        return set_bind_group(pid, index, rt.device, n, offs)  # a device is no bind group: cffi raises TypeError

    monkeypatch.setattr(rt, "raw", (set_pipeline, wrong_handle, dispatch, offsets))
    run(lambda lib, a, b: ((a * 2).exp() @ b.T).sum(1) - a.mean(), data((5, 7)), data((3, 7), seed=1))
    assert calls == [0] and rt.raw is None  # the first dispatch fell back, and the rest took the public calls


def test_handles_refused_in_a_native_batch_drop_it_with_a_coded_error_then_the_public_calls_take_over(rt, monkeypatch):
    """A batch whose encoder and pass are wgpu-native's own (``runtime.Native``) has no wgpu-py pass to go on with
    when a dispatch's C call refuses the handles: the batch is dropped with the coded error (as a batch the device
    rejects), nothing is left open, and the later work takes the public calls, with torch's values."""
    st.synchronize()
    assert rt.native is not None
    monkeypatch.setattr(rt, "native", rt.native)  # (restored after the test, as raw)
    set_pipeline, set_bind_group, dispatch, offsets = rt.raw

    def wrong_handle(pid, index, group, n, offs):  # noqa: ANN001, ANN202
        return set_bind_group(pid, index, rt.device, n, offs)  # a device is no bind group: cffi raises TypeError

    monkeypatch.setattr(rt, "raw", (set_pipeline, wrong_handle, dispatch, offsets))
    a = st.tensor(data((5, 7)), device=DEV)
    with pytest.raises(st.DeviceError, match="refused this wgpu's handles"):
        (a * 2 + 1).exp().sum().item()
    assert rt.raw is None and rt.native is None and rt.encoder is None
    run(lambda lib, a, b: ((a * 2).exp() @ b.T).sum(1) - a.mean(), data((5, 7)), data((3, 7), seed=1))


def test_a_process_with_public_calls_trains_as_torch(tmp_path):
    """The fallback as a process sees it: ``SHAPETORCH_WEBGPU_PUBLIC_CALLS=1`` set before the device is made."""
    import os
    import subprocess
    import sys

    code = (
        "import numpy as np, torch, shapetorch as st\n"
        "from shapetorch.backends.webgpu.runtime import RT\n"
        "x = np.random.default_rng(0).normal(size=(6, 5)).astype(np.float32)\n"
        "w = np.random.default_rng(1).normal(size=(3, 5)).astype(np.float32)\n"
        "got = []\n"
        "for lib, dev in ((st, 'webgpu'), (torch, 'cpu')):\n"
        "    W = lib.tensor(w, device=dev, requires_grad=True)\n"
        "    y = (lib.tensor(x, device=dev) @ W.T).relu().sum()\n"
        "    y.backward()\n"
        "    got.append((float(y.item()), np.asarray(W.grad.cpu().numpy())))\n"
        "assert RT.raw is None, 'the native calls were used'\n"
        "assert abs(got[0][0] - got[1][0]) < 1e-4 and np.allclose(got[0][1], got[1][1], atol=1e-5)\n"
        "print('ok')\n")
    env = dict(os.environ, SHAPETORCH_WEBGPU_PUBLIC_CALLS="1")
    out = subprocess.run([sys.executable, "-c", code], check=False, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-2000:]


def test_a_repeated_reduction_reuses_its_launch_with_the_inputs_new_offset(rt):
    """A reduction of an earlier one's op, shape, strides, dtype and axes is recorded from that one's launch plan
    (none is made again), reading this call's input at its own offset; values and gradients as torch's."""
    from shapetorch.backends.webgpu import kernels as K

    x = data((5, 4, 6))
    X = st.tensor(x, device=DEV)
    plans = 0
    for i in range(3):
        for op in ("sum", "amax", "argmin"):
            got = getattr(X[i:i + 2], op)(1) if op != "sum" else X[i:i + 2].sum((0, 2))
            t = torch.from_numpy(x[i:i + 2])
            want = getattr(t, op)(1) if op != "sum" else t.sum((0, 2))
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
        if i == 0:
            plans = len(K._REDUCE_PLANS)
        assert len(K._REDUCE_PLANS) == plans
    run(lambda lib, a: a[1:3].sum(1) * a[2:4].sum(1), x)  # the same plan, other offsets, and the gradients


def test_repeated_row_kernels_reuse_their_launch_with_the_inputs_new_offsets(rt):
    """Softmax and layer norm (and their gradients) of an earlier call's shapes are recorded from its launch plan,
    each input (rows, weight, bias, incoming gradient) read at this call's offset; values and gradients as torch's."""
    import shapetorch.nn.functional as F
    from shapetorch.backends.webgpu import kernels as K

    x, w, b = data((6, 5)), data((3, 5), seed=1), data((3, 5), seed=2)
    X, W, B = (st.tensor(v, device=DEV) for v in (x, w, b))
    plans = 0
    for i in range(3):
        got = F.layer_norm(X[i:i + 3], (5,), W[i], B[2 - i]).numpy()
        want = torch.nn.functional.layer_norm(torch.from_numpy(x[i:i + 3]), (5,), torch.from_numpy(w[i]),
                                              torch.from_numpy(b[2 - i]))
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(X[i + 1:i + 3].softmax(-1).numpy(),
                                   torch.from_numpy(x[i + 1:i + 3]).softmax(-1).numpy(), rtol=1e-5, atol=1e-6)
        if i == 0:
            plans = len(K._ROW_PLANS)
        assert len(K._ROW_PLANS) == plans
    run(lambda lib, a, v, c: lib.nn.functional.layer_norm(a[1:4], (5,), v[1], c[0]).softmax(-1)
        * lib.nn.functional.layer_norm(a[2:5], (5,), v[2], c[1]).softmax(-1), x, w, b)


def test_repeated_elementwise_ops_reuse_their_launch_with_new_offsets_and_scalars(rt):
    """An elementwise op of an earlier one's expression, dtypes, shapes and strides is recorded from that one's
    launch plan, with this call's operands' offsets and its scalars (a broadcast operand, a strided view, a number),
    and an in-place op still writes its tensor directly; values as torch's."""
    from shapetorch.backends.webgpu import kernels as K

    x, v = data((6, 8)), data((4, 8), seed=1)
    X, V = st.tensor(x, device=DEV), st.tensor(v, device=DEV)
    plans = 0
    for i in range(3):
        got = (X[i:i + 3, ::2] * (i + 0.5) + V[i, ::2]).numpy()  # strided view, a scalar, a broadcast row
        np.testing.assert_allclose(got, x[i:i + 3, ::2] * np.float32(i + 0.5) + v[i, ::2], rtol=1e-6)
        y = st.zeros(3, 4, device=DEV)
        y.add_(X[i + 1:i + 4, 1::2], alpha=i + 2)
        np.testing.assert_allclose(y.numpy(), x[i + 1:i + 4, 1::2] * np.float32(i + 2), rtol=1e-6)
        if i == 0:
            plans = len(K._EW_PLANS)
        assert len(K._EW_PLANS) == plans


def test_a_limit_lowered_before_the_device_is_made_stays_lowered():
    """``RT.max_binding`` set before the first device use was overwritten by the adapter's limit when the device
    was made, so the chunked paths it was lowered for never ran; it now stays, as a limit lowered after does."""
    import os
    import subprocess
    import sys

    code = (
        "import numpy as np, shapetorch as st\n"
        "from shapetorch.backends.webgpu.runtime import RT\n"
        "assert RT.device is None\n"
        "RT.max_binding = 4096\n"
        "a = (np.arange(15000) % 7).astype(np.float32).reshape(300, 50)\n"
        "x = st.tensor(a, device='webgpu')\n"
        "assert RT.max_binding == 4096, RT.max_binding\n"
        "assert x._data.st.buf.size > RT.max_binding\n"
        "assert np.array_equal((x * 2).sum(0).numpy(), (a * 2).sum(0))  # a kernel over the chunks\n"
        "assert RT.max_groups > 4096  # an untouched limit is the device's\n"
        "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], check=False, env=dict(os.environ), capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-2000:]


def test_a_reshape_names_itself_only_where_it_copies(monkeypatch: pytest.MonkeyPatch):
    """reshape skips the op-naming wrapper (a view records nothing); the copy of a layout it cannot view is recorded
    with the runtime's op set to "reshape" (what its limit and device errors name), and gives torch's values."""
    from shapetorch.backends.webgpu.runtime import RT

    ops: list[str] = []
    real = RT.dispatch

    def named(*args: Any, **kwargs: Any) -> Any:
        ops.append(RT.op)
        return real(*args, **kwargs)

    a = data((4, 6), seed=5)
    x = st.tensor(a, device=DEV)
    st.synchronize()
    monkeypatch.setattr(RT, "dispatch", named)
    v = x.reshape(6, 4)  # a view: nothing recorded
    assert ops == []
    c = x.t().reshape(-1)  # a copy
    assert ops == ["reshape"] and RT.op == "webgpu"
    np.testing.assert_array_equal(v.numpy(), a.reshape(6, 4))
    np.testing.assert_array_equal(c.numpy(), torch.from_numpy(a).t().reshape(-1).numpy())
