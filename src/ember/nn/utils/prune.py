"""``torch.nn.utils.prune``: pruning a module's parameter by a mask.

Pruning ``name`` moves the parameter to ``name + "_orig"``, registers the mask as the buffer
``name + "_mask"``, and sets ``name`` to ``orig * mask`` before every forward (a forward
pre-hook: the pruning method itself). Pruning the same parameter again combines the masks
in a ``PruningContainer``; ``remove`` makes the pruning permanent.

Example:
    >>> import ember
    >>> from ember import nn
    >>> from ember.nn.utils import prune
    >>> m = nn.Linear(4, 2)
    >>> _ = prune.l1_unstructured(m, "weight", amount=0.5)
    >>> int((m.weight == 0).sum()), sorted(dict(m.named_buffers()))
    (4, ['weight_mask'])
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ..._aten.elementwise import abs as _abs
from ..._aten.linalg import _top_norm as _norm
from ..._aten.sorting import kthvalue
from ..._aten.sorting import topk as _topk
from ..._creation import ones_like, rand, rand_like, zeros_like
from .convert_parameters import parameters_to_vector

__all__ = [
    "BasePruningMethod",
    "PruningContainer",
    "Identity",
    "RandomUnstructured",
    "L1Unstructured",
    "RandomStructured",
    "LnStructured",
    "CustomFromMask",
    "identity",
    "random_unstructured",
    "l1_unstructured",
    "random_structured",
    "ln_structured",
    "global_unstructured",
    "custom_from_mask",
    "remove",
    "is_pruned",
]


class BasePruningMethod(ABC):
    """What every pruning method is: it computes a mask (``compute_mask``) and, as a
    forward pre-hook, sets the pruned tensor ``orig * mask`` on the module.

    Example:
        >>> from ember.nn.utils import prune
        >>> issubclass(prune.L1Unstructured, prune.BasePruningMethod)
        True
    """

    _tensor_name: str | None = None

    def __call__(self, module, inputs) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask of ``t`` combined with ``default_mask``."""

    def apply_mask(self, module):
        """``module``'s ``<name>_orig`` times its ``<name>_mask``."""
        assert self._tensor_name is not None, f"Module {module} has to be pruned"
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)``, combined with a pruning
        already there; returns the method (or the container) now hooked on the module."""

        def _get_composite_method(cls, module, name, *args, **kwargs):
            old_method = None
            found = 0
            hooks_to_remove = []
            for k, hook in module._forward_pre_hooks.items():
                if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
                    old_method = hook
                    hooks_to_remove.append(k)
                    found += 1
            assert found <= 1, (
                f"Avoid adding multiple pruning hooks to the same tensor {name} of module "
                f"{module}. Use a PruningContainer."
            )
            for k in hooks_to_remove:
                del module._forward_pre_hooks[k]
            method = cls(*args, **kwargs)
            method._tensor_name = name
            if old_method is not None:
                if isinstance(old_method, PruningContainer):
                    old_method.add_pruning_method(method)
                    method = old_method
                elif isinstance(old_method, BasePruningMethod):
                    container = PruningContainer(old_method)
                    container.add_pruning_method(method)
                    method = container
            return method

        method = _get_composite_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            assert importance_scores.shape == orig.shape, (
                f"importance_scores should have the same shape as parameter {name} of {module}"
            )
        else:
            importance_scores = orig
        if not isinstance(method, PruningContainer):
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception as e:
            if not isinstance(method, PruningContainer):
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise e
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` times its mask (computed from ``importance_scores``, default ``t``)."""
        if importance_scores is not None:
            assert importance_scores.shape == t.shape, (
                "importance_scores should have the same shape as tensor t"
            )
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module) -> None:
        """Make the pruning permanent: ``<name>`` becomes the parameter again, holding the
        pruned values; ``<name>_orig`` and ``<name>_mask`` go."""
        assert self._tensor_name is not None, (
            f"Module {module} has to be pruned before pruning can be removed"
        )
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


