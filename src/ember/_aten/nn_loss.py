"""Loss functions: nll_loss, cross_entropy, mse_loss, l1_loss, binary_cross_entropy and
binary_cross_entropy_with_logits, all stable at extreme logits (log-sum-exp, softplus); the
margin, KL, smooth-L1 / Huber, Poisson and Gaussian losses.

smooth_l1 / huber, soft_margin, multi_margin and multilabel_margin are torch's kernels (their
nodes, closed-form rules on arrays, a ``composite`` for higher orders and forward mode); the
others are composed of ember ops as torch composes them.

nll_loss is linear in its input (forward mode: the loss of the tangent); mse_loss's rules
run on arrays and Tensors alike; the binary cross entropies have array-only rules and are
differentiated through their ``composite`` in higher order and forward mode. cross_entropy
is composed as torch composes it, with torch's nodes (``MulBackward1`` for a product with a
number, ...).
"""

from __future__ import annotations

import math

import numpy as np

from .._dtype import scalar_name
from .._mode import autocast_active as _AUTOCAST
from .._mode import autocast_full
from .._mode import state as _grad_mode
from .._overrides import warn as _warn
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..autograd.recording import check_values
from ._core import (
    COMPOSITE,
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
    record_result,
    require_tensor,
)
from .elementwise import (
    AddBackward1,
    DivBackward1,
    MulBackward1,
    _scalar_op,
    exp,
    log1p,
    minimum,
    relu,
    where,
)
from .elementwise import abs as _abs
from .indexing import masked_fill
from .nn_activation import logsigmoid
from .nn_layers import pairwise_distance
from .reduction import log_softmax
from .special import logit

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
    _warn(
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


# -- nll_loss ------------------------------------------------------------------------------


def _pick(x: np.ndarray, target: np.ndarray, class_axis):
    """``x``'s entry at each target class (along ``class_axis``; None: ``x`` is one sample)."""
    if class_axis is None:
        return x[target]
    return np.take_along_axis(np.moveaxis(x, class_axis, -1), target[..., None], axis=-1)[..., 0]


def _nll_targets(x, target, weight, ignore_index):
    """Validated targets as used by the kernel: ignored ones moved to class 0, and each
    target's weight (0 where ignored), with the weights' total."""
    t = target.astype(np.int64, copy=False)
    if x.ndim == 1:
        t = t.reshape(())
    valid = t != ignore_index
    all_valid = bool(valid.all())
    tc = t if all_valid else np.where(valid, t, 0)
    dt = x.dtype
    if weight is not None:
        wts = weight[tc]
        if not all_valid:
            wts = np.where(valid, wts, 0).astype(dt)
    else:
        wts = valid.astype(dt)
    return tc, wts, wts.sum(dtype=dt)


def _nll_forward(x, target, weight, ignore_index, reduction, class_axis):
    """The loss, then what the rules read: the targets in use, their weights and total.
    ``target`` and ``weight``: Tensors (eager) or their arrays (compiled code)."""
    target = getattr(target, "_data", target)
    weight = getattr(weight, "_data", weight)
    tc, wts, total_weight = _nll_targets(x, target, weight, ignore_index)
    losses = np.asarray(-(_pick(x, tc, class_axis) * wts), dtype=x.dtype)
    if reduction == "none":
        out = losses
    elif reduction == "sum":
        out = np.asarray(losses.sum(dtype=x.dtype))
    else:
        out = np.asarray(losses.sum(dtype=x.dtype) / total_weight, dtype=x.dtype)
    return out, tc, wts, total_weight


def _nll_vjp(g, self, tc, wts, total_weight, reduction, class_axis):
    x = self
    with np.errstate(divide="ignore", invalid="ignore"):  # all targets ignored: 0 / 0
        scale = g / total_weight if reduction == "mean" else g
        coef = np.broadcast_to(np.asarray(-wts * scale, dtype=x.dtype), tc.shape)
    if class_axis is None:
        gx = np.zeros(x.shape, dtype=x.dtype)
        gx[tc] = coef
        return gx
    gl = np.zeros(np.moveaxis(x, class_axis, -1).shape, dtype=x.dtype)
    np.put_along_axis(gl, tc[..., None], coef[..., None], axis=-1)
    return np.moveaxis(gl, -1, class_axis)


def _nll_composite(self, target, weight, ignore_index, reduction, class_axis):
    dt = self._data.dtype
    w_arr = getattr(weight, "_data", weight)
    tc, wts, total_weight = _nll_targets(
        self._data, getattr(target, "_data", target), w_arr, ignore_index
    )
    w = _wrap(wts.astype(dt, copy=False))
    if class_axis is None:
        picked = self[int(tc)]
    else:
        idx = _wrap(tc[..., None])
        picked = self.movedim(class_axis, -1).gather(-1, idx).squeeze(-1)
    losses = -picked * w
    if reduction == "none":
        return losses
    total = losses.sum()
    if reduction == "mean":
        return total / _wrap(np.asarray(total_weight, dtype=dt))
    return total


def _nll_node(name: str):
    # target and weight are parameters (Tensors, as torch saves them; the compiler reads
    # their arrays at each call), so the node's only edge is the input's, as in torch.
    return defop(
        name,
        params=("target", "weight", "ignore_index", "reduction", "class_axis"),
        saves=("tc", "wts", "total_weight"),
        forward=_nll_forward,
        vjp={"self": _nll_vjp},
        composite=_nll_composite,
        jvp=LINEAR,  # linear in the input: the loss of the tangent, for the same targets
    )


NllLossBackward0 = _nll_node("NllLossBackward0")
NllLoss2DBackward0 = _nll_node("NllLoss2DBackward0")


def _check_target_dtype(target: Tensor) -> None:
    if target._data.dtype not in (np.int64, np.uint8):
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {scalar_name(target._data.dtype)}"
        )


