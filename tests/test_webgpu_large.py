"""Tensors larger than one binding (the adapter's max-storage-buffer-binding-size, 128 MiB on lavapipe) run in
chunks: elementwise ops, casts and copies, reductions, matmul by rows, and the row kernels (softmax,
log_softmax, layer_norm), gather and scatter (the gathered axis bound whole in every chunk), and the range checks
of their indices; scans and sorts are in ``test_webgpu_long_rows.py``. Most cases lower the binding limit with monkeypatch so that the chunked paths run at
small sizes against torch; one case makes a real 136 MB tensor. Kernels that do not run in chunks refuse with a
coded error naming the op, and a tensor larger than the adapter's max-buffer-size is refused when made.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import shapetorch as st
from test_webgpu import DEV, data, run, webgpu  # noqa: F401  (the module fixture skips or fails without WebGPU)


@pytest.fixture
def small_binding(monkeypatch):
    """A 4 KiB binding limit: a (300, 50) float32 tensor (60 kB) is split into 15 or more chunks."""
    from shapetorch.backends.webgpu.runtime import RT

    st.synchronize()
    monkeypatch.setattr(RT, "max_binding", 4096)
    return RT


@pytest.mark.parametrize("fn", [
    lambda lib, a, b: a + b,  # b broadcast: bound whole in every chunk
    lambda lib, a, b: (a * 2).exp() - b[:, None].sum(),
    lambda lib, a, b: a.t() * b[:, None],  # a transposed: the chunks of the output read strided windows
    lambda lib, a, b: a.flip(0)[1::2] / 3,
    lambda lib, a, b: lib.where(a > 0, a, b),
    lambda lib, a, b: (a * 100).to(lib.int32) % 7,
    lambda lib, a, b: a.t().contiguous(),
])
def test_elementwise_in_chunks(small_binding, fn):
    run(fn, data((300, 50)), data((50,), seed=1), grad=False)


@pytest.mark.parametrize("fn", [
    lambda lib, a: a.sum(),
    lambda lib, a: a.sum(0),
    lambda lib, a: a.sum(1, keepdim=True),
    lambda lib, a: a.t().sum(0),
    lambda lib, a: a.amax(0),
    lambda lib, a: a.amin(),
    lambda lib, a: (a > 0).all(1),
    lambda lib, a: (a > 0).any(),
    lambda lib, a: a.mean(0),
    lambda lib, a: (a.to(lib.int64) * 3).sum(),  # int64 with its float32 shadow, both chunked
    lambda lib, a: a.argmax(1),  # split along the kept dim
    lambda lib, a: a.t().argmin(0),
])
def test_reductions_in_chunks(small_binding, fn):
    run(fn, data((300, 50)), grad=False, tol=(1e-4, 1e-4))


@pytest.mark.parametrize("fn", [
    lambda lib, a, w: a @ w,
    lambda lib, a, w: a[:4999] @ w,  # rows not a multiple of the aligned chunk
    lambda lib, a, w: a @ w[:, :1],
    lambda lib, a, w: lib.nn.functional.linear(a, w.t(), w[0]),  # bias in the epilogue of every chunk
])
def test_matmul_by_rows(small_binding, fn):
    run(fn, data((5000, 2)), data((2, 2), seed=1), grad=False)


@pytest.mark.parametrize("fn", [
    lambda lib, a, w: a.softmax(1),
    lambda lib, a, w: a.log_softmax(0),
    lambda lib, a, w: lib.nn.functional.layer_norm(a, (50,)),
    lambda lib, a, w: lib.nn.functional.layer_norm(a, (50,), w, w * 2),  # w and b bound whole in every chunk
])
def test_row_kernels_in_chunks(small_binding, fn):
    run(fn, data((300, 50)), data((50,), seed=1), grad=False)


def test_gradient_of_a_chunked_chain(small_binding):
    run(lambda lib, a: (a.exp() * a).sum(), data((300, 50)))
    run(lambda lib, a, g: (a.softmax(1) * g).sum(), data((300, 50)), data((300, 50), seed=1))
    run(lambda lib, a, g: (a.log_softmax(1) * g).sum(), data((300, 50)), data((300, 50), seed=1))


@pytest.mark.parametrize("fn", [
    lambda lib, a, i: a.gather(1, i),
    lambda lib, a, i: a.gather(0, i[:40].remainder(300)),  # chunks split the gathered axis' dim: kept whole
    lambda lib, a, i: a.t().gather(1, i.t()[:, :7].remainder(300)),  # a transposed source
    lambda lib, a, i: lib.take_along_dim(a, i, dim=1),
    lambda lib, a, i: a.scatter(1, i[:, :5], a[:, :5] * 2),
    lambda lib, a, i: a.scatter(0, i[:40].remainder(300), -1.0),
    lambda lib, a, i: a.scatter_add(1, i, a),
    lambda lib, a, i: a.topk(3, 1)[0],
])
def test_gather_and_scatter_in_chunks(small_binding, fn):
    a = data((300, 50))
    i = np.random.default_rng(2).integers(0, 50, size=(300, 50))
    run(fn, a, i, grad=False)


@pytest.mark.parametrize("fn", [
    lambda lib, a, i: a[i[:, 0]],
    lambda lib, a, i: a[:, i[:7, 1]],
    lambda lib, a, i: a[i[:, 0], i[:, 1]],
    lambda lib, a, i: a.index_select(1, i[:, 2]),
    lambda lib, a, i: lib.nn.functional.embedding(i[:, :3], a),
    lambda lib, a, i: a.index_put((i[:, 0],), a[:, 0:1] * 0 + 7),
    lambda lib, a, i: a.index_put((i[:, 0],), a, accumulate=True),
    lambda lib, a, i: a.index_add(1, i[:50, 2], a),
    lambda lib, a, i: a.index_copy(0, i[:, 0].unique(), a[: i[:, 0].unique().shape[0]]),
    lambda lib, a, i: a[a > 2],  # the coordinates (index tensors, bound whole) fit; the flags and sums do not
    lambda lib, a, i: a.masked_select(a < -2),
])
def test_indexing_in_chunks(small_binding, fn):
    """The offsets (and the result) by runs of elements, the source or target over windows of its span."""
    a = data((300, 50))
    i = np.random.default_rng(3).integers(0, 50, size=(300, 3))
    run(fn, a, i, grad=False)


def test_gradients_of_indexing_in_chunks(small_binding):
    i = np.random.default_rng(3).integers(0, 50, size=(300, 3))
    run(lambda lib, a, i: lib.nn.functional.embedding(i[:, :3], a).sum(), data((300, 50)), i)
    run(lambda lib, a, i: a[i[:, 0], i[:, 1]].sum(), data((300, 50)), i)


@pytest.mark.parametrize("fn", [
    lambda lib, a: a[0] * 2,  # one row: the other chunks are all zeros
    lambda lib, a: a[7:290:3, 5:48:4],
    lambda lib, a: a[-3, None, ..., 10:],
    lambda lib, a: a.reshape(10, 30, 50)[2:9, 4],  # an int on an inner dim, a chunk of one index of dim 0 at a time
    lambda lib, a: a.reshape(2, 150, 50)[1, 140],  # every chunk but one misses the rows
    lambda lib, a: lib.nn.functional.pad(a, (1, 2, 3, 4), value=2.5),  # the same kernel, a fill of 2.5
    lambda lib, a: lib.nn.functional.pad(a.T, (0, 0, 10, 20)),  # a strided input larger than a binding
])
def test_basic_index_gradients_and_pads_in_chunks(small_binding, fn):
    """The gradient of a basic index (zeros with the gradient on the index's window) and a constant pad, by chunks
    of the 60 kB result, each binding a window of it and of the part of the source its window reaches."""
    run(fn, data((300, 50)))


def test_an_out_of_range_index_in_a_later_chunk_is_found(small_binding):
    i = np.zeros((300, 50), dtype=np.int64)
    i[-1, -1] = 50
    with pytest.raises(IndexError):
        st.tensor(data((300, 50)), device=DEV).gather(1, st.tensor(i, device=DEV)).cpu()


@pytest.mark.parametrize("fn,op", [
    # one row of a sample larger than a binding (convolution runs by runs of samples, a sample by its rows)
    (lambda x: st.nn.functional.conv2d(x.reshape(1, 1, 5, -1), x[:4, None, None, :3]), "convolution")])
def test_a_kernel_without_chunks_is_refused_naming_the_op(small_binding, fn, op):
    x = st.tensor(data((300, 50)), device=DEV)
    with pytest.raises(st.DeviceError) as e:
        fn(x)
    assert e.value.code == "device_error_limit" and str(e.value).startswith(f"{op}:")
    assert "max-storage-buffer-binding-size" in str(e.value)
    assert "(4 KiB, its max-storage-buffer-binding-size)" in str(e.value)  # not "0 MiB" under a small limit


def test_sizes_in_messages_take_the_unit_that_shows_them():
    from shapetorch.backends.webgpu.runtime import size_text

    assert [size_text(n) for n in (0, 1023, 1024, 60_000, 1 << 20, 1_200_000, 128 << 20, 5 << 30)] == [
        "0 bytes", "1023 bytes", "1 KiB", "58.6 KiB", "1 MiB", "1.1 MiB", "128 MiB", "5 GiB"]


def test_a_tensor_over_the_largest_buffer_is_refused_when_made(monkeypatch):
    from shapetorch.backends.webgpu.runtime import RT

    st.synchronize()
    x = st.ones(1000, device=DEV)
    monkeypatch.setattr(RT, "max_buffer", 1 << 20)
    with pytest.raises(st.DeviceError) as e:
        x.expand(300, 1000).contiguous()  # 1.2 MB
    assert e.value.code == "device_error_limit" and str(e.value).startswith("clone:")
    assert "max-buffer-size" in str(e.value) and "1.1 MiB" in str(e.value)
    monkeypatch.undo()
    assert st.zeros(3, device=DEV).sum().item() == 0


def test_a_real_tensor_over_128_mib():
    """34M float32 elements (136 MB, over lavapipe's 128 MiB binding): made, computed, reduced and read back in
    chunks. Values depend on the position (i % 1024), so a chunk bound at the wrong offset shows."""
    from shapetorch.backends.webgpu.runtime import RT

    n = 34_000_000
    i = st.arange(n, dtype=st.int32, device=DEV)
    x = (i % 1024).float() * 0.5 + 1
    assert x._data.st.buf.size > RT.max_binding  # the split path, not a tensor that happened to fit
    want = (np.arange(n, dtype=np.int64) % 1024).astype(np.float32) * 0.5 + 1
    got = x.cpu().numpy()
    np.testing.assert_array_equal(got, want)
    del got
    np.testing.assert_allclose(x.sum().item(), want.astype(np.float64).sum(), rtol=1e-5)
    np.testing.assert_allclose((x * x)[-3:].numpy(), want[-3:] ** 2)
    tail = torch.tensor(want[-1000:])
    np.testing.assert_allclose(x[-1000:].exp().numpy(), tail.exp().numpy(), rtol=1e-5)


def test_arange_in_chunks(small_binding):
    """Integer arange is a kernel of the thread index: each chunk starts from its own first value."""
    got = st.arange(3, 60_003, 3, device=DEV, dtype=st.int32).cpu().numpy()
    np.testing.assert_array_equal(got, torch.arange(3, 60_003, 3, dtype=torch.int32).numpy())


def test_device_index_offsets_randperm_and_poisson_fold_their_grids(monkeypatch):
    """Under a limit of 4 workgroups per grid dimension (folded into up to 4 x 4), the kernels added for device-side indexing and draws
    still cover every element (their threads are numbered across the folded grid)."""
    from shapetorch.backends.webgpu.runtime import RT

    st.synchronize()
    monkeypatch.setattr(RT, "max_groups", 4)
    a = data((40, 50))
    i = np.arange(39, -1, -1)
    got = st.tensor(a, device=DEV)[st.tensor(i, device=DEV)]  # 2000 offsets: 8 workgroups of 256
    np.testing.assert_array_equal(got.cpu().numpy(), a[i])
    np.testing.assert_array_equal(np.sort(st.randperm(3000, device=DEV).cpu().numpy()), np.arange(3000))
    counts = st.poisson(st.full((3000,), 4.0, device=DEV)).cpu().numpy()
    assert counts.min() >= 0 and abs(counts.mean() - 4) < 5 * np.sqrt(4 / 3000)
    assert np.all(counts[-256:] == np.round(counts[-256:])) and counts[-256:].sum() > 0  # the last workgroup ran


@pytest.mark.parametrize("fn", [
    lambda lib, a, b: a @ b[0],  # a right operand shared by the batch
    lambda lib, a, b: a @ b,
    lambda lib, a, b: a[None].expand(2, 6, 100, 3) @ b,  # two batch dims, the left one broadcast
    lambda lib, a, b: a[:1] @ b[:1],  # one batch entry over the limit: its rows
])
def test_batched_matmul_in_chunks(small_binding, fn):
    run(fn, data((6, 100, 3)), data((6, 3, 2), seed=1), grad=False)


def test_a_real_scan_and_gather_over_128_mib():
    """A cumsum of 34M float32 elements (136 MB: blocks in chunks, the block totals scanned, carried in over
    windows), a gather and an index from its far end and an assignment there (the source or target bound over
    two windows, one dispatch each). The values
    alternate +1, -1, so the sums are exact (0 and 1) and a block carried from the wrong place shows."""
    from shapetorch.backends.webgpu.runtime import RT

    n = 34_000_000
    x = (st.arange(n, dtype=st.int32, device=DEV) % 2).float() * -2 + 1
    c = x.cumsum(0)
    assert c._data.st.buf.size > RT.max_binding
    got = c.cpu().numpy()
    assert got[0::2].min() == 1 and got[0::2].max() == 1 and not got[1::2].any()
    del got
    idx = st.tensor([0, 1, n - 1, n - 2, n // 2 + 1, 5], device=DEV)
    np.testing.assert_array_equal(c.gather(0, idx).cpu().numpy(), [1, 0, 0, 1, 0, 0])
    np.testing.assert_array_equal(c[idx].cpu().numpy(), [1, 0, 0, 1, 0, 0])  # offsets into either window
    c[idx[2:4]] = st.tensor([5.0, 6.0], device=DEV)  # written through the window that holds the far end
    np.testing.assert_array_equal(c[-3:].cpu().numpy(), [0, 6, 5])


CONVS = [  # (function, input shape, weight shape): each under a 4 KiB binding
    # output samples of 1 KiB: runs of samples written in place
    (lambda F, x, w: F.conv2d(x, w, padding=1), (20, 3, 8, 8), (4, 3, 3, 3)),
    # output samples of 300 bytes (8 of them to an aligned start on lavapipe, 64 where the alignment is 256; two
    # input samples fill a binding): runs through temporaries
    (lambda F, x, w: F.conv2d(x, w, stride=(2, 1), padding=(1, 0), dilation=(1, 2)), (20, 4, 9, 9), (3, 4, 3, 3)),
    (lambda F, x, w: F.conv2d(x, w, stride=2, groups=2), (20, 4, 9, 9), (4, 2, 3, 3)),
    (lambda F, x, w: F.conv1d(x.transpose(1, 2), w, padding=2, groups=2), (30, 40, 6), (6, 3, 3)),  # strided input
    (lambda F, x, w: F.conv_transpose2d(x, w, stride=2, padding=1), (20, 4, 5, 5), (4, 3, 3, 3)),
]


@pytest.mark.parametrize("fn,xs,ws", CONVS)
def test_convolution_by_runs_of_samples(small_binding, fn, xs, ws):
    """Forward, input gradient and weight gradient (the samples' runs summed) against torch, with inputs and
    outputs of 15 to 40 kB: each run of samples bound as windows."""
    run(lambda lib, x, w: fn(lib.nn.functional, x, w), data(xs), data(ws, seed=1), tol=(1e-4, 1e-4))


ONE_SAMPLE_CONVS = [  # (function, input shape, weight shape): one input or output sample over a 4 KiB binding
    (lambda F, x, w: F.conv2d(x, w, padding=1), (2, 3, 30, 30), (4, 3, 3, 3)),  # samples of 10.8 and 14.4 kB
    (lambda F, x, w: F.conv2d(x, w, stride=2, padding=(2, 1), dilation=2), (1, 2, 41, 17), (3, 2, 3, 3)),
    (lambda F, x, w: F.conv2d(x, w, padding=1, groups=2), (1, 4, 20, 20), (6, 2, 3, 3)),
    (lambda F, x, w: F.conv1d(x, w, stride=3, padding=4), (1, 4, 400), (2, 4, 5)),  # padding past stride
    (lambda F, x, w: F.conv1d(x.transpose(1, 2), w, padding=2), (1, 400, 3), (2, 3, 3)),  # a strided input
    (lambda F, x, w: F.conv3d(x, w, padding=1), (1, 2, 12, 10, 10), (2, 2, 3, 3, 3)),
    (lambda F, x, w: F.conv1d(x, w, stride=4, padding=1), (1, 3, 500), (2, 3, 2)),  # stride past the kernel
    (lambda F, x, w: F.conv_transpose2d(x, w, stride=2, padding=1), (1, 4, 12, 12), (4, 3, 3, 3)),
]


@pytest.mark.parametrize("fn,xs,ws", ONE_SAMPLE_CONVS)
def test_convolution_of_a_sample_over_a_binding(small_binding, fn, xs, ws):
    """A sample larger than a binding: the forward and the weight gradient in pieces of the output's first spatial
    dim, each from a copy of the input rows its windows read (the padding shifted onto the copy), and the input
    gradient in pieces of the input's rows, each from a copy of the output gradient rows whose windows reach them,
    against torch."""
    run(lambda lib, x, w: fn(lib.nn.functional, x, w), data(xs), data(ws, seed=1), tol=(1e-4, 1e-4))


WIDE_ROW_CONVS = [  # (function, input shape, weight shape): one row (all channels) over a 4 KiB binding
    # an output row of 60 channels (4.8 kB): blocks of output channels
    (lambda F, x, w: F.conv2d(x, w, padding=1), (1, 4, 3, 20), (60, 4, 3, 3)),
    # the 3 input rows of one output row, 40 channels (14.4 kB): blocks of input channels, their results added
    (lambda F, x, w: F.conv2d(x, w, padding=1), (1, 40, 4, 30), (2, 40, 3, 3)),
    # both, per group, with a strided input and two samples
    (lambda F, x, w: F.conv2d(x.transpose(2, 3), w, groups=2, padding=(1, 0), dilation=(2, 1)), (2, 8, 90, 3),
     (40, 4, 3, 3)),
    (lambda F, x, w: F.conv1d(x, w, stride=2, padding=1), (1, 500, 20), (3, 500, 3)),
    # the transpose: its forward is the input gradient's kernel (80 channels of gradient rows per input row)
    (lambda F, x, w: F.conv_transpose2d(x, w, stride=2, padding=1), (1, 80, 4, 6), (80, 3, 3, 3)),
]


@pytest.mark.parametrize("fn,xs,ws", WIDE_ROW_CONVS)
def test_convolution_of_a_row_over_a_binding(small_binding, fn, xs, ws):
    """One output row (all channels), or the input rows one output row reads, larger than a binding: the
    convolution, its input gradient and its weight gradient by blocks of channels (per group), each block in
    pieces of rows, against torch."""
    run(lambda lib, x, w: fn(lib.nn.functional, x, w), data(xs), data(ws, seed=1), tol=(1e-4, 1e-4))


ATTENTION = [  # (function, q/k/v shape): q, k, v of 1,920 floats or more under a 4 KiB binding (1,024)
    (lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v), (6, 4, 10, 8)),
    (lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), (6, 4, 10, 8)),
    # the usual (batch, length, heads, dim) projections seen as (batch, heads, length, dim): strided pieces
    (lambda F, q, k, v: F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                       attn_mask=q[0, :, :1, :1].reshape(1, 10) > 0), (6, 10, 4, 8)),
    (lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=q.detach()[0, 0] @ k.detach()[0, 0].T), (3, 3, 12, 16)),
]


@pytest.mark.parametrize("fn,shape", ATTENTION)
def test_attention_by_pieces_of_the_batch(small_binding, fn, shape):
    """The fused attention and its gradient (the three gradients packed per piece, then copied out) against torch."""
    run(lambda lib, q, k, v: fn(lib.nn.functional, q, k, v), data(shape), data(shape, seed=1), data(shape, seed=2),
        tol=(1e-4, 1e-4))


@pytest.mark.parametrize("kw", [{}, {"is_causal": True}, {"attn_mask": "bool"}])
def test_attention_by_pieces_of_the_query_rows(small_binding, kw):
    """One (batch, head) of 300 query rows over a binding: the forward and the gradient by pieces of query rows (the
    keys and values, under a binding, bound whole); each piece's dq copied out, its share of dk and dv added into
    a temporary copied out after the last piece. Causal: query rows of a 256-float stride, so that pieces of about
    15 rows meet the causal boundary of the 40 keys (each piece given its first row)."""
    mask = np.random.default_rng(5).random((300, 40)) > 0.3

    def fn(lib, a, k, v):
        m = lib.tensor(mask, device=a.device) if "attn_mask" in kw else None
        return lib.nn.functional.scaled_dot_product_attention(a[..., :8], k, v, attn_mask=m,
                                                              is_causal=kw.get("is_causal", False))

    run(fn, data((1, 1, 300, 64)), data((1, 1, 40, 8), seed=1), data((1, 1, 40, 8), seed=2), tol=(1e-4, 1e-5))


@pytest.mark.parametrize("kw", [{}, {"is_causal": True}, {"attn_mask": "bool"}, {"attn_mask": "float"}])
@pytest.mark.parametrize("L", [20, 300])
def test_attention_with_keys_and_values_over_a_binding(small_binding, kw, L):
    """One (batch, head) whose 300 keys and values of 8 floats (9.6 kB each) pass the 4 KiB binding: the forward in
    blocks of keys bound as windows (about 120 rows), each row's running maximum and sum carried between blocks; with
    300 query rows the query rows go in pieces too, so a causal block meets pieces that start at other rows. The
    gradient likewise by blocks of keys (about 60: a block's dk and dv share one binding): the statistics and dq
    carried across the blocks, each block's dk and dv added up over the pieces of query rows."""
    S = 300
    rng = np.random.default_rng(5)
    mask = rng.random((L, S)) > 0.3
    fmask = rng.normal(size=(L, S)).astype(np.float32)

    def fn(lib, q, k, v):
        m = {"bool": mask, "float": fmask}.get(kw.get("attn_mask", ""))
        return lib.nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=None if m is None else lib.tensor(m, device=q.device),
            is_causal=kw.get("is_causal", False))

    run(fn, data((1, 1, L, 8)), data((1, 1, S, 8), seed=1), data((1, 1, S, 8), seed=2), tol=(1e-4, 1e-5))


@pytest.mark.parametrize("kw", [{"attn_mask": "bool"}, {"attn_mask": "float"}, {"attn_mask": "row"}])
def test_attention_with_a_mask_row_over_a_binding(small_binding, kw):
    """3 query rows against 1,100 keys: one row of the mask (4.4 kB) passes the 4 KiB binding, so the query rows go
    one at a time, each row's mask in blocks of its columns with the keys' blocks (forward and gradient); "row": a
    (1, 1100) float mask broadcast over the rows (stride 0: the rows stay together)."""
    L, S = 3, 1100
    rng = np.random.default_rng(6)
    masks = {"bool": rng.random((L, S)) > 0.3, "float": rng.normal(size=(L, S)).astype(np.float32),
             "row": rng.normal(size=(1, S)).astype(np.float32)}

    def fn(lib, q, k, v):
        m = lib.tensor(masks[kw["attn_mask"]], device=q.device)
        return lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m)

    run(fn, data((1, 1, L, 8)), data((1, 1, S, 8), seed=1), data((1, 1, S, 8), seed=2), tol=(1e-4, 1e-5))


def test_attention_gradient_with_keys_over_a_binding_in_a_batch(small_binding):
    """A batch of 2 x 2 (batch, head) entries, each with 200 keys of 8 floats and values of 4 (9.6 kB of dk and dv
    an entry): the batch split to single entries, then each entry's gradient by blocks of keys."""
    run(lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(q, k, v[..., :4], is_causal=True),
        data((2, 2, 30, 8)), data((2, 2, 200, 8), seed=1), data((2, 2, 200, 8), seed=2), tol=(1e-4, 1e-5))


def _index(shape: tuple[int, ...], hi: int, seed: int = 4) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, hi, size=shape).astype(np.int64)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_in_pieces_of_dim_0(small_binding, reduce, include_self):
    """Along dim 1 of (300, 50) (60 kB): pieces of rows, each reduced into a temporary and copied into place; an
    index of fewer rows and columns leaves the rest of the input as it was."""
    i = st.tensor(_index((300, 50), 50), device=DEV)
    run(lambda lib, a, s: a.scatter_reduce(1, i if lib is st else torch.tensor(i.cpu().numpy()), s, reduce,
                                           include_self=include_self), data((300, 50)), data((300, 50), seed=1) * 0.5)
    j = _index((100, 10), 50)
    run(lambda lib, a, s: a.scatter_reduce(1, lib.tensor(j, device=a.device), s, reduce, include_self=include_self),
        data((300, 50)), data((100, 10), seed=1), grad=False)


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax"])
def test_scatter_reduce_along_dim_0_in_runs_of_the_index(small_binding, monkeypatch, reduce):
    """3,000 index rows (60 kB) into 20 rows: the index and src in runs of rows bound as windows, each run in runs of
    7 entries (the per-dispatch bound, lowered), the running results carried from one to the next."""
    from shapetorch.backends.webgpu import composed_kernels

    monkeypatch.setattr(composed_kernels, "SCATTER_CHUNK", 7)
    i = _index((3000, 5), 20)
    run(lambda lib, a, s: a.scatter_reduce(0, lib.tensor(i, device=a.device), s, reduce), data((20, 5)),
        data((3000, 5), seed=1), grad=False)
    j = _index((2000,), 10)
    run(lambda lib, a, s: a.index_reduce(0, lib.tensor(j, device=a.device), s, "prod"), data((10, 4)),
        data((2000, 4), seed=2) * 0.1 + 1, grad=False)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_into_a_dim_0_larger_than_a_binding(small_binding, monkeypatch, reduce, include_self):
    """An input of 600 rows (12 kB) along dim 0: the output in pieces of rows, each reduced from every run of the
    index (3,000 rows, shifted to the piece's first row; runs of 7 entries a dispatch) into a temporary copied into
    place; an index of fewer columns leaves the other columns as they were, rows no entry names keep the input."""
    from shapetorch.backends.webgpu import composed_kernels

    monkeypatch.setattr(composed_kernels, "SCATTER_CHUNK", 7)
    i, j = _index((3000, 5), 600), _index((40, 3), 600, seed=5)
    for idx, n in ((i, 3000), (j, 40)):
        run(lambda lib, a, s: a.scatter_reduce(0, lib.tensor(idx, device=a.device), s, reduce,
                                               include_self=include_self),
            data((600, 5)), data((n, idx.shape[1]), seed=1), grad=False, tol=(1e-4, 1e-4))
    k = _index((10,), 2000)
    run(lambda lib, a: a.scatter_reduce(0, lib.tensor(k, device=a.device), a[:10] * 3, reduce,
                                        include_self=include_self), data((2000,)), grad=False)


def test_convolution_attention_scatter_reduce_and_argmax_fold_their_grids(monkeypatch):
    """Under a limit of 4 workgroups per grid dimension (folded into 4 x 4, or 4 x 4 x 4 for the convolution's
    GEMM), these kernels still cover every output (their workgroups are numbered across the folded grid)."""
    from shapetorch.backends.webgpu import kernels
    from shapetorch.backends.webgpu.runtime import RT

    st.synchronize()
    monkeypatch.setattr(RT, "max_groups", 4)
    run(lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding=1), data((6, 3, 5, 5)), data((20, 3, 3, 3), seed=1),
        tol=(1e-4, 1e-4))  # 6 tiles
    run(lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(q, k, v), data((2, 2, 4, 4)),
        data((2, 2, 3, 4), seed=1), data((2, 2, 3, 4), seed=2), tol=(1e-4, 1e-4))  # 16 query rows, 12 key rows
    i = _index((40, 30), 30)
    run(lambda lib, a, s: a.scatter_reduce(1, lib.tensor(i, device=a.device), s, "amax"), data((40, 30)),
        data((40, 30), seed=1), grad=False)
    monkeypatch.setattr(kernels, "CHUNK", 16)
    run(lambda lib, a: a.argmax(1), data((3, 40)), grad=False)  # 9 chunks


