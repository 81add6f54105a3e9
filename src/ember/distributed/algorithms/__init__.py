"""``torch.distributed.algorithms``: the generic join context manager for uneven inputs.

Example:
    >>> from ember.distributed.algorithms import Join
    >>> try:
    ...     Join([])
    ... except ValueError as e:
    ...     print(e)
    The join context manager requires at least one joinable
"""

from .join import Join, Joinable, JoinHook

__all__ = ["Join", "JoinHook", "Joinable"]
