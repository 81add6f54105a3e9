"""``torch.distributed.optim.zero_redundancy_optimizer``: ``ZeroRedundancyOptimizer``, which
wraps an optimizer and shards its state over the ranks of a process group (ZeRO stage 1).

Each rank steps a local optimizer over its own share of the parameters only (so it keeps
optimizer state for about ``1 / world_size`` of them), then every parameter is broadcast
from the rank that owns it, so all replicas stay equal. The partition is torch's: for each
parameter group in turn, its parameters sorted by ``numel()`` (largest first, a stable sort)
each go to the rank with the smallest total ``numel()`` so far (the lowest rank on a tie),
the totals carrying over from one group to the next.

Example:
    >>> import ember, ember.distributed as dist
    >>> from ember.distributed.optim import ZeroRedundancyOptimizer
    >>> dist.init_process_group("mpi")  # alone: a group of one process
    >>> w = ember.nn.Parameter(ember.ones(2))
    >>> opt = ZeroRedundancyOptimizer([w], optimizer_class=ember.optim.SGD, lr=0.5)
    >>> w.grad = ember.ones(2)
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([0.5000, 0.5000], requires_grad=True)
    >>> dist.destroy_process_group()
"""

from __future__ import annotations

import collections.abc
import copy
import io
import logging
from collections.abc import Callable
from itertools import chain
from typing import Any

import numpy as np

from ... import _creation, serialization
from ..._tensor import Tensor
from ...optim.optimizer import Optimizer, _typename
from .. import distributed_c10d as dist
from ..algorithms.join import Join, Joinable, JoinHook

__all__ = ["ZeroRedundancyOptimizer"]

logger = logging.getLogger(__name__)

_OVERLAP_UNSUPPORTED = (
    "ZeroRedundancyOptimizer(overlap_with_ddp=True) is not supported by ember: it runs the "
    "optimizer step inside DistributedDataParallel's gradient communication hook "
    "(torch.distributed.algorithms.ddp_comm_hooks.ddp_zero_hook), and ember's "
    "DistributedDataParallel has no communication hooks. Use overlap_with_ddp=False (the "
    "default) and call step() after backward()."
)


def _recursive_copy_to_device(value: Any, non_blocking: bool, device) -> Any:
    """``value`` with every tensor inside lists, tuples and mappings moved to ``device``
    (a tensor already there is kept, not copied; the containers are new)."""
    if isinstance(value, Tensor):
        return value.to(device, non_blocking=non_blocking)
    if isinstance(value, (list, tuple)):
        values = [_recursive_copy_to_device(v, non_blocking, device) for v in value]
        return values if isinstance(value, list) else tuple(values)
    if isinstance(value, collections.abc.Mapping):
        return {k: _recursive_copy_to_device(v, non_blocking, device) for k, v in value.items()}
    return value


def _is_trainable(param: Tensor) -> bool:
    return param.requires_grad


def _broadcast_object(obj: Any, src_rank: int, group: Any = None, device: Any = None) -> Any:
    """Send ``obj`` (on global rank ``src_rank``) to every rank of ``group``, serialized with
    ``ember.save`` and read back with ``ember.load(weights_only=True)`` (tensors, numbers,
    strings, containers: what an optimizer state dict holds; nothing is unpickled)."""
    if dist.get_rank() == src_rank:
        buffer = io.BytesIO()
        serialization.save(obj, buffer)
        data = np.frombuffer(buffer.getbuffer(), dtype=np.uint8).copy()
        length = Tensor._wrap(np.array([data.size], dtype=np.int64))
        dist.broadcast(length, src=src_rank, group=group)
        dist.broadcast(Tensor._wrap(data), src=src_rank, group=group)
        return obj
    length = Tensor._wrap(np.zeros(1, dtype=np.int64))
    dist.broadcast(length, src=src_rank, group=group)
    received = Tensor._wrap(np.empty(int(length.item()), dtype=np.uint8))
    dist.broadcast(received, src=src_rank, group=group)
    return serialization.load(io.BytesIO(received._data.tobytes()), weights_only=True)


