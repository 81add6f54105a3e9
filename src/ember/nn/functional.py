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

from .. import _overrides
from .._aten import elementwise as _ew
from .._aten import reduction as _red
from .._aten._core import (
    ELEMENTWISE,
    LINEAR,
    QUIET,
    defop,
    is_raw,
    quiet_reset,
    quiet_set,
    record,
    require_tensor,
)
from .._aten.linalg import addmm
from .._dtype import scalar_name
from .._mode import autocast_active as _AUTOCAST
from .._mode import autocast_lower
from .._overrides import warn as _warn
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..autograd.recording import check_values, untracked_call
from ..autograd.views import apply_inplace
from . import _activation
from ._activation import *  # noqa: F403  (every activation, listed once in its __all__)
from ._attention import (
    multi_head_attention_forward,
    scaled_dot_product_attention,
)
from ._bag import embedding_bag
from ._conv import (
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
from ._ctc import ctc_loss
from ._interp import interpolate
from ._layers import (
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
from ._loss import (
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
from ._norm import (
    batch_norm,
    group_norm,
    instance_norm,
    layer_norm,
    local_response_norm,
    normalize,
    rms_norm,
)

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


def _select(cond, a, b):
    """``where(cond, a, b)`` on arrays, or recorded on Tensors (a rule's two worlds)."""
    return np.where(cond, a, b) if is_raw(a) else _ew.where(cond, a, b)


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
    """In-place ``relu``."""
    return input.relu_()


LeakyReluBackward0 = defop(
    "LeakyReluBackward0",
    params=("negative_slope",),
    forward=lambda a, negative_slope: np.where(a > 0, a, a * negative_slope),
    vjp={"self": lambda g, self, negative_slope: _select(self > 0, g, g * negative_slope)},
    jvp=ELEMENTWISE,
)


def _leaky_relu_inplace_rule(g, result, negative_slope):
    if negative_slope < 0:
        raise RuntimeError(
            "In-place leakyReLu backward calculation is triggered with a negative slope which is "
            "not supported. This is caused by calling in-place forward function with a negative "
            "slope, please call out-of-place version instead. File an issue at "
            "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
            "backward calculation with negative slope"
        )
    return _select(result > 0, g, g * negative_slope)


# leaky_relu_: the rule reads the result (the input is overwritten).
LeakyReluBackward1 = defop(
    "LeakyReluBackward1",
    params=("negative_slope",),
    forward=LeakyReluBackward0.forward,
    vjp={"self": _leaky_relu_inplace_rule},
    jvp=ELEMENTWISE,
)


def _leaky_relu(input, negative_slope=0.01, cls=LeakyReluBackward0):
    a = input._data
    if a.dtype.kind not in "fV":
        raise NotImplementedError(
            f"\"leaky_relu_cpu\" not implemented for '{scalar_name(a.dtype)}'"
        )
    out = np.where(a > 0, a, a * negative_slope)
    if out.dtype != a.dtype:
        out = out.astype(a.dtype)
    return record(cls, out, (input,), (negative_slope,))


def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):
    """``x`` where positive, ``negative_slope * x`` elsewhere.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.leaky_relu(ember.tensor([-1.0, 2.0]), 0.1)
        tensor([-0.1000,  2.0000])
    """
    _require_tensor(input, "leaky_relu")
    if inplace:
        return leaky_relu_(input, negative_slope)
    return _leaky_relu(input, negative_slope)


def leaky_relu_(input, negative_slope: float = 0.01):
    """In-place ``leaky_relu`` (``LeakyReluBackward1``: its rule reads the result)."""
    return apply_inplace(input, _leaky_relu, negative_slope, LeakyReluBackward1, copy_old=False)


_SQRT_2 = math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_KAPPA = 0.044715


def _gelu_array(a: np.ndarray, approximate: str):
    """``(gelu(a), aux)``: ``aux`` is the normal CDF of ``a`` (or the tanh of the
    approximation), which the derivative reuses instead of evaluating erf again."""
    if a.dtype.kind == "V":  # bfloat16: computed in float32, rounded once (as torch)
        out, aux = _gelu_array(a.astype(np.float32), approximate)
        return out.astype(a.dtype), aux
    if approximate == "tanh":
        aux = np.tanh(_SQRT_2_OVER_PI * (a + _KAPPA * a * a * a))
    else:
        aux = _in_dtype(0.5 * (1 + _ew.erf_array(a / _SQRT_2)), a.dtype)
    out = 0.5 * a * (1 + aux) if approximate == "tanh" else a * aux
    return _in_dtype(out, a.dtype), aux


def _in_dtype(x, dtype):
    """``x`` as an array of ``dtype`` (NumPy returns scalars for 0-d operands); written with
    ``astype`` so that the compiler's tracer can follow it."""
    if isinstance(x, (np.generic, float, int)):
        return np.asarray(x, dtype=dtype)
    return x.astype(dtype, copy=False)


def _gelu_rule(g, self, aux, approximate):
    """``g * gelu'(x)``: from the saved CDF (or tanh) on arrays, ember ops on Tensors."""
    x = self
    if approximate == "tanh":
        t = aux if is_raw(x) else _ew.tanh((x + x * x * x * _KAPPA) * _SQRT_2_OVER_PI)
        d = (t + 1) * 0.5 + x * 0.5 * (1 - t * t) * _SQRT_2_OVER_PI * (x * x * (3 * _KAPPA) + 1)
    elif is_raw(x):
        d = aux + x * np.exp(-0.5 * x * x) * _INV_SQRT_2PI
    else:
        d = (_ew.erf(x / _SQRT_2) + 1) * 0.5 + x * _ew.exp(x * x * -0.5) * _INV_SQRT_2PI
    res = g * d
    if is_raw(res) and res.dtype != g.dtype:
        res = res.astype(g.dtype)
    return res


GeluBackward0 = defop(
    "GeluBackward0",
    params=("approximate",),
    saves=("aux",),
    forward=_gelu_array,
    vjp={"self": _gelu_rule},
    jvp=ELEMENTWISE,
)


def gelu(input, approximate: str = "none"):
    """Gaussian error linear unit ``x * Phi(x)``; ``approximate='tanh'`` uses
    ``0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.gelu(ember.tensor([-1.0, 0.0, 1.0]))
        tensor([-0.1587,  0.0000,  0.8413])
    """
    _require_tensor(input, "gelu")
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    a = input._data
    if a.dtype.kind not in "fV":
        raise NotImplementedError(
            f"\"GeluKernelImpl\" not implemented for '{scalar_name(a.dtype)}'"
        )
    token = quiet_set(QUIET)
    try:
        out, aux = _gelu_array(a, approximate)
    finally:
        quiet_reset(token)
    return record(GeluBackward0, out, (input,), (approximate,), (aux,))


def tanh(input):
    """Elementwise hyperbolic tangent."""
    return _ew.tanh(input)


def sigmoid(input):
    """Elementwise logistic sigmoid ``1 / (1 + exp(-x))`` (stable for large ``|x|``)."""
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
    _require_tensor(input, "embedding")
    _require_tensor(weight, "embedding", "weight", 2)
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
        counts = np.bincount(idx.reshape(-1), minlength=num)
        scale = (1.0 / counts[idx]).astype(weight._data.dtype)
    # The input itself (with its version), not a copy: torch saves the indices tensor and
    # raises if it changes in place before backward; compiled code reads it at each call.
    indices = (input, input._vc[0]) if input._vc is not None else input
    params = (indices, num, padding_idx, scale)
    return record(EmbeddingBackward0, out, (weight,), params)


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


# The public functions dispatch through __torch_function__ (ember._overrides), from here
# on: every module importing them gets the dispatching ones.
_overrides.install_namespace(globals(), __all__, "torch.nn.functional")
