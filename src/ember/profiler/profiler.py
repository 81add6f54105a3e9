"""``torch.profiler.profile``: the profiler with activities, schedules and steps.

A schedule splits a training loop's steps (``prof.step()``) into cycles of ``wait`` steps
(not recorded), ``warmup`` steps (not recorded here: there is no tracer to warm up) and
``active`` steps (recorded); at the end of each active span ``on_trace_ready(prof)`` is
called, and ``prof.key_averages()``/``prof.events()`` describe that span.

Example:
    >>> import ember as torch
    >>> from ember.profiler import profile, schedule
    >>> x = torch.ones(3, requires_grad=True)
    >>> seen = []
    >>> with profile(schedule=schedule(wait=1, warmup=1, active=2),
    ...              on_trace_ready=lambda p: seen.append(len(p.events()))) as prof:
    ...     for _ in range(4):
    ...         (x * 2).sum().backward()
    ...         prof.step()
    >>> len(seen)
    1
"""

from __future__ import annotations

import enum
import os
import socket
import time

from ..autograd import profiler as _core

__all__ = [
    "ProfilerAction",
    "ProfilerActivity",
    "profile",
    "schedule",
    "supported_activities",
    "tensorboard_trace_handler",
]


class ProfilerActivity(enum.Enum):
    """What to profile: ``CPU`` is all there is on NumPy (``CUDA`` is accepted, empty).

    Example:
        >>> import ember
        >>> from ember.profiler import ProfilerActivity, profile
        >>> with profile(activities=[ProfilerActivity.CPU]) as prof:
        ...     _ = ember.ones(2) + 1
        >>> "aten::add" in [e.key for e in prof.key_averages()]
        True
    """

    CPU = 0
    CUDA = 2
    XPU = 3
    MTIA = 4
    PrivateUse1 = 5


def supported_activities() -> set:
    """The ``ProfilerActivity`` values this build can record: the CPU only.

    Example:
        >>> from ember.profiler import supported_activities
        >>> supported_activities()
        {<ProfilerActivity.CPU: 0>}
    """
    return {ProfilerActivity.CPU}


class ProfilerAction(enum.Enum):
    """What a ``schedule`` tells the profiler to do at a step (skip, warm up, record, or
    record and hand the trace to ``on_trace_ready``).

    Example:
        >>> from ember.profiler import ProfilerAction, schedule
        >>> s = schedule(wait=1, warmup=0, active=1)
        >>> s(0) is ProfilerAction.NONE, s(1) is ProfilerAction.RECORD_AND_SAVE
        (True, True)
    """

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(
    *,
    wait: int,
    warmup: int,
    active: int,
    repeat: int = 0,
    skip_first: int = 0,
    skip_first_wait: int = 0,
):
    """torch's profiling schedule: a function from step number to ``ProfilerAction``.

    Example:
        >>> from ember.profiler import schedule
        >>> s = schedule(wait=1, warmup=1, active=2, repeat=1)
        >>> [s(i).name for i in range(5)]
        ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE', 'NONE']
    """
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError("Invalid profiler schedule arguments")

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise ValueError("Step must be non-negative")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        num_steps = wait + warmup + active
        if skip_first_wait and step >= wait:
            step -= wait  # only the first cycle waits
            num_steps -= wait
            cycle_wait = 0
        else:
            cycle_wait = wait
        if repeat > 0 and step // num_steps >= repeat:
            return ProfilerAction.NONE
        mod = step % num_steps
        if mod < cycle_wait:
            return ProfilerAction.NONE
        if mod < cycle_wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod < num_steps - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _default_schedule(_step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None, use_gzip=False):
    """An ``on_trace_ready`` that writes each trace into ``dir_name`` (Chrome JSON), as
    ``<worker_name>.<milliseconds>.pt.trace.json``.

    Example:
        >>> import ember, os, tempfile
        >>> from ember.profiler import profile, tensorboard_trace_handler
        >>> with tempfile.TemporaryDirectory() as d:
        ...     with profile(on_trace_ready=tensorboard_trace_handler(d, worker_name="w")):
        ...         _ = ember.ones(2) * 2
        ...     [f.endswith(".pt.trace.json") for f in os.listdir(d)]
        [True]
    """

    def handler(prof) -> None:
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        prof.export_chrome_trace(
            os.path.join(dir_name, f"{name}.{time.time_ns() // 1_000_000}.pt.trace.json")
        )

    return handler


