"""The checks run in each of the 2 MPI processes started by test_distributed_mpi.py.

    mpirun -n 2 python tests/distributed/mpi_worker.py OUT_DIR

Each check raises on a wrong result; the outcome of every check on every rank is written to
``OUT_DIR/rank<r>.json`` for the pytest side to report. Importing this module starts no MPI.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path

import numpy as np

CHECKS = {}


def check(fn):
    CHECKS[fn.__name__] = fn
    return fn


def _base(r: int) -> np.ndarray:
    return np.arange(6.0).reshape(2, 3) + 10 * r + 1


def _eq(got, want, tol=0.0) -> None:
    got = np.asarray(got._data if hasattr(got, "_data") else got)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


# -- collectives ----------------------------------------------------------------------------


@check
def import_is_lazy(dist, ember, r, n):
    # mpi4py was first imported by init_process_group (the worker imports ember before).
    assert dist.is_initialized() and dist.is_available() and dist.is_mpi_available()
    assert (dist.get_rank(), dist.get_world_size()) == (r, n)
    assert dist.get_backend() == "mpi"


@check
def all_reduce_ops(dist, ember, r, n):
    everyone = np.stack([_base(k) for k in range(n)])
    expected = {
        dist.ReduceOp.SUM: everyone.sum(0),
        dist.ReduceOp.AVG: everyone.mean(0),
        dist.ReduceOp.MAX: everyone.max(0),
        dist.ReduceOp.MIN: everyone.min(0),
        dist.ReduceOp.PRODUCT: everyone.prod(0),
    }
    for op, want in expected.items():
        t = ember.tensor(_base(r))
        arr = t._data
        v0 = t._version
        assert dist.all_reduce(t, op=op) is None
        _eq(t, want)
        assert t._data is arr  # reduced in the tensor's own buffer
        assert t._version > v0
    for op, fn in [(dist.ReduceOp.SUM, np.sum), (dist.ReduceOp.MAX, np.max)]:
        t = ember.tensor(_base(r).astype(np.int64))
        dist.all_reduce(t, op=op)
        assert t.dtype == ember.int64
        _eq(t, fn(everyone, 0).astype(np.int64))


@check
def all_reduce_async_and_noncontiguous(dist, ember, r, n):
    everyone_sum = sum(_base(k) for k in range(n))
    t = ember.tensor(_base(r))
    work = dist.all_reduce(t, async_op=True)
    assert work.wait() is True and work.is_completed()
    _eq(t, everyone_sum)
    assert work.result()[0] is t
    # A transposed view: reduced through a contiguous copy, written back into the base.
    base = ember.tensor(_base(r))
    view = base.t()
    assert not view._data.flags.c_contiguous
    dist.all_reduce(view)
    _eq(base, everyone_sum)
    _eq(view, everyone_sum.T)


@check
def avg_of_integers_refused(dist, ember, r, n):
    try:
        dist.all_reduce(ember.tensor([1, 2]), op=dist.ReduceOp.AVG)
    except ValueError as e:
        assert "floating-point" in str(e)
    else:
        raise AssertionError("AVG on an integer tensor was accepted")


@check
def broadcast(dist, ember, r, n):
    t = ember.tensor(_base(r))
    dist.broadcast(t, src=1)
    _eq(t, _base(1))
    t = ember.tensor(_base(r).astype(np.float32))
    dist.broadcast(t, src=0, async_op=True).wait()
    _eq(t, _base(0).astype(np.float32))


@check
def all_gather(dist, ember, r, n):
    out = [ember.zeros(2, 3, dtype=ember.float64) for _ in range(n)]
    dist.all_gather(out, ember.tensor(_base(r)))
    for k in range(n):
        _eq(out[k], _base(k))
    flat = ember.empty(2 * n, 3, dtype=ember.float64)
    dist.all_gather_into_tensor(flat, ember.tensor(_base(r)))
    _eq(flat, np.concatenate([_base(k) for k in range(n)]))
    stacked = ember.empty(n, 2, 3, dtype=ember.float64)
    arr = stacked._data
    dist.all_gather_into_tensor(stacked, ember.tensor(_base(r)), async_op=True).wait()
    _eq(stacked, np.stack([_base(k) for k in range(n)]))
    assert stacked._data is arr


@check
def reduce_scatter(dist, ember, r, n):
    inputs = [ember.tensor(_base(r) * (j + 1)) for j in range(n)]
    out = ember.empty(2, 3, dtype=ember.float64)
    dist.reduce_scatter(out, inputs)
    _eq(out, sum(_base(k) for k in range(n)) * (r + 1))
    big = ember.tensor(np.concatenate([_base(r) * (j + 1) for j in range(n)]))
    out = ember.empty(2, 3, dtype=ember.float64)
    dist.reduce_scatter_tensor(out, big, op=dist.ReduceOp.MAX)
    _eq(out, _base(n - 1) * (r + 1))


@check
def reduce_gather_scatter(dist, ember, r, n):
    t = ember.tensor(_base(r))
    dist.reduce(t, dst=1, op=dist.ReduceOp.SUM)
    _eq(t, sum(_base(k) for k in range(n)) if r == 1 else _base(r))

    gl = [ember.zeros(2, 3, dtype=ember.float64) for _ in range(n)] if r == 0 else None
    dist.gather(ember.tensor(_base(r)), gl, dst=0)
    if r == 0:
        for k in range(n):
            _eq(gl[k], _base(k))

    parts = [ember.tensor(_base(k) * -1) for k in range(n)] if r == 1 else None
    out = ember.empty(2, 3, dtype=ember.float64)
    dist.scatter(out, parts, src=1)
    _eq(out, -_base(r))


@check
def all_to_all_single(dist, ember, r, n):
    inp = ember.tensor(np.arange(2.0 * n) + 100 * r)
    out = ember.empty(2 * n, dtype=ember.float64)
    dist.all_to_all_single(out, inp)
    want = np.concatenate([(np.arange(2.0 * n) + 100 * k)[2 * r : 2 * r + 2] for k in range(n)])
    _eq(out, want)


@check
def send_recv(dist, ember, r, n):
    if r == 0:
        dist.send(ember.tensor(_base(0)), dst=1, tag=3)
        t = ember.empty(2, 3, dtype=ember.float64)
        assert dist.recv(t) == 1  # from any source: the sender's rank
        _eq(t, _base(1) * 2)
        w = dist.isend(ember.tensor([7.0, 8.0], dtype=ember.float64), dst=1)
        w.wait()
    else:
        t = ember.empty(2, 3, dtype=ember.float64)
        assert dist.recv(t, src=0, tag=3) == 0
        _eq(t, _base(0))
        dist.send(ember.tensor(_base(1) * 2), dst=0)
        t = ember.empty(2, dtype=ember.float64)
        w = dist.irecv(t, src=0)
        w.wait()
        _eq(t, [7.0, 8.0])
    dist.barrier()
    dist.barrier(async_op=True).wait()


@check
def objects_as_json(dist, ember, r, n):
    out = [None] * n
    dist.all_gather_object(out, {"rank": r, "tags": ["a", r]})
    assert out == [{"rank": k, "tags": ["a", k]} for k in range(n)]
    objs = [{"lr": 0.1}, [1, 2], "x"] if r == 0 else [None, None, None]
    dist.broadcast_object_list(objs, src=0)
    assert objs == [{"lr": 0.1}, [1, 2], "x"]
    gathered = [None] * n if r == 1 else None
    dist.gather_object(r * 3, gathered, dst=1)
    if r == 1:
        assert gathered == [k * 3 for k in range(n)]
    try:
        dist.all_gather_object([None] * n, object())
    except TypeError as e:
        assert "JSON" in str(e)
    else:
        raise AssertionError("a non-JSON object was sent")


@check
def subgroups(dist, ember, r, n):
    solo = dist.new_group([1])
    both = dist.new_group()
    if r == 1:
        assert dist.get_rank(solo) == 0 and dist.get_world_size(solo) == 1
        t = ember.tensor([5.0])
        dist.all_reduce(t, group=solo)
        _eq(t, [5.0])
    else:
        assert solo is dist.GroupMember.NON_GROUP_MEMBER
        assert dist.get_rank(solo) == -1
        t = ember.tensor([5.0])
        assert dist.all_reduce(t, group=solo) is None  # not a member: nothing happens
        _eq(t, [5.0])
    t = ember.tensor([float(r)])
    dist.broadcast(t, src=1, group=both)
    _eq(t, [1.0])
    assert dist.get_process_group_ranks(both) == list(range(n))
    dist.destroy_process_group(both)


# -- DistributedDataParallel ----------------------------------------------------------------


def _mlp(ember, seed):
    ember.manual_seed(seed)
    return ember.nn.Sequential(
        ember.nn.Linear(3, 8), ember.nn.Tanh(), ember.nn.Linear(8, 2)
    ).double()


def _data(ember):
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((8, 3)))
    y = ember.tensor(rng.standard_normal((8, 2)))
    return x, y


@check
def ddp_matches_full_batch_training(dist, ember, r, n):
    from ember.nn.parallel import DistributedDataParallel as DDP

    x, y = _data(ember)
    ref = _mlp(ember, 0)
    # Each rank builds different weights: DDP must replace them by rank 0's.
    ddp = DDP(_mlp(ember, 100 + r), bucket_cap_mb=64 / 2**20)  # 64-byte buckets
    assert len(ddp._buckets) > 1
    ref0 = _mlp(ember, 100)
    for p, q in zip(ddp.module.parameters(), ref0.parameters()):
        _eq(p, q._data)
    ref.load_state_dict(ref0.state_dict())
    assert sorted(ddp.state_dict()) == sorted("module." + k for k in ref.state_dict())

    opt = ember.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    ref_opt = ember.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    mine = slice(r * 8 // n, (r + 1) * 8 // n)
    for _ in range(20):  # the reference: one process on the concatenated global batch
        opt.zero_grad()
        loss = ((ddp(x[mine]) - y[mine]) ** 2).mean()
        loss.backward()
        ref_opt.zero_grad()
        ((ref(x) - y) ** 2).mean().backward()
        for p, q in zip(ddp.parameters(), ref.parameters()):
            _eq(p.grad, q.grad._data, tol=1e-12)
        opt.step()
        ref_opt.step()
    moved = [np.abs(p._data - q._data).max() for p, q in zip(ddp.parameters(), ref0.parameters())]
    assert min(moved) > 1e-3, moved  # 20 steps trained every parameter
    for p, q in zip(ddp.parameters(), ref.parameters()):
        _eq(p, q._data, tol=1e-12)


class _LoggingComm:
    """An MPI communicator that logs each ``Iallreduce`` started on it into ``events``."""

    def __init__(self, comm, events: list) -> None:
        self._comm, self._events = comm, events

    def Iallreduce(self, *args, **kwargs):  # noqa: N802  (mpi4py's name)
        self._events.append(("allreduce", args[1].size))
        return self._comm.Iallreduce(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._comm, name)


@check
def ddp_buckets_overlap_backward(dist, ember, r, n):
    from ember.nn.parallel import DistributedDataParallel as DDP

    nn = ember.nn
    ember.manual_seed(3)
    model = nn.Sequential(
        nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 16),
        nn.Tanh(), nn.Linear(16, 3),
    ).double()  # fmt: skip
    events = []
    pg = dist.new_group()
    pg._comm = _LoggingComm(pg._comm, events)
    ddp = DDP(model, process_group=pg, bucket_cap_mb=300 / 2**20)  # 300-byte buckets
    names = {id(p): k for k, p in model.named_parameters()}
    for k, p in model.named_parameters():
        # tensor hooks run when the gradient is computed, before it is accumulated (and
        # before DDP's post-accumulate hook for that parameter)
        p.register_hook(lambda g, k=k: events.append(("grad", k)))
    x = ember.tensor(np.random.default_rng(r).standard_normal((5, 6)))
    # The 1st backward fills the buckets in reverse registration order, then DDP rebuilds
    # them in the order the gradients became ready (as torch does); check the 2nd and 3rd.
    for it in range(3):
        events.clear()
        ddp.zero_grad()
        ddp(x).pow(2).sum().backward()
        if it == 0:
            continue
        nb = len(ddp._buckets)
        kinds = [e[0] for e in events]
        assert nb >= 4 and kinds.count("allreduce") == nb and kinds.count("grad") == 8, events
        first_reduce = kinds.index("allreduce")
        last_grad = len(kinds) - 1 - kinds[::-1].index("grad")
        # The first bucket is on the wire while later gradients are still being computed
        assert first_reduce < last_grad, events
        # ... and every bucket starts as soon as its last gradient exists, one at a time.
        grads_before = [kinds[:i].count("grad") for i, k in enumerate(kinds) if k == "allreduce"]
        assert grads_before == sorted(set(grads_before)) and grads_before[-1] == 8, events
        assert grads_before[0] < 8, events
        ready = [e[1] for e in events if e[0] == "grad"]
        for bucket, launched_after in zip(ddp._buckets, grads_before):
            assert launched_after == 1 + max(ready.index(names[id(p)]) for p in bucket.params)
    everyone = [None] * n
    layout = [[names[id(p)] for p in b.params] for b in ddp._buckets]
    dist.all_gather_object(everyone, layout)
    assert everyone == [layout] * n  # the same buckets in the same order on every rank
    # and the overlapped reduction is still the average
    grads = [p.grad._data.copy() for p in model.parameters()]
    dist.all_gather_object(everyone, [g.tolist() for g in grads])
    for k in range(n):
        for g, theirs in zip(grads, everyone[k]):
            _eq(g, np.asarray(theirs), tol=0)


@check
def ddp_no_sync_accumulates_locally(dist, ember, r, n):
    from ember.nn.parallel import DistributedDataParallel as DDP

    x, y = _data(ember)
    ddp = DDP(_mlp(ember, 1))
    ref = _mlp(ember, 1)

    def grads(xs, ys):
        ref.zero_grad()
        ((ref(xs) - ys) ** 2).sum().backward()
        return [p.grad._data.copy() for p in ref.parameters()]

    local = [slice(4 * r, 4 * r + 2), slice(4 * r + 2, 4 * r + 4)]
    with ddp.no_sync():
        ((ddp(x[local[0]]) - y[local[0]]) ** 2).sum().backward()
    first = grads(x[local[0]], y[local[0]])
    for p, g in zip(ddp.parameters(), first):
        _eq(p.grad, g, tol=1e-12)  # not averaged: this rank's own gradient
    ((ddp(x[local[1]]) - y[local[1]]) ** 2).sum().backward()
    # averaged over ranks of (both local micro-batches) == full batch sum / n
    everything = grads(x, y)
    for p, g in zip(ddp.parameters(), everything):
        _eq(p.grad, g / n, tol=1e-12)


@check
def ddp_find_unused_parameters(dist, ember, r, n):
    from ember.nn.parallel import DistributedDataParallel as DDP

    class Branches(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = ember.nn.Linear(2, 1).double()
            self.b = ember.nn.Linear(2, 1).double()
            self.never = ember.nn.Linear(2, 1).double()

        def forward(self, x, use_b):
            return self.a(x) + (self.b(x) if use_b else 0)

    ember.manual_seed(0)
    ddp = DDP(Branches(), find_unused_parameters=True)
    x = ember.ones(1, 2, dtype=ember.float64)
    for _ in range(2):  # twice: state is reset between iterations
        ddp.zero_grad(set_to_none=True)
        ddp(x, use_b=(r == 1)).sum().backward()
        _eq(ddp.module.a.weight.grad, [[1.0, 1.0]])
        _eq(ddp.module.b.weight.grad, [[1.0 / n, 1.0 / n]])  # only rank 1 used b
        assert ddp.module.never.weight.grad is None


@check
def ddp_unused_parameter_without_detection_raises(dist, ember, r, n):
    from ember.nn.parallel import DistributedDataParallel as DDP

    class OneUsed(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.used = ember.nn.Linear(2, 1).double()
            self.spare = ember.nn.Linear(2, 1).double()

        def forward(self, x):
            return self.used(x)

    pg = dist.new_group()  # its own communicator: its unfinished reduction stays there
    ember.manual_seed(0)
    ddp = DDP(OneUsed(), process_group=pg)
    ddp(ember.ones(1, 2, dtype=ember.float64)).sum().backward()
    try:
        ddp(ember.ones(1, 2, dtype=ember.float64))
    except RuntimeError as e:
        assert "find_unused_parameters=True" in str(e)
    else:
        raise AssertionError("an unfinished reduction went unnoticed")


@check
def sampler_from_group(dist, ember, r, n):
    from torch.utils.data.distributed import DistributedSampler as TorchSampler

    from ember.utils.data.distributed import DistributedSampler

    s = DistributedSampler(range(11), seed=5)
    assert (s.num_replicas, s.rank) == (n, r)
    s.set_epoch(2)
    got = list(s)
    torch_s = TorchSampler(range(11), num_replicas=n, rank=r, seed=5)
    torch_s.set_epoch(2)
    assert got == list(torch_s)
    everyone = [None] * n
    dist.all_gather_object(everyone, got)
    assert [len(e) for e in everyone] == [6] * n  # 11 indices padded to 12, 6 per rank
    assert set(sum(everyone, [])) == set(range(11))
    assert set(everyone[0]).isdisjoint(everyone[1][:5])  # only the pad index repeats


def die_mid_collective() -> None:
    """Rank 1 dies (``os._exit(3)``) in the middle of a DDP backward, after its first bucket
    started; rank 0 is left waiting for the reductions. The launcher must end the job."""
    import ember
    import ember.distributed as dist
    from ember.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group(backend="mpi")
    r = dist.get_rank()
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.Tanh(), ember.nn.Linear(8, 1))
    ddp = DDP(model, bucket_cap_mb=64 / 2**20)
    x = ember.randn(6, 4)
    ddp(x).sum().backward()  # one good step (and the buckets rebuilt)
    if r == 1:

        def die(p):
            if any(b.request is not None for b in ddp._buckets):
                print("rank 1: exiting mid-collective", flush=True)
                os._exit(3)

        for p in model.parameters():
            p.register_post_accumulate_grad_hook(die)
    print(f"rank {r}: second backward", flush=True)
    dist.barrier()  # rank 0 has printed before rank 1 can die
    ddp(x).sum().backward()
    print(f"rank {r}: second backward finished", flush=True)  # must not happen on rank 0
    dist.destroy_process_group()


def main(out_dir: str) -> None:
    import ember

    assert "mpi4py" not in sys.modules, "import ember imported mpi4py"
    import ember.distributed as dist

    dist.init_process_group(backend="mpi")
    r, n = dist.get_rank(), dist.get_world_size()
    results = {}
    for name, fn in CHECKS.items():
        if os.environ.get("EMBER_DIST_TRACE"):
            print(r, name, flush=True)
        try:
            fn(dist, ember, r, n)
            results[name] = "ok"
        except Exception:  # noqa: BLE001  (reported to pytest)
            results[name] = traceback.format_exc()
            if os.environ.get("EMBER_DIST_TRACE"):
                print(r, results[name], flush=True)
        dist.barrier()
    Path(out_dir, f"rank{r}.json").write_text(json.dumps(results))
    dist.destroy_process_group()
    assert not dist.is_initialized()


if __name__ == "__main__":
    if sys.argv[1] == "--die-mid-collective":
        die_mid_collective()
    else:
        main(sys.argv[1])
