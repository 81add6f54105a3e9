"""``Module``: the base class of layers and models (torch.nn.Module's API and printing)."""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict, namedtuple
from collections.abc import Iterator, Mapping
from typing import Any

from ... import _creation, _dtype
from ..._overrides import warn as _warn
from ..._tensor import Tensor, _legacy_type_name, device
from ...autograd.function import Function
from ...autograd.grad_mode import is_grad_enabled, no_grad
from ...autograd.graph import RemovableHandle
from ..parameter import Buffer, Parameter, _alias

__all__ = ["Module"]

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


def _typename(obj) -> str:
    """``torch.typename``: the legacy tensor type name, else the qualified class name."""
    if isinstance(obj, Tensor):
        return _legacy_type_name(obj._data.dtype)
    module = type(obj).__module__
    qual = type(obj).__qualname__
    return qual if module in ("builtins", "") else f"{module}.{qual}"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s_: str, num_spaces: int) -> str:
    s = s_.split("\n")
    if len(s) == 1:
        return s_
    first = s.pop(0)
    s = [(num_spaces * " ") + line if line.strip() else "" for line in s]
    return first + "\n" + "\n".join(s)


# -- the tracing hook --------------------------------------------------------------------------
#
# ``ember.fx`` records module calls and parameter reads while it traces without replacing
# ``Module.__call__``/``__getattr__`` (torch patches both for the duration of a trace, which is
# neither thread-safe nor reentrant): the tracer pushes an *interceptor* on this thread's stack
# and ``__call__``/``__getattr__`` hand over to the innermost one. ``_INTERCEPTING`` counts the
# interceptors pushed in all threads, so outside tracing the cost is one global test per call.


class _Interceptors(threading.local):
    """This thread's interceptors (innermost last; None suspends interception) and the module
    whose next call runs normally (the interceptor's ``forward`` of it)."""

    def __init__(self) -> None:
        self.stack: list = []
        self.bypass = None


_interceptors = _Interceptors()
_INTERCEPTING = 0
_intercepting_lock = threading.Lock()
_NOT_INTERCEPTED = object()


class intercept_module_calls:
    """Within the block, this thread's module calls and ``Module.__getattr__`` results go to
    ``interceptor`` (``None``: to nobody, suspending an outer interceptor):

    - ``interceptor.module_call(module, forward, args, kwargs)`` replaces ``module(*args,
      **kwargs)``; ``forward(*args, **kwargs)`` runs the call normally (hooks included), and
      the module calls it makes are intercepted again;
    - ``interceptor.module_getattr(module, name, value)`` replaces the value of a parameter,
      buffer or submodule read as ``module.name``.

    ``ember.fx.Tracer`` uses it (torch's tracer patches ``Module.__call__`` instead).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> from ember.nn.modules.module import intercept_module_calls
        >>> class Log:
        ...     def module_call(self, module, forward, args, kwargs):
        ...         print("call", type(module).__name__)
        ...         return forward(*args, **kwargs)
        ...     def module_getattr(self, module, name, value):
        ...         return value
        >>> with intercept_module_calls(Log()):
        ...     _ = nn.Sequential(nn.ReLU())(ember.ones(1))
        call Sequential
        call ReLU
    """

    def __init__(self, interceptor) -> None:
        self.interceptor = interceptor

    def __enter__(self):
        global _INTERCEPTING
        with _intercepting_lock:
            _INTERCEPTING += 1
        _interceptors.stack.append(self.interceptor)
        return self.interceptor

    def __exit__(self, *exc) -> None:
        global _INTERCEPTING
        _interceptors.stack.pop()
        _interceptors.bypass = None
        with _intercepting_lock:
            _INTERCEPTING -= 1


def _intercept_call(module, args: tuple, kwargs: dict):
    st = _interceptors
    if st.bypass is module:  # the interceptor's own ``forward`` of this module
        st.bypass = None
        return _NOT_INTERCEPTED
    if not st.stack or st.stack[-1] is None:
        return _NOT_INTERCEPTED

    def forward(*a, **kw):
        st.bypass = module
        return Module.__call__(module, *a, **kw)

    return st.stack[-1].module_call(module, forward, args, kwargs)


