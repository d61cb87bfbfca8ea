"""``as_strided`` (a view over the root array's buffer) and ``scatter_reduce``/``index_reduce`` (one thread per
output element, in index order) on WebGPU against torch on the CPU: values, dtypes, gradients, index checks
raised at the next sync, and a dim longer than one dispatch's chunk. Skipped without a WebGPU adapter unless
SHAPETORCH_REQUIRE_WEBGPU=1.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
from _oracle import fast
from shapetorch.backends.webgpu import composed_kernels
from test_webgpu import webgpu  # noqa: F401  (the module fixture: skip or fail without an adapter)

DEV = "webgpu"
REDUCES = ["sum", "prod", "mean", "amax", "amin"]


def _close(got: st.Tensor, want: torch.Tensor, tol: float = 1e-5) -> None:
    assert got.device == st.device(DEV)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), rtol=tol, atol=tol)


@given(reduce=hs.sampled_from(REDUCES), include_self=hs.booleans(), dim=hs.integers(0, 2),
       dtype=hs.sampled_from(["float32", "int64", "int32"]), seed=hs.integers(0, 2**16))
@fast(40)
def test_scatter_reduce_matches_torch(reduce, include_self, dim, dtype, seed):
    rng = np.random.default_rng(seed)
    shape = (3, 4, 5)
    ishape = tuple(int(rng.integers(1, s + 2)) if d == dim else int(rng.integers(1, s + 1))
                   for d, s in enumerate(shape))
    x = (rng.normal(size=shape) * 4).astype(dtype)
    src = (rng.normal(size=tuple(s + 1 for s in ishape)) * 4).astype(dtype)  # larger than index: a block is read
    if dtype == "float32" and seed % 3 == 0:
        src.reshape(-1)[0] = np.nan
    index = rng.integers(0, shape[dim], size=ishape)
    got = st.tensor(x, device=DEV).scatter_reduce(dim, st.tensor(index, device=DEV), st.tensor(src, device=DEV),
                                                  reduce, include_self=include_self)
    want = torch.tensor(x).scatter_reduce(dim, torch.tensor(index), torch.tensor(src), reduce,
                                          include_self=include_self)
    _close(got, want, tol=1e-4)


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_gradients_on_the_device(reduce, include_self):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 3)).astype(np.float32)
    src = rng.normal(size=(6, 3)).astype(np.float32)
    src[1, 0] = 0.0  # a zero in a product
    index = rng.integers(0, 4, size=(6, 3))
    sx, ss = (st.tensor(a, device=DEV, requires_grad=True) for a in (x, src))
    tx, ts = (torch.tensor(a, requires_grad=True) for a in (x, src))
    w = rng.normal(size=(4, 3)).astype(np.float32)
    (sx.scatter_reduce(0, st.tensor(index, device=DEV), ss, reduce, include_self=include_self)
     * st.tensor(w, device=DEV)).sum().backward()
    (tx.scatter_reduce(0, torch.tensor(index), ts, reduce, include_self=include_self) * torch.tensor(w)).sum().backward()
    assert sx.grad is not None and ss.grad is not None
    _close(sx.grad, tx.grad, tol=1e-4)
    _close(ss.grad, ts.grad, tol=1e-4)


def test_scatter_reduce_over_a_dim_longer_than_a_chunk():
    """The index runs past one dispatch's chunk of the dim: the passes carry the partial result and its count."""
    n = composed_kernels.SCATTER_CHUNK + 1000  # each pass's loop stays below lavapipe's 65,535 iterations
    rng = np.random.default_rng(2)
    index = rng.integers(0, 3, size=(n, 2))
    src = rng.integers(-5, 6, size=(n, 2)).astype(np.float32)
    for reduce in ("sum", "mean", "amax"):
        got = st.zeros(3, 2, device=DEV).scatter_reduce(0, st.tensor(index, device=DEV), st.tensor(src, device=DEV),
                                                        reduce, include_self=False)
        want = torch.zeros(3, 2).scatter_reduce(0, torch.tensor(index), torch.tensor(src), reduce, include_self=False)
        _close(got, want, tol=1e-5)


