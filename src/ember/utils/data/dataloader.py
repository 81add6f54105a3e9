"""``DataLoader``: iterate over a dataset in (optionally shuffled) collated batches.

With ``num_workers > 0`` the samples are loaded and collated in worker processes, as
torch's DataLoader does: each worker gets its own copy of the dataset, seeds ember's
generator, Python's ``random`` and NumPy's global generator from a base seed drawn once per
iterator, and sends collated batches back through a queue (tensors travel as pickled NumPy
arrays and are rebuilt in the main process); batches come out in the sampler's order.
Where processes cannot be started (WebAssembly), loading falls back to the main process
with a warning.
"""

from __future__ import annotations

import atexit
import itertools
import multiprocessing
import os
import queue
import random
import signal
import sys
import time
import traceback
from math import ceil
from typing import Generic

import numpy as np

from ... import _creation
from ..._overrides import warn as _warn
from ..._tensor import Tensor
from . import _collate
from .dataset import IterableDataset, TensorDataset, _T_co
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info"]

# How often (seconds) a process waiting on a queue checks that the other side is alive.
_POLL_INTERVAL = 0.1
# How long the main process waits for a worker to exit before terminating it (torch's
# MP_STATUS_CHECK_INTERVAL).
_JOIN_TIMEOUT = 5.0

_python_exiting = False


def _set_python_exiting() -> None:
    global _python_exiting
    _python_exiting = True


atexit.register(_set_python_exiting)


# -- in the worker --------------------------------------------------------------------------


class WorkerInfo:
    """What a DataLoader worker process knows about itself (see ``get_worker_info``).

    Attributes: ``id`` (0 to ``num_workers - 1``), ``num_workers``, ``seed`` (the seed
    this worker gave ember's generator and Python's ``random``), ``dataset`` (the worker's
    own copy of the dataset), and, as torch's, ``rng`` (``None``) and ``worker_method``
    (``"multiprocessing"``). Frozen.

    Example:
        >>> from ember.utils.data.dataloader import WorkerInfo
        >>> info = WorkerInfo(id=0, num_workers=2, seed=7, dataset=None)
        >>> info.num_workers, info.worker_method
        (2, 'multiprocessing')
    """

    __slots__ = ("id", "num_workers", "seed", "dataset", "rng", "worker_method")

    def __init__(
        self,
        id: int,  # noqa: A002 - torch's field name
        num_workers: int,
        seed: int,
        dataset,
        rng=None,
        worker_method: str | None = "multiprocessing",
    ) -> None:
        for key, val in zip(self.__slots__, (id, num_workers, seed, dataset, rng, worker_method)):
            object.__setattr__(self, key, val)

    def __setattr__(self, key, val) -> None:
        raise AttributeError(f"cannot assign to field {key!r}")  # frozen, as torch's

    def __repr__(self) -> str:
        fields = ", ".join(f"{key}={getattr(self, key)!r}" for key in self.__slots__)
        return f"WorkerInfo({fields})"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The ``WorkerInfo`` of the DataLoader worker process calling it; ``None`` in the main
    process.

    Useful in an ``IterableDataset.__iter__`` or a ``worker_init_fn`` to give each worker
    its own share of the data (``info.id`` of ``info.num_workers``), or to seed other
    libraries with ``info.seed``.

    Example:
        >>> from ember.utils.data import get_worker_info
        >>> get_worker_info() is None  # the main process
        True
    """
    return _worker_info


class _KeyErrorMessage(str):
    """A str whose repr is itself, so a KeyError's message shows its newlines."""

    def __repr__(self) -> str:
        return self


class _ExceptionWrapper:
    """An exception raised in a worker, carried to the main process as its type and text."""

    def __init__(self, where: str) -> None:
        exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exc = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        try:
            raise exc
        finally:  # no frame -> exception -> traceback -> frame cycle keeps the iterator alive
            del exc


