"""The hook-based ``weight_norm`` (torch.nn.utils.weight_norm): ``weight`` recomputed as
``g * v / ||v||`` before every forward from the parameters ``weight_g`` and ``weight_v``.

Deprecated in torch in favour of ``ember.nn.utils.parametrizations.weight_norm``; kept with
torch's ``FutureWarning``.
"""

from __future__ import annotations

from ..._overrides import warn as _warn
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...linalg import vector_norm
from ..parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm", "norm_except_dim"]


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:  # noqa: A002
    """The ``pow``-norm of ``v`` over every dimension but ``dim`` (kept as size-1
    dimensions); ``dim=-1``: the norm of the whole tensor (torch.norm_except_dim)."""
    if dim == -1:
        return vector_norm(v, pow)
    dims = tuple(d for d in range(v.dim()) if d != dim)
    if not dims:
        return v.abs()
    return vector_norm(v, pow, dim=dims, keepdim=True)


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """``v * (g / ||v||)`` with the norm over every dimension but ``dim``."""
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and
    ``<name>_v``."""

    def __init__(self, name: str, dim: int) -> None:
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module) -> Tensor:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name: str, dim: int) -> WeightNorm:
        _warn(
            "`torch.nn.utils.weight_norm` is deprecated in favor of "
            "`torch.nn.utils.parametrizations.weight_norm`.",
            FutureWarning,
            stacklevel=3,
        )
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}"
                )
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        with no_grad():
            g = norm_except_dim(weight, 2, dim)
        module.register_parameter(name + "_g", Parameter(g.data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name: str = "weight", dim: int = 0):
    """Reparametrise ``module.<name>`` as ``g * v / ||v||`` (norm over every dimension but
    ``dim``; ``dim=None``: the whole tensor), with parameters ``<name>_g`` and ``<name>_v``.

    Example:
        >>> import warnings
        >>> from ember import nn
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     m = nn.utils.weight_norm(nn.Linear(3, 4))
        >>> m.weight_g.shape, m.weight_v.shape
        (torch.Size([4, 1]), torch.Size([4, 3]))
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name: str = "weight"):
    """Undo ``weight_norm``: ``<name>`` is a parameter again, with the current value.

    Example:
        >>> import warnings
        >>> from ember import nn
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")  # weight_norm's deprecation warning
        ...     m = nn.utils.weight_norm(nn.Linear(3, 4))
        >>> m = nn.utils.remove_weight_norm(m)
        >>> sorted(name for name, _ in m.named_parameters())
        ['bias', 'weight']
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
