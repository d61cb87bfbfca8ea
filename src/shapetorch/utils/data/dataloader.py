"""``DataLoader``: batches of samples from a dataset, in order or shuffled by a generator (single process)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from ..._dtype import float64, int64
from ..._tensor import Tensor
from ...ops.creation import from_numpy, tensor
from ...ops.joining import stack
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler


def default_collate(batch: Sequence[Any]) -> Any:
    """Stack tensors, turn numbers into tensors, and recurse into tuples, lists and dicts, as torch."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch))
    if isinstance(elem, bool):
        return tensor(list(batch))
    if isinstance(elem, int):
        return tensor(list(batch), dtype=int64)
    if isinstance(elem, float):
        return tensor(list(batch), dtype=float64)
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, Mapping):
        return {k: default_collate([d[k] for d in batch]) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, (tuple, list)):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(s)) for s in zip(*batch)]
    if hasattr(elem, "__array__"):
        import numpy as np

        return from_numpy(np.stack([np.asarray(b) for b in batch]))
    raise TypeError(f"default_collate: batch must contain tensors, numbers, dicts or lists; found {type(elem)}")


def _convert(data: Any) -> Any:
    return data


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
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size, drop_last = None, False
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
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
