"""ember.utils.data.DataLoader with worker processes, against torch.utils.data's.

Most tests run the same small program under torch and under ember and compare: the batches,
sharding of an IterableDataset through ``get_worker_info``, the text of errors raised in or
about workers. Workers start with ``fork`` (the default on Linux), so each test is quick.
"""

import gc
import multiprocessing
import os
import random
import re
import signal
import sys
import time
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import ember
import ember.utils.data as edata
from ember.utils.data import dataloader as edl

pytestmark = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="needs fork"
)


@pytest.fixture(autouse=True)
def _no_children_left():
    """Every test leaves no worker process behind (checked after collecting garbage)."""
    yield
    gc.collect()
    deadline = time.monotonic() + 5
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert multiprocessing.active_children() == []


def _plain(x):
    """Batches of either library as nested lists of (dtype, values)."""
    if isinstance(x, (ember.Tensor, torch.Tensor)):
        return (str(x.dtype).replace("torch.", ""), x.tolist())
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


# -- datasets usable with both libraries (numbers and NumPy arrays in, the library collates) --


class Squares(edata.Dataset):
    def __init__(self, n=23):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": np.full(3, i, dtype=np.float32), "y": i * i, "flag": np.bool_(i % 2)}


class WhoAmI:
    """Each item: which worker loaded it, with that worker's seeds and RNG draws."""

    def __init__(self, lib, n=8):
        self.lib, self.n = lib, n
        self.init_id = None

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        info = self.lib.utils.data.get_worker_info()
        return [
            i,
            info.id,
            info.num_workers,
            info.seed,
            info.dataset is self,
            self.init_id,
            os.getpid(),
        ]


def _record_init(worker_id):
    info = get_info()
    info.dataset.init_id = 10 * worker_id + info.id + 1


def get_info():
    return edata.get_worker_info() or tdata.get_worker_info()


class Draws(edata.Dataset):
    """Each item: the worker's seed and the first draws of Python's, NumPy's and the
    library's generators in that worker."""

    def __init__(self, lib):
        self.lib = lib

    def __len__(self):
        return 2

    def __getitem__(self, i):
        info = self.lib.utils.data.get_worker_info()
        return {
            "seed": info.seed,
            "id": info.id,
            "random": random.random(),
            "numpy": float(np.random.random()),
            "lib": float(self.lib.rand(1).item()),
        }


class _Stream:
    """An IterableDataset sharded by worker: worker k yields start + k, + k + n, ..."""

    def __init__(self, start, stop):
        self.start, self.stop = start, stop

    def __iter__(self):
        info = self.get_worker_info()
        if info is None:
            return iter(range(self.start, self.stop))
        return iter(range(self.start + info.id, self.stop, info.num_workers))


class _Uneven:
    """Worker 0 yields 7 items, worker 1 yields 2: one worker ends before the other."""

    def __iter__(self):
        info = self.get_worker_info()
        wid = 0 if info is None else info.id
        return iter([100 * wid + k for k in range(7 if wid == 0 else 2)])


class _Unsharded:
    def __iter__(self):
        return iter(range(5))


# The same streams as torch and as ember IterableDatasets.
class TStream(_Stream, tdata.IterableDataset):
    get_worker_info = staticmethod(tdata.get_worker_info)


class EStream(_Stream, edata.IterableDataset):
    get_worker_info = staticmethod(edata.get_worker_info)


class TUneven(_Uneven, tdata.IterableDataset):
    get_worker_info = staticmethod(tdata.get_worker_info)


class EUneven(_Uneven, edata.IterableDataset):
    get_worker_info = staticmethod(edata.get_worker_info)


class TUnsharded(_Unsharded, tdata.IterableDataset):
    pass


class EUnsharded(_Unsharded, edata.IterableDataset):
    pass


def Stream(lib, start, stop):
    return (TStream if lib is torch else EStream)(start, stop)


def Uneven(lib):
    return (TUneven if lib is torch else EUneven)()


def Unsharded(lib):
    return (TUnsharded if lib is torch else EUnsharded)()


