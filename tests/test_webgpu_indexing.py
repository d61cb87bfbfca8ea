"""Advanced indexing with integer index tensors on the WebGPU device: the element offsets are computed by a kernel
that reads the index tensors there (nothing read back, nothing uploaded), for reads, assignment, ``index_put``
(with and without accumulation) and their gradients; an index out of range raises torch's IndexError
(``at_error_index_out_of_bounds``) at the next sync. Results against torch on the CPU.

Skipped without a WebGPU adapter, unless SHAPETORCH_REQUIRE_WEBGPU=1 (then it fails), as test_webgpu.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import shapetorch as st
from test_webgpu import (
    DEV,
    webgpu,  # noqa: F401  (the module fixture: skip or fail without an adapter)
)

A = np.random.default_rng(0).normal(size=(4, 5, 6)).astype(np.float32)
IDX_I = np.array([0, -1, 2, 0])  # negative and repeated
IDX_J = np.array([-2, 4, 0, -2])


def _counts() -> tuple[int, int]:
    s = st.memory_stats()
    return s["num_bytes_uploaded"], s["num_readbacks"]


def _setitem(lib, x, i, j):
    y = x.clone()
    y[i, j] = 7.0
    return y


def _setitem_tensor(lib, x, i, j):
    y = x.clone()
    y[i[1:3], :, j[1:3]] = x[0, :, :2].t() * 3  # a value broadcast over the result's (2, 5)
    return y


CASES = {
    "first": lambda lib, x, i, j: x[i],
    "second": lambda lib, x, i, j: x[:, j],
    "pair": lambda lib, x, i, j: x[i, j],
    "split": lambda lib, x, i, j: x[i, :, j],  # not adjacent: the index dims go first
    "broadcast": lambda lib, x, i, j: x[i[:, None], j],
    "slices": lambda lib, x, i, j: x[1:, j, ::2],
    "strided": lambda lib, x, i, j: x.transpose(0, 2)[j, :, i],
    "flipped_index": lambda lib, x, i, j: x[i.flip(0)],
    "ellipsis": lambda lib, x, i, j: x[..., j],
    "new_axis": lambda lib, x, i, j: x[None, i],
    "int32": lambda lib, x, i, j: x[i.to(lib.int32)],
    "2d_index": lambda lib, x, i, j: x[i.reshape(2, 2), 1],
    "setitem": _setitem,
    "setitem_tensor": _setitem_tensor,
    "index_put": lambda lib, x, i, j: x.index_put((i, j), x[0, :4] * 2),
    "index_put_accumulate": lambda lib, x, i, j: x.index_put((i, j), x[0, :4] * 2, accumulate=True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_index_tensors_stay_on_the_device(name):
    fn = CASES[name]
    x, i, j = (st.tensor(v, device=DEV) for v in (A, IDX_I, IDX_J))
    st.synchronize()
    before = _counts()
    got = fn(st, x, i, j)
    st.synchronize()
    assert _counts() == before  # no offsets uploaded, no index read back
    want = fn(torch, *(torch.tensor(v) for v in (A, IDX_I, IDX_J)))
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["pair", "split", "broadcast", "strided", "setitem", "index_put_accumulate"])
def test_gradients_through_device_indices(name):
    fn = CASES[name]
    x = st.tensor(A, device=DEV, requires_grad=True)
    t = torch.tensor(A, requires_grad=True)
    got = fn(st, x, st.tensor(IDX_I, device=DEV), st.tensor(IDX_J, device=DEV))
    want = fn(torch, t, torch.tensor(IDX_I), torch.tensor(IDX_J))
    g = np.random.default_rng(1).normal(size=tuple(want.shape)).astype(np.float32)
    got.backward(st.tensor(g, device=DEV))
    want.backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.cpu().numpy(), t.grad.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("fn,bad", [
    (lambda x, i: x[i], [0, 4]),
    (lambda x, i: x[:, i], [-6, 1]),
    (lambda x, i: x[i, i], [3, -5]),
    (lambda x, i: x.index_put((i,), x[:1] * 0), [9]),
])
def test_an_index_out_of_range_raises_at_the_next_sync(fn, bad):
    x = st.tensor(A, device=DEV)
    r = fn(x, st.tensor(bad, device=DEV))  # recorded, not checked yet
    with pytest.raises(IndexError) as e:
        r.cpu()
    assert e.value.code == "at_error_index_out_of_bounds"
    with pytest.raises(IndexError) as c:  # the CPU raises the same error at the call (as torch, the class)
        fn(st.tensor(A), st.tensor(bad))
    assert str(c.value) == str(e.value)
    with pytest.raises(IndexError):
        fn(torch.tensor(A), torch.tensor(bad))
    np.testing.assert_array_equal(x[st.tensor([1], device=DEV)].cpu().numpy(), A[[1]])  # the runtime goes on


def test_masks_and_host_indices_still_work():
    """A boolean mask (its result's shape depends on its values: read back), a mask with an index tensor, and a
    CPU index tensor (its offsets made on the host) give torch's results."""
    x, t = st.tensor(A, device=DEV), torch.tensor(A)
    np.testing.assert_array_equal(x[x > 0.5].cpu().numpy(), t[t > 0.5].numpy())
    m, i = [True, False, True, False], [1, 2]
    np.testing.assert_array_equal(x[st.tensor(m, device=DEV), st.tensor(i, device=DEV)].cpu().numpy(),
                                  t[torch.tensor(m), torch.tensor(i)].numpy())
    np.testing.assert_array_equal(x[st.tensor(IDX_I)].cpu().numpy(), t[torch.tensor(IDX_I)].numpy())


@pytest.mark.parametrize("fn", [
    lambda x, i: x[i],
    lambda x, i: x[:, i],
    lambda x, i: x[i, :, i[::-1]],
    lambda x, i: x.__setitem__((slice(None), i), 5.0) or x,  # written through the list
])
def test_a_host_index_list_is_uploaded_once(fn):
    """``x[[0, 2, -1]]``: the list (int32, 4 bytes an entry) is uploaded and gathered from on the device, not an
    offset per result element made on the host."""
    idx = [0, 2, -1]
    x = st.tensor(A, device=DEV)
    st.synchronize()
    before = _counts()
    got = fn(x, idx)
    st.synchronize()
    up, reads = (b - a for a, b in zip(before, _counts()))
    assert reads == 0 and up <= 4 * len(idx) * 2  # the list (twice at most: two index positions)
    np.testing.assert_array_equal(got.cpu().numpy(), fn(torch.tensor(A), idx).numpy())


@pytest.mark.parametrize("name", ["index_add", "index_copy"])
def test_index_add_and_copy_read_the_index_on_the_device(name):
    src = np.random.default_rng(2).normal(size=(4, 4, 6)).astype(np.float32)
    idx = np.array([3, 0, 0, 2]) if name == "index_add" else np.array([3, 0, 1, 2])  # copy: distinct targets
    x = st.tensor(A, device=DEV, requires_grad=True)
    s = st.tensor(src, device=DEV, requires_grad=True)
    i = st.tensor(idx, device=DEV)
    st.synchronize()
    before = _counts()
    got = getattr(x, name)(1, i, s)
    st.synchronize()
    assert _counts() == before
    tx, ts = torch.tensor(A, requires_grad=True), torch.tensor(src, requires_grad=True)
    want = getattr(tx, name)(1, torch.tensor(idx), ts)
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-6, atol=1e-6)
    g = np.random.default_rng(3).normal(size=A.shape).astype(np.float32)
    got.backward(st.tensor(g, device=DEV))
    want.backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(s.grad.cpu().numpy(), ts.grad.numpy(), rtol=1e-6, atol=1e-6)
    bad = getattr(x.detach(), name)(1, st.tensor([0, 5, 1, 1], device=DEV), s.detach())
    with pytest.raises(IndexError) as e:
        bad.cpu()
    assert e.value.code == "at_error_index_out_of_bounds"