def _targets_within(t: np.ndarray, ignore_index: int, c: int) -> None:
    bad = (t != ignore_index) & ((t < 0) | (t >= c))
    if bad.any():
        raise IndexError(f"Target {int(t[bad].reshape(-1)[0])} is out of bounds.")


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
    if x.dtype.kind not in "fV":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_name(x.dtype)}'")
    _check_target_dtype(target)
    if weight is not None and weight._data.dtype != x.dtype:
        raise RuntimeError(
            f"expected scalar type {scalar_name(x.dtype)} but found "
            f"{scalar_name(weight._data.dtype)}"
        )
    t = t.astype(np.int64, copy=False)
    check_values(_targets_within, t, ignore_index, c)
    params = (target, weight, ignore_index, reduction, None if ndim == 1 else 1)
    token = quiet_set(QUIET)
    try:
        res = _nll_forward(x, *params)
    finally:
        quiet_reset(token)
    return record_result(cls, res, (input,), params)


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
    if _AUTOCAST[0]:  # CPU autocast: torch's fp32 list
        input, target = autocast_full(input, target)
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
    if _AUTOCAST[0]:  # CPU autocast: torch's fp32 list
        input, target = autocast_full(input, target)
    reduction = _loss_args("cross_entropy", input, target, size_average, reduce, reduction)
    class_dim = 0 if input.dim() == 1 else 1
    if tuple(input.shape) == tuple(target.shape):
        if target._data.dtype.kind not in "fV":
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
    # (tensor ops throughout, so that ember.compile captures the mask from the target)
    ignore_mask = target == ignore_index
    if weight is not None:
        smooth = -(logp * _class_view(weight, input.dim(), class_dim)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth = masked_fill(smooth, ignore_mask, 0.0)
    if reduction == "mean":
        if weight is not None:  # the weights of the targets not ignored
            denom = masked_fill(weight[masked_fill(target, ignore_mask, 0)], ignore_mask, 0.0)
        else:
            denom = ignore_mask.logical_not()
        ret = smooth.sum() / denom.sum().to(logp.dtype)
    elif reduction == "sum":
        ret = smooth.sum()
    else:
        ret = smooth
    return _scalar_op(MulBackward1, nll, 1 - eps) + _scalar_op(MulBackward1, ret, eps / n_classes)


# -- mse / l1 ----------------------------------------------------------------------------


def _broadcast_warning(input: Tensor, target: Tensor) -> None:
    if tuple(target.shape) != tuple(input.shape):
        _warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,
        )


