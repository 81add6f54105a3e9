"""``torch.distributed._functional_collectives``: collectives that return new tensors
instead of writing into their arguments (the ones libraries import).

``group`` is a ``ProcessGroup``, a 1-d ``DeviceMesh``, a ``(mesh, mesh_dim)`` pair or a
list of global ranks (which must be the ranks of an existing group).
"""

from __future__ import annotations

from .. import _creation
from ..autograd.function import Function
from . import distributed_c10d as c10d

__all__ = ["all_to_all_single", "all_to_all_single_autograd", "wait_tensor"]


def wait_tensor(tensor):
    """Wait for the collective that produces ``tensor``; ember's functional collectives
    finish before they return, so this gives ``tensor`` back.

    Example:
        >>> import ember
        >>> from ember.distributed._functional_collectives import wait_tensor
        >>> wait_tensor(ember.ones(2))
        tensor([1., 1.])
    """
    return tensor


def _resolve_group(group):
    from .device_mesh import DeviceMesh  # deferred: device_mesh is optional for callers

    if isinstance(group, c10d.ProcessGroup):
        return group
    if isinstance(group, DeviceMesh):
        if group.ndim != 1:
            raise AssertionError(
                "Only 1D mesh is supported, pass in (DeviceMesh, int) together if mesh > 1D"
            )
        return group.get_group()
    if isinstance(group, tuple) and len(group) == 2 and isinstance(group[0], DeviceMesh):
        return group[0].get_group(group[1])
    if isinstance(group, list):
        ranks = sorted(int(r) for r in group)
        for pg in c10d._State.groups:
            if sorted(pg._ranks) == ranks:
                return pg
        raise ValueError(f"no process group of ranks {group} exists")
    raise ValueError(f"Unsupported group type: {type(group)}, {group}")


def _exchange(input, output_split_sizes, input_split_sizes, pg):
    rows = sum(output_split_sizes) if output_split_sizes is not None else input.shape[0]
    out = _creation.empty((rows, *input.shape[1:]), dtype=input.dtype)
    c10d.all_to_all_single(out, input.contiguous(), output_split_sizes, input_split_sizes, pg)
    return out


def all_to_all_single(self, output_split_sizes, input_split_sizes, group, tag: str = ""):
    """Each process sends its chunks of ``self`` (dim 0, split by ``input_split_sizes``
    or evenly) to the others and returns what it received, in process order.

    Example:
        >>> import ember
        >>> from ember.distributed._functional_collectives import all_to_all_single
        >>> try:
        ...     all_to_all_single(ember.ones(2), None, None, None)
        ... except ValueError as e:
        ...     print(e)
        Unsupported group type: <class 'NoneType'>, None
    """
    pg = _resolve_group(group)
    return _exchange(self.detach(), output_split_sizes, input_split_sizes, pg)


class _AllToAllSingle(Function):
    @staticmethod
    def forward(ctx, input, output_split_sizes, input_split_sizes, pg):
        ctx.splits = (output_split_sizes, input_split_sizes)
        ctx.pg = pg
        return _exchange(input, output_split_sizes, input_split_sizes, pg)

    @staticmethod
    def backward(ctx, grad):
        output_split_sizes, input_split_sizes = ctx.splits
        # the gradient travels back: what was received is sent to where it came from
        return _exchange(grad, input_split_sizes, output_split_sizes, ctx.pg), None, None, None


def all_to_all_single_autograd(self, output_split_sizes, input_split_sizes, group, tag: str = ""):
    """``all_to_all_single`` that autograd differentiates (the gradient goes back along the
    reverse exchange).

    Example:
        >>> import ember
        >>> from ember.distributed._functional_collectives import all_to_all_single_autograd
        >>> try:
        ...     all_to_all_single_autograd(ember.ones(2), None, None, None)
        ... except ValueError as e:
        ...     print(e)
        Unsupported group type: <class 'NoneType'>, None
    """
    pg = _resolve_group(group)
    return _AllToAllSingle.apply(self, output_split_sizes, input_split_sizes, pg)