def _intercept_getattr(module, name: str, value):
    st = _interceptors
    if not st.stack or st.stack[-1] is None:
        return value
    return st.stack[-1].module_getattr(module, name, value)


class BackwardHookFunction(Function):
    """The identity on a module's input or output tensors, whose node carries the module's
    full backward hooks (torch's ``BackwardHookFunctionBackward``)."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return tuple(a.view_as(a) for a in args)

    @staticmethod
    def backward(ctx, *args):
        return args


class _BackwardHook:
    """torch's ``utils.hooks.BackwardHook``: identity nodes on a call's input and output
    tensors; the output node's hook sees ``grad_output`` (and runs the pre-hooks), the input
    node's hook sees ``grad_input`` and runs the full backward hooks."""

    def __init__(self, module, user_hooks, user_pre_hooks) -> None:
        self.module = module
        self.user_hooks = list(user_hooks.values())
        self.user_pre_hooks = list(user_pre_hooks.values())
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size) -> tuple:
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    @staticmethod
    def _unpack_none(indices, values) -> tuple:
        return tuple(values[idx] for idx in indices)

    def _set_user_hook(self, grad_fn) -> None:
        def hook(grad_input, _):
            if self.grad_outputs is None:
                return None  # the gradient reached the input without passing the output
            res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for user_hook in self.user_hooks:
                out = user_hook(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError(
                        "Backward hook returned an invalid number of grad_input, got "
                        f"{len(out)}, but expected {len(res)}"
                    )
                res = out
            self.grad_outputs = None
            return self._unpack_none(self.input_tensors_index, res)

        grad_fn.register_hook(hook)

    def _apply_on_tensors(self, fn, args):
        tensors_idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in tensors_idx]
        if not (any(t.requires_grad for t in tensors) and is_grad_enabled()):
            return args, None
        new_tensors = BackwardHookFunction.apply(*tensors)
        if not isinstance(new_tensors, tuple):
            new_tensors = (new_tensors,)
        grad_fns = [t.grad_fn for t in new_tensors if t.grad_fn is not None]
        fn(grad_fns[0])
        arg_list = list(args)
        for idx, val in zip(tensors_idx, new_tensors):
            arg_list[idx] = val
        return tuple(arg_list), tensors_idx

    def setup_input_hook(self, args):
        res, input_idx = self._apply_on_tensors(self._set_user_hook, args)
        self.n_inputs = len(args)
        self.input_tensors_index = input_idx
        return res

    def setup_output_hook(self, args):
        def fn(grad_fn):
            def hook(_, grad_output):
                self.grad_outputs = self._pack_with_none(
                    self.output_tensors_index, grad_output, self.n_outputs
                )
                expected_len = len(self.grad_outputs)
                for user_pre_hook in self.user_pre_hooks:
                    new = user_pre_hook(self.module, self.grad_outputs)
                    if new is None:
                        continue
                    if len(new) != expected_len:
                        raise RuntimeError(
                            "Backward pre hook returned an invalid number of grad_output, got "
                            f"{len(new)}, but expected {expected_len}"
                        )
                    self.grad_outputs = new
                local_grad_outputs = self.grad_outputs
                if self.input_tensors_index is None:
                    if self.user_hooks:
                        _warn(
                            "Full backward hook is firing when gradients are computed with "
                            "respect to module outputs since no inputs require gradients. See "
                            "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                            "#torch.nn.Module.register_full_backward_hook for more details.",
                            UserWarning,
                            stacklevel=2,
                        )
                    grad_inputs = self._pack_with_none([], [], self.n_inputs)
                    for user_hook in self.user_hooks:
                        res = user_hook(self.module, grad_inputs, self.grad_outputs)
                        if res is not None and not (
                            isinstance(res, tuple) and all(el is None for el in res)
                        ):
                            raise RuntimeError(
                                "Backward hook for Modules where no input requires gradient "
                                "should always return None or None for all gradients."
                            )
                    self.grad_outputs = None
                return tuple(local_grad_outputs[i] for i in self.output_tensors_index)

            grad_fn.register_hook(hook)

        is_tuple = isinstance(args, tuple)
        if not is_tuple:
            args = (args,)
        res, output_idx = self._apply_on_tensors(fn, args)
        self.n_outputs = len(args)
        self.output_tensors_index = output_idx
        return res if is_tuple else res[0]