def test_take_along_dim_keeps_a_device_index_on_the_device():
    """Negative indices wrapped on the device, the range checked there (it used to read the index back and then
    fail to make a WebGPU tensor from it)."""
    i = np.array([[0, -1, 2, -4, 1, 3]] * 5)
    x = st.tensor(A, device=DEV)
    ix = st.tensor(np.broadcast_to(i, (4, 5, 6)).copy(), device=DEV)
    st.synchronize()
    before = _counts()
    got = st.take_along_dim(x, ix, dim=2)
    flat = st.take_along_dim(x, ix.abs())
    st.synchronize()
    assert _counts() == before
    t = torch.tensor(A)
    ti = torch.tensor(np.broadcast_to(i, (4, 5, 6)).copy())
    np.testing.assert_array_equal(got.cpu().numpy(), torch.take_along_dim(t, ti, dim=2).numpy())
    np.testing.assert_array_equal(flat.cpu().numpy(), torch.take_along_dim(t, ti.abs()).numpy())
    with pytest.raises(IndexError):
        st.take_along_dim(x, ix * 2, dim=2).cpu()


MASKS = {
    "x[mask]": lambda lib, x, m: x[m],
    "x[mask of leading dims]": lambda lib, x, m: x[m[:, :, 0]],
    "x[:, mask]": lambda lib, x, m: x[:, m[0]],
    "x[mask, list]": lambda lib, x, m: x[m[:, 0, 0], 1:3][:, :, [0, 2]],
    "x[mask, int]": lambda lib, x, m: x[m[:, 0, 0], 2],
    "x[mask, mask]": lambda lib, x, m: x[m[:, 0, 0], :, m[0, 0]],
    "masked_select": lambda lib, x, m: x.masked_select(m[0]),  # mask broadcast
    "index_put": lambda lib, x, m: x.index_put((m,), x.new_tensor(2.0)),
    "index_put accumulate": lambda lib, x, m: x.index_put((m[:, :, 0],), x[0, 0], accumulate=True),
    "setitem": lambda lib, x, m: x.__setitem__(m, -x[m]) or x,
    "nonzero": lambda lib, x, m: m.nonzero(),
    "nonzero as_tuple": lambda lib, x, m: (x > 0).nonzero(as_tuple=True)[1],
    "argwhere": lambda lib, x, m: lib.argwhere(x[0] > 0.5),
    "empty mask": lambda lib, x, m: x[x > 100],
}


