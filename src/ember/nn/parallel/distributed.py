"""``torch.nn.parallel.DistributedDataParallel`` over ``ember.distributed`` (MPI).

Each process holds a replica of the module and trains on its own part of the data. At
construction the parameters and buffers are broadcast from rank 0. During ``backward`` a
post-accumulate-grad hook on every parameter marks it ready; when all parameters of a
bucket (about ``bucket_cap_mb`` of gradients, in reverse registration order) are ready the
bucket's gradients are packed into one flat array and a non-blocking ``MPI_Iallreduce`` is
started while backward continues. As in torch, the buckets are first filled in reverse
registration order and rebuilt once, after the first synchronized backward, in the order
the gradients actually became ready (rank 0's order, broadcast), so that later iterations
start each bucket as soon as its gradients exist. The hook of the last parameter to become
ready waits for the outstanding reductions and writes the averaged gradients back into
``.grad``, so when ``loss.backward()`` returns every replica holds the same averaged
gradients.

Example (``mpirun -n 2 python train.py``)::

    import ember as torch
    import ember.distributed as dist
    from ember.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("mpi")
    model = DDP(torch.nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = model(torch.randn(8, 4)).pow(2).mean()
    loss.backward()            # gradients averaged over the 2 processes
    opt.step()
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from ... import distributed as dist
from ..._tensor import Tensor
from ...autograd.grad_mode import is_grad_enabled
from ...autograd.graph import AccumulateGrad
from ...distributed import _NO_GROUP
from ...distributed.distributed_c10d import _mpi
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by "
    "making sure all `forward` function outputs participate in calculating loss."
)


class _Bucket:
    __slots__ = ("params", "offsets", "buffer", "pending", "request")

    def __init__(self, params: list) -> None:
        self.params = params
        sizes = [p._data.size for p in params]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int).tolist()
        self.buffer = np.empty(self.offsets[-1], dtype=params[0]._data.dtype)
        self.pending = len(params)
        self.request = None


def _graph_leaves(outputs) -> set:
    """ids of the leaf tensors reachable from the autograd graph of ``outputs``."""
    stack, seen, leaves = [], set(), set()

    def collect(obj):
        if hasattr(obj, "grad_fn") and hasattr(obj, "_data"):
            if obj.grad_fn is not None:
                stack.append(obj.grad_fn)
            elif getattr(obj, "requires_grad", False):
                leaves.add(id(obj))
        elif isinstance(obj, (list, tuple)):
            for o in obj:
                collect(o)
        elif isinstance(obj, dict):
            for o in obj.values():
                collect(o)

    collect(outputs)
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            leaves.add(id(node.variable))
        for nxt, _ in getattr(node, "next_functions", ()) or ():
            if nxt is not None:
                stack.append(nxt)
    return leaves


class DistributedDataParallel(Module):
    """Data-parallel training: replicas in several processes, gradients averaged in backward.

    Args:
        module: the model (reachable as ``.module``; state-dict keys get the ``module.``
            prefix, as in torch).
        broadcast_buffers: broadcast rank 0's buffers (e.g. BatchNorm statistics) at the
            start of every forward (default True).
        process_group: the group to average over (the default group when None).
        bucket_cap_mb: size of the gradient buckets reduced together (default 25).
        find_unused_parameters: walk the output's graph at each forward and treat
            parameters it does not reach as ready (their gradients stay None unless some
            other process produced one). Without it, a parameter without gradient makes
            the next forward raise torch's "Expected to have finished reduction" error.
        init_sync: broadcast rank 0's parameters and buffers at construction (default True).

    ``device_ids``/``output_device`` must be None or CPU; ``gradient_as_bucket_view`` and
    ``static_graph`` are accepted and change nothing (gradients are always copied back
    into ``.grad``).

    Example (in each of 2 processes)::

        model = DistributedDataParallel(ember.nn.Linear(2, 1))
        with model.no_sync():                  # accumulate locally, no communication
            model(x1).sum().backward()
        model(x2).sum().backward()             # averages the accumulated gradients
        sorted(model.state_dict())             # ['module.bias', 'module.weight']
    """

    def __init__(
        self,
        module,
        device_ids=None,
        output_device=None,
        dim=0,
        broadcast_buffers=None,
        init_sync=True,
        process_group=None,
        bucket_cap_mb=None,
        find_unused_parameters=False,
        check_reduction=False,
        gradient_as_bucket_view=False,
        static_graph=False,
        **kwargs,
    ) -> None:
        if process_group is None and not dist.is_initialized():
            raise ValueError(_NO_GROUP)
        for d in device_ids or ():
            if str(d) not in ("cpu", "-1"):
                raise ValueError(f"DistributedDataParallel on ember runs on the CPU, not {d!r}")
        super().__init__()
        self.module = module
        self.process_group = process_group
        self.dim = dim
        self.device_ids = None
        self.output_device = None
        self.broadcast_buffers = True if broadcast_buffers is None else bool(broadcast_buffers)
        self.find_unused_parameters = bool(find_unused_parameters)
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024**2)
        pg = self._pg()
        self._world = dist.get_world_size(pg)

        self._params = [p for p in module.parameters() if p.requires_grad]
        self._index = {id(p): i for i, p in enumerate(self._params)}
        self._verify_shapes()
        if init_sync:
            for t in list(module.parameters()) + list(module.buffers()):
                dist.broadcast(t, src=dist.get_global_rank(pg, 0), group=pg)

        self._set_buckets(reversed(self._params))
        self._ready_order = []
        self._buckets_rebuilt = False
        self._armed = False
        self._ready = set()
        self._next_bucket = 0
        self._used_mask = None
        self._used_request = None
        self._hook_handles = [
            p.register_post_accumulate_grad_hook(self._on_grad_ready) for p in self._params
        ]

    # -- setup ----------------------------------------------------------------------------

    def _pg(self):
        return self.process_group if self.process_group is not None else dist.group.WORLD

    def _verify_shapes(self) -> None:
        mine = [[list(p.shape), str(p._data.dtype)] for p in self._params]
        everyone = [None] * self._world
        dist.all_gather_object(everyone, mine, group=self._pg())
        for rank, theirs in enumerate(everyone):
            if theirs != mine:
                raise RuntimeError(
                    "DDP expects same model across all ranks, but the parameters (shapes, "
                    f"dtypes) of this process {mine} differ from those of rank {rank} {theirs}"
                )

    def _set_buckets(self, order) -> None:
        """Group the parameters, in ``order``, into buckets of about ``bucket_cap_mb``."""
        buckets, current, size = [], [], 0
        for p in order:
            if current and (
                size + p._data.nbytes > self.bucket_bytes_cap
                or p._data.dtype != current[0]._data.dtype
            ):
                buckets.append(_Bucket(current))
                current, size = [], 0
            current.append(p)
            size += p._data.nbytes
        if current:
            buckets.append(_Bucket(current))
        self._buckets = buckets
        self._slot = {}
        for b, bucket in enumerate(buckets):
            for i, p in enumerate(bucket.params):
                self._slot[id(p)] = (b, i)

    def _rebuild_buckets(self) -> None:
        """Once, after the first synchronized backward: rebucket in rank 0's ready order."""
        self._buckets_rebuilt = True
        pg = self._pg()
        order = [self._ready_order if dist.get_rank(pg) == 0 else None]
        self._ready_order = []
        dist.broadcast_object_list(order, src=dist.get_global_rank(pg, 0), group=pg)
        if sorted(order[0]) == list(range(len(self._params))):
            self._set_buckets([self._params[i] for i in order[0]])

    # -- forward ---------------------------------------------------------------------------

    @contextmanager
    def no_sync(self):
        """Inside this context, forward/backward accumulate gradients locally; the first
        synchronized backward afterwards averages the accumulated gradients.

        Example::

            with ddp.no_sync():
                ddp(x1).sum().backward()
            ddp(x2).sum().backward()
        """
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def forward(self, *inputs, **kwargs):
        if self._ready and len(self._ready) < len(self._params) and self._armed:
            raise RuntimeError(_UNFINISHED)
        if self.broadcast_buffers and self.require_forward_param_sync:
            pg = self._pg()
            for b in self.module.buffers():
                dist.broadcast(b, src=dist.get_global_rank(pg, 0), group=pg)
        out = self.module(*inputs, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync and self._params:
            self._prepare_for_backward(out)
        else:
            self._armed = False
        return out

    def _prepare_for_backward(self, out) -> None:
        self._finish_used_mask()
        self._armed = True
        self._ready = set()
        if not self._buckets_rebuilt:
            self._ready_order = []
        self._next_bucket = 0
        for bucket in self._buckets:
            bucket.pending = len(bucket.params)
            bucket.request = None
        if self.find_unused_parameters:
            reached = _graph_leaves(out)
            used = np.array([id(p) in reached for p in self._params], dtype=np.uint8)
            self._used_mask = used
            self._used_request = self._pg()._comm.Iallreduce(
                _mpi().IN_PLACE, self._used_mask, _mpi().MAX
            )
            unused = [p for p, u in zip(self._params, used) if not u]
            for p in unused:
                self._mark_ready(p)

    def _finish_used_mask(self) -> None:
        if self._used_request is not None:
            self._used_request.Wait()
            self._used_request = None

    # -- backward --------------------------------------------------------------------------

    def _on_grad_ready(self, p) -> None:
        if self._armed:
            self._mark_ready(p)

    def _mark_ready(self, p) -> None:
        if id(p) in self._ready:
            raise RuntimeError(
                "Expected to mark a variable ready only once. This error is caused by one of "
                "the following reasons: 1) Use of a module parameter outside the `forward` "
                "function, or 2) Reused parameters in multiple reentrant backward passes."
            )
        self._ready.add(id(p))
        if not self._buckets_rebuilt:
            self._ready_order.append(self._index[id(p)])
        b, _ = self._slot[id(p)]
        self._buckets[b].pending -= 1
        # Buckets start in a fixed order on every process, as MPI collectives must.
        while (
            self._next_bucket < len(self._buckets) and self._buckets[self._next_bucket].pending == 0
        ):
            self._launch(self._buckets[self._next_bucket])
            self._next_bucket += 1
        if len(self._ready) == len(self._params):
            self._finalize()

    def _launch(self, bucket: _Bucket) -> None:
        buf = bucket.buffer
        for p, lo, hi in zip(bucket.params, bucket.offsets, bucket.offsets[1:]):
            g = p.grad
            if g is None:
                buf[lo:hi] = 0
            else:
                buf[lo:hi] = g._data.ravel()
        bucket.request = self._pg()._comm.Iallreduce(_mpi().IN_PLACE, buf, _mpi().SUM)

    def _finalize(self) -> None:
        MPI = _mpi()
        MPI.Request.Waitall([b.request for b in self._buckets])
        self._finish_used_mask()
        used = None
        if self.find_unused_parameters:
            used = {id(p): bool(u) for p, u in zip(self._params, self._used_mask)}
        for bucket in self._buckets:
            bucket.request = None
            buf = bucket.buffer
            buf /= self._world
            for p, lo, hi in zip(bucket.params, bucket.offsets, bucket.offsets[1:]):
                if used is not None and not used[id(p)]:
                    continue  # no process produced a gradient for it
                avg = buf[lo:hi].reshape(p._data.shape)
                g = p.grad
                if g is None:
                    p.grad = Tensor._wrap(avg.copy())
                elif g._data.flags.writeable and g.grad_fn is None:
                    g._data[...] = avg
                    g._bump()
                else:
                    p.grad = Tensor._wrap(avg.copy())
        self._armed = False
        self._ready = set()
        if not self._buckets_rebuilt:
            self._rebuild_buckets()
