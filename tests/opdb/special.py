"""Special functions (torch.special and their torch.* names) and the elementwise math beside
the basic ops. Inputs are mapped into each function's domain inside ``fn``."""

from . import G1, Op, P, S, U


def _consts(m, value, like):
    """A constant first argument (not differentiated), shaped and typed like ``like``."""
    return m.full(tuple(like.shape), value, dtype=like.dtype)


def _unit(x):
    return x.abs() * 0.6 + 0.2  # inside (0.2, 0.8) for |x| < 1


OPS = [
    Op("erfc", lambda m, x: m.erfc(x), (S(3, 4),)),
    Op("erfinv", lambda m, x: m.erfinv(x), (U(3, 4),)),
    Op("erfcx", lambda m, x: m.special.erfcx(x), (S(3, 4),)),
    Op("lgamma", lambda m, x: x.lgamma(), (P(3, 4),)),
    Op("digamma", lambda m, x: m.digamma(x), (P(3, 4),)),
    Op("psi", lambda m, x: m.special.psi(x + 0.5), (P(4),)),
    Op("polygamma", lambda m, x: m.polygamma(2, x), (P(3, 4),)),
    # (n = 1: torch computes trigamma by a series only accurate to ~1e-10, SciPy exactly.)
    Op("polygamma_method", lambda m, x: x.polygamma(3), (P(5),)),
    Op("mvlgamma", lambda m, x: m.mvlgamma(x + 2, 3), (P(3, 4),)),
    Op("i0", lambda m, x: m.i0(x), (S(3, 4),)),
    Op("i0e", lambda m, x: m.special.i0e(x), (S(3, 4),)),
    Op("i1", lambda m, x: m.special.i1(x), (S(3, 4),)),
    Op("i1e", lambda m, x: m.special.i1e(x), (S(3, 4),)),
    Op("entr", lambda m, x: m.special.entr(x), (P(3, 4),)),
    Op("ndtr", lambda m, x: m.special.ndtr(x), (S(3, 4),)),
    Op("ndtri", lambda m, x: m.special.ndtri(_unit(x)), (U(3, 4),)),
    Op("log_ndtr", lambda m, x: m.special.log_ndtr(x), (S(3, 4),)),
    Op("sinc", lambda m, x: x.sinc(), (S(3, 4),)),
    Op("logit", lambda m, x: m.logit(_unit(x)), (U(3, 4),)),
    Op("logit_eps", lambda m, x: m.special.logit(x.abs(), eps=0.3), (U(3, 4),)),
    Op("logit_method", lambda m, x: _unit(x).logit(eps=0.2), (U(3, 4),)),
    Op("logit_inplace", lambda m, x: _unit(x).clone().logit_(), (U(3, 4),)),
    Op("xlogy", lambda m, x, y: m.xlogy(x, y), (S(3, 4), P(4)), broadcasts=True),
    Op("xlogy_number_other", lambda m, x: m.xlogy(x, 2.5), (S(5),)),
    Op("xlogy_number_self", lambda m, y: m.special.xlogy(2.5, y), (P(5),)),
    Op("xlog1py", lambda m, x, y: m.special.xlog1py(x, y), (S(3, 4), P(3, 4))),
    Op("logaddexp", lambda m, x, y: m.logaddexp(x, y), (S(3, 4), S(4)), broadcasts=True),
    Op("logaddexp2", lambda m, x, y: x.logaddexp2(y), (S(3, 4), S(3, 4))),
    Op("copysign", lambda m, x, y: m.copysign(x, y), (S(3, 4), S(3, 4))),
    Op("copysign_number", lambda m, x: x.copysign(-1.0), (S(5),)),
    Op("nextafter", lambda m, x, y: m.nextafter(x, y), (S(3, 4), S(3, 4))),
    Op("fmax", lambda m, x, y: m.fmax(x, y), (S(3, 4), S(3, 4))),
    Op("fmin", lambda m, x, y: x.fmin(y), (S(3, 4), S(4))),
    Op("ldexp", lambda m, x: m.ldexp(x, m.tensor([3, 1, 0, 2])), (S(3, 4),)),
    # torch's gradient rounds 2**other to an integer (0 for other < 0): checked numerically.
    Op("ldexp_negative", lambda m, x: m.ldexp(x, m.tensor([-2, -1])), (S(3, 2),), torch=False),
    Op("float_power", lambda m, x, y: m.float_power(x, y), (P(3, 4), S(3, 4))),
    Op("float_power_number", lambda m, x: x.float_power(2), (S(5),)),
    # zeta and the incomplete gamma functions: derivatives for the second argument only,
    # and no forward mode (as in torch).
    Op("zeta", lambda m, q: m.special.zeta(_consts(m, 2.5, q), q), (P(3, 4),), forward=False),
    Op("zeta_number_x", lambda m, q: m.special.zeta(2.5, q), (P(5),), forward=False),
    Op(
        "zeta_number_q",
        lambda m, x: m.special.zeta(_consts(m, 3.0, x), 1.5) * x,
        (P(5),),
        forward=False,
    ),
    # Through the first argument neither torch nor ember has a derivative: only the values
    # and the graph (SpecialZetaBackward2) are compared.
    Op("zeta_tensor_x", lambda m, x: m.special.zeta(x, 1.5), (G1(5),), grad=False),
    Op(
        "gammainc",
        lambda m, x: m.special.gammainc(_consts(m, 1.5, x), x),
        (P(3, 4),),
        forward=False,
    ),
    Op(
        "gammaincc",
        lambda m, x: m.special.gammaincc(_consts(m, 2.5, x), x),
        (P(3, 4),),
        forward=False,
    ),
    Op("deg2rad", lambda m, x: m.deg2rad(x), (S(3, 4),)),
    Op("rad2deg", lambda m, x: x.rad2deg(), (S(3, 4),)),
    Op("nan_to_num", lambda m, x: m.nan_to_num(x, posinf=2.0), (S(3, 4),)),
    Op(
        "nan_to_num_values", lambda m, x: m.nan_to_num(x.log(), neginf=-5.0), (S(3, 4),), grad=False
    ),
    Op("frexp", lambda m, x: m.frexp(x).mantissa, (S(3, 4),)),
    # not differentiable in torch either: values and graph only
    Op("heaviside", lambda m, x, v: m.heaviside(x, v), (S(3, 4), S(4)), grad=False),
    Op("bessel_j0", lambda m, x: m.special.bessel_j0(x), (S(3, 4),), grad=False),
]
