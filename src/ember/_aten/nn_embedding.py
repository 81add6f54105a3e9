"""``embedding`` (rows of a weight picked by indices) and ``embedding_bag``: sums, means or
maxima of bags of embedding rows, in one graph node.

The bags are resolved once, on the index arrays (a ``_Bags`` plan: each kept entry's row
and bag, entries at ``padding_idx`` left out); the forward and the VJP are then scatters
(``np.add.at``) and segment reductions (``np.maximum.reduceat``), with no loop over bags.
The composite (rows picked by indexing, summed into bags by a constant 0/1 matrix, or
gathered at the recorded maxima) gives exact higher orders. Like torch, no forward mode.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..autograd.recording import check_values
from ._core import (
    LINEAR,
    QUIET,
    defop,
    intp,
    quiet_reset,
    quiet_set,
    record,
    require_tensor,
    with_eager_kernel,
)

_wrap = Tensor._wrap
_MODES = {"sum": 0, "mean": 1, "max": 2}


class _Bags:
    """Which input entries land in which bag, and how they are weighed."""

    __slots__ = ("pos", "rows", "bag", "nbags", "mode", "count", "freq", "arg", "psw_shape")

    def __init__(self, pos, rows, bag, nbags, mode, count, freq, psw_shape) -> None:
        self.pos, self.rows, self.bag, self.nbags = pos, rows, bag, nbags
        self.mode, self.count, self.freq, self.psw_shape = mode, count, freq, psw_shape
        self.arg = None  # max mode: the entry (index into ``rows``) holding each maximum

    def __repr__(self) -> str:
        return f"_Bags(mode={self.mode!r}, bags={self.nbags}, entries={len(self.rows)})"


def _bag_forward(weight: np.ndarray, psw, bags: _Bags) -> np.ndarray:
    d = weight.shape[1]
    out = np.zeros((bags.nbags, d), dtype=weight.dtype)
    vals = weight[bags.rows]
    if bags.mode == "max":
        if len(vals):
            starts = np.flatnonzero(np.r_[True, bags.bag[1:] != bags.bag[:-1]])
            filled = bags.bag[starts]
            out[filled] = np.maximum.reduceat(vals, starts, axis=0)
            # The first entry of each bag reaching its maximum, per column.
            hit = vals == out[bags.bag]
            entry = np.where(hit, np.arange(len(vals)).reshape(-1, 1), len(vals))
            arg = np.zeros((bags.nbags, d), dtype=np.int64)
            arg[filled] = np.minimum.reduceat(entry, starts, axis=0)
            bags.arg = arg
        else:
            bags.arg = np.zeros((bags.nbags, d), dtype=np.int64)
        return out
    if psw is not None:
        vals = vals * psw.reshape(-1)[bags.pos].reshape(-1, 1)
    np.add.at(out, bags.bag, vals)
    if bags.mode == "mean":
        out /= np.maximum(bags.count, 1).reshape(-1, 1).astype(weight.dtype)
    return out


def _filled(bags: _Bags) -> np.ndarray:
    return np.bincount(intp(bags.bag), minlength=bags.nbags) > 0


def _bag_vjp(g, weight, per_sample_weights, bags, needs_input_grad):
    token = quiet_set(QUIET)  # torch is silent on overflow
    try:
        return _bag_vjp_arrays(g, weight, per_sample_weights, bags, needs_input_grad)
    finally:
        quiet_reset(token)


def _bag_vjp_arrays(g, weight, per_sample_weights, bags, needs_input_grad):
    gw = gp = None
    if bags.mode == "max":
        if needs_input_grad[0]:
            gw = np.zeros_like(weight, dtype=g.dtype)
            if len(bags.rows):
                d = weight.shape[1]
                mask = _filled(bags)
                rows = bags.rows[bags.arg[mask]]
                cols = np.broadcast_to(np.arange(d), rows.shape)
                np.add.at(gw, (rows, cols), g[mask])
        return gw, gp
    gb = g[bags.bag]  # each kept entry's bag gradient
    if bags.mode == "mean":
        gb = gb / np.maximum(bags.count, 1)[bags.bag].reshape(-1, 1).astype(g.dtype)
    if needs_input_grad[0]:
        ge = gb
        if per_sample_weights is not None:
            ge = ge * per_sample_weights.reshape(-1)[bags.pos].reshape(-1, 1)
        if bags.freq is not None:
            ge = ge * bags.freq.reshape(-1, 1).astype(g.dtype)
        gw = np.zeros(weight.shape, dtype=g.dtype)
        np.add.at(gw, bags.rows, ge)
    if per_sample_weights is not None and needs_input_grad[1]:
        flat = np.zeros(per_sample_weights.size, dtype=g.dtype)
        flat[bags.pos] = (gb * weight[bags.rows]).sum(axis=1)
        gp = flat.reshape(per_sample_weights.shape)
    return gw, gp


def _bag_composite(weight, per_sample_weights, bags):
    dt = weight._data.dtype
    d = weight.shape[1]
    if bags.mode == "max":
        arg = bags.arg if bags.arg is not None else np.zeros((bags.nbags, d), np.int64)
        rows = bags.rows[arg] if len(bags.rows) else np.zeros_like(arg)
        flat = weight.reshape(-1)[_wrap(rows * d + np.arange(d))]
        return flat * _wrap(_filled(bags).reshape(-1, 1).astype(dt))
    vals = weight[_wrap(bags.rows)]
    if bags.freq is not None:
        # The weight's gradient is scaled by 1 / frequency, its value is not.
        f = _wrap(bags.freq.reshape(-1, 1).astype(dt))
        vals = vals * f + (vals * (1 - f)).detach()
    if per_sample_weights is not None:
        vals = vals * per_sample_weights.reshape(-1)[_wrap(bags.pos)].reshape(-1, 1)
    m = np.zeros((bags.nbags, len(bags.rows)), dtype=dt)
    m[bags.bag, np.arange(len(bags.rows))] = 1
    if bags.mode == "mean":
        m /= np.maximum(bags.count, 1).reshape(-1, 1)
    return _wrap(m).matmul(vals)


EmbeddingBagBackward0 = defop(
    "EmbeddingBagBackward0",
    inputs=("weight", "per_sample_weights"),
    params=("bags",),
    forward=_bag_forward,
    vjp=_bag_vjp,
    composite=_bag_composite,
    # torch has no forward mode for embedding_bag: its NotImplementedError.
    jvp=None,
)


def _renorm_(weight: Tensor, indices: np.ndarray, max_norm, norm_type) -> None:
    """torch's ``embedding_renorm_``: rows used whose norm exceeds ``max_norm`` scaled down."""
    w = weight._data
    rows = np.unique(indices)
    norms = np.linalg.norm(w[rows], ord=norm_type, axis=1)
    over = norms > max_norm
    if over.any():
        w[rows[over]] *= (max_norm / (norms[over] + 1e-7)).reshape(-1, 1).astype(w.dtype)
        weight._bump()


