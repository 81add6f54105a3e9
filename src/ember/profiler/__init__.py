"""ember.profiler: torch.profiler's API (``profile``, ``record_function``, ``schedule``).

Example:
    >>> import ember as torch
    >>> from ember.profiler import ProfilerActivity, profile, record_function
    >>> x = torch.ones(8, 8, requires_grad=True)
    >>> with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
    ...     with record_function("model"):
    ...         loss = (x @ x).sum()
    ...     loss.backward()
    >>> print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=5))  # doctest: +SKIP
"""

from . import _ops  # noqa: F401  (registers the mode that times ops while profiling)
from .profiler import (
    ProfilerAction,
    ProfilerActivity,
    profile,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)
from ..autograd.profiler import record_function

__all__ = [
    "ProfilerAction",
    "ProfilerActivity",
    "kineto_available",
    "profile",
    "record_function",
    "schedule",
    "supported_activities",
    "tensorboard_trace_handler",
]


def kineto_available() -> bool:
    """Whether torch's profiler runs on the Kineto library: False, ember's profiler is its
    own (``profile`` records ember's ops on the CPU).

    Example:
        >>> import ember
        >>> ember.profiler.kineto_available()
        False
    """
    return False
