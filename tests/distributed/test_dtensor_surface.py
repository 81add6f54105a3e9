"""The torch.distributed surface libraries import (DTensor, placements, DeviceMesh, FSDP,
Join, functional collectives): compared with real torch where torch answers without a
process group; plus ember's DeviceMesh over a one-process MPI group."""

from __future__ import annotations

import pickle

import pytest

import ember
import ember.distributed as edist
from ember.distributed import device_mesh as emesh
from ember.distributed import tensor as et
from ember.distributed.tensor import placement_types as ept
from ember.distributed.tensor._utils import _compute_local_shape_and_global_offset as e_offsets

torch = pytest.importorskip("torch")
import torch.distributed.tensor as tt  # noqa: E402
from torch.distributed.tensor import placement_types as tpt  # noqa: E402
from torch.distributed.tensor._utils import (  # noqa: E402
    _compute_local_shape_and_global_offset as t_offsets,
)


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - comparing torch's errors
        return type(e).__name__, str(e)
    return None


def _both(make):
    return make(et, ept), make(tt, tpt)


@pytest.mark.parametrize(
    "make",
    [
        lambda m, p: m.Shard(1),
        lambda m, p: m.Shard(-1),
        lambda m, p: m.Replicate(),
        lambda m, p: m.Partial(),
        lambda m, p: m.Partial("avg"),
        lambda m, p: p._StridedShard(0, split_factor=3),
        lambda m, p: p._StridedShard(1, sf=2),
    ],
)
def test_placement_values(make):
    e, t = _both(make)
    assert repr(e) == repr(t) and str(e) == str(t)
    assert hash(e) == hash(t)
    for args in [(), (0,), (1,)]:
        assert e.is_shard(*args) == t.is_shard(*args)
    assert e.is_replicate() == t.is_replicate()
    for op in [None, "sum", "avg"]:
        assert e.is_partial(op) == t.is_partial(op)
    assert repr(pickle.loads(pickle.dumps(e))) == repr(e)


def test_placement_equality_and_errors():
    pairs = [
        lambda m, p: m.Shard(0) == m.Shard(0),
        lambda m, p: m.Shard(0) == m.Shard(1),
        lambda m, p: m.Shard(0) == p._StridedShard(0, split_factor=1),
        lambda m, p: p._StridedShard(0, split_factor=1) == m.Shard(0),
        lambda m, p: m.Replicate() == m.Partial(),
        lambda m, p: m.Partial() == m.Partial("sum"),
        lambda m, p: isinstance(p._StridedShard(0, split_factor=2), m.Shard),
        lambda m, p: m.Placement().is_shard(),
    ]
    for make in pairs:
        e, t = _both(make)
        assert e == t
    for make in [
        lambda m, p: m.Shard(),
        lambda m, p: m.Shard("a"),
        lambda m, p: setattr(m.Shard(0), "dim", 1),
        lambda m, p: p._StridedShard(0, split_factor=2, sf=2),
        lambda m, p: m.Placement() == m.Placement(),
    ]:
        e, t = _err(lambda make=make: make(et, ept)), _err(lambda make=make: make(tt, tpt))
        assert e[0] == t[0], (e, t)
    assert _err(lambda: et.Shard("a")) == _err(lambda: tt.Shard("a"))


@pytest.mark.parametrize("size,chunks", [(10, 4), (8, 4), (2, 4), (0, 3), (7, 7)])
def test_shard_sizes_and_offsets(size, chunks):
    for rank in range(chunks):
        assert et.Shard.local_shard_size_and_offset(size, chunks, rank) == (
            tt.Shard.local_shard_size_and_offset(size, chunks, rank)
        )
        for sf in (1, 2, 3):
            for mode in (0, 1, 2):
                e = ept._StridedShard(0, split_factor=sf).local_shard_size_and_offset(
                    size, chunks, rank, mode
                )
                t = tpt._StridedShard(0, split_factor=sf).local_shard_size_and_offset(
                    size, chunks, rank, tpt._StridedShardOffsetMode(mode)
                )
                assert e == t


def test_local_shape_and_global_offset():
    cases = [
        ((2, 5), (2, 2), [1, 1], lambda m, p: [m.Shard(1), m.Shard(1)]),
        ((8,), (2, 2), [1, 0], lambda m, p: [p._StridedShard(0, split_factor=2), m.Shard(0)]),
        ((3,), (4,), [3], lambda m, p: [m.Shard(0)]),
        ((10, 6), (3, 2), [2, 1], lambda m, p: [m.Shard(0), m.Shard(1)]),
        ((10, 6), (3, 2), [2, 1], lambda m, p: [m.Replicate(), m.Partial()]),
    ]
    for shape, mesh_shape, coord, placements in cases:
        e_pl, t_pl = _both(placements)
        for skip in (False, True):
            assert e_offsets(shape, mesh_shape, coord, e_pl, skip) == t_offsets(
                shape, mesh_shape, coord, t_pl, skip
            )