class Fails(edata.Dataset):
    def __init__(self, exc=ValueError, at=3):
        self.exc, self.at = exc, at

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == self.at:
            raise self.exc(f"bad item {i}")
        return i


class Killed(edata.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 3:
            os.kill(os.getpid(), signal.SIGKILL)
        return i


class Slow(edata.Dataset):
    def __init__(self, delays):
        self.delays = delays

    def __len__(self):
        return len(self.delays)

    def __getitem__(self, i):
        time.sleep(self.delays[i])
        return i


class Pids(edata.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        return os.getpid()


def _both(make, **kwargs):
    """The batches ``DataLoader(make(lib), **kwargs)`` gives under torch and under ember."""
    out = []
    for lib, data in ((torch, tdata), (ember, edata)):
        out.append([_plain(b) for b in data.DataLoader(make(lib), **kwargs)])
    return out


# -- batches ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {"batch_size": 4},
        {"batch_size": 4, "drop_last": True},
        {"batch_size": 5, "num_workers": 1},
        {"batch_size": None},
        {"batch_size": 3, "prefetch_factor": 1},
    ],
    ids=str,
)
def test_map_style_batches_match_torch_and_main_process(kwargs):
    kwargs = {"num_workers": 2, **kwargs}
    t_out, e_out = _both(lambda lib: Squares(), **kwargs)
    assert e_out == t_out
    single = {k: v for k, v in kwargs.items() if k not in ("num_workers", "prefetch_factor")}
    assert [_plain(b) for b in edata.DataLoader(Squares(), **single)] == e_out


def test_shuffled_batches_match_main_process():
    def batches(workers):
        g = ember.Generator().manual_seed(3)
        loader = edata.DataLoader(
            Squares(), batch_size=4, shuffle=True, generator=g, num_workers=workers
        )
        return [[_plain(b) for b in loader] for _ in range(2)]  # two epochs

    two = batches(2)
    assert two == batches(0)
    assert two[0] != two[1]
    assert sorted(y for b in two[0] for y in b["y"][1]) == [i * i for i in range(23)]


def test_tensor_dataset_and_dtypes_cross_the_process_boundary():
    x = ember.arange(24.0, dtype=ember.float32).reshape(12, 2)
    y = ember.arange(12) % 3 == 0
    ds = edata.TensorDataset(x, y)
    got = list(edata.DataLoader(ds, batch_size=5, num_workers=2))
    assert [_plain(b) for b in got] == [_plain(b) for b in edata.DataLoader(ds, batch_size=5)]
    assert isinstance(got[0][0], ember.Tensor) and got[0][0].dtype == ember.float32
    assert got[0][1].dtype == ember.bool and not got[0][0].requires_grad


def test_in_order_delivery_when_batches_arrive_out_of_order():
    # Worker 0's first batch is slow: worker 1's arrives first and is held back.
    delays = [0.3, 0, 0, 0, 0, 0, 0, 0]
    loader = edata.DataLoader(Slow(delays), batch_size=2, num_workers=2)
    assert [b.tolist() for b in loader] == [[0, 1], [2, 3], [4, 5], [6, 7]]


def test_len_and_single_process_iteration_unchanged():
    loader = edata.DataLoader(Squares(), batch_size=4, num_workers=2)
    assert len(loader) == 6 and len(iter(loader)) == 6
    it = iter(edata.DataLoader(Squares(), batch_size=4))
    assert type(it).__name__ == "_SingleProcessDataLoaderIter"


# -- worker info, worker_init_fn and seeds ---------------------------------------------------


