"""``torch.distributed.device_mesh``: ``DeviceMesh``, an n-dimensional arrangement of the
ranks of the default process group, with one process group per mesh dimension.

A mesh needs a process group. As in torch, building one before ``init_process_group``
starts the default group from the ``env://`` variables (``RANK``, ``WORLD_SIZE``,
``MASTER_ADDR``, ``MASTER_PORT``), and fails with torch's error when they are not set.

Example:
    >>> import ember, ember.distributed as dist
    >>> from ember.distributed.device_mesh import init_device_mesh
    >>> dist.init_process_group("mpi")  # alone: a group of one process
    >>> mesh = init_device_mesh("cpu", (1,), mesh_dim_names=("dp",))
    >>> mesh.shape, mesh.get_rank(), mesh.get_coordinate(), mesh["dp"].mesh_dim_names
    ((1,), 0, [0], ('dp',))
    >>> dist.destroy_process_group()
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

import numpy as np

from .._tensor import Tensor
from . import distributed_c10d as c10d

__all__ = ["DeviceMesh", "init_device_mesh"]

_ENV_VARS = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


def _ensure_default_group() -> None:
    """Start the default group the way torch's ``init_process_group()`` does (env://)."""
    if c10d.is_initialized():
        return
    for name in _ENV_VARS:
        if name not in os.environ:
            raise ValueError(
                "Error initializing torch.distributed using env:// rendezvous: environment "
                f"variable {name} expected, but not set"
            )
    c10d.init_process_group()


class _MeshEnv:
    """The stack of meshes entered with ``with mesh:`` (``_mesh_resources``)."""

    def __init__(self) -> None:
        self.mesh_stack: list[DeviceMesh] = []

    def get_current_mesh(self) -> DeviceMesh:
        if len(self.mesh_stack) == 0:
            raise RuntimeError("No device mesh is currently active!")
        return self.mesh_stack[-1]


_mesh_resources = _MeshEnv()


