"""Higher-level autograd functions: ``vjp, jvp, jacobian, hessian, hvp, vhp``.

The API and semantics of ``torch.autograd.functional``: ``func`` takes a Tensor or a
tuple of Tensors and returns a Tensor or a tuple of Tensors; results mirror that
structure (a Jacobian of tuple outputs w.r.t. tuple inputs is a tuple of tuples);
``create_graph=True`` keeps results differentiable; ``strict=True`` raises torch's errors
when an output is independent of an input instead of returning zeros.

``vjp``, ``jacobian`` and ``hessian`` are built on reverse mode (``autograd.grad``).
``jvp`` and ``hvp`` use the double-vjp trick, as torch does: ``J v = d/du <J^T u, v>``,
so the functions' backward must itself be differentiable (every ember op's backward is
recorded when ``create_graph=True``). ``jacobian(strategy="forward-mode")`` and
``hessian(outer_jacobian_strategy="forward-mode")`` use real forward-mode AD
(``autograd.forward_ad``), the latter over a reverse-mode gradient.

Example:
    >>> import ember
    >>> from ember.autograd.functional import jacobian
    >>> jacobian(lambda x: x**2, ember.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from . import forward_ad as fwAD
from . import grad_mode
from .api import grad as _grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


class _set_grad:
    """Set grad mode for a block (ember's context managers, without importing ember)."""

    def __init__(self, mode: bool) -> None:
        self.mode = mode

    def __enter__(self):
        self.prev = grad_mode.state.enabled
        grad_mode.state.enabled = self.mode

    def __exit__(self, *exc) -> None:
        grad_mode.state.enabled = self.prev


# -- helpers (the same as torch's) ------------------------------------------------------


def _as_tuple_nocheck(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _as_tuple(inp, arg_name=None, fn_name=None):
    if arg_name is None and fn_name is None:
        return _as_tuple_nocheck(inp)
    is_inp_tuple = True
    if not isinstance(inp, tuple):
        inp = (inp,)
        is_inp_tuple = False
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            if is_inp_tuple:
                raise TypeError(
                    f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                    f"Tensors but the value at index {i} has type {type(el)}."
                )
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                f"Tensors but the given {arg_name} has type {type(el)}."
            )
    return is_inp_tuple, inp


def _tuple_postprocess(res, to_unpack):
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    # With create_graph, results must stay connected to the user's inputs: use an alias
    # that records a node (torch uses view_as); otherwise detach.
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(inputs, create_graph):
    if isinstance(inputs[0], Tensor):
        if not create_graph:
            return tuple(inp.detach() for inp in inputs)
        return inputs
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(
                f"{prepend}v has invalid size: should be {el_other.size()} but got {el_v.size()}."
            )


def _check_requires_grad(inputs, input_type, strict):
    if not strict:
        return
    if input_type not in ["outputs", "grad_inputs", "jacobian", "hessian"]:
        raise RuntimeError("Invalid input_type to _check_requires_grad")
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}."
                " This is not allowed in strict mode."
            )
        if not inp.requires_grad:
            if input_type == "hessian":
                raise RuntimeError(
                    f"The hessian of the user-provided function with respect to input {i}"
                    " is independent of the input. This is not allowed in strict mode."
                    " You should ensure that your function is thrice differentiable and that"
                    " the hessian depends on the inputs."
                )
            if input_type == "jacobian":
                raise RuntimeError(
                    "While computing the hessian, found that the jacobian of the user-provided"
                    f" function with respect to input {i} is independent of the input. This is "
                    "not allowed in strict mode. You should ensure that your function is twice"
                    " differentiable and that the jacobian depends on the inputs (this would be"
                    " violated by a linear function for example)."
                )
            if input_type == "grad_inputs":
                raise RuntimeError(
                    f"The gradient with respect to input {i} is independent of the inputs of the"
                    " user-provided function. This is not allowed in strict mode."
                )
            raise RuntimeError(
                f"Output {i} of the user-provided function does not require gradients."
                " The outputs must be computed in a differentiable manner from the input"
                " when running in strict mode."
            )


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    new_outputs = ()
    new_grad_outputs = ()
    for out, grad_out in zip(outputs, grad_outputs):
        if out is not None and out.requires_grad:
            new_outputs += (out,)
            new_grad_outputs += (grad_out,)
    if len(new_outputs) == 0:
        return (None,) * len(inputs)
    return _grad(
        new_outputs,
        inputs,
        new_grad_outputs,
        allow_unused=True,
        create_graph=create_graph,
        retain_graph=retain_graph,
    )


