"""``parameters_to_vector`` and ``vector_to_parameters`` (torch.nn.utils.convert_parameters)."""

from __future__ import annotations

from collections.abc import Iterable

from ..._aten.shape import cat
from ..._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """The parameters flattened and concatenated into one vector (differentiable).

    Example:
        >>> import ember
        >>> from ember.nn.utils import parameters_to_vector
        >>> parameters_to_vector([ember.ones(2, 2), ember.zeros(3)])
        tensor([1., 1., 1., 1., 0., 0., 0.])
    """
    return cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Slice ``vec`` into the parameters' shapes and make each parameter's data that slice.

    Example:
        >>> import ember
        >>> from ember.nn.utils import vector_to_parameters
        >>> a, b = ember.zeros(2), ember.zeros(1, 2)
        >>> vector_to_parameters(ember.tensor([1.0, 2.0, 3.0, 4.0]), [a, b])
        >>> b
        tensor([[3., 4.]])
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    for param in parameters:
        num_param = param.numel()
        param.data = vec[pointer : pointer + num_param].view_as(param).data
        pointer += num_param
