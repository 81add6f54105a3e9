"""Reductions and scans."""

from . import Op, S

OPS = [
    # reductions
    Op("sum", lambda m, x: x.sum(), (S(3, 4),)),
    Op("sum_dim", lambda m, x: x.sum(1), (S(3, 4),)),
    Op("sum_dims_keepdim", lambda m, x: m.sum(x, (0, 2), keepdim=True), (S(2, 3, 4),)),
    Op("nansum", lambda m, x: m.nansum(x, 0), (S(3, 4),)),
    Op("mean", lambda m, x: x.mean(), (S(3, 4),)),
    Op("mean_dim", lambda m, x: x.mean(-1, keepdim=True), (S(3, 4),)),
    Op("prod", lambda m, x: x.prod(), (S(2, 3),)),
    Op("prod_dim", lambda m, x: x.prod(1), (S(3, 4),)),
    Op(
        "prod_zero",
        lambda m, x: (x * m.tensor([[1.0, 0.0, 1.0], [1.0, 1.0, 1.0]], dtype=m.float64)).prod(1),
        (S(2, 3),),
    ),
    Op("max", lambda m, x: x.max(), (S(3, 4),)),
    Op("max_dim", lambda m, x: x.max(1).values, (S(3, 4),)),
    Op("min_dim_keepdim", lambda m, x: m.min(x, 0, keepdim=True).values, (S(3, 4),)),
    Op("min", lambda m, x: m.min(x), (S(3, 4),)),
    Op("amax", lambda m, x: m.amax(x, 1), (S(3, 4),)),
    Op("amin", lambda m, x: x.amin((0, 1)), (S(2, 3, 2),)),
    Op("aminmax", lambda m, x: tuple(m.aminmax(x, dim=1)), (S(3, 4),)),
    Op("median", lambda m, x: x.median(), (S(3, 5),)),
    Op("median_dim", lambda m, x: x.median(1).values, (S(3, 5),)),
    Op("std", lambda m, x: x.std(), (S(3, 4),)),
    Op("std_dim", lambda m, x: x.std(1, correction=0), (S(3, 4),)),
    Op("var", lambda m, x: m.var(x, 0, keepdim=True), (S(3, 4),)),
    Op("var_mean", lambda m, x: tuple(m.var_mean(x, 1)), (S(3, 4),)),
    Op("std_mean", lambda m, x: tuple(m.std_mean(x)), (S(3, 4),)),
    Op("norm", lambda m, x: x.norm(), (S(3, 4),)),
    Op("norm_p1_dim", lambda m, x: x.norm(p=1, dim=1), (S(3, 4),)),
    Op("norm_p3", lambda m, x: m.norm(x, p=3), (S(3, 4),)),
    Op("norm_inf", lambda m, x: x.norm(p=float("inf"), dim=0), (S(3, 4),)),
    Op("logsumexp", lambda m, x: x.logsumexp(1), (S(3, 4),)),
    Op("softmax", lambda m, x: x.softmax(1), (S(3, 4),)),
    Op("log_softmax", lambda m, x: m.log_softmax(x, 0), (S(3, 4),)),
    Op("cumsum", lambda m, x: x.cumsum(1), (S(3, 4),)),
    Op("cumprod", lambda m, x: m.cumprod(x, 0), (S(4, 3),)),
    Op(
        "cumprod_zero",
        lambda m, x: (x * m.tensor([1.0, 0.0, 1.0, 0.0, 1.0], dtype=m.float64)).cumprod(0),
        (S(5),),
    ),
]
