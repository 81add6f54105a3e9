"""The profiler's core and torch's legacy API (``torch.autograd.profiler``).

What is timed:

- forward ops, by name as torch prints them (``aten::mul``): while a profiler runs, its
  thread has a ``TorchFunctionMode`` (``ember.profiler``'s, registered here with
  ``register_op_mode``: this layer knows no op) that times each public function, method
  and operator called and each ``ember.ops`` op. Nothing in the package is replaced, and
  nothing is timed when no profiler runs. Ops that an op calls through public names are
  its children (torch's nesting), when no other mode or ``__torch_function__`` override is
  involved in the call;
- backward nodes, through the engine's observer hook, under torch's two names:
  ``autograd::engine::evaluate_function: MulBackward0`` wrapping ``MulBackward0`` (and
  ``torch::autograd::AccumulateGrad`` for leaves);
- ``record_function("label")`` ranges (through ``ember.ops.profiler``'s record-function
  ops, as torch's).

A profiler records its own thread only, as torch's: another thread's ops and backward
passes are not in it (each thread may run its own profiler).

Memory columns count the bytes of the arrays each op returns (its outputs): an op's
"Self CPU Mem" is its outputs not returned by an op it called, "CPU Mem" adds its children's.

Example:
    >>> import ember as torch
    >>> import ember.profiler
    >>> x = torch.ones(2, 2, requires_grad=True)
    >>> with torch.autograd.profiler.profile() as prof:
    ...     (x * 2).sum().backward()
    >>> sorted({e.name for e in prof.function_events})  # doctest: +NORMALIZE_WHITESPACE
    ['MulBackward0', 'SumBackward0', 'aten::mul', 'aten::sum',
     'autograd::engine::evaluate_function: MulBackward0',
     'autograd::engine::evaluate_function: SumBackward0',
     'autograd::engine::evaluate_function: torch::autograd::AccumulateGrad',
     'torch::autograd::AccumulateGrad']
"""

from __future__ import annotations

import functools
import json
import os
import threading
import time

import numpy as np

from .. import _overrides
from .._tensor import Tensor
from . import engine

__all__ = [
    "profile",
    "record_function",
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
    "register_op_mode",
    "emit_nvtx",
]


class _Local(threading.local):
    # the recorder of this thread's profiler (stopped if stopped from another thread)
    recorder = None


_local = _Local()
# The factory of the TorchFunctionMode that times ops (``mode_factory(recorder)``); set by
# ``ember.profiler`` when it loads.
_op_mode: list = []
# How many profilers run (all threads) while the engine's observer is installed.
_running = [0]
_running_lock = threading.Lock()


def register_op_mode(factory) -> None:
    """Give the profiler the ``TorchFunctionMode`` factory (``factory(recorder)``) whose
    mode it pushes on the profiled thread to time the ops called there (``ember.profiler``
    registers its ``ProfilerMode`` when it loads).

    Example:
        >>> import ember.profiler
        >>> from ember.autograd import profiler
        >>> profiler._op_mode == [ember.profiler._ops.ProfilerMode]
        True
    """
    _op_mode[:] = [factory]


def _now_us() -> float:
    return time.perf_counter_ns() / 1000.0


def _nbytes(out) -> dict:
    """``{id(array): bytes}`` of the arrays in an op's result (Tensors, arrays, tuples)."""
    found: dict = {}
    stack = [out]
    while stack:
        x = stack.pop()
        if isinstance(x, Tensor):
            found[id(x._data)] = x._data.nbytes
        elif isinstance(x, np.ndarray):
            found[id(x)] = x.nbytes
        elif isinstance(x, (tuple, list)):
            stack.extend(x)
    return found


def _shape_of(x) -> list:
    if isinstance(x, Tensor):
        return list(x._data.shape)
    if isinstance(x, np.ndarray):
        return list(x.shape)
    return []