class DeviceMesh:
    """Ranks of the default process group arranged as the n-d array ``mesh``; every
    dimension gets a process group over each line of ranks along it (built collectively by
    all processes, as torch does).

    Example:
        >>> import ember, ember.distributed as dist
        >>> from ember.distributed.device_mesh import DeviceMesh
        >>> try:
        ...     DeviceMesh("cpu", [0])     # no process group and no env:// variables
        ... except ValueError as e:
        ...     print(str(e)[:60])
        Error initializing torch.distributed using env:// rendezvous
    """

    def __init__(
        self,
        device_type: str,
        mesh,
        *,
        mesh_dim_names: tuple[str, ...] | None = None,
        backend_override=None,
        _init_backend: bool = True,
    ) -> None:
        self.device_type = device_type
        ranks = np.asarray(mesh.numpy() if hasattr(mesh, "numpy") else mesh, dtype=np.int64)
        if ranks.ndim == 0:
            ranks = ranks.reshape(1)
        self._ranks = ranks
        self.mesh = Tensor._wrap(ranks.astype(np.int32))
        if mesh_dim_names is not None:
            mesh_dim_names = tuple(mesh_dim_names)
            if len(mesh_dim_names) != ranks.ndim:
                raise ValueError(
                    "mesh_dim_names must have same length as mesh dims! "
                    f"Found {len(mesh_dim_names)} instead of {ranks.ndim}."
                )
        self.mesh_dim_names = mesh_dim_names
        if not _init_backend:
            self._groups: list = []
            self._coordinate = None
            return
        _ensure_default_group()
        world = c10d.get_world_size()
        if ranks.size > world:
            raise RuntimeError(
                f"Mesh should not be bigger than default world size {world}, but found "
                f"{ranks.size} ranks!"
            )
        if len(np.unique(ranks)) != ranks.size:
            raise RuntimeError(
                f"DeviceMesh cannot have duplicate values, but found {ranks.tolist()}"
            )
        me = c10d.get_rank()
        found = np.argwhere(ranks == me)
        self._coordinate = [int(i) for i in found[0]] if len(found) else None
        self._groups = [self._dim_group(d, world) for d in range(ranks.ndim)]

    def _dim_group(self, dim: int, world: int):
        """The process group of this rank's line of ranks along ``dim`` (every line is
        created on every process, so that all processes make the same calls)."""
        lines = np.moveaxis(self._ranks, dim, -1).reshape(-1, self._ranks.shape[dim])
        mine = None
        for line in lines:
            ranks = [int(r) for r in line]
            if sorted(ranks) == list(range(world)):
                pg = c10d.group.WORLD
            else:
                pg = c10d.new_group(ranks)
            if self._coordinate is not None and c10d.get_rank() in ranks:
                mine = pg
        return mine

    # -- what the mesh is --------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        """The mesh's shape."""
        return tuple(int(s) for s in self._ranks.shape)

    @property
    def ndim(self) -> int:
        """The number of mesh dimensions."""
        return self._ranks.ndim

    def size(self, mesh_dim: int | None = None) -> int:
        """The number of ranks in the mesh, or along ``mesh_dim``."""
        if mesh_dim is None:
            return int(self._ranks.size)
        return int(self._ranks.shape[mesh_dim])

    def _dim(self, mesh_dim) -> int:
        if isinstance(mesh_dim, str):
            names = self.mesh_dim_names or ()
            if mesh_dim not in names:
                raise KeyError(
                    f"Mesh dimension '{mesh_dim}' does not exist. Available mesh dimensions "
                    f"are: mesh_dim_names={self.mesh_dim_names}"
                )
            return names.index(mesh_dim)
        return int(mesh_dim)

    def get_group(self, mesh_dim: int | str | None = None):
        """The process group of ``mesh_dim`` (may be omitted for a 1-d mesh)."""
        if self.ndim > 1 and mesh_dim is None:
            raise RuntimeError(
                f"Found the DeviceMesh have {self.ndim} dimensions",
                "Optional kwarg `mesh_dim` needs to be specified when device_mesh.ndim > 1.",
                "If you want to get the list of all the ProcessGroups in the DeviceMesh,"
                "please use `get_all_groups()` instead.",
            )
        return self._groups[0 if mesh_dim is None else self._dim(mesh_dim)]

    def get_all_groups(self) -> list:
        """The process groups of all mesh dimensions."""
        return list(self._groups)

    def get_rank(self) -> int:
        """This process's rank in the default group."""
        return c10d.get_rank()

    def get_local_rank(self, mesh_dim: int | str | None = None) -> int:
        """This process's index along ``mesh_dim`` (may be omitted for a 1-d mesh)."""
        if self.ndim > 1 and mesh_dim is None:
            raise RuntimeError(
                f"Found the DeviceMesh have {self.ndim} dimensions",
                "Optional kwarg `mesh_dim` needs to be specified when device_mesh.ndim > 1.",
            )
        return c10d.get_rank(self.get_group(mesh_dim))

    def get_coordinate(self) -> list[int] | None:
        """This process's position in the mesh (None when it is not in the mesh)."""
        return None if self._coordinate is None else list(self._coordinate)

    def _is_current_rank_part_of_mesh(self) -> bool:
        return self._coordinate is not None

    def __getitem__(self, names: str | Sequence[str]) -> DeviceMesh:
        """The sub-mesh of the named dimensions (one name only) through this process."""
        wanted = (names,) if isinstance(names, str) else tuple(names)
        valid = list(self.mesh_dim_names or ())
        if not wanted or any(n not in valid for n in wanted):
            raise KeyError(
                f"Invalid mesh_dim_names {wanted} specified. Valid mesh_dim_names are {valid}."
            )
        if len(wanted) != 1:
            raise NotImplementedError("ember's DeviceMesh slices one named dimension at a time")
        dim = valid.index(wanted[0])
        sub = DeviceMesh.__new__(DeviceMesh)
        sub.device_type = self.device_type
        sub.mesh_dim_names = wanted
        if self._coordinate is None:
            line = self._ranks.reshape(-1)[: self._ranks.shape[dim]] * 0 - 1
            sub._coordinate = None
        else:
            index = list(self._coordinate)
            index[dim] = slice(None)
            line = self._ranks[tuple(index)]
            sub._coordinate = [self._coordinate[dim]]
        sub._ranks = np.asarray(line, dtype=np.int64).reshape(-1)
        sub.mesh = Tensor._wrap(sub._ranks.astype(np.int32))
        sub._groups = [self._groups[dim]]
        return sub

    # -- context manager, comparisons, printing -----------------------------------------

    def __enter__(self) -> DeviceMesh:
        _mesh_resources.mesh_stack.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _mesh_resources.mesh_stack.pop()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DeviceMesh):
            return False
        return (
            self.device_type == other.device_type
            and self.mesh_dim_names == other.mesh_dim_names
            and np.array_equal(self._ranks, other._ranks)
        )

    def __hash__(self) -> int:
        return hash((self.device_type, self.mesh_dim_names, tuple(self._ranks.reshape(-1))))

    def __repr__(self) -> str:
        names = self.mesh_dim_names or tuple(f"dim{i}" for i in range(self.ndim))
        dims = ", ".join(f"{n}={s}" for n, s in zip(names, self.shape))
        return f"DeviceMesh(({dims}), '{self.device_type}', mesh={self._ranks.tolist()})"


def init_device_mesh(
    device_type: str,
    mesh_shape: tuple[int, ...],
    *,
    mesh_dim_names: tuple[str, ...] | None = None,
    backend_override=None,
) -> DeviceMesh:
    """A ``DeviceMesh`` of shape ``mesh_shape`` over ranks ``0 .. prod(mesh_shape) - 1``
    in row-major order.

    Example:
        >>> import ember, ember.distributed as dist
        >>> from ember.distributed.device_mesh import init_device_mesh
        >>> dist.init_process_group("mpi")  # alone: a group of one process
        >>> init_device_mesh("cpu", (1, 1), mesh_dim_names=("dp", "tp")).ndim
        2
        >>> dist.destroy_process_group()
    """
    if mesh_dim_names is not None:
        if len(set(mesh_dim_names)) != len(mesh_dim_names):
            raise RuntimeError(
                "Each mesh_dim_name must be unique.",
                f"Found repeated mesh_dim_name in mesh_dim_names {mesh_dim_names}",
            )
        if len(mesh_shape) != len(mesh_dim_names):
            raise RuntimeError(
                "mesh_shape and mesh_dim_names should have same length!",
                f"Found len(mesh_dim_names): {len(mesh_dim_names)} and len(mesh_shape):"
                f"{len(mesh_shape)}.",
            )
    ranks = np.arange(math.prod(mesh_shape), dtype=np.int64).reshape(tuple(mesh_shape))
    return DeviceMesh(device_type, ranks, mesh_dim_names=mesh_dim_names)
