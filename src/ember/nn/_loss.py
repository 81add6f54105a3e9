"""Loss functions: nll_loss, cross_entropy, mse_loss, l1_loss, binary_cross_entropy and
binary_cross_entropy_with_logits, all stable at extreme logits (log-sum-exp, softplus).

nll_loss is linear in its input (forward mode: the loss of the tangent); mse_loss's rules
run on arrays and Tensors alike; the binary cross entropies have array-only rules and are
differentiated through their ``composite`` in higher order and forward mode. cross_entropy
is composed as torch composes it, with torch's nodes (``MulBackward1`` for a product with a
number, ...).
"""

from __future__ import annotations

import warnings

import numpy as np

from .._dtype import scalar_name
from .._mode import state as _grad_mode
from .._tensor import Tensor
from ..ops._core import (
    COMPOSITE,
    ELEMENTWISE,
    LINEAR,
    QUIET,
    apply,
    binary_operands,
    broadcast_shapes,
    defop,
    is_raw,
    quiet_reset,
    quiet_set,
    record,
    require_tensor,
)
from ..ops.elementwise import abs as _abs
from ..ops.elementwise import exp, log1p, relu
from ..ops.indexing import masked_fill
from ..ops.reduction import log_softmax
from ..ops.special import logit

_wrap = Tensor._wrap
_REDUCTIONS = ("none", "mean", "sum")


def _legacy_reduction(size_average, reduce, reduction: str, stacklevel: int = 3) -> str:
    """torch's ``_Reduction.legacy_get_string`` for the deprecated arguments (the warning
    names the frame ``stacklevel`` levels up)."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
        UserWarning,
        stacklevel=stacklevel,
    )
    return ret


def _check_reduction(reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduce_array(losses: np.ndarray, reduction: str) -> np.ndarray:
    if reduction == "none":
        return losses
    if reduction == "sum":
        return np.asarray(losses.sum(), dtype=losses.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(losses.mean() if losses.size else np.nan, dtype=losses.dtype)


def _reduced_grad(g, reduction: str, n: int):
    """The gradient reaching each element of a ``reduction`` of ``n`` elements."""
    if reduction == "mean":
        return g / n if n else g * np.nan
    return g


def _reduce_tensor(losses: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    return losses.mean()


def _loss_args(fname: str, input, target, size_average, reduce, reduction: str) -> str:
    """Type-check the ``input`` and ``target`` of loss ``fname`` and return its reduction
    (resolving the deprecated ``size_average`` / ``reduce``, warning at the loss's caller)."""
    require_tensor(input, fname)
    require_tensor(target, fname, "target", 2)
    reduction = _legacy_reduction(size_average, reduce, reduction, stacklevel=4)
    _check_reduction(reduction)
    return reduction


def _no_grad_argument(t, fname: str, arg: str) -> None:
    """torch's error for a Tensor argument its derivative formula does not cover."""
    if t is not None and t._rg and _grad_mode.enabled:
        raise RuntimeError(
            f"The function '{fname}' is not differentiable with respect to argument '{arg}'. "
            "This input cannot have requires_grad True."
        )


# -- arithmetic with a number, as torch's composite losses record it --------------------------

# torch's C++ losses multiply, divide and add Python numbers through the Scalar overloads,
# whose nodes differ from the Tensor ones a Python expression records.
MulBackward1 = defop(
    "MulBackward1",
    params=("other",),
    forward=lambda a, other: a * other,
    vjp={"self": lambda g, other: g * other},
    jvp=ELEMENTWISE,
)

DivBackward1 = defop(
    "DivBackward1",
    params=("other",),
    forward=lambda a, other: a / other,
    vjp={"self": lambda g, other: g / other},
    jvp=ELEMENTWISE,
)

AddBackward1 = defop(
    "AddBackward1",
    params=("other",),
    forward=lambda a, other: a + other,
    vjp={"self": lambda g: g},
    jvp=ELEMENTWISE,
)


def _scalar_op(cls, t: Tensor, number) -> Tensor:
    a = t._data
    token = quiet_set(QUIET)
    try:
        out = cls.forward(a, number)
    finally:
        quiet_reset(token)
    return record(cls, np.asarray(out, dtype=a.dtype), (t,), (number,))


# -- nll_loss ------------------------------------------------------------------------------


def _pick(x: np.ndarray, target: np.ndarray, class_axis):
    """``x``'s entry at each target class (along ``class_axis``; None: ``x`` is one sample)."""
    if class_axis is None:
        return x[target]
    return np.take_along_axis(np.moveaxis(x, class_axis, -1), target[..., None], axis=-1)[..., 0]


def _nll_forward(x, target, weights, ignored, reduction, total_weight, class_axis):
    """The loss given validated targets (ignored ones at class 0, with weight 0)."""
    losses = -(_pick(x, target, class_axis) * weights)
    if ignored is not None:
        losses = np.where(ignored, 0, losses)
    losses = np.asarray(losses, dtype=x.dtype)
    if reduction == "none":
        return losses
    total = losses.sum(dtype=x.dtype)
    if reduction == "sum":
        return np.asarray(total)
    return np.asarray(total / total_weight, dtype=x.dtype)


def _nll_vjp(g, self, target, weight, reduction, total_weight, class_axis):
    x = self
    with np.errstate(divide="ignore", invalid="ignore"):  # all targets ignored: 0 / 0
        scale = g / total_weight if reduction == "mean" else g
        coef = np.broadcast_to(np.asarray(-weight * scale, dtype=x.dtype), target.shape)
    if class_axis is None:
        gx = np.zeros(x.shape, dtype=x.dtype)
        gx[target] = coef
        return gx
    gl = np.zeros(np.moveaxis(x, class_axis, -1).shape, dtype=x.dtype)
    np.put_along_axis(gl, target[..., None], coef[..., None], axis=-1)
    return np.moveaxis(gl, -1, class_axis)


def _nll_composite(self, target, weights, ignored, reduction, total_weight, class_axis):
    dt = self._data.dtype
    w = _wrap(weights.astype(dt, copy=False))
    if class_axis is None:
        picked = self[int(target)]
    else:
        idx = _wrap(target[..., None])
        picked = self.movedim(class_axis, -1).gather(-1, idx).squeeze(-1)
    losses = -picked * w
    if reduction == "none":
        return losses
    total = losses.sum()
    if reduction == "mean":
        return total / _wrap(np.asarray(total_weight, dtype=dt))
    return total


def _nll_node(name: str):
    return defop(
        name,
        params=("target", "weight", "ignored", "reduction", "total_weight", "class_axis"),
        forward=_nll_forward,
        vjp={"self": _nll_vjp},
        composite=_nll_composite,
        jvp=LINEAR,  # linear in the input: the loss of the tangent
    )


NllLossBackward0 = _nll_node("NllLossBackward0")
NllLoss2DBackward0 = _nll_node("NllLoss2DBackward0")


def _check_target_dtype(target: Tensor) -> None:
    if target._data.dtype not in (np.int64, np.uint8):
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {scalar_name(target._data.dtype)}"
        )