def _spd(shape: tuple[int, ...], seed: int = 6) -> np.ndarray:
    a = np.random.default_rng(seed).normal(size=shape).astype(np.float32)
    return a @ np.swapaxes(a, -1, -2) / shape[-1] + np.eye(shape[-1], dtype=np.float32)


def _eigh_parts(w, V):
    return w, (V * w[..., None, :]) @ V.mT


def _svd_parts(U, S, Vh):
    return S, (U * S[..., None, :]) @ Vh


FACTORIZATIONS = {  # name: fn(lib, a, b), with outputs that do not depend on a choice of signs
    "cholesky": lambda lib, a, b: lib.linalg.cholesky(a),
    "cholesky_upper": lambda lib, a, b: lib.linalg.cholesky(a.mT, upper=True),
    "cholesky_ex": lambda lib, a, b: lib.linalg.cholesky_ex(a * b[..., :1, 1:2].sign()).info,  # some fail
    "lu": lambda lib, a, b: lib.linalg.lu(b),
    "lu_factor": lambda lib, a, b: lib.linalg.lu_factor(b),
    "lu_solve": lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(b), a),
    "slogdet": lambda lib, a, b: lib.linalg.slogdet(b),
    "qr": lambda lib, a, b: lib.linalg.qr(b),
    "qr_complete": lambda lib, a, b: lib.linalg.qr(b[..., :4], mode="complete"),
    "qr_r": lambda lib, a, b: lib.linalg.qr(b, mode="r")[1],
    "eigh": lambda lib, a, b: _eigh_parts(*lib.linalg.eigh(a)),
    "svd": lambda lib, a, b: _svd_parts(*lib.linalg.svd(b[..., :3, :], full_matrices=False)),
    "eig": lambda lib, a, b: lib.linalg.eigvals(a).abs().sort(-1).values,
    "ldl": lambda lib, a, b: lib.linalg.ldl_factor(a),
    "solve": lambda lib, a, b: lib.linalg.solve(a, b),
    "solve_ex": lambda lib, a, b: lib.linalg.solve_ex(a, b[..., :2, :], left=False),
    "inv": lambda lib, a, b: lib.linalg.inv(a),
    "det": lambda lib, a, b: lib.linalg.det(b),
    "lstsq": lambda lib, a, b: lib.linalg.lstsq(a, b).solution,
    "matrix_exp": lambda lib, a, b: lib.linalg.matrix_exp(b * 0.3),
    "cholesky_inverse": lambda lib, a, b: lib.cholesky_inverse(lib.linalg.cholesky(a)),
    "tril_triu": lambda lib, a, b: (b.tril(-1), b.mT.triu(2), (b > 0).tril(), b.triu(9)),
    "complex_solve": lambda lib, a, b: lib.linalg.solve(a * (1 + 1j), b * 1j),
    "complex_inv": lambda lib, a, b: lib.linalg.inv(b + 0.5j * a),
}


