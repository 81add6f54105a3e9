"""Datasets: ``Dataset``, ``IterableDataset``, ``TensorDataset``, ``ConcatDataset``,
``Subset`` and ``random_split``."""

from __future__ import annotations

import bisect
import itertools
import math
from typing import Generic, TypeVar

import numpy as np

from ... import _creation
from ..._overrides import warn as _warn
from ..._tensor import Tensor

__all__ = [
    "ConcatDataset",
    "Dataset",
    "IterableDataset",
    "Subset",
    "TensorDataset",
    "random_split",
]

# what a dataset's items are, for annotations (``Dataset[int]``), as torch's classes take
_T_co = TypeVar("_T_co", covariant=True)


class Dataset(Generic[_T_co]):
    """A map-style dataset: subclasses implement ``__getitem__`` (and usually ``__len__``).

    Example:
        >>> from ember.utils.data import Dataset
        >>> class Squares(Dataset):
        ...     def __len__(self): return 4
        ...     def __getitem__(self, i): return i * i
        >>> [Squares()[i] for i in range(4)]
        [0, 1, 4, 9]
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[_T_co]):
    """A dataset that is a stream: subclasses implement ``__iter__``.

    Example:
        >>> from ember.utils.data import DataLoader, IterableDataset
        >>> class Count(IterableDataset):
        ...     def __iter__(self): return iter(range(5))
        >>> [b.tolist() for b in DataLoader(Count(), batch_size=2)]
        [[0, 1], [2, 3], [4]]
    """

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset):
        raise TypeError("ember.utils.data has no ChainDataset; chain the iterables yourself")


def _select(t: Tensor, index):
    """``t[index]``: through ember's indexing (recorded for autograd) when it is available."""
    if getattr(Tensor, "__getitem__", None) is not None:
        return t[index]
    return Tensor._wrap(np.asarray(t._data[index]))


class TensorDataset(Dataset[tuple[Tensor, ...]]):
    """Samples are the rows (first-dimension slices) of the given tensors.

    Example:
        >>> import ember
        >>> from ember.utils.data import TensorDataset
        >>> ds = TensorDataset(ember.tensor([[1, 2], [3, 4]]), ember.tensor([0, 1]))
        >>> len(ds), ds[1]
        (2, (tensor([3, 4]), tensor(1)))
    """

    def __init__(self, *tensors: Tensor) -> None:
        if any(tensors[0].size(0) != tensor.size(0) for tensor in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(_select(tensor, index) for tensor in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class ConcatDataset(Dataset[_T_co]):
    """The concatenation of several map-style datasets.

    Example:
        >>> from ember.utils.data import ConcatDataset
        >>> ds = ConcatDataset([[1, 2], [3]])
        >>> len(ds), ds[2], ds[-1]
        (3, 3, 3)
    """

    @staticmethod
    def cumsum(sequence):
        r, s = [], 0
        for e in sequence:
            length = len(e)
            r.append(length + s)
            s += length
        return r

    def __init__(self, datasets) -> None:
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        if dataset_idx == 0:
            sample_idx = idx
        else:
            sample_idx = idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]


class Subset(Dataset[_T_co]):
    """The samples of ``dataset`` at ``indices``.

    Example:
        >>> from ember.utils.data import Subset
        >>> s = Subset(["a", "b", "c", "d"], [3, 0])
        >>> len(s), s[0], s[1]
        (2, 'd', 'a')
    """

    def __init__(self, dataset, indices) -> None:
        self.dataset = dataset
        self.indices = indices
        if (
            type(self).__getitem__ is not Subset.__getitem__
            and type(self).__getitems__ is Subset.__getitems__
        ):
            raise NotImplementedError(
                f"{type(self).__name__} overrides __getitem__ but not __getitems__. When "
                "subclassing Subset and overriding __getitem__, you must also override "
                "__getitems__ to ensure DataLoader works correctly with your custom logic. A "
                "simple implementation:\n\n"
                "def __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]"
            )

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list) -> list:
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[idx] for idx in indices])
        return [self.dataset[self.indices[idx]] for idx in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset, lengths, generator=None) -> list[Subset]:
    """Split ``dataset`` into disjoint random ``Subset``s of the given lengths, or of the
    given fractions (summing to 1; remainders go round-robin to the first splits).

    Example:
        >>> import ember
        >>> from ember.utils.data import random_split
        >>> a, b = random_split(range(10), [0.7, 0.3], generator=ember.Generator().manual_seed(0))
        >>> len(a), len(b), sorted(list(a) + list(b)) == list(range(10))
        (7, 3, True)
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths: list[int] = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(math.floor(len(dataset) * frac))
        remainder = len(dataset) - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                _warn(
                    f"Length of split at index {i} is 0. This might result in an empty dataset.",
                    stacklevel=2,
                )

    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")

    indices = _creation.randperm(sum(lengths), generator=generator).tolist()
    return [
        Subset(dataset, indices[offset - length : offset])
        for offset, length in zip(itertools.accumulate(lengths), lengths)
    ]