def test_worker_info_and_worker_init_fn():
    g = ember.Generator().manual_seed(11)
    base = int(ember.randint(0, 2**63 - 1, (), generator=ember.Generator().manual_seed(11)))
    ds = WhoAmI(ember)
    loader = edata.DataLoader(
        ds, batch_size=2, num_workers=2, worker_init_fn=_record_init, generator=g
    )
    rows = [list(zip(*[c.tolist() for c in b])) for b in loader]
    items = [r for b in rows for r in b]
    assert [r[0] for r in items] == list(range(8))
    for i, wid, nw, seed, is_copy, init, pid in items:
        assert wid == (i // 2) % 2 and nw == 2 and seed == base + wid
        assert is_copy == 1 and init == 11 * wid + 1 and pid != os.getpid()
    assert edata.get_worker_info() is None
    assert ds.init_id is None  # worker_init_fn ran on the workers' copies only
    # torch gives the same shape of information
    t_rows = [
        list(zip(*[c.tolist() for c in b]))
        for b in tdata.DataLoader(
            WhoAmI(torch), batch_size=2, num_workers=2, worker_init_fn=_record_init
        )
    ]
    t_items = [r for b in t_rows for r in b]
    assert [r[:3] + r[4:6] for r in t_items] == [r[:3] + r[4:6] for r in items]


def test_worker_info_repr_and_frozen():
    info = edl.WorkerInfo(id=1, num_workers=2, seed=5, dataset=[0])
    from torch.utils.data._utils.worker import WorkerInfo

    assert repr(info) == repr(WorkerInfo(id=1, num_workers=2, seed=5, dataset=[0]))
    with pytest.raises(AttributeError, match="cannot assign to field 'id'"):
        info.id = 3


def test_numpy_seed_derivation_is_torchs():
    from torch.utils.data._utils.worker import _generate_state

    rng = random.Random(0)
    for _ in range(50):
        base, wid = rng.randrange(2**63), rng.randrange(16)
        assert edl._numpy_seed(base, wid) == _generate_state(base, wid)


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_worker_seeds_python_numpy_and_library_generators(lib):
    from torch.utils.data._utils.worker import _generate_state

    gen = lib.Generator().manual_seed(7)
    loader = lib.utils.data.DataLoader(Draws(lib), batch_size=None, num_workers=2, generator=gen)
    items = list(loader)
    seeds = [int(d["seed"]) for d in items]
    assert seeds[1] == seeds[0] + 1
    for d in items:
        seed, wid = int(d["seed"]), int(d["id"])
        base = seed - wid
        assert float(d["random"]) == random.Random(seed).random()
        assert float(d["numpy"]) == np.random.RandomState(_generate_state(base, wid)).random()
        assert float(d["lib"]) == lib.rand(1, generator=lib.Generator().manual_seed(seed)).item()
    # a new iterator draws a new base seed from the loader's generator
    assert [int(d["seed"]) for d in loader] != seeds


# -- IterableDataset -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make,kwargs",
    [
        (lambda lib: Stream(lib, 0, 11), {"batch_size": 2}),
        (lambda lib: Stream(lib, 3, 20), {"batch_size": 3, "drop_last": True}),
        (lambda lib: Stream(lib, 0, 7), {"batch_size": None}),
        (lambda lib: Uneven(lib), {"batch_size": 2}),
        (lambda lib: Unsharded(lib), {"batch_size": 2}),
    ],
    ids=["sharded", "drop_last", "unbatched", "uneven", "unsharded"],
)
def test_iterable_dataset_sharding_matches_torch(make, kwargs):
    t_out, e_out = _both(make, num_workers=2, **kwargs)
    assert e_out == t_out


# -- errors ----------------------------------------------------------------------------------


def _first_error(data, dataset, **kwargs):
    """The exception iterating ``data.DataLoader(dataset, **kwargs)`` raises (without its
    traceback, which would keep the iterator alive). torch's workers are stopped here: left
    to the garbage collector they take seconds to go."""
    it = iter(data.DataLoader(dataset, **kwargs))
    try:
        for _ in it:
            pass
    except Exception as exc:  # noqa: BLE001
        if exc.__cause__ is not None:
            exc.__cause__.__traceback__ = None
        return exc.with_traceback(None)
    finally:
        if data is tdata:
            it._shutdown_workers()
    return None


