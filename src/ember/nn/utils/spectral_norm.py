"""The hook-based ``spectral_norm`` (torch.nn.utils.spectral_norm): ``weight`` recomputed
before every forward as ``weight_orig / sigma``, ``sigma`` estimated by power iteration
(one step per training forward) with the buffers ``weight_u`` and ``weight_v``."""

from __future__ import annotations

import numpy as np

from ... import _creation
from ..._aten.linalg import dot, mv
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


def normalize_array(a: np.ndarray, eps: float) -> np.ndarray:
    """``a / max(||a||, eps)`` (``F.normalize`` of a vector)."""
    return a / max(float(np.sqrt(np.dot(a, a))), eps)


def power_iteration(w: np.ndarray, u: Tensor, v: Tensor, n: int, eps: float, u_first: bool):
    """``n`` power-iteration steps on the matrix ``w``, written into ``u`` and ``v`` in
    place (``u_first``: update ``u`` from ``v`` first, as the parametrization does)."""
    ua, va = u._data, v._data
    for _ in range(n):
        if u_first:
            ua[...] = normalize_array(w @ va, eps)
            va[...] = normalize_array(w.T @ ua, eps)
        else:
            va[...] = normalize_array(w.T @ ua, eps)
            ua[...] = normalize_array(w @ va, eps)
    u._bump()
    v._bump()


def random_unit(n: int, dtype, eps: float) -> Tensor:
    """A random unit vector of ``n`` elements (ember's global generator)."""
    a = _creation._rng(None).standard_normal(n).astype(dtype)
    return Tensor._wrap(normalize_array(a, eps).astype(dtype))


class SpectralNorm:
    """The forward pre-hook of ``spectral_norm``."""

    _version: int = 1

    def __init__(
        self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but "
                f"got n_power_iterations={n_power_iterations}"
            )
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        weight_mat = weight
        if self.dim != 0:
            weight_mat = weight_mat.permute(
                self.dim, *[d for d in range(weight_mat.dim()) if d != self.dim]
            )
        height = weight_mat.size(0)
        return weight_mat.reshape(height, -1)

    def compute_weight(self, module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            w = weight_mat._data
            power_iteration(w, u, v, self.n_power_iterations, self.eps, u_first=False)
            u = u.clone()
            v = v.clone()
        sigma = dot(u, mv(weight_mat, v))
        return weight / sigma

    def remove(self, module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module, name: str, n_power_iterations: int, dim: int, eps: float) -> SpectralNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two spectral_norm hooks on the same parameter {name}"
                )
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            u = random_unit(h, weight._data.dtype, fn.eps)
            v = random_unit(w, weight._data.dtype, fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        hook = SpectralNormStateDictHook(fn)
        module._state_dict_hooks[id(hook)] = hook
        return fn


class SpectralNormStateDictHook:
    """Records the version of the spectral norm in the state dict's metadata (as torch)."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata) -> None:
        if "spectral_norm" not in local_metadata:
            local_metadata["spectral_norm"] = {}
        key = self.fn.name + ".version"
        if key in local_metadata["spectral_norm"]:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        local_metadata["spectral_norm"][key] = self.fn._version


def _default_dim(module) -> int:
    return 1 if type(module).__name__.startswith("ConvTranspose") else 0


def spectral_norm(
    module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12, dim=None
):
    """Reparametrise ``module.<name>`` as ``<name>_orig / sigma``, ``sigma`` its largest
    singular value estimated by power iteration.

    Example:
        >>> from ember import nn
        >>> m = nn.utils.spectral_norm(nn.Linear(5, 3))
        >>> m.weight_u.shape, m.weight_v.shape
        (torch.Size([3]), torch.Size([5]))
    """
    if dim is None:
        dim = _default_dim(module)
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name: str = "weight"):
    """Undo ``spectral_norm``: ``<name>`` is a parameter again, with the current value.

    Example:
        >>> from ember import nn
        >>> m = nn.utils.remove_spectral_norm(nn.utils.spectral_norm(nn.Linear(5, 3)))
        >>> sorted(name for name, _ in m.named_parameters()), hasattr(m, "weight_u")
        (['bias', 'weight'], False)
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for k, hook in module._state_dict_hooks.items():
        if isinstance(hook, SpectralNormStateDictHook) and hook.fn.name == name:
            del module._state_dict_hooks[k]
            break
    return module
