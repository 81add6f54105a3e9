"""The backward-node base shared by ``ember.nn``'s ops.

An nn op computes its result with NumPy and records one node (named like torch's
``grad_fn``) whose ``vjp`` gets the gradient and the op's inputs as NumPy arrays. When
the backward pass is itself recorded (``create_graph=True``), the node instead re-runs
``composite``, the same function written with differentiable ember ops, and
differentiates it with ``autograd.grad``: higher-order gradients are exact without a
second hand-written rule per op. Linear ops (pad, unfold, fold) override ``backward``
with their adjoint, which works on arrays and Tensors alike.

Forward mode (``autograd.forward_ad``) reuses ``composite`` too: the generic ``jvp``
re-runs it on the (dual) inputs with forward AD switched back on, so the tangent is
``J @ t`` computed by the JVP rules of its ember ops (and recorded when something
requires grad, for reverse-over-forward). Nodes whose ``composite`` encodes backward-only
semantics (embedding's ``padding_idx``, max pooling's tie-breaking) or that have none
(the linear ones) define ``jvp`` themselves.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ..autograd.recording import resumed as _ForwardResumed
from ..autograd.recording import tangent_of
from ..ops._legacy import Node, _fw, record

_wrap = Tensor._wrap


class NNNode(Node):
    """Base of the nn nodes: saved Tensors are the op's inputs, in order.

    Subclasses implement ``vjp(grad, *inputs)`` on arrays (None for an absent input),
    returning one gradient per input, and ``composite(*inputs)`` with ember ops.
    """

    __slots__ = ("layout",)

    def backward(self, grad, *saved):
        args = []
        it = iter(saved)
        for present in self.layout:
            args.append(next(it) if present else None)
        if isinstance(grad, Tensor):
            res = self._recorded_vjp(grad, args)
        else:
            res = self.vjp(grad, *args)
        return res

    def vjp(self, grad, *inputs):
        raise NotImplementedError

    def jvp(self, tangents, inputs, *saved):
        """``J @ tangents``: ``composite`` re-run on the saved inputs (which carry the
        tangents) with forward AD back on; its result's tangent is the answer."""
        args = []
        it = iter(saved)
        for present in self.layout:
            args.append(next(it) if present else None)
        with _ForwardResumed():
            out = self.composite(*args)
            return tangent_of(out)

    def composite(self, *inputs):
        raise NotImplementedError

    def _recorded_vjp(self, grad, args):
        from ..autograd import grad as autograd_grad
        from ..autograd.grad_mode import enable_grad

        wanted = []
        call_args = list(args)
        with enable_grad():
            for i, (a, edge) in enumerate(zip(args, self.next_functions)):
                if not isinstance(a, Tensor):
                    continue
                if edge[0] is not None and a.requires_grad:
                    # A fresh alias per slot: the same tensor passed twice (mse_loss(x, x))
                    # gets one partial derivative per argument, as the engine expects.
                    call_args[i] = a.view_as(a)
                    wanted.append(i)
                else:
                    call_args[i] = a.detach()  # a constant (and a plain Tensor, not a Parameter)
            out = self.composite(*call_args)
        result = [None] * len(args)
        if wanted:
            grads = autograd_grad(
                out,
                [call_args[i] for i in wanted],
                grad,
                create_graph=True,
                allow_unused=True,
            )
            for i, g in zip(wanted, grads):
                result[i] = g
        return tuple(result) if len(result) > 1 else result[0]


def record_nn(cls, out: np.ndarray, inputs: tuple, **attrs) -> Tensor:
    """Wrap ``out`` and attach a ``cls`` node saving the Tensor inputs; set its attributes
    (on the graph node, or on the forward-only node whose JVP will run, ``_fw.node``)."""
    saved = tuple(x for x in inputs if isinstance(x, Tensor))
    t = record(cls, out, inputs, saved)
    node = t.grad_fn or _fw.node
    if node is not None:
        node.layout = tuple(isinstance(x, Tensor) for x in inputs)
        for k, v in attrs.items():
            setattr(node, k, v)
    return t


def is_recorded(x) -> bool:
    """True for a gradient that is a Tensor (the backward pass is being recorded)."""
    return isinstance(x, Tensor)


def const(x, like) -> object:
    """An array as a constant Tensor when ``like`` is a Tensor, else unchanged."""
    return _wrap(np.asarray(x)) if isinstance(like, Tensor) else x


def arr(x) -> np.ndarray | None:
    """The ndarray behind a Tensor (None stays None)."""
    if x is None:
        return None
    return x._data if isinstance(x, Tensor) else np.asarray(x)