class FunctionEvent:
    """One timed call: an op, a backward node or a ``record_function`` range.

    Times are in microseconds; memory in bytes of the arrays returned.
    """

    def __init__(self, id, name, thread, start_us, input_shapes=None, is_user_annotation=False):
        self.id = id
        self.name = name
        self.thread = thread
        self.time_range_start = start_us
        self.time_range_end = start_us
        self.input_shapes = input_shapes
        self.is_user_annotation = is_user_annotation
        self.cpu_children: list = []
        self.cpu_parent = None
        self.own_memory: dict = {}
        self.count = 1

    @property
    def key(self) -> str:
        return self.name

    @property
    def cpu_time_total(self) -> float:
        return self.time_range_end - self.time_range_start

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total

    @property
    def self_cpu_memory_usage(self) -> int:
        child = set()
        for c in self.cpu_children:
            child.update(c.own_memory)
        return sum(n for k, n in self.own_memory.items() if k not in child)

    @property
    def cpu_memory_usage(self) -> int:
        return self.self_cpu_memory_usage + sum(c.cpu_memory_usage for c in self.cpu_children)

    def __repr__(self) -> str:
        return (
            f"<FunctionEvent id={self.id} name={self.name} cpu_time={_format_time(self.cpu_time)}"
            f" input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage}>"
        )


class _Recorder:
    """Collects events while a profiler is on; also the engine's node observer."""

    def __init__(self, record_shapes: bool, profile_memory: bool) -> None:
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.events: list = []
        self.open: list = []  # the stack of events begun and not yet ended
        self.nodes: list = []  # (outer, inner) events of the backward nodes running
        self.thread = threading.get_ident()
        self.running = False
        self.mode = None  # the op-timing mode pushed on the thread's mode stack
        self.mode_stack = None  # that stack (removed from it when profiling stops)

    def begin(self, name: str, args=None, user: bool = False) -> FunctionEvent:
        shapes = None
        if self.record_shapes:
            shapes = [_shape_of(a) for a in args] if args is not None else []
        ev = FunctionEvent(len(self.events), name, self.thread, 0.0, shapes, user)
        if self.open:
            ev.cpu_parent = self.open[-1]
            ev.cpu_parent.cpu_children.append(ev)
        self.events.append(ev)
        self.open.append(ev)
        ev.time_range_start = _now_us()
        return ev

    def end(self, ev: FunctionEvent, out=None) -> None:
        ev.time_range_end = _now_us()
        if self.profile_memory and out is not None:
            ev.own_memory = _nbytes(out)
        # Pop it (and anything left open inside it by an exception).
        while self.open:
            if self.open.pop() is ev:
                break

    # -- engine observer: brackets each backward node's run --------------------------------

    def enter(self, node) -> None:
        name = node.name()
        outer = self.begin("autograd::engine::evaluate_function: " + name)
        self.nodes.append((outer, self.begin(name)))

    def exit(self, node, results) -> None:
        if self.nodes:  # (none when profiling began inside this node)
            outer, inner = self.nodes.pop()
            self.end(inner, results)
            self.end(outer)


class _EngineObserver:
    """The engine's node observer while any profiler runs: each node run is recorded by
    the profiler of the thread that runs it, if that thread has one."""

    def enter(self, node) -> None:
        rec = _local.recorder
        if rec is not None and rec.running:
            rec.enter(node)

    def exit(self, node, results) -> None:
        rec = _local.recorder
        if rec is not None and rec.running:
            rec.exit(node, results)


_OBSERVER = _EngineObserver()


def _start(recorder: _Recorder) -> None:
    if _local.recorder is not None and _local.recorder.running:
        raise RuntimeError("Profiler is already enabled on this thread")
    _local.recorder = recorder
    recorder.running = True
    with _running_lock:
        _running[0] += 1
        engine._observer[:] = [_OBSERVER]
    if _op_mode:
        # pushed as TorchFunctionMode.__enter__ pushes (the thread's stack, the count of
        # modes entered), and removed from that stack by _stop even if other modes were
        # entered after it
        recorder.mode = _op_mode[0](recorder)
        recorder.mode_stack = _overrides.state.modes
        recorder.mode_stack.append(recorder.mode)
        _overrides.count_modes(+1)


def _stop(recorder: _Recorder) -> None:
    recorder.running = False
    stack, mode = recorder.mode_stack, recorder.mode
    if mode is not None:
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is mode:
                del stack[i]
                _overrides.count_modes(-1)
                break
        recorder.mode = recorder.mode_stack = None
    if _local.recorder is recorder:
        _local.recorder = None
    with _running_lock:
        _running[0] -= 1
        if _running[0] == 0:
            engine._observer.clear()
    now = _now_us()
    for ev in recorder.open:  # ranges still open when profiling stopped
        ev.time_range_end = now
    recorder.open.clear()
    recorder.nodes.clear()