def _float_pair(input: Tensor, target: Tensor, kernel: str):
    a, b = binary_operands(input, target)
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind not in "fcV":
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
    if _AUTOCAST[0]:  # CPU autocast: torch's fp32 list
        input, target = autocast_full(input, target)
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
    if _AUTOCAST[0]:  # CPU autocast: torch's fp32 list
        input, target = autocast_full(input, target)
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


def _probabilities_within(x: np.ndarray) -> None:
    if x.size and ((x < 0).any() or (x > 1).any() or np.isnan(x).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")


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
    if _AUTOCAST[0]:  # CPU autocast: torch's fp32 list
        input, target = autocast_full(input, target)
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
    if x.dtype.kind not in "fV":
        raise NotImplementedError(
            f"\"binary_cross_entropy\" not implemented for '{scalar_name(x.dtype)}'"
        )
    if y.dtype != x.dtype:
        raise RuntimeError(
            f"Found dtype {scalar_name(y.dtype)} but expected {scalar_name(x.dtype)}"
        )
    check_values(_probabilities_within, x)
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
    if _AUTOCAST[0]:  # CPU autocast: torch's fp32 list
        input, target = autocast_full(input, target)
    reduction = _loss_args(
        "binary_cross_entropy_with_logits", input, target, size_average, reduce, reduction
    )
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Target size ({target.shape}) must be the same as input size ({input.shape})"
        )
    _no_grad_argument(weight, "binary_cross_entropy_with_logits", "weight")
    _no_grad_argument(pos_weight, "binary_cross_entropy_with_logits", "pos_weight")
    if input._data.dtype.kind not in "fcV":
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
        if target._data.dtype.kind in "fV":
            out = out.astype(target._data.dtype, copy=False)
    finally:
        quiet_reset(token)
    return record(BinaryCrossEntropyWithLogitsBackward0, out, (input, target), params)