@pytest.mark.parametrize("exc", [ValueError, KeyError, ZeroDivisionError])
def test_worker_exception_reraised_like_torch(exc):
    t = _first_error(tdata, Fails(exc), batch_size=2, num_workers=2)
    e = _first_error(edata, Fails(exc), batch_size=2, num_workers=2)
    assert type(e) is type(t) is exc
    t_lines, e_lines = str(t).splitlines(), str(e).splitlines()
    assert e_lines[0] == t_lines[0] == f"Caught {exc.__name__} in DataLoader worker process 1."
    assert e_lines[1] == t_lines[1] == "Original Traceback (most recent call last):"
    assert e_lines[-1] == t_lines[-1]
    assert "in __getitem__" in str(e)


def test_worker_init_fn_exception_reraised():
    def boom(worker_id):
        raise ValueError(f"init {worker_id}")

    e = _first_error(edata, Squares(), batch_size=2, num_workers=2, worker_init_fn=boom)
    t = _first_error(tdata, Squares(), batch_size=2, num_workers=2, worker_init_fn=boom)
    assert type(e) is type(t) is ValueError
    assert str(e).splitlines()[0] == str(t).splitlines()[0]
    assert str(e).splitlines()[-1] == str(t).splitlines()[-1] == "ValueError: init 0"


def _no_pids(text):
    return re.sub(r"pid(\(s\))? \d+", r"pid\1 N", text)


def test_killed_worker_detected_like_torch():
    t = _first_error(tdata, Killed(), batch_size=2, num_workers=2)
    start = time.monotonic()
    e = _first_error(edata, Killed(), batch_size=2, num_workers=2)
    assert time.monotonic() - start < 3
    assert type(e) is type(t) is RuntimeError
    assert (
        _no_pids(str(e)) == _no_pids(str(t)) == "DataLoader worker (pid(s) N) exited unexpectedly"
    )
    assert type(e.__cause__) is type(t.__cause__) is RuntimeError
    assert _no_pids(str(e.__cause__)) == _no_pids(str(t.__cause__))
    assert _no_pids(str(e.__cause__)) == "DataLoader worker (pid N) is killed by signal: Killed. "
    del e, t


def test_timeout():
    kwargs = {"batch_size": 1, "num_workers": 1, "timeout": 0.2}
    it = iter(edata.DataLoader(Slow([0, 1.0]), **kwargs))
    assert next(it).tolist() == [0]
    start = time.monotonic()
    with pytest.raises(RuntimeError) as caught:
        next(it)
    assert 0.2 <= time.monotonic() - start < 0.8
    e = caught.value
    del it, caught
    t = _first_error(tdata, Slow([0, 1.0]), **kwargs)
    assert type(e) is type(t) is RuntimeError
    assert str(e) == str(t) == "DataLoader timed out after 0.2 seconds"


def _loader_error(data, **kwargs):
    try:
        data.DataLoader(Squares(), **kwargs)
    except Exception as exc:  # noqa: BLE001
        return type(exc), str(exc)
    return None


@pytest.mark.parametrize(
    "kwargs",
    [
        {"prefetch_factor": 2},
        {"prefetch_factor": 2, "num_workers": 0},
        {"persistent_workers": True},
        {"prefetch_factor": -1, "num_workers": 2},
        {"multiprocessing_context": "fork"},
        {"multiprocessing_context": "bogus", "num_workers": 2},
        {"multiprocessing_context": 3, "num_workers": 2},
        {"num_workers": -1},
    ],
    ids=str,
)
def test_argument_errors_match_torch(kwargs):
    t_err = _loader_error(tdata, **kwargs)
    assert t_err is not None
    assert _loader_error(edata, **kwargs) == t_err


# -- lifetimes -------------------------------------------------------------------------------


def test_persistent_workers_survive_epochs():
    loader = edata.DataLoader(Pids(), batch_size=2, num_workers=2, persistent_workers=True)
    first = sorted({p for b in loader for p in b.tolist()})
    workers = sorted(p.pid for p in multiprocessing.active_children())
    second = sorted({p for b in loader for p in b.tolist()})
    assert first == second == workers and len(first) == 2 and os.getpid() not in first
    del loader