class _RecordFunction:
    """The handle of one ``record_function`` range (torch's
    ``torch.classes.profiler._RecordFunction``): the recorder and event, or None when no
    profiler ran on the thread."""

    __slots__ = ("recorder", "event")

    def __init__(self, recorder, event) -> None:
        self.recorder = recorder
        self.event = event


def _record_function_enter_new(name: str, args: str | None = None) -> _RecordFunction:
    """Begin a labelled range on this thread's profiler (torch's
    ``torch.ops.profiler._record_function_enter_new``); returns its handle.

    Example:
        >>> from ember.autograd import profiler
        >>> with profiler.profile() as prof:
        ...     handle = profiler._record_function_enter_new("step")
        ...     profiler._record_function_exit(handle)
        >>> [e.name for e in prof.function_events]
        ['step']
    """
    rec = _local.recorder
    if rec is None or not rec.running:
        return _RecordFunction(None, None)
    return _RecordFunction(rec, rec.begin(name, user=True))


def _record_function_exit(record: _RecordFunction) -> None:
    """End the range ``record`` began (torch's ``_record_function_exit``); nothing if its
    profiler has stopped since."""
    rec = record.recorder
    if rec is not None and rec.running and record.event is not None:
        rec.end(record.event)
    record.recorder = record.event = None


_overrides.plain_type(_RecordFunction)  # never overrides __torch_function__

# How record_function enters and leaves its range: through ember.ops.profiler's ops (as
# torch's calls torch.ops.profiler's, so that modes see them), which ember.ops sets when
# it loads; these functions until then.
_range_ops: list = [_record_function_enter_new, _record_function_exit]


def _observed() -> bool:
    """Is a mode other than this thread's profiler's on the thread's stack (one that would
    see the record-function ops)? If not, calling the ops' functions directly is the same
    call, without the dispatch."""
    if not _overrides.MODES[0]:
        return False
    modes = _overrides.state.modes
    if not modes:
        return False
    rec = _local.recorder
    return len(modes) > 1 or rec is None or modes[0] is not rec.mode