# -- kl_div ---------------------------------------------------------------------------------


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Kullback-Leibler divergence ``target * (log(target) - input)`` of log-probabilities
    ``input`` (``log_target``: ``target`` holds log-probabilities too). ``'batchmean'``
    divides the sum by the batch size; ``'mean'`` (all elements) warns as torch does.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.kl_div(ember.tensor([[-1.0, -0.5]]), ember.tensor([[0.5, 0.5]]), reduction="sum")
        tensor(0.0569)
    """
    if _AUTOCAST[0]:  # CPU autocast: torch's fp32 list
        input, target = autocast_full(input, target)
    require_tensor(input, "kl_div")
    require_tensor(target, "kl_div", "target", 2)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction, stacklevel=3)
    else:
        if reduction == "mean":
            _warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support "
                "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
                "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
                "major release.",
                UserWarning,
                stacklevel=2,
            )
        if reduction != "batchmean":
            _check_reduction(reduction)
    if input._data.dtype.kind == "c" or target._data.dtype.kind == "c":
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if log_target:
        output = target.exp() * (target - input)
    else:
        output = target.xlogy(target) - target * input
    reduced = _reduce_tensor(output, "sum" if reduction == "batchmean" else reduction)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.shape[0]
    return reduced


# -- smooth_l1 / huber --------------------------------------------------------------------------


def _smooth_forward(a, b, reduction, beta, n, huber):
    z = np.abs(a - b)
    with np.errstate(divide="ignore", invalid="ignore"):
        if huber:
            losses = np.where(z < beta, 0.5 * z * z, beta * (z - 0.5 * beta))
        else:
            losses = np.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta)
    return _reduce_array(np.asarray(losses, dtype=np.result_type(a, b)), reduction)


def _smooth_vjp(g, self, target, reduction, beta, n, huber, needs_input_grad):
    d = self - target
    with np.errstate(divide="ignore", invalid="ignore"):
        inner = d if huber else d / beta
    edge = beta if huber else 1.0
    gd = np.where(d < -beta, -edge, np.where(d > beta, edge, inner))
    gd = np.asarray(_reduced_grad(g, reduction, n) * gd, dtype=d.dtype)
    return (gd if needs_input_grad[0] else None), (-gd if needs_input_grad[1] else None)


def _smooth_composite(self, target, reduction, beta, n, huber):
    z = (self - target).abs()
    if huber:
        losses = where(z < beta, z * z * 0.5, (z - 0.5 * beta) * beta)
    else:
        losses = where(z < beta, z * z * (0.5 / beta), z - 0.5 * beta)
    return _reduce_tensor(losses, reduction)


def _smooth_node(name: str):
    return defop(
        name,
        inputs=("self", "target"),
        params=("reduction", "beta", "n", "huber"),
        forward=_smooth_forward,
        vjp=_smooth_vjp,
        composite=_smooth_composite,
        jvp=COMPOSITE,
    )


SmoothL1LossBackward0 = _smooth_node("SmoothL1LossBackward0")
HuberLossBackward0 = _smooth_node("HuberLossBackward0")


def _smooth(cls, input, target, reduction, beta, huber, kernel):
    y = target
    shape = _bshape(input, target)
    if tuple(input.shape) != shape:
        x = input.expand(shape)
    else:
        x = input
    if tuple(target.shape) != shape:
        y = target.expand(shape)
    a, b = _float_pair(x, y, kernel)
    params = (reduction, beta, a.size if a.ndim else 1, huber)
    token = quiet_set(QUIET)
    try:
        out = _smooth_forward(a, b, *params)
    finally:
        quiet_reset(token)
    return record(cls, out, (x, y), params)


def _bshape(input, target) -> tuple:
    return broadcast_shapes(tuple(input.shape), tuple(target.shape))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """``0.5 d^2 / beta`` where ``|d| < beta``, ``|d| - 0.5 beta`` elsewhere (d = input -
    target); ``beta=0`` is the L1 loss.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.smooth_l1_loss(ember.tensor([0.5, 3.0]), ember.zeros(2))
        tensor(1.3125)
    """
    if _AUTOCAST[0]:  # CPU autocast: torch's fp32 list
        input, target = autocast_full(input, target)
    require_tensor(input, "smooth_l1_loss")
    require_tensor(target, "smooth_l1_loss", "target", 2)
    _broadcast_warning(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction, stacklevel=3)
    _check_reduction(reduction)
    if beta == 0.0:
        shape = _bshape(input, target)
        return l1_loss(input.expand(shape), target.expand(shape), reduction=reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return _smooth(SmoothL1LossBackward0, input, target, reduction, beta, False, "smooth_l1")


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """``0.5 d^2`` where ``|d| < delta``, ``delta (|d| - 0.5 delta)`` elsewhere (d = input -
    target), optionally weighted elementwise.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.huber_loss(ember.tensor([0.5, 3.0]), ember.zeros(2), delta=2.0)
        tensor(2.0625)
    """
    if _AUTOCAST[0]:  # CPU autocast: torch's fp32 list
        input, target = autocast_full(input, target)
    require_tensor(input, "huber_loss")
    require_tensor(target, "huber_loss", "target", 2)
    _broadcast_warning(input, target)
    _check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is None:
        return _smooth(HuberLossBackward0, input, target, reduction, delta, True, "huber")
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    losses = _smooth(HuberLossBackward0, input, target, "none", delta, True, "huber")
    return _reduce_tensor(losses * weight, reduction)


# -- soft margin ---------------------------------------------------------------------------


def _soft_margin_forward(x, target, reduction, n):
    losses = np.log1p(np.exp(-target * x))
    return _reduce_array(np.asarray(losses, dtype=x.dtype), reduction)


def _soft_margin_vjp(g, self, target, reduction, n):
    z = np.exp(-target * self)
    return np.asarray(-target * z / (1 + z) * _reduced_grad(g, reduction, n), dtype=self.dtype)


def _soft_margin_composite(self, target, reduction, n):
    return _reduce_tensor((self * _wrap(-target)).exp().log1p(), reduction)


SoftMarginLossBackward0 = defop(
    "SoftMarginLossBackward0",
    params=("target", "reduction", "n"),
    forward=_soft_margin_forward,
    vjp={"self": _soft_margin_vjp},
    composite=_soft_margin_composite,
    jvp=COMPOSITE,
)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Two-class logistic loss ``log(1 + exp(-target * input))`` (targets +-1).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.soft_margin_loss(ember.tensor([0.0]), ember.tensor([1.0]))
        tensor(0.6931)
    """
    reduction = _loss_args("soft_margin_loss", input, target, size_average, reduce, reduction)
    _no_grad_argument(target, "soft_margin_loss", "target")
    shape = _bshape(input, target)
    x = input if tuple(input.shape) == shape else input.expand(shape)
    a, b = _float_pair(x, target, "soft_margin_loss")
    b = np.broadcast_to(b, a.shape)
    params = (b, reduction, a.size)
    token = quiet_set(QUIET)
    try:
        out = _soft_margin_forward(a, *params)
    finally:
        quiet_reset(token)
    return record(SoftMarginLossBackward0, out, (x,), params)