def _zeros_like(t, requires_grad: bool = False):
    z = Tensor._wrap(np.zeros(t._data.shape, dtype=t._data.dtype))
    if requires_grad:
        z.requires_grad_()
    return z


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    if stage not in ["back", "back_trick", "double_back", "double_back_trick"]:
        raise RuntimeError(f"Invalid stage argument '{stage}' to _fill_in_zeros")
    res = ()
    for i, grads_i in enumerate(grads):
        if grads_i is None:
            if strict:
                if stage == "back":
                    raise RuntimeError(
                        "The output of the user-provided function is independent of "
                        f"input {i}. This is not allowed in strict mode."
                    )
                if stage == "back_trick":
                    raise RuntimeError(
                        f"The gradient with respect to the input is independent of entry {i}"
                        " in the grad_outputs when using the double backward trick to compute"
                        " forward mode gradients. This is not allowed in strict mode."
                    )
                if stage == "double_back":
                    raise RuntimeError(
                        "The jacobian of the user-provided function is independent of "
                        f"input {i}. This is not allowed in strict mode."
                    )
                raise RuntimeError(
                    "The hessian of the user-provided function is independent of "
                    f"entry {i} in the grad_jacobian. This is not allowed in strict "
                    "mode as it prevents from using the double backward trick to "
                    "replace forward mode AD."
                )
            grads_i = _zeros_like(refs[i])
        elif strict and create_graph and not grads_i.requires_grad:
            if "double" not in stage:
                raise RuntimeError(
                    "The jacobian of the user-provided function is independent of "
                    f"input {i}. This is not allowed in strict mode when create_graph=True."
                )
            raise RuntimeError(
                "The hessian of the user-provided function is independent of "
                f"input {i}. This is not allowed in strict mode when create_graph=True."
            )
        res += (grads_i,)
    return res


def _check_single_element_v(v, inputs, who: str):
    if v is None and (len(inputs) != 1 or inputs[0].nelement() != 1):
        raise RuntimeError(
            f"The vector v can only be None if the input to {who} is a single Tensor with a "
            "single element."
        )


def _prep_inputs(inputs, fn_name: str, create_graph):
    """Check ``inputs`` (a Tensor or a tuple of them) and make the copies ``func`` runs on."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    return is_inputs_tuple, _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)


def _prep_v(v, fn_name: str, create_graph, other, is_other_tuple):
    """Check ``v`` against ``other`` (what it is shaped like) and detach it."""
    _, v = _as_tuple(v, "v", fn_name)
    v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
    _validate_v(v, other, is_other_tuple)
    return v


def _prep_inputs_and_v(inputs, v, fn_name: str, create_graph):
    """The start of ``jvp``/``vhp``/``hvp``: inputs, and a ``v`` shaped like them."""
    is_inputs_tuple, inputs = _prep_inputs(inputs, fn_name, create_graph)
    if v is not None:
        v = _prep_v(v, fn_name, create_graph, inputs, is_inputs_tuple)
    else:
        _check_single_element_v(v, inputs, "the user-provided function")
    return is_inputs_tuple, inputs, v


def _call_func(func, inputs, fn_name: str, strict):
    """Run ``func`` on ``inputs``; return ``(is_outputs_tuple, outputs)``, checked."""
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    return is_outputs_tuple, outputs


def _result_grad_mode(create_graph):
    """Grad mode for computing the final products: on to keep a graph, else the caller's."""
    return _set_grad(True if create_graph else grad_mode.state.enabled)


def _postprocess_pair(outputs, is_outputs_tuple, result, is_result_tuple, create_graph):
    """``(outputs, result)`` detached unless ``create_graph``, in the caller's structure."""
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(
        result, is_result_tuple
    )