class _IterableDatasetStopIteration:
    """A worker's IterableDataset copy is exhausted."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


class _ResumeIteration:
    """Persistent workers: start a new epoch (the worker acknowledges it)."""


def _numpy_seed(base_seed: int, worker_id: int) -> list:
    """The four 32-bit words torch seeds NumPy's global generator with in a worker (its
    ``_generate_state`` is NumPy's SeedSequence over these words)."""
    words = [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0]
    return np.random.SeedSequence(words).generate_state(4).tolist()


def _worker_loop(
    iterable,
    dataset,
    index_queue,
    data_queue,
    done_event,
    auto_collation,
    collate_fn,
    drop_last,
    base_seed,
    init_fn,
    worker_id,
    num_workers,
) -> None:
    """A worker process: fetch and collate the batches whose indices arrive on
    ``index_queue``, put ``(task index, batch or wrapped exception)`` on ``data_queue``;
    stop on ``None`` or when the main process is gone."""
    global _worker_info
    try:
        seed = base_seed + worker_id
        random.seed(seed)
        _creation.manual_seed(seed)
        np.random.seed(_numpy_seed(base_seed, worker_id))
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        fetcher_type = _IterableDatasetFetcher if iterable else _MapDatasetFetcher
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = fetcher_type(dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = _ExceptionWrapper(f"in DataLoader worker process {worker_id}")
        iteration_end = False
        parent = os.getppid()
        while os.getppid() == parent:
            try:
                r = index_queue.get(timeout=_POLL_INTERVAL)
            except queue.Empty:
                # Shutting down without a final signal: the iterator was garbage-collected
                # with its queues (whose feeder thread is gone).
                if done_event.is_set():
                    break
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                fetcher = fetcher_type(dataset, auto_collation, collate_fn, drop_last)
                continue
            if r is None:  # the final signal
                break
            if done_event.is_set() or iteration_end:
                continue  # wait for the final signal
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    if not iterable:
                        data = _ExceptionWrapper(f"in DataLoader worker process {worker_id}")
                    else:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                except Exception:
                    data = _ExceptionWrapper(f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass  # the main process raises it
    if done_event.is_set():
        # Exit even if the main process stopped reading: do not wait to flush the queue.
        data_queue.cancel_join_thread()
        data_queue.close()


def _processes_unavailable(context) -> bool:
    """True where worker processes cannot be started (WebAssembly has no fork nor spawn)."""
    if sys.platform in ("emscripten", "wasi"):
        return True
    try:
        methods = multiprocessing.get_all_start_methods()
    except Exception:  # noqa: BLE001 - any failure means no processes
        return True
    if context is not None:
        return context.get_start_method() not in methods
    return not ({"fork", "spawn", "forkserver"} & set(methods))


class _InfiniteConstantSampler(Sampler):
    def __iter__(self):
        while True:
            yield None


class _MapDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        # Batches of a TensorDataset gather rows with one NumPy fancy-index per tensor
        # instead of indexing sample by sample and stacking (same result).
        self._fast = (
            auto_collation
            and type(dataset) is TensorDataset
            and collate_fn is _collate.default_collate
            and not any(t._rg for t in dataset.tensors)
        )

    def fetch(self, possibly_batched_index):
        if self._fast:
            idx = np.asarray(possibly_batched_index, dtype=np.int64)
            return [Tensor._wrap(t._data[idx]) for t in self.dataset.tensors]
        if self.auto_collation:
            if callable(getattr(self.dataset, "__getitems__", None)):
                data = self.dataset.__getitems__(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


class _IterableDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last) -> None:
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


class _BaseDataLoaderIter:
    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._collate_fn = loader.collate_fn
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        self._sampler_iter = iter(self._index_sampler)
        # The workers' base seed, drawn from the loader's generator on every new iterator
        # as torch does (also without workers, so the random streams stay in step).
        self._base_seed = int(
            _creation.randint(0, 2**63 - 1, (), generator=loader.generator).item()
        )
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter: bool = False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)  # may raise StopIteration

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if (
            self._iterable
            and self._IterableDataset_len_called is not None
            and self._num_yielded > self._IterableDataset_len_called
        ):
            msg = (
                f"Length of IterableDataset {self._dataset} was reported to be "
                f"{self._IterableDataset_len_called}(when accessing len(dataloader)), but "
                f"{self._num_yielded} samples have been fetched. "
            )
            if self._num_workers > 0:
                msg += (
                    "For multiprocessing data-loading, this could be caused by not properly "
                    "configuring the IterableDataset replica at each worker. Please see "
                    "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset"
                    " for examples."
                )
            _warn(msg, stacklevel=2)
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError("{} cannot be pickled", self.__class__.__name__)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        fetcher = _IterableDatasetFetcher if self._iterable else _MapDatasetFetcher
        self._dataset_fetcher = fetcher(
            loader.dataset, loader._auto_collation, loader.collate_fn, loader.drop_last
        )

    def _next_data(self):
        index = self._next_index()  # may raise StopIteration
        return self._dataset_fetcher.fetch(index)  # may raise StopIteration


# Kept for code that names the single-process iterator by its former name.
_DataLoaderIter = _SingleProcessDataLoaderIter


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Loads in ``num_workers`` worker processes; at most ``prefetch_factor`` batches per
    worker are outstanding, each sent to the next active worker in turn, and results are
    held until they can be returned in the sampler's order."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        self._workers = []
        self._index_queues = []
        ctx = loader.multiprocessing_context or multiprocessing.get_context()
        self._worker_result_queue = ctx.Queue()
        self._workers_done_event = ctx.Event()
        self._shutdown = False  # from here on, __del__ stops whatever workers were started
        self._data_queue = self._worker_result_queue
        for i in range(self._num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()
            w = ctx.Process(
                target=_worker_loop,
                args=(
                    self._iterable,
                    self._dataset,
                    index_queue,
                    self._worker_result_queue,
                    self._workers_done_event,
                    self._auto_collation,
                    self._collate_fn,
                    self._drop_last,
                    self._base_seed,
                    loader.worker_init_fn,
                    i,
                    self._num_workers,
                ),
                daemon=True,
            )
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter: bool = False) -> None:
        super()._reset(loader, first_iter)
        self._send_idx = 0  # index of the next task sent to a worker
        self._rcvd_idx = 0  # index of the next task returned by __next__
        self._task_info = {}  # task index -> (worker id,) or (worker id, data)
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:  # persistent workers: each starts a new epoch and says so
            for q in self._index_queues:
                q.put(_ResumeIteration())
            pending = self._num_workers
            while pending > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _check_workers(self) -> None:
        """Raise torch's error if an active worker has died (and stop the others)."""
        failed = [
            w for i, w in enumerate(self._workers) if self._workers_status[i] and not w.is_alive()
        ]
        if not failed:
            return
        for i, w in enumerate(self._workers):
            if w in failed:
                self._workers_status[i] = False
        cause = None
        for w in failed:
            code = w.exitcode
            if code is not None and code < 0:
                try:
                    name = signal.strsignal(-code) or f"Unknown signal {-code}"
                except ValueError:
                    name = f"Unknown signal {-code}"
                cause = RuntimeError(
                    f"DataLoader worker (pid {w.pid}) is killed by signal: {name}. "
                )
                break
            if code:
                cause = RuntimeError(
                    f"DataLoader worker (pid {w.pid}) exited unexpectedly with exit code {code}. "
                    "Details are lost due to multiprocessing. Rerunning with num_workers=0 may "
                    "give better error trace."
                )
                break
        pids = ", ".join(str(w.pid) for w in failed)
        self._shutdown_workers()
        raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from cause

    def _get_data(self):
        """The next ``(task index, data)`` from any worker, watching for dead workers and
        for the loader's ``timeout``."""
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = _POLL_INTERVAL
            if deadline is not None:
                wait = max(0.0, min(wait, deadline - time.monotonic()))
            try:
                return self._data_queue.get(timeout=wait)
            except queue.Empty:
                pass
            except Exception:
                self._check_workers()
                raise
            self._check_workers()
            if deadline is not None and time.monotonic() >= deadline:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")

    def _next_data(self):
        while True:
            # Skip the tasks of workers that have ended (an exhausted IterableDataset copy).
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    if len(info) == 2 or self._workers_status[info[0]]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            if len(self._task_info[self._rcvd_idx]) == 2:  # arrived earlier, out of order
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._iterable and isinstance(data, _IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue

            if idx != self._rcvd_idx:
                if not self._in_order:
                    worker_id = self._task_info.pop(idx)[0]
                    return self._process_data(data, worker_id)
                self._task_info[idx] += (data,)
            else:
                worker_id = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

    def _try_put_index(self) -> None:
        max_tasks = self._prefetch_factor * self._num_workers
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next active worker, if any
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id]:
                if self._in_order:
                    break
                if self._workers_num_tasks[worker_id] < max_tasks // sum(self._workers_status):
                    break
        else:
            return
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._workers_num_tasks[worker_id] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data, worker_id: int):
        self._workers_num_tasks[worker_id] -= 1
        self._try_put_index()
        if isinstance(data, _ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id: int) -> None:
        # The worker exits when it reads None (its IterableDataset copy is exhausted, or
        # the iterator is shutting down).
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self) -> None:
        """Stop the workers: tell each to exit, join them, terminate those still running."""
        if _python_exiting or getattr(self, "_shutdown", True):
            return  # at exit, multiprocessing terminates its daemonic children itself
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for i, w in enumerate(self._workers):
                if (self._persistent_workers or self._workers_status[i]) and w.is_alive():
                    self._mark_worker_as_unavailable(i)
            deadline = time.monotonic() + _JOIN_TIMEOUT
            for w in self._workers:
                w.join(timeout=max(0.0, deadline - time.monotonic()))
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=_JOIN_TIMEOUT)
            self._worker_result_queue.cancel_join_thread()
            self._worker_result_queue.close()

    def __del__(self) -> None:
        self._shutdown_workers()


