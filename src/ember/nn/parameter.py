"""``Parameter``: a Tensor that a Module registers as one of its learnable weights; and the
lazy modules' ``UninitializedParameter`` / ``UninitializedBuffer``, which hold no data yet."""

from __future__ import annotations

import numpy as np

from .. import _creation, _dtype, _overrides
from .._tensor import Tensor

__all__ = ["Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter"]


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


_SHAPE_MSG = (
    "Can't access the shape of an uninitialized parameter or buffer. This error usually "
    "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
    "initialized one. Call `forward` to initialize the parameters before accessing their "
    "attributes."
)


class _UninitializedMixin:
    """Shape-less until ``materialize(shape)`` gives it data (of its dtype) and turns it into
    its ``cls_to_become``."""

    __slots__ = ()  # the layout of the class it becomes (``__class__`` is reassigned)
    cls_to_become: type = Tensor

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Allocate (uninitialised) data of ``shape`` and become ``cls_to_become``."""
        dt = self._data.dtype if dtype is None else dtype.np
        if isinstance(shape, int):
            shape = (shape,)
        self._data = np.empty(tuple(shape), dtype=dt)
        self._vc[0] += 1
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(_SHAPE_MSG)

    def size(self, dim=None):
        raise RuntimeError(_SHAPE_MSG)

    def numel(self):
        raise ValueError(
            "Attempted to use an uninitialized parameter in numel. This error happens when "
            f"you are using a `LazyModule` or explicitly manipulating "
            f"`torch.nn.parameter.{type(self).__name__}` objects. When using LazyModules Call "
            "`forward` with a dummy batch to initialize the parameters before calling torch "
            "functions"
        )

    def __repr__(self, *, tensor_contents=None) -> str:
        return f"<{type(self).__name__}>"

    __str__ = __repr__


class UninitializedParameter(_UninitializedMixin, Parameter):
    """A parameter with no data yet (see ``LazyLinear``).

    Example:
        >>> from ember.nn.parameter import UninitializedParameter
        >>> p = UninitializedParameter()
        >>> p
        <UninitializedParameter>
        >>> p.materialize((2, 3))
        >>> type(p).__name__, p.shape
        ('Parameter', torch.Size([2, 3]))
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        return Parameter.__new__(cls, _creation.empty(0, dtype=dtype), requires_grad)

    def __init__(self, requires_grad: bool = True, device=None, dtype=None) -> None:
        pass


def _alias(data: Tensor, cls: type = Tensor) -> Tensor:
    """A new ``cls`` sharing ``data``'s values and version counter, with no history (as
    ``data.detach()``) and ``data``'s ``requires_grad``."""
    t = object.__new__(cls)
    t._data = data._data
    t._rg = data.requires_grad
    t.grad_fn = None
    t._output_nr = 0
    t._vc = data._vc
    t._grad = None
    t._aux = None
    return t


class Buffer(Tensor):
    """A Tensor that is a module buffer: assigning it to a Module attribute registers it with
    ``register_buffer`` (``persistent``: whether ``state_dict`` holds it). The module keeps
    a plain Tensor sharing its values.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> m = nn.Module()
        >>> m.steps = nn.Buffer(ember.tensor(0))
        >>> m.cache = nn.Buffer(ember.zeros(2), persistent=False)
        >>> [name for name, _ in m.named_buffers()], list(m.state_dict())
        (['steps', 'cache'], ['steps'])
    """

    __slots__ = ("persistent",)

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True):
        if data is None:
            data = _creation.empty(0)
        if not isinstance(data, Tensor):
            raise AttributeError(f"'{type(data).__name__}' object has no attribute 'detach'")
        t = _alias(data, cls)
        t.persistent = persistent
        return t

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True) -> None:
        # Everything happens in __new__; Tensor.__init__ would re-create the data.
        pass

    def __repr__(self, *, tensor_contents=None) -> str:
        return repr(_alias(self))  # torch's Buffer is a plain Tensor: it prints as one

    __str__ = __repr__


# Ops on a Buffer give plain Tensors (torch's Buffer.__torch_function__ is disabled too).
Buffer.__torch_function__ = classmethod(_overrides._disabled_torch_function_impl)
_overrides.plain_type(Buffer)


class UninitializedBuffer(_UninitializedMixin, Tensor):
    """A buffer with no data yet (the running statistics of the lazy norms).

    Example:
        >>> from ember.nn.parameter import UninitializedBuffer
        >>> b = UninitializedBuffer()
        >>> b.materialize(3)
        >>> type(b).__name__
        'Tensor'
    """

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None):
        data = _creation.empty(0, dtype=dtype)
        t = object.__new__(cls)
        t._data = data._data
        t._rg = bool(requires_grad)
        t.grad_fn = None
        t._output_nr = 0
        t._vc = [0]
        t._grad = None
        t._aux = None
        return t

    def __init__(self, requires_grad: bool = False, device=None, dtype=None) -> None:
        pass
