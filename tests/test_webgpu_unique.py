"""``unique`` and ``unique_consecutive`` of flattened WebGPU tensors against torch: sorted (NaNs all distinct,
last), the inverse and the counts, computed on the device with one read of the number of unique values. Over a
dim they are still refused with a code. Skipped without a WebGPU adapter unless SHAPETORCH_REQUIRE_WEBGPU=1.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
from _oracle import fast, shapes
from test_webgpu import webgpu  # noqa: F401  (the module fixture: skip or fail without an adapter)

DEV = "webgpu"


@given(shape=shapes(0, 3, 0, 5), dtype=hs.sampled_from(["float32", "int64", "int32", "bool"]),
       consecutive=hs.booleans(), nan=hs.booleans(), seed=hs.integers(0, 2**16))
@fast(40)
def test_unique_matches_torch(shape, dtype, consecutive, nan, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, size=shape).astype(dtype)
    if nan and dtype == "float32" and x.size:
        x.reshape(-1)[:: max(1, x.size // 3)] = np.nan
    name = "unique_consecutive" if consecutive else "unique"
    got = getattr(st, name)(st.tensor(x, device=DEV), return_inverse=True, return_counts=True)
    want = getattr(torch, name)(torch.tensor(x), return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        assert g.device == st.device(DEV)
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_array_equal(g.cpu().numpy(), w.numpy())
    alone = getattr(st, name)(st.tensor(x, device=DEV))
    np.testing.assert_array_equal(alone.cpu().numpy(), want[0].numpy())


def test_unique_over_a_dim_is_refused_with_a_code():
    with pytest.raises(st.RegistryError) as e:
        st.unique(st.zeros(3, 2, device=DEV), dim=0)
    assert e.value.code == "kernel_not_registered_error"


def test_unique_past_the_loop_bound():
    """70,000 elements: the sort and the running sum stay under lavapipe's loop bound of 65,535 (merge passes and
    blocks), so the result is torch's."""
    a = np.random.default_rng(3).integers(0, 5000, size=70_000)
    got = st.unique(st.tensor(a, device=DEV), return_inverse=True, return_counts=True)
    want = torch.unique(torch.tensor(a), return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.cpu().numpy(), w.numpy())
