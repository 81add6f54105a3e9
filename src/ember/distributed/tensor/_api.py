"""``torch.distributed.tensor``'s ``DTensor`` and the functions that make one.

A ``DTensor`` is a ``Tensor`` subclass, so ``isinstance(t, DTensor)`` is the check
libraries make (False for every ordinary tensor and parameter). Making one needs a
``DeviceMesh``: without a mesh given or entered (``with mesh:``) the functions raise
torch's ``No device mesh is currently active!``; with a mesh, ember does not implement
distributed tensors and says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..._tensor import Tensor
from ..device_mesh import DeviceMesh, _mesh_resources
from .placement_types import Placement

__all__ = [
    "DTensor",
    "distribute_module",
    "distribute_tensor",
    "empty",
    "full",
    "ones",
    "rand",
    "randn",
    "zeros",
]

_UNSUPPORTED = (
    "ember does not implement distributed tensors (DTensor): {what} on a DeviceMesh is not "
    "available"
)


def _mesh(device_mesh: DeviceMesh | None, what: str) -> DeviceMesh:
    mesh = _mesh_resources.get_current_mesh() if device_mesh is None else device_mesh
    raise NotImplementedError(_UNSUPPORTED.format(what=what))
    return mesh  # pragma: no cover


class DTensor(Tensor):
    """A tensor laid across the ranks of a ``DeviceMesh`` (torch's distributed tensor).

    Ordinary tensors are not DTensors; making one needs a mesh.

    Example:
        >>> import ember
        >>> from ember.distributed.tensor import DTensor
        >>> isinstance(ember.ones(2), DTensor), issubclass(DTensor, ember.Tensor)
        (False, True)
        >>> try:
        ...     DTensor.from_local(ember.ones(2))
        ... except RuntimeError as e:
        ...     print(e)
        No device mesh is currently active!
    """

    def __new__(cls, *args, **kwargs):
        if len(args) + len(kwargs) < 3:
            missing = ["local_tensor", "spec", "requires_grad"][len(args) + len(kwargs) :]
            names = '", "'.join(missing)
            raise TypeError(
                f'_dtensor__new__() missing {len(missing)} required positional argument: "{names}"'
            )
        raise NotImplementedError(_UNSUPPORTED.format(what="DTensor(...)"))

    @staticmethod
    def from_local(
        local_tensor: Tensor,
        device_mesh: DeviceMesh | None = None,
        placements: Sequence[Placement] | None = None,
        *,
        run_check: bool = False,
        shape=None,
        stride=None,
        grad_placements=None,
    ) -> DTensor:
        """The DTensor whose shard on this rank is ``local_tensor``."""
        _mesh(device_mesh, "DTensor.from_local")


def distribute_tensor(
    tensor: Tensor,
    device_mesh: DeviceMesh | None = None,
    placements: Sequence[Placement] | None = None,
    *,
    src_data_rank: int | None = 0,
) -> DTensor:
    """Split (or copy) ``tensor`` across ``device_mesh`` as ``placements`` say.

    Example:
        >>> import ember
        >>> from ember.distributed.tensor import distribute_tensor
        >>> try:
        ...     distribute_tensor(ember.ones(2))
        ... except RuntimeError as e:
        ...     print(e)
        No device mesh is currently active!
    """
    _mesh(device_mesh, "distribute_tensor")


def distribute_module(
    module,
    device_mesh: DeviceMesh | None = None,
    partition_fn=None,
    input_fn=None,
    output_fn=None,
):
    """Turn ``module``'s parameters into DTensors on ``device_mesh``.

    Example:
        >>> import ember
        >>> from ember.distributed.tensor import distribute_module
        >>> try:
        ...     distribute_module(ember.nn.Linear(2, 2))
        ... except RuntimeError as e:
        ...     print(e)
        No device mesh is currently active!
    """
    _mesh(device_mesh, "distribute_module")


def _factory(name: str):
    def make(*size, device_mesh: DeviceMesh | None = None, placements=None, **kwargs) -> DTensor:
        _mesh(device_mesh, f"torch.distributed.tensor.{name}")

    make.__name__ = make.__qualname__ = name
    make.__doc__ = (
        f"A DTensor filled as ``torch.{name}`` would, laid on ``device_mesh``.\n\n"
        "    Example:\n"
        "        >>> import ember.distributed.tensor as dt\n"
        "        >>> try:\n"
        f"        ...     dt.{name}({'4, fill_value=1.0' if name == 'full' else '4'})\n"
        "        ... except RuntimeError as e:\n"
        "        ...     print(e)\n"
        "        No device mesh is currently active!\n"
    )
    return make


empty = _factory("empty")
full = _factory("full")
ones = _factory("ones")
rand = _factory("rand")
randn = _factory("randn")
zeros = _factory("zeros")
