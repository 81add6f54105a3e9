"""Datasets, samplers and the DataLoader, with torch.utils.data's API.

Example:
    >>> import ember
    >>> from ember.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(ember.arange(10.0).reshape(5, 2), ember.arange(5))
    >>> [tuple(x.shape) for x, y in DataLoader(ds, batch_size=2)]
    [(2, 2), (2, 2), (1, 2)]
"""

from ._collate import collate, default_collate, default_collate_fn_map, default_convert
from .dataloader import DataLoader, get_worker_info
from .distributed import DistributedSampler
from .dataset import (
    ConcatDataset,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "DistributedSampler",
    "BatchSampler",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "collate",
    "default_collate",
    "default_collate_fn_map",
    "default_convert",
    "get_worker_info",
    "random_split",
]
