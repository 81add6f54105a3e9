"""Loss functions: nll_loss, cross_entropy, mse_loss, l1_loss, binary_cross_entropy and
binary_cross_entropy_with_logits, all stable at extreme logits (log-sum-exp, softplus)."""

from __future__ import annotations

import warnings

import numpy as np

from .._tensor import Tensor
from ..ops.reduction import _scalar_name, log_softmax
from ._node import NNNode, record_nn

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


def _reduce_grad_scale(g, reduction: str, n: int):
    """The gradient of each element before the elementwise rule (array or scalar)."""
    if reduction == "mean":
        return g / n if n else g * np.nan
    return g


def _reduce_tensor(losses: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    return losses.mean()


def _require_tensor(x, fname: str, what: str = "input", pos: int = 1) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{fname}(): argument '{what}' (position {pos}) must be Tensor, not {type(x).__name__}"
        )


def _loss_args(fname: str, input, target, size_average, reduce, reduction: str) -> str:
    """Type-check the ``input`` and ``target`` of loss ``fname`` and return its reduction
    (resolving the deprecated ``size_average`` / ``reduce``, warning at the loss's caller)."""
    _require_tensor(input, fname)
    _require_tensor(target, fname, "target", 2)
    reduction = _legacy_reduction(size_average, reduce, reduction, stacklevel=4)
    _check_reduction(reduction)
    return reduction


# -- nll_loss ------------------------------------------------------------------------------


class NllLossBackward0(NNNode):
    __slots__ = ("target", "weights", "reduction", "total_weight", "class_axis")

    def _scale(self, g):
        if self.reduction == "mean":
            return g / self.total_weight
        return g

    def vjp(self, g, x):
        ax = self.class_axis
        xl = np.moveaxis(x, ax, -1) if ax is not None else x
        gl = np.zeros(xl.shape, dtype=x.dtype)
        coef = -self.weights * self._scale(g)
        coef = np.broadcast_to(np.asarray(coef, dtype=x.dtype), self.target.shape)
        if ax is None:
            gl[self.target] = coef
        else:
            np.put_along_axis(gl, self.target[..., None], coef[..., None], axis=-1)
            gl = np.moveaxis(gl, -1, ax)
        return gl

    def composite(self, x):
        ax = self.class_axis
        dt = x._data.dtype
        w = _wrap(self.weights.astype(dt))
        if ax is None:
            picked = x[int(self.target)]
        else:
            xl = x.movedim(ax, -1)
            idx = _wrap(self.target[..., None].astype(np.int64))
            picked = xl.gather(-1, idx).squeeze(-1)
        losses = -picked * w
        if self.reduction == "none":
            return losses
        total = losses.sum()
        if self.reduction == "mean":
            return total / _wrap(np.asarray(self.total_weight, dtype=dt))
        return total


class NllLoss2DBackward0(NllLossBackward0):
    __slots__ = ()


