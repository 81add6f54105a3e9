"""``torch.library``: Python-defined operators (``custom_op``) with their autograd formula.

``custom_op("ns::name", fn, mutates_args=...)`` makes an operator that runs ``fn``, is
reachable as ``ember.ops.ns.name`` and, once ``register_autograd`` gave it a backward
formula, is differentiable as one node (inside it, ``fn`` runs with gradients off, as
torch's kernels do). ``register_fake`` records the shape function torch's tracers call;
ember computes on the CPU only and has no fake or meta tensors, so it is kept, not called.

Example:
    >>> import ember
    >>> @ember.library.custom_op("mylib::scale", mutates_args=())
    ... def scale(x: ember.Tensor, k: float) -> ember.Tensor:
    ...     return x * k
    >>> def backward(ctx, grad):
    ...     return grad * ctx.k, None
    >>> def setup_context(ctx, inputs, output):
    ...     ctx.k = inputs[1]
    >>> scale.register_autograd(backward, setup_context=setup_context)
    >>> x = ember.ones(2, requires_grad=True)
    >>> ember.ops.mylib.scale(x, 3.0).sum().backward()
    >>> x.grad
    tensor([3., 3.])
"""

from __future__ import annotations

import inspect

import numpy as np

from ._tensor import Tensor
from .autograd import grad_mode
from .autograd.function import Function

__all__ = ["custom_op", "register_autograd", "register_fake"]

# qualified name ("ns::name") -> CustomOpDef
_OPS: dict = {}


def _split(name: str) -> tuple:
    if not isinstance(name, str) or name.count("::") != 1:
        raise ValueError(f"custom_op: expected a qualified name 'namespace::op_name', got {name!r}")
    namespace, op_name = name.split("::")
    return namespace, op_name


def _check_annotations(fn) -> inspect.Signature:
    sig = inspect.signature(fn)
    for p in sig.parameters.values():
        if p.annotation is inspect.Parameter.empty:
            raise ValueError(
                f"infer_schema(func): Parameter {p.name} must have a type annotation. "
                f"Got func with signature {sig})"
            )
    if sig.return_annotation is inspect.Signature.empty:
        raise ValueError(
            "infer_schema(func): No return type annotation was provided. Please add one."
        )
    return sig


def _tensors(value) -> list:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v)]
    return []


class CustomOpDef:
    """An operator made by :func:`custom_op`: call it like its function.

    Example:
        >>> import ember
        >>> @ember.library.custom_op("mylib::twice", mutates_args=())
        ... def twice(x: ember.Tensor) -> ember.Tensor:
        ...     return x * 2
        >>> twice
        <CustomOpDef(mylib::twice)>
        >>> twice(ember.ones(2))
        tensor([2., 2.])
    """

    def __init__(self, namespace: str, name: str, fn, schema, mutates_args) -> None:
        self._namespace = namespace
        self._name = name
        self._init_fn = fn
        self._schema = schema
        self._mutates_args = mutates_args
        self._signature = inspect.signature(fn)
        self._backward_fn = None
        self._setup_context_fn = None
        self._abstract_fn = None
        self._function = None
        self.__name__ = name
        self.__doc__ = fn.__doc__

    @property
    def _qualname(self) -> str:
        return f"{self._namespace}::{self._name}"

    @property
    def default(self) -> CustomOpDef:
        """The operator's one overload (``ember.ops.ns.name.default``): itself."""
        return self

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._qualname})>"

    def register_fake(self, fn):
        """Record ``fn``, the op's shape function for tracers (kept: ember has no fake
        tensors). Returns ``fn``, so it can decorate."""
        self._abstract_fn = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None) -> None:
        """Give the op its derivative: ``backward(ctx, *grads)`` returns one gradient per
        input (``None`` for non-Tensors); ``setup_context(ctx, inputs, output)`` saves
        what it needs."""
        self._backward_fn = backward
        self._setup_context_fn = setup_context
        self._function = None

    def _autograd_function(self):
        if self._function is None:
            op = self

            def forward(*inputs):
                return op._run(inputs)

            def setup_context(ctx, inputs, output):
                if op._setup_context_fn is not None:
                    op._setup_context_fn(ctx, inputs, output)

            def backward(ctx, *grads):
                if op._backward_fn is None:
                    raise RuntimeError(
                        f"Trying to backward through {op._namespace}.{op._name}.default but "
                        "no autograd formula was registered. Please use register_autograd "
                        "to add one."
                    )
                result = op._backward_fn(ctx, *grads)
                return result if isinstance(result, tuple) else (result,)

            name = f"GeneratedBackwardFor_{self._namespace}_{self._name}_default"
            self._function = type(
                name,
                (Function,),
                {
                    "forward": staticmethod(forward),
                    "setup_context": staticmethod(setup_context),
                    "backward": staticmethod(backward),
                },
            )
        return self._function

    def _run(self, inputs: tuple):
        args, kwargs = [], {}
        for p, value in zip(self._signature.parameters.values(), inputs):
            if p.kind is inspect.Parameter.KEYWORD_ONLY:
                kwargs[p.name] = value
            else:
                args.append(value)
        output = self._init_fn(*args, **kwargs)
        given = _tensors(inputs)
        outs = _tensors(output)
        for i, out in enumerate(outs):
            aliased = any(
                out is t or np.may_share_memory(out._data, t._data) for t in given + outs[:i]
            )
            if aliased:
                raise RuntimeError(
                    f"{self._name} (with implementation in {self._init_fn.__module__}): "
                    "The output of this custom operator (1) must not also be an input to "
                    "this custom operator and (2) may not alias any inputs to this custom "
                    "operator or other returns. Please instead return a clone of the "
                    "offending output tensor(s) (e.g. return x.clone()) or refactor the "
                    "custom operator to not return y."
                )
        return output

    def __call__(self, *args, **kwargs):
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        inputs = tuple(bound.arguments.values())
        if grad_mode.is_grad_enabled() and any(t.requires_grad for t in _tensors(inputs)):
            return self._autograd_function().apply(*inputs)
        return self._run(inputs)