def test_complex_tril_and_triu_over_a_binding(small_binding):
    """complex64 (3, 20, 5, 5) (12 kB, over the 4 KiB binding): the elementwise select in chunks, a (re, im) pair
    an element."""
    z = (data((3, 20, 5, 5)) + 1j * data((3, 20, 5, 5), seed=1)).astype(np.complex64)
    run(lambda lib, a: (a.tril(-1), a.mT.triu(2), a.triu(9), a.tril(-9)), z)


@pytest.mark.parametrize("name", sorted(FACTORIZATIONS))
def test_factorizations_in_runs_of_the_batch(small_binding, name):
    """(3, 20) matrices of 5x5 (6 kB of float32, over the 4 KiB binding): every factorization and solver runs in
    runs of the batch that fit a binding, each run's outputs copied into the whole batch's, against torch (runs
    across the first batch dim, transposed inputs, outputs without a batch as qr's mode 'r' Q)."""
    a, b = _spd((3, 20, 5, 5)), data((3, 20, 5, 5), seed=3) + 3 * np.eye(5, dtype=np.float32)
    assert a.nbytes > small_binding.max_binding  # the runs, not one dispatch
    grad = name in ("cholesky", "solve", "inv")
    run(FACTORIZATIONS[name], a, b, grad=grad, tol=(2e-4, 2e-4))