# -- margin ranking / hinge embedding / cosine embedding -----------------------------------------


def margin_ranking_loss(
    input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"
):
    """``max(0, -target * (input1 - input2) + margin)`` (targets +-1).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.margin_ranking_loss(ember.tensor([1.0]), ember.tensor([2.0]), ember.tensor([1.0]))
        tensor(1.)
    """
    require_tensor(input1, "margin_ranking_loss", "input1")
    require_tensor(input2, "margin_ranking_loss", "input2", 2)
    require_tensor(target, "margin_ranking_loss", "target", 3)
    reduction = _legacy_reduction(size_average, reduce, reduction, stacklevel=3)
    _check_reduction(reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} "
        )
    output = _scalar_op(AddBackward1, -target * (input1 - input2), margin).clamp_min(0)
    return _reduce_tensor(output, reduction)


def hinge_embedding_loss(
    input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"
):
    """``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.hinge_embedding_loss(ember.tensor([0.3, 2.0]), ember.tensor([-1.0, 1.0]))
        tensor(1.3500)
    """
    reduction = _loss_args("hinge_embedding_loss", input, target, size_average, reduce, reduction)
    zeros = input.new_zeros(())
    margin_clamp = (margin - input).clamp_min(0)
    output_margin = where(target != 1, margin_clamp, zeros)
    output_self = where(target != -1, input, zeros)
    return _reduce_tensor(output_margin + output_self, reduction)


_COS_EPS = 1e-12