@pytest.mark.parametrize(
    "make",
    [
        lambda m, t: m.DTensor.from_local(t.ones(2)),
        lambda m, t: m.distribute_tensor(t.ones(2)),
        lambda m, t: m.distribute_module(t.nn.Linear(2, 2)),
        lambda m, t: m.zeros(4),
        lambda m, t: m.ones(2, 2),
        lambda m, t: m.DTensor(),
    ],
)
def test_dtensor_without_a_mesh_errors_as_torch(make, monkeypatch):
    for var in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(var, raising=False)
    assert _err(lambda: make(et, ember)) == _err(lambda: make(tt, torch))


def test_dtensor_isinstance():
    assert issubclass(et.DTensor, ember.Tensor)
    assert not isinstance(ember.ones(2), et.DTensor)
    assert not isinstance(ember.nn.Parameter(ember.ones(2)), et.DTensor)


@pytest.mark.parametrize(
    "make",
    [
        lambda d: d.device_mesh.DeviceMesh("cpu", [0]),
        lambda d: d.device_mesh.init_device_mesh("cpu", (1,)),
        lambda d: d.device_mesh._mesh_resources.get_current_mesh(),
        lambda d: d.fsdp.FullyShardedDataParallel((ember if d is edist else torch).nn.Linear(2, 2)),
        lambda d: d.fsdp.fully_shard((ember if d is edist else torch).nn.Linear(2, 2)),
        lambda d: d.algorithms.join.Join([]),
        lambda d: d._functional_collectives.all_to_all_single_autograd(
            (ember if d is edist else torch).ones(2), None, None, None
        ),
    ],
)
def test_errors_without_a_process_group_as_torch(make, monkeypatch):
    import torch.distributed as tdist
    import torch.distributed._functional_collectives  # noqa: F401
    import torch.distributed.algorithms.join  # noqa: F401
    import torch.distributed.device_mesh  # noqa: F401
    import torch.distributed.fsdp  # noqa: F401

    import ember.distributed._functional_collectives  # noqa: F401
    import ember.distributed.algorithms.join  # noqa: F401
    import ember.distributed.fsdp  # noqa: F401

    for var in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(var, raising=False)
    assert _err(lambda: make(edist)) == _err(lambda: make(tdist))


def test_policies_and_joinable_as_torch():
    from torch.distributed.algorithms.join import Joinable as TJoinable
    from torch.distributed.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy

    from ember.distributed.algorithms.join import Joinable as EJoinable
    from ember.distributed.fsdp import CPUOffloadPolicy as ECPU
    from ember.distributed.fsdp import MixedPrecisionPolicy as EMP

    assert repr(ECPU()) == repr(CPUOffloadPolicy())
    assert repr(EMP()) == repr(MixedPrecisionPolicy())

    def make(base):
        class J(base):
            pass

        return J()

    e, t = _err(lambda: make(EJoinable)), _err(lambda: make(TJoinable))
    assert e[0] == t[0] and e[1].split(" J ")[1:] == t[1].split(" J ")[1:]


def test_wait_tensor_returns_its_tensor():
    from ember.distributed._functional_collectives import wait_tensor

    t = ember.ones(2)
    assert wait_tensor(t) is t


mpi = pytest.importorskip("mpi4py")


def test_device_mesh_over_one_process():
    edist.init_process_group("mpi")
    try:
        mesh = emesh.init_device_mesh("cpu", (1, 1), mesh_dim_names=("dp", "tp"))
        assert mesh.shape == (1, 1) and mesh.ndim == 2 and mesh.size() == 1
        assert mesh.get_coordinate() == [0, 0] and mesh.get_rank() == 0
        assert mesh.get_local_rank("tp") == 0
        assert edist.get_world_size(mesh.get_group("dp")) == 1
        assert mesh["tp"].mesh_dim_names == ("tp",) and mesh["tp"].get_coordinate() == [0]
        with pytest.raises(RuntimeError, match="Optional kwarg `mesh_dim`"):
            mesh.get_group()
        with pytest.raises(KeyError, match="Invalid mesh_dim_names"):
            mesh["x"]
        with pytest.raises(RuntimeError, match="Mesh should not be bigger than default world"):
            emesh.init_device_mesh("cpu", (2,))
        with mesh:
            assert emesh._mesh_resources.get_current_mesh() is mesh
            with pytest.raises(NotImplementedError):
                et.distribute_tensor(ember.ones(2))
    finally:
        edist.destroy_process_group()
