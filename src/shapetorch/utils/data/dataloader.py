"""``DataLoader``: batches of samples from a dataset, in order or shuffled by a generator (single process)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from ..._dtype import float64
from ..._errors import fail
from ..._tensor import Tensor
from ...ops.creation import from_numpy, tensor
from ...ops.joining import stack
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

_COLLATE_TYPES = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def default_collate(batch: Sequence[Any]) -> Any:
    """Stack tensors and NumPy arrays, turn numbers into tensors, keep strings, and recurse into mappings,
    namedtuples, tuples and lists, as torch."""
    import numpy as np

    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch))
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "SaUO":  # strings and objects have no tensor dtype
            fail("data_error_invalid_type", problem=_COLLATE_TYPES.format(elem.dtype))
        return default_collate([from_numpy(np.array(b)) for b in batch])
    if isinstance(elem, np.generic) and not isinstance(elem, (np.str_, np.bytes_)):
        return from_numpy(np.array(list(batch)))
    if isinstance(elem, float):
        return tensor(list(batch), dtype=float64)
    if isinstance(elem, int):  # bools too: the dtype comes from every value (ints and floats give floats)
        return tensor(list(batch))
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, Mapping):
        collated = {k: default_collate([d[k] for d in batch]) for k in elem}
        try:
            return type(elem)(collated)  # type: ignore[call-arg]  # an OrderedDict stays one, as in torch
        except TypeError:
            return collated
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, Sequence):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(list(s)) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # a tuple of columns comes back as a list, as in torch
        try:
            return type(elem)(columns)  # type: ignore[call-arg]
        except TypeError:
            return columns
    fail("data_error_invalid_type", problem=_COLLATE_TYPES.format(type(elem)))


def _convert(data: Any) -> Any:
    """torch's ``default_convert`` (the collate of ``batch_size=None``): NumPy arrays and scalars become tensors,
    inside mappings, namedtuples and sequences too; everything else is left as it is."""
    import numpy as np

    if isinstance(data, np.ndarray) and data.dtype.kind not in "SaUO":
        return from_numpy(data)
    if isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_)):
        return from_numpy(np.array(data))
    if isinstance(data, Mapping):
        converted = {k: _convert(v) for k, v in data.items()}
        try:
            return type(data)(converted)  # type: ignore[call-arg]
        except TypeError:
            return converted
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(_convert(d) for d in data))
    if isinstance(data, tuple):
        return [_convert(d) for d in data]
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([_convert(d) for d in data])  # type: ignore[call-arg]
        except TypeError:
            return [_convert(d) for d in data]
    return data


def default_convert(data: Any) -> Any:
    """NumPy arrays and scalars as tensors, inside mappings, namedtuples and sequences too (torch's
    ``default_convert``, what ``DataLoader(batch_size=None)`` applies to each item)."""
    return _convert(data)


def get_worker_info() -> None:
    """The worker's id, count, seed and dataset inside a DataLoader worker process, None elsewhere. shapetorch's
    DataLoader makes every batch in the calling process (whatever ``num_workers``), so this is always None."""
    return None


class DataLoader:
    """Iterate over ``dataset`` in batches. ``shuffle=True`` draws a new permutation each epoch from
    ``generator`` (shapetorch's stream, so the order differs from torch's for the same seed)."""

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Sampler | Iterable[int] | None = None, batch_sampler: Iterable[list[int]] | None = None,
                 num_workers: int = 0, collate_fn: Callable[[Any], Any] | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn: Any = None, generator: Any = None,
                 *, prefetch_factor: int | None = None, persistent_workers: bool = False) -> None:
        self.dataset = dataset
        self.num_workers = num_workers  # batches are made in this process whatever the value
        self.generator = generator
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:  # an IterableDataset orders its own items: torch refuses the options that would
            for name, value in (("shuffle", shuffle), ("sampler", sampler), ("batch_sampler", batch_sampler)):
                if value is not None and value is not False:
                    fail("data_error_invalid_value", problem=f"DataLoader with IterableDataset: expected "
                                                             f"unspecified {name} option, but got {name}={value}")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                fail("data_error_invalid_value", problem="batch_sampler option is mutually exclusive with batch_size, "
                                                         "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        if sampler is not None and shuffle:
            fail("data_error_invalid_value", problem="sampler option is mutually exclusive with shuffle")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            assert sampler is not None
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.collate_fn = collate_fn if collate_fn is not None else (default_collate if batch_size is not None
                                                                    or batch_sampler is not None else _convert)

    def __iter__(self) -> Iterator[Any]:
        if self._iterable:
            batch: list[Any] = []
            for item in self.dataset:
                if self.batch_size is None:
                    yield self.collate_fn(item)
                    continue
                batch.append(item)
                if len(batch) == self.batch_size:
                    yield self.collate_fn(batch)
                    batch = []
            if batch and not self.drop_last:
                yield self.collate_fn(batch)
            return
        if self.batch_sampler is None:
            assert self.sampler is not None
            for i in self.sampler:
                yield self.collate_fn(self.dataset[i])
            return
        for indices in self.batch_sampler:
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self) -> int:
        if self.batch_sampler is not None:
            return len(self.batch_sampler)  # type: ignore[arg-type]
        if self.sampler is not None:
            return len(self.sampler)  # type: ignore[arg-type]
        return len(self.dataset)