@pytest.mark.parametrize("name", sorted(MASKS))
def test_a_device_mask_is_compacted_on_the_device(name):
    """A boolean mask's True positions are found on the device: one read back (the count, which sizes the result,
    as torch's sync), nothing uploaded."""
    fn = MASKS[name]
    m = np.random.default_rng(4).random(A.shape) < 0.4
    x, dm = st.tensor(A, device=DEV), st.tensor(m, device=DEV)
    st.synchronize()
    before = _counts()
    got = fn(st, x, dm)
    st.synchronize()
    up, reads = (b - a for a, b in zip(before, _counts()))
    want = fn(torch, torch.tensor(A), torch.tensor(m))
    assert up <= 8 and reads <= 2  # a count per mask (and a Python scalar made a tensor)
    assert tuple(got.shape) == tuple(want.shape) and str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


def test_a_device_mask_of_the_wrong_shape_is_refused_as_on_the_cpu():
    x, m = st.tensor(A, device=DEV), st.ones(4, 6, dtype=st.bool, device=DEV)
    with pytest.raises(IndexError) as e:
        x[m]
    with pytest.raises(IndexError) as c:
        st.tensor(A)[m.cpu()]
    assert str(e.value) == str(c.value)


def test_a_device_mask_with_gradients():
    m = np.random.default_rng(5).random(A.shape) < 0.5
    x = st.tensor(A, device=DEV, requires_grad=True)
    t = torch.tensor(A, requires_grad=True)
    (x[st.tensor(m, device=DEV)] ** 2).sum().backward()
    (t[torch.tensor(m)] ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), t.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dim,idx", [(0, [0, -1, 0]), (1, [4, 1, 4]), (2, [5]), (-1, [])])