class DataLoader(Generic[_T_co]):
    """Iterate over ``dataset`` in batches of ``batch_size`` collated samples.

    ``shuffle=True`` visits the samples in a new random order each epoch, drawn from
    ``generator`` (or the global ember generator, so ``ember.manual_seed`` makes it
    reproducible); ``drop_last`` drops a final incomplete batch; ``collate_fn`` turns a
    list of samples into a batch (``default_collate`` stacks tensors, arrays and numbers,
    and recurses into tuples, lists and dicts). ``batch_size=None`` disables batching.

    ``num_workers > 0`` loads in that many worker processes (started from
    ``multiprocessing_context``, by default ``multiprocessing``'s default: ``fork`` on
    Linux), each with its own copy of the dataset, after ``worker_init_fn(worker_id)``;
    ``get_worker_info()`` describes the worker inside it. At most ``prefetch_factor``
    batches per worker are in flight; batches still come in the sampler's order.
    ``persistent_workers=True`` keeps the workers from one epoch to the next; ``timeout``
    bounds the wait for a batch (seconds); ``pin_memory`` does nothing on the CPU.

    Example:
        >>> import ember
        >>> from ember.utils.data import DataLoader, TensorDataset
        >>> ds = TensorDataset(ember.arange(6.0), ember.arange(6))
        >>> loader = DataLoader(ds, batch_size=4, shuffle=True,
        ...                     generator=ember.Generator().manual_seed(0))
        >>> [len(y) for x, y in loader], len(loader)
        ([4, 2], 2)
        >>> [y.tolist() for x, y in DataLoader(ds, batch_size=4, num_workers=2)]
        [[0, 1, 2, 3], [4, 5]]
    """

    _DataLoader__initialized = False

    def __init__(
        self,
        dataset,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler=None,
        batch_sampler=None,
        num_workers: int = 0,
        collate_fn=None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn=None,
        multiprocessing_context=None,
        generator=None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable "
                "multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing.let "
                "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to "
                "None."
            )
        elif num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in {False, None}:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle option, but "
                    f"got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler option, but "
                    f"got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler "
                    f"option, but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")

        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None:
            if drop_last:
                raise ValueError(
                    "batch_size=None option disables auto-batching and is mutually exclusive "
                    "with drop_last"
                )

        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)

        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator

        if collate_fn is None:
            collate_fn = (
                _collate.default_collate if self._auto_collation else _collate.default_convert
            )
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._IterableDataset_len_called = None
        self._iterator = None
        self.__initialized = True
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self):
        """The ``multiprocessing`` context the workers start from (``None``: the default
        one, ``fork`` on Linux); set from a start-method name or a context object."""
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context) -> None:
        if multiprocessing_context is not None:
            if self.num_workers > 0:
                if isinstance(multiprocessing_context, str):
                    valid_start_methods = multiprocessing.get_all_start_methods()
                    if multiprocessing_context not in valid_start_methods:
                        raise ValueError(
                            "multiprocessing_context option should specify a valid start "
                            f"method in {valid_start_methods!r}, but got "
                            f"multiprocessing_context={multiprocessing_context!r}"
                        )
                    multiprocessing_context = multiprocessing.get_context(multiprocessing_context)
                if not isinstance(multiprocessing_context, multiprocessing.context.BaseContext):
                    raise TypeError(
                        "multiprocessing_context option should be a valid context object or a "
                        "string specifying the start method, but got "
                        f"multiprocessing_context={multiprocessing_context}"
                    )
            else:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading "
                    f"(num_workers > 0), but got num_workers={self.num_workers}"
                )
        self.__multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr, val) -> None:
        if self.__initialized and attr in (
            "batch_size",
            "batch_sampler",
            "sampler",
            "drop_last",
            "dataset",
            "persistent_workers",
        ):
            raise ValueError(
                f"{attr} attribute should not be set after {self.__class__.__name__} is initialized"
            )
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self) -> _BaseDataLoaderIter:
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        if _processes_unavailable(self.multiprocessing_context):
            _warn(
                f"DataLoader: num_workers={self.num_workers} but worker processes cannot be "
                f"started on this platform ({sys.platform}); loading in the main process.",
                stacklevel=3,
            )
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def check_worker_number_rationality(self) -> None:
        """Warn, as torch does, when ``num_workers`` is more than the CPUs this process may
        use.

        Example:
            >>> from ember.utils.data import DataLoader
            >>> DataLoader(range(4), num_workers=1).check_worker_number_rationality()
        """
        if not self.num_workers:
            return
        cpuset_checked = hasattr(os, "sched_getaffinity")
        suggest = len(os.sched_getaffinity(0)) if cpuset_checked else os.cpu_count()
        if suggest is not None and self.num_workers <= suggest:
            return
        if suggest is not None:
            note = "" if cpuset_checked else " (`cpuset` is not taken into account)"
            suggested = (
                f"Our suggested max number of worker in current system is {suggest}{note}, "
                "which is smaller than what this DataLoader is going to create."
            )
        else:
            suggested = (
                "DataLoader is not able to compute a suggested max number of worker in "
                "current system."
            )
        _warn(
            f"This DataLoader will create {self.num_workers} worker processes in total. "
            f"{suggested} Please be aware that excessive worker creation might get DataLoader "
            "running slow or even freeze, lower the worker number to avoid potential "
            "slowness/freeze if necessary.",
            stacklevel=2,
        )

    def __iter__(self) -> _BaseDataLoaderIter:
        if self.pin_memory:
            _warn(
                "'pin_memory' argument is set as true but no accelerator is found, then "
                "device pinned memory won't be used.",
                stacklevel=2,
            )
        # Persistent workers: one iterator (and one set of workers) for the loader's life,
        # reset at each new epoch.
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None or not isinstance(
                self._iterator, _MultiProcessingDataLoaderIter
            ):
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self) -> int:
        if self._iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = (
                    length // self.batch_size if self.drop_last else ceil(length / self.batch_size)
                )
            return length
        return len(self._index_sampler)
