"""FSDP2's ``fully_shard`` and its policies."""

from __future__ import annotations

from dataclasses import dataclass

from .. import distributed_c10d as c10d

__all__ = ["CPUOffloadPolicy", "MixedPrecisionPolicy", "OffloadPolicy", "fully_shard"]


@dataclass
class OffloadPolicy:
    """No offloading (the base of the offload policies).

    Example:
        >>> from ember.distributed.fsdp import OffloadPolicy
        >>> OffloadPolicy()
        OffloadPolicy()
    """


@dataclass
class CPUOffloadPolicy(OffloadPolicy):
    """Keep sharded parameters on the CPU (``pin_memory`` pins them).

    Example:
        >>> from ember.distributed.fsdp import CPUOffloadPolicy
        >>> CPUOffloadPolicy(pin_memory=False)
        CPUOffloadPolicy(pin_memory=False)
    """

    pin_memory: bool = True


@dataclass(frozen=True)
class MixedPrecisionPolicy:
    """The dtypes FSDP2 computes, reduces and returns in (None: the parameters' own).

    Example:
        >>> from ember.distributed.fsdp import MixedPrecisionPolicy
        >>> MixedPrecisionPolicy().param_dtype is None
        True
    """

    param_dtype: object = None
    reduce_dtype: object = None
    output_dtype: object = None
    cast_forward_inputs: bool = True


def fully_shard(
    module,
    *,
    mesh=None,
    reshard_after_forward=None,
    shard_placement_fn=None,
    mp_policy=None,
    offload_policy=None,
    ignored_params=None,
):
    """Shard ``module``'s parameters over ``mesh`` (FSDP2). Without a mesh it builds one
    over the default group, which must exist or be startable from ``env://``.

    Example:
        >>> import ember
        >>> from ember.distributed.fsdp import fully_shard
        >>> try:
        ...     fully_shard(ember.nn.Linear(2, 2))
        ... except ValueError as e:
        ...     print(str(e)[:60])
        Error initializing torch.distributed using env:// rendezvous
    """
    from ..device_mesh import _ensure_default_group  # deferred: meshes need numpy arrays only

    if mesh is None:
        _ensure_default_group()
    if not c10d.is_initialized():
        _ensure_default_group()
    raise NotImplementedError(
        "ember does not implement fully_shard (FSDP2): its parameters would be DTensors"
    )