def _check_target_dtype(target: Tensor) -> None:
    if target._data.dtype not in (np.int64, np.uint8):
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {_scalar_name(target._data.dtype)}"
        )


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
    x = input._data
    t = target._data
    _check_target_dtype(target)
    if x.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {x.ndim})")
    if x.ndim == 1:
        if t.ndim == 1:
            # torch reads a (C,) input with a (1,) target as a batch of one.
            return nll_loss(
                input.unsqueeze(0), target, weight, ignore_index=ignore_index, reduction=reduction
            )
        if t.ndim != 0:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        class_axis, c = None, x.shape[0]
    else:
        if t.ndim == 0 or x.shape[0] != t.shape[0]:
            raise ValueError(
                f"Expected input batch_size ({x.shape[0]}) to match target batch_size "
                f"({t.shape[0] if t.ndim else 1})."
            )
        if tuple(t.shape[1:]) != tuple(x.shape[2:]):
            raise RuntimeError(
                f"Expected target size {list((x.shape[0],) + x.shape[2:])}, got {list(t.shape)}"
            )
        class_axis, c = 1, x.shape[1]
    if weight is not None and (weight.dim() != 1 or weight.numel() != c):
        raise RuntimeError(
            f"weight tensor should be defined either for all {c} classes or no classes but "
            f"got weight tensor of shape: {list(weight.shape)}"
        )
    t = t.astype(np.int64, copy=False)
    valid = t != ignore_index
    bad = valid & ((t < 0) | (t >= c))
    if bad.any():
        raise IndexError(f"Target {int(t[bad].reshape(-1)[0])} is out of bounds.")
    tc = np.where(valid, t, 0)
    dt = x.dtype
    if weight is not None:
        wts = np.where(valid, weight._data.astype(dt)[tc], 0).astype(dt)
    else:
        wts = valid.astype(dt)
    if class_axis is None:
        picked = x[tc] if valid else np.zeros((), dt)
    else:
        picked = np.take_along_axis(np.moveaxis(x, 1, -1), tc[..., None], axis=-1)[..., 0]
    losses = np.asarray(-picked * wts, dtype=dt)
    total_weight = wts.sum(dtype=dt)
    if reduction == "none":
        out = losses
    elif reduction == "sum":
        out = np.asarray(losses.sum(), dtype=dt)
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.asarray(losses.sum() / total_weight, dtype=dt)
    cls = NllLoss2DBackward0 if x.ndim >= 3 else NllLossBackward0
    return record_nn(
        cls,
        out,
        (input,),
        target=tc,
        weights=wts,
        reduction=reduction,
        total_weight=total_weight,
        class_axis=class_axis,
    )


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
                f"{_scalar_name(target._data.dtype)}"
            )
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        if input.dim() == 0:
            raise ValueError("Expected 1 or more dimensions (got 0)")
        n_classes = input.shape[class_dim]
        if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
            raise RuntimeError(
                f"cross_entropy: weight tensor should be defined either for all {n_classes} "
                f"classes or no classes but got weight tensor of shape: {list(weight.shape)}"
            )
        return _cross_entropy_probs(input, target, weight, reduction, label_smoothing, class_dim)
    if input.dim() == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(
                f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}"
            )
        return _cross_entropy_smoothed(
            input, target, weight, reduction, ignore_index, label_smoothing, class_dim
        )
    return nll_loss(
        log_softmax(input, class_dim),
        target,
        weight,
        ignore_index=ignore_index,
        reduction=reduction,
    )


def _class_view(weight: Tensor, ndim: int, class_dim: int) -> Tensor:
    if ndim <= 1:
        return weight
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return weight.reshape(shape)


def _cross_entropy_probs(input, target, weight, reduction, label_smoothing, class_dim):
    logp = log_softmax(input, class_dim)
    n_classes = input.shape[class_dim]
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(
                f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}"
            )
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    prod = logp * target
    if weight is not None:
        prod = prod * _class_view(weight, input.dim(), class_dim)
    if reduction == "none":
        return -prod.sum(class_dim)
    if reduction == "sum":
        return -prod.sum()
    count = input.numel() // n_classes if n_classes else 0
    if count == 0:
        return -prod.sum() * float("nan")
    return -prod.sum() / count


def _cross_entropy_smoothed(input, target, weight, reduction, ignore_index, eps, class_dim):
    from ..ops.indexing import masked_fill

    logp = log_softmax(input, class_dim)
    n_classes = input.shape[class_dim]
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
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
    return (1 - eps) * nll + ret * (eps / n_classes)


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
    from ..ops._core import binary_operands

    a, b = binary_operands(input, target)
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind not in "fc":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_scalar_name(a.dtype)}'")
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


class MseLossBackward0(NNNode):
    __slots__ = ("reduction", "n")

    def vjp(self, g, x, y):
        scale = _reduce_grad_scale(g, self.reduction, self.n)
        diff = x - y
        gx = (2 * scale) * diff
        gx = np.asarray(gx, dtype=np.result_type(x, y))
        return gx, -gx

    def composite(self, x, y):
        d = x - y
        return _reduce_tensor(d * d, self.reduction)


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
    shape = _check_broadcast(a.shape, b.shape)
    d = a - b
    sq = d * d
    out = _reduce_array(sq, reduction)
    return record_nn(
        MseLossBackward0, out, (input, target), reduction=reduction, n=int(np.prod(shape))
    )


def _check_broadcast(sa: tuple, sb: tuple) -> tuple:
    """The broadcast shape, or torch's error naming the first mismatching dim."""
    n = max(len(sa), len(sb))
    a = (1,) * (n - len(sa)) + tuple(sa)
    b = (1,) * (n - len(sb)) + tuple(sb)
    for i in range(n - 1, -1, -1):
        if a[i] != b[i] and a[i] != 1 and b[i] != 1:
            raise RuntimeError(
                f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) at "
                f"non-singleton dimension {i}"
            )
    return tuple(max(x, y) for x, y in zip(a, b))


def _needs(*xs) -> bool:
    from ..ops._core import needs_grad

    return needs_grad(*xs)


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
    _check_broadcast(tuple(input.shape), tuple(target.shape))
    loss = (input - target).abs()
    if weight is not None:
        return _weighted(loss, weight, input, reduction)
    return _reduce_tensor(loss, reduction)


