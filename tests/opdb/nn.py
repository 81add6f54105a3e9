"""nn.functional ops: layers, activations, pooling, normalization, losses.

Targets, indices, class weights and running statistics are constants built inside each
entry (float ones in the input's dtype, so the float32 checks hold); every tensor input is
differentiated.
"""

import numpy as np

from . import Op, P, S, U


def F(m):
    return m.nn.functional


def _const(x, values):
    """A constant float tensor in ``x``'s dtype."""
    return x.new_tensor(np.asarray(values, dtype=np.float64))


def _long(m, values):
    return m.tensor(np.asarray(values, dtype=np.int64))


# Class targets with an ignored entry (-100), for (5, 4) inputs.
IDX = [0, 3, 1, 2, -100]
IDX_ALL = [0, 3, 1, 2, 1]
IDX2D = np.random.default_rng(0).integers(0, 3, (2, 4, 5))
IDX3D = np.random.default_rng(1).integers(0, 3, (2, 3, 2, 2))
IDX_L = np.array([[0, 2, 1, 1], [2, 0, 0, 1]])  # (N, L) for (N, C, L) inputs
IDX2D[0, 1, 2] = -100
CLASS_W = [0.5, 1.0, 2.0, 0.3]
EMB_IDX = [[0, 2, 1], [1, 1, 3]]


def _bn(m, x, w, b, training, momentum=0.1):
    rm = _const(x, [0.1, -0.2, 0.3])
    rv = _const(x, [1.5, 0.5, 2.0])
    return F(m).batch_norm(x, rm, rv, w, b, training=training, momentum=momentum)


def _bce_gradient(m, p, t, reduction, weight=None):
    """d(binary_cross_entropy)/d(input), recorded (create_graph), as a function of both."""
    recording = m.is_grad_enabled()
    with m.enable_grad():  # the generic tests also evaluate entries under no_grad
        if not p.requires_grad:  # inputs without a graph (values, forward mode): p is a leaf
            p.requires_grad_()
        loss = F(m).binary_cross_entropy(p, t, weight=weight, reduction=reduction)
        if reduction == "none":
            loss = (loss * _const(p, [1.0, -0.5, 2.0, 0.25])).sum()
        g = m.autograd.grad(loss, p, create_graph=True)[0]
    return g if recording else g.detach()


