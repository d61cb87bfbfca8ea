"""utils.data: datasets, samplers, DataLoader batching/shuffling/drop_last/collate, random_split."""

from __future__ import annotations

import numpy as np
import pytest

import shapetorch as st
from shapetorch.utils.data import DataLoader, Dataset, Subset, TensorDataset, default_collate, random_split


def test_tensor_dataset_and_sequential_loader():
    x, y = st.arange(10.0).reshape(10, 1), st.arange(10)
    ds = TensorDataset(x, y)
    assert len(ds) == 10 and ds[3][1].item() == 3
    batches = list(DataLoader(ds, batch_size=4))
    assert [tuple(b[0].shape) for b in batches] == [(4, 1), (4, 1), (2, 1)]
    assert batches[0][1].tolist() == [0, 1, 2, 3] and batches[0][1].dtype is st.int64
    assert len(DataLoader(ds, batch_size=4)) == 3
    assert len(DataLoader(ds, batch_size=4, drop_last=True)) == 2
    assert [len(b[1]) for b in DataLoader(ds, batch_size=4, drop_last=True)] == [4, 4]
    with pytest.raises(ValueError):
        TensorDataset(st.ones(3), st.ones(4))


def test_shuffle_is_a_permutation_and_reproducible_with_a_generator():
    ds = TensorDataset(st.arange(20))
    a = [int(v) for (b,) in DataLoader(ds, batch_size=6, shuffle=True, generator=st.Generator().manual_seed(1))
         for v in b.tolist()]
    b = [int(v) for (b,) in DataLoader(ds, batch_size=6, shuffle=True, generator=st.Generator().manual_seed(1))
         for v in b.tolist()]
    assert sorted(a) == list(range(20)) and a == b and a != list(range(20))
    g = st.Generator().manual_seed(2)
    loader = DataLoader(ds, batch_size=20, shuffle=True, generator=g)
    e1, e2 = next(iter(loader))[0].tolist(), next(iter(loader))[0].tolist()
    assert e1 != e2  # a new permutation each epoch


def test_collate_fn_and_dict_samples():
    class Dicts(Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return {"x": st.full((2,), float(i)), "label": i, "name": f"s{i}"}

    batch = next(iter(DataLoader(Dicts(), batch_size=3)))
    assert tuple(batch["x"].shape) == (3, 2) and batch["label"].tolist() == [0, 1, 2]
    assert batch["name"] == ["s0", "s1", "s2"]
    out = list(DataLoader(Dicts(), batch_size=2, collate_fn=len))
    assert out == [2, 2, 1]
    assert default_collate([(1, 2.0), (3, 4.0)])[1].dtype is st.float64
    assert list(DataLoader(TensorDataset(st.arange(3)), batch_size=None))[2][0].item() == 2


def test_random_split():
    ds = TensorDataset(st.arange(10))
    a, b = random_split(ds, [7, 3], generator=st.Generator().manual_seed(0))
    assert isinstance(a, Subset) and len(a) == 7 and len(b) == 3
    got = sorted([int(a[i][0].item()) for i in range(7)] + [int(b[i][0].item()) for i in range(3)])
    assert got == list(range(10))
    c, d, e = random_split(ds, [0.5, 0.3, 0.2])
    assert (len(c), len(d), len(e)) == (5, 3, 2)
    with pytest.raises(ValueError):
        random_split(ds, [5, 4])


def test_weighted_random_sampler_as_torch() -> None:
    """Draws differ from torch's stream; the contract is torch's: length, range, no repeats without
    replacement, zero-weight indices never drawn, and the same refusals."""
    import torch

    from shapetorch.utils.data import WeightedRandomSampler

    weights = [0.0, 1.0, 3.0, 0.0, 2.0]
    for replacement in (True, False):
        n = 20 if replacement else 3
        ours = list(WeightedRandomSampler(weights, n, replacement=replacement))
        theirs = list(torch.utils.data.WeightedRandomSampler(weights, n, replacement=replacement))
        assert len(ours) == len(theirs) == n
        assert set(ours) <= {1, 2, 4}
        if not replacement:
            assert sorted(ours) == sorted(theirs) == [1, 2, 4]
    counts = np.bincount(list(WeightedRandomSampler([1.0, 3.0], 4000)), minlength=2)
    assert 0.7 < counts[1] / 4000 < 0.8
    for bad in ({"num_samples": 0}, {"num_samples": 2, "replacement": 1}):
        with pytest.raises(ValueError):
            torch.utils.data.WeightedRandomSampler([1.0], **bad)
        with pytest.raises(ValueError):
            WeightedRandomSampler([1.0], **bad)
