"""``torch.jit.annotations``: TorchScript's annotation helpers. ``BroadcastingList2[int]``
marks a parameter that takes an int or a list of two ints (TorchScript broadcasts a single
value); in Python the subscription means nothing, as in torch (it gives None).

Example:
    >>> from ember.jit.annotations import BroadcastingList2
    >>> def pool(size: BroadcastingList2[int]): ...
    >>> BroadcastingList2[int] is None
    True
"""

from __future__ import annotations

from typing import List  # noqa: UP035 (torch's module re-exports typing's List)

__all__ = ["BroadcastingList1", "BroadcastingList2", "BroadcastingList3", "List"]


class _BroadcastingList:
    """``BroadcastingListN[T]``: for TorchScript's compiler only; None in Python."""

    def __getitem__(self, types) -> None:
        return None


BroadcastingList1 = BroadcastingList2 = BroadcastingList3 = _BroadcastingList()