OPS = [
    # -- linear and activations --------------------------------------------------------------
    Op("linear", lambda m, x, w, b: F(m).linear(x, w, b), (S(3, 4), S(5, 4), S(5))),
    Op("linear_nobias", lambda m, x, w: F(m).linear(x, w), (S(3, 4), S(5, 4))),
    Op("linear_3d", lambda m, x, w, b: F(m).linear(x, w, b), (S(2, 3, 4), S(5, 4), S(5))),
    Op("linear_1d", lambda m, x, w, b: F(m).linear(x, w, b), (S(4), S(5, 4), S(5))),
    Op("F.relu", lambda m, x: F(m).relu(x), (S(3, 4),)),
    Op("F.relu_inplace", lambda m, x: F(m).relu(x * 1, inplace=True), (S(3, 4),)),
    Op("leaky_relu", lambda m, x: F(m).leaky_relu(x), (S(3, 4),)),
    Op("leaky_relu_slope", lambda m, x: F(m).leaky_relu(x, 0.2), (S(3, 4),)),
    Op("leaky_relu_negative_slope", lambda m, x: F(m).leaky_relu(x, -0.5), (S(3, 4),)),
    # In place the rule reads the result: LeakyReluBackward1.
    Op("leaky_relu_", lambda m, x: F(m).leaky_relu(x * 1, 0.3, inplace=True), (S(3, 4),)),
    Op("leaky_relu_method_", lambda m, x: F(m).leaky_relu_(x * 1, 0.1), (S(2, 5),)),
    Op("gelu", lambda m, x: F(m).gelu(x), (S(3, 4),)),
    Op("gelu_tanh", lambda m, x: F(m).gelu(x, approximate="tanh"), (S(3, 4),)),
    Op("F.tanh", lambda m, x: F(m).tanh(x), (S(3, 4),)),
    Op("F.sigmoid", lambda m, x: F(m).sigmoid(x), (S(3, 4),)),
    Op("F.softmax", lambda m, x: F(m).softmax(x, dim=1), (S(3, 4),)),
    Op("F.log_softmax", lambda m, x: F(m).log_softmax(x, dim=0), (S(3, 4),)),
    # p = 1: every element dropped (deterministic, unlike other p).
    Op("dropout_all", lambda m, x: F(m).dropout(x, 1.0), (S(3, 4),)),
    Op("dropout_eval", lambda m, x: F(m).dropout(x * 1, 0.5, training=False), (S(3, 4),)),
    # -- embedding ----------------------------------------------------------------------------
    Op("embedding", lambda m, w: F(m).embedding(_long(m, EMB_IDX), w), (S(4, 3),)),
    Op(
        "embedding_padding_idx",
        lambda m, w: F(m).embedding(_long(m, [3, 1, 0, 2]), w, padding_idx=-2),
        (S(4, 3),),
        # The padding row gets no gradient, yet the output depends on it (torch's choice):
        # not the derivative of the function, compared with torch in tests/nn.
        grad=False,
    ),
    Op(
        "embedding_scale_grad_by_freq",
        lambda m, w: F(m).embedding(_long(m, EMB_IDX), w, scale_grad_by_freq=True),
        (S(4, 3),),
        grad=False,  # gradients divided by the indices' counts: not the derivative either
    ),
    # -- convolution ----------------------------------------------------------------------------
    Op(
        "conv2d",
        lambda m, x, w, b: F(m).conv2d(x, w, b, padding=1),
        (S(2, 3, 5, 5), S(4, 3, 3, 3), S(4)),
    ),
    Op(
        "conv2d_stride_dilation_groups",
        lambda m, x, w: F(m).conv2d(x, w, stride=2, dilation=(1, 2), groups=2),
        (S(2, 4, 7, 7), S(6, 2, 3, 2)),
    ),
    Op(
        "conv2d_stride_padding_pairs",
        lambda m, x, w, b: F(m).conv2d(x, w, b, stride=(2, 1), padding=(1, 0)),
        (S(1, 2, 6, 5), S(3, 2, 2, 3), S(3)),
    ),
    Op(
        "conv2d_same",
        lambda m, x, w: F(m).conv2d(x, w, padding="same", dilation=2),
        (S(1, 2, 6, 5), S(3, 2, 3, 2)),
    ),
    Op(
        "conv2d_valid",
        lambda m, x, w: F(m).conv2d(x, w, padding="valid"),
        (S(2, 1, 4, 4), S(2, 1, 2, 2)),
    ),
    Op("conv2d_unbatched", lambda m, x, w: F(m).conv2d(x, w), (S(2, 4, 4), S(3, 2, 2, 2))),
    # -- unfold / fold --------------------------------------------------------------------------
    Op(
        "unfold",
        lambda m, x: F(m).unfold(x, 2, dilation=1, padding=1, stride=2),
        (S(2, 3, 5, 5),),
    ),
    Op("unfold_dilation", lambda m, x: F(m).unfold(x, (2, 3), dilation=2), (S(1, 2, 6, 7),)),
    Op("unfold_unbatched", lambda m, x: F(m).unfold(x, 3, padding=1), (S(2, 4, 4),)),
    Op("fold", lambda m, c: F(m).fold(c, (4, 5), (2, 3), padding=(1, 0)), (S(2, 12, 15),)),
    Op(
        "fold_stride_dilation",
        lambda m, c: F(m).fold(c, (5, 5), 2, dilation=2, stride=2),
        (S(1, 8, 4),),
    ),
    Op("fold_unbatched", lambda m, c: F(m).fold(c, (3, 3), 2), (S(8, 4),)),
    # -- pooling --------------------------------------------------------------------------------
    Op("max_pool2d", lambda m, x: F(m).max_pool2d(x, 2), (S(2, 3, 6, 6),)),
    Op(
        "max_pool2d_pad_ceil",
        lambda m, x: F(m).max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
        (S(2, 2, 6, 7),),
    ),
    Op(
        "max_pool2d_dilation",
        lambda m, x: F(m).max_pool2d(x, (2, 3), stride=1, dilation=(2, 1)),
        (S(1, 2, 6, 6),),
    ),
    Op("max_pool2d_unbatched", lambda m, x: F(m).max_pool2d(x, (2, 3)), (S(2, 5, 6),)),
    Op(
        "max_pool2d_indices",
        lambda m, x: tuple(F(m).max_pool2d(x, 2, stride=1, padding=1, return_indices=True)),
        (S(1, 2, 4, 4),),
    ),
    Op("avg_pool2d", lambda m, x: F(m).avg_pool2d(x, 3, stride=2, padding=1), (S(2, 3, 6, 6),)),
    Op(
        "avg_pool2d_no_pad_count_ceil",
        lambda m, x: F(m).avg_pool2d(x, 2, padding=1, ceil_mode=True, count_include_pad=False),
        (S(1, 2, 5, 5),),
    ),
    Op(
        "avg_pool2d_divisor",
        lambda m, x: F(m).avg_pool2d(x, (2, 3), stride=(1, 2), divisor_override=4),
        (S(1, 2, 4, 6),),
    ),
    Op("avg_pool2d_unbatched", lambda m, x: F(m).avg_pool2d(x, 2), (S(2, 4, 5),)),
    # -- padding ----------------------------------------------------------------------------------
    Op("pad_constant", lambda m, x: F(m).pad(x, (1, 2, 0, 1), value=0.5), (S(2, 3, 4),)),
    Op("pad_crop", lambda m, x: F(m).pad(x, (-1, 2, 1, -2)), (S(2, 3, 4),)),
    Op("pad_reflect_1d", lambda m, x: F(m).pad(x, (1, 2), mode="reflect"), (S(2, 3, 4),)),
    Op("pad_reflect_1d_unbatched", lambda m, x: F(m).pad(x, (2, 0), mode="reflect"), (S(3, 4),)),
    Op("pad_reflect_crop", lambda m, x: F(m).pad(x, (-1, 2), mode="reflect"), (S(2, 3, 4),)),
    Op(
        "pad_reflect_2d",
        lambda m, x: F(m).pad(x, (2, 1, 1, 2), mode="reflect"),
        (S(1, 2, 4, 5),),
    ),
    Op(
        "pad_reflect_3d",
        lambda m, x: F(m).pad(x, (1, 1, 2, 1, 1, 0), mode="reflect"),
        (S(1, 2, 3, 4, 3),),
    ),
    Op("pad_replicate_1d", lambda m, x: F(m).pad(x, (3, 1), mode="replicate"), (S(2, 3, 4),)),
    Op(
        "pad_replicate_2d",
        lambda m, x: F(m).pad(x, (1, 3, -1, 2), mode="replicate"),
        (S(2, 3, 4),),
    ),
    Op(
        "pad_replicate_3d",
        lambda m, x: F(m).pad(x, (1, 0, 0, 2, 2, 1), mode="replicate"),
        (S(2, 2, 3, 3),),
    ),
    # circular padding is torch's chain of copies into slices of a new tensor (CopySlices)
    Op("pad_circular_1d", lambda m, x: F(m).pad(x, (1, 2), mode="circular"), (S(2, 3, 4),)),
    Op(
        "pad_circular_2d",
        lambda m, x: F(m).pad(x, (2, -1, 0, 1), mode="circular"),
        (S(1, 2, 3, 4),),
    ),
    Op(
        "pad_circular_3d",
        lambda m, x: F(m).pad(x, (1, 1, 0, 2, 1, 0), mode="circular"),
        (S(1, 2, 2, 3, 3),),
    ),
    # -- normalization ----------------------------------------------------------------------------
    Op(
        "batch_norm_train",
        lambda m, x, w, b: _bn(m, x, w, b, True),
        (S(4, 3, 2, 2), S(3), S(3)),
    ),
    Op("batch_norm_eval", lambda m, x, w, b: _bn(m, x, w, b, False), (S(4, 3, 2, 2), S(3), S(3))),
    Op(
        "batch_norm_no_affine_no_stats",
        lambda m, x: F(m).batch_norm(x, None, None, training=True),
        (S(5, 3),),
    ),
    Op("batch_norm_1d_weight", lambda m, x, w: _bn(m, x, w, None, True), (S(4, 3, 5), S(3))),
    Op(
        "layer_norm",
        lambda m, x, w, b: F(m).layer_norm(x, (3, 4), w, b),
        (S(2, 3, 4), S(3, 4), S(3, 4)),
    ),
    Op("layer_norm_plain", lambda m, x: F(m).layer_norm(x, (4,), eps=1e-3), (S(3, 4),)),
    Op("layer_norm_weight", lambda m, x, w: F(m).layer_norm(x, [4], w), (S(2, 3, 4), S(4))),
    Op(
        "layer_norm_bias",
        lambda m, x, b: F(m).layer_norm(x, [4], bias=b),
        (S(2, 3, 4), S(4)),
        double=False,  # torch's double backward fails without a weight (an undefined Tensor)
    ),
    # -- losses -----------------------------------------------------------------------------------
    Op("mse_loss", lambda m, x, y: F(m).mse_loss(x, y), (S(3, 4), S(3, 4))),
    Op("mse_loss_sum", lambda m, x, y: F(m).mse_loss(x, y, reduction="sum"), (S(3, 4), S(3, 4))),
    Op("mse_loss_none", lambda m, x, y: F(m).mse_loss(x, y, reduction="none"), (S(3, 4), S(3, 4))),
    Op("mse_loss_broadcast", lambda m, x, y: F(m).mse_loss(x, y), (S(3, 4), S(4))),
    Op("mse_loss_same", lambda m, x: F(m).mse_loss(x, x.flip(0)), (S(4),)),
    Op(
        "mse_loss_weight",
        lambda m, x, y, w: F(m).mse_loss(x, y, weight=w),
        (S(3, 4), S(3, 4), P(3, 4)),
    ),
    Op("l1_loss", lambda m, x, y: F(m).l1_loss(x, y), (S(3, 4), S(3, 4))),
    Op("l1_loss_none", lambda m, x, y: F(m).l1_loss(x, y, reduction="none"), (S(3, 4), S(3, 4))),
    Op(
        "l1_loss_weight_sum",
        lambda m, x, y, w: F(m).l1_loss(x, y, reduction="sum", weight=w),
        (S(3, 4), S(3, 4), P(3, 4)),
    ),
    Op("nll_loss", lambda m, x: F(m).nll_loss(x, _long(m, IDX)), (S(5, 4),)),
    Op(
        "nll_loss_weight_sum",
        lambda m, x: F(m).nll_loss(x, _long(m, IDX), weight=_const(x, CLASS_W), reduction="sum"),
        (S(5, 4),),
    ),
    Op(
        "nll_loss_weight_mean",
        lambda m, x: F(m).nll_loss(x, _long(m, IDX_ALL), weight=_const(x, CLASS_W)),
        (S(5, 4),),
    ),
    Op("nll_loss_none", lambda m, x: F(m).nll_loss(x, _long(m, IDX), reduction="none"), (S(5, 4),)),
    Op(
        "nll_loss_ignore_index",
        lambda m, x: F(m).nll_loss(x, _long(m, IDX_ALL), ignore_index=1),
        (S(5, 4),),
    ),
    Op("nll_loss_1d", lambda m, x: F(m).nll_loss(x, _long(m, 2)), (S(4),)),
    Op(
        "nll_loss_1d_batch_of_one",
        lambda m, x: F(m).nll_loss(x, _long(m, [1])),
        (S(4),),
        torch=False,  # torch's backward fails here ("size mismatch (got input: [4], target: [1])")
    ),
    Op("nll_loss2d", lambda m, x: F(m).nll_loss(x, _long(m, IDX2D)), (S(2, 3, 4, 5),)),
    Op(
        "nll_loss2d_none_weight",
        lambda m, x: F(m).nll_loss(
            x, _long(m, IDX2D), weight=_const(x, CLASS_W[:3]), reduction="none"
        ),
        (S(2, 3, 4, 5),),
    ),
    Op("nll_loss_3d", lambda m, x: F(m).nll_loss(x, _long(m, IDX_L)), (S(2, 3, 4),)),
    Op(
        "nll_loss_5d_none",
        lambda m, x: F(m).nll_loss(x, _long(m, IDX3D), reduction="none"),
        (S(2, 3, 3, 2, 2),),
    ),
    Op("cross_entropy", lambda m, x: F(m).cross_entropy(x, _long(m, IDX)), (S(5, 4),)),
    Op(
        "cross_entropy_weight_ignore",
        lambda m, x: F(m).cross_entropy(x, _long(m, IDX_ALL), _const(x, CLASS_W), ignore_index=3),
        (S(5, 4),),
    ),
    Op(
        "cross_entropy_sum",
        lambda m, x: F(m).cross_entropy(x, _long(m, IDX), reduction="sum"),
        (S(5, 4),),
    ),
    Op("cross_entropy_1d", lambda m, x: F(m).cross_entropy(x, _long(m, 3)), (S(4),)),
    Op("cross_entropy_3d", lambda m, x: F(m).cross_entropy(x, _long(m, IDX_L)), (S(2, 3, 4),)),
    Op(
        "cross_entropy_smoothing",
        lambda m, x: F(m).cross_entropy(x, _long(m, IDX), label_smoothing=0.2),
        (S(5, 4),),
    ),
    Op(
        "cross_entropy_smoothing_weight",
        lambda m, x: F(m).cross_entropy(
            x, _long(m, IDX), weight=_const(x, CLASS_W), label_smoothing=0.1
        ),
        (S(5, 4),),
    ),
    Op(
        "cross_entropy_smoothing_sum",
        lambda m, x: F(m).cross_entropy(x, _long(m, IDX), label_smoothing=0.3, reduction="sum"),
        (S(5, 4),),
    ),
    Op(
        "cross_entropy_smoothing_none",
        lambda m, x: F(m).cross_entropy(
            x, _long(m, IDX_L), weight=_const(x, CLASS_W[:3]), label_smoothing=0.1, reduction="none"
        ),
        (S(2, 3, 4),),
    ),
    Op("cross_entropy_probs", lambda m, x, p: F(m).cross_entropy(x, p), (S(3, 4), U(3, 4))),
    Op(
        "cross_entropy_probs_smoothing_weight",
        lambda m, x, p: F(m).cross_entropy(x, p, _const(x, CLASS_W), label_smoothing=0.1),
        (S(3, 4), U(3, 4)),
    ),
    Op(
        "cross_entropy_probs_none",
        lambda m, x, p: F(m).cross_entropy(x, p, reduction="none"),
        (S(2, 3, 4), U(2, 3, 4)),
    ),
    Op(
        "cross_entropy_probs_sum_1d",
        lambda m, x, p: F(m).cross_entropy(x, p, reduction="sum"),
        (S(4), U(4)),
    ),
    Op(
        "binary_cross_entropy",
        lambda m, x, y: F(m).binary_cross_entropy(m.sigmoid(x), m.sigmoid(y)),
        (S(3, 4), S(3, 4)),
    ),
    # The gradient as a function (torch's BinaryCrossEntropyBackwardBackward0 node): its
    # derivatives are the loss's second derivatives, with torch's epsilons.
    Op(
        "binary_cross_entropy_gradient",
        lambda m, x, y: _bce_gradient(m, m.sigmoid(x), m.sigmoid(y), "mean"),
        (S(3, 4), S(3, 4)),
    ),
    Op(
        "binary_cross_entropy_gradient_weight_none",
        lambda m, x, y: _bce_gradient(
            m, m.sigmoid(x), m.sigmoid(y), "none", _const(x, [0.5, 1.0, 1.5, 2.0])
        ),
        (S(3, 4), S(3, 4)),
    ),
    Op(
        "binary_cross_entropy_weight_sum",
        lambda m, x, y: F(m).binary_cross_entropy(
            m.sigmoid(x), m.sigmoid(y), weight=_const(x, [0.5, 1.0, 1.5, 2.0]), reduction="sum"
        ),
        (S(3, 4), S(3, 4)),
    ),
    Op(
        "binary_cross_entropy_none",
        lambda m, x, y: F(m).binary_cross_entropy(m.sigmoid(x), m.sigmoid(y), reduction="none"),
        (S(3, 4), S(3, 4)),
    ),
    Op(
        "bce_with_logits",
        lambda m, x, y: F(m).binary_cross_entropy_with_logits(x, y),
        (S(3, 4), U(3, 4)),
    ),
    Op(
        "bce_with_logits_none",
        lambda m, x, y: F(m).binary_cross_entropy_with_logits(x, y, reduction="none"),
        (S(3, 4), U(3, 4)),
    ),
    Op(
        "bce_with_logits_weight_pos_weight_sum",
        lambda m, x, y: F(m).binary_cross_entropy_with_logits(
            x,
            y,
            weight=_const(x, [0.5, 1.0, 2.0, 1.5]),
            pos_weight=_const(x, [0.5, 1.0, 2.0, 3.0]),
            reduction="sum",
        ),
        (S(3, 4), U(3, 4)),
    ),
    # -- a small network ----------------------------------------------------------------------
    Op(
        "conv_net",
        lambda m, x, w1, b1, g, beta, w2: F(m).cross_entropy(
            F(m)
            .avg_pool2d(
                F(m).leaky_relu(
                    F(m).gelu(
                        F(m).max_pool2d(
                            F(m).batch_norm(
                                F(m).conv2d(x, w1, b1, padding=1), None, None, g, beta, True
                            ),
                            2,
                        )
                    ),
                    0.1,
                ),
                2,
            )
            .flatten(1)
            @ w2,
            _long(m, [0, 2, 1]),
        ),
        (S(3, 2, 8, 8), S(4, 2, 3, 3), S(4), P(4), S(4), S(16, 3)),
    ),
]
