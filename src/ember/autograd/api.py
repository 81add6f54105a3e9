"""``ember.autograd.backward``, ``grad`` and ``Variable``: running the engine for the user."""

from __future__ import annotations

import numpy as np

from .._tensor import Size, Tensor
from .engine import run_backward
from .graph import edge_of, grad_accumulator
from .recording import record_backward as _record_backward
from .recording import shape_constant


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs: tuple, grads: tuple, create_graph: bool) -> list:
    """Check or create the gradient for each output (torch's ``_make_grads``)."""
    result = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if out._data.dtype.kind not in "fcV":
                raise RuntimeError(
                    "grad can be implicitly created only for real scalar outputs but got "
                    f"{out.dtype}"
                )
            arr = shape_constant(np.ones(out._data.shape, dtype=out._data.dtype))
            result.append(Tensor._wrap(arr) if create_graph else arr)
            continue
        if not isinstance(g, Tensor):
            if isinstance(g, (int, float)):
                g = Tensor._wrap(np.asarray(g, dtype=out._data.dtype))
            else:
                raise TypeError(
                    "gradients can be either Tensors or None, but got " + type(g).__name__
                )
        if g._data.shape != out._data.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {Size(g._data.shape)} and "
                f"output[{i}] has a shape of {Size(out._data.shape)}."
            )
        if g._data.dtype.kind != out._data.dtype.kind and not (
            g._data.dtype.kind in "fcV" and out._data.dtype.kind in "fcV"
        ):
            raise RuntimeError(
                "For complex Tensors, both grad_output and output are required to have the "
                f"same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} "
                f"and output[{i}] has a dtype of {out.dtype}."
            )
        result.append(g if create_graph else g._data)
    return result


def _root_edges(outputs: tuple) -> list:
    edges = []
    for i, out in enumerate(outputs):
        e = edge_of(out)
        if e[0] is None:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        edges.append(e)
    return edges


def backward(
    tensors,
    grad_tensors=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables=None,
    inputs=None,
) -> None:
    """Accumulate into the leaves' ``.grad`` the gradient of ``tensors`` (weighted by
    ``grad_tensors`` for non-scalar outputs).

    Example:
        >>> import ember
        >>> x = ember.ones(3, requires_grad=True)
        >>> ember.autograd.backward([(x * 2).sum()])
        >>> x.grad
        tensor([2., 2., 2.])
    """
    if grad_variables is not None:
        grad_tensors = grad_variables
    outputs = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(grads)} tensors and {len(outputs)} gradients")
    if retain_graph is None:
        retain_graph = create_graph
    accumulate_into = None
    if inputs is not None:
        ins = _as_tuple(inputs)
        if not ins:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        accumulate_into = set()
        for t in ins:
            if t.grad_fn is None:
                if not t._rg:
                    raise RuntimeError("One of the differentiated Tensors does not require grad")
                accumulate_into.add(grad_accumulator(t))
            else:
                # A non-leaf input gets its .grad like retain_grad, for this call only.
                t.retain_grad()
                accumulate_into.add(t.grad_fn)
    edges = _root_edges(outputs)
    root_grads = _make_grads(outputs, grads, create_graph)
    run_backward(edges, root_grads, retain_graph, create_graph, accumulate_into=accumulate_into)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple:
    """Return the gradients of ``outputs`` w.r.t. ``inputs`` without touching ``.grad``.

    Example:
        >>> import ember
        >>> x = ember.tensor([1.0, 2.0], requires_grad=True)
        >>> ember.autograd.grad((x ** 2).sum(), x)
        (tensor([2., 4.]),)
    """
    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True is not supported by ember yet")
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and not allow_unused:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    grads = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outs)
    if len(grads) != len(outs):
        raise RuntimeError(
            f"grad requires one grad_output per output: got {len(grads)} and {len(outs)}"
        )
    detach = False
    if _record_backward:  # vmap or compile is capturing: the backward's ops are recorded
        detach = not create_graph  # as they would be: results that take no gradient
        create_graph = True
    if retain_graph is None:
        retain_graph = create_graph
    capture = []
    for t in ins:
        if not isinstance(t, Tensor):
            raise TypeError("inputs to autograd.grad must be Tensors")
        if not t._rg:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        if t.grad_fn is not None:
            capture.append((t.grad_fn, t._output_nr))
        else:
            capture.append((grad_accumulator(t), 0))
    edges = _root_edges(outs)
    root_grads = _make_grads(outs, grads, create_graph)
    result = run_backward(edges, root_grads, retain_graph, create_graph, capture=capture)
    final = []
    for t, g in zip(ins, result):
        if g is None:
            if materialize_grads:
                g = Tensor._wrap(np.zeros_like(t._data))
            elif not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
        elif not isinstance(g, Tensor):
            g = Tensor._wrap(np.asarray(g))
        elif detach:
            g = g.detach()
        final.append(g)
    return tuple(final)


def Variable(data, requires_grad: bool = False, volatile: bool = False):
    """Deprecated torch.autograd.Variable: returns a plain Tensor (as torch does today).

    Example:
        >>> import ember
        >>> from ember.autograd import Variable
        >>> Variable(ember.ones(2), requires_grad=True)
        tensor([1., 1.], requires_grad=True)
    """
    if not isinstance(data, Tensor):
        raise TypeError("Variable data has to be a tensor, but got " + type(data).__name__)
    t = data.detach()
    if requires_grad:
        if t._data.dtype.kind not in "fcV":
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients"
            )
        t._rg = True
    return t
