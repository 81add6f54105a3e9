"""``torch.distributed.tensor.placement_types``: how a ``DTensor`` lies on each dimension of
its ``DeviceMesh`` -- ``Shard(dim)`` (split along ``dim`` like ``torch.chunk``),
``Replicate()`` (a full copy on every rank), ``Partial(reduce_op)`` (a pending reduction) and
``_StridedShard(dim, split_factor=n)`` (right-to-left sharding, for FSDP2 with TP).

Placements are plain values: they compare, hash, print and pickle as torch's do.

Example:
    >>> from ember.distributed.tensor.placement_types import Partial, Replicate, Shard
    >>> Shard(0), str(Shard(0)), Replicate(), Partial("avg")
    (Shard(dim=0), 'S(0)', Replicate(), Partial(avg))
    >>> Shard(1).is_shard(1), Replicate().is_replicate(), Partial().is_partial("sum")
    (True, True, True)
"""

from __future__ import annotations

import enum

__all__ = ["Partial", "Placement", "Replicate", "Shard"]


def _check_int(cls: str, dim) -> int:
    if isinstance(dim, bool) or not hasattr(dim, "__index__"):
        raise TypeError(
            "__init__(): incompatible constructor arguments. The following argument types are "
            f"supported:\n    1. torch._C._distributed.{cls}(dim: typing.SupportsInt | "
            f"typing.SupportsIndex)\n\nInvoked with: {dim!r}"
        )
    return int(dim.__index__())


class Placement:
    """The base class of the placements: answers ``is_shard``/``is_replicate``/
    ``is_partial`` (all False here); the subclasses say what they are.

    Example:
        >>> from ember.distributed.tensor.placement_types import Placement
        >>> Placement().is_shard(), Placement().is_partial()
        (False, False)
    """

    __slots__ = ()

    def is_shard(self, dim: int | None = None) -> bool:
        """Whether this is ``Shard`` (on ``dim`` when given)."""
        return False

    def is_replicate(self) -> bool:
        """Whether this is ``Replicate()``."""
        return False

    def is_partial(self, reduce_op: str | None = None) -> bool:
        """Whether this is ``Partial`` (with ``reduce_op`` when given)."""
        return False

    def __eq__(self, other: object) -> bool:
        # torch binds its guard with functools.partial(method_name=...), which fails so
        raise TypeError("_raise_error() got multiple values for argument 'method_name'")

    def __hash__(self) -> int:
        # torch binds its guard with functools.partial(method_name=...), which fails so
        raise TypeError("_raise_error() got multiple values for argument 'method_name'")


class Shard(Placement):
    """``Shard(dim)``: each rank on the mesh dimension holds one ``torch.chunk`` of the
    tensor along ``dim`` (the last chunks may be smaller or empty).

    Example:
        >>> from ember.distributed.tensor import Shard
        >>> Shard(0) == Shard(0), Shard(0).dim
        (True, 0)
        >>> Shard.local_shard_size_and_offset(10, 4, 3)   # chunks of 3: rank 3 gets row 9
        (1, 9)
    """

    __slots__ = ("_dim",)

    def __init__(self, dim: int) -> None:
        self._dim = _check_int("Shard", dim)

    @property
    def dim(self) -> int:
        """The tensor dimension that is split."""
        return self._dim

    def is_shard(self, dim: int | None = None) -> bool:
        return dim is None or dim == self._dim

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._dim == self._dim

    def __hash__(self) -> int:
        return hash(self._dim)

    def __repr__(self) -> str:
        return f"Shard(dim={self._dim})"

    def __str__(self) -> str:
        return f"S({self._dim})"

    def __reduce__(self):
        return (type(self), (self._dim,))

    @staticmethod
    def local_shard_size_and_offset(
        curr_local_size: int, num_chunks: int, rank: int
    ) -> tuple[int, int]:
        """``(size, offset)`` of chunk ``rank`` when ``curr_local_size`` elements are split
        into ``num_chunks`` as ``torch.chunk`` does (the offset is relative to the tensor
        being split).

        Example:
            >>> from ember.distributed.tensor import Shard
            >>> [Shard.local_shard_size_and_offset(10, 3, r) for r in range(3)]
            [(4, 0), (4, 4), (2, 8)]
        """
        if curr_local_size % num_chunks == 0:
            full = curr_local_size // num_chunks
            return full, full * rank
        full = (curr_local_size + num_chunks - 1) // num_chunks
        start = full * rank
        end = min(curr_local_size, start + full)
        return max(0, end - start), min(curr_local_size, start)

    def _local_shard_size_and_offset(
        self, curr_local_size: int, num_chunks: int, rank: int
    ) -> tuple[int, int]:
        return Shard.local_shard_size_and_offset(curr_local_size, num_chunks, rank)

    def _split_tensor(
        self, tensor, num_chunks: int, *, with_padding: bool = False, contiguous: bool = True
    ):
        """The ``num_chunks`` pieces of ``tensor`` along ``dim`` (empty pieces filled in) and
        the padding each would need to reach the first piece's size."""
        if with_padding:
            raise NotImplementedError("ember's Shard._split_tensor does not pad the pieces")
        dim = self._dim % tensor.ndim if tensor.ndim else 0
        pieces = list(tensor.chunk(num_chunks, dim=dim))
        full = pieces[0].shape[dim] if pieces else 0
        while len(pieces) < num_chunks:
            shape = list(tensor.shape)
            shape[dim] = 0
            pieces.append(tensor.new_zeros(shape))
        if contiguous:
            pieces = [p.contiguous() for p in pieces]
        return pieces, [full - p.shape[dim] for p in pieces]


class _StridedShardOffsetMode(enum.IntEnum):
    FIRST = 0
    ALL = 1
    NONE = 2