class profile:
    """Profile a block: forward ops (``aten::...``), backward nodes and labelled ranges.

    Args:
        activities: ``[ProfilerActivity.CPU]`` (the default).
        schedule: a ``schedule(...)`` deciding which ``step()``s are recorded; default: all.
        on_trace_ready: called with the profiler at the end of each recorded span.
        record_shapes: record input shapes (``key_averages(group_by_input_shape=True)``).
        profile_memory: record the bytes of the arrays each op returns.
        with_stack: accepted; source locations are not recorded.

    Example:
        >>> import ember as torch
        >>> from ember.profiler import profile
        >>> x = torch.ones(2, 2, requires_grad=True)
        >>> with profile(record_shapes=True, profile_memory=True) as prof:
        ...     (x * 3).mean().backward()
        >>> "aten::mul" in prof.key_averages().table(sort_by="cpu_time_total")
        True
    """

    def __init__(
        self,
        *,
        activities=None,
        schedule=None,
        on_trace_ready=None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
        experimental_config=None,
        execution_trace_observer=None,
        acc_events: bool = False,
        use_cuda=None,
        custom_trace_id_callback=None,
    ) -> None:
        self.activities = set(activities) if activities else supported_activities()
        self.schedule = schedule if schedule is not None else _default_schedule
        self.record_steps = schedule is not None  # torch labels steps only when scheduled
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._recorder = None
        self._step_range = None
        self._events = None
        self.profiler = None  # torch keeps the legacy profiler here; so do we, when done

    # -- recording ---------------------------------------------------------------------

    def _recording(self, action) -> bool:
        return action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)

    def _begin(self) -> None:
        self._recorder = _core._Recorder(self.record_shapes, self.profile_memory)
        _core._start(self._recorder)
        self._open_step()

    def _open_step(self) -> None:
        if self._recorder is not None and self.record_steps:
            self._step_range = _core.record_function(f"ProfilerStep#{self.step_num}")
            self._step_range.__enter__()

    def _close_step(self) -> None:
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
            self._step_range = None

    def _finish(self) -> None:
        """Stop recording; the span recorded becomes ``events()``; call on_trace_ready."""
        if self._recorder is None:
            return
        self._close_step()
        _core._stop(self._recorder)
        self._events = _core.EventList(self._recorder.events, profile_memory=self.profile_memory)
        self._recorder = None
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def start(self) -> None:
        if self._recording(self.current_action):
            self._begin()

    def stop(self) -> None:
        self._finish()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def step(self) -> None:
        """Mark the end of a training step; the schedule decides what is recorded next."""
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._close_step()
        if prev == ProfilerAction.RECORD_AND_SAVE or (
            self._recorder is not None and not self._recording(self.current_action)
        ):
            self._finish()
        if self._recording(self.current_action):
            if self._recorder is None:
                self._begin()
            else:
                self._open_step()

    # -- results --------------------------------------------------------------------------

    def events(self):
        if self._events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self._events

    def key_averages(
        self,
        group_by_input_shape: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ):
        """Events grouped by name (and input shapes): ``.table(sort_by=..., row_limit=...)``."""
        return self.events().key_averages(group_by_input_shape)

    def export_chrome_trace(self, path: str) -> None:
        """Write a Chrome trace (JSON) that chrome://tracing and Perfetto open."""
        self.events().export_chrome_trace(path)
