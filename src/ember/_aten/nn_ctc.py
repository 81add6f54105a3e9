"""The Connectionist Temporal Classification loss: ``ctc_loss`` with torch's semantics.

torch's ``ctc_loss`` is ``_ctc_loss`` (node ``CtcLossBackward0``: one negative
log-likelihood per batch element) followed by composed ops: ``where`` zeroing infinite
losses (``zero_infinity``), a division by the clamped target lengths and a ``mean``
(``reduction='mean'``) or a ``sum``; unbatched input is unsqueezed and, without reduction,
squeezed back. ember records the same graph.

The forward is the alpha recursion in log space over the extended label sequence
(``blank, l1, blank, l2, ..., blank``), vectorised over the batch and the sequence with
NumPy (a loop over time only); the backward runs the beta recursion and returns torch's
gradient with respect to ``log_probs``: ``exp(log_probs) - posterior / p`` (torch's
formula, which equals the true gradient once composed with ``log_softmax``), zero past each
input length, and zero for infinite losses under ``zero_infinity``. torch has neither a
double backward nor forward mode for ``_ctc_loss``; ember raises its errors too.
"""

from __future__ import annotations

import numpy as np

from .._dtype import scalar_name
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ._core import (
    QUIET,
    defop,
    is_raw,
    quiet_reset,
    quiet_set,
    require_tensor,
    run,
)
from .elementwise import where
from .nn_loss import _check_reduction

__all__ = ["ctc_loss"]

_NEG_INF = -np.inf
_ALLOC = "(while checking arguments for ctc_loss_allocate_outputs)"


# -- the recursions on arrays ------------------------------------------------------------------


def _logaddexp3(a, b, c):
    """``log(exp(a) + exp(b) + exp(c))`` elementwise, exact at -inf."""
    m = np.maximum(np.maximum(a, b), c)
    safe = np.where(np.isfinite(m), m, 0.0)
    return np.log(np.exp(a - safe) + np.exp(b - safe) + np.exp(c - safe)) + safe


def _extended(targets, target_lengths, blank):
    """Extended label sequences ``(N, L)`` (``L = 2 * max(target_lengths) + 1``), padded with
    blanks; the mask of positions that may skip the previous label (``s - 2 -> s``); and
    each element's extended length."""
    n = len(target_lengths)
    s_max = int(target_lengths.max()) if n else 0
    ext = np.full((n, 2 * s_max + 1), blank, dtype=np.int64)
    ext[:, 1::2] = targets[:, :s_max] if s_max else ext[:, 1::2]
    lengths = 2 * target_lengths + 1
    pos = np.arange(ext.shape[1])
    ext[pos[None, :] >= lengths[:, None]] = blank
    skip = np.zeros(ext.shape, dtype=bool)
    skip[:, 2:] = ext[:, 2:] != ext[:, :-2]
    skip[:, ::2] = False  # blanks never skip
    return ext, skip, lengths


def _emissions(lp, ext):
    """``lp[t, n, ext[n, s]]``: ``(T, N, L)``."""
    return np.take_along_axis(lp, np.broadcast_to(ext[None], (lp.shape[0], *ext.shape)), axis=2)


def _alpha(em, skip, lengths):
    """Log forward variables ``(T, N, L)`` (-inf beyond each extended length)."""
    t_max, n, L = em.shape
    valid = np.arange(L)[None, :] < lengths[:, None]
    alpha = np.full(em.shape, _NEG_INF, dtype=em.dtype)
    if t_max == 0:
        return alpha
    alpha[0, :, :2] = em[0, :, :2]
    alpha[0][~valid] = _NEG_INF
    pad1 = np.full((n, 1), _NEG_INF, dtype=em.dtype)
    pad2 = np.full((n, 2), _NEG_INF, dtype=em.dtype)
    for t in range(1, t_max):
        prev = alpha[t - 1]
        one = np.concatenate([pad1, prev[:, :-1]], axis=1)
        two = np.where(skip, np.concatenate([pad2, prev[:, :-2]], axis=1), _NEG_INF)
        alpha[t] = np.where(valid, _logaddexp3(prev, one, two) + em[t], _NEG_INF)
    return alpha


def _beta(em, skip, lengths, input_lengths):
    """Log backward variables ``(T, N, L)``, each element started at its last frame."""
    t_max, n, L = em.shape
    pos = np.arange(L)[None, :]
    valid = pos < lengths[:, None]
    last = (pos == lengths[:, None] - 1) | (pos == lengths[:, None] - 2)
    # skip into s + 2 from s is allowed where s + 2 may skip back to s
    skip_next = np.concatenate([skip[:, 2:], np.zeros((n, 2), dtype=bool)], axis=1)
    beta = np.full(em.shape, _NEG_INF, dtype=em.dtype)
    pad1 = np.full((n, 1), _NEG_INF, dtype=em.dtype)
    pad2 = np.full((n, 2), _NEG_INF, dtype=em.dtype)
    nxt = np.full((n, L), _NEG_INF, dtype=em.dtype)
    for t in range(t_max - 1, -1, -1):
        one = np.concatenate([nxt[:, 1:], pad1], axis=1)
        two = np.where(skip_next, np.concatenate([nxt[:, 2:], pad2], axis=1), _NEG_INF)
        rec = _logaddexp3(nxt, one, two) + em[t]
        start = np.where(last & valid, em[t], _NEG_INF)
        here = input_lengths[:, None]
        cur = np.where(t == here - 1, start, np.where(t < here - 1, rec, _NEG_INF))
        beta[t] = cur
        nxt = cur
    return beta


