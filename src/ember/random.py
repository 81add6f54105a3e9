"""``torch.random``: the default generator's seeding and state, and ``fork_rng``.

Example:
    >>> import ember
    >>> with ember.random.fork_rng():
    ...     _ = ember.manual_seed(0)
    ...     a = ember.rand(1)
    >>> ember.manual_seed(0) is not None and bool((ember.rand(1) == a).all())
    True
"""

from __future__ import annotations

import contextlib

from ._creation import (  # noqa: F401  (torch.random's names)
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

__all__ = [
    "Generator",
    "default_generator",
    "fork_rng",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "seed",
    "set_rng_state",
]


@contextlib.contextmanager
def fork_rng(
    devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"
):
    """Restore the default generator's state when the block ends (no CUDA state to fork)."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
