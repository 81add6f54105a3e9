"""``torch.utils.data.distributed.DistributedSampler``: each process reads its own share.

The indices are those torch gives for the same arguments, with ``shuffle=True`` too: the
permutation of epoch ``e`` is torch's ``randperm(len(dataset))`` under
``Generator().manual_seed(seed + e)``, reproduced here (Mersenne Twister seeded as torch's
CPU generator, then torch's swap loop), so a run switching between torch and ember sees
the same batches.

Example:
    >>> from ember.utils.data.distributed import DistributedSampler
    >>> list(DistributedSampler(range(10), num_replicas=3, rank=1, shuffle=False))
    [1, 4, 7, 0]
    >>> s = DistributedSampler(range(10), num_replicas=2, rank=0, seed=3)
    >>> s.set_epoch(1)
    >>> len(list(s))
    5
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from .sampler import Sampler, _T_co

__all__ = ["DistributedSampler"]


def _torch_randperm(n: int, seed: int) -> list:
    """``torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()``.

    torch's CPU generator is MT19937 initialised with the low 32 bits of the seed (as
    NumPy's legacy ``RandomState``); randperm swaps ``r[i]`` with ``r[i + x % (n - i)]``
    for 32-bit draws ``x`` (64-bit draws, two 32-bit ones high word first, for
    ``n >= 2**32 // 20``).
    """
    if n <= 1:
        return list(range(n))
    rs = np.random.RandomState(seed & 0xFFFFFFFF)
    steps = np.arange(n - 1, dtype=np.int64)
    if n < (2**32 - 1) // 20:
        raw = rs.randint(0, 2**32, size=n - 1, dtype=np.uint32).astype(np.int64)
        z = raw % (n - steps)
    else:
        words = rs.randint(0, 2**32, size=2 * (n - 1), dtype=np.uint32).astype(np.uint64)
        raw = (words[0::2] << np.uint64(32)) | words[1::2]
        z = (raw % (n - steps).astype(np.uint64)).astype(np.int64)
    r = list(range(n))
    for i, j in enumerate((z + steps).tolist()):
        r[i], r[j] = r[j], r[i]
    return r


class DistributedSampler(Sampler[_T_co]):
    """Restricts loading to a ``1/num_replicas`` share of ``dataset``, as torch's.

    Args:
        dataset: any sized dataset.
        num_replicas: number of processes (``dist.get_world_size()`` when None).
        rank: this process's rank (``dist.get_rank()`` when None).
        shuffle: permute the indices, differently for each ``set_epoch`` (default True).
        seed: the permutation's seed, the same in every process (default 0).
        drop_last: drop the tail so every process gets the same count; otherwise the
            first indices are repeated to pad the list.

    Call ``set_epoch(epoch)`` before each epoch to get a new permutation.

    Example:
        >>> from ember.utils.data.distributed import DistributedSampler
        >>> [list(DistributedSampler(range(5), 2, r, shuffle=False)) for r in (0, 1)]
        [[0, 2, 4], [1, 3, 0]]
        >>> [list(DistributedSampler(range(5), 2, r, False, drop_last=True)) for r in (0, 1)]
        [[0, 2], [1, 3]]
    """

    def __init__(
        self,
        dataset,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if num_replicas is None or rank is None:
            from ... import distributed as dist  # deferred: only without explicit rank/size

            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            self.num_samples = math.ceil(
                (len(self.dataset) - self.num_replicas) / self.num_replicas
            )
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            indices = _torch_randperm(n, self.seed + self.epoch)
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[: self.total_size]
        if len(indices) != self.total_size:
            raise RuntimeError(f"expected {self.total_size} indices, built {len(indices)}")
        indices = indices[self.rank : self.total_size : self.num_replicas]
        return iter(indices)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use ``epoch`` in the permutation's seed (``seed + epoch``), as torch does."""
        self.epoch = epoch