class record_function:
    """Label a block (or a function, as a decorator) so it appears in the profile.

    Enters and leaves through ``ember.ops.profiler._record_function_enter_new`` and
    ``_record_function_exit`` as torch's does (a mode sees the two calls); with no profiler
    running on the thread they do nothing else.

    Example:
        >>> import ember as torch
        >>> from ember.autograd.profiler import profile, record_function
        >>> with profile() as prof:
        ...     with record_function("my_block"):
        ...         y = torch.ones(3) * 2
        >>> [e.name for e in prof.function_events if e.is_user_annotation]
        ['my_block']
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self.record = None

    def __enter__(self):
        enter = _range_ops[0] if _observed() else _record_function_enter_new
        self.record = enter(self.name, self.args)
        return self

    def __exit__(self, *exc) -> None:
        record, self.record = self.record, None
        if record is None:
            raise AssertionError("Expected record to be set")  # torch's
        # (torch disables subclass dispatch for this call: the handle never overrides)
        (_range_ops[1] if _observed() else _record_function_exit)(record)

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return func(*args, **kwargs)

        return wrapper


class profile:
    """torch's legacy profiler: a context manager recording ops and backward nodes.

    Args:
        enabled: False makes the block a no-op.
        use_cuda: accepted for compatibility; there is no device time on NumPy.
        record_shapes: record the shapes of each op's inputs (``Input Shapes`` column).
        profile_memory: record the bytes each op returns (``CPU Mem`` columns).
        with_stack: accepted; source locations are not recorded.

    Example:
        >>> import ember as torch
        >>> x = torch.ones(4)
        >>> with torch.autograd.profiler.profile(record_shapes=True) as prof:
        ...     y = torch.add(x, 1)
        >>> print(prof.key_averages().table(row_limit=1))  # doctest: +SKIP
    """

    def __init__(
        self,
        enabled: bool = True,
        *,
        use_cuda: bool = False,
        use_device=None,
        record_shapes: bool = False,
        with_flops: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_modules: bool = False,
        use_kineto: bool = False,
        use_cpu: bool = True,
        experimental_config=None,
        acc_events: bool = False,
        custom_trace_id_callback=None,
    ) -> None:
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self._recorder = None
        self._events = None

    def __enter__(self):
        if self.enabled:
            self._recorder = _Recorder(self.record_shapes, self.profile_memory)
            _start(self._recorder)
        return self

    def __exit__(self, *exc) -> None:
        if self._recorder is not None:
            _stop(self._recorder)
            self._events = EventList(self._recorder.events, profile_memory=self.profile_memory)
            self._recorder = None

    def _check_finished(self) -> EventList:
        if self._events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self._events

    @property
    def function_events(self) -> EventList:
        return self._check_finished()

    def events(self) -> EventList:
        return self._check_finished()

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0):
        return self._check_finished().key_averages(group_by_input_shape)

    def table(self, sort_by=None, row_limit: int = 100, **kwargs) -> str:
        return self._check_finished().table(sort_by=sort_by, row_limit=row_limit, **kwargs)

    def export_chrome_trace(self, path: str) -> None:
        self._check_finished().export_chrome_trace(path)

    def total_average(self):
        return self._check_finished().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        return self._check_finished().self_cpu_time_total

    def __str__(self) -> str:
        return self.table()


class FunctionEventAvg:
    """The events of one name (and input shapes, when grouped by them), summed."""

    def __init__(self, key: str, input_shapes=None) -> None:
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.is_user_annotation = False
        self.cpu_parent = None

    def add(self, ev) -> FunctionEventAvg:
        self.count += ev.count
        self.cpu_time_total += ev.cpu_time_total
        self.self_cpu_time_total += ev.self_cpu_time_total
        self.cpu_memory_usage += ev.cpu_memory_usage
        self.self_cpu_memory_usage += ev.self_cpu_memory_usage
        self.is_user_annotation = ev.is_user_annotation
        if self.input_shapes is None:
            self.input_shapes = ev.input_shapes
        return self

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self) -> str:
        return (
            f"<FunctionEventAvg key={self.key} "
            f"self_cpu_time={_format_time(self.self_cpu_time_total)}"
            f" cpu_time={_format_time(self.cpu_time)} input_shapes={self.input_shapes}"
            f" cpu_memory_usage={self.cpu_memory_usage}>"
        )


class EventList(list):
    """A list of events, with torch's summaries: ``key_averages``, ``table``, traces."""

    def __init__(self, *args, profile_memory: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._profile_memory = profile_memory

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0):
        """One row per op name (and per input shapes when ``group_by_input_shape``)."""
        groups: dict = {}
        for ev in self:
            key = (ev.key, str(ev.input_shapes)) if group_by_input_shape else ev.key
            avg = groups.get(key)
            if avg is None:
                groups[key] = avg = FunctionEventAvg(ev.key, ev.input_shapes)
            avg.add(ev)
        return EventList(groups.values(), profile_memory=self._profile_memory)

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total")
        for ev in self:
            total.add(ev)
        return total

    def table(
        self,
        sort_by=None,
        row_limit: int = 100,
        max_src_column_width: int = 75,
        max_name_column_width: int = 55,
        max_shapes_column_width: int = 80,
        header=None,
        top_level_events_only: bool = False,
        time_unit=None,
    ) -> str:
        """torch's table: one row per event, sorted by ``sort_by`` (e.g.
        ``"cpu_time_total"``), at most ``row_limit`` rows."""
        return _build_table(
            self,
            sort_by=sort_by,
            row_limit=row_limit,
            header=header,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width,
            profile_memory=self._profile_memory,
            top_level_events_only=top_level_events_only,
            time_unit=time_unit,
        )

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome/Perfetto trace (JSON, one complete event each)."""
        pid = os.getpid()
        trace = []
        for ev in self:
            if not isinstance(ev, FunctionEvent):
                continue
            args = {"External id": ev.id}
            if ev.input_shapes is not None:
                args["Input Dims"] = ev.input_shapes
            trace.append(
                {
                    "ph": "X",
                    "cat": "user_annotation" if ev.is_user_annotation else "cpu_op",
                    "name": ev.name,
                    "pid": pid,
                    "tid": ev.thread,
                    "ts": ev.time_range_start,
                    "dur": ev.cpu_time_total,
                    "args": args,
                }
            )
        with open(path, "w") as f:
            json.dump(
                {"schemaVersion": 1, "traceEvents": trace, "displayTimeUnit": "ms"}, f, indent=1
            )

    def __str__(self) -> str:
        return self.table()


# -- torch's table --------------------------------------------------------------------------


def _format_time(time_us: float) -> str:
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us: float, total_us: float) -> str:
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


def _format_memory(nbytes: int) -> str:
    kb = 1024
    mb = 1024 * kb
    gb = 1024 * mb
    if abs(nbytes) >= gb:
        return f"{nbytes * 1.0 / gb:.2f} GB"
    if abs(nbytes) >= mb:
        return f"{nbytes * 1.0 / mb:.2f} MB"
    if abs(nbytes) >= kb:
        return f"{nbytes * 1.0 / kb:.2f} KB"
    return str(nbytes) + " B"


def _sort_key(sort_by: str):
    attr = sort_by.replace("cuda", "cpu").replace("device", "cpu")
    return lambda evt: getattr(evt, attr)


def _build_table(
    events,
    sort_by=None,
    header=None,
    row_limit=100,
    max_name_column_width=55,
    max_shapes_column_width=80,
    profile_memory=False,
    top_level_events_only=False,
    time_unit=None,
) -> str:
    if len(events) == 0:
        return ""
    if sort_by is not None:
        events = sorted(events, key=_sort_key(sort_by), reverse=True)
    has_input_shapes = any(e.input_shapes is not None and len(e.input_shapes) > 0 for e in events)
    name_width = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    shapes_width = max(len(str(e.input_shapes)) for e in events) + 4
    if max_shapes_column_width is not None:
        shapes_width = min(shapes_width, max_shapes_column_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [name_width] + [12] * (len(headers) - 1)
    if has_input_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
    row_format = "".join("{: >" + str(w) + "}  " for w in widths)
    header_sep = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2

    def fmt_time(t: float) -> str:
        if time_unit == "s":
            return f"{t / 1e6:.3f}s"
        if time_unit == "ms":
            return f"{t / 1e3:.3f}ms"
        if time_unit == "us":
            return f"{t:.3f}us"
        return _format_time(t)

    result = []

    def append(s: str) -> None:
        result.append(s)
        result.append("\n")

    total = sum(e.self_cpu_time_total for e in events)
    if header is not None:
        append("=" * line_length)
        append(header)
    if top_level_events_only:
        append("=" * line_length)
        append("This report only display top-level ops statistics")
    append(header_sep)
    append(row_format.format(*headers))
    append(header_sep)
    shown = 0
    for evt in events:
        if shown == row_limit:
            break
        if top_level_events_only and evt.cpu_parent is not None:
            continue
        shown += 1
        name = evt.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[: (max_name_column_width - 3)] + "..."
        row = [
            name,
            _format_time_share(evt.self_cpu_time_total, total),
            fmt_time(evt.self_cpu_time_total),
            _format_time_share(evt.cpu_time_total, total),
            fmt_time(evt.cpu_time_total),
            fmt_time(evt.cpu_time),
        ]
        if profile_memory:
            row += [_format_memory(evt.cpu_memory_usage), _format_memory(evt.self_cpu_memory_usage)]
        row.append(evt.count)
        if has_input_shapes:
            row.append(str(evt.input_shapes)[:shapes_width])
        append(row_format.format(*row))
    append(header_sep)
    append(f"Self CPU time total: {fmt_time(total)}")
    return "".join(result)


class emit_nvtx:  # noqa: N801 - torch's name
    """Annotate each autograd op with an NVTX range for NVIDIA's profilers (torch's
    ``emit_nvtx``): it needs CUDA, so entering it enabled fails as on a CPU-only torch build;
    ``enabled=False`` makes it a no-op block.

    Example:
        >>> import ember
        >>> with ember.autograd.profiler.emit_nvtx(enabled=False):
        ...     _ = ember.ones(2) * 2
        >>> try:
        ...     ember.autograd.profiler.emit_nvtx().__enter__()
        ... except AssertionError as e:
        ...     print(e)
        Torch not compiled with CUDA enabled
    """

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes

    def __enter__(self) -> emit_nvtx | None:
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("NVTX annotation context manager is not reentrant")
        self.entered = True
        raise AssertionError("Torch not compiled with CUDA enabled")  # torch.cuda.synchronize()

    def __exit__(self, exc_type, exc_val, exc_tb) -> bool:
        return False
