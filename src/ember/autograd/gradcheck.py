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
                plus = [o._data.astype(np.float64) for o in _as_tuple(func(*inputs))
                        if isinstance(o, Tensor)]
                flat[k] = orig - eps
                minus = [o._data.astype(np.float64) for o in _as_tuple(func(*inputs))
                         if isinstance(o, Tensor)]
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