def embedding_bag(
    input,
    weight,
    offsets=None,
    max_norm=None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights=None,
    include_last_offset: bool = False,
    padding_idx=None,
):
    """Sums, means or maxima of bags of rows of ``weight``.

    A 2-D ``input`` (B, N) is B bags of N indices; a 1-D one is split into bags at
    ``offsets``. Entries equal to ``padding_idx`` are left out (an empty bag gives zeros);
    ``per_sample_weights`` (mode ``'sum'``) weighs each entry.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> w = ember.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        >>> F.embedding_bag(ember.tensor([0, 2, 1]), w, ember.tensor([0, 2]), mode="sum")
        tensor([[6., 8.],
                [3., 4.]])
    """
    require_tensor(input, "embedding_bag")
    require_tensor(weight, "embedding_bag", "weight", 2)
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
            f"then it must have the same shape as the input ({input.shape})"
        )
    if weight.dim() != 2:
        raise ValueError(
            f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}"
        )
    idx = input._data
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets)}"
            )
        starts = np.arange(0, idx.size, max(idx.shape[1], 1), dtype=np.int64)
        if idx.shape[1] == 0:
            starts = np.zeros(idx.shape[0], dtype=np.int64)
        include_last_offset = False
        idx = idx.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        starts = offsets._data.astype(np.int64)
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}"
        )
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if sparse:
        if mode == "max":
            raise ValueError("max mode does not support sparse weights")
        raise RuntimeError(
            "ember has no sparse tensors: embedding_bag(sparse=True) is not supported"
        )
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {input.type()} instead (while checking arguments for "
            "embedding_bag)"
        )
    num, n = weight.shape[0], idx.size
    bad = np.flatnonzero((idx < 0) | (idx >= num))
    if bad.size:
        if weight._data.dtype == np.float32:  # torch's float32 kernel words it so
            raise RuntimeError(
                f"Index {bad[0]} of input takes value {idx[bad[0]]} which is not in the valid "
                f"range [0, {num})"
            )
        raise RuntimeError(
            "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be "
            f"{idx[bad[0]]}"
        )
    if max_norm is not None:
        with no_grad():
            _renorm_(weight, idx.astype(np.int64), max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub."
        )
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise RuntimeError(
                "padding_idx must be within the number of embeddings, "
                f"-{num} through {num - 1}, but got {padding_idx}"
            )
        padding_idx %= num
    if starts.size and starts[0] != 0:
        raise RuntimeError(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
            # torch prints the offending value as a 0-d tensor.
            f"from position 0. However, got {starts[0]}\n[ torch.LongTensor{{}} ]"
        )
    if starts.size and starts[-1] > n:
        raise RuntimeError(
            f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of "
            f"{starts[-1]}"
        )
    if np.any(np.diff(starts) < 0):
        raise RuntimeError("offsets must be non-decreasing")
    if include_last_offset:
        # The last offset closes the last bag; as in torch's kernel, entries past it still
        # go to that bag (it is meant to equal the input's length).
        nbags = max(starts.size - 1, 0)
        starts = starts[:nbags]
    else:
        nbags = starts.size
    end = n if nbags else 0
    pos = np.arange(n)
    bag = np.searchsorted(starts, pos, side="right") - 1
    keep = (pos < end) & (bag >= 0)
    if padding_idx is not None:
        keep &= idx != padding_idx
    pos, rows, bag = pos[keep], idx[keep].astype(np.int64), bag[keep]
    count = np.bincount(intp(bag), minlength=nbags)
    freq = None
    if scale_grad_by_freq:
        freq = 1.0 / np.bincount(intp(rows), minlength=num)[rows]
    psw_shape = None if per_sample_weights is None else tuple(per_sample_weights.shape)
    bags = _Bags(pos, rows, bag, nbags, mode, count, freq, psw_shape)
    psw = None if per_sample_weights is None else per_sample_weights._data
    token = quiet_set(QUIET)  # torch is silent on overflow
    try:
        out = _bag_forward(weight._data, psw, bags)
    finally:
        quiet_reset(token)
    return record(EmbeddingBagBackward0, out, (weight, per_sample_weights), (bags,))