# -- binary cross entropy --------------------------------------------------------------------


def _clamped_log(a: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.maximum(np.log(a), -100)


class BinaryCrossEntropyBackward0(NNNode):
    __slots__ = ("reduction", "weight", "n")

    def vjp(self, g, x, y):
        scale = _reduce_grad_scale(g, self.reduction, self.n)
        w = 1 if self.weight is None else self.weight
        gx = gy = None
        if self.next_functions[0][0] is not None:
            gx = scale * w * (x - y) / np.maximum((1 - x) * x, 1e-12)
            gx = np.asarray(gx, dtype=x.dtype)
        if self.next_functions[1][0] is not None:
            # torch's target gradient uses unclamped logs (infinite at 0 and 1).
            with np.errstate(divide="ignore", invalid="ignore"):
                gy = scale * w * (np.log1p(-x) - np.log(x))
            gy = np.asarray(gy, dtype=x.dtype)
        return gx, gy

    def composite(self, x, y):
        from ..ops.elementwise import clamp, log

        losses = -(y * clamp(log(x), min=-100) + (1 - y) * clamp(log(1 - x), min=-100))
        if self.weight is not None:
            losses = losses * _wrap(self.weight)
        return _reduce_tensor(losses, self.reduction)


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
    x, y = _float_pair(input, target, "binary_cross_entropy")
    if x.size and ((x < 0).any() or (x > 1).any() or np.isnan(x).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    w = None
    if weight is not None:
        w = np.broadcast_to(weight._data.astype(x.dtype, copy=False), x.shape)
    losses = -(y * _clamped_log(x) + (1 - y) * _clamped_log(1 - x))
    if w is not None:
        losses = losses * w
    out = _reduce_array(np.asarray(losses, dtype=x.dtype), reduction)
    return record_nn(
        BinaryCrossEntropyBackward0,
        out,
        (input, target),
        reduction=reduction,
        weight=w,
        n=x.size,
    )


def _softplus_neg(x: np.ndarray) -> np.ndarray:
    """``-log(sigmoid(x)) = log(1 + exp(-x))`` without overflow."""
    return np.maximum(-x, 0) + np.log1p(np.exp(-np.abs(x)))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


class BinaryCrossEntropyWithLogitsBackward0(NNNode):
    __slots__ = ("reduction", "weight", "pos_weight", "n")

    def vjp(self, g, x, y):
        scale = _reduce_grad_scale(g, self.reduction, self.n)
        w = 1 if self.weight is None else self.weight
        pw = self.pos_weight
        gx = gy = None
        if self.next_functions[0][0] is not None:
            if pw is None:
                d = _sigmoid(x) - y
            else:
                d = (1 - y) - (1 + (pw - 1) * y) * _sigmoid(-x)
            gx = np.asarray(scale * w * d, dtype=x.dtype)
        if self.next_functions[1][0] is not None:
            d = -x if pw is None else -x + (pw - 1) * _softplus_neg(x)
            gy = np.asarray(scale * w * d, dtype=x.dtype)
        return gx, gy

    def composite(self, x, y):
        from ..ops.elementwise import abs as abs_
        from ..ops.elementwise import exp, log1p, relu

        sp = relu(-x) + log1p(exp(-abs_(x)))
        if self.pos_weight is None:
            losses = (1 - y) * x + sp
        else:
            pw = _wrap(self.pos_weight)
            losses = (1 - y) * x + (1 + (pw - 1) * y) * sp
        if self.weight is not None:
            losses = losses * _wrap(self.weight)
        return _reduce_tensor(losses, self.reduction)


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
    for t, name in ((weight, "weight"), (pos_weight, "pos_weight")):
        if t is not None and t.requires_grad and _needs(t):
            raise RuntimeError(f"the derivative for '{name}' is not implemented.")
    x, y = _float_pair(input, target, "binary_cross_entropy_with_logits")
    dt = x.dtype
    w = None if weight is None else np.broadcast_to(weight._data.astype(dt), x.shape)
    pw = None if pos_weight is None else pos_weight._data.astype(dt)
    sp = _softplus_neg(x)
    if pw is None:
        losses = (1 - y) * x + sp
    else:
        losses = (1 - y) * x + (1 + (pw - 1) * y) * sp
    if w is not None:
        losses = losses * w
    out = _reduce_array(np.asarray(losses, dtype=dt), reduction)
    return record_nn(
        BinaryCrossEntropyWithLogitsBackward0,
        out,
        (input, target),
        reduction=reduction,
        weight=w,
        pos_weight=pw,
        n=x.size,
    )