def _nll(input: Tensor, target: Tensor, weight, ignore_index, reduction: str, cls):
    """nll_loss of (C,) or (N, C) input (``NllLossBackward0``) or (N, C, H, W) input
    (``NllLoss2DBackward0``), after torch's checks."""
    x, t = input._data, target._data
    ndim = x.ndim
    c = x.shape[0] if ndim == 1 else x.shape[1]
    if cls is NllLoss2DBackward0:
        if t.ndim != 3:
            raise RuntimeError(
                "only batches of spatial targets supported (3D tensors) but got targets of "
                f"dimension: {t.ndim}"
            )
        if weight is not None and weight.numel() != c:
            raise RuntimeError("weight tensor should be defined either for all or no classes")
        if (x.shape[0], x.shape[2], x.shape[3]) != t.shape:
            raise RuntimeError(
                f"size mismatch (got input: {list(x.shape)} , target: {list(t.shape)}"
            )
        kernel = "nll_loss2d_forward_out_frame"
    else:
        if t.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if weight is not None and (weight.dim() != 1 or weight.numel() != c):
            raise RuntimeError(
                f"weight tensor should be defined either for all {c} classes or no classes but "
                f"got weight tensor of shape: {list(weight.shape)}"
            )
        kernel = "nll_loss_out_frame"
    if x.dtype.kind != "f":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_name(x.dtype)}'")
    _check_target_dtype(target)
    if weight is not None and weight._data.dtype != x.dtype:
        raise RuntimeError(
            f"expected scalar type {scalar_name(x.dtype)} but found "
            f"{scalar_name(weight._data.dtype)}"
        )
    t = t.astype(np.int64, copy=False)
    if ndim == 1:
        t = t.reshape(())
    valid = t != ignore_index
    bad = valid & ((t < 0) | (t >= c))
    if bad.any():
        raise IndexError(f"Target {int(t[bad].reshape(-1)[0])} is out of bounds.")
    all_valid = bool(valid.all())
    tc = t if all_valid else np.where(valid, t, 0)
    dt = x.dtype
    if weight is not None:
        wts = weight._data[tc]
        if not all_valid:
            wts = np.where(valid, wts, 0).astype(dt)
    else:
        wts = valid.astype(dt)
    total_weight = wts.sum(dtype=dt)
    ignored = None if all_valid else ~valid
    params = (tc, wts, ignored, reduction, total_weight, None if ndim == 1 else 1)
    token = quiet_set(QUIET)
    try:
        out = _nll_forward(x, *params)
    finally:
        quiet_reset(token)
    return record(cls, out, (input,), params)