def _forward_unimplemented(self, *input: Any) -> None:
    raise NotImplementedError(
        f'Module [{type(self).__name__}] is missing the required "forward" function'
    )


class Module:
    """Base class for all neural network modules.

    Assigning a ``Parameter``, a ``Module`` or (via ``register_buffer``) a Tensor to an
    attribute registers it; ``parameters()``, ``state_dict()``, ``train()``/``eval()``,
    ``to(dtype)`` and printing then see the whole tree.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> class Net(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc = nn.Linear(2, 1)
        ...     def forward(self, x):
        ...         return self.fc(x).relu()
        >>> net = Net()
        >>> net
        Net(
          (fc): Linear(in_features=2, out_features=1, bias=True)
        )
        >>> [name for name, _ in net.named_parameters()]
        ['fc.weight', 'fc.bias']
    """

    _version: int = 1
    training: bool
    call_super_init: bool = False
    forward = _forward_unimplemented

    def __init__(self, *args, **kwargs) -> None:
        if kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                f"'{next(iter(kwargs))}'"
            )
        if args:
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but "
                f"{len(args) + 1} were given"
            )
        sa = super().__setattr__
        sa("training", True)
        sa("_parameters", {})
        sa("_buffers", {})
        sa("_non_persistent_buffers_set", set())
        sa("_forward_hooks", OrderedDict())
        sa("_forward_hooks_with_kwargs", OrderedDict())
        sa("_forward_pre_hooks", OrderedDict())
        sa("_forward_pre_hooks_with_kwargs", OrderedDict())
        sa("_forward_hooks_always_called", OrderedDict())
        sa("_backward_hooks", OrderedDict())
        sa("_backward_pre_hooks", OrderedDict())
        sa("_state_dict_hooks", OrderedDict())
        sa("_state_dict_pre_hooks", OrderedDict())
        sa("_load_state_dict_pre_hooks", OrderedDict())
        sa("_load_state_dict_post_hooks", OrderedDict())
        sa("_modules", {})

    # -- registration -------------------------------------------------------------------

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register a Tensor that is state but not a parameter (e.g. running statistics).

        Persistent buffers are part of ``state_dict``.

        Example:
            >>> import ember
            >>> from ember import nn
            >>> m = nn.Module()
            >>> m.register_buffer("steps", ember.tensor(0))
            >>> m.state_dict()
            OrderedDict([('steps', tensor(0))])
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                "(torch Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register a Parameter (or None) under ``name``.

        Example:
            >>> import ember
            >>> from ember import nn
            >>> m = nn.Module()
            >>> m.register_parameter("scale", nn.Parameter(ember.ones(1)))
            >>> [n for n, _ in m.named_parameters()]
            ['scale']
        """
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(torch.nn.Parameter or None required)"
            )
        elif param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                f"parameters must be created explicitly. To express '{name}' "
                "as a function of another Tensor, compute the value in "
                "the forward() method."
            )
        else:
            self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Register a child module under ``name`` (same as assigning the attribute)."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    def register_module(self, name: str, module: Module | None) -> None:
        """Alias for ``add_module``."""
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        """The submodule at the dotted path ``target`` (``''`` is self)."""
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def _get_owner(self, target: str) -> tuple[Module, str]:
        """The submodule holding the dotted path ``target`` and the attribute name in it
        (raising ``AttributeError`` if that attribute does not exist)."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        return mod, name

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at the dotted path ``target``."""
        mod, param_name = self._get_owner(target)
        param = getattr(mod, param_name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at the dotted path ``target``."""
        mod, buffer_name = self._get_owner(target)
        if buffer_name not in mod._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        return getattr(mod, buffer_name)

    # -- attribute protocol ----------------------------------------------------------------

    def __getattr__(self, name: str):
        d = self.__dict__
        if "_parameters" in d:
            params = d["_parameters"]
            if name in params:
                if _INTERCEPTING:  # a tracer records the read (see intercept_module_calls)
                    return _intercept_getattr(self, name, params[name])
                return params[name]
        if "_buffers" in d:
            buffers = d["_buffers"]
            if name in buffers:
                if _INTERCEPTING:
                    return _intercept_getattr(self, name, buffers[name])
                return buffers[name]
        if "_modules" in d:
            modules = d["_modules"]
            if name in modules:
                if _INTERCEPTING:
                    return _intercept_getattr(self, name, modules[name])
                return modules[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        def remove_from(*dicts_or_sets) -> None:
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(
                self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set
            )
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(torch.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(
                    self.__dict__,
                    self._parameters,
                    self._buffers,
                    self._non_persistent_buffers_set,
                )
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(
                        f"cannot assign '{_typename(value)}' as child module '{name}' "
                        "(torch.nn.Module or None expected)"
                    )
                modules[name] = value
            else:
                buffers = self.__dict__.get("_buffers")
                if isinstance(value, Buffer):
                    remove_from(self.__dict__)  # (a plain attribute of that name goes)
                    self.register_buffer(name, _alias(value), value.persistent)
                elif buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(
                            f"cannot assign '{_typename(value)}' as buffer '{name}' "
                            "(torch.nn.Buffer, torch.Tensor or None expected)"
                        )
                    self.register_buffer(name, value, name not in self._non_persistent_buffers_set)
                else:
                    super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def __dir__(self):
        module_attrs = dir(self.__class__)
        attrs = list(self.__dict__.keys())
        keys = (
            module_attrs
            + attrs
            + list(self._parameters.keys())
            + list(self._modules.keys())
            + list(self._buffers.keys())
        )
        return sorted(key for key in keys if not key[0].isdigit())

    # -- calling ----------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        if _INTERCEPTING:  # a tracer records the call (see intercept_module_calls)
            result = _intercept_call(self, args, kwargs)
            if result is not _NOT_INTERCEPTED:
                return result
        bw_hook = None
        if self._backward_hooks or self._backward_pre_hooks:
            bw_hook = _BackwardHook(self, self._backward_hooks, self._backward_pre_hooks)
        called_always = False
        try:
            if self._forward_pre_hooks:
                for hook_id, hook in list(self._forward_pre_hooks.items()):
                    if hook_id in self._forward_pre_hooks_with_kwargs:
                        res = hook(self, args, kwargs)
                        if res is not None:
                            if isinstance(res, tuple) and len(res) == 2:
                                args, kwargs = res
                            else:
                                raise RuntimeError(
                                    "forward pre-hook must return None or a tuple of (new_args, "
                                    f"new_kwargs), but got {res}."
                                )
                    else:
                        res = hook(self, args)
                        if res is not None:
                            args = res if isinstance(res, tuple) else (res,)
            if bw_hook is not None:
                args = bw_hook.setup_input_hook(args)
            result = self.forward(*args, **kwargs)
            if self._forward_hooks:
                for hook_id, hook in list(self._forward_hooks.items()):
                    if hook_id in self._forward_hooks_always_called:
                        called_always = True
                    if hook_id in self._forward_hooks_with_kwargs:
                        res = hook(self, args, kwargs, result)
                    else:
                        res = hook(self, args, result)
                    if res is not None:
                        result = res
            if bw_hook is not None:
                result = bw_hook.setup_output_hook(result)
            return result
        except Exception:
            # torch runs the forward hooks registered with always_call=True even on failure
            # (once: not again when they already ran).
            if not called_always:
                for hook_id, hook in list(self._forward_hooks.items()):
                    if hook_id not in self._forward_hooks_always_called:
                        continue
                    try:
                        if hook_id in self._forward_hooks_with_kwargs:
                            hook(self, args, kwargs, None)
                        else:
                            hook(self, args, None)
                    except Exception as e:  # noqa: BLE001 (reported as torch does)
                        _warn(
                            "global module forward hook with ``always_call=True`` raised an "
                            f"exception that was silenced as another error was raised in "
                            f"forward: {e}",
                            stacklevel=2,
                        )
            raise

    def register_forward_pre_hook(
        self, hook, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """Register ``hook(module, args)`` run before ``forward``; it may return new args.

        Example:
            >>> import ember
            >>> from ember import nn
            >>> m = nn.Identity()
            >>> h = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
            >>> m(ember.ones(1))
            tensor([2.])
            >>> h.remove()
        """
        handle = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(
        self, hook, *, prepend: bool = False, with_kwargs: bool = False, always_call=False
    ) -> RemovableHandle:
        """Register ``hook(module, args, output)`` run after ``forward``; it may return a
        new output."""
        handle = RemovableHandle(self._forward_hooks)
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """Register ``hook(module, grad_output)`` run when the gradients of the module's
        outputs are known, before those of its inputs; it may return new ``grad_output``.

        Example:
            >>> import ember
            >>> from ember import nn
            >>> m = nn.Identity()
            >>> h = m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 10,))
            >>> x = ember.ones(2, requires_grad=True)
            >>> m(x).sum().backward()
            >>> x.grad
            tensor([10., 10.])
        """
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """Register ``hook(module, grad_input, grad_output)`` run once the gradients of the
        module's inputs are computed; it may return new ``grad_input``.

        Example:
            >>> import ember
            >>> from ember import nn
            >>> m = nn.Linear(2, 1)
            >>> seen = []
            >>> h = m.register_full_backward_hook(lambda mod, gi, go: seen.append(go[0].shape))
            >>> m(ember.ones(3, 2, requires_grad=True)).sum().backward()
            >>> seen
            [torch.Size([3, 1])]
        """
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    # -- iteration ---------------------------------------------------------------------------

    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                name = module_prefix + ("." if module_prefix else "") + k
                yield name, v

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The parameters of this module (and its submodules when ``recurse``).

        Example:
            >>> from ember import nn
            >>> [tuple(p.shape) for p in nn.Linear(3, 2).parameters()]
            [(2, 3), (2,)]
        """
        for _name, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """``(dotted name, parameter)`` pairs in registration order, each parameter once."""
        yield from self._named_members(
            lambda module: module._parameters.items(),
            prefix=prefix,
            recurse=recurse,
            remove_duplicate=remove_duplicate,
        )

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """The buffers of this module (and its submodules when ``recurse``)."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """``(dotted name, buffer)`` pairs."""
        yield from self._named_members(
            lambda module: module._buffers.items(),
            prefix=prefix,
            recurse=recurse,
            remove_duplicate=remove_duplicate,
        )

    def children(self) -> Iterator[Module]:
        """The immediate child modules."""
        for _name, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """``(name, child)`` pairs of the immediate children."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        """This module and all modules below it, depth first."""
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_modules(self, memo: set | None = None, prefix: str = "", remove_duplicate=True):
        """``(dotted name, module)`` pairs for this module (name ``''``) and all below it."""
        if memo is None:
            memo = set()
        if self not in memo:
            if remove_duplicate:
                memo.add(self)
            yield prefix, self
            for name, module in self._modules.items():
                if module is None:
                    continue
                submodule_prefix = prefix + ("." if prefix else "") + name
                yield from module.named_modules(memo, submodule_prefix, remove_duplicate)

    # -- modes and gradients ----------------------------------------------------------------

    def train(self, mode: bool = True) -> Module:
        """Set training mode (``Dropout`` and ``BatchNorm`` behave differently); returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        """``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` of every parameter (e.g. to freeze a part); returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters: to None, or to zeros in place.

        Example:
            >>> import ember
            >>> from ember import nn
            >>> m = nn.Linear(2, 1)
            >>> m(ember.ones(1, 2)).sum().backward()
            >>> m.zero_grad()
            >>> m.weight.grad is None
            True
        """
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def apply(self, fn) -> Module:
        """Call ``fn`` on every submodule (children first) and then on self; returns self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- dtype conversion ------------------------------------------------------------------------

    def _apply(self, fn, recurse: bool = True) -> Module:
        if recurse:
            for module in self.children():
                module._apply(fn)
        for key, param in self._parameters.items():
            if param is None:
                continue
            with no_grad():
                applied = fn(param)
            if applied is not param:
                param._data = applied._data
            if param.grad is not None:
                with no_grad():
                    g = fn(param.grad)
                if g is not param.grad:
                    param._grad = Tensor._wrap(g._data)
            self._parameters[key] = param
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs) -> Module:
        """Cast floating-point parameters and buffers to a dtype (``to(ember.float64)``,
        ``to(device)`` validates a CPU device); parameters stay the same objects.

        Example:
            >>> import ember
            >>> from ember import nn
            >>> nn.Linear(2, 2).to(ember.float64).weight.dtype
            torch.float64
        """
        target = kwargs.pop("dtype", None)
        dev = kwargs.pop("device", None)
        kwargs.pop("non_blocking", None)
        kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
        for arg in args:
            if isinstance(arg, _dtype.dtype):
                target = arg
            elif isinstance(arg, Tensor):
                target = arg.dtype
            elif isinstance(arg, (str, device)):
                dev = arg
            elif isinstance(arg, bool):
                continue
            else:
                raise TypeError(
                    "to() received an invalid combination of arguments - got "
                    f"({type(arg).__name__})"
                )
        if dev is not None:
            dev = device(dev)
        if target is None and dev is None:
            return self
        if target is not None and not (target.is_floating_point or target.is_complex):
            raise TypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but got desired "
                f"dtype={target}"
            )

        def convert(t: Tensor) -> Tensor:
            try:
                return t.to(dev, target if t.is_floating_point() or t.is_complex() else None)
            except NotImplementedError as e:
                if str(e) == "Cannot copy out of meta tensor; no data!":
                    raise NotImplementedError(
                        f"{e} Please use torch.nn.Module.to_empty() instead of "
                        "torch.nn.Module.to() when moving module from meta to a different "
                        "device."
                    ) from None
                raise

        return self._apply(convert)

    def to_empty(self, *, device, recurse: bool = True) -> Module:
        """Move the parameters and buffers to ``device`` without copying their data: new
        uninitialised tensors there (how a module built on the ``meta`` device gets memory).

        Example:
            >>> import ember
            >>> with ember.device("meta"):
            ...     layer = ember.nn.Linear(2, 3)
            >>> layer.weight.device, layer.to_empty(device="cpu").weight.device
            (device(type='meta'), device(type='cpu'))
        """
        return self._apply(lambda t: _creation.empty_like(t, device=device), recurse=recurse)

    def float(self) -> Module:
        """Cast floating-point parameters and buffers to float32."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> Module:
        """Cast floating-point parameters and buffers to float64."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> Module:
        """Cast floating-point parameters and buffers to float16."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self) -> Module:
        """Cast floating-point parameters and buffers to bfloat16."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def type(self, dst_type) -> Module:
        """Cast all parameters and buffers to ``dst_type``."""
        return self._apply(lambda t: t.to(dst_type))

    def cpu(self) -> Module:
        """Return self (ember computes on the CPU); a module on the ``meta`` device has no
        data to copy (torch's NotImplementedError)."""
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None) -> Module:
        """Move to a GPU: ember's build has no CUDA, so this raises torch's CPU-build error.

        Example:
            >>> import ember
            >>> ember.nn.Linear(2, 2).cuda()
            Traceback (most recent call last):
            AssertionError: Torch not compiled with CUDA enabled
        """
        raise AssertionError("Torch not compiled with CUDA enabled")

    # -- state dict ----------------------------------------------------------------------

    def _save_to_state_dict(self, destination, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def get_extra_state(self) -> Any:
        """Extra state for ``state_dict``: override together with ``set_extra_state``."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug."
        )

    def set_extra_state(self, state: Any) -> None:
        """Restore what ``get_extra_state`` returned."""
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug."
        )

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """An ``OrderedDict`` of parameters and persistent buffers by dotted name (detached
        tensors sharing storage with the module's).

        Example:
            >>> from ember import nn
            >>> list(nn.BatchNorm1d(3).state_dict())
            ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']
        """
        if args:
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(
                    destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars
                )
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if result is not None:
                destination = result
        return destination

    def _load_from_state_dict(
        self,
        state_dict,
        prefix,
        local_metadata,
        strict,
        missing_keys,
        unexpected_keys,
        error_msgs,
    ) -> None:
        for hook in self._load_state_dict_pre_hooks.values():
            hook(
                state_dict,
                prefix,
                local_metadata,
                strict,
                missing_keys,
                unexpected_keys,
                error_msgs,
            )
        persistent_buffers = {
            k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set
        }
        local_state = {
            k: v
            for k, v in itertools.chain(self._parameters.items(), persistent_buffers.items())
            if v is not None
        }
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key in state_dict:
                input_param = state_dict[key]
                if not isinstance(input_param, Tensor):
                    error_msgs.append(
                        f'While copying the parameter named "{key}", expected torch.Tensor or '
                        f"Tensor-like object from checkpoint but received {type(input_param)}"
                    )
                    continue
                if (
                    len(param.shape) == 0
                    and len(input_param.shape) == 1
                    and input_param.shape[0] == 1
                ):
                    input_param = input_param[0]
                if input_param.shape != param.shape:
                    error_msgs.append(
                        f"size mismatch for {key}: copying a param with shape "
                        f"{input_param.shape} from checkpoint, the shape in current model is "
                        f"{param.shape}."
                    )
                    continue
                try:
                    with no_grad():
                        if assign:
                            if isinstance(param, Parameter):
                                new = Parameter(input_param.detach(), param.requires_grad)
                            else:
                                new = input_param
                            setattr(self, name, new)
                        else:
                            param.copy_(input_param)
                except Exception as ex:  # noqa: BLE001 (reported like torch does)
                    error_msgs.append(
                        f'While copying the parameter named "{key}", whose dimensions in the '
                        f"model are {param.size()} and whose dimensions in the checkpoint are "
                        f"{input_param.size()}, an exception occurred : {ex.args}."
                    )
            elif strict:
                missing_keys.append(key)
        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        elif strict and extra_state_key in state_dict:
            unexpected_keys.append(extra_state_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_state_key:
                    input_name = key[len(prefix) :].split(".", 1)
                    if len(input_name) > 1:
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping, strict: bool = True, assign: bool = False):
        """Copy parameters and buffers from ``state_dict`` into this module tree.

        With ``strict`` the keys must match ``state_dict()``'s exactly (torch's
        ``RuntimeError`` lists missing and unexpected keys). Returns
        ``(missing_keys, unexpected_keys)``.

        Example:
            >>> from ember import nn
            >>> a, b = nn.Linear(2, 2), nn.Linear(2, 2)
            >>> b.load_state_dict(a.state_dict())
            <All keys matched successfully>
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list = []
        unexpected_keys: list = []
        error_msgs: list = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module: Module, local_state_dict, prefix: str = "") -> None:
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(
                local_state_dict,
                prefix,
                local_metadata,
                True,
                missing_keys,
                unexpected_keys,
                error_msgs,
            )
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state_dict = {
                        k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)
                    }
                    load(child, child_state_dict, child_prefix)
            incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                hook(module, incompatible)

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(
                    0,
                    "Unexpected key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in unexpected_keys)
                    ),
                )
            if missing_keys:
                error_msgs.insert(
                    0,
                    "Missing key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in missing_keys)
                    ),
                )
        if error_msgs:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(
                    self.__class__.__name__, "\n\t".join(error_msgs)
                )
            )
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # -- printing ------------------------------------------------------------------------

    def _get_name(self) -> str:
        return self.__class__.__name__

    def extra_repr(self) -> str:
        """The layer's own settings shown inside its repr; override in subclasses."""
        return ""

    def __repr__(self) -> str:
        extra_lines = []
        extra_repr = self.extra_repr()
        if extra_repr:
            extra_lines = extra_repr.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        return main_str + ")"
