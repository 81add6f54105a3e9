"""The ``Optimizer`` base class: parameter groups, per-parameter state, state dicts, hooks.

Subclasses implement ``step``; updates run on the raw NumPy arrays behind the parameters
(``p._data``) in place, outside autograd, and bump each modified tensor's version counter.
"""

from __future__ import annotations

import functools
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from copy import deepcopy
from itertools import chain
from typing import Any

import numpy as np

from .. import _dtype
from .._overrides import warn as _warn
from .._tensor import Tensor, _legacy_type_name
from ..autograd import grad_mode
from ..autograd.graph import RemovableHandle

__all__ = [
    "Optimizer",
    "register_optimizer_step_pre_hook",
    "register_optimizer_step_post_hook",
    "required",
]

_global_optimizer_pre_hooks: OrderedDict = OrderedDict()
_global_optimizer_post_hooks: OrderedDict = OrderedDict()


class _RequiredParameter:
    """Marks a hyperparameter that every parameter group must specify."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def register_optimizer_step_pre_hook(hook) -> RemovableHandle:
    """Register ``hook(optimizer, args, kwargs)`` run before every optimizer's ``step``."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook) -> RemovableHandle:
    """Register ``hook(optimizer, args, kwargs)`` run after every optimizer's ``step``."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _typename(obj) -> str:
    """``torch.typename``: ``torch.FloatTensor`` for tensors, the qualified type otherwise."""
    if isinstance(obj, Tensor):
        return _legacy_type_name(obj._data.dtype)
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__
        qualname = obj.__class__.__qualname__
    if module in ("", "builtins"):
        return qualname
    return f"{module}.{qualname}"


def _scalar_dtype() -> np.dtype:
    """The dtype of the ``step`` counters: float64 if that is the default dtype, else float32."""
    return np.dtype(np.float64 if _dtype._default[0].np == np.float64 else np.float32)


def _new_step() -> Tensor:
    return Tensor._wrap(np.zeros((), dtype=_scalar_dtype()))


def _bump_step(step_t: Tensor) -> float:
    """``step_t += 1`` in place; returns the new value as a Python float."""
    step_t._data += 1
    step_t._bump()
    return float(step_t._data)


def _real(a: np.ndarray) -> np.ndarray:
    """A complex array seen as interleaved reals (``torch.view_as_real``), others unchanged."""
    if a.dtype.kind == "c":
        return a.view(a.real.dtype)
    return a


def _lerp_(a: np.ndarray, end: np.ndarray, weight: float) -> None:
    """``a.lerp_(end, weight)`` with ATen's formula (exact at both ends)."""
    diff = end - a
    if abs(weight) < 0.5:
        diff *= weight
        a += diff
    else:
        diff *= 1 - weight
        np.subtract(end, diff, out=a)


def _to_float(x) -> float:
    return x.item() if isinstance(x, Tensor) else x


def _step_tensor(step) -> Tensor:
    """A ``step`` counter restored from an old state (a number) as a scalar tensor."""
    step_t = _new_step()
    step_t._data[...] = float(step)
    return step_t


def _step_with_hooks(func):
    """Wrap a subclass's ``step`` so pre/post hooks run around it, like torch's."""

    @functools.wraps(func)
    def step(self, *args, **kwargs):
        for pre_hook in chain(
            _global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()
        ):
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(
                        f"{func} must return None or a tuple of (new_args, new_kwargs), but "
                        f"got {result}."
                    )
        out = func(self, *args, **kwargs)
        for post_hook in chain(
            self._optimizer_step_post_hooks.values(), _global_optimizer_post_hooks.values()
        ):
            post_hook(self, args, kwargs)
        return out

    step.hooked = True
    return step