def nll_loss(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index=-100,
    reduce=None,
    reduction="mean",
):
    """Negative log likelihood of class indices ``target`` given log-probabilities
    ``input`` (N, C, ...) or (C,); classes equal to ``ignore_index`` do not count.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> logp = ember.tensor([[-0.5, -1.0], [-2.0, -0.1]])
        >>> F.nll_loss(logp, ember.tensor([0, 1]))
        tensor(0.3000)
    """
    reduction = _loss_args("nll_loss", input, target, size_average, reduce, reduction)
    return _nll_nd(input, target, weight, ignore_index, reduction)


def _nll_nd(input, target, weight, ignore_index, reduction: str):
    """torch's ``nll_loss_nd``: 1-D and 2-D inputs directly, 4-D ones as images, others
    viewed as (N, C, 1, L) images."""
    ndim, tdim = input.dim(), target.dim()
    if ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {ndim})")
    if ndim == 1 and tdim == 1 and target.shape[0] != 1:
        raise ValueError(
            f"For 1D input, 1D target must have size 1, but got target size: {target.shape[0]}"
        )
    if ndim != 1 and (tdim == 0 or input.shape[0] != target.shape[0]):
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
            f"({target.shape[0] if tdim else 0})."
        )
    _no_grad_argument(weight, "nll_loss_forward" if ndim <= 2 else "nll_loss2d_forward", "weight")
    if ndim <= 2:
        return _nll(input, target, weight, ignore_index, reduction, NllLossBackward0)
    if ndim == 4:
        return _nll(input, target, weight, ignore_index, reduction, NllLoss2DBackward0)
    n, c = input.shape[:2]
    out_size = [n, *input.shape[2:]]
    if list(target.shape[1:]) != list(input.shape[2:]):
        raise RuntimeError(f"Expected target size {out_size}, got {list(target.shape)}")
    if input.numel() > 0:
        x4, t3 = input.contiguous().view(n, c, 1, -1), target.contiguous().view(n, 1, -1)
    else:
        x4, t3 = input.contiguous().view(n, c, 0, 0), target.contiguous().view(n, 0, 0)
    out = _nll(x4, t3, weight, ignore_index, reduction, NllLoss2DBackward0)
    return out.view(out_size) if reduction == "none" else out


# -- cross_entropy -------------------------------------------------------------------------


def cross_entropy(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index=-100,
    reduce=None,
    reduction="mean",
    label_smoothing=0.0,
):
    """Cross entropy between logits ``input`` (N, C, ...) or (C,) and ``target``: class
    indices (int64) or class probabilities (the same shape as ``input``).

    Computed as ``nll_loss(log_softmax(input, 1))`` (stable for any logits); supports
    ``weight``, ``ignore_index`` (indices only), ``label_smoothing`` and ``reduction``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> logits = ember.tensor([[1e4, -1e4], [0.0, 0.0]])
        >>> F.cross_entropy(logits, ember.tensor([0, 1]))
        tensor(0.3466)
    """
    reduction = _loss_args("cross_entropy", input, target, size_average, reduce, reduction)
    class_dim = 0 if input.dim() == 1 else 1
    if tuple(input.shape) == tuple(target.shape):
        if target._data.dtype.kind != "f":
            raise RuntimeError(
                "Expected floating point type for target with class probabilities, got "
                f"{scalar_name(target._data.dtype)}"
            )
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        _check_class_dim(input)
        n_classes = input.shape[class_dim]
        if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
            raise RuntimeError(
                f"cross_entropy: weight tensor should be defined either for all {n_classes} "
                f"classes or no classes but got weight tensor of shape: {list(weight.shape)}"
            )
        return _cross_entropy_probs(input, target, weight, reduction, label_smoothing, class_dim)
    _check_class_dim(input)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(
                f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}"
            )
        return _cross_entropy_smoothed(
            input, target, weight, reduction, ignore_index, label_smoothing, class_dim
        )
    return _nll_nd(log_softmax(input, class_dim), target, weight, ignore_index, reduction)