def test_index_reduce_and_the_inplace_method():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    src = np.ones((2, 3), np.float32) * 7
    for reduce in ("prod", "mean", "amax", "amin"):
        got = st.tensor(x, device=DEV).index_reduce(0, st.tensor([1, 1], device=DEV), st.tensor(src, device=DEV),
                                                     reduce)
        want = torch.tensor(x).index_reduce(0, torch.tensor([1, 1]), torch.tensor(src), reduce)
        _close(got, want)
    t = st.tensor(x, device=DEV)
    t.scatter_reduce_(1, st.tensor([[2, 2]] * 4, device=DEV), st.tensor(np.ones((4, 2), np.float32), device=DEV),
                      "sum")
    _close(t, torch.tensor(x).scatter_reduce_(1, torch.tensor([[2, 2]] * 4), torch.ones(4, 2), "sum"))


def test_scatter_reduce_index_out_of_range_raises_at_the_next_sync():
    r = st.zeros(3, device=DEV).scatter_reduce(0, st.tensor([0, 3], device=DEV), st.ones(2, device=DEV), "sum")
    with pytest.raises(RuntimeError) as e:  # torch's class (ours is also an IndexError)
        r.cpu()
    assert e.value.code == "at_error_index_out_of_bounds"  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError):
        torch.zeros(3).scatter_reduce(0, torch.tensor([0, 3]), torch.ones(2), "sum")


@given(size=hs.lists(hs.integers(0, 4), min_size=0, max_size=3), seed=hs.integers(0, 2**16))
@fast(30)
def test_as_strided_matches_torch(size, seed):
    rng = np.random.default_rng(seed)
    stride = [int(rng.integers(0, 4)) for _ in size]
    base = np.arange(60, dtype=np.float32)
    need = sum((s - 1) * t for s, t in zip(size, stride)) + 1 if all(size) else 0
    offset = int(rng.integers(0, max(1, 60 - need)))
    _close(st.as_strided(st.tensor(base, device=DEV), size, stride, offset),
           torch.as_strided(torch.tensor(base), size, stride, offset))


def test_as_strided_is_a_view_of_a_slice_with_gradients():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    s = st.tensor(base, device=DEV)
    t = torch.tensor(base)
    sv, tv = s[1:, 2:], t[1:, 2:]  # a view that starts inside the storage
    _close(sv.as_strided((2, 3), (6, 1)), tv.as_strided((2, 3), (6, 1)))  # the view's own offset by default
    _close(sv.as_strided((2, 2), (1, 7), 3), tv.as_strided((2, 2), (1, 7), 3))
    v = s.as_strided((3,), (7,))  # writes through the view reach the base, as torch's
    v.mul_(-1)
    t.as_strided((3,), (7,)).mul_(-1)
    _close(s, t)
    # overlapping windows: each element's gradient is the count of windows that read it
    x = st.tensor(base, device=DEV, requires_grad=True)
    y = torch.tensor(base, requires_grad=True)
    w = np.random.default_rng(3).normal(size=(5, 4)).astype(np.float32)
    (x.as_strided((5, 4), (2, 1), 1) * st.tensor(w, device=DEV)).sum().backward()
    (y.as_strided((5, 4), (2, 1), 1) * torch.tensor(w)).sum().backward()
    assert x.grad is not None
    _close(x.grad, y.grad)
    assert x.grad.device == st.device(DEV)


@pytest.mark.parametrize("dtype", ["float16", "bool"])
def test_scatter_reduce_of_float16_and_bool_runs_the_cpu_kernel(dtype):
    """No kernel for them (no 16-bit arithmetic in the shader, bool has no sum): the host's, on read-back arrays."""
    x = np.array([[1, 0, 1], [0, 0, 1]]).astype(dtype)
    src = np.array([[1, 1, 0], [0, 1, 1]]).astype(dtype)
    index = np.array([[1, 0, 1], [0, 0, 0]])
    for reduce in ("sum", "prod", "amax", "amin"):
        got = st.tensor(x, device=DEV).scatter_reduce(0, st.tensor(index, device=DEV), st.tensor(src, device=DEV),
                                                      reduce)
        _close(got, torch.tensor(x).scatter_reduce(0, torch.tensor(index), torch.tensor(src), reduce))


def test_as_strided_of_a_strided_kernel_output_reads_its_elements_in_order():
    """A kernel's result may be a permuted view with no base (argsort along dim 0); torch's is contiguous, so
    its storage is its elements in order: ours is such a copy."""
    x = np.random.default_rng(8).normal(size=(3, 4)).astype(np.float32)
    got = st.argsort(st.tensor(x, device=DEV), dim=0).as_strided((2, 5), (5, 1), 1)
    want = torch.argsort(torch.tensor(x), dim=0).as_strided((2, 5), (5, 1), 1)
    _close(got, want)
