"""``torch.multiprocessing.spawn``: run ``fn(i, *args)`` in ``nprocs`` processes.

Example:
    >>> import ember.multiprocessing as mp
    >>> callable(mp.spawn)
    True
"""

from __future__ import annotations

import multiprocessing
import traceback

__all__ = [
    "ProcessContext",
    "ProcessExitedException",
    "ProcessRaisedException",
    "spawn",
    "start_processes",
]


class ProcessException(Exception):
    def __init__(self, msg: str, error_index: int, pid: int) -> None:
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised: the message carries its traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero code (killed by a signal, os._exit, ...)."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        args = (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)
        return type(self), args


def _wrap(fn, i, args, error_queue) -> None:
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        error_queue.put(traceback.format_exc())
        raise SystemExit(1) from None


class ProcessContext:
    """The spawned processes; ``join()`` waits for them and raises the first failure."""

    def __init__(self, processes, error_queues) -> None:
        self.processes = processes
        self.error_queues = error_queues

    def pids(self) -> list:
        return [p.pid for p in self.processes]

    def join(self, timeout=None) -> bool:
        """Wait for every process; True when all finished. Raises on the first failure."""
        for p in self.processes:
            p.join(timeout)
        for i, (p, q) in enumerate(zip(self.processes, self.error_queues)):
            if p.exitcode not in (0, None):
                for other in self.processes:
                    if other.is_alive():
                        other.terminate()
                if not q.empty():
                    msg = f"\n\n-- Process {i} terminated with the following error:\n" + q.get()
                    raise ProcessRaisedException(msg, i, p.pid)
                raise ProcessExitedException(
                    f"process {i} terminated with exit code {p.exitcode}", i, p.pid, p.exitcode
                )
        return all(p.exitcode is not None for p in self.processes)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start ``nprocs`` processes running ``fn(i, *args)`` with ``start_method``."""
    ctx = multiprocessing.get_context(start_method)
    processes, queues = [], []
    for i in range(nprocs):
        q = ctx.SimpleQueue()
        p = ctx.Process(target=_wrap, args=(fn, i, args, q), daemon=daemon)
        p.start()
        processes.append(p)
        queues.append(q)
    context = ProcessContext(processes, queues)
    if not join:
        return context
    context.join()
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """``start_processes`` with the ``spawn`` start method, as torch."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