# -- embedding -----------------------------------------------------------------------------------


def _embedding_indices(indices) -> np.ndarray:
    """The index array: ``indices`` is the input Tensor (eager: checked against in-place
    changes since the forward, as torch's saved indices are) or its array (compiled code)."""
    if isinstance(indices, tuple):
        tensor, version = indices
        vc = getattr(tensor, "_vc", None)  # compiled code passes the array
        if vc is not None and vc[0] != version:
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{tensor.type()} {list(tensor.shape)}] is at version "
                f"{tensor._vc[0]}; expected version {version} instead. Hint: enable anomaly "
                "detection to find the operation that failed to compute its gradient, with "
                "torch.autograd.set_detect_anomaly(True)."
            )
        indices = tensor
    return getattr(indices, "_data", indices).astype(np.int64, copy=False)


def _embedding_vjp(g, indices, num_weights, padding_idx, scale):
    """The weight's gradient, each row's gradients summed: the compiler's C loop where a C
    compiler is present (checked against ``_embedding_vjp_numpy`` on the first call per
    shape; ``np.add.at`` dispatches per index), else the NumPy code."""
    indices = _embedding_indices(indices)  # (the version check: once, here)
    args = (g, indices, num_weights, padding_idx, scale)
    return with_eager_kernel("embedding_grad", _embedding_vjp_numpy, *args)