# -- public API -------------------------------------------------------------------------


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """Return ``(func(inputs), v^T J)``: the vector-Jacobian product at ``inputs``.

    ``v`` has the shape of ``func``'s output(s); it may be omitted when the output has a
    single element. The product has the shape of ``inputs``.

    Example:
        >>> import ember
        >>> from ember.autograd.functional import vjp
        >>> out, g = vjp(lambda x: x**2, ember.tensor([1.0, 2.0]), ember.tensor([1.0, 1.0]))
        >>> g
        tensor([2., 4.])
    """
    with _set_grad(True):
        is_inputs_tuple, inputs = _prep_inputs(inputs, "vjp", create_graph)
        is_outputs_tuple, outputs = _call_func(func, inputs, "vjp", strict)
        if v is not None:
            v = _prep_v(v, "vjp", create_graph, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError(
                "The vector v can only be None if the user-provided function returns a single "
                "Tensor with a single element."
            )
    with _result_grad_mode(create_graph):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    return _postprocess_pair(outputs, is_outputs_tuple, result, is_inputs_tuple, create_graph)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """Return ``(func(inputs), J v)``: the Jacobian-vector product at ``inputs``.

    ``v`` has the shape of ``inputs`` (optional for a single one-element input). Computed
    with the double-vjp trick, like torch: ``J v = d/du <J^T u, v>``.

    Example:
        >>> import ember
        >>> from ember.autograd.functional import jvp
        >>> out, jv = jvp(lambda x: x**2, ember.tensor([1.0, 2.0]), ember.tensor([1.0, 0.0]))
        >>> jv
        tensor([2., 0.])
    """
    with _set_grad(True):
        is_inputs_tuple, inputs, v = _prep_inputs_and_v(inputs, v, "jvp", create_graph)
        is_outputs_tuple, outputs = _call_func(func, inputs, "jvp", strict)
        # The double backward trick: the vjp is linear in these dummy grad_outputs.
        grad_outputs = tuple(_zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    with _result_grad_mode(create_graph):
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    return _postprocess_pair(outputs, is_outputs_tuple, result, is_outputs_tuple, create_graph)


def _one_hot(out, j: int):
    seed = np.zeros(out._data.size, dtype=out._data.dtype)
    seed[j] = 1
    return Tensor._wrap(seed.reshape(out._data.shape))


def _stack_rows(rows: list, shape: tuple, axis: int = 0):
    """``stack(rows, axis).reshape(shape)``; recorded (row by row, as indexed assignments)
    when a row is part of a graph."""
    if not any(r._rg for r in rows):
        return Tensor._wrap(np.stack([r._data for r in rows], axis).reshape(shape))
    out = rows[0].new_zeros((len(rows),) + tuple(rows[0].shape))
    for i, r in enumerate(rows):
        out[i] = r
    if axis == -1:
        out = out.movedim(0, -1)
    return out.reshape(shape)


def _jacfwd(func, inputs, strict=False, vectorize=False):
    """Forward-mode Jacobian: one forward pass on dual tensors per input element (torch
    batches these passes with vmap; the columns are the same)."""
    if strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` "
            'and `strategy="forward-mode"` are not supported together (yet). '
            "Please either set `strict=False` or "
            '`strategy="reverse-mode"`.'
        )
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
            "only implemented for `vectorize=True`."
        )
    is_outputs_tuple = False
    outputs = None
    # columns[i][j][k]: d(output i)/d(input j)[k], the tangent of output i
    columns = None
    for j, inp in enumerate(inputs):
        for k in range(inp.nelement()):
            with fwAD.dual_level():
                duals = tuple(
                    fwAD.make_dual(x, _one_hot(x, k) if jj == j else _zeros_like(x))
                    for jj, x in enumerate(inputs)
                )
                is_outputs_tuple, outs = _as_tuple(func(*duals), "outputs")
                unpacked = [fwAD.unpack_dual(o) for o in outs]
            if columns is None:
                outputs = [u.primal for u in unpacked]
                columns = [[[] for _ in inputs] for _ in outputs]
            for i, u in enumerate(unpacked):
                tg = u.tangent
                columns[i][j].append(tg if tg is not None else _zeros_like(u.primal))
    if outputs is None:  # every input is empty: run func once for the output shapes
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs")
        columns = [[[] for _ in inputs] for _ in outputs]
    jac = []
    for i, out in enumerate(outputs):
        row = []
        for j, inp in enumerate(inputs):
            cols = columns[i][j]
            shape = tuple(out.shape) + tuple(inp.shape)
            if cols:
                # Columns are stacked along a new last dim, then split into input dims.
                row.append(_stack_rows(cols, shape, -1))
            else:
                row.append(_empty_jac(out, inp))
        jac.append(row)
    # Lists, not tuples, where torch's forward-mode path returns them.
    return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def jacobian(
    func,
    inputs,
    create_graph=False,
    strict=False,
    vectorize=False,
    strategy="reverse-mode",
):
    """The Jacobian of ``func`` at ``inputs``, shaped ``output.shape + input.shape``.

    With tuple inputs/outputs the result is a tuple (of tuples): ``result[i][j]`` is the
    Jacobian of output ``i`` w.r.t. input ``j``. ``vectorize`` is accepted (ember computes
    row by row either way); ``strategy="forward-mode"`` (needs ``vectorize=True``, like
    torch) computes columns with forward-mode AD.

    Example:
        >>> import ember
        >>> from ember.autograd.functional import jacobian
        >>> jacobian(lambda x, y: x * y, (ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0])))
        (tensor([[3., 0.],
                [0., 4.]]), tensor([[1., 0.],
                [0., 2.]]))
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` "
                'and `strategy="forward-mode"` are not supported together (yet). '
                "Please either set `create_graph=False` or "
                '`strategy="reverse-mode"`.'
            )
        return _jacfwd(func, inputs, strict, vectorize)

    with _set_grad(True):
        is_inputs_tuple, inputs = _prep_inputs(inputs, "jacobian", create_graph)
        is_outputs_tuple, outputs = _call_func(func, inputs, "jacobian", strict)
        if vectorize and strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` "
                "and `vectorized=True` are not supported together. "
                "Please either set `strict=False` or "
                "`vectorize=False`."
            )

        jac = ()
        for i, out in enumerate(outputs):
            jac_i = tuple([] for _ in range(len(inputs)))
            for j in range(out.nelement()):
                # Row j of the Jacobian: the vjp with the j-th basis vector (torch
                # differentiates out.reshape(-1)[j], which gives the same rows).
                vj = _autograd_grad(
                    (out,),
                    inputs,
                    (_one_hot(out, j),),
                    retain_graph=True,
                    create_graph=create_graph,
                )
                for el_idx, (jac_i_el, vj_el, inp_el) in enumerate(zip(jac_i, vj, inputs)):
                    if vj_el is not None:
                        if strict and create_graph and not vj_el.requires_grad:
                            raise RuntimeError(
                                "The jacobian of the user-provided function is "
                                f"independent of input {i}. This is not allowed in "
                                "strict mode when create_graph=True."
                            )
                        jac_i_el.append(vj_el)
                    else:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is "
                                f"independent of input {el_idx}. This is not allowed in "
                                "strict mode."
                            )
                        jac_i_el.append(_zeros_like(inp_el))
            jac += (
                tuple(
                    _stack_rows(jac_i_el, tuple(out.shape) + tuple(inputs[el_idx].shape))
                    if jac_i_el
                    else _empty_jac(out, inputs[el_idx])
                    for el_idx, jac_i_el in enumerate(jac_i)
                ),
            )
        jac = _grad_postprocess(jac, create_graph)
        return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def _empty_jac(out, inp):
    return Tensor._wrap(np.zeros(tuple(out.shape) + tuple(inp.shape), dtype=inp._data.dtype))


def hessian(
    func,
    inputs,
    create_graph=False,
    strict=False,
    vectorize=False,
    outer_jacobian_strategy="reverse-mode",
):
    """The Hessian of a scalar ``func`` at ``inputs``, shaped ``input.shape * 2``.

    With tuple inputs, ``result[i][j]`` is the block of second derivatives w.r.t. inputs
    ``i`` and ``j``.

    Example:
        >>> import ember
        >>> from ember.autograd.functional import hessian
        >>> hessian(lambda x: (x**3).sum(), ember.tensor([1.0, 2.0]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a single "
                "element"
            )
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(
        jac_func,
        inputs,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _check_scalar_output(outputs, is_outputs_tuple, who: str):
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {who} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {who} should contain a single element"
        )


def _scalar_func_jac(func, inputs, fn_name: str, strict):
    """Run a scalar ``func`` and take its gradient with a graph (``vhp``/``hvp``)."""
    is_outputs_tuple, outputs = _call_func(func, inputs, fn_name, strict)
    _check_scalar_output(outputs, is_outputs_tuple, fn_name)
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict=strict)
    return is_outputs_tuple, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """Return ``(func(inputs), v^T H)`` for a scalar ``func`` (H: its Hessian at inputs).

    Example:
        >>> import ember
        >>> from ember.autograd.functional import vhp
        >>> vhp(lambda x: (x**3).sum(), ember.tensor([1.0, 2.0]), ember.tensor([1.0, 1.0]))[1]
        tensor([ 6., 12.])
    """
    with _set_grad(True):
        is_inputs_tuple, inputs, v = _prep_inputs_and_v(inputs, v, "vhp", create_graph)
        is_outputs_tuple, outputs, jac = _scalar_func_jac(func, inputs, "vhp", strict)
    with _result_grad_mode(create_graph):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    return _postprocess_pair(outputs, is_outputs_tuple, result, is_inputs_tuple, create_graph)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """Return ``(func(inputs), H v)`` for a scalar ``func`` (H: its Hessian at inputs).

    Uses the double-backward trick like torch (for the symmetric Hessian of a twice
    continuously differentiable function ``hvp`` equals ``vhp``, which is cheaper).

    Example:
        >>> import ember
        >>> from ember.autograd.functional import hvp
        >>> hvp(lambda x: (x**3).sum(), ember.tensor([1.0, 2.0]), ember.tensor([1.0, 0.0]))[1]
        tensor([6., 0.])
    """
    with _set_grad(True):
        is_inputs_tuple, inputs, v = _prep_inputs_and_v(inputs, v, "hvp", create_graph)
        is_outputs_tuple, outputs, jac = _scalar_func_jac(func, inputs, "hvp", strict)
        grad_jac = tuple(_zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    with _result_grad_mode(create_graph):
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    return _postprocess_pair(outputs, is_outputs_tuple, result, is_inputs_tuple, create_graph)
