"""nn ops of the second batch: distances, bilinear, shuffles, group / instance / RMS /
local-response norms and the margin, KL, Huber, Poisson and Gaussian losses.

Targets and class indices are constants built inside each entry (float ones in the input's
dtype); margins and Huber thresholds are chosen so no difference sits on a kink.
"""

import numpy as np

from . import Op, P, S


def F(m):
    return m.nn.functional


def _const(x, values):
    return x.new_tensor(np.asarray(values, dtype=np.float64))


def _long(m, values):
    return m.tensor(np.asarray(values, dtype=np.int64))


_R = np.random.default_rng(5)
SIGNS = np.where(_R.standard_normal((4, 5)) > 0, 1.0, -1.0)
SIGNS_ROW = np.array([1.0, -1.0, 1.0, -1.0])
PROBS = _R.uniform(0.1, 1.0, (4, 5))
TARGET = _R.standard_normal((4, 5))
MM_IDX = [0, 3, 1, 4]
ML_IDX = [[0, 3, -1, 1, 1], [4, -1, 0, 0, 0], [1, 1, 2, -1, 3], [2, 0, 1, 4, 3]]
MM_W = [0.5, 1.0, 2.0, 0.3, 1.5]


def _cdist(m, x, y, p, **kw):
    if m.__name__ == "torch":
        return m.cdist(x, y, p, **kw)
    return m._aten.nn_layers.cdist(x, y, p, **kw)