class _ZeROJoinHook(JoinHook):
    """The join hook of a ``ZeroRedundancyOptimizer``: a joined rank keeps stepping (its
    shard, with the gradients it has) so the parameter broadcasts of the others complete."""

    def __init__(self, zero: ZeroRedundancyOptimizer) -> None:
        if not isinstance(zero, ZeroRedundancyOptimizer):
            raise AssertionError(
                "ZeRO join hook requires passing in a ZeroRedundancyOptimizer instance as the state"
            )
        self.zero = zero
        super().__init__()

    def main_hook(self) -> None:
        """Step the optimizer: update this rank's shard and broadcast the parameters."""
        self.zero.step()


class ZeroRedundancyOptimizer(Optimizer, Joinable):
    """Wrap an optimizer class and shard its state over the ranks of ``process_group``.

    ``param_groups`` holds every parameter (as the wrapped optimizer's would, with its
    options), while the local optimizer ``optim`` holds this rank's share only and keeps
    state for it alone. ``step()`` steps ``optim`` then broadcasts every parameter from the
    rank that owns it; call it on every rank (after DDP's backward, the gradients are the
    same everywhere). ``state_dict()`` needs ``consolidate_state_dict(to=rank)`` first (on
    all ranks), and gives the state dict the wrapped optimizer would have over all the
    parameters. With one process it is exactly the wrapped optimizer.

    ``parameters_as_bucket_view=True`` packs each rank's trainable parameters into one flat
    tensor (the parameters' ``.data`` become views of it), broadcast in one message per rank.
    ``overlap_with_ddp=True`` needs DDP communication hooks, which ember does not have: it
    raises ``NotImplementedError``. ``**defaults`` are the options of ``optimizer_class``.

    With two processes (``mpirun -n 2 python train.py``)::

        dist.init_process_group("mpi")
        ddp = DistributedDataParallel(model)
        opt = ZeroRedundancyOptimizer(ddp.parameters(), optimizer_class=torch.optim.Adam, lr=0.01)
        ddp(x).sum().backward()
        opt.step()                              # each rank updates half, then they swap
        opt.consolidate_state_dict(to=0)
        if dist.get_rank() == 0:
            torch.save(opt.state_dict(), "optim.pt")

    Example:
        >>> import ember, ember.distributed as dist
        >>> from ember.distributed.optim import ZeroRedundancyOptimizer
        >>> w = ember.nn.Parameter(ember.ones(2))
        >>> try:
        ...     ZeroRedundancyOptimizer([w], optimizer_class=ember.optim.Adam, lr=0.1)
        ... except ValueError as e:
        ...     print(e)
        Default process group has not been initialized, please make sure to call init_process_group.
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> opt = ZeroRedundancyOptimizer([w], optimizer_class=ember.optim.Adam, lr=0.1)
        >>> w.grad = ember.ones(2)
        >>> opt.step()
        >>> opt.consolidate_state_dict(to=0)
        >>> sorted(opt.state_dict()["state"][0])
        ['exp_avg', 'exp_avg_sq', 'step']
        >>> opt.world_size, opt.rank, opt.param_groups[0]["lr"]
        (1, 0, 0.1)
        >>> dist.destroy_process_group()
    """

    def __init__(
        self,
        params,
        optimizer_class: type[Optimizer],
        process_group: Any | None = None,
        parameters_as_bucket_view: bool = False,
        overlap_with_ddp: bool = False,
        **defaults: Any,
    ) -> None:
        params = self._verify_and_init_params(params)
        self._verify_same_dense_param_type()

        # The parent constructor calls add_param_group(), which only repartitions once the
        # optimizer is built.
        self.initialized = False
        Optimizer.__init__(self, params, defaults)
        Joinable.__init__(self)

        self._param_to_rank_cache: dict[Tensor, int] = {}
        self._param_to_index_cache: dict[Tensor, int] = {}
        self._partition_parameters_cache: list[list[dict]] = []
        self._index_to_param_cache: list[Tensor] = []
        self._device_to_params_per_rank_cache: dict[Any, list[list[Tensor]]] = {}
        self._bucket_assignments_per_rank_cache: list[dict] = []
        self._is_trainable_mask = self._get_is_trainable_mask()

        self._default_device = self._all_params[0].device

        self.process_group = process_group if process_group is not None else dist.group.WORLD
        self.world_size: int = dist.get_world_size(self.process_group)
        self.rank: int = dist.get_rank(self.process_group)
        self.global_rank: int = dist.get_global_rank(self.process_group, self.rank)

        self._overlap_with_ddp: bool = overlap_with_ddp
        if overlap_with_ddp:
            raise NotImplementedError(_OVERLAP_UNSUPPORTED)
        self._optim_defaults = defaults
        self._optim_constructor = self._get_optimizer_constructor(optimizer_class)
        self._init_local_optimizer()

        self.parameters_as_bucket_view = parameters_as_bucket_view
        self._buckets: list[list[Tensor]] = []
        self._build_param_buckets()

        # The consolidated state dicts (one per rank), on the target rank of
        # consolidate_state_dict() only.
        self._all_state_dicts: list[dict[str, Any]] = []
        self.initialized = True

    # -- parameters -------------------------------------------------------------------

    def _verify_and_init_params(self, params: Any) -> list:
        if isinstance(params, Tensor):
            raise TypeError(
                f"`params` argument should be an iterable of Tensors, but got {_typename(params)}"
            )
        try:
            all_params = list(params)
        except TypeError as e:
            raise TypeError(
                "`params` argument should be an iterable of Tensors or dicts, but got "
                f"{_typename(params)}"
            ) from e
        if len(all_params) == 0:
            raise ValueError("ZeroRedundancyOptimizer got an empty parameter list")
        all_tensors = all(isinstance(p, Tensor) for p in all_params)
        all_dicts = all(isinstance(p, dict) for p in all_params)
        if not all_tensors and not all_dicts:
            raise TypeError("`params` argument should be an iterable of Tensors or dicts")
        if all_tensors:
            self._all_params = all_params
        else:
            self._all_params = []
            for param_group in all_params:
                if "params" not in param_group:
                    raise ValueError(
                        "Each parameter group passed-in via `params` must have a 'params' key "
                        "mapping to the parameters in the group"
                    )
                self._all_params.extend(param_group["params"])
        return all_params

    def _verify_same_dense_param_type(self) -> None:
        first = self._all_params[0]
        typename = _typename(first)
        if first.is_sparse:
            raise ValueError(
                "ZeroRedundancyOptimizer only supports using the same dense type for all "
                f"parameters but got {typename}"
            )
        for param in self._all_params[1:]:
            other = _typename(param)
            if other != typename:
                raise ValueError(
                    "ZeroRedundancyOptimizer only supports using the same dense type for all "
                    f"parameters but got both {typename} and {other}"
                )

    def _get_is_trainable_mask(self) -> list[bool]:
        return [_is_trainable(p) for p in self._all_params]

    def _get_optimizer_constructor(self, optimizer_class: Any) -> Any:
        return optimizer_class

    def _init_local_optimizer(self) -> None:
        param_groups = self._partition_parameters()[self.rank]
        # A list of groups: a rank with no parameters gets empty groups, not an error.
        self.optim: Optimizer = self._optim_constructor(param_groups, **self._optim_defaults)
        self._sync_param_groups(self.optim.param_groups, self.param_groups)

    def _clear_cache(self) -> None:
        self._partition_parameters_cache.clear()
        self._param_to_rank_cache.clear()
        self._index_to_param_cache.clear()
        self._param_to_index_cache.clear()
        self._device_to_params_per_rank_cache.clear()
        self._bucket_assignments_per_rank_cache.clear()

    @staticmethod
    def _get_min_index(values: list[int], disallowed_indices: set[int] | None = None) -> int:
        """The index of the smallest value (the first one on a tie), skipping
        ``disallowed_indices``."""
        min_index = -1
        min_value = float("inf")
        for i, value in enumerate(values):
            if disallowed_indices and i in disallowed_indices:
                continue
            if value < min_value:
                min_value = value
                min_index = i
        if min_index < 0:
            raise AssertionError("All indices are disallowed")
        return min_index

    def _partition_param_group(
        self, param_group: dict[str, Any], params_per_rank: list[list[Tensor]]
    ) -> None:
        for rank, params in enumerate(params_per_rank):
            rank_param_group = copy.copy(param_group)
            rank_param_group["params"] = params
            self._partition_parameters_cache[rank].append(rank_param_group)

    def _verify_params_per_rank(self, params_per_rank: list[list[Tensor]]) -> None:
        if len(params_per_rank) != self.world_size:
            raise ValueError("`params_per_rank` must have length equal to the world size")
        known = {id(p) for p in self._all_params}
        for params in params_per_rank:
            for param in params:
                if id(param) not in known:
                    raise ValueError(
                        "Passing a new parameter in `params_per_rank` that was not passed into "
                        "the ZeroRedundancyOptimizer constructor"
                    )

    def _partition_parameters(
        self, params_per_rank: list[list[Tensor]] | None = None
    ) -> list[list[dict]]:
        """Every rank's parameter groups (``[rank][group]``): each group a copy of the
        matching ``param_groups`` entry with the parameters assigned to that rank; or the
        partition ``params_per_rank`` given explicitly (a single group only)."""
        if params_per_rank is None:
            if len(self._partition_parameters_cache) == 0:
                self._partition_parameters_cache = [[] for _ in range(self.world_size)]
                sizes = [0] * self.world_size
                for param_group in self.param_groups:
                    per_rank: list[list[Tensor]] = [[] for _ in range(self.world_size)]
                    for param in sorted(
                        param_group["params"], key=lambda t: t.numel(), reverse=True
                    ):
                        rank = self._get_min_index(sizes)
                        per_rank[rank].append(param)
                        sizes[rank] += param.numel()
                    self._partition_param_group(param_group, per_rank)
            return self._partition_parameters_cache

        if len(self._partition_parameters_cache) != 0:
            raise AssertionError(
                "Specifying `params_per_rank` should only be done when the parameters have not "
                "been partitioned yet"
            )
        if len(self.param_groups) != 1:
            raise RuntimeError(
                "Specifying `params_per_rank` only supports a single parameter group"
            )
        self._verify_params_per_rank(params_per_rank)
        self._partition_parameters_cache = [[] for _ in range(self.world_size)]
        self._partition_param_group(self.param_groups[0], params_per_rank)
        return self._partition_parameters_cache

    @property
    def _param_to_rank(self) -> dict[Tensor, int]:
        if len(self._param_to_rank_cache) == 0:
            for rank, param_groups in enumerate(self._partition_parameters()):
                for param_group in param_groups:
                    for param in param_group["params"]:
                        self._param_to_rank_cache[param] = rank
        return self._param_to_rank_cache

    @property
    def _param_to_index(self) -> dict[Tensor, int]:
        if len(self._param_to_index_cache) == 0:
            params = chain.from_iterable(g["params"] for g in self.param_groups)
            self._param_to_index_cache = {p: i for i, p in enumerate(params)}
        return self._param_to_index_cache

    @property
    def _index_to_param(self) -> list[Tensor]:
        if len(self._index_to_param_cache) == 0:
            self._index_to_param_cache = list(
                chain.from_iterable(g["params"] for g in self.param_groups)
            )
        return self._index_to_param_cache

    @property
    def _device_to_params_per_rank(self) -> dict[Any, list[list[Tensor]]]:
        if not self.parameters_as_bucket_view:
            raise AssertionError(
                "`_device_to_params_per_rank` should only be used if "
                "`parameters_as_bucket_view=True`"
            )
        if len(self._device_to_params_per_rank_cache) == 0:
            for rank, param_groups in enumerate(self._partition_parameters()):
                for param_group in param_groups:
                    for param in param_group["params"]:
                        per_rank = self._device_to_params_per_rank_cache.setdefault(
                            param.device, [[] for _ in range(self.world_size)]
                        )
                        per_rank[rank].append(param)
        return self._device_to_params_per_rank_cache

    def _build_param_buckets(self) -> None:
        """With ``parameters_as_bucket_view=True``: for each device and rank, one flat tensor
        holding that rank's trainable parameters, whose ``.data`` become views of it."""
        if not self.parameters_as_bucket_view or self._overlap_with_ddp:
            return
        device_params = self._device_to_params_per_rank
        self._buckets = [[] for _ in range(len(device_params))]
        for dev_i, (device, params_per_rank) in enumerate(device_params.items()):
            for params in params_per_rank:
                bucket_size = 0
                dtype = None
                trainable = []
                for param in params:
                    if not _is_trainable(param):
                        # it may be a view of an old bucket: give it its own memory
                        param.data = param.data.detach().clone()
                    else:
                        bucket_size += param.numel()
                        trainable.append(param)
                    dtype = param.dtype
                if bucket_size == 0:
                    bucket = _creation.zeros(1, device=device)
                else:
                    bucket = _creation.empty(bucket_size, dtype=dtype, device=device)
                    offset = 0
                    for param in trainable:
                        end = offset + param.numel()
                        bucket[offset:end].copy_(param.data.flatten())
                        param.data = bucket[offset:end].view_as(param.data)
                        offset = end
                self._buckets[dev_i].append(bucket)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a parameter group (to be called on every rank): the new parameters are
        partitioned as the first ones were, each rank's share of them going into a new group
        of its local optimizer; the earlier parameters keep their ranks.

        Example:
            >>> import ember, ember.distributed as dist
            >>> from ember.distributed.optim import ZeroRedundancyOptimizer
            >>> dist.init_process_group("mpi")  # alone: a group of one process
            >>> a, b = ember.nn.Parameter(ember.ones(2)), ember.nn.Parameter(ember.ones(3))
            >>> opt = ZeroRedundancyOptimizer([a], optimizer_class=ember.optim.SGD, lr=0.1)
            >>> opt.add_param_group({"params": [b], "lr": 0.01})
            >>> [g["lr"] for g in opt.param_groups], len(opt.optim.param_groups)
            ([0.1, 0.01], 2)
            >>> dist.destroy_process_group()
        """
        if self.initialized and self._overlap_with_ddp:
            raise RuntimeError(
                "ZeroRedundancyOptimizer with `overlap_with_ddp=True` only supports a single "
                "parameter group"
            )
        super().add_param_group(param_group)
        if self.initialized:
            self._clear_cache()
            param_groups = self._partition_parameters()[self.rank]
            if len(param_groups) == len(self.optim.param_groups) + 1:
                self.optim.add_param_group(param_groups[-1])
            if self.parameters_as_bucket_view:
                self._build_param_buckets()

    @staticmethod
    def _sync_param_groups(src_param_groups: list[dict], dst_param_groups: list[dict]) -> None:
        """Copy every option but ``params`` from each source group to its destination."""
        if len(src_param_groups) != len(dst_param_groups):
            raise AssertionError(
                "Mismatch between number of source and destination parameter groups"
            )
        for src, dst in zip(src_param_groups, dst_param_groups):
            for attr in src:
                if attr != "params":
                    dst[attr] = src[attr]

    def _check_overlap_initialized(self) -> None:
        """Nothing to check: ``overlap_with_ddp=True`` (the delayed set-up) is refused."""

    # -- stepping ---------------------------------------------------------------------

    def _broadcast_params_from_rank(self, rank: int) -> list:
        """Start the broadcasts of ``rank``'s shard (its bucket per device, or each of its
        parameters); returns their works."""
        global_rank = dist.get_global_rank(self.process_group, rank)
        handles = []
        if self.parameters_as_bucket_view:
            for dev_buckets in self._buckets:
                handles.append(
                    dist.broadcast(
                        dev_buckets[rank], src=global_rank, group=self.process_group, async_op=True
                    )
                )
        else:
            for param_group in self._partition_parameters()[rank]:
                for param in param_group["params"]:
                    handles.append(
                        dist.broadcast(
                            param.data, src=global_rank, group=self.process_group, async_op=True
                        )
                    )
        return handles

    def _sync_params(self) -> None:
        handles = []
        for rank in range(self.world_size):
            handles.extend(self._broadcast_params_from_rank(rank))
        for handle in handles:
            handle.wait()

    def _local_step(
        self,
        gradients: list | None = None,
        closure: Callable[[], float] | None = None,
        **kwargs: Any,
    ) -> float | None:
        """Step the local optimizer on this rank's shard, without syncing the parameters."""
        Join.notify_join_context(self)
        is_trainable_mask = self._get_is_trainable_mask()
        if is_trainable_mask != self._is_trainable_mask:
            logger.warning(
                "ZeroRedundancyOptimizer detected that the trainable parameters changed; "
                "rebuilding the parameter buckets if enabled"
            )
            self._build_param_buckets()
            self._is_trainable_mask = is_trainable_mask

        self._sync_param_groups(self.param_groups, self.optim.param_groups)
        if gradients is not None:
            raise AssertionError(
                "Specifying `gradients` should not be used when `overlap_with_ddp=False`"
            )
        if closure is None:
            loss = self.optim.step(**kwargs)
        else:
            loss = self.optim.step(closure=closure, **kwargs)
        self._sync_param_groups(self.optim.param_groups, self.param_groups)
        return loss

    def step(self, closure: Callable[[], float] | None = None, **kwargs: Any) -> float | None:
        """Step the local optimizer on this rank's parameters, then broadcast every parameter
        from its owner; returns the local optimizer's loss (``closure``'s, if given).
        Extra keyword arguments go to the local optimizer's ``step``.

        Example:
            >>> import ember, ember.distributed as dist
            >>> from ember.distributed.optim import ZeroRedundancyOptimizer
            >>> dist.init_process_group("mpi")  # alone: a group of one process
            >>> w = ember.nn.Parameter(ember.tensor([1.0]))
            >>> opt = ZeroRedundancyOptimizer([w], optimizer_class=ember.optim.SGD, lr=0.1)
            >>> def closure():
            ...     opt.zero_grad()
            ...     loss = (w * w).sum()
            ...     loss.backward()
            ...     return loss
            >>> opt.step(closure).item(), w.item()
            (1.0, 0.800000011920929)
            >>> dist.destroy_process_group()
        """
        loss = self._local_step(closure=closure, **kwargs)
        self._sync_params()
        return loss

    # -- join -------------------------------------------------------------------------

    def join_hook(self, **kwargs: Any) -> JoinHook:
        """The hook ``Join`` runs on a rank whose inputs ran out: it keeps calling ``step()``
        so the other ranks' parameter broadcasts complete (keyword arguments are unused).

        Example:
            >>> import ember, ember.distributed as dist
            >>> from ember.distributed.optim import ZeroRedundancyOptimizer
            >>> dist.init_process_group("mpi")  # alone: a group of one process
            >>> w = ember.nn.Parameter(ember.ones(1))
            >>> opt = ZeroRedundancyOptimizer([w], optimizer_class=ember.optim.SGD, lr=0.1)
            >>> type(opt.join_hook()).__name__, opt.join_device
            ('_ZeROJoinHook', device(type='cpu'))
            >>> dist.destroy_process_group()
        """
        return _ZeROJoinHook(self)

    @property
    def join_device(self) -> Any:
        """The device of the first parameter (where the join collectives run)."""
        return self._default_device

    @property
    def join_process_group(self) -> Any:
        """The process group the optimizer shards over."""
        return self.process_group

    # -- state dicts ------------------------------------------------------------------

    def consolidate_state_dict(self, to: int = 0) -> None:
        """Gather every rank's local optimizer state on rank ``to`` (of the group), for a
        following ``state_dict()`` there. Call it on all ranks.

        Example:
            >>> import ember, ember.distributed as dist
            >>> from ember.distributed.optim import ZeroRedundancyOptimizer
            >>> dist.init_process_group("mpi")  # alone: a group of one process
            >>> w = ember.nn.Parameter(ember.ones(1))
            >>> opt = ZeroRedundancyOptimizer([w], optimizer_class=ember.optim.SGD, lr=0.1)
            >>> try:
            ...     opt.state_dict()
            ... except RuntimeError as e:
            ...     print(str(e)[:55])
            Optimizer state has not been consolidated on this rank.
            >>> opt.consolidate_state_dict(to=0)
            >>> opt.state_dict()["param_groups"][0]["params"]
            [0]
            >>> dist.destroy_process_group()
        """
        self._check_overlap_initialized()
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
        empty_messenger = Tensor._wrap(np.zeros(1, dtype=np.uint8))
        self._all_state_dicts = []
        for rank in range(self.world_size):
            global_rank = dist.get_global_rank(self.process_group, rank)
            if self.rank == to:
                if rank == self.rank:
                    local_state_dict = self.optim.state_dict()
                else:
                    local_state_dict = _broadcast_object(
                        empty_messenger, global_rank, self.process_group, self._default_device
                    )
                self._all_state_dicts.append(
                    _recursive_copy_to_device(local_state_dict, True, "cpu")
                )
            elif rank == self.rank:
                _broadcast_object(
                    self.optim.state_dict(),
                    self.global_rank,
                    self.process_group,
                    self._default_device,
                )
            elif rank != to:
                # a broadcast (not a gather), as torch: every rank takes part in each one
                _broadcast_object(
                    empty_messenger, global_rank, self.process_group, self._default_device
                )

    def state_dict(self) -> dict[str, Any]:
        """The optimizer's state dict over all parameters, as the wrapped optimizer would
        give it (global parameter indices), from the last ``consolidate_state_dict`` to this
        rank; ``RuntimeError`` without one.

        Example:
            >>> import ember, ember.distributed as dist
            >>> from ember.distributed.optim import ZeroRedundancyOptimizer
            >>> dist.init_process_group("mpi")  # alone: a group of one process
            >>> w = ember.nn.Parameter(ember.ones(1))
            >>> opt = ZeroRedundancyOptimizer([w], optimizer_class=ember.optim.SGD, lr=0.1,
            ...                               momentum=0.9)
            >>> w.grad = ember.ones(1)
            >>> opt.step()
            >>> opt.consolidate_state_dict()
            >>> opt.state_dict()["state"]
            {0: {'momentum_buffer': tensor([1.])}}
            >>> dist.destroy_process_group()
        """
        self._check_overlap_initialized()
        if len(self._all_state_dicts) == 0:
            raise RuntimeError(
                "Optimizer state has not been consolidated on this rank. Please call "
                f"`consolidate_state_dict(to={self.rank})` on all ranks beforehand if you "
                "meant to save the global state."
            )
        # The (possibly stale) global state, then each rank's local state in global indices.
        state_dict = super().state_dict()
        for rank, local_state_dict in enumerate(self._all_state_dicts):
            local_param_groups = local_state_dict["param_groups"]
            global_param_groups = self._partition_parameters()[rank]
            if len(local_param_groups) != len(global_param_groups):
                raise AssertionError("Mismatch between number of local and global parameter groups")
            for local_group, global_group in zip(local_param_groups, global_param_groups):
                local_indices = local_group["params"]
                global_params = global_group["params"]
                if len(local_indices) != len(global_params):
                    raise AssertionError(
                        "Mismatch between number of local and global parameters in parameter group"
                    )
                for local_index, global_param in zip(local_indices, global_params):
                    if local_index in local_state_dict["state"]:
                        global_index = self._param_to_index[global_param]
                        state_dict["state"][global_index] = local_state_dict["state"][local_index]
        state_dict["state"] = dict(sorted(state_dict["state"].items()))
        return state_dict

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state dict from ``state_dict()`` (or from the wrapped optimizer over the same
        parameters): each rank keeps the state of its own parameters. As in torch, the
        entries of ``state_dict["state"]`` of other ranks' parameters are set to None.

        Example:
            >>> import ember, ember.distributed as dist
            >>> from ember.distributed.optim import ZeroRedundancyOptimizer
            >>> dist.init_process_group("mpi")  # alone: a group of one process
            >>> w = ember.nn.Parameter(ember.ones(1))
            >>> sgd = ember.optim.SGD([w], lr=0.5, momentum=0.9)
            >>> w.grad = ember.ones(1); sgd.step()
            >>> opt = ZeroRedundancyOptimizer([w], optimizer_class=ember.optim.SGD, lr=0.1)
            >>> opt.load_state_dict(sgd.state_dict())
            >>> opt.optim.param_groups[0]["lr"], opt.optim.state[w]
            (0.5, {'momentum_buffer': tensor([1.])})
            >>> dist.destroy_process_group()
        """
        self._check_overlap_initialized()
        for index, value in state_dict["state"].items():
            param = self._index_to_param[index]
            if self._param_to_rank[param] != self.rank:
                state_dict["state"][index] = None
            else:
                self.optim.state[param] = _recursive_copy_to_device(value, True, param.device)
                for name, item in self.optim.state[param].items():
                    if isinstance(item, Tensor) and item.dim() == 0:
                        self.optim.state[param][name] = item.cpu()
        super().load_state_dict(state_dict)
        self._sync_param_groups(state_dict["param_groups"], self.param_groups)
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
