"""Reductions and scans.

Entries avoid ties where the derivative is ill-defined (max/min/median pick one element
among equal ones); random normal values have none.
"""

from . import Op, P, S


def _mask(m, rows):
    return m.tensor(rows, dtype=m.float64)


def _with_nans(m, x):
    """``x`` with NaNs in two places (rows keep values that are not NaN)."""
    nan = m.zeros(x.shape, dtype=m.bool)
    nan[0, 1] = nan[1, 3] = True
    return m.where(nan, float("nan"), x)


OPS = [
    # running extremes (random values: no ties, where the picked index is ill-defined)
    Op("cummax", lambda m, x: m.cummax(x, 1).values, (S(3, 4),)),
    Op("cummin_dim0", lambda m, x: x.cummin(0).values, (S(3, 4),)),
    Op("cummax_0d", lambda m, x: m.cummax(x, 0).values, (S(),)),
    # reductions
    Op("sum", lambda m, x: x.sum(), (S(3, 4),)),
    Op("sum_dim", lambda m, x: x.sum(1), (S(3, 4),)),
    Op("sum_dims_keepdim", lambda m, x: m.sum(x, (0, 2), keepdim=True), (S(2, 3, 4),)),
    Op("sum_dim_none", lambda m, x: m.sum(x, None), (S(2, 3),)),
    Op("sum_0d", lambda m, x: x.sum(0), (S(),)),
    Op("nansum", lambda m, x: m.nansum(x, 0), (S(3, 4),)),
    Op(
        "nansum_nan",
        lambda m, x: m.nansum(
            m.where(m.tensor([[True, False, False], [False, False, True]]), float("nan"), x),
            1,
            keepdim=True,
        ),
        (S(2, 3),),
    ),
    Op("mean", lambda m, x: x.mean(), (S(3, 4),)),
    Op("mean_dim", lambda m, x: x.mean(-1, keepdim=True), (S(3, 4),)),
    Op("mean_dims", lambda m, x: x.mean((0, 2)), (S(2, 3, 4),)),
    Op("prod", lambda m, x: x.prod(), (S(2, 3),)),
    Op("prod_dim", lambda m, x: x.prod(1), (S(3, 4),)),
    Op("prod_dim_keepdim", lambda m, x: x.prod(0, keepdim=True), (S(3, 4),)),
    Op(
        "prod_zero",
        lambda m, x: (x * _mask(m, [[1.0, 0.0, 1.0], [1.0, 1.0, 1.0]])).prod(1),
        (S(2, 3),),
    ),
    Op(
        "prod_all_one_zero",
        lambda m, x: (x * _mask(m, [[1.0, 1.0, 1.0], [1.0, 0.0, 1.0]])).prod(),
        (S(2, 3),),
    ),
    Op("max", lambda m, x: x.max(), (S(3, 4),)),
    Op("max_dim", lambda m, x: x.max(1).values, (S(3, 4),)),
    Op("max_dim_keepdim", lambda m, x: m.max(x, -1, keepdim=True).values, (S(2, 3, 4),)),
    Op("max_dim_0d", lambda m, x: x.max(0).values, (S(),)),
    Op("min_dim_keepdim", lambda m, x: m.min(x, 0, keepdim=True).values, (S(3, 4),)),
    Op("min", lambda m, x: m.min(x), (S(3, 4),)),
    Op("amax", lambda m, x: m.amax(x, 1), (S(3, 4),)),
    Op("amax_dims_keepdim", lambda m, x: x.amax((0, 2), keepdim=True), (S(2, 3, 2),)),
    Op("amin", lambda m, x: x.amin((0, 1)), (S(2, 3, 2),)),
    Op("aminmax", lambda m, x: tuple(m.aminmax(x, dim=1)), (S(3, 4),)),
    Op("aminmax_all", lambda m, x: tuple(m.aminmax(x)), (S(3, 4),)),
    Op("median", lambda m, x: x.median(), (S(3, 5),)),
    Op("median_dim", lambda m, x: x.median(1).values, (S(3, 5),)),
    Op("median_dim_keepdim", lambda m, x: m.median(x, 0, keepdim=True).values, (S(4, 3),)),
    Op("nanmedian", lambda m, x: _with_nans(m, x).nanmedian(), (S(2, 4),)),
    Op("nanmedian_dim", lambda m, x: _with_nans(m, x).nanmedian(1).values, (S(2, 4),)),
    Op("nanmedian_keepdim", lambda m, x: m.nanmedian(x, 0, keepdim=True).values, (S(4, 3),)),
    # mode of distinct values: the smallest one
    Op("mode", lambda m, x: x.mode(1).values, (S(3, 4),)),
    Op("mode_keepdim", lambda m, x: m.mode(x, 0, True).values, (S(4, 3),)),
    Op("sum_to_size", lambda m, x: x.sum_to_size(3, 1), (S(2, 3, 4),)),
    Op("sum_to_size_keep", lambda m, x: x.sum_to_size((1, 3, 1)), (S(2, 3, 4),)),
    # dist: the p-norm of a broadcast difference
    Op("dist", lambda m, x, y: m.dist(x, y), (S(3, 4), S(4)), broadcasts=True),
    Op("dist_p3", lambda m, x, y: x.dist(y, 3), (S(3, 4), S(3, 4))),
    Op("dist_p1", lambda m, x, y: m.dist(x, y, 1), (S(3, 4), S(3, 4))),
    Op("dist_inf", lambda m, x, y: m.dist(x, y, float("inf")), (S(3, 4), S(3, 4))),
    # renorm: rows 0 and 2 have a norm above maxnorm, row 1 below
    Op("renorm", lambda m, x: m.renorm(x * _mask(m, [[3.0], [0.1], [2.0]]), 2, 0, 1.0), (S(3, 4),)),
    Op("renorm_p1_dim1", lambda m, x: x.renorm(1, 1, 1.5), (S(4, 3),)),
    Op("renorm_", lambda m, x: (x * 3).renorm_(3, -1, 2.0), (S(2, 3, 2),)),
    Op("std", lambda m, x: x.std(), (S(3, 4),)),
    Op("std_dim", lambda m, x: x.std(1, correction=0), (S(3, 4),)),
    Op("std_dims_keepdim", lambda m, x: x.std((0, 2), keepdim=True), (S(2, 3, 4),)),
    Op("var", lambda m, x: m.var(x, 0, keepdim=True), (S(3, 4),)),
    Op("var_correction", lambda m, x: m.var(x, (0, 2), correction=2), (S(3, 2, 4),)),
    Op("var_mean", lambda m, x: tuple(m.var_mean(x, 1)), (S(3, 4),)),
    Op("var_mean_keepdim", lambda m, x: tuple(m.var_mean(x, 0, keepdim=True)), (S(3, 4),)),
    Op("std_mean", lambda m, x: tuple(m.std_mean(x)), (S(3, 4),)),
    Op("std_mean_dim", lambda m, x: tuple(m.std_mean(x, -1, correction=0)), (S(3, 4),)),
    Op("norm", lambda m, x: x.norm(), (S(3, 4),)),
    Op("norm_p1_dim", lambda m, x: x.norm(p=1, dim=1), (S(3, 4),)),
    Op("norm_p3", lambda m, x: m.norm(x, p=3), (S(3, 4),)),
    Op("norm_p1.5_keepdim", lambda m, x: x.norm(1.5, 0, keepdim=True), (S(3, 4),)),
    Op("norm_nuc", lambda m, x: m.norm(x, p="nuc"), (S(3, 4),)),
    Op("norm_nuc_dim", lambda m, x: x.norm(p="nuc", dim=(0, 2), keepdim=True), (S(3, 2, 4),)),
    Op("norm_p0.5", lambda m, x: x.norm(0.5, 1), (S(3, 4),)),
    Op("norm_inf", lambda m, x: x.norm(p=float("inf"), dim=0), (S(3, 4),)),
    Op("norm_neg_inf", lambda m, x: x.norm(p=-float("inf"), dim=1), (S(3, 4),)),
    Op("norm_p0", lambda m, x: x.norm(0, 1), (S(3, 4),)),
    Op("logsumexp", lambda m, x: x.logsumexp(1), (S(3, 4),)),
    Op("logsumexp_dims_keepdim", lambda m, x: m.logsumexp(x, (0, 2), True), (S(2, 3, 2),)),
    Op("softmax", lambda m, x: x.softmax(1), (S(3, 4),)),
    Op("softmax_3d", lambda m, x: m.softmax(x, -2), (S(2, 3, 4),)),
    Op("softmax_0d", lambda m, x: x.softmax(0), (S(),)),
    Op("log_softmax", lambda m, x: m.log_softmax(x, 0), (S(3, 4),)),
    Op("log_softmax_3d", lambda m, x: x.log_softmax(-1), (S(2, 3, 4),)),
    # differences, NaN-aware means, running logsumexp
    Op("diff", lambda m, x: m.diff(x), (S(3, 4),)),
    Op("diff_n2_dim0", lambda m, x: x.diff(2, 0), (S(4, 3),)),
    Op(
        "diff_prepend_append",
        lambda m, x, y, z: m.diff(x, dim=0, prepend=y, append=z),
        (S(3, 4), S(1, 4), S(2, 4)),
    ),
    Op("diff_n0", lambda m, x: m.diff(x, n=0), (S(3, 4),)),
    Op("nanmean", lambda m, x: x.nanmean(1), (S(3, 4),)),
    Op("nanmean_all", lambda m, x: m.nanmean(x), (S(3, 4),)),
    Op(
        "nanmean_nan",
        lambda m, x: m.nanmean(
            m.where(m.tensor([[True, False, False], [False, False, True]]), float("nan"), x),
            0,
            keepdim=True,
        ),
        (S(2, 3),),
    ),
    Op("trapezoid", lambda m, y: m.trapezoid(y), (S(3, 4),)),
    Op("trapezoid_x", lambda m, y, x: m.trapezoid(y, x), (S(3, 4), S(4))),
    Op("trapezoid_dx_dim0", lambda m, y: m.trapz(y, dx=0.5, dim=0), (S(3, 4),)),
    Op("cumulative_trapezoid", lambda m, y: m.cumulative_trapezoid(y, dx=2.0), (S(3, 4),)),
    Op("cumulative_trapezoid_x", lambda m, y, x: m.cumulative_trapezoid(y, x), (S(3, 4), S(3, 4))),
    Op("logcumsumexp", lambda m, x: x.logcumsumexp(1), (S(3, 4),)),
    Op("logcumsumexp_dim0", lambda m, x: m.logcumsumexp(x * 3, 0), (S(4, 3),)),
    Op("logcumsumexp_0d", lambda m, x: m.logcumsumexp(x, 0), (S(),)),
    # quantiles (random values: no ties; q chosen so that no rank is a whole number)
    Op("quantile", lambda m, x: m.quantile(x, 0.3), (S(3, 4),)),
    Op(
        "quantile_q_tensor_dim",
        lambda m, x: x.quantile(m.tensor([0.25, 0.6], dtype=x.dtype), 1, keepdim=True),
        (S(3, 5),),
    ),
    Op("quantile_q_grad", lambda m, x, q: m.quantile(x, q.sigmoid(), dim=0), (S(5, 3), S(2))),
    Op("quantile_lower", lambda m, x: m.quantile(x, 0.3, 1, interpolation="lower"), (S(3, 5),)),
    Op("quantile_higher", lambda m, x: x.quantile(0.3, 0, interpolation="higher"), (S(5, 3),)),
    Op("quantile_midpoint", lambda m, x: m.quantile(x, 0.3, interpolation="midpoint"), (S(7),)),
    Op(
        "quantile_nearest",
        lambda m, x: m.quantile(
            x, m.tensor([0.3, 0.8], dtype=x.dtype), -1, True, interpolation="nearest"
        ),
        (S(2, 6),),
    ),
    Op("nanquantile", lambda m, x: m.nanquantile(x, 0.3, dim=1), (S(3, 4),)),
    Op(
        "nanquantile_nan",
        lambda m, x: m.where(
            m.tensor([[True, False, False, True], [False, False, True, False]]), float("nan"), x
        ).nanquantile(m.tensor([0.2, 0.7], dtype=x.dtype), 1),
        (S(2, 4),),
    ),
    # covariance and correlation
    Op("cov", lambda m, x: m.cov(x), (S(3, 5),)),
    Op("cov_1d", lambda m, x: x.cov(correction=0), (S(6),)),
    Op(
        "cov_weights",
        lambda m, x, w: m.cov(x, correction=2, fweights=m.tensor([1, 2, 1, 3]), aweights=w),
        (S(3, 4), P(4)),
    ),
    Op("cov_fweights", lambda m, x: m.cov(x, fweights=m.tensor([2, 1, 1, 3])), (S(2, 4),)),
    Op("corrcoef", lambda m, x: m.corrcoef(x), (S(3, 5),)),
    Op("corrcoef_1d", lambda m, x: x.corrcoef(), (S(5),)),
    # histograms: not differentiable (their values only)
    Op(
        "histc",
        lambda m, x: m.histc(x, bins=6, min=-2, max=2),
        (S(40),),
        grad=False,
        forward=False,
        double=False,
    ),
    # scans
    Op("cumsum", lambda m, x: x.cumsum(1), (S(3, 4),)),
    Op("cumsum_0d", lambda m, x: x.cumsum(0), (S(),)),
    Op("cumprod", lambda m, x: m.cumprod(x, 0), (S(4, 3),)),
    Op("cumsum_", lambda m, x: (x * 1).cumsum_(1), (S(3, 4),)),
    Op("cumprod_", lambda m, x: (x * 1).cumprod_(0), (S(4, 3),)),
    Op(
        "cumprod_zero",
        lambda m, x: (x * _mask(m, [1.0, 0.0, 1.0, 0.0, 1.0])).cumprod(0),
        (S(5),),
    ),
    # one zero: the derivatives at and after it depend on the other elements (second order)
    Op(
        "cumprod_one_zero",
        lambda m, x: (x * _mask(m, [[1.0, 1.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0]])).cumprod(1),
        (S(2, 4),),
    ),
]