def _check_class_dim(input: Tensor) -> None:
    if input.dim() == 0:  # log_softmax over dim 1 of a 0-d tensor
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")


def _class_view(weight: Tensor, ndim: int, class_dim: int) -> Tensor:
    if ndim <= 1:
        return weight
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return weight.view(shape)


def _cross_entropy_probs(input, target, weight, reduction, label_smoothing, class_dim):
    logp = log_softmax(input, class_dim)
    n_classes = input.shape[class_dim]
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(
                f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}"
            )
        target = _scalar_op(MulBackward1, target, 1 - label_smoothing)
        target = _scalar_op(AddBackward1, target, label_smoothing / n_classes)
    prod = logp * target
    if weight is not None:
        prod = prod * _class_view(weight, input.dim(), class_dim)
    if reduction == "none":
        return -prod.sum(class_dim)
    if reduction == "sum":
        return -prod.sum()
    if input.numel() == 0:
        return -prod.sum().fill_(float("nan"))
    return _scalar_op(DivBackward1, -prod.sum(), input.numel() // n_classes)


def _cross_entropy_smoothed(input, target, weight, reduction, ignore_index, eps, class_dim):
    logp = log_softmax(input, class_dim)
    n_classes = input.shape[class_dim]
    nll = _nll_nd(logp, target, weight, ignore_index, reduction)
    ignore_mask = _wrap(target._data == ignore_index)
    if weight is not None:
        smooth = -(logp * _class_view(weight, input.dim(), class_dim)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth = masked_fill(smooth, ignore_mask, 0.0)
    if reduction == "mean":
        valid = ~ignore_mask._data
        if weight is not None:
            denom = weight._data[target._data[valid].astype(np.int64)].sum()
        else:
            denom = valid.sum()
        ret = smooth.sum() / _wrap(np.asarray(denom, dtype=logp._data.dtype))
    elif reduction == "sum":
        ret = smooth.sum()
    else:
        ret = smooth
    return _scalar_op(MulBackward1, nll, 1 - eps) + _scalar_op(MulBackward1, ret, eps / n_classes)


# -- mse / l1 ----------------------------------------------------------------------------


def _broadcast_warning(input: Tensor, target: Tensor) -> None:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,
        )


def _float_pair(input: Tensor, target: Tensor, kernel: str):
    a, b = binary_operands(input, target)
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind not in "fc":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_name(a.dtype)}'")
    return a, b


def _weighted(errors: Tensor, weight: Tensor, input: Tensor, reduction: str) -> Tensor:
    """torch's weighted mse/l1: the mean divides by ``weight.sum()``."""
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    weighted = errors * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return weighted.sum()
    return weighted.sum() / weight.sum()


def _mse_forward(a, b, reduction, n):
    d = a - b
    return _reduce_array(d * d, reduction)


def _mse_vjp(g, self, target, reduction, n, needs_input_grad):
    """Both gradients, ``+-2 (input - target)`` times the reduction's: on arrays and, in a
    recorded backward, on Tensors (the same lines)."""
    gx = (self - target) * (2 * _reduced_grad(g, reduction, n))
    return (gx if needs_input_grad[0] else None), (-gx if needs_input_grad[1] else None)


def _mse_jvp(t_self, t_target, self, target, reduction, n):
    t = t_self if t_target is None else (-t_target if t_self is None else t_self - t_target)
    return _reduce_tensor((self - target) * t * 2, reduction)