class Optimizer:
    """Base class for all optimizers.

    ``params`` is an iterable of tensors, of ``(name, tensor)`` pairs, or of dicts that
    define parameter groups (each dict has ``"params"`` and optional per-group options);
    ``defaults`` holds the options used when a group does not specify them.

    Example:
        >>> import ember
        >>> w = ember.zeros(2, requires_grad=True)
        >>> opt = ember.optim.SGD([w], lr=0.5)
        >>> w.grad = ember.ones(2)
        >>> opt.step()
        >>> w
        tensor([-0.5000, -0.5000], requires_grad=True)
    """

    def __init__(self, params, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: OrderedDict = OrderedDict()

        if defaults.get("differentiable"):
            raise NotImplementedError(
                "ember.optim does not support differentiable=True: steps update the parameters "
                "in place, outside autograd"
            )
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                "dicts, but got " + _typename(params)
            )

        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []

        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)
        self._patch_step_function()

    def _patch_step_function(self) -> None:
        """Wrap this optimizer's class ``step`` (once) so the step hooks run around it.

        As in torch this happens when an optimizer is built (or unpickled), not when its class
        is defined: a subclass that never calls ``Optimizer.__init__`` (a wrapper around
        another optimizer) keeps its own ``step`` unwrapped.
        """
        self._zero_grad_profile_name = f"Optimizer.zero_grad#{type(self).__name__}.zero_grad"
        if not getattr(type(self).step, "hooked", False):
            type(self).step = _step_with_hooks(type(self).step)

    def __getstate__(self) -> dict[str, Any]:
        return {
            "defaults": self.defaults,
            "state": self.state,
            "param_groups": self.param_groups,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in (
            "_optimizer_step_pre_hooks",
            "_optimizer_step_post_hooks",
            "_optimizer_state_dict_pre_hooks",
            "_optimizer_state_dict_post_hooks",
            "_optimizer_load_state_dict_pre_hooks",
            "_optimizer_load_state_dict_post_hooks",
        ):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._patch_step_function()  # an optimizer unpickled in another process
        self.defaults.setdefault("differentiable", False)

    def __repr__(self) -> str:
        format_string = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            format_string += "\n"
            format_string += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    format_string += f"    {key}: {group[key]}\n"
        format_string += ")"
        return format_string

    # -- hooks ------------------------------------------------------------------------

    def register_step_pre_hook(self, hook) -> RemovableHandle:
        """Register ``hook(optimizer, args, kwargs) -> None | (args, kwargs)`` before step."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook) -> RemovableHandle:
        """Register ``hook(optimizer, args, kwargs)`` called after each step."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    @staticmethod
    def _register(table: OrderedDict, hook, prepend: bool) -> RemovableHandle:
        handle = RemovableHandle(table)
        table[handle.id] = hook
        if prepend:
            table.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """Register ``hook(optimizer)`` called before ``state_dict()``."""
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """Register ``hook(optimizer, state_dict) -> state_dict | None`` after ``state_dict()``."""
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """Register ``hook(optimizer, state_dict) -> state_dict | None`` before loading."""
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """Register ``hook(optimizer)`` called after ``load_state_dict``."""
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # -- state dicts ------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """The optimizer state as ``{'state': {index: {...}}, 'param_groups': [...]}``.

        Parameters are replaced by their index (counted across groups in order); the
        state tensors are the optimizer's own (not copies), as in torch.

        Example:
            >>> import ember
            >>> w = ember.zeros(2, requires_grad=True)
            >>> sd = ember.optim.SGD([w], lr=0.1).state_dict()
            >>> sd["state"], sd["param_groups"][0]["params"]
            ({}, [0])
        """
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)

        param_mappings: dict[int, int] = {}
        start_index = 0

        def pack_group(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update(
                {
                    id(p): i
                    for i, p in enumerate(group["params"], start_index)
                    if id(p) not in param_mappings
                }
            )
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {
            (param_mappings[id(k)] if isinstance(k, Tensor) else k): v
            for k, v in self.state.items()
        }
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            hook_result = post_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(param, value, key=None):
        if key == "step":
            return value
        if param._data.dtype.kind in "fcV" and value._data.dtype != param._data.dtype:
            return Tensor._wrap(value._data.astype(param._data.dtype))
        return value

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state dict produced by ``state_dict()`` (of an optimizer with the same
        group sizes); state tensors are cast to their parameter's floating dtype.

        Example:
            >>> import ember
            >>> w = ember.zeros(2, requires_grad=True)
            >>> opt = ember.optim.SGD([w], lr=0.1)
            >>> opt.load_state_dict(ember.optim.SGD([w], lr=0.5).state_dict())
            >>> opt.param_groups[0]["lr"]
            0.5
        """
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            hook_result = pre_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result

        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        param_lens = (len(g["params"]) for g in groups)
        saved_lens = (len(g["params"]) for g in saved_groups)
        if any(p_len != s_len for p_len, s_len in zip(param_lens, saved_lens)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group"
            )

        id_map = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in groups),
            )
        )

        def _cast(param, value, key=None):
            if isinstance(value, Tensor):
                return Optimizer._process_value_according_to_param_policy(param, value, key)
            if isinstance(value, dict):
                return {k: _cast(param, v, key=k) for k, v in value.items()}
            if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
                return type(value)(_cast(param, v) for v in value)
            return value

        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast(param, v)
            else:
                state[k] = v

        def update_group(group: dict[str, Any], new_group: dict[str, Any]) -> dict[str, Any]:
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})

        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # -- gradients and groups ---------------------------------------------------------

    @staticmethod
    def _group_tensors_by_device_and_dtype(tensorlistlist: list, with_indices: bool = False):
        """The tensors of parallel lists (params, grads, states...) grouped by the
        (device, dtype) of the first list's tensors: ``{(device, dtype): (lists, indices)}``
        (indices into the lists when ``with_indices``), as torch's foreach optimizers use.
        Inside ``ember.compile``, one group of everything, as torch's under compile."""
        from .. import compiler  # deferred: torch.compiler loads on first use

        if compiler.is_compiling():
            return {(None, None): (tensorlistlist, list(range(len(tensorlistlist[0]))))}
        groups: dict = {}
        for i, first in enumerate(tensorlistlist[0]):
            key = (first.device, first.dtype)
            lists, indices = groups.setdefault(key, ([[] for _ in tensorlistlist], []))
            for group, tensors in zip(lists, tensorlistlist):
                group.append(tensors[i])
            if with_indices:
                indices.append(i)
        return groups

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized tensors (to ``None`` by default, else zeros).

        Example:
            >>> import ember
            >>> w = ember.zeros(2, requires_grad=True); w.grad = ember.ones(2)
            >>> ember.optim.SGD([w], lr=0.1).zero_grad(); w.grad is None
            True
        """
        if not hasattr(self, "_zero_grad_profile_name"):
            self._patch_step_function()
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g._rg = False
                    g._data[...] = 0
                    g._bump()

    def step(self, closure=None):
        """Perform a single optimization step (implemented by subclasses)."""
        raise NotImplementedError

    def _params_with_grad(self, group: dict[str, Any]):
        """The parameters of ``group`` that have a gradient, in order."""
        return (p for p in group["params"] if p._grad is not None)

    def _setdefault_groups(self, **defaults) -> None:
        """``group.setdefault(name, value)`` for every group (old pickles lack new options)."""
        for group in self.param_groups:
            for name, value in defaults.items():
                group.setdefault(name, value)

    def _restore_step_tensors(self) -> None:
        """Turn the numeric ``step`` of each parameter's (non-empty) state from an old pickle
        into a scalar tensor."""
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = _step_tensor(p_state["step"])

    def _closure_loss(self, closure):
        if closure is None:
            return None
        with grad_mode.enable_grad():
            return closure()

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a parameter group (a dict with ``"params"`` and optional options).

        Example:
            >>> import ember
            >>> a, b = ember.zeros(1, requires_grad=True), ember.zeros(1, requires_grad=True)
            >>> opt = ember.optim.SGD([a], lr=0.1)
            >>> opt.add_param_group({"params": [b], "lr": 0.01})
            >>> [g["lr"] for g in opt.param_groups]
            [0.1, 0.01]
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")

        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list "
                "instead."
            )
        else:
            param_group["params"] = list(params)

        extracted_param_tensors = []
        extracted_param_names = []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                extracted_param_names.append(param[0])
                extracted_param_tensors.append(param[1])
            else:
                extracted_param_tensors.append(param)
        param_group["params"] = extracted_param_tensors
        if len(extracted_param_names) != 0:
            if len(extracted_param_names) == len(extracted_param_tensors):
                param_group["param_names"] = extracted_param_names
            else:
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are "
                    "missing"
                )

        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    + _typename(param)
                )
            if not self.defaults.get("differentiable", None) and not (
                param.grad_fn is None or param.retains_grad
            ):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            param_group.setdefault(name, default)

        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            _warn(
                "optimizer contains a parameter group with duplicate parameters; in future, "
                "this will cause an error; see github.com/pytorch/pytorch/issues/40967 for "
                "more information",
                stacklevel=3,
            )

        param_set: set[int] = set()
        for group in self.param_groups:
            param_set.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                current_group_txt = (
                    "with names" if "param_names" in param_group else "without names"
                )
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {current_group_txt} to the optimizer"
                )
        if not param_set.isdisjoint(id(p) for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")

        self.param_groups.append(param_group)
