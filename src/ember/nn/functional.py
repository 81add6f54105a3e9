"""``ember.nn.functional``: the stateless functions behind the layers (torch.nn.functional).

Example:
    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.relu(ember.tensor([-1.0, 2.0]))
    tensor([0., 2.])
"""

from __future__ import annotations

import math

import numpy as np

from .. import _creation, _overrides
from .._aten import elementwise as _ew
from .._aten import nn_activation as _activation
from .._aten import reduction as _red
from .._aten._core import require_tensor
from .._aten.linalg import addmm, baddbmm, bmm
from .._aten.nn_activation import *  # noqa: F403  (every activation, listed once in its __all__)
from .._aten.nn_activation import gelu, leaky_relu, leaky_relu_
from .._aten.nn_attention import _additive_mask, scaled_dot_product_attention
from .._aten.nn_attention import scaled_dot_product_attention as _sdpa
from .._aten.nn_conv import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    fold,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
    pad,
    unfold,
)
from .._aten.nn_conv import pad as _pad
from .._aten.nn_ctc import ctc_loss
from .._aten.nn_embedding import embedding, embedding_bag
from .._aten.nn_interp import affine_grid, grid_sample, interpolate
from .._aten.nn_layers import (
    _dropout_impl,
    alpha_dropout,
    bilinear,
    channel_shuffle,
    cosine_similarity,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
    native_channel_shuffle,
    pairwise_distance,
    pdist,
    pixel_shuffle,
    pixel_unshuffle,
)
from .._aten.nn_loss import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cosine_embedding_loss,
    cross_entropy,
    gaussian_nll_loss,
    hinge_embedding_loss,
    huber_loss,
    kl_div,
    l1_loss,
    margin_ranking_loss,
    mse_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    nll_loss,
    poisson_nll_loss,
    smooth_l1_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from .._aten.nn_norm import (
    batch_norm,
    group_norm,
    instance_norm,
    layer_norm,
    local_response_norm,
    normalize,
    rms_norm,
)
from .._aten.reduction import softmax as _softmax
from .._aten.shape import cat
from .._dtype import to_numpy_dtype
from .._mode import autocast_active as _AUTOCAST
from .._mode import autocast_lower
from .._overrides import warn as _warn
from .._tensor import Tensor
from ..autograd.recording import untracked_call

__all__ = [
    "linear",
    "adaptive_avg_pool3d",
    "adaptive_max_pool3d",
    "avg_pool3d",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "max_pool3d",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "ctc_loss",
    "alpha_dropout",
    "bilinear",
    "channel_shuffle",
    "cosine_similarity",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "feature_alpha_dropout",
    "native_channel_shuffle",
    "pairwise_distance",
    "pdist",
    "pixel_shuffle",
    "pixel_unshuffle",
    "cosine_embedding_loss",
    "gaussian_nll_loss",
    "hinge_embedding_loss",
    "huber_loss",
    "kl_div",
    "margin_ranking_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "poisson_nll_loss",
    "smooth_l1_loss",
    "soft_margin_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
    "group_norm",
    "instance_norm",
    "local_response_norm",
    "normalize",
    "rms_norm",
    "conv1d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "max_pool1d",
    "avg_pool1d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "interpolate",
    "affine_grid",
    "grid_sample",
    "gumbel_softmax",
    "embedding_bag",
    "scaled_dot_product_attention",
    "multi_head_attention_forward",
    "conv2d",
    "unfold",
    "fold",
    "max_pool2d",
    "avg_pool2d",
    "pad",
    "dropout",
    "batch_norm",
    "layer_norm",
    "embedding",
    "one_hot",
    "relu",
    "relu_",
    "leaky_relu",
    "leaky_relu_",
    "gelu",
    "tanh",
    "sigmoid",
    "softmax",
    "log_softmax",
    "mse_loss",
    "l1_loss",
    "nll_loss",
    "cross_entropy",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    *_activation.__all__,
]

_wrap = Tensor._wrap
_require_tensor = require_tensor


