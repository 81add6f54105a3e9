"""Process groups and collectives of ``ember.distributed``, on MPI through ``mpi4py``.

Every collective hands the tensor's own NumPy array to MPI (no copy) when it is
C-contiguous and writeable; otherwise a contiguous copy is sent and the result written back.
Ranks given as ``src``/``dst`` are global ranks, as in torch (``group_src``/``group_dst``
are ranks inside ``group``). ``async_op=True`` starts a non-blocking MPI operation and
returns a :class:`Work` whose ``wait()`` completes it.

Example (two processes, ``mpirun -n 2 python prog.py``)::

    import ember, ember.distributed as dist
    dist.init_process_group("mpi")
    x = ember.arange(4.0) * (dist.get_rank() + 1)
    work = dist.all_reduce(x, op=dist.ReduceOp.MAX, async_op=True)
    work.wait()                                # x == tensor([0., 2., 4., 6.])
"""

from __future__ import annotations

import enum
import importlib.util
import json
import os

import numpy as np

from .._optional import require

__all__ = [
    "Backend",
    "GroupMember",
    "P2POp",
    "ProcessGroup",
    "ReduceOp",
    "Work",
    "group",
]

_NO_GROUP = (
    "Default process group has not been initialized, please make sure to call init_process_group."
)


def _mpi():
    """The ``mpi4py.MPI`` module, imported (and MPI initialized) on first use only."""
    # deferred: importing it initializes MPI (not on `import ember`)
    return require("mpi4py.MPI", "ember.distributed")


# -- availability ---------------------------------------------------------------------------


def is_available() -> bool:
    """True when ``mpi4py`` is installed (checked without importing it).

    Example:
        >>> import ember
        >>> isinstance(ember.distributed.is_available(), bool)
        True
    """
    return importlib.util.find_spec("mpi4py") is not None


def is_mpi_available() -> bool:
    """True when the MPI backend can be used (``mpi4py`` is installed).

    Example:
        >>> import ember
        >>> ember.distributed.is_mpi_available() == ember.distributed.is_available()
        True
    """
    return is_available()


def is_nccl_available() -> bool:
    """False: NCCL is a CUDA library.

    Example:
        >>> import ember
        >>> ember.distributed.is_nccl_available()
        False
    """
    return False


def is_gloo_available() -> bool:
    """False: ember has no Gloo; ``init_process_group("gloo")`` runs over MPI instead.

    Example:
        >>> import ember
        >>> ember.distributed.is_gloo_available()
        False
    """
    return False


def is_torchelastic_launched() -> bool:
    """True when the process was started by ``torchrun`` (``TORCHELASTIC_RUN_ID`` is set).

    Example:
        >>> import os, unittest.mock, ember.distributed as dist
        >>> with unittest.mock.patch.dict(os.environ, TORCHELASTIC_RUN_ID="1"):
        ...     dist.is_torchelastic_launched()
        True
    """
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


# -- enums ----------------------------------------------------------------------------------


class Backend(str):
    """Backend names, as ``torch.distributed.Backend``: ``Backend("MPI") == "mpi"``.

    Example:
        >>> import ember.distributed as dist
        >>> dist.Backend("MPI"), dist.Backend.GLOO
        ('mpi', 'gloo')
    """

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, got {name!r}")
        return str.__new__(cls, name.lower())