def test_index_fill_keeps_a_device_index_on_the_device(dim, idx):
    """Repeats and negative entries; a 0-d value tensor's gradient counts each filled entry once (torch's; its
    backward refuses a negative entry, so gradients are compared without them)."""
    x = st.tensor(A, device=DEV, requires_grad=True)
    v = st.tensor(2.5, device=DEV, requires_grad=True)
    i = st.tensor(np.array(idx, dtype=np.int64), device=DEV)
    st.synchronize()
    before = _counts()
    got = x.index_fill(dim, i, v)
    st.synchronize()
    assert _counts() == before
    t, tv = torch.tensor(A, requires_grad=True), torch.tensor(2.5, requires_grad=True)
    want = t.index_fill(dim, torch.tensor(np.array(idx, dtype=np.int64)), tv)
    np.testing.assert_array_equal(got.detach().cpu().numpy(), want.detach().numpy())
    if min(idx, default=0) < 0:
        return
    g = np.random.default_rng(6).normal(size=A.shape).astype(np.float32)
    (got * st.tensor(g, device=DEV)).sum().backward()
    (want * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), t.grad.numpy())
    np.testing.assert_allclose(v.grad.cpu().numpy(), tv.grad.numpy(), rtol=1e-5)


def test_index_fill_out_of_range_raises_at_the_next_sync():
    r = st.tensor(A, device=DEV).index_fill(1, st.tensor([5], device=DEV), 0.0)
    with pytest.raises(IndexError) as e:
        r.cpu()
    assert str(e.value).startswith("index_fill:")
    with pytest.raises(IndexError):
        torch.tensor(A).index_fill(1, torch.tensor([5]), 0.0)


F16 = {
    "scatter_add": lambda lib, x, i, s: x.scatter_add(0, i, s * 3),
    "index_add": lambda lib, x, i, s: x.index_add(0, i[:, 0], s),
    "index_put accumulate": lambda lib, x, i, s: x.index_put((i[:, 0],), s, accumulate=True),
}


@pytest.mark.parametrize("name", sorted(F16))
def test_float16_accumulation_on_the_device(name):
    """float16 atomic adds (a compare-exchange of the 32-bit word holding the half): repeated targets, and
    neighbouring halves of one word written by different threads; nothing read back or uploaded."""
    fn = F16[name]
    rng = np.random.default_rng(8)
    a = rng.normal(size=(6, 64)).astype(np.float16)
    i = rng.integers(0, 6, size=(40, 64))
    s = rng.normal(size=(40, 64)).astype(np.float16)
    x, di, ds = st.tensor(a, device=DEV), st.tensor(i, device=DEV), st.tensor(s, device=DEV)
    st.synchronize()
    before = _counts()
    got = fn(st, x, di, ds)
    st.synchronize()
    assert _counts() == before
    want = fn(torch, torch.tensor(a).float(), torch.tensor(i), torch.tensor(s).float())  # in float32
    assert got.dtype == st.float16
    np.testing.assert_allclose(got.cpu().numpy().astype(np.float32), want.numpy(), rtol=2e-2, atol=5e-2)


def test_float16_gradients_of_gather_and_indexing_on_the_device():
    a = np.random.default_rng(9).normal(size=(5, 8)).astype(np.float16)
    i = np.array([0, 3, 0, 4, 0])
    x = st.tensor(a, device=DEV, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    (x[st.tensor(i, device=DEV)] * 2).sum().backward()
    (t[torch.tensor(i)] * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.cpu().numpy(), t.grad.numpy())
    x.grad = None
    j = np.random.default_rng(10).integers(0, 8, size=(5, 20))
    x.gather(1, st.tensor(j, device=DEV)).sum().backward()
    want = torch.zeros(5, 8).scatter_add(1, torch.tensor(j), torch.ones(5, 20))
    np.testing.assert_array_equal(x.grad.cpu().numpy(), want.numpy())