def _final_log_likelihood(alpha, lengths, input_lengths):
    """``log p(target | input)`` per batch element, read at each element's last frame."""
    n = alpha.shape[1]
    out = np.empty(n, dtype=alpha.dtype)
    for b in range(n):
        t, L = int(input_lengths[b]), int(lengths[b])
        if t == 0:
            out[b] = 0.0 if L == 1 else _NEG_INF
            continue
        a = alpha[t - 1, b, L - 1]
        c = alpha[t - 1, b, L - 2] if L > 1 else _NEG_INF
        out[b] = np.logaddexp(a, c)
    return out


def _ctc_forward(lp, targets, input_lengths, target_lengths, blank, zero_infinity):
    ext, skip, lengths = _extended(targets, target_lengths, blank)
    em = _emissions(lp, ext)
    alpha = _alpha(em, skip, lengths)
    nll = -_final_log_likelihood(alpha, lengths, input_lengths)
    return nll, alpha


def _ctc_grad(g, lp, targets, input_lengths, target_lengths, blank, zero_infinity, nll, alpha):
    """torch's ``_ctc_loss_backward``: ``(exp(lp) - posterior / p) * g`` per batch element."""
    token = quiet_set(QUIET)
    try:
        ext, skip, lengths = _extended(targets, target_lengths, blank)
        em = _emissions(lp, ext)
        beta = _beta(em, skip, lengths, input_lengths)
        q = alpha + beta - em  # log(posterior of s at t) + log p
        m = q.max(axis=2, keepdims=True)
        m = np.where(np.isfinite(m), m, 0.0)
        onehot = (ext[:, :, None] == np.arange(lp.shape[2])).astype(lp.dtype)
        sums = np.einsum("tnl,nlc->tnc", np.exp(q - m), onehot)
        grad = np.exp(lp) - sums * np.exp(m + nll[None, :, None])
        grad = grad * np.reshape(g, (1, -1, 1))
        frames = np.arange(lp.shape[0])[:, None] < input_lengths[None, :]
        grad = np.where(frames[:, :, None], grad, 0.0)
        if zero_infinity:
            grad = np.where(np.isinf(nll)[None, :, None], 0.0, grad)
        return grad.astype(lp.dtype, copy=False)
    finally:
        quiet_reset(token)


def _no_double(g):
    raise RuntimeError("derivative for aten::_ctc_loss_backward is not implemented")


# In a recorded backward, torch's gradient is a node that refuses to go further, fed by
# log_probs and the loss (``_ctc_loss_backward`` has no derivative).
_CtcGradNotImplemented = defop(
    "NotImplemented",
    inputs=("self", "nll"),
    outputs=("grad",),
    params=("g", "targets", "il", "tl", "blank", "zero_infinity", "alpha"),
    forward=lambda lp, nll, g, tg, il, tl, blank, zi, alpha: _ctc_grad(
        g, lp, tg, il, tl, blank, zi, nll, alpha
    ),
    vjp=lambda g: _no_double(g),
    jvp=None,
)


def _ctc_vjp(g, self, targets, il, tl, blank, zero_infinity, result, alpha):
    if is_raw(g):
        return _ctc_grad(g, self, targets, il, tl, blank, zero_infinity, result, alpha)
    params = (g._data, targets, il, tl, blank, zero_infinity, alpha)
    return run(_CtcGradNotImplemented, (self, result), (self._data, result._data), params)


CtcLossBackward0 = defop(
    "CtcLossBackward0",
    inputs=("self",),
    params=("targets", "il", "tl", "blank", "zero_infinity"),
    saves=("alpha",),
    forward=_ctc_forward,
    vjp={"self": _ctc_vjp},
    jvp=None,  # torch: "Trying to use forward AD with _ctc_loss that does not support it"
)


# -- arguments ---------------------------------------------------------------------------------


def _lengths(x, name: str):
    """A lengths argument as an int64 array (a Tensor of integers, or a sequence of ints)."""
    if isinstance(x, Tensor):
        if x._data.dtype.kind not in "iu":
            raise RuntimeError(f"{name} must be integral")
        return np.asarray(x._data, dtype=np.int64).reshape(-1)
    return np.asarray([int(v) for v in x], dtype=np.int64)


