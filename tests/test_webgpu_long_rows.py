"""Scans and sorts of rows past lavapipe's loop bound (it miscomputes a shader loop past 65,535 iterations): the
blocked scans (``backends/webgpu/scans.py``: cumsum and the like, and cummax/cummin's indices with a (value,
index) carry) and the merge sort (``merge_sort.py``) keep every loop short, so rows of 70,000 elements match torch
on the CPU. Smaller blocks and tiles (monkeypatched) run the multi-pass paths
at small sizes too, and with a lowered binding limit, in chunks.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import shapetorch as st
from test_webgpu import DEV, data, run, webgpu  # noqa: F401  (the module fixture skips or fails without WebGPU)


@pytest.fixture
def small_blocks(monkeypatch):
    """Scan blocks of 8 and sort tiles of 4: a row of 50 takes 7 blocks (scanned totals carried in) or 4 merges."""
    from shapetorch.backends.webgpu import merge_sort, scans

    monkeypatch.setattr(scans, "BLOCK", 8)
    monkeypatch.setattr(merge_sort, "TILE", 4)


@pytest.fixture
def small_binding(monkeypatch):
    """A 4 KiB binding limit: a (300, 50) float32 tensor (60 kB) is split into 15 or more chunks."""
    from shapetorch.backends.webgpu.runtime import RT

    st.synchronize()
    monkeypatch.setattr(RT, "max_binding", 4096)


SCANS = [
    lambda lib, a: a.cumsum(1),
    lambda lib, a: a.cumsum(0),
    lambda lib, a: (a * 0.01 + 1).cumprod(1),
    lambda lib, a: a.logcumsumexp(1),
    lambda lib, a: a.t()[::2].cumsum(0),  # a strided view scanned
    lambda lib, a: (a * 10).to(lib.int32).cumsum(1),
    lambda lib, a: a.half().cumsum(1),  # float16 in float32 across blocks, rounded once
]
NAN = float("nan")
EXTREMES = [  # ties and NaNs on purpose: which index wins (the last equal one; a NaN, then the last NaN) is torch's
    lambda lib, a: a.round().cummax(1)[1],
    lambda lib, a: a.round().cummin(0)[1],
    lambda lib, a: lib.where(a > 1.5, NAN, a.round()).cummax(1)[1],
    lambda lib, a: lib.where(a < -1.5, NAN, a.round()).cummin(1),
    lambda lib, a: lib.where(a.abs() > 1.5, NAN, a.round()).t()[::2].cummax(0)[1],  # a strided view scanned
    lambda lib, a: (a * 3).to(lib.int32).cummin(1)[1],
    lambda lib, a: (a * 2).to(lib.int64).cummax(1),
    lambda lib, a: (a > 0).cummax(1)[1],
    lambda lib, a: lib.where(a > 1.5, NAN, a.round()).half().cummin(1)[1],
]
SORTS = [
    lambda lib, a: a.argsort(1),
    lambda lib, a: a.argsort(0, descending=True),
    lambda lib, a: a.sort(1)[0],
    lambda lib, a: a.round().argsort(dim=1, stable=True),  # ties keep their order
    lambda lib, a: a.round().argsort(dim=1, descending=True, stable=True),
    lambda lib, a: lib.where(a > 1, a.new_tensor(float("nan")), a).argsort(dim=1, stable=True),  # NaN the largest
    lambda lib, a: (a * 3).to(lib.int32).argsort(dim=1, stable=True),
    lambda lib, a: a.half().argsort(dim=1, stable=True),
    lambda lib, a: a.topk(5, 1)[0],
    lambda lib, a: a.median(1)[0],
]


@pytest.mark.parametrize("fn", SCANS + EXTREMES + SORTS)
def test_multi_pass_paths(small_blocks, fn):
    run(fn, data((30, 50)), grad=False, tol=(1e-4, 1e-3))


@pytest.mark.parametrize("fn", SCANS + EXTREMES + SORTS)
def test_multi_pass_paths_in_chunks(small_blocks, small_binding, fn):
    run(fn, data((300, 50)), grad=False, tol=(1e-4, 1e-3))


def _ties(shape: tuple[int, ...]) -> np.ndarray:
    """Values in {-2, ..., 2} (many ties), a few NaNs in the first half of the last dim only (so that the
    running extremes change after them in later blocks, and stop changing once a NaN is reached)."""
    a = np.round(data(shape))
    a[..., : shape[-1] // 2][data(a[..., : shape[-1] // 2].shape, seed=3) > 2.5] = np.nan
    return a


@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_gradients_of_cumulative_extremes_in_blocks_and_chunks(small_blocks, small_binding, op):
    """The gradient goes to the index that won, so a tie broken the other way would show."""
    run(lambda lib, a: getattr(a, op)(1)[0], _ties((300, 50)))
    run(lambda lib, a: getattr(a, op)(0)[0], _ties((50, 60)))


@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_cumulative_extremes_with_block_totals_blocked_again(small_blocks, op):
    """Rows of 700 in blocks of 8: 88 block totals, blocked again into 11, and again into 2."""
    run(lambda lib, a: getattr(a, op)(1)[0], _ties((3, 700)))
    run(lambda lib, a: getattr(a, op)(1)[1], _ties((3, 700)), grad=False)


def test_one_row_larger_than_a_binding_is_scanned_in_chunks(small_binding):
    run(lambda lib, a: a.cumsum(0), data((15_000,)), grad=False, tol=(1e-4, 1e-3))


@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_one_row_larger_than_a_binding_cumulative_extremes(small_binding, op):
    """15,000 elements in blocks of a few hundred: the blocks in chunks, their totals scanned and gathered."""
    run(lambda lib, a: getattr(a, op)(0), _ties((15_000,)), grad=False)


def test_a_sorted_row_larger_than_a_binding_is_refused_naming_the_op(small_binding):
    x = st.tensor(data((15_000,)), device=DEV)
    with pytest.raises(st.DeviceError) as e:
        x.argsort()
    assert e.value.code == "device_error_limit" and str(e.value).startswith("argsort:")
    assert "max-storage-buffer-binding-size" in str(e.value)


def test_scans_past_the_loop_bound():
    """Rows of 70,000 (one thread used to loop over the whole row): against torch in float64."""
    a = data((2, 70_000)) * 0.01
    for op in ("cumsum", "logcumsumexp"):
        got = getattr(st.tensor(a, device=DEV), op)(1).cpu().numpy()
        want = getattr(torch.tensor(a, dtype=torch.float64), op)(1).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    i = np.random.default_rng(0).integers(-3, 4, size=(70_000,))
    np.testing.assert_array_equal(st.tensor(i, device=DEV).cumsum(0).cpu().numpy(), i.cumsum())


@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_cumulative_extremes_past_the_loop_bound(op):
    """Rows of 70,000 with ties and NaNs (one thread used to scan a row, refused past 65,535): values, indices and
    the gradient as torch's."""
    run(lambda lib, a: getattr(a, op)(1), _ties((2, 70_000)), grad=False)
    run(lambda lib, a: getattr(a, op)(1)[0], _ties((2, 70_000)))
    i = np.random.default_rng(2).integers(-3, 4, size=(70_000,))
    run(lambda lib, a: getattr(a, op)(0), i, grad=False)