def cosine_embedding_loss(
    input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"
):
    """``1 - cos(input1, input2)`` where ``target == 1``, ``max(0, cos - margin)`` where
    ``target == -1`` (rows of 2-D inputs, or two vectors with a 0-d target).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> a, b = ember.tensor([[1.0, 0.0]]), ember.tensor([[1.0, 1.0]])
        >>> F.cosine_embedding_loss(a, b, ember.tensor([1.0]))
        tensor(0.2929)
    """
    require_tensor(input1, "cosine_embedding_loss", "input1")
    require_tensor(input2, "cosine_embedding_loss", "input2", 2)
    require_tensor(target, "cosine_embedding_loss", "target", 3)
    reduction = _legacy_reduction(size_average, reduce, reduction, stacklevel=3)
    _check_reduction(reduction)
    tdim = target.dim()
    if tdim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if tdim == 1 and (input1.dim() != 2 or input2.dim() != 2):
        raise RuntimeError(
            "1D target tensor expects 2D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    if tdim == 0 and (input1.dim() != 1 or input2.dim() != 1):
        raise RuntimeError(
            "0D target tensor expects 1D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    prod_sum = (input1 * input2).sum(tdim)
    mag1 = (input1 * input1).sum(tdim) + _COS_EPS
    mag2 = (input2 * input2).sum(tdim) + _COS_EPS
    cos = prod_sum / (mag1 * mag2).sqrt()
    zeros = cos.new_zeros(())
    pos = 1 - cos
    neg = (cos - margin).clamp_min(0)
    output = where(target == 1, pos, zeros) + where(target == -1, neg, zeros)
    return _reduce_tensor(output, reduction)


# -- multi-margin / multilabel margin ----------------------------------------------------------


def _margin_rows(x):
    return x.reshape(1, -1) if x.ndim <= 1 else x


def _multi_margin_forward(x, target, p, margin, weight, reduction, out_shape):
    xs = _margin_rows(x)
    n, c = xs.shape
    rows = np.arange(n)
    z = margin - xs[rows, target][:, None] + xs
    z[rows, target] = 0
    h = np.maximum(z, 0)
    if p == 2:
        h = h * h
    if weight is not None:
        h = h * weight[target][:, None]
    losses = np.asarray(h.sum(axis=1) / c, dtype=x.dtype).reshape(out_shape)
    return _reduce_array(losses, reduction)


def _multi_margin_vjp(g, self, target, p, margin, weight, reduction, out_shape):
    xs = _margin_rows(self)
    n, c = xs.shape
    rows = np.arange(n)
    z = margin - xs[rows, target][:, None] + xs
    z[rows, target] = 0
    dz = (z > 0).astype(xs.dtype) if p == 1 else 2 * np.maximum(z, 0)
    if weight is not None:
        dz = dz * weight[target][:, None]
    if reduction == "none":
        scale = np.asarray(g, dtype=xs.dtype).reshape(n, 1)
    else:
        scale = _reduced_grad(g, reduction, n)
    dz = dz * scale / c
    gx = dz.copy()
    gx[rows, target] -= dz.sum(axis=1)
    return np.asarray(gx.reshape(self.shape), dtype=self.dtype)


def _multi_margin_composite(self, target, p, margin, weight, reduction, out_shape):
    xs = self.reshape(1, -1) if self.dim() <= 1 else self
    n, c = xs.shape
    dt = self._data.dtype
    picked = xs.gather(1, _wrap(target.reshape(n, 1)))
    mask = np.ones((n, c), dtype=dt)
    mask[np.arange(n), target] = 0
    if weight is not None:
        mask = mask * weight[target][:, None].astype(dt)
    h = (xs - picked + margin).clamp_min(0)
    if p == 2:
        h = h * h
    losses = ((h * _wrap(mask)).sum(1) / c).reshape(out_shape)
    return _reduce_tensor(losses, reduction)


MultiMarginLossBackward0 = defop(
    "MultiMarginLossBackward0",
    params=("target", "p", "margin", "weight", "reduction", "out_shape"),
    forward=_multi_margin_forward,
    vjp={"self": _multi_margin_vjp},
    composite=_multi_margin_composite,
    jvp=COMPOSITE,
)


def _margin_input_check(x) -> None:
    if not ((x.ndim <= 1 and x.size > 0) or (x.ndim == 2 and x.shape[1] != 0)):
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            f"{list(x.shape)}"
        )


def multi_margin_loss(
    input,
    target,
    p=1,
    margin=1.0,
    weight=None,
    size_average=None,
    reduce=None,
    reduction="mean",
):
    """Multi-class hinge loss: per sample, ``sum_j w[y] max(0, margin - x[y] + x[j])^p / C``
    over the classes ``j != y``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.multi_margin_loss(ember.tensor([[0.1, 0.8, 0.4]]), ember.tensor([1]))
        tensor(0.3000)
    """
    reduction = _loss_args("multi_margin_loss", input, target, size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    x = input._data
    _margin_input_check(x)
    n = 1 if x.ndim <= 1 else x.shape[0]
    c = x.size if x.ndim <= 1 else x.shape[1]
    t = target._data
    if not (t.ndim <= 1 and t.size == n):
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{n}], but got "
            f"{list(t.shape)}. Input has shape {list(x.shape)}."
        )
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    _no_grad_argument(weight, "multi_margin_loss", "weight")
    if x.dtype.kind not in "fV":
        raise NotImplementedError(
            f"\"multi_margin_loss_cpu\" not implemented for '{scalar_name(x.dtype)}'"
        )
    _check_target_dtype(target)
    t = t.reshape(-1).astype(np.int64)
    if t.size and (t.min() < 0 or t.max() >= c):
        raise RuntimeError("target out of range")
    w = None if weight is None else weight._data.astype(x.dtype, copy=False)
    out_shape = tuple(t.shape) if x.ndim == 2 else tuple(target.shape)
    params = (t, p, margin, w, reduction, out_shape)
    token = quiet_set(QUIET)
    try:
        out = _multi_margin_forward(x, *params)
    finally:
        quiet_reset(token)
    return record(MultiMarginLossBackward0, out, (input,), params)


