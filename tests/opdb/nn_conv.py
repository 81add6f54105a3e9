"""nn.functional convolution family: 1-d/3-d and transposed convolutions, 1-d and adaptive
pooling, interpolation (every upsampling node) and embedding_bag.

Index inputs (embedding_bag's indices and offsets) are constants built inside each entry;
every float input (weights, per-sample weights) is differentiated.
"""

import numpy as np

from . import Op, P, S, U


def F(m):
    return m.nn.functional


def _long(m, values):
    return m.tensor(np.asarray(values, dtype=np.int64))


BAG_IDX = [0, 2, 1, 4, 4, 3, 1]
BAG_OFFSETS = [0, 3, 3, 5]  # the second bag is empty


# torch has no forward mode for embedding_bag (ember raises its NotImplementedError too).
def _bag(m, w, mode, **kw):
    return F(m).embedding_bag(_long(m, BAG_IDX), w, _long(m, BAG_OFFSETS), mode=mode, **kw)


OPS = [
    # -- convolutions ------------------------------------------------------------------------
    Op(
        "conv1d",
        lambda m, x, w, b: F(m).conv1d(x, w, b, stride=2, padding=1, dilation=2, groups=2),
        (S(2, 4, 9), S(6, 2, 3), S(6)),
    ),
    Op("conv1d_same", lambda m, x, w: F(m).conv1d(x, w, padding="same"), (S(2, 3, 7), S(2, 3, 3))),
    Op("conv1d_unbatched", lambda m, x, w, b: F(m).conv1d(x, w, b), (S(3, 6), S(2, 3, 2), S(2))),
    Op(
        "conv3d",
        lambda m, x, w, b: F(m).conv3d(x, w, b, stride=(2, 1, 1), padding=(1, 0, 1)),
        (S(2, 2, 4, 3, 3), S(3, 2, 2, 2, 2), S(3)),
    ),
    Op(
        "conv_transpose1d",
        lambda m, x, w, b: F(m).conv_transpose1d(
            x, w, b, stride=3, padding=1, output_padding=2, groups=2, dilation=2
        ),
        (S(2, 4, 4), S(4, 3, 3), S(6)),
    ),
    Op(
        "conv_transpose2d",
        lambda m, x, w, b: F(m).conv_transpose2d(
            x, w, b, stride=(2, 1), padding=(1, 0), output_padding=(1, 0), dilation=(1, 2)
        ),
        (S(2, 3, 3, 3), S(3, 2, 3, 2), S(2)),
    ),
    Op(
        "conv_transpose2d_unbatched",
        lambda m, x, w: F(m).conv_transpose2d(x, w, stride=2),
        (S(2, 3, 2), S(2, 3, 2, 2)),
    ),
    Op(
        "conv_transpose3d",
        lambda m, x, w: F(m).conv_transpose3d(x, w, stride=2, padding=1, output_padding=1),
        (S(1, 2, 2, 3, 2), S(2, 2, 3, 2, 2)),
    ),
    # -- 1-d pooling ----------------------------------------------------------------------------
    Op("max_pool1d", lambda m, x: F(m).max_pool1d(x, 3, 2, 1, ceil_mode=True), (S(2, 3, 8),)),
    Op(
        "max_pool1d_indices",
        lambda m, x: tuple(F(m).max_pool1d(x, 2, 1, 1, dilation=2, return_indices=True)),
        (S(2, 3, 7),),
    ),
    Op("max_pool1d_unbatched", lambda m, x: F(m).max_pool1d(x, 2), (S(3, 6),)),
    Op(
        "avg_pool1d",
        lambda m, x: F(m).avg_pool1d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
        (S(2, 3, 8),),
    ),
    Op("avg_pool1d_unbatched", lambda m, x: F(m).avg_pool1d(x, 2, padding=1), (S(3, 5),)),
    # -- adaptive pooling --------------------------------------------------------------------------
    Op("adaptive_avg_pool2d", lambda m, x: F(m).adaptive_avg_pool2d(x, (3, 2)), (S(2, 2, 7, 5),)),
    Op(
        "adaptive_avg_pool2d_up_none",
        lambda m, x: F(m).adaptive_avg_pool2d(x, (5, None)),
        (S(2, 3, 4),),
    ),
    # A (1, 1) output is the mean (MeanBackward1), as in torch.
    Op("adaptive_avg_pool2d_global", lambda m, x: F(m).adaptive_avg_pool2d(x, 1), (S(2, 3, 4, 5),)),
    Op("adaptive_avg_pool1d", lambda m, x: F(m).adaptive_avg_pool1d(x, 4), (S(2, 3, 7),)),
    Op(
        "adaptive_max_pool2d",
        lambda m, x: tuple(F(m).adaptive_max_pool2d(x, (3, 2), return_indices=True)),
        (S(2, 2, 7, 5),),
    ),
    Op("adaptive_max_pool2d_unbatched", lambda m, x: F(m).adaptive_max_pool2d(x, 4), (S(2, 5, 6),)),
    Op("adaptive_max_pool1d", lambda m, x: F(m).adaptive_max_pool1d(x, 3), (S(2, 3, 7),)),
    # -- interpolation ----------------------------------------------------------------------
    Op("interpolate_nearest_1d", lambda m, x: F(m).interpolate(x, size=7), (S(2, 2, 4),)),
    Op(
        "interpolate_nearest_2d",
        lambda m, x: F(m).interpolate(x, scale_factor=(1.5, 0.5)),
        (S(1, 2, 4, 6),),
    ),
    Op(
        "interpolate_nearest_3d",
        lambda m, x: F(m).interpolate(x, size=(3, 2, 5)),
        (S(1, 2, 2, 3, 3),),
    ),
    Op(
        "interpolate_nearest_exact_1d",
        lambda m, x: F(m).interpolate(x, size=7, mode="nearest-exact"),
        (S(2, 2, 4),),
    ),
    Op(
        "interpolate_nearest_exact_2d",
        lambda m, x: F(m).interpolate(x, scale_factor=1.7, mode="nearest-exact"),
        (S(1, 2, 3, 4),),
    ),
    Op(
        "interpolate_nearest_exact_3d",
        lambda m, x: F(m).interpolate(x, size=(3, 2, 5), mode="nearest-exact"),
        (S(1, 2, 2, 3, 3),),
    ),
    Op(
        "interpolate_linear",
        lambda m, x: F(m).interpolate(x, scale_factor=2.5, mode="linear"),
        (S(2, 2, 4),),
    ),
    Op(
        "interpolate_linear_align_corners",
        lambda m, x: F(m).interpolate(x, size=3, mode="linear", align_corners=True),
        (S(2, 2, 5),),
    ),
    Op(
        "interpolate_bilinear",
        lambda m, x: F(m).interpolate(x, size=(5, 3), mode="bilinear"),
        (S(2, 2, 3, 4),),
    ),
    Op(
        "interpolate_bilinear_recompute",
        lambda m, x: F(m).interpolate(
            x, scale_factor=1.7, mode="bilinear", align_corners=True, recompute_scale_factor=True
        ),
        (S(1, 2, 3, 4),),
    ),
    Op(
        "interpolate_bicubic",
        lambda m, x: F(m).interpolate(x, size=(6, 3), mode="bicubic"),
        (S(1, 2, 3, 5),),
    ),
    Op(
        "interpolate_trilinear",
        lambda m, x: F(m).interpolate(x, scale_factor=(2, 1.5, 0.5), mode="trilinear"),
        (S(1, 2, 2, 2, 4),),
    ),
    Op(
        "interpolate_bilinear_antialias",
        lambda m, x: F(m).interpolate(x, size=(3, 4), mode="bilinear", antialias=True),
        (S(2, 2, 7, 5),),
    ),
    Op(
        "interpolate_bilinear_antialias_align_corners",
        lambda m, x: F(m).interpolate(
            x, scale_factor=(0.45, 1.6), mode="bilinear", align_corners=True, antialias=True
        ),
        (S(1, 2, 9, 4),),
    ),
    Op(
        "interpolate_bicubic_antialias",
        lambda m, x: F(m).interpolate(x, size=(4, 7), mode="bicubic", antialias=True),
        (S(1, 2, 9, 5),),
    ),
    Op(
        "interpolate_lanczos",
        lambda m, x: F(m).interpolate(x, scale_factor=0.6, mode="lanczos", antialias=True),
        (S(1, 2, 8, 11),),
    ),
    Op(
        "interpolate_area",
        lambda m, x: F(m).interpolate(x, size=(2, 3), mode="area"),
        (S(1, 2, 5, 7),),
    ),
    # -- embedding_bag ----------------------------------------------------------------------
    Op("embedding_bag_mean", lambda m, w: _bag(m, w, "mean"), (S(5, 3),), forward=False),
    Op("embedding_bag_max", lambda m, w: _bag(m, w, "max"), (S(5, 3),), forward=False),
    Op(
        "embedding_bag_sum_weights",
        lambda m, w, p: _bag(m, w, "sum", per_sample_weights=p, padding_idx=4),
        (S(5, 3), S(7)),
        forward=False,
        # torch has no double backward through the per-sample weights' gradient.
        double=False,
    ),
    Op(
        "embedding_bag_2d",
        lambda m, w: F(m).embedding_bag(_long(m, [[0, 2, 1], [1, 1, 3]]), w, mode="sum"),
        (S(4, 3),),
        forward=False,
    ),
]