def test_sorts_past_the_loop_bound():
    """A row of 70,000 with many ties and NaNs: the stable order, both directions, as torch's."""
    rng = np.random.default_rng(1)
    a = rng.integers(0, 1000, size=(2, 70_000)).astype(np.float32)
    a[0, ::97] = np.nan
    for desc in (False, True):
        got = st.tensor(a, device=DEV).argsort(1, descending=desc, stable=True).cpu().numpy()
        want = torch.tensor(a).argsort(dim=1, descending=desc, stable=True).numpy()
        np.testing.assert_array_equal(got, want)


@pytest.fixture
def small_chunks(monkeypatch):
    """Reductions in chunks of 16: a row of 200 takes 13 chunks, argmax/argmin's best of each picked again."""
    from shapetorch.backends.webgpu import kernels

    monkeypatch.setattr(kernels, "CHUNK", 16)


ARGS = [  # ties and NaNs on purpose: the first best index (a NaN the best, then the first NaN) is torch's
    lambda lib, a: a.round().argmax(1),
    lambda lib, a: a.round().argmin(0),
    lambda lib, a: a.round().argmax(),
    lambda lib, a: lib.where(a > 1.5, NAN, a.round()).argmax(1),
    lambda lib, a: lib.where(a < -1.5, NAN, a.round()).argmin(),
    lambda lib, a: lib.where(a > 1.5, NAN, a.round()).max(1),  # values and indices (a composite of argmax)
    lambda lib, a: a.round().t()[::2].min(0),  # a strided view
    lambda lib, a: (a * 3).to(lib.int32).argmin(1),
    lambda lib, a: (a * 2).to(lib.int64).argmax(0),
    lambda lib, a: lib.where(a > 1.5, NAN, a.round()).half().argmax(1),
]


@pytest.mark.parametrize("fn", ARGS)
def test_argmax_in_chunks_of_a_row(small_chunks, fn):
    run(fn, data((30, 200)), grad=False)


@pytest.mark.parametrize("fn", ARGS)
def test_argmax_in_chunks_of_a_row_larger_than_a_binding(small_binding, fn):
    """(300, 50) under a 4 KiB binding: reduced along dim 1 or over all, a row (or a column) spans more than a
    binding, so it is split along the reduced dims too, each piece's indices counted from its start."""
    run(fn, data((300, 50)), grad=False)