class RedOpType(enum.IntEnum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8


class ReduceOp:
    """Reduction operations: ``ReduceOp.SUM``, ``AVG``, ``PRODUCT``, ``MIN``, ``MAX``,
    ``BAND``, ``BOR``, ``BXOR`` (members of ``ReduceOp.RedOpType``, as in torch).

    Example:
        >>> import ember
        >>> ember.distributed.ReduceOp.SUM
        <RedOpType.SUM: 0>
    """

    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM


def _mpi_op(op):
    MPI = _mpi()
    table = {
        RedOpType.SUM: MPI.SUM,
        RedOpType.AVG: MPI.SUM,  # divided by the group size afterwards
        RedOpType.PRODUCT: MPI.PROD,
        RedOpType.MIN: MPI.MIN,
        RedOpType.MAX: MPI.MAX,
        RedOpType.BAND: MPI.BAND,
        RedOpType.BOR: MPI.BOR,
        RedOpType.BXOR: MPI.BXOR,
    }
    try:
        return table[RedOpType(op)]
    except (ValueError, KeyError):
        raise ValueError(f"ReduceOp {op!r} is not supported by the MPI backend") from None


# -- process groups -------------------------------------------------------------------------


class ProcessGroup:
    """A set of processes (global ranks ``ranks``) and the MPI communicator joining them:
    ``group.WORLD`` and what ``new_group`` returns.

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> pg = dist.new_group([0])
        >>> pg.rank(), pg.size()
        (0, 1)
        >>> dist.destroy_process_group()
    """

    def __init__(self, comm, ranks: list, backend: str) -> None:
        self._comm = comm
        self._ranks = list(ranks)
        self._backend = backend

    def rank(self) -> int:
        """This process's rank inside the group."""
        return self._comm.Get_rank()

    def size(self) -> int:
        """Number of processes in the group."""
        return len(self._ranks)

    def name(self) -> str:
        return self._backend.upper()

    def __repr__(self) -> str:
        return f"ProcessGroup(backend={self._backend!r}, ranks={self._ranks})"


class _NonGroupMember:
    def __repr__(self) -> str:
        return "GroupMember.NON_GROUP_MEMBER"


_NON_MEMBER = _NonGroupMember()


class _State:
    default_pg: ProcessGroup | None = None
    groups: list = []
    created = 0  # new_group calls so far: the same count on every process
    env_set: list = []  # the variables init_process_group added to os.environ


class _WorldMeta(type):
    @property
    def WORLD(cls):  # noqa: N802  (torch's name)
        return _State.default_pg


class group(metaclass=_WorldMeta):  # noqa: N801  (torch's name)
    """``group.WORLD``: the default process group (None before ``init_process_group``).

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> dist.group.WORLD.size()
        1
        >>> dist.destroy_process_group()
        >>> dist.group.WORLD is None
        True
    """


class GroupMember(metaclass=_WorldMeta):
    """``GroupMember.WORLD`` and ``GroupMember.NON_GROUP_MEMBER`` (what ``new_group``
    returns on a process outside the new group).

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> dist.GroupMember.WORLD is dist.group.WORLD
        True
        >>> dist.destroy_process_group()
    """

    NON_GROUP_MEMBER = _NON_MEMBER


def _default() -> ProcessGroup:
    if _State.default_pg is None:
        raise ValueError(_NO_GROUP)
    return _State.default_pg


def _resolve(grp) -> ProcessGroup | None:
    """The group to run on, or None when this process is not a member of it."""
    pg = _default()
    if grp is None:
        return pg
    if grp is _NON_MEMBER:
        return None
    if not isinstance(grp, ProcessGroup):
        raise TypeError(f"expected a ProcessGroup, got {type(grp).__name__}")
    return grp if grp._comm is not None else None


def _group_rank(pg: ProcessGroup, global_rank, group_rank, what: str) -> int:
    if group_rank is not None:
        if global_rank is not None and pg._ranks[group_rank] != global_rank:
            raise ValueError(f"{what} and group_{what} are both given and disagree")
        if not 0 <= group_rank < pg.size():
            raise ValueError(f"group_{what} {group_rank} is out of range for {pg.size()} ranks")
        return group_rank
    if global_rank is None:
        global_rank = 0
    try:
        return pg._ranks.index(global_rank)
    except ValueError:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}") from None


_ENV_RANK = ("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK")
_ENV_SIZE = ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE")


def _from_env(names) -> int | None:
    for name in names:
        value = os.environ.get(name)
        if value not in (None, ""):
            return int(value)
    return None


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout=None,
    world_size: int = -1,
    rank: int = -1,
    store=None,
    group_name: str = "",
    pg_options=None,
    device_id=None,
) -> None:
    """Start the default process group: all processes of ``MPI.COMM_WORLD``.

    ``backend`` may be ``"mpi"`` (the default), or ``"gloo"``/``"cpu:gloo"`` which run
    over MPI too so that programs written for torch's CPU backend work unchanged;
    ``"nccl"`` is refused as in torch's CPU build. The rank and world size come from MPI;
    ``rank``/``world_size`` (or ``RANK``/``WORLD_SIZE``, ``OMPI_COMM_WORLD_RANK``,
    ``PMI_RANK``, ... in the environment) are checked against MPI's and must agree, so a
    process started by ``torchrun`` rather than ``mpirun`` fails clearly instead of running
    alone. ``init_method``, ``store`` and ``timeout`` are accepted and not used (MPI's
    launcher is the rendezvous). Sets ``RANK``/``WORLD_SIZE``/``LOCAL_RANK`` in the
    environment when they are absent, for the group's lifetime: ``destroy_process_group``
    removes them again.

    With two processes (``mpirun -n 2 python prog.py``)::

        dist.init_process_group(backend="mpi")
        dist.get_rank(), dist.get_world_size()     # (0, 2) and (1, 2)

    A script run without a launcher is a group of one process (MPI's singleton).

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> dist.is_initialized(), dist.get_rank(), dist.get_world_size()
        (True, 0, 1)
        >>> dist.destroy_process_group()
    """
    if _State.default_pg is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = "mpi" if backend is None else str(backend).lower()
    if name in ("nccl", "cuda:nccl"):
        raise RuntimeError("Distributed package doesn't have NCCL built in")
    if name in ("gloo", "cpu:gloo", "cpu:mpi"):
        name = name.split(":")[-1]
    elif name != "mpi":
        raise ValueError(f"Invalid backend: '{backend}' (ember runs over MPI: use 'mpi')")
    if not is_available():
        raise RuntimeError(
            "ember.distributed needs mpi4py and an MPI runtime: install ember's distributed "
            "extra (pip install -e '.[distributed]' in ember's checkout)"
        )
    MPI = _mpi()
    world = MPI.COMM_WORLD
    mpi_rank, mpi_size = world.Get_rank(), world.Get_size()
    want_size = world_size if world_size is not None and world_size >= 0 else None
    want_size = _from_env(_ENV_SIZE) if want_size is None else want_size
    want_rank = rank if rank is not None and rank >= 0 else _from_env(_ENV_RANK)
    if want_size is not None and want_size != mpi_size:
        raise RuntimeError(
            f"world_size {want_size} was requested but MPI started {mpi_size} process(es): "
            f"launch with `mpirun -n {want_size} python ...`"
        )
    if want_rank is not None and want_rank != mpi_rank:
        raise RuntimeError(f"rank {want_rank} was requested but MPI gives this process {mpi_rank}")
    pg = ProcessGroup(world.Dup(), list(range(mpi_size)), name)
    _State.default_pg = pg
    _State.groups = [pg]
    local = os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK") or os.environ.get("MPI_LOCALRANKID")
    values = {"RANK": mpi_rank, "WORLD_SIZE": mpi_size, "LOCAL_RANK": local or mpi_rank}
    _State.env_set = [name for name in values if name not in os.environ]
    for name in _State.env_set:
        os.environ[name] = str(values[name])