MseLossBackward0 = defop(
    "MseLossBackward0",
    inputs=("self", "target"),
    params=("reduction", "n"),
    forward=_mse_forward,
    vjp=_mse_vjp,
    jvp=_mse_jvp,
)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error ``(input - target) ** 2`` reduced by ``reduction``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.mse_loss(ember.tensor([1.0, 2.0]), ember.tensor([0.0, 0.0]))
        tensor(2.5000)
    """
    reduction = _loss_args("mse_loss", input, target, size_average, reduce, reduction)
    _broadcast_warning(input, target)
    if weight is not None:
        return _weighted((input - target) ** 2, weight, input, reduction)
    a, b = _float_pair(input, target, "mse_cpu")
    shape = broadcast_shapes(a.shape, b.shape)
    n = int(np.prod(shape))
    token = quiet_set(QUIET)
    try:
        out = _mse_forward(a, b, reduction, n)
    finally:
        quiet_reset(token)
    return record(MseLossBackward0, out, (input, target), (reduction, n))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error ``|input - target|`` reduced by ``reduction``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.l1_loss(ember.tensor([1.0, -2.0]), ember.tensor([0.0, 0.0]))
        tensor(1.5000)
    """
    reduction = _loss_args("l1_loss", input, target, size_average, reduce, reduction)
    _broadcast_warning(input, target)
    broadcast_shapes(tuple(input.shape), tuple(target.shape))
    loss = (input - target).abs()
    if weight is not None:
        return _weighted(loss, weight, input, reduction)
    return _reduce_tensor(loss, reduction)


# -- binary cross entropy --------------------------------------------------------------------