OPS = [
    # -- distances -------------------------------------------------------------------------
    Op("cosine_similarity", lambda m, x, y: F(m).cosine_similarity(x, y), (S(4, 5), S(4, 5))),
    Op(
        "cosine_similarity_broadcast",
        lambda m, x, y: F(m).cosine_similarity(x, y, dim=-1, eps=1e-6),
        (S(3, 4, 5), S(4, 5)),
    ),
    # ``* 1``: ember's Tensor.norm records LinalgVectorNormBackward0 where torch records
    # NormBackward1 (_aten/reduction.py); the values and derivatives are compared all the same.
    Op(
        "pairwise_distance",
        lambda m, x, y: F(m).pairwise_distance(x, y) * 1,
        (S(4, 5), S(4, 5)),
    ),
    Op(
        "pairwise_distance_p3_keepdim",
        lambda m, x, y: F(m).pairwise_distance(x, y, 3.0, keepdim=True) * 1,
        (S(4, 5), S(4, 5)),
    ),
    # torch has no forward mode for cdist nor a double backward (_cdist_backward is not
    # differentiable): those are checked on ember alone by the torch=False entries.
    Op(
        "cdist",
        lambda m, x, y: _cdist(m, x, y, 2.0),
        (S(2, 4, 3), S(2, 5, 3)),
        forward=False,
        double=False,
    ),
    Op(
        "cdist_p1_broadcast",
        lambda m, x, y: _cdist(m, x, y, 1.0),
        (S(2, 1, 4, 3), S(3, 5, 3)),
        forward=False,
        double=False,
    ),
    Op(
        "cdist_p1.5",
        lambda m, x, y: _cdist(m, x, y, 1.5),
        (S(4, 3), S(5, 3)),
        forward=False,
        double=False,
    ),
    Op(
        "cdist_p3",
        lambda m, x, y: _cdist(m, x, y, 3.0),
        (S(4, 3), S(5, 3)),
        forward=False,
        double=False,
    ),
    # (the generic double-backward check without torch differentiates under no_grad, so the
    # torch=False entries check forward mode here; tests/nn/test_nn_family2.py checks their
    # second derivatives against central differences)
    Op(
        "cdist_p1.5_ember_forward",
        lambda m, x, y: _cdist(m, x, y, 1.5),
        (S(4, 3), S(5, 3)),
        torch=False,
        double=False,
    ),
    # The Euclidean kernel (``_euclidean_dist``): torch has its double backward, not its
    # forward mode.
    Op(
        "cdist_euclid_mm",
        lambda m, x, y: _cdist(m, x, y, 2.0, compute_mode="use_mm_for_euclid_dist"),
        (S(2, 4, 3), S(1, 5, 3)),
        forward=False,
    ),
    Op(
        "cdist_euclid_many_rows",
        lambda m, x, y: _cdist(m, x, y, 2.0),
        (S(27, 3), S(4, 3)),
        forward=False,
    ),
    Op(
        "cdist_euclid_ember_forward",
        lambda m, x, y: _cdist(m, x, y, 2.0, compute_mode="use_mm_for_euclid_dist"),
        (S(2, 4, 3), S(2, 5, 3)),
        torch=False,
        double=False,
    ),
    Op("pdist", lambda m, x: F(m).pdist(x), (S(5, 3),), double=False, forward=False),
    Op("pdist_p1.5", lambda m, x: F(m).pdist(x, 1.5), (S(5, 3),), double=False, forward=False),
    # torch: no double backward or forward mode for pdist; ember's forward mode alone.
    Op(
        "pdist_ember_forward",
        lambda m, x: F(m).pdist(x, 2.5),
        (S(5, 3),),
        torch=False,
        double=False,
    ),
    # -- bilinear / shuffles ------------------------------------------------------------------
    Op(
        "bilinear",
        lambda m, x, y, w, b: F(m).bilinear(x, y, w, b),
        (S(2, 3, 4), S(2, 3, 5), S(6, 4, 5), S(6)),
    ),
    Op(
        "bilinear_nobias", lambda m, x, y, w: F(m).bilinear(x, y, w), (S(3, 4), S(3, 2), S(2, 4, 2))
    ),
    Op("pixel_shuffle", lambda m, x: F(m).pixel_shuffle(x, 2), (S(2, 8, 2, 3),)),
    Op("pixel_unshuffle", lambda m, x: F(m).pixel_unshuffle(x, 2), (S(3, 4, 6),)),
    Op("channel_shuffle", lambda m, x: F(m).channel_shuffle(x, 3), (S(2, 6, 2, 2),)),
    # -- normalisation ------------------------------------------------------------------------
    Op(
        "group_norm",
        lambda m, x, w, b: F(m).group_norm(x, 3, w, b),
        (S(4, 6, 5), S(6), S(6)),
    ),
    Op("group_norm_noaffine_4d", lambda m, x: F(m).group_norm(x, 2, eps=1e-3), (S(2, 4, 3, 2),)),
    Op(
        "instance_norm",
        lambda m, x, w, b: F(m).instance_norm(x, weight=w, bias=b),
        (S(3, 4, 5), S(4), S(4)),
    ),
    Op(
        "instance_norm_eval",
        lambda m, x: F(m).instance_norm(
            x, _const(x, [0.1, -0.2, 0.3]), _const(x, [1.5, 0.5, 2.0]), use_input_stats=False
        ),
        (S(2, 3, 4),),
    ),
    Op("rms_norm", lambda m, x, w: F(m).rms_norm(x, [4, 5], w), (S(3, 4, 5), S(4, 5))),
    Op("rms_norm_eps", lambda m, x: F(m).rms_norm(x, (5,), eps=1e-3), (S(3, 5),)),
    Op("local_response_norm", lambda m, x: F(m).local_response_norm(x, 3), (S(2, 5, 4),)),
    Op(
        "local_response_norm_4d",
        lambda m, x: F(m).local_response_norm(x, 2, 0.5, 0.6, 1.5),
        (S(2, 4, 3, 2),),
    ),
    Op("normalize", lambda m, x: F(m).normalize(x), (S(4, 5),)),
    Op("normalize_p1", lambda m, x: F(m).normalize(x, 1.0, -1), (S(3, 4),)),
    # -- losses ------------------------------------------------------------------------------
    Op(
        "kl_div_batchmean",
        lambda m, x, t: F(m).kl_div(x, t, reduction="batchmean"),
        (S(4, 5), P(4, 5)),
    ),
    Op(
        "kl_div_log_target",
        lambda m, x, t: F(m).kl_div(x, t, reduction="none", log_target=True),
        (S(4, 5), S(4, 5)),
    ),
    Op("smooth_l1_loss", lambda m, x, t: F(m).smooth_l1_loss(x, t, beta=0.7), (S(4, 5), S(4, 5))),
    Op(
        "smooth_l1_loss_none",
        lambda m, x, t: F(m).smooth_l1_loss(x, t, reduction="none", beta=1.3),
        (S(4, 5), S(4, 5)),
    ),
    Op("huber_loss", lambda m, x, t: F(m).huber_loss(x, t, delta=0.6), (S(4, 5), S(4, 5))),
    Op(
        "huber_loss_sum",
        lambda m, x, t: F(m).huber_loss(x, t, reduction="sum", delta=1.4),
        (S(4, 5), S(4, 5)),
    ),
    Op(
        "soft_margin_loss",
        lambda m, x: F(m).soft_margin_loss(x, _const(x, SIGNS)),
        (S(4, 5),),
    ),
    Op(
        "soft_margin_loss_none",
        lambda m, x: F(m).soft_margin_loss(x, _const(x, SIGNS), reduction="none"),
        (S(4, 5),),
    ),
    Op(
        "margin_ranking_loss",
        lambda m, x, y: F(m).margin_ranking_loss(x, y, _const(x, SIGNS), 0.05),
        (S(4, 5), S(4, 5)),
    ),
    Op(
        "hinge_embedding_loss",
        lambda m, x: F(m).hinge_embedding_loss(x, _const(x, SIGNS), 0.05, reduction="sum"),
        (S(4, 5),),
    ),
    Op(
        "cosine_embedding_loss",
        lambda m, x, y: F(m).cosine_embedding_loss(x, y, _const(x, SIGNS_ROW), -0.9),
        (S(4, 5), S(4, 5)),
    ),
    # torch has neither double backward nor forward mode for the two margin kernels.
    Op(
        "multi_margin_loss",
        lambda m, x: F(m).multi_margin_loss(x, _long(m, MM_IDX), margin=0.05),
        (S(4, 5),),
        double=False,
        forward=False,
    ),
    Op(
        "multi_margin_loss_p2_weight",
        lambda m, x: F(m).multi_margin_loss(
            x, _long(m, MM_IDX), p=2, margin=0.05, weight=_const(x, MM_W), reduction="none"
        ),
        (S(4, 5),),
        double=False,
        forward=False,
    ),
    Op(
        "multi_margin_loss_p2_ember_forward",
        lambda m, x: F(m).multi_margin_loss(x, _long(m, MM_IDX), p=2, margin=0.05),
        (S(4, 5),),
        torch=False,
        double=False,
    ),
    Op(
        "multilabel_margin_loss",
        lambda m, x: F(m).multilabel_margin_loss(x, _long(m, ML_IDX)),
        (S(4, 5),),
        double=False,
        forward=False,
    ),
    Op(
        "multilabel_margin_loss_1d_none",
        lambda m, x: F(m).multilabel_margin_loss(x, _long(m, ML_IDX[0]), reduction="none"),
        (S(5),),
        double=False,
        forward=False,
    ),
    Op(
        "multilabel_margin_loss_ember_forward",
        lambda m, x: F(m).multilabel_margin_loss(x, _long(m, ML_IDX), reduction="sum"),
        (S(4, 5),),
        torch=False,
        double=False,
    ),
    Op(
        "multilabel_soft_margin_loss",
        lambda m, x: F(m).multilabel_soft_margin_loss(x, _const(x, SIGNS > 0)),
        (S(4, 5),),
    ),
    Op(
        "triplet_margin_loss",
        lambda m, a, p, n: F(m).triplet_margin_loss(a, p, n, margin=2.0),
        (S(4, 5), S(4, 5), S(4, 5)),
    ),
    Op(
        "triplet_margin_loss_swap_p1.5",
        lambda m, a, p, n: F(m).triplet_margin_loss(a, p, n, margin=3.0, p=1.5, swap=True),
        (S(4, 5), S(4, 5), S(4, 5)),
    ),
    Op(
        "triplet_margin_with_distance_loss",
        lambda m, a, p, n: F(m).triplet_margin_with_distance_loss(
            a, p, n, distance_function=F(m).pairwise_distance, margin=3.0
        ),
        (S(4, 5), S(4, 5), S(4, 5)),
    ),
    Op(
        "poisson_nll_loss_full",
        lambda m, x, t: F(m).poisson_nll_loss(x, t * 3, full=True),
        (S(4, 5), P(4, 5)),
    ),
    Op(
        "poisson_nll_loss_rate",
        lambda m, x, t: F(m).poisson_nll_loss(x, t, log_input=False, reduction="sum"),
        (P(4, 5), P(4, 5)),
    ),
    Op(
        "gaussian_nll_loss",
        lambda m, x, t, v: F(m).gaussian_nll_loss(x, t, v, full=True),
        (S(4, 5), S(4, 5), P(4, 5)),
    ),
    Op(
        "gaussian_nll_loss_homoscedastic",
        lambda m, x, t, v: F(m).gaussian_nll_loss(x, t, v, reduction="none"),
        (S(4, 5), S(4, 5), P(4)),
    ),
]