@pytest.mark.parametrize("fn,op", [
    (st.linalg.cholesky, "linalg.cholesky"),
    (st.linalg.qr, "linalg.qr"),
    (st.linalg.svd, "linalg.svd"),
    (st.linalg.eigh, "linalg.eigh"),
    (st.linalg.eig, "linalg.eig"),
    (st.linalg.lu_factor, "linalg.lu"),
    (lambda x: st.linalg.inv(x[..., :30, :30]), "linalg.inv"),
    (lambda x: st.linalg.det(x[..., :30, :30]), "linalg.det"),
    (lambda x: st.linalg.solve(x[..., :30, :30], x[..., :30, :1]), "linalg.solve"),
])
def test_a_matrix_over_a_binding_is_refused_naming_the_op(small_binding, fn, op):
    """One 40x40 float32 matrix (6.4 kB; a 30x30 one, 3.6 kB, for the solvers of at most 32x32, under a 2 KiB
    limit) does not fit: the coded error names the public op, as eig's always did (not 'webgpu')."""
    x = st.tensor(_spd((1, 40, 40)), device=DEV)
    small_binding.max_binding = 2048
    with pytest.raises(st.DeviceError) as e:
        fn(x)
        st.synchronize()
    assert e.value.code == "device_error_limit" and str(e.value).startswith(f"{op}:"), str(e.value)
    assert "max-storage-buffer-binding-size" in str(e.value)


