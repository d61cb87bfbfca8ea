"""ChainDataset, StackDataset, default_convert, get_worker_info and DistributedSampler against torch."""

from __future__ import annotations

import collections

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import shapetorch as st
import shapetorch.utils.data as sud


def _plain(x):
    if isinstance(x, (st.Tensor, torch.Tensor)):
        return ("tensor", x.numpy().tolist(), str(x.dtype).split(".")[-1])
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_plain(v) for v in x])
    return x


def _iterable(lib, n, start):
    class Count(lib.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(start, start + n))

        def __len__(self):
            return n

    return Count()


def test_chain_dataset_as_torch():
    for lib in (sud, tud):
        base = st if lib is sud else torch
        chain = lib.ChainDataset([_iterable(base, 3, 0), _iterable(base, 2, 10)])
        assert list(chain) == [0, 1, 2, 10, 11] and len(chain) == 5
        bad = lib.ChainDataset([_iterable(base, 1, 0), [5, 6]])
        with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
            list(bad)
        with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
            len(bad)


def test_stack_dataset_as_torch():
    a, b = [1, 2, 3], ["x", "y", "z"]
    for args, kwargs in (((a, b), {}), ((), {"num": a, "txt": b})):
        ours, theirs = sud.StackDataset(*args, **kwargs), tud.StackDataset(*args, **kwargs)
        assert len(ours) == len(theirs) == 3
        assert [ours[i] for i in range(3)] == [theirs[i] for i in range(3)]
        assert ours.__getitems__([2, 0]) == theirs.__getitems__([2, 0])
    for args, kwargs, match in (((a, [1]), {}, "Size mismatch between datasets"),
                                ((a,), {"b": b}, "but both types are given"),
                                ((), {}, "At least one dataset should be passed")):
        for lib in (sud, tud):
            with pytest.raises(ValueError, match=match):
                lib.StackDataset(*args, **kwargs)
    loader = sud.DataLoader(sud.StackDataset(st.arange(4), st.arange(4) * 10), batch_size=2)
    assert [(x.tolist(), y.tolist()) for x, y in loader] == [([0, 1], [0, 10]), ([2, 3], [20, 30])]


def test_default_convert_as_torch():
    point = collections.namedtuple("point", "x y")
    data = [np.arange(3), {"a": np.float32(2.5), "b": "text"}, point(np.ones(2), 3), (np.int64(4), [np.zeros(1)])]
    for item in data:
        assert _plain(sud.default_convert(item)) == _plain(tud.default_convert(item))


def test_get_worker_info_is_none_in_the_main_process():
    assert sud.get_worker_info() is None and tud.get_worker_info() is None


@pytest.mark.parametrize(("n", "replicas", "drop_last"), [(10, 3, False), (10, 3, True), (9, 3, False), (2, 5, False),
                                                          (7, 4, True), (12, 4, False)])
def test_distributed_sampler_split_as_torch(n, replicas, drop_last):
    for rank in range(replicas):
        ours = sud.DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = tud.DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs)
        assert len(ours) == len(theirs) == ours.num_samples == theirs.num_samples
        assert ours.total_size == theirs.total_size


@pytest.mark.parametrize(("n", "replicas", "drop_last"), [(10, 3, False), (10, 3, True), (2, 5, False)])
def test_distributed_sampler_shuffle_by_epoch(n, replicas, drop_last):
    # shapetorch's permutation is its own stream's (not torch's): the split applied to it must be torch's
    def shares(seed, epoch):
        out = []
        for rank in range(replicas):
            s = sud.DistributedSampler(range(n), replicas, rank, shuffle=True, seed=seed, drop_last=drop_last)
            s.set_epoch(epoch)
            out.append(list(s))
        return out

    g = st.Generator()
    g.manual_seed(7 + 2)
    perm = st.randperm(n, generator=g).tolist()

    class Permuted(tud.Dataset):
        def __len__(self):
            return n

    for rank, got in enumerate(shares(7, 2)):
        split = list(tud.DistributedSampler(Permuted(), replicas, rank, shuffle=False, drop_last=drop_last))
        assert got == [perm[i] for i in split]
    assert shares(7, 2) == shares(7, 2)  # deterministic for a seed and epoch
    if n > 3:
        assert shares(7, 2) != shares(7, 3)  # another epoch, another order


def test_distributed_sampler_refusals_as_torch():
    for lib in (sud, tud):
        with pytest.raises(ValueError, match="Invalid rank 3, rank should be in the interval"):
            lib.DistributedSampler(range(10), num_replicas=3, rank=3)
        with pytest.raises(ValueError, match="process group has not been initialized"):
            lib.DistributedSampler(range(10))
