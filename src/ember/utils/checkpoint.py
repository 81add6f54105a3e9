"""``torch.utils.checkpoint``: trade compute for memory by recomputing a segment's forward
during backward.

``use_reentrant=True`` (torch's default when the argument is omitted, with its warning)
runs the segment without recording, keeps only its inputs, and in backward replays the
forward with grad on (restoring the RNG state, so dropout draws the same mask) and
differentiates it: the node is ``CheckpointFunctionBackward`` as in torch.
``use_reentrant=False`` records the segment normally; the gradients are identical and the
graph is what torch's non-reentrant variant shows (its nodes are the segment's own).

Example:
    >>> import ember
    >>> from ember.utils.checkpoint import checkpoint
    >>> layer = ember.nn.Linear(3, 3)
    >>> x = ember.randn(2, 3, requires_grad=True)
    >>> checkpoint(layer, x, use_reentrant=True).sum().backward()
    >>> x.grad.shape
    torch.Size([2, 3])
"""

from __future__ import annotations

from .. import _creation
from .._overrides import warn as _warn
from .._tensor import Tensor
from ..autograd import backward as _backward
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad

__all__ = ["checkpoint", "checkpoint_sequential", "get_device_states", "set_device_states"]

_USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
    "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
    "exception. use_reentrant=False is recommended, but if you need to preserve the current "
    "default behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants."
)


class CheckpointFunction(Function):
    """Forward without a graph; backward replays the forward with grad and differentiates."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.rng_state = _creation.get_rng_state() if preserve_rng_state else None
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        inputs = list(ctx.inputs)
        tensors = ctx.saved_tensors
        for i, t in zip(ctx.tensor_indices, tensors):
            inputs[i] = t.detach().requires_grad_(t.requires_grad)
        if ctx.rng_state is not None:
            current = _creation.get_rng_state()
            _creation.set_rng_state(ctx.rng_state)
        try:
            with enable_grad():
                outputs = ctx.run_function(*inputs)
        finally:
            if ctx.rng_state is not None:
                _creation.set_rng_state(current)
        outputs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
        pairs = [
            (o, g)
            for o, g in zip(outputs, grad_outputs)
            if isinstance(o, Tensor) and o.requires_grad and g is not None
        ]
        if not pairs:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary"
            )
        # A nested backward, as torch's: the segment's parameters accumulate their gradients
        # and the detached inputs collect theirs in .grad.
        _backward([o for o, _ in pairs], [g for _, g in pairs])
        per_input = [None] * len(inputs)
        for i in ctx.tensor_indices:
            per_input[i] = inputs[i].grad
        return (None, None, *per_input)


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    """``function(*args, **kwargs)``, recomputed in backward instead of kept (see module).

    Example:
        >>> import ember
        >>> from ember.utils.checkpoint import checkpoint
        >>> x = ember.tensor([0.0, 1.0], requires_grad=True)
        >>> y = checkpoint(lambda t: (t * t).sum(), x, use_reentrant=True)
        >>> y.grad_fn.name()
        'CheckpointFunctionBackward'
        >>> y.backward()
        >>> x.grad
        tensor([0., 2.])
    """
    if use_reentrant is None:
        _warn(_USE_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    for key in ("context_fn", "determinism_check", "debug", "early_stop"):
        kwargs.pop(key, None)  # options of the non-reentrant variant's bookkeeping
    if not use_reentrant:
        return function(*args, **kwargs)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    return CheckpointFunction.apply(function, preserve_rng_state, *args)


def get_device_states(*args) -> tuple[list[int], list[Tensor]]:
    """The accelerator devices the tensors in ``args`` live on and their RNG states, which
    checkpointing restores before recomputing. ember's tensors live on the CPU, whose RNG
    state checkpoint keeps separately: both lists are empty, as torch's are for CPU tensors.

    Example:
        >>> import ember
        >>> from ember.utils.checkpoint import get_device_states
        >>> get_device_states(ember.ones(2), "not a tensor")
        ([], [])
    """
    return [], []


def set_device_states(devices, states, *, device_type=None) -> None:
    """Restore the RNG ``states`` of accelerator ``devices`` (from :func:`get_device_states`);
    a device on this CPU-only build fails as torch's CUDA calls do there.

    Example:
        >>> from ember.utils.checkpoint import set_device_states
        >>> set_device_states([], [])
    """
    if device_type == "meta":
        return
    from .. import cuda  # deferred: only a non-empty list of devices reaches CUDA

    for device, state in zip(devices, states):
        with cuda.device(device):
            cuda.set_rng_state(state)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run a Sequential (or list of modules) in ``segments`` checkpointed chunks.

    Every chunk but the last is run with :func:`checkpoint`; the last keeps its graph.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> from ember.utils.checkpoint import checkpoint_sequential
        >>> model = nn.Sequential(nn.ReLU(), nn.ReLU(), nn.Tanh(), nn.ReLU())
        >>> x = ember.tensor([-1.0, 0.0, 1.0], requires_grad=True)
        >>> checkpoint_sequential(model, 2, x, use_reentrant=True).sum().backward()
        >>> x.grad
        tensor([0.0000, 0.0000, 0.4200])
    """
    if use_reentrant is None:
        _warn(_USE_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    if hasattr(functions, "children") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())
    size = len(functions) // segments

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, **kwargs)
    return run(end + 1, len(functions) - 1)(input)