def test_gradient_of_max_over_a_chunked_row(small_chunks):
    run(lambda lib, a: a.round().max(1)[0], data((30, 200)))


def test_argmax_past_the_loop_bound():
    """A row of 5,000,000 (64 lanes of one workgroup looped 78,125 times each, past lavapipe's bound, and argmax
    said 0): the chunks' bests, then the best of those; the maximum twice, the first one wins."""
    n = 5_000_000
    a = np.zeros(n, dtype=np.float32)
    a[[n - 10, n - 5]] = 5
    a[[n - 7, n - 3]] = -5
    x = st.tensor(a, device=DEV)
    assert (x.argmax().item(), x.argmin().item()) == (n - 10, n - 7)
    a[n - 8] = NAN
    assert st.tensor(a, device=DEV).max(0).indices.item() == n - 8


@pytest.mark.parametrize("fn", [
    lambda lib, a: lib.where(a > 1.5, NAN, a).amax(1),
    lambda lib, a: lib.where(a < -1.5, NAN, a).amin(0),
    lambda lib, a: lib.where(a > 2.5, NAN, a).max(),
])
def test_amax_and_amin_propagate_nan(small_chunks, fn):
    """NaN is tested by its bits in the reduction's combine (lavapipe folded ``x != x`` to false, and the maximum
    of a row with a NaN was its largest number)."""
    run(fn, data((30, 200)), grad=False)


# -- attention over blocks of keys ---------------------------------------------------------------------------
@pytest.fixture
def key_blocks(monkeypatch):
    """Blocks of one workgroup's width (64 rows of the other side) for every attention pass, whatever the head."""
    from shapetorch.backends.webgpu import attention

    monkeypatch.setattr(attention, "block", lambda kind, D, Dv, nbd: attention.AWG)


ATTENTION = [  # (q shape, k length, v width, keyword arguments): 130 keys in 3 blocks, 70 query rows in 2
    ((2, 70, 8), 130, 5, {}),
    ((2, 70, 8), 130, 5, {"is_causal": True}),
    ((1, 90, 4), 200, 300, {}),  # value rows wider than one pass of the workgroup
    ((2, 70, 8), 130, 5, {"attn_mask": "bool"}),
    ((2, 70, 8), 130, 5, {"attn_mask": "float"}),
]


@pytest.mark.parametrize("qs,S,Dv,kw", ATTENTION)
def test_attention_over_key_blocks(key_blocks, qs, S, Dv, kw):
    """The forward by key blocks (each row's running maximum and sum carried between them, its partial output
    rescaled), the gradient's statistics and dq by key blocks and dk, dv by query-row blocks, against torch; the
    forward takes one dispatch per block. Rows fully masked by the bool mask give 0, as torch's."""
    *batch, L, D = qs
    mask = kw.get("attn_mask")
    if mask == "bool":
        m = np.random.default_rng(5).random((L, S)) > 0.2
        m[3] = False  # every key masked in one row (all blocks), and in the first block only in another
        m[4, :64] = False
    elif mask == "float":
        m = data((L, S), seed=5)
        m[5, :128] = -np.inf  # the first two blocks of a row give nothing: its maximum comes from the third
    kw = dict(kw)

    def fn(lib, q, k, v):
        if mask is not None:
            kw["attn_mask"] = lib.tensor(m, device=q.device)
        return lib.nn.functional.scaled_dot_product_attention(q, k, v, **kw)

    before = st.memory_stats()["num_dispatches"]
    run(fn, data(qs), data((*batch, S, D), seed=1), data((*batch, S, Dv), seed=2), tol=(1e-4, 1e-5))
    assert st.memory_stats()["num_dispatches"] > before + 3


def test_attention_past_the_loop_bound():
    """One query row against 16,384 keys of 64 dims (one invocation's loops over every key ran ~116,000
    iterations, past lavapipe's bound, and the output was off by 1e-2; 8,192 keys matched): the keys in blocks
    whose loops stay under it, forward and gradient against torch."""
    q, k, v = data((1, 1, 1, 64)), data((1, 1, 16384, 64), seed=1), data((1, 1, 16384, 64), seed=2)
    run(lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(q, k, v), q, k, v, tol=(1e-4, 1e-5))


def test_attention_with_heads_too_wide_for_the_loop_bound_is_refused(monkeypatch):
    from shapetorch.backends.webgpu import attention

    monkeypatch.setattr(attention, "LOOP_BUDGET", 100)
    x = st.tensor(data((1, 4, 8)), device=DEV)
    with pytest.raises(st.DeviceError) as e:
        st.nn.functional.scaled_dot_product_attention(x, x, x)
    assert e.value.code == "device_error_limit" and str(e.value).startswith("scaled_dot_product_attention:")