def _multilabel_mask(t: np.ndarray, c: int, dtype) -> np.ndarray:
    """(N, C, C) counts: entry [i, a, k] is how often class ``a`` is listed (before the first
    -1) for sample ``i``, where ``k`` is not a listed class."""
    n = t.shape[0]
    listed = np.cumprod(t >= 0, axis=1).astype(bool)
    counts = np.zeros((n, c), dtype=dtype)
    rows = np.repeat(np.arange(n), t.shape[1])
    np.add.at(counts, (rows[listed.reshape(-1)], t.reshape(-1)[listed.reshape(-1)]), 1)
    return counts[:, :, None] * (counts == 0)[:, None, :]


def _multilabel_forward(x, mask, reduction, out_shape):
    xs = _margin_rows(x)
    c = xs.shape[1]
    z = 1 - xs[:, :, None] + xs[:, None, :]
    losses = (np.maximum(z, 0) * mask).sum(axis=(1, 2)) / c
    return _reduce_array(np.asarray(losses.reshape(out_shape), dtype=x.dtype), reduction)


def _multilabel_vjp(g, self, mask, reduction, out_shape):
    xs = _margin_rows(self)
    n, c = xs.shape
    z = 1 - xs[:, :, None] + xs[:, None, :]
    h = (z > 0) * mask
    if reduction == "none":
        scale = np.asarray(g, dtype=xs.dtype).reshape(n, 1)
    else:
        scale = _reduced_grad(g, reduction, n)
    gx = (h.sum(axis=1) - h.sum(axis=2)) * scale / c
    return np.asarray(gx.reshape(self.shape), dtype=self.dtype)


def _multilabel_composite(self, mask, reduction, out_shape):
    xs = self.reshape(1, -1) if self.dim() <= 1 else self
    c = xs.shape[1]
    z = (xs.unsqueeze(1) - xs.unsqueeze(2) + 1).clamp_min(0)
    losses = (z * _wrap(mask.astype(self._data.dtype))).sum((1, 2)) / c
    return _reduce_tensor(losses.reshape(out_shape), reduction)


MultilabelMarginLossBackward0 = defop(
    "MultilabelMarginLossBackward0",
    params=("mask", "reduction", "out_shape"),
    forward=_multilabel_forward,
    vjp={"self": _multilabel_vjp},
    composite=_multilabel_composite,
    jvp=COMPOSITE,
)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge loss: ``target`` lists each sample's classes (ending at the first
    -1); every listed class should beat every other class by a margin of 1.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> x = ember.tensor([[0.1, 0.2, 0.4, 0.8]])
        >>> F.multilabel_margin_loss(x, ember.tensor([[3, 0, -1, 1]]))
        tensor(0.8500)
    """
    reduction = _loss_args("multilabel_margin_loss", input, target, size_average, reduce, reduction)
    x = input._data
    _margin_input_check(x)
    t = target._data
    if x.ndim <= 1:
        if not (t.ndim <= 1 and t.size == x.size):
            raise RuntimeError(
                f"inconsistent target size: {list(t.shape)} for input of size: {list(x.shape)}"
            )
    elif t.shape != x.shape:
        raise RuntimeError(
            f"inconsistent target size: {list(t.shape)} for input of size: {list(x.shape)}"
        )
    if x.dtype.kind not in "fV":
        raise NotImplementedError(
            f'"multilabel_margin_loss_forward_out_frame" not implemented for '
            f"'{scalar_name(x.dtype)}'"
        )
    _check_target_dtype(target)
    c = x.size if x.ndim <= 1 else x.shape[1]
    tr = t.reshape(-1, c).astype(np.int64)
    if ((tr < -1) | (tr >= c)).any():
        raise RuntimeError("argument #2 'target' is out of range")
    out_shape = (tr.shape[0],) if x.ndim == 2 else ()
    params = (_multilabel_mask(tr, c, x.dtype), reduction, out_shape)
    token = quiet_set(QUIET)
    try:
        out = _multilabel_forward(x, *params)
    finally:
        quiet_reset(token)
    return record(MultilabelMarginLossBackward0, out, (input,), params)


def multilabel_soft_margin_loss(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean"
):
    """Multi-label one-versus-all logistic loss, averaged over the classes (last dim).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.multilabel_soft_margin_loss(ember.tensor([[0.0, 0.0]]), ember.tensor([[1.0, 0.0]]))
        tensor(0.6931)
    """
    require_tensor(input, "multilabel_soft_margin_loss")
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction, stacklevel=3)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    c = input.shape[class_dim]
    loss = loss.sum(class_dim) / c
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


# -- triplet margin ------------------------------------------------------------------------


def _same_ndim(anchor, positive, negative) -> None:
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == p and p == n):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs"
        )


def triplet_margin_loss(
    anchor,
    positive,
    negative,
    margin=1.0,
    p=2,
    eps=1e-6,
    swap=False,
    size_average=None,
    reduce=None,
    reduction="mean",
):
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))`` with the pairwise
    ``p``-norm distance (``swap``: the smaller of d(a, n) and d(p, n)).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> a, pos, neg = ember.zeros(1, 2), ember.ones(1, 2), ember.ones(1, 2) * 3
        >>> F.triplet_margin_loss(a, pos, neg, eps=0.0)
        tensor(0.)
    """
    require_tensor(anchor, "triplet_margin_loss", "anchor")
    require_tensor(positive, "triplet_margin_loss", "positive", 2)
    require_tensor(negative, "triplet_margin_loss", "negative", 3)
    reduction = _legacy_reduction(size_average, reduce, reduction, stacklevel=3)
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _same_ndim(anchor, positive, negative)
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    output = (_scalar_op(AddBackward1, dist_pos, margin) - dist_neg).clamp_min(0)
    return _reduce_tensor(output, reduction)


