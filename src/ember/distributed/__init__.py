"""``torch.distributed``: importable, with torch's answers for a program that has not
started a process group. ember's data-parallel training over MPI is not built yet, so
``is_available()`` is False and programs take their single-process path.

Example:
    >>> import ember
    >>> ember.distributed.is_available(), ember.distributed.is_initialized()
    (False, False)
"""

from __future__ import annotations

__all__ = [
    "get_rank",
    "get_world_size",
    "init_process_group",
    "is_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "is_gloo_available",
]

_NO_GROUP = (
    "Default process group has not been initialized, please make sure to call init_process_group."
)


def is_available() -> bool:
    """False until ember's MPI backend lands."""
    return False


def is_initialized() -> bool:
    return False


def is_mpi_available() -> bool:
    return False


def is_nccl_available() -> bool:
    return False


def is_gloo_available() -> bool:
    return False


def get_rank(group=None) -> int:
    raise ValueError(_NO_GROUP)


def get_world_size(group=None) -> int:
    raise ValueError(_NO_GROUP)


def init_process_group(*args, **kwargs) -> None:
    """Refused: no distributed backend is available in this version of ember."""
    raise RuntimeError("ember.distributed is not available: no process group can be started")