def is_initialized() -> bool:
    """True between ``init_process_group`` and ``destroy_process_group``.

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> dist.is_initialized()
        True
        >>> dist.destroy_process_group()
        >>> dist.is_initialized()
        False
    """
    return _State.default_pg is not None


def destroy_process_group(group=None) -> None:
    """Free ``group``'s communicator; with no argument, every group and the default one.

    MPI itself stays initialized (it is finalized when the interpreter exits), so
    ``init_process_group`` may be called again.

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> dist.destroy_process_group()
        >>> dist.is_initialized()
        False
    """
    if group is None:
        for pg in _State.groups:
            if pg._comm is not None:
                pg._comm.Free()
                pg._comm = None
        _State.groups = []
        _State.default_pg = None
        _State.created = 0
        _unset_env()
        return
    if group is _NON_MEMBER:
        return
    if group._comm is not None:
        group._comm.Free()
        group._comm = None
    if group in _State.groups:
        _State.groups.remove(group)
    if group is _State.default_pg:
        _State.default_pg = None
        _unset_env()


def _unset_env() -> None:
    """Remove what init_process_group added to os.environ (what was there stays)."""
    for name in _State.env_set:
        os.environ.pop(name, None)
    _State.env_set = []


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, **kwargs):
    """A process group of the global ``ranks`` (all processes when None).

    Every process should call it, as in torch; processes outside ``ranks`` get
    ``GroupMember.NON_GROUP_MEMBER``, on which collectives do nothing.

    With four processes::

        evens = dist.new_group([0, 2])
        if dist.get_rank() % 2 == 0:
            dist.all_reduce(t, group=evens)

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> sub = dist.new_group([0])
        >>> dist.get_process_group_ranks(sub), dist.get_world_size(sub)
        ([0], 1)
        >>> dist.destroy_process_group()
    """
    world = _default()
    ranks = sorted(range(world.size()) if ranks is None else {int(r) for r in ranks})
    for r in ranks:
        if not 0 <= r < world.size():
            raise ValueError(f"rank {r} is out of range for world size {world.size()}")
    me = world.rank()
    name = world._backend if backend is None else str(backend).lower()
    _State.created += 1
    if me not in ranks:
        return _NON_MEMBER
    sub = world._comm.Get_group().Incl(ranks)
    try:
        comm = world._comm.Create_group(sub, tag=_State.created)
    finally:
        sub.Free()
    pg = ProcessGroup(comm, ranks, name)
    _State.groups.append(pg)
    return pg


def get_rank(group=None) -> int:
    """This process's rank in ``group`` (the default group when None); -1 if not a member.

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> dist.get_rank()
        0
        >>> dist.destroy_process_group()
    """
    pg = _resolve(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group=None) -> int:
    """Number of processes in ``group``; -1 if this process is not a member.

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> dist.get_world_size()
        1
        >>> dist.destroy_process_group()
    """
    pg = _resolve(group)
    return -1 if pg is None else pg.size()


