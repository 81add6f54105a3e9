"""``torch.distributed.tensor._utils``: where a rank's shard of a ``DTensor`` lies in the
global tensor (used by checkpointing and by transformers' shard-on-read loading)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .placement_types import Placement, Shard, _StridedShard, _StridedShardOffsetMode

__all__ = ["compute_local_shape_and_global_offset"]


def compute_local_shape_and_global_offset(
    global_shape: Sequence[int],
    mesh,
    placements: Sequence[Placement],
    skip_offset: bool = False,
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """This rank's local shape of a tensor of ``global_shape`` laid on ``mesh`` with
    ``placements``, and where that shard starts in the global tensor (``((0,), ())`` for a
    rank outside the mesh).

    Example:
        >>> from ember.distributed.tensor._utils import _compute_local_shape_and_global_offset
        >>> from ember.distributed.tensor import Shard
        >>> _compute_local_shape_and_global_offset((2, 5), (2, 2), [1, 1], [Shard(1), Shard(1)])
        ((2, 1), (0, 4))
    """
    if mesh.get_coordinate() is None:
        return ((0,), ())
    return _compute_local_shape_and_global_offset(
        global_shape, mesh.shape, mesh.get_coordinate(), placements, skip_offset
    )


def _compute_local_shape_and_global_offset(
    global_shape: Sequence[int],
    mesh_shape: Sequence[int],
    my_coordinate: Sequence[int] | Callable[[int], int],
    placements: Sequence[Placement],
    skip_offset: bool = False,
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The same from plain values: the mesh's shape and this rank's coordinate in it.
    Shards apply left to right; each one's offsets index the previous shard's."""
    if isinstance(my_coordinate, (list, tuple)):
        coordinate = list(my_coordinate)

        def lookup(dim: int) -> int:
            return coordinate[dim]
    else:
        if my_coordinate is None:
            raise AssertionError
        lookup = my_coordinate
    local_shape = list(global_shape)
    offsets: dict[int, list[int]] = {}
    for mesh_dim, placement in enumerate(placements):
        if not isinstance(placement, (Shard, _StridedShard)):
            continue
        dim = placement.dim
        if dim >= len(local_shape):
            raise AssertionError(f"Sharding dim {dim} greater than tensor ndim {len(local_shape)}")
        rank = lookup(mesh_dim)
        if isinstance(placement, _StridedShard):
            size, index = placement.local_shard_size_and_offset(
                local_shape[dim], mesh_shape[mesh_dim], rank, _StridedShardOffsetMode.ALL
            )
        else:
            size, start = Shard.local_shard_size_and_offset(
                local_shape[dim], mesh_shape[mesh_dim], rank
            )
            index = list(range(start, start + size))
        local_shape[dim] = size
        if skip_offset:
            continue
        if size == 0:
            offsets[dim] = [global_shape[dim]]
        elif dim in offsets:
            offsets[dim] = [offsets[dim][i] for i in index]
        else:
            offsets[dim] = list(index)
    if skip_offset:
        return tuple(local_shape), ()
    global_offset = [0] * len(global_shape)
    for dim, found in offsets.items():
        global_offset[dim] = int(found[0])
    return tuple(local_shape), tuple(global_offset)