@pytest.mark.parametrize("fn", [
    lambda lib, a, b: a * 2 + b,  # b broadcast
    lambda lib, a, b: a.t().exp(),  # strided reads
    lambda lib, a, b: (a > b).to(lib.float16),
    lambda lib, a, b: a.reshape(-1)[7:14007] - 1,  # one dim: runs of 1,024 from an odd start
])
def test_elementwise_past_the_folded_grid(monkeypatch, fn):
    """Elementwise kernels fold their grid into (x, y) of at most max-compute-workgroups-per-dimension each: 65,535^2
    workgroups of 64, 2.7e11 elements, which no binding reaches (a 4 GiB binding holds 2^31 float16), so no third grid
    dim is needed. Under a limit of 4 workgroups a dim (1,024 threads folded) a (300, 50) op of 15,000 elements, which
    the fold cannot hold, runs in chunks of at most 1,024 elements instead of being refused; so does it under a 4 KiB
    binding limit too, whose chunks of float16 (2,048 elements) alone would pass the fold."""
    from shapetorch.backends.webgpu.runtime import RT

    st.synchronize()
    monkeypatch.setattr(RT, "max_groups", 4)
    run(fn, data((300, 50)), data((50,), seed=1), grad=False)
    monkeypatch.setattr(RT, "max_binding", 4096)
    run(fn, data((300, 50)), data((50,), seed=1), grad=False)
