"""``functional_call`` (torch.nn.utils.stateless / torch.func.functional_call): call a
module with some of its parameters and buffers replaced, leaving the module unchanged."""

from __future__ import annotations

from contextlib import contextmanager

from ..._tensor import Tensor
from ..modules.module import Module

__all__ = ["functional_call"]


def _get_owner(module: Module, name: str) -> tuple:
    *path, attr = name.split(".")
    owner = module
    for part in path:
        owner = getattr(owner, part)
    return owner, attr


def _tied_names(module: Module, keys) -> dict:
    """Each given name mapped to every name of the same tensor in ``module`` (tied weights)."""
    by_tensor: dict = {}
    for name, t in list(module.named_parameters(remove_duplicate=False)) + list(
        module.named_buffers(remove_duplicate=False)
    ):
        by_tensor.setdefault(id(t), []).append(name)
    names = {}
    for group in by_tensor.values():
        for name in group:
            names[name] = group
    return {k: names.get(k, [k]) for k in keys}


def _swap(module: Module, name: str, value):
    """Put ``value`` at ``name`` (as a plain attribute shadowing the registered tensor);
    returns what restores it."""
    owner, attr = _get_owner(module, name)
    for store in ("_parameters", "_buffers"):
        d = owner.__dict__.get(store)
        if d is not None and attr in d:
            old = d[attr]
            d[attr] = value

            def restore(d=d, attr=attr, old=old):
                d[attr] = old

            return restore
    had = attr in owner.__dict__
    old = owner.__dict__.get(attr)
    object.__setattr__(owner, attr, value)

    def restore_attr(owner=owner, attr=attr, old=old, had=had):
        if had:
            object.__setattr__(owner, attr, old)
        else:
            object.__delattr__(owner, attr)

    return restore_attr


@contextmanager
def _reparametrize(module: Module, values: dict, tie_weights: bool, strict: bool):
    if strict:
        expected = {n for n, _ in module.named_parameters(remove_duplicate=False)} | {
            n for n, _ in module.named_buffers(remove_duplicate=False)
        }
        missing = sorted(expected - set(values))
        unexpected = sorted(set(values) - expected)
        if missing or unexpected:
            msgs = []
            if unexpected:
                msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
            if missing:
                msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
            raise RuntimeError(
                "Error(s) in reparametrizing for {}:\n\t{}".format(
                    module._get_name(), "\n\t".join(msgs)
                )
            )
    todo = dict(values)
    if tie_weights:
        for key, group in _tied_names(module, values).items():
            for other in group:
                if other in values and other != key and values[other] is not values[key]:
                    raise ValueError(
                        f"functional_call got multiple values for keys {sorted(group)}, which "
                        "are tied. Consider using tie_weights=False"
                    )
                todo.setdefault(other, values[key])
    restores = []
    try:
        for name, value in todo.items():
            restores.append(_swap(module, name, value))
        yield
    finally:
        for restore in reversed(restores):
            restore()


def functional_call(
    module: Module,
    parameters_and_buffers,
    args=None,
    kwargs=None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
):
    """``module(*args, **kwargs)`` with the parameters and buffers named in
    ``parameters_and_buffers`` (a dict, or a tuple of dicts) replaced by the given tensors
    for the call only.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> from ember.nn.utils.stateless import functional_call
        >>> m = nn.Linear(2, 1)
        >>> w = {"weight": ember.ones(1, 2), "bias": ember.zeros(1)}
        >>> functional_call(m, w, (ember.tensor([[1.0, 2.0]]),))
        tensor([[3.]])
    """
    if isinstance(parameters_and_buffers, (list, tuple)):
        merged: dict = {}
        for d in parameters_and_buffers:
            for k, v in d.items():
                if k in merged:
                    raise ValueError(
                        f"{k} appeared in multiple dictionaries; behavior of functional call "
                        "is ambiguous"
                    )
                merged[k] = v
        parameters_and_buffers = merged
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    for v in parameters_and_buffers.values():
        if v is not None and not isinstance(v, Tensor):
            raise TypeError(f"Expected a Tensor, got {type(v).__name__}")
    with _reparametrize(module, parameters_and_buffers, tie_weights, strict):
        return module(*args, **kwargs)