def _clamped_log(a: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.maximum(np.log(a), -100)


def _bce_forward(x, y, reduction, weight, n):
    losses = -(y * _clamped_log(x) + (1 - y) * _clamped_log(1 - x))
    if weight is not None:
        losses = losses * weight
    return _reduce_array(np.asarray(losses, dtype=x.dtype), reduction)


_BCE_EPS = 1e-12  # torch's epsilon in the second derivatives of binary_cross_entropy
# ... and in its first-order kernel, where torch holds it as a float (9.99999996e-13).
_BCE_KERNEL_EPS = float(np.float32(1e-12))


def _times_weight(v, weight):
    """``v * weight`` (``weight`` an array parameter or None), on arrays or Tensors."""
    if weight is None:
        return v
    return v * (weight if is_raw(v) else _wrap(weight))


def _clamp_min(v, low: float):
    return np.maximum(v, low) if is_raw(v) else v.clamp(min=low)


def _bce_grad_input(grad_output, x, y, reduction, weight, n):
    """torch's ``binary_cross_entropy_backward``: the input's gradient, with ``(1 - x) x``
    clamped at (float32) 1e-12."""
    scale = _reduced_grad(grad_output, reduction, n)
    gx = _times_weight(scale * (x - y) / np.maximum((1 - x) * x, _BCE_KERNEL_EPS), weight)
    return np.asarray(gx, dtype=x.dtype)


def _bce_double_vjp(g, grad_output, self, target, reduction, weight, n, needs_input_grad):
    """The derivatives of ``_bce_grad_input`` as torch writes them (its epsilon placement,
    so second derivatives agree near 0 and 1); arrays or Tensors alike."""
    x, y, go = self, target, grad_output
    g_go = g_x = g_y = None
    if needs_input_grad[0]:
        g_go = _times_weight((x - y) / ((x + _BCE_EPS) * (1 - x + _BCE_EPS)) * g, weight)
        if reduction != "none":
            g_go = g_go.sum() / n if reduction == "mean" else g_go.sum()
    if needs_input_grad[1]:
        curvature = (x * x - 2 * x * y + y) / ((x + _BCE_EPS) ** 2 * (1 - x + _BCE_EPS) ** 2)
        g_x = _times_weight(curvature * (g * go), weight)
        if reduction == "mean":
            g_x = g_x / n
    if needs_input_grad[2]:
        g_y = _times_weight(-g * go, weight) / _clamp_min((1 - x) * x, _BCE_EPS)
        if reduction == "mean":
            g_y = g_y / n
    return g_go, g_x, g_y


def _bce_double_jvp(
    t_grad_output, t_self, t_target, grad_output, self, target, reduction, weight, n
):
    """Each input's (diagonal or broadcast) derivative applied to its tangent: the terms of
    ``_bce_double_vjp`` with the tangents in place of the gradient, nothing summed."""
    x, y, go = self, target, grad_output
    terms = []
    if t_grad_output is not None:
        terms.append((x - y) / ((x + _BCE_EPS) * (1 - x + _BCE_EPS)) * t_grad_output)
    if t_self is not None:
        curvature = (x * x - 2 * x * y + y) / ((x + _BCE_EPS) ** 2 * (1 - x + _BCE_EPS) ** 2)
        terms.append(curvature * (t_self * go))
    if t_target is not None:
        terms.append(-t_target * go / _clamp_min((1 - x) * x, _BCE_EPS))
    tangent = _times_weight(sum(terms[1:], terms[0]), weight)
    return tangent / n if reduction == "mean" else tangent


BinaryCrossEntropyBackwardBackward0 = defop(
    "BinaryCrossEntropyBackwardBackward0",
    inputs=("grad_output", "self", "target"),
    params=("reduction", "weight", "n"),
    forward=_bce_grad_input,
    vjp=_bce_double_vjp,
    jvp=_bce_double_jvp,
)


def _bce_vjp(g, self, target, reduction, weight, n, needs_input_grad):
    x, y = self, target
    gx = gy = None
    if is_raw(g):
        if needs_input_grad[0]:
            gx = _bce_grad_input(g, x, y, reduction, weight, n)
        if needs_input_grad[1]:
            # torch's target gradient uses unclamped logs (infinite at 0 and 1).
            with np.errstate(divide="ignore", invalid="ignore"):
                gy = _times_weight(
                    _reduced_grad(g, reduction, n) * (np.log1p(-x) - np.log(x)), weight
                )
            gy = np.asarray(gy, dtype=x.dtype)
        return gx, gy
    # A recorded backward: torch's nodes, so every higher order follows its formulas.
    if needs_input_grad[0]:
        gx = apply(
            BinaryCrossEntropyBackwardBackward0,
            (g, x, y),
            (g._data, x._data, y._data),
            (reduction, weight, n),
        )
    if needs_input_grad[1]:
        gy = _times_weight(-logit(x) * g, weight)
        if reduction == "mean":
            gy = gy / n
    return gx, gy


def _bce_jvp(t_self, t_target, self, target, reduction, weight, n):
    """torch's forward rule: the tangents through the two gradients' formulas (clamped)."""
    tangent = None
    if t_self is not None:
        tangent = t_self * (self - target) / ((1 - self) * self).clamp(min=_BCE_KERNEL_EPS)
    if t_target is not None:
        part = -logit(self) * t_target
        tangent = part if tangent is None else tangent + part
    return _reduce_tensor(_times_weight(tangent, weight), reduction)


BinaryCrossEntropyBackward0 = defop(
    "BinaryCrossEntropyBackward0",
    inputs=("self", "target"),
    params=("reduction", "weight", "n"),
    forward=_bce_forward,
    vjp=_bce_vjp,
    jvp=_bce_jvp,
)


def binary_cross_entropy(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean"
):
    """Binary cross entropy between probabilities ``input`` and ``target`` (same shape);
    each log is clamped at -100 as torch does, so 0 and 1 give finite losses.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.binary_cross_entropy(ember.tensor([0.5, 1.0]), ember.tensor([1.0, 1.0]))
        tensor(0.3466)
    """
    reduction = _loss_args("binary_cross_entropy", input, target, size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}) is deprecated. Please ensure they have the same size."
        )
    if weight is not None:
        weight = _expand_weight(weight, input.shape)
    _no_grad_argument(weight, "binary_cross_entropy", "weight")
    x, y = input._data, target._data
    if x.dtype.kind != "f":
        raise NotImplementedError(
            f"\"binary_cross_entropy\" not implemented for '{scalar_name(x.dtype)}'"
        )
    if y.dtype != x.dtype:
        raise RuntimeError(
            f"Found dtype {scalar_name(y.dtype)} but expected {scalar_name(x.dtype)}"
        )
    if x.size and ((x < 0).any() or (x > 1).any() or np.isnan(x).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    w = None if weight is None else weight._data.astype(x.dtype, copy=False)
    params = (reduction, w, x.size)
    token = quiet_set(QUIET)
    try:
        out = _bce_forward(x, y, *params)
    finally:
        quiet_reset(token)
    return record(BinaryCrossEntropyBackward0, out, (input, target), params)


def _expand_weight(weight: Tensor, shape: tuple) -> Tensor:
    ws = tuple(weight.shape)
    for i in range(1, min(len(ws), len(shape)) + 1):
        if ws[-i] != 1 and ws[-i] != shape[-i]:
            raise RuntimeError(
                f"Attempting to broadcast a dimension of length {ws[-i]} at {-i}! Mismatching "
                f"argument at index 1 had torch.Size({list(ws)}); but expected shape should be "
                f"broadcastable to {list(shape)}"
            )
    return weight.expand(shape)


def _softplus_neg(x: np.ndarray) -> np.ndarray:
    """``-log(sigmoid(x)) = log(1 + exp(-x))`` without overflow."""
    return np.maximum(-x, 0) + np.log1p(np.exp(-np.abs(x)))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _bce_logits_forward(x, y, reduction, weight, pos_weight, n):
    sp = _softplus_neg(x)
    if pos_weight is None:
        losses = (1 - y) * x + sp
    else:
        losses = (1 - y) * x + (1 + (pos_weight - 1) * y) * sp
    if weight is not None:
        losses = losses * weight
    return _reduce_array(np.asarray(losses, dtype=y.dtype), reduction)


def _bce_logits_vjp(g, self, target, reduction, weight, pos_weight, n, needs_input_grad):
    x, y = self, target
    scale = _reduced_grad(g, reduction, n)
    w = 1 if weight is None else weight
    pw = pos_weight
    gx = gy = None
    if needs_input_grad[0]:
        if pw is None:
            d = _sigmoid(x) - y
        else:
            d = (1 - y) - (1 + (pw - 1) * y) * _sigmoid(-x)
        gx = scale * w * d
    if needs_input_grad[1]:
        d = -x if pw is None else -x + (pw - 1) * _softplus_neg(x)
        gy = scale * w * d
    return gx, gy


def _bce_logits_composite(self, target, reduction, weight, pos_weight, n):
    x, y = self, target
    sp = relu(-x) + log1p(exp(-_abs(x)))
    if pos_weight is None:
        losses = (1 - y) * x + sp
    else:
        losses = (1 - y) * x + (1 + (_wrap(pos_weight) - 1) * y) * sp
    if weight is not None:
        losses = losses * _wrap(weight)
    return _reduce_tensor(losses, reduction)


BinaryCrossEntropyWithLogitsBackward0 = defop(
    "BinaryCrossEntropyWithLogitsBackward0",
    inputs=("self", "target"),
    params=("reduction", "weight", "pos_weight", "n"),
    forward=_bce_logits_forward,
    vjp=_bce_logits_vjp,
    composite=_bce_logits_composite,
    jvp=COMPOSITE,
)


def binary_cross_entropy_with_logits(
    input,
    target,
    weight=None,
    size_average=None,
    reduce=None,
    reduction="mean",
    pos_weight=None,
):
    """``binary_cross_entropy(sigmoid(input), target)`` computed stably from logits:
    ``(1 - t) * x + (1 + (pos_weight - 1) * t) * softplus(-x)``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.binary_cross_entropy_with_logits(ember.tensor([1e4, -1e4]), ember.tensor([1.0, 0.0]))
        tensor(0.)
    """
    reduction = _loss_args(
        "binary_cross_entropy_with_logits", input, target, size_average, reduce, reduction
    )
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Target size ({target.shape}) must be the same as input size ({input.shape})"
        )
    _no_grad_argument(weight, "binary_cross_entropy_with_logits", "weight")
    _no_grad_argument(pos_weight, "binary_cross_entropy_with_logits", "pos_weight")
    if input._data.dtype.kind not in "fc":
        raise NotImplementedError(
            f"\"log_sigmoid_cpu\" not implemented for '{scalar_name(input._data.dtype)}'"
        )
    x, y = _float_pair(input, target, "binary_cross_entropy_with_logits")
    dt = x.dtype
    w = None if weight is None else np.broadcast_to(weight._data.astype(dt), x.shape)
    pw = None if pos_weight is None else pos_weight._data.astype(dt)
    params = (reduction, w, pw, x.size)
    token = quiet_set(QUIET)
    try:
        # torch computes in place from (1 - target): the loss has the target's dtype.
        out = _bce_logits_forward(x, y, *params)
        if target._data.dtype.kind == "f":
            out = out.astype(target._data.dtype, copy=False)
    finally:
        quiet_reset(token)
    return record(BinaryCrossEntropyWithLogitsBackward0, out, (input, target), params)
