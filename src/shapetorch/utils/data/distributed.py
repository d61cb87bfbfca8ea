"""``DistributedSampler``: each of ``num_replicas`` processes takes its own share of the dataset's indices."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sized
from typing import Any

from ...ops.random import Generator, randperm
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Rank ``rank``'s share of the indices (every ``num_replicas``-th one from ``rank`` on), the list first
    padded by repeating its start up to a multiple of ``num_replicas`` (or cut down to one, ``drop_last``).
    With ``shuffle`` the list is a permutation drawn from a generator seeded with ``seed + epoch``
    (``set_epoch`` changes it): the same split as torch's, but the permutation comes from shapetorch's random
    stream, not torch's. shapetorch has no process groups, so ``num_replicas`` and ``rank`` must be given."""

    def __init__(self, dataset: Sized, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            # what torch raises when no default process group was initialized
            raise ValueError("Default process group has not been initialized, please make sure to call "
                             "init_process_group.")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self) -> Iterator[Any]:
        n = len(self.dataset)
        if self.shuffle:
            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            indices: list[int] = randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[: self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch, which seeds the shuffle with ``seed + epoch`` (call it before each epoch's iteration)."""
        self.epoch = epoch