def _embedding_vjp_numpy(g, indices, num_weights, padding_idx, scale):
    """``_embedding_vjp`` in NumPy."""
    indices = _embedding_indices(indices)
    d = g.shape[-1]
    gw = np.zeros((num_weights, d), dtype=g.dtype)
    flat = g.reshape(-1, d)
    if scale is not None:
        flat = flat * scale.reshape(-1, 1)
    np.add.at(gw, indices.reshape(-1), flat)
    if padding_idx >= 0:
        gw[padding_idx] = 0
    return gw


def _embedding_composite(weight, indices, num_weights, padding_idx, scale):
    # The rows picked, their gradient scaled by ``scale`` and cut at ``padding_idx`` (the
    # detached part carries the rest of the value).
    indices = _embedding_indices(indices)
    rows = weight[_wrap(indices)]
    dt = weight._data.dtype
    factor = np.ones(indices.shape + (1,), dtype=dt)
    if scale is not None:
        factor = factor * scale.reshape(factor.shape)
    if padding_idx >= 0:
        factor[indices == padding_idx] = 0
    f = _wrap(factor.astype(dt, copy=False))
    return rows * f + (rows * (1 - f)).detach()


EmbeddingBackward0 = defop(
    "EmbeddingBackward0",
    inputs=("weight",),
    params=("indices", "num_weights", "padding_idx", "scale"),
    forward=lambda weight, indices, num_weights, padding_idx, scale: weight[
        _embedding_indices(indices)
    ],
    vjp={"weight": _embedding_vjp},
    composite=_embedding_composite,
    # Linear in the weight: the embedding of its tangent (as torch: padding_idx and
    # scale_grad_by_freq change the gradient, not the function).
    jvp=LINEAR,
)


def _embedding_indices_within(idx: np.ndarray, num: int) -> None:
    if idx.size and (idx.min() < 0 or idx.max() >= num):
        raise IndexError("index out of range in self")


def _embedding_renorm_(weight: Tensor, indices: np.ndarray, max_norm, norm_type) -> None:
    w = weight._data
    rows = np.unique(indices)
    norms = np.linalg.norm(w[rows], ord=norm_type, axis=1)
    over = norms > max_norm
    if over.any():
        scale = max_norm / (norms[over] + 1e-7)
        w[rows[over]] *= scale.reshape(-1, 1).astype(w.dtype)
        weight._bump()


def embedding(
    input,
    weight,
    padding_idx=None,
    max_norm=None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
):
    """Rows of ``weight`` picked by the integer ``input`` (any shape).

    Gradients of repeated indices accumulate; the ``padding_idx`` row gets none;
    ``max_norm`` renormalises the used rows in place first.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> w = ember.tensor([[0.0, 1.0], [2.0, 3.0]])
        >>> F.embedding(ember.tensor([1, 1, 0]), w)
        tensor([[2., 3.],
                [2., 3.],
                [0., 1.]])
    """
    require_tensor(input, "embedding")
    require_tensor(weight, "embedding", "weight", 2)
    idx = input._data
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {input.type()} instead (while checking arguments for "
            "embedding)"
        )
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    num = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= num:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -num:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = num + padding_idx
    else:
        padding_idx = -1
    if sparse:
        raise RuntimeError("ember has no sparse tensors: embedding(sparse=True) is not supported")
    check_values(_embedding_indices_within, idx, num)
    idx = idx.astype(np.int64, copy=False)
    if max_norm is not None:
        with no_grad():
            _embedding_renorm_(weight, idx, max_norm, norm_type)
    out = weight._data[idx]
    scale = None
    if scale_grad_by_freq:
        counts = np.bincount(intp(idx.reshape(-1)), minlength=num)
        scale = (1.0 / counts[idx]).astype(weight._data.dtype)
    # The input itself (with its version), not a copy: torch saves the indices tensor and
    # raises if it changes in place before backward; compiled code reads it at each call.
    indices = (input, input._vc[0]) if input._vc is not None else input
    params = (indices, num, padding_idx, scale)
    return record(EmbeddingBackward0, out, (weight,), params)
