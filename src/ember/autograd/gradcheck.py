"""Finite-difference checks of analytical gradients (torch.autograd.gradcheck's API)."""

from __future__ import annotations

import numpy as np


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytical and numerical Jacobians differ."""


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _differentiable_outputs(func, inputs):
    from .._tensor import Tensor

    outs = _as_tuple(func(*inputs))
    return tuple(o for o in outs if isinstance(o, Tensor) and o.requires_grad)


def numerical_jacobian(func, inputs, eps: float = 1e-6) -> list:
    """Jacobians by central differences: one ``(numel(out), numel(input))`` matrix per pair.

    Returns ``[[J(out_j, input_i) for each output j] for each input i]`` (only inputs that
    require grad).
    """
    from .._tensor import Tensor
    from .grad_mode import no_grad

    with no_grad():
        base = [o._data.copy() for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor)]
    result = []
    for x in inputs:
        if not (isinstance(x, Tensor) and x.requires_grad):
            continue
        flat = x._data.reshape(-1)  # a view: perturbations write into x
        cols = [np.zeros((b.size, flat.size)) for b in base]
        for k in range(flat.size):
            orig = flat[k].copy()
            with no_grad():
                flat[k] = orig + eps
                plus = [
                    o._data.astype(np.float64)
                    for o in _as_tuple(func(*inputs))
                    if isinstance(o, Tensor)
                ]
                flat[k] = orig - eps
                minus = [
                    o._data.astype(np.float64)
                    for o in _as_tuple(func(*inputs))
                    if isinstance(o, Tensor)
                ]
                flat[k] = orig
            for j in range(len(base)):
                cols[j][:, k] = ((plus[j] - minus[j]) / (2 * eps)).reshape(-1)
        result.append(cols)
    return result


def analytical_jacobian(func, inputs) -> list:
    """Jacobians from reverse mode, one row per output element (same layout as numerical)."""
    from .._tensor import Tensor
    from . import grad as autograd_grad

    diff_inputs = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    outs = [o for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor)]
    result = [[np.zeros((o._data.size, x._data.size)) for o in outs] for x in diff_inputs]
    for j, out in enumerate(outs):
        if not out.requires_grad:
            continue
        for r in range(out._data.size):
            seed = np.zeros(out._data.size, dtype=out._data.dtype)
            seed[r] = 1
            grads = autograd_grad(
                out,
                diff_inputs,
                grad_outputs=Tensor._wrap(seed.reshape(out._data.shape)),
                retain_graph=True,
                allow_unused=True,
            )
            for i, g in enumerate(grads):
                if g is not None:
                    result[i][j][r, :] = g._data.reshape(-1)
    return result


def gradcheck(
    func,
    inputs,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Check reverse-mode gradients of ``func`` against central finite differences.

    Inputs that require grad should be float64. Returns True, or raises GradcheckError
    with both Jacobians (or returns False when ``raise_exception=False``).

    Example:
        >>> import ember
        >>> x = ember.randn(3, dtype=ember.float64, requires_grad=True)
        >>> ember.autograd.gradcheck(lambda t: (t.sin() * t).sum(), (x,))
        True
    """
    from .._tensor import Tensor

    inputs = _as_tuple(inputs)
    for x in inputs:
        if isinstance(x, Tensor) and x.requires_grad and x._data.dtype != np.float64:
            import warnings

            warnings.warn(
                "Input #0 requires gradient and is not a double precision floating point. "
                "This check will likely fail if all the inputs are not of double precision "
                "floating point. ",
                UserWarning,
                stacklevel=2,
            )
            break
    numerical = numerical_jacobian(func, inputs, eps)
    analytical = analytical_jacobian(func, inputs)
    for i, (num_cols, ana_cols) in enumerate(zip(numerical, analytical)):
        for j, (n, a) in enumerate(zip(num_cols, ana_cols)):
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                if not raise_exception:
                    return False
                raise GradcheckError(
                    f"Jacobian mismatch for output {j} with respect to input {i},\n"
                    f"numerical:{np.array2string(n, precision=4)}\n"
                    f"analytical:{np.array2string(a, precision=4)}\n"
                )
    return True


def _random_grad_output(out, _creation, _dtype, Tensor):
    """Values uniform in [-1, 1) shaped like ``out`` that require grad (torch's make_tensor)."""
    dt = out._data.dtype if out._data.dtype.kind in "fc" else np.dtype(np.float64)
    u = _creation.rand(*out._data.shape, dtype=_dtype.float64)._data
    t = Tensor._wrap(np.asarray(u * 2 - 1, dtype=dt))
    t.requires_grad_()
    return t


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """Check second derivatives: gradcheck of the first-order vector-Jacobian product.

    Like torch, this runs ``gradcheck`` on ``(inputs, grad_outputs) -> autograd.grad(func(
    *inputs), inputs, grad_outputs, create_graph=True)``, so the recorded backward of every
    op in ``func`` is compared with central finite differences (use float64 inputs).
    ``grad_outputs`` defaults to random values in [-1, 1) that require grad.

    Example:
        >>> import ember
        >>> from ember.autograd.gradcheck import gradgradcheck
        >>> x = ember.rand(3, dtype=ember.float64, requires_grad=True)
        >>> gradgradcheck(lambda t: t.sin() * t, (x,))
        True
    """
    from .. import _creation, _dtype
    from .._tensor import Tensor
    from . import grad as autograd_grad
    from .grad_mode import enable_grad

    if not check_rev_over_rev and not check_fwd_over_rev:
        raise ValueError(
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True"
        )
    if check_fwd_over_rev:
        raise NotImplementedError("check_fwd_over_rev=True needs forward-mode AD (not in ember)")
    tupled_inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    if grad_outputs is None:
        with enable_grad():
            outputs = _differentiable_outputs(func, tupled_inputs)
        tupled_grad_outputs = tuple(
            _random_grad_output(o, _creation, _dtype, Tensor) for o in outputs
        )
    else:
        tupled_grad_outputs = (
            tuple(grad_outputs) if isinstance(grad_outputs, (tuple, list)) else (grad_outputs,)
        )
    num_outputs = len(tupled_grad_outputs)
    diff_inputs = [
        i for i, x in enumerate(tupled_inputs) if isinstance(x, Tensor) and x.requires_grad
    ]

    def new_func(*args):
        input_args = args[: len(args) - num_outputs]
        with enable_grad():
            outputs = _differentiable_outputs(func, input_args)
            grad_outs = args[len(args) - num_outputs :]
            grads = autograd_grad(
                outputs,
                tuple(input_args[i] for i in diff_inputs),
                grad_outs,
                create_graph=True,
                allow_unused=True,
            )
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        new_func,
        tupled_inputs + tupled_grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
        check_grad_dtypes=check_grad_dtypes,
        check_batched_grad=check_batched_grad,
        fast_mode=fast_mode,
        masked=masked,
    )
