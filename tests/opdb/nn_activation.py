"""nn.functional activations (``ember/nn/_activation.py``): every declared node, its in-place
variant and the compositions torch records (``softsign``, ``tanhshrink``, ``softmin``,
``Softmax2d``).

Inputs are scaled so that every piece of a piecewise activation is reached (``hardtanh``'s
clamped ends, ``hardswish``'s three regions, ...); the standard normal samples never sit
on a kink, where the derivative is a convention, not a limit. In-place entries run on
``x * 1`` (a non-leaf).
"""

from . import Op, S


def F(m):
    return m.nn.functional


OPS = [
    # -- smooth ----------------------------------------------------------------------------------
    Op("silu", lambda m, x: F(m).silu(x), (S(3, 4),)),
    Op("silu_inplace", lambda m, x: F(m).silu(x * 1, inplace=True), (S(3, 4),)),
    Op("mish", lambda m, x: F(m).mish(x * 3), (S(3, 4),)),
    Op("mish_inplace", lambda m, x: F(m).mish(x * 1, inplace=True), (S(3, 4),)),
    Op("elu", lambda m, x: F(m).elu(x), (S(3, 4),)),
    Op("elu_alpha", lambda m, x: F(m).elu(x, 0.4), (S(3, 4),)),
    # In place the rule reads the result: EluBackward1 / CeluBackward1.
    Op("elu_inplace", lambda m, x: F(m).elu(x * 1, 1.5, inplace=True), (S(3, 4),)),
    Op("elu_", lambda m, x: F(m).elu_(x * 1), (S(2, 5),)),
    Op("selu", lambda m, x: F(m).selu(x), (S(3, 4),)),
    Op("selu_inplace", lambda m, x: F(m).selu(x * 1, inplace=True), (S(3, 4),)),
    Op(
        "selu_",
        lambda m, x: F(m).selu_(x * 1),
        (
            S(
                4,
            ),
        ),
    ),
    Op("celu", lambda m, x: F(m).celu(x, 2.0), (S(3, 4),)),
    Op("celu_inplace", lambda m, x: F(m).celu(x * 1, 0.5, inplace=True), (S(3, 4),)),
    Op(
        "celu_",
        lambda m, x: F(m).celu_(x * 1),
        (
            S(
                4,
            ),
        ),
    ),
    Op("softplus", lambda m, x: F(m).softplus(x * 5), (S(3, 4),)),
    # beta * x above the threshold: the linear piece.
    Op("softplus_beta_threshold", lambda m, x: F(m).softplus(x, 2.0, 1.0), (S(3, 4),)),
    Op("logsigmoid", lambda m, x: F(m).logsigmoid(x * 4), (S(3, 4),)),
    Op("glu", lambda m, x: F(m).glu(x), (S(3, 4),)),
    Op("glu_dim0", lambda m, x: F(m).glu(x, 0), (S(4, 3),)),
    Op("glu_3d", lambda m, x: F(m).glu(x, 1), (S(2, 6, 2),)),
    # Compositions, recorded with torch's nodes (DivBackward0, SubBackward0, NegBackward0).
    Op("softsign", lambda m, x: F(m).softsign(x), (S(3, 4),)),
    Op("tanhshrink", lambda m, x: F(m).tanhshrink(x), (S(3, 4),)),
    Op("softmin", lambda m, x: F(m).softmin(x, dim=1), (S(3, 4),)),
    Op("softmin_dtype", lambda m, x: F(m).softmin(x, 0, dtype=m.float64), (S(3, 4),)),
    Op("softmax2d", lambda m, x: m.nn.Softmax2d()(x), (S(2, 3, 2, 2),)),
    Op("softmax2d_3d", lambda m, x: m.nn.Softmax2d()(x), (S(3, 2, 4),)),
    # -- piecewise linear ------------------------------------------------------------------------
    Op("hardtanh", lambda m, x: F(m).hardtanh(x * 2), (S(3, 4),)),
    Op("hardtanh_range", lambda m, x: F(m).hardtanh(x, -0.5, 1.5), (S(3, 4),)),
    Op("hardtanh_inplace", lambda m, x: F(m).hardtanh(x * 2, inplace=True), (S(3, 4),)),
    Op("hardtanh_", lambda m, x: F(m).hardtanh_(x * 1, -0.3, 0.6), (S(3, 4),)),
    Op("relu6", lambda m, x: F(m).relu6(x * 5), (S(3, 4),)),
    Op("relu6_inplace", lambda m, x: F(m).relu6(x * 5, inplace=True), (S(3, 4),)),
    Op("hardswish", lambda m, x: F(m).hardswish(x * 3), (S(3, 4),)),
    Op("hardswish_inplace", lambda m, x: F(m).hardswish(x * 3, inplace=True), (S(3, 4),)),
    # torch raises "derivative for aten::hardsigmoid_backward is not implemented" on a double
    # backward: no reference (ember's second derivative is the exact one, 0).
    Op("hardsigmoid", lambda m, x: F(m).hardsigmoid(x * 4), (S(3, 4),), double=False),
    Op(
        "hardsigmoid_inplace",
        lambda m, x: F(m).hardsigmoid(x * 4, inplace=True),
        (S(3, 4),),
        double=False,  # as above
    ),
    Op("hardshrink", lambda m, x: F(m).hardshrink(x), (S(3, 4),)),
    Op("hardshrink_lambd", lambda m, x: F(m).hardshrink(x, 1.0), (S(3, 4),)),
    Op("softshrink", lambda m, x: F(m).softshrink(x), (S(3, 4),)),
    Op("softshrink_lambd", lambda m, x: F(m).softshrink(x, 0.2), (S(3, 4),)),
    Op("threshold", lambda m, x: F(m).threshold(x, 0.1, 2.0), (S(3, 4),)),
    # In place: ThresholdBackward1.
    Op("threshold_inplace", lambda m, x: F(m).threshold(x * 1, 0.1, -2.0, True), (S(3, 4),)),
    Op("threshold_", lambda m, x: F(m).threshold_(x * 1, -0.2, 0.5), (S(3, 4),)),
    # -- learnt and random slopes ----------------------------------------------------------------
    Op("prelu", lambda m, x, w: F(m).prelu(x, w), (S(2, 4, 3), S(4))),
    Op("prelu_2d", lambda m, x, w: F(m).prelu(x, w), (S(3, 4), S(4))),
    Op("prelu_shared", lambda m, x, w: F(m).prelu(x, w), (S(2, 4, 3), S(1))),
    Op("prelu_1d", lambda m, x, w: F(m).prelu(x, w), (S(5), S(1))),
    Op("prelu_scalar", lambda m, x, w: F(m).prelu(x, w), (S(), S(1))),
    Op("prelu_0d_weight", lambda m, x, w: F(m).prelu(x, w), (S(3, 4), S())),
    Op("rrelu_eval", lambda m, x: F(m).rrelu(x), (S(3, 4),)),
    # Training with lower == upper: every slope is lower (deterministic, as in torch).
    Op("rrelu_train", lambda m, x: F(m).rrelu(x, 0.2, 0.2, training=True), (S(3, 4),)),
    # In place: RreluWithNoiseBackward1, which has no forward mode in torch.
    Op(
        "rrelu_inplace",
        lambda m, x: F(m).rrelu(x * 1, 0.1, 0.3, inplace=True),
        (S(3, 4),),
        forward=False,
    ),
    Op("rrelu_", lambda m, x: F(m).rrelu_(x * 1, 0.3, 0.3, True), (S(3, 4),), forward=False),
]