def triplet_margin_with_distance_loss(
    anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False, reduction="mean"
):
    """``triplet_margin_loss`` with any ``distance_function(x, y)`` (default
    ``pairwise_distance``).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> a, pos, neg = ember.zeros(1, 2), ember.ones(1, 2), ember.ones(1, 2) * 3
        >>> F.triplet_margin_with_distance_loss(a, pos, neg)
        tensor(0.)
    """
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _same_ndim(anchor, positive, negative)
    if distance_function is None:
        distance_function = pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = minimum(dist_neg, distance_function(positive, negative))
    loss = (margin + dist_pos - dist_neg).clamp_min(0)
    return _reduce_tensor(loss, reduction)


# -- poisson / gaussian negative log likelihood -----------------------------------------------


def poisson_nll_loss(
    input,
    target,
    log_input=True,
    full=False,
    size_average=None,
    eps=1e-8,
    reduce=None,
    reduction="mean",
):
    """Poisson negative log likelihood: ``exp(input) - target * input`` (``log_input``) or
    ``input - target * log(input + eps)``; ``full`` adds Stirling's term for targets > 1.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.poisson_nll_loss(ember.tensor([0.0]), ember.tensor([2.0]))
        tensor(1.)
    """
    reduction = _loss_args("poisson_nll_loss", input, target, size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + (target * (2 * math.pi)).log() * 0.5
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce_tensor(loss, reduction)


def _variances_nonnegative(v: np.ndarray) -> None:
    if (v < 0).any():
        raise ValueError("var has negative entry/entries")


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Gaussian negative log likelihood ``0.5 (log(var) + (input - target)^2 / var)`` with
    ``var`` clamped below at ``eps`` (its gradient unchanged, as torch).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.gaussian_nll_loss(ember.tensor([1.0]), ember.tensor([0.0]), ember.tensor([1.0]))
        tensor(0.5000)
    """
    require_tensor(input, "gaussian_nll_loss")
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * input.new_ones(input.shape)
    else:
        check_values(_variances_nonnegative, var._data)
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif input.dim() == var.dim() and (
            sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1
        ):
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():  # the clamp does not change var's gradient
        var.clamp_(min=eps)
    loss = (var.log() + (input - target) ** 2 / var) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce_tensor(loss, reduction)