class _StridedShard(Placement):
    """``_StridedShard(dim, split_factor=n)``: ``dim`` is first cut into ``n`` pieces and each
    rank takes its ``torch.chunk`` of every piece (sharding applied right to left).

    Example:
        >>> from ember.distributed.tensor.placement_types import _StridedShard
        >>> s = _StridedShard(0, split_factor=2)
        >>> s, str(s), s.local_shard_size_and_offset(8, 2, 1, offset_mode=1)
        (_StridedShard(dim=0, sf=2), '_S(0, 2)', (4, [2, 3, 6, 7]))
    """

    __slots__ = ("_dim", "_split_factor")

    def __init__(self, dim: int, *, split_factor: int = 1, sf: int | None = None) -> None:
        if sf is not None:
            if split_factor != 1:
                raise TypeError("_StridedShard received both split_factor and sf")
            split_factor = sf
        self._dim = _check_int("StridedShard", dim)
        self._split_factor = int(split_factor)

    @property
    def dim(self) -> int:
        """The tensor dimension that is split."""
        return self._dim

    @property
    def split_factor(self) -> int:
        """How many pieces ``dim`` is cut into before each is sharded."""
        return self._split_factor

    def _split_factor_int(self) -> int:
        return self._split_factor

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _StridedShard)
            and self._dim == other._dim
            and self._split_factor == other._split_factor
        )

    def __hash__(self) -> int:
        return hash((self._dim, self._split_factor))

    def __repr__(self) -> str:
        return f"_StridedShard(dim={self._dim}, sf={self._split_factor})"

    def __str__(self) -> str:
        return f"_S({self._dim}, {self._split_factor})"

    def __reduce__(self):
        return (_rebuild_strided, (self._dim, self._split_factor))

    def _indices(self, size: int, num_chunks: int) -> list[list[int]]:
        """The indices along ``dim`` that each of the ``num_chunks`` ranks holds."""
        out: list[list[int]] = [[] for _ in range(num_chunks)]
        first = (size + self._split_factor - 1) // self._split_factor
        for split in range(self._split_factor):
            start = min(first * split, size)
            length = max(0, min(first * (split + 1), size) - start)
            for rank in range(num_chunks):
                size_r, off = Shard.local_shard_size_and_offset(length, num_chunks, rank)
                out[rank].extend(range(start + off, start + off + size_r))
        return out

    def local_shard_size_and_offset(
        self,
        curr_local_size: int,
        num_chunks: int,
        rank: int,
        offset_mode: _StridedShardOffsetMode = _StridedShardOffsetMode.FIRST,
    ) -> tuple[int, list[int] | int | None]:
        """``(size, offsets)`` of rank ``rank``'s indices: the first index (``-1`` when
        empty) for ``offset_mode`` FIRST, all of them for ALL, None for NONE."""
        offset_mode = _StridedShardOffsetMode(offset_mode)
        mine = self._indices(curr_local_size, num_chunks)[rank]
        if offset_mode is _StridedShardOffsetMode.NONE:
            return len(mine), None
        if offset_mode is _StridedShardOffsetMode.FIRST:
            return len(mine), (mine[0] if mine else -1)
        return len(mine), mine

    def _local_shard_size_and_offset(
        self,
        curr_local_size: int,
        num_chunks: int,
        rank: int,
        offset_mode: _StridedShardOffsetMode = _StridedShardOffsetMode.FIRST,
    ):
        return self.local_shard_size_and_offset(curr_local_size, num_chunks, rank, offset_mode)


def _rebuild_strided(dim: int, split_factor: int) -> _StridedShard:
    return _StridedShard(dim, split_factor=split_factor)


class Replicate(Placement):
    """``Replicate()``: every rank on the mesh dimension holds the whole tensor.

    Example:
        >>> from ember.distributed.tensor import Replicate
        >>> Replicate() == Replicate(), str(Replicate())
        (True, 'R')
    """

    __slots__ = ()

    def is_replicate(self) -> bool:
        return True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Replicate)

    def __hash__(self) -> int:
        return -1

    def __repr__(self) -> str:
        return "Replicate()"

    def __str__(self) -> str:
        return "R"

    def __reduce__(self):
        return (Replicate, ())


class Partial(Placement):
    """``Partial(reduce_op="sum")``: each rank holds a partial value; the tensor is their
    reduction with ``reduce_op`` (``"sum"``, ``"avg"``, ``"min"``, ``"max"``, ...).

    Example:
        >>> from ember.distributed.tensor import Partial
        >>> Partial(), Partial() == Partial("sum"), Partial("max").reduce_op
        (Partial(sum), True, 'max')
    """

    __slots__ = ("_reduce_op",)
    LINEAR_REDUCE_OPS: tuple[str, ...] = ("sum", "avg")
    ALL_REDUCE_OPS: tuple[str, ...] = ("sum", "avg", "min", "max", "product")

    def __init__(self, reduce_op: str = "sum") -> None:
        self._reduce_op = reduce_op

    @property
    def reduce_op(self) -> str:
        """The reduction still to be applied across the mesh dimension."""
        return self._reduce_op

    def is_partial(self, reduce_op: str | None = None) -> bool:
        return reduce_op is None or reduce_op == self._reduce_op

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Partial) and other._reduce_op == self._reduce_op

    def __hash__(self) -> int:
        return 1 + hash(self._reduce_op)

    def __repr__(self) -> str:
        return f"Partial({self._reduce_op})"

    def __str__(self) -> str:
        return f"P({self._reduce_op})"

    def __reduce__(self):
        return (Partial, (self._reduce_op,))


_Partial = Partial


def _is_shard_like(p: Placement) -> bool:
    """Whether ``p`` is ``Shard`` or ``_StridedShard``."""
    return isinstance(p, (Shard, _StridedShard))
