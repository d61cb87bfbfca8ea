"""utils.data: datasets, samplers, DataLoader batching/shuffling/drop_last/collate, random_split."""

from __future__ import annotations

import collections

import numpy as np
import pytest
import torch
import torch.utils.data

import shapetorch as st
from shapetorch.utils import data
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
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):  # torch asserts
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


# -- default_collate and the samplers, against torch ------------------------------------------------------------

_Point = collections.namedtuple("_Point", "x y")


def _describe(v):
    """A value with tensors as (dtype, shape, values) and containers by type, to compare across libraries."""
    if isinstance(v, (torch.Tensor, st.Tensor)):
        return ("tensor", str(v.dtype).split(".")[-1], tuple(v.shape), v.numpy().tolist())
    if isinstance(v, dict):
        return (type(v).__name__, {k: _describe(x) for k, x in v.items()})
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [_describe(x) for x in v])
    return (type(v).__name__, v)


def _outcome(fn):
    """What ``fn()`` gives, or the builtin class and message of what it raises (the library's name read as X)."""
    try:
        return _describe(fn())
    except Exception as e:  # noqa: BLE001  (the verdict is what is compared)
        builtin = next(c for c in type(e).__mro__ if c.__module__ == "builtins")
        msg = str(e).split(": ", 1)[-1] if isinstance(e, st.ShapetorchError) and e.code.startswith("stack") else str(e)
        return ("raised", builtin.__name__, msg.replace("shapetorch", "X").replace("torch", "X"))


COLLATE = {
    "ints": [1, 2, 3], "floats": [1.5, 2.0], "bools": [True, False], "ints_then_floats": [1, 2.5],
    "strings": ["a", "b"], "bytes": [b"a", b"b"], "np_float32": [np.ones(2, np.float32), np.zeros(2, np.float32)],
    "np_float64_scalars": [np.float64(1.5), np.float64(2)], "np_int32_scalars": [np.int32(1), np.int32(2)],
    "np_int16_arrays": [np.arange(3, dtype=np.int16)] * 2, "np_bool_arrays": [np.array([True]), np.array([False])],
    "np_0d": [np.array(1.5), np.array(2.5)], "np_float16_scalars": [np.float16(1)] * 2,
    "tuples": [(1, 2.0), (3, 4.0)], "lists": [[1, 2], [3, 4]], "namedtuples": [_Point(1, 2.0), _Point(3, 4.0)],
    "dicts": [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}],
    "ordered_dicts": [collections.OrderedDict(b=1, a=2)] * 2,
    "nested": [{"a": (1, [2.0, 3.0]), "b": {"c": np.ones(1)}}] * 2,
    "np_strings": [np.array(["a"]), np.array(["b"])], "np_objects": [np.array([None]), np.array([None])],
    "nones": [None, None], "complex": [1 + 2j, 3j], "uneven_lists": [[1, 2], [3]],
}


@pytest.mark.parametrize("name", sorted(COLLATE))
def test_default_collate_as_torch(name):
    from torch.utils.data import default_collate as torch_collate

    assert _outcome(lambda: data.default_collate(COLLATE[name])) == _outcome(lambda: torch_collate(COLLATE[name]))


@pytest.mark.parametrize("kind", ["tensors", "int_tensors", "uneven_tensors"])
def test_default_collate_tensors_as_torch(kind):
    from torch.utils.data import default_collate as torch_collate

    def batch(lib):
        return {"tensors": [lib.ones(2), lib.zeros(2)], "int_tensors": [lib.tensor([1, 2]), lib.tensor([3, 4])],
                "uneven_tensors": [lib.ones(2), lib.ones(3)]}[kind]

    ours, theirs = _outcome(lambda: data.default_collate(batch(st))), _outcome(lambda: torch_collate(batch(torch)))
    if theirs[0] == "raised":  # the message names shapes as each library prints them
        assert ours[:2] == theirs[:2]
    else:
        assert ours == theirs