# -- linear -----------------------------------------------------------------------------------


def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` (recorded as torch does: ``AddmmBackward0`` on 2-D input).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.linear(ember.ones(1, 2), ember.tensor([[1.0, 2.0]]), ember.tensor([0.5]))
        tensor([[3.5000]])
    """
    if _AUTOCAST[0]:  # CPU autocast: torch's lower-precision list
        input, weight, bias = autocast_lower(input, weight, bias)
    _require_tensor(input, "linear")
    _require_tensor(weight, "linear", "weight", 2)
    wt = weight.t()
    if input.dim() == 2:
        if bias is None:
            return input.mm(wt)
        return addmm(bias, input, wt)
    if bias is None:
        return input.matmul(wt)
    if input.dim() == 0:
        raise RuntimeError(
            "both arguments to linear need to be at least 1D, but they are 0D and 2D"
        )
    lead = tuple(input.shape[:-1])
    flat = input.reshape(-1, input.shape[-1])
    return addmm(bias, flat, wt).view(*lead, weight.shape[0])


# -- activations --------------------------------------------------------------------------------


def relu(input, inplace: bool = False):
    """``max(input, 0)`` elementwise.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.relu(ember.tensor([-1.0, 0.5]))
        tensor([0.0000, 0.5000])
    """
    _require_tensor(input, "relu")
    if inplace:
        return input.relu_()
    return _ew.relu(input)


def relu_(input):
    """In-place ``relu``: clamps ``input`` at 0 and returns it.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> x = ember.tensor([-1.0, 2.0])
        >>> _ = F.relu_(x)
        >>> x
        tensor([0., 2.])
    """
    return input.relu_()


def tanh(input):
    """Elementwise hyperbolic tangent.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.tanh(ember.tensor([-1.0, 0.0, 1.0]))
        tensor([-0.7616,  0.0000,  0.7616])
    """
    return _ew.tanh(input)


def sigmoid(input):
    """Elementwise logistic sigmoid ``1 / (1 + exp(-x))`` (stable for large ``|x|``).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.sigmoid(ember.tensor([-1.0, 0.0, 1.0]))
        tensor([0.2689, 0.5000, 0.7311])
    """
    return _ew.sigmoid(input)


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    _warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
        "dim=X as an argument.",
        UserWarning,
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel: int = 3, dtype=None):
    """``exp(x) / exp(x).sum(dim)``, computed stably.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.softmax(ember.tensor([0.0, 0.0]), dim=0)
        tensor([0.5000, 0.5000])
    """
    _require_tensor(input, "softmax")
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return _red.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel: int = 3, dtype=None):
    """``x - logsumexp(x, dim)`` (stable; ``LogSoftmaxBackward0``).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.log_softmax(ember.tensor([1e4, 0.0]), dim=0)
        tensor([     0., -10000.])
    """
    _require_tensor(input, "log_softmax")
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return _red.log_softmax(input, dim, dtype=dtype)


# -- dropout ----------------------------------------------------------------------------------


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero each element with probability ``p`` (from ember's global generator) and scale
    the rest by ``1 / (1 - p)``; the identity when ``training`` is False.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.dropout(ember.ones(3), 0.5, training=False)
        tensor([1., 1., 1.])
    """
    _require_tensor(input, "dropout")
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return _dropout_impl(input, p, training, False, False, inplace)


# -- embedding / one_hot --------------------------------------------------------------------------


def one_hot(tensor, num_classes: int = -1):
    """One-hot int64 encoding of an int64 ``tensor`` (``num_classes=-1``: ``max + 1``).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.one_hot(ember.tensor([0, 2]), 3)
        tensor([[1, 0, 0],
                [0, 0, 1]])
    """
    _require_tensor(tensor, "one_hot", "tensor")
    a = tensor._data
    if a.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:  # a shape from the values: ember.compile does not capture it
        if a.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return _one_hot(tensor, int(a.max()) + 1)
    return untracked_call(_one_hot, tensor, num_classes)


def _one_hot(tensor: Tensor, num_classes: int) -> Tensor:
    a = tensor._data
    if a.size:
        if a.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if a.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    out = np.zeros(a.shape + (num_classes,), dtype=np.int64)
    np.put_along_axis(out, a[..., None], 1, axis=-1)
    return _wrap(out)


# -- multi-head attention -----------------------------------------------------------------------

# A composition of the public functions: its projections and dropout call this module's
# dispatching ``linear`` and ``dropout`` (so modes and tracers see them), its padding and
# attention call the ops themselves (``_pad``, ``_sdpa``), as ever.


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask (True = masked out) as a float mask of 0 / -inf; float masks pass."""
    if mask is None:
        return None
    is_float = mask.dtype.is_floating_point
    if mask._data.dtype != np.bool_ and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        _warn(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type "
            "for both instead.",
            stacklevel=3,
        )
    if not is_float:  # True = masked out here: the other way round from sdpa's masks
        mask = _additive_mask(mask, to_numpy_dtype(target_type), true_takes_part=False)
    return mask


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads) -> bool:
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively"
            )
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                f"found {key_padding_mask.dim()}-D tensor instead"
            )
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                f"found {attn_mask.dim()}-D tensor instead"
            )
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively"
            )
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D "
                f"but found {key_padding_mask.dim()}-D tensor instead"
            )
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(
                    "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                    f"but found {attn_mask.dim()}-D tensor instead"
                )
            if attn_mask.dim() == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise AssertionError(
                        f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}"
                    )
        return False
    raise AssertionError(
        "query should be unbatched 2D or batched 3D tensor but received "
        f"{query.dim()}-D query tensor"
    )


def _in_projection_packed(q, k, v, w, b, linear):
    e = q.shape[-1]
    if k is v:
        if q is k:  # self-attention: one projection
            proj = linear(q, w, b)
            proj = proj.unflatten(-1, (3, e)).unsqueeze(0).transpose(0, -2).squeeze(-2)
            proj = proj.contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([e, e * 2])
        b_q, b_kv = (None, None) if b is None else b.split([e, e * 2])
        kv = linear(k, w_kv, b_kv).unflatten(-1, (2, e)).unsqueeze(0).transpose(0, -2)
        kv = kv.squeeze(-2).contiguous()
        return linear(q, w_q, b_q), kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q, b_k, b_v, linear):
    eq, ek, ev = q.shape[-1], k.shape[-1], v.shape[-1]
    for name, w, want in (
        ("query", w_q, (eq, eq)),
        ("key", w_k, (eq, ek)),
        ("value", w_v, (eq, ev)),
    ):
        if tuple(w.shape) != want:
            raise AssertionError(f"expecting {name} weights shape of {want}, but got {w.shape}")
    for name, b in (("query", b_q), ("key", b_k), ("value", b_v)):
        if b is not None and tuple(b.shape) != (eq,):
            raise AssertionError(f"expecting {name} bias shape of {(eq,)}, but got {b.shape}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def multi_head_attention_forward(
    query,
    key,
    value,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight,
    in_proj_bias,
    bias_k,
    bias_v,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight,
    out_proj_bias,
    training: bool = True,
    key_padding_mask=None,
    need_weights: bool = True,
    attn_mask=None,
    use_separate_proj_weight: bool = False,
    q_proj_weight=None,
    k_proj_weight=None,
    v_proj_weight=None,
    static_k=None,
    static_v=None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
):
    """The forward of :class:`nn.MultiheadAttention` on (L, N, E) / (L, E) inputs.

    Returns ``(attn_output, attn_weights)``; ``attn_weights`` is None unless
    ``need_weights`` (then averaged over heads unless ``average_attn_weights=False``).
    Bool masks are True where attention is *not* allowed.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> x = ember.ones(3, 1, 4)
        >>> w, b = ember.eye(4).repeat(3, 1), ember.zeros(12)
        >>> out, weights = F.multi_head_attention_forward(
        ...     x, x, x, 4, 2, w, b, None, None, False, 0.0, ember.eye(4), ember.zeros(4)
        ... )
        >>> out.shape, weights.shape
        (torch.Size([3, 1, 4]), torch.Size([1, 3, 3]))
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(
        key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask", query.dtype
    )
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
            "module method `generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # sdpa applies the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        if key_padding_mask is not None:
            is_causal = False  # the merged mask is no longer causal
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(
                f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                f"{value.shape[:2]}"
            )
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias, linear)
    else:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(
                    f"use_separate_proj_weight is True but {name}_proj_weight is None"
                )
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(
            query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v,
            linear,
        )  # fmt: skip

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                    f"{(tgt_len, src_len)}."
                )
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                    f"{(bsz * num_heads, tgt_len, src_len)}."
                )
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = _pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = _pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.view(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        _check_static(static_k, "static_k", bsz * num_heads, head_dim)
        k = static_k
    if static_v is None:
        v = v.view(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        _check_static(static_v, "static_v", bsz * num_heads, head_dim)
        v = static_v

    if add_zero_attn:
        zeros = _wrap(np.zeros((bsz * num_heads, 1, head_dim), dtype=k._data.dtype))
        k = cat([k, zeros], dim=1)
        v = cat([v, zeros.to(v.dtype)], dim=1)
        if attn_mask is not None:
            attn_mask = _pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = _pad(key_padding_mask, (0, 1))

    src_len = k.shape[1]
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(
                f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                f"{key_padding_mask.shape[0]}"
            )
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(
                f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                f"{key_padding_mask.shape[1]}"
            )
        key_padding_mask = (
            key_padding_mask.view(bsz, 1, 1, src_len)
            .expand(-1, num_heads, -1, -1)
            .reshape(bsz * num_heads, 1, src_len)
        )
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask

    if not training:
        dropout_p = 0.0

    if need_weights:
        e = q.shape[-1]
        q_scaled = q * math.sqrt(1.0 / float(e))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        if attn_mask is not None:
            weights = baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = bmm(q_scaled, k.transpose(-2, -1))
        weights = _softmax(weights, -1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = bmm(weights, v)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias)
        out = out.view(tgt_len, bsz, out.shape[1])
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            out = out.squeeze(1)
            weights = weights.squeeze(0)
        return out, weights

    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = _sdpa(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.shape[1])
    if not is_batched:
        out = out.squeeze(1)
    return out, None


def _check_static(t, name: str, n: int, head_dim: int) -> None:
    if t.shape[0] != n:
        raise AssertionError(f"expecting {name}.size(0) of {n}, but got {t.shape[0]}")
    if t.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {t.shape[2]}")


def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """Samples from the Gumbel-softmax distribution: ``softmax((logits + g) / tau)`` with
    ``g`` Gumbel noise; with ``hard=True`` the one-hot of its argmax in the forward, the
    soft sample's gradient in the backward (straight-through). ``eps`` is deprecated and
    unused, as in torch.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> y = F.gumbel_softmax(ember.zeros(2, 3), hard=True)
        >>> y.sum(-1)
        tensor([1., 1.])
    """
    if eps != 1e-10:
        _warn("`eps` parameter is deprecated and has no effect.", UserWarning, stacklevel=2)
    gumbels = -_ew.log(_creation.empty_like(logits).exponential_())
    gumbels = (logits + gumbels) / tau
    y_soft = gumbels.softmax(dim)
    if hard:
        index = y_soft.max(dim, keepdim=True)[1]
        y_hard = _creation.zeros_like(logits).scatter_(dim, index, 1.0)
        return y_hard - y_soft.detach() + y_soft
    return y_soft


# The public functions dispatch through __torch_function__ (ember._overrides), from here
# on: every module importing them gets the dispatching ones.
_overrides.install_namespace(globals(), __all__, "torch.nn.functional")