def get_backend(group=None) -> str:
    """The backend name given to ``init_process_group`` (``"mpi"`` or ``"gloo"``).

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> dist.get_backend()
        'mpi'
        >>> dist.destroy_process_group()
    """
    pg = _resolve(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return Backend(pg._backend)


def get_process_group_ranks(group) -> list:
    """The global ranks of ``group``'s processes.

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> dist.get_process_group_ranks(dist.group.WORLD)
        [0]
        >>> dist.destroy_process_group()
    """
    pg = _default() if group is None else group
    return list(pg._ranks)


def get_global_rank(group, group_rank: int) -> int:
    """Global rank of the process with rank ``group_rank`` in ``group``.

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> dist.get_global_rank(dist.new_group([0]), 0)
        0
        >>> dist.destroy_process_group()
    """
    return get_process_group_ranks(group)[group_rank]


def get_group_rank(group, global_rank: int) -> int:
    """Rank inside ``group`` of the process with global rank ``global_rank``.

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> dist.get_group_rank(dist.new_group([0]), 0)
        0
        >>> dist.destroy_process_group()
    """
    ranks = get_process_group_ranks(group)
    if global_rank not in ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return ranks.index(global_rank)


# -- work handles and buffers ---------------------------------------------------------------


class Work:
    """A started operation. ``wait()`` blocks until it is complete (and writes any results
    back into the tensors), ``is_completed()`` polls.

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> work = dist.all_reduce(ember.tensor([1.0, 2.0]), async_op=True)
        >>> work.wait(), work.is_completed()
        (True, True)
        >>> dist.destroy_process_group()
    """

    def __init__(self, requests: list, finish=None, result=None) -> None:
        self._requests = requests
        self._finish = finish
        self._result = result if result is not None else []
        self._done = False
        self._statuses = None

    def _complete(self) -> None:
        self._done = True
        finish, self._finish = self._finish, None
        if finish is not None:
            finish(self)

    def wait(self, timeout=None) -> bool:
        if not self._done:
            if self._requests:
                MPI = _mpi()
                self._statuses = [MPI.Status() for _ in self._requests]
                MPI.Request.Waitall(self._requests, self._statuses)
            self._complete()
        return True

    def is_completed(self) -> bool:
        if not self._done:
            if self._requests:
                MPI = _mpi()
                statuses = [MPI.Status() for _ in self._requests]
                if not MPI.Request.Testall(self._requests, statuses):
                    return False
                self._statuses = statuses
            self._complete()
        return True

    def is_success(self) -> bool:
        return self._done

    def synchronize(self) -> None:
        self.wait()

    def result(self) -> list:
        return self._result

    def _source_rank(self) -> int:
        return self._source


def _tensor_arrays(t):
    """(array handed to MPI, function writing it back into ``t``)."""
    a = t._data
    if a.flags.c_contiguous and a.flags.writeable:
        return a, t._bump

    tmp = np.ascontiguousarray(a)

    def write_back():
        a[...] = tmp
        t._bump()

    return tmp, write_back


def _input_array(t) -> np.ndarray:
    return np.ascontiguousarray(t._data)


def _run(requests: list, finish, async_op: bool, result=None):
    work = Work(requests, finish, result)
    if async_op:
        return work
    work.wait()
    return None


def _avg(arr: np.ndarray, n: int) -> None:
    if not np.issubdtype(arr.dtype, np.inexact):
        raise ValueError("ReduceOp.AVG needs a floating-point or complex tensor")
    arr /= n


def _check_op(op, arr) -> None:
    if RedOpType(op) == RedOpType.AVG and not np.issubdtype(arr.dtype, np.inexact):
        raise ValueError("ReduceOp.AVG needs a floating-point or complex tensor")


# -- collectives ----------------------------------------------------------------------------


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` across the group with ``op``; every process gets the result in place.

    With two processes::

        t = ember.tensor([1.0, 2.0]) * (dist.get_rank() + 1)
        dist.all_reduce(t)                         # tensor([3., 6.]) on both
        dist.all_reduce(t, op=dist.ReduceOp.AVG)   # tensor([3., 6.])

    Example:
        >>> import ember, ember.distributed as dist
        >>> t = ember.tensor([1.0, 2.0])
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> dist.all_reduce(t, op=dist.ReduceOp.MAX)
        >>> dist.destroy_process_group()
        >>> t
        tensor([1., 2.])
    """
    pg = _resolve(group)
    if pg is None:
        return None
    MPI = _mpi()
    buf, write_back = _tensor_arrays(tensor)
    _check_op(op, buf)
    req = pg._comm.Iallreduce(MPI.IN_PLACE, buf, _mpi_op(op))

    def finish(_):
        if RedOpType(op) == RedOpType.AVG:
            _avg(buf, pg.size())
        write_back()

    return _run([req], finish, async_op, [tensor])


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy ``tensor`` from process ``src`` (a global rank) into every process's ``tensor``.

    With several processes::

        dist.broadcast(t, src=0)

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> t = ember.tensor([1.0, 2.0])
        >>> dist.broadcast(t, src=0)
        >>> t
        tensor([1., 2.])
        >>> dist.destroy_process_group()
    """
    pg = _resolve(group)
    if pg is None:
        return None
    root = _group_rank(pg, src, group_src, "src")
    buf, write_back = _tensor_arrays(tensor)
    req = pg._comm.Ibcast(buf, root=root)
    return _run([req], lambda _: write_back(), async_op, [tensor])


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """``tensor_list[i]`` receives process i's ``tensor`` (all of the same shape and dtype).

    With several processes::

        out = [ember.zeros(2) for _ in range(dist.get_world_size())]
        dist.all_gather(out, ember.full((2,), float(dist.get_rank())))

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> out = [ember.zeros(2)]
        >>> dist.all_gather(out, ember.tensor([1.0, 2.0]))
        >>> out
        [tensor([1., 2.])]
        >>> dist.destroy_process_group()
    """
    pg = _resolve(group)
    if pg is None:
        return None
    if len(tensor_list) != pg.size():
        raise ValueError(f"tensor_list has {len(tensor_list)} tensors, the group {pg.size()}")
    send = _input_array(tensor)
    recv = np.empty((pg.size(),) + send.shape, dtype=send.dtype)
    req = pg._comm.Iallgather(send, recv)

    def finish(_):
        for out, part in zip(tensor_list, recv):
            out._data[...] = part
            out._bump()

    return _run([req], finish, async_op, list(tensor_list))


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Gather every process's ``input_tensor`` into ``output_tensor``, concatenated along
    dim 0 (shape ``(world * n, ...)``) or stacked (``(world, n, ...)``), straight into its
    buffer.

    With several processes::

        out = ember.empty(2 * dist.get_world_size())
        dist.all_gather_into_tensor(out, ember.ones(2) * dist.get_rank())

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> out = ember.zeros(2)
        >>> dist.all_gather_into_tensor(out, ember.tensor([1.0, 2.0]))
        >>> out
        tensor([1., 2.])
        >>> dist.destroy_process_group()
    """
    pg = _resolve(group)
    if pg is None:
        return None
    send = _input_array(input_tensor)
    buf, write_back = _tensor_arrays(output_tensor)
    if buf.size != send.size * pg.size():
        raise ValueError(
            f"output tensor has {buf.size} elements, expected {send.size} * {pg.size()}"
        )
    req = pg._comm.Iallgather(send, buf)
    return _run([req], lambda _: write_back(), async_op, [output_tensor])


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input`` (``world`` equal chunks along dim 0) across processes; process i
    gets the reduced chunk i in ``output``.

    With several processes::

        out = ember.empty(2)
        dist.reduce_scatter_tensor(out, ember.arange(2.0 * dist.get_world_size()))

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> out = ember.zeros(2)
        >>> dist.reduce_scatter_tensor(out, ember.tensor([1.0, 2.0]))
        >>> out
        tensor([1., 2.])
        >>> dist.destroy_process_group()
    """
    pg = _resolve(group)
    if pg is None:
        return None
    send = _input_array(input)
    buf, write_back = _tensor_arrays(output)
    _check_op(op, buf)
    if send.size != buf.size * pg.size():
        raise ValueError(f"input has {send.size} elements, expected {buf.size} * {pg.size()}")
    req = pg._comm.Ireduce_scatter_block(send, buf, _mpi_op(op))

    def finish(_):
        if RedOpType(op) == RedOpType.AVG:
            _avg(buf, pg.size())
        write_back()

    return _run([req], finish, async_op, [output])


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input_list[i]`` across processes into process i's ``output``.

    With several processes::

        out = ember.empty(2)
        dist.reduce_scatter(out, [ember.ones(2) for _ in range(dist.get_world_size())])

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> out = ember.zeros(2)
        >>> dist.reduce_scatter(out, [ember.tensor([1.0, 2.0])])
        >>> out
        tensor([1., 2.])
        >>> dist.destroy_process_group()
    """
    pg = _resolve(group)
    if pg is None:
        return None
    if len(input_list) != pg.size():
        raise ValueError(f"input_list has {len(input_list)} tensors, the group {pg.size()}")
    send = np.stack([np.asarray(t._data) for t in input_list])
    buf, write_back = _tensor_arrays(output)
    _check_op(op, buf)
    req = pg._comm.Ireduce_scatter_block(send, buf, _mpi_op(op))

    def finish(_):
        if RedOpType(op) == RedOpType.AVG:
            _avg(buf, pg.size())
        write_back()

    return _run([req], finish, async_op, [output])


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce ``tensor`` across the group into process ``dst``'s ``tensor`` (the other
    processes' tensors are left unchanged).

    With several processes::

        dist.reduce(t, dst=0, op=dist.ReduceOp.PRODUCT)

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> t = ember.tensor([2.0, 3.0])
        >>> dist.reduce(t, dst=0, op=dist.ReduceOp.PRODUCT)
        >>> t
        tensor([2., 3.])
        >>> dist.destroy_process_group()
    """
    pg = _resolve(group)
    if pg is None:
        return None
    MPI = _mpi()
    root = _group_rank(pg, dst, group_dst, "dst")
    buf, write_back = _tensor_arrays(tensor)
    _check_op(op, buf)
    if pg.rank() == root:
        req = pg._comm.Ireduce(MPI.IN_PLACE, buf, _mpi_op(op), root=root)
    else:
        req = pg._comm.Ireduce(buf, None, _mpi_op(op), root=root)

    def finish(_):
        if pg.rank() == root:
            if RedOpType(op) == RedOpType.AVG:
                _avg(buf, pg.size())
            write_back()

    return _run([req], finish, async_op, [tensor])


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Process ``dst`` receives every process's ``tensor`` in ``gather_list`` (which the
    other processes leave as None).

    With several processes::

        out = [ember.zeros(2) for _ in range(2)] if dist.get_rank() == 0 else None
        dist.gather(ember.ones(2) * dist.get_rank(), out, dst=0)

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> out = [ember.zeros(2)]
        >>> dist.gather(ember.tensor([1.0, 2.0]), out, dst=0)
        >>> out
        [tensor([1., 2.])]
        >>> dist.destroy_process_group()
    """
    pg = _resolve(group)
    if pg is None:
        return None
    root = _group_rank(pg, dst, group_dst, "dst")
    send = _input_array(tensor)
    is_root = pg.rank() == root
    if is_root:
        if gather_list is None or len(gather_list) != pg.size():
            raise ValueError("gather_list must hold one tensor per process on the destination")
        recv = np.empty((pg.size(),) + send.shape, dtype=send.dtype)
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    else:
        recv = None
    req = pg._comm.Igather(send, recv, root=root)

    def finish(_):
        if is_root:
            for out, part in zip(gather_list, recv):
                out._data[...] = part
                out._bump()

    return _run([req], finish, async_op, list(gather_list or []))


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Process ``src`` sends ``scatter_list[i]`` to process i, which receives it in ``tensor``.

    With several processes::

        parts = [ember.full((2,), float(i)) for i in range(2)] if dist.get_rank() == 0 else None
        out = ember.empty(2)
        dist.scatter(out, parts, src=0)

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> out = ember.zeros(2)
        >>> dist.scatter(out, [ember.tensor([1.0, 2.0])], src=0)
        >>> out
        tensor([1., 2.])
        >>> dist.destroy_process_group()
    """
    pg = _resolve(group)
    if pg is None:
        return None
    root = _group_rank(pg, src, group_src, "src")
    buf, write_back = _tensor_arrays(tensor)
    if pg.rank() == root:
        if scatter_list is None or len(scatter_list) != pg.size():
            raise ValueError("scatter_list must hold one tensor per process on the source")
        send = np.stack([np.asarray(t._data) for t in scatter_list])
    elif scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    else:
        send = None
    req = pg._comm.Iscatter(send, buf, root=root)
    return _run([req], lambda _: write_back(), async_op, [tensor])


def all_to_all_single(
    output, input, output_split_sizes=None, input_split_sizes=None, group=None, async_op=False
):
    """Process i sends chunk j of ``input`` (dim 0, split evenly or by ``input_split_sizes``)
    to process j, which stores it as chunk i of ``output``.

    With several processes::

        out = ember.empty(2)
        dist.all_to_all_single(out, ember.arange(2.0) + 10 * dist.get_rank())

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> out = ember.zeros(3)
        >>> dist.all_to_all_single(out, ember.arange(3.0))
        >>> out
        tensor([0., 1., 2.])
        >>> dist.destroy_process_group()
    """
    pg = _resolve(group)
    if pg is None:
        return None
    n = pg.size()
    send = _input_array(input)
    buf, write_back = _tensor_arrays(output)
    row_in = send[0].size if send.ndim else 1
    row_out = buf[0].size if buf.ndim else 1

    def counts(sizes, total_rows, row):
        if sizes is None:
            if total_rows % n:
                raise ValueError(f"dim 0 ({total_rows}) is not divisible by {n} processes")
            sizes = [total_rows // n] * n
        c = [int(s) * row for s in sizes]
        d = np.concatenate([[0], np.cumsum(c)[:-1]]).astype(int).tolist()
        return c, d

    sc, sd = counts(input_split_sizes, send.shape[0], row_in)
    rc, rd = counts(output_split_sizes, buf.shape[0], row_out)
    req = pg._comm.Ialltoallv([send, (sc, sd)], [buf, (rc, rd)])
    return _run([req], lambda _: write_back(), async_op, [output])


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """``output_tensor_list[i]`` on process j receives ``input_tensor_list[j]`` of process i.

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> out = [ember.zeros(2)]
        >>> dist.all_to_all(out, [ember.tensor([1.0, 2.0])])
        >>> out
        [tensor([1., 2.])]
        >>> dist.destroy_process_group()
    """
    pg = _resolve(group)
    if pg is None:
        return None
    sends = [np.ascontiguousarray(t._data).ravel() for t in input_tensor_list]
    send = np.concatenate(sends)
    recv = np.empty(sum(t._data.size for t in output_tensor_list), dtype=send.dtype)
    sc = [s.size for s in sends]
    rc = [t._data.size for t in output_tensor_list]
    sd = np.concatenate([[0], np.cumsum(sc)[:-1]]).astype(int).tolist()
    rd = np.concatenate([[0], np.cumsum(rc)[:-1]]).astype(int).tolist()
    req = pg._comm.Ialltoallv([send, (sc, sd)], [recv, (rc, rd)])

    def finish(_):
        for t, off, c in zip(output_tensor_list, rd, rc):
            t._data[...] = recv[off : off + c].reshape(t._data.shape)
            t._bump()

    return _run([req], finish, async_op, list(output_tensor_list))


def barrier(group=None, async_op=False, device_ids=None):
    """Block until every process of the group has reached the barrier (``async_op=True``:
    a :class:`Work` whose ``wait()`` blocks).

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> dist.barrier()
        >>> dist.barrier(async_op=True).wait()
        True
        >>> dist.destroy_process_group()
    """
    pg = _resolve(group)
    if pg is None:
        return None
    return _run([pg._comm.Ibarrier()], None, async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False) -> None:
    """A barrier (MPI reports a process that fails; ``timeout`` is not used).

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> dist.monitored_barrier()
        >>> dist.is_initialized()
        True
        >>> dist.destroy_process_group()
    """
    barrier(group)


# -- point to point -------------------------------------------------------------------------


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Start sending ``tensor`` to process ``dst``; returns a :class:`Work`.

    A process may send to itself: the example's single process receives its own message.

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> send = dist.isend(ember.tensor([1.0, 2.0]), dst=0)
        >>> out = ember.zeros(2)
        >>> dist.irecv(out, src=0).wait(), send.wait()
        (True, True)
        >>> dist.destroy_process_group()
        >>> out
        tensor([1., 2.])

    With two processes::

        if dist.get_rank() == 0:
            dist.isend(ember.ones(3), dst=1).wait()
        else:
            t = ember.empty(3)
            dist.irecv(t, src=0).wait()
    """
    pg = _resolve(group)
    if pg is None:
        return None
    peer = _group_rank(pg, dst, group_dst, "dst")
    send = _input_array(tensor)
    work = Work([pg._comm.Isend(send, dest=peer, tag=tag)], None, [tensor])
    work._keep = send
    return work


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Start receiving into ``tensor`` from process ``src`` (any process when None);
    returns a :class:`Work` whose ``wait()`` completes it.

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> out = ember.zeros(2)
        >>> recv = dist.irecv(out, src=0)
        >>> dist.send(ember.tensor([1.0, 2.0]), dst=0)
        >>> recv.wait()
        True
        >>> dist.destroy_process_group()
        >>> out
        tensor([1., 2.])
    """
    pg = _resolve(group)
    if pg is None:
        return None
    MPI = _mpi()
    peer = MPI.ANY_SOURCE if src is None and group_src is None else None
    if peer is None:
        peer = _group_rank(pg, src, group_src, "src")
    buf, write_back = _tensor_arrays(tensor)

    def finish(work):
        work._source = pg._ranks[work._statuses[0].Get_source()] if work._statuses else src
        write_back()

    return Work([pg._comm.Irecv(buf, source=peer, tag=tag)], finish, [tensor])


def send(tensor, dst=None, group=None, tag=0, group_dst=None) -> None:
    """Send ``tensor`` to process ``dst`` (blocks until it can be reused).

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> out = ember.zeros(2)
        >>> recv = dist.irecv(out, src=0)  # posted first: this process sends to itself
        >>> dist.send(ember.tensor([1.0, 2.0]), dst=0)
        >>> recv.wait()
        True
        >>> dist.destroy_process_group()
        >>> out
        tensor([1., 2.])
    """
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None) -> int:
    """Receive into ``tensor`` from ``src`` (any process when None); returns the sender's
    global rank.

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> send = dist.isend(ember.tensor([1.0, 2.0]), dst=0)  # to itself
        >>> out = ember.zeros(2)
        >>> dist.recv(out)
        0
        >>> send.wait()
        True
        >>> dist.destroy_process_group()
        >>> out
        tensor([1., 2.])
    """
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return work._source


class P2POp:
    """A point-to-point operation for :func:`batch_isend_irecv`: ``P2POp(dist.isend, t, 1)``.

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> op = dist.P2POp(dist.irecv, ember.zeros(2), peer=0)
        >>> op.op is dist.irecv, op.peer
        (True, 0)
        >>> dist.destroy_process_group()
    """

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None) -> None:
        if op not in (isend, irecv):
            raise ValueError(
                "Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` "
                "or ``torch.distributed.irecv``."
            )
        self.op, self.tensor, self.peer = op, tensor, peer
        self.group, self.tag, self.group_peer = group, tag, group_peer


