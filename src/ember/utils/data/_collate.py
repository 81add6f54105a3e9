"""``default_collate`` / ``default_convert``: turn a list of samples into batched Tensors.

Tensors and NumPy arrays are stacked along a new first dimension (with NumPy, into a new
array); Python floats become float64 tensors, ints int64 (bools bool); strings and bytes
stay lists; dicts, namedtuples, tuples and lists are collated field by field.
"""

from __future__ import annotations

import collections.abc
import copy
import re

import numpy as np

from ... import _creation, _torch
from ..._dtype import float64
from ..._tensor import Tensor

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert"]

np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def default_convert(data):
    """Convert NumPy arrays and scalars inside ``data`` to Tensors, keeping the structure.

    Used instead of ``default_collate`` when automatic batching is disabled
    (``batch_size=None``).

    Example:
        >>> import numpy as np
        >>> from ember.utils.data import default_convert
        >>> default_convert([np.array([0, 1]), 2])
        [tensor([0, 1]), 2]
    """
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if (
            elem_type.__name__ == "ndarray"
            and np_str_obj_array_pattern.search(data.dtype.str) is not None
        ):
            return data
        return _creation.as_tensor(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate(batch, *, collate_fn_map: dict | None = None):
    """Collate ``batch`` (a list of samples) recursively, dispatching leaf types through
    ``collate_fn_map`` (``{type or tuple of types: fn(batch, *, collate_fn_map)}``).

    Example:
        >>> from ember.utils.data import collate, default_collate_fn_map
        >>> collate([(1, "a"), (2, "b")], collate_fn_map=default_collate_fn_map)
        [tensor([1, 2]), ('a', 'b')]
    """
    elem = batch[0]
    elem_type = type(elem)

    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)

    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update(
                    {
                        key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                        for key in elem
                    }
                )
                return clone
            return elem_type(
                {
                    key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                    for key in elem
                }
            )
        except TypeError:
            return {
                key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem
            }
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(
            *(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch))
        )
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = collate(samples, collate_fn_map=collate_fn_map)
                return clone
            return elem_type(
                [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
            )
        except TypeError:
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]

    raise TypeError(default_collate_err_msg_format.format(elem_type))


def _stack(tensors) -> Tensor:
    """Stack equally shaped tensors along a new first dimension (``torch.stack(batch, 0)``)."""
    first = tensors[0]._data.shape
    for i, t in enumerate(tensors):
        if t._data.shape != first:
            raise RuntimeError(
                "stack expects each tensor to be equal size, but got "
                f"{list(first)} at entry 0 and {list(t._data.shape)} at entry {i}"
            )
    if any(t._rg for t in tensors):  # record the stack so gradients flow back to the samples
        return _torch.stack(list(tensors), 0)  # torch.stack's public (dispatching) function
    return Tensor._wrap(np.stack([t._data for t in tensors]))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    return _stack(batch)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([_creation.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return _creation.as_tensor(np.asarray(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    return _creation.tensor(batch, dtype=float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return _creation.tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map: dict = {Tensor: collate_tensor_fn}
default_collate_fn_map[np.ndarray] = collate_numpy_array_fn
default_collate_fn_map[(np.bool_, np.number, np.object_)] = collate_numpy_scalar_fn
default_collate_fn_map[float] = collate_float_fn
default_collate_fn_map[int] = collate_int_fn
default_collate_fn_map[str] = collate_str_fn
default_collate_fn_map[bytes] = collate_str_fn


def default_collate(batch):
    """Stack a list of samples into a batch, like ``torch.utils.data.default_collate``.

    Example:
        >>> import ember
        >>> from ember.utils.data import default_collate
        >>> default_collate([{"x": ember.tensor([1.0, 2.0]), "y": 0},
        ...                  {"x": ember.tensor([3.0, 4.0]), "y": 1}])
        {'x': tensor([[1., 2.],
                [3., 4.]]), 'y': tensor([0, 1])}
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
