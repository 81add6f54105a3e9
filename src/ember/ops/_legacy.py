"""TEMPORARY: the old recording calls, for families not yet moved to ``defop``.

Removed when the last family is migrated (no forward AD through these nodes meanwhile).
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ..autograd.graph import Node, SavedOutput
from ..autograd.recording import _edges, _on, _versions, as_view, tangent_of
from ..autograd.recording import record as _record_new

__all__ = ["Node", "record", "record_multi", "set_saved", "saved_output", "_fw", "as_view"]


class _NoFw:
    node = None


_fw = _NoFw()


def _check_no_tangents(cls, inputs) -> None:
    if _on and any(isinstance(x, Tensor) and tangent_of(x) is not None for x in inputs):
        from ..autograd.recording import no_jvp_error

        raise no_jvp_error(cls)


def record(cls, out, inputs: tuple, saved: tuple = (), save_output: bool = False):
    _check_no_tangents(cls, inputs)
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    if not hasattr(cls, "_legacy_marker"):
        cls._legacy_marker = True
    t = _record_new(_Plain, out, ())  # a tensor without a node
    from .._mode import state

    edges = _edges(inputs) if state.enabled and out.dtype.kind in "fc" else None
    if edges is None:
        return t
    node = object.__new__(cls)
    node.next_functions = edges
    node._meta = ((out.shape, out.dtype),)
    node._hooks = None
    node._params = ()
    if save_output:
        saved = saved + (SavedOutput(t),)
    node._saved = saved
    node._versions = _versions(saved) if saved else ()
    t.grad_fn = node
    t._rg = True
    return t


class _Plain(Node):
    __slots__ = ()


def record_multi(cls, outs, inputs: tuple, saved: tuple = (), differentiable=None):
    _check_no_tangents(cls, inputs)
    from .._mode import state

    tensors = [Tensor._wrap(np.asarray(o)) for o in outs]
    if not state.enabled:
        return tensors
    edges = _edges(inputs)
    if edges is None:
        return tensors
    node = object.__new__(cls)
    node.next_functions = edges
    node._meta = tuple((o.shape, o.dtype) for o in outs)
    node._hooks = None
    node._params = ()
    node._saved = saved
    node._versions = _versions(saved) if saved else ()
    for i, t in enumerate(tensors):
        if differentiable is None or differentiable[i]:
            if t._data.dtype.kind in "fc":
                t.grad_fn = node
                t._rg = True
                t._output_nr = i
    return tensors


def set_saved(node, saved: tuple) -> None:
    node._saved = saved
    node._versions = tuple([s._vc[0] for s in saved])


def saved_output(t):
    return SavedOutput(t)


def _make_inplace(op):
    from ..autograd.views import apply_inplace

    def method(self, *args, **kwargs):
        return apply_inplace(self, op, *args, **kwargs)

    method.__name__ = op.__name__ + "_"
    return method


def _type_word(d) -> str:
    from .._dtype import scalar_name

    return scalar_name(d)


def add_tangents(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a + b
