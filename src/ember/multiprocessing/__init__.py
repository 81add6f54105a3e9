"""``torch.multiprocessing``: the standard library's ``multiprocessing`` (torch re-exports
it), with torch's ``spawn``/``start_processes`` and sharing-strategy names. ember tensors are
NumPy arrays and pickle as such between processes.

Example:
    >>> import ember.multiprocessing as mp
    >>> mp.get_sharing_strategy()
    'file_system'
"""

from __future__ import annotations

import multiprocessing as _mp
from multiprocessing import *  # noqa: F403  (torch.multiprocessing re-exports it)

from .spawn import (  # noqa: F401
    ProcessContext,
    ProcessExitedException,
    ProcessRaisedException,
    spawn,
    start_processes,
)

__all__ = _mp.__all__ + [
    "ProcessContext",
    "ProcessExitedException",
    "ProcessRaisedException",
    "get_all_sharing_strategies",
    "get_sharing_strategy",
    "set_sharing_strategy",
    "spawn",
    "start_processes",
]

_STRATEGIES = {"file_system"}  # ember shares arrays by pickling them: nothing to choose
_strategy = ["file_system"]


def get_all_sharing_strategies() -> set:
    return set(_STRATEGIES)


def get_sharing_strategy() -> str:
    return _strategy[0]


def set_sharing_strategy(new_strategy: str) -> None:
    if new_strategy not in _STRATEGIES and new_strategy != "file_descriptor":
        raise AssertionError
    _strategy[0] = new_strategy