def custom_op(name: str, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Make ``fn`` the operator ``name`` (``"namespace::op_name"``); used as a decorator
    when ``fn`` is omitted. Without ``schema`` every parameter and the return need type
    annotations (torch infers the schema from them).

    Example:
        >>> import ember
        >>> @ember.library.custom_op("mylib::plus_one", mutates_args=())
        ... def plus_one(x: ember.Tensor) -> ember.Tensor:
        ...     return x + 1
        >>> ember.ops.mylib.plus_one(ember.zeros(2))
        tensor([1., 1.])
    """
    namespace, op_name = _split(name)
    if mutates_args != "unknown" and isinstance(mutates_args, str):
        raise ValueError(
            "mutates_args must be a tuple of argument names or 'unknown', got a string"
        )

    def inner(func):
        if schema is None:
            _check_annotations(func)
        op = CustomOpDef(namespace, op_name, func, schema, mutates_args)
        _OPS[op._qualname] = op
        from . import ops  # deferred: ember.ops loads on first use (and imports much)

        setattr(getattr(ops, namespace), op_name, op)
        return op

    return inner if fn is None else inner(fn)


# Operator namespaces of libraries whose compiled operators cannot load into ember, and the
# ember module that defines the ones ember computes itself (loaded on first use).
PROVIDED_NAMESPACES = {"torchvision": "ember._vision_ops"}


def load_provided(namespace: str) -> None:
    """Define ember's own operators of ``namespace`` (``torchvision``), if it has any."""
    module = PROVIDED_NAMESPACES.get(namespace)
    if module is not None:
        import importlib  # deferred: only for a library's namespace, once

        importlib.import_module(module)


def _lookup(op) -> CustomOpDef:
    if isinstance(op, CustomOpDef):
        return op
    found = _OPS.get(op)
    if found is None and isinstance(op, str) and "::" in op:
        load_provided(op.split("::")[0])
        found = _OPS.get(op)
    if found is None:
        raise ValueError(f"register: {op!r} is not an operator made by custom_op")
    return found


def register_fake(op, func=None, /, *, lib=None, _stacklevel: int = 1, allow_override=False):
    """Record ``func`` as the shape function of ``op`` (a :class:`CustomOpDef` or its
    ``"ns::name"``); a decorator when ``func`` is omitted. Returns ``func``.

    Example:
        >>> import ember
        >>> @ember.library.custom_op("mylib::neg", mutates_args=())
        ... def neg(x: ember.Tensor) -> ember.Tensor:
        ...     return -x
        >>> @ember.library.register_fake("mylib::neg")
        ... def _(x):
        ...     return ember.empty_like(x)
    """
    target = _lookup(op)
    return target.register_fake if func is None else target.register_fake(func)


def register_autograd(op, backward, /, *, setup_context=None, lib=None) -> None:
    """Give ``op`` (a :class:`CustomOpDef` or its ``"ns::name"``) its backward formula;
    see :meth:`CustomOpDef.register_autograd`.

    Example:
        >>> import ember
        >>> @ember.library.custom_op("mylib::square", mutates_args=())
        ... def square(x: ember.Tensor) -> ember.Tensor:
        ...     return x * x
        >>> def setup_context(ctx, inputs, output):
        ...     ctx.save_for_backward(inputs[0])
        >>> def backward(ctx, grad):
        ...     (x,) = ctx.saved_tensors
        ...     return 2 * x * grad
        >>> ember.library.register_autograd("mylib::square", backward, setup_context=setup_context)
        >>> x = ember.tensor([3.0], requires_grad=True)
        >>> square(x).backward()
        >>> x.grad
        tensor([6.])
    """
    _lookup(op).register_autograd(backward, setup_context=setup_context)
