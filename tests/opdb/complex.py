"""Complex numbers: parts, conjugates, phase, and complex tensors built from real ones.

Inputs are real; complex operands are built inside ``fn`` (``complex``/``polar``) and complex
results are seen through ``view_as_real``, so every check runs on real tensors. The
holomorphic ops below check torch's complex convention (gradients ``g * conj(f'(z))``,
tangents ``f'(z) * t``) in every mode: see also ``tests/test_complex_grad.py``."""

from . import Op, P, S


def _z(m, x, y):
    return m.complex(x, y)


OPS = [
    Op("view_as_real", lambda m, x, y: m.view_as_real(_z(m, x, y)), (S(3, 4), S(3, 4))),
    Op("view_as_complex", lambda m, x: m.view_as_real(m.view_as_complex(x) * 2), (S(3, 2),)),
    Op("complex", lambda m, x, y: m.view_as_real(m.complex(x, y)), (S(3, 4), S(4))),
    Op("real", lambda m, x, y: _z(m, x, y).real * 1, (S(3, 4), S(3, 4))),
    Op("imag", lambda m, x, y: _z(m, x, y).imag * 1, (S(3, 4), S(3, 4))),
    # (torch's conj is a lazy view that view_as_real refuses: "* 1" materializes it)
    Op("conj", lambda m, x, y: m.view_as_real(_z(m, x, y).conj() * 1), (S(5), S(5))),
    Op("conj_physical", lambda m, x, y: m.view_as_real(m.conj_physical(_z(m, x, y))), (S(5), S(5))),
    Op("angle", lambda m, x, y: _z(m, x, y).angle(), (S(5), S(5))),
    Op("angle_real", lambda m, x: m.angle(x), (S(5),)),
    Op("polar", lambda m, r, t: m.view_as_real(m.polar(r, t)), (P(4), S(4))),
    Op("abs_complex", lambda m, x, y: _z(m, x, y).abs(), (S(5), S(5))),
    Op("sgn_complex", lambda m, x, y: m.view_as_real(_z(m, x, y).sgn()), (S(5), S(5))),
    Op("sgn_", lambda m, x, y: m.view_as_real((_z(m, x, y) * 1).sgn_()), (S(5), S(5))),
    Op("sgn_real", lambda m, x: m.sgn(x) * x, (S(3, 4),)),
]


def _holomorphic(name, fn, n_args=1, pos=False):
    """An op of complex operands (built from pairs of real inputs), seen as real."""
    ins = tuple((P(4) if pos else S(4)) for _ in range(2 * n_args))

    def run(m, *xs):
        zs = [_z(m, xs[2 * i], xs[2 * i + 1]) for i in range(n_args)]
        return m.view_as_real(fn(m, *zs))

    return Op(f"{name}_complex", run, ins)


OPS += [
    _holomorphic("mul", lambda m, a, b: a * b, 2),
    _holomorphic("div", lambda m, a, b: a / b, 2, pos=True),
    _holomorphic("pow_tensor", lambda m, a, b: a**b, 2, pos=True),
    _holomorphic("pow_scalar", lambda m, a: a**3),
    _holomorphic("square", lambda m, a: m.square(a)),
    _holomorphic("reciprocal", lambda m, a: m.reciprocal(a), pos=True),
    _holomorphic("exp", lambda m, a: m.exp(a)),
    _holomorphic("log", lambda m, a: m.log(a), pos=True),
    _holomorphic("sqrt", lambda m, a: m.sqrt(a), pos=True),
    _holomorphic("rsqrt", lambda m, a: m.rsqrt(a), pos=True),
    _holomorphic("sin", lambda m, a: m.sin(a)),
    _holomorphic("cosh", lambda m, a: m.cosh(a)),
    _holomorphic("tanh", lambda m, a: m.tanh(a)),
    _holomorphic("sigmoid", lambda m, a: m.sigmoid(a)),
    _holomorphic("lerp", lambda m, a, b, w: m.lerp(a, b, w), 3),
    _holomorphic("prod", lambda m, a: m.prod(a)),
    _holomorphic("cumprod", lambda m, a: m.cumprod(a, 0)),
]