def batch_isend_irecv(p2p_op_list: list) -> list:
    """Start every operation of ``p2p_op_list``; returns their :class:`Work` handles.

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> out = ember.zeros(2)
        >>> ops = [dist.P2POp(dist.isend, ember.tensor([1.0, 2.0]), 0),
        ...        dist.P2POp(dist.irecv, out, 0)]
        >>> [work.wait() for work in dist.batch_isend_irecv(ops)]
        [True, True]
        >>> dist.destroy_process_group()
        >>> out
        tensor([1., 2.])
    """
    works = []
    for p in p2p_op_list:
        if p.op is isend:
            works.append(isend(p.tensor, p.peer, p.group, p.tag, p.group_peer))
        else:
            works.append(irecv(p.tensor, p.peer, p.group, p.tag, p.group_peer))
    return works


# -- objects (JSON only: nothing received is unpickled) -------------------------------------


def _encode(obj) -> np.ndarray:
    try:
        text = json.dumps(obj, allow_nan=True)
    except (TypeError, ValueError) as e:
        raise TypeError(
            f"ember.distributed sends objects as JSON (no pickle), and this one is not: {e}"
        ) from None
    return np.frombuffer(text.encode("utf-8"), dtype=np.uint8)


def _decode(data: np.ndarray):
    return json.loads(data.tobytes().decode("utf-8"))