SAMPLING = {  # lib.utils.data -> a value that does not depend on a random stream, or an error
    "sequential": lambda D: list(D.SequentialSampler(range(10))),
    "batches": lambda D: list(D.BatchSampler(D.SequentialSampler(range(10)), 3, False)),
    "batches_drop_last": lambda D: (list(D.BatchSampler(range(10), 3, True)), len(D.BatchSampler(range(10), 3, True)),
                                    len(D.BatchSampler(range(10), 3, False))),
    "batch_size_zero": lambda D: D.BatchSampler(range(10), 0, False),
    "batch_size_bool": lambda D: D.BatchSampler(range(10), True, False),
    "drop_last_int": lambda D: D.BatchSampler(range(10), 2, 1),
    "random_lengths": lambda D: (len(D.RandomSampler(range(10))),
                                 len(D.RandomSampler(range(10), replacement=True, num_samples=25)),
                                 sorted(D.RandomSampler(range(10)))),
    "random_more_than_n": lambda D: sorted(collections.Counter(D.RandomSampler(range(10), num_samples=25)).values()),
    "random_num_samples_zero": lambda D: D.RandomSampler(range(10), num_samples=0),
    "random_replacement_int": lambda D: D.RandomSampler(range(10), replacement=1),
    "subset_random": lambda D: (len(D.SubsetRandomSampler([5, 3, 9])), sorted(D.SubsetRandomSampler([5, 3, 9]))),
    "split_fractions": lambda D: [len(s) for s in D.random_split(range(10), [0.33, 0.33, 0.34])],
    "split_fractions_remainder": lambda D: [len(s) for s in D.random_split(range(11), [0.1, 0.2, 0.3, 0.4])],
    "split_halves_odd": lambda D: [len(s) for s in D.random_split(range(7), [0.5, 0.5])],
    "split_lengths_short": lambda D: D.random_split(range(10), [3, 3]),
    "split_fractions_over_one": lambda D: D.random_split(range(10), [0.5, 0.6]),
    "split_is_a_partition": lambda D: sorted(i for s in D.random_split(range(10), [4, 6]) for i in s),
    "concat": lambda D: (len(D.ConcatDataset([range(3), range(4)])), D.ConcatDataset([range(3), range(4)])[4],
                         D.ConcatDataset([range(3), range(4)])[-1], D.ConcatDataset([range(3), range(4)]).cumulative_sizes),
    "concat_index_too_negative": lambda D: D.ConcatDataset([range(3), range(4)])[-8],
    "concat_empty": lambda D: D.ConcatDataset([]),
    "concat_iterable": lambda D: D.ConcatDataset([_seven(D)]),
    "iterable_batches": lambda D: [b.tolist() for b in D.DataLoader(_seven(D), batch_size=3)],
    "iterable_drop_last": lambda D: [b.tolist() for b in D.DataLoader(_seven(D), batch_size=3, drop_last=True)],
    "iterable_len": lambda D: len(D.DataLoader(_seven(D), batch_size=3)),
    "iterable_shuffle": lambda D: D.DataLoader(_seven(D), shuffle=True),
    "iterable_sampler": lambda D: D.DataLoader(_seven(D), sampler=[0, 1]),
    "iterable_unbatched": lambda D: list(D.DataLoader(_seven(D), batch_size=None))[:2],
    "subset": lambda D: (len(D.Subset(range(10), [1, 5])), D.Subset(range(10), [1, 5])[1],
                         D.Subset(range(10), [1, 5])[-1]),
    "loader_lengths": lambda D: (len(D.DataLoader(range(10), batch_size=3)),
                                 len(D.DataLoader(range(10), batch_size=3, drop_last=True))),
    "loader_sampler_and_shuffle": lambda D: D.DataLoader(range(10), sampler=D.SequentialSampler(range(10)), shuffle=True),
    "loader_batch_size_and_batch_sampler": lambda D: D.DataLoader(range(10), batch_size=2,
                                                                  batch_sampler=D.BatchSampler(range(10), 2, False)),
    "loader_unbatched_converts": lambda D: list(D.DataLoader([np.ones(2), (np.int32(3), "s")], batch_size=None)),
    "weighted_num_samples_zero": lambda D: D.WeightedRandomSampler([0.5, 0.5], num_samples=0),
    "tensor_dataset_sizes": lambda D: D.TensorDataset(*(torch if D is torch.utils.data else st).ones(3).split([1, 2])),
}


def _seven(D):
    """An IterableDataset of 0..6, of the library of ``D`` (one class name, as messages name it)."""
    return type("_Seven", (D.IterableDataset,), {"__iter__": lambda self: iter(range(7))})()


@pytest.mark.parametrize("name", sorted(SAMPLING))
def test_samplers_datasets_and_loader_as_torch(name):
    fn = SAMPLING[name]
    ours, theirs = _outcome(lambda: fn(data)), _outcome(lambda: fn(torch.utils.data))
    assert ours == theirs
    if ours[0] == "raised" and ours[1] in ("ValueError", "TypeError") and name != "iterable_len":  # len(): Python's
        with pytest.raises(Exception) as info:
            fn(data)
        assert getattr(info.value, "code", "").startswith("data_error")
