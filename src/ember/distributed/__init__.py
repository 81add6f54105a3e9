"""``torch.distributed`` over MPI (through ``mpi4py``): process groups, collectives on
ember tensors in place, point-to-point messages and JSON object collectives.

Start the processes with an MPI launcher and call ``init_process_group`` in each::

    mpirun -n 2 python train.py          # Open MPI as root: add --allow-run-as-root

``import ember`` never imports ``mpi4py``: MPI is started by ``init_process_group``.
Without a process group the functions answer as torch's do.

Example:
    >>> import ember
    >>> ember.distributed.is_initialized()
    False
    >>> try:
    ...     ember.distributed.get_rank()
    ... except ValueError as e:
    ...     print(e)
    Default process group has not been initialized, please make sure to call init_process_group.

A two-process program (``mpirun -n 2 python prog.py``)::

    import ember as torch
    import ember.distributed as dist

    dist.init_process_group("mpi")
    t = torch.tensor([float(dist.get_rank() + 1)])
    dist.all_reduce(t)                      # t == tensor([3.]) on both ranks
    dist.destroy_process_group()
"""

from .distributed_c10d import (
    _NO_GROUP,
    Backend,
    GroupMember,
    P2POp,
    ProcessGroup,
    ReduceOp,
    Work,
    all_gather,
    all_gather_into_tensor,
    all_gather_object,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    batch_isend_irecv,
    broadcast,
    broadcast_object_list,
    destroy_process_group,
    gather,
    gather_object,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    irecv,
    is_available,
    is_gloo_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    is_torchelastic_launched,
    isend,
    monitored_barrier,
    new_group,
    recv,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
    send,
)
from .device_mesh import DeviceMesh, init_device_mesh  # torch.distributed has them too

__all__ = [
    "Backend",
    "DeviceMesh",
    "GroupMember",
    "P2POp",
    "ProcessGroup",
    "ReduceOp",
    "Work",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_reduce",
    "all_to_all",
    "all_to_all_single",
    "barrier",
    "batch_isend_irecv",
    "broadcast",
    "broadcast_object_list",
    "destroy_process_group",
    "gather",
    "gather_object",
    "get_backend",
    "get_global_rank",
    "get_group_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "group",
    "init_device_mesh",
    "init_process_group",
    "irecv",
    "is_available",
    "is_gloo_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "is_torchelastic_launched",
    "isend",
    "monitored_barrier",
    "new_group",
    "recv",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "scatter",
    "send",
]
