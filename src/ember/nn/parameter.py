"""``Parameter``: a Tensor that a Module registers as one of its learnable weights."""

from __future__ import annotations

import numpy as np

from .. import _dtype, _overrides
from .._tensor import Tensor

__all__ = ["Parameter"]


class Parameter(Tensor):
    """A Tensor that is a module parameter: assigning it to a Module attribute registers it.

    It shares ``data``'s storage and version counter and requires grad by default.
    Operations on a Parameter return plain Tensors.

    Example:
        >>> import ember
        >>> from ember.nn import Parameter
        >>> p = Parameter(ember.ones(2))
        >>> p
        Parameter containing:
        tensor([1., 1.], requires_grad=True)
        >>> type(p * 2).__name__
        'Tensor'
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            arr = np.empty((0,), dtype=_dtype._default[0].np)
            version = [0]
        elif isinstance(data, Tensor):
            arr = data._data
            version = data._vc
        else:
            raise TypeError(
                f"Parameter(): argument 'data' must be Tensor, not {type(data).__name__}"
            )
        t = object.__new__(cls)
        t._data = arr
        t._rg = False
        t.grad_fn = None
        t._output_nr = 0
        t._vc = version
        t._grad = None
        t._aux = None
        if requires_grad:
            if arr.dtype.kind not in "fcV":
                raise RuntimeError(
                    "Only Tensors of floating point and complex dtype can require gradients"
                )
            t._rg = True
        return t

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        # Everything happens in __new__; Tensor.__init__ would re-create the data.
        pass

    def __repr__(self, *, tensor_contents=None) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self._data, self._rg))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = Parameter(Tensor._wrap(self._data.copy()), self._rg)
        if self._grad is not None:
            result._grad = Tensor._wrap(self._grad._data.copy())
        memo[id(self)] = result
        return result


def _rebuild_parameter(data: np.ndarray, requires_grad: bool) -> Parameter:
    return Parameter(Tensor._wrap(data), requires_grad)


# Operations on a Parameter return plain Tensors, and it never dispatches (torch's
# Parameter.__torch_function__ is _disabled_torch_function_impl).
Parameter.__torch_function__ = classmethod(_overrides._disabled_torch_function_impl)
_overrides.plain_type(Parameter)
