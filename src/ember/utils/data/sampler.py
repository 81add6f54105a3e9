"""Samplers: which dataset indices to visit, in what order, and how to batch them."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Generic, TypeVar

import numpy as np

from ... import _creation
from ..._tensor import Tensor

__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]

# what a sampler yields, for annotations (``Sampler[int]``), as torch's classes take
_T_co = TypeVar("_T_co", covariant=True)


def _fresh_generator() -> _creation.Generator:
    """A generator seeded from the global one (what torch does when none is given)."""
    seed = int(_creation.randint(0, 2**63 - 1, ()).item())
    return _creation.Generator().manual_seed(seed)


class Sampler(Generic[_T_co]):
    """Base class of samplers: an iterable over dataset indices (or lists of indices).

    Example:
        >>> from ember.utils.data import Sampler
        >>> class EvenSampler(Sampler):
        ...     def __init__(self, n): self.n = n
        ...     def __iter__(self): return iter(range(0, self.n, 2))
        ...     def __len__(self): return (self.n + 1) // 2
        >>> list(EvenSampler(5))
        [0, 2, 4]
    """

    def __init__(self, data_source=None) -> None:
        pass

    def __iter__(self) -> Iterator:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """Indices ``0 .. len(data_source) - 1`` in order.

    Example:
        >>> from ember.utils.data import SequentialSampler
        >>> list(SequentialSampler(range(3)))
        [0, 1, 2]
    """

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """A random permutation of the indices (or, with ``replacement=True``, ``num_samples``
    independent draws), from ``generator`` or a generator seeded from the global one.

    Example:
        >>> import ember
        >>> from ember.utils.data import RandomSampler
        >>> sorted(RandomSampler(range(4), generator=ember.Generator().manual_seed(0)))
        [0, 1, 2, 3]
    """

    def __init__(self, data_source, replacement: bool = False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={self.replacement}"
            )
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                "num_samples should be a positive integer value, but got "
                f"num_samples={self.num_samples}"
            )

    @property
    def num_samples(self) -> int:
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        generator = self.generator if self.generator is not None else _fresh_generator()
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from _creation.randint(0, n, (32,), generator=generator).tolist()
            yield from _creation.randint(
                0, n, (self.num_samples % 32,), generator=generator
            ).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from _creation.randperm(n, generator=generator).tolist()
            yield from _creation.randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in a random order.

    Example:
        >>> from ember.utils.data import SubsetRandomSampler
        >>> sorted(SubsetRandomSampler([5, 7, 9]))
        [5, 7, 9]
    """

    def __init__(self, indices, generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in _creation.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``.

    Example:
        >>> from ember.utils.data import WeightedRandomSampler
        >>> set(WeightedRandomSampler([0.0, 1.0, 0.0], 4))
        {1}
    """

    def __init__(self, weights, num_samples: int, replacement: bool = True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={num_samples}"
            )
        if not isinstance(replacement, bool):
            raise ValueError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        w = weights._data if isinstance(weights, Tensor) else np.asarray(weights)
        weights_tensor = Tensor._wrap(np.asarray(w, dtype=np.float64))
        if weights_tensor._data.ndim != 1:
            raise ValueError(
                "weights should be a 1d sequence but given weights have shape "
                f"{tuple(weights_tensor._data.shape)}"
            )
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        rand_tensor = _creation.multinomial(
            self.weights, self.num_samples, self.replacement, generator=self.generator
        )
        yield from iter(rand_tensor.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Group the indices of another sampler into lists of ``batch_size``.

    Example:
        >>> from ember.utils.data import BatchSampler, SequentialSampler
        >>> list(BatchSampler(SequentialSampler(range(10)), batch_size=3, drop_last=False))
        [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
        >>> list(BatchSampler(SequentialSampler(range(10)), batch_size=3, drop_last=True))
        [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    """

    def __init__(self, sampler, batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        sampler_iter = iter(self.sampler)
        if self.drop_last:
            args = [sampler_iter] * self.batch_size
            for batch_droplast in zip(*args):
                yield [*batch_droplast]
        else:
            batch = [*itertools.islice(sampler_iter, self.batch_size)]
            while batch:
                yield batch
                batch = [*itertools.islice(sampler_iter, self.batch_size)]

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