class PruningContainer(BasePruningMethod):
    """Successive prunings of one parameter: each new mask is computed on the entries (or
    channels) the previous ones kept.

    Example:
        >>> from ember.nn.utils import prune
        >>> len(prune.PruningContainer())
        0
    """

    def __init__(self, *args) -> None:
        self._pruning_methods: tuple = ()
        if not isinstance(args, Iterable):  # (torch's check: args is always a tuple)
            self._tensor_name = args._tensor_name
            self.add_pruning_method(args)
        elif len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method) -> None:
        """Append ``method`` (it must prune the same parameter)."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        elif method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on the parameter named "
                f"'{self._tensor_name}' to PruningContainer {self}."
                + f" Found '{method._tensor_name}'"
            )
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """The last method's mask computed on what ``default_mask`` kept of ``t``."""

        def _combine_masks(method, t, mask):
            new_mask = mask.to(dtype=t.dtype)
            if method.PRUNING_TYPE == "unstructured":
                slc = mask == 1
            elif method.PRUNING_TYPE == "structured":
                if not hasattr(method, "dim"):
                    raise AttributeError(
                        "Pruning methods of PRUNING_TYPE "
                        '"structured" need to have the attribute `dim` defined.'
                    )
                n_dims = t.dim()
                dim = method.dim
                if dim < 0:
                    dim = n_dims + dim
                if dim < 0:
                    raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
                keep_channel = mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
                slc = [slice(None)] * n_dims
                slc[dim] = keep_channel
                slc = tuple(slc)
            elif method.PRUNING_TYPE == "global":
                slc = tuple([slice(None)] * len(t.shape))
            else:
                raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
            partial_mask = method.compute_mask(t[slc], default_mask=mask[slc])
            new_mask[slc] = partial_mask.to(dtype=new_mask.dtype)
            return new_mask

        return _combine_masks(self._pruning_methods[-1], t, default_mask)