# -- 3-d pooling, max unpooling, Lp pooling, 3-d adaptive pooling -----------------------------


def _P(m, name):
    """``F.<name>``; ember's from ``ember._aten.nn_conv`` until ``nn.functional`` re-exports it."""
    f = F(m)
    return getattr(f, name) if hasattr(f, name) else getattr(m._aten.nn_conv, name)


def _pool_indices(m, shape, nd, **kw):
    """Max-pooling indices of a fixed tie-free array (constants: not differentiated)."""
    a = np.random.default_rng(0).permutation(int(np.prod(shape))).reshape(shape).astype(float)
    pool = {1: "max_pool1d", 2: "max_pool2d", 3: "max_pool3d"}[nd]
    return _P(m, pool)(m.tensor(a), return_indices=True, **kw)[1]


OPS += [
    Op(
        "max_pool3d",
        lambda m, x: tuple(
            _P(m, "max_pool3d")(
                x, (2, 3, 2), (1, 2, 2), (1, 1, 0), (1, 1, 2), ceil_mode=True, return_indices=True
            )
        ),
        (S(2, 2, 4, 5, 6),),
    ),
    Op("max_pool3d_unbatched", lambda m, x: _P(m, "max_pool3d")(x, 2), (S(2, 4, 4, 5),)),
    Op(
        "avg_pool3d",
        lambda m, x: _P(m, "avg_pool3d")(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
        (S(2, 2, 5, 4, 6),),
    ),
    Op(
        "avg_pool3d_divisor",
        lambda m, x: _P(m, "avg_pool3d")(x, (2, 1, 2), padding=(1, 0, 1), divisor_override=3),
        (S(2, 3, 4, 5),),
    ),
    Op(
        "max_unpool1d",
        lambda m, x: _P(m, "max_unpool1d")(x, _pool_indices(m, (2, 3, 8), 1, kernel_size=2), 2),
        (S(2, 3, 4),),
    ),
    Op(
        "max_unpool2d",
        # Non-overlapping windows: overlapping ones may pick one input twice (ill-defined).
        lambda m, x: _P(m, "max_unpool2d")(
            x, _pool_indices(m, (2, 2, 5, 7), 2, kernel_size=2), 2, output_size=(5, 7)
        ),
        (S(2, 2, 2, 3),),
    ),
    Op(
        "max_unpool3d",
        lambda m, x: _P(m, "max_unpool3d")(x, _pool_indices(m, (2, 4, 4, 6), 3, kernel_size=2), 2),
        (S(2, 2, 2, 3),),
    ),
    Op("lp_pool1d", lambda m, x: _P(m, "lp_pool1d")(x, 2.0, 3, 2), (P(2, 3, 8),)),
    Op("lp_pool2d", lambda m, x: _P(m, "lp_pool2d")(x, 3, (2, 3), ceil_mode=True), (P(2, 5, 7),)),
    Op("lp_pool3d", lambda m, x: _P(m, "lp_pool3d")(x, 1.5, 2), (P(1, 2, 4, 4, 5),)),
    Op(
        "adaptive_avg_pool3d",
        lambda m, x: _P(m, "adaptive_avg_pool3d")(x, (3, None, 2)),
        (S(2, 2, 5, 4, 7),),
    ),
    Op(
        "adaptive_max_pool3d",
        lambda m, x: tuple(_P(m, "adaptive_max_pool3d")(x, (3, 2, 4), return_indices=True)),
        (S(2, 2, 5, 4, 7),),
    ),
    Op(
        "adaptive_max_pool3d_unbatched",
        lambda m, x: _P(m, "adaptive_max_pool3d")(x, 2),
        (S(2, 3, 5, 4),),
    ),
]


# grid_sample and affine_grid. torch has no forward mode for grid_sampler_2d (its
# NotImplementedError); grids hold coordinates in (-1.35, 1.35): points outside the input
# exercise the padding modes.
def _gs(mode, padding, align):
    def fn(m, x, g):
        grid = g * 1.5
        return F(m).grid_sample(x, grid, mode=mode, padding_mode=padding, align_corners=align)

    return fn


OPS += [
    Op(
        f"grid_sample_{mode}_{padding}_{'ac' if align else 'noac'}",
        _gs(mode, padding, align),
        (S(2, 3, 4, 5), U(2, 3, 2, 2)),
        forward=False,
        double=mode != "nearest",  # nearest: the grid's gradient is zero, not differentiable
    )
    for mode in ("bilinear", "nearest", "bicubic")
    for padding in ("zeros", "border", "reflection")
    for align in (False, True)
]
OPS += [
    Op(
        f"grid_sample_3d_{mode}_{padding}",
        _gs(mode, padding, padding == "border"),
        (S(2, 2, 3, 2, 3), U(2, 2, 1, 2, 3)),
        forward=False,
        double=mode != "nearest",  # as above
    )
    for mode in ("bilinear", "nearest")
    for padding in ("zeros", "border", "reflection")
]
OPS += [
    Op(
        "affine_grid_3d",
        lambda m, t: F(m).affine_grid(t, [2, 1, 2, 3, 4], align_corners=False),
        (S(2, 3, 4),),
    ),
    Op(
        "affine_grid",
        lambda m, t: F(m).affine_grid(t, [2, 3, 4, 5], align_corners=False),
        (S(2, 2, 3),),
    ),
    Op(
        "affine_grid_align_corners",
        lambda m, t: F(m).affine_grid(t, (2, 1, 3, 1), align_corners=True),
        (S(2, 2, 3),),
    ),
]