def _type_error(args) -> TypeError:
    kinds = ", ".join(type(a).__name__ for a in args)
    return TypeError(
        f"ctc_loss() received an invalid combination of arguments - got ({kinds}, int, int, bool), "
        "but expected one of:\n"
        " * (Tensor log_probs, Tensor targets, tuple of ints input_lengths, tuple of ints "
        "target_lengths, int blank = 0, int reduction = at::Reduction::Mean, "
        "bool zero_infinity = False)\n"
        " * (Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, "
        "int blank = 0, int reduction = at::Reduction::Mean, bool zero_infinity = False)\n"
    )


def _check_value(values, name: str, low: int, high: int | None) -> None:
    for v in values:
        if v < low:
            raise RuntimeError(
                f"Expected {name} to have value at least {low}, but got value {int(v)} {_ALLOC}"
            )
        if high is not None and v > high:
            raise RuntimeError(
                f"Expected {name} to have value at most {high}, but got value {int(v)} {_ALLOC}"
            )


def _check_size(actual: int, expected: int, dim: int, cmp: str = "") -> None:
    raise RuntimeError(
        f"Expected tensor to have size {cmp}{expected} at dimension {dim}, but got size "
        f"{actual} for argument #2 'targets' {_ALLOC}"
    )


def _padded_targets(tg: np.ndarray, tl: np.ndarray, n: int) -> np.ndarray:
    """Targets as an ``(N, max(tl))`` array from the padded or concatenated form (torch's
    size checks)."""
    s_max = int(tl.max()) if n else 0
    if tg.ndim == 1:
        total = int(tl.sum())
        if tg.shape[0] != total:
            _check_size(tg.shape[0], total, 0)
        out = np.zeros((n, s_max), dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(tl)])
        for b in range(n):
            out[b, : tl[b]] = tg[offsets[b] : offsets[b + 1]]
        return out
    if tg.ndim != 2:
        raise RuntimeError(
            f"Expected 1 to 2 dimensions, but got {tg.ndim}-dimensional tensor for argument "
            f"#2 'targets' {_ALLOC}"
        )
    if tg.shape[0] != n:
        _check_size(tg.shape[0], n, 0)
    if tg.shape[1] < s_max:
        _check_size(tg.shape[1], s_max, 1, "at least ")
    return tg[:, :s_max]


def ctc_loss(
    log_probs,
    targets,
    input_lengths,
    target_lengths,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """The Connectionist Temporal Classification loss (torch's ``ctc_loss``).

    ``log_probs`` is ``(T, N, C)`` (or unbatched ``(T, C)``) log-probabilities; ``targets``
    is padded ``(N, S)`` or the targets concatenated (1-d); ``input_lengths`` and
    ``target_lengths`` are Tensors of integers or sequences of ints. ``reduction='mean'``
    divides each loss by its target length (at least 1) and averages over the batch.
    ``zero_infinity`` zeroes infinite losses (impossible alignments) and their gradients.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> lp = ember.full((2, 1, 2), 0.5).log()
        >>> F.ctc_loss(lp, ember.tensor([[1]]), (2,), (1,), reduction="none")
        tensor([0.2877])
    """
    require_tensor(log_probs, "ctc_loss", "log_probs")
    require_tensor(targets, "ctc_loss", "targets", 2)
    tensor_lengths = isinstance(input_lengths, Tensor), isinstance(target_lengths, Tensor)
    if tensor_lengths[0] != tensor_lengths[1] or any(
        isinstance(x, (int, float, bool)) for x in (input_lengths, target_lengths)
    ):
        raise _type_error((log_probs, targets, input_lengths, target_lengths))
    _check_reduction(reduction)
    il = _lengths(input_lengths, "input_lengths")
    tl = _lengths(target_lengths, "target_lengths")
    lp_arr = log_probs._data
    if lp_arr.dtype.kind not in "fV":
        raise NotImplementedError(
            f"\"ctc_loss_cpu\" not implemented for '{scalar_name(lp_arr.dtype)}'"
        )
    if lp_arr.size == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    batched = lp_arr.ndim == 3
    x = log_probs if batched else log_probs.unsqueeze(1)
    if x._data.ndim != 3:
        raise RuntimeError(
            f"Expected 3-dimensional tensor, but got {x._data.ndim}-dimensional tensor for "
            f"argument #1 'log_probs' {_ALLOC}"
        )
    t_max, n, c = x._data.shape
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    if len(il) != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tl) != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    tg = np.asarray(targets._data).astype(np.int64)
    _check_value(il, "input_lengths", 0, t_max)
    _check_value(tl, "target_lengths", 0, None)
    tg = _padded_targets(tg, tl, n)
    params = (np.ascontiguousarray(tg), il, tl, int(blank), bool(zero_infinity))
    res = run(CtcLossBackward0, (x,), (x._data,), params)
    if zero_infinity:
        with no_grad():
            inf = res == float("inf")
        zeros = Tensor._wrap(np.zeros((), dtype=res._data.dtype))
        res = where(inf, zeros, res)
    if reduction == "mean":
        with no_grad():
            lengths = Tensor._wrap(np.maximum(tl, 1).astype(res._data.dtype))
        return (res / lengths).mean()
    if reduction == "sum":
        return res.sum()
    return res if batched else res.squeeze(0)