class Identity(BasePruningMethod):
    """A pruning that prunes nothing (the mask is all ones).

    Example:
        >>> from ember import nn
        >>> from ember.nn.utils import prune
        >>> m = prune.identity(nn.Linear(2, 2), "bias")
        >>> m.bias_mask
        tensor([1., 1.])
    """

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        """Add the identity pruning to ``module.<name>``."""
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prune ``amount`` (a fraction, or a count) of the entries, chosen at random.

    Example:
        >>> import ember
        >>> from ember.nn.utils import prune
        >>> prune.RandomUnstructured(amount=2).prune(ember.ones(5)).sum()
        tensor(3.)
    """

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        tensor_size = t.nelement()
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        mask = default_mask.clone()
        if nparams_toprune != 0:
            prob = rand_like(t)
            topk = _topk(prob.view(-1), k=nparams_toprune)
            mask.view(-1)[topk.indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount):
        """Prune ``module.<name>`` at random."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prune ``amount`` (a fraction, or a count) of the entries of smallest magnitude.

    Example:
        >>> import ember
        >>> from ember.nn.utils import prune
        >>> prune.L1Unstructured(amount=0.5).prune(ember.tensor([3.0, -1.0, 0.5, 2.0]))
        tensor([3., -0., 0., 2.])
    """

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        tensor_size = t.nelement()
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        mask = default_mask.clone()
        if nparams_toprune != 0:
            topk = _topk(_abs(t).view(-1), k=nparams_toprune, largest=False)
            mask.view(-1)[topk.indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        """Prune ``module.<name>`` by the magnitude of ``importance_scores`` (default: the
        parameter's)."""
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prune ``amount`` of the channels along ``dim``, chosen at random.

    Example:
        >>> import ember
        >>> from ember.nn.utils import prune
        >>> out = prune.RandomStructured(amount=1, dim=0).prune(ember.ones(2, 3))
        >>> sorted(out.sum(1).tolist())
        [0.0, 3.0]
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        tensor_size = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)

        def make_mask(t, dim, nchannels, nchannels_toprune):
            prob = rand(nchannels)
            threshold = kthvalue(prob, k=nchannels_toprune).values
            channel_mask = prob > threshold
            mask = zeros_like(t)
            slc = [slice(None)] * len(t.shape)
            slc[dim] = channel_mask
            mask[tuple(slc)] = 1
            return mask

        if nparams_toprune == 0:
            return default_mask
        mask = make_mask(t, self.dim, tensor_size, nparams_toprune)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        """Prune channels of ``module.<name>`` at random."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prune ``amount`` of the channels along ``dim`` of smallest ``n``-norm.

    Example:
        >>> import ember
        >>> from ember.nn.utils import prune
        >>> t = ember.tensor([[1.0, 2.0], [0.1, 0.2], [3.0, 0.0]])
        >>> prune.LnStructured(amount=1, n=2, dim=0).prune(t)
        tensor([[1., 2.],
                [0., 0.],
                [3., 0.]])
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        tensor_size = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        nparams_tokeep = tensor_size - nparams_toprune
        _validate_pruning_amount(nparams_toprune, tensor_size)
        norm = _compute_norm(t, self.n, self.dim)
        topk = _topk(norm, k=nparams_tokeep, largest=True)

        def make_mask(t, dim, indices):
            mask = zeros_like(t)
            slc = [slice(None)] * len(t.shape)
            slc[dim] = indices
            mask[tuple(slc)] = 1
            return mask

        if nparams_toprune == 0:
            return default_mask
        mask = make_mask(t, self.dim, topk.indices)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        """Prune channels of ``module.<name>`` by their ``n``-norm."""
        return super().apply(
            module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores
        )


class CustomFromMask(BasePruningMethod):
    """Prune the entries where ``mask`` is 0.

    Example:
        >>> import ember
        >>> from ember.nn.utils import prune
        >>> prune.CustomFromMask(ember.tensor([1.0, 0.0])).prune(ember.tensor([5.0, 6.0]))
        tensor([5., 0.])
    """

    PRUNING_TYPE = "global"

    def __init__(self, mask) -> None:
        self.mask = mask

    def compute_mask(self, t, default_mask):
        assert default_mask.shape == self.mask.shape
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        """Prune ``module.<name>`` by ``mask``."""
        return super().apply(module, name, mask=mask)


def identity(module, name: str):
    """Prune nothing of ``module.<name>``, with the reparametrization all the same.

    Example:
        >>> from ember import nn
        >>> from ember.nn.utils import prune
        >>> sorted(n for n, _ in prune.identity(nn.Linear(2, 2), "weight").named_parameters())
        ['bias', 'weight_orig']
    """
    Identity.apply(module, name)
    return module


def random_unstructured(module, name: str, amount):
    """Prune ``amount`` of ``module.<name>``'s entries, chosen at random.

    Example:
        >>> from ember import nn
        >>> from ember.nn.utils import prune
        >>> m = prune.random_unstructured(nn.Linear(4, 2), "weight", amount=3)
        >>> int((m.weight_mask == 0).sum())
        3
    """
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name: str, amount, importance_scores=None):
    """Prune ``amount`` of ``module.<name>``'s entries of smallest magnitude (of
    ``importance_scores`` when given).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> from ember.nn.utils import prune
        >>> m = nn.Linear(2, 1)
        >>> with ember.no_grad():
        ...     _ = m.weight.copy_(ember.tensor([[0.5, -2.0]]))
        >>> prune.l1_unstructured(m, "weight", amount=1).weight
        tensor([[ 0., -2.]], grad_fn=<MulBackward0>)
    """
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name: str, amount, dim: int):
    """Prune ``amount`` of ``module.<name>``'s channels along ``dim``, chosen at random.

    Example:
        >>> from ember import nn
        >>> from ember.nn.utils import prune
        >>> m = prune.random_structured(nn.Linear(3, 4), "weight", amount=2, dim=0)
        >>> int((m.weight_mask.sum(1) == 0).sum())
        2
    """
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name: str, amount, n, dim: int, importance_scores=None):
    """Prune ``amount`` of ``module.<name>``'s channels along ``dim`` of smallest
    ``n``-norm.

    Example:
        >>> from ember import nn
        >>> from ember.nn.utils import prune
        >>> m = prune.ln_structured(nn.Conv2d(1, 4, 2), "weight", amount=0.5, n=2, dim=0)
        >>> int((m.weight_mask.sum((1, 2, 3)) == 0).sum())
        2
    """
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs) -> None:
    """Prune the ``(module, name)`` pairs of ``parameters`` together, as one vector, with
    an unstructured ``pruning_method`` class (``L1Unstructured``...) built from ``kwargs``.

    Example:
        >>> from ember import nn
        >>> from ember.nn.utils import prune
        >>> a, b = nn.Linear(4, 4), nn.Linear(4, 2)
        >>> prune.global_unstructured(
        ...     [(a, "weight"), (b, "weight")], prune.L1Unstructured, amount=12
        ... )
        >>> int((a.weight == 0).sum() + (b.weight == 0).sum())
        12
    """
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    parameters = list(parameters)
    relevant_importance_scores = parameters_to_vector(
        [
            importance_scores.get((module, name), getattr(module, name))
            for (module, name) in parameters
        ]
    )
    default_mask = parameters_to_vector(
        [
            getattr(module, name + "_mask", ones_like(getattr(module, name)))
            for (module, name) in parameters
        ]
    )
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(
            'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
            f"{pruning_method} of type {method.PRUNING_TYPE}"
        )
    container.add_pruning_method(method)
    final_mask = container.compute_mask(relevant_importance_scores, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        num_param = param.numel()
        param_mask = final_mask[pointer : pointer + num_param].view_as(param)
        custom_from_mask(module, name, mask=param_mask)
        pointer += num_param


def custom_from_mask(module, name: str, mask):
    """Prune ``module.<name>`` where ``mask`` is 0.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> from ember.nn.utils import prune
        >>> m = prune.custom_from_mask(nn.Linear(2, 2), "bias", ember.tensor([0.0, 1.0]))
        >>> float(m.bias[0])
        0.0
    """
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name: str):
    """Make the pruning of ``module.<name>`` permanent (the parameter holds the pruned
    values; the mask, ``<name>_orig`` and the hook go).

    Example:
        >>> from ember import nn
        >>> from ember.nn.utils import prune
        >>> m = prune.remove(prune.identity(nn.Linear(2, 2), "weight"), "weight")
        >>> sorted(n for n, _ in m.named_parameters()), prune.is_pruned(m)
        (['bias', 'weight'], False)
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(
        f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed"
    )


