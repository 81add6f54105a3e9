"""Forward-mode automatic differentiation: ``torch.autograd.forward_ad`` on ember.

A *dual tensor* is a tensor with a *tangent* (its directional derivative) at the current
forward AD level. Inside ``dual_level()``, every op whose inputs carry tangents gives its
outputs the tangents ``J @ tangents``, computed when the op is recorded from the forward
mode its declaration states (``autograd.opdef``); see ``autograd.recording``. Tangents live
in ``TensorAux.tangent``, so plain tensors pay nothing for them; the tangent of a view is a
view of its base's tangent, and in-place ops update tangents in place, as in torch.

JVP rules compute with ember ops on Tensors, with forward mode switched off. When a
tangent or a primal requires grad (and grad mode is on) the rule is recorded, so
reverse-over-forward works; backward rules recorded with ``create_graph=True`` run on
dual tensors, so forward-over-reverse (Hessian-vector products) works too.

Example:
    >>> import ember
    >>> import ember.autograd.forward_ad as fwAD
    >>> x = ember.tensor([0.0, 1.0], dtype=ember.float64)
    >>> with fwAD.dual_level():
    ...     y = fwAD.make_dual(x, ember.ones(2, dtype=ember.float64)).exp()
    ...     fwAD.unpack_dual(y).tangent
    tensor([1.0000, 2.7183], dtype=torch.float64)
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

from .._tensor import Tensor
from .opdef import defop
from .recording import fw, record, refresh_on, set_tangent, suspended, tangent_of
from .views import AliasBackward0, ViewBackward0

__all__ = [
    "UnpackedDualTensor",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
    "dual_level",
]

# The node torch gives the primal of unpack_dual when it requires grad.
_PrimalView = defop(
    "torch::autograd::Identity",
    forward=AliasBackward0.forward,
    vjp={"self": lambda g: g},
    jvp=None,
    view=True,
)


# -- levels ------------------------------------------------------------------------------


def enter_dual_level() -> int:
    """Enter a new forward grad level (torch supports one level at a time); returns it.

    Prefer the :class:`dual_level` context manager, which also exits the level.

    Example:
        >>> import ember
        >>> import ember.autograd.forward_ad as fwAD
        >>> level = fwAD.enter_dual_level()
        >>> fwAD.unpack_dual(fwAD.make_dual(ember.tensor([3.0]), ember.tensor([1.0])) ** 2)
        UnpackedDualTensor(primal=tensor([9.]), tangent=tensor([6.]))
        >>> fwAD.exit_dual_level(level=level)
    """
    if fw.level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    fw.level = 0
    refresh_on()
    return 0


def exit_dual_level(*, level=None) -> None:
    """Exit the level: every tangent made at this level is deleted.

    Example:
        >>> import ember
        >>> import ember.autograd.forward_ad as fwAD
        >>> level = fwAD.enter_dual_level()
        >>> d = fwAD.make_dual(ember.tensor([3.0]), ember.tensor([1.0]))
        >>> fwAD.exit_dual_level(level=level)
        >>> fwAD.unpack_dual(d).tangent is None
        True
    """
    if level is None:
        level = fw.level
    if level != fw.level:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    fw.level = -1
    refresh_on()
    duals, fw.duals = fw.duals, []
    fw.prune_at = 4096
    for ref in duals:
        t = ref()
        if t is not None and t._aux is not None:
            t._aux.tangent = None


class dual_level:
    """Context manager (and decorator) for a forward AD level.

    Example:
        >>> import ember
        >>> import ember.autograd.forward_ad as fwAD
        >>> with fwAD.dual_level():
        ...     d = fwAD.make_dual(ember.tensor([2.0]), ember.tensor([1.0]))
        ...     fwAD.unpack_dual(d * d).tangent
        tensor([4.])
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        exit_dual_level()

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)

        return wrapper


# -- dual tensors ------------------------------------------------------------------------


class UnpackedDualTensor(NamedTuple):
    """``(primal, tangent)`` as returned by :func:`unpack_dual` (a named tuple).

    Example:
        >>> import ember
        >>> import ember.autograd.forward_ad as fwAD
        >>> with fwAD.dual_level():
        ...     primal, tangent = fwAD.unpack_dual(
        ...         fwAD.make_dual(ember.tensor([3.0]), ember.tensor([1.0]))
        ...     )
        >>> primal, tangent
        (tensor([3.]), tensor([1.]))
    """

    primal: Any
    tangent: Any


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` carrying ``tangent`` (same shape, floating point) at ``level``.

    Example:
        >>> import ember
        >>> import ember.autograd.forward_ad as fwAD
        >>> with fwAD.dual_level():
        ...     d = fwAD.make_dual(ember.tensor([1.0, 2.0]), ember.tensor([0.5, 0.5]))
        ...     fwAD.unpack_dual(d.sin() * 2).tangent
        tensor([ 0.5403, -0.4161])
    """
    if level is None:
        level = fw.level
    if level < 0:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: {tensor.dtype}"
        )
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(
            f"Expected tangent to be floating point or complex, but got: {tangent.dtype}"
        )
    if level != 0:  # torch supports one level, whose index is 0
        raise RuntimeError("Invalid level given to _make_dual")
    if fw.level < 0:
        raise RuntimeError(
            "Trying to access a forward AD level with an invalid index. This index was either "
            "not created or is already deleted."
        )
    if tangent_of(tensor) is not None:
        raise RuntimeError(
            "Making a dual Tensor based on a Tensor that already has a forward gradient at the "
            f"same level {level} is not supported."
        )
    if tangent_of(tangent) is not None:
        raise RuntimeError(
            "Setting a forward grad that itself has a forward gradient at the same level"
            f"{level} is not supported."
        )
    if tangent._data.shape != tensor._data.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            "original Tensor, this is not supported. Tensor is of size "
            f"{list(tensor._data.shape)} while the given forward gradient is of size "
            f"{list(tangent._data.shape)}."
        )
    shape = tensor._data.shape
    with suspended:
        dual = record(ViewBackward0, tensor._data.view(), (tensor,), (shape, shape))
    set_tangent(dual, tangent)
    return dual


def unpack_dual(tensor, *, level=None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor``: the primal is a view without the tangent; the
    tangent is None when ``tensor`` has none at ``level``.

    Example:
        >>> import ember
        >>> import ember.autograd.forward_ad as fwAD
        >>> with fwAD.dual_level():
        ...     fwAD.unpack_dual(ember.ones(1)).tangent is None
        True
    """
    if level is None:
        level = fw.level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    if not isinstance(tensor, Tensor):
        raise TypeError(
            "_unpack_dual(): argument 'dual' (position 1) must be Tensor, not "
            f"{type(tensor).__name__}"
        )
    # (A custom Function's forward, run with forward AD off, sees primals only.)
    tangent = None if fw.suspended else tangent_of(tensor)
    if tangent is not None and level != fw.level:
        raise RuntimeError("Invalid level given to _fw_primal")
    if level != fw.level:
        tangent = None
    with suspended:
        primal = record(_PrimalView, tensor._data.view(), (tensor,))
    return UnpackedDualTensor(primal, tangent)