def _allgather_bytes(pg: ProcessGroup, data: np.ndarray) -> list:
    sizes = np.empty(pg.size(), dtype=np.int64)
    pg._comm.Allgather(np.array([data.size], dtype=np.int64), sizes)
    recv = np.empty(int(sizes.sum()), dtype=np.uint8)
    displs = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int).tolist()
    pg._comm.Allgatherv(data, [recv, (sizes.tolist(), displs)])
    return [recv[d : d + s] for d, s in zip(displs, sizes.tolist())]


def all_gather_object(object_list: list, obj, group=None) -> None:
    """``object_list[i]`` receives process i's ``obj``. Objects travel as JSON (tuples
    arrive as lists, dict keys as strings); a non-JSON object raises TypeError.

    With several processes::

        out = [None] * dist.get_world_size()
        dist.all_gather_object(out, {"rank": dist.get_rank()})

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> out = [None]
        >>> dist.all_gather_object(out, {"rank": dist.get_rank()})
        >>> out
        [{'rank': 0}]
        >>> dist.destroy_process_group()
    """
    pg = _resolve(group)
    if pg is None:
        return
    parts = _allgather_bytes(pg, _encode(obj))
    for i, part in enumerate(parts):
        object_list[i] = _decode(part)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None) -> None:
    """Process ``dst`` receives every process's ``obj`` (as JSON) in ``object_gather_list``.

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> out = [None]
        >>> dist.gather_object({"loss": 0.5}, out, dst=0)
        >>> out
        [{'loss': 0.5}]
        >>> dist.destroy_process_group()
    """
    pg = _resolve(group)
    if pg is None:
        return
    root = _group_rank(pg, dst, group_dst, "dst")
    data = _encode(obj)
    sizes = np.empty(pg.size(), dtype=np.int64) if pg.rank() == root else None
    pg._comm.Gather(np.array([data.size], dtype=np.int64), sizes, root=root)
    if pg.rank() != root:
        pg._comm.Gatherv(data, None, root=root)
        return
    recv = np.empty(int(sizes.sum()), dtype=np.uint8)
    displs = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int).tolist()
    pg._comm.Gatherv(data, [recv, (sizes.tolist(), displs)], root=root)
    for i, (d, s) in enumerate(zip(displs, sizes.tolist())):
        object_gather_list[i] = _decode(recv[d : d + s])


def broadcast_object_list(object_list: list, src=None, group=None, device=None, group_src=None):
    """Replace ``object_list``'s items by those of process ``src`` (sent as JSON).

    With several processes::

        cfg = [{"lr": 0.1}] if dist.get_rank() == 0 else [None]
        dist.broadcast_object_list(cfg, src=0)

    Example:
        >>> import ember, ember.distributed as dist
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> cfg = [{"lr": 0.1}]
        >>> dist.broadcast_object_list(cfg, src=0)
        >>> cfg
        [{'lr': 0.1}]
        >>> dist.destroy_process_group()
    """
    pg = _resolve(group)
    if pg is None:
        return
    root = _group_rank(pg, src, group_src, "src")
    data = _encode(list(object_list)) if pg.rank() == root else None
    size = np.array([0 if data is None else data.size], dtype=np.int64)
    pg._comm.Bcast(size, root=root)
    if data is None:
        data = np.empty(int(size[0]), dtype=np.uint8)
    pg._comm.Bcast(data, root=root)
    if pg.rank() != root:
        values = _decode(data)
        if len(values) != len(object_list):
            raise ValueError("object_list must have the same length on every process")
        object_list[:] = values
