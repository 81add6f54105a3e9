"""``torch.nn.modules.utils``: the argument helpers layers and libraries share (``_pair``
turns ``3`` into ``(3, 3)`` and keeps ``(3, 5)``), and the prefix stripping that lets a
model load a state dict saved from a ``DataParallel`` / ``DistributedDataParallel`` wrapper.

Example:
    >>> from ember.nn.modules.utils import _pair, _triple
    >>> _pair(3), _pair((3, 5)), _triple(1)
    ((3, 3), (3, 5), (1, 1, 1))
"""

from __future__ import annotations

import collections.abc
from collections.abc import Callable
from typing import Any

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n: int, name: str = "parse") -> Callable[[Any], tuple]:
    """A parser: an iterable becomes a tuple, anything else is repeated ``n`` times."""

    def parse(x) -> tuple:
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return (x,) * n

    parse.__name__ = name
    return parse


def _tuple_of(x, n: int) -> tuple:
    """``x`` as an ``n``-tuple: what ``_single`` / ``_pair`` / ``_triple`` do, for a count
    known only at run time (the layers' size arguments)."""
    return _ntuple(n)(x)


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n: int) -> tuple:
    """``t`` reversed with each element repeated ``n`` times: a layer's per-dimension
    padding as ``F.pad`` takes it (last dimension first, both sides)."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """An output size with its ``None`` entries taken from the input's trailing sizes
    ``defaults`` (adaptive pooling's ``output_size``)."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size) :])]


def consume_prefix_in_state_dict_if_present(state_dict: dict[str, Any], prefix: str) -> None:
    """Strip ``prefix`` from the keys of ``state_dict`` (and of its ``_metadata``) in place,
    so that a plain model loads what a wrapped one saved.

    Example:
        >>> from collections import OrderedDict
        >>> from ember.nn.modules.utils import consume_prefix_in_state_dict_if_present
        >>> sd = OrderedDict([("module.weight", 1), ("bias", 2)])
        >>> consume_prefix_in_state_dict_if_present(sd, "module.")
        >>> list(sd)
        ['bias', 'weight']
    """
    for key in list(state_dict):
        if key.startswith(prefix):
            state_dict[key[len(prefix) :]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        for key in list(metadata):
            # "" is the wrapper's own entry, kept; "module" (the prefix without its dot) and
            # "module.x" name the wrapped model's parts
            if key and (key == prefix.replace(".", "") or key.startswith(prefix)):
                metadata[key[len(prefix) :]] = metadata.pop(key)