def test_workers_restart_each_epoch_without_persistence():
    loader = edata.DataLoader(Pids(), batch_size=2, num_workers=2)
    first = {p for b in loader for p in b.tolist()}
    assert multiprocessing.active_children() == []
    second = {p for b in loader for p in b.tolist()}
    assert first.isdisjoint(second)


def test_persistent_iterable_dataset_restarts_each_epoch():
    loader = edata.DataLoader(
        Stream(ember, 0, 9), batch_size=2, num_workers=2, persistent_workers=True
    )
    tl = tdata.DataLoader(Stream(torch, 0, 9), batch_size=2, num_workers=2, persistent_workers=True)
    e_out = [[b.tolist() for b in loader] for _ in range(2)]
    t_out = [[b.tolist() for b in tl] for _ in range(2)]
    assert e_out == t_out and e_out[0] == e_out[1]
    del loader, tl


def test_no_children_after_break_error_or_exhaustion():
    loader = edata.DataLoader(Squares(), batch_size=2, num_workers=2)
    for _ in loader:
        pass
    assert multiprocessing.active_children() == []
    it = iter(loader)
    next(it)
    assert len(multiprocessing.active_children()) == 2
    del it
    assert multiprocessing.active_children() == []
    e = _first_error(edata, Fails(), batch_size=2, num_workers=2)
    assert isinstance(e, ValueError)
    del e
    assert multiprocessing.active_children() == []
    e = _first_error(edata, Killed(), batch_size=2, num_workers=2)
    assert isinstance(e, RuntimeError)
    assert multiprocessing.active_children() == []


def test_iteration_continues_after_a_worker_exception():
    it = iter(edata.DataLoader(Fails(at=2), batch_size=2, num_workers=2))
    assert next(it).tolist() == [0, 1]
    with pytest.raises(ValueError):
        next(it)
    assert [b.tolist() for b in it] == [[4, 5], [6, 7]]


def test_prefetch_factor_bounds_the_requests():
    class Counting(edata.Sampler):
        def __init__(self):
            self.drawn = 0

        def __iter__(self):
            for i in range(40):
                self.drawn += 1
                yield i

    for data in (tdata, edata):
        for workers, prefetch in ((2, 3), (1, 1)):
            sampler = Counting()
            it = iter(
                data.DataLoader(
                    Squares(40),
                    sampler=sampler,
                    batch_size=2,
                    num_workers=workers,
                    prefetch_factor=prefetch,
                )
            )
            assert sampler.drawn == 2 * workers * prefetch
            next(it)
            assert sampler.drawn == 2 * workers * prefetch + 2
            del it


# -- start methods ---------------------------------------------------------------------------


@pytest.mark.parametrize("context", ["spawn", "ctx-fork"])
def test_multiprocessing_context(context):
    ctx = multiprocessing.get_context("fork") if context == "ctx-fork" else context
    ds = edata.TensorDataset(ember.arange(10.0), ember.arange(10))
    loader = edata.DataLoader(ds, batch_size=4, num_workers=1, multiprocessing_context=ctx)
    assert loader.multiprocessing_context.get_start_method() == context.replace("ctx-", "")
    assert [_plain(b) for b in loader] == [_plain(b) for b in edata.DataLoader(ds, batch_size=4)]


def test_no_processes_on_webassembly(monkeypatch):
    monkeypatch.setattr(sys, "platform", "emscripten")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = [b.tolist() for b in edata.DataLoader(list(range(5)), batch_size=2, num_workers=2)]
    assert got == [[0, 1], [2, 3], [4]]
    assert any("loading in the main process" in str(w.message) for w in caught)


def test_too_many_workers_warns_like_torch():
    n = len(os.sched_getaffinity(0)) + 1
    messages = []
    for data in (tdata, edata):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            it = iter(data.DataLoader(list(range(2)), num_workers=n))
        messages.append([str(w.message) for w in caught if "worker processes" in str(w.message)])
        del it
    assert messages[0] == messages[1] and len(messages[1]) == 2  # at init, then at iter
