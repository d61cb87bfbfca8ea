"""searchsorted/bucketize and histc on WebGPU against torch; the host-only ops (histogram, unique over a dim) refused
with a coded error on WebGPU instead of crashing; int64 add/sub/mul/neg whose result leaves int32 (the storage
of int64 on WebGPU) refused at the next sync instead of wrapping."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import shapetorch as st
from test_webgpu import (
    DEV,
    webgpu,  # noqa: F401  (the module fixture: skip or fail without an adapter)
)


def _both(fn, *arrays):
    ours = fn(st, *(st.tensor(a, device=DEV) for a in arrays))
    theirs = fn(torch, *(torch.tensor(a) for a in arrays))
    assert ours.device == st.device(DEV)
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(ours.cpu().numpy(), theirs.numpy())


SEQ = np.array([1.0, 2.0, 2.0, 3.5, np.nan], np.float32)
VALS = np.array([[0.5, 2.0, 3.5], [np.nan, 9.0, 1.0]], np.float32)


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_and_bucketize(right):
    _both(lambda lib, s, v: lib.searchsorted(s, v, right=right), SEQ, VALS)
    _both(lambda lib, s, v: lib.bucketize(v, s[:4], right=right), SEQ, VALS)
    rows = np.sort(np.random.default_rng(0).normal(size=(2, 6)).astype(np.float32), axis=1)
    _both(lambda lib, s, v: lib.searchsorted(s, v, right=right), rows, VALS)
    ints = np.array([[1, 3, 3, 7], [0, 0, 2, 9]], np.int64)
    _both(lambda lib, s, v: lib.searchsorted(s, v, right=right, out_int32=True), ints,
          np.array([[3, 8], [0, 1]], np.int64))


def test_searchsorted_sorter_and_empty():
    seq = np.array([[3.0, 1.0, 2.0]], np.float32)
    sorter = np.argsort(seq, axis=1)
    _both(lambda lib, s, v, o: lib.searchsorted(s, v, sorter=o), seq, np.array([[2.5, 0.0]], np.float32), sorter)
    _both(lambda lib, s, v: lib.searchsorted(s, v), SEQ, np.zeros((0,), np.float32))


def test_host_only_ops_refused_with_a_code():
    x = st.tensor([3.0, 1.0, 3.0], device=DEV)
    for fn in (lambda: st.unique(x[None], dim=1), lambda: st.unique_consecutive(x[None], dim=0),
               lambda: st.histogram(x, bins=3)):
        with pytest.raises(RuntimeError) as e:
            fn()
        assert e.value.code == "kernel_not_registered_error"
        assert "move the tensor to the CPU" in str(e.value)


@pytest.mark.parametrize("bins, lo, hi", [(5, 0.0, 1.0), (10, 0.0, 0.0), (7, -1.0, 2.0), (3, 0.25, 0.75), (4, 2.0, 2.0)])
def test_histc_on_the_device(bins, lo, hi):
    """histc's size is ``bins``, whatever the values: it runs on the device (the range is read back only when
    min == max, as torch's CUDA histc does); values on the edges, outside the range and NaN as torch counts them."""
    x = np.random.default_rng(bins).uniform(-1, 2, 500).astype(np.float32)
    x[:4] = [0.25, 0.75, 2.0, -1.0]
    if lo != hi:
        x[4] = np.nan
    _both(lambda lib, t: lib.histc(t, bins=bins, min=lo, max=hi), x)
    _both(lambda lib, t: lib.histc(t, bins=bins, min=lo, max=hi), np.zeros(0, np.float32))


def test_int64_overflow_refused_not_wrapped():
    big = np.array([2**30, -5], np.int64)
    a = st.tensor(big, device=DEV)
    for fn in (lambda x: x * 4, lambda x: x + 2**30, lambda x: -x - 2**30 - 2**30, lambda x: -(x * 0 - 2**31)):
        with pytest.raises(NotImplementedError) as e:
            fn(a).tolist()
        assert e.value.code == "method_dtype_not_supported_error"
        assert "outside int32" in str(e.value)
    # exact results in range, before and after a refusal (the runtime goes on)
    _both(lambda lib, x: x * 1 + 3 - 2 + (-x), big)
    _both(lambda lib, x, y: x * y + y, np.array([46340, -46341], np.int64), np.array([46340, 46340], np.int64))