def is_pruned(module) -> bool:
    """True if ``module`` or a submodule has a pruning hook.

    Example:
        >>> from ember import nn
        >>> from ember.nn.utils import prune
        >>> m = nn.Sequential(nn.Linear(2, 2))
        >>> prune.is_pruned(m), prune.is_pruned(prune.identity(m[0], "weight") and m)
        (False, True)
    """
    for _, submodule in module.named_modules():
        for hook in submodule._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False


def _validate_pruning_amount_init(amount) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
        not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)
    ):
        raise ValueError(
            f"amount={amount} should either be a float in the range [0, 1] or a non-negative "
            "integer"
        )


def _validate_pruning_amount(amount, tensor_size: int) -> None:
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(
            f"amount={amount} should be smaller than the number of parameters to "
            f"prune={tensor_size}"
        )


def _validate_structured_pruning(t) -> None:
    shape = t.shape
    if len(shape) <= 1:
        raise ValueError(
            "Structured pruning can only be applied to multidimensional tensors. Found tensor "
            f"of shape {shape} with {len(shape)} dims"
        )


def _compute_nparams_toprune(amount, tensor_size: int) -> int:
    if isinstance(amount, numbers.Integral):
        return amount
    return round(amount * tensor_size)


def _validate_pruning_dim(t, dim: int) -> None:
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_norm(t, n, dim: int):
    dims = list(range(t.dim()))
    if dim < 0:
        dim = dims[dim]
    dims.remove(dim)
    return _norm(t, p=n, dim=dims)
